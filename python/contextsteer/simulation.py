"""The simulation: the whole per-step pipeline of every agent, in C++.

``Simulation.step(dt, steps)`` runs perceive → combine → post-process → resolve → choose →
move → collide for all agents and all steps in one call with the GIL released, agents
split over threads; the agents' state is double-buffered, so results are bit-identical
for any thread count. The stages can also be called one at a time (:meth:`perceive`,
then edit :attr:`interest` / :attr:`danger` in NumPy, then :meth:`decide_and_move`) to
prototype a behaviour in Python.
"""

from __future__ import annotations

import copy
import math
import os
import warnings
import weakref
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, _core
from .behaviours import _buffer_mark, _check_lent, _lent_arrays
from .flow import Flow
from .maps import SlotSet, _f32
from .motion import Lerp, MotionModel
from .steering import Steering, _BuiltSteering
from .world import _core_world

if TYPE_CHECKING:
    from .agents import Agents
    from .classic import Blended, Priority
    from .history import History
    from .metrics import AgentMetrics
    from .path import Path
    from .world import World

__all__ = ["Simulation", "sweep_circle"]


def _view(name: str, doc: str) -> _checks.ReadOnlyArrayView:
    return cast(_checks.ReadOnlyArrayView, property(lambda self: self._core._view(name), doc=doc))


#: The pickle-state key of the flows' states taken with the simulation's (Simulation.__reduce__).
_FLOW_STATES = "__flow_states__"


def _refuse_reassignment(name: str) -> None:
    """A constructor argument the C++ simulation holds is read-only. Reassigning it once
    left step() on the old object while copies, History and the checks used the new one."""
    raise AttributeError(
        f"Simulation.{name} is fixed at construction (the simulation steps the object it "
        f"was built with); edit that object in place, or build a new Simulation"
    )


#: Constructor arguments the C++ simulation took: assigning one of these names on a
#: Simulation did nothing (``sim.layers = 1`` left the walls of the other layers
#: blocking), so it is refused.
_FIXED_AT_CONSTRUCTION = frozenset(
    {
        "slots",
        "push_apart",
        "push_relax",
        "push_passes",
        "decision_interval",
        "decision_validity",
        "slide_iterations",
        "collision",
        "stuck_distance",
        "stuck_time",
        "layers",
        "rotate",
        "decision_phases",
    }
)


def _num(name: str, value: Any, low: float = 0.0) -> float:
    if isinstance(value, bool) or not _checks.is_real(value):
        raise TypeError(f"Simulation: {name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < low:
        raise ValueError(f"Simulation: {name} must be finite and >= {low}, got {value!r}")
    return v


def _validity(value: Any, interval: Any, classic_spec: Any) -> float | None:
    """decision_validity: None, or seconds in (0, 1e6] with round-robin slicing off and
    context steering (the classic behaviours make no validity estimates)."""
    if value is None:
        return None
    v = _num("decision_validity", value)
    if not 0.0 < v <= 1e6:
        raise ValueError(f"Simulation: decision_validity must be in (0, 1e6] s, got {value!r}")
    if interval != 1:
        raise ValueError(
            "Simulation: decision_validity (Lewis's time slicing) and decision_interval "
            f"(round-robin) exclude each other; got decision_interval={interval!r}"
        )
    if classic_spec is not None:
        raise ValueError(
            "Simulation: decision_validity needs context steering (the classic behaviours "
            "make no validity estimates)"
        )
    return v


def _dt(value: Any) -> float:
    """A step's dt: a number of seconds in [1e-30, 1e6] (the core's float32 bounds)."""
    if isinstance(value, bool) or not _checks.is_real(value):
        raise TypeError(f"Simulation: dt must be a number, got {type(value).__name__}")
    v = float(value)
    if not 1e-30 <= v <= 1e6:
        raise ValueError(
            f"Simulation: dt must be a number of seconds in [1e-30, 1e6], got {value!r}"
        )
    return v


def _num32(name: str, value: Any, low: float = 0.0) -> float:
    """:func:`_num` that is also finite as a float32 (the core stores it as one)."""
    v = _num(name, value, low)
    with np.errstate(over="ignore"):
        finite = bool(np.isfinite(np.float32(v)))
    if not finite:
        raise ValueError(
            f"Simulation: {name} must be finite as a float32 (at most about 3.4e38), got {value!r}"
        )
    return v


def _flag(name: str, value: Any) -> bool:
    """A bool (Python or NumPy) or the ints 0 and 1, the library's rule for flags
    (``_checks.flag``); anything else, even a truthy string, is a TypeError."""
    return _checks.flag(f"Simulation: {name}", value)


def _int(name: str, value: Any, low: int, high: int = 2**31 - 1) -> int:
    """An int in [low, high] (default high: the core's int32 limit)."""
    if isinstance(value, bool) or not _checks.is_int(value):
        raise TypeError(f"Simulation: {name} must be an int, got {type(value).__name__}")
    if value < low or value > high:
        raise ValueError(f"Simulation: {name} must be in [{low}, {high}], got {value}")
    return int(value)


COLLISIONS = ("slide", "stop")


class Simulation:
    """Agents steered by a :class:`Steering` through a world, stepped in C++.

    Parameters
    ----------
    world : World or None
        Static walls (``None``: open space). Edits to the world are picked up at the
        next call.
    agents : Agents
        The state being simulated (its views show every step's result).
    steering : Steering or sequence of Behaviour, or classic steering
        A bare list of behaviours means ``Steering(behaviours)`` with its defaults. A
        :mod:`contextsteer.classic` Blended, Priority or behaviour steers by accelerations
        instead (the baseline; see that module): the chosen velocity is ``v + a·dt``.
    motion : MotionModel, default ``Lerp()``
        How the chosen direction and strength move an agent.
    seed : None
        Deprecated, has no effect (passing it warns). Every random draw of a run comes
        from the agents' per-agent ``rng`` states, seeded by ``Agents(seed=...)``, and from
        the seeds of the behaviours that draw (``Wander(seed=...)``), so runs are
        reproducible without it.
    slots : int or SlotSet, optional
        Slots K of the context maps (a ring, slot 0 along +x); default ``agents.slots``,
        else 16. A :class:`SlotSet` gives the directions themselves, e.g.
        :func:`contextsteer.scenarios.crowd_slots` (slots denser ahead, for steering that
        turns the slots with the heading).
    push_apart : bool, default True
        After moving, agents that overlap are pushed apart (Jacobi: each moves by half of
        every overlap, times ``push_relax``, computed from the same read-only positions),
        the push swept against the walls. A pass moves an agent at most its diameter or its
        deepest single push, whichever is larger, times the square root of how many agents
        it overlaps (about the radius of the disc they pack into), so a pile of bodies on
        one point spreads instead of flinging agents far away.
    push_relax : float in (0, 1], default 1
        The fraction of each overlap one push-apart pass removes.
    push_passes : int in [1, 64], default 8
        Push-apart passes per step: the Jacobi pass above, repeated at the positions the
        pass before left until no pair overlaps or the passes run out. One pass leaves
        half of an overlap whose other agent cannot move (a wall behind it, or a chain of
        agents pushing from both sides). The later passes visit only the agents that
        overlap; they are Jacobi passes too, so results stay bit-identical for any thread
        count. ``1`` is the single pass of earlier versions. In a crowd packed denser
        than its bodies fit (no number of passes separates everyone) each pass costs
        about what the first does: lower it there if the step time matters. Coarse steps
        press harder: at dt 0.25 s a chain of agents pinned in a corner can need more
        than 8 passes (a bottleneck crowd kept up to 16 mm of overlap with 8).
    decision_interval : int, default 1
        Time slicing, round-robin: agent ``i`` re-steers on steps where
        ``(step + i) % decision_interval == 0`` and moves on its last decision otherwise.
        An agent that has not decided yet (at the first step, or a new agent in a
        reused slot) decides at once and then waits for its turn: it has no decision of
        its own to move on (it stood until its turn came, up to
        ``decision_interval - 1`` steps).
    decision_validity : float or None, default None
        Lewis's time slicing: after each decision every behaviour estimates how long its
        scores stay valid for the chosen velocity, and the agent keeps its decision until
        the shortest of those times has elapsed, at most ``decision_validity`` seconds
        (rounded down to whole steps, at least one). The estimates, with ``w`` the chosen
        velocity (at the larger of the agent's speed and the chosen one), ``s = |w|`` and
        ``K`` slots, are the time until what the behaviour scored has moved by half a
        slot: targets (``Seek``, ``Arrive``, ``Flee``, ``Chase``, ``Avoid``, ``Pursue``,
        ``Evade``, ``Tether``; ``FollowPath``'s look-ahead point) at distance ``d``
        moving at ``u``: ``(π/K)·d/|w − u|``; neighbours (``AgentDanger``, flocking,
        ``CollisionDanger``): that bearing time or half the gap between the bodies over
        ``|w − u_j|`` (0 when they overlap); ``WallDanger``: half the nearest sensed hit
        (or the look-ahead) over ``s``; ``FollowField``: one cell (or ``(π/K)`` of its
        look-ahead) over ``s``; ``Bounds``: the way to the inner edge over ``s``;
        ``Wander``: a quarter of its noise period; ``Forward`` and ``Momentum``: no limit.
        An agent that ``CollisionDanger`` holds below the speed it wants (waiting for a
        way to open) decides again at the next step, and so does one whose
        ``Agents.target`` changed since its last decision (a caller's or a
        :class:`Detour`'s write; its blend memory is dropped, and a write between
        :meth:`perceive` and :meth:`decide_and_move` is taken at the next step).
        Targets a behaviour holds (``Seek(targets=...)`` edited in place) and targets
        that jump (a ``Pursue`` target moved by a write to its position) are not
        watched: the decision stands until its estimate runs out.
        :attr:`next_decision` and :attr:`validity` show the schedule. ``None`` (default):
        off. Needs ``decision_interval=1`` and context steering (not classic).
    slide_iterations : int, default 4
        Wall contacts a move may slide along (1 to 16).
    collision : {"slide", "stop"}, default "slide"
        Wall response: ``"slide"`` (Godot's ``move_and_slide``) as in the notes below;
        ``"stop"`` (Godot's ``move_and_collide``, the recipe's call): the move ends at the
        first contact, the rest of it is dropped, and velocity and heading are kept.
    stuck_distance, stuck_time : float, default 0
        An agent that stays within ``stuck_distance`` of a point for ``stuck_time``
        seconds is flagged in :attr:`stuck` (``stuck_time = 0`` disables it).
    layers : int
        Obstacle layers the agents collide with (default all).

    Notes
    -----
    Walls: agents are circles that never cross a wall segment or circle at any speed —
    each move is a swept circle (time of impact against every wall grown by the agent's
    radius) that stops a hair before contact and slides along the wall with the rest of
    the displacement; the velocity loses its component into the wall, and models whose
    heading follows the velocity (``Lerp``, ``Accel`` without independent facing) face
    the slid velocity (Godot: ``rotation = velocity.angle()`` after ``move_and_slide``).
    Counters (views):
    :attr:`wall_contacts` counts the steps in which an agent's move met a wall (the
    sweep stopped or slid on one; not the run metrics' ``wall_steps``, which count the
    steps ending within 1 % of the radius of a wall, gliding along it included),
    :attr:`overlaps` the neighbours it overlapped right after moving (before push-apart),
    summed over steps.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> world = cs.World(); _ = world.add_segments([[5, -5, 5, 5]])      # a wall ahead
    >>> agents = cs.Agents(2, slots=8)
    >>> _ = agents.add([[0, 0], [0, 3]], radius=0.5, max_speed=2, target=[[10, 0], [10, 3]])
    >>> steering = cs.Steering([cs.Seek(), cs.WallDanger(look_ahead=2)], resolve="mask")
    >>> sim = cs.Simulation(world, agents, steering, motion=cs.Lerp(steer_force=0.5))
    >>> sim.step(dt=0.1, steps=100)
    >>> bool((agents.position[:, 0] < 5 - 0.5).all())    # nobody went through the wall
    True
    >>> sim.step_count, round(sim.time, 3), sim.interest.shape
    (100, 10.0, (2, 8))
    """

    def __copy__(self):
        raise TypeError(
            "Simulation: copy.copy would share the C++ simulation and its agents "
            "with the original; use copy.deepcopy for an independent copy"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FIXED_AT_CONSTRUCTION:
            raise AttributeError(
                f"Simulation.{name} is fixed at construction (the C++ simulation took it "
                f"then, and assigning it would change nothing); build a new Simulation "
                f"with {name}={value!r}"
            )
        super().__setattr__(name, value)

    def __reduce__(self):
        """Pickle (and ``copy.deepcopy``) support.

        Pickles the world, agents, steering, motion model and parameters, and every buffer
        that carries state from one step to the next: time and step count, the maps (the
        temporal blend's memory), the last decisions (hysteresis' memory), counters, stuck
        timers and the run metrics' accumulators. An unpickled simulation continues
        bit-identically. Attributes set on the simulation after construction that hold
        plain data (numbers, strings, None, NumPy arrays and scalars, and tuples, lists and
        string-keyed dicts of them: a scenario's or a user's own settings, e.g. the
        evacuation scenario's room depth that its report reads) are pickled with it, and
        so is its :attr:`flow` (queues, counters and generator); any other attribute (a
        callback, a lock, a History) is left out, as every attribute was before. Attached
        histories are not included (they keep recording the original).

        The simulation's buffers and its agents' arrays are copied together under the
        thread guard, so a step running in another thread raises RuntimeError ("in use")
        rather than giving a copy whose step count and positions are of different steps.
        """
        # Held for the state and the flow's state together: a Flow step in another thread
        # between them gave a copy whose flow was steps ahead of its agents (walkers
        # counted in and never added once the copy stepped). The flow itself is pickled
        # as the object it is, so that one pickled beside its simulation comes back as the
        # simulation's (a copy of it was, and the caller's handle went stale; fuzz round
        # 24); its state taken here is written into it when the simulation is restored.
        with self._core._hold("Simulation.save / pickle"):
            state = self._core._state()
            extras = {
                k: v
                for k, v in vars(self).items()
                if k not in _OWN_ATTRIBUTES and (_plain_data(v) or isinstance(v, Flow))
            }
            flows = {
                k: copy.deepcopy(v.__getstate__()) for k, v in extras.items() if isinstance(v, Flow)
            }
        if flows:
            extras[_FLOW_STATES] = flows
        agents_state = state.pop("agents")
        rebuild = (
            _restore_simulation,
            (
                self.world,
                self.agents,
                self._source_steering,
                self.motion,
                self._init,
                self._metrics_args,
                state,
                agents_state,
            ),
        )
        # The caller's own attributes, when there are any, as the pickle's state.
        return (*rebuild, extras) if extras else rebuild

    def __setstate__(self, extras: dict[str, Any]) -> None:
        # The caller's attributes (the pickle's state), each flow's taken with the
        # simulation's state written into it (older pickles held a copy of the flow).
        extras = dict(extras)
        flows = extras.pop(_FLOW_STATES, {})
        self.__dict__.update(extras)
        for name, state in flows.items():
            self.__dict__[name].__setstate__(state)

    def save(self, path: str | bytes | os.PathLike) -> None:
        """Save the simulation to a file that :func:`contextsteer.load` reads back.

        The file is a zip archive with ``meta.json`` (format name and version, library
        version, the SHA-256 of the payload) and ``simulation.pickle`` (this object, as
        :meth:`__reduce__` describes). A loaded simulation continues bit-identically. Like
        any pickle, load only files you trust. Objects that drive the simulation from
        outside are not in the file: a :class:`Detour` keeps the goals of the agents it
        leads, whose targets are waypoints, so ``save`` warns while one leads agents of
        this simulation (pickle ``(sim, detour)`` together).
        """
        from .persist import save

        save(self, path, stacklevel=3)

    @property
    def flow(self) -> Flow | None:
        """The :class:`Flow` feeding this simulation (None: no flow), set by assignment
        (``sim.flow = cs.Flow([...])``, ``sim.flow = None`` to detach): each
        :meth:`step` then admits its arrivals, steps and removes those at their exits (see
        :mod:`contextsteer.flow`). Pickled and saved with the simulation."""
        flow = self.__dict__.get("_flow")
        if flow is not None and flow.__dict__.get("_fed") is None:
            # A flow loaded or copied with this simulation knows its agents at once, so
            # that its report leaves out agents removed before the next step (it listed
            # them as inside until then; fuzz round 22).
            flow.__dict__["_fed"] = weakref.ref(self.agents)
        return flow

    @flow.setter
    def flow(self, value: Flow | None) -> None:
        if value is not None and not isinstance(value, Flow):
            raise TypeError(f"Simulation.flow must be a Flow or None, got {type(value).__name__}")
        if value is not None:
            # A flow with members belongs to the agents it admitted: one copied or pickled
            # without its simulation took the member slots of this one's own agents, and
            # removed them at its exits (fuzz round 23). (A simulation copied or loaded
            # with its flow keeps it without this setter.)
            fed = value.__dict__.get("_fed")
            # (Members the caller removed from their simulation are not inside: round 24.)
            inside = int((value._still_inside() >= 0).sum())
            if inside and (fed is None or fed() is not self.agents):
                raise ValueError(
                    f"Simulation.flow: this Flow has {inside} agents inside another "
                    "simulation (or was copied without it); give this simulation its own Flow"
                )
        self.__dict__["_flow"] = value

    @property
    def world(self) -> World | None:
        """The World (or None) the agents move through; edits to it (obstacles added,
        doors opened and closed with :meth:`World.set_layers`) show at the next call. After
        any edit (also one that changes no geometry, such as ``cell_size``), the next
        :meth:`step` or :meth:`perceive` pushes every agent a wall cuts through out of it
        (a door closed on it), along the nearest wall's normal to its centre's side, in
        swept moves that slide along other walls; an agent whose centre a polygon or
        circle holds leaves it by the nearest candidate exit (beside an edge or a corner, 8
        round a circle) whose way out crosses no other wall, leaves the body clear of the walls
        past the solid's side and ends clear of every wall and solid (it stays where there
        is none; a polygon's holes from :meth:`World.add_shapely` are closed polylines, so
        they count as solid here as they do for :func:`inside`). Saved and
        pickled simulations carry a push that is due. Agents placed overlapping a wall are
        otherwise left to move away from it themselves."""
        return self._world

    @world.setter
    def world(self, value: object) -> None:
        _refuse_reassignment("world")

    @property
    def agents(self) -> Agents:
        """The Agents being simulated (its views show every step's result)."""
        return self._agents

    @agents.setter
    def agents(self, value: object) -> None:
        _refuse_reassignment("agents")

    @property
    def steering(self) -> Steering | Blended | Priority:
        """The Steering (or classic steering: a ``classic.Blended`` or
        ``classic.Priority``; a single classic behaviour given is run bare, as a
        one-behaviour ``Blended``) the agents decide by, as it was when this simulation was
        built: a read-only copy of the options (its behaviours are the ones given). The
        Steering passed in stays the caller's to edit for the next simulation;
        ``copy.copy(sim.steering)`` is an editable one."""
        return self._steering

    @steering.setter
    def steering(self, value: object) -> None:
        _refuse_reassignment("steering")

    @property
    def motion(self) -> MotionModel:
        """The MotionModel that moves the agents."""
        return self._motion

    @motion.setter
    def motion(self, value: object) -> None:
        _refuse_reassignment("motion")

    interest = _view("interest", "(N, K) float32 combined, post-processed interest (writable).")
    danger = _view("danger", "(N, K) float32 combined, post-processed danger (writable).")
    resolved = _view(
        "resolved",
        "(N, K) float32 (read-only) interest after resolve (with a speed map: "
        "also weighted by it and by the side preference, as choose saw it). An output "
        "of the step: a write would be lost at the next decision.",
    )
    speed = _view(
        "speed",
        "(N, K) float32 speed map, fractions of max_speed that are safe per "
        "slot (CollisionDanger; min over such behaviours), or None without one. "
        "With a speed map the chosen strength is the chosen slot's speed.",
    )
    sensed = _view(
        "sensed",
        "(N, K) float32 (read-only) what the slot rays of the first WallDanger "
        "sensed at the last perception: hit distance per slot (walls and, with "
        "its agents=True, other agents), +inf where clear within its look-ahead, "
        "NaN where no ray was cast (before the agent's first perception, or a dead "
        "agent); in the slot frame (turned with the agent when slots rotate). None "
        "without a WallDanger. What the plots draw as rays (none where NaN).",
    )
    perceived_position = _view(
        "perceived_position",
        "(N, 2) float32 (read-only) each agent's position when it last perceived (a step "
        "or perceive()): where its maps, sensed rays and chosen direction belong. After a "
        "step the agent has moved on from it; the plots draw the maps here. NaN before an "
        "agent's first perception (and for a new agent in a reused slot).",
    )
    perceived_heading = _view(
        "perceived_heading",
        "(N,) float32 (read-only) each agent's heading (radians) when it last perceived: "
        "the slot frame of its maps and sensed rays when slots turn with the agents (the "
        "heading after the step's move can differ by a whole slot or more). NaN before "
        "an agent's first perception.",
    )
    chosen_direction = _view(
        "chosen_direction",
        "(N, 2) float32 chosen unit heading (0: none) of the last step. Like the other "
        "per-agent results, it holds an agent's values from its first step on: an agent "
        "added into a slot since the last step shows the slot's previous occupant's until "
        "then (``Agents.generation`` tells them apart).",
    )
    acceleration = _view(
        "acceleration",
        "(N, 2) float32 (read-only) classic steering's last acceleration (zeros under "
        "context steering).",
    )
    strength = _view("strength", "(N,) float32 chosen strength in [0, 1].")
    chosen_slot = _view("chosen_slot", "(N,) int32 (read-only) chosen slot, -1 when none.")
    wall_contacts = _view(
        "wall_contacts",
        "(N,) int32 steps in which the agent's move met a wall (the sweep stopped or slid).",
    )
    overlaps = _view("overlaps", "(N,) int32 agent overlaps after moving, summed over steps.")
    stuck = _view("stuck", "(N,) bool (read-only): no progress for stuck_time seconds.")
    next_decision = _view(
        "next_decision",
        "(N,) uint64 (read-only), with decision_validity: the step count at which each "
        "agent decides next (0 before its first decision); None without it.",
    )
    validity = _view(
        "validity",
        "(N,) float32 (read-only), with decision_validity: how long (s) each agent's last "
        "decision was estimated to stay valid, before the cap and the rounding to steps "
        "(+inf: no behaviour limits it); None without it.",
    )
    braking = _view(
        "braking",
        "(N,) bool (read-only): Fray's brake rule slowed the agent at "
        "the last move (Vehicle: the chosen direction was more than brake_angle off "
        "the heading); always False for Lerp and Accel.",
    )
    still_time = _view("still_time", "(N,) float64 seconds without progress.")

    def __init__(
        self,
        world: World | None,
        agents: Agents,
        steering: Steering | Any,
        motion: MotionModel | None = None,
        *,
        seed: int | None = None,
        slots: int | SlotSet | None = None,
        push_apart: bool = True,
        push_relax: float = 1.0,
        push_passes: int = 8,
        decision_interval: int = 1,
        decision_validity: float | None = None,
        slide_iterations: int = 4,
        collision: str = "slide",
        stuck_distance: float = 0.0,
        stuck_time: float = 0.0,
        layers: int = 0xFFFFFFFF,
    ) -> None:
        from . import classic
        from .agents import Agents
        from .world import World

        if world is not None and not isinstance(world, World):
            raise TypeError(
                f"Simulation: world must be a contextsteer.World or None, got "
                f"{type(world).__name__}"
            )
        if not isinstance(agents, Agents):
            raise TypeError(
                f"Simulation: agents must be a contextsteer.Agents, got {type(agents).__name__}"
            )
        classic_spec = None
        if isinstance(steering, (classic.Behaviour, classic.Blended, classic.Priority)):
            self._source_steering: Any = steering  # (read-only, as its behaviours are)
            steering = classic.as_steering(steering)
            classic_spec = steering._spec()
        else:
            if not isinstance(steering, Steering):
                if steering is None or isinstance(steering, (str, bytes, int, float, dict)):
                    raise TypeError(
                        "Simulation: steering must be a Steering, a list of behaviours or a "
                        f"classic steering behaviour, got {type(steering).__name__}"
                    )
                steering = Steering(steering)
            # The options as they are now, checked: the caller's Steering (or list) stays
            # theirs to edit for the next simulation, and this one, its copies and its
            # saves all run what it was built with.
            built = steering._checked()
            self._source_steering = built
            steering = _BuiltSteering._of(built)
        motion = Lerp() if motion is None else motion
        if not isinstance(motion, MotionModel):
            raise TypeError(
                f"Simulation: motion must be a MotionModel, got {type(motion).__name__}"
            )
        if slots is None:
            slots = getattr(agents, "slots", None) or 16
        self._slot_set: SlotSet | None = None
        if isinstance(slots, SlotSet):
            self._slot_set = slots
            core_slots: Any = slots._impl
        else:
            slots = _int("slots", slots, 3, _checks.MAX_SLOTS)
            core_slots = slots
        from .maps import _memory_text, _physical_memory

        # The step's state: about 448 bytes an agent (positions, decisions, metrics, grid),
        # 24 an agent and slot (maps, rays, speeds, scratch) and 4 a neighbour an agent
        # (the lists). Measured 584-592 bytes an agent at K = 3-8 and 760-950 at K = 16;
        # 64 bytes a slot alone passed 1M agents at K = 3 (0.18 GiB counted, 1.35 GB
        # taken) into a bare std::bad_alloc (fuzz round 25). ``record=True`` keeps every
        # behaviour's (N, K) map besides: 4 bytes an agent, slot and behaviour (left out
        # of the count until 2026-12-07, so 300,000 agents × 256 slots × 16 recorded
        # behaviours passed it into a bare std::bad_alloc).
        k_ = slots.k if isinstance(slots, SlotSet) else slots
        neighbours = int(getattr(steering, "max_neighbours", 16) or 0)
        recorded = (
            len(getattr(steering, "behaviours", ())) if getattr(steering, "record", False) else 0
        )
        per_agent = 448 + (24 + 4 * recorded) * int(k_) + 4 * neighbours
        need = per_agent * len(agents.alive)
        if need > _physical_memory():
            kept = f", {recorded} recorded behaviour maps" if recorded else ""
            raise MemoryError(
                f"Simulation: {len(agents.alive):,} agents × {k_:,} slots (max_neighbours "
                f"{neighbours}{kept}) need about {need / 2**30:.3g} GiB ({per_agent:,} bytes "
                f"an agent), more than {_memory_text()}"
            )
        relax = _num("push_relax", push_relax)
        if not 0 < relax <= 1:
            raise ValueError(f"Simulation: push_relax must be in (0, 1], got {push_relax}")
        if collision not in COLLISIONS:
            raise ValueError(
                f"Simulation: collision must be one of {COLLISIONS}, got {collision!r}"
            )
        push_apart = _flag("push_apart", push_apart)
        params: dict[str, Any] = {
            "collision": collision,
            "push_apart": push_apart,
            "push_relax": relax,
            "push_passes": _int("push_passes", push_passes, 1, 64),
            "slide_iterations": _int("slide_iterations", slide_iterations, 1, 16),
            "decision_interval": _int("decision_interval", decision_interval, 1),
            "decision_validity": _validity(decision_validity, decision_interval, classic_spec),
            "stuck_distance": _checks.length("Simulation: stuck_distance", stuck_distance),
            "stuck_time": _num32("stuck_time", stuck_time),
            "layers": _int("layers", layers, 0, 2**32 - 1),
        }
        self._world = world
        self._agents = agents
        self._steering = steering
        self._motion = motion
        if seed is not None:
            warnings.warn(
                "Simulation(seed=...) has no effect and is deprecated: seed the agents "
                "(Agents(seed=...)) and the behaviours that draw (Wander(seed=...))",
                DeprecationWarning,
                stacklevel=2,
            )
        core_world = _core_world(world)
        if isinstance(steering, Steering):  # (classic_spec is None)
            behaviours, config = list(steering.behaviours), steering._config()
        else:
            behaviours, config = [], {**Steering([])._config(), "classic": classic_spec}
        self._core = _core.Simulation(
            core_world, agents, behaviours, config, motion, params, core_slots
        )
        self._decision_phases = int(config.get("decision_phases", 1))
        # The arrays the core now reads in place, and where their data lived when lent.
        self._lent = [
            (type(b).__name__, name, a, _buffer_mark(a))
            for b in behaviours
            for name, a in _lent_arrays(b)
        ]
        # Navigation fields the behaviours follow are rebuilt after world edits by the core,
        # at the start of each step, perceive or decide_and_move, under its thread guard.
        self._layers = params["layers"]
        self._init = dict(
            slots=slots,
            push_apart=push_apart,
            push_relax=relax,
            push_passes=params["push_passes"],
            decision_interval=params["decision_interval"],
            decision_validity=params["decision_validity"],
            slide_iterations=params["slide_iterations"],
            collision=collision,
            stuck_distance=params["stuck_distance"],
            stuck_time=params["stuck_time"],
            layers=params["layers"],
        )
        self.configure_metrics()  # the defaults, with the world as the baseline

    # ------------------------------------------------------------------ stepping ---
    def step(self, dt: float, steps: int | np.integer[Any] = 1) -> None:
        """Advance ``steps`` whole steps of ``dt`` seconds, entirely in C++.

        An agent that a step would carry beyond ±1e8 (the coordinates every call accepts)
        stops at that edge instead. With a :attr:`flow` attached, the steps run one C++
        call each, with the flow's arrivals, admissions and exits between them.

        Raises
        ------
        ValueError
            ``dt <= 0``, ``steps < 0``, an alive agent's state is not finite (or a
            size/limit is negative), or an array a behaviour borrows in place
            (``agent_weights``, shared ``targets``) was edited to hold NaN/inf or a
            negative weight — checked before the first step.
        RuntimeError
            The simulation (or its flow) is being stepped in another thread.
        """
        # The arguments first: converting them may run a caller's code (a __float__, an
        # __index__) that edits a lent array after its check (NaN weights reached the
        # maps of the step, and the error came at the next; fuzz round 13).
        dt_, steps_ = _dt(dt), _int("steps", steps, 0, 2**62)
        self._check_borrowed()
        flow = self.__dict__.get("_flow")
        if flow is None:
            self._core._step(dt_, steps_)
        else:  # one C++ step at a time, with the flow's arrivals and exits between them
            flow._advance(self, dt_, steps_)

    def _check_borrowed(self) -> None:
        """Arrays the behaviours lend the core in place may have been edited since the last
        step: check them (O(N), once a call) so a NaN never flows into the maps. The core
        holds their data pointers, so an array resized, given another dtype or otherwise
        moved (``ndarray.resize``) is refused before the core could read freed memory."""
        for owner, name, a, mark in self._lent:
            if _buffer_mark(a) != mark:
                raise ValueError(
                    f"{owner}: {name} (or the array it is a view of) was resized or "
                    f"reallocated since this simulation was built (shape {mark[0][1]}, dtype "
                    f"{mark[0][2]}; now shape {a.shape}, dtype {a.dtype}): the simulation "
                    "reads it in place, so edit its values in place, or build a new "
                    "simulation with the new array"
                )
        capacity = len(self.agents.alive)
        for b in getattr(self.steering, "behaviours", ()):
            _check_lent(b, capacity=capacity)

    def perceive(self) -> None:
        """Stage 1: behaviours, combine and post-processing into :attr:`interest` /
        :attr:`danger`, for the agents deciding at this step (with ``decision_interval``
        or ``decision_validity``, the others' rows keep their last values and are not
        read by :meth:`decide_and_move`). With ``Steering(decision_phases > 1)`` it
        computes every deciding agent's maps at once, for a look at them;
        :meth:`decide_and_move` then refuses, and :meth:`step` decides in phases.

        The maps are views into the simulation's buffers, rewritten in place at every
        step: copy them (``sim.interest.copy()``) to keep an observation.

        Examples
        --------
        Prototype a behaviour in NumPy between the stages:

        >>> import numpy as np, contextsteer as cs
        >>> agents = cs.Agents(1, slots=4); _ = agents.add([0, 0], max_speed=1)
        >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
        >>> sim.perceive()
        >>> sim.interest[0] = [0, 1, 0, 0]          # "go north", written in Python
        >>> sim.decide_and_move(dt=1.0)
        >>> agents.position[0].round(3) + 0.0
        array([0., 1.], dtype=float32)
        """
        self._check_borrowed()
        self._core._perceive()

    def decide_and_move(self, dt: float) -> None:
        """Stage 2: resolve and choose (from :attr:`interest` / :attr:`danger` as they
        are now), then move, collide and push apart; advances :attr:`time` by ``dt``.
        The maps are read as they are: without a :meth:`perceive` (or maps written by
        hand) since the last step they are that step's, and on a new simulation zeros, on
        which nobody moves.

        Raises
        ------
        ValueError
            ``dt <= 0``, NaN/inf in the maps or in an alive agent's state (finite values
            written into the maps are used as they are: beyond 2^60 the kernels saturate
            them, where ``cs.resolve`` / ``cs.choose`` refuse them); the steering
            decides in phases (``Steering(decision_phases > 1)``: each phase perceives
            after the phases before it have decided, which :meth:`step` does and this
            split cannot).
        """
        if self._decision_phases > 1:
            raise ValueError(
                f"Simulation.decide_and_move: the steering decides in "
                f"{self._decision_phases} phases, each perceiving after the ones before "
                f"it; use step(), or Steering(decision_phases=1) to edit the maps between "
                f"perceive() and decide_and_move()"
            )
        self._core._decide_and_move(_dt(dt))

    def resolve_and_move(self, dt: float) -> None:
        """Deprecated alias of :meth:`decide_and_move` (warns)."""
        warnings.warn(
            "Simulation.resolve_and_move is deprecated; use decide_and_move",
            DeprecationWarning,
            stacklevel=2,
        )
        self.decide_and_move(dt)

    # ------------------------------------------------------------ observation ---
    def configure_metrics(
        self,
        *,
        goal_radius: float | None = None,
        path: Path | None = None,
        overtakes: bool = False,
        contact_tolerance: float = 0.01,
        clearance_range: float | None = None,
        enabled: bool = True,
    ) -> None:
        """Choose what the run metrics measure and reset them (see :mod:`contextsteer.metrics`).

        The current state becomes the baseline (contacts that exist now are not
        episodes). A new simulation measures with the defaults.

        Parameters
        ----------
        goal_radius : float, optional
            Time to goal: an agent arrives the first time it is within ``goal_radius``
            of its ``target``, when that is a goal (not :attr:`Agents.waypoint`: a
            :class:`Detour` writes its waypoints into the targets). None: no goals.
        path : Path, optional
            Progress along this path (laps on a closed one).
        overtakes : bool
            Count overtakes along ``path``, which must then be closed (O(N²) a step, and a
            table of 4·N² bytes, N the Agents' capacity, not the agents alive).
        contact_tolerance : float in [0, 1)
            Relative tolerance of wall and agent contacts.
        clearance_range : float, optional
            Clearances are measured up to this distance (default 4 × the largest radius).
        enabled : bool
            False skips the metrics entirely (no cost per step). The metrics' queries
            also serve the next step: their agent query makes its neighbour lists (when
            the steering reads neighbours) and their wall query answers its slot wall
            sensors' nearest-wall question, unless positions, alive flags, the
            neighbour radius or the world change in between. So on or off the agents
            move identically, and the metrics cost little beyond those queries.

        Raises
        ------
        TypeError
            ``path`` is not a :class:`~contextsteer.Path`, a number is not a number, or
            ``enabled`` / ``overtakes`` is not a bool.
        ValueError
            A distance or tolerance is negative, or not finite as a float32;
            ``overtakes`` without a closed ``path``.
        MemoryError
            ``overtakes`` for more agent slots than the memory this process may use holds the table of.

        Examples
        --------
        >>> import contextsteer as cs
        >>> agents = cs.Agents(1, slots=8)
        >>> _ = agents.add([0, 0], max_speed=1, target=[2, 0])
        >>> sim = cs.Simulation(None, agents, [cs.Seek()], motion=cs.Lerp(steer_force=1))
        >>> sim.configure_metrics(goal_radius=0.5)
        >>> sim.step(dt=0.1, steps=30)
        >>> m = sim.metrics()
        >>> m["time_to_goal"]["arrived"], round(m["time_to_goal"]["mean"], 2)
        (1, 1.5)
        """
        if path is not None and not hasattr(path, "_path"):
            raise TypeError(f"configure_metrics: path must be a Path, got {type(path).__name__}")
        on = _flag("enabled", enabled)
        count_overtakes = _flag("overtakes", overtakes)
        if count_overtakes and (path is None or not path.closed):
            given = "no path" if path is None else "an open path"
            raise ValueError(
                f"configure_metrics: overtakes need a closed path (path=Path(..., "
                f"closed=True)), got {given}"
            )
        if count_overtakes:
            from .maps import _memory_text, _physical_memory

            n = len(self.agents.alive)  # the table is per slot pair: the capacity, squared
            need = 4 * n * n
            if need > _physical_memory():
                raise MemoryError(
                    f"configure_metrics: overtakes keep an N×N table of the Agents' slots: "
                    f"{n:,} slots need about {need / 2**30:.3g} GiB, more than "
                    f"{_memory_text()}"
                )
        goal = (
            -1.0 if goal_radius is None else _checks.length("Simulation: goal_radius", goal_radius)
        )
        rng = (
            -1.0
            if clearance_range is None
            else _checks.length("Simulation: clearance_range", clearance_range)
        )
        tol = _num32("contact_tolerance", contact_tolerance)
        self._metrics_path = path
        self._core._configure_metrics(
            on,
            goal,
            None if path is None else path._path,
            count_overtakes,
            tol,
            rng,
            int(self._layers),
        )
        self._metrics_args = dict(
            goal_radius=goal_radius,
            path=path,
            overtakes=count_overtakes,
            contact_tolerance=tol,
            clearance_range=clearance_range,
            enabled=on,
        )

    def metrics(self) -> dict[str, Any]:
        """The run metrics since :meth:`configure_metrics` (or construction), as a plain
        dict: collisions (contact episodes of the whole run, agents since removed
        included: ``agent_agent`` counts each pair's episode once, ``agent_wall`` each
        agent's), and of the alive agents min clearance, time to
        goal, path length, progress/laps/overtakes (with a path), heading jitter,
        effort, stuck agents and SteerBench's composite score. ``schema_version``
        (:data:`contextsteer.metrics.SCHEMA_VERSION`) names the layout of the dict.

        Examples
        --------
        >>> import contextsteer as cs
        >>> agents = cs.Agents(2, slots=8)
        >>> _ = agents.add([[0, 0], [3, 0]], velocity=[[1, 0], [-1, 0]], max_speed=1)
        >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1),
        ...                     push_apart=False)
        >>> sim.step(dt=0.1, steps=20)        # head-on: they meet and pass through
        >>> m = sim.metrics()
        >>> m["collisions"], round(m["path_length"]["mean"], 3)
        ({'agent_agent': 1, 'agent_wall': 0, 'total': 1}, 2.0)
        """
        from .metrics import snapshot_summary

        return snapshot_summary(self._core)

    @property
    def agent_metrics(self) -> AgentMetrics:
        """Per-agent metric arrays (:class:`contextsteer.metrics.AgentMetrics`, read-only views)."""
        from .metrics import agent_metrics

        return agent_metrics(self._core)

    def record(
        self,
        every: int | np.integer[Any] = 1,
        *,
        maps: bool = False,
        reserve: int | np.integer[Any] | None = None,
    ) -> History:
        """Attach a :class:`History` recording every ``every`` steps (see there)."""
        from .history import History

        return History(self, every, maps=maps, reserve=reserve)

    # ------------------------------------------------------------------ state ---
    @property
    def time(self) -> float:
        """Simulated seconds so far (a ``RuntimeError`` while another thread steps)."""
        return self._core.time

    @property
    def step_count(self) -> int:
        """Steps taken so far (a ``RuntimeError`` while another thread steps)."""
        return self._core.step_count

    @property
    def slots(self) -> int:
        """K, the number of slots of every agent's maps."""
        return self._core.slots

    @property
    def slot_set(self) -> SlotSet:
        """The slot directions (a regular ring of :attr:`slots` unless a :class:`SlotSet`
        was given), in the slot frame: turned with each agent's heading when the steering
        has ``rotate=True``."""
        return self._slot_set if self._slot_set is not None else SlotSet(self.slots)

    @property
    def behaviour_maps(self) -> dict[str, np.ndarray | None]:
        """Each behaviour's own map of the last perceive, ``{name: (N, K) view}``
        (interest or danger, whichever it writes). Empty unless ``Steering(record=True)``."""
        if not isinstance(self.steering, Steering) or not self.steering.record:
            return {}  # (classic steering: no maps)
        return {name: self._core._behaviour_map(b) for b, name in enumerate(self.steering.names)}

    @_checks.safe_repr
    def __repr__(self) -> str:
        return (
            f"Simulation(agents={self.agents!r}, slots={self.slots}, "
            f"step_count={self.step_count}, time={self.time:g})"
        )


def sweep_circle(
    world: World,
    start: ArrayLike,
    displacement: ArrayLike,
    radius: float,
    *,
    iterations: int = 4,
    layers: int = 0xFFFFFFFF,
) -> tuple[np.ndarray, np.ndarray]:
    """Move circles through the world's walls without crossing them (collide and slide).

    The swept test the simulation uses for every move: each circle of ``radius`` moves
    from ``start`` by ``displacement``, stops just before its first contact and slides
    along the wall with the rest, for at most ``iterations`` contacts. "Just before" is a
    skin of 1e-3 of the radius along the wall's normal, itself swept against the other
    obstacles, so a circle pressed into an acute corner never ends inside either side. A
    circle that starts inside an obstacle (wedged, or placed there) may leave it or slide,
    but never ends deeper in any obstacle than it started: a move whose end is deeper
    takes the nearest float32 neighbour of that end that is not (far from the origin the
    rounding of an end in an acute corner alone can sink it), else the last of its
    contact stops that is not, else is not taken.

    Parameters
    ----------
    world : World
    start, displacement : array_like, shape (N, 2)
        Finite and within ±1e8 (the accepted coordinates; ``ValueError`` otherwise).
    radius : float, >= 0
        A radius below ``2**-22 * max(1, |x|, |y|)`` (two float32 spacings of the larger
        coordinate, and at least 2.4e-7: 0 included) is swept as that radius: a point can
        otherwise slip between two walls at their shared vertex. Such a circle stops that
        far short of a wall instead of on it.
    iterations : int, 1 to 16
        Contacts a move may slide along before it stops.
    layers : int, optional
        Only obstacles whose layer mask shares a bit with this one block the move (all
        layers by default).

    Returns
    -------
    position : ndarray of float32, shape (N, 2)
    contacts : ndarray of int32, shape (N,)
        Walls touched by each move.

    Examples
    --------
    >>> import contextsteer as cs
    >>> world = cs.World(); _ = world.add_segments([[1, -5, 1, 5]])
    >>> pos, contacts = cs.sweep_circle(world, [[0, 0]], [[1000, 0]], 0.25)   # very fast
    >>> bool(pos[0, 0] < 0.75), int(contacts[0])
    (True, 1)
    """
    from .world import _layers, _private, _world

    # Copied when still the caller's memory (as raycast's inputs): the core checks them,
    # then reads them again without the GIL, and a NaN another thread wrote in between
    # went into the sweep unchecked.
    return _core.sweep_circle(
        _world(world),
        _private(_f32(start, "start"), start),
        _private(_f32(displacement, "displacement"), displacement),
        _checks.length("sweep_circle: radius", radius),
        _checks.integer("sweep_circle: iterations", iterations, 1, 16),
        _layers(layers),
    )


#: What Simulation.__init__ sets (rebuilt on unpickling); any other attribute is the
#: caller's and is pickled as it is (tests/test_persist.py checks that the two agree).
_OWN_ATTRIBUTES = frozenset(
    {
        "_agents",
        "_core",
        "_decision_phases",
        "_init",
        "_layers",
        "_lent",
        "_metrics_args",
        "_metrics_path",
        "_motion",
        "_slot_set",
        "_source_steering",
        "_steering",
        "_world",
    }
)


def _plain_data(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is plain data a saved simulation may carry (see
    :meth:`Simulation.__reduce__`): numbers, strings, bytes, None, NumPy arrays (not of
    objects) and scalars, and tuples, lists and str-keyed dicts of them, 8 levels deep."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype != object
    if depth >= 8:
        return False
    if isinstance(value, (tuple, list)):
        return all(_plain_data(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_data(v, depth + 1) for k, v in value.items())
    return False


def _restore_simulation(
    world: World | None,
    agents: Agents,
    steering: Any,
    motion: MotionModel,
    init: dict[str, Any],
    metrics: dict[str, Any],
    state: dict[str, bytes],
    agents_state: dict[str, Any] | None = None,
) -> Simulation:
    """Rebuild a pickled simulation (see :meth:`Simulation.__reduce__`). ``agents_state``
    (absent from older pickles) is the agents' arrays taken with the simulation's state:
    written into the restored agents, so the two are of the same step even if the agents
    object itself was pickled at another moment."""
    from .agents import Agents, _restore_column

    if agents_state is not None:
        for name in Agents.STATE:
            if name in agents_state:
                _restore_column(agents, name, agents_state[name])
    init = {k: v for k, v in init.items() if k != "seed"}  # pickles from before its deprecation
    # Pickles from before push_passes pushed apart once a step: they continue as they were.
    init.setdefault("push_passes", 1)
    sim = Simulation(world, agents, steering, motion, **init)
    metrics = dict(metrics)
    path = metrics.get("path")
    if path is None or not path.closed:  # pickles from before overtakes needed a closed path,
        metrics["overtakes"] = False  # where they counted nothing
    sim.configure_metrics(**metrics)
    sim._core._set_state(state)
    return sim
