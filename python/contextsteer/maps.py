"""The context-map engine: slot sets, writers, combine, resolve, choose, steer, post-processing.

Every function works on whole batches: a context map is an ``(N, K)`` float32 array, one
row per agent, one column per slot (slot 0 along +x, slots counter-clockwise). The C++
kernels split the agents over threads with the GIL released; results do not depend on
the thread count. Inputs are converted to float32 C-contiguous arrays here, in plain
sight; ``out=`` arrays are written in place and never converted (a float64, strided,
read-only or wrongly shaped ``out`` raises ``TypeError``).

NaN, inf or a value beyond 2^60 in an input raises ``ValueError`` naming the input and the
index. The check runs inside the kernels' one pass over the data, so, as with NumPy's
``out=`` under ``np.errstate(all="raise")``, an ``out`` array may already be partly
written when the error is raised. The inputs are never written, except an input that is
passed as ``out`` itself (``resolve(i, d, out=i)``, ``blend(m, new, a, out=m)``), which
is checked before the kernel runs, so the error always names the right input.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, _core, _modes

__all__ = [
    "COMBINE_MODES",
    "CHOOSE_MODES",
    "DOT_SHAPES",
    "RESOLVE_MODES",
    "SPREAD_MODES",
    "Choice",
    "ContextMaps",
    "SlotSet",
    "blend",
    "choose",
    "combine",
    "dot_map",
    "resolve",
    "slot_directions",
    "spread",
    "steer",
]

#: Shapes of :func:`dot_map` (from the core's mode table, see ``_core.modes()``).
DOT_SHAPES = _modes.names("dot_shape")
#: Modes of :func:`combine`.
COMBINE_MODES = _modes.names("combine")
#: Modes of :func:`resolve`.
RESOLVE_MODES = _modes.names("resolve")
#: Modes of :func:`choose`.
CHOOSE_MODES = _modes.names("choose")
#: Modes of :func:`spread`.
SPREAD_MODES = _modes.names("spread")


_MAX_MAGNITUDE = 2.0**60
"""Largest magnitude (exclusive) of any weight or map value the core accepts, its
``kMaxMapMagnitude``: sums and products of such values stay finite in float32."""


def _f32(x: ArrayLike, what: str = "array") -> NDArray[np.float32]:
    """``x`` as a C-contiguous float32 array; complex input is refused (casting it would
    drop the imaginary part silently), and so are ``None`` (NumPy reads it as NaN) and
    text, which NumPy's own message would not name."""
    if x is None:
        raise TypeError(f"{what}: expected an array of real numbers, got None")
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{what}: expected an array of real numbers, got text {x!r:.40}")
    try:
        if not isinstance(x, np.ndarray):
            x = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged nesting
        raise type(e)(f"{what}: expected an array of real numbers ({e})") from None
    if x.dtype.kind in "USOVMmb":
        # Text NumPy would parse ("1" -> 1.0), objects (None -> NaN), records, dates and
        # durations (taken as their counts of units), and bools (True as a distance of 1,
        # a mask as coordinates), as Agents' columns refuse them.
        raise TypeError(f"{what}: expected an array of real numbers, got dtype {x.dtype}")
    if isinstance(x, np.ma.MaskedArray):
        # Its masked entries would be read as numbers: the mask would be lost silently.
        raise TypeError(
            f"{what}: expected an array of real numbers, got a masked array (fill it first: "
            "x.filled(value))"
        )
    try:
        complex_ = np.iscomplexobj(x)
        if not complex_:
            with np.errstate(over="ignore"):  # reported below, naming the value
                out = np.ascontiguousarray(x, dtype=np.float32)
    except (TypeError, ValueError) as e:  # text, objects, ragged nesting
        raise type(e)(f"{what}: expected an array of real numbers ({e})") from None
    if complex_:
        raise TypeError(f"{what}: expected real numbers, got a complex array")
    # Only a conversion can overflow: float32 input (the hot path) is not scanned again.
    converted = not (isinstance(x, np.ndarray) and x.dtype == np.float32)
    if converted and out.size and np.isinf(out).any():
        src = np.asarray(x)
        if src.dtype.kind in "fiu":
            with np.errstate(invalid="ignore"):
                grew = np.isinf(out) & np.isfinite(src)
            if grew.any():
                if src.ndim == 0:  # a scalar: no index to name
                    where = f"{src.item()!r}"
                else:
                    at = tuple(int(i) for i in np.argwhere(grew)[0])
                    where = f"{src[at].item()!r} at index {at}"
                raise ValueError(
                    f"{what}: {where} overflows float32 (finite values are within ±3.4e38)"
                )
    return out


def _given_shape(given: Any, a: np.ndarray) -> tuple[int, ...]:
    """The shape to name in an error about ``a``, converted from ``given``: ``()`` for a
    scalar (the conversion makes it ``(1,)``, which the caller never wrote)."""
    return () if np.ndim(given) == 0 else a.shape


def slot_directions(k: int, offset: float = 0.0) -> NDArray[np.float32]:
    """Return the unit directions of a ring of ``k`` slots.

    Slot 0 points along +x rotated by ``offset`` radians; slots follow counter-clockwise,
    ``2*pi/k`` apart (computed in double, stored as float32). A component below 2^-40 is
    stored as 0: the quarter-turn slots of a ring without an offset are the axes
    exactly (``cos(pi/2)`` is 6e-17), so a scene turned by a quarter turn reads the same
    in the slots turned with it.

    Parameters
    ----------
    k : int
        Number of slots, at least 3.
    offset : float, optional
        Rotation of slot 0 from +x in radians (e.g. the agent's heading).

    Returns
    -------
    ndarray of float32, shape (k, 2)

    Raises
    ------
    ValueError
        If ``k < 3`` or ``offset`` is not finite.

    Examples
    --------
    >>> import contextsteer as cs
    >>> cs.slot_directions(4).round(3) + 0.0
    array([[ 1.,  0.],
           [ 0.,  1.],
           [-1.,  0.],
           [ 0., -1.]], dtype=float32)
    """
    return _core.slot_directions(
        _slot_count("slot_directions", k), _checks.real("slot_directions: offset", offset)
    )


def _slot_count(owner: str, k: Any) -> int:
    """``k`` as an int slot count, refusing floats, strings and bools (8.7 is not 8 slots)."""
    if isinstance(k, bool) or not _checks.is_int(k):
        raise TypeError(f"{owner}: k must be an int, got {type(k).__name__} {k!r}")
    if int(k) > 2**31 - 1:
        raise ValueError(f"{owner}: k must be at most 2**31 - 1, got {k}")
    return int(k)


class SlotSet:
    """A ring of slot directions with its neighbour graph, shared by many agents.

    Slot ``i`` neighbours slots ``i-1`` and ``i+1`` (mod K). Build a regular ring with
    ``SlotSet(k, offset)`` or wrap given directions with :meth:`from_directions`. Every
    function taking ``directions`` accepts a ``SlotSet`` or a ``(K, 2)`` array; passing a
    ``SlotSet`` avoids re-validating the array on every call.

    Parameters
    ----------
    k : int
        Number of slots, at least 3.
    offset : float, optional
        Rotation of slot 0 from +x in radians.

    Attributes
    ----------
    k : int
        Number of slots.
    offset : float
        Rotation of slot 0 (0 for a ring given as directions).
    directions : ndarray of float32, shape (k, 2)
        Read-only view of the unit directions.
    neighbours : ndarray of int32, shape (k, 2)
        Read-only view: row ``i`` is ``(i-1 mod k, i+1 mod k)``.
    gaps : ndarray of float32, shape (k,)
        Counter-clockwise angle in radians from slot ``i`` to slot ``i+1``.
    regular : bool
        Whether all gaps are equal.

    Examples
    --------
    >>> import contextsteer as cs
    >>> s = cs.SlotSet(8)
    >>> s.k, s.directions.shape, s.neighbours[0].tolist()
    (8, (8, 2), [7, 1])
    """

    __slots__ = ("_impl",)

    def __init__(self, k: int, offset: float = 0.0) -> None:
        self._impl = _core.SlotSet(
            _slot_count("SlotSet", k), _checks.real("SlotSet: offset", offset)
        )

    @classmethod
    def from_directions(cls, directions: ArrayLike) -> SlotSet:
        """Wrap given unit directions, in counter-clockwise ring order, as a slot set.

        Directions within the check's tolerance of unit length but not unit to float32's
        rounding (a norm of 1.0009, say) are normalised, so that cosine maps stay within
        their documented ranges; unit ones are kept bit for bit.

        Raises
        ------
        ValueError
            If there are fewer than 3 rows, a direction is not a unit vector (within
            1e-3), or the rows do not wind once counter-clockwise around the circle.

        Examples
        --------
        >>> import numpy as np, contextsteer as cs
        >>> s = cs.SlotSet.from_directions([[1, 0], [0, 1], [-1, 0], [0, -1]])
        >>> s.k, s.regular
        (4, True)
        """
        self = cls.__new__(cls)
        self._impl = _core.SlotSet.from_directions(_f32(directions, "directions"))
        return self

    @property
    def k(self) -> int:
        """Number of slots K (int, >= 3). Read-only."""
        return self._impl.k

    @property
    def offset(self) -> float:
        """Rotation of slot 0 from +x in radians (float); 0.0 for a set built by
        :meth:`from_directions`, whatever its directions. Read-only."""
        return self._impl.offset

    @property
    def directions(self) -> NDArray[np.float32]:
        """Unit slot directions, ``(K, 2)`` float32, C-contiguous: a read-only view of the
        C++ storage (no copy; writing raises ``ValueError``), which it keeps alive."""
        return self._impl.directions

    @property
    def neighbours(self) -> NDArray[np.int32]:
        """Neighbour graph, ``(K, 2)`` int32: row ``i`` is ``(i-1 mod K, i+1 mod K)``. A
        read-only view of the C++ storage (no copy; writing raises ``ValueError``)."""
        return self._impl.neighbours

    @property
    def gaps(self) -> NDArray[np.float32]:
        """Counter-clockwise angle in radians from slot ``i`` to slot ``i+1 mod K``, ``(K,)``
        float32. A read-only view of the C++ storage (no copy; writing raises ``ValueError``)."""
        return self._impl.gaps

    @property
    def regular(self) -> bool:
        """Whether every gap equals ``2π/K`` within 1e-5 rad (bool). Read-only."""
        return self._impl.regular

    def __reduce__(self):
        """Pickle support: a ring by (k, offset), any other set by its directions."""
        ring = SlotSet(self.k, self.offset)
        if np.array_equal(ring.directions, self.directions):
            return (SlotSet, (self.k, self.offset))
        return (SlotSet.from_directions, (np.array(self.directions),))

    def __len__(self) -> int:
        return self.k

    def __array__(self, dtype=None, copy=None):  # noqa: ANN001 - numpy protocol
        a = self.directions
        return a if dtype is None else a.astype(dtype)

    @_checks.safe_repr
    def __repr__(self) -> str:
        """``SlotSet(k=..., offset=...)`` for a regular ring; any other set shows the
        angle of each direction, since k and offset alone would name the ring instead."""
        ring = SlotSet(self.k, self.offset)
        if np.array_equal(ring.directions, self.directions):
            return f"SlotSet(k={self.k}, offset={self.offset!r})"
        d = np.asarray(self.directions, dtype=np.float64)
        angles = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 360.0
        listed = ", ".join(f"{a:.4g}" for a in angles)
        return f"<SlotSet k={self.k} from directions at degrees [{listed}]>"


Directions = SlotSet | ArrayLike


def _slots(directions: Directions) -> _core.SlotSet:
    if isinstance(directions, SlotSet):
        return directions._impl
    return _core.SlotSet.from_directions(_f32(directions, "directions"))


def dot_map(
    directions: Directions,
    vectors: ArrayLike,
    *,
    shape: str = "clamped_cosine",
    weight: float | ArrayLike = 1.0,
    magnitude: bool = False,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]:
    """Write a context map from one desired vector per agent (the "dot product" rule).

    With ``c = dot(u_j, v_i / |v_i|)`` the cosine between slot ``j`` and agent ``i``'s
    vector, the value is ``shape(c) * weight_i * (|v_i| if magnitude else 1)``, the
    product ``weight_i * |v_i|`` saturated at 2^60 − 2^36 (and the value too). A zero
    vector has no direction: ``c = 0`` in every slot.

    Parameters
    ----------
    directions : SlotSet or array_like, shape (K, 2)
        Slot directions.
    vectors : array_like, shape (N, 2)
        Desired (interest) or dangerous (danger) direction of each agent, any length.
    shape : {'clamped_cosine', 'cosine', 'half_cosine', 'opposite_cosine', 'chord'}
        ``max(0, c)`` (Godot recipe), ``c`` (Lewis, negative scores kept),
        ``(1 + c) / 2`` (a normalised score in [0, 1] for ``combine(mode='multiply')``),
        ``max(0, -c)`` (Lewis "avoiding a target"), ``1 - sin(θ/2)`` with θ the angle
        to the vector (in [0, 1], a turn charged by the change of a unit velocity, as
        ORCA weighs it).
    weight : float or array_like of shape (N,)
        Scale of the values, shared or per agent.
    magnitude : bool
        Also scale by the vector's length (the Unity project's ``0.8 * up`` interest).
    out : ndarray of float32, shape (N, K), optional
        Written in place and returned.

    Returns
    -------
    ndarray of float32, shape (N, K)

    Raises
    ------
    ValueError
        Unknown shape, wrong shapes, NaN/inf in ``vectors`` or ``weight``.
    TypeError
        An unusable ``out``.

    Examples
    --------
    The Godot recipe's forward interest with 8 rays:

    >>> import contextsteer as cs
    >>> m = cs.dot_map(cs.SlotSet(8), [[1.0, 0.0]])
    >>> [[round(float(x), 3) for x in row] for row in m]
    [[1.0, 0.707, 0.0, 0.0, 0.0, 0.0, 0.0, 0.707]]
    """
    _modes.check("dot_shape", shape, "dot_map", "shape")
    slots = _slots(directions)
    vectors = _f32(vectors, "vectors")
    if np.ndim(weight) == 0:
        # A number or a 0-d array (text, None and booleans refused, naming weight).
        scalar, per_agent = _checks.real("dot_map: weight", weight), None
    else:
        scalar, per_agent = 1.0, _f32(weight, "weight")
    return _core.dot_map(
        slots,
        vectors,
        shape=shape,
        weight=scalar,
        weights=per_agent,
        magnitude=_checks.flag("dot_map: magnitude", magnitude),
        out=_checks.not_masked("dot_map: out", out),
    )


def combine(
    maps: ArrayLike | Sequence[ArrayLike],
    mode: str = "max",
    weights: ArrayLike | None = None,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]:
    """Merge a stack of B context maps slot by slot into one.

    Parameters
    ----------
    maps : array_like, shape (B, N, K), or a sequence of B arrays of shape (N, K)
        The maps of B behaviours (a sequence is stacked here, which copies it).
    mode : {'max', 'sum', 'weighted_sum', 'multiply', 'min'}
        ``max`` (Unity project, Fray), ``sum``, ``weighted_sum`` (``sum_b w_b m_b``),
        ``multiply`` (Lewis: product of normalised scores), ``min``. Sums and products
        run in float32 in stack order and saturate at ±(2^60 − 2^36), the largest float32
        below the maps' bound: maps each below 2^60 can multiply (or, hundreds of them,
        add) beyond float32, and the choice must not see inf or NaN. A saturated slot
        ties with the others there. Every partial result saturates, so a sum that passes
        the bound part-way stays clipped: ``[1e18, 1e18, -1e18]`` sums to about 1.5e17,
        ``[-1e18, 1e18, 1e18]`` to 1e18.
    weights : array_like, shape (B,), optional
        Required by, and only allowed with, ``weighted_sum``.
    out : ndarray of float32, shape (N, K), optional
        Written in place and returned; must not overlap ``maps``.

    Returns
    -------
    ndarray of float32, shape (N, K)

    Raises
    ------
    ValueError
        Unknown mode, missing or extra weights, B = 0, K < 3, NaN/inf.
    TypeError
        An unusable ``out``.

    Examples
    --------
    The Unity project's per-slot max merge:

    >>> import numpy as np, contextsteer as cs
    >>> chase = np.array([[0.0, 0.5, 1.0, 0.5]])
    >>> wander = np.array([[0.8, 0.2, 0.0, 0.2]])
    >>> cs.combine([chase, wander], "max")
    array([[0.8, 0.5, 1. , 0.5]], dtype=float32)
    """
    _modes.check("combine", mode, "combine", "mode")
    stack = _stack(maps)
    w = None if weights is None else _f32(weights, "weights")
    return _core.combine(stack, mode, w, out=_checks.not_masked("combine: out", out))


def resolve(
    interest: ArrayLike,
    danger: ArrayLike,
    mode: str = "mask",
    *,
    threshold: float = 0.0,
    epsilon: float = 0.0,
    directions: Directions | None = None,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]:
    """Apply danger to interest, slot by slot.

    With ``i`` interest and ``d`` danger of one agent (slot ``j``):

    - ``mask``: ``0 if d_j > threshold else i_j`` (Godot recipe).
    - ``subtract``: ``max(0, i_j - d_j)`` (Godot "levels of danger", clamped; the Unity
      project keeps negative values: ``subtract_unclamped``).
    - ``scale``: ``i_j * (1 - clip(d_j, 0, 1))``.
    - ``mask_min_danger``: ``i_j if d_j <= min(d) + epsilon else 0`` (Fray: keep only the
      least dangerous slots).
    - ``avoid_opposite``: ``i_j + max_m d_m * max(0, -dot(u_j, u_m))`` (Godot
      "avoidance": danger in slot ``m`` adds a clamped-cosine lobe of interest around
      the opposite direction ``-u_m``). Computed from the slot vectors, so it is right
      for odd K, where no slot is exactly opposite; the max over ``m`` (not a sum) keeps
      the added interest independent of K. Danger does not cancel interest here.
      Needs ``directions``.
    - ``subtract_unclamped``: ``i_j - d_j`` with negative values kept: the Unity
      project's ``m_InterestMap[i] -= m_DangerMap[i]``, whose argmax (``choose=
      "argmax_always"``) then prefers the least dangerous slot when none is positive.

    Parameters
    ----------
    interest, danger : array_like, shape (N, K)
    mode : {'mask', 'subtract', 'scale', 'mask_min_danger', 'avoid_opposite', 'subtract_unclamped'}
    threshold : float
        ``mask`` only: danger above it masks the slot.
    epsilon : float
        ``mask_min_danger`` only: tolerance above the minimum danger (>= 0).
    directions : SlotSet or array_like of shape (K, 2), optional
        Required by ``avoid_opposite``.
    out : ndarray of float32, shape (N, K), optional
        Written in place and returned. May be ``interest`` itself (in-place resolve),
        or ``danger`` itself except with ``avoid_opposite``; no other overlap.

    Returns
    -------
    ndarray of float32, shape (N, K)

    Raises
    ------
    ValueError
        Unknown mode, mismatched shapes, K < 3, NaN/inf, missing directions.
    TypeError
        An unusable ``out``.

    Examples
    --------
    >>> import contextsteer as cs
    >>> interest = [[1.0, 0.7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.7]]
    >>> danger = [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    >>> cs.resolve(interest, danger, "mask")
    array([[0. , 0.7, 0. , 0. , 0. , 0. , 0. , 0.7]], dtype=float32)
    """
    _modes.check("resolve", mode, "resolve", "mode")
    slots = None
    if mode == "avoid_opposite":
        if directions is None:
            raise ValueError(
                "resolve: mode 'avoid_opposite' needs directions (a SlotSet or (K, 2) array)"
            )
        slots = _slots(directions)
    return _core.resolve(
        _f32(interest, "interest"),
        _f32(danger, "danger"),
        mode,
        _checks.real("resolve: threshold", threshold),
        _checks.real("resolve: epsilon", epsilon),
        slots,
        out=_checks.not_masked("resolve: out", out),
    )


class Choice(NamedTuple):
    """Result of :func:`choose`, one row per agent."""

    #: Unit heading, or (0, 0) when no slot is positive; float32 (N, 2).
    direction: NDArray[np.float32]
    #: Strength in [0, 1] (speed scaling); 0 when no slot is positive; float32 (N,).
    strength: NDArray[np.float32]
    #: Chosen slot, -1 when no slot is positive; int32 (N,).
    slot: NDArray[np.int32]


def choose(
    values: ArrayLike,
    directions: Directions,
    mode: str = "vector_sum",
    *,
    width: int = 2,
    contiguous: bool = True,
    out: Choice | tuple | None = None,
) -> Choice:
    """Choose a heading, a strength and a slot for every agent from its resolved map.

    Only positive values count as interest (except in ``argmax_always`` and
    ``vector_sum_signed``, which read every sign). When no slot of an agent is positive
    the result is direction (0, 0), strength 0, slot -1. Ties between equal slots go to the
    lowest slot index. ``b`` below is the highest slot.

    - ``vector_sum`` (Godot recipe): the normalised sum of ``v_j u_j``. With
      ``contiguous=True`` (default) only over the best run of consecutive positive slots
      (largest total; ties: the run whose first slot has the lowest index), so the
      heading never averages across a masked gap: symmetric interest around a blocked
      forward slot does not sum to straight ahead. Guard: if the sum is degenerate
      (shorter than 1e-6 of the run total) or its nearest slot is not in the run (only
      possible for runs longer than half the ring: the sum crossed the masked gap), the
      heading is the run's highest slot. ``slot`` and ``strength`` are that slot and
      its value. ``contiguous=False`` is the raw recipe: every positive slot is summed,
      slot/strength from ``b``; that heading may point into a masked slot.
    - ``argmax``: ``u_b`` of the highest positive slot; strength ``v_b``. No positive slot: no
      heading (slot -1), the agent slows down.
    - ``argmax_always`` (the Unity project exactly: ``Mathf.Max`` then ``FindIndex``):
      the highest of all K values whatever its sign (lowest index on ties), so a slot is
      always chosen, as in the Unity project where the agent keeps moving; strength
      ``v_b`` clipped (the Unity agent pushes with a constant force: use a motion
      model's ``speed="max"``).
    - ``vector_sum_signed`` (the Godot recipe's "levels of danger" read literally: its
      ``choose_direction`` sums every slot, and danger subtracted from interest leaves
      negative slots): the normalised sum of ``v_j u_j`` over all K slots, each with its
      sign, so a dangerous slot pushes the heading away from itself. Pair it with
      ``resolve="subtract_unclamped"``. Slot ``b`` (the highest of all K, any sign),
      strength ``v_b`` clipped. A sum shorter than 1e-6 of ``sum |v_j|`` (all zero, or
      cancelled): no heading (slot -1).
    - ``weighted_neighbours`` (Lewis): ``b`` averaged (weights = values) with up to
      ``width`` neighbours each side, stopping at the first non-positive slot; same
      guard as ``vector_sum`` (the nearest slot must be one of the averaged ones); slot
      ``b``, strength ``v_b``.
    - ``subslot``: a parabolic fit in angle through ``b`` and its two neighbours (with the
      real gaps between them); the heading is the vertex, clamped to half a gap either
      side (it stays in slot ``b``'s sector), strength the fitted peak value; exact for
      values sampled from a parabola in angle. If the three values are not concave
      (flat), ``u_b`` and ``v_b``. Slot ``b``.
    - ``subslot_linear`` (Andrew Fray's gradient intersection): a peak with the same
      slope on both sides, ``P - m|x - x*|``, through the same three points. The side
      that falls more steeply away from ``b`` lies wholly on one side of the peak and
      sets the slope ``m``; the line of slope ``-m`` through the other neighbour crosses
      it at the heading ``x*`` (within half a gap of ``u_b``); strength the crossing's
      value ``P``. Exact for values sampled from such a peak (for example a clamped
      cosine near its top is closer to a parabola, a linear falloff to this). Flat: ``u_b``
      and ``v_b``. Slot ``b``.

    Strengths are clipped to [0, 1].

    Parameters
    ----------
    values : array_like, shape (N, K)
        Resolved interest.
    directions : SlotSet or array_like, shape (K, 2)
    mode : str, default 'vector_sum'
        One of :data:`CHOOSE_MODES`: 'vector_sum', 'argmax', 'weighted_neighbours',
        'subslot', 'subslot_linear', 'argmax_always', 'vector_sum_signed'.
    width : int
        ``weighted_neighbours``: neighbours each side (Lewis suggests 2 or 3).
    contiguous : bool
        ``vector_sum``: sum only the best contiguous run (True) or everything (False).
    out : Choice or tuple of (direction, strength, slot), optional
        float32 (N, 2), float32 (N,), int32 (N,) arrays written in place.

    Returns
    -------
    Choice
        ``(direction, strength, slot)``.

    Raises
    ------
    ValueError
        Unknown mode, K mismatch, K < 3, width < 0, NaN/inf.
    TypeError
        An unusable ``out``.

    Examples
    --------
    The Godot recipe's obstacle case: forward is blocked, the agent turns away.

    >>> import contextsteer as cs
    >>> slots = cs.SlotSet(8)
    >>> interest = [[0.0, 0.707, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5]]
    >>> c = cs.choose(interest, slots)
    >>> c.direction.round(3) + 0.0, c.strength, c.slot
    (array([[0.707, 0.707]], dtype=float32), array([0.707], dtype=float32), array([1], dtype=int32))
    """
    _modes.check("choose", mode, "choose", "mode")
    width = _checks.integer("choose: width", width, 0, 2**31 - 1)
    if out is None:
        od = os_ = oi = None
    else:
        if len(out) != 3:
            raise TypeError("out: expected (direction, strength, slot)")
        od, os_, oi = (_checks.not_masked("choose: out", o) for o in out)
    d, s, i = _core.choose(
        _f32(values, "values"),
        _slots(directions),
        mode,
        int(width),
        _checks.flag("contiguous", contiguous),
        out_direction=od,
        out_strength=os_,
        out_slot=oi,
    )
    return Choice(d, s, i)


def _stack(maps: ArrayLike | Sequence[ArrayLike], what: str = "maps") -> NDArray[np.float32]:
    """A (B, N, K) float32 stack from an array or a non-empty sequence of (N, K) maps;
    errors name ``what`` (the caller's argument), and an element of a sequence by its
    index, ``what[b]``."""
    if isinstance(maps, (np.ndarray, memoryview)):
        # (A buffer too: iterating a 3-D memoryview is not supported.)
        return _f32(cast("ArrayLike", maps), what)
    # Not an array: a sequence of maps.
    if not isinstance(maps, Iterable) or isinstance(maps, (str, bytes)):
        raise TypeError(
            f"{what}: expected a (B, N, K) array or a sequence of (N, K) maps, got "
            f"{type(maps).__name__}"
        )
    maps = [_f32(m, f"{what}[{b}]") for b, m in enumerate(cast("Iterable[ArrayLike]", maps))]
    if not maps:
        raise ValueError(f"{what}: expected a (B, N, K) array or at least one (N, K) map, got none")
    if len({m.shape for m in maps}) > 1:
        raise ValueError(
            f"{what}: expected (N, K) maps of one shape, got {[m.shape for m in maps]}"
        )
    return _f32(np.stack(maps))


def _out3(out: Choice | tuple | None) -> tuple[Any, ...]:
    if out is None:
        return None, None, None
    if len(out) != 3:
        raise TypeError("out: expected (direction, strength, slot)")
    return tuple(_checks.not_masked("steer: out", o) for o in out)


def steer(
    interest_maps: ArrayLike | Sequence[ArrayLike],
    danger: ArrayLike,
    directions: Directions,
    *,
    combine: str = "max",
    weights: ArrayLike | None = None,
    resolve: str = "mask",
    threshold: float = 0.0,
    epsilon: float = 0.0,
    choose: str = "vector_sum",
    width: int = 2,
    contiguous: bool = True,
    out: Choice | tuple | None = None,
) -> Choice:
    """Run the whole pipeline combine -> resolve -> choose in one call.

    The result is bit-identical to ``choose(resolve(combine(interest_maps, combine,
    weights), danger, resolve, threshold=threshold, epsilon=epsilon,
    directions=directions), directions, choose, width=width, contiguous=contiguous)``,
    but the C++ kernel runs the three stages on one cache-sized block of agents at a time
    (16 KiB of map), so the combined and resolved maps never go to memory: only the
    inputs are read and the choice is written. This is what a simulation step does per
    chunk of agents. With ``combine="max"`` and ``resolve="mask"`` (the defaults) and
    K = 8, 16, 32 or 64 on a CPU with AVX2, each agent's maps are combined, masked and
    checked in registers in one pass over the inputs; with ``choose="argmax"`` the choice
    is taken there too, and nothing but the choice is written.

    Parameters
    ----------
    interest_maps : array_like, shape (B, N, K), or a sequence of B arrays of shape (N, K)
        The interest maps of B behaviours (a sequence is stacked here, which copies it).
    danger : array_like, shape (N, K)
    directions : SlotSet or array_like, shape (K, 2)
        Slot directions (also used by ``resolve='avoid_opposite'``).
    combine, weights
        Mode and weights of :func:`combine`.
    resolve, threshold, epsilon
        Mode and scalars of :func:`resolve`.
    choose, width, contiguous
        Mode and options of :func:`choose`.
    out : Choice or tuple of (direction, strength, slot), optional
        float32 (N, 2), float32 (N,), int32 (N,) arrays written in place; they must not
        overlap the inputs or each other.

    Returns
    -------
    Choice
        ``(direction, strength, slot)``, as :func:`choose` returns.

    Raises
    ------
    ValueError
        Unknown mode, missing or extra weights, mismatched shapes, B = 0, K < 3,
        width < 0, negative epsilon, NaN/inf in the maps.
    TypeError
        An unusable ``out``, a non-integer ``width``.

    Examples
    --------
    Seek wants forward (+x), wander forward-left at half weight; an obstacle blocks
    forward, so the agent turns left, between slots 1 and 2:

    >>> import contextsteer as cs
    >>> slots = cs.SlotSet(8)
    >>> seek = cs.dot_map(slots, [[1.0, 0.0]])
    >>> wander = cs.dot_map(slots, [[1.0, 1.0]], weight=0.5)
    >>> danger = [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    >>> c = cs.steer([seek, wander], danger, slots)
    >>> c.slot, c.strength.round(3)
    (array([1], dtype=int32), array([0.707], dtype=float32))
    >>> c.direction.round(3) + 0.0
    array([[0.505, 0.863]], dtype=float32)
    """
    _modes.check("combine", combine, "steer", "combine")
    _modes.check("resolve", resolve, "steer", "resolve")
    _modes.check("choose", choose, "steer", "choose")
    width = _checks.integer("steer: width", width, 0, 2**31 - 1)
    od, os_, oi = _out3(out)
    w = None if weights is None else _f32(weights, "weights")
    d, s, i = _core.steer(
        _stack(interest_maps, "interest_maps"),
        _f32(danger, "danger"),
        _slots(directions),
        combine,
        w,
        resolve,
        _checks.real("steer: threshold", threshold),
        _checks.real("steer: epsilon", epsilon),
        choose,
        int(width),
        _checks.flag("contiguous", contiguous),
        out_direction=od,
        out_strength=os_,
        out_slot=oi,
    )
    return Choice(d, s, i)


def spread(
    values: ArrayLike,
    kernel: ArrayLike = (0.25, 0.5, 0.25),
    mode: str = "sum",
    *,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]:
    """Spread each slot's value over its ring neighbours (blur or dilation).

    With an odd-length kernel ``w`` of length ``L <= K`` and centre ``h = L // 2``:
    ``sum``: ``out_j = sum_m w_m v_{j+m-h}`` (circular convolution; e.g. a blur);
    ``max``: ``out_j = max_m w_m v_{j+m-h}`` (weighted dilation; e.g. grow danger to the
    neighbouring slots without adding it up). Indices wrap around the ring.

    Parameters
    ----------
    values : array_like, shape (N, K)
    kernel : array_like, shape (L,)
        Odd length, at most K. Used as given (not normalised).
    mode : {'sum', 'max'}
    out : ndarray of float32, shape (N, K), optional
        Written in place and returned; must not overlap ``values``.

    Returns
    -------
    ndarray of float32, shape (N, K)

    Notes
    -----
    The work is ``N * K * L`` multiply-adds: a kernel as long as the ring makes it
    quadratic in ``K`` (about 1.4 s a row at ``K = 65536``). Long calls are done in slices
    of rows with a Ctrl-C check between them, so ``KeyboardInterrupt`` arrives within
    about one slice (``out`` then holds the slices already done).

    Examples
    --------
    >>> import contextsteer as cs
    >>> cs.spread([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]], [0.25, 0.5, 0.25])
    array([[0.  , 0.25, 0.5 , 0.25, 0.  , 0.  ]], dtype=float32)
    """
    _modes.check("spread", mode, "spread", "mode")
    out = _checks.not_masked("spread: out", out)
    return _core.spread(_f32(values, "values"), _f32(kernel, "kernel"), mode, out=out)


def blend(
    previous: ArrayLike,
    current: ArrayLike,
    alpha: float,
    *,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]:
    """Blend two maps for temporal stability: ``previous + alpha * (current - previous)``.

    Parameters
    ----------
    previous, current : array_like, shape (N, K)
    alpha : float
        In [0, 1]: 0 keeps ``previous``, 1 takes ``current``.
    out : ndarray of float32, shape (N, K), optional
        Written in place and returned; may be ``previous`` or ``current`` itself (e.g.
        ``blend(memory, new, 0.3, out=memory)``).

    Returns
    -------
    ndarray of float32, shape (N, K)

    Examples
    --------
    >>> import contextsteer as cs
    >>> cs.blend([[0.0, 1.0, 0.0]], [[1.0, 0.0, 0.0]], 0.25)
    array([[0.25, 0.75, 0.  ]], dtype=float32)
    """
    return _core.blend(
        _f32(previous, "previous"),
        _f32(current, "current"),
        _checks.real("blend: alpha", alpha),
        out=_checks.not_masked("blend: out", out),
    )


def _physical_memory() -> int:
    """Bytes of memory this process may use: the machine's RAM (a generous fallback where
    the OS does not say), or less where ``ulimit -v`` / ``ulimit -d`` or the cgroup's
    ``memory.max`` says (a size checked against the RAM alone passed under a 3 GB limit,
    and failed after 81 s of work with a bare ``std::bad_alloc``; fuzz round 19)."""
    return min(_memory_limits())[0]


def _memory_limits() -> list[tuple[int, str]]:
    """Each bound on the memory this process may still take, in bytes, with its name:
    the machine's RAM; a ``ulimit -v`` / ``-d`` less what the process already maps (its
    VmSize / VmData: a size just under the raw limit passed and then failed with a bare
    ``std::bad_alloc``; fuzz round 21); its cgroup's limit less its usage (v2
    ``memory.max``, v1 ``memory.limit_in_bytes``, of the process's own cgroup)."""
    try:
        ram = int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        ram = 2**40
    out = [(ram, "this machine's")]
    status = _read("/proc/self/status")
    used = {
        key: int(line.split()[1]) * 1024
        for line in status.splitlines()
        for key in ("VmSize:", "VmData:")
        if line.startswith(key) and len(line.split()) >= 2 and line.split()[1].isdigit()
    }
    try:
        import resource

        for which, name, key in (
            (resource.RLIMIT_AS, "-v", "VmSize:"),
            (resource.RLIMIT_DATA, "-d", "VmData:"),
        ):
            soft = resource.getrlimit(which)[0]
            if soft != resource.RLIM_INFINITY and soft > 0:
                left = max(int(soft) - used.get(key, 0), 0)
                out.append((left, f"the `ulimit {name}` limit's {soft / 2**30:.3g} GiB, of it"))
    except (ImportError, ValueError, OSError, AttributeError):
        pass  # (no resource module on Windows)
    for line in _read("/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":  # cgroup v2
            base = "/sys/fs/cgroup" + parts[2].rstrip("/")
            limit, usage = _read(base + "/memory.max"), _read(base + "/memory.current")
            cache_keys: tuple[str, ...] = ("inactive_file",)
        elif "memory" in parts[1].split(","):  # cgroup v1
            base = "/sys/fs/cgroup/memory" + parts[2].rstrip("/")
            limit = _read(base + "/memory.limit_in_bytes")
            usage = _read(base + "/memory.usage_in_bytes")
            cache_keys = ("total_inactive_file", "inactive_file")
        else:
            continue
        limit, usage = limit.strip(), usage.strip()
        if limit.isdigit() and 0 < int(limit) < ram:
            # The usage less the file cache the kernel reclaims when memory is asked for
            # (counted as used, a container that had read files refused small work).
            stats = dict(
                line.partition(" ")[::2] for line in _read(base + "/memory.stat").splitlines()
            )
            cache = next(
                (int(stats[k]) for k in cache_keys if stats.get(k, "").strip().isdigit()), 0
            )
            taken = max((int(usage) if usage.isdigit() else 0) - cache, 0)
            left = max(int(limit) - taken, 0)
            out.append((left, f"the cgroup's limit of {int(limit) / 2**30:.3g} GiB, of it"))
    return out


def _read(path: str) -> str:
    """A small text file's contents, or "" where it cannot be read."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _memory_text() -> str:
    """The bound of :func:`_physical_memory`, for messages: ``"this machine's 23.5 GiB"``
    or ``"the `ulimit -v` limit's 2.38 GiB, of it 2.2 GiB"`` (what is left of it)."""
    size, name = min(_memory_limits())
    return f"{name} {size / 2**30:.3g} GiB"


class ContextMaps:
    """Interest and danger maps of ``n`` agents with ``k`` slots, owned by C++.

    ``interest`` and ``danger`` are writable zero-copy ``(n, k)`` float32 views whose
    ``base`` keeps the C++ storage alive, so a view outlives ``del`` of this object.
    Pass them as ``out=`` to the kernels to write in place.

    Parameters
    ----------
    n : int
        Number of agents (>= 0).
    k : int
        Number of slots (>= 3).

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> maps = cs.ContextMaps(2, 8)
    >>> _ = cs.dot_map(cs.SlotSet(8), [[1, 0], [0, 1]], out=maps.interest)
    >>> int(maps.interest.argmax(axis=1)[1])
    2
    """

    __slots__ = ("_impl",)

    def __init__(self, n: int, k: int) -> None:
        for name, v in (("n", n), ("k", k)):
            if isinstance(v, bool) or not _checks.is_int(v):
                raise TypeError(f"ContextMaps: {name} must be an int, got {type(v).__name__}")
        # Its two (n, k) float32 maps (the operations' outputs are NumPy arrays of their
        # own; counting five maps refused a size that fits, round 25).
        need = 2 * max(int(n), 0) * max(int(k), 0) * 4
        if need > _physical_memory():
            raise MemoryError(
                f"ContextMaps({n}, {k}) needs about {need / 2**30:.3g} GiB, more "
                f"than {_memory_text()}"
            )
        self._impl = _core.ContextMaps(int(n), int(k))

    def __copy__(self):
        raise TypeError(
            "ContextMaps: copy.copy would share the C++ maps with the original; "
            "use copy.deepcopy for an independent copy"
        )

    def __reduce__(self):
        """Pickle (and ``copy.deepcopy``) support: the size and the interest and danger maps."""
        return (
            _restore_context_maps,
            (self.n, self.k, np.array(self.interest), np.array(self.danger)),
        )

    @property
    def n(self) -> int:
        """Number of agents, the maps' rows (int, >= 0). Read-only."""
        return self._impl.n

    @property
    def k(self) -> int:
        """Number of slots, the maps' columns (int, >= 3). Read-only."""
        return self._impl.k

    @property
    def interest(self) -> NDArray[np.float32]:
        """Interest map, ``(n, k)`` float32, C-contiguous: a writable view of the C++ storage
        (no copy; writes change the maps, and every access returns the same memory)."""
        return self._impl.interest

    @property
    def danger(self) -> NDArray[np.float32]:
        """Danger map, ``(n, k)`` float32, C-contiguous: a writable view of the C++ storage
        (no copy; writes change the maps, and every access returns the same memory)."""
        return self._impl.danger

    def clear(self) -> None:
        """Set interest and danger to zero."""
        self._impl.clear()

    @_checks.safe_repr
    def __repr__(self) -> str:
        return f"ContextMaps(n={self.n}, k={self.k})"


def _restore_context_maps(n: int, k: int, interest: ArrayLike, danger: ArrayLike) -> ContextMaps:
    m = ContextMaps(n, k)
    m.interest[...] = interest
    m.danger[...] = danger
    return m
