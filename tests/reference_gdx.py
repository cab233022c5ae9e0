"""A line-by-line Python port of libGDX gdx-ai's steering behaviours (the Java classes in
gdx-ai/src/com/badlogic/gdx/ai/steer), written from the published algorithms as a test
oracle for :mod:`contextsteer.classic`. Slow and obvious on purpose: one agent at a time,
plain float64 tuples, the Java statement order kept (including its quirks).

Conventions: an agent's orientation is contextsteer's heading (0 along +x, counter-
clockwise), so ``angle_to_vector(a) = (cos a, sin a)``; gdx-ai's test app uses
``(-sin a, cos a)`` with y up, the same geometry turned by 90°. Each group behaviour has
its own proximity (gdx-ai's per-frame tag sharing between behaviours is not ported).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# ------------------------------------------------------------------- vectors (Vector2) ---


def add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1])


def scl(a, s):
    return (a[0] * s, a[1] * s)


def mul_add(a, b, s):
    return (a[0] + b[0] * s, a[1] + b[1] * s)


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


def len2(a):
    return dot(a, a)


def length(a):
    return math.sqrt(len2(a))


def nor(a):
    n = length(a)
    return (a[0] / n, a[1] / n) if n != 0 else a  # Vector2.nor leaves the zero vector


def limit(a, m):
    l2 = len2(a)
    if l2 > m * m:
        return scl(a, math.sqrt(m * m / l2))
    return a


def angle_to_vector(angle):
    return (math.cos(angle), math.sin(angle))


def vector_to_angle(v):
    return math.atan2(v[1], v[0])


ZERO = (0.0, 0.0)


@dataclass
class Steerable:
    position: tuple
    velocity: tuple = ZERO
    orientation: float = 0.0
    bounding_radius: float = 0.0
    max_speed: float = 1.0
    max_accel: float = 1.0


# ---------------------------------------------------------------------- proximities ---


@dataclass
class RadiusProximity:
    owner: Steerable
    agents: list
    radius: float

    def find_neighbors(self, callback):
        count = 0
        p = self.owner.position
        for a in self.agents:
            if a is not self.owner:
                square_distance = len2(sub(p, a.position))
                rng = self.radius + a.bounding_radius
                if square_distance < rng * rng and callback(a):
                    count += 1
        return count


@dataclass
class FieldOfViewProximity:
    owner: Steerable
    agents: list
    radius: float
    angle: float

    def find_neighbors(self, callback):
        count = 0
        # gdx-ai: (float) Math.cos(angle * 0.5f) with a float angle: for angle π the
        # threshold is -4.37e-8, not +6e-17, so a neighbour exactly to the side counts.
        half = float(np.float32(np.float32(self.angle) * np.float32(0.5)))
        cone_threshold = float(np.float32(math.cos(half)))
        p = self.owner.position
        orientation = angle_to_vector(self.owner.orientation)
        for a in self.agents:
            if a is not self.owner:
                to_agent = sub(a.position, p)
                rng = self.radius + a.bounding_radius
                # gdx-ai compares with the unnormalised offset (ported as is)
                if (
                    len2(to_agent) < rng * rng
                    and dot(orientation, to_agent) > cone_threshold
                    and callback(a)
                ):
                    count += 1
        return count


@dataclass
class InfiniteProximity:
    owner: Steerable
    agents: list

    def find_neighbors(self, callback):
        count = 0
        for a in self.agents:
            if a is not self.owner and callback(a):
                count += 1
        return count


# ------------------------------------------------------------------------ behaviours ---


def seek(owner, target):
    return scl(nor(sub(target, owner.position)), owner.max_accel)


def flee(owner, target):
    return scl(nor(sub(owner.position, target)), owner.max_accel)


def arrive(owner, target, arrival_tolerance, deceleration_radius, time_to_target=0.1):
    to_target = sub(target, owner.position)
    distance = length(to_target)
    if distance <= arrival_tolerance:
        return ZERO
    target_speed = owner.max_speed
    if distance <= deceleration_radius:
        target_speed *= distance / deceleration_radius
    target_velocity = scl(to_target, target_speed / distance)
    return limit(scl(sub(target_velocity, owner.velocity), 1.0 / time_to_target), owner.max_accel)


def pursue(owner, target: Steerable, max_prediction_time=1.0, evade=False):
    square_distance = len2(sub(target.position, owner.position))
    square_speed = len2(owner.velocity)
    prediction_time = max_prediction_time
    if square_speed > 0:
        square_prediction_time = square_distance / square_speed
        if square_prediction_time < max_prediction_time * max_prediction_time:
            prediction_time = math.sqrt(square_prediction_time)
    linear = sub(mul_add(target.position, target.velocity, prediction_time), owner.position)
    linear = scl(nor(linear), owner.max_accel)
    return scl(linear, -1.0) if evade else linear


def match_velocity(owner, target_velocity, time_to_target=0.1):
    return limit(scl(sub(target_velocity, owner.velocity), 1.0 / time_to_target), owner.max_accel)


def separation(owner, proximity, decay_coefficient=1.0):
    linear = [0.0, 0.0]

    def report(neighbor):
        to_agent = sub(owner.position, neighbor.position)
        distance_sqr = len2(to_agent)
        if distance_sqr == 0:
            return True
        max_acceleration = owner.max_accel
        strength = decay_coefficient / distance_sqr
        if strength > max_acceleration:
            strength = max_acceleration
        s = strength / math.sqrt(distance_sqr)
        linear[0] += to_agent[0] * s
        linear[1] += to_agent[1] * s
        return True

    proximity.find_neighbors(report)
    return tuple(linear)


def alignment(owner, proximity):
    average = [0.0, 0.0]

    def report(neighbor):
        average[0] += neighbor.velocity[0]
        average[1] += neighbor.velocity[1]
        return True

    count = proximity.find_neighbors(report)
    if count > 0:
        avg = scl(tuple(average), 1.0 / count)
        return limit(sub(avg, owner.velocity), owner.max_accel)
    return ZERO


def cohesion(owner, proximity):
    center = [0.0, 0.0]

    def report(neighbor):
        center[0] += neighbor.position[0]
        center[1] += neighbor.position[1]
        return True

    count = proximity.find_neighbors(report)
    if count > 0:
        c = scl(tuple(center), 1.0 / count)
        return scl(nor(sub(c, owner.position)), owner.max_accel)
    return ZERO


def collision_avoidance(owner, proximity):
    st = dict(
        shortest_time=math.inf,
        first=None,
        first_min_separation=0.0,
        first_distance=0.0,
        first_rel_pos=ZERO,
        first_rel_vel=ZERO,
    )

    def report(neighbor):
        relative_position = sub(neighbor.position, owner.position)
        relative_velocity = sub(neighbor.velocity, owner.velocity)
        relative_speed2 = len2(relative_velocity)
        if relative_speed2 == 0:
            return False
        time_to_collision = -dot(relative_position, relative_velocity) / relative_speed2
        if time_to_collision <= 0 or time_to_collision >= st["shortest_time"]:
            return False
        distance = length(relative_position)
        min_separation = distance - math.sqrt(relative_speed2) * time_to_collision
        if min_separation > owner.bounding_radius + neighbor.bounding_radius:
            return False
        st.update(
            shortest_time=time_to_collision,
            first=neighbor,
            first_min_separation=min_separation,
            first_distance=distance,
            first_rel_pos=relative_position,
            first_rel_vel=relative_velocity,
        )
        return True

    count = proximity.find_neighbors(report)
    first = st["first"]
    if count == 0 or first is None:
        return ZERO
    if (
        st["first_min_separation"] <= 0
        or st["first_distance"] < owner.bounding_radius + first.bounding_radius
    ):
        relative_position = sub(first.position, owner.position)
    else:
        relative_position = mul_add(st["first_rel_pos"], st["first_rel_vel"], st["shortest_time"])
    return scl(nor(relative_position), -owner.max_accel)


# Ray configurations: lists of (start, end).
def single_ray(owner, length_):
    start = owner.position
    return [(start, add(scl(nor(owner.velocity), length_), start))]


def parallel_side_rays(owner, length_, side_offset):
    a = vector_to_angle(owner.velocity)
    s0 = add(scl(angle_to_vector(a - math.pi / 2), side_offset), owner.position)
    e = scl(nor(owner.velocity), length_)
    s1 = add(scl(angle_to_vector(a + math.pi / 2), side_offset), owner.position)
    return [(s0, add(e, s0)), (s1, add(e, s1))]


def central_ray_with_whiskers(owner, ray_length, whisker_length, whisker_angle):
    p, v = owner.position, owner.velocity
    a = vector_to_angle(v)
    return [
        (p, add(scl(nor(v), ray_length), p)),
        (p, add(scl(angle_to_vector(a - whisker_angle), whisker_length), p)),
        (p, add(scl(angle_to_vector(a + whisker_angle), whisker_length), p)),
    ]


def segment_detector(walls):
    """A RaycastCollisionDetector over wall segments (x0, y0, x1, y1): the closest hit
    along the ray, with the segment's normal facing the ray's start (a Box2D raycast)."""

    def find(ray):
        (sx, sy), (ex, ey) = ray
        dx, dy = ex - sx, ey - sy
        best = None
        for x0, y0, x1, y1 in walls:
            wx, wy = x1 - x0, y1 - y0
            den = dx * wy - dy * wx
            if den == 0:
                continue
            t = ((x0 - sx) * wy - (y0 - sy) * wx) / den
            u = ((x0 - sx) * dy - (y0 - sy) * dx) / den
            if 0 <= t <= 1 and 0 <= u <= 1 and (best is None or t < best[0]):
                n = nor((-wy, wx))
                if dot(n, (dx, dy)) > 0:
                    n = scl(n, -1.0)
                best = (t, (sx + dx * t, sy + dy * t), n)
        return None if best is None else (best[1], best[2])

    return find


def raycast_obstacle_avoidance(owner, rays, detector, distance_from_boundary):
    min_distance_square = math.inf
    min_collision = None
    for ray in rays:
        collision = detector(ray)
        if collision is not None:
            distance_square = len2(sub(owner.position, collision[0]))
            if distance_square < min_distance_square:
                min_distance_square = distance_square
                min_collision = collision
    if min_distance_square == math.inf:
        return ZERO
    point, normal = min_collision
    target = mul_add(point, normal, owner.bounding_radius + distance_from_boundary)
    return scl(nor(sub(target, owner.position)), owner.max_accel)


class LinePath:
    def __init__(self, waypoints, is_open):
        self.is_open = is_open
        self.segments = []  # (begin, end, length, cumulative)
        self.length = 0.0
        n = len(waypoints)
        curr = tuple(waypoints[0])
        for i in range(1, n + 1):
            prev = curr
            if i < n:
                curr = tuple(waypoints[i])
            elif is_open:
                break
            else:
                curr = tuple(waypoints[0])
            seg_len = length(sub(curr, prev))
            self.length += seg_len
            self.segments.append((prev, curr, seg_len, self.length))

    def calculate_distance(self, pos):
        smallest = math.inf
        nearest = nearest_point = None
        for seg in self.segments:
            a, b = seg[0], seg[1]
            ab = sub(b, a)
            out = a
            ab_len2 = len2(ab)
            if ab_len2 != 0:
                t = dot(sub(pos, a), ab) / ab_len2
                out = mul_add(a, ab, min(max(t, 0.0), 1.0))
            d2 = len2(sub(out, pos))
            if d2 < smallest:
                smallest, nearest, nearest_point = d2, seg, out
        return nearest[3] - length(sub(nearest_point, nearest[1]))

    def calculate_target_position(self, target_distance):
        if self.is_open:
            target_distance = min(max(target_distance, 0.0), self.length)
        else:
            if target_distance < 0:
                target_distance = self.length + math.fmod(target_distance, self.length)
            elif target_distance > self.length:
                target_distance = math.fmod(target_distance, self.length)
        seg = next(s for s in self.segments if s[3] >= target_distance)
        a, b, seg_len, cum = seg
        d = cum - target_distance
        return add(scl(sub(a, b), d / seg_len), b)


def follow_path(
    owner,
    path: LinePath,
    path_offset=0.0,
    prediction_time=0.0,
    arrive_enabled=True,
    arrival_tolerance=0.0,
    deceleration_radius=0.0,
    time_to_target=0.1,
):
    location = (
        owner.position
        if prediction_time == 0
        else mul_add(owner.position, owner.velocity, prediction_time)
    )
    distance = path.calculate_distance(location)
    target_distance = distance + path_offset
    target = path.calculate_target_position(target_distance)
    if arrive_enabled and path.is_open:
        if path_offset >= 0:
            if target_distance > path.length - deceleration_radius:
                return arrive(owner, target, arrival_tolerance, deceleration_radius, time_to_target)
        elif target_distance < deceleration_radius:
            return arrive(owner, target, arrival_tolerance, deceleration_radius, time_to_target)
    return scl(nor(sub(target, owner.position)), owner.max_accel)


def interpose(
    owner,
    agent_a,
    agent_b,
    ratio=0.5,
    deceleration_radius=0.0,
    time_to_target=0.1,
    arrival_tolerance=0.0,
):
    """Interpose extends Arrive: its arrive() uses the Arrive fields (arrivalTolerance,
    decelerationRadius, timeToTarget)."""
    internal = add(scl(sub(agent_b.position, agent_a.position), ratio), agent_a.position)
    t = length(sub(owner.position, internal)) / owner.max_speed
    a = mul_add(agent_a.position, agent_a.velocity, t)
    b = mul_add(agent_b.position, agent_b.velocity, t)
    internal = add(scl(sub(b, a), ratio), a)
    return arrive(owner, internal, arrival_tolerance, deceleration_radius, time_to_target)


@dataclass
class Wander:
    """gdx-ai's Wander (faceEnabled false): the state it keeps between calls."""

    offset: float
    radius: float
    rate: float
    last_time: float = 0.0
    orientation: float = 0.0

    def calculate(self, owner, now, random_triangular):
        if self.last_time > 0:
            delta = now - self.last_time
            self.orientation += random_triangular(self.rate * delta)
        self.last_time = now
        target_orientation = self.orientation + owner.orientation
        center = mul_add(owner.position, angle_to_vector(owner.orientation), self.offset)
        target = mul_add(center, angle_to_vector(target_orientation), self.radius)
        return scl(nor(sub(target, owner.position)), owner.max_accel)


def blended(owner, items):
    """BlendedSteering: (acceleration, weight) pairs summed, truncated to max_accel."""
    acc = ZERO
    for a, w in items:
        acc = mul_add(acc, a, w)
    return limit(acc, owner.max_accel)


def priority(results, epsilon=1e-3):
    """PrioritySteering over already computed results (each a behaviour's or a blend's)."""
    eps2 = epsilon * epsilon
    out = ZERO
    for r in results:
        out = r
        if len2(r) > eps2:
            return r
    return out


def apply_steering(owner, linear, time):
    """The wiki's SteeringAgent.applySteering (non-independent facing)."""
    owner.position = mul_add(owner.position, owner.velocity, time)
    owner.velocity = limit(mul_add(owner.velocity, linear, time), owner.max_speed)
    if len2(owner.velocity) > 0:  # calculateOrientationFromLinearVelocity
        owner.orientation = vector_to_angle(owner.velocity)
