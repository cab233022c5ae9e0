"""A line-by-line Python port of the Godot recipe's agent script ("Context-based
steering", KinematicBody2D; /work/shared/seeds/godot-recipe-context-steering.txt) as a
test oracle: ``_ready``, ``set_interest``, ``set_danger``, ``choose_direction`` and
``_physics_process``. Slow and obvious on purpose.

What the script leaves to Godot is given here as plain functions: ``get_path_direction``
(the owner's PathFollow2D: the track tangent at the closest offset) is a callable, and
``intersect_ray`` is a thin segment query against wall segments and other cars' circles.
``move_and_collide`` is not ported: the comparisons use steps without a contact.
"""

from __future__ import annotations

import math


def rotated(v, angle):
    c, s = math.cos(angle), math.sin(angle)
    return (v[0] * c - v[1] * s, v[0] * s + v[1] * c)


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


def normalized(v):
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n) if n > 0 else (0.0, 0.0)  # Vector2.normalized of zero


def linear_interpolate(a, b, t):
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)


def vec_angle(v):
    return math.atan2(v[1], v[0])  # Vector2.angle(); (0, 0) gives 0


def segment_hit(p, q, wall):
    """Whether segment p→q meets the wall segment (x0, y0, x1, y1)."""
    (px, py), (qx, qy) = p, q
    x0, y0, x1, y1 = wall
    dx, dy, wx, wy = qx - px, qy - py, x1 - x0, y1 - y0
    den = dx * wy - dy * wx
    if den == 0:
        return False
    t = ((x0 - px) * wy - (y0 - py) * wx) / den
    u = ((x0 - px) * dy - (y0 - py) * dx) / den
    return 0 <= t <= 1 and 0 <= u <= 1


def circle_hit(p, q, c, r):
    """Whether segment p→q meets the circle (c, r). A segment starting inside hits (Godot
    3's 2D ray queries report a shape they start in: hence the recipe's ``[self]``)."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    fx, fy = p[0] - c[0], p[1] - c[1]
    a = dx * dx + dy * dy
    b = 2 * (fx * dx + fy * dy)
    cc = fx * fx + fy * fy - r * r
    if cc <= 0:
        return True
    disc = b * b - 4 * a * cc
    if disc < 0:
        return False
    t = (-b - math.sqrt(disc)) / (2 * a)
    return 0 <= t <= 1


class Agent:
    def __init__(
        self,
        position,
        rotation=0.0,
        velocity=(0.0, 0.0),
        max_speed=350.0,
        steer_force=0.1,
        look_ahead=100.0,
        num_rays=8,
    ):
        self.max_speed, self.steer_force, self.look_ahead, self.num_rays = (
            max_speed,
            steer_force,
            look_ahead,
            num_rays,
        )
        self.position, self.rotation, self.velocity = tuple(position), rotation, tuple(velocity)
        self.chosen_dir = (0.0, 0.0)
        self._ready()

    def _ready(self):
        self.interest = [0.0] * self.num_rays
        self.danger = [0.0] * self.num_rays
        self.ray_directions = [
            rotated((1.0, 0.0), i * 2 * math.pi / self.num_rays) for i in range(self.num_rays)
        ]

    def _physics_process(self, delta, get_path_direction, intersect_ray):
        self.set_interest(get_path_direction)
        self.set_danger(intersect_ray)
        self.choose_direction()
        desired_velocity = tuple(
            c * self.max_speed for c in rotated(self.chosen_dir, self.rotation)
        )
        self.velocity = linear_interpolate(self.velocity, desired_velocity, self.steer_force)
        self.rotation = vec_angle(self.velocity)
        # move_and_collide(velocity * delta), without a collision
        self.position = (
            self.position[0] + self.velocity[0] * delta,
            self.position[1] + self.velocity[1] * delta,
        )

    def set_interest(self, get_path_direction):
        if get_path_direction is not None:
            path_direction = get_path_direction(self.position)
            for i in range(self.num_rays):
                d = dot(rotated(self.ray_directions[i], self.rotation), path_direction)
                self.interest[i] = max(0, d)
        else:
            self.set_default_interest()

    def set_default_interest(self):
        forward = rotated((1.0, 0.0), self.rotation)  # transform.x
        for i in range(self.num_rays):
            d = dot(rotated(self.ray_directions[i], self.rotation), forward)
            self.interest[i] = max(0, d)

    def set_danger(self, intersect_ray):
        for i in range(self.num_rays):
            end = rotated(self.ray_directions[i], self.rotation)
            end = (
                self.position[0] + end[0] * self.look_ahead,
                self.position[1] + end[1] * self.look_ahead,
            )
            result = intersect_ray(self.position, end, self)
            self.danger[i] = 1.0 if result else 0.0

    def choose_direction(self):
        for i in range(self.num_rays):
            if self.danger[i] > 0.0:
                self.interest[i] = 0.0
        chosen = (0.0, 0.0)
        for i in range(self.num_rays):
            chosen = (
                chosen[0] + self.ray_directions[i][0] * self.interest[i],
                chosen[1] + self.ray_directions[i][1] * self.interest[i],
            )
        self.chosen_dir = normalized(chosen)


def space(walls, cars, radius):
    """intersect_ray(from, to, exclude) over wall segments and the cars' circles."""

    def intersect_ray(p, q, exclude):
        if any(segment_hit(p, q, w) for w in walls):
            return True
        return any(circle_hit(p, q, c.position, radius) for c in cars if c is not exclude)

    return intersect_ray
