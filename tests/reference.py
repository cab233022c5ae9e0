"""Slow, obvious NumPy reference implementations: the oracle for the C++ kernels.

Written for clarity, never for speed, and never by calling contextsteer: each function
restates the rule from its source (the seeds in shared/seeds/) in plain loops or NumPy.
"""

from __future__ import annotations

import math

import numpy as np

# --------------------------------------------------------------------------- maps ---
# Context maps: (N, K) arrays, slot 0 along +x, slots counter-clockwise. Decisions
# (which slot, which run) compare the float32 values exactly as the kernels do; run
# totals are summed in double in ring order, like the kernels; everything else is done
# in double and compared with a tolerance.


def ref_slot_directions(k, offset=0.0):
    """Godot/Unity: slot i at angle offset + 2*pi*i/k."""
    a = offset + 2.0 * np.pi * np.arange(k) / k
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def angle_between(a, b):
    """The angle between direction(s) a (shape (2,) or (K, 2)) and vector b, from their
    cross and dot products, whatever their lengths (a float32 slot direction is not of
    unit length, and the arccos of its cosine with a vector along it would read that as a
    turn of 1e-4 rad); π/2 against a zero b, as c = 0 scores it."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if not (b[0] or b[1]):
        return np.full(a.shape[:-1], 0.5 * math.pi)
    return np.arctan2(np.abs(a[..., 0] * b[1] - a[..., 1] * b[0]), a @ b)


def ref_dot_map(dirs, vectors, shape="clamped_cosine", weight=1.0, magnitude=False):
    dirs = np.asarray(dirs, dtype=np.float64)
    vectors = np.asarray(vectors, dtype=np.float64)
    n, k = len(vectors), len(dirs)
    w = np.broadcast_to(np.asarray(weight, dtype=np.float64), (n,))
    out = np.zeros((n, k))
    for i in range(n):
        length = float(np.hypot(*vectors[i]))
        u = vectors[i] / length if length > 0 else np.zeros(2)
        for j in range(k):
            c = float(dirs[j] @ u)
            v = {
                "cosine": c,
                "clamped_cosine": max(c, 0.0),
                "half_cosine": 0.5 * (1 + c),
                "opposite_cosine": max(-c, 0.0),
                "chord": 1.0 - math.sin(0.5 * float(angle_between(dirs[j], u))),
            }[shape]
            out[i, j] = v * w[i] * (length if magnitude else 1.0)
    return out


# Sums and products saturate at the largest float32 below 2^60 (maps.combine).
COMBINE_SATURATION = np.float32(2.0**60 - 2.0**36)


def ref_combine(maps, mode="max", weights=None):
    maps = np.asarray(maps, dtype=np.float32)
    sat = COMBINE_SATURATION

    def clip(x):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.clip(x, -sat, sat).astype(np.float32)

    # The first two maps are combined in one operation, then saturated (the kernel's
    # first_two); one map alone, weighted, is saturated on its own.
    if mode == "weighted_sum":
        with np.errstate(over="ignore"):
            out = np.float32(weights[0]) * maps[0]
        if len(maps) == 1:
            out = clip(out)
    else:
        out = maps[0].copy()
    for b in range(1, len(maps)):
        m = maps[b]
        with np.errstate(over="ignore"):
            if mode == "max":
                out = np.maximum(out, m)
            elif mode == "min":
                out = np.minimum(out, m)
            elif mode == "sum":
                out = clip(out + m)
            elif mode == "weighted_sum":
                out = clip(out + np.float32(weights[b]) * m)
            elif mode == "multiply":
                out = clip(out * m)
    return out


def ref_resolve(interest, danger, mode="mask", threshold=0.0, epsilon=0.0, dirs=None):
    interest = np.asarray(interest, dtype=np.float64)
    danger = np.asarray(danger, dtype=np.float64)
    n, k = interest.shape
    out = np.zeros((n, k))
    for i in range(n):
        for j in range(k):
            a, d = interest[i, j], danger[i, j]
            if mode == "mask":
                out[i, j] = 0.0 if d > np.float32(threshold) else a
            elif mode == "subtract":
                out[i, j] = min(max(a - d, 0.0), float(COMBINE_SATURATION))
            elif mode == "subtract_unclamped":  # the Unity project
                out[i, j] = float(np.clip(a - d, -COMBINE_SATURATION, COMBINE_SATURATION))
            elif mode == "scale":
                out[i, j] = a * (1.0 - min(max(d, 0.0), 1.0))
            elif mode == "mask_min_danger":
                limit = np.float32(danger[i].min()) + np.float32(epsilon)
                out[i, j] = a if d <= limit else 0.0
            elif mode == "avoid_opposite":
                u = np.asarray(dirs, dtype=np.float64)
                add = 0.0
                for m in range(k):
                    add = max(add, danger[i, m] * max(0.0, -float(u[j] @ u[m])))
                out[i, j] = min(a + add, float(COMBINE_SATURATION))
    return out


def _ref_best(v):
    """Highest slot, lowest index on ties; -1 if nothing is positive."""
    b = int(np.argmax(v))  # numpy's argmax returns the first maximum
    return b if v[b] > 0 else -1


def _ref_positive_runs(v):
    """Maximal runs of consecutive positive slots on the ring as (first, [slots])."""
    k = len(v)
    pos = [float(x) > 0 for x in v]
    if all(pos):
        return [(0, list(range(k)))]
    runs = []
    for s in range(k):
        if pos[s] and not pos[s - 1]:
            run = []
            j = s
            while pos[j % k] and len(run) < k:
                run.append(j % k)
                j += 1
            runs.append((s, run))
    return runs


def _ref_nearest(dirs, d):
    dots = [float(dirs[j] @ d) for j in range(len(dirs))]
    return int(np.argmax(dots))


def _ref_finish(v, dirs, slots_used, fallback, guard):
    s = np.zeros(2)
    total = 0.0
    for j in slots_used:
        s += float(v[j]) * dirs[j]
        total += float(v[j])
    length = float(np.hypot(*s))
    if not length > 1e-6 * total:
        return dirs[fallback]
    d = s / length
    if guard and _ref_nearest(dirs, d) not in slots_used:  # crossed a masked gap
        return dirs[fallback]
    return d


def ref_choose(values, dirs, mode="vector_sum", width=2, contiguous=True):
    """Returns (direction (N,2), strength (N,), slot (N,)) following the documented rules."""
    values = np.asarray(values, dtype=np.float32)
    dirs = np.asarray(dirs, dtype=np.float32).astype(np.float64)
    n, k = values.shape
    direction = np.zeros((n, 2))
    strength = np.zeros(n)
    slot = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        v = values[i]
        if mode == "argmax_always":  # the Unity project: the first maximum, any sign
            b = int(np.argmax(v))
            direction[i], strength[i], slot[i] = dirs[b], min(max(float(v[b]), 0.0), 1.0), b
            continue
        if mode == "vector_sum_signed":  # Godot's sum over every slot, with its sign
            b = int(np.argmax(v))
            s = np.zeros(2)
            for j in range(k):
                s += float(v[j]) * dirs[j]
            total = sum(abs(float(x)) for x in v)
            length = float(np.hypot(*s))
            if length > 1e-6 * total:
                direction[i] = s / length
                strength[i], slot[i] = min(max(float(v[b]), 0.0), 1.0), b
            continue
        b = _ref_best(v)
        if b < 0:
            continue
        if mode == "argmax":
            d, s = dirs[b], b
        elif mode == "vector_sum" and not contiguous:
            pos = [j for j in range(k) if v[j] > 0]
            d, s = _ref_finish(v, dirs, pos, b, guard=False), b
        elif mode == "vector_sum":
            best = None
            for first, run in _ref_positive_runs(v):
                total = 0.0
                for j in run:  # in ring order from the run's first slot, like the kernel
                    total += float(v[j])
                if best is None or total > best[0] or (total == best[0] and first < best[1]):
                    best = (total, first, run)
            run = best[2]
            top = min(run, key=lambda j: (-float(v[j]), j))
            d, s = _ref_finish(v, dirs, run, top, guard=len(run) < k), top
        elif mode == "weighted_neighbours":
            left = 0
            while left < width and left + 1 < k and v[(b - left - 1) % k] > 0:
                left += 1
            right = 0
            while right < width and left + right + 1 < k and v[(b + right + 1) % k] > 0:
                right += 1
            used = [(b + t) % k for t in range(-left, right + 1)]
            d, s = _ref_finish(v, dirs, used, b, guard=len(used) < k), b
        elif mode == "subslot":
            lo, hi = (b - 1) % k, (b + 1) % k

            def turn(p, q):  # counter-clockwise angle from p to q
                return np.arctan2(p[0] * q[1] - p[1] * q[0], p @ q)

            gl, gr = turn(dirs[lo], dirs[b]), turn(dirs[b], dirs[hi])
            # Solve the 3x3 system of the parabola through the three samples.
            xs = np.array([-gl, 0.0, gr])
            ys = np.array([v[lo], v[b], v[hi]], dtype=np.float64)
            a2, a1, a0 = np.linalg.solve(np.vander(xs, 3), ys)
            if a2 < 0:
                x = float(np.clip(-a1 / (2 * a2), -gl / 2, gr / 2))
                peak = a2 * x * x + a1 * x + a0
            else:
                x, peak = 0.0, float(v[b])
            ang = np.arctan2(dirs[b, 1], dirs[b, 0]) + x
            direction[i] = [np.cos(ang), np.sin(ang)]
            strength[i] = min(max(peak, 0.0), 1.0)
            slot[i] = b
            continue
        elif mode == "subslot_linear":
            lo, hi = (b - 1) % k, (b + 1) % k

            def turn(p, q):  # counter-clockwise angle from p to q
                return np.arctan2(p[0] * q[1] - p[1] * q[0], p @ q)

            gl, gr = turn(dirs[lo], dirs[b]), turn(dirs[b], dirs[hi])
            yl, yc, yr = float(v[lo]), float(v[b]), float(v[hi])
            # Two lines of slopes +m and -m: one through two of the points (the steeper
            # side), the other through the third; their crossing is the peak.
            m = max((yc - yl) / gl, (yc - yr) / gr)
            if m > 0:
                if (yc - yl) / gl >= (
                    yc - yr
                ) / gr:  # up through (-gl, yl), (0, yc); down through (gr, yr)
                    x = (yr + m * gr - yc) / (2 * m)
                else:  # up through (-gl, yl); down through (0, yc), (gr, yr)
                    x = (yl + m * gl - yc) / (2 * m) * -1
                peak = yc + m * abs(x)
            else:
                x, peak = 0.0, yc
            ang = np.arctan2(dirs[b, 1], dirs[b, 0]) + x
            direction[i] = [np.cos(ang), np.sin(ang)]
            strength[i] = min(max(peak, 0.0), 1.0)
            slot[i] = b
            continue
        else:
            raise ValueError(mode)
        direction[i] = d / np.hypot(*d)
        strength[i] = min(max(float(v[s]), 0.0), 1.0)
        slot[i] = s
    return direction, strength, slot


def ref_spread(values, kernel, mode="sum"):
    values = np.asarray(values, dtype=np.float64)
    kernel = np.asarray(kernel, dtype=np.float64)
    n, k = values.shape
    h = len(kernel) // 2
    out = np.zeros((n, k))
    for i in range(n):
        for j in range(k):
            terms = [kernel[m] * values[i, (j + m - h) % k] for m in range(len(kernel))]
            out[i, j] = sum(terms) if mode == "sum" else max(terms)
    # Saturated as the kernel saturates (term by term there; the same for maps that do not
    # reach the bound part-way).
    return np.clip(out, -float(COMBINE_SATURATION), float(COMBINE_SATURATION))


def ref_blend(previous, current, alpha):
    p = np.asarray(previous, dtype=np.float64)
    return p + alpha * (np.asarray(current, dtype=np.float64) - p)


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
    d = np.asarray(d, dtype=np.float64)
    b = q @ d
    # |o + t d - c| = r solved for the d given: a float32-stored unit direction has
    # |d|^2 = 1 - 3e-8, and b^2 - cc (which assumes |d| = 1) is then off by |q|^2 3e-8:
    # 1e-5 m on a ray passing a disc 7 m away (the kernel's (r - e)(r + e) is not).
    disc = b * b - (d @ d) * cc
    if b <= 0.0 or disc < 0.0:
        return np.inf
    return cc / (b + np.sqrt(disc))


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
                t = min(
                    ray_circle_distance(o, d, a, r),
                    ray_circle_distance(o, d, b, r),
                    ray_segment_distance(o, d, a + n, b + n),
                    ray_segment_distance(o, d, a - n, b - n),
                )
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
            np.hypot(*(p - c)) <= r for c, r in zip(centers, radii)
        )
    return out


# --------------------------------------------------------------------------- path ---


def path_vertices(points, closed):
    """Polyline vertices after the documented clean-up: consecutive duplicates dropped,
    and on a closed path a last point equal to the first (float64 copy)."""
    out = []
    for p in np.asarray(points, dtype=np.float64):
        if not out or (p[0], p[1]) != (out[-1][0], out[-1][1]):
            out.append(p)
    if closed and len(out) >= 2 and tuple(out[-1]) == tuple(out[0]):
        out.pop()
    return np.array(out)


def path_segments(vertices, closed):
    """Segment start points a (S, 2) and end points b (S, 2) of a polyline."""
    v = np.asarray(vertices, dtype=np.float64)
    b = np.roll(v, -1, axis=0) if closed else v[1:]
    a = v if closed else v[:-1]
    return a, b


def path_cumulative(vertices, closed):
    """Cumulative arc length at every segment start, plus the total (S+1,)."""
    a, b = path_segments(vertices, closed)
    return np.concatenate([[0.0], np.cumsum(np.hypot(*(b - a).T))])


def path_closest_brute(vertices, closed, queries):
    """Exact nearest point on the polyline by projecting on every segment (float64).

    Returns (distance (N,), offset (N,)); ties go to the first segment, like the core.
    """
    a, b = path_segments(vertices, closed)
    cum = path_cumulative(vertices, closed)
    q = np.asarray(queries, dtype=np.float64)
    d = b - a
    t = np.clip(np.einsum("nsk,sk->ns", q[:, None, :] - a[None], d) / np.sum(d * d, 1), 0, 1)
    nearest = a[None] + t[..., None] * d[None]
    dist = np.hypot(*(q[:, None, :] - nearest).transpose(2, 0, 1))
    seg = np.argmin(dist, axis=1)
    rows = np.arange(len(q))
    offset = cum[seg] + t[rows, seg] * (cum[seg + 1] - cum[seg])
    if closed:
        offset = np.where(offset >= cum[-1], 0.0, offset)
    return dist[rows, seg], offset


def path_dense_samples(vertices, closed, spacing):
    """Points every `spacing` (or closer) along the polyline and their offsets."""
    a, b = path_segments(vertices, closed)
    cum = path_cumulative(vertices, closed)
    pts, offs = [], []
    for i in range(len(a)):
        seg_len = cum[i + 1] - cum[i]
        n = max(1, int(np.ceil(seg_len / spacing)))
        for k in range(n):
            u = k / n
            pts.append(a[i] + u * (b[i] - a[i]))
            offs.append(cum[i] + u * seg_len)
    if not closed:
        pts.append(b[-1])
        offs.append(cum[-1])
    return np.array(pts), np.array(offs)


def path_closest_dense(vertices, closed, queries, spacing):
    """Dense-sampling oracle: the nearest of the samples every `spacing` along the path.

    Its distance over-estimates the true one by at most spacing / 2.
    Returns (distance (N,), offset (N,)).
    """
    pts, offs = path_dense_samples(vertices, closed, spacing)
    q = np.asarray(queries, dtype=np.float64)
    dist = np.hypot(*(q[:, None, :] - pts[None]).transpose(2, 0, 1))
    k = np.argmin(dist, axis=1)
    return dist[np.arange(len(q)), k], offs[k]


def path_wrap(offsets, length, closed):
    """Closed paths wrap offsets into [0, length); open paths clamp into [0, length]."""
    s = np.asarray(offsets, dtype=np.float64)
    if closed:
        return np.mod(s, length)
    return np.clip(s, 0.0, length)


def path_point_at(vertices, closed, offsets):
    """Point at each offset: walk the cumulative lengths (float64)."""
    a, b = path_segments(vertices, closed)
    cum = path_cumulative(vertices, closed)
    s = path_wrap(offsets, cum[-1], closed)
    i = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, len(a) - 1)
    u = np.clip((s - cum[i]) / (cum[i + 1] - cum[i]), 0, 1)
    return a[i] + u[:, None] * (b[i] - a[i])


def path_tangent_at(vertices, closed, offsets):
    """Unit direction of the segment containing each offset (the starting one at a vertex)."""
    a, b = path_segments(vertices, closed)
    cum = path_cumulative(vertices, closed)
    s = path_wrap(offsets, cum[-1], closed)
    i = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, len(a) - 1)
    d = b[i] - a[i]
    return d / np.hypot(*d.T)[:, None]


def catmull_rom_centripetal(control, closed, samples):
    """Centripetal Catmull-Rom samples (alpha = 1/2), restated from Barry & Goldman's
    pyramid: knots t_{i+1} = t_i + |P_{i+1} - P_i|^(1/2); each span P1 -> P2 is sampled at
    `samples` equal steps of t; open ends use mirrored points 2 P0 - P1."""
    c = [np.asarray(p, dtype=np.float64) for p in control]
    n = len(c)

    def at(i):
        if closed:
            return c[i % n]
        if i < 0:
            return 2 * c[0] - c[1]
        if i >= n:
            return 2 * c[n - 1] - c[n - 2]
        return c[i]

    out = []
    for i in range(n if closed else n - 1):
        p0, p1, p2, p3 = at(i - 1), at(i), at(i + 1), at(i + 2)
        t0 = 0.0
        t1 = t0 + np.linalg.norm(p1 - p0) ** 0.5
        t2 = t1 + np.linalg.norm(p2 - p1) ** 0.5
        t3 = t2 + np.linalg.norm(p3 - p2) ** 0.5
        for j in range(samples):
            t = t1 + (t2 - t1) * j / samples
            a1 = (t1 - t) / (t1 - t0) * p0 + (t - t0) / (t1 - t0) * p1
            a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
            a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
            b1 = (t2 - t) / (t2 - t0) * a1 + (t - t0) / (t2 - t0) * a2
            b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
            out.append((t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2)
    if not closed:
        out.append(c[-1])
    return np.array(out)


# ------------------------------------------------------------------------ metrics ---
# Run metrics recomputed from recorded frames (every step), brute force in float64.


def _segment_distance(points, segs):
    """(P,) distance of each point to the nearest of the (M, 4) segments."""
    a, b = segs[:, :2].astype(np.float64), segs[:, 2:].astype(np.float64)
    ab = b - a
    ap = points[:, None, :].astype(np.float64) - a[None]
    t = np.clip((ap * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-300), 0, 1)
    return np.linalg.norm(ap - t[..., None] * ab, axis=-1).min(1)


class _Polyline:
    """Nearest points of a polyline in float64, over all segments or an arc window."""

    def __init__(self, verts, closed):
        v = np.asarray(verts, dtype=np.float64)
        self.a = v if closed else v[:-1]
        self.b = np.roll(v, -1, axis=0) if closed else v[1:]
        self.len = np.linalg.norm(self.b - self.a, axis=1)
        self.cum = np.concatenate([[0.0], np.cumsum(self.len)])
        self.closed, self.length = closed, self.cum[-1]

    def _segments(self, p, idx):
        ab = self.b[idx] - self.a[idx]
        ap = p - self.a[idx]
        t = np.clip((ap * ab).sum(1) / (ab * ab).sum(1), 0, 1)
        d = np.linalg.norm(ap - t[:, None] * ab, axis=1)
        k = int(np.argmin(d))  # the first of equal distances
        s = self.cum[idx[k] + 1] if t[k] >= 1 else self.cum[idx[k]] + t[k] * self.len[idx[k]]
        if self.closed and s >= self.length:
            s = 0.0
        return s, float(d[k])

    def nearest(self, p):
        return self._segments(np.asarray(p, dtype=np.float64), np.arange(len(self.len)))

    def nearest_within(self, p, s, w):
        """Among the segments overlapping [s - w, s + w], in order from s - w; None when
        the window reaches half a closed path or holds more than 4096 segments."""
        n = len(self.len)
        if self.closed and 2 * w >= self.length:
            return None
        lo = (s - w) % self.length if self.closed else min(max(s - w, 0.0), self.length)
        span = 2 * w if self.closed else min(max(s + w, 0.0), self.length) - lo
        i = min(int(np.searchsorted(self.cum, lo, side="right")) - 1, n - 1)
        left = span + (lo - self.cum[i])
        idx = []
        while True:
            if len(idx) >= 4096:
                return None
            idx.append(i)
            left -= self.len[i]
            if left <= 0 or len(idx) >= n or (not self.closed and i + 1 >= n):
                break
            i = (i + 1) % n
        return self._segments(np.asarray(p, dtype=np.float64), np.array(idx))


def polyline_closest_offset(points, verts, closed):
    """Arc-length offset of the nearest point on a polyline (ties: lowest segment)."""
    v = np.asarray(verts, dtype=np.float64)
    b = np.roll(v, -1, axis=0) if closed else v[1:]
    a = v if closed else v[:-1]
    ab = b - a
    seg_len = np.linalg.norm(ab, axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg_len)])
    out = []
    for p in np.asarray(points, dtype=np.float64):
        ap = p - a
        t = np.clip((ap * ab).sum(1) / (seg_len**2), 0, 1)
        d = np.linalg.norm(ap - t[:, None] * ab, axis=1)
        s = int(np.argmin(d))
        out.append(cum[s] + t[s] * seg_len[s])
    return np.array(out) % cum[-1] if closed else np.array(out)


def run_metrics(
    pos,
    vel,
    head,
    radius,
    *,
    walls=None,
    target=None,
    goal_radius=None,
    dt=1.0,
    path=None,
    closed=True,
    tol=0.01,
    clearance_range=None,
):
    """Metrics of frames pos (T,N,2), vel (T,N,2), head (T,N): a dict of (N,) arrays."""
    pos, vel, head = (np.asarray(x, dtype=np.float64) for x in (pos, vel, head))
    r = np.asarray(radius, dtype=np.float64)
    T, N = pos.shape[:2]
    rng = 4 * r.max() if clearance_range is None else clearance_range
    inf = np.inf
    if walls is not None and len(walls):
        wall = np.stack([_segment_distance(pos[t], np.asarray(walls)) for t in range(T)]) - r
        wall[wall > rng] = inf
    else:
        wall = np.full((T, N), inf)
    d = np.linalg.norm(pos[:, :, None] - pos[:, None], axis=-1)  # (T, N, N)
    rr = r[:, None] + r[None]
    c = d - rr
    eye = np.eye(N, dtype=bool)
    c[:, eye] = inf
    c[c > rng] = inf
    agent = c.min(axis=2)
    overl = (d < (1 + tol) * rr) & ~eye
    touch = wall < tol * r
    out = {
        "wall_episodes": (touch[1:] & ~touch[:-1]).sum(0),
        "wall_steps": touch[1:].sum(0),
        "agent_episodes": (overl[1:] & ~overl[:-1]).sum((0, 2)),
        "min_wall_clearance": wall.min(0),
        "min_agent_clearance": agent.min(0),
    }
    # Travel steps: step t (frame t-1 -> t) counts until the agent arrives, the arriving
    # step included: t <= first frame within the goal radius (every step without a goal).
    travel = np.ones((T - 1, N), dtype=bool)
    if goal_radius is not None:
        hit = np.linalg.norm(pos - np.asarray(target, dtype=np.float64), axis=2) <= goal_radius
        first = np.where(hit.any(0), hit.argmax(0), -1)
        out["time_to_goal"] = np.where(first >= 0, first * dt, np.nan)
        arrive = np.where(first >= 0, first, T)
        travel = np.arange(1, T)[:, None] <= arrive[None, :]
    turn = np.abs((np.diff(head, axis=0) + np.pi) % (2 * np.pi) - np.pi)
    out["path_length"] = (np.linalg.norm(np.diff(pos, axis=0), axis=2) * travel).sum(0)
    out["effort"] = (np.linalg.norm(np.diff(vel, axis=0), axis=2) * travel).sum(0)
    out["heading_jitter"] = (turn * travel).sum(0) / np.maximum(travel.sum(0), 1)
    out["travel_steps"] = travel.sum(0)
    if path is not None:
        v = np.asarray(path, dtype=np.float64)
        length = np.linalg.norm(
            np.diff(np.vstack([v, v[:1]]) if closed else v, axis=0), axis=1
        ).sum()
        # Each agent's own branch is tracked: its offset is the nearest point within
        # 2 x moved + 2 x body of the last one along the path, unless the whole path's
        # nearest point is nearer by more than the agent's distance from its branch when
        # that was last the nearest (its anchor), plus a body width.
        near = _Polyline(v, closed)
        kept, progress, anchor = np.zeros(N), np.zeros(N), np.zeros(N)
        for i in range(N):
            kept[i], anchor[i] = near.nearest(pos[0, i])
        for t in range(1, T):
            for i in range(N):
                p = pos[t, i]
                g, gd = near.nearest(p)
                moved = np.linalg.norm(p - pos[t - 1, i])
                eps = 1e-6 * (1 + np.abs(p).sum())
                body = 2 * r[i]
                new, dist = g, gd
                local = near.nearest_within(p, kept[i], 2 * moved + 2 * body + eps)
                if local is not None and local[1] <= gd + anchor[i] + body + eps:
                    new, dist = local
                if dist <= gd + eps:
                    anchor[i] = dist
                step = new - kept[i]
                if closed:
                    step -= length * np.floor(step / length + 0.5)
                progress[i] += step
                kept[i] = new
        out["progress"] = progress
        out["laps"] = np.floor(out["progress"] / length).astype(int) if closed else None
    return out
