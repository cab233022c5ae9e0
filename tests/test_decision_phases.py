"""Steering(decision_phases=P): Simulation.step decides agent i in phase i % P, and each
phase perceives the agents of the phases before it at their new commands."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contextsteer as cs

MAX_SPEED = 1.3


def _build(phases, n=20, seed=0, walls=True, push_apart=False, options=None):
    """A small crowd in a walled box (agents 0..n-1 crossing it) plus, at index n, a far
    agent moving faster than anyone's max speed: the neighbour radius (which follows the
    fastest velocity, and in phases the max speed) is then the same whatever velocities
    the oracle below rewrites, with or without phases."""
    rng = np.random.default_rng(seed)
    world = None
    if walls:
        world = cs.World()
        box = np.array([[-6, -6], [6, -6], [6, 6], [-6, 6]], np.float32)
        world.add_polyline(box, closed=True)
        world.add_segments(np.array([[-2, 0.5, 2, -0.5]], np.float32))
    agents = cs.Agents(n + 1, slots=16, seed=seed)
    start = rng.uniform(-5.4, 5.4, (n, 2)).astype(np.float32)
    agents.add(
        start,
        velocity=rng.uniform(-1, 1, (n, 2)).astype(np.float32),
        heading=rng.uniform(-np.pi, np.pi, n).astype(np.float32),
        radius=0.3,
        max_speed=MAX_SPEED,
        max_accel=6.0,
        target=-start,
    )
    agents.add(
        [[500.0, 500.0]],
        velocity=[[2.0, 0.0]],
        radius=0.3,
        max_speed=MAX_SPEED,
        target=[[900.0, 500.0]],
    )
    steering = cs.scenarios.crowd_steering(walls=walls, options=options, decision_phases=phases)
    sim = cs.Simulation(
        world,
        agents,
        steering,
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
        push_apart=push_apart,
    )
    return agents, sim


def _state(agents, sim):
    return np.array(agents.position), np.array(agents.velocity), np.array(sim.chosen_direction)


@pytest.mark.parametrize("phases,seed", [(3, 0), (3, 1), (4, 2), (7, 3)])
def test_each_phase_decides_as_one_step_from_the_earlier_phases_commands(phases, seed):
    # Oracle: deciding at once (decision_phases=1) from a state in which the agents of the
    # phases before f move at the commands the phased step gave them. Without push-apart
    # an agent's move depends only on its own state and its own decision, so phase f's
    # agents must come out of both bit for bit, step after step. (Agent n, the far one, is
    # in the last phase.)
    n = 9 * phases - 1
    agents, sim = _build(phases, n=n, seed=seed)
    sim.step(1 / 30, steps=10)  # a state with memory: last decisions, commitment, inertia
    idx = np.arange(n + 1)
    checked = 0
    for _ in range(6):
        start = pickle.dumps(sim)
        sim.step(1 / 30)
        pos, vel, chosen = _state(agents, sim)
        command = chosen * (np.asarray(sim.strength) * np.float32(MAX_SPEED))[:, None]
        for f in range(phases):
            oracle = pickle.loads(start)
            before = idx[(idx % phases < f) & (idx < n)]
            oracle.agents.velocity[before] = command[before]
            at_once = cs.Simulation(
                oracle.world,
                oracle.agents,
                cs.scenarios.crowd_steering(walls=True, decision_phases=1),
                motion=cs.Accel(),
                slots=cs.scenarios.crowd_slots(),
                push_apart=False,
            )
            # the decision memory carried over: the phased simulation's state
            at_once._core._set_state(oracle._core._state())
            at_once.step(1 / 30)
            mine = idx[idx % phases == f]
            p1, v1, c1 = _state(oracle.agents, at_once)
            np.testing.assert_array_equal(c1[mine], chosen[mine])
            np.testing.assert_array_equal(p1[mine], pos[mine])
            np.testing.assert_array_equal(v1[mine], vel[mine])
            checked += len(mine)
    assert checked == 6 * (n + 1)


def test_one_phase_is_deciding_at_once():
    # decision_phases=1 is the default and the old step, bit for bit (the whole suite
    # checks it too); 2 phases differ.
    runs = {}
    for phases in (None, 1, 2):
        kw = {} if phases is None else {"decision_phases": phases}
        agents, _ = _build(1)
        st = cs.scenarios.crowd_steering(walls=True, options={}, **kw)
        sim = cs.Simulation(None, agents, st, motion=cs.Accel(), push_apart=True)
        sim.step(1 / 30, steps=60)
        runs[phases] = np.array(agents.position)
    np.testing.assert_array_equal(runs[None], runs[1])
    assert not np.array_equal(runs[1], runs[2])
    assert cs.Steering([]).decision_phases == 1


@pytest.mark.parametrize("phases", [2, 16])
def test_phases_are_bit_identical_for_any_thread_count(phases):
    out = []
    for threads in (1, 2):
        agents, sim = _build(phases, n=120, seed=5, push_apart=True)
        with cs.threads(threads):
            sim.step(1 / 30, steps=40)
        out.append((np.array(agents.position), np.array(agents.velocity)))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_phases_split_over_threads_are_bit_identical():
    # Each phase's agents go to the threads in chunks of at least 16 deciding agents: with
    # 16 phases a crowd needs over 256 agents for a phase to be split at all (the test
    # above, 120 agents, splits only with 2 phases). RiMEA 9's room with 700 agents: each
    # phase is split in three on two threads.
    out = []
    for threads in (1, 2):
        sim = cs.scenarios.evacuation(agents=700, seed=3, exits=2)
        with cs.threads(threads):
            sim.step(1 / 30, steps=12)
        out.append(
            b"".join(
                np.ascontiguousarray(x).tobytes()
                for x in (sim.agents.position, sim.agents.velocity, sim.chosen_direction)
            )
        )
    assert out[0] == out[1]


def test_a_head_on_pair_stops_the_reciprocal_dance():
    # Two agents head-on (5 cm off the line), the plain configuration: deciding at once,
    # each dodges, sees the other off the line and swings back, again and again; in two
    # phases the second sees the first one's dodge and keeps its course. Decision turning
    # (sum of |change| of the chosen heading over the encounter): 130° at once, 39° in
    # phases, and both pass without touching and get home either way.
    def run(phases):
        agents = cs.Agents(2, slots=16, seed=0)
        starts = np.array([[-4, 0], [4, 0.05]], np.float32)
        agents.add(
            starts,
            heading=np.array([0, np.pi], np.float32),
            radius=0.3,
            max_speed=MAX_SPEED,
            max_accel=6.0,
            target=starts[::-1],
        )
        st = cs.scenarios.crowd_steering(walls=False, options={}, decision_phases=phases)
        sim = cs.Simulation(None, agents, st, motion=cs.Accel(), slots=cs.scenarios.crowd_slots())
        turn, prev, closest = 0.0, None, np.inf
        for _ in range(200):
            sim.step(1 / 30)
            d = np.array(sim.chosen_direction, np.float64)
            h = np.arctan2(d[:, 1], d[:, 0])
            if prev is not None:
                turn += np.abs((h - prev + np.pi) % (2 * np.pi) - np.pi).sum()
            prev = h
            closest = min(closest, float(np.linalg.norm(agents.position[0] - agents.position[1])))
        home = float(np.linalg.norm(agents.position - starts[::-1], axis=1).max())
        return np.degrees(turn), closest, home

    at_once, phased = run(1), run(2)
    assert phased[0] < 0.5 * at_once[0]
    for _turn, closest, home in (at_once, phased):
        assert closest > 0.6 and home < 0.3


def test_split_calls_refuse_phases_and_perceive_still_works():
    agents, sim = _build(4)
    sim.perceive()  # maps for pictures are fine
    with pytest.raises(ValueError, match="decision_phases"):
        sim.decide_and_move(1 / 30)
    before = np.array(agents.position)
    sim.step(1 / 30)
    assert not np.array_equal(before, agents.position)


@pytest.mark.parametrize(
    "bad, error",
    [(0, ValueError), (65, ValueError), (-1, ValueError)]
    + [(b, TypeError) for b in (2.5, True, "3", None)],  # not an int: TypeError, as elsewhere
)
def test_bad_phases_are_refused(bad, error):
    with pytest.raises(error, match="decision_phases"):
        cs.Steering([cs.Seek()], decision_phases=bad)


def test_phases_survive_pickling_and_old_pickles_load_with_one():
    st = cs.scenarios.crowd_steering()
    assert st.decision_phases == cs.scenarios.CROWD_PHASES == 16
    assert pickle.loads(pickle.dumps(st)).decision_phases == 16
    old = cs.Steering([cs.Seek()])
    state = dict(old.__dict__)
    del state["decision_phases"]
    revived = cs.Steering.__new__(cs.Steering)
    revived.__setstate__(state)
    assert revived.decision_phases == 1
    # a simulation deciding in phases continues bit for bit after a round trip
    agents, sim = _build(4, push_apart=True)
    sim.step(1 / 30, steps=5)
    copy = pickle.loads(pickle.dumps(sim))
    sim.step(1 / 30, steps=10)
    copy.step(1 / 30, steps=10)
    np.testing.assert_array_equal(agents.position, copy.agents.position)


def test_the_neighbour_radius_covers_commands_faster_than_any_velocity():
    # Agents at rest: deciding at once, the query radius follows the velocities (0); in
    # phases a neighbour may be seen at its new command, up to its max speed, so the
    # radius is that of agents moving at max speed.
    def radius(phases):
        agents = cs.Agents(2, slots=16)
        agents.add([[0, 0], [30, 0]], radius=0.3, max_speed=MAX_SPEED, target=[[1, 0], [29, 0]])
        st = cs.scenarios.crowd_steering(walls=False, decision_phases=phases)
        return cs.Simulation(None, agents, st)._core.neighbor_radius

    d = cs.scenarios.crowd_steering().behaviours[1]
    assert radius(1) == pytest.approx(MAX_SPEED * d.horizon + 0.6 + d.margin, rel=1e-5)
    assert radius(2) == pytest.approx(2 * MAX_SPEED * d.horizon + 0.6 + d.margin, rel=1e-4)


@pytest.mark.parametrize("phases", [3, 16])
def test_strided_and_one_by_one_phase_calls_agree(phases):
    # In a phase the step decides the phase's agents of a range together (rows i, i + P,
    # ...), except with recorded maps, where it decides them one by one. Both must give
    # the same bits, and the recorded maps must be the step's own.
    out = []
    for record in (False, True):
        agents, sim = _build(1, n=70, seed=9, push_apart=True)
        st = cs.scenarios.crowd_steering(walls=True, decision_phases=phases)
        st.record = record
        sim = cs.Simulation(
            sim.world, agents, st, motion=cs.Accel(), slots=cs.scenarios.crowd_slots()
        )
        sim.step(1 / 30, steps=60)
        out.append((np.array(agents.position), np.array(sim.interest), np.array(sim.danger)))
    for a, b in zip(out[0], out[1]):
        np.testing.assert_array_equal(a, b)


def test_time_slicing_in_phases_is_deterministic_across_threads():
    runs = []
    for threads in (1, 2):
        agents, _ = _build(1, n=90, seed=4)
        st = cs.scenarios.crowd_steering(walls=False, decision_phases=4)
        sim = cs.Simulation(None, agents, st, motion=cs.Accel(), decision_interval=3)
        with cs.threads(threads):
            sim.step(1 / 30, steps=45)
        runs.append(np.array(agents.position))
    np.testing.assert_array_equal(runs[0], runs[1])


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 30),
    extra=st.integers(0, 30),
    removed=st.lists(st.integers(0, 29), max_size=6),
    seed=st.integers(0, 2**16),
)
def test_more_phases_than_agents_is_one_agent_at_a_time_whatever_p(n, extra, removed, seed):
    # With P at least the capacity every phase holds one agent (or none), so the step is
    # a sweep one agent at a time in index order, the same for every such P, also when
    # agents leave and join in between (dead rows decide nothing and publish nothing)
    # and whatever the thread count.
    cap = n + 3
    p_small = cap
    p_big = min(64, cap + extra)
    out = []
    for phases, threads in ((p_small, 1), (p_big, 2)):
        rng = np.random.default_rng(seed)
        agents = cs.Agents(cap, slots=16, seed=seed)
        start = rng.uniform(-3, 3, (n, 2)).astype(np.float32)
        agents.add(start, radius=0.3, max_speed=MAX_SPEED, max_accel=6.0, target=-start)
        st_ = cs.scenarios.crowd_steering(walls=False, decision_phases=phases)
        sim = cs.Simulation(None, agents, st_, motion=cs.Accel(), slots=cs.scenarios.crowd_slots())
        with cs.threads(threads):
            sim.step(1 / 30, steps=5)
            gone = sorted({i for i in removed if i < n})
            if gone and len(gone) < n:
                agents.remove(gone)
            sim.step(1 / 30, steps=4)
            agents.add(
                [[0.0, 4.0], [4.0, 0.0]],
                radius=0.3,
                max_speed=MAX_SPEED,
                target=[[0.0, -4.0], [-4.0, 0.0]],
            )
            sim.step(1 / 30, steps=6)
        pos = np.array(agents.position)[np.array(agents.alive)]
        assert np.isfinite(pos).all()
        out.append((pos, np.array(agents.velocity)[np.array(agents.alive)]))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
