"""Agents: fixed-capacity structure-of-arrays state, and neighbour queries.

Every attribute of :class:`Agents` is a writable NumPy view of memory owned by the C++
core (the ``Agents`` object is the view's ``base``); storage never moves, so a view stays
valid — and keeps the state alive — for as long as it exists.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _checks, _core
from .maps import _f32

__all__ = ["Agents", "Neighbours", "neighbours"]


# The C++ part's capacity, count and seed, read past a subclass's attributes of the same
# names (a subclass's own ``capacity`` made it unbuildable, its own ``seed`` property
# pickled agents that would not load: fuzz round 26).
_capacity = cast(Any, _core.Agents).capacity.fget
_count = cast(Any, _core.Agents).count.fget
_seed = cast(Any, _core.Agents).seed.fget
#: Attributes a subclass may not redefine, besides the columns (Agents.__init_subclass__).
_OWN_NAMES = frozenset({"capacity", "count", "seed", "slots", "ids"})


def _within(name: str, dtype: np.dtype, low: int, high: int) -> None:
    """A ValueError naming column ``name`` when ints from ``low`` to ``high`` do not fit
    its integer ``dtype`` (NumPy's cast would wrap them: 2**32 + 7 stored as 7 in an
    int32 column, -1 as 2**64 - 1 in a uint64 one)."""
    info = np.iinfo(dtype)
    if low < info.min or high > info.max:
        bad = low if low < info.min else high
        raise ValueError(
            f"Agents.{name}: values must fit {dtype} [{info.min}, {info.max}], got {bad}"
        )


def _view_property(name: str, doc: str) -> _checks.ArrayView:
    def fget(self):
        return self._view(name)

    def fset(self, value):
        view = self._view(name)
        if isinstance(value, np.ma.MaskedArray):  # the masked entries would be written
            raise TypeError(f"Agents.{name}: expected plain values, got a masked array")
        arr = np.asarray(value)
        kind, target = arr.dtype.kind, view.dtype.kind
        if target == "f" and kind == "O" and not isinstance(value, np.ndarray):
            # Python ints past int64 (2**64 fits float32 as 1.8e19): as floats, so that a
            # value past float32 is named as such below, not as an object dtype.
            ints = np.asarray(value, dtype=object)
            if ints.size and all(_checks.is_int(x) for x in ints.flat):
                try:
                    arr = np.array([float(x) for x in ints.flat]).reshape(ints.shape)
                except OverflowError:  # past float64 too
                    arr = np.full(ints.shape, np.finfo(np.float64).max)
                kind = "f"
        if target in "iu" and kind in "fO" and not isinstance(value, np.ndarray):
            # Python ints NumPy could not hold in one dtype ([2**64 - 1, -1] is float64,
            # 2**64 an object): as exact ints, so that the range is what is named.
            ints = np.asarray(value, dtype=object)
            if ints.size and all(_checks.is_int(x) for x in ints.flat):
                exact = [int(x) for x in ints.flat]
                _within(name, view.dtype, min(exact), max(exact))
                arr, kind = np.asarray(value, dtype=view.dtype), target
        # NumPy's assignment would parse text ("3"), truncate 1.7 into an int column, read
        # NaN as True into a bool one, None as NaN, and True as 1.0 into a float one.
        if (
            kind in "USOVmMc"
            or (target in "iub" and kind not in "iub")
            or (target == "f" and kind == "b")
        ):
            wanted = "bools" if target == "b" else "integers" if target in "iu" else "real numbers"
            raise TypeError(
                f"Agents.{name}: expected {wanted} (dtype {view.dtype}), got dtype {arr.dtype}"
            )
        if target == "b" and kind != "b" and arr.size and not np.isin(arr, (0, 1)).all():
            raise ValueError(f"Agents.{name}: expected bools (or 0 and 1), got {arr!r:.60}")
        if target in "iu" and kind in "iu" and arr.size:
            _within(name, view.dtype, int(arr.min()), int(arr.max()))
        if target == "f" and kind in "fiu" and arr.size:
            # A finite value past float32 would be stored as inf, and named only at the next
            # step as an inf the caller never wrote (NaN and inf given are stored: a dead
            # slot may hold them, and the step names a live agent's).
            with np.errstate(over="ignore"):
                conv = np.asarray(arr, dtype=view.dtype)
            grew = np.isinf(conv) & np.isfinite(arr)
            if grew.any():
                idx = tuple(int(i) for i in np.argwhere(grew)[0])
                where = f" at index {idx}" if idx else ""
                raise ValueError(
                    f"Agents.{name}: {arr[idx].item()!r}{where} overflows "
                    f"{view.dtype} (finite values are within ±3.4e38)"
                )
            arr = conv
        try:
            view[...] = arr
        except ValueError:  # NumPy's broadcast error named no column
            raise ValueError(
                f"Agents.{name}: expected shape {view.shape} (or one that broadcasts to it), "
                f"got {arr.shape}"
            ) from None

    return cast(_checks.ArrayView, property(fget, fset, doc=doc))


def _column(value: ArrayLike, name: str, n: int, width: int | None, dtype: DTypeLike) -> np.ndarray:
    """Broadcast ``value`` to (n,) or (n, width) of ``dtype``, naming ``name`` on error."""
    shape = (n,) if width is None else (n, width)
    if isinstance(value, np.ma.MaskedArray):  # its masked entries would be read as numbers
        raise TypeError(f"Agents.add: {name} must be plain numbers, got a masked array")
    arr = np.asarray(value)
    if arr.dtype.kind in "mM":  # durations and dates (NumPy counts timedelta64 as an integer)
        raise TypeError(f"Agents.add: {name} must be numbers, got dtype {arr.dtype}")
    try:
        arr = np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(
            f"Agents.add: {name} must broadcast to shape {shape}, got shape {arr.shape}"
        ) from None
    if dtype == np.float32:
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError(f"Agents.add: {name} must be real numbers, got dtype {arr.dtype}")
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"Agents.add: {name} must be finite, got {arr[idx]} at index {idx[0]}")
        with np.errstate(over="ignore"):  # named below, not NumPy's warning
            out = np.ascontiguousarray(arr, dtype=dtype)
        grew = np.isinf(out)
        if grew.any():
            idx = tuple(int(i) for i in np.argwhere(grew)[0])
            raise ValueError(
                f"Agents.add: {name}: {arr[idx].item()!r} at index {idx[0]} overflows float32 "
                "(finite values are within ±3.4e38)"
            )
        return out
    return np.ascontiguousarray(arr, dtype=dtype)


def _non_negative(arr: np.ndarray, name: str) -> None:
    bad = arr < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"Agents.add: {name} must be >= 0, got {arr[i]} at index {i}")


#: Largest capacity of an Agents object: agent ids are int32.
MAX_CAPACITY = 2**31 - 1


class Agents(_core.Agents):
    """State of up to ``capacity`` agents, stored in C++ as structure-of-arrays.

    Every column is a zero-copy NumPy view with one row per slot (dead slots included;
    see ``alive``), writable unless said: ``float32`` ``position`` (N, 2), ``velocity``
    (N, 2), ``heading`` (N,) radians counter-clockwise from +x, ``radius``, ``max_speed``
    (length/s), ``max_accel`` (length/s²), ``max_turn_rate`` (rad/s), ``steer_force``
    (the Godot lerp factor per step) and ``target`` (N, 2) per-agent goal; ``group`` (N,)
    int32; ``alive``, ``kinematic`` (moved by the velocity written, not steered) and
    ``waypoint`` (the target is a point on the way, not a goal to stand at) (N,) bool;
    ``rng`` (N,) uint64 per-agent random state; and ``generation`` (N,) uint32,
    read-only: how many times :meth:`add` claimed each slot.

    Subclasses add attributes, methods and constructors of their own; they pickle and
    deep-copy as themselves, and :meth:`Simulation.save` writes them as plain ``Agents``
    (a saved file loads without the subclass's code). A subclass may not redefine a
    column, ``capacity``, ``count``, ``seed``, ``slots`` or ``ids``, which the library
    reads its agents by: defining one is a ``TypeError`` when the class is made.

    Parameters
    ----------
    capacity : int
        Number of slots; fixed for the object's lifetime (storage never reallocates).
    slots : int, optional
        Number of context-map slots K the agents steer with (used by the simulation);
        at least 3 when given.
    seed : int, optional
        Seed of the per-agent random states: slot ``i`` starts from a value that depends
        only on ``(seed, i)``.

    Raises
    ------
    ValueError
        If ``capacity < 0`` or ``slots < 3``.
    TypeError
        A subclass that defines a column, ``capacity``, ``count``, ``seed``, ``slots`` or
        ``ids``.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> agents = cs.Agents(4, slots=8)
    >>> ids = agents.add([[0, 0], [5, 0]], max_speed=2.0)
    >>> ids
    array([0, 1], dtype=int32)
    >>> agents.count
    2
    >>> agents.position[1]
    array([5., 0.], dtype=float32)
    >>> agents.position[1, 1] = 3.0          # writes straight into C++ memory
    >>> agents.remove([0]); agents.count
    1
    """

    position = _view_property("position", "(N, 2) float32 positions.")
    velocity = _view_property("velocity", "(N, 2) float32 velocities (length per second).")
    heading = _view_property("heading", "(N,) float32 headings in radians from +x, CCW.")
    radius = _view_property("radius", "(N,) float32 circle radii.")
    max_speed = _view_property("max_speed", "(N,) float32 speed limits (length per second).")
    max_accel = _view_property("max_accel", "(N,) float32 acceleration limits (length/s²).")
    max_turn_rate = _view_property("max_turn_rate", "(N,) float32 turn-rate limits (rad/s).")
    steer_force = _view_property(
        "steer_force",
        "(N,) float32 Godot lerp factors in [0, 1], read by ``Lerp()`` (``steer_force=None``, "
        "its default) and ``Steering``'s classic behaviours; ``Lerp(steer_force=0.1)``, as "
        "the racetrack scenario passes, uses that value for every agent instead.",
    )
    target = _view_property("target", "(N, 2) float32 per-agent goal positions.")
    group = _view_property("group", "(N,) int32 group / team ids.")
    alive = _view_property("alive", "(N,) bool: True where the slot holds an agent.")
    rng = _view_property(
        "rng",
        "(N,) uint64 per-agent noise keys: ``add`` sets slot i's to a value of ``(seed, i)`` "
        "and nothing advances it (randomness is counter-based: key × time, so results do "
        "not depend on threads). An agent respawned into slot i gets the same key as the "
        "last one, so the same Wander noise; write a new key (e.g. from your own "
        "generator) to give it another.",
    )
    kinematic = _view_property(
        "kinematic",
        "(N,) bool: True where the agent is kinematic, moved by the velocity you write "
        "instead of steered (a player, a vehicle on rails, a robot driven by its own "
        "controller). A :class:`Simulation` never evaluates its behaviours or motion "
        "model: each step moves it by ``velocity · dt``, swept against the walls (a wall "
        "stops it and it slides along it, as any agent), and keeps its ``velocity`` (the "
        "slide's, after one) and ``heading``. Other agents see it as any neighbour; "
        "push-apart never moves it, so an agent it overlaps takes the whole overlap (give a "
        "scene where one presses into a crowd more ``push_passes``); "
        "``CollisionDanger(reciprocity=α)`` takes no share from it (α = 0 for the pair), and "
        "an agent standing in its way steps aside. Made kinematic or handed back, an agent "
        "forgets its decision (handed back, it decides at its next step). The run metrics "
        "leave it out of the steering's statistics (time to goal, path length, jitter). "
        "The functional motion models (``Lerp``, ``Accel``, ``Vehicle``) move it the same "
        "way. Set it with ``add(..., kinematic=True)`` or by writing this view; a new "
        "agent in a reused slot is not kinematic unless ``add`` says so.",
    )
    waypoint = _view_property(
        "waypoint",
        "(N,) bool: True where the agent's ``target`` is a waypoint, a point on its way "
        "(a detour's corner, a place to stand aside), not its goal. Then "
        ":class:`CollisionDanger`'s ``past_target`` (reading no wall past the target, "
        "where an agent that stops there never meets it) does not hold for it, since an "
        "agent that runs on past a waypoint would meet such a wall at speed; and the run "
        "metrics do not count coming within ``goal_radius`` of it as arriving. "
        ":class:`Detour` sets it for the agents it leads or has stand aside and gives "
        "back their own value with their goals; set it yourself where you write "
        "waypoints into the targets. :meth:`add` clears it (a new agent's target is its "
        "goal).",
    )
    generation = property(
        lambda self: self._view("generation"),
        doc="(N,) uint32 (read-only): how many times :meth:`add` claimed each slot. A new "
        "agent in a "
        "reused slot has a new generation, so nothing of the slot's last occupant carries "
        "over: the simulation clears its decision, map memory, stuck timer and counters "
        "(it stands until it first decides), and the run metrics start its accumulators "
        "afresh. An agent made alive again by writing ``alive`` keeps its decision, stuck "
        "timer, counters and metrics; its map memory (``Steering(blend=...)``) is not kept "
        "while it is dead, so it starts from its fresh maps.",
    )

    def __new__(
        cls,
        capacity: int | np.integer[Any],
        *,
        slots: int | np.integer[Any] | None = None,
        seed: int | np.integer[Any] = 0,
    ) -> Agents:
        # The arguments are checked here, before the object exists: checked in __init__,
        # a refused one left an object whose C++ part was never built, and its repr (a
        # traceback showing locals: pytest -l, a debugger) crashed the process (fuzz round
        # 24).
        cls._check(capacity, slots, seed)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass with a constructor of its own takes its own arguments: its __init__
        # checks ours when it calls Agents.__init__.
        super().__init_subclass__(**kwargs)
        # The names the library reads its agents by keep their meaning: a subclass's own
        # capacity was read as the slot count (Detour sized its arrays by it), its own
        # count failed a finished run, a read-only slots made it unbuildable, a radius in
        # centimetres made a Flow admit 5 of 23 walkers (fuzz round 26).
        own = set()
        for k in cls.__mro__:  # the class and its mixins, up to Agents
            if k is Agents:
                break
            own |= set(vars(k))
        taken = sorted((_OWN_NAMES | set(Agents.STATE)) & own)
        if taken:
            raise TypeError(
                f"{cls.__name__}: {', '.join(map(repr, taken))} "
                f"{'is' if len(taken) == 1 else 'are'} Agents' own (the library reads its "
                "agents by these names); name yours otherwise"
            )
        # Only in place of Agents' own: a parent subclass's __new__ is inherited as Python
        # would (a grandchild skipped it: fuzz round 26).
        if "__new__" not in vars(cls) and cls.__new__ is Agents.__new__:

            def __new__(sub: type, *args: Any, **kw: Any) -> Any:
                return _core.Agents.__new__(sub)

            cls.__new__ = __new__  # type: ignore[method-assign,assignment]

    def __init__(
        self,
        capacity: int | np.integer[Any],
        *,
        slots: int | np.integer[Any] | None = None,
        seed: int | np.integer[Any] = 0,
    ) -> None:
        """Room for ``capacity`` agents (none alive), their ring of ``slots`` (or the
        steering's) and the seed of their random streams; see the class docstring."""
        try:
            built = _capacity(self) >= 0
        except TypeError:  # "(not built)": the one call that builds it
            built = False
        if built:
            # pybind11 would build a second C++ part over the first (leaking it) while
            # the Python side reset its slots (fuzz round 25).
            raise TypeError(f"{type(self).__name__}.__init__: these agents are already built")
        if type(self) is not Agents:  # (Agents' own __new__ checked them already)
            self._check(capacity, slots, seed)
        super().__init__(int(capacity), int(seed))
        self.slots = None if slots is None else int(slots)

    @staticmethod
    def _check(capacity: Any, slots: Any, seed: Any) -> None:
        if isinstance(capacity, bool) or not _checks.is_int(capacity):
            raise TypeError(f"Agents: capacity must be an int, got {type(capacity).__name__}")
        if capacity < 0:
            raise ValueError(f"Agents: capacity must be >= 0, got {capacity}")
        if capacity > MAX_CAPACITY:
            raise ValueError(
                f"Agents: capacity must be <= {MAX_CAPACITY:,} (agent ids are int32), got {capacity:,}"
            )
        from .maps import _memory_text, _physical_memory

        need = 67 * int(
            capacity
        )  # bytes a slot: 7 float pairs/scalars, group, alive, rng, generation, kinematic,
        # waypoint
        if need > _physical_memory():
            raise MemoryError(
                f"Agents({capacity}) needs about {need / 2**30:.3g} GiB, more than {_memory_text()}"
            )
        if slots is not None:
            if isinstance(slots, bool) or not _checks.is_int(slots):
                raise TypeError(f"Agents: slots must be an int, got {type(slots).__name__}")
            if slots < 3:
                raise ValueError(f"Agents: slots must be >= 3, got {slots}")
            if slots > _checks.MAX_SLOTS:
                raise ValueError(
                    f"Agents: slots must be at most {_checks.MAX_SLOTS} (a SlotSet's limit), "
                    f"got {slots}"
                )
        if isinstance(seed, bool) or not _checks.is_int(seed):
            raise TypeError(f"Agents: seed must be an int, got {type(seed).__name__}")
        if not 0 <= int(seed) < 2**64:
            raise ValueError(f"Agents: seed must be in [0, 2**64), got {seed}")

    @_checks.safe_repr
    def __repr__(self) -> str:
        return f"Agents(capacity={_capacity(self)}, count={_count(self)}, slots={self.slots})"

    #: Per-agent arrays that make up the agents' state (save/load, pickling).
    STATE = (
        "position",
        "velocity",
        "heading",
        "radius",
        "max_speed",
        "max_accel",
        "max_turn_rate",
        "steer_force",
        "target",
        "group",
        "alive",
        "rng",
        "generation",
        "kinematic",
        "waypoint",
    )

    def __reduce__(self):
        """Pickle (and ``copy.deepcopy``) support: the capacity, slots, seed and every
        per-agent array, so an unpickled copy is equal slot for slot (ids, free slots, RNG
        state) and seeds the agents added to it later as the original would."""
        # Copied under the agents' thread guard: a step running in another thread makes
        # this raise RuntimeError ("in use") instead of pickling a half-written state.
        if type(self) is Agents:
            return self._base_reduce()
        state = self._snapshot()
        # A subclass comes back as itself, with its own attributes (it came back as a plain
        # Agents without them: fuzz round 25). Its __init__ may take other arguments, so
        # the copy is built by Agents' own and given the attributes after.
        # Its state as Python's protocol gives it: its own __getstate__ if it has one,
        # else its __dict__ (and its __slots__' values), less Agents' own "slots".
        # (object has a __getstate__ from 3.11, which gives the __dict__ and __slots__ as
        # below; a subclass's own is its business, its keys passed on as they are: a key
        # "slots" of its own was dropped, fuzz round 26.)
        own = getattr(type(self), "__getstate__", None)
        if own is not None and own is not getattr(object, "__getstate__", None):
            return (_restore_agents, self._restore_args(state), own(self))
        getstate = getattr(self, "__getstate__", None)
        if getstate is not None:
            extra = getstate()
        else:
            names = [vars(k).get("__slots__", ()) for k in type(self).__mro__]
            slots = {
                name: getattr(self, name)
                for group in names
                for name in ((group,) if isinstance(group, str) else group)
                if name not in ("__dict__", "__weakref__") and hasattr(self, name)
            }
            extra = (vars(self), slots) if slots else vars(self)
        if isinstance(extra, tuple) and len(extra) == 2 and isinstance(extra[0], dict | None):
            extra = ({k: v for k, v in (extra[0] or {}).items() if k != "slots"}, extra[1])
        elif isinstance(extra, dict):
            extra = {k: v for k, v in extra.items() if k != "slots"}
        return (_restore_agents, self._restore_args(state), extra)

    def _base_reduce(self) -> tuple[Any, ...]:
        """The pickle of these agents as plain Agents (:func:`persist.save` writes a
        subclass so)."""
        return (_restore_agents, (_capacity(self), self.slots, self._snapshot(), _seed(self)))

    def _restore_args(self, state: dict[str, Any]) -> tuple[Any, ...]:
        return (_capacity(self), self.slots, state, _seed(self), type(self))

    def __copy__(self):
        raise TypeError(
            "Agents: copy.copy would share the C++ arrays with the original; "
            "use copy.deepcopy for an independent copy"
        )

    def __len__(self) -> int:
        """The capacity: every slot, alive or not, as the columns' length
        (``len(agents) == len(agents.position)``). :attr:`count` is the alive agents, and
        :attr:`ids` their slots (a loop over ``range(len(agents))`` visits dead slots)."""
        return _capacity(self)

    @property
    def ids(self) -> np.ndarray:
        """Indices of the alive slots, ascending (a new int32 array)."""
        return np.flatnonzero(self.alive).astype(np.int32)

    def add(
        self,
        position: ArrayLike,
        velocity: ArrayLike = 0.0,
        *,
        heading: ArrayLike | None = None,
        radius: ArrayLike = 0.5,
        max_speed: ArrayLike = 1.0,
        max_accel: ArrayLike = 1.0,
        max_turn_rate: ArrayLike = np.pi,
        steer_force: ArrayLike = 0.1,
        group: ArrayLike = 0,
        target: ArrayLike | None = None,
        kinematic: ArrayLike = False,
    ) -> np.ndarray:
        """Add agents in the lowest free slots; return their ids.

        Every argument broadcasts against ``position`` (n, 2): pass one value for all
        agents or one per agent.

        Parameters
        ----------
        position : array_like, shape (n, 2) or (2,)
        velocity : array_like, shape (n, 2), (2,) or scalar, default 0
        heading : array_like, shape (n,), optional
            Radians; default: the direction of ``velocity`` (0 where it is zero).
        radius, max_speed, max_accel, max_turn_rate, steer_force : array_like, shape (n,)
            Non-negative; ``steer_force`` in [0, 1]. Defaults: radius 0.5 (m), max_speed
            1 (m/s), max_accel 1 (m/s², the limit of ``Accel`` and ``Vehicle``: give a fast
            agent its own), max_turn_rate π (rad/s), steer_force 0.1 (``Lerp``).
        group : array_like of int, shape (n,), default 0
        target : array_like, shape (n, 2), optional
            Per-agent goal; default: the agent's own position.
        kinematic : array_like of bool, shape (n,), default False
            Moved by its own ``velocity`` instead of steered (see :attr:`kinematic`).

        Returns
        -------
        numpy.ndarray of int32, shape (n,)
            The slot ids, ascending.

        Raises
        ------
        ValueError
            On non-finite values, negative sizes/limits (naming the argument and the
            agent's index in this call), or when fewer than n slots are free.

        Examples
        --------
        >>> import contextsteer as cs
        >>> agents = cs.Agents(3)
        >>> agents.add([[0, 0], [1, 1]], velocity=[1, 0], radius=[0.5, 1.0])
        array([0, 1], dtype=int32)
        >>> agents.heading[:2]
        array([0., 0.], dtype=float32)
        >>> agents.add([[0, 0], [1, 1]])
        Traceback (most recent call last):
        ...
        ValueError: Agents.add: capacity exceeded: adding 2 agents, 1 free slots of 3
        """
        if isinstance(position, np.ma.MaskedArray):
            raise TypeError("Agents.add: position must be plain numbers, got a masked array")
        pos = np.asarray(position)
        if pos.ndim == 1:
            pos = pos[None, :]
        if pos.ndim != 2 or pos.shape[1] != 2:
            raise ValueError(
                f"Agents.add: position must have shape (n, 2), got {np.shape(position)}"
            )
        n = pos.shape[0]
        pos = _column(pos, "position", n, 2, np.float32)
        vel = _column(velocity, "velocity", n, 2, np.float32)
        if heading is None:
            head = np.where(
                np.hypot(vel[:, 0], vel[:, 1]) > 0, np.arctan2(vel[:, 1], vel[:, 0]), 0.0
            ).astype(np.float32)
        else:
            head = _column(heading, "heading", n, None, np.float32)
        cols = {}
        for name, value in (
            ("radius", radius),
            ("max_speed", max_speed),
            ("max_accel", max_accel),
            ("max_turn_rate", max_turn_rate),
            ("steer_force", steer_force),
        ):
            cols[name] = _column(value, name, n, None, np.float32)
            _non_negative(cols[name], name)
        over = cols["steer_force"] > 1
        if over.any():
            i = int(np.flatnonzero(over)[0])
            raise ValueError(
                f"Agents.add: steer_force must be in [0, 1], got {cols['steer_force'][i]} at index {i}"
            )
        grp = _checks.integer_array("Agents.add: group", group)
        if not _checks.is_integer(grp):
            raise TypeError(f"Agents.add: group must be integers, got dtype {grp.dtype}")
        wide = (grp < -(2**31)) | (grp > 2**31 - 1)
        if np.any(wide):
            raise ValueError(
                f"Agents.add: group ids must fit int32 [-2**31, 2**31 - 1], got "
                f"{np.ravel(grp)[np.flatnonzero(np.ravel(wide))[0]]}"
            )
        grp = _column(grp, "group", n, None, np.int32)
        tgt = pos.copy() if target is None else _column(target, "target", n, 2, np.float32)
        kin = np.asarray(_checks.not_masked("Agents.add: kinematic", kinematic))
        if kin.dtype != np.bool_:
            raise TypeError(
                f"Agents.add: kinematic must be bool (True/False), got dtype {kin.dtype}"
            )
        try:
            kin = np.ascontiguousarray(np.broadcast_to(kin, (n,)))
        except ValueError:
            raise ValueError(
                f"Agents.add: kinematic must be a bool or one per agent ({n},), got shape {kin.shape}"
            ) from None
        # (Too few free slots: the core says so with their count, which it counts only
        # then: a count first read every alive flag, each call.)
        return self._add(
            pos,
            vel,
            head,
            cols["radius"],
            cols["max_speed"],
            cols["max_accel"],
            cols["max_turn_rate"],
            cols["steer_force"],
            grp,
            tgt,
            kin,
        )

    def remove(self, ids: ArrayLike) -> None:
        """Mark the given slots dead (their views keep their last values).

        ``ids``: slot ids (integers), or a boolean mask of shape ``(capacity,)``, as a sink
        writes it: ``agents.remove(agents.alive & (agents.position[:, 0] > 20))``.

        Raises
        ------
        IndexError
            If an id is outside ``[0, capacity)``.
        ValueError
            A boolean mask of another shape.
        """
        arr = np.asarray(_checks.not_masked("Agents.remove: ids", ids))
        if arr.dtype == np.bool_:
            if arr.shape != (_capacity(self),):
                raise ValueError(
                    f"Agents.remove: a boolean mask must have shape ({_capacity(self)},) "
                    f"(the capacity), got {arr.shape}"
                )
            arr = np.flatnonzero(arr)
        if arr.size and not _checks.is_integer(arr):
            raise TypeError(f"Agents.remove: ids must be integers, got dtype {arr.dtype}")
        arr = arr.reshape(-1)
        bad = (arr < 0) | (arr >= _capacity(self))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise IndexError(
                f"Agents.remove: id {arr[i]} at index {i} is out of range [0, {_capacity(self)})"
            )
        self._remove(np.ascontiguousarray(arr, dtype=np.int32))


class Neighbours(NamedTuple):
    """Result of :func:`neighbours`."""

    indices: np.ndarray
    """(N, max_neighbours) int32, nearest first (ties by index), padded with -1."""
    counts: np.ndarray
    """(N,) int32 number of valid entries per row."""


def _alive(alive: ArrayLike, n: int) -> np.ndarray:
    """``alive`` as a C-contiguous bool array: booleans, or integers that are all 0 or 1
    (a float, NaN or string is not a truth value here)."""
    raw = np.asarray(_checks.not_masked("neighbours: alive", alive))
    if raw.dtype != bool:
        if not _checks.is_integer(raw):
            raise TypeError(f"neighbours: alive must be booleans, got dtype {raw.dtype}")
        if raw.size and not ((raw == 0) | (raw == 1)).all():
            raise ValueError("neighbours: alive must be booleans (or integers 0 and 1)")
    if raw.shape != (n,):
        raise ValueError(f"neighbours: alive must have shape ({n},), got {raw.shape}")
    return np.ascontiguousarray(raw, dtype=bool)


def neighbours(
    positions: ArrayLike, radius: float, max_neighbours: int, *, alive: ArrayLike | None = None
) -> Neighbours:
    """Find, for every point, its nearest other points within ``radius``.

    The C++ uniform grid the simulation rebuilds every step. For row i the result lists
    at most ``max_neighbours`` indices j != i with ``|p_j - p_i|² <= radius²`` (float32
    arithmetic), sorted by that squared distance with ties broken by ascending index, so
    the answer never depends on the thread count or the grid layout. Many points at one
    position are read once a query (100,000 at one point take milliseconds), but points
    packed within a radius of each other at distinct positions still cost each query all
    of them. Ctrl-C interrupts a long call (``KeyboardInterrupt``).

    Parameters
    ----------
    positions : array_like, shape (N, 2)
        Finite and within ±1e8; with ``alive``, only on the alive rows (a dead row may
        hold anything, NaN included: it is never read).
    radius : float
        Search radius, >= 0.
    max_neighbours : int
        Row width, 0 … 256.
    alive : array_like of bool, shape (N,), optional
        Only alive points are found, and dead rows are empty.

    Returns
    -------
    Neighbours
        ``indices`` (N, max_neighbours) int32 and ``counts`` (N,) int32.

    Examples
    --------
    >>> import contextsteer as cs
    >>> r = cs.neighbours([[0, 0], [1, 0], [3, 0], [0.5, 0]], radius=1.0, max_neighbours=2)
    >>> r.indices
    array([[ 3,  1],
           [ 3,  0],
           [-1, -1],
           [ 0,  1]], dtype=int32)
    >>> r.counts
    array([2, 2, 0, 2], dtype=int32)
    """
    pos = _f32(positions, "positions")
    m = _checks.integer("neighbours: max_neighbours", max_neighbours, 0, 256)
    al = None if alive is None else _alive(alive, len(pos))
    idx, counts = _core.neighbours(pos, _checks.real("neighbours: radius", radius), m, al)
    return Neighbours(idx, counts)


def neighbors(
    positions: ArrayLike, radius: float, max_neighbors: int, *, alive: ArrayLike | None = None
) -> Neighbours:
    """Deprecated spelling of :func:`neighbours` (warns)."""
    warnings.warn(
        "contextsteer.neighbors is deprecated; use neighbours (max_neighbours=)",
        DeprecationWarning,
        stacklevel=2,
    )
    return neighbours(positions, radius, max_neighbors, alive=alive)


def _alias(name: str) -> type[Neighbours]:
    """The deprecated alias Neighbors, for this module's and the package's __getattr__:
    the warning names the line that read it (it named contextsteer/__init__.py, which the
    default filters hide; fuzz round 24)."""
    if name == "Neighbors":
        warnings.warn(
            "contextsteer.Neighbors is deprecated; use Neighbours", DeprecationWarning, stacklevel=3
        )
        return Neighbours
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __getattr__(name: str) -> type[Neighbours]:  # only the deprecated alias Neighbors
    return _alias(name)


def _restore_agents(
    capacity: int,
    slots: int | None,
    state: dict[str, Any],
    seed: int = 0,
    cls: type[Agents] | None = None,
) -> Agents:
    """Rebuild pickled agents (see :meth:`Agents.__reduce__`); ``cls``, a subclass of
    Agents, is built by ``Agents.__init__`` (the subclass's attributes follow as the
    pickle's state). Older pickles saved neither
    the seed nor the generations: they load with seed 0, as before, and generations 0;
    pickles from before kinematic agents load with none kinematic, and from before
    waypoints with every target a goal."""
    if cls is None or cls is Agents:
        a = Agents(capacity, slots=slots, seed=seed)
    else:
        if not (isinstance(cls, type) and issubclass(cls, Agents)):
            raise TypeError(f"Agents pickle: expected a subclass of Agents, got {cls!r}")
        a = _core.Agents.__new__(cls)  # (as the subclasses' __new__ does; not its arguments)
        Agents.__init__(a, capacity, slots=slots, seed=seed)
    for name in Agents.STATE:
        if name in ("generation", "kinematic", "waypoint") and name not in state:
            continue
        _restore_column(a, name, state[name])
    return a


def _restore_column(agents: Agents, name: str, value: Any) -> None:
    """Write one column of a pickled state (``generation`` too, read-only to users)."""
    # The C++ view itself, not the attribute: a subclass may name a property "position".
    view = agents._view("generation (restore)" if name == "generation" else name)
    view[...] = value
