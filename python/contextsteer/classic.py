"""Classic steering behaviours (Reynolds, as in libGDX's gdx-ai), batched in C++.

The baseline context steering is compared with: each behaviour asks for a **linear
acceleration**, and behaviours are combined by :class:`Blended` (a weighted sum, truncated
to the agent's ``max_accel``) and :class:`Priority` (the first blended group that asks
for more than ``epsilon``). Pass one to :class:`contextsteer.Simulation` in place of a
context :class:`~contextsteer.Steering`: the step turns each acceleration *a* into the
chosen velocity ``v + a·dt``, and with ``motion=cs.Accel()`` (time to target 0) the agent
integrates ``v ← limit(v + a·dt, max_speed)`` and moves with the new velocity (the Accel
model also caps the velocity change at ``max_accel·dt``); ``cs.Accel(order="position_first")``
is gdx-ai's ``applySteering`` exactly (the position moves with the old velocity, no cap).
By default every behaviour gives gdx-ai's numbers; each deliberate difference is a named
option (``docs/sources.md`` lists them with the gdx-ai class each one follows). Walls, metrics,
histories and plots work as for context steering (the context maps stay zero);
:func:`accelerations` evaluates a steering once, without a simulation.

Notation: ``p``, ``v`` the agent's position and velocity, ``a_max`` / ``s_max`` its
``max_accel`` / ``max_speed``; *seek q* is ``unit(q − p)·a_max``. Targets: by default the
agent's own ``target``; ``target=(x, y)`` a fixed point; ``agents=[ids]`` the nearest
alive one of those agents (never itself). Units: lengths in world units, times in seconds,
angles in radians.

Every number parameter is checked when the behaviour is built: anything but a real number
(a bool or a string included) raises ``TypeError``; NaN, an infinity (except
:class:`Hide`'s ``max_distance``) or a magnitude of 2^60 or more raises ``ValueError``, and
so does a value below 2^-60 for a parameter that must be > 0 (the core computes in
float32). The bounds listed under each class's Parameters come on top of these.

Left out of gdx-ai's set: the angular behaviours (Face, ReachOrientation,
LookWhereYouAreGoing — the motion models own the heading: ``Accel(independent_facing=True)``
turns it towards the velocity at ``max_turn_rate``, which is LookWhereYouAreGoing) and Jump
(needs gravity along a third axis).

>>> import numpy as np
>>> import contextsteer as cs
>>> from contextsteer import classic
>>> agents = cs.Agents(2, slots=8)
>>> _ = agents.add([[0, 0], [10, 0]], max_speed=2, max_accel=4, target=[[0, 5], [0, 0]])
>>> steer = classic.Priority([classic.Separation(radius=2.0), classic.Seek()])
>>> classic.accelerations(None, agents, steer)   # nobody within 2: both seek their target
array([[ 0.,  4.],
       [-4.,  0.]], dtype=float32)
>>> sim = cs.Simulation(None, agents, steer, motion=cs.Accel())
>>> sim.step(dt=0.1)
>>> agents.velocity                             # v + a·dt
array([[ 0. ,  0.4],
       [-0.4,  0. ]], dtype=float32)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _checks, _core
from .maps import _MAX_MAGNITUDE, _f32
from .world import World, _core_world

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from .agents import Agents
    from .path import Path

__all__ = [
    "Alignment",
    "Arrive",
    "Behaviour",
    "Blended",
    "Cohesion",
    "CollisionAvoidance",
    "Evade",
    "Flee",
    "FollowFlowField",
    "FollowPath",
    "Hide",
    "Interpose",
    "MatchVelocity",
    "Priority",
    "Pursue",
    "RaycastObstacleAvoidance",
    "Seek",
    "Separation",
    "Wander",
    "accelerations",
]

RAY_CONFIGS = ("single", "parallel", "whiskers")


def _num(
    owner: str,
    name: str,
    value: Any,
    low: float | None = 0.0,
    *,
    positive: bool = False,
    allow_inf: bool = False,
    length: bool = False,
) -> float:
    # A bool or a string is not a number here (float() would take True as 1 and "1" as 1).
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {name} must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{owner}: {name} must be finite, got {value!r}")
    if positive and not v > 0:
        raise ValueError(f"{owner}: {name} must be > 0, got {value!r}")
    if low is not None and v < low:
        raise ValueError(f"{owner}: {name} must be >= {low}, got {value!r}")
    # The core computes in float32: a magnitude of 2^60 or more (or, for a positive
    # parameter, below 2^-60, whose reciprocal the behaviours take) would overflow there.
    if math.isfinite(v) and not abs(v) < _MAX_MAGNITUDE:
        raise ValueError(
            f"{owner}: {name} must be below 2^60 (1.15e18) in magnitude, got {value!r}"
        )
    # A length (or radius, or distance) lies within the coordinate range, as positions do.
    if length and math.isfinite(v) and not abs(v) <= _checks.MAX_COORDINATE:
        raise ValueError(f"{owner}: {name} must be at most 1e8 in magnitude, got {value!r}")
    if positive and v < 1.0 / _MAX_MAGNITUDE:
        raise ValueError(f"{owner}: {name} must be at least 2^-60 (8.7e-19), got {value!r}")
    return v


def _point(owner: str, what: str, value: Any) -> np.ndarray:
    """Two finite numbers at most 1e8 in magnitude (README, "Supported ranges"), as
    float32."""
    # Text, bools, objects and masked arrays refused as the context behaviours refuse
    # them: NumPy parsed "5" as 5.0, True as 1.0, and read a masked entry's hidden value.
    if isinstance(value, (str, bytes, np.ma.MaskedArray)):
        raise TypeError(f"{owner}: {what} must be two real numbers, got {value!r:.60}")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        raw = None
    if (
        raw is not None
        and raw.dtype.kind == "O"
        and all(
            isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in raw.ravel()
        )
    ):
        try:
            raw = raw.astype(np.float64)  # ([2**70, 1]: then refused by its magnitude)
        except (OverflowError, ValueError, TypeError, ArithmeticError):
            raise ValueError(
                f"{owner}: {what} must be two finite numbers at most 1e8 in magnitude, "
                f"got {value!r:.60}"
            ) from None
    if raw is not None and (raw.dtype.kind in "USOVMmb" or np.iscomplexobj(raw)):
        raise TypeError(f"{owner}: {what} must be two real numbers, got dtype {raw.dtype}")
    pt = None if raw is None else raw.astype(np.float64)
    if pt is None or pt.shape != (2,) or not np.isfinite(pt).all():
        raise ValueError(f"{owner}: {what} must be two finite numbers, got {value!r}")
    if not (np.abs(pt) <= _checks.MAX_COORDINATE).all():
        raise ValueError(f"{owner}: {what} must be at most 1e8 in magnitude, got {value!r}")
    return pt.astype(np.float32)


def _target(owner: str, target: Any, agents: Any, what: str = "target") -> dict[str, Any]:
    """Where the behaviour's q comes from; ``what`` names the point parameter."""
    if target is not None and agents is not None:
        raise ValueError(f"{owner}: give {what}= or agents=, not both")
    if agents is not None:
        ids = _checks.integer_array(f"{owner}: agents", agents)
        if ids.ndim == 0:
            ids = ids[None]
        if ids.ndim != 1 or ids.size == 0 or not _checks.is_integer(ids):
            raise ValueError(
                f"{owner}: agents must be a non-empty list of agent ids, got {agents!r}"
            )
        if (ids < 0).any() or (ids >= 2**31).any():
            raise ValueError(f"{owner}: agent ids must be in [0, 2**31), got {agents!r}")
        return {"source": "agents", "ids": [int(i) for i in ids]}
    if target is not None:
        return {"source": "point", "point": _point(owner, what, target)}
    return {"source": "own"}


def _shown(t: dict[str, Any], key: str) -> Any:
    """A checked point or agent ids of ``_target``, as a tuple (what the behaviour steers
    by, immutable), else None."""
    if key not in t:
        return None
    if key == "ids":
        return tuple(t["ids"])
    return tuple(float(v) for v in t["point"])


class _ReadOnly:
    """Public attributes are set once, in ``__init__``, and read-only afterwards: they are
    validated there and compiled from later (by a simulation when it is built, and again
    by its copies and saves), so an edit would go unchecked, or make a copy steer
    differently from the simulation it was copied from."""

    _what = ""  # what to build anew, in the message (the class name when empty)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and name in self.__dict__:
            what = self._what or type(self).__name__
            raise AttributeError(
                f"{type(self).__name__}.{name} is read-only: build a new {what} to change it"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_") and name in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.{name} is read-only")
        object.__delattr__(self, name)


class Behaviour(_ReadOnly):
    """Base of the classic behaviours: each computes a linear acceleration per agent.

    Parameters are checked when the behaviour is built and are read-only afterwards (as the
    context behaviours' are): build a new behaviour to change one. The base class takes no
    parameters and computes nothing: build one of its subclasses.
    """

    _kind = ""
    _what = "behaviour"

    def _params(self) -> dict[str, Any]:
        raise NotImplementedError

    @_checks.safe_repr
    def __repr__(self) -> str:
        shown = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


class _Targeted(Behaviour):
    def __init__(
        self,
        target: ArrayLike | None = None,
        *,
        agents: ArrayLike | None = None,
    ) -> None:
        self._t = _target(type(self).__name__, target, agents)
        # What it steers by, not the caller's objects: a caller's array edited afterwards
        # showed (and pickled) a point the behaviour did not steer to.
        self.target = _shown(self._t, "point")
        self.agents = _shown(self._t, "ids")


class Seek(_Targeted):
    """Seek: full acceleration towards the target, ``unit(q − p)·a_max`` (gdx-ai Seek).

    A target on the agent gives 0 (gdx-ai: ``Vector2.nor`` of zero).

    Parameters
    ----------
    target : (x, y), optional
        A fixed target point q, shared by every agent (gdx-ai's ``target``). Default (neither
        ``target`` nor ``agents``): each agent's own ``Agents.target``. Refused with
        ``ValueError``: anything but two finite numbers (text, bools, objects or a masked
        array: ``TypeError``), or both ``target`` and ``agents``.
    agents : int or sequence of int, optional
        Keyword-only. Agent ids: q, the target, is the nearest alive one of them other than the agent
        itself (centre distance; ties: the first listed); when none is alive the behaviour
        asks for 0. Refused with ``ValueError``: an empty list, non-integer ids (bools
        included), ids outside [0, 2**31). An id at or beyond ``Agents.capacity`` raises
        ``IndexError`` when the steering is evaluated or the simulation is built.
    """

    _kind, _away = "seek", False

    def _params(self):
        return {**self._t, "away": self._away}


class Flee(Seek):
    """Flee: full acceleration away from the target, ``unit(p − q)·a_max`` (gdx-ai Flee).

    A target on the agent gives 0.

    Parameters
    ----------
    target : (x, y), optional
        A fixed point q to flee, shared by every agent (gdx-ai's ``target``). Default (neither
        ``target`` nor ``agents``): each agent's own ``Agents.target``. Refused with
        ``ValueError``: anything but two finite numbers (text, bools, objects or a masked
        array: ``TypeError``), or both ``target`` and ``agents``.
    agents : int or sequence of int, optional
        Keyword-only. Agent ids: q, the point to flee, is the nearest alive one of them other than the agent
        itself (centre distance; ties: the first listed); when none is alive the behaviour
        asks for 0. Refused with ``ValueError``: an empty list, non-integer ids (bools
        included), ids outside [0, 2**31). An id at or beyond ``Agents.capacity`` raises
        ``IndexError`` when the steering is evaluated or the simulation is built.
    """

    _away = True


class Arrive(_Targeted):
    """Arrive: towards the target at ``s_max``, slowing linearly inside ``slowing_radius``
    and stopping within ``tolerance``: ``a = (unit(q − p)·speed − v) / time_to_target``,
    ``|a| <= a_max``.

    As in gdx-ai, "stopping" means asking for 0 within ``tolerance``: the behaviour does not
    brake there, so an agent that arrives moving keeps its velocity.

    Parameters
    ----------
    target : (x, y), optional
        A fixed target point q, shared by every agent (gdx-ai's ``target``). Default (neither
        ``target`` nor ``agents``): each agent's own ``Agents.target``. Refused with
        ``ValueError``: anything but two finite numbers (text, bools, objects or a masked
        array: ``TypeError``), or both ``target`` and ``agents``.
    agents : int or sequence of int, optional
        Keyword-only. Agent ids: q, the target, is the nearest alive one of them other than the agent
        itself (centre distance; ties: the first listed); when none is alive the behaviour
        asks for 0. Refused with ``ValueError``: an empty list, non-integer ids (bools
        included), ids outside [0, 2**31). An id at or beyond ``Agents.capacity`` raises
        ``IndexError`` when the steering is evaluated or the simulation is built.
    tolerance : float, default 0.0
        Keyword-only. Distance to the target (length) within which the behaviour asks for 0
        (gdx-ai ``arrivalTolerance``). Must be >= 0.
    slowing_radius : float, default 1.0
        Keyword-only. Distance (length) inside which the wanted speed falls linearly, from
        ``s_max`` at the radius to 0 at the target: ``s_max·d / slowing_radius`` (gdx-ai
        ``decelerationRadius``). Must be > 0 (gdx-ai's unset radius, 0, means no slowing:
        give a tiny radius).
    time_to_target : float, default 0.1
        Keyword-only. Seconds over which the velocity should reach the wanted one (gdx-ai
        ``timeToTarget``). Must be > 0.
    """

    _kind = "arrive"

    def __init__(
        self,
        target: ArrayLike | None = None,
        *,
        agents: ArrayLike | None = None,
        tolerance: float = 0.0,
        slowing_radius: float = 1.0,
        time_to_target: float = 0.1,
    ) -> None:
        super().__init__(target, agents=agents)
        self.tolerance = _num("Arrive", "tolerance", tolerance, length=True)
        self.slowing_radius = _num(
            "Arrive", "slowing_radius", slowing_radius, positive=True, length=True
        )
        self.time_to_target = _num("Arrive", "time_to_target", time_to_target, positive=True)

    def _params(self):
        return {
            **self._t,
            "tolerance": self.tolerance,
            "slowing_radius": self.slowing_radius,
            "time_to_target": self.time_to_target,
        }


class Pursue(_Targeted):
    """Pursue: seek where the quarry will be, ``q + v_q·T`` with ``T = |q − p| / |v|``
    capped at ``max_prediction`` seconds (``max_prediction`` when the pursuer is still)
    (gdx-ai Pursue).

    Parameters
    ----------
    agents : int or sequence of int
        The quarry: the nearest alive of these agent ids other than the agent itself (centre
        distance; ties: the first listed), its position and velocity; none alive: 0 (gdx-ai:
        one ``target`` Steerable). Refused with ``ValueError``: an empty list, non-integer
        ids (bools included), ids outside [0, 2**31). An id at or beyond
        ``Agents.capacity`` raises ``IndexError`` when the steering is evaluated or the
        simulation is built.
    max_prediction : float, default 1.0
        Keyword-only. Longest look-ahead T in seconds (gdx-ai ``maxPredictionTime``). Must
        be >= 0; 0 seeks the quarry's current position.
    """

    _kind, _away = "pursue", False

    def __init__(
        self,
        agents: ArrayLike,
        *,
        max_prediction: float = 1.0,
    ) -> None:
        super().__init__(None, agents=agents)
        self.max_prediction = _num(type(self).__name__, "max_prediction", max_prediction)

    def _params(self):
        return {**self._t, "max_prediction": self.max_prediction, "away": self._away}


class Evade(Pursue):
    """Evade: flee the pursuer's predicted position (Pursue reversed; gdx-ai Evade).

    Parameters
    ----------
    agents : int or sequence of int
        The pursuer: the nearest alive of these agent ids other than the agent itself (centre
        distance; ties: the first listed), its position and velocity; none alive: 0 (gdx-ai:
        one ``target`` Steerable). Refused with ``ValueError``: an empty list, non-integer
        ids (bools included), ids outside [0, 2**31). An id at or beyond
        ``Agents.capacity`` raises ``IndexError`` when the steering is evaluated or the
        simulation is built.
    max_prediction : float, default 1.0
        Keyword-only. Longest look-ahead T in seconds (gdx-ai ``maxPredictionTime``). Must
        be >= 0; 0 flees the pursuer's current position.
    """

    _away = True


class MatchVelocity(_Targeted):
    """MatchVelocity: ``a = (v_q − v) / time_to_target``, ``|a| <= a_max``, with ``v_q`` the
    nearest of ``agents``' velocity or a fixed ``velocity=(vx, vy)`` (gdx-ai MatchVelocity).

    Parameters
    ----------
    velocity : (vx, vy), optional
        A fixed velocity v_q (length/s) to match, shared by every agent (gdx-ai reads it
        from its ``target`` Steerable). Give exactly one of ``velocity`` and ``agents``:
        neither or both raises ``ValueError``, and so does anything but two finite numbers.
    agents : int or sequence of int, optional
        Keyword-only. v_q is the velocity of the nearest alive of these agent ids other
        than the agent itself (centre distance; ties: the first listed); none alive: 0
        (gdx-ai ``target``). Refused with ``ValueError``: an empty list, non-integer ids
        (bools included), ids outside [0, 2**31). An id at or beyond ``Agents.capacity``
        raises ``IndexError`` when the steering is evaluated or the simulation is built.
    time_to_target : float, default 0.1
        Keyword-only. Seconds over which the velocity should reach v_q (gdx-ai
        ``timeToTarget``). Must be > 0.
    """

    _kind = "match_velocity"

    def __init__(
        self,
        velocity: ArrayLike | None = None,
        *,
        agents: ArrayLike | None = None,
        time_to_target: float = 0.1,
    ) -> None:
        if velocity is None and agents is None:
            raise ValueError("MatchVelocity: give velocity= or agents=")
        self._t = _target("MatchVelocity", velocity, agents, "velocity")
        self.velocity, self.agents = _shown(self._t, "point"), _shown(self._t, "ids")
        self.time_to_target = _num("MatchVelocity", "time_to_target", time_to_target, positive=True)

    def _params(self):
        return {**self._t, "time_to_target": self.time_to_target}


WANDER_WALKS = ("noise", "random")


class Wander(Behaviour):
    """Wander: seek a point on a circle of ``radius`` centred ``offset`` ahead along the
    heading, at an angle θ from the heading.

    ``walk="noise"`` (default, not gdx-ai): θ = π·noise(t·rate), seeded coherent noise
    (``rate`` lattice points per second): stateless, reproducible, and smooth at any frame
    rate. ``walk="random"`` (gdx-ai's Wander with faceEnabled false): θ is a wander
    orientation kept per agent that every evaluation advances by
    ``randomTriangular(rate·Δt)`` (the difference of two uniforms, times ``rate`` radians per
    second and the time since the previous evaluation; nothing the first two times, while
    gdx-ai's ``lastTime`` is still 0). Its state lives in the compiled steering: each
    :class:`~contextsteer.Simulation` (and each :func:`accelerations` call) starts at θ = 0.
    The random numbers are hashed from the agent, ``seed`` and the time, not Java's
    generator: the same distribution, not the same draws.

    Parameters
    ----------
    offset : float, default 1.0
        Distance (length) of the circle's centre ahead of the agent along its heading
        (gdx-ai ``wanderOffset``). Must be >= 0.
    radius : float, default 0.5
        Radius (length) of the wander circle (gdx-ai ``wanderRadius``). Must be >= 0.
    rate : float, default 1.0
        How fast θ changes. ``walk="random"``: radians per second, each step's change
        drawn from a triangular distribution on ``[-rate·Δt, rate·Δt]`` (gdx-ai
        ``wanderRate``). ``walk="noise"``: noise lattice points per second (θ makes one
        smooth move between random values in [-π, π] every ``1/rate`` seconds; 0 keeps θ
        fixed per agent). Must be >= 0.
    seed : int, default 0
        Seed of the draws, combined with each agent's ``Agents.rng`` state (not gdx-ai,
        which uses ``MathUtils.random``). Refused with ``ValueError``: anything but an int
        in [0, 2**64) (bools included).
    walk : {"noise", "random"}, default "noise"
        Keyword-only. ``"noise"``: stateless coherent noise (not gdx-ai). ``"random"``:
        gdx-ai's random walk of ``wanderOrientation``. Any other value raises
        ``ValueError``.
    """

    _kind = "wander"

    def __init__(
        self,
        offset: float = 1.0,
        radius: float = 0.5,
        rate: float = 1.0,
        seed: int = 0,
        *,
        walk: str = "noise",
    ) -> None:
        self.offset = _num("Wander", "offset", offset, length=True)
        self.radius = _num("Wander", "radius", radius, length=True)
        self.rate = _num("Wander", "rate", rate)
        self.seed = _checks.integer("Wander: seed", seed, 0, 2**64 - 1)
        if walk not in WANDER_WALKS:
            raise ValueError(f"Wander: walk must be one of {WANDER_WALKS}, got {walk!r}")
        self.walk = walk

    def _params(self):
        return {
            "offset": self.offset,
            "radius": self.radius,
            "rate": self.rate,
            "seed": self.seed,
            "walk": self.walk,
        }


PROXIMITIES = ("radius", "field_of_view", "cone", "infinite", "center")


def _proximity(owner: str, proximity: Any, angle: Any) -> float:
    if proximity not in PROXIMITIES:
        raise ValueError(f"{owner}: proximity must be one of {PROXIMITIES}, got {proximity!r}")
    a = _num(owner, "angle", angle)
    if a > 2 * math.pi:
        raise ValueError(f"{owner}: angle must be in [0, 2*pi], got {angle!r}")
    return a


class _Group(Behaviour):
    _kind, _rule = "group", ""

    def __init__(
        self,
        radius: float = 1.0,
        *,
        proximity: str = "radius",
        angle: float = math.pi,
    ) -> None:
        name = type(self).__name__
        self.radius = _num(name, "radius", radius, positive=True, length=True)
        self.angle = _proximity(name, proximity, angle)
        self.proximity = proximity

    def _params(self):
        return {
            "rule": self._rule,
            "radius": self.radius,
            "decay": getattr(self, "decay", 0.0),
            "proximity": self.proximity,
            "angle": self.angle,
        }


_PROXIMITY_DOC = """
    The neighbours (gdx-ai's Proximity), by ``proximity``:

    - ``"radius"`` (default, gdx-ai RadiusProximity): ``d < radius + r_j``, the neighbour's
      bounding radius widening the range;
    - ``"field_of_view"`` (gdx-ai FieldOfViewProximity): that, and ``f·(p_j − p) >
      cos(angle/2)`` with ``f`` the unit heading — gdx-ai's test, which does not normalise
      ``p_j − p`` (beyond a distance of 1 the cone widens towards the half-plane ahead);
    - ``"cone"`` (not gdx-ai): the same range and the true angle: the direction to the
      neighbour within ``angle/2`` of the heading;
    - ``"infinite"`` (gdx-ai InfiniteProximity): every other alive agent;
    - ``"center"`` (contextsteer's former rule): centre distance ``d <= radius``.

    All but ``"infinite"`` read the simulation's neighbour lists, the ``max_neighbours``
    nearest (gdx-ai scans every agent: raise ``max_neighbours`` for crowds). gdx-ai lets
    behaviours share one proximity object whose per-frame tags leak between them; here each
    behaviour has its own.
"""

_PROXIMITY_PARAMS = """    proximity : {"radius", "field_of_view", "cone", "infinite", "center"}, default "radius"
        Keyword-only. Which agents count as neighbours (the list above; gdx-ai's
        ``proximity``). Any other value raises ``ValueError``.
    angle : float, default pi
        Keyword-only. Full opening angle in radians of ``"field_of_view"`` and ``"cone"``
        (gdx-ai FieldOfViewProximity ``angle``); the other proximities ignore it. Must be in
        [0, 2π].
"""

_RADIUS_PARAM = """    radius : float, default {default}
        Range (length) of the proximity (gdx-ai RadiusProximity / FieldOfViewProximity
        ``radius``): a neighbour j counts within ``radius + r_j`` of the agent's centre
        (``"center"``: within ``radius``; ``"infinite"`` ignores it). Must be > 0.
"""


class Separation(_Group):
    __doc__ = (
        """Separation: ``Σ unit(p − p_j)·min(a_max, decay / d²)`` over the neighbours
    (inverse-square repulsion, each term capped at ``a_max``; a neighbour at d = 0 adds
    nothing). As in gdx-ai the sum itself is *not* capped: alone, or as a bare item of a
    :class:`Priority`, it can exceed ``a_max``; inside a :class:`Blended` the blend
    truncates it (wrap it in ``Blended([sep])`` for contextsteer's former capped result).
    """
        + _PROXIMITY_DOC
        + """
    Parameters
    ----------
"""
        + _RADIUS_PARAM.format(default="1.0")
        + """    decay : float, default 1.0
        Coefficient of the inverse-square repulsion, in length³/s² (gdx-ai
        ``decayCoefficient``): a neighbour at distance d pushes with ``decay / d²``, at
        most ``a_max``. Must be >= 0; 0 gives no push.
"""
        + _PROXIMITY_PARAMS
    )

    _rule = "separation"

    def __init__(
        self,
        radius: float = 1.0,
        decay: float = 1.0,
        *,
        proximity: str = "radius",
        angle: float = math.pi,
    ) -> None:
        super().__init__(radius, proximity=proximity, angle=angle)
        self.decay = _num("Separation", "decay", decay)


class Alignment(_Group):
    __doc__ = (
        """Alignment: the neighbours' mean velocity minus the agent's, ``|a| <= a_max``
    (gdx-ai Alignment). No neighbour: 0.
    """
        + _PROXIMITY_DOC
        + """
    Parameters
    ----------
"""
        + _RADIUS_PARAM.format(default="1.0")
        + _PROXIMITY_PARAMS
    )

    _rule = "alignment"


class Cohesion(_Group):
    __doc__ = (
        """Cohesion: seek the neighbours' centre of mass (gdx-ai Cohesion). No neighbour: 0.
    """
        + _PROXIMITY_DOC
        + """
    Parameters
    ----------
"""
        + _RADIUS_PARAM.format(default="1.0")
        + _PROXIMITY_PARAMS
    )

    _rule = "cohesion"


class CollisionAvoidance(Behaviour):
    __doc__ = (
        """CollisionAvoidance (gdx-ai): among the neighbours that are approaching (relative
    speed > 0 and a time of closest approach ``t > 0``) and whose estimated closest
    distance ``|r| − |w|·t`` is within the sum of the radii, the first (least ``t``; ties: the
    lowest agent id, gdx-ai's first reported); full acceleration away from where it will be
    then (from where it is when they already overlap or would meet exactly).

    ``push_overlapping=True`` (not gdx-ai, contextsteer's former rule): a neighbour that
    already overlaps counts at ``t = 0`` even when it is not approaching (same velocity,
    moving apart), so overlapping agents push apart. gdx-ai ignores it.
    """
        + _PROXIMITY_DOC
        + """
    Parameters
    ----------
"""
        + _RADIUS_PARAM.format(default="5.0")
        + _PROXIMITY_PARAMS
        + """    push_overlapping : bool, default False
        Keyword-only. Count an overlapping neighbour at ``t = 0`` even when it is not
        approaching (ties at ``t = 0``: the nearest, then the lowest id). False is gdx-ai.
        A bool (or 0 and 1), else a ``TypeError``.

    Examples
    --------
    >>> import contextsteer as cs
    >>> from contextsteer import classic
    >>> agents = cs.Agents(2)        # overlapping, same velocity: no collision ahead
    >>> _ = agents.add([[0, 0], [1.5, 0]], velocity=[[1, 0], [1, 0]], radius=1, max_accel=1)
    >>> classic.accelerations(None, agents, classic.CollisionAvoidance(radius=10))
    array([[0., 0.],
           [0., 0.]], dtype=float32)
    >>> push = classic.CollisionAvoidance(radius=10, push_overlapping=True)
    >>> classic.accelerations(None, agents, push)
    array([[-1.,  0.],
           [ 1.,  0.]], dtype=float32)
    """
    )

    _kind = "collision_avoidance"

    def __init__(
        self,
        radius: float = 5.0,
        *,
        proximity: str = "radius",
        angle: float = math.pi,
        push_overlapping: bool = False,
    ) -> None:
        self.radius = _num("CollisionAvoidance", "radius", radius, positive=True, length=True)
        self.angle = _proximity("CollisionAvoidance", proximity, angle)
        self.proximity = proximity
        self.push_overlapping = _checks.flag(
            "CollisionAvoidance: push_overlapping", push_overlapping
        )

    def _params(self):
        return {
            "radius": self.radius,
            "proximity": self.proximity,
            "angle": self.angle,
            "push_overlapping": self.push_overlapping,
        }


class RaycastObstacleAvoidance(Behaviour):
    """RaycastObstacleAvoidance: rays along the velocity against the world's walls, in one
    of gdx-ai's configurations: ``"single"`` (one ray of ``length``), ``"parallel"`` (two of
    ``length``, ``side_offset`` to either side), ``"whiskers"`` (a central ray of ``length``
    and two of ``whisker_length`` at ``±whisker_angle`` radians). At the hit q closest to
    the agent (ties: gdx-ai's ray order) with normal n: seek
    ``q + n·(r + distance_from_boundary)``, ``r`` the agent's radius, as gdx-ai does
    (``include_radius=False``: ``q + n·distance_from_boundary``, contextsteer's former
    target). Nothing when still or clear, or without a world.

    Parameters
    ----------
    config : {"single", "parallel", "whiskers"}, default "whiskers"
        The rays (gdx-ai's ``rayConfiguration``): SingleRayConfiguration,
        ParallelSideRayConfiguration, CentralRayWithWhiskersConfiguration. Any other value
        raises ``ValueError``.
    length : float, default 2.0
        Keyword-only. Length of the ray (``"single"``, gdx-ai ``length``), of both rays
        (``"parallel"``, gdx-ai ``length``) or of the central ray (``"whiskers"``, gdx-ai
        ``rayLength``), whatever the speed. Must be > 0.
    side_offset : float, default 0.5
        Keyword-only. ``"parallel"`` only: sideways distance of each ray's start from the
        agent's centre (gdx-ai ``sideOffset``). Must be >= 0 (checked for every config).
    whisker_length : float, default 1.0
        Keyword-only. ``"whiskers"`` only: length of the two whiskers (gdx-ai
        ``whiskerLength``). Must be > 0 (checked for every config).
    whisker_angle : float, default 0.5
        Keyword-only. ``"whiskers"`` only: angle in radians between each whisker and the
        velocity (gdx-ai ``whiskerAngle``). Must be in [0, π] (checked for every config).
    distance_from_boundary : float, default 1.0
        Keyword-only. How far (length) beyond the hit, along the wall's normal, the seek
        target lies, on top of the agent's radius (gdx-ai ``distanceFromBoundary``). Must be
        >= 0.
    layers : int, default 0xFFFFFFFF
        Keyword-only. The rays see only the walls whose layer mask shares a bit with this
        one (not gdx-ai, where the ``raycastCollisionDetector`` decides). Refused with
        ``ValueError``: anything but an int in [0, 2**32) (bools included).
    include_radius : bool, default True
        Keyword-only. Add the agent's radius to ``distance_from_boundary`` (True: gdx-ai's
        ``boundingRadius + distanceFromBoundary``). A bool (or 0 and 1), else a ``TypeError``.
    """

    _kind = "raycast_avoidance"

    def __init__(
        self,
        config: str = "whiskers",
        *,
        length: float = 2.0,
        side_offset: float = 0.5,
        whisker_length: float = 1.0,
        whisker_angle: float = 0.5,
        distance_from_boundary: float = 1.0,
        layers: int = 0xFFFFFFFF,
        include_radius: bool = True,
    ) -> None:
        if config not in RAY_CONFIGS:
            raise ValueError(
                f"RaycastObstacleAvoidance: config must be one of {RAY_CONFIGS}, got {config!r}"
            )
        self.config = config
        self.length = _num("RaycastObstacleAvoidance", "length", length, positive=True, length=True)
        self.side_offset = _num("RaycastObstacleAvoidance", "side_offset", side_offset, length=True)
        self.whisker_length = _num(
            "RaycastObstacleAvoidance", "whisker_length", whisker_length, positive=True, length=True
        )
        self.whisker_angle = _num("RaycastObstacleAvoidance", "whisker_angle", whisker_angle)
        if self.whisker_angle > math.pi:
            raise ValueError(
                f"RaycastObstacleAvoidance: whisker_angle must be in [0, pi], got {whisker_angle}"
            )
        self.distance_from_boundary = _num(
            "RaycastObstacleAvoidance",
            "distance_from_boundary",
            distance_from_boundary,
            length=True,
        )
        if isinstance(layers, bool) or not _checks.is_int(layers) or not 0 <= layers < 2**32:
            raise ValueError(
                f"RaycastObstacleAvoidance: layers must be a 32-bit mask, got {layers!r}"
            )
        self.layers = int(layers)
        self.include_radius = _checks.flag(
            "RaycastObstacleAvoidance: include_radius", include_radius
        )

    def _params(self):
        return {
            "include_radius": self.include_radius,
            "config": self.config,
            "length": self.length,
            "side_offset": self.side_offset,
            "whisker_length": self.whisker_length,
            "whisker_angle": self.whisker_angle,
            "distance_from_boundary": self.distance_from_boundary,
            "layers": self.layers,
        }


PATH_ARRIVALS = ("slowing_radius", "end", "off")


class FollowPath(Behaviour):
    """FollowPath (gdx-ai): seek the path point ``path_offset`` (arc length) beyond the
    closest point to ``p + v·prediction``; on an open path, Arrive there instead
    (``tolerance``, ``slowing_radius``, ``time_to_target``) according to ``arrive``:

    - ``"slowing_radius"`` (default, gdx-ai with arriveEnabled): once the target offset
      ``s`` passes ``length − slowing_radius`` (or, for a negative ``path_offset``, falls
      below ``slowing_radius``, arriving at the start);
    - ``"end"`` (contextsteer's former rule): only once ``s >= length``;
    - ``"off"`` (gdx-ai's ``setArriveEnabled(false)``): always seek.

    On a closed path the behaviour always seeks.

    Parameters
    ----------
    path : Path
        The path to follow, a :class:`contextsteer.Path` (gdx-ai ``path``, a LinePath);
        anything else raises ``TypeError``. Kept by reference.
    path_offset : float, default 1.0
        Keyword-only. Arc length (length) from the closest point to the seek target (gdx-ai
        ``pathOffset``); negative values follow the path backwards. Any finite value.
    prediction : float, default 0.0
        Keyword-only. Seconds ahead: the closest point is taken to ``p + v·prediction``
        (gdx-ai ``predictionTime``). Must be >= 0.
    slowing_radius : float, default 1.0
        Keyword-only. Distance (length) from the path's end (or start) within which
        ``arrive="slowing_radius"`` arrives, and Arrive's slowing radius (gdx-ai
        ``decelerationRadius``). Must be > 0.
    arrive : {"slowing_radius", "end", "off"}, default "slowing_radius"
        Keyword-only. When to Arrive instead of seek, as listed above (gdx-ai
        ``arriveEnabled``). Any other value raises ``ValueError``.
    tolerance : float, default 0.0
        Keyword-only. Arrive's tolerance (length): within it the behaviour asks for 0
        (gdx-ai ``arrivalTolerance``). Must be >= 0.
    time_to_target : float, default 0.1
        Keyword-only. Arrive's time to target in seconds (gdx-ai ``timeToTarget``). Must
        be > 0.

    Examples
    --------
    >>> import contextsteer as cs
    >>> from contextsteer import classic
    >>> path = cs.Path([[0, 0], [10, 0]], closed=False)
    >>> agents = cs.Agents(1); _ = agents.add([[6, 1]], max_speed=2, max_accel=10)
    >>> near = classic.FollowPath(path, path_offset=1, slowing_radius=5)   # s = 7 > 10 - 5
    >>> classic.accelerations(None, agents, near).round(3)                 # Arrive at (7, 0)
    array([[ 4., -4.]], dtype=float32)
    >>> end = classic.FollowPath(path, path_offset=1, slowing_radius=5, arrive="end")
    >>> classic.accelerations(None, agents, end).round(3)                  # seek (7, 0)
    array([[ 7.071, -7.071]], dtype=float32)
    """

    _kind = "follow_path"

    def __init__(
        self,
        path: Path,
        *,
        path_offset: float = 1.0,
        prediction: float = 0.0,
        slowing_radius: float = 1.0,
        arrive: str = "slowing_radius",
        tolerance: float = 0.0,
        time_to_target: float = 0.1,
    ) -> None:
        from .path import Path

        if not isinstance(path, Path):
            raise TypeError(
                f"FollowPath: path must be a contextsteer.Path, got {type(path).__name__}"
            )
        if arrive not in PATH_ARRIVALS:
            raise ValueError(f"FollowPath: arrive must be one of {PATH_ARRIVALS}, got {arrive!r}")
        self.path = path
        self.path_offset = _num("FollowPath", "path_offset", path_offset, None, length=True)
        self.prediction = _num("FollowPath", "prediction", prediction)
        self.slowing_radius = _num(
            "FollowPath", "slowing_radius", slowing_radius, positive=True, length=True
        )
        self.arrive = arrive
        self.tolerance = _num("FollowPath", "tolerance", tolerance, length=True)
        self.time_to_target = _num("FollowPath", "time_to_target", time_to_target, positive=True)

    def _params(self):
        return {
            "path": self.path._path,
            "path_offset": self.path_offset,
            "prediction": self.prediction,
            "slowing_radius": self.slowing_radius,
            "arrive": self.arrive,
            "tolerance": self.tolerance,
            "time_to_target": self.time_to_target,
        }


class FollowFlowField(Behaviour):
    """FollowFlowField: sample the flow at ``p + v·prediction`` and ask for the velocity
    ``f·s_max``: ``a = f·s_max − v``, ``|a| <= a_max`` (gdx-ai).

    Parameters
    ----------
    field : array_like, shape (rows, cols, 2)
        Flow vectors at the grid nodes: ``field[r, c]`` sits at ``origin + (c, r)·cell``.
        Sampled bilinearly; points outside the grid take the nearest edge's value. Usually
        unit vectors (a shorter one asks for a slower walk). Copied to float32 (gdx-ai
        ``flowField``, any FlowField object). The copy is kept read-only as the ``field``
        attribute. Refused with ``ValueError``: another shape, no rows or columns,
        non-finite values or values beyond float32; complex values raise ``TypeError``.
    origin : (x, y), default (0.0, 0.0)
        Keyword-only. Position of node (0, 0). Refused with ``ValueError``: anything but two
        finite numbers.
    cell : float, default 1.0
        Keyword-only. Node spacing (length), > 0.
    prediction : float, default 0.0
        Keyword-only. Seconds ahead to sample, at ``p + v·prediction`` (gdx-ai
        ``predictionTime``), >= 0.
    """

    _kind = "flow_field"

    def __init__(
        self,
        field: ArrayLike,
        *,
        origin: ArrayLike = (0.0, 0.0),
        cell: float = 1.0,
        prediction: float = 0.0,
    ) -> None:
        f = _f32(field, "FollowFlowField: field").copy()  # documented as a copy
        if f.ndim != 3 or f.shape[2] != 2 or f.shape[0] < 1 or f.shape[1] < 1:
            raise ValueError(
                f"FollowFlowField: field must have shape (rows, cols, 2), got {np.shape(field)}"
            )
        if not np.isfinite(f).all():
            raise ValueError("FollowFlowField: field must be finite")
        if (np.abs(f) >= _MAX_MAGNITUDE).any():
            raise ValueError("FollowFlowField: field values must be below 2^60 in magnitude")
        # Read-only as the parameters are: a running simulation borrows them.
        f.flags.writeable = False
        origin32 = _point("FollowFlowField", "origin", origin)
        origin32.flags.writeable = False
        self.field = f
        self.origin = origin32
        self.cell = _num("FollowFlowField", "cell", cell, positive=True, length=True)
        self.prediction = _num("FollowFlowField", "prediction", prediction)

    @_checks.safe_repr
    def __repr__(self) -> str:
        return (
            f"FollowFlowField(field=<{self.field.shape[0]}x{self.field.shape[1]}>, "
            f"origin={tuple(self.origin.tolist())}, cell={self.cell}, prediction={self.prediction})"
        )

    def _params(self):
        return {
            "field": self.field,
            "origin": self.origin,
            "cell": self.cell,
            "prediction": self.prediction,
        }


class Interpose(Behaviour):
    """Interpose: Arrive at the point at ``ratio`` between agents ``a`` and ``b`` (0 at
    ``a``), both extrapolated by the time the agent needs to reach the current point at
    ``s_max`` (gdx-ai Interpose, which extends Arrive). Either agent dead: 0.

    Parameters
    ----------
    a, b : int
        The two agent ids (gdx-ai ``agentA``, ``agentB``). Refused with ``ValueError``:
        anything but an int in [0, 2**31) (bools included). An id at or beyond
        ``Agents.capacity`` raises ``IndexError`` when the steering is evaluated or the
        simulation is built. Not refused: ``a == b``, or the agent's own id.
    ratio : float, default 0.5
        Keyword-only. Where between them: 0 at ``a``, 1 at ``b`` (gdx-ai
        ``interpositionRatio``). Any finite value; outside [0, 1] the point lies on the line
        beyond ``a`` or ``b``.
    slowing_radius : float, default 1.0
        Keyword-only. Arrive's slowing radius (length, gdx-ai ``decelerationRadius``). Must
        be > 0.
    tolerance : float, default 0.0
        Keyword-only. Arrive's tolerance (length, gdx-ai ``arrivalTolerance``): within it
        the behaviour asks for 0. Must be >= 0.
    time_to_target : float, default 0.1
        Keyword-only. Arrive's time to target (seconds, gdx-ai ``timeToTarget``). Must be
        > 0.
    """

    _kind = "interpose"
    tolerance, time_to_target = 0.0, 0.1  # what pickles from before these existed ran with

    def __init__(
        self,
        a: int,
        b: int,
        *,
        ratio: float = 0.5,
        slowing_radius: float = 1.0,
        tolerance: float = 0.0,
        time_to_target: float = 0.1,
    ) -> None:
        for name, v in (("a", a), ("b", b)):
            if isinstance(v, bool) or not _checks.is_int(v) or not 0 <= v < 2**31:
                raise ValueError(f"Interpose: {name} must be an agent id in [0, 2**31), got {v!r}")
        self.a, self.b = int(a), int(b)
        self.ratio = _num("Interpose", "ratio", ratio, None)
        self.slowing_radius = _num(
            "Interpose", "slowing_radius", slowing_radius, positive=True, length=True
        )
        self.tolerance = _num("Interpose", "tolerance", tolerance, length=True)
        self.time_to_target = _num("Interpose", "time_to_target", time_to_target, positive=True)

    def _params(self):
        return {
            "a": self.a,
            "b": self.b,
            "ratio": self.ratio,
            "slowing_radius": self.slowing_radius,
            "tolerance": self.tolerance,
            "time_to_target": self.time_to_target,
        }


class Hide(_Targeted):
    """Hide from a hunter (the target) behind the world's circles: Arrive at the closest
    spot ``c + unit(c − hunter)·(r + distance_from_boundary)`` among the circles within
    ``max_distance``; nothing when there is none (gdx-ai Hide, which extends Arrive).
    "Closest" is to the agent. Without a world: 0.

    Parameters
    ----------
    target : (x, y), optional
        A fixed hunter position, shared by every agent (gdx-ai's ``target``). Default
        (neither ``target`` nor ``agents``): each agent's own ``Agents.target``. Refused with
        ``ValueError``: anything but two finite numbers (text, bools, objects or a masked
        array: ``TypeError``), or both ``target`` and ``agents``.
    agents : int or sequence of int, optional
        Keyword-only. Agent ids: the hunter is the nearest alive one of them other than the
        agent itself (centre distance; ties: the first listed); when none is alive the
        behaviour asks for 0. Refused with ``ValueError``: an empty list, non-integer ids
        (bools included), ids outside [0, 2**31). An id at or beyond ``Agents.capacity``
        raises ``IndexError`` when the steering is evaluated or the simulation is built.
    distance_from_boundary : float, default 1.0
        Keyword-only. Distance (length) of the hiding spot beyond the circle's edge
        (gdx-ai ``distanceFromBoundary``). Must be >= 0.
    max_distance : float, default inf
        Keyword-only. Only circles whose centre is within this distance (length) of the
        agent are used (gdx-ai: the obstacles its ``proximity`` reports). Must be >= 0;
        ``inf`` (the default) uses every circle.
    slowing_radius : float, default 1.0
        Keyword-only. Arrive's slowing radius (length, gdx-ai ``decelerationRadius``). Must
        be > 0.
    tolerance : float, default 0.0
        Keyword-only. Arrive's tolerance (length, gdx-ai ``arrivalTolerance``): within it
        the behaviour asks for 0. Must be >= 0.
    time_to_target : float, default 0.1
        Keyword-only. Arrive's time to target (seconds, gdx-ai ``timeToTarget``). Must be
        > 0.
    """

    _kind = "hide"
    tolerance, time_to_target = 0.0, 0.1  # what pickles from before these existed ran with

    def __init__(
        self,
        target: ArrayLike | None = None,
        *,
        agents: ArrayLike | None = None,
        distance_from_boundary: float = 1.0,
        max_distance: float = math.inf,
        slowing_radius: float = 1.0,
        tolerance: float = 0.0,
        time_to_target: float = 0.1,
    ) -> None:
        super().__init__(target, agents=agents)
        self.distance_from_boundary = _num(
            "Hide", "distance_from_boundary", distance_from_boundary, length=True
        )
        self.max_distance = _num("Hide", "max_distance", max_distance, allow_inf=True, length=True)
        self.slowing_radius = _num(
            "Hide", "slowing_radius", slowing_radius, positive=True, length=True
        )
        self.tolerance = _num("Hide", "tolerance", tolerance, length=True)
        self.time_to_target = _num("Hide", "time_to_target", time_to_target, positive=True)

    def _params(self):
        return {
            **self._t,
            "distance_from_boundary": self.distance_from_boundary,
            "max_distance": self.max_distance,
            "slowing_radius": self.slowing_radius,
            "tolerance": self.tolerance,
            "time_to_target": self.time_to_target,
        }


class Blended(_ReadOnly):
    """A weighted sum of behaviours, truncated to ``a_max`` (gdx-ai BlendedSteering). The
    weights need not sum to 1.

    Parameters
    ----------
    items : iterable of Behaviour or (Behaviour, weight)
        The behaviours and their weights, summed in order (gdx-ai's list of
        ``BehaviorAndWeight``). A bare behaviour has weight 1. A weight is a finite float,
        negative values included. Refused: anything but a classic behaviour or a
        (behaviour, weight) tuple, including a nested Blended or Priority (``TypeError``),
        and an empty iterable (``ValueError``).
    """

    def __init__(self, items: Iterable[Behaviour | tuple[Behaviour, float]]):
        entries = []
        for item in items:
            if isinstance(item, Behaviour):
                b, w = item, 1.0
            elif isinstance(item, tuple) and len(item) == 2:
                b, w = item
            else:
                raise TypeError(
                    f"Blended: expected classic behaviours or (behaviour, weight) pairs, "
                    f"got {type(item).__name__}"
                )
            if not isinstance(b, Behaviour):
                raise TypeError(f"Blended: expected classic behaviours, got {type(b).__name__}")
            entries.append((b, _num("Blended", "weight", w, None)))
        if not entries:
            raise ValueError("Blended: no behaviours")
        self.items = tuple(entries)

    _truncate = True

    def _group(self) -> list:
        return [(b._kind, b._params(), w) for b, w in self.items]

    def _spec(self) -> dict:
        return {"groups": [self._group()], "truncate": [self._truncate], "epsilon": 0.0}

    @_checks.safe_repr
    def __repr__(self) -> str:
        return f"Blended({list(self.items)!r})"


def _bare(b: Behaviour) -> Blended:
    # A behaviour on its own: gdx-ai runs it without a blend, so nothing truncates it.
    g = Blended([b])
    g._truncate = False
    return g


class Priority(_ReadOnly):
    """Blended groups in priority order: the first whose acceleration is longer than
    ``epsilon`` steers (gdx-ai PrioritySteering); if none, the last group's.

    Parameters
    ----------
    groups : sequence of Blended or Behaviour
        In priority order (gdx-ai's ``behaviors``). A bare behaviour is a group of its own,
        evaluated as gdx-ai does, without the blend's truncation (this matters only for
        Separation). Refused: any other item, a Priority included (``TypeError``), and an
        empty sequence (``ValueError``).
    epsilon : float, default 1e-3
        Accelerations up to this length (length/s²) count as "asks for nothing" (gdx-ai
        ``epsilon``). Must be >= 0.
    """

    def __init__(self, groups: Sequence[Blended | Behaviour], epsilon: float = 1e-3):
        gs = []
        for g in groups:
            if isinstance(g, Behaviour):
                g = _bare(g)
            if not isinstance(g, Blended):
                raise TypeError(
                    f"Priority: expected Blended groups or behaviours, got {type(g).__name__}"
                )
            gs.append(g)
        if not gs:
            raise ValueError("Priority: no groups")
        self.groups = tuple(gs)
        self.epsilon = _num("Priority", "epsilon", epsilon)

    def _spec(self) -> dict:
        return {
            "groups": [g._group() for g in self.groups],
            "truncate": [g._truncate for g in self.groups],
            "epsilon": self.epsilon,
        }

    @_checks.safe_repr
    def __repr__(self) -> str:
        return f"Priority({list(self.groups)!r}, epsilon={self.epsilon})"


def as_steering(steering: Blended | Priority | Behaviour) -> Blended | Priority:
    """A classic steering from a Blended, a Priority or a single behaviour (run bare, as
    gdx-ai runs it: not truncated)."""
    if isinstance(steering, Behaviour):
        return _bare(steering)
    if isinstance(steering, (Blended, Priority)):
        return steering
    raise TypeError(
        f"expected a classic Blended, Priority or behaviour, got {type(steering).__name__}"
    )


def accelerations(
    world: World | None,
    agents: Agents,
    steering: Blended | Priority | Behaviour,
    *,
    time: float = 0.0,
    max_neighbours: int = _checks.MAX_NEIGHBOURS,
    max_neighbors: int | None = None,
) -> np.ndarray:
    """The linear acceleration every agent's classic steering asks for, ``(N, 2)`` float32.

    Dead slots get 0; every row is at most the agent's ``max_accel`` long, except where a
    bare Separation (alone or a Priority item, as in gdx-ai) sums past it. Group
    behaviours see the ``max_neighbours`` nearest neighbours within their proximity, as in a
    simulation with the default ``max_neighbours`` (``max_neighbors`` is a deprecated
    spelling that warns).

    Parameters
    ----------
    world : World or None
        The walls and circles that RaycastObstacleAvoidance and Hide read; None: those two
        ask for 0. Anything but a World or None raises ``TypeError``.
    agents : Agents
        The agents' state at the time of evaluation (positions, velocities, headings,
        radii, limits, targets). Read, not changed.
    steering : Blended, Priority or Behaviour
        A classic steering; a single behaviour runs bare, as gdx-ai runs it (not
        truncated).
    time : float, default 0.0
        Keyword-only. Simulation time in seconds, read by Wander. Must be finite and >= 0.
        A ``walk="random"`` Wander starts a fresh walk on every call, so it gives θ = 0.
    max_neighbours : int, default 16
        Keyword-only. Neighbours per agent in the neighbour lists, an int in [1, 256].
    max_neighbors : int, optional
        Keyword-only. Deprecated spelling of ``max_neighbours``: warns
        (``DeprecationWarning``) and, when given, replaces it.

    Returns
    -------
    ndarray of float32, shape (N, 2)
        One row per agent slot, ``N = agents.capacity``.

    Raises
    ------
    TypeError
        ``steering`` is not classic, ``agents`` not an Agents.
    ValueError / IndexError
        Bad parameters, an agent id out of range, a negative or non-finite ``time``.
    """
    spec = as_steering(steering)._spec()
    if world is not None and not isinstance(world, (World, _core.World)):
        raise TypeError(
            f"accelerations: world must be a contextsteer.World or None, got {type(world).__name__}"
        )
    core_world = _core_world(world)
    _checks.agents("accelerations", agents)
    max_neighbours = _checks.max_neighbours("accelerations", max_neighbours, max_neighbors)
    if isinstance(max_neighbours, bool) or not _checks.is_int(max_neighbours):
        raise TypeError(f"accelerations: max_neighbours must be an int, got {max_neighbours!r}")
    time = _num("accelerations", "time", time)
    return _core.classic_accelerations(core_world, agents, spec, time, int(max_neighbours))
