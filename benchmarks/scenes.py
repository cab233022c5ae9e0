"""Benchmark scenes of shared/bench/SCENES.md, built exactly and importable by every benchmark.

Every coordinate is computed in double with Python's ``math`` (the C library's libm,
the same one benchmarks/peers/raycast_peers.cpp calls), then stored as float32, so
the Python benchmarks and the C++ peer program see bit-identical scenes. Only about
20,000 trigonometric values are needed (the rays share 16 directions), so the scalar
loops cost a few milliseconds.
"""

from __future__ import annotations

import argparse
import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "GOLDEN",
    "TrackScene",
    "CrowdScene",
    "ellipse_walls",
    "track_walls",
    "track_origins",
    "slot_directions",
    "track_scene",
    "crowd_track_scene",
    "crowd_preferred",
    "agent_count",
    "agent_counts",
]

GOLDEN = 0.6180339887498949
"""The fractional golden ratio of the origin formula (SCENES.md)."""


class TrackScene(NamedTuple):
    """The racetrack raycast scene "track-M-L".

    walls (M, 4) float32 segments (x0, y0, x1, y1); positions (N, 2) float32 ray
    origins; slot_dirs (D, 2) float32 unit directions; origins (N*D, 2) and directions
    (N*D, 2) the expanded rays (ray r = i*D + j); max_dist the ray length L.
    """

    name: str
    walls: np.ndarray
    positions: np.ndarray
    slot_dirs: np.ndarray
    origins: np.ndarray
    directions: np.ndarray
    max_dist: float


class CrowdScene(NamedTuple):
    """The racetrack crowd scene "crowd-track-N" (walls scaled by k = sqrt(N/100)).

    walls (1000, 4) float32; positions (N, 2) float32; preferred (N, 2) float32 unit
    preferred directions (even agents counter-clockwise, odd clockwise); scale k.
    """

    name: str
    walls: np.ndarray
    positions: np.ndarray
    preferred: np.ndarray
    scale: float
    radius: float
    max_speed: float
    dt: float
    steps: int


def ellipse_walls(a: float, b: float, count: int, scale: float = 1.0) -> np.ndarray:
    """Closed ellipse of ``count`` segments: P_k = (a cos(2πk/count), b sin(2πk/count))."""
    pts = []
    for k in range(count):
        t = 2.0 * math.pi * k / count
        pts.append((scale * (a * math.cos(t)), scale * (b * math.sin(t))))
    segs = [(*pts[k], *pts[(k + 1) % count]) for k in range(count)]
    return np.array(segs, dtype=np.float64).astype(np.float32)


def track_walls(m: int, scale: float = 1.0) -> np.ndarray:
    """The M walls of the track: outer ellipse (100, 60) first, then inner (80, 40)."""
    if m <= 0 or m % 2:
        raise ValueError(f"m: expected a positive even number, got {m}")
    return np.concatenate(
        [ellipse_walls(100.0, 60.0, m // 2, scale), ellipse_walls(80.0, 40.0, m // 2, scale)]
    )


def track_origins(n: int = 10_000, scale: float = 1.0) -> np.ndarray:
    """Ray origins o_i = ((80+20 s_i) cos θ_i, (40+20 s_i) sin θ_i), strictly inside."""
    out = np.empty((n, 2), dtype=np.float64)
    for i in range(n):
        theta = 2.0 * math.pi * (i + 0.5) / n
        x = (i + 1) * GOLDEN
        s = 0.1 + 0.8 * (x - math.floor(x))
        out[i, 0] = scale * ((80.0 + 20.0 * s) * math.cos(theta))
        out[i, 1] = scale * ((40.0 + 20.0 * s) * math.sin(theta))
    return out.astype(np.float32)


def slot_directions(d: int = 16) -> np.ndarray:
    """D unit directions φ_j = 2πj/D (slot 0 along +x, counter-clockwise)."""
    return np.array(
        [(math.cos(2.0 * math.pi * j / d), math.sin(2.0 * math.pi * j / d)) for j in range(d)],
        dtype=np.float64,
    ).astype(np.float32)


def track_scene(m: int, length: float, n: int = 10_000, d: int = 16) -> TrackScene:
    """Scene "track-M-L": M walls, N origins × D directions of length L.

    Examples
    --------
    >>> s = track_scene(1000, 50.0)
    >>> s.walls.shape, s.origins.shape, s.max_dist
    ((1000, 4), (160000, 2), 50.0)
    """
    walls = track_walls(m)
    positions = track_origins(n)
    dirs = slot_directions(d)
    origins = np.repeat(positions, d, axis=0)
    directions = np.tile(dirs, (n, 1))
    return TrackScene(
        f"track-{m}-{length:g}", walls, positions, dirs, origins, directions, float(length)
    )


def crowd_track_scene(n: int) -> CrowdScene:
    """Scene "crowd-track-N" (SCENES.md): the M=1000 track scaled by k = sqrt(N/100).

    The preferred direction of an agent at p is the unit tangent of the mid-track
    ellipse (a = 90k, b = 50k) at the ellipse parameter t = atan2(p_y / b, p_x / a)
    (SCENES.md does not say which point of the ellipse; this is the one whose
    parameter matches the agent's), counter-clockwise for even agents and clockwise
    for odd ones.
    """
    k = math.sqrt(n / 100.0)
    walls = track_walls(1000, k)
    positions = track_origins(n, k)
    tangent = crowd_preferred(positions, k)
    return CrowdScene(f"crowd-track-{n}", walls, positions, tangent, k, 1.5, 2.0, 0.25, 100)


def crowd_preferred(positions: np.ndarray, scale: float) -> np.ndarray:
    """Preferred directions of crowd-track-N agents at ``positions`` (N, 2), float32.

    Agent i's is the unit tangent of the mid-track ellipse (a = 90k, b = 50k) at
    parameter t = atan2(p_y / b, p_x / a), counter-clockwise for even i and clockwise
    for odd i; steppers re-evaluate it as agents move.
    """
    a, b = 90.0 * scale, 50.0 * scale
    p = np.asarray(positions, dtype=np.float64)
    t = np.arctan2(p[:, 1] / b, p[:, 0] / a)
    tangent = np.stack([-a * np.sin(t), b * np.cos(t)], axis=1)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    tangent[1::2] *= -1.0
    return tangent.astype(np.float32)


_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000}


def agent_count(text: str) -> int:
    """A benchmark size as written on a command line: ``10000``, ``10k``, ``1M``, ``2.5k``.

    Raises
    ------
    ValueError
        Unless ``text`` is a positive whole number of agents, optionally with a k or M
        (case-insensitive) suffix, naming what was expected.
    """
    t = text.strip().replace("_", "")
    suffix = t[-1:].lower() if t[-1:].lower() in ("k", "m") else ""
    try:
        value = float(t[: len(t) - len(suffix)]) * _SUFFIX[suffix]
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value >= 1 and value == int(value)):
        raise ValueError(
            f"expected a positive whole number of agents such as 1000, 10k or 1M, got {text!r}"
        )
    return int(value)


def at_least(low: int):
    """An argparse type: an int >= ``low``, else a usage error naming the bound (a bare int
    let 0 repeats reach a median of nothing)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def agent_counts(text: str) -> list[int]:
    """A comma-separated list of :func:`agent_count` values, e.g. ``"1k,10k,100k,1M"``."""
    return [agent_count(x) for x in text.split(",")]
