"""Scenes, metrics and system adapters of the crowd-quality benchmark (bench_crowd_quality.py).

Every system walks the same pedestrians (radius 0.3 m, preferred speed 1.3 m/s, dt 1/30 s)
through the same scene under the same protocol, and one :class:`Metrics` object measures
every system from the positions after each step. See bench_crowd_quality.py for the
protocol and the metric definitions.

A system adapter has four methods, called by :func:`run` in this order each step:

- ``set_targets(targets)``: (N, 2) float64 current waypoint of every agent (rows of
  retired agents are ignored); outside the timer;
- ``step()``: one time step of the system's own simulation; the only timed call;
- ``positions()``: (N, 2) float64 positions after the step (rows of retired agents are
  unspecified);
- ``retire(ids)``: removes the agents ``ids`` (int array), which reached their goals.

contextsteer adapters also count ``pre_push``: overlapping pairs right after the move,
before push-apart resolves them, summed over steps.

The builders in :data:`SYSTEMS` import their peer lazily and raise :class:`Unavailable`
when it cannot run here, so the benchmark can print a note and go on.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

RADIUS = 0.3
"""Agent radius (m)."""
SPEED = 1.3
"""Preferred and maximum speed (m/s)."""
DT = 1.0 / 30.0
"""Time step (s)."""
GOAL_RADIUS = 0.5
"""An agent retires the first time its centre is within this distance of its goal (m)."""
GATE_OFFSET = 1.0
"""Distance of a gate waypoint beyond the gap centre, on the goal's side (m)."""
GATE_PASSED = 0.5
"""An agent has passed a gate once it is this far beyond the wall, on the goal's side (m)."""
OVERLAP_TOLERANCE = 1e-4
"""Centres closer than r_i + r_j - 0.1 mm overlap; touching within float32 rounding of the
positions (0.6 m apart at ~1e-6 m resolution) is not an overlap."""
JITTER_MIN_SPEED = 0.05
"""Steps at or below this speed (m/s) are left out of the heading jitter."""

CS_MARGIN = 0.05
"""The clearance (m) that ``cs.scenarios.crowd_steering``'s ``CollisionDanger`` adds to
r_i + r_j (a test checks they agree); ``rvo2-margin`` keeps it between its agents by
planning with radius RADIUS + CS_MARGIN / 2."""

# RVO2 and navground ORCA parameters for pedestrians.
NEIGHBOR_DIST = 5.0
MAX_NEIGHBORS = 10
TIME_HORIZON = 2.0
TIME_HORIZON_OBST = 2.0


class Unavailable(RuntimeError):
    """A system cannot run here (its package is missing or its API is not there yet)."""


@dataclass(frozen=True)
class Options:
    """Run options shared by the builders.

    Attributes
    ----------
    velocity_accel : float
        Max acceleration of the cs-velocity agents (m/s²), and of ``rvo2-accel``'s.
    resolve : bool
        Keep contextsteer's push-apart after the move (the library's default). False
        turns it off, so that every system is measured on its steering alone.
    navground_resolve : bool
        Turn navground's world collision resolution on (its default; off here). It zeroes
        the velocities its ORCA plans from, and the same ORCA as RVO2's then jams: hallway
        seed 0, 6,754 contact episodes and nobody home with it, 111 and everyone home
        without (RVO2: 138, everyone home).
    slots : int
        Slots per agent of the contextsteer systems.
    rvo2_margin : float
        The clearance (m) ``rvo2-margin`` keeps between two agents (it plans with radius
        RADIUS + rvo2_margin / 2); default :data:`CS_MARGIN`, context steering's own.
    rvo2_ring : int
        Directions of ``rvo2-ring``'s regular ring (turned with each agent's heading).
    jps_substeps : int
        JuPedSim steps each protocol step as this many iterations of DT / jps_substeps
        (its own default step is 0.01 s; 3 gives 1/90 s). Targets and metrics still
        follow the protocol's DT.
    """

    velocity_accel: float = 6.0
    resolve: bool = True
    navground_resolve: bool = False
    slots: int = 16
    rvo2_margin: float = CS_MARGIN
    rvo2_ring: int = 64
    jps_substeps: int = 1


# ====================================================================== scenes ===


@dataclass
class Scene:
    """One benchmark scene.

    Attributes
    ----------
    name : str
    starts, goals : ndarray, shape (N, 2), float64
    walls : ndarray, shape (M, 4), float64
        Wall segments (x0, y0, x1, y1); M may be 0.
    steps : int
        Step limit.
    gate : tuple of float, optional
        ``(x, y)`` centre of the one gap in a wall along x = const, or None. Agents whose
        goal is beyond the wall head for a waypoint ``GATE_OFFSET`` beyond the gap centre
        until they are ``GATE_PASSED`` beyond the wall, then for their own goal.
    """

    name: str
    starts: np.ndarray
    goals: np.ndarray
    walls: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    steps: int = 0
    gate: tuple[float, float] | None = None

    @property
    def n(self) -> int:
        return len(self.starts)

    def gate_side(self) -> np.ndarray:
        """(N,) +1 / -1: the side of the gate wall the goal is on (0 without a gate)."""
        if self.gate is None:
            return np.zeros(self.n)
        return np.sign(self.goals[:, 0] - self.gate[0])

    def targets(self, positions: np.ndarray, passed: np.ndarray) -> np.ndarray:
        """Current waypoint of every agent; updates ``passed`` (sticky) in place.

        Parameters
        ----------
        positions : ndarray, shape (N, 2)
        passed : ndarray of bool, shape (N,)
            Agents that have passed the gate (or need none); set here once they do.

        Returns
        -------
        ndarray, shape (N, 2), float64
        """
        if self.gate is None:
            return self.goals
        gx, gy = self.gate
        side = self.gate_side()
        passed |= side * (positions[:, 0] - gx) > GATE_PASSED
        waypoint = np.c_[gx + side * GATE_OFFSET, np.full(self.n, gy)]
        return np.where(passed[:, None], self.goals, waypoint)

    def path_lengths(self) -> np.ndarray:
        """(N,) length of each agent's unobstructed path (through the gate waypoint)."""
        if self.gate is None:
            return np.linalg.norm(self.goals - self.starts, axis=1)
        side = self.gate_side()
        waypoint = np.c_[self.gate[0] + side * GATE_OFFSET, np.full(self.n, self.gate[1])]
        return np.linalg.norm(waypoint - self.starts, axis=1) + np.linalg.norm(
            self.goals - waypoint, axis=1
        )


def _limit(scene: Scene) -> Scene:
    """Set the step limit: 3x the longest unobstructed path time, at preferred speed."""
    scene.steps = int(math.ceil(3.0 * scene.path_lengths().max() / SPEED / DT))
    return scene


def _min_distance(p: np.ndarray) -> float:
    d = np.linalg.norm(p[:, None] - p[None], axis=2) + np.eye(len(p)) * 1e9
    return float(d.min())


def _spread(draw, spacing: float, low, high, iterations: int = 500, tries: int = 20) -> np.ndarray:
    """Push random points apart to at least ``spacing``, kept inside the box [low, high].

    ``draw()`` gives the random points (from the scene's generator). Jacobi relaxation
    sweeps (each pair moves apart by half its shortfall), clipped to the box after each
    sweep (scenarios._spread without the clipping let hallway starts end up in the walls
    at 40 agents). When the points end up closer than two radii and 5 cm (hallway seed 28:
    a knot the sweeps cannot undo against the box's edge), ``draw()`` is asked again, up
    to ``tries`` times: a seed whose first draw separates gives the same scene as before.
    """
    for _ in range(tries):
        p = np.clip(np.array(draw(), dtype=np.float64), low, high)
        for _ in range(iterations):
            d = p[:, None] - p[None]
            dist = np.linalg.norm(d, axis=2) + np.eye(len(p)) * 1e9
            push = np.clip(spacing - dist, 0, None) / 2
            if not push.any():
                break
            p = np.clip(p + (d / dist[..., None] * push[..., None]).sum(1), low, high)
        if _min_distance(p) >= 2 * RADIUS + 0.05:
            return p
    raise ValueError(f"_spread: could not separate {len(p)} points in the box in {tries} draws")


def circle_scene(n: int) -> Scene:
    """circle-N: N agents evenly on a circle (no jitter) walk to the antipodal point.

    Radius: 1 m of arc per agent, at least 4 m (circle-16: radius 4, 1.57 m apart).
    """
    r = max(4.0, n * 1.0 / (2 * math.pi))
    angle = 2 * np.pi * np.arange(n) / n
    starts = r * np.c_[np.cos(angle), np.sin(angle)]
    return _limit(Scene(f"circle-{n}", starts, -starts))


def hallway_scene(n: int = 40, seed: int = 0, length: float = 24.0, width: float = 4.0) -> Scene:
    """hallway: two-way traffic in a hallway ``length`` long and ``width`` wide (as
    scenarios.hallway): half the agents start in the 4 m at the left end and walk right,
    half the other way, spread 0.7 m apart and 0.1 m clear of the walls; each keeps its
    start's y. Walls: two long segments, 7 m past each end (3 m beyond the farthest start,
    so that nobody jostled past the goals can walk round a wall's end and out)."""
    rng = np.random.default_rng(seed)
    a, b = (n + 1) // 2, n // 2
    h, w = length / 2, width / 2
    walls = np.array([[-h - 7, -w, h + 7, -w], [-h - 7, w, h + 7, w]], dtype=np.float64)
    y_max = w - RADIUS - 0.1
    sa = _spread(
        lambda: np.c_[-h - 4 * rng.uniform(0, 1, a), rng.uniform(-y_max, y_max, a)],
        0.7,
        [-h - 3.7, -y_max],
        [-h + 0.5, y_max],
    )
    sb = _spread(
        lambda: np.c_[h + 4 * rng.uniform(0, 1, b), rng.uniform(-y_max, y_max, b)],
        0.7,
        [h - 0.5, -y_max],
        [h + 3.7, y_max],
    )
    goals = np.vstack([np.c_[np.full(a, h + 2.0), sa[:, 1]], np.c_[np.full(b, -h - 2.0), sb[:, 1]]])
    return _limit(Scene("hallway", np.vstack([sa, sb]), goals, walls))


def crossing_scene(n: int = 40, seed: int = 0, distance: float = 16.0) -> Scene:
    """crossing: two groups of n/2 cross at right angles (as scenarios.crossing): rows of
    two, 1.2 m apart, one group along +x, the other along +y, starts jittered by 5 cm."""
    rng = np.random.default_rng(seed)
    a, b = (n + 1) // 2, n // 2
    h = distance / 2
    sa = np.c_[-h - 1.2 * (np.arange(a) // 2), 0.8 * (np.arange(a) % 2)]
    sb = np.c_[0.8 * (np.arange(b) % 2), -h - 1.2 * (np.arange(b) // 2)]
    starts = np.vstack([sa, sb]) + rng.uniform(-0.05, 0.05, (n, 2))
    goals = np.vstack([sa + [2 * h + 2, 0], sb + [0, 2 * h + 2]])
    return _limit(Scene("crossing", starts, goals))


def _room(x0: float, y0: float, x1: float, y1: float, half_height: float, gap: float) -> np.ndarray:
    """A closed box room with a wall along x = 0 that has a ``gap`` wide opening at y = 0."""
    g = gap / 2
    return np.array(
        [
            [x0, y0, x1, y0],
            [x1, y0, x1, y1],
            [x1, y1, x0, y1],
            [x0, y1, x0, y0],
            [0, -half_height, 0, -g],
            [0, g, 0, half_height],
        ],
        dtype=np.float64,
    )


def bottleneck_scene(n: int = 50, seed: int = 0, gap: float = 1.2) -> Scene:
    """bottleneck: a crowd in a 24 x 12 m room walks to goals beyond a wall with a ``gap``
    wide opening (as scenarios.bottleneck; goals spread 0.8 m apart too)."""
    rng = np.random.default_rng(seed)
    walls = _room(-12, -6, 12, 6, 6.0, gap)
    starts = _spread(
        lambda: np.c_[rng.uniform(-10, -2, n), rng.uniform(-4.5, 4.5, n)],
        0.8,
        [-11.4, -5.4],
        [-1.0, 5.4],
    )
    goals = _spread(
        lambda: np.c_[rng.uniform(6, 10, n), rng.uniform(-4, 4, n)], 0.8, [5.0, -5.0], [11.0, 5.0]
    )
    return _limit(Scene("bottleneck", starts, goals, walls, gate=(0.0, 0.0)))


def doorway_scene(n: int = 20, seed: int = 0, door: float = 1.8) -> Scene:
    """doorway: two groups on either side of a wall swap sides through one ``door`` wide
    doorway in a 20 x 10 m room (as scenarios.doorway); goals mirror the starts."""
    rng = np.random.default_rng(seed)
    a, b = (n + 1) // 2, n // 2
    walls = _room(-10, -5, 10, 5, 5.0, door)
    sa = _spread(
        lambda: np.c_[rng.uniform(-8, -2, a), rng.uniform(-3.5, 3.5, a)],
        0.8,
        [-9.0, -4.0],
        [-1.5, 4.0],
    )
    sb = _spread(
        lambda: np.c_[rng.uniform(2, 8, b), rng.uniform(-3.5, 3.5, b)], 0.8, [1.5, -4.0], [9.0, 4.0]
    )
    starts = np.vstack([sa, sb])
    return _limit(Scene("doorway", starts, starts * [-1, 1], walls, gate=(0.0, 0.0)))


SCENES = {
    "circle-16": lambda seed=0: circle_scene(16),
    "circle-64": lambda seed=0: circle_scene(64),
    "circle-250": lambda seed=0: circle_scene(250),
    "hallway": lambda seed=0: hallway_scene(seed=seed),
    "crossing": lambda seed=0: crossing_scene(seed=seed),
    "bottleneck": lambda seed=0: bottleneck_scene(seed=seed),
    "doorway": lambda seed=0: doorway_scene(seed=seed),
}
"""Scene name -> builder ``(seed=0)`` (the circles have no randomness and ignore it)."""
SEEDED = ("hallway", "crossing", "bottleneck", "doorway")
"""The scenes whose layout depends on the seed (start jitter, spread of the groups)."""


def ttg_vs(row: dict, reference: dict) -> float:
    """How much longer ``row``'s system takes to the goal than ``reference``'s, in percent,
    over the agents that arrived in both runs (the same scene and seeds, so the same
    agents): a mean over only the agents a system gets home flatters a system that
    strands the slow ones. NaN when no agent arrived in both."""
    a, b = row["arrival_s"], reference["arrival_s"]
    both = np.isfinite(a) & np.isfinite(b)
    if not both.any():
        return float("nan")
    return 100.0 * (float(a[both].mean()) / float(b[both].mean()) - 1.0)


def pool(rows: list[dict]) -> dict:
    """One row from runs of the same system on several seeds of a scene: collisions and
    wall penetrations summed, penetration depths the largest, arrivals, time to goal and
    jitter the mean over seeds (time to goal over the seeds where anyone arrived),
    ``arrived_min_pct`` the worst seed, ms/step the median, ``arrival_s`` the agents'
    arrival times one seed after another."""

    def mean(key):
        # .get: rows cached before a metric was added (tune_crowd.py's RVO2 runs) lack it.
        v = [r[key] for r in rows if not math.isnan(r.get(key, math.nan))]
        return float(np.mean(v)) if v else float("nan")

    return {
        "collisions": sum(r["collisions"] for r in rows),
        "max_penetration_m": max(r["max_penetration_m"] for r in rows),
        "max_penetration_pct_r": max(r["max_penetration_pct_r"] for r in rows),
        "wall_penetrations": sum(r["wall_penetrations"] for r in rows),
        "max_wall_penetration_m": max(r["max_wall_penetration_m"] for r in rows),
        "arrived_pct": mean("arrived_pct"),
        "arrived_min_pct": min(r["arrived_pct"] for r in rows),
        "mean_ttg_s": mean("mean_ttg_s"),
        "jitter_deg_per_step": mean("jitter_deg_per_step"),
        "jitter_stops_deg_per_step": mean("jitter_stops_deg_per_step"),
        "turn_deg_per_m": mean("turn_deg_per_m"),
        "ms_per_step": float(np.median([r["ms_per_step"] for r in rows])),
        "pre_push": (None if rows[0]["pre_push"] is None else sum(r["pre_push"] for r in rows)),
        "arrival_s": np.concatenate([r["arrival_s"] for r in rows]),
        "steps": sum(r["steps"] for r in rows),
        "step_limit": rows[0]["step_limit"],
        "agents": rows[0]["agents"],
        "seeds": len(rows),
        "stopped": "; ".join(
            f"seed {k}: {r['stopped']}" for k, r in enumerate(rows) if r.get("stopped")
        ),
    }


# ===================================================================== metrics ===


def wall_distance(p: np.ndarray, walls: np.ndarray) -> np.ndarray:
    """(N,) distance from each point to its nearest wall segment (inf without walls)."""
    if len(walls) == 0:
        return np.full(len(p), np.inf)
    a, b = walls[None, :, :2], walls[None, :, 2:]
    ab = b - a
    t = np.clip(np.sum((p[:, None] - a) * ab, axis=2) / np.sum(ab * ab, axis=2), 0.0, 1.0)
    return np.linalg.norm(a + t[..., None] * ab - p[:, None], axis=2).min(axis=1)


def _wrap(angle: np.ndarray) -> np.ndarray:
    return (angle + np.pi) % (2 * np.pi) - np.pi


def _per_agent_mean(turn: np.ndarray, steps: np.ndarray) -> float:
    """Degrees per step (or per metre, given the length of the counted steps): each
    agent's summed turn over its counted steps (or their length), averaged over the
    agents with any (NaN without)."""
    moved = steps > 0
    return float(np.degrees(np.mean(turn[moved] / steps[moved]))) if moved.any() else float("nan")


class Metrics:
    """Collision, wall and smoothness metrics, accumulated step by step from positions.

    Call :meth:`update` after every step with all N positions and the mask of the agents
    still walking (including those that arrive at this step).
    """

    def __init__(self, scene: Scene):
        from scipy.spatial import cKDTree

        self._tree = cKDTree
        self.walls = scene.walls
        n = scene.n
        self._pairs: set[tuple[int, int]] = set()
        self._in_wall = np.zeros(n, dtype=bool)
        self._last = np.array(scene.starts, dtype=np.float64)
        self._last_step = np.zeros((n, 2))
        self._last_fast = np.zeros(n, dtype=bool)
        self._turn = np.zeros(n)
        self._turn_steps = np.zeros(n, dtype=np.int64)
        # The length walked in the steps the jitter counts: its turning per metre.
        self._turn_length = np.zeros(n)
        # Across stops: the heading of each agent's last fast step, however long ago.
        self._fast_heading = np.full(n, np.nan)
        self._stop_turn = np.zeros(n)
        self._stop_steps = np.zeros(n, dtype=np.int64)
        self.collisions = 0
        self.max_penetration = 0.0
        self.wall_penetrations = 0
        self.max_wall_penetration = 0.0

    def update(self, positions: np.ndarray, active: np.ndarray) -> None:
        """Add one step: ``positions`` (N, 2) after it, ``active`` (N,) bool."""
        ids = np.flatnonzero(active)
        p = np.asarray(positions, dtype=np.float64)[ids]
        contact = 2 * RADIUS - OVERLAP_TOLERANCE
        local = self._tree(p).query_pairs(r=contact, output_type="ndarray")
        if len(local):
            gap = np.linalg.norm(p[local[:, 0]] - p[local[:, 1]], axis=1)
            local = local[gap < contact]  # closer than: a pair exactly at it does not count
            gap = gap[gap < contact]
        if len(local):
            self.max_penetration = max(self.max_penetration, float((2 * RADIUS - gap).max()))
        pairs = {(int(i), int(j)) for i, j in ids[local]} if len(local) else set()
        self.collisions += len(pairs - self._pairs)
        self._pairs = pairs

        dist = wall_distance(p, self.walls)
        self.max_wall_penetration = max(
            self.max_wall_penetration, float(np.max(RADIUS - dist, initial=0.0))
        )
        in_wall = np.zeros_like(self._in_wall)
        in_wall[ids] = dist < RADIUS * 0.99
        self.wall_penetrations += int(np.count_nonzero(in_wall & ~self._in_wall))
        self._in_wall = in_wall

        step = p - self._last[ids]
        fast = np.linalg.norm(step, axis=1) > JITTER_MIN_SPEED * DT
        both = fast & self._last_fast[ids]
        prev = self._last_step[ids]
        turn = np.abs(
            _wrap(np.arctan2(step[:, 1], step[:, 0]) - np.arctan2(prev[:, 1], prev[:, 0]))
        )
        self._turn[ids[both]] += turn[both]
        self._turn_steps[ids[both]] += 1
        self._turn_length[ids[both]] += np.linalg.norm(step[both], axis=1)
        # The same turn between consecutive fast steps with slow steps between them: an
        # agent that stops and sets off in a new direction turned, though no two
        # consecutive steps show it.
        heading = np.arctan2(step[:, 1], step[:, 0])
        before = self._fast_heading[ids]
        seen = fast & np.isfinite(before)
        self._stop_turn[ids[seen]] += np.abs(_wrap(heading[seen] - before[seen]))
        self._stop_steps[ids[seen]] += 1
        self._fast_heading[ids[fast]] = heading[fast]
        self._last[ids], self._last_step[ids], self._last_fast[ids] = p, step, fast

    def summary(self) -> dict:
        """Collisions, max penetration (m, % of radius), wall metrics, jitter (deg/step)."""
        jitter = _per_agent_mean(self._turn, self._turn_steps)
        jitter_stops = _per_agent_mean(self._stop_turn, self._stop_steps)
        per_metre = _per_agent_mean(self._turn, self._turn_length)
        return {
            "collisions": self.collisions,
            "max_penetration_m": self.max_penetration,
            "max_penetration_pct_r": 100.0 * self.max_penetration / RADIUS,
            "wall_penetrations": self.wall_penetrations,
            "max_wall_penetration_m": self.max_wall_penetration,
            "jitter_deg_per_step": jitter,
            "jitter_stops_deg_per_step": jitter_stops,
            "turn_deg_per_m": per_metre,
        }


def run(system, scene: Scene, steps: int | None = None, adjust=None) -> dict:
    """Run ``system`` on ``scene`` under the protocol; returns the row's figures (with
    ``arrival_s``: each agent's arrival time in s, NaN where it did not arrive, and
    ``stopped``: "" or why the system ended the run early, when its step raised a
    ``RuntimeError``; the agents not home by then count as not arrived).

    Parameters
    ----------
    system : adapter
        Built for ``scene`` (see the module docstring).
    scene : Scene
    steps : int, optional
        Step limit; default ``scene.steps``.
    adjust : callable, optional
        ``adjust(positions, targets, active) -> targets``, called before every step
        with the scene's targets for it (``benchmarks/standoff.py`` moves some); the
        benchmark itself gives none.
    """
    steps = scene.steps if steps is None else steps
    active = np.ones(scene.n, dtype=bool)
    passed = scene.gate_side() == 0
    arrival = np.full(scene.n, np.nan)
    metrics = Metrics(scene)
    times = []
    pos = np.array(scene.starts, dtype=np.float64)
    done_steps = 0
    stopped = ""
    for done_steps in range(1, steps + 1):
        targets = scene.targets(pos, passed)
        system.set_targets(targets if adjust is None else adjust(pos, targets, active))
        t0 = time.perf_counter()
        try:
            system.step()
        except RuntimeError as e:  # JuPedSim: a model pushed an agent off its area
            stopped = f"{type(e).__name__} at {(done_steps - 1) * DT:.1f} s: {e}"
            done_steps -= 1
            break
        times.append(time.perf_counter() - t0)
        pos = system.positions()
        metrics.update(pos, active)
        arrived = active & (np.linalg.norm(pos - scene.goals, axis=1) < GOAL_RADIUS)
        if arrived.any():
            arrival[arrived] = done_steps * DT
            active &= ~arrived
            system.retire(np.flatnonzero(arrived))
        if not active.any():
            break
    reached = np.isfinite(arrival)
    return {
        **metrics.summary(),
        "arrived_pct": 100.0 * float(reached.mean()),
        "mean_ttg_s": float(arrival[reached].mean()) if reached.any() else float("nan"),
        "ms_per_step": 1e3 * float(np.median(times)) if times else float("nan"),
        "pre_push": getattr(system, "pre_push", None),
        "arrival_s": arrival,
        "steps": done_steps,
        "stopped": stopped,
        "step_limit": steps,
        "agents": scene.n,
    }


# ==================================================================== adapters ===


def _headings(scene: Scene) -> np.ndarray:
    d = scene.targets(scene.starts, scene.gate_side() == 0) - scene.starts
    return np.arctan2(d[:, 1], d[:, 0])


SNAP_LEVELS = SPEED * np.arange(5) / 4.0
"""``rvo2-slots``' speeds: standing and the four levels of ``CollisionDanger(speeds=4)``."""


def snap_velocity(
    v: np.ndarray, heading: float, angles: np.ndarray, levels: np.ndarray | None
) -> np.ndarray:
    """The candidate velocity nearest ``v`` (Euclidean, in velocity space).

    The candidates are the directions ``heading + angles`` (radians) at each speed of
    ``levels``; with ``levels=None`` the speed stays ``|v|`` and only the direction is
    snapped (to the direction nearest v's, the first on a tie). A standing candidate
    (speed 0) has no direction. On a tie the first candidate in (level, angle) order wins.
    """
    v = np.asarray(v, dtype=np.float64)
    a = heading + np.asarray(angles, dtype=np.float64)
    units = np.c_[np.cos(a), np.sin(a)]
    if levels is None:
        return units[int(np.argmax(units @ v))] * float(np.hypot(v[0], v[1]))
    cand = (np.asarray(levels, dtype=np.float64)[:, None, None] * units[None]).reshape(-1, 2)
    return cand[int(np.argmin(np.sum((cand - v) ** 2, axis=1)))]


class RVO2:
    """RVO2 2.0 through PyPI ``pyrvo``: ORCA with the pedestrian parameters above.

    Walls: each segment a 2-vertex obstacle (RVO2 treats it as a two-sided segment).
    Preferred velocity: towards the waypoint at SPEED, or distance/dt when closer.
    Retired agents are moved to (1e5 + 10 i, 1e5), out of everyone's neighbour range,
    with zero preferred velocity (RVO2 cannot remove agents).

    ``margin`` (m) is the clearance RVO2 keeps between two agents, as ``CollisionDanger``'s
    ``margin`` is added to r_i + r_j: RVO2 plans with radius RADIUS + margin / 2 (the
    metrics keep RADIUS), so that r_i + r_j grows by exactly ``margin``; a wall then gets
    margin / 2. ``rvo2-margin`` is RVO2 given the clearance context steering keeps
    between agents (:data:`CS_MARGIN`).

    ``max_accel`` (m/s², None: unlimited, RVO2's own motion) moves the agents as
    contextsteer's ``Accel`` moves cs-velocity's: after each ``do_step`` the change of
    velocity is capped at ``max_accel·dt`` in norm and the speed at SPEED, and the agent
    is placed at its old position plus that velocity times dt, with that velocity (which
    the next step's ORCA lines start from). ORCA still chooses its velocity freely; only
    the motion lags behind it. ``rvo2-accel`` is RVO2 with cs-velocity's acceleration.

    ``snap=(angles, levels)`` (needs ``max_accel``) replaces ORCA's velocity, before that
    cap, by the candidate nearest it (:func:`snap_velocity`): the directions ``angles``
    (radians) from the agent's heading (the direction of the velocity it moves at, kept
    while it stands; at first, facing its first waypoint), at the speeds ``levels`` (None:
    ORCA's own speed). ORCA's decision then passes through a sampled candidate set, as
    context steering's does. ``rvo2-slots`` uses ``crowd_slots()``' 16 directions and
    :data:`SNAP_LEVELS`; ``rvo2-ring`` a regular ring of ``Options.rvo2_ring`` directions
    and ORCA's speed. ``command`` holds the snapped velocities of the last step.
    """

    def __init__(
        self,
        scene: Scene,
        margin: float = 0.0,
        max_accel: float | None = None,
        snap: tuple[np.ndarray, np.ndarray | None] | None = None,
    ):
        try:
            import pyrvo
        except ImportError as e:
            raise Unavailable(f"pyrvo not importable ({e})") from None
        if not margin >= 0.0:
            raise ValueError(f"margin must be a number >= 0 (m), got {margin!r}")
        if max_accel is not None and not (max_accel > 0.0 and math.isfinite(max_accel)):
            raise ValueError(f"max_accel must be a finite number > 0 (m/s²), got {max_accel!r}")
        if snap is not None and max_accel is None:
            raise ValueError("snap needs max_accel (the snapped command is followed under it)")
        self.max_accel = max_accel
        self.snap = snap
        self.sim = pyrvo.RVOSimulator(
            DT,
            NEIGHBOR_DIST,
            MAX_NEIGHBORS,
            TIME_HORIZON,
            TIME_HORIZON_OBST,
            RADIUS + 0.5 * margin,
            SPEED,
        )
        for x, y in scene.starts:
            self.sim.add_agent((float(x), float(y)))
        for x0, y0, x1, y1 in scene.walls:
            self.sim.add_obstacle([(float(x0), float(y0)), (float(x1), float(y1))])
        if len(scene.walls):
            self.sim.process_obstacles()
        self.active = np.ones(scene.n, dtype=bool)
        self.pos = np.array(scene.starts, dtype=np.float64)
        self.vel = np.zeros_like(self.pos)  # with max_accel: the velocities the agents move at
        self.heading = _headings(scene)  # with snap: the frame of each agent's candidates
        self.command = np.zeros_like(self.pos)  # with snap: the last step's snapped velocities

    def set_targets(self, targets: np.ndarray) -> None:
        d = targets - self.pos
        dist = np.linalg.norm(d, axis=1, keepdims=True)
        v = d / np.maximum(dist, 1e-12) * np.minimum(SPEED, dist / DT)
        for i in np.flatnonzero(self.active):
            self.sim.set_agent_pref_velocity(int(i), (float(v[i, 0]), float(v[i, 1])))

    def step(self) -> None:
        if self.max_accel is None:
            self.sim.do_step()
            return
        ids = [int(i) for i in np.flatnonzero(self.active)]
        before = [self.sim.get_agent_position(i) for i in ids]
        self.sim.do_step()
        dv_max = self.max_accel * DT
        for i, p in zip(ids, before):
            v = self.sim.get_agent_velocity(i)
            c = np.array([v.x, v.y])
            if self.snap is not None:
                c = snap_velocity(c, float(self.heading[i]), *self.snap)
                self.command[i] = c
            dv = c - self.vel[i]
            n = float(np.hypot(dv[0], dv[1]))
            if n > dv_max:
                dv *= dv_max / n
            w = self.vel[i] + dv
            speed = float(np.hypot(w[0], w[1]))
            if speed > SPEED:
                w *= SPEED / speed
            self.vel[i] = w
            if self.snap is not None and speed > 1e-6:  # as Accel: slower has no direction
                self.heading[i] = math.atan2(w[1], w[0])
            self.sim.set_agent_velocity(i, (float(w[0]), float(w[1])))
            self.sim.set_agent_position(i, (p.x + float(w[0]) * DT, p.y + float(w[1]) * DT))

    def positions(self) -> np.ndarray:
        for i in np.flatnonzero(self.active):
            v = self.sim.get_agent_position(int(i))
            self.pos[i] = v.x, v.y
        return self.pos

    def retire(self, ids: np.ndarray) -> None:
        for i in ids:
            i = int(i)
            self.sim.set_agent_position(i, (1e5 + 10.0 * i, 1e5))
            self.sim.set_agent_velocity(i, (0.0, 0.0))
            self.sim.set_agent_pref_velocity(i, (0.0, 0.0))
        self.active[ids] = False
        self.vel[ids] = 0.0


class Navground:
    """navground (PyPI ``navground``) simulation with its ORCA or HL behaviour.

    Each agent: radius RADIUS, omnidirectional kinematics with max speed SPEED, optimal
    speed SPEED, a Bounded state estimation (neighbours within NEIGHBOR_DIST, every wall
    as a line obstacle). ORCA: time_horizon = static_time_horizon = TIME_HORIZON,
    max_neighbors MAX_NEIGHBORS, horizon NEIGHBOR_DIST / 2 (its neighbour range is twice
    the horizon). HL: horizon SPEED·TIME_HORIZON = 2.6 m (HL's horizon is a distance),
    other properties at their defaults (tau 0.125 s, eta 0.5 s, aperture π, resolution
    101). Registered properties are set with ``Behavior.set(name, value)``: assigning an
    unknown attribute name (``b.max_neighbors = 10``) silently adds a Python attribute.
    ``resolve``: the world's own collision resolution (navground's default, on: after
    each update, overlapping agents are pushed apart and out of walls and lose their
    velocity into each other). The benchmark turns it off unless
    ``Options.navground_resolve``: the lost velocities are what its ORCA plans from next,
    and the same ORCA as RVO2's then jams. Targets: ``Target.Point`` at the waypoint, set when it
    changes. Retired agents are moved to (1e5 + 10 i, 1e5) with a Stop target
    (navground.sim has no agent removal; ``Agent.enabled`` is not read by the world).
    """

    def __init__(self, scene: Scene, behavior: str, resolve: bool):
        try:
            from navground import core, sim
            from navground.core import behaviors, kinematics
            from navground.sim import state_estimations
        except ImportError as e:
            raise Unavailable(f"navground not importable ({e})") from None
        self._core = core
        self.world = sim.World()
        self.world.ignore_collisions = not resolve
        for x0, y0, x1, y1 in scene.walls:
            self.world.add_wall(sim.Wall((x0, y0), (x1, y1)))
        self.agents = []
        for (x, y), heading in zip(scene.starts, _headings(scene)):
            kin = kinematics.OmnidirectionalKinematics(max_speed=SPEED)
            if behavior == "ORCA":
                b = behaviors.ORCABehavior(kinematics=kin, radius=RADIUS)
                b.set("time_horizon", TIME_HORIZON)
                b.set("static_time_horizon", TIME_HORIZON_OBST)
                b.set("max_neighbors", MAX_NEIGHBORS)
                b.horizon = NEIGHBOR_DIST / 2  # ORCA's neighbour range is 2·horizon
            else:
                b = behaviors.HLBehavior(kinematics=kin, radius=RADIUS)
                b.horizon = SPEED * TIME_HORIZON
            b.optimal_speed = SPEED
            agent = sim.Agent(
                radius=RADIUS,
                behavior=b,
                kinematics=kin,
                state_estimations=[state_estimations.BoundedStateEstimation(range=NEIGHBOR_DIST)],
            )
            agent.position = (x, y)
            agent.orientation = heading
            self.world.add_agent(agent)
            self.agents.append(agent)
        self.active = np.ones(scene.n, dtype=bool)
        self.pos = np.array(scene.starts, dtype=np.float64)
        self._targets = np.full((scene.n, 2), np.nan)

    def set_targets(self, targets: np.ndarray) -> None:
        changed = self.active & np.any(targets != self._targets, axis=1)
        for i in np.flatnonzero(changed):
            self.agents[i].behavior.target = self._core.Target.Point(targets[i])
        self._targets[changed] = targets[changed]

    def step(self) -> None:
        self.world.update(DT)

    def positions(self) -> np.ndarray:
        for i in np.flatnonzero(self.active):
            self.pos[i] = self.agents[i].position
        return self.pos

    def retire(self, ids: np.ndarray) -> None:
        for i in ids:
            agent = self.agents[int(i)]
            agent.behavior.target = self._core.Target.Stop()
            agent.position = (1e5 + 10.0 * int(i), 1e5)
            agent.velocity = (0.0, 0.0)
        self.active[ids] = False


def walkable_area(scene: Scene, margin: float = 3.0, thickness: float = 0.01):
    """JuPedSim's walkable area: a box around every start and goal (``margin`` beyond)
    minus each wall segment as a ``thickness`` wide strip with flat ends (square ends
    reached ``thickness / 2`` past each wall end and narrowed a 1.2 m gap to 1.19 m;
    walls that meet still close: their strips overlap at the shared end); the part
    holding the starts."""
    import shapely

    pts = np.vstack([scene.starts, scene.goals, scene.walls.reshape(-1, 2)])
    lo, hi = pts.min(axis=0) - margin, pts.max(axis=0) + margin
    area = shapely.box(lo[0], lo[1], hi[0], hi[1])
    if len(scene.walls):
        strips = [
            shapely.LineString([(x0, y0), (x1, y1)]).buffer(thickness / 2, cap_style="flat")
            for x0, y0, x1, y1 in scene.walls
        ]
        area = area.difference(shapely.union_all(strips))
    parts = getattr(area, "geoms", [area])
    inside = shapely.Point(scene.starts[0])
    return next(part for part in parts if part.contains(inside))


JPS_MODELS = {
    "cfsm": ("CollisionFreeSpeedModel", "CollisionFreeSpeedModelAgentParameters"),
    "cfsm-v2": ("CollisionFreeSpeedModelV2", "CollisionFreeSpeedModelV2AgentParameters"),
    "cfsm-v3": ("CollisionFreeSpeedModelV3", "CollisionFreeSpeedModelV3AgentParameters"),
    "avm": ("AnticipationVelocityModel", "AnticipationVelocityModelAgentParameters"),
    "sfm": ("SocialForceModel", "SocialForceModelAgentParameters"),
    "gcfm": ("GeneralizedCentrifugalForceModel", "GeneralizedCentrifugalForceModelAgentParameters"),
    "warp": ("WarpDriverModel", "WarpDriverModelAgentParameters"),
}
"""JuPedSim 1.4's models by short name: (model class, agent parameter class)."""


def jps_body(model: str, radius: float) -> dict:
    """A JuPedSim model's agent parameters for a disc of ``radius``: ``radius`` itself,
    except the generalized centrifugal force model (``gcfm``), whose body is an ellipse
    with semi-axes a = a_min + a_v v along the motion and b from b_max (at rest) to b_min
    (at the desired speed) across it; a_min = b_min = b_max = radius and a_v = 0 make it
    that disc at every speed (its defaults, 0.2 m by 0.2-0.4 m growing with speed, would
    not be the body the metrics measure)."""
    if model == "gcfm":
        return {"a_min": radius, "b_min": radius, "b_max": radius, "a_v": 0.0}
    return {"radius": radius}


def jps_model(model: str, **params):
    """JuPedSim's ``model`` (a key of :data:`JPS_MODELS`) with ``params`` replacing its
    defaults."""
    import jupedsim as jps

    return getattr(jps, JPS_MODELS[model][0])(**params)


def jps_agent(model: str, radius: float, **fields):
    """An agent of JuPedSim's ``model``: the disc of :func:`jps_body` and ``fields``
    (position, journey, stage, speed, ...; they win over the body's)."""
    import jupedsim as jps

    return getattr(jps, JPS_MODELS[model][1])(**{**jps_body(model, radius), **fields})


class JuPedSim:
    """JuPedSim (PyPI ``jupedsim``) with one of its models (:data:`JPS_MODELS`; default
    the first CollisionFreeSpeedModel).

    Model parameters at their defaults (for ``cfsm``: neighbour repulsion strength 8,
    range 0.1; geometry repulsion strength 5, range 0.02; time gap 1 s); agents: the
    body of :func:`jps_body` for RADIUS, desired speed SPEED. Geometry:
    :func:`walkable_area`. Every agent is in one journey of a single direct-steering
    stage, so its target is set each step to the protocol's waypoint (this bypasses
    JuPedSim's routing: it steers locally like every other system). Retired agents are
    removed (``mark_agent_for_removal``, done at the start of the next iteration).
    JuPedSim raises ``RuntimeError`` when a model pushes an agent off the walkable area;
    :func:`run` then ends the run there (``stopped``). ``substeps``: iterations of
    DT / substeps per protocol step.
    """

    def __init__(self, scene: Scene, model: str = "cfsm", substeps: int = 1):
        try:
            import jupedsim as jps
        except ImportError as e:
            raise Unavailable(f"jupedsim not importable ({e})") from None
        if substeps < 1:
            raise ValueError(f"substeps must be >= 1, got {substeps}")
        self.substeps = substeps
        self.sim = jps.Simulation(
            model=jps_model(model), geometry=walkable_area(scene), dt=DT / substeps
        )
        stage = self.sim.add_direct_steering_stage()
        journey = self.sim.add_journey(jps.JourneyDescription([stage]))
        self.ids = [
            self.sim.add_agent(
                jps_agent(
                    model,
                    RADIUS,
                    position=(float(x), float(y)),
                    journey_id=journey,
                    stage_id=stage,
                    desired_speed=SPEED,
                )
            )
            for x, y in scene.starts
        ]
        self.index = {agent_id: i for i, agent_id in enumerate(self.ids)}
        self.active = np.ones(scene.n, dtype=bool)
        self.pos = np.array(scene.starts, dtype=np.float64)
        self._targets = np.full((scene.n, 2), np.nan)

    def set_targets(self, targets: np.ndarray) -> None:
        changed = self.active & np.any(targets != self._targets, axis=1)
        for i in np.flatnonzero(changed):
            self.sim.agent(self.ids[i]).target = (float(targets[i, 0]), float(targets[i, 1]))
        self._targets[changed] = targets[changed]

    def step(self) -> None:
        self.sim.iterate(self.substeps)

    def positions(self) -> np.ndarray:
        for agent in self.sim.agents():
            self.pos[self.index[agent.id]] = agent.position
        return self.pos

    def retire(self, ids: np.ndarray) -> None:
        for i in ids:
            self.sim.mark_agent_for_removal(self.ids[int(i)])
        self.active[ids] = False


# ---------------------------------------------------------------- contextsteer ---


def classic_crowd():
    """The classic (gdx-ai) crowd stack of notebooks/06_classic_vs_context.ipynb."""
    from contextsteer import classic

    return classic.Priority(
        [
            classic.RaycastObstacleAvoidance(
                "whiskers",
                length=1.2,
                whisker_length=0.8,
                whisker_angle=0.7,
                distance_from_boundary=0.6,
            ),
            classic.CollisionAvoidance(radius=2.0),
            classic.Blended(
                [
                    (classic.Separation(radius=0.9, decay=0.2), 1.0),
                    (classic.Arrive(slowing_radius=1.0), 1.0),
                ]
            ),
        ]
    )


def contextsteer_legacy_steering(has_walls: bool):
    """Context steering with today's AgentDanger: scenarios._crowd's configuration."""
    import contextsteer as cs

    rules = [cs.Seek(), cs.AgentDanger(radius=1.0, predictive=True, horizon=1.5)]
    if has_walls:
        rules.append(cs.WallDanger(look_ahead=1.0, falloff="linear"))
    return cs.Steering(rules, combine="max", resolve="subtract", choose="weighted_neighbours")


def contextsteer_velocity_steering(has_walls: bool, preset: str = "default"):
    """Context steering with velocity-space danger: the crowd scenarios' configuration,
    ``contextsteer.scenarios.crowd_steering`` (Arrive, slowing within 1 m of the goal as
    the scenarios' agents do; the protocol retires them at 0.5 m). ``preset``:
    ``"default"`` (its tuned options, ``scenarios.CROWD``), ``"smooth"`` (its
    ``smooth=True`` preset, ``scenarios.SMOOTH_CROWD``), ``"plain"`` (``options={}``:
    CollisionDanger without the refinements, the default before ``CROWD``) or
    ``"counterflow"`` (``scenarios.CROWD_COUNTERFLOW``: ``CROWD`` itself since the jam
    horizon joined the default, in the same phases).

    Raises
    ------
    Unavailable
        If this contextsteer build has no ``CollisionDanger``.
    """
    import contextsteer as cs

    if not hasattr(cs, "CollisionDanger"):
        raise Unavailable("contextsteer has no CollisionDanger")
    if preset == "smooth" and not hasattr(cs.scenarios, "SMOOTH_CROWD"):
        raise Unavailable("contextsteer has no crowd_steering(smooth=True)")
    if preset == "plain" and not hasattr(cs.scenarios, "CROWD"):
        raise Unavailable("contextsteer has no crowd_steering(options=)")
    if preset == "counterflow" and not hasattr(cs.scenarios, "CROWD_COUNTERFLOW"):
        raise Unavailable("contextsteer has no scenarios.CROWD_COUNTERFLOW")
    options = {"plain": {}, "counterflow": getattr(cs.scenarios, "CROWD_COUNTERFLOW", None)}.get(
        preset
    )
    return cs.scenarios.crowd_steering(walls=has_walls, smooth=preset == "smooth", options=options)


def chord_steering(scene: Scene):
    """cs-chord's steering: ``crowd_steering(shape="chord", changes=scenarios.CHORD_CROWD)``,
    the chord interest with the options found for it, in the default's 16 phases.

    Raises
    ------
    Unavailable
        If this contextsteer build has no chord shape.
    """
    import contextsteer as cs

    if not hasattr(cs.scenarios, "CHORD_CROWD"):
        raise Unavailable("contextsteer has no scenarios.CHORD_CROWD")
    return cs.scenarios.crowd_steering(
        walls=len(scene.walls) > 0, shape="chord", changes=cs.scenarios.CHORD_CROWD
    )


LATERAL_COST = 0.6
"""cs-lateral's ``CollisionDanger(lateral_cost=)``, over ``scenarios.CROWD``."""


def lateral_steering(scene: Scene):
    """cs-lateral's steering: ``crowd_steering(changes={"lateral_cost": LATERAL_COST})``,
    the default with speed across a blocked way charged (opt-in; docs/crowd.md, "Speed
    across a blocked way costs").

    Raises
    ------
    Unavailable
        If this contextsteer build's CollisionDanger has no ``lateral_cost``.
    """
    import contextsteer as cs

    if not hasattr(cs.CollisionDanger(), "lateral_cost"):
        raise Unavailable("contextsteer's CollisionDanger has no lateral_cost")
    return cs.scenarios.crowd_steering(
        walls=len(scene.walls) > 0, changes={"lateral_cost": LATERAL_COST}
    )


class ContextSteer:
    """A contextsteer Simulation (``slots`` slots, 16 by default, or the directions of
    ``slot_set``; ``Accel`` motion) with the given steering; agents of radius RADIUS, max
    speed SPEED and ``max_accel``, facing their first waypoint, targets written into
    ``agents.target`` each step, retired agents removed with ``Agents.remove``.
    ``resolve``: push-apart after the move (the library's default, on). The library's
    built-in run metrics are off (they would be timed inside ``step``); ``pre_push``
    counts overlapping pairs right after each move, before
    push-apart (pair-steps, from ``Simulation.overlaps``)."""

    def __init__(
        self,
        scene: Scene,
        steering,
        max_accel: float,
        resolve: bool,
        slots: int = 16,
        slot_set=None,
        validity: float | None = None,
    ):
        try:
            import contextsteer as cs
        except ImportError as e:
            raise Unavailable(f"contextsteer not importable ({e})") from None
        world = None
        if len(scene.walls):
            world = cs.World()
            world.add_segments(scene.walls)
        self.agents = cs.Agents(scene.n, slots=slots, seed=0)
        self.agents.add(
            scene.starts,
            heading=_headings(scene),
            radius=RADIUS,
            max_speed=SPEED,
            max_accel=max_accel,
            target=scene.goals,
        )
        self.sim = cs.Simulation(
            world,
            self.agents,
            steering,
            motion=cs.Accel(),
            slots=slots if slot_set is None else slot_set,
            push_apart=resolve,
            decision_validity=validity,
        )
        self.sim.configure_metrics(enabled=False)
        self._overlaps = 0
        self.pre_push = 0

    def set_targets(self, targets: np.ndarray) -> None:
        self.agents.target[...] = targets
        # Simulation.overlaps counts each pair at both agents, summed over steps; read it
        # on both sides of the step so that removed agents' counts do not matter.
        self._overlaps = int(self.sim.overlaps.sum())

    def step(self) -> None:
        self.sim.step(DT)

    def positions(self) -> np.ndarray:
        self.pre_push += (int(self.sim.overlaps.sum()) - self._overlaps) // 2
        return self.agents.position.astype(np.float64)

    def retire(self, ids: np.ndarray) -> None:
        self.agents.remove(ids)


def _cs(scene: Scene, steering, max_accel: float, opt: Options) -> ContextSteer:
    """A ContextSteer adapter with the run options' overlap resolution and slot count."""
    return ContextSteer(scene, steering, max_accel, opt.resolve, opt.slots)


def _velocity(
    scene: Scene, opt: Options, preset: str = "default", steering=None, validity=None
) -> ContextSteer:
    """The cs-velocity adapter (``preset`` "default", "smooth" or "plain"): the preset's
    steering, or ``steering`` in its place (a variant of it), on the slots the crowd
    scenarios give the preset; ``validity``: Lewis's time slicing
    (``Simulation(decision_validity=...)``)."""
    import contextsteer as cs

    if steering is None:
        steering = contextsteer_velocity_steering(len(scene.walls) > 0, preset)
    # The slots the crowd scenarios give this preset (the default configuration with
    # turning slots at K = 16: the set denser ahead; the others the ring).
    slots_for = getattr(cs.scenarios, "crowd_slots_for", None)
    chosen = (
        slots_for(
            opt.slots,
            danger="velocity" if preset in ("default", "counterflow") else preset,
            rotate=getattr(steering, "rotate", False),
        )
        if slots_for
        else opt.slots
    )
    slot_set = None if isinstance(chosen, int) else chosen
    return ContextSteer(
        scene,
        steering,
        opt.velocity_accel,
        opt.resolve,
        opt.slots,
        slot_set=slot_set,
        validity=validity,
    )


def _crowd_slot_angles() -> np.ndarray:
    import contextsteer as cs

    return np.radians(np.asarray(cs.scenarios.CROWD_SLOT_ANGLES, dtype=np.float64))


#: cs-sliced's decision_validity (s): Lewis's time slicing on cs-velocity (docs/crowd.md).
SLICED_VALIDITY = 0.25

SYSTEMS = {
    "rvo2": lambda scene, opt: RVO2(scene),
    "rvo2-margin": lambda scene, opt: RVO2(scene, margin=opt.rvo2_margin),
    "rvo2-accel": lambda scene, opt: RVO2(scene, max_accel=opt.velocity_accel),
    "rvo2-slots": lambda scene, opt: RVO2(
        scene,
        max_accel=opt.velocity_accel,
        # cs-velocity's own slots: crowd_slots()' 16, or the regular ring of --slots
        snap=(
            _crowd_slot_angles()
            if opt.slots == 16
            else 2.0 * np.pi * np.arange(opt.slots) / opt.slots,
            SNAP_LEVELS,
        ),
    ),
    "rvo2-ring": lambda scene, opt: RVO2(
        scene,
        max_accel=opt.velocity_accel,
        snap=(2.0 * np.pi * np.arange(opt.rvo2_ring) / opt.rvo2_ring, None),
    ),
    "navground-orca": lambda scene, opt: Navground(scene, "ORCA", opt.navground_resolve),
    "navground-hl": lambda scene, opt: Navground(scene, "HL", opt.navground_resolve),
    "jupedsim-cfsm": lambda scene, opt: JuPedSim(scene, "cfsm", opt.jps_substeps),
    "jupedsim-sfm": lambda scene, opt: JuPedSim(scene, "sfm", opt.jps_substeps),
    "jupedsim-avm": lambda scene, opt: JuPedSim(scene, "avm", opt.jps_substeps),
    "jupedsim-warp": lambda scene, opt: JuPedSim(scene, "warp", opt.jps_substeps),
    "cs-classic": lambda scene, opt: _cs(scene, classic_crowd(), 3.0, opt),
    "cs-context": lambda scene, opt: _cs(
        scene, contextsteer_legacy_steering(len(scene.walls) > 0), 3.0, opt
    ),
    "cs-velocity": lambda scene, opt: _velocity(scene, opt),
    "cs-sliced": lambda scene, opt: _velocity(scene, opt, validity=SLICED_VALIDITY),
    "cs-smooth": lambda scene, opt: _velocity(scene, opt, "smooth"),
    "cs-plain": lambda scene, opt: _velocity(scene, opt, "plain"),
    "cs-counterflow": lambda scene, opt: _velocity(scene, opt, "counterflow"),
    "cs-chord": lambda scene, opt: _velocity(scene, opt, steering=chord_steering(scene)),
    "cs-lateral": lambda scene, opt: _velocity(scene, opt, steering=lateral_steering(scene)),
}
"""System name -> builder ``(scene, options)``; raises Unavailable when it cannot run."""
