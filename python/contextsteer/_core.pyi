# Type stubs of the compiled module contextsteer._core (kept by hand, one section an area).

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

# --- runtime ---
def get_num_threads() -> int: ...
def set_num_threads(n: int) -> None: ...

# --- maps ---
def slot_directions(k: int, offset: float = 0.0) -> NDArray[np.float32]: ...

class SlotSet:
    def __init__(self, k: int, offset: float = 0.0) -> None: ...
    @staticmethod
    def from_directions(directions: NDArray[np.float32]) -> SlotSet: ...
    @property
    def k(self) -> int: ...
    @property
    def offset(self) -> float: ...
    @property
    def regular(self) -> bool: ...
    @property
    def directions(self) -> NDArray[np.float32]: ...
    @property
    def gaps(self) -> NDArray[np.float32]: ...
    @property
    def neighbours(self) -> NDArray[np.int32]: ...

def dot_map(
    slots: SlotSet,
    vectors: NDArray[np.float32],
    *,
    shape: str,
    weight: float,
    weights: NDArray[np.float32] | None,
    magnitude: bool,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]: ...
def combine(
    maps: NDArray[np.float32],
    mode: str,
    weights: NDArray[np.float32] | None = None,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]: ...
def resolve(
    interest: NDArray[np.float32],
    danger: NDArray[np.float32],
    mode: str,
    threshold: float,
    epsilon: float,
    slots: SlotSet | None,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]: ...
def choose(
    values: NDArray[np.float32],
    slots: SlotSet,
    mode: str,
    width: int,
    contiguous: bool,
    out_direction: NDArray[np.float32] | None = None,
    out_strength: NDArray[np.float32] | None = None,
    out_slot: NDArray[np.int32] | None = None,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.int32]]: ...
def steer(
    interest_maps: NDArray[np.float32],
    danger: NDArray[np.float32],
    slots: SlotSet,
    combine: str,
    weights: NDArray[np.float32] | None,
    resolve: str,
    threshold: float,
    epsilon: float,
    choose: str,
    width: int,
    contiguous: bool,
    out_direction: NDArray[np.float32] | None = None,
    out_strength: NDArray[np.float32] | None = None,
    out_slot: NDArray[np.int32] | None = None,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.int32]]: ...
def modes() -> dict[str, list[tuple[str, str]]]: ...
def check_mode(kind: str, value: object, owner: str, argument: str) -> str: ...
def spread(
    values: NDArray[np.float32],
    kernel: NDArray[np.float32],
    mode: str,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]: ...
def blend(
    previous: NDArray[np.float32],
    current: NDArray[np.float32],
    alpha: float,
    out: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]: ...

class ContextMaps:
    def __init__(self, n: int, k: int) -> None: ...
    @property
    def n(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def interest(self) -> NDArray[np.float32]: ...
    @property
    def danger(self) -> NDArray[np.float32]: ...
    def clear(self) -> None: ...

# --- world ---
class World:
    def __init__(self) -> None: ...
    def add_segments(self, segments: NDArray[np.float32], layers: int) -> NDArray[np.int32]: ...
    def add_polyline(self, points: NDArray[np.float32], closed: bool, layers: int) -> int: ...
    def add_polygon(self, ring: NDArray[np.float32], layers: int) -> int: ...
    def add_box(
        self, cx: float, cy: float, hx: float, hy: float, angle: float, layers: int
    ) -> int: ...
    def add_circles(
        self, centers: NDArray[np.float32], radii: NDArray[np.float32], layers: int
    ) -> NDArray[np.int32]: ...
    @property
    def walls(self) -> NDArray[np.float32]: ...
    @property
    def wall_obstacles(self) -> NDArray[np.int32]: ...
    @property
    def circle_centers(self) -> NDArray[np.float32]: ...
    @property
    def circle_radii(self) -> NDArray[np.float32]: ...
    @property
    def circle_obstacles(self) -> NDArray[np.int32]: ...
    @property
    def obstacle_layers(self) -> NDArray[np.uint32]: ...
    @property
    def obstacle_count(self) -> int: ...
    @property
    def segment_count(self) -> int: ...
    @property
    def circle_count(self) -> int: ...
    @property
    def bounds(self) -> tuple[float, float, float, float] | None: ...
    cell_size: float
    @property
    def grid_shape(self) -> tuple[int, int, float]: ...
    @property
    def index_info(self) -> dict[str, Any]: ...

def raycast(
    world: World,
    origins: NDArray[np.float32],
    directions: NDArray[np.float32],
    max_dist: NDArray[np.float32],
    radius: float,
    layers: int,
) -> tuple[NDArray[np.float32], NDArray[np.bool_], NDArray[np.float32], NDArray[np.int32]]: ...
def slot_raycast(
    world: World,
    positions: NDArray[np.float32],
    slot_directions: NDArray[np.float32],
    look_ahead: NDArray[np.float32],
    headings: NDArray[np.float32] | None,
    radius: float,
    layers: int,
    out: NDArray[np.float32] | None = None,
    method: str = "auto",
) -> NDArray[np.float32]: ...
def nearest(
    world: World,
    points: NDArray[np.float32],
    max_dist: float,
    layers: int,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.int32]]: ...
def inside(world: World, points: NDArray[np.float32], layers: int) -> NDArray[np.bool_]: ...

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
    def _snapshot(self) -> dict[str, NDArray[np.generic]]: ...
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

def neighbours(
    positions: NDArray[np.float32],
    radius: float,
    max_neighbours: int,
    alive: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int32], NDArray[np.int32]]: ...
def evaluate_behaviour(
    agents: Agents,
    behaviour: object,
    directions: NDArray[np.float32],
    rotate: bool = False,
    time: float = 0.0,
    max_neighbours: int = 32,
    world: World | None = None,
) -> tuple[NDArray[np.float32], ...]: ...  # (interest, danger[, speed]): speed with a speed map
def behaviour_neighbor_radius(behaviour: object, max_radius: float, max_speed: float) -> float: ...
def behaviour_needs_neighbours(behaviour: object) -> bool: ...
def behaviour_specs() -> list[dict[str, Any]]: ...
def apply_motion(
    agents: Agents,
    model: object,
    direction: NDArray[np.float32],
    strength: NDArray[np.float32],
    dt: float,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]: ...

# --- simulation ---
class Simulation:
    def __init__(
        self,
        world: World | None,
        agents: Agents,
        behaviours: Sequence[object],
        config: dict[str, object],
        motion: object,
        params: dict[str, object],
        slots: int | SlotSet,
    ) -> None: ...
    def _perceive(self) -> None: ...
    def _decide_and_move(self, dt: float) -> None: ...
    def _step(self, dt: float, steps: int = 1) -> None: ...
    def _view(self, name: str) -> NDArray[np.generic]: ...
    def _behaviour_map(self, b: int) -> NDArray[np.float32] | None: ...
    def _check_agents(self) -> None: ...
    def _state(self) -> dict[str, Any]: ...
    def _set_state(self, state: dict[str, bytes]) -> None: ...
    @property
    def time(self) -> float: ...
    @property
    def step_count(self) -> int: ...
    @property
    def slots(self) -> int: ...
    @property
    def neighbor_radius(self) -> float: ...
    # observers (cpp/bindings/observe.cpp)
    def _configure_metrics(
        self,
        enabled: bool,
        goal_radius: float,
        path: Path | None,
        overtakes: bool,
        contact_tolerance: float,
        clearance_range: float,
        layers: int,
    ) -> None: ...
    def _metrics_info(self) -> dict[str, Any]: ...
    def _metric_view(self, name: str) -> NDArray[np.generic]: ...
    def _metrics_snapshot(
        self, names: list[str]
    ) -> tuple[
        dict[str, Any], dict[str, NDArray[np.generic]], NDArray[np.bool_], float, NDArray[np.bool_]
    ]: ...
    def _record(self, every: int, maps: bool, reserve: int) -> History: ...

# --- observers (metrics, history) ---
class History:
    @property
    def frames(self) -> int: ...
    @property
    def every(self) -> int: ...
    @property
    def attached(self) -> bool: ...
    @property
    def has_maps(self) -> bool: ...
    @property
    def has_progress(self) -> bool: ...
    @property
    def series_names(self) -> list[str]: ...
    def detach(self) -> None: ...
    def _view(self, name: str) -> NDArray[np.generic] | None: ...
    def _views(self, names: list[str]) -> dict[str, NDArray[np.generic] | None]: ...

def classic_accelerations(
    world: World | None,
    agents: Agents,
    spec: dict[str, Any],
    time: float = 0.0,
    max_neighbours: int = 16,
) -> NDArray[np.float32]: ...
def sweep_circle(
    world: World,
    start: NDArray[np.float32],
    displacement: NDArray[np.float32],
    radius: float,
    iterations: int = 4,
    layers: int = 0xFFFFFFFF,
) -> tuple[NDArray[np.float32], NDArray[np.int32]]: ...

# --- navigation ---
class NavField:
    def __init__(
        self,
        world: World,
        goals: list[dict[str, Any]],
        cell: float,
        radius: float,
        layers: int,
        margin: float,
    ) -> None: ...
    def rebuild(self, world: World) -> None: ...
    def built_from(self, world: World) -> bool: ...
    @property
    def count(self) -> int: ...
    @property
    def build_seconds(self) -> float: ...
    @property
    def blocking_radius(self) -> float: ...
    @property
    def grid(self) -> tuple[float, float, float, int, int]: ...
    def distance_grid(self, g: int) -> NDArray[np.float32]: ...
    def descent_grid(self, g: int) -> NDArray[np.float32]: ...
    @property
    def blocked(self) -> NDArray[np.bool_]: ...
    def query(
        self,
        points: NDArray[np.float32],
        which: NDArray[np.int32] | None = None,
        look_ahead: float = 0.0,
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]: ...
    def visible(self, a: NDArray[np.float32], b: NDArray[np.float32]) -> NDArray[np.bool_]: ...

def route(
    world: World,
    starts: NDArray[np.float32],
    goals: NDArray[np.float32],
    radius: float,
    layers: int,
    arc_points: int = 12,
) -> tuple[NDArray[np.float32], NDArray[np.int64], int]: ...

class PathSet:
    def __init__(self, paths: list[Path | None]) -> None: ...
    def __len__(self) -> int: ...
