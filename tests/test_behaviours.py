"""Behaviour kernels against the plain-NumPy oracle, plus the seeds' worked examples."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import contextsteer as cs
import reference_agents as ref

ATOL = 2e-5


def make_agents(n=40, seed=0, capacity=None, spread=10.0, dead=True):
    rng = np.random.default_rng(seed)
    a = cs.Agents(capacity or n, seed=seed)
    a.add(
        rng.uniform(-spread, spread, (n, 2)),
        velocity=rng.uniform(-2, 2, (n, 2)),
        heading=rng.uniform(-np.pi, np.pi, n),
        radius=rng.uniform(0.2, 1.0, n),
        max_speed=rng.uniform(0.5, 3.0, n),
        target=rng.uniform(-spread, spread, (n, 2)),
        group=rng.integers(0, 3, n),
    )
    a.velocity[3] = 0.0  # a stopped agent
    if dead:
        a.remove([1, n - 1])
    return a


def state_of(a):
    names = [
        "position",
        "velocity",
        "heading",
        "radius",
        "max_speed",
        "max_accel",
        "max_turn_rate",
        "steer_force",
        "target",
        "alive",
        "rng",
        "group",
    ]
    return {k: np.array(getattr(a, k)) for k in names}


def check(maps, expected, writes):
    interest, danger = expected
    np.testing.assert_allclose(maps.interest, interest, atol=ATOL)
    np.testing.assert_allclose(maps.danger, danger, atol=ATOL)
    other = maps.danger if writes == "interest" else maps.interest
    assert not other.any()


K_VALUES = [3, 8, 16, 33]


# ------------------------------------------------------------- seed examples ---


def test_godot_forward_interest_8_rays():
    a = cs.Agents(1)
    a.add([0, 0])
    m = cs.Forward().evaluate(a, 8)
    s = math.sqrt(0.5)
    np.testing.assert_allclose(m.interest[0], [1, s, 0, 0, 0, 0, 0, s], atol=1e-6)
    assert not m.danger.any()


def test_rotated_slots_put_forward_in_slot_zero():
    a = make_agents(20, dead=False)
    m = cs.Forward(weight=0.5).evaluate(a, 8, rotate=True)
    s = math.sqrt(0.5) * 0.5
    np.testing.assert_allclose(m.interest, np.tile([0.5, s, 0, 0, 0, 0, 0, s], (20, 1)), atol=1e-5)


def test_unity_chase_closer_targets_are_stronger_and_far_ones_ignored():
    a = cs.Agents(1)
    a.add([0, 0])
    targets = [[2, 0], [0, 5], [-20, 0]]  # the last is beyond max_distance
    m = cs.Chase(targets, max_distance=10).evaluate(a, 4).interest[0]
    np.testing.assert_allclose(m, [0.8, 0.5, 0.0, 0.0], atol=1e-6)
    summed = cs.Seek(targets, max_distance=10, combine="sum", falloff="none").evaluate(a, 4)
    np.testing.assert_allclose(summed.interest[0], [1, 1, 0, 0], atol=1e-6)


def test_unity_avoid_writes_danger_and_lewis_flee_flips_the_sign():
    a = cs.Agents(1)
    a.add([0, 0])
    avoid = cs.Avoid([[3, 0]], max_distance=6, falloff="none").evaluate(a, 4)
    np.testing.assert_allclose(avoid.danger[0], [1, 0, 0, 0], atol=1e-6)
    assert not avoid.interest.any()
    flee = cs.Flee([[3, 0]]).evaluate(a, 4)
    np.testing.assert_allclose(flee.interest[0], [0, 0, 1, 0], atol=1e-6)
    assert cs.Avoid([[1, 1]]).writes == "danger" and cs.Flee([[1, 1]]).writes == "interest"


def test_arrive_strength_falls_as_the_agent_arrives():
    a = cs.Agents(3)
    a.add([[0, 0], [0, 0], [0, 0]], target=[[8, 0], [2, 0], [0.05, 0]])
    m = cs.Arrive(slowing_radius=4, tolerance=0.1).evaluate(a, 4).interest
    np.testing.assert_allclose(m[:, 0], [1.0, 0.5, 0.0], atol=1e-6)


def test_wander_is_deterministic_smooth_in_time_and_per_agent():
    a = make_agents(30, dead=False)
    w = cs.Wander(rate=2.0, seed=5)
    m1 = w.evaluate(a, 16, time=1.3).interest
    np.testing.assert_array_equal(m1, w.evaluate(a, 16, time=1.3).interest)
    near = w.evaluate(a, 16, time=1.3001).interest
    assert np.abs(near - m1).max() < 0.01
    far = w.evaluate(a, 16, time=7.9).interest
    assert np.abs(far - m1).max() > 0.1
    assert not np.allclose(m1[0], m1[1])
    other_seed = cs.Wander(rate=2.0, seed=6).evaluate(a, 16, time=1.3).interest
    assert not np.allclose(other_seed, m1)


def test_tether_and_bounds_are_silent_inside():
    a = cs.Agents(2)
    a.add([[0, 0], [10, 0]])
    t = cs.Tether(center=[0, 0], radius=5).evaluate(a, 4).interest
    assert not t[0].any()
    np.testing.assert_allclose(t[1], [0, 0, 1, 0], atol=1e-6)
    b = cs.Bounds(lo=[-5, -5], hi=[5, 5]).evaluate(a, 4).interest
    assert not b[0].any()
    np.testing.assert_allclose(b[1], [0, 0, 1, 0], atol=1e-6)


# ------------------------------------------------------------- oracle checks ---


@pytest.mark.parametrize("k", K_VALUES)
@pytest.mark.parametrize("rotate", [False, True])
def test_forward_and_momentum(k, rotate):
    a = make_agents()
    st_, slots = state_of(a), ref.ring(k)
    check(
        cs.Forward(weight=0.7).evaluate(a, k, rotate=rotate),
        ref.forward(st_, slots, 0.7, rotate),
        "interest",
    )
    check(
        cs.Momentum(weight=1.3).evaluate(a, k, rotate=rotate),
        ref.momentum(st_, slots, 1.3, rotate),
        "interest",
    )


@pytest.mark.parametrize("cls", [cs.Seek, cs.Chase, cs.Flee, cs.Avoid])
@pytest.mark.parametrize("combine", ["max", "sum"])
@pytest.mark.parametrize("falloff", ["linear", "none"])
@pytest.mark.parametrize("max_distance", [math.inf, 8.0])
@pytest.mark.parametrize("rotate", [False, True])
def test_target_behaviours(cls, combine, falloff, max_distance, rotate):
    a = make_agents()
    st_, slots = state_of(a), ref.ring(12)
    pts = np.random.default_rng(9).uniform(-10, 10, (5, 2)).astype(np.float32)
    away = cls is cs.Flee
    output = "danger" if cls is cs.Avoid else "interest"
    for targets in (pts, None):
        b = cls(targets, max_distance=max_distance, combine=combine, falloff=falloff, weight=0.9)
        exp = ref.targets(
            st_,
            slots,
            points=targets,
            weight=0.9,
            max_distance=max_distance,
            away=away,
            combine=combine,
            falloff=falloff,
            output=output,
            rotate=rotate,
        )
        check(b.evaluate(a, slots.astype(np.float32), rotate=rotate), exp, output)


@pytest.mark.parametrize("shape", ["half_cosine", "chord"])
@pytest.mark.parametrize("combine", ["max", "sum"])
@pytest.mark.parametrize("rotate", [False, True])
def test_target_shapes(shape, combine, rotate):
    """Seek and Arrive with the half-cosine and chord shapes against the oracle, which
    takes the chord as 1 - sin(θ/2) from the arccos of the cosine."""
    a = make_agents()
    st_, slots = state_of(a), ref.ring(16)
    pts = np.random.default_rng(4).uniform(-10, 10, (3, 2)).astype(np.float32)
    for targets in (pts, None):
        b = cs.Seek(targets, max_distance=8.0, combine=combine, shape=shape, weight=0.9)
        exp = ref.targets(
            st_, slots, points=targets, weight=0.9, max_distance=8.0, combine=combine,
            rotate=rotate, shape=shape,
        )  # fmt: skip
        check(b.evaluate(a, slots.astype(np.float32), rotate=rotate), exp, "interest")
    check(
        cs.Arrive(slowing_radius=6, tolerance=0.5, shape=shape).evaluate(a, 16, rotate=rotate),
        ref.arrive(st_, slots, slowing_radius=6, tolerance=0.5, rotate=rotate, shape=shape),
        "interest",
    )


def test_chord_shape_by_hand():
    """1 - sin(θ/2) at the eight slots of a target straight ahead, and 0.05 mrad off a
    slot, where the cosine rounds to 1 in float32 and a shape read from its square root
    would score 1 instead of 1 - 2.5e-5."""
    a = cs.Agents(1, slots=8)
    a.add([[0.0, 0.0]])
    a.target[0] = [3.0, 0.0]
    half = [1 - math.sin(math.radians(22.5 * j)) for j in range(5)]
    np.testing.assert_allclose(
        cs.Seek(shape="chord").evaluate(a, 8).interest[0], half + half[1:4][::-1], atol=1e-6
    )
    a.target[0] = [3.0, 3.0 * 5e-5]
    got = cs.Seek(shape="chord").evaluate(a, 8).interest[0, 0]
    assert got == pytest.approx(1 - math.sin(2.5e-5), abs=2e-6) and got < 1.0
    got = cs.dot_map(cs.SlotSet(8), [[1.0, 5e-5]], shape="chord")[0, 0]
    assert got == pytest.approx(1 - math.sin(2.5e-5), abs=2e-6) and got < 1.0
    # Along the 45° slot, whose float32 direction is 2e-8 short of unit length: 1, where an
    # arccos of the cosine would see a 1.9e-4 rad turn and score 0.99991.
    assert cs.dot_map(cs.SlotSet(8), [[1.0, 1.0]], shape="chord")[0, 1] == 1.0


@pytest.mark.parametrize("output", ["interest", "danger"])
@pytest.mark.parametrize("max_prediction", [0.0, 0.7])
def test_pursue_and_evade(output, max_prediction):
    a = make_agents()
    st_, slots = state_of(a), ref.ring(16)
    ids = [0, 1, 2, 5]  # 1 is dead; each agent skips itself
    check(
        cs.Pursue(ids, max_prediction=max_prediction, max_distance=12).evaluate(a, 16),
        ref.targets(st_, slots, ids=ids, max_prediction=max_prediction, max_distance=12),
        "interest",
    )
    exp = ref.targets(
        st_, slots, ids=ids, max_prediction=max_prediction, away=output == "interest", output=output
    )
    check(cs.Evade(ids, max_prediction=max_prediction, output=output).evaluate(a, 16), exp, output)


def test_pursue_aims_at_the_predicted_position():
    a = cs.Agents(2)
    a.add([[0, 0], [10, 0]], velocity=[[0, 0], [0, 10]], max_speed=10)
    m = cs.Pursue([1], max_prediction=5, falloff="none").evaluate(a, 8).interest[0]
    # time to reach = 10/10 = 1 s → aim at (10, 10): slot 1 (45°) is the best
    assert np.argmax(m) == 1 and m[1] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("rotate", [False, True])
def test_arrive_wander_tether_bounds(rotate):
    a = make_agents()
    st_, slots = state_of(a), ref.ring(16)
    check(
        cs.Arrive(slowing_radius=6, tolerance=0.5).evaluate(a, 16, rotate=rotate),
        ref.arrive(st_, slots, slowing_radius=6, tolerance=0.5, rotate=rotate),
        "interest",
    )
    check(
        cs.Arrive(slowing_radius=3, target=[1, 2]).evaluate(a, 16, rotate=rotate),
        ref.arrive(st_, slots, slowing_radius=3, target=[1, 2], rotate=rotate),
        "interest",
    )
    for time in (0.0, 2.71, 1e4):
        check(
            cs.Wander(offset=1.5, radius=0.8, rate=0.7, seed=11).evaluate(
                a, 16, rotate=rotate, time=time
            ),
            ref.wander(
                st_, slots, offset=1.5, radius=0.8, rate=0.7, seed=11, time=time, rotate=rotate
            ),
            "interest",
        )
    check(
        cs.Tether(center=[1, 1], radius=4, softness=3).evaluate(a, 16, rotate=rotate),
        ref.tether(st_, slots, center=[1, 1], radius=4, softness=3, rotate=rotate),
        "interest",
    )
    check(
        cs.Tether(radius=2).evaluate(a, 16, rotate=rotate),
        ref.tether(st_, slots, radius=2, rotate=rotate),
        "interest",
    )
    for margin in (0.0, 2.0, 5.5):  # (5.5: the inset rectangle is one point)
        check(
            cs.Bounds(lo=[-6, -4], hi=[5, 7], margin=margin).evaluate(a, 16, rotate=rotate),
            ref.bounds(st_, slots, lo=[-6, -4], hi=[5, 7], margin=margin, rotate=rotate),
            "interest",
        )


def _lists(a, radius, max_n=64):
    return ref.neighbors(np.array(a.position), radius, max_n, np.array(a.alive))


@pytest.mark.parametrize("predictive", [False, True])
@pytest.mark.parametrize("falloff", ["linear", "none"])
@pytest.mark.parametrize("rotate", [False, True])
@pytest.mark.parametrize("groups", ["all", "other"])
def test_agent_danger(predictive, falloff, rotate, groups):
    a = make_agents(60, spread=6)
    st_, slots = state_of(a), ref.ring(16)
    b = cs.AgentDanger(
        radius=1.5, predictive=predictive, horizon=0.8, falloff=falloff, weight=2, groups=groups
    )
    r = cs._core.behaviour_neighbor_radius(
        b, float(a.radius[a.alive].max()), float(np.hypot(*a.velocity[a.alive].T).max())
    )
    got = b.evaluate(a, 16, rotate=rotate, max_neighbours=64)
    exp = ref.agent_danger(
        st_,
        slots,
        _lists(a, r),
        radius=1.5,
        predictive=predictive,
        horizon=0.8,
        falloff=falloff,
        groups=groups,
        weight=2,
        rotate=rotate,
    )
    check(got, exp, "danger")
    assert got.danger[a.alive].any()


@pytest.mark.parametrize("rule", ["separation", "alignment", "cohesion"])
@pytest.mark.parametrize("clamp", [True, False])
@pytest.mark.parametrize("rotate", [False, True])
@pytest.mark.parametrize("groups", ["same", "all"])
def test_flocking(rule, clamp, rotate, groups):
    a = make_agents(60, spread=6)
    st_, slots = state_of(a), ref.ring(8)
    cls = {"separation": cs.Separation, "alignment": cs.Alignment, "cohesion": cs.Cohesion}[rule]
    got = cls(radius=2.5, clamp=clamp, weight=0.8, groups=groups).evaluate(
        a, 8, rotate=rotate, max_neighbours=64
    )
    exp = ref.flocking(
        st_,
        slots,
        _lists(a, 2.5),
        rule=rule,
        radius=2.5,
        clamp=clamp,
        groups=groups,
        weight=0.8,
        rotate=rotate,
    )
    check(got, exp, "interest")
    assert got.interest.any()
    if not clamp:
        assert (got.interest < 0).any()


def test_separation_points_away_from_a_close_neighbour():
    a = cs.Agents(2)
    a.add([[0, 0], [1, 0]])
    m = cs.Separation(radius=2).evaluate(a, 4).interest
    assert np.argmax(m[0]) == 2 and np.argmax(m[1]) == 0


def test_max_neighbors_caps_the_neighbours_considered():
    a = make_agents(60, spread=3, dead=False)
    st_, slots = state_of(a), ref.ring(8)
    got = cs.Separation(radius=2.0, groups="all").evaluate(a, 8, max_neighbours=3)
    exp = ref.flocking(st_, slots, _lists(a, 2.0, 3), rule="separation", radius=2.0, groups="all")
    check(got, exp, "interest")


# ---------------------------------------------------------- properties, misc ---

ALL = [
    cs.Forward(),
    cs.Momentum(),
    cs.Seek([[1, 2], [3, -4]]),
    cs.Flee(),
    cs.Avoid([[0, 0]]),
    cs.Pursue([0, 2], max_prediction=1.0),
    cs.Evade([4], output="danger"),
    cs.Arrive(slowing_radius=2),
    cs.Wander(seed=3),
    cs.Tether(center=[0, 0], radius=3),
    cs.Bounds(lo=[-5, -5], hi=[5, 5], margin=1),
    cs.AgentDanger(radius=1, predictive=True),
    cs.Separation(radius=2),
    cs.Alignment(radius=2),
    cs.Cohesion(radius=2),
]


@pytest.mark.parametrize("b", ALL, ids=lambda b: type(b).__name__)
def test_same_maps_for_any_thread_count_and_dead_rows_are_zero(b):
    a = make_agents(3000, spread=60)
    with cs.threads(1):
        m1 = b.evaluate(a, 16, rotate=True, time=3.5)
    with cs.threads(2):
        m2 = b.evaluate(a, 16, rotate=True, time=3.5)
    np.testing.assert_array_equal(m1.interest, m2.interest)
    np.testing.assert_array_equal(m1.danger, m2.danger)
    dead = ~a.alive
    assert not m1.interest[dead].any() and not m1.danger[dead].any()
    assert np.isfinite(m1.interest).all() and np.isfinite(m1.danger).all()
    assert (m1.interest >= 0).all() and (m1.danger >= 0).all()


@given(shift=st.integers(0, 15), seed=st.integers(0, 1000))
def test_rotating_the_scene_by_one_slot_shifts_the_map(shift, seed):
    a = make_agents(12, seed=seed, dead=False)
    b = cs.Agents(12, seed=seed)
    ang = 2 * np.pi * shift / 16
    rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    b.add(
        np.array(a.position) @ rot.T,
        velocity=np.array(a.velocity) @ rot.T,
        heading=a.heading + ang,
        radius=a.radius,
        max_speed=a.max_speed,
        target=np.array(a.target) @ rot.T,
        group=a.group,
    )
    for beh in (cs.Seek(), cs.Forward(), cs.Separation(radius=8), cs.AgentDanger(radius=3)):
        ma, mb = beh.evaluate(a, 16), beh.evaluate(b, 16)
        np.testing.assert_allclose(np.roll(ma.interest, shift, axis=1), mb.interest, atol=1e-4)
        np.testing.assert_allclose(np.roll(ma.danger, shift, axis=1), mb.danger, atol=1e-4)


def test_agent_order_does_not_matter():
    a = make_agents(50, spread=5, dead=False)
    perm = np.random.default_rng(4).permutation(50)
    b = cs.Agents(50)
    b.add(
        a.position[perm],
        velocity=a.velocity[perm],
        heading=a.heading[perm],
        radius=a.radius[perm],
        max_speed=a.max_speed[perm],
        target=a.target[perm],
        group=a.group[perm],
    )
    for beh in (cs.AgentDanger(radius=1.0, predictive=True), cs.Cohesion(radius=3)):
        ma, mb = beh.evaluate(a, 8, max_neighbours=64), beh.evaluate(b, 8, max_neighbours=64)
        np.testing.assert_allclose(ma.interest[perm], mb.interest, atol=1e-5)
        np.testing.assert_allclose(ma.danger[perm], mb.danger, atol=1e-5)


def test_weight_scales_and_custom_directions():
    a = make_agents(10)
    dirs = np.array([[1, 0], [0, 1], [-1, 0], [0, -1], [0.6, 0.8]], np.float32)
    m1 = cs.Seek().evaluate(a, dirs)
    m2 = cs.Seek(weight=2.5).evaluate(a, dirs)
    np.testing.assert_allclose(m2.interest, 2.5 * m1.interest, rtol=1e-6)
    assert m1.interest.shape == (10, 5)

    class SlotSet:  # anything with .directions (the engine's SlotSet) is accepted
        directions = dirs

    np.testing.assert_array_equal(cs.Seek().evaluate(a, SlotSet()).interest, m1.interest)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: cs.Forward(weight=-1), "weight must be >= 0"),
        (lambda: cs.Forward(weight=math.nan), "weight must be finite"),
        (lambda: cs.Seek([[0, math.nan]]), "targets must be finite"),
        (lambda: cs.Seek([[0, 1, 2]]), r"targets must have shape \(M, 2\)"),
        (lambda: cs.Seek(max_distance=0), "max_distance must be > 0"),
        (lambda: cs.Seek(combine="mean"), "combine must be one of 'max', 'sum'"),
        (lambda: cs.Avoid(falloff="quadratic"), "falloff must be one of"),
        (lambda: cs.Pursue([-1]), "agent ids >= 0"),
        (lambda: cs.Evade([1], output="both"), "output must be one of"),
        (lambda: cs.Arrive(slowing_radius=0), "slowing_radius must be > 0"),
        (lambda: cs.Arrive(tolerance=-1), "tolerance must be >= 0"),
        (lambda: cs.Wander(rate=-1), "rate must be >= 0"),
        (lambda: cs.Tether(center=[0]), "center must be a finite point"),
        (lambda: cs.Bounds(lo=[1, 1], hi=[0, 2]), "lo <= hi"),
        (lambda: cs.AgentDanger(radius=0), r"radius must be in \(0, 1e\+08\]"),
        (lambda: cs.AgentDanger(horizon=-1), "horizon must be > 0"),
        (lambda: cs.Separation(radius=-2), "radius must be > 0"),
        (lambda: cs.Cohesion(groups="team"), "groups must be one of"),
        (lambda: cs.AgentDanger(groups="mine"), "groups must be one of"),
    ],
)
def test_invalid_configs_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_behaviours_are_frozen_and_keyword_weight():
    b = cs.Seek([[1, 2]], max_distance=3, weight=2)
    with pytest.raises(AttributeError):
        b.weight = 3
    assert b.targets.dtype == np.float32 and "Seek(" in repr(b)
    with pytest.raises(TypeError):
        cs.Pursue([1.5])


def test_evaluate_input_errors():
    a = make_agents(5)
    with pytest.raises(ValueError, match="at least 3"):
        cs.Forward().evaluate(a, 2)
    with pytest.raises(ValueError, match=r"\(K, 2\)"):
        cs.Forward().evaluate(a, np.zeros((4, 3)))
    with pytest.raises(IndexError, match="out of range"):
        cs.Pursue([7]).evaluate(a, 8)
    with pytest.raises(TypeError, match="Agents"):
        cs.Forward().evaluate(object(), 8)
    with pytest.raises(ValueError, match="max_neighbours"):
        cs.Separation().evaluate(a, 8, max_neighbours=1000)


coord = st.one_of(st.sampled_from([0.0, 1.0, -1.0]), st.floats(-1e3, 1e3, width=32))


@given(
    data=st.data(),
    n=st.integers(1, 10),
    k=st.integers(3, 20),
    time=st.floats(0, 1e6),
    rotate=st.booleans(),
)
def test_no_nan_for_random_states(data, n, k, time, rotate):
    from hypothesis.extra import numpy as hnp

    arr = lambda shape, el: data.draw(hnp.arrays(np.float32, shape, elements=el))  # noqa: E731
    a = cs.Agents(n)
    a.add(
        arr((n, 2), coord),
        velocity=arr((n, 2), coord),
        heading=arr(n, st.floats(-10, 10, width=32)),
        radius=arr(n, st.floats(0, 5, width=32)),
        max_speed=arr(n, st.floats(0, 10, width=32)),
        target=arr((n, 2), coord),
        group=data.draw(hnp.arrays(np.int32, n, elements=st.integers(0, 2))),
    )
    behaviours = [
        cs.Forward(),
        cs.Momentum(),
        cs.Seek(),
        cs.Flee(arr((2, 2), coord)),
        cs.Avoid(arr((2, 2), coord), max_distance=50),
        cs.Pursue(list(range(n)), max_prediction=2),
        cs.Evade([0], output="danger"),
        cs.Arrive(slowing_radius=3, tolerance=0.1),
        cs.Wander(rate=3),
        cs.Tether(radius=1, softness=2),
        cs.Bounds(lo=[-1, -1], hi=[1, 1], margin=0.5),
        cs.AgentDanger(radius=2, predictive=True),
        cs.Separation(radius=3, groups="all"),
        cs.Alignment(radius=3),
        cs.Cohesion(radius=3, clamp=False),
    ]
    for b in behaviours:
        m = b.evaluate(a, k, rotate=rotate, time=time)
        assert np.isfinite(m.interest).all() and np.isfinite(m.danger).all(), b
        if not isinstance(b, cs.Cohesion):
            assert (m.interest >= 0).all() and (m.danger >= 0).all()


def test_targets_array_can_move_in_place():
    a = cs.Agents(1)
    a.add([0, 0])
    seek = cs.Seek([[1, 0]])
    assert np.argmax(seek.evaluate(a, 4).interest[0]) == 0
    seek.targets[0] = [0, 1]
    assert np.argmax(seek.evaluate(a, 4).interest[0]) == 1


def test_empty_target_lists_write_nothing():
    a = make_agents(5, dead=False)
    assert not cs.Pursue([]).evaluate(a, 8).interest.any()
    assert not cs.Seek(np.zeros((0, 2))).evaluate(a, 8).interest.any()
    assert cs.Seek().evaluate(a, 8).interest.any()  # None: each agent's own target


def test_per_agent_weights_scale_each_agents_rows():
    # agent_weights[i] multiplies behaviour rows of agent i on top of weight; the rest of
    # the map is unchanged (up to the float rounding of weight·w_i).
    rng = np.random.default_rng(4)
    world = cs.World()
    world.add_segments(rng.uniform(-8, 8, (20, 4)))
    agents = cs.Agents(12, slots=8, seed=1)
    agents.add(
        rng.uniform(-6, 6, (10, 2)),
        velocity=rng.uniform(-1, 1, (10, 2)),
        radius=0.4,
        target=rng.uniform(-6, 6, (10, 2)),
    )
    w = rng.uniform(0, 2, 12).astype(np.float32)
    w[3] = 0.0
    for make in (
        lambda **kw: cs.Seek(weight=0.7, **kw),
        lambda **kw: cs.Forward(**kw),
        lambda **kw: cs.AgentDanger(radius=3.0, **kw),
        lambda **kw: cs.WallDanger(look_ahead=4.0, falloff="linear", **kw),
    ):
        plain = make().evaluate(agents, 8, world=world)
        scaled = make(agent_weights=w).evaluate(agents, 8, world=world)
        for m in ("interest", "danger"):
            np.testing.assert_allclose(
                getattr(scaled, m), getattr(plain, m) * w[:, None], rtol=1e-6, atol=1e-7
            )
        assert not scaled.interest[3].any() and not scaled.danger[3].any()


def test_per_agent_weights_steer_the_simulation_in_place():
    # Agent 0's Seek weight is 0: it has no interest and stays put while agent 1 walks.
    # Setting its weight in the same float32 array (used in place) gets it going.
    w = np.float32([0.0, 1.0])
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [0, 5]], max_speed=1.0, target=[[10, 0], [10, 5]])
    steering = cs.Steering([cs.Seek(agent_weights=w)], record=True)
    sim = cs.Simulation(None, agents, steering, motion=cs.Lerp(steer_force=0.5))
    sim.step(0.1, steps=10)
    assert agents.position[0, 0] == 0.0 and agents.position[1, 0] > 0.3
    assert not sim.behaviour_maps["Seek"][0].any()
    w[0] = 1.0
    sim.step(0.1, steps=10)
    assert agents.position[0, 0] > 0.3


def test_per_agent_weights_bad_input():
    agents = cs.Agents(3, slots=8)
    agents.add([[0, 0]])
    with pytest.raises(
        ValueError, match=r"Seek: .*shape \(3,\) \(the agents' capacity\), got \(2,\)"
    ):
        cs.Seek(agent_weights=[1.0, 1.0]).evaluate(agents, 8)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        cs.Simulation(None, agents, [cs.Seek(agent_weights=np.ones(5, np.float32))])
    with pytest.raises(ValueError, match=">= 0"):
        cs.Seek(agent_weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match=">= 0"):
        cs.Forward(agent_weights=[1.0, np.nan, 1.0])
    with pytest.raises(ValueError, match=r"shape \(capacity,\)"):
        cs.Forward(agent_weights=np.ones((3, 1)))
    with pytest.raises(TypeError, match="array of numbers"):
        cs.Forward(agent_weights=["a", "b"])


def test_wander_keeps_wandering_when_time_times_rate_passes_2_63():
    """The noise's lattice index floor(time · rate) was cast to int64 (undefined beyond
    2^63; on x86 one cell for all): Wander returned one map at every time. Oracle: lattice
    cells far apart hash to different values, so three far-apart times give three maps, in
    the context behaviour and in the classic one."""
    from contextsteer import classic

    a = cs.Agents(1)
    a.add([0, 0])
    w = cs.Wander(rate=1e8)
    maps = [w.evaluate(a, 16, time=t).interest[0].tobytes() for t in (1.0e12, 1.3e12, 1.7e12)]
    assert len(set(maps)) == 3
    cw = classic.Wander(rate=1e8)
    acc = [classic.accelerations(None, a, cw, time=t)[0].tobytes() for t in (1e12, 1.3e12, 1.7e12)]
    assert len(set(acc)) == 3


def test_pursue_ids_written_out_of_range_in_place_are_refused_at_the_step():
    """Ids are checked when the simulation is built; written out of range in place, they
    were read as "no target" without a word (fuzz round 13)."""
    ag = cs.Agents(4, slots=16)
    ag.add([[0, 0], [5, 0]], max_speed=1.0)
    ids = np.array([1], np.int32)
    sim = cs.Simulation(None, ag, cs.Steering([cs.Pursue(ids)]))
    sim.step(0.1)
    for bad in (7, -1, 2**31 - 1):
        sim.steering.behaviours[0].targets[0] = bad
        with pytest.raises(
            IndexError, match=rf"Pursue: targets: agent id {bad} out of range \[0, 4\) \(edited"
        ):
            sim.step(0.1)
    sim.steering.behaviours[0].targets[0] = 1
    sim.step(0.1)


@pytest.mark.parametrize("kind", [cs.Pursue, cs.Evade])
def test_pursue_follows_an_edit_of_its_targets_as_its_docstring_says(kind):
    """The docstring: edit ``pursue.targets`` itself, or an int32 C-contiguous array passed
    in; any other (NumPy's default int64) is copied once and its edits are not seen (a new
    user's audit found the int64 case undocumented). Oracle: the monster at the origin,
    targets 10 m east (1) and 10 m west (2); after the switch it heads west (Pursue) or
    east (Evade), or keeps its way when the edit is not seen."""

    def run(ids, edit):
        ag = cs.Agents(3, slots=16)
        ag.add([[0.0, 0.0]], radius=0.3, max_speed=2.0)
        ag.add([[10.0, 0.0], [-10.0, 0.0]], radius=0.3, kinematic=True)
        b = kind(targets=ids)
        sim = cs.Simulation(None, ag, cs.Steering([b]), motion=cs.Lerp(steer_force=1.0))
        sim.step(1 / 30, steps=15)
        x1 = float(ag.position[0, 0])
        edit(b)
        sim.step(1 / 30, steps=30)
        return x1, float(ag.position[0, 0])

    away = kind is cs.Evade  # an evader runs from its target: west of 1, east of 2
    ids32 = np.array([1], np.int32)
    ids64 = np.array([1], np.int64)
    seen = [
        run(ids32, lambda b: ids32.__setitem__(0, 2)),
        run(np.array([1], np.int64), lambda b: b.targets.__setitem__(0, 2)),
    ]
    for x1, x2 in seen:
        assert (x2 > x1) if away else (x2 < x1)
    x1, x2 = run(ids64, lambda b: ids64.__setitem__(0, 2))  # a copy: the edit is not seen
    assert (x2 < x1) if away else (x2 > x1)


def test_a_mask_at_threshold_0_strands_monsters_at_a_door_and_a_small_threshold_does_not():
    """README, "Masking at threshold 0" (a new user's audit): six monsters follow a
    NavField through a 3 m door to a player, with WallDanger and predictive AgentDanger.
    At the default threshold 0, AgentDanger's small danger beside a neighbour masks the
    last open slots and some monsters stand for good (every slot masked, flagged stuck);
    at 0.05 all six reach the player. Oracle: the distances to the player after 60 s."""

    def run(threshold):
        world = cs.World()
        world.add_polyline([[0, 0], [40, 0], [40, 20], [0, 20]], closed=True)
        world.add_segments([[20, 0, 20, 8.5], [20, 11.5, 20, 20]])
        world.add_circles([[10, 10], [30, 5]], [1.5, 1.0])
        agents = cs.Agents(8, slots=16)
        player = agents.add([[35, 15]], radius=0.5, kinematic=True)[0]
        rng = np.random.default_rng(1)
        xy = np.c_[rng.uniform(2, 8, 6), rng.uniform(2, 18, 6)]
        mon = agents.add(xy, radius=0.5, max_speed=3.0, target=[[35, 15]])
        field = cs.NavField(world, [[35, 15]], cell=0.25, radius=0.55)
        behaviours = [
            cs.FollowField(field),
            cs.WallDanger(look_ahead=3),
            cs.AgentDanger(radius=1.2, predictive=True),
        ]
        steering = cs.Steering(behaviours, rotate=True, threshold=threshold)
        sim = cs.Simulation(
            world,
            agents,
            steering,
            motion=cs.Lerp(steer_force=0.2),
            stuck_distance=0.1,
            stuck_time=5.0,
        )
        sim.step(1 / 30, steps=1800)
        far = np.linalg.norm(agents.position[mon] - agents.position[player], axis=1) > 5
        return far, sim.chosen_slot[mon], np.asarray(sim.stuck)[mon]

    far, chosen, stuck = run(0.0)
    assert far.sum() >= 2 and (chosen[far] == -1).all() and stuck[far].all()
    far, _, _ = run(0.05)
    assert not far.any()


def test_bounds_refuses_a_margin_that_leaves_no_rectangle_and_steering_names_classic_behaviours():
    # An inverted inset rectangle pulled agents any way (fuzz round 15).
    with pytest.raises(ValueError, match="margin 0.6 leaves no rectangle"):
        cs.Bounds((0, 0), (1, 1), margin=0.6)
    cs.Bounds((0, 0), (1, 1), margin=0.5)  # a point: allowed
    # "got Seek" read as a contradiction: cs.Seek is a context behaviour too.
    from contextsteer import classic

    with pytest.raises(TypeError, match=r"got the classic contextsteer.classic.Seek; .*Blended"):
        cs.Steering([classic.Seek()])


def test_a_behaviour_evaluated_alone_gives_its_map_in_a_default_steering():
    # evaluate() took 32 neighbours where Steering takes 16: a crowded agent's danger map
    # differed by up to 0.53 (fuzz round 16). Oracle: the map the steering records.
    rng = np.random.default_rng(4)
    a = cs.Agents(40, slots=16)
    a.add(rng.uniform(-2, 2, (40, 2)), velocity=rng.uniform(-1, 1, (40, 2)), radius=0.2)
    danger = cs.AgentDanger(radius=3)
    alone = danger.evaluate(a, 16).danger
    sim = cs.Simulation(None, a, cs.Steering([danger], record=True), motion=cs.Lerp())
    sim.perceive()
    np.testing.assert_array_equal(sim.danger, alone)


def test_integer_options_and_distances_refuse_floats_and_bools_with_type_errors():
    for kw in ({"width": 2.0}, {"max_neighbours": 16.0}, {"decision_phases": True}):
        with pytest.raises(TypeError, match=f"Steering: {next(iter(kw))} must be an int"):
            cs.Steering([cs.Seek()], **kw)
    with pytest.raises(ValueError, match="width must be in"):
        cs.Steering([cs.Seek()], width=-1)
    w = cs.World()
    w.add_segments([[1, -1, 1, 1]])
    with pytest.raises(
        TypeError, match="max_dist: expected an array of real numbers, got dtype bool"
    ):
        cs.raycast(w, [[0, 0]], [[1, 0]], True)
    with pytest.raises(TypeError, match="got dtype bool"):
        cs.Arrive(target=[True, False])
