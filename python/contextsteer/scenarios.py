"""Ready-made scenarios: named functions that build a seeded simulation.

A scenario is a function registered with :func:`scenario`; it takes its parameters as
keyword arguments (``agents``, ``slots``, ``seed`` and its own) and returns a ready
simulation. The command line (``contextsteer run NAME``) and the notebooks look them up
by name with :func:`get`; :func:`available` lists them.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from . import _checks

if TYPE_CHECKING:
    from .behaviours import Behaviour
    from .maps import SlotSet
    from .nav import NavField
    from .path import Path
    from .simulation import Simulation
    from .steering import Steering
    from .world import World

__all__ = [
    "CHORD_CROWD",
    "CROWD",
    "CROWD_COUNTERFLOW",
    "CROWD_PHASES",
    "CROWD_SLOT_ANGLES",
    "QUEUE_CHANGES",
    "SMOOTH_CROWD",
    "Scenario",
    "available",
    "crowd_slots",
    "crowd_slots_for",
    "crowd_steering",
    "get",
    "scenario",
    "unregister",
]


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
    presets : dict
        ``{preset: {"steps": ..., "dt": ...}}``: the builder's ``preset=`` values with
        their own run length and step (e.g. the racetrack's ``"godot"``).
    """

    name: str
    description: str
    builder: Callable[..., Simulation]
    steps: int = 600
    dt: float = 1.0 / 60.0
    report: Callable[[Any], dict] | None = None
    #: Named presets (the builder's ``preset=`` values) with their own ``steps``/``dt``.
    presets: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        # inspect.signature (and so help(), IDEs and Jupyter's "?") shows the builder's
        # parameters, not **params.
        try:
            sig = inspect.signature(self.builder)
        except (TypeError, ValueError):  # a builder without one (a C callable)
            return
        object.__setattr__(self, "__signature__", sig)

    def __call__(self, **params: Any) -> Simulation:
        return self.builder(**_nest(self.name, params))

    def timing(self, preset: str | None = None) -> tuple[int, float]:
        """``(steps, dt)`` of a run of this scenario, for ``preset`` when it has its own.

        Raises
        ------
        ValueError
            ``preset`` is not one of :attr:`presets`.
        """
        if preset is None:
            return self.steps, self.dt
        if preset not in self.presets:
            raise ValueError(
                f"scenario {self.name!r}: preset must be one of {tuple(self.presets)}, "
                f"got {preset!r}"
            )
        p = self.presets[preset]
        return int(p.get("steps", self.steps)), float(p.get("dt", self.dt))

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the keyword parameters the builder takes."""
        sig = inspect.signature(self.builder)
        return tuple(
            p.name
            for p in sig.parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        )

    def accepts(self, name: str) -> bool:
        """Whether the builder takes a keyword argument ``name`` (or any, via ``**kwargs``).

        A dotted name ``NAME.KEY`` is accepted when ``NAME`` is: it is the key ``KEY`` of
        the mapping the builder takes as ``NAME`` (``changes.horizon``, see
        :func:`crowd_steering`)."""
        head, dot, tail = name.partition(".")
        if dot:
            return bool(head) and bool(tail) and self.accepts(head)
        sig = inspect.signature(self.builder)
        return name in self.parameters or any(
            p.kind is p.VAR_KEYWORD for p in sig.parameters.values()
        )


def _nest(scenario: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with each dotted name ``NAME.KEY`` folded into the mapping ``NAME``:
    ``{"changes.horizon": 3}`` is ``{"changes": {"horizon": 3}}``, so that the command
    line, :func:`~contextsteer.sweep` and :func:`~contextsteer.tune`, which name scalar
    parameters, reach one option of a builder's mapping. A mapping given whole is merged
    with its dotted keys; a key given both ways is refused."""
    out: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for name, value in params.items():
        head, dot, tail = name.partition(".")
        if not dot:
            out[name] = value
        elif not head or not tail:
            raise ValueError(
                f"scenario {scenario!r}: a parameter inside a mapping is NAME.KEY, got {name!r}"
            )
        else:
            nested.setdefault(head, {})[tail] = value
    for head, keys in nested.items():
        whole = out.get(head)
        if whole is None:
            out[head] = keys
            continue
        if not isinstance(whole, Mapping):
            raise TypeError(
                f"scenario {scenario!r}: {head}.{next(iter(keys))} is a key of the mapping "
                f"{head}, but {head} is given as {whole!r}"
            )
        twice = sorted(str(k) for k in set(whole) & set(keys))
        if twice:
            raise ValueError(
                f"scenario {scenario!r}: {head}.{twice[0]} given twice, as a key of {head} "
                f"and as {head}.{twice[0]}"
            )
        out[head] = {**whole, **keys}
    return out


_REGISTRY: dict[str, Scenario] = {}


#: A scenario builder; the decorator returns it unchanged, signature included.
_Builder = TypeVar("_Builder", bound=Callable[..., Any])


# Shared entries of the scenario builders' numpydoc Parameters sections (_parameters).
_SLOTS = (
    "slots : int, default 16\n"
    '    Slots per agent. With ``danger="velocity"`` (or ``"counterflow"``), turning\n'
    "    slots and 16 slots the simulation takes :func:`crowd_slots`; any other count is a\n"
    "    regular ring (:func:`crowd_slots_for`)."
)
_SEED = (
    "seed : int, default 0\n"
    "    Seeds the layout's draw (start jitter, speeds, spread goals) and the agents'\n"
    "    ``rng``."
)
_DANGER = (
    'danger : {"velocity", "counterflow", "smooth", "plain", "agent"}, default "velocity"\n'
    '    The steering preset: :func:`crowd_steering`\'s tuned options (``"velocity"``, and\n'
    '    ``"counterflow"``, now the same), ``"smooth"`` (:data:`SMOOTH_CROWD`), ``"plain"``\n'
    '    (none of the refinements) or ``"agent"`` (the earlier AgentDanger configuration).'
)
_DANGER_V = (
    'danger : {"velocity", "counterflow", "smooth", "plain"}, default "velocity"\n'
    '    The velocity-space steering preset, as in the other crowd scenarios (``"agent"``\n'
    "    is refused: this scenario needs :class:`CollisionDanger`)."
)
_DV = (
    "decision_validity : float or None, default None\n"
    "    Lewis's time slicing: each agent keeps a decision this many seconds\n"
    "    (:class:`Simulation`'s ``decision_validity``); None decides every step."
)
_CH_VELOCITY = (
    "changes : mapping, optional\n"
    "    Some :class:`CollisionDanger` options over the preset's set\n"
    "    (``crowd_steering(changes=)``; ``contextsteer run NAME -p changes.horizon=3``)."
)
# The scenarios that also take danger="agent", whose AgentDanger has no such options.
_CH = _CH_VELOCITY[:-1] + ';\n    refused with ``danger="agent"``.'
_ROT = (
    "rotate : bool, default True\n"
    "    Slots turn with each agent's heading (:func:`crowd_steering`'s ``rotate``)."
)
_DET = (
    "detour : bool, default False\n"
    "    Build the field steering so that a :class:`~contextsteer.Detour` can lead the\n"
    "    agents (``contextsteer run NAME --detour``); without a detour it steers the same."
)


def _parameters(*entries: str) -> Callable[[_Builder], _Builder]:
    """Give a scenario builder's docstring its numpydoc Parameters section (``entries``,
    each ``"name : type\\n    description"``, in the signature's order) and Returns, before
    its Examples if it has any."""

    def add(builder: _Builder) -> _Builder:
        text = "Parameters\n----------\n" + "\n".join(entries) + "\n\nReturns\n-------\n"
        text += "Simulation\n    Built and not yet stepped; run it with the scenario's "
        text += "``steps`` and ``dt``.\n"
        section = "\n".join("    " + line if line else "" for line in text.splitlines())
        doc = (builder.__doc__ or "").rstrip() + "\n"
        if "\n    Examples\n" in doc:
            at = doc.index("\n    Examples\n") + 1
            doc = doc[:at] + section + "\n\n" + doc[at:]
        else:
            doc = doc + "\n" + section + "\n    "
        builder.__doc__ = doc
        return builder

    return add


def scenario(
    name: str,
    *,
    description: str = "",
    steps: int = 600,
    dt: float = 1.0 / 60.0,
    report: Callable[[Any], dict] | None = None,
    presets: dict[str, dict[str, float]] | None = None,
) -> Callable[[_Builder], _Builder]:
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
    presets : dict, optional
        ``{preset: {"steps": ..., "dt": ...}}`` for a builder taking ``preset=``: the run
        length and time step of each preset (see :meth:`Scenario.timing`).

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
    if isinstance(steps, bool) or not _checks.is_int(steps) or steps <= 0:
        raise ValueError(f"scenario {name!r}: steps must be an integer > 0, got {steps!r}")
    if not float(dt) > 0:
        raise ValueError(f"scenario {name!r}: steps and dt must be > 0, got {steps}, {dt}")

    def register(builder: _Builder) -> _Builder:
        doc = (inspect.getdoc(builder) or "").strip().splitlines()
        text = description or (doc[0] if doc else "")
        _REGISTRY[name] = Scenario(
            name, text, builder, int(steps), float(dt), report, dict(presets or {})
        )
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


def _count(
    name: str, value: Any, low: int = 1, high: int = MAX_SCENARIO_AGENTS, *, room: str = ""
) -> int:
    """An int in [low, high]; ``room`` names what limits ``high`` (a room that holds only
    so many at the scenario's spacing)."""
    if isinstance(value, bool) or not _checks.is_int(value) or not low <= value <= high:
        why = f" ({room})" if room else ""
        raise ValueError(f"{name} must be an integer in [{low}, {high:,}]{why}, got {value!r}")
    return int(value)


#: Largest length, width or gap a scenario takes (m): positions and walls built from it stay
#: well inside the World's ±1e8 coordinates.
MAX_SCENARIO_SIZE = 1e6


def _flag(scenario: str, name: str, value: Any) -> bool:
    """``value`` if it is a bool or the int 0 or 1 (every switch's rule), else a ValueError
    naming the parameter, as the scenarios' other parameters (``"no"`` and ``nan`` are
    truthy; a flag is not guessed from them)."""
    try:
        return _checks.flag(f"{scenario}: {name}", value)
    except TypeError:
        raise ValueError(
            f"{scenario}: {name} must be True or False (or 1 or 0), got {value!r}"
        ) from None


def _rng(seed: Any) -> np.random.Generator:
    """A scenario's random generator; ``seed`` an int in [0, 2**64) (the agents' random
    state takes the same), else a ValueError naming it (NumPy's own message did not)."""
    if isinstance(seed, bool) or not _checks.is_int(seed) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return np.random.default_rng(int(seed))


def _size(
    scenario: str,
    name: str,
    value: Any,
    low: float,
    high: float = MAX_SCENARIO_SIZE,
    *,
    closed: str = "",
) -> float:
    """A finite real number in (low, high) (a scenario's length, width or gap, in metres),
    else a ValueError naming the parameter. ``closed``: "low", "high" or "both" ends are
    included."""
    ok = _checks.is_real(value) and not isinstance(value, bool)
    with_low, with_high = closed in ("low", "both"), closed in ("high", "both")
    above = ok and (value >= low if with_low else value > low)
    below = ok and (value <= high if with_high else value < high)
    # (math.isfinite: np.isfinite refuses Python ints beyond 2**64; above and below have
    # already refused any int that float() could not take.)
    if not ok or not (above and below and math.isfinite(value)):
        span = f"{'[' if with_low else '('}{low:g}, {high:g}{']' if with_high else ')'}"
        raise ValueError(f"{scenario}: {name} must be a finite number in {span}, got {value!r}")
    return float(value)


#: Largest speed a scenario takes (m/s): agents' speeds lie within the ±1e8 of coordinates.
MAX_SCENARIO_SPEED = _checks.MAX_COORDINATE


def _speed_range(scenario: str, value: Any) -> tuple[float, float]:
    """``speed=(lo, hi)``: two finite real numbers with 0 <= lo <= hi, else a ValueError
    naming the parameter."""
    ok = isinstance(value, (tuple, list, np.ndarray)) and len(value) == 2
    if ok:
        ok = all(_checks.is_real(v) and not isinstance(v, bool) and np.isfinite(v) for v in value)
        ok = ok and 0 <= value[0] <= value[1] <= MAX_SCENARIO_SPEED
    if not ok:
        raise ValueError(
            f"{scenario}: speed must be two finite numbers (lo, hi) with 0 <= lo <= hi <= "
            f"{MAX_SCENARIO_SPEED:g}, got {value!r}"
        )
    return float(value[0]), float(value[1])


# ----------------------------------------------------------------------- racetrack ---

#: Control points of the racetrack's centre line (a closed Catmull-Rom spline): a long
#: straight, a hairpin, an S through the infield and a sweeping last corner.
RACETRACK_CONTROL = np.array(
    [
        [0, 0],
        [160, -10],
        [260, 20],
        [300, 110],
        [250, 190],
        [170, 170],
        [120, 120],
        [60, 150],
        [-20, 190],
        [-90, 150],
        [-100, 60],
        [-70, 10],
    ],
    dtype=np.float64,
)


#: Radius of the racetrack centre line's tightest bend, per unit of ``scale``.
RACETRACK_BEND = 18.7

#: Least distance from the centre line to a wall, in units of width/2, that a racetrack
#: may have (a wider track folds the wall on the inside of a bend into it).
RACETRACK_FOLD = 0.9


def racetrack_geometry(width: float = 26.0, scale: float = 1.0) -> tuple[World, Path]:
    """The racetrack's world (inner and outer walls) and centre-line path.

    ``scale`` multiplies the centre line (not the width): the Godot preset's track, in
    pixels, is ``scale=6, width=200``. The tightest bend of the centre line has a radius of
    18.7·scale: with ``width/2`` beyond it the wall on its inside folds over itself. A
    track whose walls come nearer the centre line than 0.9·width/2 (``width/2`` beyond
    about 1.3 times that radius) raises ``ValueError``.

    Returns
    -------
    world : World
    centre : Path
        Closed, counter-clockwise, about 1087·scale units long.
    """
    scale = _size("racetrack", "scale", scale, 0.0, 1e4)  # the track is ~350·scale wide
    width = _size("racetrack", "width", width, 0.0)
    _, _, _, path_mod, _, _, world_mod = _modules()
    centre = path_mod.Path(
        RACETRACK_CONTROL * float(scale), closed=True, smooth=True, samples_per_segment=12
    )
    pts = np.asarray(centre.points, dtype=np.float64)
    tangent = np.roll(pts, -1, 0) - np.roll(pts, 1, 0)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.c_[-tangent[:, 1], tangent[:, 0]]
    world = world_mod.World()
    world.add_polyline(pts + normal * width / 2, closed=True)
    world.add_polyline(pts - normal * width / 2, closed=True)
    # Too wide for a bend, the wall on its inside folds over itself into the track: the
    # walls then come nearer the centre line than width/2 (measured: 0.99 of it at
    # width/2 up to the bend's radius, where the polyline's chords cut the corners; 0.94
    # at 1.34 times; 0.87 at 1.6 times, where cars got stuck).
    near = float(world_mod.nearest(world, pts, float(width)).distance.min())
    if not near >= RACETRACK_FOLD * width / 2:
        raise ValueError(
            f"racetrack: width {width!r} folds the wall on the inside of a bend over itself "
            f"into the track (the walls come {near:.3g} from the centre line, under "
            f"{RACETRACK_FOLD:g} of width/2); keep width/2 below about "
            f"{1.3 * RACETRACK_BEND * scale:.3g} (1.3 times the tightest bend's radius, "
            f"{RACETRACK_BEND:g}·scale)"
        )
    return world, centre


def racetrack_report(sim: Simulation) -> dict:
    """Racetrack metrics: laps and lap times per car, the estimated lap time of the field
    (track length / mean progress speed), wall contacts, overtakes, overlaps, for the cars
    on the track; the contact and wall episodes are the run's (cars since removed included,
    as :meth:`Simulation.metrics` counts them). With the run metrics disabled every
    measured entry is None, as in :meth:`Simulation.metrics`."""
    a = np.asarray(sim.agents.alive, dtype=bool)
    summary = sim.metrics()
    if not summary["enabled"]:
        return {
            "estimated_lap_time": None,
            "laps": None,
            "best_lap_time": None,
            "last_lap_time": None,
            "max_speed": [round(float(v), 3) for v in np.asarray(sim.agents.max_speed)[a]],
            "wall_contacts": None,
            "overtakes": None,
            "overlaps": {
                "contact_episodes": None,
                "pre_push_overlaps": int(np.asarray(sim.overlaps)[a].sum()),
            },
        }
    m = sim.agent_metrics

    def floats(x):
        return [None if not np.isfinite(v) else round(float(v), 3) for v in x]

    walls = m.min_wall_clearance[a]
    # Lap time from the pace so far (track length / mean progress speed): defined before
    # any car has finished a lap, so short tuning runs can minimise it.
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
        "wall_contacts": {
            "episodes": summary["collisions"]["agent_wall"],
            "steps": int(m.wall_steps[a].sum()),
            "min_wall_clearance": floats(walls.min(keepdims=True))[0] if len(walls) else None,
        },
        "overtakes": {"total": int(m.overtakes[a].sum()), "per_car": m.overtakes[a].tolist()},
        "overlaps": {
            "contact_episodes": summary["collisions"]["agent_agent"],
            "pre_push_overlaps": int(np.asarray(sim.overlaps)[a].sum()),
        },
    }


#: The Godot recipe's own parameters (its agent script's exports and calls): 8 rays
#: turning with the car, look-ahead 100, max speed 350, steer force 0.1 at 60 Hz, thin
#: rays that also see the other cars, binary danger masking interest, the vector sum of
#: the rest, full speed whatever the interest, move_and_collide (stop at a hit).
GODOT_RECIPE = {
    "agents": 4,
    "slots": 8,
    "width": 200.0,
    "scale": 6.0,
    "speed": (350.0, 350.0),
    "look_ahead": 100.0,
    "steer_force": 0.1,
    "radius": 16.0,
    "falloff": "binary",
}
RACETRACK_DEFAULTS = {
    "agents": 12,
    "slots": 16,
    "width": 26.0,
    "scale": 1.0,
    "speed": (40.0, 60.0),
    "look_ahead": 22.0,
    "steer_force": 0.1,
    "radius": 3.0,
    "falloff": "linear",
}


@scenario(
    "racetrack",
    steps=1800,
    dt=1.0 / 30.0,
    report=racetrack_report,
    presets={"godot": {"steps": 3600, "dt": 1.0 / 60.0}},
    description="Godot recipe demo: cars with randomised speeds race laps on a closed "
    "track (FollowPath + WallDanger + AgentDanger)",
)
@_parameters(
    "agents : int, optional\n    Number of cars (12; the Godot preset 4).",
    "slots : int, optional\n    Slots per car (16; the Godot preset 8), turning with the car.",
    "seed : int, default 0\n    Seeds the cars' max speeds and the agents' ``rng``.",
    "width : float, optional\n    Track width (26; the Godot preset 200 px); more than a car radius / 0.3.",
    "speed : (float, float), optional\n"
    "    Range of the cars' max speeds, drawn uniformly ((40, 60); the Godot preset 350).",
    "look_ahead : float, optional\n    Length of the wall sensor rays (22, times width / 26 on a "
    "track narrower than 26; the Godot preset 100).",
    "steer_force : float, optional\n    ``Lerp``'s blend towards the chosen velocity a step (0.1).",
    'falloff : {"linear", "binary", "quadratic"}, optional\n'
    '    Wall danger against the hit distance ("linear"; the Godot preset "binary").',
    'preset : {None, "godot"}, optional\n'
    '    ``"godot"``: the recipe\'s own parameters (:data:`GODOT_RECIPE`); others given\n'
    "    override them.",
    "spare : int, default 0\n    Free agent slots left after the cars, for the user's own.",
)
def racetrack(
    *,
    agents: int | None = None,
    slots: int | None = None,
    seed: int = 0,
    width: float | None = None,
    speed: tuple[float, float] | None = None,
    look_ahead: float | None = None,
    steer_force: float | None = None,
    falloff: str | None = None,
    preset: str | None = None,
    spare: int = 0,
) -> Simulation:
    """The Godot recipe's racetrack: ``agents`` cars spread around a closed track.

    ``spare`` free agent slots are left after the cars, for the user's own: a player's
    car (``sim.agents.add(..., kinematic=True)``, driven by writing its velocity) or
    cars respawned at a checkpoint.

    Interest: :class:`FollowPath` along the centre line (25 units ahead); danger:
    :class:`WallDanger` (slot rays cast ``look_ahead`` units as circles, one slot of
    spread, ``falloff`` of danger with the hit distance: "linear" by default, "binary" or
    "quadratic") and predictive :class:`AgentDanger`; ``resolve="mask"``,
    ``choose="vector_sum"``, slots turning with the car, ``Lerp`` motion — the recipe's
    choices. Cars of radius 3 get max speeds uniform in ``speed`` (seeded), so fast cars
    catch and overtake slow ones. Tuned for dt = 1/30 s: ``Lerp``'s steer force acts per
    step, so at a coarser tick the cars turn in later (at 1/10 s, 12 cars touched a wall
    21 times in 60 s, none at 1/30); scale ``steer_force`` with the tick.

    ``preset="godot"`` is the recipe exactly, with its own parameters
    (:data:`GODOT_RECIPE`): 4 cars of radius 16 at max speed 350 on a track scaled to
    pixels (``scale=6``, about 6500 px long and 200 wide), 8 slots turning with the car, :class:`FollowPath`
    tangent interest (``get_path_direction``), ``WallDanger(look_ahead=100, ray_radius=0,
    agents=True)`` (thin rays that also see the other cars, binary), ``resolve="mask"``
    with threshold 0, the raw ``vector_sum`` (``contiguous=False``),
    ``Lerp(steer_force=0.1, speed="max")`` and ``collision="stop"``; run at 60 Hz
    (``dt = 1/60``, 3600 steps: ``contextsteer run racetrack --preset godot``). Any other
    parameter given overrides the preset's. Differences that remain: Godot's
    ``move_and_collide`` also stops a car at another car, here cars overlap and are
    pushed apart; a stopped car keeps its heading (Godot: ``velocity.angle()`` is 0).

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
    agents_mod, beh, motion, _, simulation, steering, world_mod = _modules()
    if preset not in (None, "godot"):
        raise ValueError(f"racetrack: preset must be None or 'godot', got {preset!r}")
    godot = preset == "godot"
    given = {
        "agents": agents,
        "slots": slots,
        "width": width,
        "speed": speed,
        "look_ahead": look_ahead,
        "steer_force": steer_force,
        "falloff": falloff,
    }
    cfg: dict[str, Any] = {
        **(GODOT_RECIPE if godot else RACETRACK_DEFAULTS),
        **{k: v for k, v in given.items() if v is not None},
    }
    agents, slots, width, speed = cfg["agents"], cfg["slots"], cfg["width"], cfg["speed"]
    look_ahead, steer_force, falloff = cfg["look_ahead"], cfg["steer_force"], cfg["falloff"]
    n = _count("agents", agents)
    world, centre = racetrack_geometry(width, cfg["scale"])
    if given["look_ahead"] is None and not godot:
        # The sensor's reach follows a narrower track: the default 22 m with its linear
        # falloff and mask threshold 0.3 masked every slot of a car on a 15 m track (the
        # side rays' danger, spread onto the slot ahead), and every car stood for good.
        full_width = float(RACETRACK_DEFAULTS["width"])  # type: ignore[arg-type]
        look_ahead = look_ahead * min(1.0, float(width) / full_width)
    # Cars start 0.2·width off the centre line, 0.3·width from a wall: the body must fit.
    if not 0.3 * float(width) > cfg["radius"]:
        raise ValueError(
            f"racetrack: width must be greater than {cfg['radius'] / 0.3:.4g} for cars of "
            f"radius {cfg['radius']:g} (they start 0.3·width from a wall), got {width!r}"
        )
    rng = _rng(seed)
    length = centre.length
    spacing = 8.0 * cfg["radius"] / 3.0
    if n * spacing > length:
        raise ValueError(f"agents: at most {int(length // spacing)} cars fit on the track, got {n}")
    offset = np.arange(n) * length / n
    lateral = np.where(np.arange(n) % 2, 0.2, -0.2) * width
    p, t = centre.point_at(offset), centre.tangent_at(offset)
    p = p + np.c_[-t[:, 1], t[:, 0]] * lateral[:, None]
    # The walls are a sampled polyline, a little nearer the centre line than width/2 in the
    # bends: check the start positions against them, not only against 0.3·width.
    clear = world_mod.nearest(world, p, float(width)).distance - cfg["radius"]
    if not (clear > 0).all():
        k = int(np.argmin(clear))
        raise ValueError(
            f"racetrack: width {width!r} starts car {k} of radius {cfg['radius']:g} against a "
            f"wall ({float(clear[k]):.3g} m of clearance); give a wider track"
        )
    spare = _checks.integer("racetrack: spare", spare, 0, 1_000_000)
    cars = agents_mod.Agents(n + spare, slots=slots, seed=seed)
    lo, hi = _speed_range("racetrack", speed)
    if godot:  # the recipe's cars start still (velocity = Vector2.ZERO)
        cars.add(
            p,
            heading=np.arctan2(t[:, 1], t[:, 0]),
            radius=cfg["radius"],
            max_speed=rng.uniform(lo, hi, n),
            steer_force=steer_force,
        )
        st = steering.Steering(
            [
                beh.FollowPath(centre),
                beh.WallDanger(look_ahead=look_ahead, ray_radius=0.0, agents=True, falloff=falloff),
            ],
            combine="max",
            resolve="mask",
            threshold=0.0,
            choose="vector_sum",
            contiguous=False,
            rotate=True,
        )
        sim = simulation.Simulation(
            world,
            cars,
            st,
            motion=motion.Lerp(steer_force=steer_force, speed="max"),
            slots=slots,
            collision="stop",
            stuck_distance=10.0,
            stuck_time=2.0,
        )
        sim.configure_metrics(path=centre, overtakes=True)
        return sim
    cars.add(
        p,
        velocity=t * lo / 4,
        heading=np.arctan2(t[:, 1], t[:, 0]),
        radius=cfg["radius"],
        max_speed=rng.uniform(lo, hi, n),
        steer_force=steer_force,
    )
    st = steering.Steering(
        [
            beh.FollowPath(centre, look_ahead=25.0),
            beh.WallDanger(look_ahead=look_ahead, spread=1, falloff=falloff),
            beh.AgentDanger(radius=8.0, predictive=True, horizon=0.6),
        ],
        combine="max",
        resolve="mask",
        threshold=0.3,
        choose="vector_sum",
        rotate=True,
    )
    sim = simulation.Simulation(
        world,
        cars,
        st,
        motion=motion.Lerp(steer_force=steer_force),
        slots=slots,
        stuck_distance=3.0,
        stuck_time=2.0,
    )
    sim.configure_metrics(path=centre, overtakes=True)
    return sim


# --------------------------------------------------------------- crowd test cases ---
# After SteerSuite's test cases: pedestrians of radius 0.3 m walking at about 1.3 m/s to
# goals; a goal is reached within 0.5 m. Steering: crowd_steering() (velocity-space
# danger, danger="velocity", the default; bottleneck and doorway with QUEUE_CHANGES over
# CROWD) with crowd_slots(); danger="agent" is the older
# Seek + predictive AgentDanger + WallDanger, resolve "subtract", choose
# "weighted_neighbours" (Lewis). Acceleration-limited motion (6 m/s²); stuck = less than
# 0.1 m in 3 s (before arrival).

GOAL_RADIUS = 0.5


def crowd_report(sim: Simulation) -> dict:
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


CROWD: Mapping[str, float] = types.MappingProxyType(
    {
        "horizon": 2.4,
        "commit": 0.04,
        "commit_danger": 0.0,
        "turn_steps": 4,
        "turn_margin": 0.02,
        "return_margin": 0.6,
        "return_step": 0.14,
        "retreat_speed": 0.75,
        "inertia": 0.25,
        "side_bias": 0.12,
        "smoothness": 0.5,
        "speed_exponent": 0.7,
        "unstick": True,
        "jam_horizon": 0.6,
        "jam_oncomers": 3,
        "squeeze": 0.8,
        "past_target": True,
        "make_way": 0.5,
        "standoff": 0.5,
        "same_way_horizon": 1.6,
        "wall_speed_alone": True,
        "brake_at_target": True,
        "reachable_target": True,
    }
)
"""The :class:`CollisionDanger` options of ``crowd_steering()`` (the crowd scenarios'
default): its commitment and smoothing refinements together, found by a search over the
crowd benchmark's scenes (``benchmarks/tune_crowd.py``; each seed scored on a neighbour
of the values, so that a set whose worst seeds hold only at its exact values loses), and
``unstick`` (added since: a packed queue in a dead end stood for good without it; on the
benchmark's scenes it changes nothing beyond what one seed moves, docs/crowd.md), and the
jam horizon (``jam_horizon=0.6, jam_oncomers=3``, added since: an agent with no safe way
to move that three neighbours within 2 m want to pass the other way, their desired
directions towards their ``Agents.target`` more than 120° apart, takes its candidates at
a 0.6 s horizon; in the ``benchmarks/counterflow.py`` corridor, 20 m × 4 m fed from both
ends at 4 persons/s, 389 people get through in two minutes instead of 182, with no
contact; RVO2 385 with some 2,000 contact episodes a run). ``crowd_steering(options={})``
gives the plain configuration without them. Read-only; docs/crowd.md has the search and
its measurements. And ``squeeze=0.8`` (added since): an agent with no safe way to move even
with ``unstick``'s creep speeds tries them again at 0.8 of the margin, then at none. Two
bodies side by side in a 1 m exit's mouth, each within its margin of a door post and of
the other, stood there for good and kept the RiMEA 9 room from emptying on some seeds;
with it every room of 32 seeds empties, with no overlap, and the benchmark's scenes
change by at most one seed's stray agent (docs/crowd.md, "Corners and arches"). And
``past_target=True`` (added since): a wall that a course meets only past the agent's goal
does not slow the course, since the agent stops at its goal. A lone agent walking 6 m to a
goal 5–60 cm from a wall came within 0.5 m of it up to 1.56 times later than in open
space, and one agent of the hallway's seed 175 paced under such a goal for good; with it
the walk takes the open-space time, and the benchmark moves by what a seed moves
(docs/crowd.md, "Goals by a wall"). A body standing met only past the goal is left out
the same way (added since; on the pillar rooms of ``benchmarks/bench_stranding.py``,
plain steering strands 21 agents of 8,054 instead of 30; docs/crowd.md, "Bodies standing
past the target"). ``crowd_steering`` leaves it off with a ``field`` or
``arrive=False``. The commitment and smoothing options and ``speed_exponent=0.7`` come
from a later search with γ among them (the others held): pooled over 32 seeds the
benchmark's hallway, bottleneck and doorway turn 10–15 % less a step than with the set
before (``horizon=2.05, commit=0.02, turn_margin=0.03, return_step=0.18,
retreat_speed=0.4, inertia=0.35, side_bias=0.02, smoothness=0.3``, γ 1), the crossing 4 %
more, with no contact and the time to goal within 9 % of RVO2's; the longer horizon costs
about a fifth more time a step at 10k agents, and late arrivals in the ``hallway`` case
thread the agents standing at their goals more slowly (docs/crowd.md, "A search with the
speed exponent"). And ``make_way=0.5`` (added since): a body standing at its goal steps
aside for a neighbour that wants through it and makes no headway, when that neighbour's
goal is free, its own spot is one it can come back to, and the neighbour has not just
stepped aside for it. On the 200 pillar rooms of ``benchmarks/bench_stranding.py`` (no
route) 4 agents of 8,054 are never home instead of 27, and 6 instead of 20 end the run off
a goal they had reached; the crowd benchmark and the scenarios move by what a seed moves
(docs/crowd.md, "Bodies at their goals make way, by default" and "Not making way
back"). And ``standoff=0.5`` (added since): of two walkers that have stood side by side
in each other's way for 0.5 s (an arch in an exit's mouth), the one farther from its
target backs off for 2/3 s. On the crowd benchmark's seeds 0–31, the circles, the
counterflow corridor and the pillar rooms it changes no figure; on the bottleneck's seeds
0–299 it frees the worst seed's arch (seed 272, 70 → 86 % home) for the same mean
(99.11 → 99.12 %), and in an exit's mouth with six walkers behind the two, the pair no
longer stands for 7 s (docs/crowd.md, "Backing off a standoff, by default"). And
``wall_speed_alone=True`` (added since): an agent alone may close on a wall at the
wall-limited speed where no speed level can approach it (below the slowest level). Of
108 rooms of ``benchmarks/rooms.py`` (seeds 0–399) whose 4 m/s walker must leave by a door
on the far side, 12 were not left and home in 30 s, none are now, and the others are
home in 11.9 s instead of 14.7 s; the crowd benchmark, the pillar rooms, the counterflow
corridor and the library's scenarios are unchanged to every digit printed (docs/crowd.md,
"A lone agent's wall speed below the levels, by default")."""

CHORD_CROWD: Mapping[str, float] = types.MappingProxyType(
    {
        **CROWD,
        "horizon": 3.0,
        "commit": 0.1,
        "turn_margin": 0.03,
        "return_margin": 0.7,
        "return_step": 0.15,
        "retreat_speed": 0.65,
        "inertia": 0.4,
        "side_bias": 0.27,
        "smoothness": 0.6,
        "speed_exponent": 0.65,
    }
)
"""The :class:`CollisionDanger` options found for the chord interest, opt-in:
``crowd_steering(shape="chord", changes=CHORD_CROWD)`` (in :data:`CROWD_PHASES` phases,
as the default). :data:`CROWD` with a 3 s horizon, a stronger side preference and more
inertia, found by a ``benchmarks/tune_crowd.py --shape chord`` search (180 trials,
nudged seeds 0–15, contacts of five nudged circle-250 runs scored); it takes
``same_way_horizon`` from :data:`CROWD`. On the crowd benchmark's seeds 0–31 it turns as
much a step as the default on the hallway and the crossing and 11 / 8 % less at the
bottleneck and the doorway, with no contact and as many agents home, but it turns more on
the circles (circle-250 0.43 against 0.37°/step, circle-64 0.78 against 0.63) and in the
pillar rooms, and takes 3–10 % longer on the circles: docs/crowd.md, "A search for the
chord shape". Read-only."""

CROWD_COUNTERFLOW: Mapping[str, float] = CROWD
""":data:`CROWD` itself since the jam horizon joined it (``jam_horizon=0.6,
jam_oncomers=3``; it was the counterflow preset before): kept so that code written for the
preset runs unchanged. Read-only."""

QUEUE_CHANGES: Mapping[str, float] = types.MappingProxyType({"lateral_cost": 0.6})
"""The changes over :data:`CROWD` that the ``bottleneck`` and ``doorway`` scenarios make
with their default ``danger="velocity"`` and ``guide="field"``:
``CollisionDanger(lateral_cost=0.6)``, speed across a blocked way costs, so an agent held
up by the queue at the opening waits on course instead of walking along the queue's side.
Over seeds 0–39 of each scenario the heading jitter falls by 23 % (bottleneck) and 16 %
(doorway), everyone home, no contact, the time to goal 2 % and 0.5 % shorter (docs/crowd.md,
"Speed across a blocked way costs"). Not with ``guide="none"`` or ``"path"``: waiting on
course needs a course that leads through the opening, and steered straight at its goal
(or along the bottleneck's path) an agent that waits against the wall beside the opening
waits for good (seeds 0–39: 48 doorway and 24 bottleneck agents stranded with it against
6 and 4 without, ``guide="none"``; 13 against 0, the bottleneck's ``guide="path"``). A
scenario's own ``changes=`` go over these (``changes={"lateral_cost": 0}`` turns it off,
``{"lateral_cost": 0.6}`` turns it on without a field). Read-only."""

CROWD_PHASES = 16
"""``Steering(decision_phases=...)`` of ``crowd_steering()`` with the default options
(:data:`CROWD`): agent ``i`` decides in phase ``i % 16`` of each step and sees the agents
of earlier phases at their new commands (docs/crowd.md, "Deciding in phases")."""


SMOOTH_CROWD: Mapping[str, float] = types.MappingProxyType(
    {
        "commit_danger": 0.25,
        "turn_steps": 4,
        "turn_margin": 0.1,
        "return_margin": 0.5,
        "return_step": 0.07,
        "retreat_speed": 0.5,
        "inertia": 0.3,
    }
)
"""The :class:`CollisionDanger` options of ``crowd_steering(smooth=True)``: its opt-in
smoothing refinements, set together (see their docstrings, the README's "Smoother crowds"
and docs/crowd.md). Read-only."""


CROWD_SLOT_ANGLES: tuple[float, ...] = (
    0.0, 7.5, 15.0, 25.0, 40.0, 60.0, 90.0, 130.0,
    180.0, 230.0, 270.0, 300.0, 320.0, 335.0, 345.0, 352.5,
)  # fmt: skip
"""The 16 slot directions of :func:`crowd_slots`, in degrees counter-clockwise from the
heading: 7.5° apart straight ahead, widening to 50° behind, symmetric left and right."""


def crowd_slots() -> SlotSet:
    """The crowd scenarios' 16 slots, denser ahead (:data:`CROWD_SLOT_ANGLES`).

    For steering that turns its slots with the heading (``crowd_steering()``'s
    ``rotate=True``): small corrections of the course the agent is on are candidates, a
    turn of 7.5° instead of a whole 22.5° slot, and going back is still possible in five
    directions. On the crowd benchmark's seeded scenes (seeds 4–15) against the regular
    ring: 5–18 % less heading jitter and a shorter time to goal on every scene, no
    contacts (docs/crowd.md). It goes with :data:`CROWD`'s refinements: without them (the
    plain and smooth presets) agents touched on some scenes. Pass it as
    ``Simulation(..., slots=crowd_slots())``; the crowd scenarios do for their default
    configuration (16 turning slots, ``danger="velocity"``).

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> s = cs.scenarios.crowd_slots()
    >>> s.k, s.regular, round(float(np.degrees(s.gaps[0])), 3)
    (16, False, 7.5)
    """
    from .maps import SlotSet

    a = np.radians(np.asarray(CROWD_SLOT_ANGLES, dtype=np.float64))
    return SlotSet.from_directions(np.c_[np.cos(a), np.sin(a)])


_DANGERS = ("velocity", "counterflow", "smooth", "plain", "agent")


def crowd_slots_for(
    slots: int = 16, *, danger: str = "velocity", rotate: bool = True
) -> SlotSet | int:
    """The slots the crowd scenarios give a simulation of ``slots`` slots with
    :func:`crowd_steering`'s ``danger`` preset (``"velocity"``, ``"counterflow"``,
    ``"smooth"`` or ``"plain"``) and ``rotate``: :func:`crowd_slots` for the default
    configuration and its counterflow variant (``"velocity"``, ``"counterflow"``: turning slots, 16 of
    them), else ``slots`` (the regular ring).
    :data:`CROWD`'s options were chosen with those slots; without them (the plain and
    smooth presets) agents touched on some scenes with the denser set (docs/crowd.md).

    Examples
    --------
    >>> import contextsteer as cs
    >>> cs.scenarios.crowd_slots_for().k, cs.scenarios.crowd_slots_for(danger="plain")
    (16, 16)
    >>> cs.scenarios.crowd_slots_for(24), cs.scenarios.crowd_slots_for(rotate=False)
    (24, 16)
    """
    slots = _count("crowd_slots_for: slots", slots, 3, 1024)
    rotate = _flag("crowd_slots_for", "rotate", rotate)
    if danger not in _DANGERS:
        raise ValueError(
            f"crowd_slots_for: danger must be 'velocity', 'counterflow', 'smooth', 'plain' or "
            f"'agent', got {danger!r}"
        )
    return (
        crowd_slots() if danger in ("velocity", "counterflow") and rotate and slots == 16 else slots
    )


def crowd_steering(
    *,
    walls: bool = True,
    arrive: bool = True,
    extra: Sequence[Behaviour] = (),
    combine: str = "max",
    field: NavField | None = None,
    which: Any = None,
    look_ahead_field: float = 0.0,
    smooth: bool = False,
    creep: bool = False,
    options: Mapping[str, float] | None = None,
    changes: Mapping[str, float] | None = None,
    rotate: bool = True,
    decision_phases: int | None = None,
    slowing_radius: float = 1.0,
    max_neighbours: int = 16,
    detour_capacity: int | None = None,
    field_ends_at_target: bool = False,
    shape: str = "half_cosine",
) -> Steering:
    """The crowd scenarios' steering: velocity-space danger (a sampled velocity obstacle).

    Interest: :class:`Arrive` (slowing within ``slowing_radius``, 1 m, so agents stop at
    their goal; ``CollisionDanger(settle=True)`` acts within it, see the README's "A goal
    that is taken") or, with
    ``arrive=False``, :class:`Seek` — both with the half-cosine shape, so that every
    slot but straight away ranks (``shape="chord"`` gives them ``1 - sin(θ/2)`` instead,
    which charges small turns more: see :class:`Seek` and docs/crowd.md, "An interest
    that charges for small turns"); with a navigation ``field`` (:class:`NavField`),
    :class:`FollowField` instead (agent i reads field ``which[i]``, slowing within
    ``slowing_radius``,
    string-pulled over ``look_ahead_field``); plus ``extra`` interest behaviours. Danger:
    :class:`CollisionDanger` with 4 speeds per slot, a 5 cm margin and, when ``walls``,
    the walls on the same time-to-collision scale, and the options of :data:`CROWD`. Resolve
    ``"mask_min_danger"`` keeps only the safest slots; choose ``"argmax"`` picks the best
    rate of progress among them. The crowd benchmark
    (``benchmarks/bench_crowd_quality.py``) measures this configuration.

    :data:`CROWD` sets the commitment and smoothing refinements together: the decision
    keeps its course while a threat only grazes the horizon (``commit``), leaves an unsafe
    course by the least turn that clears it (``turn_steps``, ``turn_margin``), turns back
    only into a way free for longer and by at most ``return_step`` per 1/30 s, backs off at
    most at ``retreat_speed``, and keeps ``inertia`` of its last command when that is as
    safe. They were chosen together by a search over the crowd benchmark's scenes, each
    seed scored on a neighbour of the values (docs/crowd.md). It also gives an agent that
    three oncomers hold up with no safe way to move a 0.6 s horizon (``jam_horizon``,
    ``jam_oncomers``), so that two streams meeting head-on keep edging past each other.
    And it reads no wall past the agent's goal (``past_target``), since ``Arrive`` stops
    it there; with a ``field`` or ``arrive=False`` that option is left off, whatever
    ``options`` say, and so is ``arrivals`` (which takes it that neighbours stop at their
    targets): a field's goal need not be ``Agents.target``, and ``Seek`` does not
    stop. Give ``field_ends_at_target=True`` with a ``field`` whose every agent's field
    ends at that agent's ``Agents.target`` (one field per goal, or goals written to the
    targets) to keep it on: :class:`FollowField` then stops the agent there as ``Arrive``
    does. A lone field follower walking to a goal 5 cm from a wall then takes the
    open-space time instead of twice it; in the pillar rooms of
    ``benchmarks/bench_stranding.py`` (one field per agent, seeds 0–199) the agents get
    home 4–6 % sooner (docs/crowd.md). The scenarios whose agents follow a field to their
    own goal (``bottleneck``, ``doorway``, ``maze``) pass it.
    ``changes`` changes some of them and keeps the rest, and the 16 decision phases:
    ``changes={"horizon": 3}`` is :data:`CROWD` with a 3 s horizon (with ``smooth=True``,
    :data:`SMOOTH_CROWD` with it, deciding at once as that preset does). ``options``
    replaces them all: ``options={}`` is the plain configuration (a 2 s horizon,
    ``commit`` 0.1, none of the refinements), ``options={...}`` any other set of
    :class:`CollisionDanger` options, deciding at once unless ``decision_phases`` is
    given. Give one of the two. (``options=dict(CROWD, horizon=3)`` alone is not the
    default with one change: it decides at once.)

    Move the agents with an acceleration limit (:class:`Accel` with ``max_accel``, as the
    scenarios and the benchmark do, 6 m/s² for pedestrians): the plain decision flips
    between two candidates on alternate steps in a crowd (each agent reacting to the
    others' last dodge), and at the decision's own velocity the benchmark's hallway turns
    48° a step; the acceleration limit brings that to 1.4°, and the refinements further.

    ``smooth=True`` uses :data:`SMOOTH_CROWD` instead: a hand-set preset that keeps a
    jam's least bad course and turns back more slowly. Against :data:`CROWD` it turns
    less on some scenes and strands more agents on others (docs/crowd.md).

    ``creep=True`` lets a slot offer the fastest speed safe all the way from standing,
    between the speed levels (``CollisionDanger(creep=True)``): a packed crowd then edges
    into gaps instead of standing still. The ``evacuation`` scenario uses it; without it,
    in the plain configuration, a thousand agents pressing on two 1 m exits jam for good
    (docs/crowd.md).

    ``decision_phases`` (``Steering(decision_phases=)``): ``None`` gives
    :data:`CROWD_PHASES` (16) with the default options (and with ``changes`` to them) and 1
    (every agent deciding at once) with ``smooth=True`` or any ``options``. In 16 phases
    agent ``i`` decides in phase ``i % 16`` and sees the agents of earlier phases at their
    new commands, so of two agents about to dodge each other only the earlier one does: on
    the crowd benchmark (32 seeds) the default turns 16–28 % less a step than deciding at
    once, with the same arrivals and time to goal and no contact, for about 30 % more time a
    step at 10k agents (docs/crowd.md, "Deciding in phases"). The split
    ``perceive()`` / ``decide_and_move()`` needs ``decision_phases=1``.

    ``max_neighbours`` (``Steering(max_neighbours=)``, 16): the nearest neighbours each
    agent weighs (RVO2's ``maxNeighbors``); the reach follows the horizon and the speeds
    (RVO2's ``neighborDist`` has no counterpart).

    ``rotate=True`` (the default) turns the slots with each agent's heading
    (``Steering(rotate=True)``): the course the agent is on is then always one of the
    candidates, exactly, where world-frame slots (``rotate=False``) make it pick one of the
    two slots around it. The crowd scenarios then give the default configuration's
    simulation :func:`crowd_slots` (16 slots, 7.5° apart ahead): on the crowd benchmark
    (32 seeds) the two together turn
    18–25 % less a step than world-frame slots, get as many agents home or more and reach
    the goal sooner, with no contacts (docs/crowd.md). Build your simulation with
    ``slots=crowd_slots()`` to get the same.

    Where it was not tuned (a sweep of settings away from the benchmark's 0.3 m bodies at
    1.3 m/s, dt 1/30 s and 6 m/s²): ``return_step`` and ``inertia`` are per 1/30 s, so at
    any ``dt`` up to 0.25 s an agent stops at its goal instead of orbiting it, but a
    coarse step turns 5–10 times as much a step and lets the crowd press into each other:
    the ``bottleneck`` scenario with 50 agents and a 1.2 m gap, stepped for 75 s at dt
    0.25 s, counts 28–39 contact episodes a run (seeds 0–3), and a chain pinned in a corner
    kept up to 16 mm of overlap after the default 8 push-apart passes (64 separated it).
    A finer step is sound (the hallway: everyone home at dt 1/60 and 1/120 s, no contact),
    but at 1/300 s one agent of 40 (seed 0) ended 0.54 m short of its goal, which lies
    0.4 m from a wall: pushed off its lane, it had to come at the goal head-on, and the
    speed levels come no nearer a wall head-on than ``max_speed/S·wall_horizon``
    (``CollisionDanger(wall_speed=True)`` lifts that). A lower acceleration limit than
    the 6 m/s² it was tuned for makes the agents miss dodges they chose (at 2 m/s² every
    scene overlapped before push-apart, which then separated them). Walls are kept
    ``radius + margin`` away, so a body of 0.6 m does not pass a gap narrower than about
    0.75 m. Lengths are in metres for pedestrian-sized bodies: the 5 cm ``margin`` and the
    1 m ``slowing_radius`` do not scale with the agents. In other units, or for bodies
    much smaller than 0.3 m, scale them with the bodies:
    ``crowd_steering(changes={"margin": m}, slowing_radius=s)`` (with bodies of
    3 cm at 0.13 m/s and the metre values, no agent of 40 got through the hallway; with
    the margin and slowing radius scaled by 0.1, all 40 did).

    ``detour_capacity=N`` (with a ``field``) readies the steering for a
    :class:`~contextsteer.Detour` on that field, for agents of capacity N: the
    :class:`FollowField` gets per-agent weights of 1 and an :class:`Arrive` on
    ``Agents.target`` (the same shape and slowing radius) joins it with weights of 0, and
    the detour switches an agent from one to the other while it leads it.

    ``field_ends_at_target=True`` (with a ``field``): the caller's promise that agent i's
    field ``which[i]`` leads to ``Agents.target[i]``, so that ``past_target`` (from the
    options) stays on; see above. Where a field's goal is elsewhere, leave it off: walls
    past a target the agent does not stop at would then go unseen. With
    ``detour_capacity`` too, a :class:`~contextsteer.Detour` writes its waypoints into
    the targets of the agents it leads and marks them :attr:`Agents.waypoint`, so
    ``past_target`` does not hold for those while they are led.

    Examples
    --------
    >>> import contextsteer as cs
    >>> st = cs.scenarios.crowd_steering(walls=False)
    >>> [type(b).__name__ for b in st.behaviours], st.resolve, st.choose, st.rotate
    (['Arrive', 'CollisionDanger'], 'mask_min_danger', 'argmax', True)
    >>> cs.scenarios.crowd_steering().behaviours[1].inertia == cs.scenarios.CROWD["inertia"]
    True
    >>> cs.scenarios.crowd_steering(smooth=True).behaviours[1].inertia
    0.3
    >>> cs.scenarios.crowd_steering(options={}).behaviours[1].inertia
    0.0
    >>> cs.scenarios.crowd_steering().decision_phases, st.decision_phases
    (16, 16)
    >>> cs.scenarios.crowd_steering(options={}).decision_phases
    1
    >>> st = cs.scenarios.crowd_steering(changes={"horizon": 3.0})
    >>> st.behaviours[1].horizon, st.behaviours[1].inertia, st.decision_phases
    (3.0, 0.25, 16)
    >>> cs.scenarios.crowd_steering(max_neighbours=10).max_neighbours
    10
    """
    _, beh, _, _, _, steering, _ = _modules()
    # Every switch by the switches' rule (smooth="no" picked SMOOTH_CROWD, arrive=nan
    # Arrive, by truthiness; a helper on fuzz round 13's fixes).
    walls = _flag("crowd_steering", "walls", walls)
    arrive = _flag("crowd_steering", "arrive", arrive)
    smooth = _flag("crowd_steering", "smooth", smooth)
    creep = _flag("crowd_steering", "creep", creep)
    rotate = _flag("crowd_steering", "rotate", rotate)
    slowing_radius = _checks.length("crowd_steering: slowing_radius", slowing_radius)
    if shape not in ("half_cosine", "chord"):
        raise ValueError(
            f"crowd_steering: shape must be 'half_cosine' or 'chord' (an interest in every "
            f"slot but straight away), got {shape!r}"
        )
    if isinstance(extra, beh.Behaviour):
        name = type(extra).__name__
        raise TypeError(
            f"crowd_steering: extra must be a sequence of behaviours, got one {name}: put "
            f"it in a list, [{name}(...)]"
        )
    if not isinstance(extra, Sequence) or isinstance(extra, str):
        raise TypeError(
            f"crowd_steering: extra must be a sequence of behaviours, got {type(extra).__name__}"
        )
    led: list[Behaviour] = []
    if detour_capacity is not None:
        if field is None:
            raise ValueError("crowd_steering: detour_capacity is for a field (give field=)")
        n = _checks.integer("crowd_steering: detour_capacity", detour_capacity, 1, 2**31 - 1)
        led = [
            beh.Arrive(
                slowing_radius=slowing_radius,
                shape=shape,
                agent_weights=np.zeros(n, np.float32),
            )
        ]
    if field is not None:
        goal = beh.FollowField(
            field,
            which=which,
            slowing_radius=slowing_radius,
            shape=shape,
            look_ahead=look_ahead_field,
            agent_weights=np.ones(n, np.float32) if led else None,
        )
    elif arrive:
        goal = beh.Arrive(slowing_radius=slowing_radius, shape=shape)
    else:
        goal = beh.Seek(shape=shape)
    for name, given in (("options", options), ("changes", changes)):
        _check_danger_options("crowd_steering", name, given)
    base = SMOOTH_CROWD if smooth else CROWD
    if options is not None and changes is not None:
        raise ValueError(
            "crowd_steering: give options (all of them, replacing CROWD) or changes "
            "(some, over CROWD), not both"
        )
    if options is None:
        options = base
    elif smooth:
        raise ValueError("crowd_steering: give smooth=True or options, not both")
    field_ends_at_target = _flag("crowd_steering", "field_ends_at_target", field_ends_at_target)
    if field_ends_at_target and field is None:
        raise ValueError("crowd_steering: field_ends_at_target is for a field (give field=)")
    chosen = {**options, **(changes or {})}
    # The field's own goal may lie where no body can stand: end at its nearest place.
    reach_field = field is not None and bool(chosen.get("reachable_target"))
    if (field is not None and not field_ends_at_target) or (field is None and not arrive):
        # past_target reads no wall past Agents.target because Arrive stops the agent
        # there; a field's goal need not be that target (it defaults to the start), and
        # Seek does not stop. (A monster following a field at 3 m/s with its target left
        # at its start ran past walls beyond the start and missed its door.) arrivals
        # takes it that neighbours stop at theirs, as the same steering makes them.
        # brake_at_target and reachable_target likewise take Agents.target for the place
        # the agent stops at (a Seek target 10 m ahead, moved every step, is no such
        # place, and finding where a body stands there cost every step).
        for name in ("past_target", "arrivals", "brake_at_target", "reachable_target"):
            if chosen.get(name):
                chosen[name] = False
    if reach_field:
        goal = dataclasses.replace(goal, reachable=True)
    try:
        danger = beh.CollisionDanger(
            **{"horizon": 2.0, "speeds": 4, "margin": 0.05, **chosen}, walls=walls, creep=creep
        )
    except ValueError as e:
        # A value the caller changed can clash with one the preset keeps (horizon 1 s
        # against CROWD's same_way_horizon 1.6 s): name the preset's part.
        kept = sorted(
            k for k in options if k not in (changes or {}) and re.search(rf"\b{k}\b", str(e))
        )
        if changes is None or not kept:
            raise
        preset = "SMOOTH_CROWD" if smooth else "CROWD"
        values = ", ".join(f"{k}={options[k]!r}" for k in kept)
        raise ValueError(f"{e} ({values} from {preset}, kept by changes=: change it too)") from None
    if decision_phases is None:
        decision_phases = CROWD_PHASES if options is CROWD else 1
    rules = [goal, *led, *extra, danger]
    return steering.Steering(
        rules,
        combine=combine,
        resolve="mask_min_danger",
        choose="argmax",
        rotate=rotate,
        decision_phases=decision_phases,
        max_neighbours=max_neighbours,
    )


def _check_danger_options(where: str, name: str, given: Any) -> None:
    """``given`` (``None`` or a mapping of :class:`CollisionDanger` option names) is fit
    to be ``crowd_steering``'s ``options`` or ``changes``; the option values are the
    behaviour's to check."""
    if given is None:
        return
    if not isinstance(given, Mapping):
        raise TypeError(
            f"{where}: {name} must be a mapping of CollisionDanger options, got {given!r}"
        )
    bad = [k for k in given if not isinstance(k, str)]
    if bad:
        raise TypeError(
            f"{where}: {name} must map CollisionDanger option names (str) to values, got the "
            f"key {bad[0]!r}"
        )
    if {"walls", "creep"} & set(given):
        raise ValueError(f"{where}: give walls= and creep= to crowd_steering itself, not in {name}")
    from .behaviours import CollisionDanger

    known = {f.name for f in dataclasses.fields(CollisionDanger)} - {"walls", "creep"}
    unknown = sorted(k for k in given if k not in known)
    if unknown:
        raise TypeError(
            f"{where}: {name} has {', '.join(map(repr, unknown))}, not an option of "
            f"CollisionDanger; its options are {', '.join(sorted(known))}"
        )


def _danger_steering(danger: str, changes: Mapping[str, Any] | None) -> dict[str, Any]:
    """``crowd_steering``'s keywords for a scenario's ``danger=`` (one of the velocity
    dangers) with ``changes`` over its options: over :data:`CROWD` (keeping its phases) or
    :data:`SMOOTH_CROWD`, and added to the plain set or :data:`CROWD_COUNTERFLOW`, which
    decide at once as they do without changes."""
    _check_danger_options("crowd scenario", "changes", changes)
    if danger in ("velocity", "smooth"):
        return {"smooth": danger == "smooth", "changes": changes}
    base: Mapping[str, Any] = {"plain": {}, "counterflow": CROWD_COUNTERFLOW}[danger]
    return {"options": {**base, **changes} if changes else base}


def _queue_changes(
    danger: str, changes: Mapping[str, Any] | None, guide: str
) -> Mapping[str, Any] | None:
    """A queue scenario's ``changes``: :data:`QUEUE_CHANGES` under the given ones with
    ``danger="velocity"`` and ``guide="field"``, the given ones (checked by ``_crowd``)
    otherwise."""
    if danger != "velocity" or guide != "field":
        return changes
    _check_danger_options("crowd scenario", "changes", changes)
    return {**QUEUE_CHANGES, **(changes or {})}


def _crowd(
    world: World | None,
    starts: ArrayLike,
    goals: ArrayLike,
    *,
    slots: int,
    seed: int,
    radius: float = 0.3,
    speed: float = 1.3,
    look_ahead: float = 1.0,
    extra: Sequence[Behaviour] = (),
    separation: bool = False,
    resolve: str = "subtract",
    choose: str = "weighted_neighbours",
    danger_radius: float = 1.0,
    horizon: float = 1.5,
    combine: str = "max",
    danger: str = "velocity",
    field: NavField | None = None,
    which: Any = None,
    look_ahead_field: float = 0.0,
    creep: bool = False,
    rotate: bool = True,
    decision_validity: float | None = None,
    field_ends_at_target: bool = False,
    detour: bool = False,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """A seeded crowd simulation walking from ``starts`` to ``goals``.

    ``danger="velocity"`` (the default): :func:`crowd_steering` (velocity-space danger),
    agents with max_accel 6; ``danger="smooth"``: the same with ``smooth=True``
    (:data:`SMOOTH_CROWD`); ``danger="plain"``: the same without the refinements of
    :data:`CROWD` (``options={}``); ``danger="counterflow"``: :data:`CROWD_COUNTERFLOW` (the
    same as the default since the jam horizon joined :data:`CROWD`). ``danger="agent"``:
    the earlier configuration, Seek + predictive AgentDanger + WallDanger with the given ``resolve``/``choose`` (and the
    optional separation), max_accel 3 — kept for comparison (notebooks 05 and 06).
    ``field``: a :class:`NavField` replaces the straight-line interest (Arrive) by
    FollowField (agent i reads field ``which[i]``; half-cosine, slowing within 1 m,
    string-pulled over ``look_ahead_field``), so agents find their way round walls;
    ``field_ends_at_target=True`` when field ``which[i]`` ends at ``goals[i]``
    (:func:`crowd_steering`'s, for the velocity dangers). ``detour=True`` builds a field's
    steering for a :class:`~contextsteer.Detour` (``detour_capacity``; a bool, checked).
    ``creep``, ``rotate``: see :func:`crowd_steering` (velocity danger only); with
    ``danger="velocity"``, ``rotate`` and 16 slots the simulation takes
    :func:`crowd_slots`. ``decision_validity``: Lewis's time slicing
    (:class:`Simulation`'s ``decision_validity``; None: off), which every crowd scenario
    passes through (``contextsteer run hallway -p decision_validity=0.25``). ``changes``:
    some :class:`CollisionDanger` options over the ``danger``'s set (``crowd_steering``'s
    ``changes``; with ``"plain"`` and ``"counterflow"`` added to their options), which
    every scenario built on velocity-space danger passes through (``contextsteer run
    hallway -p changes.make_way=0``); refused with ``"agent"``.
    """
    agents_mod, beh, motion, _, simulation, steering, _ = _modules()
    starts = np.asarray(starts, dtype=np.float64)
    goals = np.asarray(goals, dtype=np.float64)
    n = len(starts)
    rng = _rng(seed)
    d = goals - starts
    agents = agents_mod.Agents(n, slots=slots, seed=seed)
    if danger not in _DANGERS:
        raise ValueError(
            f"danger must be 'velocity', 'counterflow', 'smooth', 'plain' or 'agent', got {danger!r}"
        )
    velocity = danger != "agent"
    agents.add(
        starts,
        heading=np.arctan2(d[:, 1], d[:, 0]),
        radius=radius,
        max_speed=speed * rng.uniform(0.9, 1.1, n),
        max_accel=6.0 if velocity else 3.0,
        target=goals,
    )
    if velocity:
        st = crowd_steering(
            walls=world is not None,
            extra=extra,
            combine=combine,
            field=field,
            which=which,
            look_ahead_field=look_ahead_field,
            field_ends_at_target=field_ends_at_target and field is not None,
            detour_capacity=n if detour and field is not None else None,
            creep=creep,
            rotate=rotate,
            **_danger_steering(danger, changes),
        )
    else:
        if changes is not None:
            raise ValueError(
                "changes are CollisionDanger options; danger='agent' steers with "
                "AgentDanger and takes none"
            )
        # A navigation field leads this configuration too (FollowField in place of Seek,
        # read as crowd_steering reads it), so a guide= means the same for every danger.
        seek = (
            beh.FollowField(field, which=which, look_ahead=look_ahead_field)
            if field is not None
            else beh.Seek()
        )
        rules = [
            seek,
            beh.AgentDanger(radius=danger_radius, predictive=True, horizon=horizon),
            *extra,
        ]
        if world is not None:
            rules.append(beh.WallDanger(look_ahead=look_ahead, falloff="linear"))
        if separation:
            rules.append(beh.Separation(radius=1.0, weight=0.5, groups="all"))
        st = steering.Steering(rules, combine=combine, resolve=resolve, choose=choose)
    sim_slots: Any = crowd_slots_for(slots, danger=danger, rotate=rotate)
    sim = simulation.Simulation(
        world,
        agents,
        st,
        motion=motion.Accel(),
        slots=sim_slots,
        stuck_distance=0.1,
        stuck_time=3.0,
        decision_validity=decision_validity,
    )
    sim.configure_metrics(goal_radius=GOAL_RADIUS)
    return sim


def _jitter(rng, n, scale):
    return rng.uniform(-scale, scale, (n, 2))


def _two_groups(n: int) -> tuple[int, int]:
    return (n + 1) // 2, n // 2


@scenario(
    "oncoming",
    steps=900,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="SteerSuite: two groups walk head-on into each other in open space",
)
@_parameters(
    "agents : int, default 2\n    Number of agents, split into two groups.",
    _SLOTS,
    _SEED,
    "distance : float, default 16\n    Distance between the two groups' front rows (m, > 0).",
    _DANGER,
    _DV,
    _CH,
)
def oncoming(
    *,
    agents: int = 2,
    slots: int = 16,
    seed: int = 0,
    distance: float = 16.0,
    danger: str = "velocity",
    decision_validity: float | None = None,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """Two groups ``distance`` apart walk straight at each other and must pass.

    Metrics: the common set with time to goal (goal radius 0.5); ``crowd_report``.

    """
    n = _count("agents", agents)
    a, b = _two_groups(n)
    rng = _rng(seed)
    distance = _size("oncoming", "distance", distance, 0.0)
    ya = (np.arange(a) - (a - 1) / 2) * 1.0
    yb = (np.arange(b) - (b - 1) / 2) * 1.0
    left = np.c_[np.full(a, -distance / 2) - 1.0 * (np.arange(a) % 2), ya]
    right = np.c_[np.full(b, distance / 2) + 1.0 * (np.arange(b) % 2), yb]
    starts = _apart(
        "oncoming", f"distance={distance:g}", np.vstack([left, right]) + _jitter(rng, n, 0.05)
    )
    goals = np.vstack([left * [-1, 1], right * [-1, 1]])
    return _crowd(
        None,
        starts,
        goals,
        slots=slots,
        seed=seed,
        danger=danger,
        decision_validity=decision_validity,
        changes=changes,
    )


@scenario(
    "crossing",
    steps=900,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="SteerSuite: two groups cross at right angles",
)
@_parameters(
    "agents : int, default 2\n    Number of agents, split into two groups.",
    _SLOTS,
    _SEED,
    "distance : float, default 16\n    Each group starts ``distance``/2 from the crossing point (m, > 0).",
    _DANGER,
    _DV,
    _CH,
)
def crossing(
    *,
    agents: int = 2,
    slots: int = 16,
    seed: int = 0,
    distance: float = 16.0,
    danger: str = "velocity",
    decision_validity: float | None = None,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """One group walks along +x, the other along +y; their paths cross at the origin.

    Metrics: the common set with time to goal; ``crowd_report``.

    """
    n = _count("agents", agents)
    a, b = _two_groups(n)
    rng = _rng(seed)
    distance = _size("crossing", "distance", distance, 0.0)
    h = distance / 2
    sa = np.c_[-h - 1.2 * (np.arange(a) // 2), 0.8 * (np.arange(a) % 2)]
    sb = np.c_[0.8 * (np.arange(b) % 2), -h - 1.2 * (np.arange(b) // 2)]
    starts = _apart(
        "crossing", f"distance={distance:g}", np.vstack([sa, sb]) + _jitter(rng, n, 0.05)
    )
    goals = np.vstack([sa + [2 * h + 2, 0], sb + [0, 2 * h + 2]])
    return _crowd(
        None,
        starts,
        goals,
        slots=slots,
        seed=seed,
        danger=danger,
        decision_validity=decision_validity,
        changes=changes,
    )


@scenario(
    "hallway",
    steps=1200,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="SteerSuite: two-way traffic in a hallway",
)
@_parameters(
    "agents : int, default 20\n    Number of agents, half walking each way (at most what the start blocks hold).",
    _SLOTS,
    _SEED,
    "length : float, default 24\n    Hallway length (m, > 0).",
    "width : float, default 4\n    Hallway width (m, > 1).",
    _DANGER,
    _DV,
    _CH,
)
def hallway(
    *,
    agents: int = 20,
    slots: int = 16,
    seed: int = 0,
    length: float = 24.0,
    width: float = 4.0,
    danger: str = "velocity",
    decision_validity: float | None = None,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """Half the agents walk right, half left, in a hallway ``width`` wide.

    Each group's goals lie at the far end, 1.5 m apart where the spread finds room and
    never closer than 1.4 m while a 7 m block there holds them (14 a side at the default
    width): agents stand at their goals, and goals as close as the starts walled late
    arrivals out of theirs.
    Metrics: the common set with time to goal; ``crowd_report``.

    """
    length = _size("hallway", "length", length, 0.0)
    # A body (0.6 m) and 5 cm on either side must fit across.
    # Starts are drawn 0.5 m inside each wall: the corridor needs more than 1 m.
    width = _size("hallway", "width", width, 1.0)
    _, _, _, _, _, _, world_mod = _modules()
    # Each group starts in a 4 m × (width − 1) m block, 0.7 m apart: hexagonal packing
    # holds about 2 · 4 · (width − 1) / (0.7² · 0.87) agents.
    cap = min(MAX_SCENARIO_AGENTS, max(2, int(2 * 4 * (width - 1) / (0.7**2 * 0.87))))
    n = _count("agents", agents, high=cap, room=f"the hallway's start blocks hold {cap}")
    a, b = _two_groups(n)
    rng = _rng(seed)
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
    # Kept 5 cm clear of the walls (radius 0.3): unclipped, the sweeps pushed starts into
    # them, 0.06 m deep at 20 agents on some seeds and nearly a radius at 55.
    starts = _spread(starts, 0.7, low=[-np.inf, -w + 0.35], high=[np.inf, w - 0.35])
    # Goals: the starts mirrored across the hallway's middle, spread to 1.5 m apart in a
    # 7 m block at the far end (3 m of it towards the middle), and no closer than 1.4 m
    # while the block holds that (14 a side at the default width; a body width, 0.6 m,
    # beyond). Arrived agents stand at their goals, and goals as close as the starts
    # (0.7 m) walled late arrivals out of theirs (benchmarks/scenario_seeds.py).
    mirrored = starts * [-1.0, 1.0]
    goals = np.empty_like(starts)
    yh = max(w - 0.7, 0.0)  # 0.7 m from the walls; one line down a narrow hallway
    for group, sign in ((slice(0, a), 1.0), (slice(a, n), -1.0)):
        low, high = sorted((sign * (h - 3.0), sign * (h + 4.0)))
        goals[group] = _standing_goals("hallway", mirrored[group], [low, -yh], [high, yh], rng)
    return _crowd(
        world,
        starts,
        goals,
        slots=slots,
        seed=seed,
        danger=danger,
        decision_validity=decision_validity,
        changes=changes,
    )


def _spread(
    points: np.ndarray,
    spacing: float,
    iterations: int = 50,
    low: ArrayLike | None = None,
    high: ArrayLike | None = None,
) -> np.ndarray:
    """Push random start points apart to at least ``spacing`` (a few relaxation sweeps).

    Each sweep moves every point by half the overlap with each neighbour closer than
    ``spacing`` (Jacobi, in float64, neighbours summed in index order); the neighbours come
    from the C++ grid query, so a sweep costs O(N), not O(N²). With ``low`` and ``high``
    every sweep ends clipped to that box, so points pushed towards a wall stay clear of it
    and the rest make room among themselves.
    """
    from .agents import neighbours

    p = np.array(points, dtype=np.float64)
    n = len(p)
    if n < 2:
        return p
    for _ in range(iterations):
        # Candidates from the float32 grid with a little slack; the exact test in float64.
        idx, count = neighbours(
            p.astype(np.float32), radius=spacing * (1 + 1e-5) + 1e-6, max_neighbours=min(n - 1, 64)
        )
        rows = np.repeat(np.arange(n), count)
        cols = idx[idx >= 0]
        order = np.lexsort((cols, rows))  # per point, neighbours by index
        rows, cols = rows[order], cols[order]
        d = p[rows] - p[cols]
        dist = np.linalg.norm(d, axis=1)
        push = np.clip(spacing - dist, 0, None) / 2
        if not push.any():
            break
        step = np.zeros_like(p)
        np.add.at(step, rows, d / np.where(dist > 0, dist, 1e9)[:, None] * push[:, None])
        p += step
        if low is not None or high is not None:
            p = np.clip(p, low, high)
    return p


def _lattice(low: Sequence[float], high: Sequence[float], spacing: float) -> tuple[int, int, int]:
    """The hexagonal lattice ``spacing`` apart inside the box [low, high] (rows ``spacing``
    · √3/2 apart from ``low``, odd rows shifted by half a spacing): its row count and the
    points in an even and in an odd row."""
    (x0, y0), (x1, y1) = low, high
    if x1 < x0 or y1 < y0:
        return 0, 0, 0
    rows = math.floor((y1 - y0) / (spacing * math.sqrt(3) / 2) + 1e-9) + 1
    even = math.floor((x1 - x0) / spacing + 1e-9) + 1
    odd = math.floor((x1 - x0 - spacing / 2) / spacing + 1e-9) + 1 if x1 - x0 >= spacing / 2 else 0
    return rows, even, odd


def _lattice_size(low: Sequence[float], high: Sequence[float], spacing: float) -> int:
    """How many points the lattice of :func:`_lattice` holds."""
    rows, even, odd = _lattice(low, high, spacing)
    return (rows + 1) // 2 * even + rows // 2 * odd


def _lattice_points(
    low: Sequence[float], high: Sequence[float], spacing: float, index: np.ndarray
) -> np.ndarray:
    """Points ``index`` (row by row, from ``low``) of the lattice of :func:`_lattice`,
    without building the rest."""
    rows, even, odd = _lattice(low, high, spacing)
    pair, rest = np.divmod(np.asarray(index, dtype=np.int64), even + odd)
    second = rest >= even
    row = 2 * pair + second
    col = np.where(second, rest - even, rest)
    x = low[0] + col * spacing + np.where(second, spacing / 2, 0.0)
    y = low[1] + row * (spacing * math.sqrt(3) / 2)
    return np.c_[x, y]


def _overlapping(points: np.ndarray, diameter: float) -> float | None:
    """The smallest centre distance below ``diameter`` among ``points``, else None."""
    from .agents import neighbours

    if len(points) < 2:
        return None
    idx, count = neighbours(points.astype(np.float32), radius=diameter, max_neighbours=1)
    rows = np.flatnonzero(count)
    if not rows.size:
        return None
    d = np.linalg.norm(points[rows] - points[idx[rows, 0]], axis=1)
    close = d[d < diameter]
    return float(close.min()) if close.size else None


def _starts(
    scenario: str,
    points: np.ndarray,
    spacing: float,
    low: Sequence[float],
    high: Sequence[float],
    rng: np.random.Generator,
    *,
    iterations: int = 50,
    diameter: float = 0.6,
) -> np.ndarray:
    """Start points from random ``points`` in the box [low, high], no two closer than
    ``diameter`` (the bodies of the crowd scenarios' agents, radius 0.3 m, never start
    inside each other): pushed apart to ``spacing`` (:func:`_spread`) and clipped to the
    box; where that leaves bodies overlapping (a crowded box), spread on for up to 200
    more sweeps, and failing that, a random choice of the points of the widest hexagonal
    lattice (at most ``spacing``, at least ``diameter`` apart) that holds them all. More
    points than the lattice ``diameter`` apart holds raise a ``ValueError`` naming
    ``agents``. The rng is drawn from only when the spread alone fails, so every start that
    spreads cleanly is what it always was."""
    n = len(points)
    room = _lattice_size(low, high, diameter)
    if n > room:
        raise ValueError(
            f"{scenario}: agents must be at most {room:,}, what the start area holds "
            f"with bodies {diameter:g} m wide, got {n:,}"
        )
    p = np.clip(_spread(points, spacing, iterations), low, high)
    if _overlapping(p, diameter) is None:
        return p
    p = _spread(p, spacing, 200, low, high)
    if _overlapping(p, diameter) is None:
        return p
    # The widest lattice spacing in [diameter, spacing] that holds n (bisection; the
    # lattice at `diameter` does).
    lo, hi = diameter, max(spacing, diameter)
    if _lattice_size(low, high, hi) >= n:
        lo = hi
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _lattice_size(low, high, mid) >= n else (lo, mid)
    count = _lattice_size(low, high, lo)
    return _lattice_points(low, high, lo, np.sort(rng.choice(count, n, replace=False)))


def _standing_goals(
    scenario: str,
    points: np.ndarray,
    low: Sequence[float],
    high: Sequence[float],
    rng: np.random.Generator,
) -> np.ndarray:
    """Goals for agents that stand at them once arrived: ``points`` spread to 1.5 m apart
    in the box [low, high] (:func:`_starts`), and no two closer than 1.4 m while the box's
    lattice holds them at that, a body width (0.6 m) beyond. Goals closer than a body and
    its margins to their neighbours wall a late arrival out of its own for good
    (``benchmarks/scenario_seeds.py``: the bottleneck's goals drawn anywhere stranded an
    agent on 20 seeds of 60, 1.2 m apart on 5, 1.5 m apart on none)."""
    least = 1.4 if _lattice_size(low, high, 1.4) >= len(points) else 0.6
    return _starts(scenario, points, 1.5, low, high, rng, diameter=least)


def _goal_fields(world: World, goals: np.ndarray) -> NavField:
    """One navigation field per agent, to its own goal (a 0.35 m body's clearance, 0.15 m
    cells): what the crowd cases with walls between start and goal follow. Each field
    ends at its agent's target, so they pass ``field_ends_at_target=True`` to
    :func:`crowd_steering` (``past_target`` stays on)."""
    from .nav import NavField

    return NavField(world, [np.asarray(g, dtype=np.float32) for g in goals], radius=0.35, cell=0.15)


def _apart(scenario: str, what: str, starts: np.ndarray, diameter: float = 0.6) -> np.ndarray:
    """``starts`` unchanged, or a ValueError naming the parameter ``what`` that put two
    bodies (``diameter`` wide) inside each other."""
    # Bodies apart hold disjoint discs of radius diameter / 2 inside the bounding box grown
    # by it: more bodies than that area holds overlap for certain, and are refused before
    # the neighbour search, which a million centres packed within a metre would keep busy.
    if len(starts) > 1:
        (x0, y0), (x1, y1) = starts.min(axis=0), starts.max(axis=0)
        room = (x1 - x0 + diameter) * (y1 - y0 + diameter) / (math.pi * diameter**2 / 4)
        if len(starts) > room:
            raise ValueError(
                f"{scenario}: {what} starts agents inside each other ({len(starts):,} of them "
                f"where at most {int(room):,} bodies {diameter:g} m wide fit); give a larger "
                f"{what.split('=')[0]}"
            )
    d = _overlapping(starts, diameter)
    if d is not None:
        raise ValueError(
            f"{scenario}: {what} starts agents inside each other (centres {d:.2f} m apart, "
            f"bodies {diameter:g} m wide); give a larger {what.split('=')[0]}"
        )
    return starts


def _nav_nodes(world: World, cell: float) -> int:
    """About how many nodes a NavField of ``cell`` over ``world`` has (its grid covers the
    world's bounds grown by the default 1 m margin), so a scenario can refuse a size that
    NavField would, naming its own parameters."""
    bounds = world.bounds
    if bounds is None:
        return 0
    x0, y0, x1, y1 = bounds
    return math.ceil((x1 - x0 + 2) / cell + 1) * math.ceil((y1 - y0 + 2) / cell + 1)


def _wall_with_gap(world: World, x: float, half_height: float, gap: float) -> None:
    g = gap / 2
    world.add_segments([[x, -half_height, x, -g], [x, g, x, half_height]])


@scenario(
    "bottleneck",
    steps=1500,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="SteerSuite: a crowd squeezes through a narrow gap in a wall",
)
@_parameters(
    "agents : int, default 20\n    Number of agents (at most 120).",
    _SLOTS,
    _SEED,
    "gap : float, default 1.4\n    Width of the opening in the wall (m, in (0, 12)).",
    'guide : {"field", "path", "none"}, default "field"\n'
    "    How agents find the gap: a navigation field each, a path through it, or none.",
    _DANGER,
    _DV,
    _DET,
    _CH,
)
def bottleneck(
    *,
    agents: int = 20,
    slots: int = 16,
    seed: int = 0,
    gap: float = 1.4,
    guide: str = "field",
    danger: str = "velocity",
    decision_validity: float | None = None,
    detour: bool = False,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """A crowd in a room walks to goals beyond a wall with a ``gap`` wide opening.

    Local steering needs a plan to find the opening. ``guide="field"`` (default): every
    agent follows its own navigation field (:class:`NavField`, one per goal, fast
    marching round the inflated walls) with :class:`FollowField`, string-pulled over
    2 m, as ``doorway`` does. ``guide="path"``: the guide of before, a path through the
    gap followed in ``mode="seek"`` (weight 0.5) beside the goal's interest. Over seeds
    0-199, with the goals drawn anywhere as they then were, it stranded one agent of 20
    on 61 seeds, most pacing along the wall beside the gap for good
    (``benchmarks/scenario_seeds.py``); the field, with the goals spread, gets everyone
    home on all 200.
    ``guide="none"``: plain local steering. Goals: spread to 1.5 m apart, at least
    1.4 m while the room beyond the wall holds that (54 agents).
    Danger: :func:`crowd_steering`'s ``danger`` (``danger="agent"``: the earlier
    AgentDanger configuration, with separation, led by the same guide).
    ``detour=True``: the field's steering is built so that a :class:`~contextsteer.Detour`
    on the agents' fields can lead them (``crowd_steering(detour_capacity=N)``; what
    ``contextsteer run bottleneck --detour`` uses); without a detour it steers the same.
    With ``danger="velocity"`` and ``guide="field"`` its ``changes`` go over
    :data:`QUEUE_CHANGES` (``lateral_cost`` 0.6: an agent held up by the queue waits on
    course; without the field it would wait against the wall for good).
    Metrics: the common set with time to goal; ``crowd_report``.

    """
    _, _, _, _, _, _, world_mod = _modules()
    gap = _size("bottleneck", "gap", gap, 0.0, 12.0)  # the room is 12 m high
    detour = _flag("bottleneck", "detour", detour)
    if guide not in ("field", "path", "none"):
        raise ValueError(f"guide must be 'field', 'path' or 'none', got {guide!r}")
    # The crowd starts in an 8 m × 9 m area, 0.8 m apart (hexagonal packing: ~130).
    n = _count("agents", agents, high=120, room="the start area holds 120 at 0.8 m spacing")
    rng = _rng(seed)
    world = world_mod.World()
    world.add_polyline([[-12, -6], [12, -6], [12, 6], [-12, 6]], closed=True)
    _wall_with_gap(world, 0.0, 6.0, gap)
    starts = _spread(np.c_[rng.uniform(-10, -2, n), rng.uniform(-4.5, 4.5, n)], 0.8)
    starts = np.clip(starts, [-11.4, -5.4], [-1.0, 5.4])
    # Goals to stand at in the room beyond the wall, 1 m clear of its walls (1.4 m apart up
    # to 54 agents). A box reaching to 0.6 m from them left agents 0.65 m short of goals
    # at its edge.
    goals = _standing_goals(
        "bottleneck",
        np.c_[rng.uniform(6, 10, n), rng.uniform(-4, 4, n)],
        [3.0, -5.0],
        [11.0, 5.0],
        rng,
    )
    # Context steering is local: without a plan, agents press against the wall beside the
    # gap (measured: half of them never arrive).
    _, beh, _, path_mod, _, _, _ = _modules()
    extra: tuple[Behaviour, ...] = ()
    field = None
    if guide == "path":
        # A path through the gap, followed in "seek" mode beside the goal's interest: most
        # get through, but an agent beside the gap can pace along the wall for good
        # between the two (the docstring's seeds).
        route = path_mod.Path([[-12, 0], [-1, 0], [1, 0], [6, 0]], closed=False)
        extra = (beh.FollowPath(route, look_ahead=1.0, mode="seek", weight=0.5),)
    elif guide == "field":
        field = _goal_fields(world, goals)
    return _crowd(
        world,
        starts,
        goals,
        slots=slots,
        seed=seed,
        look_ahead=1.0,
        extra=extra,
        separation=True,
        field=field,
        which=np.arange(n, dtype=np.int32),
        look_ahead_field=2.0,
        field_ends_at_target=True,  # each agent's field ends at its goal
        detour=detour,
        danger=danger,
        decision_validity=decision_validity,
        changes=_queue_changes(danger, changes, guide),
    )


@scenario(
    "doorway",
    steps=1500,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="SteerSuite: two groups swap rooms through one doorway",
)
@_parameters(
    "agents : int, default 10\n    Number of agents (at most 140), half on each side.",
    _SLOTS,
    _SEED,
    "door : float, default 1.8\n    Width of the doorway (m, in (0, 10)).",
    'guide : {"field", "none"}, default "field"\n    A navigation field each, or plain local steering.',
    _DANGER,
    _DV,
    _DET,
    _CH,
)
def doorway(
    *,
    agents: int = 10,
    slots: int = 16,
    seed: int = 0,
    door: float = 1.8,
    guide: str = "field",
    danger: str = "velocity",
    decision_validity: float | None = None,
    detour: bool = False,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """Two groups on either side of a wall swap sides through a ``door`` wide doorway.

    ``guide="field"`` (default): every agent follows its own navigation field
    (:class:`NavField`, one per goal, fast marching round the inflated walls) with
    :class:`FollowField`, string-pulled over 2 m. Measured over seeds 0-7 in the default
    50 s: with 10, 20 and 40 agents everyone arrives in every run.
    ``guide="none"``: plain local steering towards the goal — 90-100 % arrive (10 agents,
    seeds 0-7); the others press against the wall beside the door.
    ``detour=True``: as the bottleneck's (``contextsteer run doorway --detour``).
    With ``danger="velocity"`` and ``guide="field"`` its ``changes`` go over
    :data:`QUEUE_CHANGES`, as the bottleneck's do.
    Metrics: the common set with time to goal; ``crowd_report``.

    """
    _, _, _, _, _, _, world_mod = _modules()
    door = _size("doorway", "door", door, 0.0, 10.0)  # the wall is 10 m long
    detour = _flag("doorway", "detour", detour)
    # Each group starts in an 8.5 m × 9 m area, 1.2 m apart where the spread finds room
    # (a hexagonal packing holds 68 a side at 1.2 m, 75 at 1.15 m).
    n = _count("agents", agents, high=140, room="70 a room keeps 1.15 m between starts")
    a, b = _two_groups(n)
    rng = _rng(seed)
    world = world_mod.World()
    world.add_polyline([[-10, -5], [10, -5], [10, 5], [-10, 5]], closed=True)
    _wall_with_gap(world, 0.0, 5.0, door)
    # Starts (and so goals, their mirror images) 1.2 m apart: two bodies of 0.6 m leave
    # room for a third between them, so the last to arrive can reach a goal among those
    # already standing at theirs (at 0.8 m, measured: one agent in ten to forty, over
    # eight seeds, stayed walled out 2 m from its goal).
    sa = _starts(
        "doorway",
        np.c_[rng.uniform(-8, -2, a), rng.uniform(-3.5, 3.5, a)],
        1.2,
        [-9.5, -4.5],
        [-1.0, 4.5],
        rng,
    )
    sb = _starts(
        "doorway",
        np.c_[rng.uniform(2, 8, b), rng.uniform(-3.5, 3.5, b)],
        1.2,
        [1.0, -4.5],
        [9.5, 4.5],
        rng,
    )
    starts = np.vstack([sa, sb])
    goals = np.vstack([sa * [-1, 1], sb * [-1, 1]])
    if guide not in ("field", "none"):
        raise ValueError(f"guide must be 'field' or 'none', got {guide!r}")
    field = None
    if guide == "field":
        field = _goal_fields(world, goals)
    return _crowd(
        world,
        starts,
        goals,
        slots=slots,
        seed=seed,
        look_ahead=1.2,
        separation=True,
        field=field,
        which=np.arange(n, dtype=np.int32),
        look_ahead_field=2.0,
        field_ends_at_target=True,  # each agent's field ends at its goal
        detour=detour,
        danger=danger,
        decision_validity=decision_validity,
        changes=_queue_changes(danger, changes, guide),
    )


def maze_walls(cells: int = 6, size: float = 3.0, seed: int = 0) -> np.ndarray:
    """Walls (M, 4) of a perfect maze of ``cells`` × ``cells`` square cells of ``size``
    (a seeded depth-first carve), with its entrance on the left of the bottom row and its
    exit on the right of the top row left open."""
    # One cell would be a room with no inside wall (a zero-length segment).
    n = _count("cells", cells, 2, 200)
    size = _size("maze", "size", size, 0.0)
    rng = _rng(seed)
    seen = np.zeros((n, n), bool)
    # Open walls: right[i, j] between (i, j) and (i+1, j); up[i, j] between (i, j), (i, j+1).
    right = np.zeros((n, n), bool)
    up = np.zeros((n, n), bool)
    stack = [(0, 0)]
    seen[0, 0] = True
    while stack:
        i, j = stack[-1]
        nbrs = [
            (i + di, j + dj)
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= i + di < n and 0 <= j + dj < n and not seen[i + di, j + dj]
        ]
        if not nbrs:
            stack.pop()
            continue
        a, b = nbrs[rng.integers(len(nbrs))]
        if a != i:
            right[min(a, i), j] = True
        else:
            up[i, min(b, j)] = True
        seen[a, b] = True
        stack.append((a, b))
    walls = []
    for i in range(n):
        for j in range(n):
            x, y = i * size, j * size
            if i < n - 1 and not right[i, j]:
                walls.append([x + size, y, x + size, y + size])
            if j < n - 1 and not up[i, j]:
                walls.append([x, y + size, x + size, y + size])
    L = n * size
    walls += [[0, 0, L, 0], [0, L, L, L], [L, 0, L, L - size], [0, size, 0, L]]
    return np.asarray(walls, dtype=np.float64)


#: Most node-fields (grid nodes × agents, each agent on its own field) `maze` builds.
MAZE_NODE_BUDGET = 2**28


@scenario(
    "maze",
    steps=2400,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="A crowd crosses a seeded maze to its exit (NavField + FollowField)",
)
@_parameters(
    "agents : int, default 12\n    Number of agents (at most 40, and what the entrance lobby holds).",
    "slots : int, default 16\n    Slots per agent (a regular ring unless 16: :func:`crowd_slots`).",
    _SEED + " The maze is carved from it too.",
    "cells : int, default 6\n    Cells on a side (2 to 200).",
    "size : float, default 3\n    Cell size (m, > 1).",
    _DV,
    _DET,
    _CH_VELOCITY,
)
def maze(
    *,
    agents: int = 12,
    slots: int = 16,
    seed: int = 0,
    cells: int = 6,
    size: float = 3.0,
    decision_validity: float | None = None,
    detour: bool = False,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """``agents`` enter a perfect maze of ``cells`` × ``cells`` cells of ``size`` m at the
    bottom left and leave it at the top right, to goals in an open yard beyond the exit
    (10 m × 14 m).

    Interest: :class:`FollowField` of each agent's field to its own goal (string pulled
    over 2 m; at most 40 agents, and no more than the entrance lobby holds, 27 at
    ``size=2``; the fields together at most :data:`MAZE_NODE_BUDGET` grid nodes, about
    3 GiB); danger:
    :class:`CollisionDanger`. Local steering alone would stop at the first dead end.
    ``detour=True``: as the bottleneck's (``contextsteer run maze --detour``).
    Metrics: the common set with time to goal; ``crowd_report``.

    """
    _, _, _, _, _, _, world_mod = _modules()

    n = _count("agents", agents, high=40)  # and _starts: what the lobby holds
    # Starts are drawn 0.5 m inside the lobby, which is one cell high.
    size = _size("maze", "size", size, 1.0)
    detour = _flag("maze", "detour", detour)
    rng = _rng(seed)
    walls = maze_walls(cells, size, seed)
    L = cells * size
    world = world_mod.World()
    world.add_segments(walls)
    # Entrance lobby on the left, yard on the right.
    world.add_polyline([[0, size], [-6, size], [-6, 0], [0, 0]])
    # The yard (10 m x 14 m beyond the exit) leaves room to stand: goals 1.2 m apart, so
    # late arrivals can walk between those standing at theirs.
    world.add_polyline(
        [[L, L - size], [L, L - 10], [L + 10, L - 10], [L + 10, L + 4], [L, L + 4], [L, L]]
    )
    starts = _starts(
        "maze",
        np.c_[rng.uniform(-5.5, -0.5, n), rng.uniform(0.5, size - 0.5, n)],
        0.7,
        [-5.6, 0.4],
        [-0.4, size - 0.4],
        rng,
    )
    goals = np.c_[rng.uniform(L + 2, L + 9, n), rng.uniform(L - 9, L + 3, n)]
    goals = np.clip(_spread(goals, 1.2), [L + 1.5, L - 9.4], [L + 9.4, L + 3.4])
    # One field per agent, to its own goal (small fields: ~40k nodes each at the defaults).
    # The grid covers the world's bounds grown by NavField's 1 m margin, at 0.15 m; a
    # field is capped at 2**24 nodes, and the scenario's fields together at
    # MAZE_NODE_BUDGET node-fields (~12 bytes each).
    nodes = _nav_nodes(world, 0.15)
    if nodes > 2**24 or n * nodes > MAZE_NODE_BUDGET:
        raise ValueError(
            f"maze: {cells} cells of {size:g} m make a {L:g} m maze whose navigation grid at "
            f"0.15 m has {nodes:,} nodes; with one field per agent, {n} agents need "
            f"{n * nodes:,} node-fields (at most 2**24 nodes a field and "
            f"{MAZE_NODE_BUDGET:,} in all, about {MAZE_NODE_BUDGET * 12 / 2**30:.0f} GiB): "
            "give fewer or smaller cells, or fewer agents"
        )
    field = _goal_fields(world, goals)
    which = np.arange(n, dtype=np.int32)
    return _crowd(
        world,
        starts,
        goals,
        slots=slots,
        seed=seed,
        field=field,
        which=which,
        look_ahead_field=2.0,
        field_ends_at_target=True,  # each agent's field ends at its goal
        detour=detour,
        decision_validity=decision_validity,
        changes=changes,
    )


def evacuation_room(
    exits: int = 4,
    width: float = 30.0,
    depth: float = 20.0,
    exit_width: float = 1.0,
    outside: float = 6.0,
) -> tuple[World, np.ndarray]:
    """The RiMEA test 9 room: ``width`` × ``depth`` m with ``exits`` (1, 2 or 4) exits of
    ``exit_width`` m, two on each long wall at x = width/4 and 3·width/4 (with 2 exits: the
    two on the bottom wall; with 1: the bottom wall's at x = width/4), and a corridor
    ``outside`` m deep beyond each long wall.

    Returns
    -------
    world : World
    exit_lines : ndarray (E, 4)
        The far edges of the outside corridors in front of the exits (goal segments).
    """
    _, _, _, _, _, _, world_mod = _modules()
    if isinstance(exits, bool) or exits not in (1, 2, 4):
        raise ValueError(f"exits must be 1, 2 or 4, got {exits!r}")
    width = _size("evacuation", "width", width, 0.0)
    depth = _size("evacuation", "depth", depth, 0.0)
    # Two exits side by side on a wall, each within its half.
    exit_width = _size("evacuation", "exit_width", exit_width, 0.0, width / 2)
    outside = _size("evacuation", "outside", outside, 0.0)
    w, d, e = float(width), float(depth), float(exit_width) / 2
    xs = [w / 4, 3 * w / 4]
    bottom = xs if exits >= 2 else xs[:1]
    top = xs if exits == 4 else []
    world = world_mod.World()

    def wall(y, openings):
        x0 = 0.0
        for x in sorted(openings):
            world.add_segments([[x0, y, x - e, y]])
            x0 = x + e
        world.add_segments([[x0, y, w, y]])

    wall(0.0, bottom)
    wall(d, top)
    world.add_segments([[0, 0, 0, d], [w, 0, w, d]])
    lines = []
    if bottom:
        world.add_polyline([[0, 0], [0, -outside], [w, -outside], [w, 0]])
        lines += [[x - 3, -outside + 0.5, x + 3, -outside + 0.5] for x in bottom]
    if top:
        world.add_polyline([[0, d], [0, d + outside], [w, d + outside], [w, d]])
        lines += [[x - 3, d + outside - 0.5, x + 3, d + outside - 0.5] for x in top]
    return world, np.asarray(lines, dtype=np.float64)


def evacuation_report(sim: Simulation) -> dict:
    """Evacuation metrics: agents still in the room, and the crowd metrics."""
    d = float(getattr(sim, "_room_depth", 20.0))
    p = np.asarray(sim.agents.position)[np.asarray(sim.agents.alive, bool)]
    inside = int(((p[:, 1] > 0) & (p[:, 1] < d)).sum())
    return {"in_room": inside, **crowd_report(sim)}


@scenario(
    "evacuation",
    steps=3600,
    dt=1.0 / 30.0,
    report=evacuation_report,
    description="RiMEA test 9 room: a crowd leaves a 30 m x 20 m room through 1 m exits "
    "(NavField + FollowField; CollisionDanger with creep speeds)",
)
@_parameters(
    "agents : int, default 200\n    Number of agents.",
    _SLOTS,
    _SEED,
    "exits : {1, 2, 4}, default 4\n    Exits of 1 m in the room's long walls.",
    "width : float, default 30\n    Room width (m, > 2).",
    "depth : float, default 20\n    Room depth (m, > 1).",
    "creep : bool, default True\n    ``CollisionDanger(creep=True)``: continuous speeds below the first unsafe level.",
    _DANGER_V,
    _DV,
    _ROT,
    _CH,
)
def evacuation(
    *,
    agents: int = 200,
    slots: int = 16,
    seed: int = 0,
    exits: int = 4,
    width: float = 30.0,
    depth: float = 20.0,
    creep: bool = True,
    danger: str = "velocity",
    decision_validity: float | None = None,
    rotate: bool = True,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """``agents`` spread over a ``width`` × ``depth`` room walk out through ``exits`` exits
    of 1 m (RiMEA test 9's room) into corridors beyond the walls.

    Interest: :class:`FollowField` of one field whose goals are lines in the outside
    corridors in front of every exit (each agent takes its nearest exit by walking
    distance); danger: :class:`CollisionDanger` with ``creep`` (continuous speeds below
    the first unsafe level; ``creep=False`` turns them off, and then, with
    ``danger="plain"``, the crowd pressing on an exit forms an arch in which every agent's
    only safe candidate is standing, and the room never empties; :data:`CROWD`'s
    refinements clear a 100-agent arch without creep too). ``danger``: ``"velocity"``
    (:func:`crowd_steering`'s tuned options), ``"counterflow"``, ``"smooth"`` or ``"plain"``, as
    in the other crowd scenarios; ``rotate``: see :func:`crowd_steering` (the arch above forms with
    world-frame slots, ``rotate=False``).
    Metrics: ``evacuation_report`` (agents left in the room) and the crowd metrics (each
    agent's goal is its field goal line).

    """
    n = _count("agents", agents)
    _velocity_danger(danger)
    creep, rotate = _flag("evacuation", "creep", creep), _flag("evacuation", "rotate", rotate)
    from .nav import NavField

    # Starts are drawn 0.5 m inside the walls, and the exits (1 m) must fit on a wall half.
    width = _size("evacuation", "width", width, 2.0)
    depth = _size("evacuation", "depth", depth, 1.0)
    world, lines = evacuation_room(exits, width, depth)
    rng = _rng(seed)
    starts = _starts(
        "evacuation",
        np.c_[rng.uniform(0.5, width - 0.5, n), rng.uniform(0.5, depth - 0.5, n)],
        0.65,
        [0.4, 0.4],
        [width - 0.4, depth - 0.4],
        rng,
        iterations=20 if n > 400 else 50,
    )
    nodes = _nav_nodes(world, 0.15)
    if nodes > 2**24:
        raise ValueError(
            f"evacuation: a {width:g} m × {depth:g} m room's navigation grid at 0.15 m has "
            f"{nodes:,} nodes, more than a field takes (2**24): give a smaller width or depth"
        )
    field = NavField(world, np.asarray(lines, dtype=np.float32), radius=0.3, cell=0.15)
    # Goals for the time-to-goal metric: the point of the nearest goal line ahead.
    mids = (lines[:, :2] + lines[:, 2:]) / 2
    goals = mids[np.argmin(np.linalg.norm(starts[:, None] - mids[None], axis=2), axis=1)]
    sim = _crowd(
        world,
        starts,
        goals,
        slots=slots,
        seed=seed,
        field=field,
        look_ahead_field=2.0,
        creep=creep,
        danger=danger,
        decision_validity=decision_validity,
        rotate=rotate,
        changes=changes,
    )
    sim._room_depth = depth  # read by evacuation_report (pickled with the simulation)
    sim.configure_metrics(goal_radius=3.0)  # anywhere on the 6 m goal line in front of the exit
    return sim


def _velocity_danger(danger: str) -> None:
    """The ``danger=`` of a scenario built on :func:`crowd_steering` alone."""
    if danger not in ("velocity", "counterflow", "smooth", "plain"):
        raise ValueError(
            f"danger must be 'velocity', 'counterflow', 'smooth' or 'plain', got {danger!r}"
        )


def _fed_crowd(
    world: World,
    capacity: int,
    *,
    slots: int,
    seed: int,
    danger: str,
    rotate: bool,
    decision_validity: float | None = None,
    changes: Mapping[str, Any] | None = None,
    **steering: Any,
) -> Simulation:
    """An empty crowd simulation of ``capacity`` agents for a :class:`~contextsteer.Flow`
    to feed: :func:`crowd_steering` (``danger`` picks its options and ``changes`` some of
    them, as :func:`_crowd` takes them; ``steering`` goes to it),
    Accel, the crowd slots, the 3 s stuck rule and goals within :data:`GOAL_RADIUS`."""
    agents_mod, _, motion, _, simulation, _, _ = _modules()
    _rng(seed)  # checks the seed
    sim = simulation.Simulation(
        world,
        agents_mod.Agents(capacity, slots=slots, seed=seed),
        crowd_steering(rotate=rotate, **_danger_steering(danger, changes), **steering),
        motion=motion.Accel(),
        slots=crowd_slots_for(slots, danger=danger, rotate=rotate),
        stuck_distance=0.1,
        stuck_time=3.0,
        decision_validity=decision_validity,
    )
    sim.configure_metrics(goal_radius=GOAL_RADIUS)
    return sim


def _walkers(
    area: list,
    rate: Any,
    goal: list,
    exit: list,
    group: int = 0,
    name: str | None = None,
    repeat: float | None = None,
) -> Any:
    """A :class:`~contextsteer.Source` of the crowd scenarios' walkers: radii U(0.15, 0.3)
    m, desired speeds N(1.34, 0.26) m/s clipped to [0.5, 2.2], acceleration limit 6 m/s²."""
    from .flow import Source

    return Source(
        area,
        rate,
        goal,
        exit,
        radius=(0.15, 0.3),
        speed=(1.34, 0.26, 0.5, 2.2),
        max_accel=6.0,
        group=group,
        name=name,
        repeat=repeat,
    )


def _fed_report(sim: Simulation) -> tuple[dict, list[dict]]:
    """A fed crowd's report: the flow's counters in all, and per source; the run metrics'
    collisions and clearances."""
    m = sim.metrics()
    flow = sim.flow.report() if sim.flow is not None else {"sources": []}
    sources = flow.pop("sources")
    return {
        **flow,
        "collisions": m["collisions"],
        "min_clearance": m["min_clearance"],
    }, sources


def counterflow_report(sim: Simulation) -> dict:
    """Counterflow metrics: the flow's counters (people out, each way too, travel time,
    still queued) and the run metrics' collisions and clearances."""
    report, sources = _fed_report(sim)
    return {**report, "out_each_way": [s["out"] for s in sources]}


@scenario(
    "counterflow",
    steps=3600,
    dt=1.0 / 30.0,
    report=counterflow_report,
    description="Counterflow: a 20 m x 4 m corridor fed from both ends (4 persons/s), "
    "two streams passing through each other",
)
@_parameters(
    "rate : float, default 4\n    Persons a second entering in all, half at each end (Poisson; ≥ 0).",
    "length : float, default 20\n    Corridor length (m, ≥ 1.5).",
    "width : float, default 4\n    Corridor width (m, ≥ 0.75).",
    "agents : int, optional\n"
    "    The flow's pool: the most agents inside at once (default: as many of the\n"
    "    smallest radius as the corridor holds).",
    _SLOTS,
    _SEED + " The flow's arrivals, radii and speeds are drawn from it too.",
    _DANGER_V,
    _ROT,
    _DV,
    _CH,
)
def counterflow(
    *,
    rate: float = 4.0,
    length: float = 20.0,
    width: float = 4.0,
    agents: int | None = None,
    slots: int = 16,
    seed: int = 0,
    danger: str = "velocity",
    rotate: bool = True,
    decision_validity: float | None = None,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """A ``length`` × ``width`` corridor (walls along both sides, closed 3 m past each
    end) fed from both ends by a :class:`~contextsteer.Flow`: ``rate`` persons a second in
    all (Poisson, half each way), radii U(0.15, 0.3) m, desired speeds N(1.34, 0.26) m/s
    clipped to [0.5, 2.2], acceleration limit 6 m/s². Each second, each end's queue
    enters at free places in a 2 m deep strip inside its end; each pedestrian walks to
    the point 2.5 m past the far end at its own height and leaves the step its centre
    crosses the far end. It is ``benchmarks/counterflow.py``'s corridor as a library
    scenario (that benchmark draws its people once per seed, for every system alike, so
    its figures differ from this scenario's by the draw).

    ``agents``: the most agents inside at once (the flow's pool; default: as many bodies
    of the smallest radius as the corridor holds, so the pool never limits it).
    ``danger``, ``rotate``, ``decision_validity``: as in the other crowd scenarios
    (:func:`crowd_steering`'s tuned options by default). Metrics:
    ``counterflow_report``: people offered, entered, out (each way), inside and queued,
    their mean travel time, and the run metrics' collisions and clearances.

    """
    _velocity_danger(danger)
    rotate = _flag("counterflow", "rotate", rotate)
    rate = _size("counterflow", "rate", rate, 0.0, 1e5, closed="low")
    length = _size("counterflow", "length", length, 1.5, 1e4, closed="low")
    width = _size("counterflow", "width", width, 0.75, 1e4, closed="low")
    # The corridor with its closed ends, filled with the smallest bodies, is the most
    # the flow can ever hold.
    room = int((length + 6.0) * width / (math.pi * 0.15**2)) + 1
    n = room if agents is None else _count("agents", agents, 1, MAX_SCENARIO_AGENTS)
    _, _, _, _, _, _, world_mod = _modules()
    from .flow import Flow

    world = world_mod.World()
    world.add_segments(
        [
            [-3.0, 0.0, length + 3.0, 0.0],
            [-3.0, width, length + 3.0, width],
            [-3.0, 0.0, -3.0, width],
            [length + 3.0, 0.0, length + 3.0, width],
        ]
    )
    sim = _fed_crowd(
        world,
        n,
        slots=slots,
        seed=seed,
        danger=danger,
        rotate=rotate,
        decision_validity=decision_validity,
        changes=changes,
    )
    depth = min(2.0, length / 2)
    ahead, back = [[length + 2.5, 0.0], [length + 2.5, width]], [[-2.5, 0.0], [-2.5, width]]
    sim.flow = Flow(
        [
            _walkers(
                [0.0, 0.04, depth, width - 0.04],
                rate / 2,
                ahead,
                [length, -1e9, 1e9, 1e9],
                name="from_left",
            ),
            _walkers(
                [length - depth, 0.04, length, width - 0.04],
                rate / 2,
                back,
                [-1e9, -1e9, 0.0, 1e9],
                name="from_right",
            ),
        ],
        seed=seed,
    )
    return sim


def station_report(sim: Simulation) -> dict:
    """Station metrics: the flow's counters in all and per stream (the two train doors,
    the entrance), the run metrics' collisions and clearances, and agents ever stuck."""
    report, sources = _fed_report(sim)
    report["streams"] = {s["name"]: {k: v for k, v in s.items() if k != "name"} for s in sources}
    report["stuck_ever"] = sim.metrics()["stuck"]["ever"]
    return report


@scenario(
    "station",
    steps=3600,
    dt=1.0 / 30.0,
    report=station_report,
    description="A station concourse: trains unload through two doors every minute, people "
    "walk round a kiosk and pillars to two gates while others come in (Flow + NavField)",
)
@_parameters(
    "train_rate : float, default 3\n    Persons a second through each train door while it unloads (Poisson; ≥ 0).",
    "unload : float, default 20\n    Seconds a train unloads (0 < unload ≤ headway).",
    "headway : float, default 60\n    Seconds between trains (the first at t = 0).",
    "inbound : float, default 1\n    Persons a second coming in through the gates (Poisson; ≥ 0).",
    "agents : int, default 600\n    The flow's pool: the most agents inside at once.",
    _SLOTS,
    _SEED + " The flows' arrivals, radii and speeds are drawn from it too.",
    _DANGER_V,
    _ROT,
    _CH,
)
def station(
    *,
    train_rate: float = 3.0,
    unload: float = 20.0,
    headway: float = 60.0,
    inbound: float = 1.0,
    agents: int = 600,
    slots: int = 16,
    seed: int = 0,
    danger: str = "velocity",
    rotate: bool = True,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """A 30 m × 16 m concourse. A train stops along its left side every ``headway``
    seconds (the first at t = 0) and unloads for ``unload`` seconds through two doors,
    each at ``train_rate`` persons/s (Poisson); its passengers walk to two 2 m gates in the
    right wall and leave 1 m past them. Meanwhile ``inbound`` persons/s come in through the
    gates from the hall beyond and walk to the platform edge, where they leave. A 4 m ×
    4 m kiosk in the middle and four pillars stand in the way, so the two streams each
    follow a route: one :class:`~contextsteer.NavField` with a goal set per stream, read
    by group (:class:`~contextsteer.FollowField` with ``which="group"``). People: radii
    U(0.15, 0.3) m, desired speeds N(1.34, 0.26) m/s clipped to [0.5, 2.2], acceleration
    limit 6 m/s², fed by a :class:`~contextsteer.Flow` (see :mod:`contextsteer.flow`).

    ``agents``: the pool (the most inside at once; a full pool keeps newcomers queuing).
    ``danger``, ``rotate``: as in the other crowd scenarios. Metrics: ``station_report``:
    each stream's counters (offered, entered, out, inside, queued, mean travel time),
    agents ever stuck (the run metrics' 3 s rule), collisions and clearances.

    """
    _velocity_danger(danger)
    rotate = _flag("station", "rotate", rotate)
    train_rate = _size("station", "train_rate", train_rate, 0.0, 1e4, closed="low")
    inbound = _size("station", "inbound", inbound, 0.0, 1e4, closed="low")
    headway = _size("station", "headway", headway, 0.0, 1e6)
    unload = _size("station", "unload", unload, 0.0, 1e6, closed="high")
    if unload > headway:  # said separately: headway=10 alone was refused as "unload"
        raise ValueError(
            f"station: unload must be at most headway (a train unloads before the next "
            f"arrives), got unload={unload:g} s and headway={headway:g} s"
        )
    n = _count("agents", agents, 1, MAX_SCENARIO_AGENTS)
    _, _, _, _, _, _, world_mod = _modules()
    from .flow import Flow
    from .nav import NavField

    w, h = 30.0, 16.0
    world = world_mod.World()
    world.add_segments([[0, 0, w, 0], [0, h, w, h], [0, 0, 0, h]])
    world.add_segments([[w, 0, w, 3], [w, 5, w, 11], [w, 13, w, h]])  # gates at y 3–5, 11–13
    world.add_segments([[w, 0, w + 4, 0], [w, h, w + 4, h], [w + 4, 0, w + 4, h]])
    world.add_box([15.0, 8.0], [2.0, 2.0])  # the kiosk
    world.add_circles([[8, 4], [8, 12], [22, 4], [22, 12]], [0.4] * 4)  # pillars
    out_line = [[w + 2.5, 0.5], [w + 2.5, h - 0.5]]
    platform = [[0.6, 0.5], [0.6, h - 0.5]]
    field = NavField(
        world,
        [np.array([sum(out_line, [])], np.float32), np.array([sum(platform, [])], np.float32)],
        radius=0.3,
        cell=0.15,
    )
    sim = _fed_crowd(
        world,
        n,
        slots=slots,
        seed=seed,
        danger=danger,
        rotate=rotate,
        field=field,
        which="group",
        look_ahead_field=2.0,
        changes=changes,
    )
    # Trains at 0, headway, 2·headway, ... for good: one train's schedule, repeated (it
    # was written out for the first hour, after which no train came, and a short headway
    # built millions of entries).
    schedule: Any = [(0.0, train_rate), (unload, 0.0)]
    repeat: float | None = headway
    if unload == headway:  # back to back: one long unloading
        schedule, repeat = train_rate, None
    gone = [w + 1.0, -1e9, 1e9, 1e9]
    sim.flow = Flow(
        [
            _walkers([0.1, 2.0, 2.5, 7.0], schedule, out_line, gone, 0, "door_1", repeat),
            _walkers([0.1, 9.0, 2.5, 14.0], schedule, out_line, gone, 0, "door_2", repeat),
            _walkers(
                [w + 0.6, 1.0, w + 3.9, h - 1.0],
                inbound,
                platform,
                [-1e9, -1e9, 3.0, 1e9],
                1,
                "entrance",
            ),
        ],
        seed=seed,
    )
    return sim


@scenario(
    "circle",
    steps=1200,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="SteerSuite: agents on a circle walk to the antipodes",
)
@_parameters(
    "agents : int, default 16\n    Number of agents.",
    _SLOTS,
    _SEED,
    "radius : float, optional\n    Circle radius (m, > 0); default 1 m of arc an agent, at least 5 m.",
    _DANGER,
    _DV,
    _CH,
)
def circle(
    *,
    agents: int = 16,
    slots: int = 16,
    seed: int = 0,
    radius: float | None = None,
    danger: str = "velocity",
    decision_validity: float | None = None,
    changes: Mapping[str, Any] | None = None,
) -> Simulation:
    """``agents`` on a circle each walk to the opposite point; they all meet in the middle.

    The circle's radius defaults to leave 1 m of arc per agent (at least 5 m); starts are
    jittered by up to 0.01 rad (less where that could bring two bodies together). Steering:
    :func:`crowd_steering` (``danger``); with ``danger="agent"`` (the earlier AgentDanger
    configuration) resolve ``"avoid_opposite"`` (danger adds interest away from it) instead
    of ``"subtract"``, which deadlocks in the middle.
    Metrics: the common set with time to goal; ``crowd_report``.

    """
    n = _count("agents", agents)
    r = (
        max(5.0, n * 1.0 / (2 * np.pi))
        if radius is None
        else _size("circle", "radius", radius, 0.0)
    )
    rng = _rng(seed)
    # Symmetry-breaking jitter of ±0.01 rad, capped so that two neighbours turned towards
    # each other stay more than 0.6 m apart (a chord of 2r·sin(Δθ/2)): 0.8 of the angle
    # between the half spacing π/n and the half-angle asin(0.3/r) of a 0.6 m chord. The
    # cap binds from about 100 agents at the default radius.
    cap = 0.8 * max(0.0, np.pi / n - math.asin(min(1.0, 0.3 / r)))
    jitter = rng.uniform(-0.01, 0.01, n) * min(1.0, cap / 0.01)
    angle = 2 * np.pi * np.arange(n) / n + jitter
    starts = _apart("circle", f"radius={r:g}", r * np.c_[np.cos(angle), np.sin(angle)])
    # Everyone meets in the middle: "subtract" deadlocks there (measured: nobody arrives),
    # the Godot recipe's "avoid_opposite" turns danger into interest away from it.
    return _crowd(
        None,
        starts,
        -starts,
        slots=slots,
        seed=seed,
        resolve="avoid_opposite",
        horizon=1.0,
        danger=danger,
        decision_validity=decision_validity,
        changes=changes,
    )


# ------------------------------------------------------------------ corridor, flock ---


@scenario(
    "corridor",
    steps=900,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="Unity project demo: chase a target through a corridor, avoiding obstacles",
)
@_parameters(
    "agents : int, default 1\n    Number of agents (at most 8).",
    "slots : int, default 16\n    Slots per agent.",
    _SEED + " The obstacles are placed from it too.",
    "length : float, default 60\n    Corridor length (units, ≥ 10).",
    "route : bool, default False\n    Follow a :class:`NavField` route to the target instead of Chase.",
)
def corridor(
    *,
    agents: int = 1,
    slots: int = 16,
    seed: int = 0,
    length: float = 60.0,
    route: bool = False,
) -> Simulation:
    """The Unity ContextSteering demo: agents chase a target at the far end of a corridor
    10 units wide, avoiding round obstacles on the way.

    Chase (interest) + Avoid the obstacles and WallDanger (danger) on the Unity project's
    scene, with contextsteer's choices rather than the project's exact rules: Chase and
    Avoid fade linearly with distance (Unity: ``falloff="none"``), ``resolve="subtract"``
    clamps at 0 and ``choose="argmax"`` slows an agent with no positive slot (Unity:
    ``subtract_unclamped`` and ``argmax_always``, which keep it pushing; see
    ``docs/sources.md``); acceleration-limited motion.
    ``route=True`` replaces Chase by :class:`FollowField` on a :class:`NavField` to the
    target whose route keeps 0.3 m of clearance beside a body (so it passes every obstacle
    on a side at least 1.6 m wide; one side always is) and cuts corners over 3 m: the
    demo's steering strands its walker in the narrow gap between an obstacle and a wall
    on a few seeds in a hundred (a local minimum of Chase against Avoid), and the route
    leads it round on the wide side instead. Not the Unity project's steering.
    Metrics: the common set with time to goal (within 1 unit of the target).

    """
    agents_mod, beh, motion, _, simulation, steering, world_mod = _modules()
    route = _flag("corridor", "route", route)
    n = _count("agents", agents)
    if n > 8:
        raise ValueError(f"agents: at most 8 fit at the corridor's entrance, got {n}")
    rng = _rng(seed)
    # Room for the entrance block (x 2 to 2.6 m) and, metres beyond it, the target (3 m
    # from the far end).
    length = _size("corridor", "length", length, 10.0)
    world = world_mod.World()
    world.add_polyline([[0, -5], [length, -5], [length, 5], [0, 5]], closed=True)
    xs = np.arange(15.0, length - 8.0, 12.0)
    obstacles = np.c_[xs + rng.uniform(-2, 2, len(xs)), rng.uniform(-2.0, 2.0, len(xs))]
    world.add_circles(obstacles, np.full(len(xs), 2.0))
    goal = np.array([length - 3.0, 0.0])
    ys = (np.arange(n) - (n - 1) / 2) * 1.1
    a = agents_mod.Agents(n, slots=slots, seed=seed)
    a.add(
        np.c_[np.full(n, 2.0) + 0.6 * (np.arange(n) % 2), ys],
        radius=0.5,
        max_speed=4.0 * rng.uniform(0.9, 1.1, n),
        max_accel=8.0,
        target=goal,
    )
    if route:
        from .nav import NavField

        field = NavField(world, goal.astype(np.float32), radius=0.8, cell=0.2)
        seek: Behaviour = beh.FollowField(field=field, look_ahead=3.0)
    else:
        seek = beh.Chase(goal)
    st = steering.Steering(
        [
            seek,
            beh.Avoid(obstacles, max_distance=5.0),
            beh.WallDanger(look_ahead=1.5, falloff="linear"),
            beh.AgentDanger(radius=0.8),
        ],
        resolve="subtract",
        choose="argmax",
    )
    sim = simulation.Simulation(
        world, a, st, motion=motion.Accel(), slots=slots, stuck_distance=0.2, stuck_time=3.0
    )
    sim.configure_metrics(goal_radius=1.0)
    return sim


@scenario(
    "flock",
    steps=1200,
    dt=1.0 / 30.0,
    report=crowd_report,
    description="Lewis's crowd: a flock (separation, cohesion, alignment) with speed "
    "control funnels through a choke point",
)
@_parameters(
    "agents : int, default 40\n    Number of agents (at most 225).",
    "slots : int, default 16\n    Slots per agent.",
    _SEED,
    "gap : float, default 3\n    Width of the opening in the wall (m, in (0, 20)).",
)
def flock(*, agents: int = 40, slots: int = 16, seed: int = 0, gap: float = 3.0) -> Simulation:
    """Mike Lewis's crowd: ``agents`` flock towards a goal beyond a wall with a ``gap``.

    Interest: Seek the goal plus Lewis's flocking rules (Separation, Cohesion, Alignment)
    summed (``combine="sum"``); Arrive fades the interest near the goal, and since the
    chosen strength scales the speed, agents slow down in the crowd and on arrival (speed
    control). Danger: AgentDanger and WallDanger, ``resolve="subtract"``,
    ``choose="weighted_neighbours"``. Metrics: the common set with time to goal.

    """
    agents_mod, beh, motion, _, simulation, steering, world_mod = _modules()
    # The flock starts on a square grid of 1.2 m left of the wall: at most 15 × 15 fit.
    n = _count("agents", agents, high=225, room="the start grid left of the wall holds 15 × 15")
    rng = _rng(seed)
    gap = _size("flock", "gap", gap, 0.0, 20.0)  # the wall is 20 m long
    world = world_mod.World()
    world.add_polyline([[-15, -10], [35, -10], [35, 10], [-15, 10]], closed=True)
    _wall_with_gap(world, 10.0, 10.0, gap)
    side = int(np.ceil(np.sqrt(n)))
    grid = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)[:n]
    starts = grid * 1.2 - [13.0, (side - 1) * 0.6] + _jitter(rng, n, 0.2)
    goal = np.array([28.0, 0.0])
    goals = goal + _spread(rng.normal(0, 1.5, (n, 2)), 0.8)
    a = agents_mod.Agents(n, slots=slots, seed=seed)
    a.add(starts, radius=0.3, max_speed=2.0 * rng.uniform(0.9, 1.1, n), max_accel=4.0, target=goals)
    st = steering.Steering(
        [
            beh.Seek(weight=0.6),
            beh.Arrive(slowing_radius=2.0, tolerance=0.2, weight=0.4),
            beh.Separation(radius=1.2, weight=1.0),
            beh.Cohesion(radius=3.0, weight=0.15),
            beh.Alignment(radius=3.0, weight=0.2),
            beh.AgentDanger(radius=0.6, predictive=True, horizon=1.0),
            beh.WallDanger(look_ahead=1.2, falloff="linear"),
        ],
        combine="sum",
        resolve="subtract",
        choose="weighted_neighbours",
    )
    sim = simulation.Simulation(
        world, a, st, motion=motion.Accel(), slots=slots, stuck_distance=0.1, stuck_time=3.0
    )
    sim.configure_metrics(goal_radius=GOAL_RADIUS + 0.5)
    return sim
