"""Ready-made scenarios: named functions that build a seeded simulation.

A scenario is a function registered with :func:`scenario`; it takes its parameters as
keyword arguments (``agents``, ``slots``, ``seed`` and its own) and returns a ready
simulation. The command line (``contextsteer run NAME``) and the notebooks look them up
by name with :func:`get`; :func:`available` lists them.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Scenario", "available", "crowd_steering", "get", "scenario", "unregister"]


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A registered scenario: its name, a one-line description and its builder.

    Calling it calls the builder, so ``get("racetrack")(agents=8)`` builds a simulation.

    Attributes
    ----------
    name : str
    description : str
        One line, shown by ``contextsteer list``.
    builder : callable
        ``builder(**params)`` returns a simulation.
    steps : int
        Default number of steps of a run (``contextsteer run`` without ``--steps``).
    dt : float
        Time step in seconds.
    report : callable, optional
        ``report(sim)`` returns the scenario's own metrics (a dict) after a run.
    """

    name: str
    description: str
    builder: Callable[..., Any]
    steps: int = 600
    dt: float = 1.0 / 60.0
    report: Callable[[Any], dict] | None = None

    def __call__(self, **params: Any) -> Any:
        return self.builder(**params)

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the keyword parameters the builder takes."""
        sig = inspect.signature(self.builder)
        return tuple(p.name for p in sig.parameters.values()
                     if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))

    def accepts(self, name: str) -> bool:
        """Whether the builder takes a keyword argument ``name`` (or any, via ``**kwargs``)."""
        sig = inspect.signature(self.builder)
        return name in self.parameters or any(
            p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


_REGISTRY: dict[str, Scenario] = {}


def scenario(name: str, *, description: str = "", steps: int = 600, dt: float = 1.0 / 60.0,
             report: Callable[[Any], dict] | None = None
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the scenario ``name``.

    The function is returned unchanged (it stays callable under its own name).

    Parameters
    ----------
    name : str
        Registry key: lower case, no spaces (a command-line word).
    description : str
        One line; defaults to the first line of the function's docstring.
    steps : int
        Default number of steps of a run.
    dt : float
        Time step in seconds.
    report : callable, optional
        ``report(sim)``: the scenario's own metrics after a run (a JSON-able dict).

    Raises
    ------
    ValueError
        If ``name`` is empty, has whitespace or is already registered, or ``steps``/``dt``
        are not positive.

    Examples
    --------
    >>> import contextsteer.scenarios as sc
    >>> @sc.scenario("demo-empty", description="Nothing at all", steps=10)
    ... def demo_empty(*, agents=1, seed=0):
    ...     return None
    >>> "demo-empty" in sc.available(), sc.get("demo-empty").steps
    (True, 10)
    >>> sc.get("demo-empty").accepts("slots")
    False
    >>> sc.unregister("demo-empty")
    """
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"scenario: expected a non-empty name without spaces, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"scenario: {name!r} is already registered")
    if int(steps) <= 0 or not float(dt) > 0:
        raise ValueError(f"scenario {name!r}: steps and dt must be > 0, got {steps}, {dt}")

    def register(builder: Callable[..., Any]) -> Callable[..., Any]:
        doc = (inspect.getdoc(builder) or "").strip().splitlines()
        text = description or (doc[0] if doc else "")
        _REGISTRY[name] = Scenario(name, text, builder, int(steps), float(dt), report)
        return builder

    return register


def unregister(name: str) -> None:
    """Remove a scenario (for tests and interactive experiments); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def available() -> dict[str, str]:
    """Registered scenarios as ``{name: description}``, sorted by name.

    Examples
    --------
    >>> import contextsteer.scenarios as sc
    >>> isinstance(sc.available(), dict)
    True
    """
    return {name: _REGISTRY[name].description for name in sorted(_REGISTRY)}


def get(name: str) -> Scenario:
    """The scenario registered as ``name``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the available scenarios.

    Examples
    --------
    >>> import contextsteer.scenarios as sc
    >>> sc.get("no-such-scenario")
    Traceback (most recent call last):
    ...
    ValueError: unknown scenario 'no-such-scenario'; available: ...
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        names = ", ".join(sorted(_REGISTRY)) or "(none yet)"
        raise ValueError(f"unknown scenario {name!r}; available: {names}") from None


# ================================================================== the scenarios ===
# Each builder returns a seeded Simulation with its metrics configured
# (Simulation.configure_metrics): crowd scenarios measure time to goal (goal radius 0.5 m),
# the racetrack progress, laps and overtakes along its centre line. The common metric set
# (sim.metrics()) is documented in contextsteer.metrics.


def _modules():
    from . import agents, behaviours, motion, path, simulation, steering, world

    return agents, behaviours, motion, path, simulation, steering, world


#: Most agents a built-in scenario accepts (they are demos and test cases, not stress tests;
#: build a Simulation directly for more).
MAX_SCENARIO_AGENTS = 1_000_000


def _count(name: str, value, low: int = 1, high: int = MAX_SCENARIO_AGENTS) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high:,}], got {value!r}")
    return int(value)


# ----------------------------------------------------------------------- racetrack ---

#: Control points of the racetrack's centre line (a closed Catmull-Rom spline): a long
#: straight, a hairpin, an S through the infield and a sweeping last corner.
RACETRACK_CONTROL = np.array(
    [[0, 0], [160, -10], [260, 20], [300, 110], [250, 190], [170, 170], [120, 120],
     [60, 150], [-20, 190], [-90, 150], [-100, 60], [-70, 10]], dtype=np.float64)


def racetrack_geometry(width: float = 26.0):
    """The racetrack's world (inner and outer walls) and centre-line path.

    Returns
    -------
    world : World
    centre : Path
        Closed, counter-clockwise, about 1087 units long.
    """
    _, _, _, path_mod, _, _, world_mod = _modules()
    centre = path_mod.Path(RACETRACK_CONTROL, closed=True, smooth=True, samples_per_segment=12)
    pts = np.asarray(centre.points, dtype=np.float64)
    tangent = np.roll(pts, -1, 0) - np.roll(pts, 1, 0)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.c_[-tangent[:, 1], tangent[:, 0]]
    world = world_mod.World()
    world.add_polyline(pts + normal * width / 2, closed=True)
    world.add_polyline(pts - normal * width / 2, closed=True)
    return world, centre


def racetrack_report(sim) -> dict:
    """Racetrack metrics: laps and lap times per car, the estimated lap time of the field
    (track length / mean progress speed), wall contacts, overtakes, overlaps."""
    m = sim.agent_metrics
    a = np.asarray(sim.agents.alive, dtype=bool)

    def floats(x):
        return [None if not np.isfinite(v) else round(float(v), 3) for v in x]

    walls = m.min_wall_clearance[a]
    # Lap time from the pace so far (track length / mean progress speed): defined before
    # any car has finished a lap, so short tuning runs can minimise it.
    summary = sim.metrics()
    progress = (summary.get("progress") or {}).get("mean")
    length = (summary.get("laps") or {}).get("track_length")
    pace = None
    if progress and length and progress > 0 and summary["time"] > 0:
        pace = round(float(length) * float(summary["time"]) / float(progress), 3)
    return {
        "estimated_lap_time": pace,
        "laps": m.laps[a].tolist(),
        "best_lap_time": floats(m.best_lap_time[a]),
        "last_lap_time": floats(m.last_lap_time[a]),
        "max_speed": floats(np.asarray(sim.agents.max_speed)[a]),
        "wall_contacts": {"episodes": int(m.wall_episodes[a].sum()),
                          "steps": int(m.wall_steps[a].sum()),
                          "min_wall_clearance": floats(walls.min(keepdims=True))[0]
                          if len(walls) else None},
        "overtakes": {"total": int(m.overtakes[a].sum()), "per_car": m.overtakes[a].tolist()},
        "overlaps": {"contact_episodes": int(m.agent_episodes[a].sum()) // 2,
                     "pre_push_overlaps": int(np.asarray(sim.overlaps)[a].sum())},
    }


@scenario("racetrack", steps=1800, dt=1.0 / 30.0, report=racetrack_report,
          description="Godot recipe demo: cars with randomised speeds race laps on a closed "
                      "track (FollowPath + WallDanger + AgentDanger)")
def racetrack(*, agents: int = 12, slots: int = 16, seed: int = 0, width: float = 26.0,
              speed: tuple[float, float] = (40.0, 60.0), look_ahead: float = 22.0,
              steer_force: float = 0.1, falloff: str = "linear"):
    """The Godot recipe's racetrack: ``agents`` cars spread around a closed track.

    Interest: :class:`FollowPath` along the centre line (25 units ahead); danger:
    :class:`WallDanger` (slot rays cast ``look_ahead`` units as circles, one slot of
    spread, ``falloff`` of danger with the hit distance: "linear" by default, "binary" or
    "quadratic") and predictive :class:`AgentDanger`; ``resolve="mask"``,
    ``choose="vector_sum"``, slots turning with the car, ``Lerp`` motion — the recipe's
    choices. Cars of radius 3 get max speeds uniform in ``speed`` (seeded), so fast cars
    catch and overtake slow ones.

    Metrics: the common set with progress, laps (lap times) and overtakes along the centre
    line; :func:`racetrack_report` adds per-car laps and lap times, wall contacts,
    overtakes and overlaps.

    Examples
    --------
    >>> import contextsteer as cs
    >>> sim = cs.scenarios.get("racetrack")(agents=4, seed=1)
    >>> sim.step(1 / 30, steps=30)
    >>> sim.metrics()["collisions"]["agent_wall"]
    0
    """
    agents_mod, beh, motion, _, simulation, steering, _ = _modules()
    n = _count("agents", agents)
    world, centre = racetrack_geometry(width)
    rng = np.random.default_rng(seed)
    length = centre.length
    if n * 8.0 > length:
        raise ValueError(f"agents: at most {int(length // 8)} cars fit on the track, got {n}")
    offset = np.arange(n) * length / n
    lateral = np.where(np.arange(n) % 2, 0.2, -0.2) * width
    p, t = centre.point_at(offset), centre.tangent_at(offset)
    p = p + np.c_[-t[:, 1], t[:, 0]] * lateral[:, None]
    cars = agents_mod.Agents(n, slots=slots, seed=seed)
    lo, hi = speed
    cars.add(p, velocity=t * lo / 4, heading=np.arctan2(t[:, 1], t[:, 0]), radius=3.0,
             max_speed=rng.uniform(lo, hi, n), steer_force=steer_force)
    st = steering.Steering(
        [beh.FollowPath(centre, look_ahead=25.0),
         beh.WallDanger(look_ahead=look_ahead, spread=1, falloff=falloff),
         beh.AgentDanger(radius=8.0, predictive=True, horizon=0.6)],
        combine="max", resolve="mask", threshold=0.3, choose="vector_sum", rotate=True)
    sim = simulation.Simulation(world, cars, st, motion=motion.Lerp(steer_force=steer_force),
                                slots=slots, seed=seed, stuck_distance=3.0, stuck_time=2.0)
    sim.configure_metrics(path=centre, overtakes=True)
    return sim


# --------------------------------------------------------------- crowd test cases ---
# After SteerSuite's test cases: pedestrians of radius 0.3 m walking at about 1.3 m/s to
# goals; a goal is reached within 0.5 m. Steering: Seek the goal (interest), predictive
# AgentDanger and WallDanger (danger), resolve "subtract", choose "weighted_neighbours"
# (Lewis), acceleration-limited motion; stuck = less than 0.1 m in 3 s (before arrival).

GOAL_RADIUS = 0.5


def crowd_report(sim) -> dict:
    """Crowd metrics: arrivals, time to goal and the SteerBench composite score."""
    m = sim.metrics()
    ttg = m.get("time_to_goal") or {}
    return {
        "arrived": ttg.get("arrived"),
        "arrived_fraction": ttg.get("fraction"),
        "mean_time_to_goal": ttg.get("mean"),
        "collisions": m["collisions"],
        "stuck_ever": m["stuck"]["ever"],
        "composite": m["composite"],
    }


def crowd_steering(*, walls: bool = True, arrive: bool = True, extra=(), combine: str = "max"):
    """The crowd scenarios' steering: velocity-space danger (a sampled velocity obstacle).

    Interest: :class:`Arrive` (slowing within 1 m, so agents stop at their goal) or, with
    ``arrive=False``, :class:`Seek` — both with the half-cosine shape, so that every
    slot but straight away ranks; plus ``extra`` interest behaviours. Danger:
    :class:`CollisionDanger` with a 2 s horizon, 4 speeds per slot, a 5 cm margin and,
    when ``walls``, the walls on the same time-to-collision scale. Resolve
    ``"mask_min_danger"`` keeps only the safest slots; choose ``"argmax"`` picks the best
    rate of progress among them. The crowd benchmark (``benchmarks/bench_crowd_quality.py``)
    measures this configuration (``arrive=False``: its agents retire at the goal).

    Examples
    --------
    >>> import contextsteer as cs
    >>> st = cs.scenarios.crowd_steering(walls=False)
    >>> [type(b).__name__ for b in st.behaviours], st.resolve, st.choose
    (['Arrive', 'CollisionDanger'], 'mask_min_danger', 'argmax')
    """
    _, beh, _, _, _, steering, _ = _modules()
    goal = (beh.Arrive(slowing_radius=1.0, shape="half_cosine") if arrive
            else beh.Seek(shape="half_cosine"))
    rules = [goal, *extra, beh.CollisionDanger(horizon=2.0, speeds=4, margin=0.05, walls=walls)]
    return steering.Steering(rules, combine=combine, resolve="mask_min_danger", choose="argmax")


def _crowd(world, starts, goals, *, slots: int, seed: int, radius: float = 0.3,
           speed: float = 1.3, look_ahead: float = 1.0, extra=(), separation: bool = False,
           resolve: str = "subtract", choose: str = "weighted_neighbours",
           danger_radius: float = 1.0, horizon: float = 1.5, combine: str = "max",
           danger: str = "velocity"):
    """A seeded crowd simulation walking from ``starts`` to ``goals``.

    ``danger="velocity"`` (the default): :func:`crowd_steering` (velocity-space danger),
    agents with max_accel 6. ``danger="agent"``: the earlier configuration, Seek +
    predictive AgentDanger + WallDanger with the given ``resolve``/``choose`` (and the
    optional separation), max_accel 3 — kept for comparison (notebooks 05 and 06).
    """
    agents_mod, beh, motion, _, simulation, steering, _ = _modules()
    starts = np.asarray(starts, dtype=np.float64)
    goals = np.asarray(goals, dtype=np.float64)
    n = len(starts)
    rng = np.random.default_rng(seed)
    d = goals - starts
    agents = agents_mod.Agents(n, slots=slots, seed=seed)
    if danger not in ("velocity", "agent"):
        raise ValueError(f"danger must be 'velocity' or 'agent', got {danger!r}")
    agents.add(starts, heading=np.arctan2(d[:, 1], d[:, 0]), radius=radius,
               max_speed=speed * rng.uniform(0.9, 1.1, n),
               max_accel=6.0 if danger == "velocity" else 3.0, target=goals)
    if danger == "velocity":
        st = crowd_steering(walls=world is not None, extra=extra, combine=combine)
    else:
        rules = [beh.Seek(), beh.AgentDanger(radius=danger_radius, predictive=True, horizon=horizon),
                 *extra]
        if world is not None:
            rules.append(beh.WallDanger(look_ahead=look_ahead, falloff="linear"))
        if separation:
            rules.append(beh.Separation(radius=1.0, weight=0.5, groups="all"))
        st = steering.Steering(rules, combine=combine, resolve=resolve, choose=choose)
    sim = simulation.Simulation(world, agents, st, motion=motion.Accel(), slots=slots, seed=seed,
                                stuck_distance=0.1, stuck_time=3.0)
    sim.configure_metrics(goal_radius=GOAL_RADIUS)
    return sim


def _jitter(rng, n, scale):
    return rng.uniform(-scale, scale, (n, 2))


def _two_groups(n: int) -> tuple[int, int]:
    return (n + 1) // 2, n // 2


@scenario("oncoming", steps=900, dt=1.0 / 30.0, report=crowd_report,
          description="SteerSuite: two groups walk head-on into each other in open space")
def oncoming(*, agents: int = 2, slots: int = 16, seed: int = 0, distance: float = 16.0,
               danger: str = "velocity"):
    """Two groups ``distance`` apart walk straight at each other and must pass.

    Metrics: the common set with time to goal (goal radius 0.5); ``crowd_report``.
    """
    n = _count("agents", agents)
    a, b = _two_groups(n)
    rng = np.random.default_rng(seed)
    ya = (np.arange(a) - (a - 1) / 2) * 1.0
    yb = (np.arange(b) - (b - 1) / 2) * 1.0
    left = np.c_[np.full(a, -distance / 2) - 1.0 * (np.arange(a) % 2), ya]
    right = np.c_[np.full(b, distance / 2) + 1.0 * (np.arange(b) % 2), yb]
    starts = np.vstack([left, right]) + _jitter(rng, n, 0.05)
    goals = np.vstack([left * [-1, 1], right * [-1, 1]])
    return _crowd(None, starts, goals, slots=slots, seed=seed, danger=danger)


@scenario("crossing", steps=900, dt=1.0 / 30.0, report=crowd_report,
          description="SteerSuite: two groups cross at right angles")
def crossing(*, agents: int = 2, slots: int = 16, seed: int = 0, distance: float = 16.0,
               danger: str = "velocity"):
    """One group walks along +x, the other along +y; their paths cross at the origin.

    Metrics: the common set with time to goal; ``crowd_report``.
    """
    n = _count("agents", agents)
    a, b = _two_groups(n)
    rng = np.random.default_rng(seed)
    h = distance / 2
    sa = np.c_[-h - 1.2 * (np.arange(a) // 2), 0.8 * (np.arange(a) % 2)]
    sb = np.c_[0.8 * (np.arange(b) % 2), -h - 1.2 * (np.arange(b) // 2)]
    starts = np.vstack([sa, sb]) + _jitter(rng, n, 0.05)
    goals = np.vstack([sa + [2 * h + 2, 0], sb + [0, 2 * h + 2]])
    return _crowd(None, starts, goals, slots=slots, seed=seed, danger=danger)


@scenario("hallway", steps=1200, dt=1.0 / 30.0, report=crowd_report,
          description="SteerSuite: two-way traffic in a hallway")
def hallway(*, agents: int = 20, slots: int = 16, seed: int = 0, length: float = 24.0,
            width: float = 4.0, danger: str = "velocity"):
    """Half the agents walk right, half left, in a hallway ``width`` wide.

    Metrics: the common set with time to goal; ``crowd_report``.
    """
    _, _, _, _, _, _, world_mod = _modules()
    n = _count("agents", agents)
    a, b = _two_groups(n)
    rng = np.random.default_rng(seed)
    h, w = length / 2, width / 2
    world = world_mod.World()
    # The walls run 3 m beyond the farthest start (and so goal), out of reach of anyone
    # standing at a goal.
    world.add_segments([[-h - 7, -w, h + 7, -w], [-h - 7, w, h + 7, w]])
    ya = rng.uniform(-w + 0.5, w - 0.5, a)
    yb = rng.uniform(-w + 0.5, w - 0.5, b)
    xa = -h + 4 * rng.uniform(0, 1, a) - 4
    xb = h - 4 * rng.uniform(0, 1, b) + 4
    starts = np.vstack([np.c_[xa, ya], np.c_[xb, yb]])
    starts = _spread(starts, 0.7)
    # Goals mirror the starts across the hallway's middle, so they are as far apart as the
    # starts: arrived agents stand there, and a row of goals closer than a body width
    # would leave the last arrivals nowhere to stand.
    goals = starts * [-1.0, 1.0]
    return _crowd(world, starts, goals, slots=slots, seed=seed, danger=danger)


def _spread(points: np.ndarray, spacing: float, iterations: int = 50) -> np.ndarray:
    """Push random start points apart to at least ``spacing`` (a few relaxation sweeps)."""
    p = np.array(points, dtype=np.float64)
    for _ in range(iterations):
        d = p[:, None] - p[None]
        dist = np.linalg.norm(d, axis=2) + np.eye(len(p)) * 1e9
        push = np.clip(spacing - dist, 0, None) / 2
        if not push.any():
            break
        p += (d / dist[..., None] * push[..., None]).sum(1)
    return p


def _wall_with_gap(world, x: float, half_height: float, gap: float) -> None:
    g = gap / 2
    world.add_segments([[x, -half_height, x, -g], [x, g, x, half_height]])


@scenario("bottleneck", steps=1500, dt=1.0 / 30.0, report=crowd_report,
          description="SteerSuite: a crowd squeezes through a narrow gap in a wall")
def bottleneck(*, agents: int = 20, slots: int = 16, seed: int = 0, gap: float = 1.4,
                 danger: str = "velocity"):
    """A crowd in a room walks to goals beyond a wall with a ``gap`` wide opening.

    Besides Seek(goal), agents follow a guide path through the gap (FollowPath,
    ``mode="seek"``, weight 0.5): local steering needs a plan to find the opening.
    Metrics: the common set with time to goal; ``crowd_report``.
    """
    _, _, _, _, _, _, world_mod = _modules()
    n = _count("agents", agents)
    rng = np.random.default_rng(seed)
    world = world_mod.World()
    world.add_polyline([[-12, -6], [12, -6], [12, 6], [-12, 6]], closed=True)
    _wall_with_gap(world, 0.0, 6.0, gap)
    starts = _spread(np.c_[rng.uniform(-10, -2, n), rng.uniform(-4.5, 4.5, n)], 0.8)
    starts = np.clip(starts, [-11.4, -5.4], [-1.0, 5.4])
    goals = np.c_[rng.uniform(6, 10, n), rng.uniform(-4, 4, n)]
    # Context steering is local: without a plan, agents press against the wall beside the
    # gap (measured: half of them never arrive). A guide path through the gap, followed
    # in "seek" mode beside Seek(goal), does the planning (90 % arrive).
    _, beh, _, path_mod, _, _, _ = _modules()
    guide = path_mod.Path([[-12, 0], [-1, 0], [1, 0], [6, 0]], closed=False)
    return _crowd(world, starts, goals, slots=slots, seed=seed, look_ahead=1.0,
                  extra=(beh.FollowPath(guide, look_ahead=1.0, mode="seek", weight=0.5),),
                  separation=True, danger=danger)


@scenario("doorway", steps=1500, dt=1.0 / 30.0, report=crowd_report,
          description="SteerSuite: two groups swap rooms through one doorway")
def doorway(*, agents: int = 10, slots: int = 16, seed: int = 0, door: float = 1.8,
              danger: str = "velocity"):
    """Two groups on either side of a wall swap sides through a ``door`` wide doorway.

    Plain local steering (no guide path): measured, about half the agents find the door
    within the default 50 s — a case where context steering needs a planner.
    Metrics: the common set with time to goal; ``crowd_report``.
    """
    _, _, _, _, _, _, world_mod = _modules()
    n = _count("agents", agents)
    a, b = _two_groups(n)
    rng = np.random.default_rng(seed)
    world = world_mod.World()
    world.add_polyline([[-10, -5], [10, -5], [10, 5], [-10, 5]], closed=True)
    _wall_with_gap(world, 0.0, 5.0, door)
    sa = _spread(np.c_[rng.uniform(-8, -2, a), rng.uniform(-3.5, 3.5, a)], 0.8)
    sb = _spread(np.c_[rng.uniform(2, 8, b), rng.uniform(-3.5, 3.5, b)], 0.8)
    starts = np.vstack([sa, sb])
    goals = np.vstack([sa * [-1, 1], sb * [-1, 1]])
    return _crowd(world, starts, goals, slots=slots, seed=seed, look_ahead=1.2,
                  separation=True, danger=danger)


@scenario("circle", steps=1200, dt=1.0 / 30.0, report=crowd_report,
          description="SteerSuite: agents on a circle walk to the antipodes")
def circle(*, agents: int = 16, slots: int = 16, seed: int = 0, radius: float | None = None,
             danger: str = "velocity"):
    """``agents`` on a circle each walk to the opposite point; they all meet in the middle.

    The circle's radius defaults to leave 1 m of arc per agent (at least 5 m). Resolve
    ``"avoid_opposite"`` (danger adds interest away from it) instead of ``"subtract"``.
    Metrics: the common set with time to goal; ``crowd_report``.
    """
    n = _count("agents", agents)
    r = max(5.0, n * 1.0 / (2 * np.pi)) if radius is None else float(radius)
    rng = np.random.default_rng(seed)
    angle = 2 * np.pi * np.arange(n) / n + rng.uniform(-0.01, 0.01, n)
    starts = r * np.c_[np.cos(angle), np.sin(angle)]
    # Everyone meets in the middle: "subtract" deadlocks there (measured: nobody arrives),
    # the Godot recipe's "avoid_opposite" turns danger into interest away from it.
    return _crowd(None, starts, -starts, slots=slots, seed=seed, resolve="avoid_opposite",
                  horizon=1.0, danger=danger)


# ------------------------------------------------------------------ corridor, flock ---


@scenario("corridor", steps=900, dt=1.0 / 30.0, report=crowd_report,
          description="Unity project demo: chase a target through a corridor, avoiding "
                      "obstacles")
def corridor(*, agents: int = 1, slots: int = 16, seed: int = 0, length: float = 60.0):
    """The Unity ContextSteering demo: agents chase a target at the far end of a corridor
    10 units wide, avoiding round obstacles on the way.

    Chase (interest) + Avoid the obstacles and WallDanger (danger), ``resolve="subtract"``
    and ``choose="argmax"`` as in the Unity project; acceleration-limited motion.
    Metrics: the common set with time to goal (within 1 unit of the target).
    """
    agents_mod, beh, motion, _, simulation, steering, world_mod = _modules()
    n = _count("agents", agents)
    if n > 8:
        raise ValueError(f"agents: at most 8 fit at the corridor's entrance, got {n}")
    rng = np.random.default_rng(seed)
    world = world_mod.World()
    world.add_polyline([[0, -5], [length, -5], [length, 5], [0, 5]], closed=True)
    xs = np.arange(15.0, length - 8.0, 12.0)
    obstacles = np.c_[xs + rng.uniform(-2, 2, len(xs)), rng.uniform(-2.0, 2.0, len(xs))]
    world.add_circles(obstacles, np.full(len(xs), 2.0))
    goal = np.array([length - 3.0, 0.0])
    ys = (np.arange(n) - (n - 1) / 2) * 1.1
    a = agents_mod.Agents(n, slots=slots, seed=seed)
    a.add(np.c_[np.full(n, 2.0) + 0.6 * (np.arange(n) % 2), ys], radius=0.5,
          max_speed=4.0 * rng.uniform(0.9, 1.1, n), max_accel=8.0, target=goal)
    st = steering.Steering(
        [beh.Chase(goal), beh.Avoid(obstacles, max_distance=5.0),
         beh.WallDanger(look_ahead=1.5, falloff="linear"),
         beh.AgentDanger(radius=0.8)],
        resolve="subtract", choose="argmax")
    sim = simulation.Simulation(world, a, st, motion=motion.Accel(), slots=slots, seed=seed,
                                stuck_distance=0.2, stuck_time=3.0)
    sim.configure_metrics(goal_radius=1.0)
    return sim


@scenario("flock", steps=1200, dt=1.0 / 30.0, report=crowd_report,
          description="Lewis's crowd: a flock (separation, cohesion, alignment) with speed "
                      "control funnels through a choke point")
def flock(*, agents: int = 40, slots: int = 16, seed: int = 0, gap: float = 3.0):
    """Mike Lewis's crowd: ``agents`` flock towards a goal beyond a wall with a ``gap``.

    Interest: Seek the goal plus Lewis's flocking rules (Separation, Cohesion, Alignment)
    summed (``combine="sum"``); Arrive fades the interest near the goal, and since the
    chosen strength scales the speed, agents slow down in the crowd and on arrival (speed
    control). Danger: AgentDanger and WallDanger, ``resolve="subtract"``,
    ``choose="weighted_neighbours"``. Metrics: the common set with time to goal.
    """
    agents_mod, beh, motion, _, simulation, steering, world_mod = _modules()
    n = _count("agents", agents)
    rng = np.random.default_rng(seed)
    world = world_mod.World()
    world.add_polyline([[-15, -10], [35, -10], [35, 10], [-15, 10]], closed=True)
    _wall_with_gap(world, 10.0, 10.0, gap)
    side = int(np.ceil(np.sqrt(n)))
    grid = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)[:n]
    starts = grid * 1.2 - [13.0, (side - 1) * 0.6] + _jitter(rng, n, 0.2)
    goal = np.array([28.0, 0.0])
    goals = goal + _spread(rng.normal(0, 1.5, (n, 2)), 0.8)
    a = agents_mod.Agents(n, slots=slots, seed=seed)
    a.add(starts, radius=0.3, max_speed=2.0 * rng.uniform(0.9, 1.1, n), max_accel=4.0,
          target=goals)
    st = steering.Steering(
        [beh.Seek(weight=0.6), beh.Arrive(slowing_radius=2.0, tolerance=0.2, weight=0.4),
         beh.Separation(radius=1.2, weight=1.0), beh.Cohesion(radius=3.0, weight=0.15),
         beh.Alignment(radius=3.0, weight=0.2),
         beh.AgentDanger(radius=0.6, predictive=True, horizon=1.0),
         beh.WallDanger(look_ahead=1.2, falloff="linear")],
        combine="sum", resolve="subtract", choose="weighted_neighbours")
    sim = simulation.Simulation(world, a, st, motion=motion.Accel(), slots=slots, seed=seed,
                                stuck_distance=0.1, stuck_time=3.0)
    sim.configure_metrics(goal_radius=GOAL_RADIUS + 0.5)
    return sim
