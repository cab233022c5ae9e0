"""What accumulates over a long run: clocks, timers and counts stay exact (or saturate)
after hours or days of simulated time, and state saved before they were widened loads.

Each test drives a simulation to a late time the fast way a saved state allows (the bytes
``Simulation.save`` writes, with the clock set forward) or with many cheap steps, and
compares with the simulation's own double clock, ``Simulation.time``."""

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import classic

INT32_MAX = np.iinfo(np.int32).max


def _set_clock(sim, seconds):
    """Moves a simulation's clock (and nothing else) forward, as a loaded file would."""
    state = sim._core._state()
    state.pop("agents")
    state["time"] = np.array([seconds], np.float64).tobytes()
    sim._core._set_state(state)
    assert sim.time == seconds


def test_still_time_keeps_up_with_the_clock_for_hours():
    # A parked agent's stuck timer equals the time since it parked, step for step; summed
    # in float32 it was 12 s short after 6,000 s at 60 Hz and stopped within two weeks.
    dt = 1 / 60
    a = cs.Agents(1, slots=8)
    a.add([0, 0], max_speed=0.0)
    sim = cs.Simulation(None, a, [cs.Forward()], stuck_distance=0.1, stuck_time=6000.0)
    sim.configure_metrics(enabled=False)
    sim.step(dt, 359_999)
    assert sim.still_time.dtype == np.float64
    assert sim.still_time[0] == sim.time  # the same float32 dt summed in the same order
    assert sim.time < 6000.0 and not sim.stuck[0]
    sim.step(dt, 1)
    assert sim.time >= 6000.0 and sim.stuck[0]


def test_lap_times_are_exact_to_the_step_after_a_day():
    # Lap ends are kept in double: a lap time is the difference of the run clock at two
    # lap ends (float32 of it), not of two float32 clocks 0.0156 s apart at 1e5 s.
    dt = 1 / 60
    sim = cs.scenarios.get("racetrack")(agents=1, preset="godot")
    _set_clock(sim, 100_000.0)
    m = sim.agent_metrics
    ends, laps = [], int(m.laps[0])
    for _ in range(20_000):
        sim.step(dt, 1)
        if int(m.laps[0]) != laps:
            laps = int(m.laps[0])
            ends.append(sim.time)
            if len(ends) == 3:
                break
    assert len(ends) == 3
    assert m.last_lap_time[0] == np.float32(ends[2] - ends[1])
    assert m.best_lap_time[0] == min(np.float32(ends[2] - ends[1]), np.float32(ends[1] - ends[0]))
    # whole steps: a float32 clock at 1e5 s would be off by up to about one step
    assert abs(m.last_lap_time[0] / dt - round(m.last_lap_time[0] / dt)) < 1e-3


def _walk(sim):
    return np.frombuffer(sim._core._state()["classic.walk.0"], np.float64).reshape(-1, 2)


def test_random_walk_wander_draws_every_step_after_days():
    # gdx-ai's random walk moves by randomTriangular(rate·Δt) each evaluation, Δt the time
    # since the last one. After six days at 60 Hz a float32 clock gave Δt 0 or 0.0625 s.
    dt, rate = 1 / 60, 2.0
    a = cs.Agents(1, slots=8, seed=1)
    a.add([0, 0], max_speed=1, max_accel=1)
    sim = cs.Simulation(None, a, classic.Wander(rate=rate, walk="random", seed=7))
    _set_clock(sim, 525_000.0)  # before the first evaluation, whose Δt is not drawn
    thetas = []
    for _ in range(400):
        before = sim.time
        sim.step(dt, 1)
        orientation, last = _walk(sim)[0]
        assert last == before  # the clock of this evaluation, exactly
        thetas.append(orientation)
    steps = np.diff(thetas)
    assert (np.abs(steps) <= rate * dt * (1 + 1e-6)).all()
    assert (steps != 0).mean() > 0.95
    # triangular on [-rate·dt, rate·dt]: variance (rate·dt)²/6
    assert abs(steps.var() / (rate * dt) ** 2 - 1 / 6) < 0.05


def test_a_new_agent_in_a_reused_slot_starts_a_fresh_random_walk():
    a = cs.Agents(1, slots=8, seed=1)
    a.add([0, 0], max_speed=1, max_accel=1)
    sim = cs.Simulation(None, a, classic.Wander(rate=2.0, walk="random", seed=7))
    sim.step(1 / 60, 600)
    assert _walk(sim)[0, 0] != 0
    a.remove([0])
    a.add([0, 0], max_speed=1, max_accel=1)
    before = sim.time
    sim.step(1 / 60, 1)
    # as a fresh agent: no draw at its first evaluation (gdx-ai's lastTime 0), clock set
    np.testing.assert_array_equal(_walk(sim)[0], [0.0, before])
    sim.step(1 / 60, 1)
    assert _walk(sim)[0, 0] != 0  # and it walks from its second


def test_history_series_keep_the_episodes_of_removed_agents():
    world = cs.World()
    world.add_segments([[10, -5, 10, 5]])
    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [4, 0.0], [8, 3]], velocity=[[1, 0], [-1, 0], [1, 0]], max_speed=1)
    sim = cs.Simulation(world, a, [cs.Forward()], motion=cs.Lerp(steer_force=1), push_apart=False)
    h = cs.History(sim, every=1)
    sim.step(0.1, 30)  # agents 0 and 1 meet head-on; agent 2 runs into the wall
    want = sim.metrics()["collisions"]
    assert want["agent_agent"] == 1 and want["agent_wall"] == 1
    a.remove([1, 2])
    sim.step(0.1, 5)
    a.add([[50, 50], [60, 60]], max_speed=1)  # new agents in the removed agents' slots
    sim.step(0.1, 5)
    assert sim.metrics()["collisions"] == want
    series = h.series
    assert series["agent_collisions"][-1] == 1 and series["wall_collisions"][-1] == 1
    total = series["agent_collisions"] + series["wall_collisions"]
    assert (np.diff(total) >= 0).all()  # episodes so far never go down


def test_per_agent_step_counts_saturate_rather_than_wrap():
    a = cs.Agents(1, slots=8)
    a.add([0, 0], velocity=[1, 0], max_speed=1)
    sim = cs.Simulation(None, a, [cs.Wander(seed=1)], motion=cs.Lerp(steer_force=1))
    sim.step(0.1, 5)
    state = sim._core._state()
    state.pop("agents")
    near = np.array([INT32_MAX - 5], np.int32).tobytes()
    for name in ("metrics.alive_steps", "metrics.travel_steps", "overlaps", "contacts"):
        state[name] = near
    sim._core._set_state(state)
    sim.step(0.1, 10)
    m = sim.agent_metrics
    assert m.alive_steps[0] == INT32_MAX and m.travel_steps[0] == INT32_MAX
    assert 0 <= m.heading_jitter[0] < 1e-6  # a mean over the (saturated) steps, not garbage


def test_state_saved_with_float32_timers_loads_widened():
    # Files from before the stuck timer, the lap ends and the random walk were kept in
    # double hold them as float32: they load, widened, and the run continues from them.
    a = cs.Agents(2, slots=8, seed=1)
    a.add([[0, 0], [3, 0]], max_speed=1, max_accel=1)
    sim = cs.Simulation(None, a, classic.Wander(rate=2.0, walk="random", seed=7), stuck_time=1.0)
    sim.step(0.1, 30)
    state = sim._core._state()
    state.pop("agents")
    old = dict(state)
    for name in ("still", "metrics.lap_end", "classic.walk.0"):
        old[name] = np.frombuffer(state[name], np.float64).astype(np.float32).tobytes()
    other = cs.Simulation(None, a, classic.Wander(rate=2.0, walk="random", seed=7), stuck_time=1.0)
    other._core._set_state(old)
    got = other._core._state()
    for name in ("still", "metrics.lap_end", "classic.walk.0"):
        want = np.frombuffer(state[name], np.float64).astype(np.float32).astype(np.float64)
        np.testing.assert_array_equal(np.frombuffer(got[name], np.float64), want)
    # a float32 buffer of any other size is still a different configuration
    old["still"] = old["still"][:4]
    with pytest.raises(ValueError, match="'still' has 4 bytes, expected 16"):
        other._core._set_state(old)
