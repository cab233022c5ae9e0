"""Flows: sources that feed a simulation, their queues and exits (contextsteer.flow).

Oracles: an independent loop that follows the documented protocol with Agents.add /
remove on a twin simulation without a flow (same draws, its own free-place test with a
brute-force wall distance), hand-worked exits of agents moving at a known speed, and the
counters' invariants.
"""

from __future__ import annotations

import copy
import math
import pickle
import threading
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contextsteer as cs

WALLS = np.array([[-1, 0, 12, 0], [-1, 3, 12, 3], [-1, 0, -1, 3], [12, 0, 12, 3]], np.float32)
INF = math.inf


def corridor(capacity=60, seed=0):
    world = cs.World()
    world.add_segments(WALLS)
    agents = cs.Agents(capacity, slots=16, seed=seed)
    return cs.Simulation(
        world,
        agents,
        cs.scenarios.crowd_steering(),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )


def two_sources(rate=3.0, area_depth=1.2):
    people = dict(radius=(0.2, 0.3), speed=(1.3, 0.2, 0.8, 1.8), max_accel=6.0, tries=40)
    return [
        cs.Source([0, 0, area_depth, 3], rate, [[13, 0], [13, 3]], [10, -INF, INF, INF], **people),
        cs.Source([11 - area_depth, 0, 11, 3], rate, [-2, 1.5], [-INF, -INF, 1, INF], **people),
    ]


def _segment_distance(p, walls):
    a, b = walls[:, :2].astype(np.float64), walls[:, 2:].astype(np.float64)
    d = b - a
    t = np.clip(((p - a) * d).sum(1) / (d * d).sum(1), 0, 1)
    return np.hypot(*(a + t[:, None] * d - p).T).min()


def oracle_run(sources, seed, period, dt, steps, sim):
    """The module docstring's protocol, written out on a simulation without a flow."""
    rng = np.random.default_rng(seed)
    agents = sim.agents
    queues = [[] for _ in sources]
    member = {}  # id -> (source, admitted at)
    counts = [dict(offered=0, entered=0, out=0) for _ in sources]
    travel = [[] for _ in sources]
    next_t, batch = 0.0, 0
    for _ in range(steps):
        now = float(sim.time)
        if now >= next_t - 0.5 * dt:
            while now >= next_t - 0.5 * dt:  # every batch due, in order
                for s, src in enumerate(sources):
                    # (start 0: the documented ulps of max(|start|, |k·period|, |t|))
                    n = int(rng.poisson(src.rate_at(next_t + 4 * math.ulp(next_t)) * period))
                    lo, hi = src.radius
                    r = rng.uniform(lo, hi, n)
                    mean, sd, low, high = src.speed
                    v = np.clip(rng.normal(mean, sd, n), low, high)
                    seeds = rng.integers(2**63, size=n, dtype=np.uint64)
                    queues[s].extend(zip(r, v, seeds))
                    counts[s]["offered"] += n
                batch += 1
                next_t = batch * period  # batch k at start + k·period (start 0 here)
            for s, src in enumerate(sources):
                while queues[s] and (~agents.alive).any():
                    r, v, seed = queues[s][0]
                    u = np.random.default_rng(int(seed)).random((src.tries, 2))
                    x0, y0, x1, y1 = src.area
                    m = r + src.clearance
                    places = np.stack(
                        [
                            (x0 + m) + u[:, 0] * ((x1 - x0) - 2 * m),
                            (y0 + m) + u[:, 1] * ((y1 - y0) - 2 * m),
                        ],
                        axis=-1,
                    ).astype(np.float32)  # as the agents will hold them
                    places = places.astype(np.float64)
                    alive = np.flatnonzero(agents.alive)
                    pos = agents.position[alive].astype(np.float64)
                    rad = agents.radius[alive].astype(np.float64)
                    for p in places:
                        gap = np.hypot(pos[:, 0] - p[0], pos[:, 1] - p[1])
                        if (gap >= rad + r + src.clearance).all() and (
                            _segment_distance(p.astype(np.float32), WALLS) >= r + src.clearance
                        ):
                            break
                    else:
                        break
                    t = np.array(src.target, dtype=np.float64)
                    if len(t) == 2:
                        goal = t
                    else:
                        a, b = t[:2], t[2:]
                        w = np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)
                        goal = a + w * (b - a)
                    (i,) = agents.add(
                        p[None],
                        heading=math.atan2(goal[1] - p[1], goal[0] - p[0]),
                        radius=r,
                        max_speed=v,
                        max_accel=src.max_accel,
                        target=goal[None],
                    )
                    member[int(i)] = (s, now)
                    queues[s].pop(0)
                    counts[s]["entered"] += 1
        sim.step(dt)
        gone = []
        for i in sorted(member):
            s, t0 = member[i]
            x0, y0, x1, y1 = sources[s].exit
            x, y = agents.position[i].astype(np.float64)
            if x0 <= x <= x1 and y0 <= y <= y1:
                counts[s]["out"] += 1
                travel[s].append(float(sim.time) - t0)
                gone.append(i)
        for i in gone:
            del member[i]
        if gone:
            agents.remove(gone)
    return counts, travel, [len(q) for q in queues]


@pytest.mark.parametrize("period", [1.0, 0.01])
def test_a_flow_follows_its_documented_protocol_bit_for_bit(period):
    # Two streams through each other with queues that wait (a narrow entry strip, a small
    # pool): the flow and the loop written out agree on every agent's state and counter.
    # A period of 0.01 s under a 1/30 s step draws three or four batches a step (one a
    # step lost most arrivals before).
    sources = two_sources(rate=5.0, area_depth=0.8)
    # The first on a schedule: 5/s, none from 6 s, 3/s again from 9 s.
    first = sources[0]
    sources[0] = cs.Source(
        first.area,
        [(0.0, 5.0), (6.0, 0.0), (9.0, 3.0)],
        [[13, 0], [13, 3]],
        first.exit,
        radius=first.radius,
        speed=first.speed,
        tries=first.tries,
    )
    dt, steps = 1 / 30, 450
    sim = corridor(capacity=40, seed=3)
    sim.flow = cs.Flow(sources, seed=11, period=period)
    twin = corridor(capacity=40, seed=3)
    sim.step(dt, steps)
    counts, travel, queued = oracle_run(sources, 11, period, dt, steps, twin)
    for name in cs.Agents.STATE:
        np.testing.assert_array_equal(getattr(sim.agents, name), getattr(twin.agents, name), name)
    r = sim.flow.report()
    for s in range(2):
        got = r["sources"][s]
        assert {k: got[k] for k in ("offered", "entered", "out")} == counts[s]
        assert got["queued"] == queued[s]
        np.testing.assert_array_equal(sim.flow.travel_times[s], travel[s])
    # The case exercised what it should: people left, and queues waited.
    assert r["out"] > 10 and r["queued"] > 0 and r["inside"] > 0


def test_exits_remove_agents_the_step_they_cross_and_count_their_travel_time():
    # Seek at full speed along x (Lerp with steer_force 1): an agent admitted at x0 with
    # speed v is at x0 + k v dt after k steps and leaves at the first k with x >= 5.
    agents = cs.Agents(40, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1))
    src = cs.Source([0, 0, 1, 1], 3.0, [[10, -100], [10, 100]], [5, -INF, INF, INF], speed=1.0)
    sim.flow = cs.Flow([src], seed=2, period=0.5)
    dt = 0.1
    expected = []  # per admitted agent, the hand-worked travel time, in admission order
    for _ in range(120):
        before = set(np.flatnonzero(agents.alive).tolist())
        gen = agents.generation.copy()
        sim.step(dt)
        for i in np.flatnonzero(agents.alive):
            if int(i) not in before or agents.generation[i] != gen[i]:
                # admitted before this step: back out its entry place from one step's move
                x0 = float(agents.position[i, 0]) - dt
                expected.append(math.ceil((5 - x0) / dt - 1e-4) * dt)
    times = sim.flow.travel_times[0]
    assert len(times) >= 10
    # Exit time - travel time = the admission time: a batch time, a multiple of the period.
    admitted = sim.flow.exit_times[0] - times
    np.testing.assert_allclose(admitted, np.round(admitted / 0.5) * 0.5, atol=1e-5)
    assert (np.diff(sim.flow.exit_times[0]) >= 0).all()
    # Agents admitted together leave in id order, so compare the sorted times of those
    # out with the first admitted (up to float32 rounding of x and of the clock).
    got = np.sort(times)
    want = np.sort(expected[: len(times)])
    np.testing.assert_allclose(got, want, atol=1e-5)
    r = sim.flow.report()
    assert r["offered"] == r["entered"] + r["queued"]
    assert r["entered"] == r["out"] + r["inside"] + r["left_otherwise"]
    # Targets are the goal line's nearest points: straight along x at the entry height.
    inside = sim.flow.members()
    np.testing.assert_allclose(agents.target[inside, 0], 10.0)
    np.testing.assert_allclose(agents.target[inside, 1], agents.position[inside, 1], atol=1e-5)


def test_a_schedule_sets_the_rate_in_force_at_each_batch():
    src = cs.Source([0, 0, 50, 50], [(2.0, 5.0), (4.0, 0.0)], [60, 60], [99, 99, 100, 100])
    assert [src.rate_at(t) for t in (0.0, 1.99, 2.0, 3.9, 4.0, 1e6)] == [0, 0, 5, 5, 0, 0]
    assert (
        src.peak_rate == 5.0 and cs.Source([0, 0, 1, 1], 2.5, [5, 5], [9, 9, 9, 9]).peak_rate == 2.5
    )
    agents = cs.Agents(100, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
    sim.flow = cs.Flow([src], seed=3)
    offered = []
    for _ in range(10):
        sim.step(0.1, 10)  # to t = 1, 2, ..., 10 s
        offered.append(sim.flow.report()["offered"])
    # Batches at t = 0 and 1 s at rate 0, at 2 and 3 s at 5/s, none after 4 s.
    assert offered[0] == offered[1] == 0 < offered[2] < offered[3] == offered[-1]
    assert offered[-1] == agents.count  # everyone found a place in the wide area


def test_places_keep_clear_of_walls_solids_and_bodies():
    # A source whose area overlaps a wall and a solid disc: no admitted body comes within
    # the clearance of either (oracle: brute-force distances), and none overlaps another.
    world = cs.World()
    world.add_segments([[0, 1.0, 3, 1.0]])
    world.add_circles([[2.0, 2.0]], [0.5])
    agents = cs.Agents(100, slots=8)
    sim = cs.Simulation(world, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
    src = cs.Source([0, 0, 3, 3], 40.0, [50, 50], [100, 100, 101, 101], radius=(0.1, 0.25))
    sim.flow = cs.Flow([src], seed=5)
    sim.step(0.05)
    ids = np.flatnonzero(agents.alive)
    assert 10 < len(ids) < 40 and sim.flow.report()["queued"] > 0
    p = agents.position[ids].astype(np.float64)
    r = agents.radius[ids].astype(np.float64)
    # (Lerp with steer_force 0 does not move them.)
    wall = np.abs(p[:, 1] - 1.0)
    assert (wall >= r + 0.02 - 1e-6).all()
    disc = np.hypot(p[:, 0] - 2, p[:, 1] - 2) - 0.5
    assert (disc >= r + 0.02 - 1e-6).all()
    gap = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1)) - r[:, None] - r[None]
    np.fill_diagonal(gap, INF)
    assert gap.min() >= 0.02 - 1e-6


def test_a_full_pool_keeps_the_queue_waiting_and_removed_agents_are_forgotten():
    agents = cs.Agents(5, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
    src = cs.Source([0, 0, 10, 10], 20.0, [50, 50], [100, 100, 101, 101], radius=0.2)
    sim.flow = cs.Flow([src], seed=1)
    sim.step(0.1)
    r = sim.flow.report()
    assert agents.count == 5 and r["entered"] == 5 and r["queued"] == r["offered"] - 5 > 0
    agents.remove([1, 3])  # the caller takes two: they are not "out", and free two slots
    sim.step(0.1, 10)  # the next batch comes at t = 1 s
    r = sim.flow.report()
    assert r["left_otherwise"] == 2 and r["out"] == 0 and r["entered"] == 7
    assert r["inside"] == 5 and sorted(sim.flow.members()) == [0, 1, 2, 3, 4]


def test_a_flow_feeds_a_scene_that_holds_other_agents_and_leaves_them_alone():
    agents = cs.Agents(30, slots=8)
    agents.add([[5, 5]], radius=0.3, target=[[5, 5]])
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1))
    src = cs.Source([0, 0, 1, 1], 2.0, [9, 0.5], [8, -INF, INF, INF], speed=2.0)
    sim.flow = cs.Flow([src], seed=4)
    sim.step(0.1, 100)
    assert agents.alive[0] and 0 not in sim.flow.members()
    assert sim.flow.report()["out"] > 5


def test_pickle_deepcopy_and_save_continue_a_flow_bit_identically(tmp_path):
    sim = corridor(capacity=60, seed=1)
    sim.flow = cs.Flow(two_sources(), seed=7)
    sim.step(1 / 30, 200)
    sim.save(tmp_path / "flow.cssim")
    twins = [pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim), cs.load(tmp_path / "flow.cssim")]
    for s in (sim, *twins):
        s.step(1 / 30, 250)
    for t in twins:
        assert t.flow is not sim.flow and t.flow.report() == sim.flow.report()
        np.testing.assert_array_equal(t.agents.position, sim.agents.position)
        np.testing.assert_array_equal(t.agents.alive, sim.agents.alive)


def test_a_flow_runs_the_same_on_one_and_two_threads():
    runs = []
    for threads in (1, 2):
        with cs.threads(threads):
            sim = cs.scenarios.get("counterflow")(seed=2)
            sim.step(1 / 30, 300)
            runs.append((sim.agents.position.copy(), sim.flow.report()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1] and runs[0][1]["entered"] > 20


def test_detaching_the_flow_stops_it_and_bad_assignments_are_refused():
    sim = corridor()
    sim.flow = cs.Flow(two_sources(), seed=0)
    sim.step(1 / 30, 40)
    n = sim.agents.count
    sim.flow = None
    sim.step(1 / 30, 60)
    assert sim.agents.count == n and sim.flow is None
    with pytest.raises(TypeError, match="Flow or None"):
        sim.flow = two_sources()[0]


def test_one_flow_feeds_one_pool():
    flow = cs.Flow(two_sources(), seed=0)
    a, b = corridor(capacity=60), corridor(capacity=30)
    a.flow = flow
    a.step(1 / 30, 5)
    with pytest.raises(ValueError, match="agents inside another simulation"):
        b.flow = flow  # refused when set (round 23), and when stepped past the setter:
    b.__dict__["_flow"] = flow
    with pytest.raises(ValueError, match="a flow feeds one simulation"):
        b.step(1 / 30)


def test_one_flow_feeds_one_simulation_of_the_same_capacity():
    # Of the same capacity, the second simulation was accepted: the flow forgot the first
    # one's members (its report said none inside, and they were never removed at their
    # exits), or took the second's agents in the same slots for them.
    flow = cs.Flow(two_sources(), seed=0)
    a, b = corridor(capacity=60), corridor(capacity=60)
    a.flow = flow
    a.step(1 / 30, 40)
    inside = flow.report()["inside"]
    assert inside > 0
    with pytest.raises(ValueError, match=f"this Flow has {inside} agents inside another"):
        b.flow = flow  # refused when set (round 23), and when stepped past the setter:
    b.__dict__["_flow"] = flow
    with pytest.raises(ValueError, match=f"another simulation's agents \\({inside} inside\\)"):
        b.step(1 / 30)
    assert flow.report()["inside"] == inside and b.agents.count == 0
    a.step(1 / 30, 5)  # the first one carries on
    # A copy of a simulation has a flow and agents of its own, and steps on.
    c = copy.deepcopy(a)
    c.step(1 / 30, 5)
    a.step(1 / 30, 5)
    np.testing.assert_array_equal(a.agents.position, c.agents.position)


def test_a_flow_stepped_from_two_threads_raises_instead_of_interleaving():
    sim = corridor(capacity=60)
    sim.flow = cs.Flow(two_sources(), seed=0)
    errors, started = [], threading.Event()

    def long_run():
        started.set()
        try:
            sim.step(1 / 30, 3000)
        except RuntimeError as e:  # pragma: no cover - only if the main thread won
            errors.append(e)

    t = threading.Thread(target=long_run)
    t.start()
    started.wait()
    seen = 0
    while t.is_alive() and seen == 0:
        try:
            sim.step(1 / 30)
        except RuntimeError as e:
            assert "in use" in str(e)
            seen += 1
        try:
            pickle.dumps(sim.flow)
        except RuntimeError as e:
            assert "in use" in str(e)
            seen += 1
    t.join()
    assert seen > 0 or errors


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(area=[0, 0, 1]), ValueError, "xmin, ymin, xmax, ymax"),
        (dict(area=[0, 0, math.nan, 1]), ValueError, "finite"),
        (dict(area=[1, 0, 0, 1]), ValueError, "xmin <= xmax"),
        (dict(area=[0, 0, 0.3, 3]), ValueError, "no room for a body"),
        (dict(rate=-1.0), ValueError, "rate must be finite and >= 0"),
        (dict(rate=math.inf), ValueError, "rate must be finite"),
        (dict(rate="2"), TypeError, "rate must be a real number"),
        (dict(target=[1, 2, 3]), ValueError, "point \\(2,\\) or a goal line"),
        (dict(target=[math.nan, 0]), ValueError, "target must be finite"),
        (dict(exit=[0, 0, math.nan, 1]), ValueError, "not NaN"),
        (dict(radius=0.0), ValueError, "radius must be > 0"),
        (dict(radius=(0.3, 0.2)), ValueError, "low <= high"),
        (dict(speed=(1.0, -0.1)), ValueError, "sd >= 0"),
        (dict(speed=(1.0, 0.1, 2.0, 1.0)), ValueError, "low <= high"),
        (dict(speed=(1.0, 0.1, 2.0)), ValueError, "speed must be a number"),
        (dict(tries=0), ValueError, "tries must be in"),
        (dict(tries=2.5), TypeError, "tries must be an int"),
        (dict(max_accel=-1.0), ValueError, "max_accel"),
        (dict(rate=[(1.0, 2.0), (0.5, 1.0)]), ValueError, "ascending"),
        (dict(rate=[(0.0, -2.0)]), ValueError, "rates >= 0"),
        (dict(rate=[1.0, 2.0]), ValueError, "\\(time, rate\\) pairs"),
    ],
)
def test_bad_sources_are_refused_naming_the_argument(kwargs, error, match):
    args = dict(area=[0, 0, 2, 3], rate=1.0, target=[9, 1], exit=[8, 0, 9, 3]) | kwargs
    with pytest.raises(error, match=match):
        cs.Source(**args)


def test_a_blocked_source_queues_a_large_crowd_in_little_memory():
    # An entry area inside a solid: nobody ever enters, and a million people queue at
    # 24 bytes each (the places are drawn from each one's seed at the head of the queue).
    world = cs.World()
    world.add_box([0, 0], [10, 10])
    agents = cs.Agents(10, slots=8)
    sim = cs.Simulation(world, agents, [cs.Seek()], motion=cs.Lerp())
    src = cs.Source([1, 1, 9, 9], 250_000.0, [20, 5], [19, 0, 21, 10], tries=10_000)
    sim.flow = cs.Flow([src], seed=0)
    sim.step(1.0, 4)
    r = sim.flow.report()
    assert r["entered"] == 0 and r["queued"] == r["offered"] > 900_000
    assert len(pickle.dumps(sim.flow)) < 40 * r["queued"]


def test_bad_flows_are_refused():
    src = two_sources()[0]
    with pytest.raises(TypeError, match="non-empty sequence of Source"):
        cs.Flow([])
    with pytest.raises(TypeError, match="non-empty sequence of Source"):
        cs.Flow([src, "x"])
    with pytest.raises(ValueError, match="period must be > 0"):
        cs.Flow([src], period=0.0)
    with pytest.raises(ValueError, match="exceed 1,000,000"):
        cs.Flow([cs.Source([0, 0, 2, 3], 1e7, [9, 1], [8, 0, 9, 3])])
    with pytest.raises(ValueError, match="seed"):
        cs.Flow([src], seed=-1)
    assert cs.Flow(src).sources == (src,)  # one source alone is taken


def test_a_period_shorter_than_the_step_loses_no_arrivals():
    # 20 a second for 10 s in batches of 0.01 s under 0.1 s steps: about 200 offered
    # (one batch a step, as before, offered about 20).
    agents = cs.Agents(400, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1))
    src = cs.Source([0, 0, 50, 50], 20.0, [100, 25], [99, 0, 101, 50], radius=0.1)
    sim.flow = cs.Flow([src], seed=5, period=0.01)
    sim.step(0.1, 100)
    offered = sim.flow.report()["offered"]
    assert 150 <= offered <= 250  # Poisson(200): 3.5 standard deviations either side


def test_a_step_over_too_many_periods_is_refused_and_time_without_the_flow_is_skipped():
    agents = cs.Agents(50, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1))
    src = cs.Source([0, 0, 5, 5], 2.0, [100, 25], [99, 0, 101, 50], radius=0.1)
    sim.flow = cs.Flow([src], seed=5, period=1e-6)
    with pytest.raises(ValueError, match="more than 10,000 arrival batches"):
        sim.step(0.1)
    assert sim.step_count == 0
    # A flow a period could hold (2,000 a batch) but a step of 1,000 periods could not.
    sim.flow = cs.Flow([cs.Source([0, 0, 5, 5], 2e3, [9, 1], [8, 0, 9, 3])], period=1.0)
    with pytest.raises(ValueError, match=r"rate × dt = 2e\+06\) exceed"):
        sim.step(1e3)
    assert sim.step_count == 0
    # Time the staged calls take without the flow draws nothing when the flow resumes:
    # 1,000 s at 2 a second would be 2,000 people in one step.
    sim.flow = cs.Flow([src], seed=5, period=1.0)
    sim.step(0.5)
    for _ in range(10):
        sim.perceive()
        sim.decide_and_move(100.0)
    sim.step(0.5)
    assert sim.flow.report()["offered"] < 20


def test_a_short_step_after_a_long_one_draws_the_batches_the_long_one_covered():
    # 20 a second in 1 s batches: a 10 s step at time 0 draws the batches within half a
    # step of it (0 ... 5 s, about 120); the 0.01 s step after it, at 10 s, draws the five
    # due since (6 ... 10 s), about 220 in all. Only time that passes without the flow (the
    # staged calls) is skipped.
    agents = cs.Agents(10, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1))
    src = cs.Source([0, 0, 5, 5], 20.0, [100, 25], [99, 0, 101, 50], radius=0.1)
    sim.flow = cs.Flow([src], seed=5, period=1.0)
    sim.step(10.0)
    first = sim.flow.report()["offered"]
    sim.step(0.01)
    assert 70 <= first <= 170 and 150 <= sim.flow.report()["offered"] <= 300


def test_sources_are_named_in_the_report():
    a, b = two_sources()
    named = cs.Source(a.area, a.rate, [[13, 0], [13, 3]], a.exit, radius=a.radius, name="west")
    assert named.name == "west" and "name='west'" in repr(named) and named != a
    assert pickle.loads(pickle.dumps(named)) == named
    flow = cs.Flow([named, b])
    assert [s["name"] for s in flow.report()["sources"]] == ["west", None]
    with pytest.raises(TypeError, match="name must be a str"):
        cs.Source(a.area, 1.0, [9, 1], a.exit, name=3)
    sc = cs.scenarios.get("station")
    assert [s.name for s in sc().flow.sources] == ["door_1", "door_2", "entrance"]
    r = cs.scenarios.get("counterflow")().flow.report()
    assert [s["name"] for s in r["sources"]] == ["from_left", "from_right"]


def test_sources_compare_pickle_and_print_and_stay_as_checked():
    a, b = two_sources()
    with pytest.raises(AttributeError, match="immutable"):
        a.rate = -1.0
    assert a == pickle.loads(pickle.dumps(a)) and a != b and len({a, b, copy.copy(a)}) == 2
    assert "rate=3" in repr(a) and "Flow(2 sources" in repr(cs.Flow([a, b]))


def test_the_counterflow_scenario_gets_people_through_both_ways_without_overlap():
    sc = cs.scenarios.get("counterflow")
    sim = sc(seed=1)
    sim.step(sc.dt, 900)  # 30 s
    r = sc.report(sim)
    assert min(r["out_each_way"]) > 10
    assert r["offered"] == r["entered"] + r["queued"]
    assert r["min_clearance"]["agent"] >= 0 and r["collisions"]["agent_wall"] == 0
    with pytest.raises(ValueError, match="width"):
        sc(width=0.5)
    with pytest.raises(ValueError, match="rate"):
        sc(rate=-1.0)
    with pytest.raises(ValueError, match="danger"):
        sc(danger="agent")


def _room_with_a_partition(route: bool) -> dict:
    # Two streams cross a room whose partition leaves a gap at the far side from both
    # entries: going straight at the goal ends at the partition. With ``route``, each
    # source's group reads its own navigation field (FollowField(which="group")).
    world = cs.World()
    world.add_polyline([[0, 0], [20, 0], [20, 10], [0, 10]], closed=True)
    world.add_segments([[10, 0, 10, 8]])
    right, left = [[19.5, 0.5, 19.5, 9.5]], [[0.5, 0.5, 0.5, 9.5]]
    if route:
        goals = [np.array(right, np.float32), np.array(left, np.float32)]
        field = cs.NavField(world, goals, radius=0.3, cell=0.15)
        steering = cs.scenarios.crowd_steering(field=field, which="group", look_ahead_field=2.0)
    else:
        steering = cs.scenarios.crowd_steering()
    sim = cs.Simulation(
        world,
        cs.Agents(200, slots=16),
        steering,
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    people = dict(radius=0.25, speed=(1.3, 0.2))
    schedule = [(0.0, 0.5), (20.0, 0.0)]  # 0.5 persons/s each way for 20 s
    sim.flow = cs.Flow(
        [
            cs.Source(
                [0.5, 0.5, 3, 4],
                schedule,
                [[19.5, 0], [19.5, 10]],
                [18, -INF, INF, INF],
                group=0,
                **people,
            ),
            cs.Source(
                [17, 0.5, 19.5, 4],
                schedule,
                [[0.5, 0], [0.5, 10]],
                [-INF, -INF, 2, INF],
                group=1,
                **people,
            ),
        ],
        seed=0,
    )
    sim.step(1 / 30, 1800)  # one minute
    return sim.flow.report()


def test_sources_in_groups_follow_their_own_routes_and_nobody_is_stranded():
    routed, straight = _room_with_a_partition(True), _room_with_a_partition(False)
    assert routed["entered"] == straight["entered"] >= 15
    # With a route each, everyone is out within the minute, both ways; steering straight
    # at the goal leaves people at the partition.
    assert routed["out"] == routed["entered"]
    assert min(s["out"] for s in routed["sources"]) > 5
    assert straight["out"] < straight["entered"]


def test_the_station_empties_each_train_round_the_kiosk_while_people_come_in():
    # Two trains (t = 0 and 60 s), each unloading for 20 s, and an inbound stream, all
    # on their own routes round the kiosk and pillars: by 120 s nearly every passenger
    # is through a gate (a 0.5 m/s walker takes a minute and more), nobody was ever
    # stuck, no two bodies overlapped, no body touched a wall, and the inbound stream
    # reached the platform. (Seed 1 was this test's seed until the last radius to a goal
    # by a wall changed the decisions: one agent of seed 1 now grazes the end of a gate's
    # wall, 0.3 mm off it, turning through the gate at 1.6 m/s under Accel's limit.
    # Seeds 0-9 have one such graze each way: seed 0 before that change, seed 1 after.)
    sc = cs.scenarios.get("station")
    sim = sc(seed=2)
    sim.step(sc.dt, sc.steps)
    r = sc.report(sim)
    doors = [r["streams"]["door_1"], r["streams"]["door_2"]]
    entered = sum(d["entered"] for d in doors)
    assert entered > 150 and sum(d["queued"] for d in doors) == 0
    assert sum(d["out"] for d in doors) >= 0.97 * entered
    assert r["streams"]["entrance"]["out"] > 50
    assert r["stuck_ever"] == 0 and r["min_clearance"]["agent"] >= 0
    assert r["collisions"]["agent_wall"] == 0
    with pytest.raises(ValueError, match="unload"):
        sc(unload=90.0)
    # headway alone below the default unload: the message names both and how they relate
    with pytest.raises(
        ValueError, match=r"unload must be at most headway .* unload=20 s and headway=10 s"
    ):
        sc(headway=10.0)


def test_a_turn_at_speed_is_not_carried_into_a_gates_wall_end():
    # The station's seed 1 (traced): at step 2919 agent 131, at 1.6 m/s, passes the end of
    # a gate's wall with its straight course at the 5 cm margin; a wall 3.7 m beyond the
    # gate gives that course danger 0.05, so the only slots left unmasked point along the
    # wall, 95° off. Taken, that velocity is safe, but Accel's 6 m/s² needs 0.3 s to turn
    # to it and the body, carrying on meanwhile, grazed the wall end (0.3 mm off it, one
    # contact episode). Simulation::keep_course keeps a course still safe for half a
    # horizon when the way to the new velocity under the acceleration limit comes within
    # half the margin of a wall: no wall contact, and no two bodies overlap.
    sc = cs.scenarios.get("station")
    sim = sc(seed=1)
    sim.step(sc.dt, 2940)
    m = sim.metrics()
    assert m["collisions"]["agent_wall"] == 0
    assert m["min_clearance"]["agent"] >= 0


def test_a_station_train_back_to_back_is_one_long_unloading():
    sc = cs.scenarios.get("station")
    src = sc(unload=30.0, headway=30.0).flow.sources[0]
    assert src.rate == 3.0
    assert sc(unload=20.0, headway=60.0).flow.sources[0].rate_at(61.0) == 3.0
    assert sc(unload=20.0, headway=60.0).flow.sources[0].rate_at(81.0) == 0.0


@st.composite
def standing_flows(draw):
    """A 10 m room with a few random inner walls and 1–3 sources of random areas, rates
    (or schedules), radii, clearances and exits; agents do not move (Lerp, steer_force 0),
    so every agent stays where it was admitted."""
    inner = draw(
        st.lists(st.tuples(*[st.floats(0.5, 9.5, allow_nan=False)] * 4), min_size=0, max_size=3)
    )
    sources = []
    for g in range(draw(st.integers(1, 3))):
        r_lo = draw(st.floats(0.1, 0.4))
        r_hi = r_lo + draw(st.floats(0.0, 0.2))
        clearance = draw(st.floats(0.0, 0.1))
        need = 2 * (r_hi + clearance) * 1.001 + 1e-6
        x0, y0 = draw(st.floats(0.0, 8.0)), draw(st.floats(0.0, 8.0))
        w = draw(st.floats(need, max(need, 10.0 - x0)))
        h = draw(st.floats(need, max(need, 10.0 - y0)))
        if draw(st.booleans()):
            rate = draw(st.floats(0.0, 30.0))
        else:
            t1 = draw(st.floats(0.1, 2.0))
            rate = [(0.0, draw(st.floats(0.0, 30.0))), (t1, draw(st.floats(0.0, 30.0)))]
        ex0, ey0 = draw(st.floats(-1.0, 10.0)), draw(st.floats(-1.0, 10.0))
        exit = [ex0, ey0, ex0 + draw(st.floats(0.5, 4.0)), ey0 + draw(st.floats(0.5, 4.0))]
        sources.append(
            cs.Source(
                [x0, y0, x0 + w, y0 + h], rate, [20.0, 5.0], exit,
                radius=(r_lo, r_hi), clearance=clearance, tries=draw(st.integers(1, 50)),
                group=g,
            )
        )  # fmt: skip
    period = draw(st.floats(0.05, 1.0))
    dt = draw(st.floats(0.02, 0.3))
    capacity = draw(st.integers(1, 60))
    return inner, sources, period, dt, capacity


@settings(max_examples=60, deadline=None)
@given(standing_flows(), st.integers(0, 2**32))
def test_flow_invariants_hold_for_random_sources(case, seed):
    inner, sources, period, dt, capacity = case
    world = cs.World()
    world.add_polyline([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
    inner = [t for t in inner if (t[0], t[1]) != (t[2], t[3])]  # no zero-length walls
    if inner:
        world.add_segments([list(t) for t in inner])
    walls = world.walls.astype(np.float64)
    agents = cs.Agents(capacity, slots=8)
    sim = cs.Simulation(world, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
    sim.flow = cs.Flow(sources, seed=seed, period=period)
    for _ in range(12):
        sim.step(dt)
        r = sim.flow.report()
        assert r["offered"] == r["entered"] + r["queued"]
        assert r["entered"] == r["out"] + r["inside"] + r["left_otherwise"]
        assert r["left_otherwise"] == 0
        for key in ("offered", "entered", "out", "inside", "queued"):
            assert r[key] == sum(s[key] for s in r["sources"])
        ids = sim.flow.members()
        assert agents.alive[ids].all() and len(ids) == r["inside"] <= capacity
        p = agents.position[ids].astype(np.float64)
        rad = agents.radius[ids].astype(np.float64)
        src = [sources[g] for g in agents.group[ids]]
        clear = np.array([s.clearance for s in src])
        for k in range(len(ids)):
            x, y = p[k]
            x0, y0, x1, y1 = src[k].area
            # Inside its area, with its body; clear of the walls by its clearance.
            assert x0 + rad[k] <= x + 1e-5 and x <= x1 - rad[k] + 1e-5
            assert y0 + rad[k] <= y + 1e-5 and y <= y1 - rad[k] + 1e-5
            assert _segment_distance(p[k], walls) >= rad[k] + clear[k] - 1e-5
            ex0, ey0, ex1, ey1 = src[k].exit
            assert not (ex0 <= x <= ex1 and ey0 <= y <= ey1)  # would have left
        if len(ids) > 1:
            gap = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1)) - rad[:, None] - rad[None]
            np.fill_diagonal(gap, np.inf)
            # Each newcomer kept its clearance from every body already there.
            assert (gap >= np.minimum(clear[:, None], clear[None]) - 1e-5).all()


def test_a_repeated_schedule_is_the_schedule_written_out_for_every_period():
    """Source(repeat=): the rate at t is the one-off schedule's at t mod repeat. Oracle:
    the schedule written out period by period (as the station wrote its first hour), over
    times on both sides of every entry. The station's trains kept coming only for that
    hour, and a short headway wrote millions of entries (fuzz round 13)."""
    base = [(0.0, 3.0), (20.0, 0.0), (35.5, 1.5)]
    src = cs.Source([0, 0, 5, 5], base, [9, 9], [99, 99, 100, 100], repeat=60.0)
    written = cs.Source(
        [0, 0, 5, 5],
        [(k * 60.0 + t, r) for k in range(200) for t, r in base],
        [9, 9],
        [99, 99, 100, 100],
    )
    times = [k * 60.0 + t + d for k in range(199) for t, _ in base for d in (-1e-6, 0.0, 1e-6)]
    assert [src.rate_at(t) for t in times[1:]] == [written.rate_at(t) for t in times[1:]]
    assert src.rate_at(-1.0) == 0.0  # none before the first entry, as without repeat
    assert pickle.loads(pickle.dumps(src)) == src and "repeat=60.0" in repr(src)
    station = cs.scenarios.station()
    door = station.flow.sources[0]
    assert [door.rate_at(t) for t in (3600.0, 3610.0, 3625.0, 7205.0, 6e6 + 5)] == [
        3.0,
        3.0,
        0,
        3.0,
        3.0,
    ]
    assert len(cs.scenarios.station(headway=0.01, unload=0.005).flow.sources[0].rate) == 2
    for rate, repeat, err in [
        (2.0, 60.0, ValueError),  # no schedule to repeat
        ([(0, 1), (60, 0)], 60.0, ValueError),  # a time beyond the period
        ([(-1, 1)], 60.0, ValueError),
        ([(0, 1)], 0.0, ValueError),
        ([(0, 1)], "60", TypeError),
    ]:
        with pytest.raises(err, match="repeat"):
            cs.Source([0, 0, 5, 5], rate, [9, 9], [99, 99, 100, 100], repeat=repeat)


@pytest.mark.parametrize("where", ["_first_free", "_exits"])
def test_ctrl_c_inside_a_flow_step_waits_for_the_step_end(monkeypatch, where):
    """SIGINT raised in the middle of a flow's admissions (or its exits): the
    KeyboardInterrupt used to leave walkers dequeued and counted in but never added
    (entered 2, inside 0, alive 0, left_otherwise 2; fuzz round 13). It now comes once
    the whole step is done, with the counts adding up."""
    import signal

    world = cs.World()
    world.add_segments([[-1, 0, 21, 0], [-1, 4, 21, 4], [-1, 0, -1, 4], [21, 0, 21, 4]])
    sim = cs.Simulation(
        world,
        cs.Agents(100, slots=16),
        cs.scenarios.crowd_steering(),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    sim.flow = cs.Flow([cs.Source([0, 0, 2, 4], 20.0, [[22, 0], [22, 4]], [1, -1e9, 1e9, 1e9])])
    real = getattr(cs.Flow, where)
    calls = [0]

    def interrupted(*args):
        calls[0] += 1
        if calls[0] == (2 if where == "_first_free" else 1):
            signal.raise_signal(signal.SIGINT)  # Python's handler runs at the next line
        return real(*args)

    monkeypatch.setattr(
        cs.Flow, where, staticmethod(interrupted) if where == "_first_free" else interrupted
    )
    with pytest.raises(KeyboardInterrupt):
        for _ in range(3):
            sim.step(1 / 30)
    r = sim.flow.report()
    assert r["left_otherwise"] == 0 and r["offered"] == r["entered"] + r["queued"]
    assert r["entered"] == r["out"] + r["inside"] and r["inside"] == int(sim.agents.alive.sum())
    assert sim.step_count == calls[0] if where == "_exits" else sim.step_count >= 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # The step's exits ran: no walker is left in its exit area (x >= 1).
    assert r["out"] > 0 and not (sim.agents.position[sim.flow.members(), 0] >= 1).any()


def _signals_in_admission(monkeypatch, signals, got):
    """A simulation fed by a flow whose first admission raises ``signals`` (once; ``got``
    gets "sent" then), and the SIGINT and SIGTERM dispositions to put back."""
    import signal

    world = cs.World()
    world.add_segments([[-1, 0, 21, 0], [-1, 4, 21, 4]])
    sim = cs.Simulation(world, cs.Agents(50, slots=8), [cs.Seek()], motion=cs.Accel())
    sim.flow = cs.Flow([cs.Source([0, 0, 2, 4], 20.0, [[22, 0], [22, 4]], [20, -1e9, 1e9, 1e9])])
    real = cs.Flow._first_free

    def raising(*args):
        if not got:
            got.append("sent")
            for s in signals:
                signal.raise_signal(s)
        return real(*args)

    monkeypatch.setattr(cs.Flow, "_first_free", staticmethod(raising))
    return sim, {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def test_every_signal_held_during_a_flow_step_is_handed_on_once(monkeypatch):
    """A SIGTERM after a SIGINT, both held during a flow's step, both reach their
    handlers after it (only the first did; a helper on fuzz round 13's fixes)."""
    import signal

    got: list[str] = []
    sim, old = _signals_in_admission(
        monkeypatch, (signal.SIGINT, signal.SIGTERM, signal.SIGINT), got
    )
    signal.signal(signal.SIGINT, lambda s, f: got.append("INT"))
    signal.signal(signal.SIGTERM, lambda s, f: got.append("TERM"))
    try:
        sim.step(1 / 30)
        assert got == ["sent", "INT", "TERM"]
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def test_a_sigterm_held_with_a_raising_sigint_still_reaches_its_handler(monkeypatch):
    """SIGINT at Python's default (KeyboardInterrupt) and a SIGTERM handler, both raised
    in a flow's step: the held signals were handed on one by one, and the first handler's
    KeyboardInterrupt dropped the SIGTERM. They are raised again together, so Python
    delivers the rest after a raising handler, as it does for signals that arrive
    together."""
    import signal

    got: list[str] = []
    sim, old = _signals_in_admission(monkeypatch, (signal.SIGINT, signal.SIGTERM), got)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda s, f: got.append("TERM"))
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.step(1 / 30)
        sim.flow.report()  # any further bytecode: a pending handler has run by now
        assert "TERM" in got
        r = sim.flow.report()
        assert r["entered"] == r["inside"] == int(sim.agents.alive.sum())
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    side=st.floats(0.05, 3.0),
    n=st.integers(0, 60),
)
def test_the_buckets_round_a_place_hold_every_body_that_could_be_in_its_way(seed, side, n):
    """Admission tests a place against the bodies in the 3 × 3 buckets round it (every
    body was tested for every newcomer: 31 s to admit 8,000; fuzz round 14). Oracle:
    brute force, every disc within the bucket side of a point is among those found."""
    from contextsteer.flow import _Bodies

    rng = np.random.default_rng(seed)
    pos = rng.uniform(-3, 3, (n, 2))
    rad = rng.uniform(0.0, side / 2, n)
    rad[: n // 8] *= 10  # agents wider than the buckets are sized for: always found
    bodies = _Bodies(pos[: n // 2], rad[: n // 2], side, side / 2)
    for p, r in zip(pos[n // 2 :], rad[n // 2 :], strict=True):
        bodies.add(p, float(r))
    points = rng.uniform(-4, 4, (16, 2))
    q, qr = bodies.near(points)
    found = {(float(x), float(y), float(r)) for (x, y), r in zip(q, qr, strict=True)}
    near = np.hypot(points[:, None, 0] - pos[None, :, 0], points[:, None, 1] - pos[None, :, 1])
    for k in np.flatnonzero((near <= side).any(axis=0)):
        assert (float(pos[k, 0]), float(pos[k, 1]), float(rad[k])) in found


def test_admitting_many_at_once_places_them_as_testing_every_body_does(monkeypatch):
    """The bucketed admission against the brute-force one (every body for every
    newcomer, the former code): the same places, bit for bit, for 120 walkers from 12
    small sources sharing a crowded area."""

    def run():
        world = cs.World()
        world.add_segments(WALLS)
        agents = cs.Agents(300, slots=16, seed=3)
        sim = cs.Simulation(world, agents, cs.scenarios.crowd_steering(), motion=cs.Accel())
        sources = [
            cs.Source(
                [0.5 * k % 10, 0.2, 0.5 * k % 10 + 1.5, 2.8],
                40.0,
                [11, 1.5],
                [10, -INF, INF, INF],
                radius=(0.2, 0.3),
            )
            for k in range(12)
        ]
        sim.flow = cs.Flow(sources)
        sim.step(1 / 30, steps=8)
        return agents.position[agents.alive].copy(), int(agents.count)

    fast, n = run()
    from contextsteer.flow import _Bodies

    monkeypatch.setattr(_Bodies, "near", _everything)
    brute, m = run()
    assert n == m >= 30
    np.testing.assert_array_equal(fast, brute)


def test_a_newcomers_float32_radius_is_within_the_buckets_reach():
    """A newcomer is held at its float32 radius, which can round up by 6e-8 of it: with
    the buckets' margin of 1e-9, a body just beyond the 3 × 3 buckets was still in the
    way, and two walkers of radius 1000.000031 were admitted 5.3e-5 m too close (a helper
    on fuzz round 14's fixes). Oracle: the brute force refuses the second, and every pair
    admitted is at least radius + radius + clearance apart."""
    from contextsteer.flow import _Bodies

    r, clr = 1000.0 + 3.1e-5, 0.07

    def src(x):
        return cs.Source(
            [x - r - clr, -r - clr, x + r + clr, r + clr],
            20.0,
            [x, 1e6],
            [1e9] * 4,
            radius=r,
            clearance=clr,
            tries=1,
        )

    def run():
        agents = cs.Agents(8)
        sim = cs.Simulation(cs.World(), agents, cs.scenarios.crowd_steering(), motion=cs.Accel())
        sim.flow = cs.Flow([src(-1e-6), src(2000.070068359375)], seed=3)
        sim.step(1e-6)
        return [s["entered"] for s in sim.flow.report()["sources"]]

    fast = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_Bodies, "near", _everything)
        assert run() == fast == [1, 0]


def _everything(self, points):
    """_Bodies.near as the brute force: every body."""
    added = [d for v in self._added.values() for d in v]
    extra = np.array(added, dtype=np.float64).reshape(-1, 3)
    return (
        np.concatenate([self._pos, self._big_pos, extra[:, :2]]),
        np.concatenate([self._rad, self._big_rad, extra[:, 2]]),
    )


def test_one_wide_body_does_not_widen_every_bucket(monkeypatch):
    """One agent of radius 60, 3 km away, sized every bucket for itself: each newcomer was
    tested against every other again (10 s for 4,000; fuzz round 15). Now the widest 1 %
    of the agents are tested against every place, and the buckets stay the newcomers'
    size. Oracle: the discs a query returns (counted), and the places, bit for bit,
    against the brute force."""
    from contextsteer.flow import _Bodies

    def run(big):
        agents = cs.Agents(700, slots=8, seed=3)
        if big:
            agents.add([[3000.0, 0.0]], radius=60.0)
        sim = cs.Simulation(cs.World(), agents, cs.scenarios.crowd_steering(), motion=cs.Accel())
        source = cs.Source(
            [0, 0, 20, 20], 600.0, [100, 10], [90, -INF, INF, INF], radius=(0.2, 0.25)
        )
        sim.flow = cs.Flow([source], seed=5, period=0.5)
        sim.step(0.5)
        return agents.position[agents.alive].copy()

    seen = []
    near = _Bodies.near
    monkeypatch.setattr(
        _Bodies, "near", lambda self, p: seen.append(len(near(self, p)[1])) or near(self, p)
    )
    fast = run(big=True)
    assert len(fast) > 200 and max(seen) < 60, max(seen)
    monkeypatch.setattr(_Bodies, "near", _everything)
    np.testing.assert_array_equal(run(big=True), fast)


def test_the_buckets_are_sized_by_the_cost_of_a_query():
    """The radius the admission buckets are sized for: one giant, or 65 agents of 2 m, or
    0.5 % of them at 5 m among 10,000 of 0.15-0.3 m, go on the list every query reads
    (sized for them, every bucket held hundreds: 2-5x slower); a crowd of near-equal radii
    is bucketed whole (its widest 1 % on the list made every query read N / 100 agents)
    (fuzz rounds 15-17). Oracle: the cost model's own terms, worked by hand."""
    from contextsteer.flow import _bucket_radius

    rng = np.random.default_rng(0)
    pos = rng.uniform(0, 100, (10_000, 2))
    small = rng.uniform(0.15, 0.3, 10_000)
    none = np.zeros((0, 2))
    for wide, r in ((1, 60.0), (65, 2.0), (50, 5.0)):
        rad = small.copy()
        rad[:wide] = r
        assert _bucket_radius(pos, rad, 0.3, 0.35, 100, none) <= 0.3
    # Near-equal radii above the newcomers': bucketed whole, none on the list.
    rad = rng.uniform(0.4, 0.45, 10_000)
    assert _bucket_radius(pos, rad, 0.3, 0.35, 100, none) == rad.max()
    # A dense crowd in the source's area and one wide agent 300 km away: the crowd's
    # extent is vast, its density is not (it was read so, and every bucket was sized for
    # the far agent: 10x slower; fuzz round 18).
    far = np.vstack([rng.uniform(0, 200, (20_000, 2)), [[3e5, 3e5]]])
    rad = np.append(np.full(20_000, 0.2), 60.0)
    assert _bucket_radius(far, rad, 0.25, 0.3, 1000, np.array([[0, 0, 200, 200.0]])) == 0.25
    # The same with a second source 1e6 m away and a walker there: the sources' joint
    # extent read the crowd thin again (55x slower admission; fuzz round 19).
    far2 = np.vstack([far, [[1e6, 1e6]]])
    rad2 = np.append(rad, 0.2)
    two = np.array([[0, 0, 200, 200.0], [1e6 - 10, 1e6 - 10, 1e6 + 10, 1e6 + 10]])
    assert _bucket_radius(far2, rad2, 0.25, 0.3, 1000, two) == 0.25
    # One resident and many newcomers in its source: sized for the newcomers.
    assert (
        _bucket_radius(
            np.array([[3000.0, 0]]),
            np.array([60.0]),
            0.25,
            0.3,
            4000,
            np.array([[0, 0, 20, 20.0]]),
        )
        == 0.25
    )


def test_a_streams_queue_grows_its_buffers_rarely_and_keeps_its_order():
    """Each batch made a new array of the whole queue: with a backlog of 600,000 and ten
    batches a step the flow took 3.3 s per simulated second and climbing (fuzz round 19).
    Oracle: a plain list of the queue."""
    import pickle

    from contextsteer.flow import _Stream

    rng = np.random.default_rng(5)
    stream, queue, buffers = _Stream(), [], set()
    for _ in range(3000):
        n = int(rng.integers(0, 12))
        r, v = rng.random(n), rng.random(n)
        seed = rng.integers(2**63, size=n, dtype=np.uint64)
        stream.join(r, v, seed)
        queue += list(zip(r, v, seed))
        buffers.add(id(stream.radius))
        for _ in range(int(rng.integers(0, 8))):  # admitted from the head
            if stream.waiting:
                h = stream.head
                assert (stream.radius[h], stream.speed[h], stream.seed[h]) == queue.pop(0)
                stream.head += 1
        assert stream.waiting == len(queue)
    assert len(buffers) <= 24  # regrown only when full (geometric), not at each batch
    # A pickle holds the queue as before the buffers had room to spare.
    state = stream.__getstate__()
    assert len(state[0]) == stream.tail and state[3] == stream.head
    back = pickle.loads(pickle.dumps(stream))
    assert back.waiting == len(queue)
    h = back.head
    np.testing.assert_array_equal(back.radius[h : back.tail], [q[0] for q in queue])
    np.testing.assert_array_equal(back.seed[h : back.tail], [q[2] for q in queue])
    back.join(np.ones(1), np.ones(1), np.ones(1, np.uint64))
    assert back.waiting == len(queue) + 1


def test_newcomers_far_from_the_origin_are_placed_where_float32_keeps_them_apart(monkeypatch):
    """Places were tested in double and stored in float32: 1e7 m out, 300 of 307
    newcomers overlapped, on the same points (fuzz round 21)."""
    admitted = []
    real = cs.Flow._admit

    def admit(self, sim, now):  # the positions right after admission, before any move
        real(self, sim, now)
        admitted.append(sim.agents.position.copy())

    monkeypatch.setattr(cs.Flow, "_admit", admit)
    for x in (1e5, 1e6, 1e7):
        agents = cs.Agents(400, slots=8)
        sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Accel())
        sim.flow = cs.Flow(
            [cs.Source([x, x, x + 8, x + 8], 300.0, [x + 4, x + 4], [-1, -1, -1, -1], radius=0.3)],
            seed=0,
        )
        admitted.clear()
        sim.step(1 / 30)
        ids = np.flatnonzero(agents.alive)
        agents = types.SimpleNamespace(position=admitted[0], radius=agents.radius)
        assert len(ids) > 0
        p = agents.position[ids].astype(np.float64)
        r = agents.radius[ids].astype(np.float64)
        gap = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1)) - (r[:, None] + r[None])
        np.fill_diagonal(gap, np.inf)
        assert gap.min() >= -1e-9, (x, gap.min())


def _ten_walkers():
    """A simulation with ten agents of its own in slots 0-9 (room for 30 newcomers)."""
    agents = cs.Agents(40, slots=8)
    agents.add([[5.0 + i, 5.0] for i in range(10)], radius=0.2)
    return cs.Simulation(None, agents, [cs.Seek()], motion=cs.Accel())


def test_a_flow_whose_simulation_is_gone_refuses_to_feed_another():
    """A Flow made once outside a loop of runs: the first simulation collected, its
    member slots were taken for the next one's agents in the same slots, which it then
    removed at its exits (fuzz round 21)."""
    import gc

    flow = cs.Flow([cs.Source([0, 0, 3, 3], 20.0, [30, 1.5], [25, -1, 40, 4], radius=0.2)], seed=0)
    sim = _ten_walkers()
    sim.flow = flow
    sim.step(0.1, steps=20)
    assert flow.report()["inside"] > 0
    # A copy made without its simulation is refused at once (it took the member slots of
    # the other simulation's own agents; round 23); the same flow set again is its own.
    with pytest.raises(ValueError, match="agents inside another simulation"):
        _ten_walkers().flow = copy.deepcopy(flow)
    sim.flow = flow
    del sim
    gc.collect()
    other = _ten_walkers()
    with pytest.raises(ValueError, match="agents inside another simulation"):
        other.flow = flow
    other.__dict__["_flow"] = flow  # (past the setter: the step refuses it too)
    with pytest.raises(ValueError, match="the simulation it fed is gone"):
        other.step(0.1)
    assert other.agents.alive.sum() == 10


def test_a_flow_whose_members_were_removed_moves_to_another_simulation():
    """The setter and the step counted the members the caller had removed as inside
    (fuzz round 24): the flow was refused on a new simulation as having agents inside."""

    flow = cs.Flow([cs.Source([0, 0, 3, 3], 20.0, [30, 1.5], [25, -1, 40, 4], radius=0.2)], seed=0)
    sim = _ten_walkers()
    sim.flow = flow
    sim.step(0.1, steps=20)
    assert flow.report()["inside"] > 0
    sim.agents.remove(flow.members())
    assert flow.report()["inside"] == 0
    other = _ten_walkers()
    other.flow = flow  # nothing of it inside the first simulation any more
    before = other.agents.alive.copy()
    other.step(0.1, steps=5)
    # The other simulation's own agents (slots 0-9, as the removed members' were not)
    # are not taken for members: none removed, and the flow counts only its newcomers.
    assert other.agents.alive[before].all()
    assert set(flow.members()) <= set(np.flatnonzero(other.agents.alive & ~before))


def test_a_flow_pickled_beside_its_simulation_comes_back_as_its_flow():
    """Simulation.__reduce__ deep-copied its flow outside the pickle's memo: after
    pickle.loads((sim, flow)) the caller's flow was not the simulation's, went stale as
    the simulation stepped, and setting it back was refused (fuzz round 24)."""
    agents = cs.Agents(40, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Accel())
    flow = cs.Flow([cs.Source([0, 0, 3, 3], 20.0, [30, 1.5], [25, -1, 40, 4], radius=0.2)], seed=0)
    sim.flow = flow
    sim.backup = flow
    sim.step(0.1, steps=20)
    s2, f2 = pickle.loads(pickle.dumps((sim, flow)))
    assert f2 is s2.flow is s2.backup
    copied = copy.deepcopy(sim)
    assert copied.flow is copied.backup and copied.flow is not flow
    s2.flow = f2  # its own: accepted
    # The loaded pair continues as the original does, bit for bit.
    sim.step(0.1, steps=15)
    s2.step(0.1, steps=15)
    assert f2.report() == flow.report()
    np.testing.assert_array_equal(s2.agents.position, sim.agents.position)


def test_the_batch_due_at_a_schedules_change_draws_the_new_rate():
    """Batch k falls at start + k·period: the clock summed periods, ten of 0.1 fell short
    of 1.0, and the batch due at the schedule's change drew the rate before it (fuzz
    round 21)."""
    # (And 3 × 0.3 is 0.8999999999999999 in double: the rate is read just after a
    # batch's time; fuzz round 22.)
    for period, change in ((0.1, 1.0), (0.3, 0.9), (0.7, 2.1)):
        src = cs.Source([0, 0, 5, 5], [(0.0, 0.0), (change, 1000.0)], [30, 2.5], [25, -1, 40, 6])
        agents = cs.Agents(2000, slots=8)
        sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Accel())
        sim.flow = cs.Flow([src], seed=0, period=period)
        batches = round(change / period)
        for _ in range(batches):  # batches before the change: rate 0
            sim.step(period)
        assert sim.flow.report()["offered"] == 0
        sim.step(period)  # the batch at the change: rate 1000
        assert sim.flow.report()["offered"] > 0.5 * 1000 * period, period
    # A negative start: -7 + 24 × 0.3 = 0.1999999999999993, an ulp of 7 short of the
    # change at 0.2, beyond 4 ulps of the result (round 24, a regression of round 23).
    for start, change in ((-7.0, 0.2), (-6.7, 0.2), (-10.0, 0.2), (-0.9, 0.0), (-1000.0, 0.2)):
        src = cs.Source([0, 0, 5, 5], [(-2e3, 0.0), (change, 1000.0)], [30, 2.5], [25, -1, 40, 6])
        sim = cs.Simulation(None, cs.Agents(10, slots=8), [cs.Seek()], motion=cs.Accel())
        sim.flow = cs.Flow([src], seed=0, period=0.3, start=start)
        while sim.time < change - 0.05:
            sim.step(0.1)
            assert sim.flow.report()["offered"] == 0
        sim.step(0.1)
        assert sim.flow.report()["offered"] > 150, start
    # A long period reads the rate at its batch's time, not one 1e-9 periods later (the
    # batch at 0 of period 1e8 took a change at 0.05 s: 1,012 people; round 23).
    src = cs.Source([0, 0, 5, 5], [(0.0, 0.0), (0.05, 1e-5)], [30, 2.5], [25, -1, 40, 6])
    sim = cs.Simulation(None, cs.Agents(10, slots=8), [cs.Seek()], motion=cs.Accel())
    sim.flow = cs.Flow([src], seed=0, period=1e8)
    sim.step(0.1)
    assert sim.flow.report()["offered"] == 0


def test_report_and_members_leave_out_agents_removed_since_the_last_step():
    # They listed the removed agents as inside until the next step (fuzz round 21).
    src = cs.Source([0, 0, 5, 5], 50.0, [30, 2.5], [25, -1, 40, 6], radius=0.2)
    agents = cs.Agents(200, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Accel())
    sim.flow = cs.Flow([src], seed=0)
    sim.step(0.1, steps=10)
    # (A copy, or a loaded simulation, knows its agents before its next step too: round 22.)
    sim = copy.deepcopy(sim)
    agents = sim.agents
    before = sim.flow.report()
    gone = sim.flow.members()[:3]
    agents.remove(gone)
    now = sim.flow.report()
    assert now["inside"] == before["inside"] - 3
    assert now["left_otherwise"] == before["left_otherwise"] + 3
    assert not np.isin(gone, sim.flow.members()).any()
    sim.step(0.1)  # the step agrees
    assert sim.flow.report()["left_otherwise"] == now["left_otherwise"]


def test_a_queue_that_cannot_grow_keeps_its_counts_and_its_people(monkeypatch):
    """A MemoryError while the queue grew left the batch counted as offered and never
    queued (about a million walkers missing from offered = entered + queued), and the
    buffers half moved: the radii at the new buffer's start, the rest not (fuzz round
    25). Now the buffers are swapped in together and a batch counts once it is queued."""
    from contextsteer import flow as flow_mod

    agents = cs.Agents(5, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
    src = cs.Source([0, 0, 10, 10], 200.0, [50, 50], [100, 100, 101, 101], radius=0.2)
    sim.flow = cs.Flow([src], seed=1)
    sim.step(0.1, 3)
    before = sim.flow.report()
    stream = sim.flow._streams[0]
    queued = (
        stream.radius[stream.head : stream.tail].copy(),
        stream.seed[stream.head : stream.tail].copy(),
    )
    real_zeros, calls = np.zeros, []

    def failing_second(size, dtype=float):  # the speeds' buffer cannot be had
        calls.append(size)
        if len(calls) == 2:
            raise MemoryError("no room for the speeds")
        return real_zeros(size, dtype=dtype)

    monkeypatch.setattr(flow_mod.np, "zeros", failing_second)
    with pytest.raises(MemoryError):
        for _ in range(100):  # until a batch outgrows the buffers
            sim.step(0.1)
    monkeypatch.setattr(flow_mod.np, "zeros", real_zeros)
    r = sim.flow.report()
    assert r["offered"] == r["entered"] + r["queued"] >= before["offered"]
    np.testing.assert_array_equal(
        stream.radius[stream.head : stream.head + len(queued[0])], queued[0]
    )
    np.testing.assert_array_equal(
        stream.seed[stream.head : stream.head + len(queued[1])], queued[1]
    )


def test_a_batch_whose_second_source_cannot_queue_is_drawn_once_and_offered_once(monkeypatch):
    """A MemoryError in the second source's queue left the first source's batch queued
    and counted, and the retry drew the batch again for both: 61 walkers offered where a
    clean run offers 39 (fuzz round 26). A batch is now all or nothing, its draws put back:
    after the error the run goes on as if it had not happened."""
    from contextsteer import flow as flow_mod

    def run(fail_at=None, where="reserve"):
        agents = cs.Agents(400, slots=8)
        sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
        box = [100, 100, 101, 101]
        sim.flow = cs.Flow(
            [
                cs.Source([0, 0, 10, 10], 20.0, [50, 50], box, radius=0.2, name="a"),
                cs.Source([20, 0, 30, 10], 20.0, [50, 50], box, radius=0.2, name="b"),
            ],
            seed=1,
        )
        real_reserve, real_draw = flow_mod._Stream.reserve, flow_mod.Source._draw
        armed = {"on": False}

        def reserve(self, n):
            if armed["on"] and where == "reserve" and self is sim.flow._streams[1]:
                armed["on"] = False
                raise MemoryError("no room for source b's queue")
            return real_reserve(self, n)

        def draw(self, rng, period, t):
            if armed["on"] and where == "draw" and self.name == "b":
                armed["on"] = False
                raise MemoryError("no room for source b's batch")
            return real_draw(self, rng, period, t)

        monkeypatch.setattr(flow_mod._Stream, "reserve", reserve)
        monkeypatch.setattr(flow_mod.Source, "_draw", draw)
        sim.step(0.1, steps=5)
        if fail_at is not None:
            armed["on"] = True
            with pytest.raises(MemoryError, match="source b's"):
                sim.step(0.1, steps=10)
        while sim.time < 2.45:
            sim.step(0.1)
        monkeypatch.setattr(flow_mod._Stream, "reserve", real_reserve)
        monkeypatch.setattr(flow_mod.Source, "_draw", real_draw)
        r = sim.flow.report()
        return r, agents.position[agents.alive].copy()

    clean, clean_pos = run()
    for where in ("reserve", "draw"):  # (a draw allocates too: round 26's second look)
        failed, failed_pos = run(fail_at=1.0, where=where)
        offered = [s["offered"] for s in failed["sources"]]
        assert offered == [s["offered"] for s in clean["sources"]], where
        assert failed["offered"] == failed["entered"] + failed["queued"]
        np.testing.assert_array_equal(failed_pos, clean_pos)


def test_a_flow_copied_alone_leaves_out_the_members_removed_since_its_last_step():
    """A Flow pickled or deep-copied without its simulation counted the walkers the
    caller had removed since the last step as inside (fuzz round 26): the copy has no
    agents to check them against. They are left out when it is copied."""
    agents = cs.Agents(60, slots=8)
    sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=0))
    src = cs.Source([0, 0, 10, 10], 20.0, [50, 50], [100, 100, 101, 101], radius=0.2)
    sim.flow = cs.Flow([src], seed=1)
    sim.step(0.1, steps=10)
    agents.remove(np.flatnonzero(agents.alive)[:3])
    want = sim.flow.report()
    assert want["left_otherwise"] == 3
    for copy_of in (lambda f: pickle.loads(pickle.dumps(f)), copy.deepcopy):
        back = copy_of(sim.flow)
        assert back.report() == want
        np.testing.assert_array_equal(back.members(), sim.flow.members())
    # Pickled with its simulation, the run goes on as the original does.
    twin = pickle.loads(pickle.dumps(sim))
    sim.step(0.1, steps=5)
    twin.step(0.1, steps=5)
    assert twin.flow.report() == sim.flow.report()
    np.testing.assert_array_equal(twin.agents.position, sim.agents.position)
