"""Doors that open and close: World.set_layers, and agents a closing wall cuts through."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import contextsteer as cs

ALL = 0xFFFFFFFF


def room_with_door():
    # A 12 x 10 room split at y = 5, with a door x in [4.5, 5.5] and a gap x in [10, 12].
    w = cs.World()
    w.add_polyline([[0, 0], [12, 0], [12, 10], [0, 10]], closed=True)
    w.add_segments([[0, 5, 4.5, 5], [5.5, 5, 10, 5]])
    door = int(w.add_segments([[4.5, 5, 5.5, 5]])[0])
    return w, door


def test_a_hidden_obstacle_is_gone_from_every_query_and_comes_back():
    w, door = room_with_door()
    box = w.add_box((2.0, 2.0), (0.5, 0.5))
    ray = lambda: cs.raycast(w, [[5.0, 4.0]], [[0.0, 1.0]], 3.0)  # noqa: E731
    assert ray().obstacle[0] == door
    w.set_layers([door, box], 0)
    assert w.obstacle_layers.tolist()[door] == 0 and w.obstacle_layers[box] == 0
    assert not ray().hit[0]
    assert not cs.inside(w, [[2.0, 2.0]])[0]
    assert np.isinf(cs.nearest(w, [[5.0, 5.2]], 0.5).distance[0]) or (
        cs.nearest(w, [[5.0, 5.2]], 0.5).obstacle[0] != door
    )
    # Thick rays and slot rays (the strip index) see the edit too.
    assert not cs.raycast(w, [[5.0, 4.0]], [[0.0, 1.0]], 3.0, radius=0.3).hit[0]
    w.set_layers(door, ALL)
    w.set_layers(box, 2)
    assert ray().obstacle[0] == door and ray().distance[0] == pytest.approx(1.0)
    assert cs.inside(w, [[2.0, 2.0]], layers=2)[0] and not cs.inside(w, [[2.0, 2.0]], layers=1)[0]
    # The geometry and the ids did not move.
    assert w.segment_count == 4 + 2 + 1 + 4 and w.obstacle_count == 5


def test_a_navigation_field_follows_the_door():
    w, door = room_with_door()
    field = cs.NavField(w, [5.0, 8.0], cell=0.1, radius=0.3)
    below = [[5.0, 2.0]]
    closed = float(field.distance(below)[0])
    assert closed > 12.0  # round by the gap at x in [10, 12]
    w.set_layers(door, 0)
    assert float(field.distance(below)[0]) == pytest.approx(6.0, abs=0.05)  # through it
    np.testing.assert_allclose(field.direction(below)[0], [0.0, 1.0], atol=1e-3)
    w.set_layers(door, ALL)
    assert float(field.distance(below)[0]) == closed


def test_set_layers_survives_pickle_and_deepcopy():
    w, door = room_with_door()
    w.set_layers(door, 0)
    for back in (pickle.loads(pickle.dumps(w)), copy.deepcopy(w)):
        np.testing.assert_array_equal(back.obstacle_layers, w.obstacle_layers)
        assert not cs.raycast(back, [[5.0, 4.0]], [[0.0, 1.0]], 3.0).hit[0]


def test_set_layers_rejects_bad_ids_and_masks():
    w, door = room_with_door()
    with pytest.raises(ValueError, match=r"obstacle id 9 is not in \[0, 4\)"):
        w.set_layers([door, 9], 0)
    with pytest.raises(ValueError, match="obstacle id -1"):
        w.set_layers(-1, 0)
    with pytest.raises(TypeError, match="integer obstacle ids"):
        w.set_layers([1.0], 0)
    with pytest.raises(TypeError, match="integer obstacle ids"):
        w.set_layers([True], 0)
    with pytest.raises(ValueError, match="32-bit mask"):
        w.set_layers(door, 2**32)
    assert w.obstacle_layers.tolist() == [ALL, ALL, ALL, ALL]  # nothing half-applied


def _follower(w, start, goal):
    agents = cs.Agents(1, slots=16)
    agents.add([start], velocity=[[0.0, 1.0]], radius=0.4, max_speed=2.0)
    field = cs.NavField(w, goal, cell=0.1, radius=0.4)
    st = cs.Steering(
        [
            cs.FollowField(field, look_ahead=2.0),
            cs.WallDanger(look_ahead=1.2, falloff="linear", spread=1),
        ],
        resolve="subtract",
        choose="vector_sum",
    )
    return agents, cs.Simulation(w, agents, st, motion=cs.Lerp(steer_force=0.25))


@pytest.mark.parametrize("offset", [-0.2, -0.05, -0.01])
def test_a_door_closing_on_an_agent_pushes_it_out_to_its_own_side(offset):
    # The door closed while the agent's centre was `offset` below its line: the agent
    # overlapped the new wall by up to 0.39 m, every way out read as danger and, 0.01 m
    # off, the field beside the wall pointed through it: it stood in the door for 30 s.
    # Oracle: after the next step it is clear of every wall on its own side, and it then
    # walks round by the gap to the goal.
    w = cs.World()
    w.add_polyline([[0, 0], [12, 0], [12, 10], [0, 10]], closed=True)
    w.add_segments([[0, 5, 4.5, 5], [5.5, 5, 10, 5]])
    agents, sim = _follower(w, [5.0, 5.0 + offset], [5.0, 8.0])
    door = int(w.add_segments([[4.5, 5, 5.5, 5]])[0])  # the door shuts
    sim.step(1 / 30)
    clear = cs.nearest(w, agents.position, 1.0)
    assert clear.distance[0] >= 0.4 * 0.999, clear
    assert agents.position[0, 1] < 5.0
    sim.step(1 / 30, steps=30 * 30)
    assert np.hypot(*(agents.position[0] - [5.0, 8.0])) < 0.3
    del door


def test_push_out_acts_only_after_an_edit_and_leaves_others_alone():
    # Agents placed overlapping a wall by the user keep the documented rule (they may move
    # away or along it, never deeper); only a world edit pushes them out, and agents clear
    # of the walls do not move for it.
    w, door = room_with_door()
    agents = cs.Agents(2, slots=8)
    agents.add([[2.0, 5.1], [8.0, 2.0]], radius=0.3, max_speed=1.0)
    sim = cs.Simulation(w, agents, cs.Steering([cs.Wander()]), motion=cs.Lerp())
    sim.step(1 / 30)
    assert cs.nearest(w, agents.position[:1], 1.0).distance[0] < 0.3  # still overlapping
    w.set_layers(door, 0)  # an edit elsewhere: the overlapping agent is pushed out
    far = agents.position[1].copy()
    sim.perceive()
    assert cs.nearest(w, agents.position[:1], 1.0).distance[0] >= 0.3 * 0.999
    assert agents.position[0, 1] > 5.0  # its centre's side
    np.testing.assert_array_equal(agents.position[1], far)


def test_push_out_leaves_a_polygon_it_stood_in():
    w = cs.World()
    w.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
    agents = cs.Agents(1, slots=8)
    agents.add([[0.3, 0.0]], radius=0.3, max_speed=1.0)
    sim = cs.Simulation(w, agents, cs.Steering([cs.Wander()]), motion=cs.Lerp())
    sim.step(1 / 30)
    w.add_box((0.0, 0.0), (1.0, 1.0))  # a crate dropped on the agent
    sim.step(1 / 30)
    p = agents.position[0]
    assert not cs.inside(w, [p])[0]
    assert cs.nearest(w, [p], 1.0).distance[0] >= 0.3 * 0.999
    assert p[0] > 1.0  # out by the nearest side, +x


def test_slot_set_from_directions_normalises_near_unit_rows():
    dirs = np.array([[1.0009, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -0.9995]], np.float32)
    s = cs.SlotSet.from_directions(dirs)
    np.testing.assert_allclose(np.hypot(*s.directions.T), 1.0, atol=6e-8)
    m = cs.dot_map(s, [[1.0, 0.0]], shape="clamped_cosine")
    assert m.max() <= 1.0
    # Unit float32 rows (cos and sin of angles) are kept bit for bit.
    ring = cs.SlotSet(7, 0.3).directions
    np.testing.assert_array_equal(cs.SlotSet.from_directions(ring).directions, ring)


def test_nav_field_answers_one_point_like_path():
    w, _ = room_with_door()
    field = cs.NavField(w, [5.0, 8.0], cell=0.1, radius=0.3)
    q = field.query([5.0, 2.0])
    assert q.distance.shape == () and q.direction.shape == (2,)
    both = field.query([[5.0, 2.0]])
    assert q.distance == both.distance[0]
    np.testing.assert_array_equal(q.direction, both.direction[0])
    assert field.direction([5.0, 2.0], look_ahead=2.0).shape == (2,)


def test_a_push_that_is_due_survives_pickle_deepcopy_and_save(tmp_path):
    # The door shut and the simulation was copied before its next step: the copy, built
    # with the edited world, never saw an edit, and stood in the door for good while the
    # original walked round. The due push is state.
    w = cs.World()
    w.add_polyline([[0, 0], [12, 0], [12, 10], [0, 10]], closed=True)
    w.add_segments([[0, 5, 4.5, 5], [5.5, 5, 10, 5]])
    agents, sim = _follower(w, [5.0, 4.99], [5.0, 8.0])
    sim.step(1 / 30)
    agents.position[0] = [5.0, 4.99]
    w.add_segments([[4.5, 5, 5.5, 5]])
    sim.save(tmp_path / "due.cssim")
    copies = [pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim), cs.load(tmp_path / "due.cssim")]
    sim.step(1 / 30)
    for c in copies:
        c.step(1 / 30)
        np.testing.assert_array_equal(c.agents.position, agents.position)
        assert cs.nearest(c.world, c.agents.position, 1.0).distance[0] >= 0.4 * 0.999


@pytest.mark.parametrize(
    "case",
    [
        "crate flush with the outer wall",
        "pillar over the outer wall",
        "thin wall beside",
        "two crates",
        "crate in a crate",
    ],
)
def test_an_agent_leaves_a_solid_by_a_way_out_that_crosses_no_wall(case):
    # The first push out of a solid jumped across its nearest side: out of the room where
    # that side lay on the outer wall (x = -0.3), through a thin wall beside the crate, or
    # into the next crate, where it ended still inside. Oracle: afterwards the agent is in
    # the room, on the crate's side of the thin wall, outside every solid and clear of
    # every wall.
    w = cs.World()
    w.add_polyline([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
    start = {
        "crate flush with the outer wall": [0.35, 5.0],
        "pillar over the outer wall": [0.35, 5.0],
        "thin wall beside": [4.3, 5.0],
        "two crates": [5.0, 5.05],
        "crate in a crate": [5.0, 5.05],
    }[case]
    a = cs.Agents(1, slots=8)
    a.add([start], radius=0.3, max_speed=0.0)
    sim = cs.Simulation(w, a, cs.Steering([cs.Wander()]), motion=cs.Lerp())
    sim.step(1 / 30)
    if case == "crate flush with the outer wall":
        w.add_box((1.0, 5.0), (1.0, 1.0))
    elif case == "pillar over the outer wall":
        w.add_circles([[1.2, 5.0]], [1.5])
    elif case == "thin wall beside":
        w.add_segments([[3.8, 2.0, 3.8, 8.0]])
        w.add_box((5.0, 5.0), (1.0, 1.0))
    elif case == "two crates":
        w.add_box((4.6, 5.0), (0.6, 0.6))
        w.add_box((5.4, 5.0), (0.6, 0.6))
    else:
        w.add_box((5.0, 5.0), (2.0, 2.0))
        w.add_box((5.0, 5.0), (0.5, 0.5))
    sim.step(1 / 30)
    p = a.position[0]
    assert 0.3 <= p[0] <= 9.7 and 0.3 <= p[1] <= 9.7, p
    assert not cs.inside(w, [p])[0], p
    assert cs.nearest(w, [p], 1.0).distance[0] >= 0.3 * 0.999, p
    if case == "thin wall beside":
        assert p[0] > 3.8


def test_set_layers_with_no_ids_changes_nothing():
    w, door = room_with_door()
    w.set_layers([], 0)
    w.set_layers(np.array([], np.int32), 0)
    assert w.obstacle_layers.tolist() == [ALL] * 4


@pytest.mark.parametrize("start", [[1.5, 1.5], [1.9, 1.9], [1.0, 1.8]])
def test_an_agent_leaves_an_inner_corner_of_a_concave_solid(start):
    # An L-shaped slab along two walls of a room, dropped on agents in its corner square:
    # the exits were only the nearest point of each edge, and beside the inner corner
    # (2, 2) each of them lies within the radius of the other edge, so they stayed inside.
    # Oracle: out, clear, in the room, near the inner corner.
    w = cs.World()
    w.add_polyline([[0, 0], [20, 0], [20, 20], [0, 20]], closed=True)
    a = cs.Agents(1, slots=8)
    a.add([start], radius=0.3, max_speed=0.0)
    sim = cs.Simulation(w, a, cs.Steering([cs.Wander()]), motion=cs.Lerp())
    sim.step(1 / 30)
    w.add_polygon([[0, 0], [20, 0], [20, 2], [2, 2], [2, 20], [0, 20]])
    sim.step(1 / 30)
    p = a.position[0]
    assert not cs.inside(w, [p])[0] and cs.nearest(w, [p], 1.0).distance[0] >= 0.3 * 0.999
    assert np.hypot(*(p - [2.3, 2.3])) < 2.5, p


def test_the_body_does_not_squeeze_through_a_crack_on_its_way_out():
    # A crate flush with the east wall, which has a 0.1 m crack where the agent stands: the
    # way out checked only the centre's line, and the 0.6 m body left through the crack.
    w = cs.World()
    w.add_polyline([[0, 0], [11, 0], [11, 9.75]])
    w.add_polyline([[11, 9.85], [11, 20], [0, 20], [0, 0]])
    a = cs.Agents(1, slots=8)
    a.add([[10.8, 9.8]], radius=0.3, max_speed=0.0)
    sim = cs.Simulation(w, a, cs.Steering([cs.Wander()]), motion=cs.Lerp())
    sim.step(1 / 30)
    w.add_box((10.0, 9.8), (1.0, 1.0))
    sim.step(1 / 30)
    assert a.position[0, 0] < 11.0 - 0.3, a.position[0]


def building():
    # A 20 x 20 building with a 16 x 16 courtyard: walls 2 m thick.
    w = cs.World()
    w.add_polyline([[-10, -10], [40, -10], [40, 40], [-10, 40]], closed=True)
    bid = w.add_polygon(
        [[10, 10], [30, 10], [30, 30], [10, 30]], holes=[[[12, 12], [12, 28], [28, 28], [28, 12]]]
    )
    return w, bid


def test_a_polygon_hole_is_free_space():
    # Holes were closed polylines: inside() counted the courtyard as solid, a navigation
    # field blocked it, and a ray starting there read distance 0.
    w, bid = building()
    assert w.obstacle_count == 2 and w.segment_count == 4 + 4 + 4
    assert (w.wall_obstacles[4:] == bid).all()
    pts = [[20, 20], [11, 20], [29.5, 15], [12, 20], [5, 5]]
    assert cs.inside(w, pts).tolist() == [False, True, True, True, False]
    hit = cs.raycast(w, [[20.0, 20.0]], [[1.0, 0.0]], 20.0)
    assert hit.distance[0] == pytest.approx(8.0) and hit.obstacle[0] == bid
    field = cs.NavField(w, [20.0, 20.0], cell=0.25, radius=0.3)
    q = [[15.0, 15.0], [20.0, 25.0], [5.0, 5.0]]
    d = field.distance(q)
    np.testing.assert_allclose(d[:2], [np.hypot(5, 5), 5.0], atol=0.05)
    assert np.isinf(d[2])  # outside the building: the courtyard has no door


def test_polygon_holes_from_shapely_survive_pickle():
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import box

    w = cs.World()
    ids = w.add_shapely(box(10, 10, 30, 30).difference(box(12, 12, 28, 28)))
    assert len(ids) == 1
    back = pickle.loads(pickle.dumps(w))
    pts = [[20, 20], [11, 20]]
    assert cs.inside(back, pts).tolist() == cs.inside(w, pts).tolist() == [False, True]
    del shapely


def test_an_agent_in_a_building_wall_leaves_into_the_courtyard_when_that_is_nearer():
    w = cs.World()
    w.add_polyline([[-10, -10], [40, -10], [40, 40], [-10, 40]], closed=True)
    a = cs.Agents(2, slots=8)
    a.add([[11.9, 20.0], [20.0, 20.0]], radius=0.3, max_speed=0.0)
    sim = cs.Simulation(w, a, cs.Steering([cs.Wander()]), motion=cs.Lerp())
    sim.step(1 / 30)
    w.add_polygon(
        [[10, 10], [30, 10], [30, 30], [10, 30]], holes=[[[12, 12], [12, 28], [28, 28], [28, 12]]]
    )
    sim.step(1 / 30)
    np.testing.assert_allclose(a.position[0], [12.3, 20.0], atol=1e-3)  # into the courtyard
    np.testing.assert_array_equal(a.position[1], [20.0, 20.0])  # the courtyard is free


@pytest.mark.parametrize("count", [31, 33, 40])
def test_many_nested_polygons_with_holes_leave_their_holes_free(count):
    # Beyond 32 polygons with holes round a point, polygon_at took the 33rd for solid on
    # its outer ring alone: the centre of 33 nested annuli read inside, and a ray from it 0.
    w = cs.World()
    ang = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    ring = lambda r: np.c_[r * np.cos(ang), r * np.sin(ang)]  # noqa: E731
    for k in range(count):
        R = 100.0 - 2 * k
        w.add_polygon(ring(R), holes=[ring(R - 1.0)])
    inner = 100.0 - 2 * (count - 1) - 1.0
    assert not cs.inside(w, [[0.0, 0.0]])[0]
    got = cs.raycast(w, [[0.0, 0.0]], [[1.0, 0.0]], 200.0).distance[0]
    assert got == pytest.approx(inner, abs=1e-3)
    assert cs.inside(w, [[inner + 0.5, 0.0]])[0]  # in the innermost annulus


def test_holes_must_be_a_list_of_rings():
    w = cs.World()
    ring = [[0, 0], [10, 0], [10, 10], [0, 10]]
    hole = np.array([[2, 2], [2, 4], [4, 4]], np.float32)
    with pytest.raises(TypeError, match=r"holes must be a list of rings.*\[ring\]"):
        w.add_polygon(ring, holes=hole)
    assert w.add_polygon(ring, holes=None) == 0
    assert w.obstacle_count == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_occupancy_grid_is_solid_exactly_where_its_cells_are(seed):
    # A robot's map or a tile map, added cell by cell with add_box, cost O(world) an edit
    # (66 us a box at 16k boxes). add_occupancy merges cells into rectangles, added in one
    # edit. Oracle: the grid itself, cell by cell (points inside every cell, and points
    # in free cells), and a brute-force ray march over the cells.
    rng = np.random.default_rng(seed)
    occ = rng.random((23, 31)) < 0.35
    cell, origin = 0.5, np.array([-3.0, 2.0])
    w = cs.World()
    ids = w.add_occupancy(occ, cell=cell, origin=origin)
    assert len(ids) < occ.sum()  # merged
    ii, jj = np.meshgrid(np.arange(occ.shape[0]), np.arange(occ.shape[1]), indexing="ij")
    for du, dv in [(0.5, 0.5), (0.1, 0.9), (0.9, 0.2)]:
        pts = np.c_[(jj.ravel() + du) * cell, (ii.ravel() + dv) * cell] + origin
        np.testing.assert_array_equal(cs.inside(w, pts), occ.ravel())
    # Rays from free cell centres: the first occupied cell along the ray, sampled finely.
    free = np.flatnonzero(~occ.ravel())[:40]
    o = np.c_[(jj.ravel()[free] + 0.5) * cell, (ii.ravel()[free] + 0.5) * cell] + origin
    ang = rng.uniform(0, 2 * np.pi, len(o))
    d = np.c_[np.cos(ang), np.sin(ang)]
    hits = cs.raycast(w, o.astype(np.float32), d.astype(np.float32), 20.0)
    for k in range(len(o)):
        ts = np.arange(0, 20.0, 0.002)
        q = (o[k] + ts[:, None] * d[k] - origin) / cell
        cj, ci = np.floor(q[:, 0]).astype(int), np.floor(q[:, 1]).astype(int)
        inside = (ci >= 0) & (ci < occ.shape[0]) & (cj >= 0) & (cj < occ.shape[1])
        solid = np.zeros(len(ts), bool)
        solid[inside] = occ[ci[inside], cj[inside]]
        first = ts[np.argmax(solid)] if solid.any() else np.inf
        if np.isinf(first):
            assert not hits.hit[k]
        else:
            assert hits.distance[k] == pytest.approx(first, abs=0.003)


def test_add_boxes_is_add_box_in_one_edit_and_checks_each_box():
    a, b = cs.World(), cs.World()
    c = np.array([[0, 0], [3, 1], [-2, 4]], np.float32)
    h = np.array([[0.5, 1.0], [1.0, 0.25], [0.3, 0.3]], np.float32)
    ang = np.array([0.0, 0.4, -1.0], np.float32)
    assert a.add_boxes(c, h, ang).tolist() == [0, 1, 2]
    for k in range(3):
        b.add_box(c[k], h[k], float(ang[k]))
    np.testing.assert_array_equal(a.walls, b.walls)
    back = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(back.walls, a.walls)
    with pytest.raises(ValueError, match=r"half_extents must be numbers in \(0, 1e8\].*box 1"):
        a.add_boxes(c, [[1, 1], [0, 1], [1, 1]])
    with pytest.raises(ValueError, match="angles: expected finite.*index 2"):
        a.add_boxes(c, h, [0, 0, np.inf])
    assert a.obstacle_count == 3  # nothing half-added
    with pytest.raises(TypeError, match="bool grid"):
        a.add_occupancy(np.ones((2, 2)))
    with pytest.raises(ValueError, match="cell must be > 0"):
        a.add_occupancy(np.ones((2, 2), bool), cell=0)
    assert a.add_occupancy(np.zeros((3, 3), bool)).tolist() == []


def test_edits_from_two_threads_pickle_back_with_the_same_ids():
    # The log took each edit after the core made it, unlocked: two threads' edits were
    # logged in another order, so a pickle gave other ids or failed to load (set_layers
    # on an id its replay had not made yet) (fuzz round 15).
    import sys
    import threading

    w = cs.World()

    def editor(x):
        for i in range(1500):
            ids = w.add_segments([[x, i, x + 0.5, i]])
            w.set_layers(ids, 2)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave often
    try:
        threads = [threading.Thread(target=editor, args=(x,)) for x in (0, 100)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    back = pickle.loads(pickle.dumps(w))
    np.testing.assert_array_equal(back.walls, w.walls)
    np.testing.assert_array_equal(back.obstacle_layers, w.obstacle_layers)


def test_a_door_toggled_many_times_pickles_at_its_geometrys_size():
    """Each set_layers call was logged for the pickle to replay: a door toggled every step
    grew the world by 230 B a call for good (115 MB and a 1.1 s load after 200,000;
    fuzz round 24). The layers last set are kept, and a copy reads the same."""
    w = cs.World()
    wall = w.add_box(center=(5, 5), half_extents=(1, 1))
    door = w.add_box(center=(5, 8), half_extents=(0.2, 1.0))
    small = len(pickle.dumps(w))
    for k in range(20000):
        w.set_layers(door, k & 1)
    w.set_layers([wall], 0b10)
    assert len(pickle.dumps(w)) <= small + 64
    ray = ([[5.0, 0.0]], [[0.0, 1.0]], 20.0)
    for layers in (1, 0b10, cs.world.ALL_LAYERS):
        want = cs.raycast(w, *ray, layers=layers)
        got = cs.raycast(pickle.loads(pickle.dumps(w)), *ray, layers=layers)
        np.testing.assert_array_equal(got.distance, want.distance)
    # An older pickle (each call in the log) still loads to the same layers.
    from contextsteer.world import _restore_world

    log = [*w._log, ("set_layers", (np.int32([door]), 0)), ("set_layers", (np.int32([door]), 1))]
    log.append(("set_layers", (np.int32([wall]), 0b10)))
    old = _restore_world(log)
    np.testing.assert_array_equal(
        cs.raycast(old, *ray, layers=1).distance, cs.raycast(w, *ray, layers=1).distance
    )
