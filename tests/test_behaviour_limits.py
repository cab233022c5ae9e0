"""Behaviours and maps at the edges of their inputs' ranges, where a fuzz run found a
crash, silent zeros, inf or NaN: classic parameters that are fine as doubles but not as
float32, blends whose vector is too long to square in float32, maps whose product
overflows, weights and slot directions that were not checked. Expected values are worked
by hand."""

from __future__ import annotations

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import classic


@pytest.mark.parametrize(
    "make",
    [
        lambda: classic.FollowFlowField(np.ones((2, 2, 2)), origin=(0, 0), cell=1e-50),
        lambda: classic.FollowFlowField(np.ones((2, 2, 2)), prediction=1e300),
        lambda: classic.Arrive(time_to_target=1e-45),
        lambda: classic.Blended([(classic.Seek(), 1e39)]),
    ],
)
def test_classic_parameters_that_overflow_float32_are_refused(make):
    # (FollowFlowField with cell=1e-50 reached a NaN grid coordinate: a segmentation fault.)
    with pytest.raises(ValueError, match="2\\^-60|2\\^60"):
        make()


def test_a_long_blended_acceleration_is_truncated_not_zeroed():
    a = cs.Agents(1)
    a.add([0, 0], target=[3, 4], max_accel=9e7, max_speed=1)
    for w in (1.0, 1e12):
        acc = classic.accelerations(None, a, classic.Blended([(classic.Seek(), w)]))
        np.testing.assert_allclose(acc[0], [5.4e7, 7.2e7], rtol=1e-6)
    b = cs.Agents(1)
    b.add([0, 0], target=[3, 4], max_accel=2, max_speed=1)
    acc = classic.accelerations(None, b, classic.Arrive(time_to_target=1e-18))
    np.testing.assert_allclose(acc[0], [1.2, 1.6], rtol=1e-6)


def test_products_of_many_maps_saturate_and_stay_finite():
    m = np.float32([[1e13, 5e12, 2e13, 0.0]])
    out = cs.combine([m, m, m], "multiply")
    big = np.float32(2.0**60 - 2.0**36)
    np.testing.assert_array_equal(out, [[big, big, big, 0.0]])
    w = np.full(300, 1.1e18)
    maps = np.full((300, 1, 4), 1.1e18, np.float32)
    assert np.isfinite(cs.combine(maps, "weighted_sum", weights=w)).all()

    agents = cs.Agents(1, slots=4)
    agents.add([0, 0], target=[[0, 5]], max_speed=1.0)
    steering = cs.Steering([cs.Seek(weight=1.1e13)] * 3, combine="multiply")
    sim = cs.Simulation(None, agents, steering)
    sim.step(0.1)
    assert np.isfinite(sim.interest).all() and np.isfinite(agents.position).all()
    sim.decide_and_move(0.1)  # the maps are finite: no "interest must be finite" here


def test_a_weight_times_an_agent_weight_saturates_in_the_maps():
    # (A fuzz run: Seek over 1,000 targets summed, weight and agent weight 1e18 each, made
    # the interest inf, and every slot of an agent tied; with finite products of 1e36 the
    # next step's blend, or decide_and_move after perceive, refused the simulation's own
    # map.) Hand-worked: a saturated slot equals kSaturate, a zero slot stays zero.
    big = np.float32(2.0**60 - 2.0**36)
    for targets, blend in [(np.tile([5.0, 0.0], (1000, 1)), 0.0), ([[5.0, 0.0]] * 10, 0.5)]:
        agents = cs.Agents(2, slots=8)
        agents.add([[0, 0], [3, 3]], max_speed=1.0)
        seek = cs.Seek(targets, combine="sum", weight=1e18, agent_weights=np.full(2, 1e18))
        sim = cs.Simulation(None, agents, cs.Steering([seek], blend=blend))
        sim.step(1 / 30)
        assert np.isfinite(sim.interest).all()
        assert sim.interest[0, 0] == big and sim.interest[0, 4] == 0.0
        sim.perceive()
        sim.decide_and_move(1 / 30)  # no "interest must be finite"
        sim.step(1 / 30)
        assert np.isfinite(agents.position).all()
    S = cs.slot_directions(8)
    m = cs.dot_map(S, [[1e8, 0.0]], weight=np.array([1e18]), magnitude=True, shape="cosine")
    # (1e18 · 1e18 · 1e8 was inf in float32, and 0 · inf NaN on the perpendicular slots.)
    assert np.isfinite(m).all() and m[0, 0] == big and m[0, 4] == -big


@pytest.mark.parametrize(
    "make, owner",
    [
        (lambda r: cs.Arrive(slowing_radius=r), "Arrive: slowing_radius"),
        (lambda r: cs.Separation(radius=r), "Separation: radius"),
        (lambda r: cs.Alignment(radius=r), "Alignment: radius"),
        (lambda r: cs.Cohesion(radius=r), "Cohesion: radius"),
        (lambda r: cs.Seek(max_distance=r), "Seek: max_distance"),
        (lambda r: cs.Pursue([0], max_distance=r), "Pursue: max_distance"),
    ],
)
def test_a_positive_length_that_is_zero_as_a_float32_is_refused_at_build(make, owner):
    # (A fuzz run found Separation(radius=2.2e-309) accepted, then refused by the core at
    # the first step with "radius must be > 0, got 0", naming no behaviour.)
    with pytest.raises(ValueError, match=f"{owner} must be > 0.0 as a float32"):
        make(1e-300)
    make(float(np.nextafter(np.float32(0), np.float32(1))))  # the least float32 above 0


def test_agent_weights_are_bounded_like_weights():
    with pytest.raises(ValueError, match="below 2\\^60"):
        cs.Seek(agent_weights=np.full(2, 3e38, np.float32))
    w = np.ones(2, np.float32)
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [1, 0]], target=[[5, 5]], max_speed=1.0)
    sim = cs.Simulation(None, agents, [cs.Seek(agent_weights=w)])
    sim.step(0.1)
    w[1] = 3e38  # edited in place between steps
    with pytest.raises(ValueError, match="edited since it was given"):
        sim.step(0.1)


@pytest.mark.parametrize(
    ("directions", "match"),
    [
        (np.float32([[1, 0], [0, 1]]), "K >= 3"),
        (np.float32([[2, 0], [0, 2], [-2, 0], [0, -2]]), "unit vectors"),
        (np.float32([[1e18, 0], [0, 1], [-1, 0], [0, -1]]), "unit vectors"),
    ],
)
def test_evaluate_checks_array_slot_directions(directions, match):
    agents = cs.Agents(1)
    agents.add([0, 0], target=[1, 0])
    with pytest.raises(ValueError, match=match):
        cs.Seek().evaluate(agents, directions)


@pytest.mark.parametrize("k", [8.0, np.float64(8.0), "8"])
def test_evaluate_names_a_k_that_is_not_an_int(k):
    """A float K was read as a (1,) array of directions, and the message spoke of a shape
    the caller never gave (fuzz round of 2026-12-07)."""
    agents = cs.Agents(1)
    agents.add([0, 0], target=[1, 0])
    with pytest.raises(TypeError, match=r"expected an int K .*, got (float|float64|str) "):
        cs.Seek().evaluate(agents, k)
    assert cs.Seek().evaluate(agents, 8).interest.shape == (1, 8)


def test_a_slot_ring_too_large_for_memory_is_refused():
    with pytest.raises(ValueError, match="K <= 65536"):
        cs.SlotSet(10**9)


@pytest.mark.parametrize(
    ("which", "error"),
    [(2**40, ValueError), (True, TypeError), (np.float64([0.5, 0.5]), TypeError)],
)
def test_followfield_which_is_checked(which, error):
    world = cs.World()
    world.add_segments([[0, -2, 0, 2]])
    field = cs.NavField(world, [3, 0], cell=0.1)
    with pytest.raises(error, match="which"):
        cs.FollowField(field, which=which)
