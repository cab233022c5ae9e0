"""The map pipeline at the edges of its accepted range, and hysteresis as documented
(a fuzz run of the Steering options against the functional calls found each case)."""

import numpy as np
import pytest

import contextsteer as cs
import reference as ref

SAT = np.float32(2.0**60 - 2.0**36)  # where combine saturates


@pytest.mark.parametrize(
    "mode, interest, danger",
    [
        ("avoid_opposite", SAT, SAT),
        ("subtract", SAT, -SAT),
        ("subtract_unclamped", -SAT, SAT),
    ],
)
def test_resolve_saturates_so_a_hand_composed_pipeline_equals_steer(mode, interest, danger):
    # resolve gave values up to 2^61 from maps within range; choose refused them, so
    # choose(resolve(combine(...))) raised where cs.steer returned a decision.
    slots = cs.SlotSet(8)
    i = np.full((1, 8), interest, np.float32)
    d = (np.eye(1, 8, 0) * danger).astype(np.float32)
    r = cs.resolve(cs.combine([i]), d, mode, directions=slots)
    assert np.abs(r).max() <= SAT
    np.testing.assert_array_equal(
        r,
        ref.ref_resolve(i, d, mode, dirs=slots.directions).astype(np.float32),
    )
    hand = cs.choose(r, slots, "argmax_always")
    fused = cs.steer([i], d, slots, resolve=mode, choose="argmax_always")
    assert hand.slot[0] == fused.slot[0]


def _held(resolve, danger_held, h):
    """The resolved value of the slot held by hysteresis h, at the second decision."""
    agents = cs.Agents(1, slots=8)
    agents.add([0, 0], max_speed=1)
    steering = cs.Steering([cs.Forward()], resolve=resolve, choose="argmax", hysteresis=h)
    sim = cs.Simulation(None, agents, steering)
    interest = [1, 0.5, 0, 0, 0, 0, 0, 0]
    sim.perceive()
    sim.interest[0], sim.danger[0] = interest, 0
    sim.decide_and_move(0.1)
    assert sim.chosen_slot[0] == 0
    sim.perceive()
    sim.interest[0], sim.danger[0] = interest, [danger_held, 0, 0, 0, 0, 0, 0, 0]
    sim.decide_and_move(0.1)
    return float(sim.resolved[0, 0]), int(sim.chosen_slot[0]), float(sim.danger[0, 0])


def test_hysteresis_lowers_a_positive_danger_of_the_held_slot_as_documented():
    # danger 0.3 over the mask threshold 0, lowered by h = 0.5 to 0: kept, value 1·1.5
    value, slot, kept = _held("mask", 0.3, 0.5)
    assert (value, slot) == (1.5, 0) and kept == np.float32(0.3)  # the map keeps its value


def test_hysteresis_leaves_a_negative_danger_alone():
    # It was raised to 0 (clamped), so commitment made the held slot less attractive:
    # 1.1 instead of (1 + 0.5)·1.1 = 1.65.
    value, slot, _ = _held("subtract_unclamped", -0.5, 0.1)
    assert value == pytest.approx(1.5 * 1.1) and slot == 0


def test_a_large_hysteresis_saturates_instead_of_giving_nan():
    # Seek(weight=1e18) with hysteresis 1e17: the held slot's value passed float32 (inf),
    # then subslot gave a NaN direction and every later step raised.
    agents = cs.Agents(1, slots=8)
    agents.add([0, 0], max_speed=1, target=[5, 1])
    steering = cs.Steering([cs.Seek(weight=1e18)], choose="subslot", hysteresis=1e17)
    sim = cs.Simulation(None, agents, steering)
    sim.step(0.1, steps=3)
    assert np.isfinite(sim.resolved).all() and np.isfinite(sim.chosen_direction).all()
    with pytest.raises(ValueError, match="hysteresis"):
        cs.Steering([cs.Seek()], hysteresis=1e21)


def test_spread_sums_saturate():
    # K = 1025 slots, a kernel of 1023 entries near 2^60 on maps near 2^60: inf in the
    # spread maps, then NaN resolved values (inf - inf) and NaN blends.
    k = 1025
    w = float(np.float32(2.0**60 - 2.0**37))
    for opts in ({"resolve": "subtract"}, {"blend": 0.5}):
        agents = cs.Agents(1, slots=k)
        agents.add([0, 0], max_speed=1, target=[5, 1])
        steering = cs.Steering(
            [cs.Seek(weight=w), cs.Avoid([[3, 3]], weight=w, max_distance=50)],
            spread=[w] * (k - 2),
            spread_mode="sum",
            spread_maps="both",
            **opts,
        )
        sim = cs.Simulation(None, agents, steering)
        sim.step(0.1, steps=3)
        for m in (sim.interest, sim.danger, sim.resolved):
            assert np.isfinite(m).all() and np.abs(m).max() <= SAT


def test_steering_refuses_thresholds_the_functional_resolve_refuses():
    for name in ("threshold", "epsilon"):
        with pytest.raises(ValueError, match=f"{name} must be below 2\\^60"):
            cs.Steering([cs.Seek()], **{name: 1e19})
