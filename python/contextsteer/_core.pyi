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

# --- agents ---
class Agents:
    def __init__(self, capacity: int, seed: int = 0) -> None: ...
    @property
    def capacity(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def seed(self) -> int: ...
    def _view(self, name: str) -> NDArray[np.generic]: ...
    def _add(
        self,
        position: NDArray[np.float32],
        velocity: NDArray[np.float32],
        heading: NDArray[np.float32],
        radius: NDArray[np.float32],
        max_speed: NDArray[np.float32],
        max_accel: NDArray[np.float32],
        max_turn_rate: NDArray[np.float32],
        steer_force: NDArray[np.float32],
        group: NDArray[np.int32],
        target: NDArray[np.float32],
    ) -> NDArray[np.int32]: ...
    def _remove(self, ids: NDArray[np.int32]) -> None: ...

def neighbors(
    positions: NDArray[np.float32], radius: float, max_neighbors: int,
    alive: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int32], NDArray[np.int32]]: ...
def evaluate_behaviour(
    agents: Agents, behaviour: object, directions: NDArray[np.float32], rotate: bool = False,
    time: float = 0.0, max_neighbors: int = 32,
) -> tuple[NDArray[np.float32], NDArray[np.float32]]: ...
def behaviour_neighbor_radius(behaviour: object, max_radius: float, max_speed: float) -> float: ...
def apply_motion(
    agents: Agents, model: object, direction: NDArray[np.float32],
    strength: NDArray[np.float32], dt: float,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]: ...
