"""Slow, obvious NumPy reference implementations: the oracle for the C++ kernels.

Written for clarity, never for speed, and never by calling contextsteer: each function
restates the rule from its source (the seeds in shared/seeds/) in plain loops or NumPy.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- maps ---


# -------------------------------------------------------------------------- world ---

# Brute force over every obstacle, in float64. The C++ kernels compute in float32, so the
# tests compare against two oracles: a *generous* one (every segment extended by eps at
# both ends, every circle and capsule grown by eps, polygons grown by eps, max_dist + eps)
# and a *strict* one (everything shrunk by eps). Any correct float32 answer lies between
# them: generous_distance - tol <= distance <= strict_distance + tol. Rays that graze an
# endpoint or a circle within eps are thereby allowed either answer, and no other ray is.


def ray_segment_distance(o, d, a, b):
    """Distance along the unit ray o + t d (t >= 0) to the segment [a, b], or inf.

    Collinear rays hit the first point of the segment at t >= 0 (0 if it covers o).
    """
    o, d, a, b = (np.asarray(v, dtype=np.float64) for v in (o, d, a, b))
    e = b - a
    den = d[0] * e[1] - d[1] * e[0]
    ao = a - o
    if den == 0.0:
        if ao[0] * d[1] - ao[1] * d[0] != 0.0:
            return np.inf  # parallel, not on the line
        pa, pb = ao @ d, (b - o) @ d
        if min(pa, pb) <= 0.0 <= max(pa, pb):
            return 0.0
        return min(pa, pb) if pa > 0.0 else np.inf
    t = (ao[0] * e[1] - ao[1] * e[0]) / den
    u = (ao[0] * d[1] - ao[1] * d[0]) / den
    if t >= 0.0 and 0.0 <= u <= 1.0:
        return t
    return np.inf


def ray_circle_distance(o, d, c, r):
    """Distance along the unit ray to the disc |x - c| <= r; 0 when o is inside; inf on a miss."""
    if r < 0.0:
        return np.inf
    q = np.asarray(c, dtype=np.float64) - np.asarray(o, dtype=np.float64)
    cc = q @ q - r * r
    if cc <= 0.0:
        return 0.0
    b = q @ np.asarray(d, dtype=np.float64)
    disc = b * b - cc
    if b <= 0.0 or disc < 0.0:
        return np.inf
    return b - np.sqrt(disc)


def point_segment_distance(p, a, b):
    """(distance, closest point) from p to the segment [a, b]."""
    p, a, b = (np.asarray(v, dtype=np.float64) for v in (p, a, b))
    e = b - a
    u = np.clip((p - a) @ e / (e @ e), 0.0, 1.0)
    q = a + u * e
    return float(np.hypot(*(p - q))), q


def point_in_ring(p, ring):
    """Crossing-number test (boundary not handled: callers keep away from it)."""
    x, y = float(p[0]), float(p[1])
    inside = False
    n = len(ring)
    for i in range(n):
        (x1, y1), (x2, y2) = ring[i], ring[(i + 1) % n]
        if (y1 > y) != (y2 > y):
            xi = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if x < xi:
                inside = not inside
    return inside


def ring_boundary_distance(p, ring):
    n = len(ring)
    return min(point_segment_distance(p, ring[i], ring[(i + 1) % n])[0] for i in range(n))


def _grow_segment(a, b, eps):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    e = b - a
    length = np.hypot(*e)
    if eps < 0.0 and length <= -2.0 * eps:
        return None
    u = e / length
    return a - eps * u, b + eps * u


def ref_raycast(walls, circles, rings, origins, directions, max_dist, *, radius=0.0, eps=0.0):
    """Closest-hit distances of rays (inf on a miss), brute force over all obstacles.

    walls: (M, 4); circles: (centers (C, 2), radii (C,)); rings: list of (P, 2) polygon
    rings (interiors); directions need not be unit. eps > 0 gives the generous oracle,
    eps < 0 the strict one (see above).
    """
    walls = np.asarray(walls, dtype=np.float64).reshape(-1, 4)
    centers = np.asarray(circles[0], dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(circles[1], dtype=np.float64).reshape(-1)
    origins = np.asarray(origins, dtype=np.float64).reshape(-1, 2)
    directions = np.asarray(directions, dtype=np.float64).reshape(-1, 2)
    max_dist = np.broadcast_to(np.asarray(max_dist, dtype=np.float64), (len(origins),))
    out = np.full(len(origins), np.inf)
    for i, (o, d0) in enumerate(zip(origins, directions)):
        # The kernels normalise in float64 and store the unit direction as float32.
        d = (d0 / np.hypot(*d0)).astype(np.float32).astype(np.float64)
        best = np.inf
        for ring in rings:
            ring = np.asarray(ring, dtype=np.float64)
            bd = ring_boundary_distance(o, ring)
            inside = point_in_ring(o, ring)
            if (eps >= 0.0 and (inside or bd <= eps)) or (eps < 0.0 and inside and bd > -eps):
                best = 0.0
        for ax, ay, bx, by in walls:
            if radius > 0.0:
                r = radius + eps
                dist, _ = point_segment_distance(o, (ax, ay), (bx, by))
                if dist <= r:
                    best = 0.0
                    continue
                e = np.array([bx - ax, by - ay])
                n = np.array([-e[1], e[0]]) / np.hypot(*e) * r
                a, b = np.array([ax, ay]), np.array([bx, by])
                t = min(ray_circle_distance(o, d, a, r), ray_circle_distance(o, d, b, r),
                        ray_segment_distance(o, d, a + n, b + n), ray_segment_distance(o, d, a - n, b - n))
            else:
                g = _grow_segment((ax, ay), (bx, by), eps)
                t = np.inf if g is None else ray_segment_distance(o, d, *g)
                if eps > 0.0 and point_segment_distance(o, (ax, ay), (bx, by))[0] <= eps:
                    t = 0.0  # origin on (or within eps of) the wall: 0 is a valid answer
            best = min(best, t)
        for c, r in zip(centers, radii):
            best = min(best, ray_circle_distance(o, d, c, r + radius + eps))
        out[i] = best if best <= max_dist[i] + eps else np.inf
    return out


def ref_nearest(walls, circles, points, max_dist):
    """(distance, closest point) of each point to the walls and circle boundaries within max_dist."""
    walls = np.asarray(walls, dtype=np.float64).reshape(-1, 4)
    centers = np.asarray(circles[0], dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(circles[1], dtype=np.float64).reshape(-1)
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    dist = np.full(len(points), np.inf)
    closest = np.zeros((len(points), 2))
    for i, p in enumerate(points):
        for ax, ay, bx, by in walls:
            dd, q = point_segment_distance(p, (ax, ay), (bx, by))
            if dd < dist[i]:
                dist[i], closest[i] = dd, q
        for c, r in zip(centers, radii):
            v = p - c
            length = np.hypot(*v)
            u = v / length if length > 0 else np.array([1.0, 0.0])
            dd = abs(length - r)
            if dd < dist[i]:
                dist[i], closest[i] = dd, c + r * u
        if dist[i] > max_dist:
            dist[i], closest[i] = np.inf, 0.0
    return dist, closest


def ref_inside(circles, rings, points):
    """Points inside any polygon ring or circle (closed)."""
    centers = np.asarray(circles[0], dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(circles[1], dtype=np.float64).reshape(-1)
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    out = np.zeros(len(points), dtype=bool)
    for i, p in enumerate(points):
        out[i] = any(point_in_ring(p, np.asarray(r, dtype=np.float64)) for r in rings) or any(
            np.hypot(*(p - c)) <= r for c, r in zip(centers, radii))
    return out



# --------------------------------------------------------------------------- path ---
