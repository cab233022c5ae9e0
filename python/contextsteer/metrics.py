"""Run metrics of a simulation, accumulated in C++ at the end of every step.

:meth:`Simulation.configure_metrics` chooses what is measured (goal radius, a path for
progress and laps, overtakes) and resets the accumulators; :meth:`Simulation.metrics`
summarises them in a dict; :attr:`Simulation.agent_metrics` gives the per-agent arrays
as zero-copy, read-only views.

Definitions (per agent, over the steps since the last ``configure_metrics``):

collisions
    Counted as **episodes** of contact: an agent–wall episode starts when the agent
    starts touching a wall (wall clearance < ``contact_tolerance`` × radius, not
    touching at the previous step); an agent–agent episode when a pair starts touching
    (centre distance − both radii < ``contact_tolerance`` × the sum of the radii).
    Measured on the committed positions; the collision response stops agents a hair
    from walls and pushes overlapping agents a hair apart, and those resolved contacts
    count too. :meth:`Simulation.metrics` counts the whole run's episodes, those of
    agents since removed included (each pair's once); the per-agent arrays hold the
    current occupant of each slot's.
min clearance
    Nearest wall distance − radius (negative: the body overlaps a wall), and centre
    distance − both radii to the nearest agent; ``inf`` when never within
    ``clearance_range`` (by default 4 × the largest radius of the alive agents, followed
    as agents are added). The wall distance is unsigned: a centre inside a solid obstacle
    (a circle, a box) is measured to its boundary from inside, which the collision
    response never lets happen unless positions are written. Contacts are found whatever
    the range. :meth:`Simulation.metrics` gives the run's least, agents since removed
    included, and the state at ``configure_metrics`` included (a body placed overlapping
    a wall reports that overlap; one placed with its centre inside a solid, which the
    first step moves out, is measured from where it is moved to: the exit is the
    library's correction of the placement, not a step of the run). It reports
    ``wall_contact_steps`` and ``stuck["ever"]`` for the whole run too.
time to goal
    Seconds until the agent is first within ``goal_radius`` of its ``target`` while that
    target is a goal (not :attr:`Agents.waypoint`: a detour's waypoints are passed, not
    arrived at), counted
    from ``configure_metrics`` for the agents present then and from its entry for an
    agent added later (``AgentMetrics.entry_time``; its travel time, as a flow study
    wants it); an agent added within reach of its goal arrives at its first step. ``arrived``, ``fraction`` and the
    statistics are over the alive agents that are not kinematic (a kinematic agent counts
    in collisions, clearances, progress and laps, not in time to goal, path length,
    jitter, effort, stuck and the composite); ``removed`` holds the agents removed since
    ``configure_metrics`` (at an exit, say): how many were measured, how many of them had
    arrived and their mean time to goal (collision counts keep removed agents too).
new agents
    An agent added into a slot (``Agents.generation`` changed) starts every accumulator
    afresh; one made alive again by writing ``alive`` keeps them. Agents that appear in
    contact (touching where they are added, before their first step) are a baseline for
    both, as contacts at ``configure_metrics`` are; a contact made during the new
    agent's first step counts (for agents; a wall it touches in its first step is a
    baseline).
path length
    Σ ‖Δposition‖ (double precision) over the travel steps: the steps until the agent
    arrives, the arriving step included (every step when it has no goal). Effort and
    heading jitter use the same steps: an agent at its goal is done travelling (SteerSuite
    retires it there).
progress, laps
    Σ of the change of the path's closest offset, wrapped into [−L/2, L/2) on a closed
    path of length L; a lap is completed each time progress passes a multiple of L, and
    its time is kept (last and best). Laps count from each agent's own start, not from a
    start/finish line: on a grid, a car starting behind another completes its laps that
    much later along the track; ``AgentMetrics.start_offset + progress`` orders the race
    (what the overtakes use). On a path that crosses or passes near itself (a
    figure-eight) the nearest point can jump to the other branch, far along the path, so
    each agent's own branch is tracked: its offset is the nearest point within 2 × its
    move + 2 × its width of the last one along the path. The whole path's nearest point
    is taken instead only when it is nearer than that by more than the agent's distance
    from its branch when that branch was last the nearest, plus its width: a branch lost
    (a path cut across, an agent placed elsewhere), not a crossing passed at the agent's
    usual distance from the centre line. An agent that starts at a crossing is read on
    the nearer branch, which may not be its own; where two branches run closer together
    than an agent's distance from the centre line, which one it is on is not told apart.
overtakes
    With s = start offset + progress, agent *i* overtakes *j* when s_i − s_j passes the
    next multiple of L by a body width (r_i + r_j) beyond the pair's last confirmed lap
    difference; falling back by a body width below it un-confirms it without a count
    (hysteresis: cars side by side do not count). Counted for the overtaker; O(N²) per
    step, for small fields such as a race.
heading jitter
    Mean ‖Δheading‖ per travel step (radians), the heading change wrapped into [−π, π]
    (0 for an agent with no travel step). :meth:`Simulation.metrics` averages it over the
    agents with a travel step or more: one at its goal from the start has no rate to add.
effort
    Σ ‖Δvelocity‖ = ∫‖acceleration‖ dt (length per second): the total speed change the
    agent's steering asked of its body.
stuck
    Whether the simulation's stuck detection flagged the agent before it arrived
    (agents standing at their goal are not stuck); ``now`` counts the agents stuck and
    not arrived at the end.
disabled
    After ``configure_metrics(enabled=False)`` nothing is measured: :meth:`Simulation.metrics`
    reports ``enabled: False`` and ``None`` for every measured key (``stuck.now``, which
    comes from the stuck detection, stays), and :attr:`Simulation.agent_metrics` raises.
composite
    SteerBench's composite score, averaged over agents: ``50·collisions + time +
    effort`` with collisions = the agent's wall and agent episodes, time = its time to
    goal, or the elapsed time when it has no goal or did not arrive. Lower is better.

Examples
--------
Two agents seek targets 5 m away at 2 m/s; both arrive (within 0.5 m) after 3.2 s:

>>> import contextsteer as cs
>>> a = cs.Agents(2)
>>> ids = a.add([[0, 0], [10, 0]], target=[[5, 0], [10, 5]], max_speed=2.0)
>>> sim = cs.Simulation(None, a, [cs.Seek()])
>>> sim.configure_metrics(goal_radius=0.5)
>>> sim.step(0.1, steps=50)
>>> m = sim.metrics()
>>> m["time_to_goal"]["fraction"], m["collisions"]["total"]
(1.0, 0)
>>> sim.agent_metrics.time_to_goal
array([3.2, 3.2], dtype=float32)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from . import _core

__all__ = ["AgentMetrics", "COLLISION_WEIGHT", "SCHEMA_VERSION", "summarize"]

#: Version of the layout of :meth:`Simulation.metrics` (and of the CLI's ``metrics.json``,
#: which nests it under ``"metrics"``): raised when a key is renamed, removed or changes
#: meaning, not when one is added. Readers check it before trusting a key. Version 2: a
#: simulation whose metrics are disabled reports ``None`` for everything measured, where
#: version 1 reported zeros (no collisions, no effort) that nothing had measured.
#: Version 3: ``collisions`` counts the whole run's episodes, agents since removed
#: included (version 2 summed the alive agents' own counts, so an episode with an agent
#: since removed counted half, rounded down, and a removed agent's wall episodes not at all).
#: Version 4: the time to goal of an agent added after ``configure_metrics`` counts from
#: its entry (its travel time; version 3 counted from ``configure_metrics``), and kinematic
#: agents are left out of the steering's statistics (time to goal, path length, jitter,
#: effort, stuck, composite).
SCHEMA_VERSION = 4

#: Weight of one collision in the composite score (SteerBench).
COLLISION_WEIGHT = 50.0


class AgentMetrics(NamedTuple):
    """Per-agent metrics: read-only views of the simulation's C++ accumulators, (N,)
    arrays over every agent slot (dead slots included)."""

    wall_episodes: np.ndarray  #: int32 agent–wall collision episodes
    agent_episodes: np.ndarray  #: int32 agent–agent contact episodes the agent took part in
    #: int32 steps ending with the agent within ``contact_tolerance`` (of
    #: ``configure_metrics``; 1 % by default) of its radius of a wall (gliding along one
    #: counts; ``Simulation.wall_contacts`` counts the moves that met one instead)
    wall_steps: np.ndarray
    min_wall_clearance: np.ndarray  #: float32, inf when never near a wall
    min_agent_clearance: np.ndarray  #: float32, inf when never near an agent
    time_to_goal: np.ndarray  #: float32 seconds, NaN until arrival
    path_length: np.ndarray  #: float64 Σ|Δp| until arrival
    effort: np.ndarray  #: float64 Σ|Δv| until arrival
    heading_jitter: np.ndarray  #: float64 Σ|Δheading| / travel steps (a read-only new array)
    progress: np.ndarray  #: float64 signed arc length along the metrics path
    laps: np.ndarray  #: int32 laps completed
    last_lap_time: np.ndarray  #: float32 seconds, NaN before a lap
    best_lap_time: np.ndarray  #: float32 seconds, NaN before a lap
    overtakes: np.ndarray  #: int32 overtakes made
    ever_stuck: np.ndarray  #: bool
    alive_steps: np.ndarray  #: int32 steps measured
    travel_steps: np.ndarray  #: int32 steps until arrival (the arriving one included)
    #: float64 run time (s since configure_metrics) at which the agent appeared: 0 for
    #: those present then; time to goal counts from it
    entry_time: np.ndarray
    #: float64 path offset each agent's progress counts from (its offset when first
    #: measured): ``start_offset + progress`` orders a race (race positions), whatever
    #: the grid, where ``laps`` count from each agent's own start
    start_offset: np.ndarray


#: The core's per-agent metric arrays :func:`agent_metrics` reads.
_VIEWS = (
    "wall_episodes",
    "agent_episodes",
    "wall_steps",
    "min_wall_clearance",
    "min_agent_clearance",
    "time_to_goal",
    "path_length",
    "effort",
    "jitter",
    "progress",
    "laps",
    "last_lap_time",
    "best_lap_time",
    "overtakes",
    "ever_stuck",
    "generation",
    "born",
    "start_offset",
    "alive_steps",
    "travel_steps",
    "kinematic",
)


class _Snapshot:
    """The metrics of a ``_core.Simulation`` copied at one moment (``_metrics_snapshot``,
    under its thread guard), read as the core is."""

    def __init__(self, info: dict[str, Any], views: dict[str, np.ndarray]):
        self._info, self._views = info, views

    def _metrics_info(self) -> dict[str, Any]:
        return self._info

    def _metric_view(self, name: str) -> np.ndarray:
        return self._views[name]


def snapshot_summary(core: _core.Simulation) -> dict[str, Any]:
    """:func:`summarize` of one guarded copy of the metrics, alive flags, time and stuck
    flags (RuntimeError "in use" while another thread steps the simulation)."""
    info, views, alive, time, stuck = core._metrics_snapshot(list(_VIEWS))
    return summarize(_Snapshot(info, views), alive, time, stuck)


def agent_metrics(core: Any) -> AgentMetrics:
    """The per-agent views of a :class:`~contextsteer.Simulation` (or its C++ simulation).

    Raises
    ------
    RuntimeError
        The metrics are disabled: the arrays would hold zeros nothing measured.
    """
    core = _core_of("agent_metrics", core)
    if not core._metrics_info()["enabled"]:
        raise RuntimeError(
            "agent_metrics: the run metrics are disabled (configure_metrics(enabled=False)); "
            "call configure_metrics() to measure"
        )
    v = core._metric_view
    steps = v("alive_steps")
    travel = v("travel_steps")
    jitter = v("jitter") / np.maximum(travel, 1)
    jitter.flags.writeable = False  # computed, but read-only like the views beside it
    return AgentMetrics(
        v("wall_episodes"),
        v("agent_episodes"),
        v("wall_steps"),
        v("min_wall_clearance"),
        v("min_agent_clearance"),
        v("time_to_goal"),
        v("path_length"),
        v("effort"),
        jitter,
        v("progress"),
        v("laps"),
        v("last_lap_time"),
        v("best_lap_time"),
        v("overtakes"),
        v("ever_stuck"),
        steps,
        travel,
        v("born"),
        v("start_offset"),
    )


def _stats(x: np.ndarray) -> dict[str, float | None]:
    if len(x) == 0:
        return {"mean": None, "min": None, "max": None}
    return {"mean": float(np.mean(x)), "min": float(np.min(x)), "max": float(np.max(x))}


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _core_of(owner: str, sim: Any) -> Any:
    """The C++ simulation of a :class:`~contextsteer.Simulation` (or that simulation
    itself, or a snapshot of its metrics). A Simulation failed inside with an
    AttributeError naming ``_metrics_info`` (fuzz round 24)."""
    core = getattr(sim, "_core", sim)
    if not hasattr(core, "_metrics_info"):
        raise TypeError(f"{owner}: expected a contextsteer.Simulation, got {type(sim).__name__}")
    return core


def summarize(
    core: Any, alive: np.ndarray, time: float, stuck: np.ndarray | None = None
) -> dict[str, Any]:
    """The metric set of a :class:`~contextsteer.Simulation` (or its C++ simulation) as a
    plain dict (see the module doc); :meth:`Simulation.metrics` calls it.

    ``alive`` selects the agents summarised; ``time`` is the simulation's current time.
    Non-finite values (no clearance measured, no lap) are ``None``.
    """
    core = _core_of("summarize", core)
    info = core._metrics_info()
    a = np.asarray(alive, dtype=bool)
    n = int(a.sum())
    elapsed = float(time - info["start_time"])
    stuck_now = None if stuck is None else int(np.asarray(stuck)[a].sum())
    if not info["enabled"]:
        # Nothing measured: None, not the zeros the idle accumulators hold.
        return {
            "schema_version": SCHEMA_VERSION,
            "enabled": False,
            "steps": 0,
            "time": elapsed,
            "agents": n,
            "collisions": None,
            "wall_contact_steps": None,
            "min_clearance": None,
            "time_to_goal": None,
            "path_length": None,
            "heading_jitter": None,
            "effort": None,
            "stuck": {"now": stuck_now, "ever": None},
            "composite": None,
        }
    m = agent_metrics(core)
    # A slot reused since the last update (metrics() read between an add and the next
    # step) still holds its last occupant's row: that one counts as removed, and the new
    # agent, not measured yet, has arrived nowhere.
    try:
        fresh = a & (core._metric_view("agent_generation") != core._metric_view("generation"))
    except (KeyError, ValueError):  # a core read directly, not through snapshot_summary
        fresh = np.zeros_like(a)
    am = a & ~fresh  # the alive agents measured so far
    # Kinematic agents (driven by their user) count in collisions, clearances and laps,
    # not in the steering's own statistics (time to goal, path, jitter, effort): a vehicle
    # whose target is where it was added arrived at 0 s.
    try:
        kin = np.asarray(core._metric_view("agent_kinematic"), dtype=bool)
    except (KeyError, ValueError):
        kin = np.zeros_like(a)
    am_nav = am & ~kin
    n_nav = int((a & ~kin).sum())  # the alive agents that are not kinematic
    # Collisions are the run's: agents since removed included (their rows, or their slots'
    # retired counts). Each agent-agent episode is counted by both partners.
    pairs = int(info["run_agent_episodes"]) // 2
    walls = int(info["run_wall_episodes"])
    arrived = ~np.isnan(m.time_to_goal[am_nav])
    goals = info["goal_radius"] >= 0
    t_agent = (
        np.where(arrived, m.time_to_goal[am_nav], elapsed - m.entry_time[am_nav])
        if goals
        else elapsed - m.entry_time[am_nav]
    )
    collisions = (m.agent_episodes[am_nav] + m.wall_episodes[am_nav]).astype(np.float64)
    composite = COLLISION_WEIGHT * collisions + t_agent + m.effort[am_nav]
    # The agents removed since configure_metrics (at an exit, say) count as the
    # collisions do: their own rows while their slots are free (or just reused), then the
    # slots' retired values. A removed agent's row says whether it was kinematic when last
    # measured (the slot's flag may be a new occupant's). The least clearances and the
    # wall contact take every row (one removed before its first step included; an unused
    # slot holds inf and 0).
    try:
        kin_then = np.asarray(core._metric_view("kinematic"), dtype=bool)
    except (KeyError, ValueError):
        kin_then = np.zeros_like(a)
    gone = (~a | fresh) & (m.alive_steps > 0)
    gone_nav = gone & ~kin_then
    least_wall = min(float(m.min_wall_clearance.min(initial=np.inf)), info["retired_min_wall"])
    least_agent = min(float(m.min_agent_clearance.min(initial=np.inf)), info["retired_min_agent"])
    # Jitter is a rate per step of travel: agents that have not travelled a step (at their
    # goal from the start) have none, and do not pull the mean to 0.
    travelled = am_nav & (m.travel_steps > 0)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "enabled": bool(info["enabled"]),
        "steps": int(info["steps"]),
        "time": elapsed,
        "agents": n,
        "collisions": {"agent_agent": pairs, "agent_wall": walls, "total": pairs + walls},
        "wall_contact_steps": int(m.wall_steps.sum()) + int(info["retired_wall_steps"]),
        "min_clearance": {
            "wall": _finite_or_none(least_wall),
            "agent": _finite_or_none(least_agent),
        },
        "time_to_goal": None,
        "path_length": _stats(m.path_length[am_nav]),
        "heading_jitter": (float(m.heading_jitter[travelled].mean()) if travelled.any() else None),
        "effort": float(m.effort[am_nav].mean()) if am_nav.any() else None,
        "stuck": {
            "now": None if stuck is None else int((np.asarray(stuck)[am_nav] & ~arrived).sum()),
            "ever": int(m.ever_stuck[am_nav | gone_nav].sum()) + int(info["retired_stuck"]),
        },
        "composite": float(composite.mean()) if am_nav.any() else None,
    }
    if goals:
        tg = m.time_to_goal[am_nav][arrived]
        gone_t = m.time_to_goal[gone_nav]
        gone_arrived = ~np.isnan(gone_t)
        removed_arrived = int(gone_arrived.sum()) + int(info["retired_arrivals"])
        removed_sum = float(gone_t[gone_arrived].astype(np.float64).sum()) + float(
            info["retired_time_to_goal"]
        )
        out["time_to_goal"] = {
            "goal_radius": _finite_or_none(float(info["goal_radius"])),
            "arrived": int(arrived.sum()),
            "fraction": float(arrived.sum() / n_nav) if n_nav else None,
            **_stats(tg),
            "removed": {
                "agents": int(gone_nav.sum()) + int(info["retired_agents"]),
                "arrived": removed_arrived,
                "mean": removed_sum / removed_arrived if removed_arrived else None,
            },
        }
    if info["path_length"] > 0:
        out["progress"] = _stats(m.progress[am])
        if info["closed_path"]:
            laps = m.laps[am]
            best = m.best_lap_time[am]
            out["laps"] = {
                "track_length": float(info["path_length"]),
                "total": int(laps.sum()),
                **_stats(laps.astype(np.float64)),
            }
            done = best[~np.isnan(best)]
            out["lap_time"] = {
                "best": float(done.min()) if len(done) else None,
                "mean_best": float(done.mean()) if len(done) else None,
            }
        if info["overtakes"]:
            out["overtakes"] = int(m.overtakes[am].sum())
    return out
