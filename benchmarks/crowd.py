"""The "crowd-track-N" scene of shared/bench/SCENES.md, its metrics, and the RVO2 peer.

Used by ``bench_step.py``. Metrics are computed the same way for every system from the
positions after each step, so both columns of the table measure the same thing:

- overlap episodes: a pair of agents starts overlapping (centre distance < r_i + r_j)
  at a step where it did not overlap at the previous step;
- wall penetrations: an agent's centre comes closer to a wall segment than its radius
  minus a 1% tolerance, counted as episodes per agent (start of an overlapping run);
- progress: mean over agents of the distance travelled along the agent's own preferred
  direction (the tangent of the mid-track ellipse, clockwise or counter-clockwise).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

RADIUS = 1.5
MAX_SPEED = 2.0
DT = 0.25
STEPS = 100
SEGMENTS = 1000
GOLDEN = 0.6180339887498949


@dataclass
class CrowdScene:
    """Walls, agents and preferred directions of crowd-track-N."""

    n: int
    k: float
    walls: np.ndarray  # (M, 4) float32, outer ellipse first then inner ellipse
    outer: np.ndarray  # (M/2, 2) float64 vertices, counter-clockwise
    inner: np.ndarray  # (M/2, 2) float64 vertices, counter-clockwise
    positions: np.ndarray  # (N, 2) float32
    direction_sign: np.ndarray  # (N,) +1 counter-clockwise (even agents), -1 clockwise

    def preferred_directions(self, positions: np.ndarray) -> np.ndarray:
        """Unit tangent of the mid-track ellipse (a=90k, b=50k) at each position."""
        a, b = 90.0 * self.k, 50.0 * self.k
        p = np.asarray(positions, dtype=np.float64)
        theta = np.arctan2(p[:, 1] / b, p[:, 0] / a)
        t = np.stack([-a * np.sin(theta), b * np.cos(theta)], axis=1)
        t /= np.linalg.norm(t, axis=1, keepdims=True)
        return t * self.direction_sign[:, None]


def ellipse_vertices(a: float, b: float, count: int) -> np.ndarray:
    k = np.arange(count, dtype=np.float64)
    ang = 2.0 * np.pi * k / count
    return np.stack([a * np.cos(ang), b * np.sin(ang)], axis=1)


def crowd_track(n: int) -> CrowdScene:
    """Build crowd-track-N exactly as SCENES.md states (computed in double)."""
    k = math.sqrt(n / 100.0)
    half = SEGMENTS // 2
    outer = ellipse_vertices(100.0 * k, 60.0 * k, half)
    inner = ellipse_vertices(80.0 * k, 40.0 * k, half)
    walls = np.concatenate(
        [np.hstack([ring, np.roll(ring, -1, axis=0)]) for ring in (outer, inner)]
    ).astype(np.float32)
    i = np.arange(n, dtype=np.float64)
    theta = 2.0 * np.pi * (i + 0.5) / n
    s = 0.1 + 0.8 * np.mod((i + 1) * GOLDEN, 1.0)
    pos = np.stack([(80 + 20 * s) * np.cos(theta), (40 + 20 * s) * np.sin(theta)], axis=1) * k
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return CrowdScene(n, k, walls, outer, inner, pos.astype(np.float32), sign)


class CrowdMetrics:
    """Accumulates overlap episodes, wall penetrations and progress step by step."""

    def __init__(self, scene: CrowdScene, radius: float = RADIUS):
        from scipy.spatial import cKDTree

        self.scene = scene
        self.radius = radius
        w = scene.walls.astype(np.float64)
        self._a, self._b = w[:, :2], w[:, 2:]
        mid = 0.5 * (self._a + self._b)
        self._half_len = 0.5 * float(np.max(np.linalg.norm(self._b - self._a, axis=1)))
        self._wall_tree = cKDTree(mid)
        self._cKDTree = cKDTree
        self._pairs_prev: set[tuple[int, int]] = set()
        self._in_wall_prev = np.zeros(scene.n, dtype=bool)
        self.overlap_episodes = 0
        self.wall_penetrations = 0
        self.progress = np.zeros(scene.n)
        self._last = None

    def _wall_distance(self, p: np.ndarray) -> np.ndarray:
        """Exact distance from each point to its nearest wall segment (candidates by k-d tree)."""
        reach = self.radius + self._half_len
        cand = self._wall_tree.query_ball_point(p, r=reach)
        dist = np.full(len(p), np.inf)
        for i, idx in enumerate(cand):
            if not idx:
                continue
            a, b = self._a[idx], self._b[idx]
            ab = b - a
            t = np.clip(np.einsum("ij,ij->i", p[i] - a, ab) / np.einsum("ij,ij->i", ab, ab), 0, 1)
            d = np.linalg.norm(a + t[:, None] * ab - p[i], axis=1)
            dist[i] = d.min()
        return dist

    def update(self, positions: np.ndarray) -> None:
        p = np.asarray(positions, dtype=np.float64)
        if self._last is not None:
            step = p - self._last
            pref = self.scene.preferred_directions(self._last)
            self.progress += np.einsum("ij,ij->i", step, pref)
        self._last = p.copy()
        pairs = self._cKDTree(p).query_pairs(r=2.0 * self.radius * (1 - 1e-6))
        self.overlap_episodes += len(pairs - self._pairs_prev)
        self._pairs_prev = pairs
        in_wall = self._wall_distance(p) < self.radius * 0.99
        self.wall_penetrations += int(np.count_nonzero(in_wall & ~self._in_wall_prev))
        self._in_wall_prev = in_wall

    def summary(self) -> dict:
        return {
            "overlap_episodes": int(self.overlap_episodes),
            "wall_penetrations": int(self.wall_penetrations),
            "mean_progress": float(self.progress.mean()),
        }


def run_rvo2(scene: CrowdScene, *, walls: bool = True, steps: int = STEPS, metrics: bool = True) -> dict:
    """Run RVO2 (PyPI pyrvo) on the scene; time ``do_step`` alone (SCENES.md parameters)."""
    import pyrvo

    sim = pyrvo.RVOSimulator(DT, 15.0, 10, 10.0, 10.0, RADIUS, MAX_SPEED)
    for x, y in scene.positions.astype(np.float64):
        sim.add_agent((float(x), float(y)))
    if walls:
        # RVO2 wants obstacles counter-clockwise and enclosing walls clockwise.
        sim.add_obstacle([(float(x), float(y)) for x, y in scene.inner])
        sim.add_obstacle([(float(x), float(y)) for x, y in scene.outer[::-1]])
        sim.process_obstacles()
    n = scene.n
    pos = scene.positions.astype(np.float64)
    tracker = CrowdMetrics(scene) if metrics else None
    if tracker:
        tracker.update(pos)
    times = []
    for _ in range(steps):
        pref = scene.preferred_directions(pos) * MAX_SPEED
        for i in range(n):
            sim.set_agent_pref_velocity(i, (float(pref[i, 0]), float(pref[i, 1])))
        t0 = time.perf_counter()
        sim.do_step()
        times.append(time.perf_counter() - t0)
        for i in range(n):
            v = sim.get_agent_position(i)
            pos[i, 0], pos[i, 1] = v.x, v.y
        if tracker:
            tracker.update(pos)
    out = {"ms_per_step": 1e3 * float(np.mean(times)), "ms_median": 1e3 * float(np.median(times))}
    if tracker:
        out.update(tracker.summary())
    return out


if __name__ == "__main__":
    for n in (1000,):
        sc = crowd_track(n)
        print(n, run_rvo2(sc, walls=True), run_rvo2(sc, walls=False, metrics=False))
