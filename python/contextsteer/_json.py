"""Plain JSON values from what runs return (the one converter the runner, the command line,
sweeps and tuning share)."""

from __future__ import annotations

import dataclasses
import math
import reprlib
from typing import Any

import numpy as np

__all__ = ["jsonable", "short_repr"]


def jsonable(value: Any) -> Any:
    """Plain JSON types from NumPy scalars/arrays, NamedTuples, tuples and dicts.

    Dict keys become strings, NumPy values Python ones, and non-finite floats None (JSON
    has no inf/NaN).

    Examples
    --------
    >>> import numpy as np
    >>> from contextsteer._json import jsonable
    >>> jsonable({"laps": np.array([0, 1]), 2: np.float32(np.inf), "t": (1, 2.5)})
    {'laps': [0, 1], '2': None, 't': [1, 2.5]}
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # a NamedTuple
        return jsonable(value._asdict())
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def short_repr(obj: Any) -> str:
    """The dataclass repr of ``obj`` with every field's value cut to a few entries a level:
    a run's per-agent counters printed 9 million characters at 1M agents (fuzz round 24).

    Examples
    --------
    >>> import dataclasses
    >>> from contextsteer._json import short_repr
    >>> @dataclasses.dataclass
    ... class R:
    ...     counts: list
    >>> short_repr(R(list(range(1000))))
    'R(counts=[0, 1, 2, 3, 4, 5, 6, 7, ...])'
    """
    cut = reprlib.Repr()
    cut.maxlevel, cut.maxlist, cut.maxtuple, cut.maxdict = 4, 8, 8, 12
    cut.maxstring, cut.maxother, cut.maxlong = 80, 80, 40
    fields = ", ".join(
        f"{f.name}={cut.repr(getattr(obj, f.name))}" for f in dataclasses.fields(obj) if f.repr
    )
    return f"{type(obj).__name__}({fields})"
