"""Run metrics as charts (:func:`metrics`): a History's per-frame series against time, or
bars of a metric summary."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..history import History
from ..simulation import Simulation
from ._draw import tidy

__all__ = ["MetricsArtists", "metrics"]


class MetricsArtists(NamedTuple):
    """Artists drawn by :func:`metrics`."""

    axes: list  #: the axes drawn on (one per series, or one for bars)
    artists: dict  #: ``{name: Line2D}`` for series, ``{"bars": BarContainer}`` for a summary


#: Series drawn by default from a History, with their axis labels.
_SERIES_LABELS = {
    "agent_collisions": "agent–agent episodes",
    "wall_collisions": "agent–wall episodes",
    "min_clearance": "min clearance",
    "mean_speed": "mean speed",
    "arrived": "arrived",
    "stuck": "stuck",
    "mean_progress": "mean progress",
    "laps": "laps",
}

#: Counts drawn as bars from a metrics dict: (label, path into the dict).
_SUMMARY_BARS = (
    ("agent–agent\ncollisions", ("collisions", "agent_agent")),
    ("agent–wall\ncollisions", ("collisions", "agent_wall")),
    ("arrived", ("time_to_goal", "arrived")),
    ("laps", ("laps", "total")),
    ("overtakes", ("overtakes",)),
    ("stuck\n(ever)", ("stuck", "ever")),
)


def _lookup(d, keys):
    for k in keys:
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d


@tidy
def metrics(
    data: History | dict | Simulation,
    ax: Any = None,
    *,
    series: Sequence[str] | None = None,
    **kwargs: Any,
) -> MetricsArtists:
    """Plot run metrics: time series of a :class:`~contextsteer.History`, or bars of a
    metric summary.

    Parameters
    ----------
    data : History, dict, RunResult or Simulation
        A :class:`~contextsteer.History`: one line a series
        against simulated time. A dict from ``Simulation.metrics()`` (or a simulation,
        whose ``metrics()`` is called, or a :class:`~contextsteer.RunResult` of
        ``run_scenario`` / ``run_simulation``, whose ``metrics`` are used): bars of the
        counts it has — collisions by kind, arrivals, laps, overtakes, stuck agents. A
        run's ``history`` (a :class:`~contextsteer.Recording`) holds no series; record a
        History for them. A summary with none of those counts (a simulation's whose
        metrics are off, or another dict) is a ``ValueError``.
    ax : Axes or sequence of Axes, optional
        For series: one axes a series (new stacked axes sharing x when None); for bars:
        one axes.
    series : sequence of str, optional
        Series of a History to draw (default collisions, min clearance, mean speed,
        plus laps or arrivals when they are not all zero/NaN); a ``ValueError`` with a
        summary, whose bars are fixed.
    **kwargs
        Passed to ``plot`` / ``bar``.

    Returns
    -------
    MetricsArtists

    Examples
    --------
    >>> import matplotlib.pyplot as plt, contextsteer as cs
    >>> agents = cs.Agents(2, slots=8)
    >>> _ = agents.add([[0, 0], [3, 0]], velocity=[[1, 0], [-1, 0]], max_speed=1)
    >>> sim = cs.Simulation(None, agents, [cs.Forward()], push_apart=False)
    >>> history = sim.record(every=2)
    >>> sim.step(dt=0.1, steps=20)
    >>> art = cs.plot.metrics(history, series=["agent_collisions", "mean_speed"])
    >>> art.artists["agent_collisions"].get_ydata().tolist()[-1]
    1.0
    >>> bars = cs.plot.metrics(sim.metrics()).artists["bars"]
    >>> [round(b.get_height()) for b in bars][:2]
    [1, 0]
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    from ..history import Recording
    from ..run import RunResult

    if isinstance(data, Simulation):
        data = data.metrics()  # a read: the metrics the simulation holds
    elif isinstance(data, RunResult):
        data = data.metrics  # the run's final metrics (its Recording holds no series)
    elif isinstance(data, Recording):
        raise TypeError(
            "metrics: a Recording (RunResult.history) holds positions only, no metric "
            "series: pass the RunResult or its .metrics for the bars, or record a History "
            "(Simulation.record) for the series"
        )
    elif not isinstance(data, (dict, History)):
        raise TypeError(
            f"metrics: expected a History, a metrics dict, a RunResult or a Simulation, got "
            f"{type(data).__name__}"
        )
    if isinstance(data, dict):
        if series is not None:
            raise ValueError(
                "metrics: series picks the time series of a History; a metrics summary "
                "(dict, RunResult or Simulation) draws its counts as bars"
            )
        labels, values = [], []
        for label, keys in _SUMMARY_BARS:
            v = _lookup(data, keys)
            if v is not None:
                # A count: a real number, finite and >= 0 ("3", True, NaN and -5 were
                # drawn; fuzz round 25).
                if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real):
                    raise TypeError(
                        f"metrics: {'.'.join(keys)} of a metrics summary must be a number, "
                        f"got {type(v).__name__}"
                    )
                try:
                    f = float(v)
                except OverflowError:  # an int beyond float range
                    f = math.inf
                # Beyond 2**53 a float no longer holds every count, and a bar of 1e308
                # drew an axis to infinity.
                exact = int(v) if isinstance(v, numbers.Integral) else f
                if not 0 <= f <= 2**53 or not 0 <= exact <= 2**53:
                    raise ValueError(
                        f"metrics: {'.'.join(keys)} of a metrics summary must be a count "
                        f"(in [0, 2**53]), got {v!r:.40}"
                    )
                values.append(f)
                labels.append(label)
        if not labels and data.get("enabled") is False:
            raise ValueError(
                "metrics: this summary's run metrics were off "
                "(Simulation.configure_metrics(enabled=False)), so it holds no counts to draw"
            )
        if not labels:
            wanted = ", ".join(".".join(keys) for _, keys in _SUMMARY_BARS)
            raise ValueError(
                "metrics: the dict holds none of the counts of a metrics summary "
                f"(Simulation.metrics()): expected at least one of {wanted}; got keys "
                f"{sorted(map(str, data))[:8]}"
            )
        if ax is None:
            _, ax = plt.subplots(figsize=(1.0 + 0.9 * len(labels), 3.0), layout="constrained")
        kwargs = {"color": "0.45", **kwargs}
        bars = ax.bar(range(len(values)), values, **kwargs)
        ax.set_xticks(range(len(values)), labels, fontsize=8)
        ax.bar_label(bars, fmt="%g", fontsize=8)
        ax.set_ylabel("count")
        title = []
        if data.get("composite") is not None:
            title.append(f"composite {data['composite']:.1f}")
        clear = _lookup(data, ("min_clearance", "wall"))
        if clear is not None:
            title.append(f"min wall clearance {clear:.3g}")
        ax.set_title(", ".join(title), fontsize=9)
        return MetricsArtists([ax], {"bars": bars})

    table = data.series
    times = np.asarray(data.times, dtype=np.float64)
    if series is None:
        series = ["agent_collisions", "wall_collisions", "min_clearance", "mean_speed"]
        for extra in ("laps", "arrived"):
            v = np.asarray(table[extra])
            if np.isfinite(v).any() and np.nanmax(v) > 0:
                series.append(extra)
    series = [series] if isinstance(series, str) else list(series)  # one name, not its letters
    if not series:
        raise ValueError(
            f"metrics: series must name at least one series of {sorted(table)}, got []"
        )
    unknown = [s for s in series if s not in table]
    if unknown:
        raise ValueError(f"metrics: unknown series {unknown}; valid: {sorted(table)}")
    if ax is None:
        fig, grid = plt.subplots(
            len(series),
            1,
            sharex=True,
            squeeze=False,
            figsize=(6, 1.3 * len(series) + 0.6),
            layout="constrained",
        )
        axes = list(grid[:, 0])
    else:
        axes = list(np.atleast_1d(ax))
        if len(axes) != len(series):
            raise ValueError(f"metrics: expected {len(series)} axes, got {len(axes)}")
    lines = {}
    for a, name in zip(axes, series):
        y = np.asarray(table[name], dtype=np.float64)
        (lines[name],) = a.plot(times, np.where(np.isinf(y), np.nan, y), **kwargs)
        a.set_ylabel(_SERIES_LABELS.get(name, name), fontsize=8)
    axes[-1].set_xlabel("time (s)")
    return MetricsArtists(axes, lines)
