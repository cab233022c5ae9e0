"""Detours: a route round the agents standing in a stalled agent's way.

Local steering follows the interest towards the goal; where the only way round an
obstacle starts by walking away from the goal (a pillar with agents standing beside it,
a ring of agents that have reached their own goals), an agent paces in front of it for
good. A :class:`~contextsteer.NavField` knows the way round the world's walls, but not
round agents that stand still. :class:`Detour` watches the agents' progress and, for an
agent that has made none for a while, plans a route (:func:`~contextsteer.route`, a
visibility graph) round the walls near it and the agents standing near it, and leads it
along that route by writing its waypoints into ``Agents.target``, one after the other.
The steering does the rest, and keeps every guarantee it had: a detour only moves the
goal the interest points at.
"""

from __future__ import annotations

import math
import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks
from .nav import ALL_LAYERS, route
from .world import World, _core_world, _layers

_LIVE: weakref.WeakSet[Detour] = weakref.WeakSet()
"""Every Detour alive, so that ``Simulation.save`` can tell whether one leads agents of
the simulation saved (their goals are the detour's, not in the file)."""


def leading(sim: Any) -> int:
    """How many agents of ``sim`` a live Detour leads now to a waypoint (a target that is
    not the agent's goal: on the last leg it is the goal, which the file holds)."""
    total = 0
    for d in list(_LIVE):
        if d.sim is not sim or not d._on.any():
            continue
        away = np.any(sim.agents.target != d._goal, axis=1)
        total += int((d._on & away).sum())
    return total


if TYPE_CHECKING:
    from .simulation import Simulation

__all__ = ["Detour"]


def _length(what: str, value: Any, *, positive: bool = False) -> float:
    """A length or time of the detour (``_checks.length``), > 0 with ``positive``."""
    v = _checks.length(f"Detour: {what}", value)
    if positive and not v > 0:
        raise ValueError(f"Detour: {what} must be > 0, got {value!r}")
    return v


class Detour:
    """Routes agents that have stopped making progress round the agents standing in
    their way.

    Call :meth:`update` before every :meth:`Simulation.step` (after your own writes to
    ``agents.target``, if you make any). For each alive, steered (not kinematic) agent
    it tracks the distance to the point its interest aims at. An agent whose distance has
    not fallen by ``progress`` for ``stall_time`` seconds, and that is more than
    ``advance`` from its goal, is *stalled*. For a stalled agent it plans a route from
    the agent to its goal, however far, round:

    - the world's walls and circles within ``reach`` of the agent (obstacles of
      ``layers``);
    - the agents standing within ``reach`` (slower than ``standing_speed``, kinematic
      ones too), each a disc of its radius;

    keeping the agent's radius plus ``margin`` from all of them. A route whose body
    leaves that region (round a room's far side, say) is planned again round what lies
    within a region grown to hold it (up to ``4 * reach``): a route through walls and
    pillars left out has waypoints the agent cannot reach. ``margin`` (0.15 m) is
    wider than :class:`CollisionDanger`'s 5 cm on purpose: a route through a gap that the
    steering would not take is no help (docs/crowd.md, "Agents standing in the way").
    Where that closes every way (a goal in a pocket of agents standing whose mouth is
    wide enough for the steering's own margin but not for this one), the route keeps
    ``narrow_margin`` instead.

    A route that bends (three points or more) becomes the agent's detour: its corners are
    written into ``agents.target`` in turn, the next one once the agent is within
    ``advance`` of the current one, and the goal comes back after the last. An agent
    planned for while inside the route's clearance of a body standing (nearer than its
    radius, the body's and ``margin``) steps out first: until it is out of every such
    clearance, a corner is passed only within ``margin`` of it (aimed past the route's
    first corners, the course to a later one can pass the body nearer than the
    steering's own margin, and the agent stands there, re-routed to the same arc). A straight
    route (the way is blocked by agents that walk) or none (nothing standing leaves a
    way) leaves the agent to its steering, ends a detour it was on, and it is asked again
    after another ``stall_time``. A goal that a standing agent's body covers (the two
    bodies would overlap there) is taken and is not routed to. At most ``max_plans``
    agents are planned for a call, the longest stalled first. While it leads an agent (or
    has it stand aside, below), :attr:`Agents.waypoint` is set for it: its target is a
    point on its way, not its goal. So :class:`CollisionDanger`'s ``past_target`` does
    not read the walls beyond a waypoint as absent (the agent does not stop there), and
    the run metrics do not count coming within ``goal_radius`` of it as arriving. The
    last leg of a route that ends at the goal itself leads to the goal: there the mark is
    off. Every route without a field ends there; a route along a field that reaches the
    field's goal ends at the agent's own target when that lies within ``advance / 2`` of
    it (a field that ends at the target). The agent gets its own value back with its goal.

    The goals are what ``agents.target`` holds: write a new target at any time (also
    during a detour; writing the same goal again each step does not end a detour) and the
    detour adopts it. Steering whose interest reads ``agents.target`` (:class:`Seek`,
    :class:`Arrive`, :func:`scenarios.crowd_steering` without a ``field``) follows a
    detour as it is.

    **Making way.** With ``make_way``, a stalled agent that has no route round what
    stands, at either margin, is routed round the walls alone (with ``margin``), and
    the agents standing within ``margin`` of that route step aside (not kinematic, not
    led themselves, and with ``field`` only those that follow one of its fields). Each
    gets a target off the route, on its own side, far enough for the walker to pass
    with ``margin``, and its steering takes it there safely (or as near as it can).
    Where the route keeps only ``narrow_margin``, those standing nearer to it than
    ``margin`` step aside the same way, and a straight route is then followed too.
    With ``max_stretch``, a route round what stands that is more than ``max_stretch``
    times as long as the route round the walls alone is not taken either: those
    standing within ``margin`` of the short one step aside (when nobody does, the long
    route is taken). The walker follows the route. Each goes back to its goal once the
    walker's detour is over (it is within ``advance`` of its goal, or has a new one), or after
    ``yield_time``. A goal that a standing agent's body covers is still not routed to.
    People in a crowd do the same: whoever stands in a passage lets a walker by.

    Agents that follow a :class:`NavField` (``field=``): their goal is the field's, and
    ``agents.target`` is the detour's to write while it leads an agent or has it stand
    aside; then it gets back the target it had before (so a field that ends at the
    agents' targets, ``crowd_steering(field_ends_at_target=True)``, keeps doing so).
    Progress is the field's distance, a route ends ``reach`` along the field's descent
    (or at its goal; short of a body standing over that point, which part-way along the
    field is no taken goal), and while an agent is led its :class:`FollowField` weight is 0 and
    an :class:`Arrive` on ``agents.target`` takes it (then back). The steering must hold
    both with per-agent weights:
    ``scenarios.crowd_steering(field=field, detour_capacity=agents.capacity)`` builds it.
    Every agent the FollowField gives a field is watched. The detour
    moves only the goal: the steering's own safety and its outputs are unchanged, and the
    same run gives the same result (no randomness, no dependence on threads).

    Parameters
    ----------
    sim : Simulation
    stall_time : float, default 3.0
        Seconds without progress before an agent is stalled.
    progress : float, default 0.3
        The fall in distance (m) that counts as progress.
    standing_speed : float, default 0.1
        Agents slower than this (m/s) are obstacles of the route.
    reach : float, default 8.0
        Walls and standing agents within this distance of the stalled agent are
        routed round (farther, up to 4 times this, where the route leaves it).
    margin : float, default 0.15
        Clearance (m) the route keeps from walls and standing agents.
    narrow_margin : float, default 0.05
        Where no route keeps ``margin``, one that keeps this clearance is taken (at most
        ``margin``; the crowd steering's own margin is 0.05 m).
    advance : float, default 0.5
        Distance to a waypoint at which the next one is taken (``margin`` for an agent
        stepping out of its route's clearance, above); an agent this near its goal is
        never stalled.
    max_plans : int, default 8
        Routes planned at most per :meth:`update`.
    max_standing : int, default 100
        The nearest this many standing agents are routed round (the router tests every
        pair of corners: 100 discs take about 13 ms a route, 400 about 90 ms). The walls
        and circles of the world within reach are all routed round: a hall of 700 small
        pillars in reach takes about 2 s a plan, 1,300 about 6 s, and beyond the router's
        16,384 corners (about 1,400 circles at the default ``arc_points``) no route is
        planned and the agent steers locally. Give such a world fewer ``arc_points``, or
        ``field=`` a NavField.
    layers : int, optional
        The world's obstacles of these layers are routed round.
    arc_points : int, default 12
        :func:`route`'s corners round each circle and wall end.
    field : NavField, optional
        The field the agents follow (see above); its FollowField and the Arrive beside it
        are found in the simulation's steering.
    make_way : bool, default True
        Where no route keeps even ``narrow_margin`` from what stands (the agent is walled
        in by agents standing, or its goal lies in a pocket of them), the agents standing
        in the way step aside: see "Making way" above.
    yield_time : float, default 10.0
        Seconds at most that an agent stands aside for another.
    max_stretch : float >= 1, optional
        With ``make_way``: where the route round what stands is more than
        ``max_stretch`` times as long as the route round the walls alone, the agents
        standing in the short way step aside instead (see "Making way"). None: off.

    Attributes
    ----------
    plans : int
        Routes planned so far.
    detours : int
        How many of them bent, and became detours.
    yields : int
        Times an agent stood aside for another (``make_way``).

    Raises
    ------
    TypeError
        ``sim`` not a :class:`Simulation`; ``field`` not a :class:`NavField`; a
        parameter of the wrong type.
    ValueError
        A parameter out of its range (NaN, infinite, negative; ``max_plans`` below 1,
        ``arc_points`` outside [4, 256], ``layers`` not a 32-bit mask); with ``field``, a
        steering without a FollowField on it and an Arrive (or Seek) on
        ``agents.target``, both with per-agent weights.

    Examples
    --------
    >>> import contextsteer as cs
    >>> agents = cs.Agents(4)
    >>> _ = agents.add([[0.0, 0.0]], target=[[5.0, 0.0]])
    >>> sim = cs.Simulation(None, agents, cs.scenarios.crowd_steering(walls=False))
    >>> detour = cs.Detour(sim)
    >>> for _ in range(30):
    ...     planned = detour.update()  # after your own target writes, before the step
    ...     sim.step(1 / 30)
    >>> bool(detour.active[0])              # walking freely: no detour
    False
    """

    def __init__(
        self,
        sim: Simulation,
        *,
        stall_time: float = 3.0,
        progress: float = 0.3,
        standing_speed: float = 0.1,
        reach: float = 8.0,
        margin: float = 0.15,
        narrow_margin: float = 0.05,
        advance: float = 0.5,
        max_plans: int = 8,
        max_standing: int = 100,
        layers: int = ALL_LAYERS,
        arc_points: int = 12,
        field: Any = None,
        make_way: bool = True,
        yield_time: float = 10.0,
        max_stretch: float | None = None,
    ) -> None:
        from .simulation import Simulation

        if not isinstance(sim, Simulation):
            raise TypeError(f"Detour: expected a Simulation, got {type(sim).__name__}")
        self.sim = sim
        self.stall_time = _length("stall_time", stall_time, positive=True)
        self.progress = _length("progress", progress)
        self.standing_speed = _length("standing_speed", standing_speed)
        self.reach = _length("reach", reach, positive=True)
        self.margin = _length("margin", margin)
        self.narrow_margin = _length("narrow_margin", narrow_margin)
        if self.narrow_margin > self.margin:
            raise ValueError(
                f"Detour: narrow_margin must be at most margin ({self.margin}), "
                f"got {self.narrow_margin}"
            )
        self.advance = _length("advance", advance, positive=True)
        self.max_plans = _checks.integer("Detour: max_plans", max_plans, 1, 2**31 - 1)
        self.max_standing = _checks.integer("Detour: max_standing", max_standing, 0, 2**31 - 1)
        self.layers = _layers(layers)
        self.arc_points = _checks.integer("Detour: arc_points", arc_points, 4, 256)
        self.make_way = _checks.flag("Detour: make_way", make_way)
        self.yield_time = _length("yield_time", yield_time, positive=True)
        self.max_stretch = None if max_stretch is None else _length("max_stretch", max_stretch)
        if self.max_stretch is not None and not self.max_stretch >= 1.0:
            raise ValueError(f"Detour: max_stretch must be None or >= 1, got {max_stretch!r}")
        cap = sim.agents.capacity
        self._goal = np.zeros((cap, 2), np.float32)
        self._written = np.full((cap, 2), np.nan, np.float32)  # the waypoint last written
        self._on = np.zeros(cap, bool)  # on a detour
        self._routes: dict[int, np.ndarray] = {}  # the detours' waypoints
        self._wp = np.zeros(cap, np.int64)  # the current waypoint's index
        self._in = np.zeros(cap, bool)  # led from inside the route's clearance, not yet out
        self._best = np.full(cap, np.inf)  # least distance to the point aimed at
        self._since = np.zeros(cap)  # when it last fell by `progress`
        self._next = np.zeros(cap)  # earliest time of the next plan
        self._gen = np.zeros(cap, np.uint32)
        self._known = np.zeros(cap, bool)
        self._for = np.full(cap, -1, np.int64)  # the walker an agent stands aside for
        self._aside = np.zeros((cap, 2), np.float32)  # where it stands aside
        self._until = np.zeros(cap)  # when it goes back at the latest
        self.plans = 0
        self.detours = 0
        self.yields = 0
        self._busy = threading.Lock()
        self.field = field
        self._ff: Any = None  # field mode: the FollowField and the target interest
        self._tg: Any = None
        self._saved = np.zeros(cap, np.float32)  # an agent's field weight during a detour
        self._kept = np.zeros((cap, 2), np.float32)  # and its target (field mode)
        self._kept_wp = np.zeros(cap, bool)  # Agents.waypoint before a detour led it
        if field is not None:
            self._ff, self._tg = _field_pair(sim, field)
        _LIVE.add(self)  # once whole: a constructor that raised left no half detour there

    @classmethod
    def on_steering(cls, sim: Any, **kwargs: Any) -> Detour:
        """A detour on the field that ``sim``'s steering follows (its :class:`FollowField`'s),
        or on ``agents.target`` when it follows none; ``kwargs`` as the constructor's.
        What ``contextsteer run --detour`` builds."""
        from .behaviours import FollowField

        fields = [b.field for b in sim.steering.behaviours if isinstance(b, FollowField)]
        return cls(sim, field=fields[0] if fields else None, **kwargs)

    @_checks.safe_repr
    def __repr__(self) -> str:
        mode = "field" if self.field is not None else "targets"
        return (
            f"Detour({mode}: {int(self._on.sum())} agents on a detour; "
            f"plans={self.plans}, detours={self.detours}, yields={self.yields})"
        )

    def __copy__(self):
        raise TypeError(
            "Detour: copy.copy would share its plans and goals with the original; use "
            "copy.deepcopy((sim, detour)) or pickle for an independent copy"
        )

    def __getstate__(self) -> dict:
        """Pickle support: everything but the thread guard (a new one comes back). Pickle
        the detour with its simulation in one ``pickle.dumps((sim, detour))`` so that the
        copy leads the copied agents."""
        state = self.__dict__.copy()
        del state["_busy"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._busy = threading.Lock()
        _LIVE.add(self)
        if "_kept_wp" not in state:  # pickled before Agents.waypoint: goals as targets
            self._kept_wp = np.zeros(len(self._on), bool)
        if "_in" not in state:  # pickled before the step out of the clearance
            self._in = np.zeros(len(self._on), bool)

    # ----------------------------------------------------------------- reading ---
    @property
    def active(self) -> np.ndarray:
        """(capacity,) bool copy: agents on a detour now."""
        return self._on.copy()

    @property
    def yielding(self) -> np.ndarray:
        """(capacity,) bool copy: agents standing aside for another now (``make_way``)."""
        return self._for >= 0

    @property
    def goals(self) -> np.ndarray:
        """(capacity, 2) float32 copy of the goals: ``agents.target`` as you last wrote it
        (during a detour the target holds a waypoint)."""
        return self._goal.copy()

    def waypoints(self, i: int) -> np.ndarray:
        """(W, 2) float32: agent ``i``'s detour waypoints still ahead (the current one
        first); empty when it is not on a detour. ``i``: an agent id in [0, capacity)."""
        i = _checks.integer("Detour.waypoints: i", i, 0, len(self.sim.agents.alive) - 1)
        r = self._routes.get(i)
        return np.zeros((0, 2), np.float32) if r is None else r[self._wp[i] :].copy()

    # ----------------------------------------------------------------- update ---
    def update(self) -> int:
        """Track progress, plan routes for stalled agents, advance and write waypoints.

        Call it after your own writes to ``agents.target`` and before the next
        :meth:`Simulation.step`. Returns the number of routes planned in this call.

        Raises
        ------
        RuntimeError
            Called while another thread is in :meth:`update` of the same detour, or while
            another thread steps its simulation.
        """
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("Detour.update: in use by another thread (one thread at a time)")
        try:
            # The simulation and its agents held for the whole update, as a Flow's step
            # holds them: another thread's step is refused meanwhile (it ran while the
            # update wrote targets and waypoints, 622 of 624 steps; fuzz round 13).
            with self.sim._core._hold("Detour.update"):
                return self._update()
        finally:
            self._busy.release()

    def _update(self) -> int:
        sim, a = self.sim, self.sim.agents
        now = float(sim.time)
        alive = np.asarray(a.alive) & ~np.asarray(a.kinematic)
        pos = np.asarray(a.position)
        target = a.target  # writable view
        gen = np.asarray(a.generation)

        # Agents gone (dead or made kinematic) leave their detours; their targets are
        # no longer ours to write.
        for i in np.flatnonzero(self._on & ~alive):
            self._drop(int(i), give_back=False)
        # A new agent in a slot (or one seen for the first time): its target is its goal.
        fresh = alive & (~self._known | (gen != self._gen))
        for i in np.flatnonzero(fresh & self._on):
            self._drop(int(i), give_back=False)
        gone = (self._for >= 0) & (~alive | fresh)
        if gone.any():  # (their targets are not ours to write either)
            self._to_field(gone, give_back=False)
            self._for[gone] = -1
        self._known |= fresh
        self._gen[fresh] = gen[fresh]
        self._goal[fresh] = target[fresh]
        self._restart(fresh, now)

        # Adopt what the user wrote: off a detour the target is the goal; on one, a target
        # that is neither the waypoint written nor the goal is a new goal (and ends it).
        # (With a field the goal is the field's, and the target is the detour's alone.)
        field_d = None
        if self._ff is None:
            t = np.asarray(target)
            aside = self._for >= 0
            off = alive & ~self._on & ~aside
            new = off & np.any(t != self._goal, axis=1)
            moved = self._on & np.any(t != self._written, axis=1) & np.any(t != self._goal, axis=1)
            for i in np.flatnonzero(moved):
                self._drop(int(i))
            # An agent stood aside: a target neither its place aside nor its goal is new.
            moved_aside = aside & np.any(t != self._aside, axis=1) & np.any(t != self._goal, axis=1)
            self._to_field(moved_aside)
            self._for[moved_aside] = -1
            new |= moved | moved_aside
            self._goal[new] = t[new]
            self._restart(new, now)
        else:
            which = self._which()
            led = alive & (which >= 0) & (which < self.field.count)
            for i in np.flatnonzero(self._on & ~led):
                self._drop(int(i))
            alive = led
            field_d = np.full(len(alive), np.inf)
            if alive.any():
                field_d[alive] = self.field.query(pos[alive], which[alive]).distance

        # Advance along the detours; the goal again after the last waypoint. An agent led
        # from inside its route's clearance of a body standing steps out first: until it
        # is out (_inside), it passes a corner only within `margin` of it. The route's
        # first corners lead out of that clearance; aimed past them, the course to a
        # later one can cut into the body nearer than the steering allows (docs/crowd.md,
        # "Stepping out of the route's clearance").
        # Who stands (the plans' obstacles), computed only when an agent needs it.
        speed = np.hypot(*np.asarray(a.velocity).T) if (self._in & self._on).any() else None
        for i in np.flatnonzero(self._on):
            r = self._routes[int(i)]
            if self._in[i]:
                assert speed is not None
                self._in[i] = self._inside(int(i), pos, speed)
            while (
                self._wp[i] < len(r) and (gap := math.dist(pos[i], r[self._wp[i]])) < self.advance
            ):
                if self._in[i] and gap > self.margin:
                    break
                self._wp[i] += 1
                self._best[i], self._since[i] = np.inf, now
            if self._wp[i] >= len(r):
                self._drop(int(i))
                if self._ff is None:
                    target[i] = self._goal[i]
                self._restart(i, now)

        # Those stood aside go back once their walker is past (its detour over) or
        # after yield_time; until then their target is their place aside.
        for j in np.flatnonzero(self._for >= 0):
            w = int(self._for[j])
            if now >= self._until[j] or not self._on[w]:
                self._release(int(j), now)
            else:
                target[j] = self._aside[j]

        # Progress towards the point aimed at.
        aim = self._goal.copy()
        for i in np.flatnonzero(self._on):
            aim[i] = self._routes[int(i)][self._wp[i]]
        d = np.hypot(*(pos - aim).T)
        if field_d is not None:  # off a detour: the way left by the field
            d = np.where(self._on, d, field_d)
        better = alive & (d < self._best - self.progress)
        self._best[better] = d[better]
        self._since[better] = now

        if field_d is None:
            home = np.hypot(*(pos - self._goal).T) <= self.advance
        else:
            home = field_d <= self.advance
        stalled = (
            alive
            & ~home
            & (self._for < 0)
            & (now - self._since >= self.stall_time)
            & (now >= self._next)
        )
        order = np.flatnonzero(stalled)
        order = order[np.argsort(self._since[order], kind="stable")][: self.max_plans]
        if len(order):
            if speed is None:
                speed = np.hypot(*np.asarray(a.velocity).T)
            for i in order:
                self._plan(int(i), now, pos, speed)

        # Write the current waypoints. The last leg of a route that ends at the goal
        # itself leads to where the agent stops: a goal, not a waypoint (Agents.waypoint),
        # so that past_target holds on it as it would without the detour.
        goals = self._goal if self._ff is None else self._kept
        waypoint = a.waypoint
        for i in np.flatnonzero(self._on):
            r = self._routes[int(i)]
            target[i] = r[self._wp[i]]
            self._written[i] = target[i]
            # (the last leg to the goal: the mark the agent had before the detour)
            waypoint[i] = (
                self._wp[i] < len(r) - 1 or bool(np.any(r[-1] != goals[i])) or self._kept_wp[i]
            )
        return len(order)

    def _restart(self, which: Any, now: float) -> None:
        """Progress of ``which`` (index or mask) counted afresh from now."""
        self._best[which] = np.inf
        self._since[which] = now

    def _drop(self, i: int, give_back: bool = True) -> None:
        """Agent i off its detour (its target left as it is; with a field, the field leads
        it again and, with ``give_back``, its target is the one it had before). With
        ``give_back`` its ``Agents.waypoint`` is what it was before the detour too (not
        for an agent gone or new in its slot: ``add`` cleared that)."""
        if self._on[i]:
            self._to_field(i, give_back)
        self._on[i] = False
        self._routes.pop(i, None)
        self._wp[i] = 0
        self._written[i] = np.nan

    def _plan(self, i: int, now: float, pos: np.ndarray, speed: np.ndarray) -> None:
        """Plan agent i's route; a bent one becomes its detour."""
        a = self.sim.agents
        self.plans += 1
        self._since[i] = now
        self._next[i] = now + self.stall_time
        p = pos[i].astype(np.float64)
        r_i = float(a.radius[i])
        if self._ff is None:
            # The goal itself, however far: only what lies within reach is routed round,
            # and beyond it the route runs straight on (a point part-way could be inside
            # a body standing, or closed in, where the goal is not).
            end = self._goal[i].astype(np.float64)
        else:
            descent = self._along_field(p, int(self._which()[i]))
            if descent is None:  # the field does not reach the agent: nothing to route to
                if self._on[i]:
                    self._drop(i)
                return
            path, at_goal = descent
            end = path[-1]
            # A field that ends at the agent's target (crowd_steering's
            # field_ends_at_target): a route to the field's goal ends at that target, its
            # last leg to a goal (see the waypoints' writing in update).
            own = self._kept[i] if self._on[i] else a.target[i]
            if math.dist(end, own) <= 0.5 * self.advance:
                end = own.astype(np.float64)
            elif not at_goal:
                # Part-way along the field a body standing over the end does not make it
                # a taken goal: the route ends short of it, where none stands.
                end = self._uncovered(i, path, pos, speed)
        # The agents standing near it, kinematic ones too (the walkers are left to the
        # steering), and the walls: those within `known` of the agent, a region grown
        # until it holds the route's body (see _grow).
        known = self.reach
        pts = None
        narrow = False
        taken = False
        for _ in range(_GROWTHS + 1):
            near = self._standing(i, p, pos, speed, known)
            cs_ = pos[near].astype(np.float64)
            rs = np.asarray(a.radius)[near].astype(np.float64)
            # A goal that a standing agent's body covers is taken: no route reaches it.
            taken = len(cs_) > 0 and bool(np.any(np.hypot(*(cs_ - end).T) < rs + r_i))
            if taken:
                break
            if len(cs_) > self.max_standing:
                # The nearest ones: the route's graph grows with the square of its corners.
                keep = np.argsort(np.hypot(*(cs_ - p).T), kind="stable")[: self.max_standing]
                cs_, rs = cs_[keep], rs[keep]
            pts = None
            narrow = False
            world = World()
            if len(cs_):
                world.add_circles(cs_.astype(np.float32), rs.astype(np.float32))
            self._add_walls(world, p, known)
            if world.obstacle_count:
                # The full margin first; where it closes every way, the narrow one (a
                # goal in a pocket whose mouth the steering's own margin passes).
                for m in dict.fromkeys((self.margin, self.narrow_margin)):
                    pts = self._route(world, p, end, r_i + m).astype(np.float32)
                    if len(pts):
                        narrow = m != self.margin
                        break
            grown = _grow(known, self.reach, p, pts, r_i + self.margin)
            if grown is None:
                break
            known = grown
        if self.make_way and not taken:
            way = None
            if pts is None or not len(pts):
                # No way round what stands: route round the walls alone, and those
                # standing in the way step aside.
                way = self._walls_route(i, p, end, pos, near)
            elif narrow:
                # A way only at the narrow margin: those standing nearer to it than the
                # margin step aside to it.
                way = pts.astype(np.float64)
            elif self.max_stretch is not None and len(pts) > 2:
                # A way round what stands many times longer than the way round the walls
                # alone: those standing in the short way step aside instead.
                short = self._walls_route(i, p, end, pos, near)
                if short is not None and _path_length(pts) > self.max_stretch * _path_length(short):
                    way = short
            if way is not None and self._clear(i, now, way, pos, near):
                self._lead(i, way.astype(np.float32))
                return
        if pts is None or len(pts) <= 2:  # (an unreachable goal: no points)
            # No way round what stands, or none needed (the agents in the way walk): the
            # steering alone has the agent, and an earlier detour ends.
            if self._on[i]:
                self._drop(i)
                if self._ff is None:
                    a.target[i] = self._goal[i]
            return
        # Planned from inside the route's clearance of a body standing: it steps out first.
        self._lead(i, pts, self._inside(i, pos, speed))

    def _to_target(self, j: Any) -> None:
        """Agent(s) j's target is the detour's now, a waypoint or a place aside, not its
        goal: ``Agents.waypoint`` set (its value kept to give back). Field mode: steered
        by the Arrive on ``agents.target`` in place of the field (its weight and its
        target kept to give back)."""
        wp = self.sim.agents.waypoint
        self._kept_wp[j] = wp[j]
        wp[j] = True
        if self._ff is not None:
            self._kept[j] = self.sim.agents.target[j]
            self._saved[j] = self._ff.agent_weights[j]
            self._ff.agent_weights[j] = 0.0
            self._tg.agent_weights[j] = self._saved[j]

    def _to_field(self, j: Any, give_back: bool = True) -> None:
        """Undoes :meth:`_to_target` for agent(s) j: with ``give_back`` (not for an agent
        gone or new in its slot, whose mark ``add`` cleared) its ``Agents.waypoint`` and,
        in field mode, its target; in field mode the field leads it again."""
        if give_back:
            self.sim.agents.waypoint[j] = self._kept_wp[j]
        if self._ff is not None:
            self._ff.agent_weights[j] = self._saved[j]
            self._tg.agent_weights[j] = 0.0
            if give_back:
                self.sim.agents.target[j] = self._kept[j]

    def _lead(self, i: int, pts: np.ndarray, inside: bool = False) -> None:
        """Agent i on a detour along the route ``pts`` (its start first), its target
        marked a waypoint (:meth:`_to_target`); ``inside``: planned from inside the
        route's clearance of a body standing (see :meth:`_update`)."""
        if not self._on[i]:
            self._to_target(i)
        self._in[i] = inside
        self._routes[i] = pts[1:].copy()
        self._on[i] = True
        self._wp[i] = 0
        self._best[i] = np.inf
        self.detours += 1

    def _inside(self, i: int, pos: np.ndarray, speed: np.ndarray) -> bool:
        """Whether agent i stands inside its route's clearance of a body standing:
        nearer than r_i + r_j + ``margin`` to its centre."""
        p = pos[i].astype(np.float64)
        a = self.sim.agents
        radius = np.asarray(a.radius)
        near = self._standing(i, p, pos, speed, float(radius[i]) + self.margin)
        if not near.any():
            return False
        d = np.hypot(*(pos[near].astype(np.float64) - p).T)
        return bool(np.any(d < radius[near] + radius[i] + self.margin))

    def _standing(
        self, i: int, p: np.ndarray, pos: np.ndarray, speed: np.ndarray, known: float
    ) -> np.ndarray:
        """(capacity,) bool: the agents standing within ``known`` (+ 2 m: a body whose
        centre is farther can still reach into it) of agent i (at p), i not."""
        a = self.sim.agents
        still = np.asarray(a.alive) & (speed < self.standing_speed)
        still &= np.hypot(*(pos - p).T) <= known + 2.0
        still[i] = False
        return still

    def _route(self, world: World, p: np.ndarray, end: np.ndarray, radius: float) -> np.ndarray:
        """:func:`route`'s way from ``p`` to ``end`` (float64, empty when there is none).
        Round more corners than the router takes (``Router::kMaxCorners``: walls and
        bodies in reach by the thousand) there is none either: the agent steers locally
        (the router's ValueError, naming route, stopped the caller's simulation loop;
        fuzz round 19)."""
        try:
            points, offsets = route(world, p, end, radius, packed=True, arc_points=self.arc_points)
        except ValueError as exc:
            if "visibility graph would have" not in str(exc):
                raise
            return np.zeros((0, 2), np.float64)
        return np.asarray(points[offsets[0] : offsets[1]], np.float64)

    def _walls_route(
        self, i: int, p: np.ndarray, end: np.ndarray, pos: np.ndarray, near: np.ndarray
    ) -> np.ndarray | None:
        """``make_way``: agent i's route round the walls and the kinematic agents standing
        alone (they do not step aside), keeping ``margin``; None when there is none."""
        a = self.sim.agents
        radius = float(a.radius[i]) + self.margin
        known = self.reach
        way = None
        for _ in range(_GROWTHS + 1):
            world = World()
            fixed = near & np.asarray(a.kinematic) & (np.hypot(*(pos - p).T) <= known + 2.0)
            if fixed.any():
                world.add_circles(pos[fixed], np.asarray(a.radius)[fixed])
            self._add_walls(world, p, known)
            if not world.obstacle_count:
                return np.array([p, end], np.float64)
            way = self._route(world, p, end, radius)
            grown = _grow(known, self.reach, p, way, radius)
            if grown is None:
                break
            known = grown
        return way if way is not None and len(way) >= 2 else None

    def _clear(self, i: int, now: float, way: np.ndarray, pos: np.ndarray, near: np.ndarray) -> int:
        """``make_way``: the agents standing nearer to agent i's route ``way`` than
        r_i + r_j + ``margin`` (not kinematic, not led, not already aside; with a field,
        only those it leads) step aside, each on its own side of the nearest leg, to 5 cm
        beyond that from every leg. Returns how many."""
        a = self.sim.agents
        can = near & ~np.asarray(a.kinematic)
        can &= (self._for < 0) & ~self._on
        if self._ff is not None:  # only agents a field brings back to their goals
            which = self._which()
            can &= (which >= 0) & (which < self.field.count)
        movers = np.flatnonzero(can)
        if not len(movers):
            return 0
        x = pos[movers].astype(np.float64)
        a0, a1 = way[:-1], way[1:]
        leg = a1 - a0
        ll = np.maximum((leg * leg).sum(axis=1), 1e-12)
        t = np.clip(((x[:, None, :] - a0[None]) * leg[None]).sum(axis=2) / ll[None], 0.0, 1.0)
        c = a0[None] + t[..., None] * leg[None]  # (movers, legs, 2): nearest points
        dist = np.hypot(*(x[:, None, :] - c).transpose(2, 0, 1))
        k = np.argmin(dist, axis=1)
        rows = np.arange(len(movers))
        need = float(a.radius[i]) + np.asarray(a.radius)[movers].astype(np.float64) + self.margin
        block = np.flatnonzero(dist[rows, k] < need)
        target = a.target
        for b in block:
            j = int(movers[b])
            cj = c[b, k[b]]
            off = x[b] - cj
            n = float(np.hypot(*off))
            if n > 1e-9:
                off = off / n
            else:  # on the route: to the right of its leg
                d = leg[k[b]] / math.sqrt(ll[k[b]])
                off = np.array([d[1], -d[0]])
            spot = cj + off * (need[b] + 0.05)
            for _ in range(4):  # clear of the other legs too (a route bending round it)
                tt = np.clip(((spot - a0) * leg).sum(axis=1) / ll, 0.0, 1.0)
                gap = float(np.hypot(*(a0 + tt[:, None] * leg - spot).T).min())
                if gap >= need[b] + 0.05 - 1e-9:
                    break
                spot = spot + off * (need[b] + 0.05 - gap)
            self._aside[j] = spot
            self._for[j] = i
            self._until[j] = now + self.yield_time
            self._to_target(j)
            target[j] = self._aside[j]
            self.yields += 1
        return len(block)

    def _release(self, j: int, now: float) -> None:
        """Agent j, stood aside, back to its goal (with a field, the field leads it)."""
        self._to_field(j)
        if self._ff is None:
            self.sim.agents.target[j] = self._goal[j]
        self._for[j] = -1
        self._restart(j, now)

    def _which(self) -> np.ndarray:
        """(capacity,) int64: the field each agent follows, as its FollowField reads it."""
        a = self.sim.agents
        w = self._ff.which
        if w is None:
            return np.zeros(a.capacity, np.int64)
        if isinstance(w, str):  # "group"
            return np.asarray(a.group).astype(np.int64)
        if np.ndim(w) == 0:
            return np.full(a.capacity, int(w), np.int64)
        return np.asarray(w).astype(np.int64)

    def _along_field(self, p: np.ndarray, g: int) -> tuple[np.ndarray, bool] | None:
        """Field g's descent from p, ``reach`` long (or to the goal, if nearer), as its
        points (P, 2) from p on, the last the end of a detour's route for an agent led by
        a field; and whether that end is the field's goal. None where the field does not
        reach p."""
        q = p.copy()
        points = [q]
        walked = 0.0
        at_goal = False
        while walked < self.reach:
            r = self.field.query(q, g)
            dist, step = float(r.distance), np.asarray(r.direction, np.float64)
            if not math.isfinite(dist):
                if walked == 0.0:
                    return None
                break
            if dist <= 0.5 * self.advance or not step.any():
                at_goal = dist <= 0.5 * self.advance
                break
            h = min(0.5, dist, self.reach - walked)
            q = q + h * step
            points.append(q)
            walked += h
        return np.array(points), at_goal

    def _uncovered(
        self, i: int, path: np.ndarray, pos: np.ndarray, speed: np.ndarray
    ) -> np.ndarray:
        """The farthest point of ``path`` (past its first) that no agent standing covers
        (centres nearer than r_i + r_j), else its last: the end of a route part-way along
        a field. There a body standing is no taken goal, only a point to end short of."""
        a = self.sim.agents
        still = self._standing(i, path[0], pos, speed, math.inf)
        cs_, rs = pos[still].astype(np.float64), np.asarray(a.radius)[still] + a.radius[i]
        for q in path[:0:-1]:
            if not len(cs_) or np.all(np.hypot(*(cs_ - q).T) >= rs):
                return q
        return path[-1]

    def _add_walls(self, world: World, p: np.ndarray, known: float) -> None:
        """The sim's walls and circles of ``layers`` within ``known`` of p, into ``world``."""
        src = self.sim.world
        if src is None:
            return
        core = _core_world(src)
        lay = np.asarray(core.obstacle_layers)
        w = np.asarray(core.walls, np.float64)
        if len(w):
            keep = (lay[np.asarray(core.wall_obstacles)] & self.layers) != 0
            # Distance from p to each segment.
            ax, ay, bx, by = w.T
            dx, dy = bx - ax, by - ay
            ll = dx * dx + dy * dy
            t = np.clip(((p[0] - ax) * dx + (p[1] - ay) * dy) / np.where(ll > 0, ll, 1.0), 0, 1)
            dist = np.hypot(ax + t * dx - p[0], ay + t * dy - p[1])
            keep &= dist <= known
            if keep.any():
                _add_chains(world, w[keep], np.asarray(core.wall_obstacles)[keep])
        c = np.asarray(core.circle_centers, np.float64)
        if len(c):
            r = np.asarray(core.circle_radii, np.float64)
            keep = (lay[np.asarray(core.circle_obstacles)] & self.layers) != 0
            keep &= np.hypot(*(c - p).T) - r <= known
            if keep.any():
                world.add_circles(c[keep].astype(np.float32), r[keep].astype(np.float32))


def _add_chains(world: World, segs: np.ndarray, ids: np.ndarray) -> None:
    """The segments (M, 4) into ``world``, each run of consecutive rows of one obstacle
    whose ends meet as one polyline: a polyline's corners are the router's only at its
    ends and turns, where separate segments give every end point a polygon of corners
    (a fine-drawn wall routed 5 times slower)."""
    joined = (ids[1:] == ids[:-1]) & np.all(segs[1:, :2] == segs[:-1, 2:], axis=1)
    starts = np.flatnonzero(np.r_[True, ~joined])
    ends = np.r_[starts[1:], len(segs)]
    for a, b in zip(starts, ends):
        run = segs[a:b]
        world.add_polyline(np.vstack([run[:, :2], run[-1:, 2:]]).astype(np.float32))


# How many times a plan grows the region whose walls and standing agents it routes round,
# and how far (times reach).
_GROWTHS = 4
_MAX_GROWTH = 4.0


def _grow(
    known: float, reach: float, p: np.ndarray, pts: np.ndarray | None, radius: float
) -> float | None:
    """The region a route was planned in (the obstacles within ``known`` of p) holds
    every obstacle that its body (``radius``) can touch only when every point of it lies
    within ``known - radius`` of p (the legs between them then do too: the disc is
    convex). Else a larger region to plan in again (at most ``_MAX_GROWTH * reach``),
    None when it holds, there is no route, or the region is as large as it gets. A route
    round a room's far side, through pillars left out, led an agent to waypoints inside
    them, where it stood and was routed back the other way for good (docs/crowd.md,
    "Routes beyond reach")."""
    if pts is None or not len(pts) or known >= _MAX_GROWTH * reach:
        return None
    far = float(np.hypot(*(np.asarray(pts, np.float64) - p).T).max()) + radius
    if far <= known:
        return None
    return min(max(far + 1.0, 1.5 * known), _MAX_GROWTH * reach)


def _path_length(pts: np.ndarray) -> float:
    """Length of the polyline ``pts`` (W, 2)."""
    d = np.diff(np.asarray(pts, np.float64), axis=0)
    return float(np.hypot(d[:, 0], d[:, 1]).sum())


def _field_pair(sim: Any, field: Any) -> tuple[Any, Any]:
    """The FollowField on ``field`` and the interest that reads ``Agents.target`` in
    ``sim``'s steering, both with per-agent weights, for a detour to switch between."""
    from .behaviours import Arrive, FollowField, Seek
    from .nav import NavField

    if not isinstance(field, NavField):
        raise TypeError(f"Detour: field must be a NavField, got {type(field).__name__}")
    cap = sim.agents.capacity
    bs = list(sim.steering.behaviours)
    ff = [b for b in bs if isinstance(b, FollowField) and b.field is field]
    tg = [
        b
        for b in bs
        if (isinstance(b, Arrive) and b.target is None)
        or (isinstance(b, Seek) and b.targets is None)
    ]
    ok = len(ff) == 1 and len(tg) == 1
    ok = ok and all(
        b.agent_weights is not None and np.shape(b.agent_weights) == (cap,) for b in ff + tg
    )
    if not ok:
        raise ValueError(
            "Detour(field=...): the steering must hold one FollowField on this field and one "
            "Arrive (or Seek) that reads Agents.target, both with agent_weights of shape "
            f"(capacity,) = ({cap},), for the detour to switch agents between them; "
            "crowd_steering(field=..., detour_capacity=capacity) builds such a steering"
        )
    return ff[0], tg[0]
