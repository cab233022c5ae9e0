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
class Path:
    def __init__(
        self,
        points: NDArray[np.float32],
        closed: bool = False,
        smooth: bool = False,
        samples_per_segment: int = 8,
    ) -> None: ...
    @property
    def length(self) -> float: ...
    @property
    def closed(self) -> bool: ...
    @property
    def points(self) -> NDArray[np.float32]: ...
    def closest_offset(self, points: NDArray[np.float32]) -> NDArray[np.float32]: ...
    def point_at(self, offsets: NDArray[np.float32]) -> NDArray[np.float32]: ...
    def tangent_at(self, offsets: NDArray[np.float32]) -> NDArray[np.float32]: ...
    def direction(
        self, points: NDArray[np.float32], look_ahead: float = 0.0, mode: str = "tangent"
    ) -> NDArray[np.float32]: ...
