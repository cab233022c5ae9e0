"""Plain-NumPy oracle for agents, neighbours, behaviours and motion models.

Slow and obvious on purpose, never calling contextsteer: every function restates its
rule from the seeds (Godot recipe, Lewis, Unity ContextSteering, gdx-ai) with loops over
agents, in float64 except where the contract itself is float32 (neighbour distances).
A state is a dict of arrays with the Agents attribute names (position, velocity, heading,
radius, max_speed, max_accel, max_turn_rate, steer_force, target, alive, rng).
"""

from __future__ import annotations

import math

import numpy as np

from reference import angle_between

M64 = (1 << 64) - 1


# ------------------------------------------------------------------ random numbers ---


def splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def agent_seed(seed: int, index: int) -> int:
    return splitmix64(splitmix64(seed) ^ ((index * 0xD1B54A32D192ED03) & M64))


def value_noise(key: int, x: float) -> float:
    cell = math.floor(x)
    t = x - cell
    c = cell & M64

    def lattice(ci):
        bits = splitmix64(key ^ ((ci * 0x9E3779B97F4A7C15) & M64))
        return 2.0 * ((bits >> 40) / 16777216.0) - 1.0

    a, b = lattice(c), lattice((c + 1) & M64)
    s = t * t * (3.0 - 2.0 * t)
    return a + (b - a) * s


# ------------------------------------------------------------------- neighbours ---


def _neighbour_inputs(positions, radius, max_neighbors, alive):
    """Both references' float32 points, count, alive mask, r² and empty outputs."""
    p = np.asarray(positions, dtype=np.float32)
    n = len(p)
    alive = np.ones(n, bool) if alive is None else np.asarray(alive, bool)
    r = np.float32(radius)
    return p, n, alive, r * r, -np.ones((n, max_neighbors), np.int32), np.zeros(n, np.int32)


def neighbors(positions, radius, max_neighbors, alive=None):
    """Brute force: for each alive i, alive j != i with d² <= r² (float32), sorted by
    (d², j), first max_neighbors. Returns (indices padded with -1, counts)."""
    p, n, alive, r2, idx, counts = _neighbour_inputs(positions, radius, max_neighbors, alive)
    for i in range(n):
        if not alive[i]:
            continue
        found = []
        for j in range(n):
            if j == i or not alive[j]:
                continue
            dx = p[j, 0] - p[i, 0]
            dy = p[j, 1] - p[i, 1]
            d2 = dx * dx + dy * dy  # float32 arithmetic, as the contract says
            if d2 <= r2:
                found.append((float(d2), j))
        found.sort()
        found = found[:max_neighbors]
        counts[i] = len(found)
        for k, (_, j) in enumerate(found):
            idx[i, k] = j
    return idx, counts


def neighbors_vectorised(positions, radius, max_neighbors, alive=None):
    """:func:`neighbors` with each row's distances in one NumPy expression, for inputs of
    thousands of points (the plain loops take seconds there). The same float32 operations
    (p_j - p_i per axis, squared, summed; NumPy rounds each one, as the C++ does) and the
    same order: by d², then index."""
    p, n, alive, r2, idx, counts = _neighbour_inputs(positions, radius, max_neighbors, alive)
    for i in np.flatnonzero(alive):
        dx = p[:, 0] - p[i, 0]
        dy = p[:, 1] - p[i, 1]
        d2 = dx * dx + dy * dy
        ok = alive & (d2 <= r2)
        ok[i] = False
        j = np.flatnonzero(ok)
        j = j[np.lexsort((j, d2[j]))][:max_neighbors]
        counts[i] = len(j)
        idx[i, : len(j)] = j
    return idx, counts


# -------------------------------------------------------------------- behaviours ---


def ring(k):
    a = 2 * np.pi * np.arange(k) / k
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def agent_slots(slots, heading, rotate):
    """World directions of the slots of one agent: rotated by the heading (Godot
    `ray_directions[i].rotated(rotation)`) when `rotate`."""
    s = np.asarray(slots, dtype=np.float64)
    if not rotate:
        return s
    c, sn = math.cos(heading), math.sin(heading)
    return np.stack([c * s[:, 0] - sn * s[:, 1], sn * s[:, 0] + c * s[:, 1]], axis=1)


def _unit(v):
    d = float(np.hypot(v[0], v[1]))
    return (np.asarray(v, float) / d, d) if d > 1e-12 else (None, d)


def _dot_clamped(world_slots, u):
    return np.maximum(0.0, world_slots @ np.asarray(u, float))


def _dot_shaped(world_slots, u, shape):
    """A target behaviour's slot scores for the unit direction u: ``max(0, cos θ)``,
    ``(1 + cos θ)/2`` or ``1 - sin(θ/2)``, θ each slot's angle to u (``angle_between``,
    not from the difference vector as the library's chord is)."""
    if shape == "clamped_cosine":
        return _dot_clamped(world_slots, u)
    if shape == "half_cosine":
        return 0.5 * (1.0 + world_slots @ np.asarray(u, float))
    assert shape == "chord", shape
    return 1.0 - np.sin(0.5 * angle_between(world_slots, u))


def _maps(state, k):
    n = len(state["position"])
    return np.zeros((n, k)), np.zeros((n, k))


def forward(state, slots, weight=1.0, rotate=False):
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        h = float(state["heading"][i])
        s = agent_slots(slots, h, rotate)
        interest[i] = weight * _dot_clamped(s, (math.cos(h), math.sin(h)))
    return interest, danger


def momentum(state, slots, weight=1.0, rotate=False):
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        u, speed = _unit(state["velocity"][i])
        vmax = float(state["max_speed"][i])
        if u is None or vmax <= 0:
            continue
        s = agent_slots(slots, float(state["heading"][i]), rotate)
        interest[i] = weight * min(1.0, speed / vmax) * _dot_clamped(s, u)
    return interest, danger


def targets(
    state,
    slots,
    *,
    points=None,
    ids=None,
    weight=1.0,
    max_distance=math.inf,
    max_prediction=0.0,
    away=False,
    combine="max",
    falloff="linear",
    output="interest",
    rotate=False,
    shape="clamped_cosine",
):
    """Seek/Chase/Flee/Avoid/Pursue/Evade (see contextsteer.behaviours)."""
    k = len(slots)
    interest, danger = _maps(state, k)
    out = interest if output == "interest" else danger
    for i in np.flatnonzero(state["alive"]):
        p = state["position"][i].astype(float)
        s = agent_slots(slots, float(state["heading"][i]), rotate)
        goals = []
        if ids is not None:
            for j in ids:
                if j == i or not state["alive"][j]:
                    continue
                g = state["position"][j].astype(float)
                if max_prediction > 0:
                    d = float(np.hypot(*(g - p)))
                    vmax = float(state["max_speed"][i])
                    t = min(max_prediction, d / vmax) if vmax > 0 else max_prediction
                    g = g + state["velocity"][j].astype(float) * t
                goals.append(g)
        elif points is not None:
            goals = [np.asarray(q, float) for q in points]
        else:
            goals = [state["target"][i].astype(float)]
        row = np.zeros(k)
        for g in goals:
            u, d = _unit(g - p)
            if u is None or d > max_distance:
                continue
            if away:
                u = -u
            f = 1.0
            if falloff == "linear" and math.isfinite(max_distance):
                f = max(0.0, 1.0 - d / max_distance)
            c = f * _dot_shaped(s, u, shape)
            row = np.maximum(row, c) if combine == "max" else row + c
        out[i] = weight * row
    return interest, danger


def arrive(
    state,
    slots,
    *,
    slowing_radius,
    tolerance=0.0,
    target=None,
    weight=1.0,
    rotate=False,
    shape="clamped_cosine",
):
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        goal = state["target"][i] if target is None else target
        u, d = _unit(np.asarray(goal, float) - state["position"][i])
        if u is None or d <= tolerance:
            continue
        s = agent_slots(slots, float(state["heading"][i]), rotate)
        interest[i] = weight * min(1.0, d / slowing_radius) * _dot_shaped(s, u, shape)
    return interest, danger


def wander(
    state, slots, *, offset=1.0, radius=0.5, rate=1.0, seed=0, time=0.0, weight=1.0, rotate=False
):
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        h = float(state["heading"][i])
        key = int(state["rng"][i]) ^ splitmix64(seed)
        theta = math.pi * value_noise(key, time * rate)
        v = offset * np.array([math.cos(h), math.sin(h)]) + radius * np.array(
            [math.cos(h + theta), math.sin(h + theta)]
        )
        u, _ = _unit(v)
        if u is None:
            continue
        interest[i] = weight * _dot_clamped(agent_slots(slots, h, rotate), u)
    return interest, danger


def tether(state, slots, *, center=None, radius=0.0, softness=0.0, weight=1.0, rotate=False):
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        c = state["target"][i] if center is None else center
        u, d = _unit(np.asarray(c, float) - state["position"][i])
        if u is None or d <= radius:
            continue
        strength = min(1.0, (d - radius) / softness) if softness > 0 else 1.0
        s = agent_slots(slots, float(state["heading"][i]), rotate)
        interest[i] = weight * strength * _dot_clamped(s, u)
    return interest, danger


def bounds(state, slots, *, lo, hi, margin=0.0, weight=1.0, rotate=False):
    k = len(slots)
    interest, danger = _maps(state, k)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    centre = (lo + hi) / 2
    inner_lo = np.minimum(lo + margin, centre)
    inner_hi = np.maximum(hi - margin, centre)
    for i in np.flatnonzero(state["alive"]):
        p = state["position"][i].astype(float)
        q = np.clip(p, inner_lo, inner_hi)
        u, d = _unit(q - p)
        if u is None:
            continue
        strength = min(1.0, d / margin) if margin > 0 else 1.0
        s = agent_slots(slots, float(state["heading"][i]), rotate)
        interest[i] = weight * strength * _dot_clamped(s, u)
    return interest, danger


def _group_ok(groups, gi, gj):
    return groups == "all" or ((gi == gj) == (groups == "same"))


def agent_danger(
    state,
    slots,
    neighbor_lists,
    *,
    radius,
    predictive=False,
    horizon=1.0,
    falloff="linear",
    groups="all",
    weight=1.0,
    rotate=False,
):
    """Unity "avoid" applied to neighbouring agents, graded by the surface gap; with
    `predictive`, also towards the relative position at the closest approach."""
    idx, counts = neighbor_lists
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        s = agent_slots(slots, float(state["heading"][i]), rotate)
        p = state["position"][i].astype(float)
        vi = state["velocity"][i].astype(float)
        ri = float(state["radius"][i])
        row = np.zeros(k)

        def towards(rel, rj, scale, ri=ri, s=s):  # (called within this iteration)
            u, d = _unit(rel)
            if u is None:
                return np.zeros(k)
            gap = max(0.0, d - ri - rj)
            if gap > radius:
                return np.zeros(k)
            g = 1.0 - gap / radius if falloff == "linear" else 1.0
            return g * scale * _dot_clamped(s, u)

        for j in idx[i, : counts[i]]:
            if not _group_ok(groups, state["group"][i], state["group"][j]):
                continue
            rel = state["position"][j].astype(float) - p
            rj = float(state["radius"][j])
            row = np.maximum(row, towards(rel, rj, 1.0))
            if predictive:
                w = state["velocity"][j].astype(float) - vi
                ww = float(w @ w)
                if ww <= 1e-12:
                    continue
                t = min(max(-float(rel @ w) / ww, 0.0), horizon)
                if t <= 0:
                    continue
                row = np.maximum(row, towards(rel + w * t, rj, 1.0 - t / horizon))
        danger[i] = weight * row
    return interest, danger


def flocking(
    state,
    slots,
    neighbor_lists,
    *,
    rule,
    radius,
    clamp=True,
    groups="same",
    weight=1.0,
    rotate=False,
):
    """Lewis: the dot product of a separation / alignment / cohesion vector with every
    slot, added to the interest."""
    idx, counts = neighbor_lists
    k = len(slots)
    interest, danger = _maps(state, k)
    for i in np.flatnonzero(state["alive"]):
        p = state["position"][i].astype(float)
        near = [
            j
            for j in idx[i, : counts[i]]
            if np.hypot(*(p - state["position"][j])) <= radius
            and _group_ok(groups, state["group"][i], state["group"][j])
        ]
        if not near:
            continue
        if rule == "separation":
            w = np.zeros(2)
            for j in near:
                rel = p - state["position"][j]
                d = float(np.hypot(*rel))
                if d > 1e-12:
                    w += rel / d * (1 - d / radius)
        elif rule == "alignment":
            vmax = float(state["max_speed"][i])
            w = (
                np.mean(state["velocity"][near].astype(float), axis=0) / vmax
                if vmax > 0
                else np.zeros(2)
            )
        else:
            w = (np.mean(state["position"][near].astype(float), axis=0) - p) / radius
        length = float(np.hypot(*w))
        if length > 1:
            w = w / length
        values = agent_slots(slots, float(state["heading"][i]), rotate) @ w
        interest[i] = weight * (np.maximum(values, 0.0) if clamp else values)
    return interest, danger


# ------------------------------------------------------------------------ motion ---


def wrap(a):
    """Angle in (-π, π]."""
    r = math.remainder(a, 2 * math.pi)
    return math.pi if r <= -math.pi else r


def _clamp_len(v, limit):
    n = float(np.hypot(*v))
    return v * (limit / n) if n > limit and n > 0 else v


def _inputs(direction, strength, i):
    d = np.asarray(direction[i], float)
    n = float(np.hypot(*d))
    d = d / n if n > 0 else np.zeros(2)
    return d, min(max(float(strength[i]), 0.0), 1.0)


def _has_direction(v, vmax):
    """Whether a velocity has a direction to face (common.hpp's has_direction): faster
    than 1e-6, or than 1e-6 of a max speed below 1."""
    return math.hypot(v[0], v[1]) > 1e-6 * min(1.0, max(float(vmax), 0.0))


def move(state, direction, strength, dt, model, **params):
    """Next (position, velocity, heading) for model "lerp", "accel" or "vehicle"."""
    pos = state["position"].astype(float).copy()
    vel = state["velocity"].astype(float).copy()
    head = state["heading"].astype(float).copy()
    for i in np.flatnonzero(state["alive"]):
        d, s = _inputs(direction, strength, i)
        v = vel[i].copy()
        h = float(head[i])
        vmax = float(state["max_speed"][i])
        if model == "lerp":
            # Godot: velocity = velocity.linear_interpolate(desired, steer_force)
            f = params.get("steer_force")
            f = float(state["steer_force"][i]) if f is None else f
            desired = d * vmax * s
            v = _clamp_len(v + (desired - v) * f, vmax)
            if _has_direction(v, vmax):
                h = math.atan2(v[1], v[0])
        elif model == "accel":
            ttt = params.get("time_to_target") or dt
            desired = d * vmax * s
            a = _clamp_len((desired - v) / ttt, float(state["max_accel"][i])) if ttt > 0 else 0 * v
            v = _clamp_len(v + a * dt, vmax)
            if _has_direction(v, vmax):
                goal = math.atan2(v[1], v[0])
                if params.get("independent_facing"):
                    step = float(state["max_turn_rate"][i]) * dt
                    h = h + min(max(wrap(goal - h), -step), step)
                else:
                    h = goal
        else:  # vehicle
            brake_angle = params.get("brake_angle", math.pi / 2)
            full = params.get("full_turn_speed", 0.25)
            # Speed along the heading: a velocity more than 90° off it rolls backwards
            # (negative), which max_accel brings back; within 90°, its length.
            along = v[0] * math.cos(h) + v[1] * math.sin(h)
            speed = max(along, -vmax) if along < 0 else min(float(np.hypot(*v)), vmax)
            target_speed = 0.0
            far = False
            if d.any():
                delta = wrap(math.atan2(d[1], d[0]) - h)
                # Fray's brake rule: far off → crawl at brake_speed
                far = abs(delta) > brake_angle
                target_speed = vmax * s * (params.get("brake_speed", 0.1) if far else 1.0)
            amax = float(state["max_accel"][i]) * dt
            nxt = min(
                max(speed + min(max(target_speed - speed, -amax), amax), min(speed, 0.0)), vmax
            )
            if d.any():
                # grip from the speed it had, or the speed it rolls at this step if more
                grip_speed = max(abs(speed), abs(nxt))
                grip = 1.0
                if full > 0:
                    grip = min(1.0, grip_speed / (full * vmax)) if vmax > 0 else 0.0
                step = float(state["max_turn_rate"][i]) * dt * grip
                h = h + min(max(delta, -step), step)
            v = np.array([math.cos(h), math.sin(h)]) * nxt
        head[i] = wrap(h)
        vel[i] = v
        pos[i] = pos[i] + v * dt
    return pos, vel, head


# --------------------------------------------------------------------- simulation ---
# Oracles of the world/path behaviours and the swept collision of the simulation step.


def wall_danger_from_distances(dist, look_ahead, falloff="binary", spread=0):
    """WallDanger from slot-ray hit distances (N, K) (inf = miss): Godot binary danger,
    or the graded "levels of danger", then each hit also marks `spread` slots either
    side scaled by 1 - m/(spread+1) (binary: unscaled); merged by max."""
    dist = np.asarray(dist, dtype=np.float64)
    n, k = dist.shape
    out = np.zeros((n, k))
    s = min(spread, k // 2)
    for i in range(n):
        for j in range(k):
            h = dist[i, j]
            if not h <= look_ahead:
                continue
            x = min(max(1.0 - h / look_ahead, 0.0), 1.0)
            v = {"binary": 1.0, "linear": x, "quadratic": x * x}[falloff]
            for m in range(-s, s + 1):
                g = 1.0 if falloff == "binary" else 1.0 - abs(m) / (s + 1)
                out[i, (j + m) % k] = max(out[i, (j + m) % k], v * g)
    return out


def follow_path(directions, slots, weight=1.0):
    """FollowPath from the path's unit directions (N, 2): weight * max(0, s_k . u)."""
    u = np.asarray(directions, np.float64)
    return weight * np.maximum(0.0, u @ np.asarray(slots, np.float64).T)


def segment_crossed(p0, p1, a, b):
    """True when the segment p0-p1 properly crosses the segment a-b (float64)."""

    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    o1, o2 = orient(a, b, p0), orient(a, b, p1)
    o3, o4 = orient(p0, p1, a), orient(p0, p1, b)
    return o1 * o2 < 0 and o3 * o4 < 0
