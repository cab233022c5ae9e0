"""Metrics of the "crowd-track-N" scene (SCENES.md) and the RVO2 peer that runs it.

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

import time

import numpy as np

from scenes import CrowdScene, crowd_preferred, crowd_track_scene


class CrowdMetrics:
    """Accumulates overlap episodes, wall penetrations and progress step by step."""

    def __init__(self, scene: CrowdScene):
        from scipy.spatial import cKDTree

        self.scene = scene
        self.radius = scene.radius
        w = scene.walls.astype(np.float64)
        self._a, self._b = w[:, :2], w[:, 2:]
        mid = 0.5 * (self._a + self._b)
        self._half_len = 0.5 * float(np.max(np.linalg.norm(self._b - self._a, axis=1)))
        self._wall_tree = cKDTree(mid)
        self._cKDTree = cKDTree
        self._pairs_prev: set[tuple[int, int]] = set()
        n = len(scene.positions)
        self._in_wall_prev = np.zeros(n, dtype=bool)
        self.overlap_episodes = 0
        self.wall_penetrations = 0
        self.progress = np.zeros(n)
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
        first = self._last is None
        if self._last is not None:
            step = p - self._last
            pref = crowd_preferred(self._last, self.scene.scale).astype(np.float64)
            self.progress += np.einsum("ij,ij->i", step, pref)
        self._last = p.copy()
        pairs = self._cKDTree(p).query_pairs(r=2.0 * self.radius * (1 - 1e-6))
        in_wall = self._wall_distance(p) < self.radius * 0.99
        # The first call sees the scene as built (two pairs of the 10k crowd start
        # overlapping): a baseline, not episodes any system caused.
        if not first:
            self.overlap_episodes += len(pairs - self._pairs_prev)
            self.wall_penetrations += int(np.count_nonzero(in_wall & ~self._in_wall_prev))
        self._pairs_prev = pairs
        self._in_wall_prev = in_wall

    def summary(self) -> dict:
        return {
            "overlap_episodes": int(self.overlap_episodes),
            "wall_penetrations": int(self.wall_penetrations),
            "mean_progress": float(self.progress.mean()),
        }


def rvo2_rings(scene: CrowdScene) -> tuple[np.ndarray, np.ndarray]:
    """Outer and inner ellipse vertex rings (counter-clockwise) from the scene's walls."""
    half = len(scene.walls) // 2
    return scene.walls[:half, :2].astype(np.float64), scene.walls[half:, :2].astype(np.float64)


def make_rvo2(scene: CrowdScene, *, walls: bool = True):
    """An RVO2 simulator (PyPI pyrvo) of the scene with SCENES.md's parameters."""
    import pyrvo

    sim = pyrvo.RVOSimulator(scene.dt, 15.0, 10, 10.0, 10.0, scene.radius, scene.max_speed)
    for x, y in scene.positions.astype(np.float64):
        sim.add_agent((float(x), float(y)))
    if walls:
        outer, inner = rvo2_rings(scene)
        # RVO2 wants obstacles counter-clockwise and enclosing walls clockwise.
        sim.add_obstacle([(float(x), float(y)) for x, y in inner])
        sim.add_obstacle([(float(x), float(y)) for x, y in outer[::-1]])
        sim.process_obstacles()
    return sim


def step_rvo2(
    sim, scene: CrowdScene, steps: int, after_step=None, start: np.ndarray | None = None
) -> list[float]:
    """``steps`` RVO2 steps towards the scene's preferred directions; returns the seconds
    of each ``do_step`` alone (the Python loop that sets preferred velocities and reads
    positions is outside the timer). ``after_step(positions)`` sees each step's result.
    ``start``: the agents' positions now ((N, 2) float64, updated in place), for a
    simulator already stepped; default the scene's start positions."""
    n = len(scene.positions)
    pos = scene.positions.astype(np.float64) if start is None else start
    times = []
    for _ in range(steps):
        pref = crowd_preferred(pos, scene.scale).astype(np.float64) * scene.max_speed
        for i in range(n):
            sim.set_agent_pref_velocity(i, (float(pref[i, 0]), float(pref[i, 1])))
        t0 = time.perf_counter()
        sim.do_step()
        times.append(time.perf_counter() - t0)
        for i in range(n):
            v = sim.get_agent_position(i)
            pos[i, 0], pos[i, 1] = v.x, v.y
        if after_step is not None:
            after_step(pos)
    return times


def run_rvo2(
    scene: CrowdScene, *, walls: bool = True, steps: int | None = None, metrics: bool = True
) -> dict:
    """Run RVO2 (PyPI pyrvo) on the scene; time ``do_step`` alone (SCENES.md parameters)."""
    steps = scene.steps if steps is None else steps
    sim = make_rvo2(scene, walls=walls)
    tracker = CrowdMetrics(scene) if metrics else None
    if tracker:
        tracker.update(scene.positions.astype(np.float64))
    times = step_rvo2(sim, scene, steps, tracker.update if tracker else None)
    out = {"ms_per_step": 1e3 * float(np.mean(times)), "ms_median": 1e3 * float(np.median(times))}
    if tracker:
        out.update(tracker.summary())
    return out


if __name__ == "__main__":
    for n in (1000,):
        sc = crowd_track_scene(n)
        print(n, run_rvo2(sc, walls=True), run_rvo2(sc, walls=False, metrics=False))
