"""The application layer: build a scenario, run it, and return one result record.

Every run of a simulation outside a hand-written loop goes through here: the ``contextsteer
run`` command (which then draws and writes the files), :func:`contextsteer.sweep` and
:func:`contextsteer.tune` (which only choose the parameter sets and where the runs go), and
the notebooks. A run gives a :class:`RunResult`: the simulation's metrics, the scenario's
report, the per-agent counters, a trajectory summary, the wall time of the steps and,
when asked for, the recorded frames; :meth:`RunResult.to_dict` is its one JSON form
(``metrics.json`` of ``contextsteer run``, ``Run.result`` of a sweep).

>>> import contextsteer as cs
>>> res = cs.run_scenario("oncoming", seed=1, steps=60)
>>> res.scenario, res.parameters, res.steps, res.agents
('oncoming', {'seed': 1}, 60, 2)
>>> sorted(res.to_dict())[:5]
['agents', 'counters', 'dt', 'metrics', 'parameters']
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks
from ._json import jsonable, short_repr
from .history import Recording
from .simulation import Simulation

if TYPE_CHECKING:
    from .detour import Detour
    from .scenarios import Scenario

__all__ = ["SCHEMA_VERSION", "RunResult", "build", "run_scenario", "run_simulation"]

#: Layout of :meth:`RunResult.to_dict` (``metrics.json`` of ``contextsteer run``, a sweep's
#: ``Run.result``), raised when a key is renamed, removed or changes meaning. Version 1 was
#: ``metrics.json`` before the run record (``scenario_metrics``, ``step_seconds``; a sweep's
#: runs held only ``metrics``, ``report`` and ``seconds``). The metrics inside carry their
#: own version (:data:`contextsteer.metrics.SCHEMA_VERSION`).
SCHEMA_VERSION = 2


@dataclasses.dataclass
class RunResult:
    """One run of a simulation: what it measured, and the frames it kept.

    Attributes
    ----------
    scenario : str or None
        Name of the registered scenario, None for a simulation built by hand.
    parameters : dict
        Keyword arguments the scenario was built with (``seed`` included when it took one).
    steps : int
    dt : float
        Seconds per step.
    agents : int
        Alive agents at the end of the run.
    seconds : float
        Wall time of the steps (recording included, building excluded).
    metrics : dict
        ``Simulation.metrics()`` after the run (see :mod:`contextsteer.metrics`).
    report : dict
        The scenario's own report after the run (``Scenario.report``), or ``{}``; with a
        detour (:func:`run_simulation`'s ``detour``), its counts under ``"detour"``.
    counters : dict
        ``{"wall_contacts" | "overlaps" | "stuck": {"total": int, "per_agent": [...]}}``
        over the alive agents.
    trajectory : dict
        Path lengths and mean speed from the recorded positions (``{}`` without a
        recording), over the agents alive in at least one recorded frame; the statistics
        are None when there is none.
    history : Recording or None
        The recorded frames (``records > 0``); not part of the JSON form.
    simulation : Simulation or None
        The simulation after the run, for drawing its final state; not part of the JSON
        form (None for a result read back with :meth:`from_dict`).
    """

    scenario: str | None
    parameters: dict[str, Any]
    steps: int
    dt: float
    agents: int
    seconds: float
    metrics: dict[str, Any]
    report: dict[str, Any]
    counters: dict[str, Any]
    trajectory: dict[str, Any]
    history: Recording | None = dataclasses.field(default=None, repr=False, compare=False)
    simulation: Simulation | None = dataclasses.field(default=None, repr=False, compare=False)

    @_checks.safe_repr
    def __repr__(self) -> str:
        return short_repr(self)  # cut: per-agent lists and trials grow with the run

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: plain types only, non-finite floats as None.

        Keys: ``schema_version`` (:data:`SCHEMA_VERSION`, the layout of this dict),
        ``scenario``, ``parameters``, ``steps``, ``dt``, ``simulated_seconds``, ``seconds``,
        ``steps_per_second``, ``agents``, ``trajectory``, ``counters``, ``metrics`` and
        ``report``.
        """
        return jsonable(
            {
                "schema_version": SCHEMA_VERSION,
                "scenario": self.scenario,
                "parameters": self.parameters,
                "steps": self.steps,
                "dt": self.dt,
                # dt and seconds may be None in a result read back by from_dict (the JSON
                # form's non-finite float): what is derived from them is None too.
                "simulated_seconds": None if self.dt is None else self.steps * self.dt,
                "seconds": self.seconds,
                "steps_per_second": round(self.steps / self.seconds, 1)
                if self.seconds is not None and self.seconds > 0
                else None,
                "agents": self.agents,
                "trajectory": self.trajectory,
                "counters": self.counters,
                "metrics": self.metrics,
                "report": self.report,
            }
        )

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> RunResult:
        """A result read back from its JSON form (without history or simulation).

        Raises
        ------
        ValueError
            A key of the JSON form is missing, its ``schema_version`` is not
            :data:`SCHEMA_VERSION`, or a value is not of its kind (``steps`` and
            ``agents`` integers >= 0, ``dt`` > 0, ``seconds`` >= 0, the rest mappings).
        TypeError
            ``doc`` is not a mapping.

        Examples
        --------
        >>> import json, contextsteer as cs
        >>> res = cs.run_scenario("oncoming", steps=30)
        >>> back = cs.RunResult.from_json(res.to_json())
        >>> back.to_dict() == res.to_dict(), back.metrics == json.loads(res.to_json())["metrics"]
        (True, True)
        """
        fields = (
            "scenario",
            "parameters",
            "steps",
            "dt",
            "agents",
            "seconds",
            "metrics",
            "report",
            "counters",
            "trajectory",
        )
        if not isinstance(doc, Mapping):
            raise TypeError(
                "RunResult.from_dict: expected a mapping (the JSON form's object), got "
                f"{type(doc).__name__}"
            )
        missing = [f for f in fields if f not in doc]
        if missing:
            raise ValueError(f"RunResult.from_dict: missing keys {missing}")
        version = doc.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION or isinstance(version, bool):
            raise ValueError(
                f"RunResult.from_dict: schema_version {version!r}; this contextsteer reads "
                f"version {SCHEMA_VERSION} (see contextsteer.run.SCHEMA_VERSION)"
            )

        def bad(name: str, expected: str) -> ValueError:
            v = doc[name]
            # (a huge int's repr raises beyond Python's 4,300 digits, and says nothing)
            huge = type(v) is int and v.bit_length() > 256
            got = f"an int of {v.bit_length()} bits" if huge else f"{v!r:.80}"
            return ValueError(f"RunResult.from_dict: {name} must be {expected}, got {got}")

        for name in ("steps", "agents"):
            v = doc[name]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**63:
                raise bad(name, "an integer in [0, 2^63)")
        for name, positive in (("dt", True), ("seconds", False)):
            v = doc[name]
            if v is None:  # (the JSON form writes a non-finite float as None)
                continue
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not (abs(v) <= sys.float_info.max and math.isfinite(v))  # 10**400: no float
            ):
                raise bad(name, "a finite number (or None)")
            if v < 0 or (positive and v == 0):
                raise bad(name, "> 0" if positive else ">= 0")
        if doc["scenario"] is not None and not isinstance(doc["scenario"], str):
            raise bad("scenario", "a name (str) or None")
        for name in ("parameters", "report", "counters", "trajectory"):
            if not isinstance(doc[name], Mapping):
                raise bad(name, "a mapping")
        if doc["metrics"] is not None and not isinstance(doc["metrics"], Mapping):
            raise bad("metrics", "a mapping or None")
        return cls(**{f: doc[f] for f in fields})

    @classmethod
    def from_json(cls, text: str) -> RunResult:
        """:meth:`from_dict` of a JSON string."""
        return cls.from_dict(json.loads(text))


# ------------------------------------------------------------------------- running ---


def _counters(sim: Simulation) -> dict[str, Any]:
    """The per-agent counters of the alive agents: totals and per agent."""
    alive = np.asarray(sim.agents.alive, dtype=bool)
    out = {}
    for name, values in (
        ("wall_contacts", sim.wall_contacts),
        ("overlaps", sim.overlaps),
        ("stuck", sim.stuck),
    ):
        v = np.asarray(values)[alive]
        out[name] = {"total": int(v.sum()), "per_agent": v.astype(int).tolist()}
    return out


def _trajectory(history: Recording | None, dt: float) -> dict[str, Any]:
    """Distance travelled and mean speed from the recorded positions (T, N, 2).

    Each agent counts: a slot's occupant, told apart by the slot's generation where the
    recording has it (a slot reused by a new agent is two agents: the jump between them
    was counted as travel, 100 m in one frame). Only agents alive in at least one
    recorded frame count; without any, the statistics are None. The mean speed is the
    distance travelled over the time the agents were alive between recorded frames.
    """
    if history is None or history.steps is None or len(history.positions) < 2:
        return {}
    p = np.asarray(history.positions, dtype=np.float64)
    t_count, n = p.shape[:2]
    gens = (
        np.zeros((t_count, n), dtype=np.int64)
        if history.generations is None
        else np.asarray(history.generations, dtype=np.int64)
    )
    alive = np.asarray(np.isfinite(p).all(axis=2))  # (T, N)
    # A step between two frames counts where the same agent is alive at both.
    same = alive[:-1] & alive[1:] & (gens[:-1] == gens[1:])
    seg = np.where(same, np.linalg.norm(np.diff(p, axis=0), axis=2), 0.0)  # (T-1, N)
    span = np.diff(np.asarray(history.steps, dtype=np.float64)) * dt  # (T-1,)
    # Agents: (slot, generation) pairs alive in some frame; each one's distance.
    ids = gens * n + np.arange(n)  # a unique key per (slot, generation)
    agents = np.unique(ids[alive])
    travelled = np.zeros(len(agents))
    if len(agents):
        where = np.searchsorted(agents, ids[:-1][same])
        np.add.at(travelled, where, seg[same])
    out: dict[str, Any] = {
        "path_length_mean": None,
        "path_length_min": None,
        "path_length_max": None,
        "mean_speed": None,
    }
    if travelled.size:
        out["path_length_mean"] = float(travelled.mean())
        out["path_length_min"] = float(travelled.min())
        out["path_length_max"] = float(travelled.max())
        lived = float((same * span[:, None]).sum())
        out["mean_speed"] = float(travelled.sum()) / lived if lived > 0 else 0.0
    out["note"] = (
        "path lengths from positions recorded at the animation/trajectory samples, over "
        "the agents alive in at least one of them"
    )
    return out


def _step_recording(
    sim: Simulation,
    steps: int,
    dt: float,
    records: int,
    maps: bool,
    callback: Callable[[int], Any] | None,
    advance: Callable[[int], None],
) -> Recording:
    """Step ``sim`` to ``min(records, steps)`` evenly spaced frames (frame j at step
    ``round(j * steps / R)``, the last at ``steps``), each one C++ step call, and keep the
    state before the first and after every call."""
    frames = min(records, steps)
    targets = [(j * steps + frames // 2) // frames for j in range(1, frames + 1)]

    def state() -> tuple:
        alive = np.asarray(sim.agents.alive, dtype=bool)
        pos = np.array(sim.agents.position, dtype=np.float32)
        pos[~alive] = np.nan
        return (
            sim.step_count,
            float(sim.time),
            pos,
            np.array(sim.agents.heading, dtype=np.float32),
            np.array(sim.agents.radius, dtype=np.float32),
            np.array(sim.danger, dtype=np.float32) if maps else None,
            np.array(sim.sensed, dtype=np.float32) if maps and sim.sensed is not None else None,
            np.array(sim.perceived_position, dtype=np.float32) if maps else None,
            np.array(sim.perceived_heading, dtype=np.float32) if maps else None,
            np.array(sim.agents.generation, dtype=np.uint32),
        )

    kept = [state()]
    done = 0
    for target in targets:
        advance(target - done)
        if callback is not None:
            callback(target - done)
        done = target
        kept.append(state())
    step0, time0 = kept[0][0], kept[0][1]
    columns = list(zip(*kept))

    def stacked(i: int) -> np.ndarray | None:
        return None if columns[i][0] is None else np.stack(columns[i])

    return Recording(
        np.array(columns[0], dtype=np.int64) - step0,
        np.stack(columns[2]),
        np.stack(columns[3]),
        np.stack(columns[4]),
        stacked(5),
        np.array(columns[1], dtype=np.float64) - time0,
        stacked(6),
        stacked(7),
        stacked(8),
        stacked(9),
    )


def _count(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not _checks.is_int(value):
        raise TypeError(f"run: {name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"run: {name} must be >= {low}, got {value}")
    return int(value)


def run_simulation(
    sim: Simulation,
    steps: int,
    *,
    dt: float = 1.0 / 60.0,
    records: int = 0,
    maps: bool = False,
    callback: Callable[[int], Any] | None = None,
    scenario: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    report: Callable[[Simulation], dict] | None = None,
    detour: Detour | None = None,
) -> RunResult:
    """Step a simulation ``steps`` times and collect its :class:`RunResult`.

    The steps run in C++ (in one call, or in at most ``records`` chunks while recording);
    the results are those of ``sim.step(dt, steps=steps)``. With a ``detour`` the
    steps are taken one at a time, each after ``detour.update()``.

    Parameters
    ----------
    sim : Simulation
    steps : int
        Steps to take, >= 0.
    dt : float
        Seconds per step.
    records : int
        Frames to keep after the initial one: ``min(records, steps)`` of them, frame j at
        step ``round(j * steps / records)`` (the final state last), each kept after a C++
        step call, returned as ``RunResult.history``; 0 keeps none.
    maps : bool
        Also keep the danger maps of every frame (what the animations colour rays by).
    callback : callable, optional
        Called with the number of steps just taken after every chunk (e.g. a progress
        bar's ``update``).
    scenario, parameters, report
        The scenario's name, the parameters it was built with and its ``report(sim)``
        (filled in by :func:`run_scenario`).
    detour : Detour, optional
        A :class:`~contextsteer.Detour` of ``sim``, updated before every step (as
        ``contextsteer run --detour`` does); its counts ``plans``, ``detours`` and
        ``yields`` join the report as ``report["detour"]``.

    Returns
    -------
    RunResult

    Raises
    ------
    TypeError
        ``sim`` is not a :class:`~contextsteer.Simulation`, ``detour`` not a
        :class:`~contextsteer.Detour`, a count is not an int, ``maps`` not a bool or
        ``callback`` not callable.
    ValueError
        ``steps`` or ``records`` < 0, a bad ``dt`` (from ``Simulation.step``), or a
        ``detour`` of another simulation.

    Examples
    --------
    >>> import contextsteer as cs
    >>> agents = cs.Agents(2, slots=8)
    >>> _ = agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
    >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    >>> res = cs.run_simulation(sim, 30, dt=0.1, records=3)
    >>> res.history.steps.tolist(), res.history.positions[-1].round(2).tolist()
    ([0, 10, 20, 30], [[3.0, 0.0], [3.0, 2.0]])
    >>> round(res.trajectory["mean_speed"], 4), round(res.metrics["path_length"]["mean"], 4)
    (1.0, 3.0)
    """
    if not isinstance(sim, Simulation):
        raise TypeError(
            f"run_simulation: sim must be a contextsteer.Simulation, got {type(sim).__name__}"
        )
    steps = _count("steps", steps, 0)
    records = _count("records", records, 0)
    maps = _checks.flag("run_simulation: maps", maps)
    if callback is not None and not callable(callback):
        raise TypeError(
            f"run_simulation: callback must be callable or None, got {type(callback).__name__}"
        )
    if detour is not None:
        from .detour import Detour

        if not isinstance(detour, Detour):
            raise TypeError(
                f"run_simulation: detour must be a contextsteer.Detour, got {type(detour).__name__}"
            )
        if detour.sim is not sim:
            raise ValueError("run_simulation: detour belongs to another simulation")

    def advance(n: int) -> None:
        if detour is None:
            sim.step(dt, steps=n)
            return
        for _ in range(n):
            detour.update()
            sim.step(dt)

    t0 = time.perf_counter()
    history = None
    if records > 0:
        history = _step_recording(sim, steps, dt, records, maps, callback, advance)
    else:
        if steps:
            advance(steps)
        if callback is not None:
            callback(steps)
    seconds = time.perf_counter() - t0
    rep = dict(report(sim)) if report is not None else {}
    if detour is not None:
        rep["detour"] = {
            "plans": detour.plans,
            "detours": detour.detours,
            "yields": detour.yields,
        }
    return RunResult(
        scenario=scenario,
        parameters=dict(parameters or {}),
        steps=steps,
        dt=float(dt),
        agents=int(sim.agents.count),
        seconds=seconds,
        metrics=sim.metrics(),
        report=rep,
        counters=_counters(sim),
        trajectory=_trajectory(history, float(dt)),
        history=history,
        simulation=sim,
    )


def build(
    scenario: str | Scenario, params: Mapping[str, Any] | None = None, *, seed: int | None = None
) -> tuple[Any, Simulation, dict[str, Any]]:
    """Build a registered scenario: ``(scenario, simulation, parameters)``.

    ``seed`` is passed on when the scenario takes one (a scenario without randomness
    ignores it); ``parameters`` are the keyword arguments the builder was called with.

    Raises
    ------
    ValueError
        An unknown scenario name, or ``seed`` given both in ``params`` and as ``seed``;
        and whatever the builder raises for parameters it refuses.
    TypeError
        ``scenario`` is neither a name nor a Scenario, or the builder did not return a
        Simulation.
    """
    from . import scenarios

    if isinstance(scenario, str):
        sc = scenarios.get(scenario)
    elif isinstance(scenario, scenarios.Scenario):
        sc = scenario
    else:
        raise TypeError(
            f"run: scenario must be a scenario name or a Scenario, got {type(scenario).__name__}"
        )
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"run: params must be a dict of the builder's arguments, got {params!r}")
    parameters = dict(params or {})
    if seed is not None:
        if "seed" in parameters:
            raise ValueError("run: give the seed once, as seed= or in params, not both")
        if sc.accepts("seed"):
            parameters["seed"] = seed
    sim = sc(**parameters)
    if not isinstance(sim, Simulation):
        raise TypeError(
            f"run: scenario {sc.name!r} built a {type(sim).__name__}, expected a "
            "contextsteer.Simulation"
        )
    return sc, sim, parameters


def run_scenario(
    scenario: str | Scenario,
    params: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
    steps: int | None = None,
    records: int = 0,
    maps: bool = False,
    callback: Callable[[int], Any] | None = None,
) -> RunResult:
    """Build a registered scenario, run it and return its :class:`RunResult`.

    Parameters
    ----------
    scenario : str or Scenario
        A registered scenario (see :func:`contextsteer.scenarios.available`).
    params : dict, optional
        Keyword arguments of its builder (``agents``, ``slots``, ``preset``, its own).
    seed : int, optional
        Passed as ``seed=`` when the scenario takes one.
    steps : int, optional
        Steps to take (default: the scenario's, for its ``preset``); the time step is the
        scenario's.
    records, maps, callback
        As in :func:`run_simulation`.

    Returns
    -------
    RunResult
        ``to_dict()`` is what ``contextsteer run`` writes to ``metrics.json`` and what a
        sweep keeps as ``Run.result``.

    Raises
    ------
    ValueError, TypeError
        As :func:`build` and :func:`run_simulation`.

    Examples
    --------
    >>> import contextsteer as cs
    >>> res = cs.run_scenario("racetrack", {"agents": 3}, seed=2, steps=90, records=3)
    >>> res.parameters, res.steps, round(res.dt, 4), res.history.positions.shape
    ({'agents': 3, 'seed': 2}, 90, 0.0333, (4, 3, 2))
    >>> race = cs.scenarios.get("racetrack")            # the same run, by hand
    >>> sim = race(agents=3, seed=2)
    >>> sim.step(race.dt, steps=90)
    >>> sim.metrics()["progress"] == res.metrics["progress"]
    True
    """
    sc, sim, parameters = build(scenario, params, seed=seed)
    default_steps, dt = sc.timing(parameters.get("preset"))
    return run_simulation(
        sim,
        default_steps if steps is None else steps,
        dt=dt,
        records=records,
        maps=maps,
        callback=callback,
        scenario=sc.name,
        parameters=parameters,
        report=sc.report,
    )
