"""The one geometry module (cpp/include/contextsteer/geometry.hpp) through the public API:
the sensor (raycast, slot_raycast, nearest) and the mover (sweep_circle) share its
contracts, checked against float64 oracles on the cases those contracts name — collinear
rays along a wall, grazing thick rays, vertices, very short walls. The primitives
themselves are tested against a long-double oracle in tests/cpp/test_geometry.cpp."""

import numpy as np
import pytest
from hypothesis import assume, event, example, given
from hypothesis import strategies as st

import contextsteer as cs
import reference as ref

# Coordinates on a 1/8 lattice: collinear and grazing configurations happen exactly.
lattice = st.integers(-40, 40).map(lambda i: i / 8)
slots = cs.slot_directions(8)  # axis-aligned and diagonal rays


def _world(walls):
    w = cs.World()
    w.add_segments(np.float32(walls))
    return w


@given(a=lattice, b=lattice, y=lattice, o=lattice)
def test_a_ray_along_a_wall_touches_its_first_point(a, b, y, o):
    """Collinear contract: a ray running along a wall hits its first point at t >= 0 (0 when
    the wall covers the origin), a miss when the wall lies behind; every slot-ray method
    and the single raycast agree."""
    assume(a != b)
    w = _world([[a, y, b, y]])
    origin = np.float32([[o, y]])
    for direction, sign in (([1, 0], 1.0), ([-1, 0], -1.0)):
        lo, hi = sorted((sign * (a - o), sign * (b - o)))
        expected = 0.0 if lo <= 0.0 <= hi else (lo if lo > 0 else np.inf)
        expected = expected if expected <= 20.0 else np.inf
        hit = cs.raycast(w, origin, np.float32([direction]), 20.0)
        assert hit.distance[0] == np.float32(expected)
        assert hit.hit[0] == np.isfinite(expected)
    want = cs.raycast(w, np.repeat(origin, 8, 0), slots, 20.0).distance
    for method in ("gather", "per_ray", "strips"):
        got = cs.slot_raycast(w, origin, slots, 20.0, method=method)[0]
        np.testing.assert_array_equal(got, want, err_msg=method)


@given(
    wall=st.tuples(lattice, lattice, lattice, lattice),
    o=st.tuples(lattice, lattice),
    r=st.sampled_from([0.125, 0.25, 0.5, 1.0]),
)
# The oracle's disc test assumed |d| = 1 of the float32-stored direction and was 1e-5 off
# here (the kernel was right to 2e-8: 7.2478445 m, worked in 40 digits).
@example(wall=(1.375, 4.25, 1.5, 0.0), o=(-3.875, -0.875), r=0.125)
def test_thick_rays_match_the_float64_capsule_oracle(wall, o, r):
    """Thick rays (a disc swept along the ray) against the float64 reference, lattice
    inputs included: rays grazing a capsule's side or end disc exactly."""
    ax, ay, bx, by = wall
    assume((ax, ay) != (bx, by))
    w = _world([wall])
    origins = np.repeat(np.float32([o]), 8, 0)
    got = cs.raycast(w, origins, slots, 12.0, radius=r)
    want_d = ref.ref_raycast(
        np.float64([wall]),
        (np.zeros((0, 2)), np.zeros(0)),
        [],
        origins.astype(np.float64),
        slots.astype(np.float64),
        12.0,
        radius=r,
    )
    both = np.isfinite(got.distance) & np.isfinite(want_d)
    np.testing.assert_allclose(got.distance[both], want_d[both], rtol=0, atol=1e-5)
    # A hit / miss disagreement is allowed only for an exact graze (touch within 1e-5).
    for j in np.flatnonzero(np.isfinite(got.distance) != np.isfinite(want_d)):
        t = got.distance[j] if np.isfinite(got.distance[j]) else want_d[j]
        p = np.float64(o) + t * np.float64(slots[j])
        gap, _ = ref.point_segment_distance(p, np.float64(wall[:2]), np.float64(wall[2:]))
        assert abs(gap - r) < 1e-5


@given(
    o=st.tuples(lattice, lattice),
    j=st.integers(0, 7),
    ahead=st.integers(4, 32).map(lambda i: i / 8),
    side=st.integers(-8, 8).map(lambda i: i / 8),
    half=st.tuples(lattice, lattice),
    r=st.sampled_from([0.125, 0.25, 0.5]),
)
def test_sensor_and_mover_meet_a_wall_at_the_same_distance(o, j, ahead, side, half, r):
    """Where a thick ray of radius r reports a head-on hit at t, a circle of radius r
    moving further along it stops at t (less the sweep's skin); where the ray only grazes
    the wall (normal across the motion), the circle slides on untouched. Walls are placed
    ahead of the ray, on the lattice (parallel and grazing placements included)."""
    d = np.float64(slots[j])
    centre = np.float64(o) + ahead * d + side * np.float64([-d[1], d[0]])
    wall = np.float32([*(centre - np.float64(half)), *(centre + np.float64(half))])
    assume(tuple(wall[:2]) != tuple(wall[2:]))
    w = _world([wall])
    d = np.float64(slots[j])
    hit = cs.raycast(w, np.float32([o]), np.float32([d]), 6.0, radius=r)
    assume(hit.hit[0] and hit.distance[0] > 0)
    t = float(hit.distance[0])
    move = d * (t + 1.0)
    pos, contacts = cs.sweep_circle(w, np.float32([o]), np.float32([move]), r, iterations=1)
    facing = float(np.dot(hit.normal[0], d))
    along = float(np.dot(pos[0] - np.float64(o), d))
    skin = 1e-3 * r + 1e-6 * max(abs(o[0]), abs(o[1]))
    if facing < -1e-6:
        event("head-on")
        assert contacts[0] == 1
        assert along == pytest.approx(t, abs=skin + 1e-5)
    else:  # grazing: the sensor sees the touch, the mover slides past it
        event("grazing")
        assert facing == pytest.approx(0.0, abs=1e-6)
        if along < t - 1e-5:
            # Only a touch within rounding may stop the mover before the sensor's touch:
            # a wall off the axes is tangent to the path only up to float32 rounding (its
            # ends ~1e-8 inside r), and the mover's direction (the float32 move, normalised)
            # differs from the ray's by as much, so either may see the touch first. The
            # path's least distance to the wall (segment to segment: the least of the four
            # end-to-segment distances; a wall parallel to the path at r touches along
            # its length, not at an end) is then r.
            a, b = np.float64(wall[:2]), np.float64(wall[2:])
            p0, p1 = np.float64(o), np.float64(o) + move
            gaps = [ref.point_segment_distance(q, p0, p1)[0] for q in (a, b)]
            gaps += [ref.point_segment_distance(q, a, b)[0] for q in (p0, p1)]
            assert min(gaps) == pytest.approx(r, abs=1e-6)


@given(
    wall=st.tuples(
        lattice, lattice, st.integers(1, 8).map(lambda i: i / 1024), st.floats(0, 6.283)
    ),
    p=st.tuples(lattice, lattice),
)
def test_nearest_on_very_short_walls_matches_the_oracle(wall, p):
    """Closest point on a segment, for walls down to 1/1024 long (almost a point)."""
    ax, ay, length, angle = wall
    b = (np.float32(ax + length * np.cos(angle)), np.float32(ay + length * np.sin(angle)))
    assume((np.float32(ax), np.float32(ay)) != b)
    w = _world([[ax, ay, b[0], b[1]]])
    got = cs.nearest(w, np.float32([p]), 100.0)
    want, _ = ref.point_segment_distance(np.float64(p), np.float64([ax, ay]), np.float64(b))
    assert got.distance[0] == pytest.approx(want, abs=1e-6)


@given(
    o=st.tuples(lattice, lattice),
    d=st.sampled_from([(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]),
    ahead=st.integers(2, 32).map(lambda i: i / 8),
    length=st.integers(1, 32).map(lambda i: i / 8),
    r=st.sampled_from([0.125, 0.25, 0.5]),
    left=st.booleans(),
)
def test_a_grazing_wall_is_a_touch_for_the_sensor_and_a_slide_for_the_mover(
    o, d, ahead, length, r, left
):
    """A wall parallel to an axis-aligned ray at exactly the ray's radius: the thick ray
    touches it where it begins (the collinear rule on the capsule's side), the circle moving
    along the same line is not stopped (the contact's normal is across the motion)."""
    d = np.float64(d)
    n = np.float64([-d[1], d[0]]) * (r if left else -r)
    a = np.float64(o) + ahead * d + n
    b = a + length * d
    w = _world([[*a, *b]])
    hit = cs.raycast(w, np.float32([o]), np.float32([d]), 40.0, radius=r)
    assert hit.hit[0]
    assert hit.distance[0] == pytest.approx(ahead, abs=1e-6)
    assert abs(float(np.dot(hit.normal[0], d))) < 1e-6
    move = np.float32([d * (ahead + length + 2.0)])
    pos, contacts = cs.sweep_circle(w, np.float32([o]), move, r, iterations=1)
    assert contacts[0] == 0
    np.testing.assert_array_equal(pos[0], np.float32(o) + move[0])


def test_a_thick_ray_from_far_away_meets_the_wall_its_thin_ray_meets():
    """ray_circle took b^2 - c from two numbers of the order |q|^2, and a float32 unit
    direction (|d|^2 = 1 ± 1e-7) shifts b^2 by |q|^2 · 1e-7: 0.1 m^2 at 1 km, as much as
    r^2 for r = 0.3. A thick ray from 1–3 km passing a wall's end disc missed it (17 of
    8,000 at 3 km), and cs.route sent a leg of 1 km through a wall (fuzz round 9). A thick
    ray's capsule holds the thin ray's segment, so it must hit no later."""
    w = cs.World()
    w.add_segments([[0, 10, 10, 10]])
    rng = np.random.default_rng(0)
    for dist in (1000.0, 3000.0, 10000.0):
        ends = np.c_[rng.uniform(0, 10, 1000), rng.uniform(0, 9.5, 1000)].astype(np.float32)
        ang = rng.uniform(0.2, np.pi - 0.2, 1000)
        starts = (ends + dist * np.c_[np.cos(ang), np.sin(ang)]).astype(np.float32)
        d = (ends - starts).astype(np.float32)
        length = np.hypot(d[:, 0], d[:, 1]).astype(np.float32)
        u = (d / length[:, None]).astype(np.float32)
        thin = cs.raycast(w, starts, u, length).distance
        thick = cs.raycast(w, starts, u, length, radius=0.3).distance
        met = np.isfinite(thin)
        assert met.sum() > 100
        assert (thick[met] <= thin[met]).all()
    (leg,) = cs.route(w, [[892.8776, 465.0797]], [[2.2925, 6.3272]], radius=0.3)
    assert len(leg.points) > 2  # round the wall's end, not through it


def test_thick_ray_ties_do_not_depend_on_which_grid_the_cache_holds():
    """A thick ray starting within its radius of several walls hits them all at distance 0.
    The first one the walk found was reported, and the walk's grid depended on the calls
    before: a fifth radius is past the thick grids' cache and walks the plain grid, so the
    same rays reported other walls (169 of 169 here; fuzz round 12). Of equal distances
    the lowest wall row is kept now, in both walks."""

    def world():
        w = cs.World()
        w.add_segments([[-10, -1, 10, -1], [-10, 1, 10, 1], [-1, -10, -1, 10], [1, -10, 1, 10]])
        return w

    g = np.linspace(-3, 3, 13)
    origins = np.array([[x, y] for x in g for y in g], np.float32)
    dirs = np.tile(np.float32([[1.0, 0.3]]), (len(origins), 1))
    fresh = cs.raycast(world(), origins, dirs, 10.0, radius=3.0)
    w = world()
    for r in (0.1, 0.5, 1.0, 2.0):  # fill the cache of thick grids
        cs.raycast(w, origins[:1], dirs[:1], 10.0, radius=r)
    later = cs.raycast(w, origins, dirs, 10.0, radius=3.0)
    for name in ("distance", "hit", "normal", "obstacle"):
        np.testing.assert_array_equal(getattr(fresh, name), getattr(later, name), err_msg=name)
    # Brute force: every start is within 3 of a wall, so each hit is at 0 and names the
    # lowest wall within the radius.
    walls = w.walls.astype(np.float64)
    assert np.all(fresh.distance == 0)
    for o, got in zip(origins.astype(np.float64), fresh.obstacle):
        a, b = walls[:, :2], walls[:, 2:]
        t = np.clip(np.einsum("ij,ij->i", o - a, b - a) / np.einsum("ij,ij->i", b - a, b - a), 0, 1)
        near = np.linalg.norm(a + t[:, None] * (b - a) - o, axis=1) <= 3.0
        assert got == np.flatnonzero(near)[0]


def test_a_3d_memoryview_is_a_stack_of_maps():
    """combine iterated a buffer that is not an ndarray as a sequence of maps, and a 3-D
    memoryview cannot be iterated (NotImplementedError: multi-dimensional sub-views)."""
    stack = np.random.default_rng(0).random((2, 3, 8), dtype=np.float32)
    np.testing.assert_array_equal(cs.combine(memoryview(stack)), cs.combine(stack))
