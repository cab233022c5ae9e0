"""History: agent states recorded at chosen steps, from inside the C++ step.

A :class:`History` attached to a simulation keeps positions, velocities, headings (and
optionally the interest and danger maps) every ``every`` steps while ``sim.step`` runs —
no per-step Python. Its arrays are read-only, zero-copy views ``(T, N, ...)`` of the
recorded frames; T grows as the simulation steps (take the views again to see new
frames; views taken earlier stay valid and unchanged).
"""

from __future__ import annotations

import numpy as np

__all__ = ["History"]


def _view(name: str, doc: str) -> property:
    return property(lambda self: self._core._view(name), doc=doc)


class History:
    """Record a simulation's agents at every ``every``-th step, in C++.

    The first frame is the state when the history is created; then one frame after each
    step whose count since then is a multiple of ``every``. Recording stops with
    :meth:`detach` (or when the History is garbage-collected, or at the end of a
    ``with`` block).

    Parameters
    ----------
    sim : Simulation
    every : int, default 1
        Steps between frames, >= 1.
    maps : bool, default False
        Also keep the interest and danger maps (T × N × K floats each).
    reserve : int, optional
        Frames to preallocate (storage doubles when full, which allocates inside a step).

    Attributes
    ----------
    radii : ndarray of float32, shape (N,)
        The agents' radii when recording started.

    Examples
    --------
    >>> import contextsteer as cs
    >>> agents = cs.Agents(2, slots=8)
    >>> _ = agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
    >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    >>> history = cs.History(sim, every=10)
    >>> sim.step(dt=0.1, steps=30)
    >>> history.steps.tolist(), history.positions.shape
    ([0, 10, 20, 30], (4, 2, 2))
    >>> history.positions[-1].round(2).tolist()          # 3 s at speed 1 along +x
    [[3.0, 0.0], [3.0, 2.0]]
    >>> history.series["mean_speed"].tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> history.detach(); sim.step(dt=0.1, steps=10); len(history)
    4
    """

    steps = _view("steps", "(T,) int64 step count of each frame.")
    times = _view("times", "(T,) float64 simulated seconds of each frame.")
    positions = _view("positions", "(T, N, 2) float32 positions; NaN where an agent is dead.")
    velocities = _view("velocities", "(T, N, 2) float32 velocities.")
    headings = _view("headings", "(T, N) float32 headings (radians).")
    alive = _view("alive", "(T, N) bool.")
    interest = _view("interest", "(T, N, K) float32 interest maps, or None without maps.")
    danger = _view("danger", "(T, N, K) float32 danger maps, or None without maps.")
    progress = _view("progress", "(T, N) float32 progress along the metrics path, or None.")

    def __init__(self, sim, every: int = 1, *, maps: bool = False,
                 reserve: int | None = None) -> None:
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)):
            raise TypeError(f"History: every must be an int, got {type(every).__name__}")
        if every < 1:
            raise ValueError(f"History: every must be >= 1, got {every}")
        if reserve is None:
            reserve = 64
        self.sim = sim
        self.radii = np.array(sim.agents.radius, dtype=np.float32)
        self._core = sim._core._record(int(every), bool(maps), int(reserve))

    def __len__(self) -> int:
        return self._core.frames

    @property
    def every(self) -> int:
        return self._core.every

    @property
    def attached(self) -> bool:
        """Whether the history still records."""
        return self._core.attached

    @property
    def series(self) -> dict[str, np.ndarray]:
        """Per-frame scalars, ``{name: (T,) float32}``: ``agent_collisions`` and
        ``wall_collisions`` (episodes so far), ``min_clearance`` (the smallest current
        clearance), ``mean_speed``, ``arrived``, ``stuck``, ``mean_progress``, ``laps``
        (NaN for metric-based series when the simulation's metrics are disabled)."""
        table = self._core._view("series")
        return {name: table[:, i] for i, name in enumerate(self._core.series_names)}

    def detach(self) -> None:
        """Stop recording (the frames so far stay)."""
        self._core.detach()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc) -> None:
        self.detach()

    def __repr__(self) -> str:
        return f"History(frames={len(self)}, every={self.every}, attached={self.attached})"
