"""Navigation and paths where a fuzz run found them wrong: rows of nodes inside a polygon
left unblocked by a rounding of the scanline, grids read after a rebuild had freed them,
and smoothed paths that divided 0 by 0. Oracles: the world's own `cs.inside`, the grid as
first read, and the straight polyline."""

from __future__ import annotations

import math

import numpy as np
import pytest

import contextsteer as cs


def box_room() -> cs.World:
    world = cs.World()
    world.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
    world.add_box(center=(0, 0), half_extents=(3, 3))
    return world


@pytest.mark.parametrize("cell", [0.19, 0.2, 0.21, 0.23, 0.27, 0.31, 0.37])
def test_every_node_inside_a_polygon_is_blocked(cell):
    world = box_room()
    field = cs.NavField(world, [8.0, 8.0], cell=cell, radius=0.3)
    x0, y0, c, nx, ny = field.grid
    xs, ys = np.meshgrid(x0 + np.arange(nx) * c, y0 + np.arange(ny) * c)
    nodes = np.c_[xs.ravel(), ys.ravel()].astype(np.float32)
    inside = cs.inside(world, nodes).reshape(ny, nx)
    assert inside.sum() > 100
    assert not (inside & ~field.blocked).any()
    # An agent pushed into the box is led out, as blocked nodes promise.
    q = field.query([[0.0, 0.5]])
    assert np.isfinite(q.distance[0]) and np.hypot(*q.direction[0]) == pytest.approx(1, abs=1e-5)


def test_distance_and_descent_grids_are_copies_that_a_rebuild_leaves_alone():
    world = cs.World()
    world.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
    field = cs.NavField(world, [8.0, 8.0], cell=0.1, radius=0.3)
    d, g = field.distances(), field.descents()
    first_d, first_g = d.copy(), g.copy()
    assert not d.flags.writeable and not g.flags.writeable
    world.add_segments([[-30, 0, 30, 0]])  # grows the bounds: the rebuild reallocates
    field.query([[0.0, 0.0]])
    junk = [np.full(d.shape, 12345.0, np.float32) for _ in range(20)]
    np.testing.assert_array_equal(d, first_d)
    np.testing.assert_array_equal(g, first_g)
    assert field.distances().shape != d.shape and junk


@pytest.mark.parametrize(
    "points",
    [[[0, 1], [0, 0], [0, 1.1754944e-38]], [[-100, 0], [0, 0], [1e-30, 0], [100, 0]]],
)
def test_a_smoothed_path_with_a_vanishing_step_stays_finite(points):
    straight = cs.Path(points)
    smooth = cs.Path(points, smooth=True, samples_per_segment=4)
    assert np.isfinite(smooth.points).all()
    assert smooth.length == pytest.approx(straight.length, rel=1e-6)
    assert np.isfinite(smooth.point_at(0.5)).all()


def descent_trail(field, p, look_ahead):
    """The trail pulled_direction_at follows: steps of one cell along the descent."""
    cell = np.float32(field.grid[2])
    q, trail = p.copy(), []
    for _ in range(min(64, int(np.ceil(np.float32(look_ahead) / cell)))):
        d = field.query([q]).direction[0]
        if not d.any():
            break
        q = (q + d * cell).astype(np.float32)
        trail.append(q)
    return trail


def test_pulled_directions_never_aim_through_a_wall():
    # Oracle: the world's own ray cast from the agent to the trail point it aims at (the
    # nearest trail point in that direction). Agents 1.5 cells clear of the inflated band;
    # closer ones may be led by the grid's descent itself, which is the field's resolution.
    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        world = cs.World()
        world.add_polyline([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
        for _ in range(rng.integers(1, 6)):
            a = rng.uniform(0, 10, 2)
            world.add_segments([[*a, *(a + rng.uniform(-5, 5, 2))]])
        cell = float(rng.choice([0.1, 0.2, 0.3]))
        look_ahead = float(rng.choice([1.0, 2.0, 3.0]))
        field = cs.NavField(
            world, rng.uniform(0.5, 9.5, 2), cell=cell, radius=float(rng.choice([0.0, 0.1, 0.3]))
        )
        pts = rng.uniform(0.2, 9.8, (60, 2)).astype(np.float32)
        pts = pts[cs.nearest(world, pts, 5).distance > field.blocking_radius + 1.5 * cell]
        for p, u in zip(pts, field.direction(pts, look_ahead=look_ahead)):
            for t in descent_trail(field, p, look_ahead):
                v = t - p
                length = float(np.hypot(*v))
                if length > 1e-6 and np.abs(v / length - u).max() < 1e-4:
                    assert not cs.raycast(world, [p], [v / length], length).hit[0], (seed, p, t)
                    checked += 1
                    break
    assert checked > 1000


def test_the_oblique_wall_the_fuzz_run_found():
    world = cs.World()
    world.add_polyline([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
    world.add_segments([[6.485472, 6.96216, 4.4126797, 1.9770608]])
    field = cs.NavField(world, [3.185611, 3.325874], cell=0.1, radius=0.0)
    agent = np.float32([[5.5254793, 2.1022372]])
    u = field.direction(agent, look_ahead=3.0)
    for t in descent_trail(field, agent[0], 3.0):
        v = t - agent[0]
        length = float(np.hypot(*v))
        if np.abs(v / length - u[0]).max() < 1e-4:
            assert not cs.raycast(world, agent, [v / length], length).hit[0]
            break
    else:
        pytest.fail("the pulled direction aims at no trail point")


def test_a_route_does_not_depend_on_where_the_scene_sits():
    from contextsteer.scenarios import maze_walls

    walls = maze_walls(5, 2.0, seed=3)
    start, goal = np.float32([1.0, 1.0]), np.float32([9.0, 9.0])
    lengths = []
    for offset in (0.0, 1e3, 1e4, 1e5):
        world = cs.World()
        world.add_segments(walls + offset)
        (path,) = cs.route(world, [start + offset], [goal + offset], radius=0.3)
        lengths.append(path.length)
    # The shortest path is about 13.4 m; the corners sit 8 float32 ulps farther out at 1e5.
    assert max(lengths) / min(lengths) < 1.01, lengths


@pytest.mark.parametrize("radius", [0.3, 0.0])
def test_a_route_does_not_depend_on_the_scenes_units(radius):
    """The corners' margin was 1e-4 of max(1, extent): in a room of 20e-6 units it put
    every corner outside, and no route was found (fuzz round 19)."""
    room = np.array([[-10, -10], [10, -10], [10, 10], [-10, 10]], dtype=float)
    lengths = []
    for s in (1.0, 1e-2, 1e-4, 1e-6, 1e-7):
        world = cs.World()
        world.add_polyline(s * room, closed=True)
        world.add_segments(s * np.array([[0.0, -10.0, 0.0, 5.0]]))
        (path,) = cs.route(world, [[-5 * s, 0.0]], [[5 * s, 0.0]], radius=radius * s)
        assert path is not None, s
        lengths.append(path.length / s)
    # Around the wall's end: 2·hypot(5, 5) = 14.14 with radius 0, 14.64 round 0.3.
    assert max(lengths) / min(lengths) < 1.001, lengths


def test_a_route_in_a_scene_below_what_nearest_resolves_never_crosses_a_wall():
    """Below 1e-19 units a leg's length squared underflowed float32 and any leg read as
    clear: a straight route through the wall at 1e-25 (fuzz round 20). Below what nearest
    resolves (1e-12 near the origin) there is no route, never a wrong one."""
    room = np.array([[-10, -10], [10, -10], [10, 10], [-10, 10]], dtype=float)
    for s in (1e-9, 1e-12, 1e-20, 1e-25, 1e-30):
        world = cs.World()
        world.add_polyline(s * room, closed=True)
        world.add_segments(s * np.array([[0.0, -10.0, 0.0, 5.0]]))
        (path,) = cs.route(world, [[-5 * s, 0.0]], [[5 * s, 0.0]], radius=0.0)
        if s == 1e-9:
            assert path is not None and path.length / s == pytest.approx(14.144, abs=0.01)
        if path is None:
            continue
        pts = np.asarray(path.points, np.float32)
        d = pts[1:] - pts[:-1]
        lengths = np.linalg.norm(d.astype(np.float64), axis=1).astype(np.float32)
        assert not cs.raycast(world, pts[:-1], d, lengths).hit.any(), s


def test_routes_of_radius_zero_do_not_touch_wall_ends():
    world = cs.World()
    world.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
    world.add_segments([[-5.3651977, 0.68788457, 1.749847, -2.0161424]])
    (path,) = cs.route(world, [[-2.8740013, -9.006613]], [[-1.6499422, 7.0550485]], radius=0.0)
    pts = path.points
    for a, b in zip(pts[:-1], pts[1:]):
        length = float(np.hypot(*(b - a)))
        assert not cs.raycast(world, [a], [(b - a) / length], length).hit[0]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda w, f: cs.NavField(w, [3, 0], cell=1e39),
            ValueError,
            r"cell must be a finite number > 0 and at most 1e8",
        ),
        (lambda w, f: cs.NavField(w, [3, 0], cell=1e-46), ValueError, "float32"),
        (lambda w, f: cs.NavField(w, [1e7, 0], cell=0.1), ValueError, r"6.3e\+09 nodes"),
        # the documented ±1e8 range (they were checked against 2^60 only)
        (lambda w, f: cs.NavField(w, [1e17, 0], cell=0.1), ValueError, r"goal: .* ±1e\+08"),
        (lambda w, f: cs.NavField(w, [np.inf, 0]), ValueError, r"goal: .* ±1e\+08, got inf"),
        (lambda w, f: cs.NavField(w, [3, 0], radius=1e9), ValueError, "radius must be"),
        (lambda w, f: cs.NavField(w, [3, 0], margin=np.inf), ValueError, "margin must be"),
        (lambda w, f: f.query([[1e9, 1]]), ValueError, r"points: .* ±1e\+08"),
        (lambda w, f: cs.route(w, [[-1e9, 0]], [3, 0]), ValueError, r"starts: .* ±1e\+08"),
        (lambda w, f: cs.route(w, [[-3, 0]], [3, 0], radius=1e9), ValueError, "radius must be"),
        # shapes named, not NumPy's broadcast message
        (lambda w, f: f.query([[1, 1], [2, 2]], which=[0, 0, 0]), ValueError, "which: expected"),
        (lambda w, f: cs.route(w, [[-3, 0], [-2, 0]], [[3, 0]] * 3), ValueError, "goals: expected"),
        (lambda w, f: f.query([[1, 1]], which=5), ValueError, r"\[0, 1\), got 5"),
        (lambda w, f: f.query([[1, 1]], which=0.9), TypeError, "integer field indexes"),
        (lambda w, f: f.query([[1, 1]], which=np.array([2**32])), ValueError, "4294967296"),
        (lambda w, f: cs.NavField(w, [3, 0], cell=0.1, layers=-1), ValueError, "32-bit mask"),
        (lambda w, f: cs.route(w, [[-3, 0]], [3, 0], layers=-1), ValueError, "32-bit mask"),
        (lambda w, f: cs.route(w, [[-3, 0]], [3, 0], arc_points=10**5), ValueError, r"\[4, 256\]"),
        (lambda w, f: cs.route(w, [[-3, 0]], [3, 0], arc_points=2.5), TypeError, "arc_points"),
        (lambda w, f: cs.Path([[0, 0], [1, 0]], samples_per_segment=2**31 - 1), ValueError, "4096"),
    ],
)
def test_navigation_inputs_are_checked(call, error, match):
    world = cs.World()
    world.add_segments([[0, -2, 0, 2]])
    field = cs.NavField(world, [3, 0], cell=0.1)
    with pytest.raises(error, match=match):
        call(world, field)


@pytest.mark.parametrize(
    "cell, radius, goal",
    [(0.5, 0.3, (0.4, -2.0)), (0.3, 0.3, (0.4, -2.0)), (0.1, 0.0, (0.08, -2.0))],
)
def test_a_goal_beside_a_thin_wall_is_not_seen_through_it(cell, radius, goal):
    """The seeds near a goal took their straight-line distance whatever lay between: with
    a cell coarser than about radius/1.5, or radius 0, the whole far side of a thin wall
    got it (3.4 where the way round is 11.4) and agents walked into the wall. Oracle: the
    only way is over the wall's top, so the distance is at least the two legs to it."""
    world = cs.World()
    world.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    world.add_segments([[0, -5, 0, 3]])
    field = cs.NavField(world, np.array(goal), cell=cell, radius=radius)
    points = np.array([[-3.0, -2.0], [-1.0, -2.0], [-0.5, -4.0]])
    top = np.array([0.0, 3.0 + radius])
    bound = np.hypot(*(points - top).T) + np.hypot(*(np.array(goal) - top))
    got = field.query(points).distance
    assert np.all(got >= bound - 0.05), (got, bound)
    assert np.all(got <= bound + 3 * cell + 0.5)  # and not unreachable: round the top


def test_goal_sets_that_would_not_fit_in_memory_are_refused_before_allocating(monkeypatch):
    # Only the grid size was checked: 3,000 goal sets on a 0.05 m grid of a 100 m wall
    # asked for 29 GiB and got a bare bad_alloc, or the OOM killer. A node holds a blocked,
    # a sight and a wall-cell byte and the build's scratch (14 bytes), then a float
    # distance and a 2-float descent per set: with G sets, nodes * (17 + 12 G) bytes.
    from contextsteer import maps

    world = cs.World()
    world.add_segments([[0, 0, 20, 0]])
    grid = cs.NavField(world, [np.array([1.0, 1.0])], cell=0.1)._core.grid
    nodes = grid[3] * grid[4]
    # (and 28 bytes for each of the wall's cell-list entries, three a cell it crosses)
    walls = 28 * 3 * (20 / 0.1 + 2)
    budget = nodes * (17 + 12 * 6) + walls  # six sets fit exactly, seven do not
    monkeypatch.setattr(maps, "_physical_memory", lambda: budget)
    six = cs.NavField(world, [np.array([1.0 + k, 1.0]) for k in range(6)], cell=0.1)
    assert six._core.count == 6
    with pytest.raises(MemoryError, match=r"NavField: 7 goal set\(s\) on a grid of .* GiB"):
        cs.NavField(world, [np.array([1.0 + k, 1.0]) for k in range(7)], cell=0.1)
    # A rebuild after the world changed is checked too.
    monkeypatch.setattr(maps, "_physical_memory", lambda: budget - 1)
    world.add_segments([[0, 5, 20, 5]])
    with pytest.raises(MemoryError, match="NavField: 6 goal set"):
        six.distance(np.array([[2.0, 2.0]]), which=np.array([0]))


# ------------------------------------------------- big graphs and fields, and Ctrl-C ---


def _sparse_circles(n: int) -> cs.World:
    world = cs.World()
    world.add_circles(np.random.default_rng(0).uniform(0, 1000, (n, 2)), 0.05)
    return world


def test_route_refuses_a_graph_beyond_its_corner_budget():
    # 800 circles of 24 corners each: 19,194 corners, 1.8e8 pairs to test (minutes, and
    # gigabytes of edges in an open field where every corner sees every other).
    with pytest.raises(ValueError, match=r"19194 corners, more than 16384"):
        cs.route(_sparse_circles(800), [[1, 1]], [[999, 999]])


def _interrupted(call):
    """Runs ``call`` with a simulated Ctrl-C 0.2 s in: a KeyboardInterrupt, and nothing
    left half-built. (That the C++ build stops at the request, rather than finishing
    first, tests/cpp/test_navigation.cpp checks with a stop callback.)"""
    import _thread
    import signal
    import threading

    # A shell's background job starts with SIGINT ignored; interrupt_main then does
    # nothing, and the call would run whole. Put Python's own handler back for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_interrupts_a_route_graph_build():
    world = _sparse_circles(300)  # about 4 s of pair tests on this machine
    _interrupted(lambda: cs.route(world, [[1, 1]], [[999, 999]]))
    # and the next call runs whole
    (path,) = cs.route(_sparse_circles(5), [[1, 1]], [[999, 999]])
    assert path is not None


def test_ctrl_c_interrupts_a_nav_field_build():
    world = cs.World()
    world.add_segments([[0, 0, 3000, 0]])
    # 4,000 x 4,000 nodes: seconds of fast marching
    build = lambda: cs.NavField(world, [[2500.0, 1000.0]], cell=0.75, radius=0.0)  # noqa: E731
    _interrupted(build)
    field = cs.NavField(world, [[2500.0, 1000.0]], cell=5.0, radius=0.0)
    assert field.distance([[2500.0, 1000.0]])[0] < 5.0


def test_inside_over_a_huge_polygon_is_sliced_and_exact():
    # 40,000 vertices on a circle of radius 10: the points come in slices of 512 (about
    # 2^24 vertex visits each); the answer is the analytic one away from the rim.
    t = np.linspace(0, 2 * np.pi, 40_000, endpoint=False)
    world = cs.World()
    world.add_polygon(np.c_[10 * np.cos(t), 10 * np.sin(t)])
    p = np.random.default_rng(0).uniform(-12, 12, (2000, 2))
    rim = np.abs(np.hypot(*p.T) - 10) < 1e-3
    got = cs.inside(world, p)
    np.testing.assert_array_equal(got[~rim], (np.hypot(*p.T) < 10)[~rim])


def test_ctrl_c_interrupts_inside_over_a_huge_polygon():
    t = np.linspace(0, 2 * np.pi, 300_000, endpoint=False)
    world = cs.World()
    world.add_polygon(np.c_[10 * np.cos(t), 10 * np.sin(t)])
    points = np.random.default_rng(0).uniform(-9, 9, (100_000, 2))  # about a minute whole
    _interrupted(lambda: cs.inside(world, points))
    assert cs.inside(world, [[0.0, 0.0], [11.0, 0.0]]).tolist() == [True, False]


@pytest.mark.parametrize("cell", [0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.32, 0.4, 0.5, 0.6])
def test_a_goal_in_the_band_along_a_wall_is_reached_from_the_room_at_every_cell(cell):
    """A goal within the body radius of a closed room's wall (in the inflated band) had its
    nearest free grid node on the wall's far side for some cells, as the grid lines fell:
    the room's seeds, not connected to it, were dropped and the whole room read inf (11 of
    27 cells for a goal 0.1 m from a corner; fuzz round 8). The room is convex and the goal
    in it, so the oracle is the straight line, to within a cell or two of the march."""
    world = cs.World()
    world.add_polyline([[0, 0], [20, 0], [20, 20], [0, 20]], closed=True)
    for goal in ([19.95, 19.95], [19.9, 19.9], [10.3, 0.1], [0.05, 13.7], [0.1, 0.05]):
        field = cs.NavField(world, goal, cell=cell, radius=0.3, share=False)
        d = float(field.distance([10.0, 10.0]))
        assert abs(d - math.dist(goal, (10, 10))) <= max(2 * cell, 0.25), (goal, d)


def test_a_cached_field_whose_goals_were_set_anew_is_not_taken_for_its_old_goals():
    """Two threads calling set_goals at once could leave a cache entry under goals the
    field no longer had: a new NavField for those goals then got a field for others (inf
    at its own goal). A cached field is taken only when its goals are the ones asked."""
    world = cs.World()
    world.add_polyline([[0, 0], [50, 0], [50, 50], [0, 50]], closed=True)
    first = cs.NavField(world, [25.0, 25.0], cell=0.5)
    # The core's goals changed under the cache entry, as the race left it.
    first._core.set_goals([{"points": np.float32([[5.0, 45.0]])}], world._core)
    again = cs.NavField(world, [25.0, 25.0], cell=0.5)
    assert again._core is not first._core
    assert again.goals[0]["points"].tolist() == [[25.0, 25.0]]
    assert float(again.distance([25.0, 25.0])) < 0.5


def test_a_field_in_a_world_without_obstacles_is_the_straight_distance():
    """A World with no obstacle has no grid cells; the field's sight test read them anyway
    and the build segfaulted (fuzz round 12). Open space: the distance to the goal."""
    for goals in ([[8.0, 3.0]], [[8.0, 3.0], [-2.0, 0.0]]):
        field = cs.NavField(cs.World(), goals)
        p = np.array([[0.0, 3.0], [8.0, 3.0], [3.0, -4.0]])
        want = np.min(np.linalg.norm(p[:, None] - np.array(goals)[None], axis=2), axis=1)
        np.testing.assert_allclose(field.distance(p), want, atol=0.05)


def test_sizes_are_checked_against_a_ulimit_below_the_machines_memory():
    """The check read the machine's RAM alone: under `ulimit -v` 2.5 GB, 60 goal sets on a
    4-million-node grid passed it and marched until std::bad_alloc (fuzz round 19)."""
    resource = pytest.importorskip("resource")
    import os
    import subprocess
    import sys

    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("AddressSanitizer (tools/sanitize-pytest) needs more address space")

    code = (
        "import numpy as np, contextsteer as cs\n"
        "from contextsteer.maps import _physical_memory, _memory_text\n"
        "assert _physical_memory() <= 2_560_000_000, _physical_memory()\n"
        "assert 'ulimit -v' in _memory_text(), _memory_text()\n"
        "w = cs.World(); w.add_polyline([[0, 0], [200, 0], [200, 200], [0, 200]], closed=True)\n"
        "try:\n"
        "    cs.NavField(w, [np.array([10.0 + i, 10.0]) for i in range(60)], cell=0.1)\n"
        "except MemoryError as e:\n"
        "    assert 'this process may use' in str(e), e\n"
        "    print('refused')\n"
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2_560_000_000, 2_560_000_000))

    done = subprocess.run(
        [sys.executable, "-c", code], preexec_fn=limit, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "refused", done.stderr[-2000:]


def test_a_cgroups_file_cache_is_not_counted_as_taken(monkeypatch):
    """The cgroup bound subtracted memory.usage_in_bytes, file cache included: a container
    that had read 7.5 GiB of files refused an Agents of 0.06 GiB (fuzz round 22). Fake
    cgroup v1 and v2 files."""
    from contextsteer import maps

    real = maps._read
    gib = 2**30
    for fake in (
        {
            "/proc/self/cgroup": "4:memory:/job\n",
            "/sys/fs/cgroup/memory/job/memory.limit_in_bytes": f"{8 * gib}\n",
            "/sys/fs/cgroup/memory/job/memory.usage_in_bytes": f"{int(7.95 * gib)}\n",
            "/sys/fs/cgroup/memory/job/memory.stat": f"cache {int(7.5 * gib)}\n"
            f"total_inactive_file {int(7.4 * gib)}\n",
        },
        {
            "/proc/self/cgroup": "0::/job\n",
            "/sys/fs/cgroup/job/memory.max": f"{8 * gib}\n",
            "/sys/fs/cgroup/job/memory.current": f"{int(7.95 * gib)}\n",
            "/sys/fs/cgroup/job/memory.stat": f"file {int(7.5 * gib)}\ninactive_file {int(7.4 * gib)}\n",
        },
    ):
        monkeypatch.setattr(maps, "_read", lambda p, fake=fake: fake.get(p, real(p)))
        size, name = min(maps._memory_limits())
        assert "cgroup" in name and size == pytest.approx(7.45 * gib, rel=1e-3)
        cs.Agents(1_000_000)  # 0.06 GiB: fits
