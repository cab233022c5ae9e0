"""Slow NumPy oracle of ``CollisionDanger``: velocity-space danger and a speed map.

Written for clarity, never for speed, and never by calling contextsteer: the rule is
restated from the behaviour's specification in plain loops over agents, slots, candidate
speeds, neighbours and wall segments, in float64, brute force over *every* other alive
agent (the C++ queries a grid with a conservative reach; tests pass ``max_neighbors``
>= N so both see the same neighbours).

The rule, for alive agent i, slot k (world direction d_k) and the candidate speeds
``s_m = max_speed_i · m / S`` (m = 0 … S; m = 0 stands still), candidate velocity
``v = s_m d_k``, reciprocity α:

* every other alive agent j: ``p = x_j - x_i``, ``R = r_i + r_j + margin``,
  ``w = (v - α v_i) / (1 - α) - v_j``, ``c = |p|² - R²``, ``b = p·w``, ``a = |w|²``;
  touching (``c <= 0``): TTC 0 if ``b > 0`` (deepening) else inf; otherwise inf if
  ``b <= 0`` or ``b² - a c <= 0``, else ``c / (b + sqrt(b² - a c))``;
* walls: ``h_k``, the distance along d_k at which a disc of radius ``r_i + margin``
  leaving x_i first touches a segment, searched up to ``L = max_speed_i · wall_horizon`` (inf
  beyond); ``TTC_wall = h_k / s`` (inf standing still), counted on the agents' scale
  as ``TTC_wall·horizon/wall_horizon`` when the walls have their own horizon. Within
  ``r_i + margin`` of a segment (the margin band) ``h_k`` is 0 for a slot going further
  into such a segment; the other slots are cast at ``r_i`` alone (inf when the body
  touches a segment): :func:`slot_wall`;
* ``TTC_k(s_m)`` = the smallest of all these; candidate m is safe when
  ``TTC_k(s_m) >= horizon``; if some m is safe the slot's speed is the largest safe
  ``m / S`` and its danger 0, else ``m*`` = argmax TTC (ties: smallest m), speed
  ``m* / S`` and danger ``weight · agent_weight · clamp(1 - TTC(m*) / horizon, 0, 1)``.

The C++ computes in float32, so besides the maps the oracle reports, per slot, whether the
float32 answer may legitimately differ ("ambiguous"): a candidate's TTC within
``tol · horizon`` of the horizon (safe/unsafe may flip), a near tie for the argmax
(within ``tol`` relative), or a neighbour/wall configuration on a discontinuity of the
TTC: ``c`` within ``zero`` relative of 0 (touching), the sign of ``b`` undecided while
touching, ``b² - a c`` within ``zero`` relative of 0 (grazing), or a slot ray grazing
a wall's end cap. Tests compare only the other slots.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

INF = math.inf

#: Relative tolerance of the horizon test and of argmax ties (see the module docstring).
TOL = 1e-3
#: Relative tolerance of the discontinuities (touching, grazing).
ZERO = 1e-4


# ------------------------------------------------------------------------ slots ---


def _f32(*values):
    """The behaviour's parameters as the kernel stores them (float32), back in float64.

    (A reciprocity of 1e-300 is 0 for the kernel: w = v - v_j exactly, not nearly.)
    """
    return tuple(float(np.float32(v)) for v in values)


def ring(k):
    """(K, 2) ring of slot directions: slot i at angle 2πi/K, slot 0 along +x, CCW."""
    a = 2.0 * np.pi * np.arange(k) / k
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def world_slots(directions, heading=0.0, rotate=False):
    """World directions of one agent's slots: ``R(heading) · s_k`` when ``rotate``.

    Parameters
    ----------
    directions : int or array_like, shape (K, 2)
        An int K means :func:`ring` (K); an array is used as given (float64 copy).
    heading : float
        The agent's heading in radians (used only with ``rotate``).
    rotate : bool

    Returns
    -------
    numpy.ndarray, shape (K, 2), float64
    """
    if isinstance(directions, (int, np.integer)) and not isinstance(directions, bool):
        s = ring(int(directions))
    else:
        s = np.asarray(directions, dtype=np.float64).reshape(-1, 2)
    if not rotate:
        return s.copy()
    c, sn = math.cos(heading), math.sin(heading)
    return np.stack([c * s[:, 0] - sn * s[:, 1], sn * s[:, 0] + c * s[:, 1]], axis=1)


# ------------------------------------------------------------------- neighbours ---


class TTC(NamedTuple):
    """A time to collision and whether float32 may legitimately disagree with it."""

    ttc: float
    ambiguous: bool


def effective_velocity(v, vi, vj, reciprocity=0.0):
    """``w = (v - α v_i) / (1 - α) - v_j`` as Python floats (wx, wy).

    The velocity of agent i relative to j when i takes only ``1 - α`` of the avoidance
    (α = 0: j keeps its velocity, plain velocity obstacle).
    """
    al = float(reciprocity)
    wx = (float(v[0]) - al * float(vi[0])) / (1.0 - al) - float(vj[0])
    wy = (float(v[1]) - al * float(vi[1])) / (1.0 - al) - float(vj[1])
    return wx, wy


def pair_ttc(p, w, big_r, *, horizon=None, tol=TOL, zero=ZERO):
    """Time until two discs whose centres are ``p`` apart touch, closing at ``w``.

    The discs touch when ``|p - w t| = R``: ``a t² - 2 b t + c = 0`` with ``a = |w|²``,
    ``b = p·w``, ``c = |p|² - R²``; the first root is ``c / (b + sqrt(b² - a c))``.

    Parameters
    ----------
    p : sequence of 2 floats
        Position of the other disc relative to this one.
    w : sequence of 2 floats
        Velocity of this disc relative to the other (so ``p·w > 0`` is approaching).
    big_r : float
        Sum of the radii (and the margin).
    horizon : float, optional
        Grazing (``b² - a c`` near 0) only counts as ambiguous when the grazing time
        ``c / b`` is below ``horizon · (1 + tol)``: beyond it both answers are safe and
        neither can be the argmax of an unsafe slot. None: always ambiguous.
    tol, zero : float
        See the module docstring.

    Returns
    -------
    TTC
        ``ttc`` in [0, inf]; ``ambiguous`` when (p, w, R) sit on a discontinuity.
    """
    px, py = float(p[0]), float(p[1])
    wx, wy = float(w[0]), float(w[1])
    r = float(big_r)
    pp = px * px + py * py
    c = pp - r * r
    b = px * wx + py * wy
    a = wx * wx + wy * wy
    ambiguous = abs(c) <= zero * (pp + r * r)  # (nearly) just touching
    if c <= 0.0:
        pw = math.sqrt(pp * a)
        if pw > 0.0 and abs(b) <= zero * pw:  # deepening or not: undecided
            ambiguous = True
        return TTC(0.0 if b > 0.0 else INF, ambiguous)
    if b <= 0.0:
        return TTC(INF, ambiguous)
    disc = b * b - a * c
    if abs(disc) <= zero * b * b and (horizon is None or c / b < horizon * (1.0 + tol)):
        ambiguous = True  # grazing: hit or miss
    if disc <= 0.0:
        return TTC(INF, ambiguous)
    return TTC(c / (b + math.sqrt(disc)), ambiguous)


# ------------------------------------------------------------------------ walls ---


def _point_segment(px, py, ax, ay, bx, by):
    """point_segment_distance on plain floats (the sight tests call it four times a
    segment and ray, where NumPy's small arrays cost most of the time)."""
    ex, ey = bx - ax, by - ay
    ee = ex * ex + ey * ey
    u = 0.0 if ee == 0.0 else min(max(((px - ax) * ex + (py - ay) * ey) / ee, 0.0), 1.0)
    return math.hypot(px - ax - u * ex, py - ay - u * ey)


def point_segment_distance(p, a, b):
    """Distance from the point p to the segment [a, b] (float64; a point when a == b)."""
    return _point_segment(
        float(p[0]), float(p[1]), float(a[0]), float(a[1]), float(b[0]), float(b[1])
    )


def _ray_circle(o, d, centre, r, zero):
    """(t, grazing) of the unit ray o + t d entering the disc |x - centre| <= r (o outside)."""
    qx, qy = centre[0] - o[0], centre[1] - o[1]
    bb = qx * d[0] + qy * d[1]
    cc = qx * qx + qy * qy - r * r
    # = r² - (distance of the centre from the ray)², solved for the d given: a float32
    # unit direction has |d|² = 1 - 3e-8, and bb² - cc (|d| = 1 assumed) is then off by
    # |q|² · 3e-8, 3e-6 m at 3 m (tests/reference.py's ray_circle_distance does the same).
    disc = bb * bb - (d[0] * d[0] + d[1] * d[1]) * cc
    grazing = bb > 0.0 and abs(disc) <= zero * r * r
    if bb <= 0.0 or disc < 0.0:
        return INF, grazing, (bb if grazing else INF)
    return cc / (bb + math.sqrt(disc)), grazing, bb


def _ray_segment(o, d, a, b):
    """t >= 0 where the unit ray o + t d crosses the segment [a, b], or inf (parallel: inf)."""
    ex, ey = b[0] - a[0], b[1] - a[1]
    den = d[0] * ey - d[1] * ex
    if den == 0.0:
        return INF
    ax, ay = a[0] - o[0], a[1] - o[1]
    t = (ax * ey - ay * ex) / den
    u = (ax * d[1] - ay * d[0]) / den
    return t if t >= 0.0 and 0.0 <= u <= 1.0 else INF


def ray_capsule(o, d, a, b, r, *, zero=ZERO):
    """First contact of a disc of radius r moving from o along the unit direction d with
    the segment [a, b]: the ray against the capsule (both end circles, both sides offset
    by ±r along the segment's normal).

    Returns
    -------
    t : float
        Distance along d to the first contact (0 when the disc already touches; inf on a miss).
    graze : float
        The earliest distance at which the ray grazes an end circle (a float32 ray may hit
        or miss it there), inf when it grazes none.
    """
    o = (float(o[0]), float(o[1]))
    d = (float(d[0]), float(d[1]))
    a = (float(a[0]), float(a[1]))
    b = (float(b[0]), float(b[1]))
    r = float(r)
    if point_segment_distance(o, a, b) <= r:
        return 0.0, INF
    ex, ey = b[0] - a[0], b[1] - a[1]
    length = math.hypot(ex, ey)
    nx, ny = -ey / length * r, ex / length * r
    best, graze = INF, INF
    for centre in (a, b):
        t, grazing, tg = _ray_circle(o, d, centre, r, zero)
        best = min(best, t)
        if grazing:
            graze = min(graze, tg)
    for sgn in (1.0, -1.0):
        best = min(
            best,
            _ray_segment(
                o, d, (a[0] + sgn * nx, a[1] + sgn * ny), (b[0] + sgn * nx, b[1] + sgn * ny)
            ),
        )
    return best, graze


def wall_distance(o, d, walls, r, max_dist, *, tol=TOL, zero=ZERO):
    """Distance along the unit direction d at which a disc of radius r leaving o first
    touches any of the (M, 4) segments, inf when that is beyond ``max_dist``.

    Returns
    -------
    TTC
        (distance, ambiguous): ambiguous when an end cap is grazed no later than the hit.
    """
    walls = np.asarray(walls, dtype=np.float64).reshape(-1, 4)
    best, graze = INF, INF
    for ax, ay, bx, by in walls:
        t, g = ray_capsule(o, d, (ax, ay), (bx, by), r, zero=zero)
        best, graze = min(best, t), min(graze, g)
    limit = min(best, float(max_dist))
    ambiguous = graze <= limit * (1.0 + tol) + 1e-9
    return TTC(best if best <= max_dist else INF, ambiguous)


def slot_wall(o, d, walls, r, margin, max_dist, *, tol=TOL, zero=ZERO):
    """The wall reading of a slot along the unit direction d of a body of radius r at o,
    cast with ``margin``: :func:`wall_distance` at ``r + margin`` when the disc of that
    radius touches no segment. Within ``r + margin`` of some segment (the margin band):
    0 when d goes further into any segment within that reach (its unit component along
    the normal from the segment's closest point to o below −1e-6, the kernel's
    ``moves_into`` tolerance); otherwise the slot is freed, and reads the first wall ahead
    at the body's own radius r (``wall_distance`` at r) when the body touches none, inf
    when it does or when margin is 0.

    Returns
    -------
    (TTC, bare)
        The distance with its ambiguity (a band edge, or a component at the tolerance,
        within ``zero`` relative), and whether it was read at r (bare).
    """
    segs = np.asarray(walls, dtype=np.float64).reshape(-1, 4)
    o = (float(o[0]), float(o[1]))
    pad, body = float(r) + float(margin), float(r)
    near = [(point_segment_distance(o, s[:2], s[2:]), s) for s in segs]
    nd = min((x for x, _ in near), default=INF)
    amb = abs(nd - pad) <= zero * pad
    if nd > pad:
        h = wall_distance(o, d, segs, pad, max_dist, tol=tol, zero=zero)
        return TTC(h.ttc, h.ambiguous or amb), False
    into = False
    for dist, (ax, ay, bx, by) in near:
        if dist > pad:
            continue
        ex, ey = bx - ax, by - ay
        u = min(max(((o[0] - ax) * ex + (o[1] - ay) * ey) / (ex * ex + ey * ey), 0.0), 1.0)
        nx, ny = o[0] - (ax + u * ex), o[1] - (ay + u * ey)
        if dist == 0.0:
            return TTC(0.0, True), False  # centred on a wall: not drawn by the tests
        along = (d[0] * nx + d[1] * ny) / dist
        amb = amb or abs(dist - pad) <= zero * pad or abs(along + 1e-6) <= zero
        into = into or along < -1e-6
    if into:
        return TTC(0.0, amb), False
    if not body < pad:
        return TTC(INF, amb), False
    amb = amb or abs(nd - body) <= zero * pad
    if not nd > body:
        return TTC(INF, amb), False
    h = wall_distance(o, d, segs, body, max_dist, tol=tol, zero=zero)
    return TTC(h.ttc, h.ambiguous or amb), True


def walls_past_target(state, i, d, h, margin, *, tol=TOL):
    """``CollisionDanger(past_target=True)``'s reading of a wall hit ``h`` (a TTC pair from
    :func:`wall_distance`, cast at ``radius_i + margin``) along the unit direction d of
    agent i: no wall (inf) when the ray passes within ``radius_i`` of the agent's target
    (``state["target"]``), at least a radius ahead, before the bare body would touch the
    wall, that is ``r_i <= g·d <= h + margin`` and ``|d × g| <= r_i`` with g = target −
    position (float32, as the kernel); or, within a radius of the target, when the ray
    heads at it, ``0 < g·d <= h + margin`` and ``|d × g| <= g·d / 4``. Ambiguous when a
    test lies within ``tol`` of its threshold (relative to the scale of its terms). An
    agent whose target is a waypoint on its way (``state["waypoint"][i]``, optional)
    reads the wall as it is."""
    wp = state.get("waypoint")
    if not math.isfinite(h.ttc) or (wp is not None and wp[i]):
        return h
    f32 = np.float32
    g = np.asarray(state["target"][i], dtype=f32) - np.asarray(state["position"][i], dtype=f32)
    dx, dy = f32(d[0]), f32(d[1])
    along = float(g[0] * dx + g[1] * dy)
    side = abs(float(dx * g[1] - dy * g[0]))
    r = float(f32(state["radius"][i]))
    reach = h.ttc + float(f32(margin))
    scale = float(abs(g[0]) + abs(g[1])) + r + reach + 1e-6
    amb = abs(along - r) <= tol * scale or abs(along - reach) <= tol * scale
    if along >= r:
        amb = amb or abs(side - r) <= tol * scale
        passes = side <= r
    else:
        # Within a radius of the target: a course heading at it (within 14°).
        amb = amb or abs(along) <= tol * scale or abs(side - 0.25 * along) <= tol * scale
        passes = along > 0.0 and side <= 0.25 * along
    if passes and along <= reach:
        return TTC(INF, h.ambiguous or amb)
    return TTC(h.ttc, h.ambiguous or amb)


#: m/s: the kernel's kStandingSpeed, the fastest a neighbour counts as standing for
#: ``past_target``.
STANDING_SPEED = 0.02


def body_past_target(state, i, j, d, margin, *, tol=TOL, zero=ZERO):
    """``CollisionDanger(past_target=True)`` for a body standing: whether agent i's course
    along the unit direction d leaves neighbour j out.

    It does when j stands (``|v_j| <= STANDING_SPEED``), its bare body is clear of i's
    target (``|target − x_j| >= r_i + r_j``), and the course passes within ``r_i`` of the
    target no later than ``h + margin``, h the distance at which it meets the disc of
    radius ``R = r_i + r_j + margin`` round x_j (0 when already inside it; a course that
    misses it leaves nothing out): with g = target − x_i, ``g·d <= h + margin`` and
    ``|d × g| <= r_i``; and either ``g·d >= r_i`` (a radius ahead or more) or, nearer,
    the course heads at the target (``0 < g·d``, ``|d × g| <= g·d / 4``) and the target
    is clear of the padded disc (``|target − x_j| >= R``). An agent whose target is a
    waypoint (``state["waypoint"][i]``) leaves nobody out.

    Returns
    -------
    (left_out, ambiguous)
        ambiguous when a test lies within ``tol`` of its threshold (relative to the scale
        of its terms), or the course grazes the disc.
    """
    wp = state.get("waypoint")
    if wp is not None and wp[i]:
        return False, False
    f = lambda x: float(np.float32(x))  # noqa: E731  (the kernel's float32 inputs)
    xi = (f(state["position"][i][0]), f(state["position"][i][1]))
    xj = (f(state["position"][j][0]), f(state["position"][j][1]))
    tg = (f(state["target"][i][0]), f(state["target"][i][1]))
    vj = (f(state["velocity"][j][0]), f(state["velocity"][j][1]))
    ri, rj, mg = f(state["radius"][i]), f(state["radius"][j]), f(margin)
    dx, dy = float(d[0]), float(d[1])
    speed = math.hypot(*vj)
    amb = abs(speed - STANDING_SPEED) <= tol * STANDING_SPEED
    if speed > STANDING_SPEED:
        return False, amb
    gx, gy = tg[0] - xi[0], tg[1] - xi[1]
    px, py = xj[0] - xi[0], xj[1] - xi[1]
    scale = abs(gx) + abs(gy) + abs(px) + abs(py) + ri + rj + mg + 1e-6
    clear = math.hypot(gx - px, gy - py)
    amb = amb or abs(clear - (ri + rj)) <= tol * scale
    if clear < ri + rj:
        return False, amb
    along = gx * dx + gy * dy
    side = abs(dx * gy - dy * gx)
    big_r = ri + rj + mg
    amb = amb or abs(side - ri) <= tol * scale or abs(along - ri) <= tol * scale
    if side > ri:
        return False, amb
    if along < ri:
        # Within a radius of the target: a course heading at it (within 14°), the target
        # clear of the padded disc.
        amb = amb or abs(along) <= tol * scale or abs(side - 0.25 * along) <= tol * scale
        amb = amb or abs(clear - big_r) <= tol * scale
        if along <= 0.0 or side > 0.25 * along or clear < big_r:
            return False, amb
    c = px * px + py * py - big_r * big_r
    amb = amb or abs(c) <= zero * scale * scale
    if c <= 0.0:
        h = 0.0
    else:
        b = px * dx + py * dy
        disc = b * b - c
        amb = amb or (b > 0.0 and abs(disc) <= tol * scale * scale)
        if b <= 0.0 or disc <= 0.0:
            return False, amb
        h = c / (b + math.sqrt(disc))
    amb = amb or abs(along - (h + mg)) <= tol * scale
    return along <= h + mg, amb


def arrivals_discs(state, i, margin, horizon, reciprocity=0.0, *, tol=TOL):
    """``CollisionDanger(arrivals=True)``: the neighbours agent i sees, as
    ``(j, p, v_j, body)`` with p = (disc centre) − x_i, and whether any test was
    ambiguous.

    When i stands at its goal (its target not a waypoint, ``|target_i − x_i| <= r_i``), a
    neighbour j arriving at its own target — j not kinematic, its target not a waypoint,
    ``v_j·g_j > 0`` and ``|g_j| <= |v_j|·horizon`` (g_j = target_j − x_j), and its
    straight way there (the segment from x_j to target_j) clear of i by R = r_i + r_j +
    margin — is seen standing (v_j = 0) where it is, and again where it stops (``body`` False: ``past_target`` does
    not leave that one out). Every other neighbour is itself at its velocity. A test
    near its threshold is ambiguous only for a neighbour that some candidate (at most
    ``max_speed_i``, under ``reciprocity``) could reach within the horizon either way.
    """
    f = lambda x: float(np.float32(x))  # noqa: E731  (the kernel's float32 inputs)
    x = [(f(a), f(b)) for a, b in np.asarray(state["position"])]
    vel = [(f(a), f(b)) for a, b in np.asarray(state["velocity"])]
    rad = [f(r) for r in np.asarray(state["radius"])]
    tgt = state.get("target")
    wp = state.get("waypoint")
    kin = state.get("kinematic")
    amb = False
    home = False
    if tgt is not None and not (wp is not None and wp[i]):
        gi = math.hypot(f(tgt[i][0]) - x[i][0], f(tgt[i][1]) - x[i][1])
        amb = abs(gi - rad[i]) <= tol * (rad[i] + gi + 1e-6)
        home = gi <= rad[i]
    out = []
    for j in _others(state, i):
        p = (x[j][0] - x[i][0], x[j][1] - x[i][1])
        arriving = False
        if home and not (kin is not None and kin[j]) and not (wp is not None and wp[j]):
            tj = (f(tgt[j][0]), f(tgt[j][1]))
            g = (tj[0] - x[j][0], tj[1] - x[j][1])
            gv = g[0] * vel[j][0] + g[1] * vel[j][1]
            lg, lv = math.hypot(*g), math.hypot(*vel[j])
            reach = lv * f(horizon)
            stop = (tj[0] - x[i][0], tj[1] - x[i][1])
            big_r = rad[i] + rad[j] + f(margin)
            # i's distance from j's straight way to its target (the segment x_j → t_j).
            q = (x[i][0] - x[j][0], x[i][1] - x[j][1])
            t = min(max((q[0] * g[0] + q[1] * g[1]) / (lg * lg), 0.0), 1.0) if lg > 0 else 0.0
            clear = math.hypot(q[0] - t * g[0], q[1] - t * g[1])
            near = (lg * lv > 0.0 and abs(gv) <= tol * lg * lv) or (
                abs(lg - reach) <= tol * (lg + reach + 1e-6)
                or abs(clear - big_r) <= tol * (clear + big_r)
            )
            arriving = gv > 0.0 and lg <= reach and clear >= big_r
            if near:
                # |w| <= κ·top + κα|v_i| + |v_j|: a disc farther than that goes in the
                # horizon is met by no candidate, walking or standing.
                al = _pair_alpha(state, j, reciprocity)
                own = (f(state["max_speed"][i]) + al * math.hypot(*vel[i])) / (1.0 - al)
                h = 1.01 * f(horizon)
                far_now = math.hypot(*p) - big_r > (own + lv) * h
                far_stop = math.hypot(*stop) - big_r > own * h
                amb = amb or not (far_now and far_stop)
        if arriving:
            out.append((j, p, (0.0, 0.0), True))
            out.append((j, stop, (0.0, 0.0), False))
        else:
            out.append((j, p, vel[j], True))
    return out, amb


# ------------------------------------------------------------------- candidates ---


def _others(state, i):
    alive = np.asarray(state["alive"], dtype=bool)
    return [j for j in range(len(alive)) if j != i and alive[j]]


def _pair_alpha(state, j, reciprocity):
    """The reciprocity of the pair with neighbour j: 0 when j is kinematic (it takes no
    share of the avoidance; ``state["kinematic"]``, optional), else ``reciprocity``."""
    kin = state.get("kinematic")
    return 0.0 if kin is not None and bool(kin[j]) else float(reciprocity)


SAME_WAY_SPEED = 0.25
"""``same_way_horizon``: a neighbour walks the agent's way at this fraction of its own
max speed or faster (``kSameWaySpeed``), within 45° of the direction to the agent's
target, on a way that does not cross the agent's."""


def same_way_scale(state, i, j, vj, scale, *, h=None, tol=TOL):
    """The factor ``same_way_horizon`` puts on the pair (i, j)'s relative velocity:
    ``scale`` when j walks i's way, else 1; and whether float32 may judge it the other way.

    j walks i's way when i's target lies more than ``r_i`` away (``g = target_i − x_i``),
    j is not kinematic, ``|v_j| >= SAME_WAY_SPEED · max_speed_j``, ``v_j`` lies within
    45° of ``g`` (``g·v_j > 0`` and ``(g·v_j)² >= |g|²|v_j|² / 2``), j keeps walking for
    the same-way horizon ``h`` (s) at least (``|target_j − x_j|² >= |v_j|² h²``), and j's
    way does not cross i's: j and its target do not lie on opposite sides of the line through ``x_i``
    along ``g``, each more than ``r_i + r_j`` from it (``s_p = g × (x_j − x_i)``,
    ``s_t = g × (target_j − x_i)``; crossing when ``s_p·s_t < 0`` and ``s_p²``, ``s_t²``
    both exceed ``(r_i + r_j)²|g|²``). Restated from the docstring in float64; a
    comparison within ``tol`` of its threshold is ambiguous (relative to its terms; the
    side tests relative to ``|g|²|x_j − x_i|²`` and ``|g|²|target_j − x_i|²``, the scale
    of the cross products' rounding).
    """
    if scale == 1.0:
        return 1.0, False
    if h is None:
        raise ValueError("same_way_scale: the same-way horizon h (s) is needed")
    kin = state.get("kinematic")
    if kin is not None and bool(kin[j]):
        return 1.0, False
    x = np.asarray(state["position"], dtype=np.float64)
    tgt = np.asarray(state["target"], dtype=np.float64)
    ex, ey = tgt[j, 0] - x[j, 0], tgt[j, 1] - x[j, 1]
    gx, gy = tgt[i, 0] - x[i, 0], tgt[i, 1] - x[i, 1]
    vx, vy = float(vj[0]), float(vj[1])
    gg, vv, gv = gx * gx + gy * gy, vx * vx + vy * vy, gx * vx + gy * vy
    ri = float(state["radius"][i])
    sj = SAME_WAY_SPEED * float(state["max_speed"][j])
    px, py = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1]
    qx, qy = tgt[j, 0] - x[i, 0], tgt[j, 1] - x[i, 1]
    sp, st = gx * py - gy * px, gx * qy - gy * qx
    rr = ri + float(state["radius"][j])
    lim = rr * rr * gg
    # (value, threshold, scale of the rounding, strict): each test passes when value >
    # threshold (>= unless strict).
    tests = [
        (gg, ri * ri, gg + ri * ri, True),
        (vv, sj * sj, vv + sj * sj, False),
        (gv * abs(gv), 0.5 * gg * vv, gg * vv, False),  # g·v_j > 0 and the 45° cone at once
        (-sp * st, 0.0, math.sqrt(gg * (px * px + py * py) * gg * (qx * qx + qy * qy)), True),
        (sp * sp, lim, gg * (px * px + py * py) + lim, True),
        (st * st, lim, gg * (qx * qx + qy * qy) + lim, True),
        (ex * ex + ey * ey, vv * h * h, ex * ex + ey * ey + vv * h * h, False),
    ]
    passes = [a > b if strict else a >= b for a, b, _, strict in tests]
    near = [abs(a - b) <= tol * scale_ for a, b, scale_, _ in tests]

    def walks(p):
        return p[0] and p[1] and p[2] and p[6] and not (p[3] and p[4] and p[5])

    outcome = walks(passes)
    # Ambiguous when flipping a test near its threshold could change the outcome.
    ambiguous = any(
        near[n] and walks([not q if m == n else q for m, q in enumerate(passes)]) != outcome
        for n in range(len(tests))
    )
    return (scale if outcome else 1.0), ambiguous


def agents_ttc(
    state,
    i,
    v,
    *,
    margin=0.0,
    reciprocity=0.0,
    horizon=None,
    past_target=False,
    arrivals=False,
    arrivals_horizon=None,
    same_way=1.0,
    tol=TOL,
    zero=ZERO,
):
    """Smallest TTC of agent i moving at velocity v against every other alive agent
    (with ``past_target``, v non-zero, less the bodies standing that
    :func:`body_past_target` leaves out along v/|v|; with ``arrivals``, the neighbours
    of :func:`arrivals_discs`, their reach at ``arrivals_horizon``, default ``horizon``;
    a pair that walks i's way, :func:`same_way_scale`, closing at ``same_way`` times
    its relative velocity).

    Returns
    -------
    TTC
        (min over j, any pair ambiguous).
    """
    x = np.asarray(state["position"], dtype=np.float64)
    vel = np.asarray(state["velocity"], dtype=np.float64)
    rad = np.asarray(state["radius"], dtype=np.float64)
    best, ambiguous = INF, False
    speed = math.hypot(float(v[0]), float(v[1]))
    past = past_target and speed > 0.0
    d = (float(v[0]) / speed, float(v[1]) / speed) if past else None
    discs, ambiguous = _discs(
        state, i, margin, horizon, arrivals, arrivals_horizon, reciprocity, tol, x, vel
    )
    for j, p, vj, body in discs:
        if past and body:
            out, amb = body_past_target(state, i, j, d, margin, tol=tol, zero=zero)
            ambiguous = ambiguous or amb
            if out:
                continue
        w = effective_velocity(v, vel[i], vj, _pair_alpha(state, j, reciprocity))
        if body:
            f, amb = same_way_scale(state, i, j, vj, same_way, h=same_way * horizon, tol=tol)
            ambiguous = ambiguous or amb
            w = (w[0] * f, w[1] * f)
        t, amb = pair_ttc(p, w, rad[i] + rad[j] + margin, horizon=horizon, tol=tol, zero=zero)
        best = min(best, t)
        ambiguous = ambiguous or amb
    return TTC(best, ambiguous)


def _discs(state, i, margin, horizon, arrivals, arrivals_horizon, reciprocity, tol, x, vel):
    """Agent i's neighbours as ``(j, p, v_j, body)``: with ``arrivals``,
    :func:`arrivals_discs`; else every other alive agent at its position and velocity."""
    if arrivals:
        return arrivals_discs(
            state,
            i,
            margin,
            horizon if arrivals_horizon is None else arrivals_horizon,
            reciprocity,
            tol=tol,
        )
    return [
        (j, (x[j, 0] - x[i, 0], x[j, 1] - x[i, 1]), (vel[j, 0], vel[j, 1]), True)
        for j in _others(state, i)
    ], False


def velocity_ttc(
    state,
    i,
    v,
    *,
    horizon,
    margin=0.0,
    reciprocity=0.0,
    walls=None,
    wall_horizon=None,
    past_target=False,
    same_way_horizon=None,
    tol=TOL,
    zero=ZERO,
):
    """TTC of agent i taking the (any) velocity v: agents, then walls along v/|v|
    (with ``past_target``, the walls read by :func:`walls_past_target` and the bodies
    standing left out by :func:`body_past_target`).

    Parameters
    ----------
    state : dict
        ``position`` (N, 2), ``velocity`` (N, 2), ``radius`` (N,), ``max_speed`` (N,),
        ``alive`` (N,).
    i : int
    v : sequence of 2 floats
    horizon : float
    margin, reciprocity : float
    walls : array_like, shape (M, 4), optional
        Segments; None: no walls.

    Returns
    -------
    TTC
    """
    wall_horizon = horizon if wall_horizon is None else wall_horizon
    horizon, margin, reciprocity, wall_horizon = _f32(horizon, margin, reciprocity, wall_horizon)
    t, ambiguous = agents_ttc(
        state,
        i,
        v,
        margin=margin,
        reciprocity=reciprocity,
        horizon=horizon,
        past_target=past_target,
        same_way=same_way_of(horizon, same_way_horizon),
        tol=tol,
        zero=zero,
    )
    speed = math.hypot(float(v[0]), float(v[1]))
    if walls is not None and len(np.asarray(walls).reshape(-1, 4)) and speed > 0.0:
        d = (float(v[0]) / speed, float(v[1]) / speed)
        (h, amb), bare = slot_wall(
            state["position"][i],
            d,
            walls,
            float(state["radius"][i]),
            margin,
            float(state["max_speed"][i]) * wall_horizon,
            tol=tol,
            zero=zero,
        )
        if past_target:
            cut = 0.0 if bare else margin
            h, amb = walls_past_target(state, i, d, TTC(h, amb), cut, tol=tol)
        # wall TTC on the agents' horizon scale: horizon / wall_horizon
        t = min(t, h / speed * (horizon / wall_horizon))
        ambiguous = ambiguous or amb
    return TTC(t, ambiguous)


def same_way_of(horizon, same_way_horizon):
    """``same_way_horizon / horizon`` in float32 as the kernel computes it, 1 when off."""
    if same_way_horizon is None:
        return 1.0
    return float(np.float32(same_way_horizon) / np.float32(horizon))


# ----------------------------------------------------------------- creep speeds ---


def _roots(a2, a1, a0):
    """Real roots of a2·s² + a1·s + a0 (any degree up to 2; a zero polynomial: none)."""
    if a2 == 0.0:
        return [-a0 / a1] if a1 != 0.0 else []
    disc = a1 * a1 - 4.0 * a2 * a0
    if disc < 0.0:
        return []
    q = -0.5 * (a1 + math.copysign(math.sqrt(disc), a1))
    return [q / a2] + ([a0 / q] if q != 0.0 else [])


def unsafe_speeds(p, big_r, u, kappa, d, horizon):
    """The speeds s >= 0 at which the candidate ``v = s·d`` is unsafe against one
    neighbour (TTC below ``horizon``), as a list of (lo, hi) intervals (hi may be inf).

    Closed form, independent of the kernel's bisection: with ``w = κ·s·d − u`` the
    candidate collides within the horizon when ``|τw − p|² < R²`` (touching at τ or
    before, a quadratic in s) or when the pair grazes before τ (``b² − a·c > 0`` with
    ``0 < b < a·τ``, ``b² − a·c`` another quadratic); touching pairs (``c <= 0``) when
    ``p·w > 0`` (linear in s). The boundaries of the unsafe set are among these roots;
    the oracle tests the exact rule (``pair_ttc``) between consecutive roots. The
    truncated velocity obstacle is convex, so the set is one interval at most — the
    function returns what it finds, and callers may check that.
    """
    px, py = float(p[0]), float(p[1])
    ux, uy = float(u[0]), float(u[1])
    dx, dy = float(d[0]), float(d[1])
    r, k, t = float(big_r), float(kappa), float(horizon)
    c = px * px + py * py - r * r
    pd, pu, du, uu = px * dx + py * dy, px * ux + py * uy, dx * ux + dy * uy, ux * ux + uy * uy
    if c <= 0.0:
        cuts = _roots(0.0, k * pd, -pu)  # p·w = 0
    else:
        qx, qy = t * ux + px, t * uy + py
        cuts = _roots(t * t * k * k, -2.0 * t * k * (dx * qx + dy * qy), qx * qx + qy * qy - r * r)
        cuts += _roots(k * k * (pd * pd - c), 2.0 * k * (c * du - pd * pu), pu * pu - c * uu)
    cuts = sorted({0.0, *(x for x in cuts if x > 0.0 and math.isfinite(x))})

    def unsafe(s):
        w = (k * s * dx - ux, k * s * dy - uy)
        return pair_ttc(p, w, r, zero=0.0).ttc < t

    out = []
    ends = [*cuts, INF]
    for lo, hi in zip(ends[:-1], ends[1:]):
        mid = 2.0 * lo + 1.0 if hi == INF else 0.5 * (lo + hi)
        if unsafe(mid):
            if out and out[-1][1] == lo:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
    return out


def creep_speed(
    state,
    i,
    d,
    lo,
    hi,
    *,
    horizon,
    margin=0.0,
    reciprocity=0.0,
    wall=INF,
    wall_horizon=None,
    past_target=False,
    arrivals=False,
    same_way=1.0,
    tol=TOL,
    zero=ZERO,
):
    """The ``creep`` candidate of agent i along the unit slot direction d: the first
    speed above ``lo`` (safe) at which the candidate turns unsafe, when that is below
    ``hi`` (the next level, unsafe); ``wall`` is the slot's wall distance h (safe up to
    ``h / wall_horizon``). With ``past_target``, the bodies standing that
    :func:`body_past_target` leaves out along d are left out.

    Returns
    -------
    (speed, ambiguous)
        ``ambiguous`` when the kernel's bisection may find another boundary: a second
        unsafe stretch starts within [lo, hi], or the boundary is within ``tol`` of a
        level's spacing from ``lo``, or a body's test is ambiguous, or the boundary is a
        graze that the course barely deepens: ``tol`` of a level's spacing past it the
        pair still grazes (``b² − a·c`` within ``zero / 10`` relative of 0, 1e-5: float32
        rounds ``b² − a·c`` by some 1e-6 of ``b²``, which then moves the boundary by 1e-4
        of the spacing or more; a course nearly along the velocity obstacle's edge).
    """
    wall_horizon = horizon if wall_horizon is None else wall_horizon
    x = np.asarray(state["position"], dtype=np.float64)
    vel = np.asarray(state["velocity"], dtype=np.float64)
    rad = np.asarray(state["radius"], dtype=np.float64)
    starts = [float(wall) / float(wall_horizon)] if math.isfinite(wall) else []
    pairs = []  # (start, p, R, u, κ) of each neighbour's unsafe stretch
    discs, left_amb = _discs(state, i, margin, horizon, arrivals, None, reciprocity, tol, x, vel)
    for j, p, vj, body in discs:
        if past_target and body:
            out, amb = body_past_target(state, i, j, d, margin, tol=tol)
            left_amb = left_amb or amb
            if out:
                continue
        al = _pair_alpha(state, j, reciprocity)
        kappa = 1.0 / (1.0 - al)
        u = (kappa * al * vel[i, 0] + vj[0], kappa * al * vel[i, 1] + vj[1])
        if body:
            f, amb = same_way_scale(state, i, j, vj, same_way, h=same_way * horizon, tol=tol)
            left_amb = left_amb or amb
            kappa, u = kappa * f, (u[0] * f, u[1] * f)
        big_r = rad[i] + rad[j] + margin
        for a, _ in unsafe_speeds(p, big_r, u, kappa, d, horizon):
            starts.append(a)
            pairs.append((a, p, big_r, u, kappa))
    span = hi - lo
    inside = sorted(a for a in starts if lo - tol * span <= a <= hi + tol * span)
    if not inside:
        return hi, True  # the levels said hi is unsafe; the closed form disagrees: ambiguous
    first = max(inside[0], lo)
    ambiguous = len(inside) > 1 and inside[1] - inside[0] <= (1.0 - tol) * span
    ambiguous = ambiguous or first - lo <= tol * span or hi - first <= tol * span
    s = first + tol * span
    for a, p, big_r, u, kappa in pairs:
        if a != inside[0]:
            continue
        wx, wy = kappa * s * float(d[0]) - u[0], kappa * s * float(d[1]) - u[1]
        b = float(p[0]) * wx + float(p[1]) * wy
        c = float(p[0]) ** 2 + float(p[1]) ** 2 - big_r * big_r
        if c > 0.0 and b > 0.0 and abs(b * b - (wx * wx + wy * wy) * c) <= 0.1 * zero * b * b:
            ambiguous = True  # still grazing past the boundary: ill-conditioned
    return first, ambiguous or left_amb


# -------------------------------------------------------------------------- maps ---


class VelocityMaps(NamedTuple):
    """The oracle's answer for N agents, K slots and S speeds."""

    danger: np.ndarray
    """(N, K) float64 danger (0 where some speed is safe; dead rows 0)."""
    speed: np.ndarray
    """(N, K) float64 chosen fraction of max_speed, m/S (dead rows 0)."""
    level: np.ndarray
    """(N, K) int chosen m (-1 on dead rows)."""
    ttc: np.ndarray
    """(N, K, S+1) float64 TTC of every candidate (inf on dead rows)."""
    safe: np.ndarray
    """(N, K, S+1) bool: candidate TTC >= horizon."""
    ambiguous: np.ndarray
    """(N, K) bool: float32 may legitimately give another speed or danger here."""


def agent_horizons(
    state,
    horizon,
    dense_horizon,
    density_low=1.0,
    density_high=2.0,
    density_radius=1.5,
    *,
    tol=TOL,
):
    """Each agent's horizon under ``dense_horizon`` (CollisionDanger's density rule),
    brute force over every live agent, in float32 in the kernel's order: ``n`` the other
    live agents whose centres lie within ``density_radius``, ``ρ = n / (π·r·r)``, ``f =
    clip((ρ - low) / (high - low), 0, 1)``, ``h = horizon + f·(dense_horizon - horizon)``.

    Returns (horizons (N,) float64, ambiguous (N,) bool): ambiguous where a neighbour's
    squared distance lies within ``tol`` of the radius's square (float32 may count it
    either way). Assumes every agent within the radius is in the kernel's neighbour list
    (fewer than ``max_neighbours`` there).
    """
    f32 = np.float32
    pos = np.asarray(state["position"], dtype=np.float32)
    alive = np.asarray(state["alive"], dtype=bool)
    n = len(pos)
    out = np.full(n, float(f32(horizon)))
    amb = np.zeros(n, dtype=bool)
    r = f32(density_radius)
    r2 = r * r
    for i in range(n):
        if not alive[i]:
            continue
        d = pos - pos[i]
        d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
        others = alive & (np.arange(n) != i)
        count = int(np.count_nonzero(others & (d2 <= r2)))
        amb[i] = bool(
            np.any(others & (np.abs(d2.astype(np.float64) - float(r2)) <= tol * float(r2)))
        )
        area = f32(3.14159265) * r * r
        rho = f32(count) / area
        lo, hi = f32(density_low), f32(density_high)
        fr = np.clip((rho - lo) / (hi - lo), f32(0), f32(1))
        h = f32(horizon) + fr * (f32(dense_horizon) - f32(horizon))
        out[i] = float(h)
    return out, amb


def _can_move(levels, ttc_row, horizon):
    """Whether some slot of an agent (its ``levels`` and (K, S + 1) TTCs) offers a safe
    moving candidate: a between-level candidate (-2, -3, -4) or a safe moving level."""
    return any(
        lv in (-2, -3, -4) or (lv >= 1 and ttc_row[kk, lv] >= horizon)
        for kk, lv in enumerate(levels)
    )


def _standing_creep(
    state,
    i,
    d,
    margin,
    walls,
    *,
    horizon,
    wall_horizon,
    levels,
    reciprocity,
    tol,
    zero,
    past_target=False,
    arrivals=False,
    same_way=1.0,
):
    """``creep_speed`` of agent i along d from standing to its slowest level at ``margin``,
    against the agents and (``walls``, or None) the walls cast at radius + margin.
    Returns (speed, its ambiguity, the wall distance's ambiguity)."""
    vmax = float(state["max_speed"][i])
    h = TTC(INF, False)
    if walls is not None:
        pos = np.asarray(state["position"][i], dtype=np.float64)
        r = float(state["radius"][i])
        h, bare = slot_wall(pos, d, walls, r, margin, vmax * wall_horizon, tol=tol, zero=zero)
        if past_target:
            h = walls_past_target(state, i, d, h, 0.0 if bare else margin, tol=tol)
    sc, a = creep_speed(
        state,
        i,
        d,
        0.0,
        vmax / levels,
        horizon=horizon,
        margin=margin,
        reciprocity=reciprocity,
        wall=h.ttc if walls is not None else INF,
        wall_horizon=wall_horizon,
        past_target=past_target,
        arrivals=arrivals,
        same_way=same_way,
        tol=tol,
    )
    return sc, a, h.ambiguous


# ------------------------------------------------------ unstick's lone-agent rule ---


def sight_ray(o, e, walls, *, tol=TOL):
    """One line of sight of ``threat_in_sight``: whether the thin ray from o to o + e
    (radius 0, reaching |e|, its end included) meets one of the (M, 4) segments.

    Returns
    -------
    (hit, ambiguous)
        ambiguous when an end of the ray lies within ``tol·|e|`` of a segment or an end
        of a segment within that of the ray (a graze, a touch, or a line ending at a
        wall: float32 may judge it either way).
    """
    ox, oy = float(o[0]), float(o[1])
    ex, ey = float(e[0]), float(e[1])
    fx, fy = ox + ex, oy + ey
    eps = tol * math.hypot(ex, ey)
    hit = amb = False
    for ax, ay, bx, by in np.asarray(walls, dtype=np.float64).reshape(-1, 4):
        sx, sy = bx - ax, by - ay
        den = ex * sy - ey * sx
        if den != 0.0:  # (parallel: an overlap puts an end on the other, ambiguous below)
            qx, qy = ax - ox, ay - oy
            t = (qx * sy - qy * sx) / den  # o + t·e = a + u·s
            u = (qx * ey - qy * ex) / den
            hit = hit or (0.0 <= t <= 1.0 and 0.0 <= u <= 1.0)
        gap = min(
            _point_segment(ax, ay, ox, oy, fx, fy),
            _point_segment(bx, by, ox, oy, fx, fy),
            _point_segment(ox, oy, ax, ay, bx, by),
            _point_segment(fx, fy, ax, ay, bx, by),
        )
        amb = amb or gap <= eps
    return hit, amb


def threat_in_sight(o, p, rho, walls, *, tol=TOL):
    """``threat_in_sight`` for one threat disc (centre o + p, radius ρ) of the agent at
    o: in sight when ``|p| <= ρ`` (over the agent) or one of the three rays from o, to the
    centre and to its two points ``p ± ρ·(−p_y, p_x)/|p|`` across the line of sight,
    meets no segment (:func:`sight_ray`).

    Returns
    -------
    (in_sight, surely, maybe)
        Whether it is in sight, whether it is however the tests within their tolerance
        go, and whether it may be (the three equal unless ambiguous).
    """
    px, py = float(p[0]), float(p[1])
    rho = float(rho)
    length = math.hypot(px, py)
    over = not length > rho
    near = abs(length - rho) <= tol * (length + rho)
    if over and not near:
        return True, True, True
    sx, sy = -py * rho / length, px * rho / length
    miss = miss_surely = miss_maybe = False
    for ex, ey in ((px, py), (px + sx, py + sy), (px - sx, py - sy)):
        hit, amb = sight_ray(o, (ex, ey), walls, tol=tol)
        miss = miss or not hit
        miss_surely = miss_surely or (not hit and not amb)
        miss_maybe = miss_maybe or not hit or amb
    return over or miss, (over and not near) or miss_surely, over or near or miss_maybe


def lone_agent(
    state, i, walls, *, horizon, margin, reciprocity, arrivals, same_way, tol=TOL, zero=ZERO
):
    """``Alone`` of ``CollisionDanger`` for agent i with walls near: no threat in sight.

    The threats are the discs ``collision_row_at`` folds (the neighbours of
    :func:`arrivals_discs` with ``arrivals``, an arriving one's stop disc included, else
    every other alive agent), less those its reach test prunes: with ``p`` the disc's
    centre relative to x_i, ``R = r_i + r_j + margin``, κ and ``u = κ·α·v_i + v_j`` the
    pair's (α of :func:`_pair_alpha`), both times the same-way factor f of a body
    (:func:`same_way_scale`), a disc clear of agent i (``|p| > R``) is pruned when ``|p| −
    R > (κf·max_speed_i + |u f|)·horizon`` (no candidate closes the gap within the
    horizon). A threat counts when it is in sight (:func:`threat_in_sight`, radius
    ``R − r_i − margin``, that is ``r_j``) through the segments ``walls``.

    Returns
    -------
    (alone, ambiguous)
        ambiguous when the outcome may flip with a test within its tolerance: a reach test
        (``|gap − reach| <= tol·(|gap| + reach)``), a same-way factor, an arrival, or a
        sight test.
    """
    x = np.asarray(state["position"], dtype=np.float64)
    vel = np.asarray(state["velocity"], dtype=np.float64)
    rad = np.asarray(state["radius"], dtype=np.float64)
    top = float(state["max_speed"][i])
    discs, disc_amb = _discs(state, i, margin, horizon, arrivals, None, reciprocity, tol, x, vel)
    counts = counts_surely = counts_maybe = False
    for j, p, vj, body in discs:
        al = _pair_alpha(state, j, reciprocity)
        kappa = 1.0 / (1.0 - al)
        u = (kappa * al * vel[i, 0] + vj[0], kappa * al * vel[i, 1] + vj[1])
        f, f_amb = 1.0, False
        if body:
            f, f_amb = same_way_scale(state, i, j, vj, same_way, h=same_way * horizon, tol=tol)
        big_r = rad[i] + rad[j] + margin
        dist = math.hypot(float(p[0]), float(p[1]))
        gap = dist - big_r
        reach = (kappa * f * top + math.hypot(u[0] * f, u[1] * f)) * horizon
        cc = dist * dist - big_r * big_r
        kept = cc <= 0.0 or not gap > reach
        near = f_amb or abs(gap - reach) <= tol * (abs(gap) + reach)
        near = near or abs(cc) <= zero * (dist * dist + big_r * big_r)
        if not (kept or near):
            continue
        seen, surely, maybe = threat_in_sight(x[i], p, big_r - rad[i] - margin, walls, tol=tol)
        counts = counts or (kept and seen)
        counts_surely = counts_surely or (kept and not near and surely)
        counts_maybe = counts_maybe or maybe
    return not counts, disc_amb or counts_surely != counts_maybe


def _moves(lv, ttc_row, horizon):
    """Whether a slot at level ``lv`` (its TTCs ``ttc_row``) offers a safe moving candidate."""
    return lv in (-2, -3, -4) or (lv >= 1 and ttc_row[lv] >= horizon)


def unstick_takes_creep(
    state,
    i,
    slots,
    moving,
    moving_amb,
    walls,
    *,
    horizon,
    wall_horizon,
    levels,
    margin,
    reciprocity,
    arrivals,
    same_way,
    tol=TOL,
    zero=ZERO,
):
    """``unstick`` (without ``creep``, standing safe): whether the slots of agent i that
    cannot move (``moving[k]`` False) take creep's candidates from standing.

    They do when no slot can move, or by the lone-agent rule (``unstick_row``): the agent
    has a target (``state["target"]``), walls are on (``walls`` not None), it moves at most
    half its slowest level's speed (``|v_i| <= 0.5·max_speed_i / levels``), lies more than
    its radius from its target (``|g| > r_i``, g = target − x_i), walls are near (some
    segment within ``max_speed_i·wall_horizon + r_i + margin`` of x_i, the slot wall
    query's reach), no slot that can move heads towards its way (``d_k·g > 0``; the kernel's
    route direction is not modelled: no field here), and it is alone (:func:`lone_agent`).

    Returns
    -------
    (takes, ambiguous)
        ambiguous when flipping one test within its tolerance (the speed, the distance
        to the target, the walls' reach, a slot's ``d·g > 0``, whether a slot flagged
        ``moving_amb`` can move, whether the agent is alone) changes the answer.
    """
    moving = [bool(m) for m in moving]
    tgt = state.get("target")
    has_walls = walls is not None and len(np.asarray(walls).reshape(-1, 4)) > 0
    if not any(moving):
        return True, False  # (as before the rule: can_move's flips are not tracked there)
    if tgt is None or not has_walls:
        return False, False
    f = lambda v: float(np.float32(v))  # noqa: E731  (the kernel's float32 inputs)
    xi = (f(state["position"][i][0]), f(state["position"][i][1]))
    vi = (f(state["velocity"][i][0]), f(state["velocity"][i][1]))
    g = (f(tgt[i][0]) - xi[0], f(tgt[i][1]) - xi[1])
    r, top = f(state["radius"][i]), f(state["max_speed"][i])
    speed, step = math.hypot(*vi), 0.5 * top / levels
    lg = math.hypot(*g)
    segs = np.asarray(walls, dtype=np.float64).reshape(-1, 4)
    nd = min(_point_segment(xi[0], xi[1], *s) for s in segs)
    reach = top * wall_horizon + r + margin
    towards = [float(d[0]) * g[0] + float(d[1]) * g[1] for d in slots]
    # name -> (value, near its threshold)
    tests = {
        "slow": (speed <= step, abs(speed - step) <= tol * step),
        "far": (lg > r, abs(lg - r) <= tol * (lg + r)),
        "walls": (nd <= reach, abs(nd - reach) <= tol * reach),
    }
    for kk, dg in enumerate(towards):
        tests[("moving", kk)] = (moving[kk], bool(moving_amb[kk]))
        tests[("towards", kk)] = (dg > 0.0, abs(dg) <= tol * lg)

    def takes(t, alone):
        mv = [t[("moving", kk)][0] for kk in range(len(slots))]
        if not any(mv):
            return True
        if not (t["slow"][0] and t["far"][0] and t["walls"][0]):
            return False
        if any(mv[kk] and t[("towards", kk)][0] for kk in range(len(slots))):
            return False
        return alone()

    cache = {}

    def alone():
        if "v" not in cache:
            cache["v"] = lone_agent(
                state,
                i,
                segs,
                horizon=horizon,
                margin=margin,
                reciprocity=reciprocity,
                arrivals=arrivals,
                same_way=same_way,
                tol=tol,
                zero=zero,
            )
        return cache["v"][0]

    outcome = takes(tests, alone)
    ambiguous = False
    for name, (value, near) in tests.items():
        if near and takes({**tests, name: (not value, near)}, alone) != outcome:
            ambiguous = True
    if "v" in cache and cache["v"][1]:
        # Alone or not within the tolerance: does it matter here?
        ambiguous = ambiguous or takes(tests, lambda: not cache["v"][0]) != outcome
    return outcome, ambiguous


def level_fractions(speeds, fine_speeds=0):
    """CollisionDanger's candidate speeds as fractions of max speed, standing first:
    m/S for m = 0 … S − 1, then ``fine_speeds + 1`` steps of equal size from (S − 1)/S up
    to 1 (the docstring's rule, written independently of the kernel's level_multiple)."""
    s = int(speeds)
    low = [m / s for m in range(s)]
    return np.array(low + list(np.linspace((s - 1) / s, 1.0, int(fine_speeds) + 2)[1:]))


def collision_danger(
    state,
    directions,
    *,
    horizon=2.0,
    speeds=4,
    fine_speeds=0,
    margin=0.0,
    reciprocity=0.0,
    walls=None,
    wall_horizon=None,
    weight=1.0,
    agent_weights=None,
    rotate=False,
    wall_speed=False,
    creep=False,
    unstick=False,
    squeeze=1.0,
    past_target=False,
    arrivals=False,
    dense_horizon=None,
    density_low=1.0,
    density_high=2.0,
    density_radius=1.5,
    same_way_horizon=None,
    tol=TOL,
    zero=ZERO,
):
    """Danger and speed maps of ``CollisionDanger`` (see the module docstring).

    Parameters
    ----------
    state : dict
        ``position`` (N, 2), ``velocity`` (N, 2), ``heading`` (N,), ``radius`` (N,),
        ``max_speed`` (N,), ``alive`` (N,) — float arrays (bool for ``alive``).
    directions : int or array_like, shape (K, 2)
        Slot directions (int: the ring).
    horizon : float, > 0
    speeds : int, >= 1
        S; candidates m = 0 … S.
    fine_speeds : int, >= 0
        F more candidates evenly between the fastest two (:func:`level_fractions`).
    margin : float, >= 0
    reciprocity : float in [0, 1)
    walls : array_like, shape (M, 4), optional
        Wall segments; None: no walls (walls off, or no world).
    wall_horizon : float, optional
        Horizon of the walls (default ``horizon``); a wall TTC t counts as
        ``t·horizon/wall_horizon``.
    weight : float
    agent_weights : array_like, shape (N,), optional
    rotate : bool
        Slots turn with each agent's heading.
    wall_speed : bool
        Also the wall-limited candidate of a slot whose ray hits a wall at h:
        ``s_w = h / wall_horizon`` (rounded down by 2^-20), taken (speed ``s_w /
        max_speed``, danger 0, level -2) when it is below max speed, faster than the
        fastest safe level (0 when none is safe) and safe against every agent.
    creep : bool
        Where standing is safe and levels 0..m are safe but m + 1 not: the first unsafe
        speed above level m (``creep_speed``, closed form), taken (level -3, danger 0)
        when faster than the fastest safe level (0 when none is safe). Applied before
        ``wall_speed``, whose floor it then raises.
    unstick : bool
        Without ``creep``, where standing is safe: when no slot of an agent offers a safe
        moving candidate (``wall_speed``'s included), each slot's ``creep_speed`` above
        level 0, taken (level -4, danger 0) when above 0; and the same for the slots that
        cannot move of an agent that can move but not towards its way, by the lone-agent
        rule (:func:`unstick_takes_creep`: walls given and near, a target more than its
        radius away, at most half its slowest level's speed, no slot that can move within
        90° of the target's direction, and no neighbour that could meet it within the
        horizon in sight, :func:`lone_agent`). The slots that can move keep their levels.
    squeeze : float in [0, 1]
        Below 1 (and ``margin`` > 0): when, after all of the above, standing is safe and
        no slot offers a safe moving candidate, each slot's ``creep_speed`` above level 0
        with the margin cut to ``squeeze·margin`` (float32 product, as the kernel),
        against the agents and against the walls cast at ``radius + squeeze·margin``,
        taken (level -5, danger 0) when above 0; when no slot's is, the same at
        margin 0.
    past_target : bool
        ``CollisionDanger(past_target=True)``: every wall distance (the slots', creep's,
        squeeze's) read by :func:`walls_past_target`, and every candidate's TTC (the
        levels', creep's, wall_speed's, unstick's, squeeze's) without the bodies standing
        that :func:`body_past_target` leaves out along its direction; needs
        ``state["target"]``.
    arrivals : bool
        ``CollisionDanger(arrivals=True)``: every candidate's TTC of an agent at its goal
        against the neighbours of :func:`arrivals_discs` (an arriving neighbour seen
        standing where it is and where it stops); needs ``state["target"]``.
    dense_horizon, density_low, density_high, density_radius : optional
        Each agent's own horizon (:func:`agent_horizons`; its walls' horizon scaled by
        the same factor): rows of agents whose count is ambiguous are flagged.
    same_way_horizon : float, optional
        Every pair that walks the agent's way (:func:`same_way_scale`) closes at
        ``same_way_horizon / horizon`` times its relative velocity (the ratio kept at the
        agent's own horizon), in every candidate's TTC.
    tol, zero : float
        Tolerances of the ambiguity flags.

    Returns
    -------
    VelocityMaps
    """
    wall_horizon = horizon if wall_horizon is None else wall_horizon
    horizon, margin, reciprocity, weight, wall_horizon = _f32(
        horizon, margin, reciprocity, weight, wall_horizon
    )
    base_horizon, base_wall_horizon = horizon, wall_horizon
    same_way = same_way_of(horizon, same_way_horizon)
    if dense_horizon is None:
        horizons = np.full(len(state["position"]), horizon)
        count_amb = np.zeros(len(horizons), dtype=bool)
    else:
        horizons, count_amb = agent_horizons(
            state, horizon, dense_horizon, density_low, density_high, density_radius, tol=tol
        )
    pos = np.asarray(state["position"], dtype=np.float64)
    alive = np.asarray(state["alive"], dtype=bool)
    vmax = np.asarray(state["max_speed"], dtype=np.float64)
    rad = np.asarray(state["radius"], dtype=np.float64)
    heading = np.asarray(state["heading"], dtype=np.float64)
    n = len(pos)
    k = len(world_slots(directions))
    s_count = int(speeds)
    fracs = level_fractions(speeds, fine_speeds)
    # The slowest moving level as max_speed / levels (the creep rules' unit).
    slowest = s_count if s_count >= 2 or not fine_speeds else int(fine_speeds) + 1
    has_walls = walls is not None and len(np.asarray(walls).reshape(-1, 4)) > 0
    danger = np.zeros((n, k))
    speed = np.zeros((n, k))
    level = np.full((n, k), -1, dtype=np.int64)
    ttc = np.full((n, k, len(fracs)), INF)
    ambiguous = np.zeros((n, k), dtype=bool)
    safe_all = np.zeros(ttc.shape, dtype=bool)
    for i in range(n):
        if not alive[i]:
            continue
        # This agent's horizon; the walls' scaled by the same factor (float32, as the kernel).
        horizon = float(horizons[i])
        wall_horizon = float(
            np.float32(base_wall_horizon) * (np.float32(horizon) / np.float32(base_horizon))
        )
        scale = weight * (1.0 if agent_weights is None else float(np.float32(agent_weights[i])))
        slots = world_slots(directions, heading[i], rotate)
        for kk in range(k):
            d = slots[kk]
            amb = False
            h = TTC(INF, False)
            if has_walls:
                h, bare = slot_wall(
                    pos[i], d, walls, rad[i], margin, vmax[i] * wall_horizon, tol=tol, zero=zero
                )
                if past_target:
                    h = walls_past_target(state, i, d, h, 0.0 if bare else margin, tol=tol)
                amb = h.ambiguous
            for m in range(len(fracs)):
                s = vmax[i] * fracs[m]
                v = (s * d[0], s * d[1])
                t, a = agents_ttc(
                    state,
                    i,
                    v,
                    margin=margin,
                    reciprocity=reciprocity,
                    horizon=horizon,
                    past_target=past_target,
                    arrivals=arrivals,
                    same_way=same_way,
                    tol=tol,
                    zero=zero,
                )
                if s > 0.0:
                    t = min(t, h.ttc / s * (horizon / wall_horizon))
                ttc[i, kk, m] = t
                amb = amb or a
            row = ttc[i, kk]
            # safe/unsafe may flip within tol of the horizon
            amb = amb or bool(np.any(np.abs(row - horizon) <= tol * horizon))
            safe = row >= horizon
            if safe.any():
                best = int(np.flatnonzero(safe)[-1])
                danger[i, kk] = 0.0
            else:
                best = int(np.argmax(row))  # first maximum: smallest m
                top = row[best]
                for m in range(len(fracs)):
                    if m != best and abs(row[m] - top) <= tol * top and not row[m] == top == 0.0:
                        amb = True  # near tie: float32 may pick m
                danger[i, kk] = scale * min(max(1.0 - top / horizon, 0.0), 1.0)
            level[i, kk] = best
            speed[i, kk] = fracs[best]
            floor = fracs[best] if safe.any() else 0.0
            if creep and safe[0] and not safe.all():
                mc = int(np.argmin(safe)) - 1  # levels 0..mc safe, mc + 1 not
                sc, a = creep_speed(
                    state,
                    i,
                    d,
                    vmax[i] * fracs[mc],
                    vmax[i] * fracs[mc + 1],
                    horizon=horizon,
                    margin=margin,
                    reciprocity=reciprocity,
                    wall=h.ttc if has_walls else INF,
                    wall_horizon=wall_horizon,
                    past_target=past_target,
                    arrivals=arrivals,
                    same_way=same_way,
                    tol=tol,
                )
                amb = amb or a or abs(sc / vmax[i] - floor) <= tol / s_count
                if sc / vmax[i] > floor:
                    level[i, kk] = -3
                    speed[i, kk] = floor = sc / vmax[i]
                    danger[i, kk] = 0.0
            if wall_speed and has_walls and math.isfinite(h.ttc):
                sw = h.ttc / wall_horizon * (1.0 - 2.0**-20)
                frac = sw / vmax[i]
                if frac < 1.0 and frac > floor:
                    t, a = agents_ttc(
                        state,
                        i,
                        (sw * d[0], sw * d[1]),
                        margin=margin,
                        reciprocity=reciprocity,
                        horizon=horizon,
                        past_target=past_target,
                        arrivals=arrivals,
                        same_way=same_way,
                        tol=tol,
                        zero=zero,
                    )
                    amb = amb or a or abs(t - horizon) <= tol * horizon
                    amb = amb or abs(frac - floor) <= tol or abs(1.0 - frac) <= tol
                    if t >= horizon:
                        level[i, kk] = -2
                        speed[i, kk] = frac
                        danger[i, kk] = 0.0
            ambiguous[i, kk] = amb
        creep_kw = dict(
            horizon=horizon,
            wall_horizon=wall_horizon,
            levels=slowest,
            reciprocity=reciprocity,
            tol=tol,
            zero=zero,
            past_target=past_target,
            arrivals=arrivals,
            same_way=same_way,
        )
        # Near the horizon the standing test, or a level's, may flip in float32.
        stand_amb = abs(ttc[i, 0, 0] - horizon) <= tol * horizon
        if unstick and not creep and ttc[i, 0, 0] >= horizon:
            moving = [_moves(lv, ttc[i, kk], horizon) for kk, lv in enumerate(level[i])]
            takes, take_amb = unstick_takes_creep(
                state,
                i,
                slots,
                moving,
                ambiguous[i].copy(),
                walls if has_walls else None,
                horizon=horizon,
                wall_horizon=wall_horizon,
                levels=slowest,
                margin=margin,
                reciprocity=reciprocity,
                arrivals=arrivals,
                same_way=same_way,
                tol=tol,
                zero=zero,
            )
            for kk in range(k) if takes or take_amb else ():
                if moving[kk]:
                    continue  # a slot that can move keeps its level
                sc, a, _ = _standing_creep(
                    state, i, slots[kk], margin, walls if has_walls else None, **creep_kw
                )
                ambiguous[i, kk] |= stand_amb or a or sc / vmax[i] <= tol / s_count or take_amb
                if takes and sc > 0.0:
                    level[i, kk] = -4
                    speed[i, kk] = sc / vmax[i]
                    danger[i, kk] = 0.0
        if (
            squeeze < 1.0
            and margin > 0.0
            and ttc[i, 0, 0] >= horizon
            and not _can_move(level[i], ttc[i], horizon)
        ):
            for cut in (float(np.float32(margin) * np.float32(squeeze)), 0.0):
                found = []
                for kk in range(k):
                    sc, a, wall_amb = _standing_creep(
                        state, i, slots[kk], cut, walls if has_walls else None, **creep_kw
                    )
                    amb = stand_amb or a or wall_amb or sc / vmax[i] <= tol / s_count
                    found.append((kk, sc, amb))
                # Whether this cut moves may flip with any slot's near-zero speed.
                for kk, _sc, amb in found:
                    ambiguous[i, kk] |= amb
                if any(sc > 0.0 for _, sc, _ in found):
                    for kk, sc, _amb in found:
                        if sc > 0.0:
                            level[i, kk] = -5
                            speed[i, kk] = sc / vmax[i]
                            danger[i, kk] = 0.0
                    break
                if any(amb for _, _, amb in found):
                    ambiguous[i] = True  # the next cut's row hinges on this one's
        safe_all[i] = ttc[i] >= horizon
        ambiguous[i] |= count_amb[i]
    return VelocityMaps(danger, speed, level, ttc, safe_all, ambiguous)


def face_to_face(state, i, radius, *, count=1, tol=TOL):
    """Whether ``count`` live agents j != i within ``radius`` of agent i want to go the
    other way through it (``CollisionDanger``'s jam test, float32 as the kernel): their
    desired directions g = target - position more than 120° apart (g_i·g_j < -0.5 |g_i|
    |g_j|), j ahead of i along g_i, i ahead of j along g_j; an agent on its target faces
    nobody. Returns (found, ambiguous): ambiguous when a test of some neighbour lies
    within ``tol`` of its threshold (relative to the test's scale)."""
    f32 = np.float32
    pos = np.asarray(state["position"], dtype=f32)
    goal = np.asarray(state["target"], dtype=f32) - pos
    alive = np.asarray(state["alive"], dtype=bool)
    li = f32(np.sqrt(goal[i] @ goal[i]))
    if not li > 0:
        return False, False
    r2 = f32(radius) * f32(radius)
    found, amb = 0, False
    for j in np.flatnonzero(alive):
        if j == i:
            continue
        p = pos[j] - pos[i]
        d2 = p[0] * p[0] + p[1] * p[1]
        lj = f32(np.sqrt(goal[j] @ goal[j]))
        if not lj > 0:  # on its target: wants nowhere
            continue
        lp = float(np.sqrt(d2))
        tests = [
            (float(r2 - d2), float(r2)),
            (float(p @ goal[i]), lp * float(li)),
            (float(-(p @ goal[j])), lp * float(lj)),
            (float(f32(-0.5) * li * lj - goal[i] @ goal[j]), float(li * lj)),
        ]
        near = any(abs(x) <= tol * max(scale, 1e-30) for x, scale in tests)
        ok = all(x > 0 for x, _ in tests[1:]) and d2 <= r2
        amb = amb or near
        found += ok
    return found >= count, amb


def collision_danger_jam(
    state, directions, *, horizon, jam_horizon, jam_radius=2.0, jam_oncomers=1, **kw
):
    """``CollisionDanger(jam_horizon=...)``'s maps: per live agent the rows at ``horizon``
    or, when those offer no safe moving candidate (speed > 0 at danger 0) and
    ``jam_oncomers`` neighbours within ``jam_radius`` want to go the other way through it
    (:func:`face_to_face`), the rows at
    ``jam_horizon`` (the walls' horizon scaled by ``jam_horizon / horizon`` in float32).
    Rows whose jam test is ambiguous (the face-to-face test, or any slot of the full
    rows) are flagged. ``kw``: as :func:`collision_danger` (``weight`` must be 1: the
    kernel tests the unscaled danger)."""
    full = collision_danger(state, directions, horizon=horizon, **kw)
    wh = kw.pop("wall_horizon", None)
    f32 = np.float32
    jam_wh = float(f32(horizon if wh is None else wh) * (f32(jam_horizon) / f32(horizon)))
    jam = collision_danger(state, directions, horizon=jam_horizon, wall_horizon=jam_wh, **kw)
    danger, speed, level = full.danger.copy(), full.speed.copy(), full.level.copy()
    ttc, safe, ambiguous = full.ttc.copy(), full.safe.copy(), full.ambiguous.copy()
    jammed = np.zeros(len(danger), dtype=bool)
    for i in np.flatnonzero(np.asarray(state["alive"], dtype=bool)):
        moving_safe = bool(np.any((full.speed[i] > 0) & (full.danger[i] == 0)))
        found, amb = face_to_face(state, i, jam_radius, count=jam_oncomers)
        if amb or full.ambiguous[i].any():
            ambiguous[i] = True
        if moving_safe or not found:
            continue
        jammed[i] = True
        danger[i], speed[i], level[i] = jam.danger[i], jam.speed[i], jam.level[i]
        ttc[i], safe[i] = jam.ttc[i], jam.safe[i]
        ambiguous[i] |= jam.ambiguous[i]
    return VelocityMaps(danger, speed, level, ttc, safe, ambiguous), jammed
