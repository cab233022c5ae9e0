# Type stubs of the compiled module contextsteer._core (kept by hand, one section an area).

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

# --- runtime ---
def get_num_threads() -> int: ...
def set_num_threads(n: int) -> None: ...

# --- maps ---

# --- world ---

# --- path ---
