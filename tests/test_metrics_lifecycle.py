"""Run metrics over an agent's life: a new agent in a reused slot starts afresh, agents
that appear touching are a baseline for both partners, overtakes and lap times count from
when an agent is there, and contacts do not depend on the clearance range. Each case was
found by a fuzz run against a NumPy oracle of the metrics; the expected values here are
worked by hand."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import contextsteer as cs


def advance(sim, dt, split):
    """One step: the fused step, or the two stages (perceive, then decide_and_move)."""
    if split:
        sim.perceive()
        sim.decide_and_move(dt)
    else:
        sim.step(dt)


def seeker(capacity: int, world=None) -> tuple[cs.Agents, cs.Simulation]:
    agents = cs.Agents(capacity, slots=8)
    sim = cs.Simulation(world, agents, [cs.Seek()], push_apart=False)
    return agents, sim


def test_a_new_agent_in_a_freed_slot_starts_its_metrics_afresh():
    agents, sim = seeker(2)
    agents.add([[0, 0]], target=[[1, 0]], max_speed=1.0)
    sim.configure_metrics(goal_radius=0.1)
    sim.step(0.1, steps=20)
    assert np.isfinite(sim.agent_metrics.time_to_goal[0])  # arrived
    agents.remove([0])
    sim.step(0.1)
    (new,) = agents.add([[50, 50]], target=[[60, 50]], max_speed=1.0)
    assert new == 0
    assert agents.generation[0] == 2
    sim.step(0.1, steps=5)
    m = sim.agent_metrics
    assert np.isnan(m.time_to_goal[0])
    assert m.alive_steps[0] == 5  # measured from where it was added: every step counts
    # Seek from rest at max speed 1 m/s: at most 0.1 m a step.
    assert 0 < m.path_length[0] <= 0.5 + 1e-6
    assert sim.metrics()["time_to_goal"]["arrived"] == 0


def test_a_removal_and_an_add_between_two_steps_is_not_one_agent_jumping():
    agents, sim = seeker(1)
    agents.add([[0, 0]], target=[[100, 0]], max_speed=1.0)
    sim.step(0.1, steps=10)
    agents.remove([0])
    agents.add([[50, 50]], target=[[100, 50]], max_speed=1.0)
    sim.step(0.1)
    m = sim.agent_metrics
    # Measured from where it was added, not from where the removed agent was (70 m away).
    assert 0 < m.path_length[0] <= 0.1 + 1e-6  # one step at <= 1 m/s
    sim.step(0.1)
    assert 0 < sim.agent_metrics.path_length[0] <= 0.2 + 1e-6


def test_an_agent_made_alive_again_keeps_its_accumulators():
    agents, sim = seeker(1)
    agents.add([[0, 0]], target=[[100, 0]], max_speed=1.0)
    sim.step(0.1, steps=10)
    before = float(sim.agent_metrics.path_length[0])
    agents.alive[0] = False
    sim.step(0.1)
    agents.alive[0] = True  # the same agent back: no add, same generation
    sim.step(0.1)
    assert agents.generation[0] == 1
    # Its accumulators kept; measured again from where it came back (its one step since).
    assert before < sim.agent_metrics.path_length[0] <= before + 0.1 + 1e-6


def test_agents_that_appear_touching_count_no_episode_for_either():
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0]], radius=1.0, max_speed=0.0)
    sim = cs.Simulation(None, agents, [cs.Forward()], push_apart=False)
    sim.step(0.1, steps=2)
    agents.add([[1.5, 0]], radius=1.0, max_speed=0.0)  # overlaps agent 0
    sim.step(0.1, steps=3)
    np.testing.assert_array_equal(sim.agent_metrics.agent_episodes, [0, 0])
    agents.position[1] = [5, 0]
    sim.step(0.1)
    agents.position[1] = [1.5, 0]  # a real new contact: both count it
    sim.step(0.1)
    np.testing.assert_array_equal(sim.agent_metrics.agent_episodes, [1, 1])
    assert sim.metrics()["collisions"]["agent_agent"] == 1


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("gap, steps_apart", [(0.02, 0), (0.06, 1), (-0.1, None)])
def test_a_contact_in_a_new_agents_first_step_counts_for_both(split, gap, steps_apart):
    # An agent added 2 cm from a standing one walks into it in its first step: the
    # contact was taken as a baseline (it "appeared" touching, at the end of that step),
    # so 8 cm of overlap counted nothing (fuzz round 11, an RVO2 port spawning agents
    # into a crowd). Oracle: the gap at each step, worked out from the walk (1 m/s at
    # dt 1/30); an agent added overlapping (gap < 0) stays a baseline.
    agents = cs.Agents(3, slots=8)
    agents.add([[0.0, 0.0]], radius=0.3, max_speed=0.0)
    agents.add([[5.0, 5.0]], radius=0.3, max_speed=0.0)  # far: never touches
    sim = cs.Simulation(
        None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1.0), push_apart=False
    )
    sim.step(1 / 30)
    agents.add([[0.6 + gap, 0.0]], velocity=[-1.0, 0.0], radius=0.3, max_speed=1.0)
    for k in range(3):
        advance(sim, 1 / 30, split)
        touching = steps_apart is not None and k >= steps_apart
        want = [1, 0, 1] if touching else [0, 0, 0]
        np.testing.assert_array_equal(sim.agent_metrics.agent_episodes, want)
        assert sim.metrics()["collisions"]["agent_agent"] == (1 if touching else 0)


def ring(agents_speed: list[float]):
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    path = cs.Path(np.c_[10 * np.cos(t), 10 * np.sin(t)].astype(np.float32), closed=True)
    agents = cs.Agents(len(agents_speed), slots=16)
    steering = cs.Steering([cs.FollowPath(path, look_ahead=3, mode="seek")], choose="vector_sum")
    sim = cs.Simulation(None, agents, steering, motion=cs.Lerp(steer_force=0.5), push_apart=False)
    return path, agents, sim


def test_an_agent_back_on_the_track_is_not_overtaken_for_the_laps_it_missed():
    path, agents, sim = ring([20.0, 0.0])
    agents.add(
        path.point_at([0.0, path.length / 2]),
        radius=0.5,
        max_speed=[20.0, 0.0],
        heading=np.pi / 2,
    )
    sim.configure_metrics(path=path, overtakes=True)
    agents.remove([1])
    sim.step(1 / 30, steps=300)
    assert sim.agent_metrics.laps[0] >= 3
    agents.add(path.point_at([0.0]), radius=0.5, max_speed=0.0)
    sim.step(1 / 30)
    np.testing.assert_array_equal(sim.agent_metrics.overtakes, [0, 0])


def test_a_late_joiners_first_lap_is_timed_from_when_it_joined():
    path, agents, sim = ring([20.0, 20.0])
    agents.add(path.point_at([0.0]), radius=0.5, max_speed=20.0, heading=np.pi / 2)
    sim.configure_metrics(path=path)
    sim.step(1 / 30, steps=150)
    joined = sim.time
    agents.add(path.point_at([0.0]), radius=0.5, max_speed=20.0, heading=np.pi / 2)
    while sim.agent_metrics.laps[1] < 1:
        sim.step(1 / 30)
    lap = sim.agent_metrics.last_lap_time[1]
    assert lap == pytest.approx(sim.time - joined, abs=1e-4)  # from the step it joined
    # The same car on the same track: its lap takes as long as agent 0's first one.
    assert lap == pytest.approx(sim.agent_metrics.best_lap_time[0], rel=0.05)


@pytest.mark.parametrize("clearance_range", [None, 0.1, 0.0])
def test_contacts_do_not_depend_on_the_clearance_range(clearance_range):
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [5, 0]], radius=0.5, max_speed=0.0)
    sim = cs.Simulation(None, agents, [cs.Forward()], push_apart=False)
    sim.configure_metrics(contact_tolerance=0.5, clearance_range=clearance_range)
    sim.step(0.1)
    agents.position[1] = [1.2, 0]  # clearance 0.2 < 0.5 · (0.5 + 0.5): touching
    sim.step(0.1)
    np.testing.assert_array_equal(sim.agent_metrics.agent_episodes, [1, 1])
    reported = sim.metrics()["min_clearance"]["agent"]
    if clearance_range is None:
        assert reported == pytest.approx(0.2, abs=1e-6)
    else:  # beyond the range: found for the contact, not reported as a clearance
        assert reported is None

    world = cs.World()
    world.add_segments([[-10, 2, 10, 2]])
    agents = cs.Agents(1, slots=8)
    agents.add([[0, -5]], radius=1.0, max_speed=0.0)
    sim = cs.Simulation(world, agents, [cs.Forward()], push_apart=False)
    sim.configure_metrics(contact_tolerance=0.5, clearance_range=clearance_range)
    sim.step(0.1)
    agents.position[0] = [0, 0.7]  # wall clearance 0.3 < 0.5 · 1.0: touching
    sim.step(0.1)
    assert sim.agent_metrics.wall_episodes[0] == 1 and sim.agent_metrics.wall_steps[0] == 1


def test_mixed_radii_touching_count_for_both_with_a_zero_range():
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [5, 0]], radius=[0.6, 0.3], max_speed=0.0)
    sim = cs.Simulation(None, agents, [cs.Forward()], push_apart=False)
    sim.configure_metrics(clearance_range=0.0)
    sim.step(0.1)
    agents.position[1] = [0.905, 0]  # clearance 0.005 < 0.01 · 0.9
    sim.step(0.1)
    np.testing.assert_array_equal(sim.agent_metrics.agent_episodes, [1, 1])


def test_the_default_clearance_range_follows_agents_added_after_the_build():
    world = cs.World()
    world.add_segments([[-10, 2, 10, 2]])
    agents = cs.Agents(2, slots=8)
    sim = cs.Simulation(world, agents, [cs.Forward()], push_apart=False)
    agents.add([[0, 0], [1.5, 0]], radius=0.5, max_speed=0.0)
    sim.step(0.1, steps=3)
    m = sim.metrics()["min_clearance"]
    assert m["wall"] == pytest.approx(1.5) and m["agent"] == pytest.approx(0.5)


def test_metrics_of_an_empty_agents_say_they_are_enabled():
    """With Agents(0) they said enabled: False (and agent_metrics blamed a
    configure_metrics(enabled=False) nobody made)."""
    sim = cs.Simulation(None, cs.Agents(0, slots=8), [cs.Forward()])
    sim.configure_metrics(goal_radius=1.0)
    sim.step(0.1, 3)
    m = sim.metrics()
    assert m["enabled"] is True and m["agents"] == 0
    assert m["collisions"] == {"agent_agent": 0, "agent_wall": 0, "total": 0}
    assert len(sim.agent_metrics.agent_episodes) == 0
    sim.configure_metrics(enabled=False)
    assert sim.metrics()["enabled"] is False


def test_metrics_of_an_empty_agents_count_steps_as_an_empty_pool_does():
    """With Agents(0) the steps were not counted (steps 0 after 5) and the recorded
    series were NaN, as if the metrics were off; Agents(1) with nobody alive counted
    them. The oracle: the same run on capacity 1 with no agent."""
    runs = []
    for capacity in (0, 1):
        sim = cs.Simulation(None, cs.Agents(capacity, slots=8), [cs.Seek()])
        history = sim.record(every=1)
        sim.step(0.1, steps=5)
        runs.append((sim.metrics(), history.series))
    (m0, s0), (m1, s1) = runs
    assert m0["steps"] == m1["steps"] == 5
    assert {k: v for k, v in m0.items() if k != "agents"} == {
        k: v for k, v in m1.items() if k != "agents"
    }
    for name in s1:
        np.testing.assert_array_equal(s0[name], s1[name], err_msg=name)
    assert (s0["agent_collisions"] == 0).all() and np.isinf(s0["min_clearance"]).all()


def test_the_racetrack_report_says_none_when_nothing_is_measured():
    """It raised 'the run metrics are disabled' after the whole run; the other
    scenarios' reports give None, as metrics() does."""
    sim = cs.scenarios.get("racetrack")(agents=3)
    sim.configure_metrics(enabled=False)
    res = cs.run_simulation(sim, 10, dt=1 / 30, report=cs.scenarios.racetrack_report)
    assert res.report["laps"] is None and res.report["wall_contacts"] is None
    assert res.report["overlaps"]["contact_episodes"] is None
    assert len(res.report["max_speed"]) == 3


def test_overtakes_refuse_a_table_larger_than_memory():
    """The N×N table is sized by the Agents' capacity: a 2-car race in a large buffer
    allocated it unchecked (1.5 GB at 20,000 slots; std::bad_alloc further on)."""
    agents = cs.Agents(500_000, slots=8)
    agents.add([[0, 0], [1, 0]])
    track = cs.Path([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
    sim = cs.Simulation(None, agents, [cs.Forward()])
    with pytest.raises(MemoryError, match="overtakes keep an N×N table of the Agents' slots"):
        sim.configure_metrics(path=track, overtakes=True)
    sim.configure_metrics(path=track)  # without overtakes: fine


def test_collisions_of_agents_since_removed_still_count():
    # Simulation.metrics() summed the alive agents' own counts and halved them: an episode
    # with an agent since removed counted half (0 for one), its wall episodes not at all.
    world = cs.World()
    world.add_segments([[-10, 2, 10, 2]])
    agents = cs.Agents(3, slots=8)
    agents.add([[0, 0], [5, 0]], radius=1.0, max_speed=0.0)
    sim = cs.Simulation(world, agents, [cs.Forward()], push_apart=False)
    sim.step(0.1)
    agents.position[1] = [1.5, 0]  # a contact episode: agents 0 and 1
    sim.step(0.1)
    agents.position[1] = [5, 1.5]  # agent 1 touches the wall (clearance 0.5 - 1 < 0)
    sim.step(0.1)
    assert sim.metrics()["collisions"] == {"agent_agent": 1, "agent_wall": 1, "total": 2}
    agents.remove([1])
    sim.step(0.1)
    assert sim.metrics()["collisions"] == {"agent_agent": 1, "agent_wall": 1, "total": 2}
    # A new agent in the freed slot starts afresh; the old one's episodes stay in the run.
    assert agents.add([[-5, 0]], radius=1.0, max_speed=0.0).tolist() == [1]  # slot reused
    assert agents.generation[1] == 2
    sim.step(0.1)
    assert sim.agent_metrics.agent_episodes[1] == 0  # the new agent's own count
    agents.position[1] = [-1.5, 0]  # touches agent 0: a second pair episode
    sim.step(0.1)
    assert sim.metrics()["collisions"]["agent_agent"] == 2
    assert sim.metrics()["collisions"]["agent_wall"] == 1
    # Pickled mid-run, the counts carry over.
    again = pickle.loads(pickle.dumps(sim))
    assert again.metrics()["collisions"] == sim.metrics()["collisions"]
    # configure_metrics starts the run's counts again.
    sim.configure_metrics()
    assert sim.metrics()["collisions"]["total"] == 0


@pytest.mark.parametrize("split", [False, True])
def test_an_agent_added_mid_run_counts_its_first_step(split):
    """An agent added after configure_metrics was measured from the end of its first
    step: progress and path length one step short, its first lap timed a step late.
    Oracle: the positions themselves, recorded after every step (the add included)."""
    path = cs.Path([[0, 0], [1000, 0]])
    agents = cs.Agents(3, slots=8)
    steering = cs.Steering([cs.FollowPath(path)])
    sim = cs.Simulation(None, agents, steering, motion=cs.Lerp(steer_force=1.0))
    agents.add([[500, 50]], max_speed=10)
    sim.configure_metrics(path=path)
    sim.step(0.1, steps=3)
    agents.add([[0, 3]], velocity=[[10, 0]], max_speed=10)
    agents.add([[100, -2]], max_speed=4)  # from rest: its velocity changes in the step
    seen = [agents.position[1:].astype(np.float64).copy()]
    for _ in range(10):
        advance(sim, 0.1, split)
        seen.append(agents.position[1:].astype(np.float64).copy())
    seen = np.array(seen)
    m = sim.agent_metrics
    travelled = np.linalg.norm(np.diff(seen, axis=0), axis=2).sum(axis=0)
    np.testing.assert_allclose(m.path_length[1:], travelled, rtol=1e-12)
    # A straight path along x: progress is the change of x since the add.
    np.testing.assert_allclose(m.progress[1:], seen[-1, :, 0] - seen[0, :, 0], rtol=1e-6)
    np.testing.assert_array_equal(m.alive_steps, [13, 10, 10])
    assert m.effort[2] > 0  # from rest to 4 m/s: its first step's change of velocity counts


@pytest.mark.parametrize("reuse", [False, True])
def test_arrivals_of_agents_removed_at_their_exit_are_kept(reuse):
    # An RVO2 port removes agents as they reach an exit; the arrival statistics (over the
    # alive agents) then forgot them, while collisions kept counting them (fuzz round 11).
    # metrics()["time_to_goal"]["removed"] keeps them, whether their slots stay free
    # (their own rows) or are reused (the slots' retired sums). Oracle: the arrival times
    # seen from Python after each step (the first step ending within goal_radius).
    dt = 0.1
    agents = cs.Agents(24, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1.0))
    sim.configure_metrics(goal_radius=0.25)
    walkers: dict[tuple[int, int], float] = {}  # each walker's entry time
    seen: dict[tuple[int, int], float] = {}
    spawned = 0
    for step in range(1, 150):
        if step % 10 == 1 and spawned < 10:
            y = float(spawned)
            (i,) = agents.add(
                [[0.0, y]], max_speed=1.0 + 0.1 * spawned, target=[[3.0 + spawned % 3, y]]
            )
            walkers[(int(i), int(agents.generation[i]))] = sim.time
            spawned += 1
        sim.step(dt)
        for i in agents.ids:
            key = (int(i), int(agents.generation[i]))
            near = np.hypot(*(agents.position[i] - agents.target[i])) <= 0.25
            if key in walkers and key not in seen and near:
                seen[key] = sim.time - walkers[key]  # its travel time (schema 4)
                agents.remove([i])  # at the exit
                if reuse:  # the freed slot taken at once by one who stays (never arrives)
                    agents.add([[50.0, 50.0 + i]], max_speed=0.0, target=[[0.0, 0.0]])
    got = sim.metrics()["time_to_goal"]["removed"]
    assert len(seen) == 10 and got["agents"] == 10 and got["arrived"] == 10
    assert got["mean"] == pytest.approx(np.mean(list(seen.values())), abs=1e-4)
    assert sim.metrics()["time_to_goal"]["arrived"] == 0  # the alive ones never arrive


def test_removed_arrivals_stay_consistent_around_a_reused_slot():
    # Review of fuzz round 11: (A) an agent at its goal when the metrics were configured,
    # removed before any step, its slot reused: "removed" read 0 agents and 1 arrival;
    # (B) metrics() read between re-adding into a freed slot and the next step credited
    # the removed agent's arrival to the newcomer. Oracle: the counts worked by hand.
    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [5, 0]], target=[[0, 0], [9, 0]], max_speed=1.0)
    sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel())
    sim.configure_metrics(goal_radius=0.5)
    a.remove([0])  # never measured: not a removed agent of the run
    a.add([[3, 3]], target=[[8, 8]])
    sim.step(0.1)
    assert sim.metrics()["time_to_goal"]["removed"] == {"agents": 0, "arrived": 0, "mean": None}

    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [5, 0]], target=[[1.0, 0], [9, 0]], max_speed=1.0)
    sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel())
    sim.configure_metrics(goal_radius=0.5)
    sim.step(0.1, steps=12)
    t0 = float(sim.agent_metrics.time_to_goal[0])
    assert sim.metrics()["time_to_goal"]["arrived"] == 1 and t0 > 0
    a.remove([0])
    want = {"agents": 1, "arrived": 1, "mean": pytest.approx(t0)}
    for when in ("removed", "re-added", "stepped"):
        if when == "re-added":
            a.add([[3, 3]], target=[[8, 8]])
        if when == "stepped":
            sim.step(0.1)
        ttg = sim.metrics()["time_to_goal"]
        assert ttg["removed"] == want, when
        assert ttg["arrived"] == 0, when  # the newcomer has arrived nowhere


@pytest.mark.parametrize("split", [False, True])
def test_the_time_to_goal_of_an_agent_added_later_counts_from_its_entry(split):
    # Counted from configure_metrics, the removed agents' mean was 59-71 s where the
    # agents walked 15-19 s (fuzz round 11, a flow study). Schema 4: from its entry.
    # Oracle: the first step, seen from Python, ending within goal_radius.
    a = cs.Agents(2, slots=8)
    a.add([[0.0, 5.0]], max_speed=0.0, target=[[50.0, 5.0]])  # never arrives
    sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Lerp(steer_force=1.0))
    sim.configure_metrics(goal_radius=0.2)
    sim.step(0.1, steps=10)
    a.add([[0.0, 0.0]], max_speed=1.0, target=[[3.0, 0.0]])
    entry = sim.time
    arrived_at = None
    for _ in range(50):
        advance(sim, 0.1, split)
        if arrived_at is None and np.hypot(*(a.position[1] - a.target[1])) <= 0.2:
            arrived_at = sim.time
    m = sim.agent_metrics
    assert m.entry_time[1] == pytest.approx(entry) and m.entry_time[0] == 0.0
    assert m.time_to_goal[1] == pytest.approx(arrived_at - entry, abs=1e-5)
    assert sim.metrics()["time_to_goal"]["mean"] == pytest.approx(arrived_at - entry, abs=1e-5)


def test_start_offset_plus_progress_orders_a_race_from_a_grid():
    # Laps count from each car's own start: a car starting 50 m behind reads its laps
    # 50 m later along the track, and race positions need where each started, which was
    # not exposed (fuzz round 11, a racing game). Oracle: the path offsets themselves.
    t = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    path = cs.Path(np.c_[100 * np.cos(t), 60 * np.sin(t)].astype(np.float32), closed=True)
    a = cs.Agents(2, slots=8)
    start = path.point_at([60.0, 10.0])  # car 0 ahead on the grid
    a.add(start, max_speed=10.0, kinematic=True)
    sim = cs.Simulation(None, a, [cs.Forward()])
    sim.configure_metrics(path=path)
    for _ in range(40):
        a.velocity[:] = path.tangent_at(path.closest_offset(a.position)) * 10.0
        sim.step(0.1)
    m = sim.agent_metrics
    np.testing.assert_allclose(m.start_offset, [60.0, 10.0], atol=1e-3)
    race = m.start_offset + m.progress
    np.testing.assert_allclose(race, path.closest_offset(a.position), atol=0.05)
    assert race[0] > race[1]


@pytest.mark.parametrize("reuse", [False, True])
def test_the_least_clearances_wall_steps_and_stuck_of_removed_agents_stay_the_runs(reuse):
    """Collisions and arrivals kept removed agents, but the least clearances, the wall
    contact steps and ``stuck["ever"]`` came from the alive agents only: a counterflow's
    deepest overlap and its stuck walkers left with them through the exit (fuzz round
    11). Worked by hand: a wall at y = 1; agent 0 and 1 overlap by 0.1, agent 3's body
    reaches 0.2 past the wall; agent 4 cannot move and is stuck short of its target."""
    world = cs.World()
    world.add_segments([[-10, 1, 10, 1]])
    agents = cs.Agents(5, slots=8)
    agents.add(
        [[0, 0], [0.5, 0], [5, -5], [3, 0.9], [-5, -5]],
        radius=0.3,
        max_speed=[1, 1, 1, 1, 0],
        target=[[0, 0], [0.5, 0], [5, -5], [3, 0.9], [-5, -9]],
    )
    sim = cs.Simulation(world, agents, [cs.Seek()], push_apart=False, stuck_time=0.5)
    sim.configure_metrics(goal_radius=0.5)
    sim.step(0.1, steps=10)
    before = sim.metrics()
    assert before["min_clearance"]["wall"] == pytest.approx(-0.2, abs=1e-6)
    assert before["min_clearance"]["agent"] == pytest.approx(-0.1, abs=1e-6)
    assert before["wall_contact_steps"] == 10 and before["stuck"] == {"now": 1, "ever": 1}
    agents.remove([0, 1, 3, 4])
    if reuse:  # the freed slots taken by walkers far from everything
        agents.add([[-8, -8], [8, -8], [0, -8], [4, -8]], radius=0.3, target=[[-8, -9]] * 4)
        sim.step(0.1, steps=3)
    after = sim.metrics()
    assert after["min_clearance"] == before["min_clearance"]
    assert after["wall_contact_steps"] == before["wall_contact_steps"]
    assert after["stuck"]["ever"] == 1 and after["stuck"]["now"] == 0


def test_heading_jitter_is_averaged_over_the_agents_that_travelled():
    """An agent at its goal from the start has no travel step and so no rate of turning;
    it was averaged in as 0, halving the run's jitter here."""
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [9, 9]], max_speed=1, target=[[5, 0], [9, 9]])
    sim = cs.Simulation(None, agents, [cs.Seek()])
    sim.configure_metrics(goal_radius=0.5)  # agent 0 walks; agent 1 stays at its goal
    for k in range(40):
        agents.target[0] = [5 * np.cos(k / 5), 5 * np.sin(k / 5)]  # a turning goal
        sim.step(0.1)
    m = sim.agent_metrics
    assert m.travel_steps[1] == 0 and m.travel_steps[0] == 40 and m.heading_jitter[0] > 0
    assert sim.metrics()["heading_jitter"] == pytest.approx(m.heading_jitter[0], rel=1e-12)


def test_a_removed_kinematic_agent_stays_out_of_the_steerings_statistics():
    """A kinematic agent standing still is flagged stuck, and one on its target has
    arrived at 0 s; alive, the summary leaves both out. Removed, its slot's next agent
    made the summary read the new occupant's flag, and the slot's retired counts took it
    in: stuck["ever"] went from 1 to 2 at a reuse, and a removed vehicle counted as an
    arrival at 0 s (fuzz round 12)."""
    a = cs.Agents(4, slots=8)
    a.add([[0, 0], [3, 3]], target=[[10, 0], [3, 3]], kinematic=True)
    a.add([[0, 5]], target=[[10, 5]], max_speed=0.0)  # stuck, steered: counts
    sim = cs.Simulation(None, a, [cs.Seek()], stuck_distance=0.2, stuck_time=0.5)
    sim.configure_metrics(goal_radius=0.5)
    sim.step(0.1, steps=20)
    before = sim.metrics()
    assert before["stuck"]["ever"] == 1 and before["time_to_goal"]["removed"]["agents"] == 0
    a.remove([0, 1])
    a.add([[0, -5], [2, -5]], target=[[10, -5], [12, -5]], max_speed=1.0)  # reuse 0 and 1
    assert sim.metrics()["stuck"]["ever"] == 1
    sim.step(0.1)
    after = sim.metrics()
    assert after["stuck"]["ever"] == 1
    assert after["time_to_goal"]["removed"] == {"agents": 0, "arrived": 0, "mean": None}


def test_an_overlap_at_configure_stays_the_runs_when_its_agent_leaves_before_a_step():
    """The removed agents' rows counted only once measured by a step: a body placed
    0.2 m into a wall and removed before the first step took its overlap with it."""
    world = cs.World()
    world.add_segments([[-10, 1, 10, 1]])
    a = cs.Agents(2, slots=8)
    a.add([[0, 0.9], [0, -5]], radius=0.3)
    sim = cs.Simulation(world, a, [cs.Seek()])
    sim.configure_metrics(goal_radius=0.5)
    a.remove([0])
    assert sim.metrics()["min_clearance"]["wall"] == pytest.approx(-0.2, abs=1e-6)
    a.add([[5, -5]], radius=0.3)  # the slot reused
    sim.step(0.1)
    assert sim.metrics()["min_clearance"]["wall"] == pytest.approx(-0.2, abs=1e-6)
