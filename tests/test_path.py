"""Paths: closest offset, point and tangent at an offset, look-ahead direction."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import contextsteer as cs
import reference as ref

SQUARE = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], dtype=np.float32)


def polylines(min_points=2, max_points=10, span=100.0):
    # Multiples of 1/64 (exact in float32): the oracle's cumulative lengths then never
    # swallow a segment (tiny segments are tested by name below).
    coord = st.integers(int(-span * 64), int(span * 64)).map(lambda i: i / 64)
    pts = st.lists(st.tuples(coord, coord), min_size=min_points, max_size=max_points)
    return pts.map(lambda p: np.array(p, dtype=np.float32)).filter(
        lambda p: len(ref.path_vertices(p, False)) >= 2 and np.ptp(p, axis=0).max() > 1e-2
    )


def queries(n=8, span=150.0):
    coord = st.floats(-span, span, allow_nan=False, allow_infinity=False, width=32)
    return st.lists(st.tuples(coord, coord), min_size=1, max_size=n).map(
        lambda q: np.array(q, dtype=np.float32)
    )


def unique_nearest(vertices, closed, q, eps=1e-3, spread=1e-2):
    """True when every segment within eps of the best distance has its nearest point at
    an offset within `spread` of the best one (the nearest offset is well defined, also
    where the polyline doubles back over itself)."""
    a, b = ref.path_segments(vertices, closed)
    cum = ref.path_cumulative(vertices, closed)
    d = b - a
    t = np.clip(((q - a) * d).sum(1) / (d * d).sum(1), 0, 1)
    dist = np.hypot(*(q - (a + t[:, None] * d)).T)
    offset = cum[:-1] + t * np.diff(cum)
    best = dist.argmin()
    gap = np.abs(offset[dist <= dist[best] + eps] - offset[best])
    if closed:
        gap = np.minimum(gap, cum[-1] - gap)
    return bool(np.all(gap <= spread))


# ---------------------------------------------------------------- basics ---


def test_square_basics():
    p = cs.Path(SQUARE, closed=True)
    assert p.length == 40.0 and p.closed
    np.testing.assert_array_equal(p.points, SQUARE)
    assert p.closest_offset([5, -1]) == 5.0
    np.testing.assert_array_equal(p.closest_offset([[11, 5], [5, 11], [-1, 5]]), [15, 25, 35])
    np.testing.assert_array_equal(
        p.point_at([0, 10, 15, 40, 45, -5]), [[0, 0], [10, 0], [10, 5], [0, 0], [5, 0], [0, 5]]
    )
    np.testing.assert_array_equal(
        p.tangent_at([0, 5, 10, 25, 39.5]), [[1, 0], [1, 0], [0, 1], [-1, 0], [0, -1]]
    )


def test_open_path_has_one_segment_less():
    p = cs.Path(SQUARE)
    assert p.length == 30.0 and not p.closed
    assert p.closest_offset([-1, 6]) == 30.0  # no closing segment: nearest is the end


def test_duplicates_are_dropped():
    p = cs.Path([[0, 0], [0, 0], [1, 0], [1, 0], [1, 1], [0, 0]], closed=True)
    np.testing.assert_array_equal(p.points, [[0, 0], [1, 0], [1, 1]])
    assert p.length == pytest.approx(2 + math.sqrt(2))


def test_scalar_and_batch_shapes():
    p = cs.Path(SQUARE, closed=True)
    assert p.closest_offset([1, 1]).shape == ()
    assert p.closest_offset(np.zeros((0, 2))).shape == (0,)
    assert p.point_at(3.0).shape == (2,)
    assert p.tangent_at([1.0, 2.0]).shape == (2, 2)
    assert p.direction([1, 1]).shape == (2,)
    assert p.direction(np.ones((5, 2)), 2.0).shape == (5, 2)
    assert "closed" in repr(p)


def test_points_view_is_read_only_and_outlives_path():
    p = cs.Path(SQUARE, closed=True)
    view = p.points
    assert not view.flags.writeable
    assert np.shares_memory(view, p.points)
    with pytest.raises(ValueError):
        view[0, 0] = 1.0
    del p
    np.testing.assert_array_equal(view, SQUARE)


# -------------------------------------------------------- closest offset ---


@given(polylines(), queries(), st.booleans())
def test_closest_offset_matches_brute_force(points, q, closed):
    p = cs.Path(points, closed=closed)
    v = ref.path_vertices(points, closed)
    np.testing.assert_array_equal(p.points, v.astype(np.float32))
    dist, offset = ref.path_closest_brute(v, closed, q)
    got = p.closest_offset(q)
    # point_at(closest_offset(q)) is a nearest point of the polyline.
    got_dist = np.hypot(*(p.point_at(got).astype(np.float64) - q).T)
    tol = 1e-4 * (1 + p.length)
    np.testing.assert_allclose(got_dist, dist, atol=tol)
    for i in range(len(q)):
        if unique_nearest(v, closed, q[i].astype(np.float64)):
            d = abs(got[i] - offset[i])
            if closed:
                d = min(d, p.length - d)
            assert d <= 10 * tol


@given(polylines(), queries(), st.booleans())
def test_closest_offset_against_dense_sampling(points, q, closed):
    p = cs.Path(points, closed=closed)
    spacing = p.length / 2000
    dense_dist, _ = ref.path_closest_dense(p.points, closed, q, spacing)
    got_dist = np.hypot(*(p.point_at(p.closest_offset(q)).astype(np.float64) - q).T)
    # Dense sampling over-estimates the true distance by at most spacing / 2.
    assert np.all(got_dist <= dense_dist + 1e-4 * (1 + p.length))
    assert np.all(got_dist >= dense_dist - spacing / 2 - 1e-4 * (1 + p.length))


@given(polylines(), queries(), st.booleans())
def test_offsets_in_range(points, q, closed):
    p = cs.Path(points, closed=closed)
    o = p.closest_offset(q)
    assert np.all(o >= 0)
    if closed:
        assert np.all(o < p.length)
    else:
        assert np.all(o <= np.float32(p.length))


@given(
    polylines(),
    queries(),
    st.booleans(),
    st.floats(0, 2 * math.pi),
    st.floats(-500, 500),
    st.floats(-500, 500),
)
def test_rigid_motion_moves_offsets_along(points, q, closed, angle, tx, ty):
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s], [s, c]])

    def move(x):
        return (x.astype(np.float64) @ rot.T + [tx, ty]).astype(np.float32)

    moved_points = move(points)
    assume(len(ref.path_vertices(moved_points, closed)) == len(ref.path_vertices(points, closed)))
    p, pm = cs.Path(points, closed=closed), cs.Path(moved_points, closed=closed)
    assert pm.length == pytest.approx(p.length, rel=1e-4, abs=1e-3)
    o, om = p.closest_offset(q), pm.closest_offset(move(q))
    tol = 1e-3 * (1 + p.length)
    d_near = np.hypot(*(p.point_at(o).astype(np.float64) - q).T)
    dm_near = np.hypot(*(pm.point_at(om).astype(np.float64) - move(q)).T)
    np.testing.assert_allclose(dm_near, d_near, atol=tol)
    v = ref.path_vertices(points, closed)
    for i in range(len(q)):
        if unique_nearest(v, closed, q[i].astype(np.float64), eps=0.05, spread=1e-3):
            d = abs(float(o[i]) - float(om[i]))
            if closed:
                d = min(d, p.length - d)
            assert d <= 10 * tol


def test_long_path_matches_brute_force():
    # 20,000 segments: the BVH answer equals the exhaustive one.
    x = np.linspace(0, 2000, 20001)
    pts = np.c_[x, 20 * np.sin(x / 7)].astype(np.float32)
    p = cs.Path(pts)
    rng = np.random.default_rng(1)
    q = (pts[rng.integers(0, len(pts), 200)] + rng.normal(0, 5, (200, 2))).astype(np.float32)
    dist, offset = ref.path_closest_brute(p.points, False, q)
    got = p.closest_offset(q)
    got_dist = np.hypot(*(p.point_at(got).astype(np.float64) - q).T)
    np.testing.assert_allclose(got_dist, dist, atol=1e-3)


def test_thread_count_does_not_change_results():
    rng = np.random.default_rng(2)
    pts = rng.uniform(-100, 100, (300, 2)).astype(np.float32)
    p = cs.Path(pts, closed=True, smooth=True)
    q = rng.uniform(-120, 120, (5000, 2)).astype(np.float32)
    with cs.threads(1):
        a = p.closest_offset(q), p.direction(q, 3.0), p.direction(q, 3.0, mode="seek")
    with cs.threads(2):
        b = p.closest_offset(q), p.direction(q, 3.0), p.direction(q, 3.0, mode="seek")
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_tiny_segments_are_harmless():
    p = cs.Path([[0, 1], [0, 0], [0, 2.7e-42], [1e-30, 5]])
    assert p.length == pytest.approx(6.0)
    assert np.all(np.isfinite(p.point_at(np.linspace(-1, 7, 50))))
    assert np.all(np.isfinite(p.tangent_at(np.linspace(-1, 7, 50))))
    np.testing.assert_allclose(p.closest_offset([[1, 0], [0, 3]]), [1.0, 4.0], atol=1e-6)


# ------------------------------------------------------ wrap and clamp ---


def test_closed_path_wraps_offsets():
    p = cs.Path(SQUARE, closed=True)
    s = np.array([0.0, 3.5, 17.25, 39.0], dtype=np.float32)
    for k in (-2, -1, 1, 3):
        np.testing.assert_allclose(p.point_at(s + k * 40), p.point_at(s), atol=1e-5)
        np.testing.assert_array_equal(p.tangent_at(s + k * 40), p.tangent_at(s))
    # Either side of vertex 0: the closing segment ends at length, the first starts at 0.
    np.testing.assert_allclose(p.closest_offset([[-0.5, 0.5], [0.5, -0.5]]), [39.5, 0.5])
    assert p.closest_offset([0, 0]) == 0.0  # never length itself


def test_closed_path_look_ahead_crosses_the_seam():
    p = cs.Path(SQUARE, closed=True)
    np.testing.assert_array_equal(p.direction([-0.5, 2.0], look_ahead=3.0), [1, 0])


def test_open_path_clamps_offsets():
    p = cs.Path(SQUARE)
    np.testing.assert_array_equal(p.point_at([-5, 0, 30, 35]), [[0, 0], [0, 0], [0, 10], [0, 10]])
    np.testing.assert_array_equal(p.tangent_at([-5, 30, 1e6]), [[1, 0], [-1, 0], [-1, 0]])
    np.testing.assert_array_equal(p.closest_offset([[-3, -3], [-1, 12]]), [0, 30])
    # Looking ahead past the end keeps the last tangent.
    np.testing.assert_array_equal(p.direction([5, 9], look_ahead=100.0), [-1, 0])


@given(polylines(), st.booleans(), st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=10))
def test_point_and_tangent_match_reference(points, closed, offsets):
    p = cs.Path(points, closed=closed)
    s = np.array(offsets, dtype=np.float32)
    v = p.points.astype(np.float64)
    np.testing.assert_allclose(
        p.point_at(s), ref.path_point_at(v, closed, s), atol=1e-3 * (1 + p.length)
    )
    t = p.tangent_at(s)
    np.testing.assert_allclose(np.hypot(*t.T), 1.0, atol=1e-6)
    # Offsets that land within rounding of a vertex may pick either neighbour.
    cum = ref.path_cumulative(v, closed)
    w = ref.path_wrap(s, p.length, closed)
    away = np.min(np.abs(w[:, None] - cum[None, :]), axis=1) > 1e-3 * (1 + p.length)
    np.testing.assert_allclose(t[away], ref.path_tangent_at(v, closed, s)[away], atol=1e-5)


# ------------------------------------------------------------ smoothing ---


def circle_points(n, r=50.0):
    a = 2 * np.pi * np.arange(n) / n
    return np.c_[r * np.cos(a), r * np.sin(a)].astype(np.float32)


@pytest.mark.parametrize("closed", [True, False])
def test_smoothing_matches_centripetal_catmull_rom(closed):
    control = np.array([[0, 0], [10, 1], [12, 9], [30, 10], [31, 40], [5, 30]], np.float32)
    p = cs.Path(control, closed=closed, smooth=True, samples_per_segment=7)
    expected = ref.catmull_rom_centripetal(control, closed, 7)
    np.testing.assert_allclose(p.points, expected, atol=1e-4)
    # The spline passes through every control point.
    dist, _ = ref.path_closest_brute(p.points, closed, control)
    np.testing.assert_allclose(dist, 0.0, atol=1e-5)


def turning_angles(tangents):
    dots = np.clip((tangents[1:] * tangents[:-1]).sum(1), -1, 1)
    return np.arccos(dots)


def test_tangent_is_continuous_on_smoothed_paths():
    hexagon = circle_points(6)
    raw = cs.Path(hexagon, closed=True)
    s = np.linspace(0, raw.length, 4000, endpoint=False, dtype=np.float32)
    assert turning_angles(raw.tangent_at(s)).max() == pytest.approx(np.pi / 3, abs=1e-5)
    jumps = []
    for samples in (8, 16, 32):
        p = cs.Path(hexagon, closed=True, smooth=True, samples_per_segment=samples)
        s = np.linspace(0, p.length, 8000, endpoint=False, dtype=np.float32)
        jumps.append(turning_angles(p.tangent_at(s)).max())
    # A full turn split over 6 * samples segments: jumps shrink with the sampling.
    assert jumps[0] < 2 * (2 * np.pi / 48)
    assert jumps[1] < 0.6 * jumps[0] and jumps[2] < 0.6 * jumps[1]


def test_smoothing_a_circle_stays_close_to_it():
    p = cs.Path(circle_points(12), closed=True, smooth=True, samples_per_segment=16)
    r = np.hypot(*p.points.T)
    assert np.abs(r - 50).max() < 0.5
    assert p.length == pytest.approx(2 * np.pi * 50, rel=2e-3)


def test_smoothing_two_points_is_a_straight_line():
    p = cs.Path([[0, 0], [8, 0]], smooth=True, samples_per_segment=4)
    np.testing.assert_allclose(p.points, [[0, 0], [2, 0], [4, 0], [6, 0], [8, 0]], atol=1e-6)


# ------------------------------------------------------------ direction ---


def test_direction_tangent_mode_is_tangent_at_closest_plus_look_ahead():
    rng = np.random.default_rng(3)
    p = cs.Path(circle_points(9), closed=True, smooth=True)
    q = rng.uniform(-70, 70, (500, 2)).astype(np.float32)
    cum = ref.path_cumulative(p.points, True)
    for look in (0.0, 4.0, -3.0):
        s = ref.path_wrap(p.closest_offset(q).astype(np.float64) + look, p.length, True)
        got = p.direction(q, look)
        expected = ref.path_tangent_at(p.points, True, s)
        # Points beyond a vertex project onto it; the float32 offset may round either
        # side of it, so compare offsets away from vertices only.
        away = np.min(np.abs(s[:, None] - cum[None, :]), axis=1) > 1e-3
        assert away.sum() > 300
        np.testing.assert_allclose(got[away], expected[away], atol=1e-5)


def test_look_ahead_turns_before_the_bend():
    road = cs.Path([[0, 0], [100, 0], [100, 100]])
    car = np.array([[95, 1]], np.float32)
    np.testing.assert_array_equal(road.direction(car), [[1, 0]])
    np.testing.assert_array_equal(road.direction(car, look_ahead=10.0), [[0, 1]])


def test_direction_seek_mode_points_at_the_carrot():
    road = cs.Path([[0, 0], [100, 0], [100, 100]])
    q = np.array([[10, 5], [50, -20], [120, 50]], np.float32)
    look = 15.0
    carrot = road.point_at(road.closest_offset(q) + look)
    v = carrot.astype(np.float64) - q
    np.testing.assert_allclose(
        road.direction(q, look, mode="seek"), v / np.hypot(*v.T)[:, None], atol=1e-6
    )
    # On the path with no look-ahead there is no carrot: the tangent is used.
    np.testing.assert_array_equal(road.direction([50, 0], 0.0, mode="seek"), [1, 0])


# ------------------------------------------------------------ bad input ---


@pytest.mark.parametrize(
    "points",
    [
        [[1, 2]],
        [[1, 2], [1, 2]],
        [[3, 3], [3, 3], [3, 3]],
        np.zeros((0, 2)),
    ],
)
def test_fewer_than_two_distinct_points(points):
    with pytest.raises(ValueError, match="at least 2 distinct points"):
        cs.Path(points)
    with pytest.raises(ValueError, match="at least 2 distinct points"):
        cs.Path(points, closed=True, smooth=True)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_points(bad):
    pts = SQUARE.copy()
    pts[2, 1] = bad
    with pytest.raises(ValueError, match=r"\(2, 1\)"):
        cs.Path(pts)
    p = cs.Path(SQUARE)
    with pytest.raises(ValueError, match="finite"):
        p.closest_offset(pts)
    with pytest.raises(ValueError, match="finite"):
        p.direction(pts)
    with pytest.raises(ValueError, match="finite"):
        p.point_at([0.0, bad])
    with pytest.raises(ValueError, match="finite"):
        p.tangent_at([bad])
    with pytest.raises(ValueError, match="look_ahead"):
        p.direction([1, 1], look_ahead=bad)


def test_bad_shapes_and_options():
    with pytest.raises(ValueError, match=r"\(P, 2\)"):
        cs.Path(np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"\(P, 2\)"):
        cs.Path([0, 1, 2, 3])
    with pytest.raises(ValueError, match="samples_per_segment"):
        cs.Path(SQUARE, smooth=True, samples_per_segment=0)
    with pytest.raises(TypeError, match="samples_per_segment"):
        cs.Path(SQUARE, smooth=True, samples_per_segment=2.5)
    p = cs.Path(SQUARE)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        p.closest_offset(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"\(N,\)"):
        p.point_at(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="'tangent', 'seek'"):
        p.direction([1, 1], mode="steer")


def test_core_refuses_unconverted_arrays():
    core = cs.Path(SQUARE)._path
    with pytest.raises(TypeError, match="float32"):
        core.closest_offset(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="C-contiguous"):
        core.point_at(np.zeros(8, np.float32)[::2])


def test_samples_per_segment_is_checked_in_python():
    # 2**40 reached pybind11 and gave 'incompatible function arguments'.
    pts = [[0, 0], [1, 0], [2, 1]]
    with pytest.raises(ValueError, match=r"samples_per_segment: expected an int in \[1, 4096\]"):
        cs.Path(pts, smooth=True, samples_per_segment=2**40)
    with pytest.raises(TypeError, match="samples_per_segment: expected an int"):
        cs.Path(pts, smooth=True, samples_per_segment=np.True_)
    a = cs.Path(pts, smooth=True, samples_per_segment=np.int64(4))
    b = cs.Path(pts, smooth=True, samples_per_segment=4)
    np.testing.assert_array_equal(a.points, b.points)
