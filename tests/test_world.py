"""World construction, views, errors, and the named edge cases of raycast / slot_raycast /
nearest / inside, checked against the brute-force oracle in reference.py."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import contextsteer as cs
import reference as ref

INF = np.inf


def square_world():
    """A closed square polyline |x|, |y| <= 3 plus one circle and one box."""
    w = cs.World()
    w.add_polyline([[-3, -3], [3, -3], [3, 3], [-3, 3]], closed=True)
    return w


# ------------------------------------------------------------------------ building ---


def test_ids_counts_and_bounds():
    w = cs.World()
    assert w.obstacle_count == 0 and w.segment_count == 0 and w.bounds is None
    assert w.add_segments(np.array([[0, 0, 1, 0], [0, 1, 1, 1]])).tolist() == [0, 1]
    assert w.add_polyline([[0, 0], [1, 1], [2, 0]]) == 2
    assert w.add_polygon([[5, 5], [6, 5], [6, 6]]) == 3
    assert w.add_box((0, 0), (1, 2)) == 4
    assert w.add_circles([[10, 0], [11, 0]], [0.5, 1.0]).tolist() == [5, 6]
    assert w.obstacle_count == 7
    assert w.segment_count == 2 + 2 + 3 + 4
    assert w.bounds == pytest.approx((-1, -2, 12, 6))
    assert w.wall_obstacles.tolist() == [0, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4]
    centers, radii = w.circles
    assert centers.shape == (2, 2) and radii.tolist() == [0.5, 1.0]
    assert "obstacles=7" in repr(w)


def test_closed_ring_with_repeated_first_point():
    w = cs.World()
    w.add_polygon([[0, 0], [1, 0], [1, 1], [0, 0]])
    assert w.segment_count == 3
    w.add_polyline([[0, 0], [1, 0], [1, 1], [0, 0]], closed=True)
    assert w.segment_count == 6


def test_box_rotation():
    w = cs.World()
    w.add_box((1, 2), (2, 1), angle=np.pi / 2)
    walls = w.walls
    xs, ys = walls[:, [0, 2]], walls[:, [1, 3]]
    assert xs.min() == pytest.approx(0, abs=1e-6) and xs.max() == pytest.approx(2)
    assert ys.min() == pytest.approx(0, abs=1e-6) and ys.max() == pytest.approx(4)


def test_views_are_read_only_zero_copy_and_survive_edits():
    w = cs.World()
    w.add_segments([[0, 0, 1, 0]])
    v1 = w.walls
    assert v1.dtype == np.float32 and v1.flags.c_contiguous and not v1.flags.writeable
    assert np.shares_memory(v1, w.walls)
    with pytest.raises(ValueError):
        v1[0, 0] = 5
    w.add_segments([[0, 1, 1, 1]])
    assert v1.shape == (1, 4) and v1.tolist() == [[0, 0, 1, 0]]  # old view unchanged
    assert w.walls.shape == (2, 4)
    c1 = w.circles[0]
    w.add_circles([[3, 3]], 1.0)
    assert c1.shape == (0, 2) and w.circles[0].shape == (1, 2)
    v2 = w.walls
    del w
    gc.collect()
    assert v2.tolist() == [[0, 0, 1, 0], [0, 1, 1, 1]]  # view keeps the geometry alive


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda w: w.add_segments([[0, 0, 1, 1], [2, 2, 2, 2]]), "segment 1 has zero length"),
        (lambda w: w.add_segments([[0, 0, np.nan, 1]]), r"finite.*\(0, 2\)"),
        (lambda w: w.add_segments([[0, 0, 1]]), r"expected shape \(M, 4\)"),
        (lambda w: w.add_segments([0, 0, 1, 1]), r"expected shape \(M, 4\)"),
        (lambda w: w.add_polyline([[0, 0], [1, 1], [1, 1]]), "points 1 and 2 are equal"),
        (lambda w: w.add_polyline([[0, 0]]), "at least 2"),
        (lambda w: w.add_polyline([[0, 0], [np.inf, 1]]), "finite"),
        (lambda w: w.add_polygon([[0, 0], [1, 1]]), "at least 3"),
        (lambda w: w.add_polygon([[0, 0], [1, 1], [1, 0], [0, 0], [0, 0]]), "points 3 and 4|twice"),
        (lambda w: w.add_circles([[0, 0], [1, 1]], [1.0, -0.5]), "circle 1 has negative radius"),
        (
            lambda w: w.add_circles([[0, 0], [1, 1]], [1.0]),
            r"radii: expected shape \(C=2,\), got \(1,\)",
        ),
        (lambda w: w.add_circles([[0, np.nan]], [1.0]), "finite"),
        (lambda w: w.add_box((0, 0), (0, 1)), "half_extents"),
        (lambda w: w.add_box((np.nan, 0), (1, 1)), "finite"),
        (lambda w: w.add_segments([[0, 0, 1, 1]], layers=-1), "layers"),
    ],
)
def test_bad_geometry_raises_value_error(call, match):
    w = cs.World()
    with pytest.raises(ValueError, match=match):
        call(w)
    assert w.obstacle_count == 0


def test_empty_world_every_ray_misses():
    w = cs.World()
    hits = cs.raycast(w, np.zeros((3, 2)), [[1, 0], [0, 1], [-1, -1]], 10.0)
    assert np.all(np.isinf(hits.distance)) and not hits.hit.any()
    assert hits.obstacle.tolist() == [-1, -1, -1] and np.all(hits.normal == 0)
    assert np.all(np.isinf(cs.slot_raycast(w, np.zeros((2, 2)), [[1, 0], [0, 1]], 5.0)))
    near = cs.nearest(w, [[0, 0]], 100.0)
    assert np.isinf(near.distance[0]) and near.obstacle[0] == -1
    assert not cs.inside(w, [[0, 0]]).any()
    empty = cs.raycast(w, np.zeros((0, 2)), np.zeros((0, 2)), 1.0)
    assert empty.distance.shape == (0,)


# ------------------------------------------------------------------------- raycast ---


def test_raycast_basic_normals_and_obstacles():
    w = square_world()
    hits = cs.raycast(w, [[0, 0], [0, 0], [1, 1]], [[1, 0], [0, -2], [-1, -1]], [10.0, 10.0, 1.0])
    assert hits.distance[:2].tolist() == [3.0, 3.0]
    assert hits.normal[0].tolist() == [-1.0, 0.0] and hits.normal[1].tolist() == [0.0, 1.0]
    assert hits.obstacle[:2].tolist() == [0, 0]
    assert not hits.hit[2] and np.isinf(hits.distance[2])


def test_raycast_dtypes_and_shapes():
    w = square_world()
    hits = cs.raycast(w, [[0, 0]], [[1, 0]], 10)
    assert isinstance(hits, cs.RayHits)
    assert hits.distance.dtype == np.float32 and hits.hit.dtype == bool
    assert hits.normal.shape == (1, 2) and hits.obstacle.dtype == np.int32


def test_ray_parallel_to_segment_misses():
    w = cs.World()
    w.add_segments([[0, 1, 10, 1]])
    assert np.isinf(cs.raycast(w, [[-5, 0]], [[1, 0]], 100.0).distance[0])


def test_ray_collinear_with_segment_hits_its_near_end():
    w = cs.World()
    w.add_segments([[2, 0, 6, 0], [-6, 5, -2, 5]])
    hits = cs.raycast(
        w, [[0, 0], [0, 0], [4, 0], [0, 5]], [[1, 0], [-1, 0], [1, 0], [-1, 0]], 100.0
    )
    assert hits.distance.tolist()[:2] == [2.0, INF]
    assert hits.distance[2] == 0.0  # starts on the segment
    assert hits.distance[3] == 2.0
    assert hits.normal[0].tolist() == [-1.0, 0.0]  # collinear: -direction


def test_ray_through_shared_vertex_does_not_leak():
    w = cs.World()
    w.add_polyline([[0, -1], [1, 0], [0, 1]])  # vertex at (1, 0)
    hits = cs.raycast(w, [[-1, 0]], [[1, 0]], 10.0)
    assert hits.distance[0] == pytest.approx(2.0)
    # Many rays through the vertices of a fine closed polygon: none escapes.
    k = 64
    ang = 2 * np.pi * np.arange(k) / k
    ring = np.stack([np.cos(ang), np.sin(ang)], axis=1) * 7
    w2 = cs.World()
    w2.add_polyline(ring, closed=True)
    d = cs.raycast(w2, np.zeros((k, 2)), ring, 100.0).distance
    assert np.all(np.isfinite(d)) and np.allclose(d, 7, atol=1e-5)


def test_ray_grazing_circle_hits_at_tangent():
    w = cs.World()
    w.add_circles([[5, 1]], [1.0])
    hits = cs.raycast(w, [[0, 0], [0, 0]], [[1, 0], [1, -1e-3]], 10.0)
    assert hits.distance[0] == pytest.approx(5.0) and hits.hit[0]
    assert hits.normal[0] == pytest.approx([0, -1])
    assert not hits.hit[1]


@pytest.mark.parametrize("radius", [0.0, 0.25])
def test_ray_starting_inside_circle_or_polygon(radius):
    w = cs.World()
    w.add_circles([[0, 0]], [2.0])
    w.add_polygon([[10, -1], [12, -1], [12, 1], [10, 1]])
    w.add_box((20, 0), (1, 1), angle=0.3)
    hits = cs.raycast(
        w, [[0.5, 0], [11, 0], [20, 0.5]], [[1, 0], [0, 1], [-1, 0]], 5.0, radius=radius
    )
    assert hits.distance.tolist() == [0.0, 0.0, 0.0] and hits.hit.all()
    assert hits.obstacle.tolist() == [0, 1, 2]
    assert hits.normal.tolist() == [[-1, 0], [0, -1], [1, 0]]  # -direction
    d = cs.slot_raycast(w, [[0.5, 0], [11, 0], [20, 0.5]], [[1, 0], [0, 1]], 5.0, radius=radius)
    assert np.all(d == 0)


def test_zero_length_direction_names_the_ray():
    w = square_world()
    with pytest.raises(ValueError, match="ray 1 has a zero-length direction"):
        cs.raycast(w, np.zeros((2, 2)), [[1, 0], [0, 0]], 1.0)
    with pytest.raises(ValueError, match="slot 2 has a zero-length direction"):
        cs.slot_raycast(w, np.zeros((2, 2)), [[1, 0], [0, 1], [0, 0]], 1.0)


def test_max_dist_zero_and_inclusive():
    w = square_world()
    d = cs.raycast(w, [[0, 0], [3, 0], [0, 0]], [[1, 0], [1, 0], [1, 0]], [0.0, 0.0, 3.0]).distance
    assert d.tolist() == [INF, 0.0, 3.0]  # only a wall at the origin counts; max_dist inclusive
    assert cs.slot_raycast(w, [[0, 0]], [[1, 0]], 0.0).tolist() == [[INF]]


def test_bad_query_inputs():
    w = square_world()
    with pytest.raises(ValueError, match="max_dist"):
        cs.raycast(w, np.zeros((2, 2)), np.ones((2, 2)), [1.0, -1.0])
    with pytest.raises(ValueError, match="max_dist"):
        cs.raycast(w, np.zeros((2, 2)), np.ones((2, 2)), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="directions"):
        cs.raycast(w, np.zeros((2, 2)), np.ones((3, 2)), 1.0)
    with pytest.raises(ValueError, match="origins"):
        cs.raycast(w, [[np.nan, 0]], [[1, 0]], 1.0)
    with pytest.raises(ValueError, match="radius"):
        cs.raycast(w, [[0, 0]], [[1, 0]], 1.0, radius=-1)
    with pytest.raises(TypeError, match="World"):
        cs.raycast("world", [[0, 0]], [[1, 0]], 1.0)
    with pytest.raises(ValueError, match="method"):
        cs.slot_raycast(w, [[0, 0]], [[1, 0]], 1.0, method="fast")
    with pytest.raises(ValueError, match="headings"):
        cs.slot_raycast(w, [[0, 0]], [[1, 0]], 1.0, headings=[0.0, 1.0])
    with pytest.raises(ValueError, match="look_ahead"):
        cs.slot_raycast(w, [[0, 0]], [[1, 0]], -1.0)


def test_huge_coordinates():
    # Coordinates near 1e6 that are exact in float32 (multiples of 1/16): the scene shifted
    # by 1e6 gives the same distances as the original.
    base = np.array([[0, 0, 4, 0], [4, 0, 4, 4], [4, 4, 0, 4], [0, 4, 0, 0]], dtype=np.float64)
    origins = np.array([[1, 1], [2, 3], [3.5, 0.5]])
    dirs = np.array([[1, 0.5], [-1, 0.25], [0, 1]])
    w0, w1 = cs.World(), cs.World()
    w0.add_segments(base)
    w1.add_segments(base + 1e6)
    d0 = cs.raycast(w0, origins, dirs, 10.0).distance
    d1 = cs.raycast(w1, origins + 1e6, dirs, 10.0).distance
    assert np.all(np.isfinite(d1))
    np.testing.assert_allclose(d1, d0, atol=1e-5)
    expected = ref.ref_raycast(base, (np.zeros((0, 2)), np.zeros(0)), [], origins, dirs, 10.0)
    np.testing.assert_allclose(d0, expected, rtol=1e-5)


def test_layers_filter_obstacles():
    w = cs.World()
    w.add_segments([[2, -1, 2, 1]], layers=0b01)
    w.add_segments([[4, -1, 4, 1]], layers=0b10)
    w.add_circles([[6, 0]], 0.5, layers=0b100)
    o, d = np.zeros((1, 2)), [[1, 0]]
    assert cs.raycast(w, o, d, 10.0).distance[0] == 2.0
    assert cs.raycast(w, o, d, 10.0, layers=0b10).distance[0] == 4.0
    assert cs.raycast(w, o, d, 10.0, layers=0b100).distance[0] == 5.5
    assert np.isinf(cs.raycast(w, o, d, 10.0, layers=0b1000).distance[0])
    assert cs.slot_raycast(w, o, d, 10.0, layers=0b10).tolist() == [[4.0]]
    assert cs.nearest(w, [[6, 2]], 10.0, layers=0b01).obstacle[0] == 0
    assert not cs.inside(w, [[6, 0]], layers=0b1)[0] and cs.inside(w, [[6, 0]], layers=0b100)[0]


def test_thick_ray_against_segment_and_circle():
    w = cs.World()
    w.add_segments([[5, -1, 5, 1]])
    w.add_circles([[0, 10]], [1.0])
    hits = cs.raycast(w, [[0, 0], [0, 0], [0, 1.5]], [[1, 0], [0, 1], [1, 0]], 20.0, radius=0.5)
    assert hits.distance[0] == pytest.approx(4.5)
    assert hits.normal[0] == pytest.approx([-1, 0])
    assert hits.distance[1] == pytest.approx(8.5)
    # passes the segment end (5, 1) at distance 0.5: touches the end cap at x = 5
    assert hits.distance[2] == pytest.approx(5.0)
    assert hits.normal[2] == pytest.approx([0, 1])


def test_thick_ray_with_huge_radius_starts_inside():
    w = cs.World()
    w.add_segments([[0, -1, 5, 1]])
    for radius in (1e3, 9e7):  # inflated grid; beyond its range the plain-grid walk
        hits = cs.raycast(w, [[0, -5], [40, 40]], [[0, 1], [1, 0]], 10.0, radius=radius)
        assert hits.distance.tolist() == [0.0, 0.0]
    # Lengths beyond the supported ±1e8 (float32 resolution there: 8 units) are refused.
    with pytest.raises(ValueError, match="radius must be a finite number >= 0 and at most 1e8"):
        cs.raycast(w, [[0, -5]], [[0, 1]], 10.0, radius=1e31)


# -------------------------------------------------------------------- slot_raycast ---


class Slots:
    def __init__(self, k):
        a = 2 * np.pi * np.arange(k) / k
        self.directions = np.stack([np.cos(a), np.sin(a)], axis=1).astype(np.float32)


def test_slot_raycast_accepts_slot_set_and_out():
    w = square_world()
    slots = Slots(4)
    out = np.full((2, 4), -1.0, dtype=np.float32)
    res = cs.slot_raycast(w, [[0, 0], [1, 0]], slots, [10.0, 1.5], out=out)
    assert res is out
    np.testing.assert_allclose(out, [[3, 3, 3, 3], [INF, INF, INF, INF]], atol=1e-6)


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((2, 4), dtype=np.float64),
        np.zeros((4, 2), dtype=np.float32).T,
        np.zeros((2, 3), dtype=np.float32),
    ],
)
def test_slot_raycast_refuses_bad_out(bad):
    w = square_world()
    with pytest.raises((TypeError, ValueError), match="out"):
        cs.slot_raycast(w, [[0, 0], [1, 0]], Slots(4), 10.0, out=bad)


def test_slot_raycast_read_only_out_refused():
    w = square_world()
    out = np.zeros((1, 4), dtype=np.float32)
    out.flags.writeable = False
    with pytest.raises(TypeError, match="writeable"):
        cs.slot_raycast(w, [[0, 0]], Slots(4), 10.0, out=out)


@pytest.mark.parametrize("method", ["auto", "gather", "per_ray"])
def test_slot_methods_agree(method):
    rng = np.random.default_rng(1)
    w = cs.World()
    w.add_segments(rng.uniform(-10, 10, (60, 4)))
    w.add_circles(rng.uniform(-10, 10, (5, 2)), rng.uniform(0.1, 1, 5))
    pos = rng.uniform(-10, 10, (50, 2))
    heads = rng.uniform(-np.pi, np.pi, 50)
    ref_d = cs.slot_raycast(w, pos, Slots(16), 6.0, headings=heads, method="per_ray")
    np.testing.assert_array_equal(
        cs.slot_raycast(w, pos, Slots(16), 6.0, headings=heads, method=method), ref_d
    )


# --------------------------------------------------------------- nearest / inside ---


def test_nearest_segment_and_circle():
    w = cs.World()
    w.add_segments([[0, 0, 4, 0]])
    w.add_circles([[10, 0]], [2.0])
    r = cs.nearest(w, [[2, 3], [-3, 4], [10, 5], [10.5, 0], [2, 0], [50, 50]], 10.0)
    assert isinstance(r, cs.Nearest)
    np.testing.assert_allclose(r.distance, [3, 5, 3, 1.5, 0, INF], atol=1e-6)
    np.testing.assert_allclose(r.point[:5], [[2, 0], [0, 0], [10, 2], [12, 0], [2, 0]], atol=1e-6)
    np.testing.assert_allclose(
        r.normal[:5], [[0, 1], [-0.6, 0.8], [0, 1], [-1, 0], [0, 1]], atol=1e-6
    )
    assert r.obstacle.tolist() == [0, 0, 1, 1, 0, -1]
    assert r.point[5].tolist() == [0, 0] and r.normal[5].tolist() == [0, 0]


def test_nearest_against_oracle():
    rng = np.random.default_rng(7)
    w = cs.World()
    walls = rng.uniform(-20, 20, (80, 4))
    w.add_segments(walls)
    w.add_circles(rng.uniform(-20, 20, (6, 2)), rng.uniform(0, 2, 6))
    pts = rng.uniform(-30, 30, (200, 2))
    for max_dist in (3.0, 100.0):
        got = cs.nearest(w, pts, max_dist)
        dist, _ = ref.ref_nearest(w.walls, w.circles, pts, max_dist)
        fin = np.isfinite(dist)
        assert np.array_equal(np.isfinite(got.distance), fin) or np.all(
            np.abs(dist[~fin] - max_dist) < 1e-4
        )
        np.testing.assert_allclose(got.distance[fin], dist[fin], atol=1e-4)
        # The reported point is at the reported distance from the query point.
        np.testing.assert_allclose(
            np.hypot(*(pts[fin] - got.point[fin]).T), got.distance[fin], atol=1e-4
        )
        np.testing.assert_allclose(np.hypot(*got.normal[fin].T), 1.0, atol=1e-5)


def test_inside_polygons_boxes_circles_not_polylines():
    w = cs.World()
    tri = [[0, 0], [4, 0], [0, 4]]
    w.add_polygon(tri)
    w.add_box((10, 0), (1, 1), angle=np.pi / 4)
    w.add_circles([[0, 10]], [1.5])
    w.add_polyline([[20, 0], [24, 0], [24, 4], [20, 4]], closed=True)
    pts = [[1, 1], [3, 3], [10, 1.3], [10, 1.5], [0.5, 10.5], [22, 2], [4, 0], [2, 0]]
    assert cs.inside(w, pts).tolist() == [True, False, True, False, True, False, True, True]
    rng = np.random.default_rng(3)
    p = rng.uniform(-2, 12, (300, 2))
    box = w.walls[w.wall_obstacles == 1][:, :2]
    expected = ref.ref_inside(w.circles, [np.array(tri), box], p)
    assert cs.inside(w, p).tolist() == expected.tolist()


# -------------------------------------------------------------------- threads ---


def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(11)
    w = cs.World()
    w.add_segments(rng.uniform(-50, 50, (400, 4)))
    w.add_circles(rng.uniform(-50, 50, (20, 2)), rng.uniform(0, 3, 20))
    w.add_box((0, 0), (5, 2), 0.4)
    o = rng.uniform(-50, 50, (5000, 2))
    d = rng.normal(size=(5000, 2))
    heads = rng.uniform(-3, 3, 5000)
    results = []
    for n in (1, 2, 3):
        with cs.threads(n):
            results.append(
                (
                    cs.raycast(w, o, d, 30.0),
                    cs.raycast(w, o, d, 30.0, radius=0.7),
                    cs.slot_raycast(w, o, Slots(12), 15.0, headings=heads),
                    cs.nearest(w, o, 10.0),
                    cs.inside(w, o),
                )
            )
    for other in results[1:]:
        for a, b in zip(results[0], other):
            for x, y in zip(
                a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)
            ):
                np.testing.assert_array_equal(x, y)


# -------------------------------------------------------------------- shapely ---


def test_from_shapely():
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import LineString, MultiPolygon, Point, Polygon

    poly = Polygon([(0, 0), (4, 0), (4, 4), (0, 4)], holes=[[(1, 1), (2, 1), (2, 2)]])
    geom = shapely.GeometryCollection(
        [MultiPolygon([poly]), LineString([(10, 0), (12, 0)]), Point(20, 0)]
    )
    w = cs.World.from_shapely(geom)
    assert w.obstacle_count == 3  # the polygon with its hole is one obstacle
    assert w.segment_count == 4 + 3 + 1
    # (1.8, 1.2) is in the hole: free space (a closed polyline before, and inside).
    assert cs.inside(w, [[3, 3], [20, 0], [10, 1], [1.8, 1.2]]).tolist() == [
        True,
        True,
        False,
        False,
    ]
    with pytest.raises(TypeError, match="unsupported"):
        w.add_shapely(42)


def test_obstacles_near_the_coordinate_limit_are_inside_the_grid():
    # A circle's x ± r and the thick rays' inflation were rounded to float32 where a unit is
    # 8 apart: the grid box was a point, and the walk missed what the strips and a float64
    # oracle hit (within the documented ±1e8).
    w = cs.World()
    w.add_circles([[98999992.0, -99000008.0]], [1.5])
    x0, y0, x1, y1 = w.bounds
    assert x0 <= 98999992.0 - 1.5 and x1 >= 98999992.0 + 1.5 and y0 < y1
    o, d = [[98999984.0, -99000008.0]], [[1.0, -0.1]]
    u = np.array(d[0]) / np.hypot(*d[0])
    q = np.array([98999992.0, -99000008.0]) - np.array(o[0], np.float32)
    b, c = q @ u, q @ q - 1.5**2
    expected = b - np.sqrt(b * b - c)  # float64 oracle: 6.689
    for got in (
        cs.raycast(w, o, d, 15.0).distance[0],
        cs.slot_raycast(w, o, d, 15.0, method="per_ray")[0, 0],
        cs.slot_raycast(w, o, d, 15.0, method="strips")[0, 0],
    ):
        assert got == pytest.approx(expected, abs=1e-3)
    wall = cs.World()
    wall.add_segments([[-99000008.0, -98999992.0, -99000008.0, -99000000.0]])
    o, d = [[-99000008.0, -98999984.0]], [[-0.1, -1.0]]
    for r in (1.0, 3.0):
        walk = cs.raycast(wall, o, d, 22.0, radius=r).distance[0]
        strips = cs.slot_raycast(wall, o, d, 22.0, radius=r, method="strips")[0, 0]
        assert np.isfinite(walk) and walk == strips


def test_auto_slot_casts_near_the_limit_do_not_depend_on_thread_count():
    # 'auto' picks strips or the walk per chunk of agents; where the two disagreed (the
    # grid above), the answer depended on how many threads cut the agents into chunks.
    w = cs.World()
    w.add_circles([[98999992.0, -99000008.0]], [1.5])
    w.cell_size = 2.0
    n = 256
    pos = np.tile(np.float32([[98999984.0, -99000008.0]]), (n, 1))
    la = np.full(n, 15.0, np.float32)
    la[0] = 100.0  # one long look-ahead: its chunk uses strips
    out = {}
    for t in (1, 2):
        with cs.threads(t):
            out[t] = cs.slot_raycast(w, pos, np.float32([[1.0, -0.1]]), la)
    np.testing.assert_array_equal(out[1], out[2])
    assert np.isfinite(out[1]).all()


def test_a_world_of_long_walls_keeps_its_grid_within_memory():
    """Every wall is listed in every grid cell of its box, so long diagonal walls cost the
    square of their length in cells: 5,000 random segments ~100 m long in a 200 m box
    asked for 3 GB at the automatic cell (20,000 for more than 6 GB, a MemoryError or the
    OOM killer). The cell now grows until the grid lists at most 2^23 entries. Oracle:
    the brute-force raycast, the grid only decides what is tested."""
    rng = np.random.default_rng(0)
    walls = rng.uniform(-100, 100, (5000, 4)).astype(np.float32)
    w = cs.World()
    w.add_segments(walls)
    origins = rng.uniform(-90, 90, (60, 2)).astype(np.float32)
    ang = rng.uniform(-np.pi, np.pi, 60)
    dirs = np.c_[np.cos(ang), np.sin(ang)].astype(np.float32)
    hits = cs.raycast(w, origins, dirs, 50.0)
    nx, ny, cell = w.index_info["grid"]
    auto = np.sqrt(200.0 * 200.0 / (20 * 5000))  # the automatic cell, about 0.63
    assert cell > 2 * auto
    # Box cells of every wall at this cell: within the budget (the old cell gave ~55 M).
    span = np.abs(walls[:, 2:] - walls[:, :2]) / cell
    assert float(np.prod(np.floor(span) + 2.0, axis=1).sum()) <= 2**23
    want = ref.ref_raycast(walls, (np.zeros((0, 2)), np.zeros(0)), [], origins, dirs, 50.0)
    np.testing.assert_allclose(hits.distance, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("offset", [0.0, 1024.0])
def test_nearest_for_points_on_a_wall_is_distance_zero_with_the_documented_normal(offset):
    # The closest point of a segment is computed, and lands up to an ulp beside an exact
    # point of it: 12 of these 196 points on the wall got distance 1.8e-15 and the residue
    # divided by itself as normal, (±1, 0), along the wall. Docstring: on a wall, distance
    # 0 and the segment direction turned counter-clockwise, here (0, 1).
    o = np.float32(offset)
    w = cs.World()
    w.add_segments(np.float32([[-25, -25, 25, -25]]) + o)
    xs = np.arange(-24, 25, 0.25, dtype=np.float32)
    q = np.c_[xs, np.full_like(xs, -25)] + o
    r = cs.nearest(w, q, 1.0)
    np.testing.assert_array_equal(r.distance, 0.0)
    np.testing.assert_array_equal(r.normal, np.tile(np.float32([0, 1]), (len(xs), 1)))
    # The same with max_dist 0: on the wall is within reach (12 of them were misses).
    at = cs.nearest(w, q, 0.0)
    np.testing.assert_array_equal(at.distance, 0.0)
    assert (at.obstacle == 0).all()
    # Off the wall by a float32 step the normal is the true one, not the on-wall rule.
    below = cs.nearest(w, q - np.float32([0, 0.001]), 1.0)
    np.testing.assert_allclose(below.normal, np.tile([0.0, -1.0], (len(xs), 1)), atol=1e-6)


def test_a_world_of_more_than_two_million_obstacles_keeps_a_grid_of_many_cells():
    """The grid's entry budget (2^23) counts at least 4 entries a primitive, so above 2^21
    primitives it could never be met: the cell grew to the whole extent, one cell held
    every obstacle, and each ray tested all of them (200 rays: 2.7 s against 1.1 ms one
    circle fewer; fuzz round 9). The budget grows with the primitives."""
    n = 2**21 + 1
    w = cs.World()
    w.add_circles(np.random.default_rng(0).uniform(-1000, 1000, (n, 2)).astype(np.float32), 0.1)
    cs.raycast(w, [[0, 0]], [[1, 0]], 1.0)  # builds the index
    nx, ny, _ = w.index_info["grid"]
    assert nx * ny > 1_000_000


def test_the_rectangles_of_an_occupancy_grid_share_their_edges_bit_for_bit():
    """The merged rectangles were added as float32 centres and half extents, whose corners
    need not meet: one box's top could lie 2e-7 below the next one's bottom, and a point or
    a ray on the seam passed through the solid (2 of 3,000 random placements; fuzz round
    9). Given by their corners, stacked rectangles share the seam's coordinate exactly."""
    occ = np.array([[True, True, True], [True, True, False]])  # two rectangles, stacked
    origin = (-57.26284560995367, -1.1574901060195515)
    w = cs.World()
    w.add_occupancy(occ, 1.0, origin)
    y = np.float32(-0.15749011933803558)  # on the seam
    assert cs.inside(w, [[origin[0] + 0.5, y]])[0]
    assert cs.raycast(w, [[origin[0] - 1.0, y]], [[1.0, 0.0]], 100.0).distance[0] == 1.0
    rng = np.random.default_rng(1)
    for _ in range(300):
        cell, o = float(rng.uniform(0.01, 3)), rng.uniform(-100, 100, 2)
        w = cs.World()
        lower, upper = w.add_occupancy(occ, cell, o)
        tops = w.walls[w.wall_obstacles == lower][:, [1, 3]].max()
        bottoms = w.walls[w.wall_obstacles == upper][:, [1, 3]].min()
        assert tops == bottoms


@pytest.mark.parametrize(
    "ring, distinct",
    [
        ([[0, 0], [1, 0], [0, 0], [1, 0]], 2),
        ([[0, 0], [1, 0], [0, 0], [1, 0], [0, 0]], 2),
        ([[5e7, 5e7]] * 2 + [[5e7, 5e7 + 1]], 1),
    ],
)
def test_a_ring_of_fewer_than_three_distinct_points_is_refused(ring, distinct):
    # Repeats that were not next to each other passed: four walls on one segment, whose
    # every point read as inside. A ring float32 collapses (5e7 + 1 is 5e7) was refused as
    # repeating its first point.
    w = cs.World()
    with pytest.raises(ValueError, match=f"at least 3 distinct points, got {distinct}"):
        w.add_polygon(ring)


def test_shapely_empty_parts_add_nothing_and_a_bad_part_adds_none():
    # Empty polygons were skipped, empty lines refused and empty points raised GEOS's own
    # error; a collection with one bad part kept the parts before it (fuzz round 15).
    shapely = pytest.importorskip("shapely")
    from shapely.geometry import LinearRing, LineString, Point, Polygon

    w = cs.World()
    with_empty = shapely.from_wkt("GEOMETRYCOLLECTION (POINT EMPTY, MULTIPOINT ((1 1)))")
    for empty in (Polygon(), LineString(), LinearRing(), Point(), with_empty):
        w.add_shapely(empty)
    assert w.obstacle_count == 1  # the one point that was not empty
    good = Polygon([(0, 0), (1, 0), (1, 1)])
    bad = Polygon([(5, 5), (6, 5), (5, 5), (6, 5)])  # two distinct points
    with pytest.raises(ValueError, match=r"add_shapely: part 2 \(Polygon\): .*3 distinct points"):
        w.add_shapely(shapely.GeometryCollection([good, LineString([(3, 0), (4, 0)]), bad]))
    assert w.obstacle_count == 1 and w.segment_count == 0
    assert w.add_shapely(shapely.GeometryCollection([good, LineString([(3, 0), (4, 0)])])) == [1, 2]


def test_adding_nothing_is_allowed_and_adds_nothing():
    """A loop adding a random number of pillars, none this time, called add_circles([], [])
    and got "expected shape (C, 2), got (0,)" (a stress run). An empty list is zero rows;
    a non-empty wrong shape is still refused."""
    w = cs.World()
    w.add_box((0, 0), (1, 1))
    before = w.obstacle_count
    for ids in (w.add_segments([]), w.add_circles([], []), w.add_circles([], 0.5)):
        assert ids.dtype == np.int32 and ids.shape == (0,)
    assert w.obstacle_count == before and len(w.circles[1]) == 0
    with pytest.raises(ValueError, match=r"centers: expected shape \(C, 2\), got \(1,\)"):
        w.add_circles([1.0], [1.0])
    with pytest.raises(ValueError, match=r"expected shape \(M, 4\)"):
        w.add_segments([1.0, 2.0])


def test_a_shape_fixed_by_another_argument_is_named_with_its_extent():
    """3 origins and 2 directions were refused as "expected shape (R, 2), got (2, 2)",
    which reads as met (fuzz round of 2026-12-07): a named extent fixed by another
    argument now shows its value."""
    w = cs.World()
    w.add_box((0, 0), (1, 1))
    origins = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match=r"directions: expected shape \(R=3, 2\), got \(2, 2\)"):
        cs.raycast(w, origins, np.ones((2, 2), np.float32), 5.0)
    with pytest.raises(ValueError, match=r"origins: expected shape \(N, 2\), got \(3,\)"):
        cs.raycast(w, np.zeros(3, np.float32), np.ones((3, 2), np.float32), 5.0)  # R free
