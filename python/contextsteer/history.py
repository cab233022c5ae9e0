"""History: agent states recorded at chosen steps, from inside the C++ step.

A :class:`History` attached to a simulation keeps positions, velocities, headings (and
optionally the interest and danger maps) every ``every`` steps while ``sim.step`` runs —
no per-step Python. Its arrays are read-only, zero-copy views ``(T, N, ...)`` of the
recorded frames; T grows as the simulation steps (take the views again to see new
frames; views taken earlier stay valid and unchanged).

A frame is taken inside the step, after the agents move. With a :class:`Flow`, that is
before the flow's exits at the end of the step: a walker removed at its exit is in the
frame of the step that took it past the exit line, and gone from the next. The
snapshots of :func:`run_simulation` (``RunResult.history``) are taken after the whole
step, so they no longer show it.
"""

from __future__ import annotations

import io
import math
import os
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from . import _checks, persist

if TYPE_CHECKING:
    import pandas

    from ._core import History as _CoreHistory
    from .simulation import Simulation

__all__ = ["History", "Recording"]


class Recording(NamedTuple):
    """Agent states at recorded steps: plain arrays, detached from any simulation.

    What :func:`contextsteer.run_simulation` keeps (``RunResult.history``) and what the
    animations (:func:`contextsteer.plot.animate`, :func:`contextsteer.plot.frames`) draw;
    a :class:`History` carries the same attributes, with one difference: a Recording's
    ``steps`` and ``times`` count from the recording's first frame (0), a History's from
    the simulation's start (its first frame is the step count when recording began).

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> rec = cs.Recording(np.arange(3), np.zeros((3, 2, 2), np.float32),
    ...                    np.zeros((3, 2), np.float32), np.full(2, 0.5, np.float32), None)
    >>> rec.positions.shape, rec.danger is None, rec.times is None
    ((3, 2, 2), True, True)
    """

    steps: np.ndarray | None  #: (T,) int64 step counts since the recording started, or None
    positions: np.ndarray  #: (T, N, 2) float32; NaN where an agent is dead
    headings: np.ndarray | None  #: (T, N) float32, or None
    radii: np.ndarray | None  #: (N,) or (T, N) float32 (each frame's), or None
    danger: np.ndarray | None  #: (T, N, K) float32 danger maps, or None when not recorded
    times: np.ndarray | None = None  #: (T,) float64 simulated seconds, or None
    sensed: np.ndarray | None = None  #: (T, N, K) float32 ray hits (Simulation.sensed), or None
    #: (T, N, 2) float32 positions where the frame's maps were perceived, or None
    perceived_positions: np.ndarray | None = None
    #: (T, N) float32 headings with which the frame's maps were perceived, or None
    perceived_headings: np.ndarray | None = None
    #: (T, N) uint32 each slot's Agents.generation (a change: a new agent), or None
    generations: np.ndarray | None = None

    def _take(self, index: np.ndarray) -> Recording:
        """The frames ``index`` (an integer array) of this recording."""
        fields: list[Any] = [
            None
            if v is None
            else (v if name == "radii" and np.ndim(v) == 1 else np.asarray(v)[index])
            for name, v in zip(self._fields, self)
        ]
        return Recording(*fields)


_MAX_EVERY = 2**63 - 1  # the core's step interval is a C long
_MAX_RESERVE = 2**31 - 1  # frames preallocated; more would overflow the buffer sizes


def _count(name: str, value: Any, high: int) -> int:
    """An int (Python or NumPy, not a bool) in [1, high]."""
    if isinstance(value, bool) or not _checks.is_int(value):
        raise TypeError(f"History: {name} must be an int, got {type(value).__name__}")
    if not 1 <= value <= high:
        raise ValueError(f"History: {name} must be in [1, {high}], got {value}")
    return int(value)


def _view(name: str, doc: str) -> _checks.ReadOnlyArrayView:
    return cast(_checks.ReadOnlyArrayView, property(lambda self: self._core._view(name), doc=doc))


_FRAME_VIEWS = (
    "steps",
    "times",
    "positions",
    "velocities",
    "headings",
    "alive",
    "groups",
    "generations",
    "radii",
    "interest",
    "danger",
    "sensed",
    "perceived_positions",
    "perceived_headings",
    "progress",
    "series",
)


class _Frames:
    """The frames of an unpickled History: read-only copies, no longer recording."""

    attached = False

    def __init__(self, views: dict, every: int, frames: int, series_names: list) -> None:
        self._copies, self.every, self.frames = views, every, frames
        self.series_names = series_names

    def _view(self, name: str) -> np.ndarray | None:
        return self._copies.get(name)  # pickles older than a view have none

    def _views(self, names: list[str]) -> dict[str, np.ndarray | None]:
        return {name: self._view(name) for name in names}

    def detach(self) -> None:
        pass


def _unpickle_history(
    sim: Simulation, radii: np.ndarray, views: dict, every: int, frames: int, series_names: list
) -> History:
    history = History.__new__(History)
    history.sim, history.radii = sim, radii
    for v in (radii, *views.values()):
        if v is not None:
            v.flags.writeable = False
    history._core = _Frames(views, every, frames, series_names)
    return history


def _trajectory_ids(
    slot: np.ndarray, generation: np.ndarray, frame: np.ndarray | None = None
) -> np.ndarray:
    """One id per agent's trajectory: the slots, unless a slot held several agents (its
    generation changed) or, given the ``frame`` of each row, an agent's frames have a gap
    (it was switched off and on again); then each (slot, generation, run of consecutive
    frames) gets an id, numbered in that order."""
    slot = np.asarray(slot, np.int64)
    generation = np.asarray(generation, np.int64)
    if len(slot) == 0:
        return slot
    order = np.lexsort((frame, generation, slot) if frame is not None else (generation, slot))
    s, g = slot[order], generation[order]
    new = np.ones(len(order), bool)
    new[1:] = (s[1:] != s[:-1]) | (g[1:] != g[:-1])
    if frame is not None:
        f = np.asarray(frame, np.int64)[order]
        new[1:] |= f[1:] != f[:-1] + 1
    if np.count_nonzero(new) == len(np.unique(s)):
        return slot  # one trajectory a slot: its id is the slot
    ids = np.empty(len(order), np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids


def _check_one_frame_rate(times: Any) -> None:
    """Refuse frames not evenly spaced in time (to within rounding of the float steps)."""
    times = np.asarray(times, dtype=np.float64)
    if len(times) > 2:
        gaps = np.diff(times)
        if np.ptp(gaps) > 1e-5 * np.mean(gaps):
            raise ValueError(
                "to_pedpy: PedPy assumes one frame rate, but this history's frames are "
                f"{gaps.min():.6g} to {gaps.max():.6g} s apart (step calls with different "
                "dt): its speeds and flows would be wrong. Record each dt in a History of "
                "its own"
            )


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
        Steps between frames, in [1, 2**63 - 1].
    maps : bool, default False
        Also keep the interest and danger maps (T × N × K floats each), each agent's
        pose when it perceived them (:attr:`perceived_positions`,
        :attr:`perceived_headings`) and, when the simulation has a ``WallDanger``, what
        its slot rays sensed (:attr:`sensed`).
    reserve : int, optional
        Frames to preallocate, in [1, 2**31 - 1] (default 64). The storage doubles when
        a step call's frames do not fit; that happens at the start of the call, for every
        frame of the call, so a ``MemoryError`` then leaves the simulation as it was (no
        step taken, no frame lost). So a History takes room for ``steps // every`` frames
        of a call at once: to step until Ctrl-C with one attached, step in a loop of
        calls whose frames fit, not one call of ``steps=2**62``. The call is refused
        when the buffers of every History on the simulation after it, plus the largest
        one a grow replaces (held while its frames are copied), would not fit in the
        memory this process may use.

    Raises
    ------
    TypeError
        ``every`` or ``reserve`` is not an int, or ``maps`` is not a bool (or 0 or 1).
    ValueError
        ``every`` or ``reserve`` is out of range.
    MemoryError
        ``reserve`` frames would not fit in the memory this process may use.

    Attributes
    ----------
    radii : ndarray of float32, shape (N,)
        The agents' radii when recording started (each frame's: :attr:`frame_radii`).

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

    _core: _CoreHistory | _Frames  # the C++ recorder, or the frames of an unpickled copy
    steps = _view("steps", "(T,) int64 step count of each frame.")
    times = _view("times", "(T,) float64 simulated seconds of each frame.")
    positions = _view("positions", "(T, N, 2) float32 positions; NaN where an agent is dead.")
    velocities = _view("velocities", "(T, N, 2) float32 velocities.")
    headings = _view("headings", "(T, N) float32 headings (radians).")
    alive = _view("alive", "(T, N) bool.")
    groups = _view("groups", "(T, N) int32 each agent's group at each frame.")
    frame_radii = _view(
        "radii",
        "(T, N) float32 view: each slot's radius at each frame (that of the agent then in "
        "the slot; :attr:`radii` is the first frame's). None for a History unpickled from "
        "a version that did not record it.",
    )
    generations = _view(
        "generations",
        "(T, N) uint32 each slot's :attr:`Agents.generation` at each frame: a slot whose "
        "value changes holds a new agent from that frame on.",
    )
    interest = _view("interest", "(T, N, K) float32 interest maps, or None without maps.")
    danger = _view("danger", "(T, N, K) float32 danger maps, or None without maps.")
    sensed = _view(
        "sensed",
        "(T, N, K) float32 what the slot rays of the simulation's first "
        "WallDanger sensed (Simulation.sensed: hit distance, +inf where clear), "
        "or None without maps or without a WallDanger.",
    )
    perceived_positions = _view(
        "perceived_positions",
        "(T, N, 2) float32 each agent's position when it perceived the frame's maps "
        "(Simulation.perceived_position: before the step's move, or at the agent's last "
        "decision with time slicing), or None without maps. The animations draw the "
        "maps and rays there.",
    )
    perceived_headings = _view(
        "perceived_headings",
        "(T, N) float32 each agent's heading when it perceived the frame's maps (the slot "
        "frame of turning slots), or None without maps.",
    )
    progress = _view("progress", "(T, N) float32 progress along the metrics path, or None.")

    def __init__(
        self,
        sim: Simulation,
        every: int | np.integer[Any] = 1,
        *,
        maps: bool = False,
        reserve: int | np.integer[Any] | None = None,
    ) -> None:
        from .simulation import Simulation

        if not isinstance(sim, Simulation):
            raise TypeError(f"History: sim must be a Simulation, got {type(sim).__name__}")
        every = _count("every", every, _MAX_EVERY)
        maps = _checks.flag("History: maps", maps)  # a bool, or the ints 0 and 1
        reserve = 64 if reserve is None else _count("reserve", reserve, _MAX_RESERVE)
        from .maps import _memory_text, _physical_memory

        # Bytes a frame: positions, velocities, headings, alive, groups, generations, radii
        # and progress per agent; with maps interest, danger and sensed rays per agent and
        # slot and the perceived pose per agent.
        n, k = len(sim.agents.alive), int(sim.slots)
        need = reserve * (37 * n + (12 * n * k + 12 * n if maps else 0) + 64)
        if need > _physical_memory():
            raise MemoryError(
                f"History: reserve={reserve:,} frames of {n:,} agents"
                f"{' with maps' if maps else ''} need about {need / 2**30:.3g} GiB, more "
                f"than {_memory_text()}"
            )
        self.sim = sim
        self.radii = np.array(sim.agents.radius, dtype=np.float32)
        self.radii.flags.writeable = False  # read-only, as every array of a History
        self._core = sim._core._record(every, bool(maps), reserve)

    def __len__(self) -> int:
        return self._core.frames

    @property
    def every(self) -> int:
        """The step interval of the recording: a frame every ``every`` steps."""
        return self._core.every

    @property
    def attached(self) -> bool:
        """Whether the history still records."""
        return self._core.attached

    @property
    def series(self) -> dict[str, np.ndarray]:
        """Per-frame scalars, ``{name: (T,) float32}``: ``agent_collisions`` and
        ``wall_collisions`` (the run's episodes so far, agents since removed included, as
        :meth:`Simulation.metrics` counts them), ``min_clearance`` (the smallest current
        clearance), ``mean_speed``, ``arrived``, ``stuck``, ``mean_progress``, ``laps``
        (these four of the agents alive at the frame: an agent removed on arrival, by
        :meth:`Agents.remove` or a :class:`Flow`'s exit, counts in ``arrived`` only on
        the frame it arrived in, if recorded before its removal; the run's arrivals of
        removed agents are :meth:`Simulation.metrics`' ``time_to_goal["removed"]["arrived"]``;
        ``arrived`` and ``stuck`` count as :meth:`Simulation.metrics` does: kinematic
        agents left out, an agent at its goal not stuck; without metrics ``stuck`` counts
        the stuck detection's raw flags)
        (NaN for metric-based series when the simulation's metrics are disabled;
        ``arrived`` NaN without a goal radius, ``mean_progress`` and ``laps`` NaN without
        a metrics path, where :meth:`Simulation.metrics` reports None)."""
        table = self._core._view("series")
        assert table is not None  # the series are always recorded
        return {name: table[:, i] for i, name in enumerate(self._core.series_names)}

    # ----------------------------------------------------------------- data out ---
    def _table(self) -> dict[str, np.ndarray]:
        """Columns of the long table: one row per alive agent per frame, frame-major."""
        # Every column from one snapshot: the simulation may record meanwhile (another
        # thread), and columns read one by one could differ by a frame.
        v = self._core._views(list(_FRAME_VIEWS))
        steps = v["steps"]
        assert steps is not None  # always recorded
        t_count = len(steps)
        pos = np.asarray(v["positions"])
        alive = np.asarray(v["alive"], dtype=bool) & np.isfinite(pos).all(axis=2)
        frame, agent = np.nonzero(alive)  # frame-major, ids ascending
        vel = np.asarray(v["velocities"])
        groups, generations = v["groups"], v["generations"]
        if groups is None:  # a pickle from before groups were recorded: the current ones
            group = np.asarray(self.sim.agents.group)[: pos.shape[1]][agent]
        else:
            group = np.asarray(groups)[frame, agent]
        generation = (
            np.zeros(len(agent), np.int64)
            if generations is None
            else np.asarray(generations)[frame, agent].astype(np.int64)
        )
        radii = v["radii"]
        if radii is None:  # a pickle from before radii were recorded: the current ones
            radius = np.asarray(self.sim.agents.radius)[: pos.shape[1]][agent]
        else:
            radii = np.asarray(radii)
            radius = radii[agent] if radii.ndim == 1 else radii[frame, agent]
        cols: dict[str, np.ndarray] = {
            "id": agent.astype(np.int64),
            "frame": frame.astype(np.int64),
            "step": np.asarray(v["steps"])[frame].astype(np.int64),
            "time": np.asarray(v["times"])[frame].astype(np.float64),
            "x": pos[frame, agent, 0].astype(np.float64),
            "y": pos[frame, agent, 1].astype(np.float64),
            "vx": vel[frame, agent, 0].astype(np.float64),
            "vy": vel[frame, agent, 1].astype(np.float64),
            "heading": np.asarray(v["headings"])[frame, agent].astype(np.float64),
            "radius": np.asarray(radius).astype(np.float64),
            "group": group.astype(np.int64),
            "generation": generation,
        }
        progress = v["progress"]
        if progress is not None:
            cols["progress"] = np.asarray(progress)[frame, agent].astype(np.float64)
        table = np.asarray(v["series"], dtype=np.float64)
        for i, name in enumerate(self._core.series_names):
            cols[name] = table[frame, i] if t_count else np.zeros(0)
        return cols

    def to_dataframe(self) -> pandas.DataFrame:
        """The recorded frames as a long :class:`pandas.DataFrame`, one row per alive agent
        per frame (tidy data, as PedPy and seaborn expect).

        Columns: ``id`` (agent index, its slot), ``frame`` (0, 1, ... in recording order),
        ``step``, ``time`` (s), ``x``, ``y``, ``vx``, ``vy``, ``heading`` (rad), ``radius``
        (at that frame: overlaps of mixed radii can be checked from the table), ``group``
        (at that frame), ``generation`` (the slot's :attr:`Agents.generation` at that
        frame: a slot freed and given to a new agent keeps its ``id`` and gets a new
        generation), ``progress`` (with a metrics path) and the per-frame :attr:`series`
        (the same value on every row of a frame). Rows are sorted by frame, then id. Needs
        pandas (``pip install contextsteer[pandas]``).

        Examples
        --------
        >>> import pytest, contextsteer as cs
        >>> agents = cs.Agents(2, slots=8)
        >>> _ = agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
        >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
        >>> history = sim.record(every=10)
        >>> sim.step(dt=0.1, steps=20)
        >>> pd = pytest.importorskip("pandas")
        >>> df = history.to_dataframe()
        >>> print(df[["id", "frame", "time", "x", "y", "vx"]].round(2).to_string(index=False))
         id  frame  time   x   y  vx
          0      0   0.0 0.0 0.0 1.0
          1      0   0.0 0.0 2.0 1.0
          0      1   1.0 1.0 0.0 1.0
          1      1   1.0 1.0 2.0 1.0
          0      2   2.0 2.0 0.0 1.0
          1      2   2.0 2.0 2.0 1.0
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas
            raise ImportError(
                "History.to_dataframe needs pandas: pip install "
                "'contextsteer[pandas]' (or History.to_csv, which does not)"
            ) from exc
        return pd.DataFrame(self._table())

    def to_csv(self, path: str | os.PathLike[str], *, float_format: str | None = None) -> None:
        """Write the :meth:`to_dataframe` table to a CSV file, without pandas.

        One header line with the column names, then one row per alive agent per frame.
        By default every number is written exactly: the recorded float32 values (every
        column but ``time``) with 9 significant digits, which read back as the same
        float32, and the float64 ``time`` with 17. ``float_format`` (a ``%`` format such as ``"%.4f"``)
        rounds every float column to it instead.

        Examples
        --------
        >>> import csv, io, tempfile, os, contextsteer as cs
        >>> agents = cs.Agents(2, slots=8)
        >>> _ = agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
        >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
        >>> history = sim.record(every=10)
        >>> sim.step(dt=0.1, steps=20)
        >>> with tempfile.TemporaryDirectory() as d:
        ...     history.to_csv(os.path.join(d, "run.csv"))
        ...     with open(os.path.join(d, "run.csv"), newline="") as f:
        ...         rows = list(csv.DictReader(f))
        >>> len(rows), rows[-1]["id"], rows[-1]["frame"], rows[-1]["x"], rows[-1]["y"]
        (6, '1', '2', '2.00000024', '2')
        """
        if float_format is not None:
            # Checked before the file is touched: a bad format raised mid-write and left
            # an existing file with its header only.
            try:
                # NumPy's savetxt splits its row format at every '%': one conversion and
                # no '%%'.
                if not isinstance(float_format, str) or float_format.count("%") != 1:
                    raise TypeError
                # NumPy scalars, as savetxt formats them ('%r' of np.float64 writes its
                # repr, "np.float64(1.5)", where a float's passed the check).
                samples = [
                    float_format % v
                    for x in (1.5, -2.25e-7, math.inf, math.nan)
                    for v in (np.float64(x), np.float32(x))
                ]
            except (TypeError, ValueError, OverflowError):
                raise ValueError(
                    f"to_csv: float_format must be a % format of one float, such as '%.4f' or "
                    f"'%.6g' (it must also write inf and nan), got {float_format!r}"
                ) from None
            allowed = set("0123456789+-.eEinfaINFA ")
            if any(set(t) - allowed for t in samples):
                raise ValueError(
                    "to_csv: float_format must write numbers only (digits, sign, point, "
                    f"exponent, inf, nan, spaces: no ',', quotes or line breaks), got "
                    f"{float_format!r}"
                )
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"to_csv: path must be a str or os.PathLike, got {path!r}")
        cols = self._table()
        names = list(cols)
        ints = {"id", "frame", "step", "group", "generation"}
        # Whole or not at all (a failed export keeps an earlier file), with a symlink, a
        # device such as /proc/self/fd/1, a file's mode and a read-only folder treated as
        # open() treats them (persist._replacing).
        with persist._replacing(path, "to_csv", in_place_ok=True) as raw:
            f = io.TextIOWrapper(raw, newline="", encoding="utf-8")
            try:
                f.write(",".join(names) + "\n")
                if len(cols["id"]):
                    fmt = ",".join(
                        "%d" if n in ints else float_format or ("%.17g" if n == "time" else "%.9g")
                        for n in names
                    )
                    table = np.column_stack([cols[n].astype(np.float64) for n in names])
                    np.savetxt(f, table, fmt=fmt)
            finally:
                f.detach()  # flushed, and the file left to _replacing to sync and rename

    @property
    def frame_rate(self) -> float:
        """Frames per simulated second over the whole recording, rounded to 6 significant
        digits (the times are sums of float steps); NaN with fewer than 2 frames. A mean
        when step calls used different ``dt`` (:meth:`to_pedpy` refuses those)."""
        times = np.asarray(self.times, dtype=np.float64)
        if len(times) < 2 or not times[-1] > times[0]:
            return float("nan")
        return float(f"{(len(times) - 1) / (times[-1] - times[0]):.6g}")

    def to_pedpy(self, frame_rate: float | None = None) -> Any:
        """The trajectories as a ``pedpy.TrajectoryData`` (id, frame, x, y and the frame rate).

        PedPy, the pedestrian-dynamics analysis library of the JuPedSim project, measures
        densities, speeds and flows on it (``pip install contextsteer[pedpy]``). PedPy
        works in metres and seconds: the crowd scenarios are in metres already; scale
        other worlds first. The ids are the agents' slots, unless a slot held more than one
        agent during the recording, or an agent's frames have a gap (it was switched off
        through ``Agents.alive`` and on again): then each (slot, generation, run of
        consecutive frames) gets an id of its own, numbered in that order, since PedPy
        reads a trajectory's rows as consecutive frames. Frames are this history's frame
        indices (``frame`` of :meth:`to_dataframe`); the frame rate is :attr:`frame_rate`
        unless given. PedPy assumes one frame rate: a history whose frames are not evenly
        spaced in time (step calls with different ``dt``) is a ``ValueError``.

        Flows through a flow's exit line: a walker's trajectory ends on the first frame
        past its exit (it is removed in that step), and PedPy (1.5) does not count a
        crossing made in a trajectory's last movement: ``compute_n_t`` on a counterflow's
        exit line counted 6 of the 49 walkers out. Measure on a line inside the domain,
        at least one step's walk before the exit.

        Examples
        --------
        >>> import pytest, contextsteer as cs
        >>> sim = cs.scenarios.get("oncoming")()
        >>> history = sim.record(every=3)
        >>> sim.step(1 / 30, steps=90)
        >>> pedpy = pytest.importorskip("pedpy")
        >>> traj = history.to_pedpy()
        >>> traj.frame_rate, len(traj.data), list(traj.data.columns)[:4]
        (10.0, 62, ['id', 'frame', 'x', 'y'])
        """
        try:
            import pedpy
        except ImportError as exc:  # pragma: no cover - exercised without pedpy
            raise ImportError(
                "History.to_pedpy needs PedPy: pip install 'contextsteer[pedpy]'"
            ) from exc
        import pandas as pd

        if frame_rate is not None and (
            isinstance(frame_rate, bool) or not isinstance(frame_rate, (int, float, np.number))
        ):
            raise TypeError(f"to_pedpy: frame_rate must be a number, got {frame_rate!r}")
        rate = self.frame_rate if frame_rate is None else float(frame_rate)
        if not 0 < rate < math.inf:
            raise ValueError(
                "to_pedpy: frame_rate must be a finite number > 0 (a history of >= 2 frames "
                f"gives it), got {rate}"
            )
        cols = self._table()
        _check_one_frame_rate(self.times)
        ids = _trajectory_ids(cols["id"], cols["generation"], cols["frame"])
        data = pd.DataFrame({"id": ids, "frame": cols["frame"], "x": cols["x"], "y": cols["y"]})
        return pedpy.TrajectoryData(data=data, frame_rate=rate)

    def detach(self) -> None:
        """Stop recording (the frames so far stay)."""
        self._core.detach()

    def __reduce__(self):
        """Pickles (and ``copy.deepcopy``) as a detached copy: the frames so far, with the
        simulation they were recorded from (pickled along, so one pickle of both keeps
        them together). The copy does not record; the original goes on recording."""
        views = {
            name: (None if v is None else np.array(v))
            for name, v in self._core._views(list(_FRAME_VIEWS)).items()
        }
        return (
            _unpickle_history,
            (
                self.sim,
                self.radii,
                views,
                self.every,
                len(views["steps"] if views["steps"] is not None else ()),  # the snapshot's
                list(self._core.series_names),
            ),
        )

    def __copy__(self):
        raise TypeError(
            "History: a shallow copy would share the recorder; use "
            "copy.deepcopy(history) or pickle for a detached copy"
        )

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()

    @_checks.safe_repr
    def __repr__(self) -> str:
        return f"History(frames={len(self)}, every={self.every}, attached={self.attached})"
