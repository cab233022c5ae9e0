"""Scalar arguments checked once, with messages that name them.

The array arguments go through :func:`contextsteer.maps._f32` and the core's checks; the
scalars of the public functions come here first, so that ``None``, a string, a bool, a
complex number or a one-element array gets a ``TypeError`` naming the argument instead of
``float()``'s or pybind11's message, and an integer argument is never truncated from a
float.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any, Protocol, TypeGuard, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

_Repr = TypeVar("_Repr", bound=Callable[[Any], str])


def safe_repr(method: _Repr) -> _Repr:
    """A ``__repr__`` that never raises on a half-built object: one whose ``__init__``
    raised before it set its attributes (a traceback showing locals, ``pytest -l``, a
    debugger) reads ``<Name (not built)>`` instead of an AttributeError (fuzz round 24)."""

    @functools.wraps(method)
    def wrapper(self: Any) -> str:
        try:
            return method(self)
        except AttributeError:
            return f"<{type(self).__name__} (not built)>"
        except TypeError as exc:  # the C++ part refused: an Agents never built
            if "(not built)" not in str(exc):
                raise
            return f"<{type(self).__name__} (not built)>"

    return wrapper  # type: ignore[return-value]


class ArrayView(Protocol):
    """What the per-agent and per-frame view properties are to a type checker: read on an
    instance, a NumPy array (a view of the C++ state); written, anything array-like.
    (Plain ``property`` objects made by a factory read as ``Any``, so a misspelt view
    passed ``mypy --strict``.)"""

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> ArrayView: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> NDArray[Any]: ...
    def __set__(self, obj: object, value: ArrayLike) -> None: ...


class ReadOnlyArrayView(Protocol):
    """:class:`ArrayView` for views that cannot be assigned."""

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> ReadOnlyArrayView: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> NDArray[Any]: ...


MAX_SLOTS = 65536
"""Most slots a ring may have (``SlotSet``'s limit; ``Agents(slots=)``, ``Simulation(slots=)``
and ``evaluate``'s int K share it)."""

MAX_COORDINATE = 1e8
"""Largest magnitude (inclusive) of a coordinate, length, radius or speed (README,
"Supported ranges"); other float inputs stay below 2^60 (``maps._MAX_MAGNITUDE``)."""


def real(what: str, value: Any) -> float:
    """``value`` as a float, or ``TypeError`` naming ``what``. Booleans, strings, complex
    numbers, ``None`` and arrays are refused (``float(True)`` is 1.0; ``float(np.array([x]))``
    hides a shape mistake; a 0-d array of real numbers, NumPy's scalar, is taken). NaN and
    range checks are the caller's."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]
    if not is_real(value):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def not_masked(what: str, value: Any) -> Any:
    """``value`` unchanged, or a ``TypeError`` naming ``what`` for a NumPy masked array,
    whose masked entries ``np.asarray`` would read as values: the mask lost silently."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(
            f"{what}: expected plain values, got a masked array (fill it first: x.filled(value))"
        )
    return value


def is_int(value: Any) -> TypeGuard[int | np.integer[Any]]:
    """Whether ``value`` is an integer scalar: Python's or NumPy's, not a bool, and not a
    duration (``np.timedelta64`` is a NumPy integer: ``steps=np.timedelta64(3, "ns")``
    ran 3 steps; fuzz round 26)."""
    return isinstance(value, numbers.Integral) and not isinstance(
        value, (bool, np.bool_, np.timedelta64)
    )


def is_real(value: Any) -> TypeGuard[int | float | np.integer[Any] | np.floating[Any]]:
    """Whether ``value`` is a real number scalar: Python's or NumPy's, not a bool, and not
    a duration."""
    return isinstance(value, numbers.Real) and not isinstance(
        value, (bool, np.bool_, np.timedelta64)
    )


def integer_array(what: str, value: Any) -> np.ndarray:
    """``value`` as an array for integer ids or indexes, its dtype not yet checked
    (:func:`is_integer` does that), or a ``TypeError`` naming ``what`` for a masked array,
    whose masked entries would be read as ids."""
    return np.asarray(not_masked(what, value))


def is_integer(arr: np.ndarray) -> bool:
    """Whether ``arr`` holds integers: signed or unsigned, not bools, and not durations or
    dates (NumPy counts ``timedelta64`` as an integer type)."""
    return arr.dtype.kind in "iu"


def agents(owner: str, value: Any) -> None:
    """A TypeError naming ``owner``'s ``agents`` unless it is a contextsteer Agents
    (pybind11's message for ``None`` lists signatures)."""
    from . import _core

    if not isinstance(value, _core.Agents):
        raise TypeError(
            f"{owner}: agents must be a contextsteer.Agents, got {type(value).__name__}"
        )


def shown(value: Any) -> str:
    """``value`` for an error message: an int of more than 20 digits by its first four
    digits and its exponent (10**300 is "1.000e+300", not 301 digits; str() of an int
    past 4300 digits raises), anything else as its repr."""
    if is_int(value) and not isinstance(value, (bool, np.bool_)):
        n = abs(int(value))
        if n >= 10**20:
            e = int(math.log10(n))  # (rounded: set right below)
            while 10**e > n:
                e -= 1
            while 10 ** (e + 1) <= n:
                e += 1
            lead = str(n // 10 ** (e - 3))
            return f"{'-' if int(value) < 0 else ''}{lead[0]}.{lead[1:]}e+{e}"
    return repr(value)


def flag(what: str, value: Any) -> bool:
    """``value`` as a bool: ``True``, ``False`` (NumPy's too) or the ints 0 and 1, else a
    ``TypeError`` naming ``what``. ``bool(value)`` would read ``"no"``, ``"false"``, ``nan``
    and ``[]``'s siblings as a choice; a flag is not guessed from them."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biu":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or (is_int(value) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{what} must be a bool, got {type(value).__name__} {shown(value)}")


def integer(what: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``: ``TypeError`` for anything that is not an
    integer (a float is not truncated, a bool is not 0 or 1), ``ValueError`` outside. A 0-d
    integer array is taken."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        value = value[()]
    if not is_int(value):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    v = int(value)
    if not low <= v <= high:
        raise ValueError(f"{what} must be in [{low}, {high}], got {shown(v)}")
    return v


def length(what: str, value: Any, *, low: float = 0.0) -> float:
    """A finite length (or radius, or look-ahead) in ``[low, 1e8]`` (``low=-math.inf``: at
    most 1e8 in magnitude): ``TypeError`` or ``ValueError`` naming ``what``."""
    v = real(what, value)
    if math.isnan(v) or v < low or not abs(v) <= MAX_COORDINATE:
        bound = f">= {low:g} and " if low > -math.inf else ""
        raise ValueError(f"{what} must be {bound}at most 1e8 in magnitude, got {value!r}")
    return v


def real_array(what: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array, or ``TypeError`` naming ``what`` when it holds complex
    numbers (casting would drop the imaginary part), strings or other objects, or a masked
    array (its hidden values would be used)."""
    raw = np.asarray(not_masked(what, value))
    if raw.dtype.kind not in "biuf":
        kind = "complex numbers" if raw.dtype.kind == "c" else f"dtype {raw.dtype}"
        raise TypeError(f"{what} must be real numbers, got {kind}")
    return raw.astype(np.float64)


class _Default(int):
    """An int default that can be told from the same value given (``x is DEFAULT``), and
    reads, prints and pickles as the int it is."""

    __slots__ = ()

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (int, (int(self),))


#: ``max_neighbours``' default (16), told apart from a 16 given.
MAX_NEIGHBOURS = _Default(16)


def max_neighbours(owner: str, value: Any, deprecated: Any) -> Any:
    """``max_neighbours``, or the deprecated ``max_neighbors`` spelling when it is given
    (with a DeprecationWarning at the caller's caller). Both given with different values
    is a TypeError: the old spelling won silently (fuzz round 24), and so it did over a
    ``max_neighbours=16`` given, which read as the default (round 25: the default is now
    :data:`MAX_NEIGHBOURS`, an int told apart from a 16 given)."""
    given = value is not MAX_NEIGHBOURS
    if deprecated is None:
        return value if given else int(value)
    if given and value != deprecated:
        raise TypeError(
            f"{owner}: max_neighbors= (deprecated) and max_neighbours= given with different "
            f"values ({deprecated!r} and {value!r}); give max_neighbours= alone"
        )
    warnings.warn(
        f"{owner}(max_neighbors=) is deprecated; use max_neighbours=",
        DeprecationWarning,
        stacklevel=3,
    )
    return deprecated
