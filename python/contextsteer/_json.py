"""Plain JSON values from what runs return (the one converter the runner, the command line,
sweeps and tuning share)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["jsonable"]


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
