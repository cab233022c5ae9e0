"""A line-by-line Python port of the Unity project's context steering (the C# scripts
quoted in /work/shared/seeds/unity-contextsteering-readme.txt) as a test oracle: the
directions, the Chase and Avoid behaviours' maps, the merger (max from 0), the final
interest (interest − danger, unclamped) and the argmax (Mathf.Max, then FindIndex).
NaN follows IEEE rules as in C#: every comparison with NaN is false.
"""

from __future__ import annotations

import math

import numpy as np


def magnitude(v):
    """Vector2.magnitude: (float)Math.Sqrt(x*x + y*y), the sum in float32."""
    x, y = np.float32(v[0]), np.float32(v[1])
    return float(np.float32(math.sqrt(float(x * x + y * y))))


def directions(resolution):
    interval = math.pi * 2 / resolution
    return [(math.cos(i * interval), math.sin(i * interval)) for i in range(resolution)]


def _dot_over_magnitude(to_target, d):
    m = math.hypot(*to_target)
    dp = to_target[0] * d[0] + to_target[1] * d[1]
    return dp / m if m != 0 else (math.nan if dp == 0 else math.copysign(math.inf, dp))


def chase_interest(agent, targets, max_distance, center_between_targets, dirs):
    interest = [0.0] * len(dirs)
    for t in targets:
        to_target = (t[0] - agent[0], t[1] - agent[1])
        if magnitude(to_target) > max_distance:
            continue
        for i, d in enumerate(dirs):
            amount = _dot_over_magnitude(to_target, d)
            if center_between_targets:
                interest[i] = interest[i] + amount
            elif amount > interest[i]:
                interest[i] = amount
    return interest


def avoid_danger(agent, targets, max_distance, dirs):
    danger = [0.0] * len(dirs)
    for t in targets:
        to_target = (t[0] - agent[0], t[1] - agent[1])
        if magnitude(to_target) > max_distance:
            continue
        for i, d in enumerate(dirs):
            amount = _dot_over_magnitude(to_target, d)
            if amount > danger[i]:
                danger[i] = amount
    return danger


def merge(maps, k):
    out = [0.0] * k
    for i in range(k):
        biggest = 0.0
        for m in maps:
            if m[i] > biggest:
                biggest = m[i]
        out[i] = biggest
    return out


def choose(interest_maps, danger_maps, dirs):
    """The final map and the index of its biggest value (the slot the agent pushes to)."""
    k = len(dirs)
    interest = merge(interest_maps, k)
    danger = merge(danger_maps, k)
    for i in range(k):
        interest[i] -= danger[i]
    biggest = max(interest)  # Mathf.Max
    index = interest.index(biggest)  # FindIndex(x => x == biggest)
    return interest, index
