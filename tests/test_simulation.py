"""Simulation: views, validation, determinism, collisions, time slicing, stuck detection."""

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contextsteer as cs
import reference_agents as ra


def room(with_inner=True):
    world = cs.World()
    world.add_polyline([[-30, -30], [30, -30], [30, 30], [-30, 30]], closed=True)
    if with_inner:
        world.add_box([0, 0], [4, 4], 0.3)
        world.add_circles([[-15, 10], [12, -14]], [3.0, 2.0])
        world.add_segments([[-20, -20, -8, -18]])
    return world


def crowd(n, seed=0, slots=16):
    rng = np.random.default_rng(seed)
    a = cs.Agents(n, slots=slots, seed=seed)
    ang = rng.uniform(0, 2 * np.pi, n)
    r = rng.uniform(10, 26, n)
    pos = np.stack([np.cos(ang) * r, np.sin(ang) * r], 1)
    a.add(
        pos,
        velocity=rng.normal(size=(n, 2)),
        radius=0.5,
        max_speed=3.0,
        max_accel=6.0,
        max_turn_rate=3.0,
        target=-pos,
        heading=rng.uniform(-3, 3, n),
    )
    return a


def steering(**kw):
    return cs.Steering(
        [
            cs.Seek(),
            cs.Wander(weight=0.3),
            cs.Separation(radius=2.0, weight=0.5),
            cs.WallDanger(look_ahead=3, falloff="linear", spread=1),
            cs.AgentDanger(radius=1.5, predictive=True),
        ],
        resolve="subtract",
        choose="vector_sum",
        **kw,
    )


def state_hash(a, sim):
    h = hashlib.sha256()
    for x in (
        a.position,
        a.velocity,
        a.heading,
        sim.interest,
        sim.danger,
        sim.chosen_direction,
        sim.wall_contacts,
        sim.overlaps,
    ):
        h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()


def wall_distance(world, p):
    return cs.nearest(world, np.ascontiguousarray(p, dtype=np.float32), 1e4).distance


# -------------------------------------------------------------------- views ---


def test_views_are_zero_copy_and_survive_the_simulation():
    a = crowd(10)
    sim = cs.Simulation(room(), a, steering(), motion=cs.Accel())
    sim.step(0.1)
    for name, shape, dtype in [
        ("interest", (10, 16), np.float32),
        ("danger", (10, 16), np.float32),
        ("resolved", (10, 16), np.float32),
        ("chosen_direction", (10, 2), np.float32),
        ("strength", (10,), np.float32),
        ("chosen_slot", (10,), np.int32),
        ("wall_contacts", (10,), np.int32),
        ("overlaps", (10,), np.int32),
        ("stuck", (10,), np.bool_),
        ("still_time", (10,), np.float64),
    ]:
        v = getattr(sim, name)
        assert v.shape == shape and v.dtype == dtype, name
        assert np.shares_memory(v, getattr(sim, name)), name
    interest = sim.interest
    sim.step(0.1)
    np.testing.assert_array_equal(interest, sim.interest)  # the same memory, updated
    del sim
    assert np.isfinite(interest).all()  # the view keeps it alive
    assert_writes_stick_and_flags_stay_read_only(interest)


def assert_writes_stick_and_flags_stay_read_only(interest):
    """A view that outlived its Simulation still writes into the simulation's own memory, and
    the flags only the core sets (``stuck``, ``braking``) refuse writes from NumPy.

    The view's base is the core simulation it keeps alive; a pattern written through the view
    reads back through a fresh view of that core (the same memory, not a copy).
    """
    owner = interest.base
    assert isinstance(owner, cs._core.Simulation), type(owner)
    assert interest.flags.writeable
    pattern = np.arange(interest.size, dtype=np.float32).reshape(interest.shape)
    interest[...] = pattern
    np.testing.assert_array_equal(owner._view("interest"), pattern)
    for name in ("stuck", "braking"):
        flags = owner._view(name)
        assert not flags.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            flags[...] = True


def test_time_step_count_and_repr():
    a = crowd(5)
    sim = cs.Simulation(None, a, [cs.Seek()])
    assert sim.step_count == 0 and sim.time == 0.0
    sim.step(0.25, steps=4)
    assert sim.step_count == 4 and sim.time == pytest.approx(1.0)
    sim.perceive()
    sim.decide_and_move(0.5)
    assert sim.step_count == 5 and sim.time == pytest.approx(1.5)
    assert "step_count=5" in repr(sim)


def test_validation():
    a = crowd(5)
    sim = cs.Simulation(room(), a, steering())
    with pytest.raises(ValueError, match="dt"):
        sim.step(0.0)
    with pytest.raises(ValueError, match="steps"):
        sim.step(0.1, steps=-1)
    a.position[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"position must be finite.*agent 2"):
        sim.step(0.1)
    a.position[2, 0] = 1.0
    a.alive[2] = False
    a.position[2, 0] = np.inf  # dead agents are not checked
    sim.step(0.1)
    a.radius[3] = -1
    with pytest.raises(ValueError, match="radius"):
        sim.perceive()
    a.radius[3] = 0.5
    sim.perceive()
    sim.danger[1, 4] = np.nan
    with pytest.raises(
        ValueError,
        match=r"danger must be finite, below 2\^60 \(1.15e18\) in magnitude, got nan at \(1, 4\)",
    ):
        sim.decide_and_move(0.1)
    with pytest.raises(ValueError, match="slots"):
        cs.Simulation(None, a, [cs.Seek()], slots=2)
    with pytest.raises(ValueError, match="decision_interval"):
        cs.Simulation(None, a, [cs.Seek()], decision_interval=0)
    for bad in (0, 65, -1):
        with pytest.raises(ValueError, match=r"push_passes must be in \[1, 64\]"):
            cs.Simulation(None, a, [cs.Seek()], push_passes=bad)
    with pytest.raises(TypeError, match="push_passes"):
        cs.Simulation(None, a, [cs.Seek()], push_passes=2.5)
    with pytest.raises(TypeError, match="motion"):
        cs.Simulation(None, a, [cs.Seek()], motion="lerp")
    with pytest.raises(IndexError, match="out of range"):
        cs.Simulation(None, a, [cs.Pursue(targets=[99])])


# ------------------------------------------------------------ determinism ---


def run_hash(threads, steps=500, n=120, **kw):
    a = crowd(n, seed=3)
    sim = cs.Simulation(room(), a, steering(), motion=cs.Lerp(steer_force=0.3), **kw)
    with cs.threads(threads):
        sim.step(0.05, steps=steps)
    assert np.isfinite(a.position).all()
    return state_hash(a, sim)


def test_bit_identical_for_any_thread_count():
    h = {t: run_hash(t) for t in (1, 2, 4)}
    assert h[1] == h[2] == h[4]


def test_bit_identical_with_time_slicing_and_blend():
    def go(t):
        a = crowd(150, seed=4)
        sim = cs.Simulation(
            room(),
            a,
            steering(blend=0.5, spread=[0.5, 1, 0.5]),
            motion=cs.Vehicle(),
            decision_interval=3,
        )
        with cs.threads(t):
            sim.step(0.05, steps=200)
        return state_hash(a, sim)

    assert go(1) == go(2) == go(4)


def test_fused_step_equals_the_stages():
    a1, a2 = crowd(80, seed=5), crowd(80, seed=5)
    s1 = cs.Simulation(room(), a1, steering(), motion=cs.Accel(), decision_interval=2)
    s2 = cs.Simulation(room(), a2, steering(), motion=cs.Accel(), decision_interval=2)
    s1.step(0.05, steps=30)
    for _ in range(30):
        s2.perceive()
        s2.decide_and_move(0.05)
    assert state_hash(a1, s1) == state_hash(a2, s2)


# -------------------------------------------------------------- collisions ---


def test_a_very_fast_agent_never_tunnels_through_a_thin_wall():
    world = cs.World()
    world.add_segments([[10, -50, 10, 50]])  # one thin wall
    a = cs.Agents(3, slots=8)
    a.add(
        [[0, 0], [0, 5], [0, -5]],
        velocity=[[5e4, 0], [5e4, 3e4], [5e4, -1e3]],
        radius=[0.5, 0.0, 0.2],
        max_speed=1e5,
        max_accel=9e7,
        target=[1e4, 0],
    )
    sim = cs.Simulation(world, a, [cs.Seek()], motion=cs.Accel(), push_apart=False)
    for _ in range(50):
        sim.step(0.1)
        assert (a.position[:, 0] < 10).all()
        assert (a.position[:, 0] <= 10 - a.radius + 1e-3).all()
    assert (sim.wall_contacts > 0).all()


@settings(max_examples=60, deadline=None)
@given(
    st.floats(-math.pi, math.pi),
    st.floats(0.01, 1e4),
    st.floats(0.0, 2.0),
    st.floats(-3.0, 3.0),
    st.integers(1, 6),
)
def test_sweep_never_crosses_a_wall(angle, speed, radius, offset, iterations):
    walls = [[5, -20, 5, 20], [-20, 8, 20, 8], [-6, -20, -6, 20]]
    world = cs.World()
    world.add_segments(walls)
    world.add_circles([[0, -4]], [1.0])
    start = np.array([[0.5, offset]], np.float32)
    if wall_distance(world, start)[0] < radius + 1e-3:
        return
    d = np.array([[math.cos(angle), math.sin(angle)]], np.float32) * speed
    pos, contacts = cs.sweep_circle(world, start, d, radius, iterations=iterations)
    assert np.isfinite(pos).all()
    # Never across any wall, never inside one (a hair of tolerance for float32).
    for a0, a1, b0, b1 in walls:
        assert not ra.segment_crossed(start[0], pos[0], (a0, a1), (b0, b1))
    assert wall_distance(world, pos)[0] >= radius - 1e-3
    assert np.hypot(*(pos[0] - [0, -4])) >= 1.0 + radius - 1e-3


def test_agents_slide_along_walls():
    world = cs.World()
    world.add_segments([[-50, 0, 50, 0]])
    pos, contacts = cs.sweep_circle(world, [[0, 1]], [[10, -10]], 0.5)
    assert contacts[0] == 1
    assert pos[0, 1] == pytest.approx(0.5, abs=1e-2)  # on the wall
    assert pos[0, 0] == pytest.approx(10.0, abs=1e-2)  # slid the full x distance


def test_push_apart_separates_overlaps_and_counts_them():
    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [0.5, 0], [10, 10]], radius=0.5)
    sim = cs.Simulation(None, a, [cs.Forward(weight=0.0)], push_apart=True)
    sim.step(0.1)
    assert sim.overlaps.tolist() == [1, 1, 0]
    assert np.hypot(*(a.position[0] - a.position[1])) >= 1.0
    sim.step(0.1)
    assert sim.overlaps.tolist() == [1, 1, 0]  # no new overlap


def test_push_apart_never_pushes_through_a_wall():
    world = cs.World()
    world.add_segments([[1.0, -5, 1.0, 5]])
    a = cs.Agents(2, slots=8)
    a.add([[0.45, 0], [-0.3, 0]], radius=0.5)  # agent 1 pushes agent 0 right
    sim = cs.Simulation(world, a, [cs.Forward(weight=0.0)])
    sim.step(0.1, steps=3)
    assert (a.position[:, 0] < 1.0 - 0.5 + 1e-3).all()


def test_push_apart_resolves_an_overlap_against_a_wall_within_the_step():
    # The wall stops agent 0, so one Jacobi pass moves only agent 1, by half the overlap
    # (0.25 m → 0.125 m left). The later passes take it the rest of the way.
    world = cs.World()
    world.add_segments([[1.0, -5, 1.0, 5]])
    gaps = {}
    for passes in (1, 8):
        a = cs.Agents(2, slots=8)
        a.add([[0.45, 0], [-0.3, 0]], radius=0.5)
        sim = cs.Simulation(world, a, [cs.Forward(weight=0.0)], push_passes=passes)
        sim.step(0.1)
        gaps[passes] = float(np.hypot(*(a.position[0] - a.position[1]))) - 1.0
        assert a.position[0, 0] < 0.5 + 1e-3  # never through the wall
    assert gaps[1] == pytest.approx(-0.075, abs=2e-3)
    assert gaps[8] >= 0.0


GOLDEN = np.pi * (3 - np.sqrt(5))  # the golden angle


def push_apart_oracle(p, r, passes):
    """NumPy push-apart without walls, as SimulationParams.push_passes describes: the
    Jacobi pass over every agent (each moves by half of each of its overlaps, read from
    the positions at the start of the pass; a coincident pair i, j apart along
    u(i) − u(j), u(k) the unit vector at k golden angles), ``passes`` times; a pass moves an agent at
    most its diameter or its deepest single push, whichever is larger, times the square
    root of how many agents it overlaps."""
    p, r = p.astype(np.float32), r.astype(np.float32)
    n = len(p)
    for _ in range(passes):
        q = p.copy()
        for i in range(n):
            e = q[i].astype(np.float64) - q.astype(np.float64)
            d = np.hypot(e[:, 0], e[:, 1])
            reach = np.float64(r[i]) + r.astype(np.float64)
            depth = 0.5 * (reach * 1.001 - d)
            corr = np.zeros(2)
            overlapping = np.flatnonzero((d < reach) & (np.arange(n) != i))
            for j in overlapping:
                if d[j] > 0:
                    corr += e[j] / d[j] * depth[j]
                else:  # coincident: along the difference of the pair's golden-angle rays
                    u = np.array(
                        [
                            np.cos(GOLDEN * i) - np.cos(GOLDEN * j),
                            np.sin(GOLDEN * i) - np.sin(GOLDEN * j),
                        ]
                    )
                    corr += u / np.hypot(u[0], u[1]) * depth[j]
            if corr.any():
                cap = max(2.0 * np.float64(r[i]), depth[overlapping].max()) * np.sqrt(
                    len(overlapping)
                )
                norm = np.hypot(corr[0], corr[1])
                if norm > cap:
                    corr *= cap / norm
                p[i] = q[i] + corr.astype(np.float32)
    return p


@pytest.mark.parametrize("spread", [0.0, 1.0])
def test_push_apart_does_not_fling_a_pile(spread):
    # 2000 bodies on one point (or within 1 m). Summed, the half-overlaps flung a pile of
    # 8000 over 2.4 km in one step; a pass now moves an agent at most its diameter (its
    # deepest single push is smaller) times the square root of how many it overlaps.
    rng = np.random.default_rng(0)
    n, r, passes = 2000, 0.3, 8
    p = rng.uniform(0, spread, (n, 2)).astype(np.float32)
    a = cs.Agents(n, slots=8)
    a.add(p, radius=r)
    sim = cs.Simulation(None, a, [cs.Forward(weight=0.0)], push_passes=passes)
    sim.step(1 / 30)
    moved = np.hypot(*(np.asarray(a.position) - p).T)
    assert np.isfinite(moved).all()
    assert moved.max() <= passes * 2 * r * np.sqrt(n - 1) * (1 + 1e-5)
    # the old sum moved the pile's ends by about n·r a pass (600 m here)
    assert moved.max() < 0.2 * n * r
    assert moved.max() > 2 * r  # and it does spread


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 24),
    seed=st.integers(0, 2**31 - 1),
    passes=st.integers(1, 12),
    box=st.floats(0.5, 4.0),
)
def test_push_apart_passes_match_the_numpy_oracle(n, seed, passes, box):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, box, (n, 2)).astype(np.float32)
    r = rng.uniform(0.2, 0.6, n).astype(np.float32)
    a = cs.Agents(n, slots=8)
    a.add(p, radius=r)
    sim = cs.Simulation(None, a, [cs.Forward(weight=0.0)], push_passes=passes)
    sim.step(0.1)
    np.testing.assert_allclose(a.position, push_apart_oracle(p, r, passes), rtol=0, atol=2e-5)


def test_push_apart_passes_are_bit_identical_for_any_thread_count():
    # A packed block of 1200 (0.5 m apart, 0.6 m wide): every step starts with hundreds of
    # overlapping agents, so the later passes run, split across the threads.
    def go(threads):
        rng = np.random.default_rng(11)
        g = np.stack(np.meshgrid(np.arange(40), np.arange(30)), -1).reshape(-1, 2)
        a = cs.Agents(len(g), slots=16)
        a.add(g * 0.5 + rng.uniform(-0.05, 0.05, g.shape) - 10, radius=0.3, max_speed=1.5)
        a.target[:] = [20, 20]
        sim = cs.Simulation(room(with_inner=False), a, steering(), motion=cs.Accel())
        with cs.threads(threads):
            sim.step(0.05, steps=20)
        assert int(np.asarray(sim.overlaps).sum()) > 20 * 300
        return state_hash(a, sim)

    assert go(1) == go(2) == go(4)


def test_dead_agents_do_not_move_and_do_not_collide():
    a = crowd(6)
    a.remove([2])
    before = a.position[2].copy()
    sim = cs.Simulation(room(), a, steering())
    sim.step(0.1, steps=5)
    np.testing.assert_array_equal(a.position[2], before)
    assert sim.overlaps[2] == 0 and sim.chosen_slot[2] == -1


def test_world_edits_are_picked_up():
    world = cs.World()
    a = cs.Agents(1, slots=8)
    a.add([0, 0], velocity=[2, 0], radius=0.5, max_speed=2, target=[100, 0])
    sim = cs.Simulation(world, a, [cs.Seek()], motion=cs.Lerp(steer_force=1.0))
    sim.step(0.5, steps=2)
    world.add_segments([[3.0, -5, 3.0, 5]])
    sim.step(0.5, steps=10)
    assert a.position[0, 0] <= 2.5 + 1e-3 and sim.wall_contacts[0] > 0


# ----------------------------------------------------- time slicing, stuck ---


def test_time_slicing_staggers_decisions():
    k = 3
    a = crowd(9, seed=1)
    sim = cs.Simulation(None, a, [cs.Seek(), cs.Wander()], decision_interval=k)
    sim.step(0.1)
    for step in range(1, 7):
        slot_before = sim.chosen_direction.copy()
        a.target[...] = np.random.default_rng(step).uniform(-50, 50, (9, 2))
        sim.step(0.1)
        changed = (sim.chosen_direction != slot_before).any(axis=1)
        deciding = (step + np.arange(9)) % k == 0
        assert not changed[~deciding].any()
        assert changed[deciding].all()


def test_stuck_agents_are_flagged():
    world = cs.World()
    world.add_polyline([[5, -10], [5, 5], [-5, 5]])  # a corner in the way
    a = cs.Agents(2, slots=16)
    a.add([[0, 0], [0, -20]], radius=0.5, max_speed=2.0, target=[[30, 30], [-30, -20]])
    sim = cs.Simulation(
        world, a, [cs.Seek()], motion=cs.Lerp(steer_force=0.5), stuck_distance=0.2, stuck_time=1.0
    )
    sim.step(0.1, steps=60)
    assert sim.stuck.tolist() == [True, False]
    assert sim.still_time[0] >= 1.0 and sim.still_time[1] == 0.0


# ------------------------------------------------------------------ no NaN ---


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 40),
    k=st.integers(3, 24),
    seed=st.integers(0, 2**32 - 1),
    resolve=st.sampled_from(cs.RESOLVE_MODES),
    choose=st.sampled_from(cs.CHOOSE_MODES),
    combine=st.sampled_from(cs.STEERING_COMBINE_MODES),
    motion=st.sampled_from(["lerp", "accel", "vehicle"]),
    dt=st.floats(1e-3, 2.0),
    interval=st.integers(1, 4),
    rotate=st.booleans(),
    blend=st.one_of(st.none(), st.floats(0, 1)),
    push=st.booleans(),
)
def test_never_nan(n, k, seed, resolve, choose, combine, motion, dt, interval, rotate, blend, push):
    rng = np.random.default_rng(seed)
    a = cs.Agents(n, slots=k, seed=seed)
    a.add(
        rng.uniform(-29, 29, (n, 2)),
        velocity=rng.normal(0, 5, (n, 2)),
        radius=rng.uniform(0, 2, n),
        max_speed=rng.uniform(0, 20, n),
        max_accel=rng.uniform(0, 50, n),
        max_turn_rate=rng.uniform(0, 10, n),
        steer_force=rng.uniform(0, 1, n),
        target=rng.uniform(-40, 40, (n, 2)),
        heading=rng.uniform(-4, 4, n),
    )
    a.position[: n // 3] = a.position[0]  # coincident agents
    model = {"lerp": cs.Lerp(), "accel": cs.Accel(), "vehicle": cs.Vehicle()}[motion]
    path = cs.Path([[-20, -20], [20, -20], [0, 20]], closed=True)
    s = cs.Steering(
        [
            cs.Seek(),
            cs.FollowPath(path, look_ahead=3),
            cs.Flee([[0, 0]], max_distance=5),
            cs.Separation(radius=3),
            cs.Cohesion(radius=4),
            cs.Alignment(radius=4),
            cs.WallDanger(look_ahead=4, falloff="quadratic", spread=1),
            cs.AgentDanger(radius=2, predictive=True),
            cs.Arrive(slowing_radius=5),
        ],
        combine=combine,
        resolve=resolve,
        choose=choose,
        rotate=rotate,
        blend=blend,
        epsilon=0.1,
    )
    sim = cs.Simulation(room(), a, s, motion=model, push_apart=push, decision_interval=interval)
    sim.step(dt, steps=15)
    for x in (
        a.position,
        a.velocity,
        a.heading,
        sim.interest,
        sim.danger,
        sim.resolved,
        sim.chosen_direction,
        sim.strength,
    ):
        assert np.isfinite(x).all()


def test_layers_select_the_walls_agents_collide_with():
    world = cs.World()
    world.add_segments([[3.0, -5, 3.0, 5]], layers=0b10)
    for layers, blocked in ((0b10, True), (0b01, False)):
        a = cs.Agents(1, slots=8)
        a.add([0, 0], velocity=[2, 0], radius=0.5, max_speed=2, target=[100, 0])
        sim = cs.Simulation(world, a, [cs.Seek()], motion=cs.Lerp(steer_force=1.0), layers=layers)
        sim.step(0.5, steps=10)
        assert (a.position[0, 0] < 3.0) == blocked


def test_an_agent_sliding_along_a_wall_faces_its_slid_velocity():
    world = cs.World()
    world.add_segments([[-50, 0, 50, 0]])
    a = cs.Agents(1, slots=16)
    a.add([0, 0.6], radius=0.5, max_speed=2.0, target=[40, -40])
    sim = cs.Simulation(world, a, [cs.Seek()], motion=cs.Lerp(steer_force=1.0))
    sim.step(0.1, steps=20)
    assert sim.wall_contacts[0] > 0
    assert a.position[0, 1] >= 0.5 - 1e-3 and a.position[0, 0] > 1.0
    assert abs(float(a.heading[0])) < 1e-3  # along +x, not into the wall
    assert abs(float(a.velocity[0, 1])) < 1e-3


def test_braking_flag_follows_frays_brake_rule():
    # Vehicle: a car whose chosen direction is more than brake_angle off its heading brakes
    # (the flag is set and its target speed drops to brake_speed·max_speed); others do not.
    # Lerp and Accel never brake.
    def run(motion, steps=1):
        agents = cs.Agents(3, slots=16)
        agents.add(
            [[0, 0], [0, 10], [0, 20]],
            heading=0.0,
            velocity=[[2, 0]] * 3,
            max_speed=4,
            max_accel=8,
            max_turn_rate=0.5,
            target=[[10, 0], [-10, 10], [1, 30]],
        )
        sim = cs.Simulation(None, agents, cs.Steering([cs.Seek()], choose="argmax"), motion=motion)
        sim.step(0.1, steps=steps)
        return sim, agents

    sim, agents = run(cs.Vehicle(brake_angle=np.pi / 2, brake_speed=0.1))
    # targets: ahead (0 rad off), behind (pi off), up-left (~1.47 rad off, under pi/2)
    np.testing.assert_array_equal(sim.braking, [False, True, False])
    speed = np.hypot(*agents.velocity.T)
    assert speed[1] < 2 - 0.5 and speed[0] > 2  # braking: slowing towards 0.4; others speed up
    # The flag is exactly "chosen direction more than brake_angle off the heading before the
    # move", step after step (the braking car turns at 0.5 rad/s, so it stays behind).
    for _ in range(5):
        h0 = agents.heading.copy()
        sim.step(0.1)
        off = np.abs(
            (np.arctan2(sim.chosen_direction[:, 1], sim.chosen_direction[:, 0]) - h0 + np.pi)
            % (2 * np.pi)
            - np.pi
        )
        np.testing.assert_array_equal(sim.braking, off > np.pi / 2)
        assert sim.braking[1]
    with pytest.raises(ValueError):
        sim.braking[0] = True  # read-only
    for motion in (cs.Lerp(steer_force=0.5), cs.Accel()):
        sim, _ = run(motion, steps=3)
        assert not sim.braking.any()


def test_deprecated_seed_and_resolve_and_move_warn_and_change_nothing():
    """Simulation(seed=) never drew anything: it warns and leaves the run bit-identical;
    resolve_and_move is a warning alias of decide_and_move."""

    def run(**kw):
        a = crowd(6)
        sim = cs.Simulation(None, a, [cs.Seek(), cs.Wander(seed=3)], **kw)
        sim.step(0.1, steps=5)
        sim.perceive()
        sim.decide_and_move(0.1)
        return sim, a.position.copy()

    _, ref = run()
    with pytest.warns(DeprecationWarning, match="seed"):
        sim, pos = run(seed=12345)
    np.testing.assert_array_equal(pos, ref)
    with pytest.warns(DeprecationWarning, match="decide_and_move"):
        sim.resolve_and_move(0.1)
    assert sim.step_count == 7


@pytest.mark.parametrize("corridor", [False, True])
def test_a_pile_on_one_point_spreads_into_a_disc_and_separates(corridor):
    """Coincident pairs were pushed apart along ±x only: a pile became a line (no y extent)
    and, where a corridor blocked x, stayed stacked for good (fuzz round 9). Each pair now
    parts along the difference of its agents' golden-angle directions."""
    n = 10
    w = None
    if corridor:
        w = cs.World()
        w.add_segments([[-0.5, -50, -0.5, 50], [0.5, -50, 0.5, 50]])  # 1 m wide
    a = cs.Agents(n, slots=8)
    a.add(np.zeros((n, 2)), radius=0.3, max_speed=0.0)
    sim = cs.Simulation(w, a, [cs.Seek()], motion=cs.Lerp(), push_apart=True, push_passes=64)
    sim.step(1 / 30, 300)
    p = a.position.astype(np.float64)
    gap = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1))
    np.fill_diagonal(gap, np.inf)
    assert gap.min() >= 0.6 - 1e-3  # no two overlap (beyond float32 rounding)
    assert np.ptp(p[:, 1]) > 1.0
