"""Motion models: turn a chosen direction and strength into the agents' next state.

Each model reads state t (position, velocity, heading and the per-agent limits of an
:class:`~contextsteer.Agents`) and writes state t+1 into new buffers (double buffering).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, _core
from ._checks import MAX_COORDINATE
from .maps import _MAX_MAGNITUDE, _f32

if TYPE_CHECKING:
    from .agents import Agents

__all__ = ["Accel", "Lerp", "MotionModel", "MotionState", "Vehicle"]


MIN_TIME = 1e-30
"""The shortest ``dt`` and ``time_to_target`` (s): the motion divides velocity changes by
them, which must stay finite in float32."""

MAX_DT = 1e6
"""The longest ``dt`` (s), as :meth:`Simulation.step`'s: positions move by at most
``max_speed * dt``."""


class MotionState(NamedTuple):
    """Next state: ``position`` (N, 2), ``velocity`` (N, 2), ``heading`` (N,), float32."""

    position: np.ndarray
    velocity: np.ndarray
    heading: np.ndarray


def _finite(
    owner: str, name: str, value: Any, low: float | None = None, high: float | None = None
) -> float:
    if isinstance(value, bool) or not _checks.is_real(value):
        raise TypeError(f"{owner}: {name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or (low is not None and v < low) or (high is not None and v > high):
        rng = (
            f" in [{low}, {high}]"
            if high is not None
            else (f" >= {low}" if low is not None else "")
        )
        raise ValueError(f"{owner}: {name} must be finite{rng}, got {value!r}")
    return v


SPEEDS = ("strength", "max")
ORDERS = ("velocity_first", "position_first")


def _speed_option(owner: str, speed: str) -> None:
    if speed not in SPEEDS:
        raise ValueError(f"{owner}: speed must be one of {SPEEDS}, got {speed!r}")


@dataclasses.dataclass(frozen=True, eq=False)
class MotionModel:
    """Base of the motion models."""

    kind: ClassVar[str] = ""

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _config(self) -> tuple[str, dict]:
        return self.kind, {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def apply(
        self, agents: Agents, direction: ArrayLike, strength: ArrayLike, dt: float
    ) -> MotionState:
        """Compute the next state of every agent without changing ``agents``.

        Parameters
        ----------
        agents : Agents
        direction : array_like, shape (capacity, 2)
            Chosen directions (normalised here when non-zero; zero means none chosen).
        strength : array_like, shape (capacity,)
            Chosen strengths, clamped to [0, 1].
        dt : float
            Time step in seconds: 0, or in [1e-30, 1e6] as :meth:`Simulation.step`'s.

        Returns
        -------
        MotionState
            New (capacity, ...) arrays; dead agents keep their state. A position stops
            at the edge of the accepted coordinates, ±1e8 (``Simulation.step`` stops
            there too), and the velocity's component out of the range is dropped:
            otherwise every later call on the agents would refuse them.

        Examples
        --------
        >>> import numpy as np
        >>> import contextsteer as cs
        >>> agents = cs.Agents(1); _ = agents.add([0, 0], max_speed=2.0, steer_force=0.5)
        >>> s = cs.Lerp().apply(agents, [[1, 0]], [1.0], dt=0.5)
        >>> s.velocity, s.position
        (array([[1., 0.]], dtype=float32), array([[0.5, 0. ]], dtype=float32))
        """
        d = _f32(direction, "direction")
        s = _f32(strength, "strength")
        step = _finite("apply", "dt", dt, low=0.0, high=MAX_DT)
        if 0 < step < MIN_TIME:
            raise ValueError(f"apply: dt must be 0 or at least {MIN_TIME:g} s, got {dt!r}")
        pos, vel, head = _core.apply_motion(agents, self, d, s, step)
        # (Alive rows only: a dead row keeps its state, whatever it holds.)
        out = (np.abs(pos) > MAX_COORDINATE) & np.asarray(agents.alive)[:, None]
        if out.any():
            pos[out] = np.copysign(np.float32(MAX_COORDINATE), pos[out])
            vel[out & (vel * pos > 0)] = 0.0
        return MotionState(pos, vel, head)

    def step(
        self, agents: Agents, direction: ArrayLike, strength: ArrayLike, dt: float
    ) -> MotionState:
        """:meth:`apply`, then write the new state into ``agents``; returns it too."""
        s = self.apply(agents, direction, strength, dt)
        agents.position[...] = s.position
        agents.velocity[...] = s.velocity
        agents.heading[...] = s.heading
        return s


@dataclasses.dataclass(frozen=True, eq=False)
class Lerp(MotionModel):
    """The Godot recipe: ``v ← lerp(v, direction·max_speed·σ, steer_force)``.

    The lerp factor applies per step (as in the recipe); speed is clamped to
    ``max_speed``; the heading follows the velocity. ``steer_force=None`` uses each
    agent's own ``agents.steer_force``. ``speed="strength"`` (default): σ is the chosen
    strength, so weak interest (Arrive, Lewis's speed control) slows the agent down;
    ``speed="max"``: σ = 1, the recipe's ``chosen_dir * max_speed`` — full speed whatever
    the interest (zero only when no direction was chosen).
    """

    steer_force: float | None = None
    speed: str = "strength"
    kind: ClassVar[str] = "lerp"

    def __post_init__(self) -> None:
        if self.steer_force is not None:
            self._set("steer_force", _finite("Lerp", "steer_force", self.steer_force, 0.0, 1.0))
        _speed_option("Lerp", self.speed)


@dataclasses.dataclass(frozen=True, eq=False)
class Accel(MotionModel):
    """gdx-ai style: acceleration-limited steering towards the desired velocity.

    ``a = (direction·max_speed·strength - v)/time_to_target`` clamped to ``max_accel``,
    speed clamped to ``max_speed``. ``time_to_target=None`` means one step. The heading
    faces the velocity, or with ``independent_facing=True`` turns towards it at most
    ``max_turn_rate·dt`` per step (gdx-ai LookWhereYouAreGoing; a velocity straight
    behind, within 1e-5 rad, turns it counter-clockwise). ``speed="max"``: the
    desired velocity is ``direction·max_speed`` whatever the strength.

    ``order`` is the integration: ``"velocity_first"`` (default, semi-implicit Euler) sets
    ``v' = v + a·dt`` and moves ``p' = p + v'·dt``; ``"position_first"`` is gdx-ai's
    ``applySteering``: ``p' = p + v·dt`` with the old velocity, then
    ``v' = limit(v + a·dt, max_speed)``, and ``a`` is not capped at ``max_accel`` (gdx-ai
    leaves that to the behaviours). With a classic steering and the default
    ``time_to_target`` it reproduces gdx-ai's trajectories to float32 rounding.
    """

    time_to_target: float | None = None
    independent_facing: bool = False
    speed: str = "strength"
    order: str = "velocity_first"
    kind: ClassVar[str] = "accel"

    def __post_init__(self) -> None:
        if self.time_to_target is not None:
            v = _finite("Accel", "time_to_target", self.time_to_target, 0.0)
            if not v < _MAX_MAGNITUDE:
                raise ValueError(f"Accel: time_to_target must be below 2^60 s, got {v}")
            # 1/time_to_target times a velocity change (< 2^28) must stay finite in float32.
            if not v >= MIN_TIME:
                raise ValueError(f"Accel: time_to_target must be >= {MIN_TIME:g} s, got {v}")
            self._set("time_to_target", v)
        self._set(
            "independent_facing",
            _checks.flag("Accel: independent_facing", self.independent_facing),
        )
        _speed_option("Accel", self.speed)
        if self.order not in ORDERS:
            raise ValueError(f"Accel: order must be one of {ORDERS}, got {self.order!r}")


@dataclasses.dataclass(frozen=True, eq=False)
class Vehicle(MotionModel):
    """A car: velocity along the heading, turn-rate limited, turns only as it rolls.

    The heading turns towards the chosen direction by at most
    ``max_turn_rate·dt·min(1, s/(full_turn_speed·max_speed))``, where ``s`` is the larger of
    the speed it had and the speed it rolls at this step (so that a car stopped nose-first
    against a wall, its speed zeroed by the slide, turns as it starts to roll); Fray's brake rule sets
    the target speed to ``brake_speed·max_speed·strength`` when the chosen direction is
    more than ``brake_angle`` radians off the heading (else ``max_speed·strength``; 0 when
    no direction was chosen); speed changes by at most ``max_accel·dt``. The speed is the
    velocity's length when it is within 90° of the heading, so a slide along a wall keeps
    the car's speed (with the part along the heading alone, a car stopped nose-first
    against a wall slid too slowly to turn free), and so does a shove up to 90° aside; a
    velocity further off (a shove, a bounce, one written by the caller) rolls the car
    backwards along its heading, and ``max_accel`` slows it before it drives forwards.
    Both rules
    allow 1e-5 rad for the rounding of absolute angles: a direction exactly
    ``brake_angle`` off never brakes, and one straight behind turns counter-clockwise,
    whatever the heading. The default
    crawl (``brake_speed=0.1``) lets a stopped car turn round; 0 stops it dead.
    ``speed="max"`` takes the strength as 1.

    The car's ``max_accel`` is its own (``Agents.add``'s default is 1 m/s², so a 50 m/s
    car given no other takes 50 s to reach top speed). With slots that turn with the
    heading (``rotate=True``), ``resolve="mask"`` and ``choose="vector_sum"``, a car on a
    straight can weave by a few degrees every step: the masked run of slots gains or loses
    an edge slot with the sign of the heading error, so the sum answers an error ``e``
    with about ``-e``, and a car that turns as fast as that follows it exactly.
    ``choose="subslot"`` (or ``blend``) removes it.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> car = cs.Agents(1)
    >>> _ = car.add([0, 0], velocity=[2, 0], max_speed=2, max_accel=1, max_turn_rate=1)
    >>> s = cs.Vehicle().apply(car, [[0, 1]], [1.0], dt=0.1)   # wants to go left
    >>> round(float(s.heading[0]), 3)     # turns at most 1 rad/s · 0.1 s
    0.1
    """

    brake_angle: float = math.pi / 2
    full_turn_speed: float = 0.25
    brake_speed: float = 0.1
    speed: str = "strength"
    kind: ClassVar[str] = "vehicle"

    def __post_init__(self) -> None:
        self._set("brake_angle", _finite("Vehicle", "brake_angle", self.brake_angle, 0.0, math.pi))
        fts = _finite("Vehicle", "full_turn_speed", self.full_turn_speed, 0.0, _MAX_MAGNITUDE)
        if fts > 0.0 and np.float32(fts) == 0.0:
            # 0 turns the scaling off: a stopped car would turn at the full rate.
            raise ValueError(
                f"Vehicle: full_turn_speed must be 0 (no scaling) or at least 1.4e-45, the "
                f"smallest float32 above 0, got {self.full_turn_speed!r}"
            )
        self._set("full_turn_speed", fts)
        self._set("brake_speed", _finite("Vehicle", "brake_speed", self.brake_speed, 0.0, 1.0))
        _speed_option("Vehicle", self.speed)
