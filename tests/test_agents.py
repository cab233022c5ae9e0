"""Agents: fixed-capacity SoA state, zero-copy views, add/remove and validation."""

import gc

import numpy as np
import pytest

import contextsteer as cs
from reference_agents import agent_seed

FLOAT2 = ["position", "velocity", "target"]
FLOAT1 = ["heading", "radius", "max_speed", "max_accel", "max_turn_rate", "steer_force"]


def test_views_have_the_documented_dtypes_and_shapes():
    a = cs.Agents(5, slots=8)
    for name in FLOAT2:
        v = getattr(a, name)
        assert v.dtype == np.float32 and v.shape == (5, 2) and v.flags.c_contiguous
    for name in FLOAT1:
        assert getattr(a, name).dtype == np.float32 and getattr(a, name).shape == (5,)
    assert a.group.dtype == np.int32 and a.alive.dtype == bool and a.rng.dtype == np.uint64
    assert a.capacity == 5 and len(a) == 5 and a.count == 0 and a.slots == 8
    assert not a.alive.any()


@pytest.mark.parametrize("name", FLOAT2 + FLOAT1 + ["group", "alive", "rng"])
def test_views_are_writable_zero_copy_with_the_agents_as_base(name):
    a = cs.Agents(4)
    v1, v2 = getattr(a, name), getattr(a, name)
    assert v1.flags.writeable
    assert np.shares_memory(v1, v2)
    assert v1.base is a
    v1[...] = 1
    assert (getattr(a, name) == 1).all()


def test_view_survives_del_of_agents():
    a = cs.Agents(3)
    a.add([[1, 2], [3, 4]])
    pos = a.position
    del a
    gc.collect()
    assert pos[1].tolist() == [3.0, 4.0]
    pos[0] = 7.0  # still valid memory
    assert pos.base.count == 2


def test_writes_through_views_reach_the_kernels():
    a = cs.Agents(1)
    a.add([0, 0])
    a.heading[0] = np.pi / 2  # now facing +y
    interest = cs.Forward().evaluate(a, 4).interest[0]
    np.testing.assert_allclose(interest, [0, 1, 0, 0], atol=1e-6)


def test_add_broadcasts_and_fills_lowest_free_slots():
    a = cs.Agents(6, seed=3)
    ids = a.add(
        [[0, 0], [1, 0], [2, 0]],
        velocity=[[0, 1], [0, 0], [-1, 0]],
        radius=[0.5, 1.0, 1.5],
        max_speed=2.0,
        group=[1, 2, 3],
    )
    assert ids.tolist() == [0, 1, 2] and ids.dtype == np.int32
    assert a.radius[:3].tolist() == [0.5, 1.0, 1.5]
    assert a.max_speed[:3].tolist() == [2.0] * 3
    assert a.group[:3].tolist() == [1, 2, 3]
    # default heading follows the velocity (0 when stopped), target = own position
    np.testing.assert_allclose(a.heading[:3], [np.pi / 2, 0.0, np.pi], atol=1e-6)
    np.testing.assert_array_equal(a.target[:3], a.position[:3])
    a.remove([1])
    assert a.count == 2 and a.ids.tolist() == [0, 2]
    assert a.add([[5, 5], [6, 6]]).tolist() == [1, 3]
    assert a.position[1].tolist() == [5.0, 5.0]


def test_single_point_add_and_explicit_heading_and_target():
    a = cs.Agents(2)
    ids = a.add([3, 4], heading=1.25, target=[9, 9], max_turn_rate=2.0, steer_force=0.3)
    assert ids.tolist() == [0]
    assert a.heading[0] == np.float32(1.25) and a.target[0].tolist() == [9, 9]
    assert a.max_turn_rate[0] == 2 and a.steer_force[0] == np.float32(0.3)


def test_rng_state_depends_only_on_seed_and_index():
    a = cs.Agents(4, seed=42)
    b = cs.Agents(4, seed=42)
    a.add([[0, 0]] * 4)
    b.add([[1, 1]] * 2)
    b.add([[2, 2]] * 2)
    assert a.rng.tolist() == [agent_seed(42, i) for i in range(4)]
    np.testing.assert_array_equal(a.rng, b.rng)
    assert cs.Agents(4, seed=43).rng[0] != a.rng[0]
    # a reused slot is reseeded
    a.rng[1] = 0
    a.remove([1])
    a.add([0, 0])
    assert int(a.rng[1]) == agent_seed(42, 1)


def test_count_and_ids_follow_writes_to_alive():
    a = cs.Agents(4)
    a.add([[0, 0]] * 3)
    a.alive[0] = False
    assert a.count == 2 and a.ids.tolist() == [1, 2]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(position=[[0, 0], [np.nan, 0]]), r"position must be finite.*index 1"),
        (dict(position=[[0, 0]] * 3, radius=[1, 1, -1]), r"radius must be >= 0.*index 2"),
        (dict(position=[[0, 0]] * 2, max_speed=[-1, 1]), r"max_speed must be >= 0.*index 0"),
        (dict(position=[[0, 0]] * 2, max_accel=[1, -2]), r"max_accel must be >= 0.*index 1"),
        (dict(position=[[0, 0]] * 2, max_turn_rate=-1), r"max_turn_rate must be >= 0.*index 0"),
        (
            dict(position=[[0, 0]] * 2, steer_force=[0.1, 1.5]),
            r"steer_force must be in \[0, 1\].*index 1",
        ),
        (
            dict(position=[[0, 0]] * 2, velocity=[[0, 0], [np.inf, 0]]),
            r"velocity must be finite.*index 1",
        ),
        (dict(position=[[0, 0]] * 2, heading=[0, np.nan]), r"heading must be finite.*index 1"),
        (
            dict(position=[[0, 0]] * 2, target=[[0, np.nan], [0, 0]]),
            r"target must be finite.*index 0",
        ),
        (dict(position=[[0, 0]] * 2, radius=[1, 2, 3]), r"radius must broadcast"),
        (dict(position=[[0, 0, 0]]), r"position must have shape \(n, 2\)"),
        (dict(position=[[0, 0]] * 5), r"capacity exceeded: adding 5 agents, 4 free slots of 4"),
    ],
)
def test_add_rejects_bad_values_naming_argument_and_index(kwargs, match):
    a = cs.Agents(4)
    with pytest.raises(ValueError, match=match):
        a.add(**kwargs)
    assert a.count == 0  # nothing half-added


def test_add_rejects_non_integer_group_and_bad_dtypes():
    a = cs.Agents(2)
    with pytest.raises(TypeError, match="group"):
        a.add([0, 0], group=1.5)
    with pytest.raises(TypeError, match="position"):
        a.add([["a", "b"]])


def test_remove_validates_ids():
    a = cs.Agents(3)
    a.add([[0, 0]] * 2)
    with pytest.raises(IndexError, match="id 3 at index 1 is out of range"):
        a.remove([0, 3])
    with pytest.raises(IndexError):
        a.remove([-1])
    assert a.count == 2
    a.remove(np.array([0, 0, 1], dtype=np.int64))
    a.remove([])
    assert a.count == 0


def test_constructor_validation():
    with pytest.raises(ValueError, match="capacity"):
        cs.Agents(-1)
    with pytest.raises(ValueError, match="slots must be >= 3"):
        cs.Agents(3, slots=2)
    with pytest.raises(TypeError):
        cs.Agents(2.5)
    assert cs.Agents(0).count == 0
    assert "capacity=2" in repr(cs.Agents(2))


def test_storage_never_moves():
    a = cs.Agents(100)
    before = a.position.__array_interface__["data"][0]
    for _ in range(5):
        a.add(np.zeros((20, 2)))
        a.remove(a.ids)
    assert a.position.__array_interface__["data"][0] == before


def test_assigning_an_attribute_writes_into_the_view():
    a = cs.Agents(2)
    view = a.position
    a.position = [[1, 2], [3, 4]]
    assert view.tolist() == [[1, 2], [3, 4]]


def test_capacity_beyond_int32_ids_is_refused():
    with pytest.raises(ValueError, match="int32"):
        cs.Agents(2**31)


def test_remove_takes_a_boolean_mask_of_the_capacity():
    # remove(agents.alive & (x > 20)) is a sink's natural idiom; it raised "ids must be
    # integers" (fuzz round 11, a flow study). Oracle: the ids of the mask.
    a = cs.Agents(6)
    a.add(np.c_[np.arange(5.0) * 10, np.zeros(5)])
    gone = a.alive & (a.position[:, 0] > 20)
    a.remove(gone)
    assert a.ids.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        a.remove(np.array([True, False]))
    a.remove(np.zeros(6, bool))  # nothing
    assert a.count == 3
