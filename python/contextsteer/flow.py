"""Continuous flows: pedestrians who arrive at a rate, queue for a free place and leave.

A :class:`Source` describes one stream: where its pedestrians enter (an area), how many
arrive a second (Poisson), their bodies and desired speeds, where they walk to (a point
or the nearest point of a goal line) and where they leave the simulation (an exit area).
A :class:`Flow` holds one or more sources with their queues and counters. Attached to a
simulation (``sim.flow = Flow(...)``), it acts inside :meth:`Simulation.step`:

1. **Arrivals.** At the first step of each ``period`` (the simulation's time within half
   a step of ``start + k * period``, or past it), every source draws its newcomers, in
   source order; a step that a ``period`` shorter than the step covers more than once
   draws every batch due, in order of ``k``, so no arrival is lost to a coarse step:
   a Poisson count with mean ``rate * period`` (the rate in force at the batch's time,
   for a source with a schedule, read 4 ulps of ``max(|start|, |k * period|, |time|)``
   past that time computed in double, so that its rounding never reads the rate before
   a change due at it), then their radii, their desired speeds and a seed each
   (``integers(2**63)``), from the flow's own generator (``seed``). They join the end of
   the source's queue, which keeps 24 bytes a person.
2. **Admission**, right after: the head of each queue (sources in order) draws its
   ``tries`` candidate places, uniform in the area shrunk by its radius plus the
   clearance, from ``numpy.random.default_rng(its seed)``, each rounded to float32 (as
   the agent will hold it), and enters at the first of
   them that is free, that is at least ``radius + clearance``
   from every agent's disc, from every wall and outside every solid obstacle; the next
   in the queue then tries, and so on. When the head finds no free place, or the agents
   have no free slot, that queue waits until the next period. An admitted pedestrian
   becomes an agent with its radius, ``max_speed`` its desired speed, the source's
   ``max_accel``, its target, heading towards the target and velocity 0.
3. **The step**, as without a flow.
4. **Exits.** Every agent of a source whose centre is then inside that source's exit
   area (bounds included) is removed, and its travel time (from its admission) counted.

Agents that were not admitted by the flow are left alone (a flow can feed a scene that
already holds agents), and an agent of the flow that the caller removes (or whose slot is
re-used) is forgotten. Only :meth:`Simulation.step` runs the flow: the staged calls
(``perceive`` / ``decide_and_move``) do not. The outputs depend only on the seed and
the inputs (the flow's draws do not depend on the thread count), and a simulation
pickled or saved with its flow continues bit-identically.

Examples
--------
A corridor fed from its left end; people leave at the right end:

>>> import contextsteer as cs
>>> world = cs.World()
>>> _ = world.add_segments([[-1, 0, 11, 0], [-1, 3, 11, 3]])
>>> agents = cs.Agents(200, slots=16)
>>> sim = cs.Simulation(world, agents, cs.scenarios.crowd_steering(),
...                     motion=cs.Accel(), slots=cs.scenarios.crowd_slots())
>>> sim.flow = cs.Flow([cs.Source(area=[0, 0, 2, 3], rate=1.0, target=[[12, 0], [12, 3]],
...                               exit=[10, -1e9, 1e9, 1e9])], seed=1)
>>> sim.step(1 / 30, steps=900)
>>> r = sim.flow.report()
>>> r["offered"] == r["entered"] + r["queued"], r["entered"] == r["out"] + r["inside"]
(True, True)
"""

from __future__ import annotations

import bisect
import contextlib
import math
import signal
import threading
import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks

if TYPE_CHECKING:
    from .simulation import Simulation

__all__ = ["Flow", "Source"]

_MAX_PER_PERIOD = 1_000_000
"""Largest mean arrival count of one source in one period (``rate * period``)."""

MAX_BATCHES_PER_STEP = 10_000
"""Most arrival batches one step may draw (``dt / period``): a step over more periods is
refused rather than looping over them."""


def _box(what: str, value: Any, *, infinite: bool) -> tuple[float, float, float, float]:
    a = _checks.real_array(what, value)
    if a.shape != (4,):
        raise ValueError(f"{what} must be [xmin, ymin, xmax, ymax], got shape {a.shape}")
    if np.isnan(a).any() or (not infinite and not np.isfinite(a).all()):
        kind = "not NaN" if infinite else "finite"
        raise ValueError(f"{what} must be {kind}, got {a.tolist()}")
    if not (a[0] <= a[2] and a[1] <= a[3]):
        raise ValueError(f"{what} must have xmin <= xmax and ymin <= ymax, got {a.tolist()}")
    if not infinite and np.abs(a).max() > _checks.MAX_COORDINATE:
        raise ValueError(f"{what} must be at most 1e8 in magnitude, got {a.tolist()}")
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))


def _rate(value: Any) -> float | tuple[tuple[float, float], ...]:
    """A rate (finite, >= 0) or a schedule of (time, rate) pairs, times ascending."""
    if isinstance(value, (list, tuple, np.ndarray)):
        a = _checks.real_array("Source: rate", value)
        if a.ndim != 2 or a.shape[1] != 2 or not len(a):
            raise ValueError(
                f"Source: rate must be a number or (time, rate) pairs, got shape {a.shape}"
            )
        if not np.isfinite(a).all() or (a[:, 1] < 0).any() or np.abs(a[:, 0]).max() > 1e12:
            raise ValueError(
                f"Source: rate schedule needs finite times and rates >= 0, got {a.tolist()}"
            )
        if (np.diff(a[:, 0]) <= 0).any():
            raise ValueError(
                f"Source: rate schedule times must be ascending, got {a[:, 0].tolist()}"
            )
        return tuple((float(t), float(r)) for t, r in a)
    rate = _checks.real("Source: rate", value)
    if not (rate >= 0 and math.isfinite(rate)):
        raise ValueError(f"Source: rate must be finite and >= 0, got {value!r}")
    return rate


def _repeat(value: Any, rate: float | tuple[tuple[float, float], ...]) -> float | None:
    """A schedule's period: None, or a finite time > 0 past every time of the schedule."""
    if value is None:
        return None
    if isinstance(rate, float):
        raise ValueError("Source: repeat needs a rate schedule ((time, rate) pairs), got one rate")
    period = _checks.real("Source: repeat", value)
    if not (0 < period <= 1e12):
        raise ValueError(f"Source: repeat must be a time > 0 and at most 1e12 s, got {value!r}")
    if rate[0][0] < 0 or rate[-1][0] >= period:
        raise ValueError(
            f"Source: a schedule repeated every {period:g} s needs its times in [0, {period:g}), "
            f"got {rate[0][0]:g} to {rate[-1][0]:g}"
        )
    return period


def _range(what: str, value: Any, size: int, low: float) -> tuple[float, ...]:
    """A scalar (taken as a degenerate range) or a tuple of ``size`` finite numbers."""
    a = np.atleast_1d(_checks.real_array(what, value))
    if a.ndim != 1 or len(a) not in (1, size):
        raise ValueError(f"{what} must be a number or {size} numbers, got shape {a.shape}")
    if not np.isfinite(a).all() or np.abs(a).max() > _checks.MAX_COORDINATE:
        raise ValueError(f"{what} must be finite and at most 1e8, got {a.tolist()}")
    if (a < low).any():
        raise ValueError(f"{what} must be >= {low:g}, got {a.tolist()}")
    return tuple(float(x) for x in a)


@contextlib.contextmanager
def _signals_after() -> Iterator[None]:
    """SIGINT and SIGTERM whose handlers are Python's held until the block ends, then
    handed to those handlers (KeyboardInterrupt raised there). A flow's step is Python
    bookkeeping round one C++ step: a KeyboardInterrupt between its lines dequeued and
    counted walkers never added, or left the step's exits undone (a flow's counts no
    longer added up; fuzz round 13). Only the main thread runs signal handlers, so
    elsewhere nothing needs holding."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, Any]] = []
    saved: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if callable(handler):
            saved[sig] = handler
            signal.signal(sig, lambda s, f: caught.append((s, f)))
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
        # Each signal held, once, handed back to Python's own delivery: raised while
        # blocked, then unblocked together, so that a handler that raises (SIGINT's
        # KeyboardInterrupt) leaves the others pending, as for signals that arrive
        # together (a SIGTERM after a SIGINT was dropped).
        numbers = list(dict.fromkeys(s for s, _ in caught))
        if numbers and hasattr(signal, "pthread_sigmask"):
            before = signal.pthread_sigmask(signal.SIG_BLOCK, numbers)
            for s in numbers:
                signal.raise_signal(s)
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        else:  # (no pthread_sigmask: Windows) each handler runs; the first raise wins
            first: BaseException | None = None
            for s in numbers:
                try:
                    saved[s](s, next(f for n, f in caught if n == s))
                except BaseException as exc:  # noqa: BLE001 - re-raised below
                    first = first or exc
            if first is not None:
                raise first


class Source:
    """One stream of pedestrians: where they enter, how many arrive, who they are, where
    they walk and where they leave (see the module docstring for how a :class:`Flow`
    runs it).

    Parameters
    ----------
    area : array_like, [xmin, ymin, xmax, ymax]
        Where they enter. A pedestrian's body lies inside the area: its candidate places
        are drawn uniformly in the area shrunk by its radius plus ``clearance`` on every
        side, which must leave room for the largest radius.
    rate : float or sequence of (time, rate)
        Mean arrivals a second (Poisson), >= 0; or a schedule of ``(time, rate)`` pairs,
        times ascending, each rate in force from its simulation time to the next (none
        before the first): ``[(0, 4.0), (60, 0.0)]`` feeds 4 persons/s for a minute, then
        no one (a train unloading, a door closing).
    repeat : float, optional
        With a schedule: the schedule repeats every ``repeat`` seconds, so the rate in
        force at a time ``t >= 0`` is the schedule's at ``t mod repeat`` (a train every
        ``repeat`` seconds: ``rate=[(0, 3.0), (20, 0.0)], repeat=60``). The schedule's
        times must then lie in ``[0, repeat)``. Default None: the schedule runs once and
        its last rate holds for good.
    target : array_like, (2,) or (2, 2)
        The goal each pedestrian walks to (``Agents.target``): a point, or a goal line
        ``[[x0, y0], [x1, y1]]`` whose point nearest the pedestrian's entry place is its
        goal (e.g. a line across the far end of a corridor: each walks straight along).
    exit : array_like, [xmin, ymin, xmax, ymax]
        Where its pedestrians leave: removed at the end of the first step their centre
        is inside (bounds included; ±inf allowed, NaN not).
    radius : float or (low, high)
        Body radius in m, > 0; a range draws uniformly. Default 0.3.
    speed : float, (mean, sd) or (mean, sd, low, high)
        Desired speed in m/s: normal, clipped to ``[low, high]`` (default ``[mean / 2,
        2 * mean]``), > 0. Default 1.3 (every pedestrian alike).
    max_accel : float
        Agents' acceleration limit (m/s², :class:`Accel`), default 6.
    clearance : float
        Free space (m) around a new body: to other bodies and walls. Default 0.02.
    tries : int
        Candidate places drawn per pedestrian, 1 to 10,000. Default 200.
    group : int
        The agents' ``group``. Default 0.
    name : str, optional
        A label for reports (``Flow.report()["sources"][i]["name"]``). Default None.

    Raises
    ------
    TypeError, ValueError
        Naming the argument: wrong shapes, NaN, negative sizes, an area too small for the
        largest body, a rate whose mean count a period would exceed a million.

    Examples
    --------
    >>> import contextsteer as cs
    >>> s = cs.Source(area=[0, 0, 2, 4], rate=2.0, target=[20, 2], exit=[19, 0, 21, 4],
    ...               radius=(0.15, 0.3), speed=(1.34, 0.26, 0.5, 2.2))
    >>> s.radius, s.speed
    ((0.15, 0.3), (1.34, 0.26, 0.5, 2.2))
    """

    __slots__ = (
        "area",
        "rate",
        "target",
        "exit",
        "radius",
        "speed",
        "max_accel",
        "clearance",
        "tries",
        "group",
        "name",
        "repeat",
    )
    area: tuple[float, float, float, float]
    rate: float | tuple[tuple[float, float], ...]
    target: tuple[float, ...]
    exit: tuple[float, float, float, float]
    radius: tuple[float, float]
    speed: tuple[float, ...]
    max_accel: float
    clearance: float
    tries: int
    group: int
    name: str | None
    repeat: float | None

    def __init__(
        self,
        area: Any,
        rate: float,
        target: Any,
        exit: Any,
        *,
        radius: float | Sequence[float] = 0.3,
        speed: float | Sequence[float] = 1.3,
        max_accel: float = 6.0,
        clearance: float = 0.02,
        tries: int = 200,
        group: int = 0,
        name: str | None = None,
        repeat: float | None = None,
    ) -> None:
        object.__setattr__(self, "area", _box("Source: area", area, infinite=False))
        object.__setattr__(self, "rate", _rate(rate))
        object.__setattr__(self, "repeat", _repeat(repeat, self.rate))
        t = _checks.real_array("Source: target", target)
        if t.shape not in ((2,), (2, 2)):
            raise ValueError(
                f"Source: target must be a point (2,) or a goal line (2, 2), got shape {t.shape}"
            )
        if not np.isfinite(t).all() or np.abs(t).max() > _checks.MAX_COORDINATE:
            raise ValueError(f"Source: target must be finite and at most 1e8, got {t.tolist()}")
        object.__setattr__(self, "target", tuple(map(float, t.ravel())))
        object.__setattr__(self, "exit", _box("Source: exit", exit, infinite=True))
        r = _range("Source: radius", radius, 2, 0.0)
        if min(r) <= 0:
            raise ValueError(f"Source: radius must be > 0, got {radius!r}")
        object.__setattr__(self, "radius", (r[0], r[-1]))
        if r[0] > r[-1]:
            raise ValueError(f"Source: radius range must have low <= high, got {radius!r}")
        s = np.atleast_1d(_checks.real_array("Source: speed", speed))
        if s.ndim != 1 or len(s) not in (1, 2, 4):
            raise ValueError(
                f"Source: speed must be a number, (mean, sd) or (mean, sd, low, high), "
                f"got shape {s.shape}"
            )
        if not np.isfinite(s).all() or np.abs(s).max() > _checks.MAX_COORDINATE:
            raise ValueError(f"Source: speed must be finite and at most 1e8, got {s.tolist()}")
        mean = float(s[0])
        sd = float(s[1]) if len(s) > 1 else 0.0
        low, high = (float(s[2]), float(s[3])) if len(s) == 4 else (mean / 2, 2 * mean)
        if not (mean > 0 and sd >= 0 and 0 < low <= high):
            raise ValueError(
                f"Source: speed needs mean > 0, sd >= 0 and 0 < low <= high, got {s.tolist()}"
            )
        object.__setattr__(self, "speed", (mean, sd, low, high) if len(s) > 1 else (mean,))
        object.__setattr__(self, "max_accel", _checks.length("Source: max_accel", max_accel))
        object.__setattr__(self, "clearance", _checks.length("Source: clearance", clearance))
        object.__setattr__(self, "tries", _checks.integer("Source: tries", tries, 1, 10_000))
        object.__setattr__(
            self, "group", _checks.integer("Source: group", group, -(2**31), 2**31 - 1)
        )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Source: name must be a str or None, got {type(name).__name__}")
        object.__setattr__(self, "name", name)
        inset = self.radius[1] + self.clearance
        x0, y0, x1, y1 = self.area
        if x1 - x0 < 2 * inset or y1 - y0 < 2 * inset:
            raise ValueError(
                f"Source: area {list(self.area)} leaves no room for a body of radius "
                f"{self.radius[1]:g} with clearance {self.clearance:g} (it needs "
                f"{2 * inset:g} m each way)"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"Source is immutable (its {name} was checked when built); build a new one"
        )

    @_checks.safe_repr
    def __repr__(self) -> str:
        return (
            f"Source(area={list(self.area)}, rate={self.rate}, target={list(self.target)}, "
            f"exit={list(self.exit)}, radius={self.radius}, speed={self.speed}"
            + (f", name={self.name!r}" if self.name is not None else "")
            + (f", repeat={self.repeat!r})" if self.repeat is not None else ")")
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Source) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__
        )

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))

    def __reduce__(self):
        kw = {k: getattr(self, k) for k in self.__slots__[4:]}
        target = np.reshape(self.target, (2,) if len(self.target) == 2 else (2, 2))
        return (_source, (self.area, self.rate, target, self.exit, kw))

    def rate_at(self, t: float) -> float:
        """The arrival rate (persons/s) in force at simulation time ``t``."""
        if isinstance(self.rate, float):
            return self.rate
        if self.repeat is not None and t >= 0:
            t = math.fmod(t, self.repeat)
        # The last entry starting at or before t (a binary search: a long schedule was
        # walked from its start at every batch).
        i = bisect.bisect_right(self.rate, t, key=lambda entry: entry[0])
        return self.rate[i - 1][1] if i else 0.0

    @property
    def peak_rate(self) -> float:
        """The largest rate of the schedule (the rate itself without one)."""
        return self.rate if isinstance(self.rate, float) else max(r for _, r in self.rate)

    def _draw(
        self, rng: np.random.Generator, period: float, t: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The newcomers of a period at the rate of time ``t`` (the caller's batch time,
        just past its rounding): radii, desired speeds and seeds of their candidate
        places."""
        n = int(rng.poisson(self.rate_at(t) * period))
        lo, hi = self.radius
        r = rng.uniform(lo, hi, n) if hi > lo else np.full(n, lo)
        if len(self.speed) > 1:
            mean, sd, low, high = self.speed
            v = np.clip(rng.normal(mean, sd, n), low, high)
        else:
            v = np.full(n, self.speed[0])
        return r, v, rng.integers(2**63, size=n, dtype=np.uint64)

    def _places(self, radius: float, seed: int) -> np.ndarray:
        """The ``tries`` candidate places (tries, 2) of a pedestrian of this radius."""
        u = np.random.default_rng(seed).random((self.tries, 2))
        x0, y0, x1, y1 = self.area
        inset = radius + self.clearance
        px = (x0 + inset) + u[:, 0] * ((x1 - x0) - 2 * inset)
        py = (y0 + inset) + u[:, 1] * ((y1 - y0) - 2 * inset)
        # As the agents will hold them (float32): tested in double, places 1e7 m out met
        # the clearance and then rounded onto each other (300 of 307 newcomers
        # overlapping; fuzz round 21).
        return np.stack([px, py], axis=-1).astype(np.float32).astype(np.float64)

    def _goal(self, p: np.ndarray) -> np.ndarray:
        """The target of a pedestrian entering at ``p``: the point, or the goal line's
        point nearest ``p``."""
        if len(self.target) == 2:
            return np.array(self.target)
        a = np.array(self.target[:2])
        d = np.array(self.target[2:]) - a
        dd = float(d @ d)
        t = 0.0 if dd == 0 else min(max(float((p - a) @ d) / dd, 0.0), 1.0)
        return a + t * d


def _source(area: Any, rate: float, target: Any, exit: Any, kw: dict[str, Any]) -> Source:
    return Source(area, rate, target, exit, **kw)


class _Stream:
    """One source's queue (radii, speeds and place seeds at indexes ``head`` to ``tail``
    of buffers with room to spare) and counters."""

    # What a pickle holds (the queue from index 0, as the buffers were before ``tail``).
    _STATE = ("radius", "speed", "seed", "head", "offered", "entered", "out", "travel", "left")
    __slots__ = (*_STATE, "tail")

    def __init__(self) -> None:
        self.radius = np.zeros(0)
        self.speed = np.zeros(0)
        self.seed = np.zeros(0, dtype=np.uint64)
        self.head = 0
        self.tail = 0
        self.offered = 0
        self.entered = 0
        self.out = 0
        self.travel: list[float] = []
        self.left: list[float] = []  # the simulation time of each exit

    def __getstate__(self):
        t = self.tail
        queue = {"radius": self.radius[:t], "speed": self.speed[:t], "seed": self.seed[:t]}
        return tuple(queue.get(k, getattr(self, k)) for k in self._STATE)

    def __setstate__(self, s: tuple) -> None:
        for k, v in zip(self._STATE, s):
            setattr(self, k, v)
        self.tail = len(self.radius)

    @property
    def waiting(self) -> int:
        return self.tail - self.head

    def reserve(self, n: int) -> None:
        """Room for ``n`` more newcomers after the queue. The buffers grow to twice what
        they must hold, the queue moved to their start, only when full: each newcomer is
        copied a bounded number of times on average. (A new array per batch copied the
        whole queue: with a backlog of 600,000 and ten batches a step, 3.3 s per simulated
        second; fuzz round 19.) A ``MemoryError`` here leaves the queue as it was."""
        if self.tail + n > len(self.radius):
            h, t = self.head, self.tail
            size = max(2 * (t - h + n), 16)
            # All three allocated before any is swapped in: a MemoryError part way left
            # the radii moved to the buffer's start and the rest not (fuzz round 25).
            grown = {}
            for name in ("radius", "speed", "seed"):
                old = getattr(self, name)
                grown[name] = np.zeros(size, dtype=old.dtype)
                grown[name][: t - h] = old[h:t]
            for name, array in grown.items():
                setattr(self, name, array)
            self.head, self.tail = 0, t - h

    def join(self, r: np.ndarray, v: np.ndarray, seed: np.ndarray) -> None:
        """Append newcomers (after :meth:`reserve`, which it calls: a no-op then)."""
        n = len(r)
        self.reserve(n)
        t = self.tail
        self.radius[t : t + n] = r
        self.speed[t : t + n] = v
        self.seed[t : t + n] = seed
        self.tail = t + n


_AROUND = np.array([[di * 2**32 + dj for di in (-1, 0, 1) for dj in (-1, 0, 1)]])
"""The keys' offsets of the 3 × 3 buckets round one (``_Bodies``)."""


def _bucket_radius(
    pos: np.ndarray, rad: np.ndarray, least: float, need: float, coming: int, boxes: np.ndarray
) -> float:
    """The radius the admission buckets are sized for (at least ``least``, the newcomers'
    largest): the agents wider go on a list every query reads. Chosen among the radii of
    the 0, 1, 2, 4 ... widest agents by the expected cost of a query: the wide list, plus
    the bodies in the 3 × 3 buckets round its 16 places. One wide agent sized every
    bucket for itself (10 s for 4,000 newcomers); the widest 1 % of near-equal radii made
    every query read N / 100 agents; the widest 64, 65 wide ones (fuzz rounds 15-17).
    The density the buckets are filled at is read where the queries are, source by
    source (``boxes``, (S, 4) rows x0, y0, x1, y1, where the ``coming`` newcomers join):
    the agents near a source over its area, or over the extent of those agents where they
    crowd a part of a vast source. Densities over the extent of every agent, or of every
    source, read a crowd thin when one agent or one source was far away (fuzz rounds 18
    and 19), and the buckets were sized for a wide agent again."""
    n = len(rad)
    if n == 0:
        return least
    widest = np.sort(rad)[::-1]
    if len(boxes) == 0:  # (no source: the agents' own extent)
        boxes = np.concatenate([pos.min(axis=0), pos.max(axis=0)])[None, :]
    best, best_cost = least, math.inf
    k = 0
    while True:
        r = max(least, float(widest[k])) if k < n else least
        side = r + need
        rho = 0.0
        for x0, y0, x1, y1 in boxes:
            near = (
                (pos[:, 0] >= x0 - side)
                & (pos[:, 0] <= x1 + side)
                & (pos[:, 1] >= y0 - side)
                & (pos[:, 1] <= y1 + side)
            )
            count = int(near.sum())
            rho = max(rho, (count + coming) / ((x1 - x0 + side) * (y1 - y0 + side)))
            if count:
                lo, hi = pos[near].min(axis=0), pos[near].max(axis=0)
                rho = max(rho, count / float((hi[0] - lo[0] + side) * (hi[1] - lo[1] + side)))
        # (A query tests 16 places at once, each with its 3 x 3 buckets; the wide list
        # is read once a query.)
        cost = k + min(float(n + coming), 16.0 * 9.0 * side * side * rho)
        if cost < best_cost:
            best, best_cost = r, cost
        if k >= n or r <= least:
            return best
        k = 2 * k if k else 1


class _Bodies:
    """Discs (centres and radii, float64) in square buckets of side ``side``, so that the
    discs near a few points are found without reading every disc: those in the buckets
    round the points' (3 × 3 each). Holds the agents (sorted by bucket once) and the
    discs added since (in a dict)."""

    def __init__(self, pos: np.ndarray, rad: np.ndarray, side: float, small: float) -> None:
        # Coordinates are within ±1e8: buckets of at least 1e8 / 2^30 keep |i|, |j| below
        # 2^31, so that (i, j) packs into one int64 key (larger buckets find more discs,
        # never fewer).
        self.side = max(side, 1e8 / 2**30)
        # Discs wider than `small` (which `side` is sized for) are not bucketed: every
        # query returns them (one body of 60 m made every bucket 60 m wide, and each
        # newcomer was tested against everyone again: 10 s for 4,000; fuzz round 15).
        big = rad > small
        self._big_pos, self._big_rad = pos[big], rad[big]
        pos, rad = pos[~big], rad[~big]
        keys = self._keys(pos) if len(pos) else np.zeros(0, np.int64)
        order = np.argsort(keys, kind="stable")
        self._keys_sorted, self._pos, self._rad = keys[order], pos[order], rad[order]
        self._added: dict[int, list[tuple[float, float, float]]] = {}

    def _keys(self, p: np.ndarray) -> np.ndarray:
        cells = np.floor(p / self.side).astype(np.int64)
        return cells[:, 0] * 2**32 + cells[:, 1]

    def add(self, p: np.ndarray, r: float) -> None:
        key = int(self._keys(p[None, :])[0])
        self._added.setdefault(key, []).append((float(p[0]), float(p[1]), r))

    def near(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The discs in the 3 × 3 buckets round each of ``points``, and the wide ones:
        (M, 2), (M,)."""
        want = np.unique((self._keys(points)[:, None] + _AROUND).ravel())
        lo = np.searchsorted(self._keys_sorted, want, "left")
        hi = np.searchsorted(self._keys_sorted, want, "right")
        rows = [np.arange(a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True) if b > a]
        extra = [d for key in want.tolist() for d in self._added.get(key, ())]
        parts_p = [self._pos[np.concatenate(rows)]] if rows else []
        parts_r = [self._rad[np.concatenate(rows)]] if rows else []
        if len(self._big_rad):
            parts_p.append(self._big_pos)
            parts_r.append(self._big_rad)
        if extra:
            e = np.array(extra, dtype=np.float64)
            parts_p.append(e[:, :2])
            parts_r.append(e[:, 2])
        if not parts_p:
            return np.zeros((0, 2)), np.zeros(0)
        return np.concatenate(parts_p), np.concatenate(parts_r)


class Flow:
    """Sources feeding a simulation (see the module docstring): attach with
    ``sim.flow = Flow(sources)``; :meth:`Simulation.step` then admits, moves and removes.

    Parameters
    ----------
    sources : sequence of Source
    seed : int
        Seeds the flow's generator (arrivals, bodies, speeds, places).
    period : float
        Seconds between arrival batches, > 0. Default 1. A step longer than ``period``
        draws every batch that falls due in it (at most :data:`MAX_BATCHES_PER_STEP`:
        a step longer than that many periods is a ``ValueError``).
    start : float
        Simulation time of the first batch. Default 0: the first step at or after it
        (a simulation already past it starts at its next multiple of ``period``, and so
        does a flow after time that passed without it: the staged calls draw nothing).

    Raises
    ------
    TypeError, ValueError
        ``sources`` empty or holding something else than a Source; bad ``seed``,
        ``period`` or ``start``; a step of more than :data:`MAX_BATCHES_PER_STEP`
        periods.
    RuntimeError
        A step or a pickle of the flow while another thread is stepping it.
    """

    def __init__(
        self,
        sources: Sequence[Source],
        *,
        seed: int = 0,
        period: float = 1.0,
        start: float = 0.0,
    ) -> None:
        if isinstance(sources, Source):
            sources = [sources]
        sources = tuple(sources)
        if not sources or not all(isinstance(s, Source) for s in sources):
            raise TypeError(
                f"Flow: sources must be a non-empty sequence of Source, got {sources!r}"
            )
        self.sources: tuple[Source, ...] = sources
        self.seed = _checks.integer("Flow: seed", seed, 0, 2**64 - 1)
        self.period = _checks.length("Flow: period", period)
        if not self.period > 0:
            raise ValueError(f"Flow: period must be > 0, got {period!r}")
        self.start = _checks.length("Flow: start", start, low=-math.inf)
        for i, s in enumerate(sources):
            if s.peak_rate * self.period > _MAX_PER_PERIOD:
                raise ValueError(
                    f"Flow: source {i}'s mean arrivals a period (rate × period = "
                    f"{s.peak_rate * self.period:g}) exceed {_MAX_PER_PERIOD:,}"
                )
        self._rng = np.random.default_rng(self.seed)
        self._next: float | None = None
        # The simulation time at the end of the flow's last step: a later step that starts
        # elsewhere follows time that passed without the flow (the staged calls).
        self._ran_until: float | None = None
        self._streams = [_Stream() for _ in sources]
        self._exit_boxes = np.array([s.exit for s in sources])  # (S, 4)
        # Per agent slot (allocated at the first step): the source that admitted the agent
        # in it (-1: none, or gone), the slot's generation then, and the admission time.
        self._source = np.zeros(0, dtype=np.int32)
        self._generation = np.zeros(0, dtype=np.uint32)
        self._admitted = np.zeros(0, dtype=np.float64)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ state ---
    def __copy__(self):
        raise TypeError(
            "Flow: copy.copy would share its generator, queues and admissions with the "
            "original; use copy.deepcopy or pickle for an independent copy"
        )

    def __getstate__(self):
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("Flow: in use by a step in another thread; pickle it after")
        try:
            state = dict(self.__dict__)
            del state["_lock"]
            # Which agents it feeds: bound again at its next step (a copy or a loaded
            # simulation has agents of its own). Without them the copy cannot tell which
            # members the caller removed since the last step: they are left out now, as
            # that step would (a Flow copied alone counted them inside; fuzz round 26).
            state["_source"] = self._still_inside()
            state.pop("_fed", None)
            return state
        finally:
            self._lock.release()

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("_ran_until", None)  # pickles from before it was kept
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @_checks.safe_repr
    def __repr__(self) -> str:
        r = self.report()
        return (
            f"Flow({len(self.sources)} sources, seed={self.seed}, period={self.period:g}: "
            f"{r['entered']} entered, {r['out']} out, {r['inside']} inside, "
            f"{r['queued']} queued)"
        )

    def report(self) -> dict[str, Any]:
        """Counters so far, in all and per source: pedestrians ``offered`` (arrived in a
        queue), ``entered``, ``out`` (removed at the exit), ``inside`` (entered, not out,
        still agents of the flow), ``queued`` (waiting), ``left_otherwise`` (entered, then
        removed by someone else) and ``mean_travel_time`` (s, admission to exit, of those
        out; None before the first); each source's also its ``name``."""

        source = self._still_inside()
        inside = np.bincount(source[source >= 0], minlength=len(self.sources))
        per: list[dict[str, Any]] = [
            {
                "name": src.name,
                "offered": s.offered,
                "entered": s.entered,
                "out": s.out,
                "inside": int(inside[i]),
                "queued": s.waiting,
                "left_otherwise": s.entered - s.out - int(inside[i]),
                "mean_travel_time": float(np.mean(s.travel)) if s.travel else None,
            }
            for i, (src, s) in enumerate(zip(self.sources, self._streams))
        ]
        travel = [t for s in self._streams for t in s.travel]
        counts = ("offered", "entered", "out", "inside", "queued", "left_otherwise")
        total: dict[str, Any] = {k: sum(p[k] for p in per) for k in counts}
        total["mean_travel_time"] = float(np.mean(travel)) if travel else None
        return {**total, "sources": per}

    @property
    def travel_times(self) -> list[np.ndarray]:
        """Per source, the travel times (s) of those out, in the order they left (kept for
        every walker that has left, about 64 bytes each with its exit time, for good)."""
        return [np.array(s.travel) for s in self._streams]

    @property
    def exit_times(self) -> list[np.ndarray]:
        """Per source, the simulation time (s) at which each of those out left, in the
        order they left (with :attr:`travel_times`, element for element): the flow
        through the exit over time is a histogram of these.

        Examples
        --------
        People out per 10 s, both ways, with ``numpy.histogram(np.concatenate(
        flow.exit_times), bins=np.arange(0, 130, 10))``."""
        return [np.array(s.left) for s in self._streams]

    def members(self) -> np.ndarray:
        """Ids of the agents the flow admitted that are still inside, ascending."""
        return np.flatnonzero(self._still_inside() >= 0).astype(np.int32)

    def _still_inside(self) -> np.ndarray:
        """Each slot's source (-1 for none) of the members still inside now: those the
        caller removed (or whose slot another agent took) since the last step left out,
        as the next step would leave them (report() and members() listed them until
        then; fuzz round 21). Nothing is changed."""
        source = self._source.copy()
        fed = self.__dict__.get("_fed")
        agents = fed() if fed is not None else None
        if agents is not None and len(agents.alive) == len(source):
            alive = np.asarray(agents.alive, dtype=bool)
            gen = np.asarray(agents.generation)
            source[(source >= 0) & (~alive | (gen != self._generation))] = -1
        return source

    # --------------------------------------------------------------- stepping ---
    def _advance(self, sim: Simulation, dt: float, steps: int) -> None:
        """``steps`` steps of ``sim`` with arrivals, admissions and exits (called by
        :meth:`Simulation.step` with checked arguments)."""
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("Flow: in use by a step in another thread")
        try:
            if dt > MAX_BATCHES_PER_STEP * self.period:
                raise ValueError(
                    f"Flow: a step of dt={dt:g} s would draw more than "
                    f"{MAX_BATCHES_PER_STEP:,} arrival batches of period={self.period:g} s; "
                    "take a longer period or a shorter step"
                )
            for i, s in enumerate(self.sources):
                if s.peak_rate * dt > _MAX_PER_PERIOD:
                    raise ValueError(
                        f"Flow: source {i}'s mean arrivals a step (rate × dt = "
                        f"{s.peak_rate * dt:g}) exceed {_MAX_PER_PERIOD:,}"
                    )
            for _ in range(steps):
                # The simulation and its agents held for the whole step: another
                # thread's call (a pickle, say) is refused before it, not between the
                # admissions and the step (walkers counted in and never added).
                # Ctrl-C (and a Python SIGTERM handler) waits for the step's end: raised
                # in the admissions, it counted walkers in that were never added.
                with sim._core._hold(), _signals_after():
                    self._forget_gone(sim)
                    now = float(sim.time)
                    skipped = self._ran_until is not None and now != self._ran_until
                    if self._next is None or skipped:
                        # The first step, or time that passed without the flow (the staged
                        # calls do not run it): batches start again from the next one due.
                        k = max(0.0, math.ceil((now - 0.5 * dt - self.start) / self.period))
                        self._next = self.start + k * self.period
                    if now >= self._next - 0.5 * dt:
                        # Every batch due by now: one when the period is at least the step,
                        # several when it is shorter (one a step would lose the rest).
                        # Bounded: a period under the float spacing of the time would not move
                        # self._next on.
                        for _ in range(MAX_BATCHES_PER_STEP + 2):
                            if now < self._next - 0.5 * dt:
                                break
                            # The rate a few ulps after the batch time: start + k·period
                            # is rounded twice in double, by up to an ulp of the larger of
                            # its operands (3 × 0.3 = 0.8999999999999999 drew the rate
                            # before a change at 0.9, fuzz round 22; -7 + 24 × 0.3 =
                            # 0.1999999999999993, where an ulp of the result was too
                            # little, round 24; 1e-9 periods read a change 0.1 s late at
                            # a period of 1e8, round 23).
                            when = self._next + 4.0 * math.ulp(
                                max(abs(self.start), abs(self._next - self.start), abs(self._next))
                            )
                            # A batch is all or nothing: every source's room is had before
                            # any joins, and a MemoryError puts the draws back. A second
                            # source's failure left the first's batch queued and counted,
                            # and the retry drew it again (fuzz round 26); one source's
                            # left the batch offered and never queued (round 25).
                            drawn_from = self._rng.bit_generator.state
                            try:  # (a draw allocates too)
                                batch = [
                                    src._draw(self._rng, self.period, when) for src in self.sources
                                ]
                                for stream, arrivals in zip(self._streams, batch):
                                    stream.reserve(len(arrivals[0]))
                            except MemoryError:
                                self._rng.bit_generator.state = drawn_from
                                raise
                            for stream, arrivals in zip(self._streams, batch):
                                stream.join(*arrivals)
                                stream.offered += len(arrivals[0])
                            # Batch k at start + k·period, as documented: a sum of periods
                            # drifted (ten of 0.1 fall short of 1, and the batch due at a
                            # schedule's change drew the rate before it; fuzz round 21).
                            k = round((self._next - self.start) / self.period)
                            self._next = self.start + (k + 1) * self.period
                        else:
                            raise ValueError(
                                f"Flow: period={self.period:g} s is too short to count at "
                                f"simulation time {now:g} s (float64 spacing)"
                            )
                        self._admit(sim, now)
                    sim._core._step(dt, 1)
                    self._ran_until = float(sim.time)
                    self._exits(sim)
        finally:
            self._lock.release()

    def _forget_gone(self, sim: Simulation) -> None:
        fed = self.__dict__.get("_fed")
        other = fed() if fed is not None else None
        if other is not None:
            # Members removed from the agents it fed are out, judged against those agents
            # (a flow whose members the caller had removed was refused on another
            # simulation as having them inside; fuzz round 24).
            self._source = self._still_inside()
        if fed is not None and other is None and (self._source >= 0).any():
            # The simulation it fed is gone with its agents: its member slots would be
            # taken for this one's agents in the same slots (a Flow made once outside a
            # loop of runs removed the next run's own agents at its exits; fuzz round 21).
            raise ValueError(
                f"Flow: the simulation it fed is gone with {int((self._source >= 0).sum())} "
                "of its agents inside; a flow feeds one simulation: give this one its own Flow"
            )
        if other is not None and other is not sim.agents and (self._source >= 0).any():
            # Its member slots are another simulation's agents: stepping on would forget
            # them there (they would never be removed at their exits) or take this
            # simulation's agents in the same slots for them.
            raise ValueError(
                f"Flow: it feeds another simulation's agents ({int((self._source >= 0).sum())} "
                "inside); a flow feeds one simulation: give this one its own Flow"
            )
        self._fed = weakref.ref(sim.agents)
        alive = np.asarray(sim.agents.alive, dtype=bool)
        if len(self._source) != len(alive):  # first step (or other agents): start afresh
            if (self._source >= 0).any():
                raise ValueError(
                    f"Flow: attached to agents of capacity {len(alive)} while it has agents "
                    f"inside agents of capacity {len(self._source)}; a flow feeds one "
                    f"simulation"
                )
            self._source = np.full(len(alive), -1, dtype=np.int32)
            self._generation = np.zeros(len(alive), dtype=np.uint32)
            self._admitted = np.zeros(len(alive), dtype=np.float64)
        gen = np.asarray(sim.agents.generation)
        gone = (self._source >= 0) & (~alive | (gen != self._generation))
        self._source[gone] = -1

    def _admit(self, sim: Simulation, now: float) -> None:
        agents = sim.agents
        alive = np.asarray(agents.alive, dtype=bool)
        free_slots = int((~alive).sum())
        waiting = [si for si, st in enumerate(self._streams) if st.waiting]
        if not waiting or not free_slots:
            return
        ids = np.flatnonzero(alive)
        pos = np.asarray(agents.position, dtype=np.float64)[ids]
        rad = np.asarray(agents.radius, dtype=np.float64)[ids]
        # A newcomer's place is tested against the bodies in the buckets round it (the
        # agents, and the newcomers of this call from every source): a bucket as wide as
        # the largest radius bucketed plus the largest need, so that a body beyond the
        # eight buckets round a place's is farther than any need; the agents wider are
        # tested against every place (testing every body for every newcomer was
        # quadratic: 31 s to admit 8,000; fuzz round 14).
        # (A newcomer is held at its float32 radius, up to 6e-8 of it above the source's.)
        need_most = max(s.radius[1] + s.clearance for s in self.sources)
        coming = min(free_slots, sum(self._streams[si].waiting for si in waiting))
        # The density is read at the sources that admit now, at most 32 of them (those
        # with the most waiting): each costs a pass over the agents per radius tried, and
        # a thousand sources made one admission 1.4 s (fuzz round 20).
        busiest = sorted(waiting, key=lambda si: -self._streams[si].waiting)[:32]
        boxes = np.array([self.sources[si].area for si in busiest], dtype=np.float64)
        boxes = boxes.reshape(-1, 4)
        least = max(s.radius[1] for s in self.sources)
        biggest = _bucket_radius(pos, rad, least, need_most, coming, boxes)
        bodies = _Bodies(pos, rad, (biggest + need_most) * (1 + 1e-6) + 1e-9, biggest)
        # The newcomers of this call, as Agents will hold them (float32), added at the end
        # in one call: Agents.add fills the lowest free slots in order, as one call each.
        rows: list[tuple] = []
        for si in waiting:
            src, stream = self.sources[si], self._streams[si]
            while stream.waiting and free_slots > 0:
                h = stream.head
                r, v = float(stream.radius[h]), float(stream.speed[h])
                places = src._places(r, int(stream.seed[h]))
                k = self._first_free(sim.world, places, r + src.clearance, bodies)
                if k < 0:
                    break  # no free place: this queue waits for the next period
                p = places[k]
                goal = src._goal(p)
                rows.append((p, math.atan2(goal[1] - p[1], goal[0] - p[0]), r, v, goal, si))
                bodies.add(p.astype(np.float32).astype(np.float64), float(np.float32(r)))
                stream.head += 1
                stream.entered += 1
                free_slots -= 1
        if not rows:
            return
        src_of = [self.sources[row[5]] for row in rows]
        added = agents.add(
            np.array([row[0] for row in rows]),
            heading=np.array([row[1] for row in rows]),
            radius=np.array([row[2] for row in rows]),
            max_speed=np.array([row[3] for row in rows]),
            max_accel=np.array([s.max_accel for s in src_of]),
            target=np.array([row[4] for row in rows]),
            group=np.array([s.group for s in src_of]),
        )
        self._source[added] = [row[5] for row in rows]
        self._admitted[added] = now
        self._generation[added] = agents.generation[added]

    @staticmethod
    def _first_free(world: Any, places: np.ndarray, need: float, bodies: _Bodies) -> int:
        """The index of the first of ``places`` at least ``need`` from the bodies' discs
        and from every wall, and outside every solid; -1 when none is. Tested 16 at a
        time, so a newcomer in a roomy area costs one small batch."""
        from .world import inside, nearest

        for c in range(0, len(places), 16):
            chunk = places[c : c + 16]
            ok = np.ones(len(chunk), dtype=bool)
            q, qr = bodies.near(chunk)
            if len(q):
                gap = np.hypot(chunk[:, None, 0] - q[None, :, 0], chunk[:, None, 1] - q[None, :, 1])
                ok &= (gap >= qr[None, :] + need).all(axis=1)
            if world is not None and ok.any():
                cand = np.flatnonzero(ok)
                pts = chunk[cand].astype(np.float32)
                bad = (nearest(world, pts, need).distance < need) | inside(world, pts)
                ok[cand[bad]] = False
            hit = np.flatnonzero(ok)
            if len(hit):
                return c + int(hit[0])
        return -1

    def _exits(self, sim: Simulation) -> None:
        ids = np.flatnonzero(self._source >= 0)
        if not len(ids):
            return
        pos = np.asarray(sim.agents.position, dtype=np.float64)[ids]
        src = self._source[ids]
        box = self._exit_boxes[src]
        out = (
            (box[:, 0] <= pos[:, 0])
            & (pos[:, 0] <= box[:, 2])
            & (box[:, 1] <= pos[:, 1])
            & (pos[:, 1] <= box[:, 3])
        )
        if not out.any():
            return
        gone = ids[out]
        now = float(sim.time)
        for i, si in zip(gone, src[out]):
            stream = self._streams[si]
            stream.out += 1
            stream.travel.append(now - float(self._admitted[i]))
            stream.left.append(now)
        self._source[gone] = -1
        sim.agents.remove(gone)
