"""Shared drawing helpers of :mod:`contextsteer.plot`: colours, axes, array checks, and
what a plot reads from a :class:`~contextsteer.Simulation` (:class:`SimView`)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast, overload

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from .._checks import is_integer, not_masked

if TYPE_CHECKING:
    from ..maps import SlotSet
    from ..simulation import Simulation

_WALL_COLOR = "0.2"
_PATH_COLOR = "tab:blue"
_INTEREST_COLOR = "tab:green"
_DANGER_COLOR = "tab:red"


_P = ParamSpec("_P")
_R = TypeVar("_R")


def tidy(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """A public plot function that closes the figures it made when it raises: each call
    with ``ax=None`` and a bad argument left a figure open in pyplot (fuzz round 20)."""

    @functools.wraps(fn)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import matplotlib.pyplot as plt

        before = set(plt.get_fignums())
        try:
            return fn(*args, **kwargs)
        except BaseException:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)
            raise

    return call


def _plain_axes(ax):
    """``ax``, or a new equal-aspect axes when None."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
        ax.set_aspect("equal")
    return ax


def _danger_cmap():
    """Grey (safe) to red (dangerous): rays without danger stay visible on white."""
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list("contextsteer_danger", ["0.82", _DANGER_COLOR])


def _agent_colors(index: np.ndarray) -> np.ndarray:
    """RGBA colours of agents by index, cycling ``tab10`` (bodies and trajectories agree)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return cmap(np.asarray(index) % 10)


def _floats(x: Any, what: str) -> np.ndarray:
    """``x`` as float64, a masked array refused (its hidden values would be drawn), and so
    are complex numbers (NumPy would drop the imaginary part), text and objects."""
    raw = np.asarray(not_masked(what, x))
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{what}: expected real numbers, got dtype {raw.dtype}")
    return raw.astype(np.float64, copy=False)


def _points(x: ArrayLike, what: str) -> np.ndarray:
    a = _floats(x, what)
    if a.ndim == 1 and a.shape[0] == 2:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{what}: expected shape (N, 2), got {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: must be finite")
    return a


@overload
def _per_agent(x: ArrayLike | None, n: int, what: str, default: float) -> np.ndarray: ...
@overload
def _per_agent(
    x: ArrayLike | None, n: int, what: str, default: None = None
) -> np.ndarray | None: ...
def _per_agent(
    x: ArrayLike | None, n: int, what: str, default: float | None = None
) -> np.ndarray | None:
    """A scalar or an (n,) array as a float64 (n,) array; None stays None unless defaulted."""
    if x is None:
        return None if default is None else np.full(n, default)
    a = _floats(x, what)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{what}: expected a scalar or shape ({n},), got {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: must be finite")
    return a


def _directions(slot_directions: SlotSet | ArrayLike | int) -> np.ndarray:
    """(K, 2) float64 slot directions from a slot set, an array or an int K."""
    if _checks.is_int(slot_directions) and not isinstance(slot_directions, bool):
        k = int(slot_directions)
        if k < 3:
            raise ValueError(f"slot_directions: expected K >= 3 slots, got {k}")
        return np.stack([np.cos(_slot_angles(k, 0.0)), np.sin(_slot_angles(k, 0.0))], axis=1)
    from ..maps import SlotSet

    d = slot_directions.directions if isinstance(slot_directions, SlotSet) else slot_directions
    d = _floats(d, "slot_directions")
    if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] < 3:
        raise ValueError(f"slot_directions: expected shape (K, 2) with K >= 3, got {d.shape}")
    if not np.all(np.isfinite(d)):
        raise ValueError("slot_directions: must be finite")
    off = np.flatnonzero(np.abs(np.hypot(d[:, 0], d[:, 1]) - 1.0) > 1e-3)
    if len(off):
        # As SlotSet.from_directions: a ray's drawn length is its direction's length times
        # the look-ahead, so (2, 0) drew rays twice as long as they were cast.
        raise ValueError(
            "slot_directions: slot directions must be unit vectors (|d| within 1e-3 of 1) "
            f"(at slot {int(off[0])}: |d| = {float(np.hypot(*d[off[0]])):g})"
        )
    return d


def _rotated(directions: np.ndarray, headings: np.ndarray | None, n: int) -> np.ndarray:
    """(n, K, 2) slot directions of each agent, turned counter-clockwise by its heading."""
    if headings is None:
        return np.broadcast_to(directions, (n, *directions.shape))
    c, s = np.cos(headings)[:, None], np.sin(headings)[:, None]
    x, y = directions[None, :, 0], directions[None, :, 1]
    return np.stack([c * x - s * y, s * x + c * y], axis=-1)


def _rows(
    x: ArrayLike | None, index: np.ndarray, n: int, what: str, tail: tuple[int, ...] = ()
) -> Any:
    """The rows ``index`` of a per-agent array of ``n`` rows (one per agent, or per slot of
    an Agents), None staying None; another row count is refused naming ``what`` (fewer
    rows raised a bare IndexError, more were cut silently). With ``tail``, a row of
    another shape is refused here, with the shape as given (after the selection, an
    Agents of 10 slots and 3 agents was said to have passed 3 rows)."""
    if x is None:
        return None
    a = np.asarray(not_masked(what, x))
    if a.ndim == 0 or a.shape[0] != n:
        raise ValueError(f"{what}: expected {n} rows, one per agent, got shape {a.shape}")
    if tail and a.shape[1:] != tail:
        expected = ", ".join(str(d) for d in (n, *tail))
        raise ValueError(f"{what}: expected shape ({expected}), got {a.shape}")
    return a[index]


def _agent_index(selection: Any, n: int, what: str) -> np.ndarray:
    """Agent indices (intp) from a selection: a sequence of integers, or a boolean mask
    of length ``n``. A mask used as indices drew agents 0 and 1 for every True and False;
    a float index was truncated."""
    not_masked(what, selection)
    a = np.asarray(list(selection) if not isinstance(selection, np.ndarray) else selection)
    if a.dtype == bool:
        if a.shape != (n,):
            raise IndexError(f"{what}: a boolean mask must have shape ({n},), got {a.shape}")
        return np.flatnonzero(a)
    if a.size == 0:
        return np.zeros(0, dtype=np.intp)
    if a.ndim != 1 or not is_integer(a):
        raise TypeError(
            f"{what}: expected agent indices (a sequence of ints) or a boolean mask of "
            f"shape ({n},), got {a.dtype} of shape {a.shape}"
        )
    index = a.astype(np.intp)
    bad = index[(index < 0) | (index >= n)]
    if len(bad):
        raise IndexError(f"{what}: index {bad[0]} out of range for {n} agents")
    return index


def _perceived_pose(sim: Simulation) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's position (N, 2) and heading (N,) when it last perceived: where the
    simulation's maps and sensed rays belong (the pose after the step's move is a step
    further on, and turned). Agents that have not perceived yet take their pose now."""
    return _pose_or_now(
        sim.perceived_position, sim.perceived_heading, sim.agents.position, sim.agents.heading
    )


def _pose_or_now(
    pos: ArrayLike, head: ArrayLike, now_pos: ArrayLike, now_head: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """A perceived pose, the current one where it is NaN (not perceived yet)."""
    pos_out = np.array(pos, dtype=np.float64)
    head_out = np.array(head, dtype=np.float64)
    missing = ~np.isfinite(pos_out).all(axis=-1) | ~np.isfinite(head_out)
    pos_out[missing] = np.asarray(now_pos, dtype=np.float64)[missing]
    head_out[missing] = np.asarray(now_head, dtype=np.float64)[missing]
    return pos_out, head_out


def _break_at_new_agents(points: np.ndarray, generations: np.ndarray | None) -> np.ndarray:
    """One slot's positions (T, 2) with a NaN row before every frame where the slot's
    generation changed (a new agent): its trail must not join the old agent's."""
    if generations is None or len(points) < 2:
        return points
    g = np.asarray(generations)
    cut = np.flatnonzero(g[1:] != g[:-1]) + 1
    return np.insert(points, cut, np.nan, axis=0) if len(cut) else points


def _generations(history: Any) -> np.ndarray | None:
    """(T, N) slot generations of a History or Recording, None otherwise."""
    from ..history import History, Recording

    if isinstance(history, (History, Recording)):
        g = history.generations
        return None if g is None else np.asarray(g)
    return None


def _positions(history: Any, name: str = "history") -> Any:
    """Positions (T, N, 2) of a History or Recording; an array as it is. A Simulation
    (its present, no frames) is a TypeError saying what to pass: NumPy's own named no
    argument ("float() argument must be ... not 'Simulation'")."""
    from ..history import History, Recording
    from ..simulation import Simulation

    if isinstance(history, (History, Recording)):
        return history.positions
    if isinstance(history, Simulation):
        raise TypeError(
            f"{name}: expected recorded frames (a History from sim.record(), a Recording "
            "from run_simulation(...).history, or a (T, N, 2) array), got a Simulation, "
            "which holds only its present"
        )
    return history


def _segments(a: np.ndarray) -> Sequence[ArrayLike]:
    """``a`` of shape (S, P, 2) as matplotlib's stubs type line segments (a sequence);
    LineCollection takes the array itself (it iterates over the first axis)."""
    return cast("Sequence[ArrayLike]", a)


def _slot_angles(k: int, offset: float) -> np.ndarray:
    return offset + 2.0 * np.pi * np.arange(k) / k


@dataclasses.dataclass(frozen=True)
class SimView:
    """What the plots read from a :class:`~contextsteer.Simulation`, in one place.

    Only state the simulation already holds: its world and agents, the paths of its
    ``FollowPath`` behaviours, the look-ahead of its first ``WallDanger`` (the reach of
    the slot rays), the slot count K, whether slots turn with the agents and the masking
    threshold of its resolve. Reading it never steps or perceives.
    """

    world: Any  #: World or None
    agents: Any  #: Agents
    paths: list  #: Path a FollowPath follows (per-agent paths: every one), unique
    slots: SlotSet | int  #: K, or the simulation's own SlotSet when it was given one
    look_ahead: float | None  #: of the first WallDanger, None without one
    rotate: bool  #: Steering(rotate=...)
    threshold: float  #: danger above which a slot counts as masked (inf: resolve is not mask)
    layers: int = 0xFFFFFFFF  #: obstacle layers the agents collide with (Simulation(layers=))

    def or_given(self, world=None, path=None, slots=None, look_ahead=None, rotate=None):
        """``(world, paths, slots, look_ahead, rotate)`` of this view, each replaced by the
        caller's value when that is not None."""
        return (
            self.world if world is None else world,
            self.paths if path is None else path,
            self.slots if slots is None else slots,
            self.look_ahead if look_ahead is None else look_ahead,
            self.rotate if rotate is None else rotate,
        )

    @classmethod
    def of(cls, sim: Simulation) -> SimView:
        """The view of ``sim``.

        Raises
        ------
        TypeError
            ``sim`` is not a :class:`~contextsteer.Simulation`.
        """
        from ..behaviours import FollowPath, WallDanger
        from ..simulation import Simulation
        from ..steering import Steering

        if not isinstance(sim, Simulation):
            raise TypeError(f"plot: expected a contextsteer.Simulation, got {type(sim).__name__}")
        steering = sim.steering
        # Classic steering (contextsteer.classic) has no context behaviours to read.
        behaviours = list(steering.behaviours) if isinstance(steering, Steering) else []
        paths: list = []
        look_ahead = None
        for b in behaviours:
            if isinstance(b, FollowPath):
                for p in b.path if isinstance(b.path, tuple) else (b.path,):
                    if p is not None and all(p is not q for q in paths):
                        paths.append(p)
            elif isinstance(b, WallDanger) and look_ahead is None:
                look_ahead = float(b.look_ahead)
        if isinstance(steering, Steering):
            rotate = steering.rotate
            threshold = steering.threshold if steering.resolve == "mask" else np.inf
        else:
            rotate, threshold = False, 0.0
        # A simulation given its own slot set (e.g. scenarios.crowd_slots) draws those
        # directions; otherwise the ring of K.
        given = getattr(sim, "_slot_set", None)
        slots = given if given is not None else int(sim.slots)
        layers = int(getattr(sim, "_layers", 0xFFFFFFFF))
        return cls(
            sim.world, sim.agents, paths, slots, look_ahead, bool(rotate), float(threshold), layers
        )


def _margin(what: str, value: Any) -> float:
    """A plot's ``margin`` (a fraction of the world's size): a finite real number >= 0,
    else an exception naming it (NaN would leave the limits NaN)."""
    from .. import _checks

    v = _checks.real(f"{what}: margin", value)
    if not (math.isfinite(v) and 0 <= v <= 1e6):
        raise ValueError(f"{what}: margin must be a finite fraction in [0, 1e6], got {value!r}")
    return v
