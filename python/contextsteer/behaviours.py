"""Context behaviours: small stateless evaluators that write interest and/or danger maps.

Each behaviour is a frozen, validated configuration with a ``weight``; the C++ kernel
behind it scores every slot of every agent with the "dot-product rule" of the seeds
(the Godot recipe, Mike Lewis's article, the Unity ContextSteering project, gdx-ai).
:meth:`Behaviour.evaluate` runs one behaviour on a set of agents, for tests, notebooks
and prototyping; the simulation runs the same kernels inside its step.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from . import _checks, _core
from .maps import _MAX_MAGNITUDE, _f32, slot_directions
from .world import _core_world

if TYPE_CHECKING:
    from .agents import Agents
    from .world import World

__all__ = [
    "AgentDanger",
    "Alignment",
    "Arrive",
    "Avoid",
    "Behaviour",
    "BehaviourMaps",
    "Bounds",
    "Chase",
    "Cohesion",
    "CollisionDanger",
    "CollisionMaps",
    "Evade",
    "Flee",
    "FollowField",
    "FollowPath",
    "Forward",
    "Momentum",
    "Pursue",
    "Seek",
    "Separation",
    "Tether",
    "WallDanger",
    "Wander",
]


class BehaviourMaps(NamedTuple):
    """Maps written by one behaviour: ``interest`` and ``danger``, each (N, K) float32."""

    interest: np.ndarray
    danger: np.ndarray


class CollisionMaps(NamedTuple):
    """Maps written by :class:`CollisionDanger`: ``interest`` (zeros), ``danger`` and the
    ``speed`` map (fractions of each agent's max speed), each (N, K) float32."""

    interest: np.ndarray
    danger: np.ndarray
    speed: np.ndarray


def _check_agent_weights(owner: str, w: np.ndarray, when: str = "") -> None:
    """ValueError naming the first weight that is not finite, >= 0 and below 2^60."""
    ok = np.isfinite(w) & (w >= 0) & (w < _MAX_MAGNITUDE)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ValueError(
            f"{owner}: agent_weights must be finite and >= 0, below 2^60 (1.15e18), "
            f"got {w[i]} at index {i}{when}"
        )


def _slot_directions(directions: Any) -> np.ndarray:
    """(K, 2) float32 directions from an int K (ring, slot 0 along +x, CCW), an object
    with a ``directions`` attribute (a slot set) or an array."""
    if _checks.is_int(directions) and not isinstance(directions, bool):
        k = int(directions)
        if not 3 <= k <= _checks.MAX_SLOTS:
            raise ValueError(
                f"directions: a ring needs at least 3 slots and at most {_checks.MAX_SLOTS}, "
                f"got {k}"
            )
        return slot_directions(k)  # the ring a Simulation's SlotSet(k) holds, bit for bit
    if hasattr(directions, "directions"):
        directions = directions.directions
    if np.ndim(directions) == 0:  # a float K (8.0) was read as a (1,) array of directions
        raise TypeError(
            f"directions: expected an int K (a ring of K slots), a slot set or a (K, 2) "
            f"array of directions, got {type(directions).__name__} {directions!r}"
        )
    d = _f32(directions, "slot directions")
    if d.ndim != 2 or d.shape[1] != 2 or len(d) < 3:
        raise ValueError(f"slot directions: expected shape (K, 2) with K >= 3, got {d.shape}")
    norm = np.hypot(d[:, 0].astype(np.float64), d[:, 1].astype(np.float64))
    bad = ~(np.abs(norm - 1.0) <= 1e-3)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"slot directions must be unit vectors (within 1e-3), got {d[i].tolist()} at index {i}"
        )
    return d


def _number(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float = 0.0,
    strict: bool = False,
    allow_inf: bool = False,
    length: bool = False,
) -> float:
    """A number parameter checked when the behaviour is built: finite (or inf when
    ``allow_inf``), at least ``low`` (above it when ``strict``), below 2^60 in magnitude, and
    at most 1e8 in magnitude when it is a ``length`` (README, "Supported ranges")."""
    if isinstance(value, bool) or not _checks.is_real(value):
        raise TypeError(f"{owner}: {name} must be a number, got {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:  # an int past float64 (10**400)
        if int(value) < 0 and low > -math.inf:  # below the bound, however far (as -1)
            raise ValueError(
                f"{owner}: {name} must be {'>' if strict else '>='} {low}, "
                f"got {_checks.shown(value)}"
            ) from None
        raise ValueError(
            f"{owner}: {name} must be below 2^60 (1.15e18) in magnitude, got {_checks.shown(value)}"
        ) from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{owner}: {name} must be finite, got {v}")
    if v < low or (strict and v <= low):
        raise ValueError(f"{owner}: {name} must be {'>' if strict else '>='} {low}, got {v}")
    if math.isfinite(v):
        limit = _checks.MAX_COORDINATE if length else _MAX_MAGNITUDE
        if not (abs(v) <= limit if length else abs(v) < limit):
            what = "at most 1e8" if length else "below 2^60 (1.15e18)"
            raise ValueError(
                f"{owner}: {name} must be {what} in magnitude, got {_checks.shown(value)}"
            )
        # The core stores it as a float32: 1e-300 > 0 but becomes 0.0 there, which the
        # core refused later without naming the behaviour.
        if strict and (stored := float(np.float32(v))) <= low:
            raise ValueError(
                f"{owner}: {name} must be > {low} as a float32, got {value!r} "
                f"(a float32 {stored!r})"
            )
    return v


def _indices(owner: str, name: str, value: Any) -> np.ndarray:
    """An int32 index array from integers (a float is not truncated, a bool is not an
    index, a value beyond int32 does not wrap)."""
    raw = _checks.integer_array(f"{owner}: {name}", value)
    if not _checks.is_integer(raw):
        raise TypeError(f"{owner}: {name} must be integer indexes, got dtype {raw.dtype}")
    if raw.size and not (raw.min() >= -(2**31) and raw.max() < 2**31):
        raise ValueError(f"{owner}: {name} indexes must fit int32")
    if raw.ndim != 1:
        raise ValueError(f"{owner}: {name} must have shape (capacity,), got {raw.shape}")
    # A read-only copy, whatever the dtype: an int32 array was kept as the caller's memory
    # (an edit re-routed agents where the same edit to an int64 array did nothing, and a
    # resize left the core reading freed memory).
    return _frozen_copy(raw, np.int32)


def _frozen_copy(a: np.ndarray, dtype: Any = None) -> np.ndarray:
    """A read-only copy of ``a`` (a behaviour's fixed parameter arrays, a steering's spread)."""
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


def _choice(owner: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(
            f"{owner}: {name} must be one of {', '.join(map(repr, choices))}, "
            f"got {_checks.shown(value)}"
        )
    return value


def _point(owner: str, name: str, value: Any) -> np.ndarray | None:
    if value is None:
        return None
    p = _f32(value, f"{owner}: {name}")
    if p.shape != (2,) or not np.isfinite(p).all():
        raise ValueError(f"{owner}: {name} must be a finite point of shape (2,), got {value!r}")
    _check_points(owner, name, p[None, :])
    # A copy (a caller's buffer may be reused), read-only as the behaviour's other
    # parameters are: the core copies the point when a simulation is built, so an edit in
    # place would be ignored by it and taken up by its copies and saves.
    return _frozen_copy(p)


# Arrays a behaviour keeps read-only: the fixed points _point checks (Arrive, Tether,
# Bounds) and the per-agent indexes _indices copies (FollowPath, FollowField).
_FIXED_POINTS = ("target", "center", "lo", "hi", "index", "which")


def _points(owner: str, name: str, value: Any) -> np.ndarray | None:
    if value is None:
        return None
    p = _f32(value, f"{owner}: {name}")
    if p.ndim == 1 and p.shape == (2,):
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"{owner}: {name} must have shape (M, 2), got {np.shape(value)}")
    _check_points(owner, name, p)
    return p


def _check_points(owner: str, name: str, p: np.ndarray, when: str = "") -> None:
    """ValueError naming the first point that is not finite and within ±1e8 (the
    coordinates the core supports, README "Supported ranges")."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(p) <= _checks.MAX_COORDINATE)
    if bad.any():
        i = int(np.argwhere(bad)[0][0])
        raise ValueError(
            f"{owner}: {name} must be finite and at most 1e8 in magnitude, got "
            f"{p[i].tolist()} at index {i}{when}"
        )


def _lent_arrays(b: Any) -> list[tuple[str, np.ndarray]]:
    """The arrays behaviour ``b`` lends the core in place (its ``agent_weights``, its
    ``targets`` points or agent ids), by name: the core keeps their data pointers."""
    out = []
    for name in ("agent_weights", "targets"):
        a = getattr(b, name, None)
        if isinstance(a, np.ndarray):
            out.append((name, a))
    return out


def _buffer_mark(a: np.ndarray) -> tuple[tuple[int, tuple[int, ...], np.dtype], ...]:
    """Where an array's data lives, its shape and dtype: what the core relies on; and the
    same of every array it is a view of (a caller's array the behaviour keeps a view of
    may itself be resized, which frees the memory under the view)."""
    out = []
    x: Any = a
    while isinstance(x, (np.ndarray, memoryview)):
        if isinstance(x, memoryview):  # np.frombuffer(memoryview(big)): on to big
            x = x.obj
            continue
        out.append((x.__array_interface__["data"][0], x.shape, x.dtype))
        x = x.base
    return tuple(out)


def _check_lent(
    b: Behaviour, when: str = " (edited since it was given)", capacity: int | None = None
) -> None:
    """The arrays a behaviour lends the core in place (``agent_weights``, shared
    ``targets``) may have been edited since it was built: check them again (O(N)). With
    ``capacity``, agent ids (Pursue's and Evade's targets) must name a slot of the
    simulation's agents, as when it was built (an id written out of range in place was
    read as no target, silently; fuzz round 13)."""
    for name, a in _lent_arrays(b):
        if name == "agent_weights":
            _check_agent_weights(type(b).__name__, a, when)
        elif a.dtype.kind == "f":  # target points (Pursue's are agent ids)
            _check_points(type(b).__name__, name, a, when)
        elif capacity is not None and a.size:
            bad = np.flatnonzero((a < 0) | (a >= capacity))
            if len(bad):
                raise IndexError(
                    f"{type(b).__name__}: {name}: agent id {int(a.flat[bad[0]])} out of range "
                    f"[0, {capacity}){when}"
                )


# ---- Parameter tables (C++ BehaviourSpec, cpp/include/contextsteer/behaviour_params.hpp) ----

_SPECS: dict[str, dict] = {spec["kind"]: spec for spec in _core.behaviour_specs()}
"""kind -> the C++ table of a behaviour that has one: its parameters (name, kind, default,
range, choices, doc), what it writes, whether it writes a speed map."""

_PARAM_TYPES = {"number": float, "count": int, "flag": bool, "choice": str, "layers": int}


def _short(value: Any) -> Any:
    """A float32 default as its shortest decimal (0.1, not 0.10000000149011612)."""
    if isinstance(value, float) and math.isfinite(value):
        return float(str(np.float32(value)))
    return value


def _default(kind: str, name: str) -> Any:
    """The default of parameter ``name`` of behaviour ``kind``, from its C++ table."""
    for p in _SPECS[kind]["params"]:
        if p["name"] == name:
            return _short(p["default"])
    raise KeyError(f"{kind} has no parameter {name!r}")


def _interval(p: dict) -> str:
    """What a number or count parameter accepts, e.g. ">= 0", "in [0, 1)"."""

    def text(x: float) -> str:
        return str(int(x)) if p["kind"] == "count" else f"{_short(x):g}"

    lo, hi = text(p["lo"]), p["hi"]
    if not math.isfinite(hi):
        return f"{'>' if p['lo_open'] else '>='} {lo}"
    return f"in {'(' if p['lo_open'] else '['}{lo}, {text(hi)}{')' if p['hi_open'] else ']'}"


def _checked(owner: str, p: dict, value: Any) -> Any:
    """``value`` of parameter ``p`` (a table row) checked and converted, or an exception
    naming the behaviour, the parameter and what it accepts."""
    name, kind = p["name"], p["kind"]
    if value is None and p["optional"]:
        return None
    if kind == "flag":
        return _checks.flag(f"{owner}: {name}", value)
    if kind == "choice":
        return _choice(owner, name, value, tuple(p["choices"]))
    if kind in ("count", "layers"):
        if isinstance(value, bool) or not _checks.is_int(value):
            raise TypeError(f"{owner}: {name} must be an int, got {type(value).__name__}")
        if kind == "layers":
            if not 0 <= int(value) < 2**32:
                raise ValueError(
                    f"{owner}: {name} must be in [0, 2**32), got {_checks.shown(value)}"
                )
            return int(value)
        v: float | int = int(value)
    lo, hi = p["lo"], p["hi"]

    def outside(x: float) -> bool:
        return (x <= lo if p["lo_open"] else x < lo) or (x >= hi if p["hi_open"] else x > hi)

    if kind not in ("count", "layers"):
        # The parameter's own range is the one to name when the value lies outside it: a
        # padding of 1e39 was told "below 2^60", one of 1e9 "in [0, 1e8]", and a horizon
        # of -1e39 "below 2^60" where -1 is told "> 0".
        x: float | None = None
        try:
            if _checks.is_real(value) and not isinstance(value, bool):
                x = float(value)
        except OverflowError:  # an int past float64 (10**400): beyond any finite bound
            x = math.inf if int(value) > 0 else -math.inf
        if x is not None and outside(x):
            # An inf given as such is left to _number ("finite"), and so is an int past
            # float64 on a side the range leaves open (the 2^60 bound).
            huge_int = math.isinf(x) and _checks.is_int(value)
            if math.isfinite(x) or (huge_int and math.isfinite(hi if x > 0 else lo)):
                raise ValueError(
                    f"{owner}: {name} must be {_interval(p)}, got {_checks.shown(value)}"
                )
        # (Inside its own range, a value passes _number's 2^60 bound unless the range
        # itself reaches past it.)
        v = _number(owner, name, value, low=-math.inf)

    # A number is checked as given and as the float32 the core stores: 1 - 1e-9 is in
    # [0, 1) but becomes 1.0 there (a reciprocity of 1 divides by zero).
    if outside(v):
        raise ValueError(f"{owner}: {name} must be {_interval(p)}, got {_checks.shown(value)}")
    if kind == "number" and outside(float(np.float32(v))):
        raise ValueError(
            f"{owner}: {name} must be {_interval(p)} as a float32, got {value} "
            f"(a float32 {float(np.float32(v))!r})"
        )
    return v


def _spec_doc(spec: dict) -> str:
    """A numpydoc docstring for a behaviour generated from its table."""
    lines = [spec["doc"], "", "Parameters", "----------"]
    for p in spec["params"]:
        kind = p["kind"]
        what = {
            "number": f"float, {_interval(p)}",
            "count": f"int, {_interval(p)}",
            "flag": "bool",
            "choice": "{" + ", ".join(repr(c) for c in p["choices"]) + "}",
            "layers": "int",
        }[kind]
        optional = ", optional" if p["optional"] else ""
        lines += [
            f"{p['name']} : {what}{optional}, default {_short(p['default'])!r}",
            f"    {p['doc']}.",
        ]
    lines += ["", f"Generated from the C++ table of ``{spec['kind']}`` (writes {spec['writes']})."]
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True, eq=False)
class Behaviour:
    """Base of every behaviour: a non-negative ``weight`` multiplying its maps.

    ``agent_weights``, optional, gives each agent its own factor on top of ``weight``
    (per-agent behaviour weights: a cautious agent weighs its danger more). An array of
    shape (capacity,) with finite values >= 0, one per agent slot. A float32 C-contiguous
    array is used in place, so editing it between steps retunes the agents; anything else
    is copied to float32 once.

    >>> import numpy as np, contextsteer as cs
    >>> agents = cs.Agents(2, slots=4); _ = agents.add([[0, 0], [5, 0]], target=[[0, 5], [5, 5]])
    >>> keen = np.float32([1.0, 0.25])                      # agent 1 cares less
    >>> cs.Seek(agent_weights=keen).evaluate(agents, 4).interest.round(3) + 0.0
    array([[0.  , 1.  , 0.  , 0.  ],
           [0.  , 0.25, 0.  , 0.  ]], dtype=float32)
    """

    weight: float = dataclasses.field(default=1.0, kw_only=True)
    agent_weights: Any = dataclasses.field(default=None, kw_only=True)
    kind: ClassVar[str] = ""
    writes: ClassVar[str] = "interest"
    """Which map the behaviour writes: ``"interest"`` or ``"danger"``."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Unpickled (or deep-copied) fixed points stay read-only, as _point made them.
        self.__dict__.update(state)
        for name in _FIXED_POINTS:
            p = self.__dict__.get(name)
            if isinstance(p, np.ndarray) and p.flags.writeable:
                self.__dict__[name] = _frozen_copy(p)

    def __post_init__(self) -> None:
        self._set("weight", _number(type(self).__name__, "weight", self.weight))
        w = self.agent_weights
        if w is not None:
            owner = type(self).__name__
            if (
                type(w) is np.ndarray  # not a subclass: a masked array's mask would be lost
                and w.dtype == np.float32
                and w.ndim == 1
                and w.flags.c_contiguous
            ):
                arr = w  # in place: the caller may edit it between steps
            else:
                try:
                    arr = _f32(w, f"{owner}: agent_weights")
                except (TypeError, ValueError) as e:
                    if np.iscomplexobj(w) or isinstance(w, np.ma.MaskedArray):
                        raise e from None
                    raise TypeError(
                        f"{owner}: agent_weights must be an array of numbers, got {w!r}"
                    ) from None
            if np.ndim(w) == 0:
                raise ValueError(
                    f"{owner}: agent_weights must have shape (capacity,), got a scalar, {w!r} "
                    "(weight= is the one factor for every agent)"
                )
            if arr.ndim != 1:
                raise ValueError(
                    f"{owner}: agent_weights must have shape (capacity,), got {np.shape(w)}"
                )
            _check_agent_weights(owner, arr)
            self._set("agent_weights", arr)
        spec = _SPECS.get(self.kind)
        if spec is not None:  # parameters from the C++ table: checked as it says
            for p in spec["params"]:
                self._set(p["name"], _checked(type(self).__name__, p, getattr(self, p["name"])))

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _params(self) -> dict:
        spec = _SPECS.get(self.kind)
        if spec is None:
            return {}
        return {p["name"]: getattr(self, p["name"]) for p in spec["params"]}

    def _config(self) -> tuple[str, dict]:
        """(kind, params) read by the C++ bindings; arrays are the ones stored here."""
        return self.kind, {
            "weight": self.weight,
            "agent_weights": self.agent_weights,
            **self._params(),
        }

    @property
    def needs_neighbours(self) -> bool:
        """True when the behaviour reads the shared neighbour query of the step."""
        if self.kind in _SPECS:
            return bool(_core.behaviour_needs_neighbours(self))
        return False

    @property
    def needs_neighbors(self) -> bool:
        """Deprecated spelling of :attr:`needs_neighbours` (warns)."""
        warnings.warn(
            "needs_neighbors is deprecated; use needs_neighbours", DeprecationWarning, stacklevel=2
        )
        return self.needs_neighbours

    def evaluate(
        self,
        agents: Agents,
        directions: Any,
        *,
        rotate: bool = False,
        time: float = 0.0,
        max_neighbours: int = _checks.MAX_NEIGHBOURS,
        world: World | None = None,
        max_neighbors: int | None = None,
    ) -> BehaviourMaps:
        """Run this behaviour alone on ``agents``; return its interest and danger maps.

        Parameters
        ----------
        agents : Agents
        directions : int, slot set or array_like, shape (K, 2)
            Slot directions; an int K means the ring of K slots (slot 0 along +x, CCW).
        rotate : bool, default False
            Turn every agent's slots with its heading (the Godot recipe: slot 0 is then
            the agent's forward direction).
        time : float, default 0
            Simulation time in seconds (drives ``Wander``).
        max_neighbours : int, default 16
            Neighbours per agent for the behaviours that need them, as
            ``Steering(max_neighbours=16)`` takes them by default: a behaviour evaluated
            alone gives the map it gives in a default steering (the default was 32, and a
            crowded agent's map differed). (``max_neighbors`` is a deprecated spelling
            that warns.)
        world : World, optional
            The walls, for the behaviours that cast rays (:class:`WallDanger`,
            :class:`CollisionDanger` with ``walls=True``). Without it they see no walls;
            a ``WallDanger`` that would then see nothing at all (``agents=False``)
            raises ``ValueError``.

        Returns
        -------
        BehaviourMaps
            ``interest`` and ``danger``, each (capacity, K) float32; the map the
            behaviour does not write is zero, and so are dead agents' rows.

        Examples
        --------
        >>> import numpy as np
        >>> import contextsteer as cs
        >>> agents = cs.Agents(1); _ = agents.add([0, 0])
        >>> print(np.round(cs.Forward().evaluate(agents, 8).interest[0], 3))  # Godot recipe
        [1.    0.707 0.    0.    0.    0.    0.    0.707]
        """
        _check_lent(self)
        _checks.agents("evaluate", agents)
        self._check_world(world)
        d = _slot_directions(directions)
        maps = _core.evaluate_behaviour(
            agents,
            self,
            d,
            _checks.flag("evaluate: rotate", rotate),
            _checks.real("evaluate: time", time),
            _checks.integer(
                "evaluate: max_neighbours",
                _checks.max_neighbours("evaluate", max_neighbours, max_neighbors),
                1,
                256,  # as Steering's (0 read no neighbour at all, silently: fuzz round 26)
            ),
            _core_world(world),
        )
        if len(maps) == 3:  # a behaviour with a speed map (e.g. CollisionDanger)
            return CollisionMaps(*maps)  # type: ignore[return-value]
        return BehaviourMaps(*maps)

    def _check_world(self, world: World | None) -> None:
        """Refuse a functional call whose world this behaviour cannot do without (none by
        default: a behaviour without walls to see evaluates in open space)."""

    @_checks.safe_repr
    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
        return f"{type(self).__name__}({fields})"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Forward(Behaviour):
    """Interest along the heading: ``weight·max(0, slot·forward)``.

    The Godot recipe's default interest and the Unity project's "Directional" behaviour.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    """

    kind: ClassVar[str] = "forward"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Momentum(Behaviour):
    """Interest along the current velocity, scaled by ``speed / max_speed`` (stability).

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    """

    kind: ClassVar[str] = "momentum"


_COMBINE = ("max", "sum", "center")
_GROUPS = ("all", "same", "other")
_FALLOFF = ("linear", "none")
_TARGET_SHAPES = ("clamped_cosine", "half_cosine", "chord")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Seek(Behaviour):
    """Interest towards targets (Unity "chase", Lewis "pursuing a target").

    For each target within ``max_distance`` the slot value is ``max(0, slot·û)`` with û the
    unit vector to the target, scaled by ``1 - d/max_distance`` with ``falloff="linear"``
    (closer targets are stronger) when ``max_distance`` is finite; targets are merged by
    ``combine``: ``"max"`` (the Unity project's default); ``"sum"`` of the clamped scores;
    ``"center"``, the Unity project's "center between targets" exactly: the raw cosines
    of all targets summed (a target behind subtracts), then clamped at 0 (the Unity
    merger's max with 0); a target on the agent empties the map there, as the NaN it makes
    in the Unity project does. For the Unity chase use ``falloff="none"`` (its interest
    does not fade with distance).

    Parameters
    ----------
    weight : float, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    targets : array_like, shape (M, 2) or (2,), optional
        Shared target points, stored as a float32 array that may be updated in place
        between steps (moving targets): edit ``seek.targets`` itself, or pass a float32
        C-contiguous array, which is used as it is (any other, a float64 one say, is
        copied once, so later edits of it are not seen); default: each agent's own
        ``agents.target``.
    max_distance : float, default inf
    combine : {"max", "sum", "center"}
    falloff : {"linear", "none"}
    shape : {"clamped_cosine", "half_cosine", "chord"}
        Score of a slot at angle θ from the target: ``max(0, cos θ)`` (the sources), or
        ``(1 + cos θ)/2``, positive in every slot but straight away, for velocity-space
        danger (:class:`CollisionDanger`), which may find the only safe way backwards;
        or ``1 - sin(θ/2)``, with the same ends, which charges a turn by the length of
        the change of a unit velocity, half the chord ``2 sin(θ/2)`` that ORCA's
        objective weighs: a 7.5° turn costs 6.5 % of the peak where the half cosine
        charges 0.4 %, so that a small slowdown can win over a small turn (docs/crowd.md,
        "An interest that charges for small turns").

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> agents = cs.Agents(1); _ = agents.add([0, 0])
    >>> chase = cs.Chase([[2, 0], [0, 5]], max_distance=10)   # the nearer target wins
    >>> print(np.round(chase.evaluate(agents, 4).interest[0], 2))
    [0.8 0.5 0.  0. ]
    """

    targets: Any = None
    max_distance: float = math.inf
    combine: str = "max"
    falloff: str = "linear"
    shape: str = "clamped_cosine"
    kind: ClassVar[str] = "targets"
    _away: ClassVar[bool] = False
    _output: ClassVar[str] = "interest"

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        self._set("targets", _points(name, "targets", self.targets))
        self._set(
            "max_distance",
            _number(
                name, "max_distance", self.max_distance, strict=True, allow_inf=True, length=True
            ),
        )
        _choice(name, "combine", self.combine, _COMBINE)
        _choice(name, "falloff", self.falloff, _FALLOFF)
        _choice(name, "shape", self.shape, _TARGET_SHAPES)

    @property
    def writes(self) -> str:  # type: ignore[override]
        """Which map the behaviour writes: ``"interest"`` (``Seek``, ``Arrive``, ``Chase``,
        and ``Flee``, whose interest points away from the target) or ``"danger"``
        (``Avoid``)."""
        return self._output

    def _params(self) -> dict:
        return {
            "positions": self.targets,
            "target_ids": None,
            "max_distance": self.max_distance,
            "max_prediction": 0.0,
            "away": self._away,
            "combine": self.combine,
            "falloff": self.falloff,
            "output": self._output,
            "shape": self.shape,
        }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Chase(Seek):
    """The Unity project's name for :class:`Seek` (identical behaviour).

    Parameters
    ----------
    weight, agent_weights, targets, max_distance, combine, falloff, shape
        As :class:`Seek`.
    """


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Flee(Seek):
    """Interest away from targets: Lewis's "flip the sign" (``max(0, -slot·û)``).

    Parameters
    ----------
    weight, agent_weights, targets, max_distance, combine, falloff, shape
        As :class:`Seek`; each target's score is taken pointing away from it.
    """

    _away: ClassVar[bool] = True


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Avoid(Seek):
    """Danger towards targets (Unity "avoid"): ``max(0, slot·û)`` in the danger map.

    Parameters
    ----------
    weight, agent_weights, targets, max_distance, combine, falloff, shape
        As :class:`Seek`; the scores go to the danger map.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> agents = cs.Agents(1); _ = agents.add([0, 0])
    >>> maps = cs.Avoid([[0, 3]], max_distance=6).evaluate(agents, 4)
    >>> print(np.round(maps.danger[0], 3), maps.interest[0])
    [0.  0.5 0.  0. ] [0. 0. 0. 0.]
    """

    _output: ClassVar[str] = "danger"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Pursue(Behaviour):
    """Interest towards where other agents will be (gdx-ai Pursue).

    Each target agent j is aimed at ``p_j + v_j·T`` with
    ``T = min(max_prediction, distance / max_speed)`` of the pursuer.

    Parameters
    ----------
    targets : array_like of int
        Agent ids in the same :class:`Agents` (dead ones and the agent itself are skipped).
        Ids are slots: a slot reused by a new agent (:attr:`Agents.generation` tells them
        apart) is pursued in its turn: when the game kills a target, change its entry
        or give the steering a new behaviour. The ids are stored as an int32 array that is
        read in place at every step: edit ``pursue.targets`` itself, or pass an int32
        C-contiguous array and edit that (any other, NumPy's default int64 or a list, is
        copied once, so later edits of it are not seen).
    max_prediction : float, default 1
        Seconds; 0 seeks the current positions.
    max_distance, combine, falloff
        As in :class:`Seek`.
    weight, agent_weights
        As in :class:`Behaviour`.

    Notes
    -----
    :class:`Evade` takes one more, ``output``; ``Pursue`` always writes interest.
    """

    targets: Any = ()
    max_prediction: float = 1.0
    max_distance: float = math.inf
    combine: str = "max"
    falloff: str = "linear"
    kind: ClassVar[str] = "targets"
    _away: ClassVar[bool] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        ids = _checks.integer_array(f"{name}: targets", self.targets)
        if ids.size and not _checks.is_integer(ids):
            raise TypeError(f"{name}: targets must be agent ids (integers), got dtype {ids.dtype}")
        ids = ids.reshape(-1)
        if ((ids < 0) | (ids > 2**31 - 1)).any():
            raise ValueError(
                f"{name}: targets must be agent ids >= 0 and <= 2**31 - 1, got {ids.tolist()}"
            )
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        self._set("targets", ids)
        self._set("max_prediction", _number(name, "max_prediction", self.max_prediction))
        self._set(
            "max_distance",
            _number(
                name, "max_distance", self.max_distance, strict=True, allow_inf=True, length=True
            ),
        )
        _choice(name, "combine", self.combine, _COMBINE)
        _choice(name, "falloff", self.falloff, _FALLOFF)

    def _output_map(self) -> str:
        return "interest"

    @property
    def writes(self) -> str:  # type: ignore[override]
        """Which map the behaviour writes: ``"interest"``, or ``Evade``'s ``output``."""
        return self._output_map()

    def _params(self) -> dict:
        return {
            "positions": None,
            "target_ids": self.targets,
            "max_distance": self.max_distance,
            "max_prediction": self.max_prediction,
            "away": self._away,
            "combine": self.combine,
            "falloff": self.falloff,
            "output": self._output_map(),
        }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Evade(Pursue):
    """Away from where other agents will be (gdx-ai Evade); see :class:`Pursue`.

    Parameters
    ----------
    targets, max_prediction, max_distance, combine, falloff, weight, agent_weights
        As in :class:`Pursue`.
    output : {"interest", "danger"}, default "interest"
        ``"interest"`` writes interest away from the predicted positions (Lewis's flee);
        ``"danger"`` writes danger towards them (the Unity project's avoid).
    """

    output: str = "interest"
    _away: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _choice("Evade", "output", self.output, ("interest", "danger"))

    def _output_map(self) -> str:
        return self.output

    def _params(self) -> dict:
        p = super()._params()
        # Danger marks the threat itself, so it points towards it, not away.
        p["away"] = self.output == "interest"
        return p


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Arrive(Behaviour):
    """Interest towards a target, fading to zero on arrival (Lewis speed control).

    Slot values are ``max(0, slot·û)·min(1, d/slowing_radius)`` and zero within
    ``tolerance``, so the chosen strength — hence the speed — falls near the target.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    slowing_radius : float, > 0
    tolerance : float, >= 0
    target : array_like, shape (2,), optional
        Shared target; default: each agent's ``agents.target``.
    shape : {"clamped_cosine", "half_cosine", "chord"}
        As :class:`Seek`: ``half_cosine`` scores ``(1 + slot·û)/2`` instead, for
        velocity-space danger (:class:`CollisionDanger`), where the interest peak sets
        the speed the agent wants and the speed map the speed it may take; ``chord``
        scores ``1 - sin(θ/2)``.
    """

    slowing_radius: float = 1.0
    tolerance: float = 0.0
    target: Any = None
    shape: str = "clamped_cosine"
    kind: ClassVar[str] = "arrive"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._set(
            "slowing_radius",
            _number("Arrive", "slowing_radius", self.slowing_radius, strict=True, length=True),
        )
        self._set("tolerance", _number("Arrive", "tolerance", self.tolerance, length=True))
        self._set("target", _point("Arrive", "target", self.target))
        _choice("Arrive", "shape", self.shape, _TARGET_SHAPES)

    def _params(self) -> dict:
        return {
            "slowing_radius": self.slowing_radius,
            "tolerance": self.tolerance,
            "target": self.target,
            "shape": self.shape,
        }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Wander(Behaviour):
    """Interest towards a point on a circle ahead that drifts with coherent noise.

    The gdx-ai wander circle: centre ``offset`` ahead along the heading, ``radius``, and the
    target at angle ``π·noise(t·rate)`` from the heading; the noise is smooth in time and
    keyed by the agent's ``rng`` state and ``seed``, so runs are reproducible and agents
    wander independently. Stateless: the same (agent, time) always gives the same map.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    offset : float, 0 to 1e8, default 1
        Distance of the circle's centre ahead of the agent (m).
    radius : float, 0 to 1e8, default 0.5
        Radius of the wander circle (m).
    rate : float, >= 0, default 1
        How fast the noise drifts (noise time per second of simulation time).
    seed : int, 0 to 2**64 - 1, default 0
        Mixed with each agent's ``rng`` state: another seed, another wander.
    """

    offset: float = 1.0
    radius: float = 0.5
    rate: float = 1.0
    seed: int = 0
    kind: ClassVar[str] = "wander"

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("offset", "radius", "rate"):
            v = _number("Wander", name, getattr(self, name), length=name != "rate")
            self._set(name, v)
        self._set("seed", _checks.integer("Wander: seed", self.seed, 0, 2**64 - 1))

    def _params(self) -> dict:
        return {
            "offset": self.offset,
            "radius": self.radius,
            "rate": self.rate,
            "seed": int(self.seed),
        }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Tether(Behaviour):
    """Interest back towards ``center`` when farther than ``radius`` from it.

    Strength ``min(1, (d - radius)/softness)`` (1 when ``softness == 0``). ``center=None``
    tethers each agent to its own ``agents.target``.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    center : (x, y), optional
        The shared centre, within ±1e8; default each agent's ``agents.target``.
    radius : float, 0 to 1e8, default 0
        Free radius (m): no interest within it.
    softness : float, >= 0, default 0
        Distance (m) beyond ``radius`` over which the pull grows to full strength.
    """

    center: Any = None
    radius: float = 0.0
    softness: float = 0.0
    kind: ClassVar[str] = "tether"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._set("center", _point("Tether", "center", self.center))
        self._set("radius", _number("Tether", "radius", self.radius, length=True))
        self._set("softness", _number("Tether", "softness", self.softness))

    def _params(self) -> dict:
        return {"center": self.center, "radius": self.radius, "softness": self.softness}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Bounds(Behaviour):
    """Interest back into the rectangle ``[lo + margin, hi - margin]`` when outside it.

    Points towards the closest point of that rectangle, with strength
    ``min(1, distance/margin)`` (1 when ``margin == 0``).

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    lo, hi : (x, y), default (0, 0) and (1, 1)
        Corners of the rectangle, ``lo <= hi``, within ±1e8.
    margin : float, 0 to 1e8, default 0
        Inset of the rectangle, and the distance over which the pull grows to full.
    """

    lo: Any = (0.0, 0.0)
    hi: Any = (1.0, 1.0)
    margin: float = 0.0
    kind: ClassVar[str] = "bounds"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._set("lo", _point("Bounds", "lo", self.lo))
        self._set("hi", _point("Bounds", "hi", self.hi))
        if (self.lo > self.hi).any():
            raise ValueError(
                f"Bounds: expected lo <= hi, got lo={self.lo.tolist()} hi={self.hi.tolist()}"
            )
        self._set("margin", _number("Bounds", "margin", self.margin, length=True))
        inset = self.hi.astype(np.float64) - self.lo - 2.0 * self.margin
        if (inset < 0).any():  # an inverted rectangle pulled agents any way
            raise ValueError(
                f"Bounds: margin {self.margin} leaves no rectangle inside lo={self.lo.tolist()} "
                f"hi={self.hi.tolist()} (expected 2 * margin <= hi - lo on both axes)"
            )

    def _params(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "margin": self.margin}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class AgentDanger(Behaviour):
    """Danger towards neighbouring agents closer than ``radius`` (surface gap).

    For each neighbour j: ``max(0, slot·û_j)·(1 - gap/radius)`` (``falloff="linear"``) or
    without the distance factor (``"none"``), ``gap = d - r_i - r_j`` clamped at 0; merged
    by max. With ``predictive=True`` also towards the relative position at the time of
    closest approach ``t* ∈ [0, horizon]`` (constant velocities), further scaled by
    ``1 - t*/horizon``. ``groups`` restricts the neighbours to the agent's own group
    (``"same"``) or to the others (``"other"``, e.g. rival teams).

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    radius : float, > 0 and at most 1e8, default 1
        Reach of the danger (surface gap, m).
    predictive : bool, default False
        Also towards the relative position at closest approach.
    horizon : float, > 0, default 1
        Prediction horizon (s).
    falloff : {"linear", "none"}, default "linear"
        Fading with the gap.
    groups : {"all", "same", "other"}, default "all"
        Which neighbours count.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> agents = cs.Agents(2); _ = agents.add([[0, 0], [2, 0]], radius=0.5)
    >>> danger = cs.AgentDanger(radius=2).evaluate(agents, 4).danger
    >>> print(np.round(danger, 3))   # gap 1 of 2: half danger, towards each other
    [[0.5 0.  0.  0. ]
     [0.  0.  0.5 0. ]]
    """

    radius: float = _default("agent_danger", "radius")
    predictive: bool = _default("agent_danger", "predictive")
    horizon: float = _default("agent_danger", "horizon")
    falloff: str = _default("agent_danger", "falloff")
    groups: str = _default("agent_danger", "groups")
    kind: ClassVar[str] = "agent_danger"
    writes: ClassVar[str] = "danger"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class _Flocking(Behaviour):
    radius: float = 1.0
    clamp: bool = True
    groups: str = "same"

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        self._set("radius", _number(name, "radius", self.radius, strict=True, length=True))
        self._set("clamp", _checks.flag(f"{name}: clamp", self.clamp))
        _choice(name, "groups", self.groups, _GROUPS)

    @property
    def needs_neighbours(self) -> bool:
        return True

    def _params(self) -> dict:
        return {"radius": self.radius, "clamp": self.clamp, "groups": self.groups}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Separation(_Flocking):
    """Lewis flocking: interest ``slot·w`` with the dispersion vector
    ``w = Σ (p_i - p_j)/d·(1 - d/radius)`` over neighbours within ``radius`` (length ≤ 1).
    ``clamp=False`` keeps the negative scores. Flocking behaviours consider only the
    agent's own group by default (``groups="same"``; also ``"all"``, ``"other"``).

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    radius : float, > 0 and at most 1e8, default 1
        Neighbourhood radius (m, centre to centre).
    clamp : bool, default True
        Clamp negative slot scores to 0 (``False`` keeps them, Lewis's signed maps).
    groups : {"same", "all", "other"}, default "same"
        Which neighbours count.
    """

    kind: ClassVar[str] = "separation"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Alignment(_Flocking):
    """Lewis flocking: interest ``slot·w`` with ``w = mean(v_j)/max_speed`` (length ≤ 1).

    Parameters
    ----------
    weight, agent_weights, radius, clamp, groups
        As :class:`Separation`.
    """

    kind: ClassVar[str] = "alignment"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Cohesion(_Flocking):
    """Lewis flocking: interest ``slot·w`` with ``w = (mean(p_j) - p_i)/radius``.

    Parameters
    ----------
    weight, agent_weights, radius, clamp, groups
        As :class:`Separation`.
    """

    kind: ClassVar[str] = "cohesion"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class FollowPath(Behaviour):
    """Interest along a path (the Godot recipe's track direction).

    Each agent asks ``path`` for a unit vector û at its position — ``mode="tangent"``:
    the path's tangent at (closest offset + ``look_ahead``), the recipe's
    ``get_path_direction``; ``mode="seek"``: the unit vector to the path point at that
    offset ("seek the carrot", which also pulls drifting agents back) — and scores slot k
    by ``weight·max(0, slot_k·û)``. The closest offset is the nearest point's, with no
    memory of the agent's last one: where a path crosses itself (a figure-eight), an agent
    near the crossing may follow the other branch and circle one lobe, in either mode.
    Split such a path in two, or give each agent its own route.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    path : Path or sequence of Path
        One path for every agent, or one per agent (per-agent routes, see
        :func:`~contextsteer.route`): agent i follows ``path[index[i]]``, or ``path[i]``
        without ``index``; ``None`` entries and indices out of range write zeros.
    look_ahead : float, default 0
        Arc length ahead of the closest point (negative looks back).
    mode : {"tangent", "seek"}
    index : array_like of int, shape (capacity,), optional
        The path of each agent slot when ``path`` is a sequence.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> track = cs.Path([[0, 0], [10, 0]])
    >>> agents = cs.Agents(1); _ = agents.add([2, 1])
    >>> print(np.round(cs.FollowPath(track).evaluate(agents, 4).interest[0], 3))
    [1. 0. 0. 0.]
    >>> seek = cs.FollowPath(track, look_ahead=1, mode="seek")   # towards (3, 0)
    >>> print(np.round(seek.evaluate(agents, 4).interest[0], 3))
    [0.707 0.    0.    0.707]
    """

    path: Any = None
    look_ahead: float = 0.0
    mode: str = "tangent"
    index: Any = None
    kind: ClassVar[str] = "follow_path"

    def __post_init__(self) -> None:
        super().__post_init__()
        core = getattr(self.path, "_path", self.path)
        if isinstance(self.path, (list, tuple)):
            cores = [None if p is None else getattr(p, "_path", p) for p in self.path]
            if not all(c is None or isinstance(c, _core.Path) for c in cores):
                raise TypeError(
                    "FollowPath: path must be a contextsteer.Path or a sequence of them"
                )
            self._set("path", tuple(self.path))
            self._set("_pathset", _core.PathSet(cores))  # rebuilt by __setstate__
        elif not isinstance(core, _core.Path):
            raise TypeError(
                f"FollowPath: path must be a contextsteer.Path, got {type(self.path).__name__}"
            )
        if self.index is not None:
            if not isinstance(self.path, tuple):
                raise ValueError("FollowPath: index needs a sequence of paths")
            self._set("index", _indices("FollowPath", "index", self.index))
        v = _number("FollowPath", "look_ahead", self.look_ahead, low=-math.inf, length=True)
        self._set("look_ahead", v)
        _choice("FollowPath", "mode", self.mode, ("tangent", "seek"))

    def __getstate__(self) -> dict[str, Any]:
        """Pickle (and ``copy.deepcopy``) state: the fields, without the C++ path set of
        per-agent routes, which cannot be pickled and :meth:`__setstate__` rebuilds."""
        state = dict(self.__dict__)
        state.pop("_pathset", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if isinstance(self.path, tuple):
            cores = [None if p is None else getattr(p, "_path", p) for p in self.path]
            self._set("_pathset", _core.PathSet(cores))

    def _params(self) -> dict:
        path = (
            self.__dict__["_pathset"]
            if isinstance(self.path, tuple)
            else getattr(self.path, "_path", self.path)
        )
        return {"path": path, "look_ahead": self.look_ahead, "mode": self.mode, "index": self.index}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class FollowField(Behaviour):
    """Interest along a navigation field's descent: global guidance round walls.

    Each agent reads the unit descent û of its field at its position (one bilinear
    lookup in C++) and scores slot k by ``weight·s·max(0, slot_k·û)`` — or the half
    cosine ``(1 + slot_k·û)/2`` with ``shape="half_cosine"`` (or ``1 - sin(θ/2)`` with
    ``"chord"``, as :class:`Seek`), to pair with :class:`CollisionDanger` like
    ``Arrive(shape="half_cosine")``. With ``look_ahead``
    > 0 the agent aims instead at the farthest point of the descent trail within
    ``look_ahead`` that it can see (string pulling): it cuts corners like people do
    and does not hug walls. ``s = min(1, distance/slowing_radius)`` when
    ``slowing_radius`` > 0; no interest within ``tolerance`` of the goal.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    field : NavField
        Built over its own world, which may differ from the simulation's (a coarser
        navigation world, say): the field leads round its world's walls only, so a wall
        of the simulation's world missing from it is left to the local steering.
    which : None, int, "group" or array_like of int, shape (capacity,)
        The field of each agent: field 0 (None), one field (int), the agent's group id
        ("group"), or one index per agent slot. Agents whose index is not a field get
        no interest.
    look_ahead : float, default 0
    slowing_radius : float, default 0
    tolerance : float, default 0
    shape : {"clamped_cosine", "half_cosine", "chord"}
    reachable : bool, default False
        For a goal no body can reach (inside an obstacle or closer to a wall than the
        field's radius), count the slowing and the tolerance from the field's least
        distance (where its bodies end) rather than from the goal: the agent slows to a
        stop there. A field whose goal is reachable is read as without it (its least
        distance is within a cell of 0). ``crowd_steering`` sets it with
        ``reachable_target`` (in ``CROWD``): round a pillar holding the goal, the descent
        walked agents round the pillar for good.

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> world = cs.World(); _ = world.add_segments([[0, -3, 0, 3]])
    >>> field = cs.NavField(world, [3.0, 0.0], cell=0.1, radius=0.3)
    >>> agents = cs.Agents(1); _ = agents.add([-1, 0])          # the goal is behind the wall
    >>> interest = cs.FollowField(field).evaluate(agents, 4).interest[0]
    >>> int(np.argmax(interest)) in (1, 3)                      # north or south, round it
    True
    """

    field: Any = None
    which: Any = None
    look_ahead: float = 0.0
    slowing_radius: float = 0.0
    tolerance: float = 0.0
    shape: str = "clamped_cosine"
    reachable: bool = False
    kind: ClassVar[str] = "follow_field"

    def __post_init__(self) -> None:
        super().__post_init__()
        from .nav import NavField

        if not isinstance(self.field, NavField):
            raise TypeError(
                f"FollowField: field must be a contextsteer.NavField, got {type(self.field).__name__}"
            )
        w = self.which
        if isinstance(w, str):
            if w != "group":
                raise ValueError(
                    f"FollowField: which must be None, an int, 'group' or an index array, got {w!r}"
                )
        elif isinstance(w, bool):
            raise TypeError(
                "FollowField: which must be None, an int, 'group' or an index array, got a bool"
            )
        elif _checks.is_int(w):
            if not 0 <= int(w) < 2**31:
                raise ValueError(f"FollowField: which must be a field index in [0, 2**31), got {w}")
        elif w is not None:
            self._set("which", _indices("FollowField", "which", w))
        for name in ("look_ahead", "slowing_radius", "tolerance"):
            self._set(name, _number("FollowField", name, getattr(self, name), length=True))
        _choice("FollowField", "shape", self.shape, _TARGET_SHAPES)
        self._set("reachable", _checks.flag("FollowField: reachable", self.reachable))

    def _params(self) -> dict:
        self.field._sync()
        w = self.which
        by = (
            "shared"
            if w is None or _checks.is_int(w)
            else "group"
            if isinstance(w, str)
            else "index"
        )
        return {
            "field": self.field._core,
            "by": by,
            "shared": int(w) if _checks.is_int(w) else 0,
            "index": w if by == "index" else None,
            "look_ahead": self.look_ahead,
            "slowing_radius": self.slowing_radius,
            "tolerance": self.tolerance,
            "shape": self.shape,
            "reachable": self.reachable,
        }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class WallDanger(Behaviour):
    """Danger in the slots whose rays hit a wall within ``look_ahead`` (Godot recipe).

    Every agent casts its K slot rays against the world as circles of its own radius plus
    ``padding`` (so a slot is dangerous when the agent's body would touch a wall going that
    way). A hit at distance h scores ``1`` (``falloff="binary"``, the recipe),
    ``1 - h/look_ahead`` (``"linear"``) or its square (``"quadratic"``) — the recipe's
    "levels of danger". ``spread`` > 0 also marks the ``spread`` slots either side of a
    hit, scaled by ``1 - m/(spread+1)`` at m slots away (unscaled for binary), so sparse
    slots do not slip past thin walls. An agent already touching a wall (within its ray
    radius of it) keeps danger at distance 0 only in the slots heading further into it; the
    slots leaving it or sliding along it are cast again at the agent's own radius, without
    the padding, when that is smaller and clear of every wall, and read the first wall
    ahead (none when the body itself touches a wall). The walls come from the world
    (``Simulation`` passes its own; the functional :meth:`evaluate` needs ``world=`` unless
    ``agents=True``).

    The recipe's own rays are thin and also see the other cars: ``ray_radius=0`` casts
    thin rays (any ``ray_radius`` >= 0 replaces the agent's radius + ``padding``), and
    ``agents=True`` makes the rays hit the other agents too, as discs of their radius
    (batched through the simulation's neighbour lists, so only the ``max_neighbours``
    nearest within ``look_ahead`` + ray radius + the largest radius count; an agent
    overlapping another keeps danger only in the slots heading towards it).

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    look_ahead : float, > 0
    falloff : {"binary", "linear", "quadratic"}
    spread : int, >= 0
    padding : float, >= 0
        Extra clearance added to each agent's radius.
    layers : int
        Obstacle layers the rays see (default all).
    ray_radius : float >= 0, optional
        Radius of the rays; default (None) the agent's radius + ``padding``.
    agents : bool, default False
        The rays also hit other agents (the Godot recipe's ``intersect_ray``).

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> world = cs.World(); _ = world.add_segments([[3, -5, 3, 5]])   # a wall ahead
    >>> agents = cs.Agents(1); _ = agents.add([0, 0], radius=0.5)
    >>> walls = cs.WallDanger(look_ahead=5, falloff="linear")
    >>> print(np.round(walls.evaluate(agents, 4, world=world).danger[0], 2))
    [0.5 0.  0.  0. ]
    """

    look_ahead: float = _default("wall_danger", "look_ahead")
    falloff: str = _default("wall_danger", "falloff")
    spread: int = _default("wall_danger", "spread")
    padding: float = _default("wall_danger", "padding")
    layers: int = _default("wall_danger", "layers")
    ray_radius: float | None = _default("wall_danger", "ray_radius")
    agents: bool = _default("wall_danger", "agents")
    kind: ClassVar[str] = "wall_danger"
    writes: ClassVar[str] = "danger"

    def _check_world(self, world: World | None) -> None:
        if world is None and not self.agents:
            raise ValueError(
                "WallDanger.evaluate: world is needed (pass world=...); without one and "
                "with agents=False its rays see nothing"
            )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class CollisionDanger(Behaviour):
    """Danger in velocity space: a velocity obstacle sampled on the slot ring.

    Context steering's classic agent danger paints lobes towards where neighbours are;
    this behaviour asks instead, for every slot and candidate speed, *how soon would I hit
    something if I went that way that fast?* — so speed becomes part of the decision and
    a crowd stays apart the way ORCA keeps it apart.

    Candidates: each slot direction ``d_k`` at speeds ``s_m = max_speed·m/speeds`` for
    ``m = 0..speeds`` (``m = 0`` is standing still), and with ``fine_speeds`` F more
    speeds evenly between the fastest two. Against neighbour j
    (``p = x_j - x_i``, ``R = r_i + r_j + margin``) the time to collision of candidate
    ``v`` is the first ``t >= 0`` with ``|p - w t| = R`` for the effective relative
    velocity ``w = (v - α v_i)/(1 - α) - v_j`` (``α = reciprocity``: 0 assumes the
    neighbour keeps its velocity; 0.5 that both take half the avoidance, as in RVO).
    Pairs already touching collide "now" (TTC 0) for the candidates that deepen the
    overlap (``p·w > 0``) and never for those that separate. With ``walls``, the slot ray
    cast as a disc of radius ``r_i + margin`` up to ``max_speed·wall_horizon`` hits at
    ``h_k`` and the candidate's wall TTC is ``h_k / s_m``: agents and walls on one time
    scale. Walls may have a shorter horizon than agents (as RVO2's ``timeHorizonObst``):
    a wall TTC then counts as ``(h_k / s_m)·horizon/wall_horizon``.

    Per slot the behaviour keeps the fastest *safe* candidate (TTC >= ``horizon``):
    danger 0, speed ``s_m/max_speed``. A slot without one keeps the candidate with the largest
    TTC (ties: the slowest) and scores danger ``1 - TTC/horizon`` (1 at TTC 0, 0 at the
    horizon). It writes that danger (times the weights) and the **speed map** (not
    weighted), read as :attr:`Simulation.speed`.

    In a :class:`Simulation`, a speed map turns the decision into a velocity choice:

    - resolved values are multiplied by the slot's speed, capped by the speed the agent
      wants (the interest peak): the rate of progress a candidate offers — a slot
      faster than the agent wants to go offers no more than one just fast enough;
    - by ``exp(-smoothness·(|v| - d_k·v))`` with ``v`` the current velocity in max-speed
      units: turning away from the way the agent is going costs a little, going on or
      starting from rest costs nothing (fewer flip-flops between equal candidates);
    - when the interest peak is not free at full speed, by ``1 + side_bias·max(0, sin θ)``
      for slots on the preferred ``side`` of the peak (θ the angle from it, clockwise for
      ``"right"``): head-on pairs pass on the same side, and a free path is never bent;
    - the chosen strength is the chosen slot's speed (capped by the slot nearest the
      heading when choose interpolates, and by the interest peak: the speed the agent
      wants, which :class:`Arrive` lowers near its goal);
    - when the chosen slot is the interest peak and it and both neighbours are free at
      full speed, the heading is refined to the peak between the slots (a parabola
      through the three interest values), so a goal between two slots is approached in
      a straight line, not by zig-zagging between them;
    - commitment (``commit``): the previous decision, its speed capped by the interest
      peak, is kept when it still offers at least the new decision's rate of progress
      (interest towards its heading times its speed) and its time to collision is at
      least ``(1 - commit)·horizon``. A course is then not dropped for a threat that
      grazes the horizon for a step — the flicker of a sampled velocity obstacle — while a
      better new decision (a way reopening, the goal moving) still wins at once.

    With ``resolve="mask_min_danger"`` (epsilon 0) only the safest
    slots survive, which gives the defining property of velocity-obstacle methods: when
    any candidate is collision-free within the horizon, the chosen one is; when none is,
    the agent takes the one that keeps collision farthest away, slowing or stopping
    rather than pushing in (with ``commit > 0``: the chosen one's time to collision is at
    least ``(1 - commit)·horizon``). Pair it with interest that is positive all round
    (``Seek(shape="half_cosine")``) so that a safe way backwards still ranks.

    Parameters
    ----------
    weight : float, >= 0, default 1
    agent_weights : array_like of shape (capacity,), optional
        Each agent's own factor on top of ``weight`` (see :class:`Behaviour`).
    horizon : float, > 0
        Seconds; collisions later than this do not count.
    speeds : int, 1..64
        Candidate speeds per slot besides standing still.
    fine_speeds : int, 0..16
        Extra candidate speeds evenly between the fastest two levels. With ``speeds=4``
        and ``fine_speeds=2`` the candidates are 0, 1/4, 1/2, 3/4, 5/6, 11/12 and 1 of
        max speed. Where its way is safe a little slower than full speed, an agent can
        then slow down a little instead of turning off it, as ORCA's crossing walkers
        do. With ``speeds >= 2`` the slow levels stay as they are, and with them
        everything that reads the slowest level (``unstick``, ``creep``,
        ``wall_speed_alone``). Each level costs a row of the time-to-collision table.
        Opt-in (:data:`~contextsteer.scenarios.CROWD` has none): with 1 the crowd
        benchmark's crossing turns 8 % less a step, with 4 13–16 % less, but with 4 the
        ``maze`` scenario's walkers touch a wall's end more often (docs/crowd.md, "Finer
        speeds near the top").
    margin : float, >= 0
        Extra clearance added to every pair of radii and to the wall rays. An agent
        already within it of a wall (the margin band) reads the slots going further into
        that wall at time to collision 0; the slots that leave it or slide along it read
        the walls at the body's own radius, without the margin, until the agent has left
        the band (none while the body itself touches a wall; docs/crowd.md, "A second
        blind spot").
    reciprocity : float in [0, 1)
    walls : bool
        Include the world's walls (``Simulation`` passes its own; the functional
        :meth:`evaluate` sees them only with ``world=``, and without one the agent is in
        open space).
    wall_horizon : float, > 0, optional
        Seconds; the walls' horizon (default: ``horizon``). A shorter one lets an agent
        walk slowly up to a wall, e.g. to squeeze past someone in a corridor.
    layers : int
        Obstacle layers the wall rays see (default all).
    side : {"right", "left", "none"}
        Preferred side for passing; breaks head-on symmetry deterministically.
    side_bias : float, >= 0
        Relative bonus of the preferred side's slots when the direct way is blocked.
    smoothness : float, >= 0
        Weight of the turning cost (0: none).
    commit : float in [0, 1)
        Commitment to the previous course (0: none): the fraction of the horizon a kept
        course's time to collision may fall short by. With ``cs.Accel`` motion (its
        ``time_to_target`` 0) and ``walls``, a previous course that falls short by more
        is still kept while it is safe for half the horizon if the way to the new
        velocity under the agent's ``max_accel`` (a constant-acceleration arc from its
        velocity) would bring the body within half the ``margin`` of a wall: the new
        velocity is safe once taken, but a sharp turn at speed is not taken at once.
    speed_exponent : float, > 0
        γ, 1 by default. The decision values a candidate at interest × speed^γ × the
        turning cost, speed as a fraction of max speed, and the commitment compares the
        kept and the new course by interest × speed^γ. At 1 that is the rate of progress
        towards the goal. Below 1, slowing down on course loses less against a side step
        at full speed: with the half-cosine interest, a 45° side step at full speed is
        worth 0.85, and half speed straight on 0.5 at γ 1 but 0.71 at γ 0.5. Measured on
        the crowd benchmark in docs/crowd.md ("The speed exponent"); ``CROWD`` uses 0.7
        (docs/crowd.md, "A search with the speed exponent").
    commit_danger : float in [0, 1)
        Off by default (0). When no course is safe (the new decision is the one with the
        largest time to collision t), keep the previous course while its time to
        collision is at least ``(1 - commit_danger)·t``: an agent in a jam does not swing
        between two nearly equally bad ways every step.
    return_margin : float, >= 0
        Off by default (0). A better new course replaces a different, still safe previous
        course that heads within 90° of the goal only when the new course is free for
        ``(1 + return_margin)·horizon``: no turn back to the goal for a gap that closes
        again before the turn is done. A wall that cuts the new course short of that
        only after it has passed within a body width (2 × radius) of the agent's
        ``target`` does not hold it back (a wall does not close in, and by a wall no
        course towards a goal near it is free for the longer horizon). A previous course
        no faster than a body standing (0.02 m/s) is no course to hold: the new one is
        taken (held at 0.004 m/s, a walker stood 3 m from its waypoint on open floor).
        Nor is a creep (a course at most half the slowest level's speed) held back from
        the same heading at a higher speed when only walls cut that short (no agent
        meets it within the longer horizon): a lone agent creeping towards a U-turn at
        4 m/s was held at 0.08 m/s for good.
    return_step : float, >= 0
        Off by default (0). Radians per 1/30 s: such a switch to a better course turns at
        most ``return_step·30·dt`` per decision covering ``dt`` seconds (a step, or
        ``decision_interval`` steps; with ``decision_validity`` a kept decision counts as
        one step), when the course part-way is safe at the new speed and heads at least
        as much towards the goal as the course it leaves (else the new course at once: a
        turn the long way round through courses leading away from the goal made agents
        running past a door loop and miss it again), so that a premature return is cut
        short. (Counted per decision instead, a 0.25 s step turned back 7.5
        times slower, and an agent could orbit its goal at full speed.) An agent that
        turns on a circle about as wide as its ``Arrive`` slowing radius can still circle
        its goal with ``return_step`` and ``inertia`` (at 2–3 m/s with a 0.5 m slowing
        radius and :data:`~contextsteer.scenarios.CROWD`'s values; ``crowd_steering``'s
        1 m radius at walking speeds stops).
    turn_steps : int in [0, 16]
        Off by default (0). Leaving an unsafe previous course, turn from it towards the
        new decision only as far as needed: the least fraction of the angle found by
        ``turn_steps`` bisection steps whose course, at the new speed, is free for
        ``(1 + turn_margin)·horizon``. Avoidance then need not be a whole slot gap.
    turn_margin : float, >= 0
        See ``turn_steps`` (default 0).
    wall_speed : bool
        Off by default. Besides the speed levels ``m/S``, a slot whose ray hits a wall at
        distance h also offers the wall-limited speed ``h / wall_horizon`` (its wall time
        to collision is then the horizon): taken, with danger 0, when it is below max
        speed, faster than the slot's fastest safe level and safe against every
        neighbour. The speed map is then no longer only multiples of ``1/S``. Without it
        the slowest moving candidate (``max_speed/S``) may come no nearer a wall than
        ``max_speed/S·wall_horizon`` (0.78 m at the crowd defaults' 2.4 s), so two agents
        meeting head-on in a corridor three body widths wide never pass; with it they
        do, as with RVO's continuous velocities. It costs the crowd benchmark's walled
        scenes some smoothness (see the README), so it is not the default.
    retreat_speed : float in [0, 1]
        Off by default (1). When no course is safe and the least bad one leads more than
        90° away from the goal (interest below half the peak), go that way no faster
        than this fraction of the max speed. Backing off at the oncomers' speed has the
        largest time to collision, so a group can push an agent back for metres; slowly,
        it gives way and lets them pass. A safe course is never capped, nor (with
        ``commit > 0``) one whose time to collision is at least ``(1 - commit)·horizon``:
        the commitment keeps such a course. Nor is one whose capped velocity would meet a
        collision sooner than the course itself (an oncomer closes in on an agent backing
        off slowly): the cap is tested, and the course keeps its speed then.
    inertia : float in [0, 1)
        Off by default (0). The command becomes ``v1 + inertia·(v0 - v1)``: the new
        decision ``v1`` pulled towards the last command ``v0`` (no faster than the agent
        wants to go now; from rest ``v0 = 0``, so a start ramps as ``1 - inertia^t``), when
        that velocity's time to collision is at least ``(1 - commit)·horizon`` (``v1``
        safe) or at least ``v1``'s (no course safe); otherwise ``v1``. The commands are then
        an exponential average of the decisions while that is safe: a decision that
        alternates between two candidates every step — two agents each reacting to the
        other's last dodge, the "reciprocal dance" of velocity obstacles — averages out
        instead of zig-zagging. On the crowd benchmark 0.6 cuts heading jitter by 15–40 %
        without a contact, but some bottleneck seeds strand more agents (see the README).
        Given per 1/30 s of decisions: a decision covering ``dt`` seconds (a step, or
        ``decision_interval`` steps) pulls by ``inertia**(30·dt)``, the same time constant
        at any ``dt``. (With ``decision_validity`` a kept decision counts as one step.)
    creep : bool
        Off by default. Continuous speeds below the first unsafe level: a slot where
        standing is safe and whose levels are safe up to ``m`` but not ``m + 1`` also
        offers the fastest speed that is safe all the way from standing (the boundary
        between the two levels, within ``max_speed/S·2^-14``, found by bisection on the
        exact test against every neighbour and the wall), taken with danger 0 when it is
        faster than the slot's fastest safe level (0 when none is safe). This is how
        ORCA's continuous velocities let a packed crowd edge into gaps a few centimetres
        wide (``gap/horizon`` m/s); with the levels alone the slowest moving candidate
        needs ``max_speed/S·horizon`` of free way, so in a crowd pressing on an exit
        every agent's only safe candidate is standing still and the jam never clears
        (RiMEA test 9, 1000 agents, two exits: 30 out in two minutes without it, 258 with
        it). It includes the wall limit, so where the way is safe from standing it
        subsumes ``wall_speed``. Not the default: on the crowd benchmark's scenes it adds
        a little heading jitter and strands a few more agents (hallway, seeds 0–15:
        1.71 against 1.63°/step, worst seed 90 % home against 95 %; docs/crowd.md). The
        ``evacuation`` scenario uses it.
    unstick : bool
        Off by default (on in ``CROWD``). ``creep``'s candidates, but only for an agent
        that would otherwise stand: standing is safe and no slot has a safe moving level.
        In a dead end's packed queue facing the wall, the way out can lie between two
        slots that each graze a wall within the horizon at the slowest level, and the
        queue stood for good; a slower candidate along those slots is safe. Also for an
        agent alone (no neighbour in sight could meet it within the horizon, as for
        ``wall_speed_alone``), walls near, moving at most half the slowest level's speed
        and more than a radius from its target, when no slot within 90° of its way
        can move: its slots that cannot move then offer creep's candidates. Its way is
        the route's direction where the agent follows a :class:`FollowField` (of the
        simulation's FollowFields, the one with the largest ``weight·agent_weights``
        above 0 for it; its field's direction at the agent's position), else the
        straight line to its target. A lone agent at a 90° bend leaving it 0.1–0.2 m of room must come within
        centimetres of the wall ahead; the levels keep it ``max_speed/S·horizon`` away,
        and it took the only courses left, back along the corridor, and paced before the
        bend for good (14 of 72 bends at 1.3 m/s, 59 of 72 at 3 m/s without the rule;
        with it 0 and 1). At a 180° turn round a wall's end the straight line points
        back along the corridor just walked, where a course can move; with the route's
        direction none of 72 such turns is missed at 1.3–4 m/s (17 and 59 at 1.3 and
        3 m/s with the straight line; docs/crowd.md, "Bends"). Ignored with ``creep``.
    squeeze : float in [0, 1]
        Off by default (1). The share of ``margin`` kept by an agent that would still
        stand after ``creep`` and ``unstick``: standing is safe and no slot has a safe
        moving candidate. Such an agent tries creep's candidates from standing once more
        with the margin cut to ``squeeze * margin``, against its neighbours and against
        the walls (their rays cast again at that margin), and each slot where that gives
        a speed above 0 offers it with danger 0; when no slot gets one there either, the
        same at margin 0, a last resort (the bodies and walls are still not entered
        within the horizon). Two bodies side by side in a narrow
        exit's mouth, each within its margin of a door post and of the other, have no
        safe course at the full margin, and the crowd behind them keeps them there: a
        permanent arch (RiMEA test 9 with 1000 agents and 1 m exits left the room
        unemptied on 3 of 14 seeds; with ``squeeze=0.8`` every room empties, see
        docs/crowd.md). Needs a ``margin`` above 0.
    past_target : bool
        Off by default. A wall that a slot's ray meets only after passing within the
        agent's radius of its ``Agents.target`` does not count for that slot, at any speed
        level, nor for the courses the decision's refinements test: with g = target −
        position and d the slot's direction, ``|d × g| <= radius`` and ``radius <= g·d <=
        h + margin`` (the closest approach at least a radius ahead, before the bare body
        would touch the wall, which the padded body meets after h; ``h`` itself for a slot
        read at the bare body's radius within the margin band, see ``margin``). The agent
        stops at its target (with ``Arrive``), so the wall beyond does not limit how fast it
        may head there. For a slot along which the target lies less than a radius ahead
        (``g·d < radius``, so every slot within a radius of the target) only a ray heading
        at it (``0 < g·d``, ``|d × g| <= g·d / 4``, within 14°) whose closest approach
        comes no later than ``h + margin`` reads no wall: every ray passes that near the
        target there, and an agent standing on its goal reads every wall (a vehicle pushing it would pin it
        against one). With a kinematic agent coming, an agent whose only safe course is
        faster than it wants stands when that course is unsafe with the walls past its
        target counted, so that the simulation steps it aside.
        Without it every course towards a goal near a wall is slowed from some
        ``max_speed·wall_horizon`` out (3.1 m at the crowd defaults' 2.4 s): a lone agent
        walking 6 m to a goal 15 cm from a wall came within 0.5 m of it after 7.2 s
        instead of open space's 4.5 s (4.5 s with it; ``benchmarks/goal_by_wall.py``;
        6.0 s at the 2.05 s horizon of before), and in a
        crowd an agent paced under such a goal for good, a course along the wall being
        worth more than the slow one towards it. Meant for agents that stop at their
        target (``Arrive``): one that runs on past it (a waypoint it does not slow for, a
        field whose goal is not ``Agents.target``, which defaults to the start) would meet
        the wall at speed; ``crowd_steering`` leaves it off with a ``field`` or
        ``arrive=False``. :data:`~contextsteer.scenarios.CROWD` turns it on. In a
        simulation a command too fast to stop short of what it leaves out (the wall, or a
        body standing, below) is slowed to the fastest that can: held for the decision's
        time t and then braked as the motion model brakes (``Accel`` and ``Vehicle`` at
        ``max_accel``, ``Lerp`` by its steer force), from the agent's own speed along
        the course where that is faster, a speed c runs c·t + c²/(2·max_accel) under
        ``Accel``; a goal inside the margin is walked to, not past.
        An interest that does not slow at the target (a ``FollowField`` without a slowing
        radius beside ``Arrive``, ``Seek``) or a speed ``Arrive`` cannot brake from
        within its slowing radius (4 m/s at 6 m/s² and 1 m) ran agents into the wall
        beyond the goal before (docs/crowd.md, "Too fast to stop at the target").
        The same holds for a body standing, a neighbour no faster than 0.02 m/s
        (agents at rest at their goals keep about 1e-5 m/s) whose bare body (the summed
        radii) is clear of the target: a course that passes within the radius of the
        target, at least a radius ahead and no later than ``h + margin`` (h where it
        meets that body's padded disc), leaves the body out of its time to collision, at
        every speed level and in the refinements' tests and the ``creep``, ``unstick``
        and ``squeeze`` speeds. Without it an agent whose goal lies just short of a body
        standing at its own goal finds every course there unsafe at any speed that gets
        there within the horizon, and paces beside the goal for good (docs/crowd.md,
        "Bodies standing past the target").
    settle : bool
        Off by default. Near the goal (the interest's maximum below 0.98, as within
        ``Arrive``'s slowing radius; the maximum is the vertex of the parabola through the
        peak slot and its neighbours, since the peak slot's own value is below 1 wherever
        the goal lies between slots) the command's speed is capped by the progress its
        course makes, ``wanted speed × max(0, cos θ)`` with θ its angle from the interest
        peak, when the capped velocity is as safe as the command from the agents ahead of
        and beside it (a follower is the one to avoid an agent that slows on its course).
        An agent whose goal is taken (another agent standing on it; monsters round a
        player) then stands beside it instead of walking round it for good at the speed
        it wants there. It acts within the slowing radius: for a crowd round one point
        give the interest a slowing radius of about the crowd's size
        (``crowd_steering(slowing_radius=3.0)`` stops 20 agents round one point).
    make_way : float in [0, 1]
        Off (0) by default. An agent within four radii of its goal (not a waypoint),
        standing or no faster than this fraction of its max speed, yields to a neighbour
        that wants through it: the agent's centre lies ahead of the neighbour on the line to
        the neighbour's target, that target beyond both bodies (a neighbour whose target the
        agent stands on, a monster after it, gains nothing from its moving), and within the
        summed radii plus twice ``margin`` of the line; the bodies are within 0.6 m of
        touching; and the neighbour makes no headway (its velocity towards its target below
        a quarter of its max speed). Three more conditions: the neighbour can get home (no
        other body of the agent's neighbour list, slower than a quarter of its max speed,
        sits within the two radii of the neighbour's target: a goal taken, as when many
        agents are sent to one point), and the agent could come back (no such body lies
        within the two radii plus ``margin`` of the agent's own goal: from a ring of bodies
        2 cm apart, one that stepped out could not get back in, and paced beside its goal
        for good), and the neighbour has not stepped aside for the agent since it was last
        home (two bodies at goals 2 m apart made way for each other in turn, each walking
        back through the other's spot, for 45 s and more). The agent then steps aside,
        perpendicular to that line on the side its centre lies (on the line: to the
        neighbour's left, so that it passes on its right), on the slot nearest that side
        within 60° whose speed, capped at ``make_way`` × max speed, is free for the horizon
        (none such: the decision stands). Clear of the line but within 0.3 m more it does
        not move back towards it, so it does not swing in and out of the way; once the
        neighbour has passed, or found headway, its own decision takes it back to its goal.
        Without it bodies standing at their goals never make way, and a late arrival whose
        way runs through one (a pocket between pillars, a door's mouth) stands or paces for
        good unless a route leads it round (:class:`~contextsteer.Detour`). 0.5 in
        :data:`~contextsteer.scenarios.CROWD`, the crowd default: on the pillar rooms of
        ``benchmarks/bench_stranding.py`` (seeds 0–199, no route) it takes the agents never
        home from 27 to 4 and those off their goals at the end, once home, from 20 to 6
        (docs/crowd.md, "Bodies at their goals make way, by default", and "Not making way
        back").
    standoff : float >= 0
        Off (0) by default; seconds. Two walkers (each more than two radii from its
        target) that reach a narrow exit's mouth side by side can arch in it: straight on
        each would brush a door post, towards the middle each would walk into the other,
        so neither has a safe course with headway, and neither ``squeeze``, ``unstick`` nor
        ``make_way`` (for bodies at their goals) frees them. With ``standoff`` an agent
        that has stood (slower than 0.05 m/s) this long backs off when a neighbour has stood
        as long too, walks too, has its body within 0.15 m of the agent's, wants the same
        way (the directions to their targets within 60°), stands beside it (the line
        between the centres at least 60° off each of those directions: the front of a queue
        is the one to move) and is nearer its target (at the same distance the higher
        index backs off, so that exactly one of the two does), and has no third body in its
        way (none of the agent's neighbours within 0.6 m of its body and within 60° of its
        way: one body of a crowd round a point stepping back gains the others nothing).
        Backing off, for 2/3 s, the agent walks away from its target on the slot nearest
        straight back (within 90°) whose speed, capped at half its max speed, is free for
        the horizon (none such: the decision stands); the other, standing, takes the middle
        of the gap. 0.5 in :data:`~contextsteer.scenarios.CROWD`, the crowd default: in an
        exit's mouth with six walkers behind the two (``tests/test_standoff.py``) the two
        stood together 7.1 s without it and 1.2 s at most with it; on the crowd benchmark's
        scenes it acts only on the bottleneck's rare arches (docs/crowd.md, "Standoffs in
        the bottleneck's mouth" and "Backing off a standoff, by default").
    arrivals : bool
        Off by default. An agent standing at its goal (within its radius of its
        ``Agents.target``, not a waypoint) sees a neighbour that is arriving beside it
        standing, where the neighbour is and where it will stop: the neighbour is not
        kinematic, its own target is a goal, it heads towards it (``v_j·g_j > 0``,
        ``g_j = target_j − x_j``) and reaches it within the horizon at its speed (``|g_j|
        <= |v_j|·horizon``), and its straight way there passes clear of the agent (the
        segment from ``x_j`` to ``target_j`` at least ``r_i + r_j + margin`` from ``x_i``).
        Every candidate of the agent is tested against both discs, at rest. Seen walking
        on at its velocity, a neighbour coming to a goal beside the agent's closes in on
        it, so the agent steps back and returns, and two agents with goals a little more
        than a body apart can push each other off them by turns for the whole run. A
        neighbour whose way runs through the agent is seen walking as before (the agent
        may have to make room). Meant, like ``past_target``, for agents that stop at their
        targets (:class:`Arrive`); the scalar pair loop then serves every pair TTC of an
        agent at its goal, and the maps of agents away from their goals are unchanged.
    dense_horizon : float, > 0 and <= horizon, optional
        Off by default (None). The horizon shortens with the local density: agent i
        counts the neighbours in its list (the ``max_neighbours`` nearest) whose centres
        lie within ``density_radius`` of its own, ``ρ = n / (π·density_radius²)``
        persons/m², and uses ``horizon + f·(dense_horizon - horizon)`` with ``f =
        clamp((ρ - density_low) / (density_high - density_low), 0, 1)``, for its maps and
        every threshold of the refinements above (the walls' horizon scales by the same
        factor). Pedestrians in a dense crowd look less far ahead. With a 2 s horizon a
        packed counterflow stops: in a jam no course is free for 2 s, while standing is,
        so both fronts stand and the corridor clogs (docs/crowd.md, "Counterflow with
        continuous inflow"). The list holds at most ``max_neighbours`` agents, so the
        density counted saturates at ``max_neighbours / (π·density_radius²)`` (2.26
        persons/m² with 16 and 1.5 m): keep ``density_high`` below it.
    density_low, density_high : float, persons/m²
        The density up to which the full horizon holds (1.0) and from which
        ``dense_horizon`` does (2.0); ``density_high > density_low``.
    density_radius : float, m, > 0
        Radius of the disc the density is counted in (1.5 m).
    jam_horizon : float, > 0 and <= horizon, optional
        Off by default (None). An agent that is jammed facing an oncomer decides at this
        horizon instead: when no slot offers it a safe way to move (every safe candidate
        is standing, or none is safe) and ``jam_oncomers`` neighbours in its list within
        ``jam_radius`` want to go the other way through it, its maps are evaluated again at
        ``jam_horizon`` (the walls' horizon scaled alike). "The other way": their desired
        directions, each towards its own ``Agents.target``, more than 120° apart, each
        agent ahead of the other along its own (an agent on its target wants nowhere).
        That is the straight line to the target: agents steered along a route
        (``FollowField``) whose way turns away from that line are judged by the line.
        The refinements of the decision (``commit`` and those after it) keep the agent's
        own horizon, so it keeps or blends towards an earlier course only while that is
        safe at the full horizon. Two streams meeting head-on in a corridor then keep
        edging past each other where the full horizon lets both fronts stand, while a
        queue whose way is blocked by agents going its own way (a bottleneck) waits as
        before, however its members have turned to make room. Applied after
        ``dense_horizon`` (when that is already shorter, nothing changes).
    jam_radius : float, m, > 0
        How near the oncomers must be (2 m).
    jam_oncomers : int in [1, 64]
        How many such oncomers within ``jam_radius`` it takes (1). Counted in the agent's
        neighbour list, which holds at most ``max_neighbours`` agents. ``scenarios.CROWD``
        (the crowd scenarios' default) takes 3: a single oncomer in a two-way hallway is
        passed at the full horizon, a front of them in a dense counterflow makes the
        agent look less far (docs/crowd.md, "Counterflow with continuous inflow").
    same_way_horizon : float, > 0 and <= horizon, optional
        Off by default (None). The horizon against a neighbour walking the agent's way:
        one at least a quarter of its own max speed fast whose velocity lies within 45°
        of the direction to the agent's target (the agent more than its radius from that
        target; kinematic neighbours are never counted), except a neighbour about to stop
        (its own target nearer than its speed × ``same_way_horizon``) and one whose way
        crosses the agent's (it and its own target on opposite sides of the agent's way,
        the line from the agent to its target, each more than the two radii from it, as
        when walkers converge on one point). Every time to collision against such a
        neighbour (the maps' candidates and every test of the refinements) counts
        ``horizon / same_way_horizon`` times as long, so a course is unsafe against it
        only when it meets it within ``same_way_horizon``; with ``dense_horizon`` or
        ``jam_horizon`` in force, it shortens in the same proportion. Pedestrians keep
        less room to people going their way than to people coming at them: with the full
        horizon an agent among same-way walkers steps round them long before it needs to.
        In the crowd benchmark (docs/crowd.md, "A shorter horizon for walkers going one's
        way"), 1.6 s with ``CROWD``'s 2.4 s horizon turns 10 % less on the hallway and 11 %
        less on the crossing (seeds 0–79, pooled), gets agents home sooner on every seeded
        scene, keeps every pair apart and leaves the symmetric circles as they were;
        :data:`~contextsteer.scenarios.CROWD` sets it to 1.6. A course that meets a same-way walker within
        ``same_way_horizon`` is still unsafe, and every other neighbour is seen at the
        full horizon. Reads every neighbour's ``Agents.target``.
    lateral_cost : float, >= 0
        Off by default (0). When the way the agent wants to go (the interest peak) is not
        free at full speed, each candidate's worth is multiplied by
        ``max(1/64, 1 - lateral_cost·s·|sin θ|)``, s its speed (a fraction of max speed,
        capped by the speed the agent wants) and θ its angle from that way (the floor,
        which binds only above ``lateral_cost`` 63/64, keeps a safe side step worth
        something: at 0 an agent with a collision-free course stood where standing was
        not safe): speed across
        the way costs, as in ORCA's objective, so an agent held up by a queue slows down
        on course rather than walking along the queue's side at speed. With the
        half-cosine interest and γ 1, a 45° side step at full speed (worth 0.854) loses to
        half speed straight on (0.5) from ``lateral_cost`` 0.586. A free way is never
        bent. In the crowd benchmark (docs/crowd.md, "Speed across a blocked way costs")
        0.6 with ``CROWD`` turns 15 % less at the bottleneck and 12 % less at the doorway
        (seeds 0–31), but more on the symmetric circles, whose agents then slow down on
        course instead of curving round the centre early: opt-in, for queues at doors and
        bottlenecks (``crowd_steering(changes={"lateral_cost": 0.6})``; the ``bottleneck``
        and ``doorway`` scenarios take it by default,
        :data:`~contextsteer.scenarios.QUEUE_CHANGES`).
    wall_speed_alone : bool
        Off by default. ``wall_speed``'s candidate, but only for an agent
        that no listed neighbour in sight could meet within the horizon at any of its
        candidates (a neighbour is in sight when a line from the agent's centre to its
        centre, or to one of its two sides across that line, misses every wall):
        a lone agent may close on a wall ahead continuously, as it must to turn a bend or
        reach a door it barely fits. With the levels alone the slowest moving candidate
        comes no nearer a wall than ``max_speed/S·wall_horizon``, so a lone agent at a
        90° bend whose corridor leaves it 0.1–0.2 m of room paced before the bend for good
        (14 of 72 bends at 1.3 m/s, 59 of 72 at 3 m/s without either this option or
        ``unstick``'s lone-agent rule, which ``CROWD`` has; with this option none, with
        the rule 0 and 1;
        docs/crowd.md, "Bends"). Agents with neighbours keep the levels, as
        ``wall_speed`` for all costs the bottleneck's stragglers. The candidate is offered
        only below the slowest moving level (``max_speed / speeds``), where no level can
        approach the wall at all: above it the levels decide (offered at any speed, a lone
        monster at 3-4 m/s closed on the wall beside a door it barely fits and paced along
        it, 3 of 6 starts not through in 40 s). In ``CROWD`` since then: a 4 m/s walker
        leaving a room by a door on its far side was not home in 30 s in 12 of 108 rooms
        of ``benchmarks/rooms.py``, and is in every one (docs/crowd.md, "A lone agent's
        wall speed below the levels, by default"). With ``wall_speed`` as well, every
        agent gets ``wall_speed``'s candidate at any speed.
    brake_at_target : bool
        Off by default; in ``CROWD``. A command along a course that passes within the
        agent's radius of its target (not a waypoint) is slowed to the fastest speed from
        which the agent's motion model stops at the course's closest approach to it, held
        for the decision's time first (the rule ``past_target``'s stop short uses for what
        lies beyond the target: ``Accel`` and ``Vehicle`` brake at ``max_accel``, ``Lerp``
        by its steer force). ``Arrive`` slows linearly within its slowing radius, which
        a fast agent cannot brake to: with the 1 m radius and 6 m/s² of braking, a lone
        agent at 5–8 m/s ran past its goal, turned, and circled 0.3–3.9 m off it for good
        (the run metrics counted it home on its first pass); with this option it stands
        on it, from 4 to 12 m/s. Only a fast agent is braked (its run from max speed,
        held and braked, more than its radius): walkers (1.3 m/s) are left to their
        interest's slowing. Near its target such an agent keeps, off the target's way, to
        what stops within its distance from it, and turns straight to a better course
        (no ``return_step``). Intermediate waypoints written into ``Agents.target`` are
        stopped at unless marked ``Agents.waypoint`` (docs/crowd.md, "Fast agents that
        never settle").
    reachable_target : bool
        Off by default; in ``CROWD``. The simulation steers each agent to the place
        nearest its target where its body can stand: a target inside a solid (a crate, a
        pillar) moves to the solid's nearest exit, and one closer to a wall than the
        agent's radius moves off the wall along its normal, by the rules that push a body
        out of a solid or a wall (:class:`~contextsteer.Simulation`). The agents' own
        ``target`` is not changed, and the run metrics measure arrival at it. Without
        it, an agent sent to a goal 0.2 m from a wall (radius 0.3 m) dithered 0.2 m off
        it at 25° a step for good, and one sent into a crate circled it at full speed
        (docs/crowd.md, "Goals no body can stand on"). A behaviour evaluated alone
        (``evaluate``) sees the targets as given. Meant, like ``past_target``, for agents
        that stop at their targets (``crowd_steering`` turns it off for ``Seek`` and for
        a field not promised to end at the target, and sets ``FollowField(reachable=True)``
        for a field's own goal).

    Notes
    -----
    ``commit_danger`` to ``turn_margin`` need ``commit > 0`` (they refine the commitment
    step). On the crowd benchmark (``benchmarks/bench_crowd_quality.py``, seeds 0–15)
    ``commit_danger=0.25, turn_steps=4, turn_margin=0.1, return_margin=0.5,
    return_step=0.07`` cuts heading jitter by 25–45 % (the circles' by 40–70 %) but on
    hallway seed 12 strands 35 % of the agents; with ``retreat_speed=0.5`` as well every
    hallway agent of seeds 0–15 gets home and the jitter stays 25–45 % below the
    defaults'. Not the default: on the one-seed benchmark table it is 31 % slower to the
    goal than RVO2 on the hallway (see the README's jitter notes).

    Examples
    --------
    Two agents 4 m apart walk towards each other at 1 m/s (combined 2 m/s, 3 m of gap):

    >>> import numpy as np
    >>> import contextsteer as cs
    >>> agents = cs.Agents(2)
    >>> _ = agents.add([[0, 0], [4, 0]], velocity=[[1, 0], [-1, 0]], radius=0.5, max_speed=1)
    >>> maps = cs.CollisionDanger(horizon=2, speeds=2).evaluate(agents, 4)
    >>> print(maps.speed[0], maps.danger[0].round(3))   # slots +x, +y, -x, -y of agent 0
    [0.5 1.  1.  1. ] [0. 0. 0. 0.]
    >>> maps = cs.CollisionDanger(horizon=4, speeds=2).evaluate(agents, 4)
    >>> print(maps.speed[0], maps.danger[0].round(3))   # no safe speed ahead within 4 s
    [0. 1. 1. 1.] [0.25 0.   0.   0.  ]
    """

    horizon: float = _default("collision_danger", "horizon")
    speeds: int = _default("collision_danger", "speeds")
    fine_speeds: int = _default("collision_danger", "fine_speeds")
    margin: float = _default("collision_danger", "margin")
    reciprocity: float = _default("collision_danger", "reciprocity")
    walls: bool = _default("collision_danger", "walls")
    wall_horizon: float | None = _default("collision_danger", "wall_horizon")
    layers: int = _default("collision_danger", "layers")
    side: str = _default("collision_danger", "side")
    side_bias: float = _default("collision_danger", "side_bias")
    smoothness: float = _default("collision_danger", "smoothness")
    commit: float = _default("collision_danger", "commit")
    speed_exponent: float = _default("collision_danger", "speed_exponent")
    commit_danger: float = _default("collision_danger", "commit_danger")
    return_margin: float = _default("collision_danger", "return_margin")
    return_step: float = _default("collision_danger", "return_step")
    turn_steps: int = _default("collision_danger", "turn_steps")
    turn_margin: float = _default("collision_danger", "turn_margin")
    wall_speed: bool = _default("collision_danger", "wall_speed")
    retreat_speed: float = _default("collision_danger", "retreat_speed")
    inertia: float = _default("collision_danger", "inertia")
    creep: bool = _default("collision_danger", "creep")
    unstick: bool = _default("collision_danger", "unstick")
    squeeze: float = _default("collision_danger", "squeeze")
    past_target: bool = _default("collision_danger", "past_target")
    settle: bool = _default("collision_danger", "settle")
    make_way: float = _default("collision_danger", "make_way")
    standoff: float = _default("collision_danger", "standoff")
    arrivals: bool = _default("collision_danger", "arrivals")
    dense_horizon: float | None = _default("collision_danger", "dense_horizon")
    density_low: float = _default("collision_danger", "density_low")
    density_high: float = _default("collision_danger", "density_high")
    density_radius: float = _default("collision_danger", "density_radius")
    jam_horizon: float | None = _default("collision_danger", "jam_horizon")
    jam_radius: float = _default("collision_danger", "jam_radius")
    jam_oncomers: int = _default("collision_danger", "jam_oncomers")
    same_way_horizon: float | None = _default("collision_danger", "same_way_horizon")
    lateral_cost: float = _default("collision_danger", "lateral_cost")
    wall_speed_alone: bool = _default("collision_danger", "wall_speed_alone")
    brake_at_target: bool = _default("collision_danger", "brake_at_target")
    reachable_target: bool = _default("collision_danger", "reachable_target")
    kind: ClassVar[str] = "collision_danger"
    writes: ClassVar[str] = "danger"

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("dense_horizon", "jam_horizon", "same_way_horizon"):
            value = getattr(self, name)
            if value is not None and value > self.horizon:
                raise ValueError(
                    f"CollisionDanger: {name} must be at most horizon ({self.horizon} s), "
                    f"got {value}"
                )
        if not self.density_high > self.density_low:
            raise ValueError(
                "CollisionDanger: density_high must be above density_low, got "
                f"density_low={self.density_low}, density_high={self.density_high}"
            )

    def evaluate(  # type: ignore[override]  # CollisionMaps adds the speed map
        self,
        agents: Agents,
        directions: Any,
        *,
        rotate: bool = False,
        time: float = 0.0,
        max_neighbours: int = _checks.MAX_NEIGHBOURS,
        world: World | None = None,
        max_neighbors: int | None = None,
    ) -> CollisionMaps:
        """Run the behaviour alone; return its maps, :class:`CollisionMaps` (``interest``
        zeros, ``danger``, ``speed``). Parameters as :meth:`Behaviour.evaluate`; the
        neighbours are the ``max_neighbours`` nearest within the reach that could collide
        within the horizon."""
        _check_lent(self)
        _checks.agents("evaluate", agents)
        d = _slot_directions(directions)
        interest, danger, speed = _core.evaluate_behaviour(
            agents,
            self,
            d,
            _checks.flag("evaluate: rotate", rotate),
            _checks.real("evaluate: time", time),
            _checks.integer(
                "evaluate: max_neighbours",
                _checks.max_neighbours("evaluate", max_neighbours, max_neighbors),
                1,
                256,  # as Steering's (0 read no neighbour at all, silently: fuzz round 26)
            ),
            _core_world(world),
        )
        return CollisionMaps(interest, danger, speed)


def _behaviour_class(spec: dict) -> type[Behaviour]:
    """A Behaviour subclass made from a C++ table: the behaviour's parameters as fields
    (with the table's defaults), checked and passed on as the table says."""
    fields = []
    for p in spec["params"]:
        t: Any = _PARAM_TYPES[p["kind"]]
        if p["optional"]:
            t = t | None
        fields.append((p["name"], t, dataclasses.field(default=_short(p["default"]))))
    cls = dataclasses.make_dataclass(
        spec["name"],
        fields,
        bases=(Behaviour,),
        frozen=True,
        eq=False,
        repr=False,
        namespace={"kind": spec["kind"], "writes": spec["writes"], "__doc__": _spec_doc(spec)},
    )
    cls.__module__ = __name__
    return cls


# Behaviours declared only in C++ (a struct, its table and its kernel) get their class here.
for _spec in _SPECS.values():
    if _spec["name"] not in globals():
        globals()[_spec["name"]] = _behaviour_class(_spec)
        __all__.append(_spec["name"])
