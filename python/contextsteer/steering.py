"""The steering pipeline: behaviours plus the context-map engine's operators, by name.

A :class:`Steering` is a validated, immutable configuration; a
:class:`~contextsteer.Simulation` runs it for every agent inside its C++ step. Each stage
is the same kernel as the functional API (:func:`~contextsteer.combine`,
:func:`~contextsteer.spread`, :func:`~contextsteer.blend`, :func:`~contextsteer.resolve`,
:func:`~contextsteer.choose`), so composing those by hand gives the same numbers.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _checks, _modes
from .behaviours import Behaviour, _frozen_copy
from .maps import _f32

__all__ = ["STEERING_COMBINE_MODES", "Steering"]

#: Modes of ``Steering(combine=..., danger_combine=...)``: the engine's combine modes
#: except ``weighted_sum`` (behaviour weights already scale each map).
STEERING_COMBINE_MODES = _modes.names("steering_combine")
#: Maps ``Steering(spread_maps=...)`` spreads (a Python-side option, not a core mode).
_SPREAD_MAPS = ("danger", "interest", "both")
# The options of a Steering beside its behaviours, in the order of Steering._config().
_OPTIONS = (
    "combine",
    "danger_combine",
    "resolve",
    "threshold",
    "epsilon",
    "choose",
    "width",
    "contiguous",
    "spread",
    "spread_mode",
    "spread_maps",
    "blend",
    "rotate",
    "record",
    "max_neighbours",
    "hysteresis",
    "decision_phases",
)


def _int_in(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` as an int in [lo, hi]: TypeError for a bool or a non-integer (2.0 too),
    ValueError outside, as every other integer parameter of the library."""
    return _checks.integer(f"Steering: {name}", value, lo, hi)


def _flag(name: str, value: Any) -> bool:
    """``value`` as a bool: True, False (NumPy's too) or the ints 0 and 1, else TypeError
    (``rotate="no"`` read as True)."""
    return _checks.flag(f"Steering: {name}", value)


class Steering:
    """Behaviours and operators of the per-agent pipeline (docs/ARCHITECTURE.md).

    Per step and agent: every behaviour writes its interest or danger map; interest
    maps are merged by ``combine`` and danger maps by ``danger_combine``; optional
    post-processing spreads the maps over neighbouring slots and blends them with the
    previous step; ``resolve`` applies danger to interest; ``choose`` picks the heading,
    strength and slot.

    Parameters
    ----------
    behaviours : sequence of Behaviour
        Each with its own ``weight``. Names for ``Simulation.behaviour_maps`` are the
        class names, with ``_1``, ``_2`` ... appended to repeats.
    combine : {"max", "sum", "multiply", "min"}
        Merge of the interest maps (Unity/Fray: max; Lewis: multiply of normalised
        scores). ``weighted_sum`` is not offered: weights live on the behaviours.
    danger_combine : {"max", "sum", "multiply", "min"}
    resolve : {"mask", "subtract", "scale", "mask_min_danger", "avoid_opposite", "subtract_unclamped"}
        See :func:`~contextsteer.resolve`.
    choose : str, default "vector_sum"
        One of :data:`~contextsteer.CHOOSE_MODES` ("vector_sum", "argmax",
        "weighted_neighbours", "subslot", "subslot_linear", "argmax_always",
        "vector_sum_signed"). See :func:`~contextsteer.choose`.
    threshold : float, default 0
        ``resolve="mask"``: danger above it masks the slot (as in :func:`~contextsteer.resolve`).
        At 0 any danger masks, and :class:`~contextsteer.AgentDanger` writes a little
        well to the side of a neighbour, so two agents at a door can mask each other's
        only way through and stand for good; a small threshold (0.05) lets them through
        (README, "Agents").
    epsilon : float, >= 0, default 0
        ``resolve="mask_min_danger"``: tolerance above the least danger.
    width : int, default 2
        ``choose="weighted_neighbours"``: neighbours each side (as in
        :func:`~contextsteer.choose`).
    contiguous : bool, default True
        ``choose="vector_sum"``: sum only the best contiguous run of slots (True) or every
        slot (False).
    blend : float in [0, 1], optional
        Temporal blend of both maps with the previous step's:
        ``m ← m_prev + blend·(m - m_prev)`` (an agent's first step takes ``m``).
        Blended danger fades geometrically and reaches exactly 0 only when float32
        underflows (about 150 steps at blend 0.5, more at smaller values), so with
        ``resolve="mask_min_danger"`` give an ``epsilon`` (say 0.01): with 0, a slot
        dangerous long ago stays masked against slots that never were. With ``rotate``,
        the previous maps are first turned by the agent's change of heading since they
        were perceived (each slot reads them at its angle, linearly between the two
        slots either side), so a slot blends the same world direction.
    spread : array_like, optional
        Odd-length kernel (length ≤ K) spread over the ring after combining.
    spread_mode : {"max", "sum"}, default "max"
        How ``spread`` spreads: ``"max"`` dilates, ``"sum"`` blurs.
    spread_maps : {"danger", "interest", "both"}, default "danger"
        Which maps ``spread`` applies to.
    rotate : bool, default False
        Slots turn with each agent's heading (the Godot recipe: slot 0 is forward); the
        chosen direction is returned in the world frame.
    record : bool, default False
        Keep every behaviour's own maps (``Simulation.behaviour_maps``). Off: those maps
        live only in per-thread scratch and cost no memory traffic.
    max_neighbours : int, default 16
        Neighbours per agent in the shared neighbour query. (``max_neighbors`` is a
        deprecated spelling that warns.)
    hysteresis : float, >= 0, default 0
        Commitment to the last decision, on the slot the agent chose at its previous
        decision: before resolve, that slot's danger, if positive, is lowered by
        ``hysteresis`` (not below 0; the map keeps its value); before choose, its resolved
        value is multiplied by ``1 + hysteresis`` (saturating at 2^60 − 2^36). A small value
        (0.1–0.3) stops an agent flip-flopping between two nearly equal slots from one
        step to the next (the "reciprocal dance" of velocity-obstacle methods); 0 keeps
        every decision memoryless. With ``rotate``, the slot held is the one nearest the
        previous decision's world direction (not the same index of an agent that has
        turned since).
    decision_phases : int in [1, 64], default 1
        In :meth:`Simulation.step`, decide the agents in this many phases instead of all
        at once: agent ``i`` in phase ``i % decision_phases``, the phases in order, and
        each phase sees the agents of the phases before it moving at their new command
        (chosen direction × strength × max speed) instead of their velocity. A
        Gauss–Seidel sweep over the decisions: of two agents about to dodge each other,
        the later one sees the earlier one's dodge, where deciding at once both dodge,
        then both see the other off course and both swing back (the reciprocal dance of
        velocity-obstacle methods). The crowd preset (:func:`scenarios.crowd_steering`)
        uses 16: less turning in crowds (docs/crowd.md). Results stay bit-identical for
        any thread count. Costs a pass over the agents per phase; the agents of a phase
        are every ``decision_phases``-th index, which the caches like less than
        consecutive ones (crowd-track-10k: 6 % more instructions, about 30 % more time a
        step at 16 phases). The split
        :meth:`Simulation.perceive` / :meth:`Simulation.decide_and_move` perceives every
        agent before any decides, so it needs ``decision_phases=1``.

    Notes
    -----
    A :class:`~contextsteer.Simulation` reads these options once, when it is built (and
    checks them again then): assigning to an option of this object afterwards changes
    the next simulation built from it, not one already built.

    Raises
    ------
    ValueError
        An unknown mode (the message lists the valid ones), a bad number.
    TypeError
        A behaviour that is not a :class:`~contextsteer.Behaviour`, a switch that is not
        a bool, a ``blend`` or ``hysteresis`` that is not a real number, a ``width``,
        ``max_neighbours`` or ``decision_phases`` that is not an int (2.0 and True too).

    Examples
    --------
    >>> import contextsteer as cs
    >>> s = cs.Steering([cs.Seek(), cs.AgentDanger(radius=2)], resolve="subtract",
    ...                 choose="subslot")
    >>> s.names
    ('Seek', 'AgentDanger')
    >>> s.resolve, s.choose
    ('subtract', 'subslot')
    """

    def __init__(
        self,
        behaviours: Sequence[Behaviour],
        *,
        combine: str = "max",
        danger_combine: str = "max",
        resolve: str = "mask",
        choose: str = "vector_sum",
        threshold: float = 0.0,
        epsilon: float = 0.0,
        width: int = 2,
        contiguous: bool = True,
        blend: float | None = None,
        spread: Sequence[float] | np.ndarray | None = None,
        spread_mode: str = "max",
        spread_maps: str = "danger",
        rotate: bool = False,
        record: bool = False,
        max_neighbours: int = _checks.MAX_NEIGHBOURS,
        hysteresis: float = 0.0,
        decision_phases: int = 1,
        max_neighbors: int | None = None,
    ) -> None:
        if isinstance(behaviours, Behaviour):
            raise TypeError(
                f"Steering: behaviours must be a sequence of behaviours, got one "
                f"{type(behaviours).__name__}: put it in a list, [{type(behaviours).__name__}(...)]"
            )
        try:
            behaviours = tuple(behaviours)
        except TypeError:
            raise TypeError(
                "Steering: behaviours must be a sequence of contextsteer behaviours, got "
                f"{type(behaviours).__name__}"
            ) from None
        for b in behaviours:
            if not isinstance(b, Behaviour):
                kind = type(b)
                if kind.__module__.startswith("contextsteer.classic"):
                    # (cs.Seek is a context behaviour too: "got Seek" read as a contradiction)
                    raise TypeError(
                        f"Steering: behaviours must be context behaviours, got the classic "
                        f"contextsteer.classic.{kind.__name__}; a classic steering goes to "
                        "Simulation on its own, or as classic.Blended([...]) or "
                        "classic.Priority([...]), not in a Steering"
                    )
                raise TypeError(
                    f"Steering: behaviours must be contextsteer behaviours, got {kind.__name__}"
                )
        self.behaviours = behaviours
        self.combine = _modes.check("steering_combine", combine, "Steering", "combine")
        self.danger_combine = _modes.check(
            "steering_combine", danger_combine, "Steering", "danger_combine"
        )
        self.resolve = _modes.check("resolve", resolve, "Steering", "resolve")
        self.choose = _modes.check("choose", choose, "Steering", "choose")
        threshold = _checks.real("Steering: threshold", threshold)
        epsilon = _checks.real("Steering: epsilon", epsilon)
        for name, v in (("threshold", threshold), ("epsilon", epsilon)):
            if not math.isfinite(v):
                raise ValueError(f"Steering: {name} must be finite, got {v}")
        if float(epsilon) < 0:
            raise ValueError(f"Steering: epsilon must be >= 0, got {epsilon}")
        for name, v in (("threshold", threshold), ("epsilon", epsilon)):
            if not abs(float(v)) < 2.0**60:  # as cs.resolve: the maps' magnitude bound
                raise ValueError(f"Steering: {name} must be below 2^60 in magnitude, got {v}")
        self.threshold, self.epsilon = float(threshold), float(epsilon)
        width = _checks.integer("Steering: width", width, 0, 2**31 - 1)
        self.width, self.contiguous = width, _flag("contiguous", contiguous)
        if blend is not None:
            blend = _checks.real("Steering: blend", blend)
            if not 0.0 <= blend <= 1.0:
                raise ValueError(f"Steering: blend must be in [0, 1] or None, got {blend}")
        self.blend = blend
        kernel = None
        if spread is not None:
            kernel = np.array(_f32(spread, "Steering: spread"))  # (not the caller's array)
            if kernel.ndim != 1 or kernel.size % 2 == 0 or not np.isfinite(kernel).all():
                raise ValueError(
                    f"Steering: spread must be a finite kernel of odd length, got {kernel!r}"
                )
        self.spread = kernel
        self.spread_mode = _modes.check("spread", spread_mode, "Steering", "spread_mode")
        if spread_maps not in _SPREAD_MAPS:
            listed = ", ".join(map(repr, _SPREAD_MAPS))
            raise ValueError(f"Steering: spread_maps must be one of {listed}, got {spread_maps!r}")
        self.spread_maps = spread_maps
        self.rotate, self.record = _flag("rotate", rotate), _flag("record", record)
        max_neighbours = _checks.max_neighbours("Steering", max_neighbours, max_neighbors)
        self.max_neighbours = _int_in("max_neighbours", max_neighbours, 1, 256)
        h = _checks.real("Steering: hysteresis", hysteresis)
        if not (math.isfinite(h) and 0 <= h < 2.0**60):
            raise ValueError(
                f"Steering: hysteresis must be a number in [0, 2^60), got {hysteresis!r}"
            )
        self.hysteresis = h
        self.decision_phases = _int_in("decision_phases", decision_phases, 1, 64)

    @property
    def names(self) -> tuple[str, ...]:
        """Each behaviour's name (its class; ``_1``, ``_2``, ... on repeats), in order: the
        keys of ``Simulation.behaviour_maps``. Follows ``behaviours`` if it is reassigned."""
        names: list[str] = []
        seen: dict[str, int] = {}
        for b in self.behaviours:
            base = type(b).__name__
            seen[base] = seen.get(base, 0) + 1
            names.append(base if seen[base] == 1 else f"{base}_{seen[base] - 1}")
        return tuple(names)

    def _config(self) -> dict:
        """The configuration a Simulation is built from. The options are plain attributes,
        so one may have been reassigned since construction (``crowd_steering()``'s result
        given another ``max_neighbours``, say): they are checked again here, by the
        constructor's own rules and messages (``epsilon = -1`` made every agent stand for
        good; ``rotate = "yes"`` failed in the C++ conversion)."""
        checked = self._checked()
        return {name: getattr(checked, name) for name in _OPTIONS}

    def _checked(self) -> Steering:
        """A new Steering with these behaviours and options, checked by the constructor's
        rules: what a Simulation keeps, so that editing this one afterwards changes the
        simulations built later, and neither the running one nor its copies and saves."""
        fields: dict[str, Any] = {
            "combine": self.combine,
            "danger_combine": self.danger_combine,
            "resolve": self.resolve,
            "threshold": self.threshold,
            "epsilon": self.epsilon,
            "choose": self.choose,
            "width": self.width,
            "contiguous": self.contiguous,
            "spread": self.spread,
            "spread_mode": self.spread_mode,
            "spread_maps": self.spread_maps,
            "blend": self.blend,
            "rotate": self.rotate,
            "record": self.record,
            "max_neighbours": self.max_neighbours,
            "hysteresis": self.hysteresis,
            "decision_phases": self.decision_phases,
        }
        assert tuple(fields) == _OPTIONS
        return Steering(self.behaviours, **fields)

    def __setstate__(self, state: dict) -> None:
        state.pop("names", None)  # pickles from before it was a property
        # Pickles (and saved simulations) from before the "neighbours" spelling.
        if "max_neighbors" in state:
            state["max_neighbours"] = state.pop("max_neighbors")
        state.setdefault("decision_phases", 1)  # pickles from before the option
        self.__dict__.update(state)

    @property
    def max_neighbors(self) -> int:
        """Deprecated spelling of :attr:`max_neighbours` (warns)."""
        warnings.warn(
            "Steering.max_neighbors is deprecated; use max_neighbours",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.max_neighbours

    @_checks.safe_repr
    def __repr__(self) -> str:
        # The modes, then every other option that differs from its default (rotate=True,
        # decision_phases=16, ... are what a crowd configuration is).
        defaults = {
            name: p.default
            for name, p in inspect.signature(Steering.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty and name != "max_neighbors"
        }
        parts = [f"{list(self.behaviours)!r}"]
        for name, default in defaults.items():
            value = getattr(self, name)
            shown = name in ("combine", "resolve", "choose")
            if isinstance(value, np.ndarray):
                value = value.tolist()
            if shown or value != default:
                parts.append(f"{name}={value!r}")
        return f"Steering({', '.join(parts)})"


class _BuiltSteering(Steering):
    """``Simulation.steering``: the behaviours and options a simulation was built with,
    read-only (the simulation runs them, its copies and saves rebuild from them). It
    pickles and copies as a plain :class:`Steering`, to edit and build from."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"Simulation.steering is read-only (the options it was built with): set "
            f"{name} on a Steering (copy.copy(sim.steering) gives an editable one) and "
            "build a new Simulation from it"
        )

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def __reduce__(self) -> tuple:
        return (_plain_steering, (dict(vars(self)),))

    @classmethod
    def _of(cls, steering: Steering) -> _BuiltSteering:
        built = object.__new__(cls)
        vars(built).update(vars(steering))
        if isinstance(built.spread, np.ndarray):
            vars(built)["spread"] = _frozen_copy(built.spread)
        return built


def _plain_steering(state: dict) -> Steering:
    s = object.__new__(Steering)
    s.__setstate__(dict(state))
    if isinstance(s.spread, np.ndarray) and not s.spread.flags.writeable:
        s.spread = s.spread.copy()
    return s
