"""Slots that turn with the heading (``Steering(rotate=True)``) and the steering's memory
across steps: the temporal blend and hysteresis remember directions in the world, not
slot indices of an agent that has turned since (fuzz round 13: a car turned 90° blended
last step's "goal ahead" into the slot now pointing sideways and chose 45° off its goal;
hysteresis held the slot index, i.e. the old direction relative to the car)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import contextsteer as cs


def turn_ring(row: np.ndarray, gaps: np.ndarray, delta: float) -> np.ndarray:
    """Oracle: the map row perceived at heading h read at heading h + delta: slot j's
    value is the row's at angle theta_j + delta, linear between the slots either side."""
    at = np.concatenate([[0.0], np.cumsum(gaps.astype(np.float64))])
    k = len(row)
    out = np.empty(k)
    for j in range(k):
        phi = (at[j] + delta) % at[k]
        i = int(np.searchsorted(at[:k], phi, side="right") - 1)
        t = (phi - at[i]) / (at[i + 1] - at[i])
        out[j] = row[i] + t * (row[(i + 1) % k] - row[i])
    return out


def _two(ring, blend):
    world = cs.World()
    world.add_segments([[3.0, -5.0, 3.0, 5.0], [-5.0, 2.5, 5.0, 2.5]])
    sims = []
    for b in (blend, None):
        a = cs.Agents(1, slots=ring.k)
        a.add([[0.0, 0.0]], max_speed=1.0, target=[[20.0, 6.0]], heading=0.3)
        steering = cs.Steering(
            [cs.Seek(), cs.WallDanger(look_ahead=4.0)], rotate=True, blend=b, choose="argmax"
        )
        sims.append(cs.Simulation(world, a, steering, motion=cs.Lerp(steer_force=0.0), slots=ring))
    return sims


@pytest.mark.parametrize("delta", [0.0, 0.05, -0.7, np.pi / 2, 2 * np.pi / 16, 3.0, -3.1])
@pytest.mark.parametrize("slots", [16, 7, "crowd"])
def test_the_blend_memory_is_turned_with_the_agent(delta, slots):
    """Both maps blended after a turn equal the oracle's: last step's maps turned by the
    change of heading, blended with the fresh ones (read from the same simulation
    without blend), on a regular ring, an odd one and the crowd's uneven ring."""
    ring = cs.scenarios.crowd_slots() if slots == "crowd" else cs.SlotSet(slots)
    blended, fresh = _two(ring, 0.4)
    for sim in (blended, fresh):
        sim.step(0.02)
    np.testing.assert_array_equal(blended.interest, fresh.interest)  # the first takes m
    memory = (blended.interest[0].copy(), blended.danger[0].copy())
    h0 = np.float64(blended.perceived_heading[0])
    heading = np.float32(blended.agents.heading[0] + delta)
    for sim in (blended, fresh):
        sim.agents.heading[0] = heading
        sim.step(0.02)
    turn = float(np.float64(blended.perceived_heading[0]) - h0)
    gaps = np.asarray(ring.gaps, dtype=np.float32)
    for got, old, new in zip(
        (blended.interest[0], blended.danger[0]), memory, (fresh.interest[0], fresh.danger[0])
    ):
        back = turn_ring(old, gaps, turn) if turn != 0 else old
        np.testing.assert_allclose(got, back + 0.4 * (new - back), rtol=0, atol=2e-6)
    assert fresh.danger[0].max() > 0  # the walls are seen: the danger map is tested too


def test_a_turned_car_blends_towards_its_goal():
    """The helper's case: a car turned 90° chose 45° off its goal with blend 0.5."""
    for rotate in (False, True):
        a = cs.Agents(1, slots=16)
        a.add([[0.0, 0.0]], max_speed=1.0, target=[[1000.0, 0.0]], heading=0.0)
        steering = cs.Steering([cs.Seek()], rotate=rotate, blend=0.5, choose="argmax")
        sim = cs.Simulation(None, a, steering, motion=cs.Lerp(steer_force=0.0))
        sim.step(0.01)
        a.heading[0] = np.pi / 2
        sim.step(0.01)
        np.testing.assert_allclose(sim.chosen_direction[0], [1.0, 0.0], atol=1e-6)


@pytest.mark.parametrize("turn", [0.0, 0.8, np.pi / 2 - 0.1, -2.5])
def test_hysteresis_holds_the_world_direction_of_the_last_decision(turn):
    """Seek to +x, then a slightly nearer goal appears at +y (its interest a little
    higher): hysteresis 0.5 keeps the last decision. With slots that turn, the slot kept
    is the one nearest the last decision's world direction (hand-worked: within half a
    slot of +x, wherever the agent turned), as without rotation; it held the slot index,
    which after a turn of 84° pointed near +y."""
    a = cs.Agents(1, slots=16)
    a.add([[0.0, 0.0]], max_speed=1.0, heading=0.0)
    seek = cs.Seek(targets=[[100.0, 0.0], [-1000.0, 0.0]], max_distance=200.0)
    sim = cs.Simulation(
        None,
        a,
        cs.Steering([seek], rotate=True, hysteresis=0.5, choose="argmax"),
        motion=cs.Lerp(steer_force=0.0),
    )
    sim.step(0.01)
    np.testing.assert_allclose(sim.chosen_direction[0], [1.0, 0.0], atol=1e-6)
    seek.targets[1] = [0.0, 95.0]
    a.heading[0] = turn
    sim.step(0.01)
    d = sim.chosen_direction[0]
    assert np.degrees(np.arctan2(d[1], d[0])) == pytest.approx(0.0, abs=11.25 + 1e-3)


def test_a_pickle_continues_the_turned_memories_bit_for_bit():
    """The last decision's heading is state: saved and restored with the rest."""
    a = cs.Agents(6, slots=16)
    rng = np.random.default_rng(3)
    a.add(rng.uniform(-3, 3, (6, 2)), max_speed=1.0, target=rng.uniform(-9, 9, (6, 2)))
    steering = cs.Steering(
        [cs.Seek(), cs.AgentDanger(radius=1.0)], rotate=True, hysteresis=0.3, blend=0.5
    )
    sim = cs.Simulation(None, a, steering, motion=cs.Vehicle())
    sim.step(0.05, steps=10)
    back = pickle.loads(pickle.dumps(sim))
    for s in (sim, back):
        s.step(0.05, steps=20)
    np.testing.assert_array_equal(sim.agents.position, back.agents.position)
    np.testing.assert_array_equal(sim.interest, back.interest)
