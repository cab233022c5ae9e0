"""Matplotlib pictures of context maps, worlds, agents, rays, scenes and trajectories.

Plotting only draws: every function takes arrays, a :class:`~contextsteer.History` /
:class:`~contextsteer.Recording` of frames, or a :class:`~contextsteer.Simulation` whose
state it reads (never steps, perceives or casts); running a simulation belongs to
:mod:`contextsteer.run`. Functions follow shapely's plotting conventions: matplotlib is
imported inside them, an axes is created only when ``ax is None``, ``plt.show()`` is never
called, extra keyword arguments go to the main artist, and the artists are returned (a
NamedTuple when several).

One colour vocabulary everywhere: interest green, danger red (rays fade from grey, safe,
to red, dangerous), walls dark grey, paths blue dashed, agents in the ``tab10`` cycle by
index (the same colour for an agent's body and its trajectory).

Modules: ``maps`` (polar context maps, glyphs), ``parts`` (world, paths, agents, rays,
trajectories, navigation fields), ``scenes`` (a whole scene), ``animation`` (animations
and video frames), ``charts`` (metrics); ``_draw`` holds the shared helpers and
:class:`~contextsteer.plot._draw.SimView`, what a plot reads from a simulation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..history import Recording  # noqa: F401  (cs.plot.Recording: documented as cs.Recording)
from .animation import Frames, animate, frames
from .charts import MetricsArtists, metrics
from .maps import (
    ContextMapArtists,
    ContextMapsGrid,
    MapGlyphs,
    context_map,
    context_maps,
    map_glyphs,
)
from .parts import (
    AgentArtists,
    NavFieldArtists,
    WorldArtists,
    agents,
    nav_field,
    path,
    rays,
    routes,
    trajectories,
    world,
)
from .scenes import SceneArtists, scene

if TYPE_CHECKING:
    from ..simulation import Simulation

__all__ = [
    "AgentArtists",
    "ContextMapArtists",
    "ContextMapsGrid",
    "MapGlyphs",
    "SceneArtists",
    "WorldArtists",
    "Frames",
    "agents",
    "animate",
    "frames",
    "context_map",
    "context_maps",
    "map_glyphs",
    "metrics",
    "MetricsArtists",
    "NavFieldArtists",
    "nav_field",
    "path",
    "rays",
    "record",
    "routes",
    "scene",
    "trajectories",
    "world",
]


def record(
    sim: Simulation,
    steps: int,
    *,
    dt: float = 1.0 / 60.0,
    records: int = 100,
    danger: bool = True,
    callback: Callable[[int], Any] | None = None,
) -> Recording | None:
    """Deprecated: step ``sim`` and keep ``records`` frames; use
    :func:`contextsteer.run_simulation` (``.history``) instead.

    Kept as a thin alias so old code keeps working; plotting itself never steps.

    Examples
    --------
    >>> import warnings, contextsteer as cs
    >>> agents = cs.Agents(1, slots=8); _ = agents.add([0, 0], max_speed=1)
    >>> sim = cs.Simulation(None, agents, [cs.Forward()])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rec = cs.plot.record(sim, 10, records=2)
    >>> rec.steps.tolist(), caught[0].category.__name__
    ([0, 5, 10], 'DeprecationWarning')
    """
    from ..run import run_simulation

    warnings.warn(
        "contextsteer.plot.record is deprecated: use "
        "contextsteer.run_simulation(sim, steps, dt=..., records=..., maps=...).history",
        DeprecationWarning,
        stacklevel=2,
    )
    return run_simulation(
        sim, steps, dt=dt, records=records, maps=danger, callback=callback
    ).history
