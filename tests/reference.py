"""Slow, obvious NumPy reference implementations: the oracle for the C++ kernels.

Written for clarity, never for speed, and never by calling contextsteer: each function
restates the rule from its source (the seeds in shared/seeds/) in plain loops or NumPy.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- maps ---


# -------------------------------------------------------------------------- world ---


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
