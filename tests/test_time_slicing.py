"""Lewis's time slicing (``Simulation(decision_validity=...)``): each behaviour estimates
how long its scores stay valid for the chosen velocity, and the agent keeps its decision
until the shortest estimate has elapsed. Oracles: a NumPy port of the documented
estimates, the schedule's own rule, and the decisions themselves (unchanged between an
agent's decision steps)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import scenarios

DT = 1.0 / 30.0


def _scene(validity=0.5, k=16, seed=0):
    """Six agents in a walled room: Seek towards shared points, Forward, WallDanger,
    AgentDanger; all agents within each other's neighbour radius."""
    world = cs.World()
    world.add_polyline([[-6, -6], [6, -6], [6, 6], [-6, 6]], closed=True)
    world.add_segments([[1.0, -1.0, 1.0, 1.0]])
    rng = np.random.default_rng(seed)
    agents = cs.Agents(6, slots=k, seed=seed)
    agents.add(
        rng.uniform(-2.5, 2.5, (6, 2)),
        velocity=rng.uniform(-0.8, 0.8, (6, 2)),
        radius=0.3,
        max_speed=rng.uniform(0.8, 1.5, 6),
        max_accel=4.0,
    )
    behaviours = [
        cs.Seek([[4.0, 0.5], [-4.0, 3.0]]),
        cs.Forward(weight=0.3),
        cs.WallDanger(look_ahead=3.0, falloff="linear"),
        cs.AgentDanger(radius=6.0),
    ]
    sim = cs.Simulation(
        world,
        agents,
        cs.Steering(behaviours, max_neighbours=8),
        motion=cs.Accel(),
        slots=k,
        decision_validity=validity,
    )
    return sim


def oracle_validity(sim, pos, vel, k):
    """The documented estimates, in NumPy (float64), for every alive agent, from the state
    the decision read (pos, vel) and the decision it made (chosen_direction, strength)."""
    a = sim.agents
    half = math.pi / k
    out = np.full(len(pos), np.inf)
    for i in np.flatnonzero(a.alive):
        speed = max(np.hypot(*vel[i]), float(sim.strength[i]) * float(a.max_speed[i]))
        w = sim.chosen_direction[i].astype(np.float64) * speed
        ests = []

        def bearing(d, u, w=w):
            rel = np.hypot(*(w - u))
            return half * d / rel if rel > 0 else np.inf

        # Seek over two shared points (no distance limit).
        ests.append(
            min(
                bearing(np.hypot(*(q - pos[i])), np.zeros(2))
                for q in np.array([[4.0, 0.5], [-4.0, 3.0]])
            )
        )
        ests.append(np.inf)  # Forward
        # WallDanger: half the gap to the nearest wall (the body's radius off), or to the
        # look-ahead, over the speed.
        pad = float(a.radius[i])
        near = cs.nearest(sim.world, pos[i][None].astype(np.float32), 3.0 + pad).distance[0]
        h = min(3.0, max(float(near) - pad, 0.0)) if np.isfinite(near) else 3.0
        ests.append(0.5 * h / speed if speed > 0 else np.inf)
        # AgentDanger: the other alive agents within the neighbour radius (at most 5 of
        # max_neighbours 8: all of them).
        m = np.inf
        reach = sim._core.neighbor_radius
        for j in np.flatnonzero(a.alive):
            d = np.hypot(*(pos[j] - pos[i]))
            if j == i or not d <= reach:
                continue
            gap = d - float(a.radius[i]) - float(a.radius[j])
            rel = np.hypot(*(w - vel[j]))
            close = (0.5 * gap / rel if rel > 0 else np.inf) if gap > 0 else 0.0
            m = min(m, close, bearing(d, vel[j]))
        ests.append(m)
        out[i] = max(min(ests), 0.0)
    return out


@pytest.mark.parametrize("k", [8, 16, 32])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_estimates_match_the_documented_rules(k, seed):
    sim = _scene(k=k, seed=seed)
    checked = 0
    for _ in range(40):
        deciding = sim.next_decision <= sim._core.step_count
        pos = np.asarray(sim.agents.position, dtype=np.float64).copy()
        vel = np.asarray(sim.agents.velocity, dtype=np.float64).copy()
        sim.step(DT)
        want = oracle_validity(sim, pos, vel, k)
        got = np.asarray(sim.validity, dtype=np.float64)
        idx = np.flatnonzero(deciding & sim.agents.alive)
        checked += len(idx)
        np.testing.assert_allclose(got[idx], want[idx], rtol=2e-4, atol=1e-6)
    assert checked >= 20


def test_the_schedule_keeps_each_decision_for_its_validity_in_whole_steps():
    cap = 0.4
    sim = _scene(validity=cap)
    before = np.zeros(6, np.uint64)
    assert (sim.next_decision == 0).all()
    seen_kept = 0
    for _ in range(120):
        step = sim._core.step_count
        deciding = sim.next_decision <= step
        direction = sim.chosen_direction.copy()
        strength = sim.strength.copy()
        sim.step(DT)
        v = np.asarray(sim.validity, dtype=np.float64)
        dt = float(np.float32(DT))

        def whole(t, dt=dt):  # whole steps, with the documented 1e-6 of relative slack
            return np.floor(t / dt * (1 + 1e-6))

        steps = np.clip(whole(v), 1, max(1.0, whole(float(np.float32(cap)))))
        np.testing.assert_array_equal(sim.next_decision[deciding], step + steps[deciding])
        np.testing.assert_array_equal(sim.next_decision[~deciding], before[~deciding])
        # An agent that did not decide moved on its last decision, unchanged.
        np.testing.assert_array_equal(sim.chosen_direction[~deciding], direction[~deciding])
        np.testing.assert_array_equal(sim.strength[~deciding], strength[~deciding])
        seen_kept += int((~deciding).sum())
        before = sim.next_decision.copy()
    assert seen_kept > 100  # decisions were kept, not remade every step


def test_a_new_agent_in_a_reused_slot_decides_at_once():
    sim = _scene()
    sim.step(DT, steps=5)
    assert sim.next_decision[2] > sim._core.step_count
    sim.agents.remove([2])
    sim.agents.add([[0.0, -3.0]], radius=0.3, max_speed=1.0)
    sim.step(DT)  # renewed at the start of the step: decided in it
    assert np.isfinite(sim.validity[2])
    assert sim.next_decision[2] >= sim._core.step_count


def _sliced(name, seed, validity):
    """A crowd scenario's simulation rebuilt with decision_validity (its metrics too)."""
    base = scenarios.get(name)(seed=seed)
    sim = cs.Simulation(
        base.world,
        base.agents,
        base._source_steering,
        base.motion,
        **{**base._init, "decision_validity": validity},
    )
    sim.configure_metrics(**base._metrics_args)
    return sim


def test_crowds_decide_less_often_and_stay_apart():
    # The hallway (16 decision phases, CollisionDanger, FollowField): the slicing keeps
    # decisions for several steps and the crowd neither touches nor strands.
    sim = _sliced("hallway", 0, 0.5)
    decisions = 0
    for _ in range(900):
        decisions += int(((sim.next_decision <= sim._core.step_count) & sim.agents.alive).sum())
        sim.step(DT)
    m = sim.metrics()
    assert decisions < 0.7 * 900 * int(sim.agents.alive.sum())
    assert m["collisions"]["total"] == 0


def test_thread_counts_and_pickles_give_the_same_bits():
    def run(threads, pickled):
        with cs.threads(threads):
            sim = _sliced("crossing", 3, 0.3)
            sim.step(DT, steps=60)
            if pickled:
                sim = pickle.loads(pickle.dumps(sim))
            sim.step(DT, steps=60)
            return (sim.agents.position.copy(), sim.next_decision.copy(), sim.validity.copy())

    one = run(1, False)
    for other in (run(2, False), run(1, True), run(2, True)):
        for a, b in zip(one, other):
            np.testing.assert_array_equal(a, b)


def test_off_by_default_and_refusals():
    a = cs.Agents(2)
    a.add([[0, 0], [1, 0]])
    sim = cs.Simulation(None, a, [cs.Seek()])
    assert sim.next_decision is None and sim.validity is None
    with pytest.raises(ValueError, match="decision_validity must be in"):
        cs.Simulation(None, a, [cs.Seek()], decision_validity=0.0)
    with pytest.raises(ValueError, match="exclude each other"):
        cs.Simulation(None, a, [cs.Seek()], decision_validity=0.5, decision_interval=2)
    with pytest.raises(ValueError, match="needs context steering"):
        cs.Simulation(None, a, cs.classic.Seek(), decision_validity=0.5)
    with pytest.raises(TypeError, match="decision_validity must be a number"):
        cs.Simulation(None, a, [cs.Seek()], decision_validity="0.5")


def _seeker(validity):
    a = cs.Agents(1, slots=16)
    a.add([[0, 0]], max_speed=1.0, max_accel=100)
    return cs.Simulation(
        None, a, [cs.Seek([[3.0, 0.0]])], motion=cs.Accel(), decision_validity=validity
    )


def test_a_larger_dt_later_does_not_stretch_a_decision_beyond_its_validity():
    # Counted in steps of the deciding dt (50 of 0.01 s), a decision was kept 4.9 s once
    # the caller stepped at 0.1 s: the agent walked past its target.
    sim = _seeker(0.5)
    sim.step(0.01)
    assert sim.next_decision[0] == 50
    first = sim.validity.copy()
    while np.array_equal(sim.validity, first):
        start = sim.time
        sim.step(0.1)
    # It decided again at the first step starting at or after 0.5 - half a step of 0.01 s.
    assert start == pytest.approx(0.51, abs=1e-6)


@pytest.mark.parametrize("validity, dt", [(3.0, 1e-20), (1e6, 1e-30), (1e6, 1e-13)])
def test_a_tiny_dt_does_not_overflow_the_schedule(validity, dt):
    # floor(T / dt) up to 1e36 was cast to uint64 (undefined; 0 here): every step decided.
    sim = _seeker(validity)
    sim.step(dt)
    assert sim._core.step_count < sim.next_decision[0] <= 2**52  # at most 2^52 steps on
    before = sim.validity.copy()
    sim.step(dt, steps=3)
    np.testing.assert_array_equal(sim.validity, before)  # kept, not remade


def test_each_wall_danger_estimates_from_its_own_layers():
    # Every WallDanger read the first one's rays: with the first seeing nothing (layers 1)
    # and the second a wall 1.7 m ahead (layers 2), the schedule ignored the wall.
    world = cs.World()
    world.add_segments([[2.0, -5, 2.0, 5]], layers=2)
    for order in ((1, 2), (2, 1)):
        a = cs.Agents(1, slots=16)
        a.add([[0, 0]], velocity=[[1.0, 0]], max_speed=1.0, max_accel=100, radius=0.3)
        behaviours = [
            cs.Seek([[-50.0, 0.0]], weight=0.0),
            *(cs.WallDanger(look_ahead=3.0, layers=layer) for layer in order),
            cs.Forward(),
        ]
        sim = cs.Simulation(world, a, behaviours, motion=cs.Accel(), decision_validity=5.0)
        sim.step(0.05)
        # half of (2.0 - 0.3) m at 1 m/s; Seek's bearing time is (pi/16)*50/|w|, longer
        assert sim.validity[0] == pytest.approx(0.85, rel=1e-5)


CROWD_SCENARIOS = [
    "oncoming",
    "crossing",
    "hallway",
    "bottleneck",
    "doorway",
    "maze",
    "evacuation",
    "circle",
]


@pytest.mark.parametrize("name", CROWD_SCENARIOS)
def test_every_crowd_scenario_takes_decision_validity(name):
    small = {"evacuation": {"agents": 20}, "maze": {"agents": 4}}.get(name, {})
    assert scenarios.get(name)(**small).validity is None  # off by default
    sim = scenarios.get(name)(decision_validity=0.25, **small)
    sim.step(DT, steps=3)
    assert sim.validity is not None and np.isfinite(sim.validity[sim.agents.alive]).all()
    assert (sim.next_decision[sim.agents.alive] >= sim._core.step_count).all()


def test_the_cli_passes_decision_validity_to_a_crowd_scenario(tmp_path):
    from contextsteer import cli

    argv = ["run", "crossing", "--steps", "30", "--frames", "0", "--quiet", "--out"]
    assert cli.main([*argv, str(tmp_path), "-p", "decision_validity=0.25"]) == 0
    assert cli.main([*argv, str(tmp_path), "-p", "decision_validity=-1"]) == 2


def test_a_new_target_is_decided_for_at_the_next_step():
    """The estimates assume the targets stay: a goal moved behind the agent between
    steps was ignored for 14 steps (1.4 s) until the old decision ran out (fuzz round
    13). An agent whose Agents.target changed since its last decision decides again at
    once; one whose target stays keeps its schedule."""
    a = cs.Agents(2, slots=16)
    a.add(
        [[0.0, 0.0], [0.0, 5.0]], max_speed=2.0, max_accel=100.0, target=[[20.0, 0.0], [20.0, 5.0]]
    )
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()]), motion=cs.Accel(), decision_validity=5.0)
    sim.step(0.1, steps=5)
    kept = int(sim.next_decision[1])
    assert kept > sim.step_count + 1  # a long decision: the target stays far ahead
    a.target[0] = [-20.0, 0.0]
    a.target[1] = a.target[1]  # written with the same value: no change
    sim.step(0.1)
    assert sim.chosen_direction[0, 0] < -0.99  # turned to the new goal at once
    assert int(sim.next_decision[1]) == kept


@pytest.mark.parametrize("staged", [False, True])
@pytest.mark.parametrize("blend", [None, 0.3])
def test_a_new_target_is_decided_for_with_blend_and_staged_calls(staged, blend):
    """Who decides is fixed when the step perceives: a target written between perceive()
    and decide_and_move() once made the agent decide from maps never refreshed, and hold
    that for the whole validity; and with blend the re-decision came mostly from the old
    memory (21 steps to turn). A new target drops the memory; written between the
    stages, it is taken at the next step (helper on fuzz round 13's fixes)."""
    a = cs.Agents(1, slots=16)
    a.add([[0.0, 0.0]], max_speed=2.0, max_accel=100.0, target=[[20.0, 0.0]])
    sim = cs.Simulation(
        None, a, cs.Steering([cs.Seek()], blend=blend), motion=cs.Accel(), decision_validity=5.0
    )
    sim.step(0.1, steps=5)
    if staged:
        sim.perceive()
        a.target[0] = [-20.0, 0.0]
        sim.decide_and_move(0.1)
        assert sim.chosen_direction[0, 0] > 0.99  # this step's maps are the old target's
    else:
        a.target[0] = [-20.0, 0.0]
    sim.step(0.1)
    assert sim.chosen_direction[0, 0] < -0.99


def test_a_target_written_between_the_stages_of_a_deciding_agent_is_taken_next_step():
    """The agent due to decide at the staged step decides from maps of its old target;
    the target recorded as decided for was the new one (read at the step's end), so the
    new goal was ignored for the whole validity (19 steps; a helper on fuzz round 13's
    fixes). The target decided for is the one perceived."""
    a = cs.Agents(1, slots=16)
    a.add([[0.0, 0.0]], max_speed=2.0, max_accel=100.0, target=[[20.0, 0.0]])
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()]), motion=cs.Accel(), decision_validity=5.0)
    sim.step(0.1)
    while sim.step_count < int(sim.next_decision[0]):
        sim.step(0.1)
    sim.perceive()
    a.target[0] = [-20.0, 0.0]
    sim.decide_and_move(0.1)
    sim.step(0.1)
    assert sim.chosen_direction[0, 0] < -0.99


@pytest.mark.parametrize("how", ["added", "kinematic"])
def test_an_agent_arriving_between_the_stages_decides_at_its_next_step(how):
    """An agent added (or handed back from kinematic) between perceive() and
    decide_and_move() had not decided, yet its schedule was set from an empty estimate
    (+inf): it stood for the whole decision_validity (20 steps). It decides at its next
    step, as the docs say."""
    a = cs.Agents(2, slots=16)
    a.add([[0.0, 0.0]], max_speed=2.0, max_accel=100.0, target=[[20.0, 0.0]])
    if how == "kinematic":
        a.add([[0.0, 5.0]], max_speed=2.0, max_accel=100.0, target=[[-20.0, 5.0]], kinematic=True)
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()]), motion=cs.Accel(), decision_validity=2.0)
    sim.step(0.1, steps=3)
    sim.perceive()
    if how == "added":
        a.add([[0.0, 5.0]], max_speed=2.0, max_accel=100.0, target=[[-20.0, 5.0]])
    else:
        a.kinematic[1] = False
    sim.decide_and_move(0.1)
    assert int(sim.next_decision[1]) <= sim.step_count
    sim.step(0.1)
    assert a.velocity[1, 0] < 0  # on its way to its own target
