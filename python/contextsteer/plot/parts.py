"""The parts of a scene, from objects or plain arrays: walls and circles (:func:`world`),
paths (:func:`path`, :func:`routes`), agents as oriented circles (:func:`agents`), slot rays
(:func:`rays`), trajectories (:func:`trajectories`) and navigation fields
(:func:`nav_field`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..agents import Agents
from ..path import Path
from ..world import ALL_LAYERS, World, _layers
from ._draw import (
    _PATH_COLOR,
    _WALL_COLOR,
    _agent_colors,
    _agent_index,
    _break_at_new_agents,
    _danger_cmap,
    _directions,
    _floats,
    _generations,
    _per_agent,
    _plain_axes,
    _points,
    _positions,
    _rotated,
    _segments,
    tidy,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Colormap
    from matplotlib.lines import Line2D

    from ..history import History, Recording
    from ..maps import SlotSet
    from ..nav import NavField

__all__ = [
    "AgentArtists",
    "NavFieldArtists",
    "WorldArtists",
    "agents",
    "nav_field",
    "path",
    "rays",
    "routes",
    "trajectories",
    "world",
]


class WorldArtists(NamedTuple):
    """Artists drawn by :func:`world`."""

    walls: Any  #: LineCollection, one segment a wall row, or None for a world without walls
    circles: Any  #: PatchCollection of Circle patches, or None for a world without circles


def _plot_world(
    world: World | ArrayLike,
    ax: Axes,
    color: Any,
    circle_color: Any,
    kwargs: dict[str, Any],
    layers: Any = ALL_LAYERS,
) -> WorldArtists:
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.patches import Circle

    if isinstance(world, World):
        # Only the obstacles a query with these layers meets: a door opened
        # (World.set_layers(ids, 0)) or a layer the agents do not collide with is not drawn.
        mask = _layers(layers)
        seen = (np.asarray(world.obstacle_layers, dtype=np.uint32) & np.uint32(mask)) != 0
        walls = np.asarray(world.walls, dtype=np.float64)[seen[world.wall_obstacles]]
        centers, radii = world.circles
        shown = seen[world.circle_obstacles]
        centers, radii = np.asarray(centers)[shown], np.asarray(radii)[shown]
    else:
        walls, centers, radii = _floats(world, "world"), np.zeros((0, 2)), np.zeros(0)
    if walls.ndim != 2 or walls.shape[1] != 4:
        raise ValueError(f"world: expected a World or walls of shape (M, 4), got {walls.shape}")
    if not np.all(np.isfinite(walls)):
        raise ValueError("world: walls must be finite")
    centers = np.asarray(centers, dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(radii, dtype=np.float64).reshape(-1)
    wall_art = circle_art = None
    if len(walls):
        kwargs = {"colors": color, "linewidths": 2.0, "capstyle": "round", "zorder": 2, **kwargs}
        wall_art = LineCollection(_segments(walls.reshape(-1, 2, 2)), label="walls", **kwargs)
        ax.add_collection(wall_art)
    if len(radii):
        patches = [Circle(tuple(c), r) for c, r in zip(centers, radii)]
        circle_art = PatchCollection(
            patches,
            facecolors=circle_color,
            edgecolors=color,
            linewidths=1.0,
            zorder=2,
            label="circles",
        )
        ax.add_collection(circle_art)
    ax.autoscale_view()
    return WorldArtists(wall_art, circle_art)


@tidy
def world(
    world: World | ArrayLike,
    ax: Axes | None = None,
    *,
    color: str = _WALL_COLOR,
    circle_color: str = "0.65",
    layers: int = ALL_LAYERS,
    **kwargs: Any,
) -> WorldArtists:
    """Draw a world's walls (one LineCollection) and circles (Circle patches).

    Only the obstacles in ``layers`` are drawn: an obstacle hidden with
    :meth:`~contextsteer.World.set_layers` (mask 0, a door opened) is not, as no query
    meets it.

    Parameters
    ----------
    world : World or array_like of shape (M, 4)
        A :class:`contextsteer.World` or wall
        segments ``(ax, ay, bx, by)``.
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    color : color
        Wall and circle outline colour.
    circle_color : color
        Fill of the circles.
    layers : int
        Layer mask of the obstacles to draw (default all): those whose mask shares a bit
        with it, as for a ray or a collision with these layers.
    **kwargs
        Passed to the walls' ``LineCollection``.

    Returns
    -------
    WorldArtists
        ``(walls, circles)``; either is None when the world has none.

    Examples
    --------
    >>> import matplotlib.pyplot as plt, contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_box((0, 0), (2, 1))
    >>> _ = w.add_circles([[5, 0]], [0.5])
    >>> art = cs.plot.world(w)
    >>> len(art.walls.get_segments()), len(art.circles.get_paths())
    (4, 1)
    >>> plt.close("all")
    """
    return _plot_world(world, _plain_axes(ax), color, circle_color, kwargs, layers)


def _path_points(path: Path | ArrayLike) -> tuple[np.ndarray, bool]:
    if isinstance(path, Path):
        return np.asarray(path.points, dtype=np.float64), bool(path.closed)
    return _points(path, "path"), False


def _plot_path(
    path: Path | ArrayLike, ax: Axes, closed: bool | None, color: Any, kwargs: dict[str, Any]
) -> Line2D:
    points, is_closed = _path_points(path)
    if closed is not None:
        from .._checks import flag

        is_closed = flag("path: closed", closed)  # (bool("no") drew it closed)
    if len(points) < 2:
        raise ValueError(f"path: expected at least 2 points, got {len(points)}")
    if is_closed:
        points = np.vstack([points, points[:1]])
    kwargs = {
        "color": color,
        "linestyle": "--",
        "linewidth": 1.2,
        "zorder": 1,
        "label": "path",
        **kwargs,
    }
    (line,) = ax.plot(points[:, 0], points[:, 1], **kwargs)
    return line


@tidy
def path(
    path: Path | ArrayLike,
    ax: Axes | None = None,
    *,
    closed: bool | None = None,
    color: str = _PATH_COLOR,
    **kwargs: Any,
) -> Line2D:
    """Draw a path as a dashed line (closed paths return to their first point).

    Parameters
    ----------
    path : Path or array_like of shape (P, 2)
        A :class:`contextsteer.Path` or points.
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    closed : bool, optional
        Override the path's own ``closed`` (arrays default to open).
    color : color
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    matplotlib.lines.Line2D

    Examples
    --------
    >>> import matplotlib.pyplot as plt, contextsteer as cs
    >>> line = cs.plot.path(cs.Path([[0, 0], [4, 0], [4, 3]], closed=True))
    >>> line.get_xydata().tolist()
    [[0.0, 0.0], [4.0, 0.0], [4.0, 3.0], [0.0, 0.0]]
    >>> plt.close("all")
    """
    return _plot_path(path, _plain_axes(ax), closed, color, kwargs)


class AgentArtists(NamedTuple):
    """Artists drawn by :func:`agents`."""

    bodies: Any  #: PatchCollection of one Circle a agent
    headings: Any  #: LineCollection of heading ticks (centre to rim), or None


def _agent_arrays(
    positions: Agents | ArrayLike,
    headings: ArrayLike | None,
    radii: ArrayLike | None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """Positions, headings, radii and agent indices, from arrays or an Agents (its alive
    agents)."""
    if isinstance(positions, Agents):
        a = positions
        index = np.flatnonzero(np.asarray(a.alive))
        pos = np.asarray(a.position, dtype=np.float64)[index]
        if headings is None:
            headings = np.asarray(a.heading)[index]
        if radii is None:
            radii = np.asarray(a.radius)[index]
    else:
        pos = _points(positions, "positions")
        index = np.arange(len(pos))
    n = len(pos)
    rad = _per_agent(radii, n, "radii", 0.5)
    if np.any(rad < 0):
        raise ValueError(f"radii: must be >= 0, got {rad[rad < 0][0]:g}")
    return pos, _per_agent(headings, n, "headings"), rad, index


def _plot_agents(
    positions: Agents | ArrayLike,
    headings: ArrayLike | None,
    radii: ArrayLike | None,
    ax: Axes,
    color: Any,
    heading_color: Any,
    kwargs: dict[str, Any],
) -> AgentArtists:
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.patches import Circle

    pos, head, rad, index = _agent_arrays(positions, headings, radii)
    facecolors = _agent_colors(index) if color is None else color
    kwargs = {"edgecolors": "black", "linewidths": 0.8, "zorder": 4, **kwargs}
    bodies = PatchCollection(
        [Circle(tuple(p), r) for p, r in zip(pos, rad)],
        facecolors=facecolors,
        label="agents",
        **kwargs,
    )
    ax.add_collection(bodies)
    ticks = None
    if head is not None:
        tip = pos + rad[:, None] * np.stack([np.cos(head), np.sin(head)], axis=1)
        ticks = LineCollection(
            _segments(np.stack([pos, tip], axis=1)), colors=heading_color, linewidths=1.5, zorder=5
        )
        ax.add_collection(ticks)
    ax.autoscale_view()
    return AgentArtists(bodies, ticks)


@tidy
def agents(
    positions: Agents | ArrayLike,
    headings: ArrayLike | None = None,
    radii: ArrayLike | None = None,
    ax: Axes | None = None,
    *,
    color: Any = None,
    heading_color: str = "black",
    **kwargs: Any,
) -> AgentArtists:
    """Draw agents as oriented circles: a filled circle and a tick from centre to rim.

    Parameters
    ----------
    positions : array_like of shape (N, 2), or Agents
        Centres; an :class:`contextsteer.Agents` gives its
        alive agents' positions, headings and radii.
    headings : array_like of shape (N,), optional
        Radians counter-clockwise from +x; no ticks when None.
    radii : float or array_like of shape (N,), optional
        Circle radii (default 0.5).
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    color : color or sequence of colors, optional
        Body fill; default the ``tab10`` cycle by agent index.
    heading_color : color
    **kwargs
        Passed to the bodies' ``PatchCollection``.

    Returns
    -------
    AgentArtists
        ``(bodies, headings)``.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> art = cs.plot.agents([[0, 0], [3, 1]], headings=[0, np.pi / 2], radii=0.5)
    >>> len(art.bodies.get_paths()), art.headings.get_segments()[1].round(2).tolist()
    (2, [[3.0, 1.0], [3.0, 1.5]])
    >>> plt.close("all")
    """
    return _plot_agents(positions, headings, radii, _plain_axes(ax), color, heading_color, kwargs)


def _plot_rays(
    positions: ArrayLike,
    slot_directions: SlotSet | ArrayLike | int,
    distances: ArrayLike | None,
    look_ahead: ArrayLike | None,
    danger: ArrayLike | None,
    ax: Axes,
    headings: ArrayLike | None,
    cmap: Colormap | str | None,
    vmax: float | None,
    kwargs: dict[str, Any],
) -> LineCollection:
    from matplotlib.collections import LineCollection

    pos = _points(positions, "positions")
    n = len(pos)
    dirs = _directions(slot_directions)
    k = len(dirs)
    la = _per_agent(look_ahead, n, "look_ahead")
    if la is None:
        raise TypeError("look_ahead: expected a scalar or shape (N,), got None")
    if np.any(la < 0):
        raise ValueError("look_ahead: must be >= 0")
    head = _per_agent(headings, n, "headings")
    if distances is None:
        dist = np.broadcast_to(la[:, None], (n, k))
    else:
        dist = _floats(distances, "distances")
        if dist.shape != (n, k):
            raise ValueError(f"distances: expected shape ({n}, {k}), got {dist.shape}")
        if np.any(dist < 0):
            raise ValueError("distances: must be >= 0 (+inf: clear, NaN: not cast)")
    # A ray stops at its hit, or at the look-ahead when it sees nothing (+inf); a ray that
    # was not cast (NaN: before the first perception) is not drawn (length 0).
    length = np.where(np.isnan(dist), 0.0, np.minimum(dist, la[:, None]))
    if danger is not None:
        value = _floats(danger, "danger")
        if value.shape != (n, k):
            raise ValueError(f"danger: expected shape ({n}, {k}), got {value.shape}")
        if not np.all(np.isfinite(value)):
            raise ValueError("danger: must be finite")
    else:
        # Closeness of the hit: 0 for a miss or a hit at the look-ahead, 1 at the agent.
        with np.errstate(divide="ignore", invalid="ignore"):
            hit = (length < la[:, None]) & ~np.isnan(dist)
            value = np.where(hit, 1.0 - length / la[:, None], 0.0)
    u = _rotated(dirs, head, n)
    start = np.broadcast_to(pos[:, None, :], (n, k, 2))
    end = pos[:, None, :] + u * length[..., None]
    segments = np.stack([start, end], axis=2).reshape(n * k, 2, 2)
    if vmax is not None and not (_checks.real("vmax", vmax) > 0 and math.isfinite(vmax)):
        raise ValueError(f"vmax: must be a finite number > 0, got {vmax!r}")
    top = max(1.0, float(np.max(value))) if vmax is None and value.size else (vmax or 1.0)
    kwargs = {"linewidths": 0.8, "zorder": 3, "label": "rays", **kwargs}
    lines = LineCollection(
        _segments(segments), cmap=cmap if cmap is not None else _danger_cmap(), **kwargs
    )
    lines.set_array(value.reshape(-1))
    lines.set_clim(0.0, top)
    ax.add_collection(lines)
    ax.autoscale_view()
    return lines


@tidy
def rays(
    positions: ArrayLike,
    slot_directions: SlotSet | ArrayLike | int,
    distances: ArrayLike | None,
    look_ahead: ArrayLike,
    danger: ArrayLike | None = None,
    ax: Axes | None = None,
    headings: ArrayLike | None = None,
    *,
    cmap: Colormap | str | None = None,
    vmax: float | None = None,
    **kwargs: Any,
) -> LineCollection:
    """Draw every slot ray of every agent as one LineCollection coloured by danger.

    Ray ``(i, j)`` starts at agent ``i`` and runs along slot ``j`` (turned by
    ``headings[i]`` when given) to its hit distance, or to the look-ahead when it sees
    nothing. Colour (grey to red) is the slot's ``danger`` when given, otherwise the
    closeness of the hit, ``1 - distance / look_ahead`` (0 for a miss).

    Parameters
    ----------
    positions : array_like, shape (N, 2)
    slot_directions : SlotSet, array_like of shape (K, 2), or int K
    distances : array_like of shape (N, K), or None
        Hit distances, >= 0 (+inf for a miss; NaN for a ray not cast, which is not
        drawn, as :attr:`Simulation.sensed` has before the first perception), e.g. from
        :func:`contextsteer.slot_raycast`; None draws full-length rays.
    look_ahead : float or array_like of shape (N,)
    danger : array_like of shape (N, K), optional
        Colours the rays; the colour scale runs from 0 to ``max(1, danger.max())``.
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    headings : array_like of shape (N,), optional
        Per-agent rotation of the slots in radians (slots that turn with the agent).
    cmap : Colormap, optional
        Default: grey to red.
    vmax : float, optional
        Top of the colour scale.
    **kwargs
        Passed to the ``LineCollection``.

    Returns
    -------
    matplotlib.collections.LineCollection
        ``N*K`` segments, agent-major; ``get_array()`` holds the colour values.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> lines = cs.plot.rays([[0, 0]], 4, [[1.0, np.inf, 2.0, np.inf]], 4.0)
    >>> [s[1].round(2).tolist() for s in lines.get_segments()]
    [[1.0, 0.0], [0.0, 4.0], [-2.0, 0.0], [-0.0, -4.0]]
    >>> lines.get_array().tolist()
    [0.75, 0.0, 0.5, 0.0]
    >>> plt.close("all")
    """
    return _plot_rays(
        positions,
        slot_directions,
        distances,
        look_ahead,
        danger,
        _plain_axes(ax),
        headings,
        cmap,
        vmax,
        kwargs,
    )


class NavFieldArtists(NamedTuple):
    """Artists of :func:`nav_field`: the distance ``image`` (AxesImage) and the descent
    ``arrows`` (Quiver, or None)."""

    image: Any
    arrows: Any


@tidy
def nav_field(
    field: NavField,
    ax: Axes | None = None,
    *,
    g: int = 0,
    arrows: int = 24,
    cmap: str = "viridis",
    arrow_color: str = "white",
    **kwargs: Any,
) -> NavFieldArtists:
    """Draw a navigation field: its distance as an image, with descent arrows on top.

    Blocked nodes (inside the inflated obstacles) and unreachable ones are left blank.
    Draw it first and the scene over it (``cs.plot.scene(sim, ax=ax)``).

    Parameters
    ----------
    field : NavField
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    g : int, default 0
        Which field (goal set).
    arrows : int, default 24
        About this many descent arrows along the longer side (0: none).
    cmap : colormap
    arrow_color : color
    **kwargs
        Passed to ``ax.imshow``.

    Returns
    -------
    NavFieldArtists

    Examples
    --------
    >>> import matplotlib.pyplot as plt, contextsteer as cs
    >>> w = cs.World(); _ = w.add_segments([[0, -2, 0, 2]])
    >>> art = cs.plot.nav_field(cs.NavField(w, [2.0, 0.0], cell=0.1))
    >>> art.image.get_array().shape == cs.NavField(w, [2.0, 0.0], cell=0.1).distances().shape
    True
    >>> plt.close("all")
    """
    from ..nav import NavField

    if not isinstance(field, NavField):
        raise TypeError(f"nav_field: expected a NavField, got {type(field).__name__}")
    if isinstance(arrows, bool) or not _checks.is_int(arrows) or not 0 <= arrows <= 10_000:
        raise ValueError(
            f"nav_field: arrows must be a whole number from 0 to 10000, got {arrows!r}"
        )
    ax = _plain_axes(ax)
    d = np.asarray(field.distances(g), dtype=np.float64)
    blocked = np.asarray(field.blocked)
    img = np.ma.masked_where(blocked | ~np.isfinite(d), d)
    # imshow's extent is the pixels' outer edges: half a cell beyond the first and last
    # nodes, so that each pixel sits centred on its node (and under its arrow).
    x_lo, x_hi, y_lo, y_hi = field.extent
    half = 0.5 * field.grid[2]
    image = ax.imshow(
        img,
        origin="lower",
        extent=(x_lo - half, x_hi + half, y_lo - half, y_hi + half),
        cmap=cmap,
        **{"interpolation": "bilinear", "zorder": 0, **kwargs},
    )
    quiver = None
    if arrows > 0:
        ny, nx = d.shape
        step = max(1, int(max(nx, ny) / arrows))
        v = np.asarray(field.descents(g))[::step, ::step]
        x0, y0, c, _, _ = field.grid
        X, Y = np.meshgrid(x0 + np.arange(0, nx, step) * c, y0 + np.arange(0, ny, step) * c)
        keep = (
            ~np.asarray(img.mask)[::step, ::step] if np.ndim(img.mask) else np.ones(X.shape, bool)
        )
        keep &= np.hypot(v[..., 0], v[..., 1]) > 0
        quiver = ax.quiver(
            X[keep],
            Y[keep],
            v[..., 0][keep],
            v[..., 1][keep],
            color=arrow_color,
            zorder=1,
            angles="xy",
            pivot="mid",
            scale=1.6 / (step * c),
            scale_units="xy",
            width=0.003,
        )
    return NavFieldArtists(image, quiver)


@tidy
def routes(
    paths: Sequence[Path | None], ax: Axes | None = None, *, color: Any = None, **kwargs: Any
) -> list:
    """Draw each agent's route (from :func:`contextsteer.route`) in the agent's colour.

    Parameters
    ----------
    paths : sequence of Path or None
        Routes; ``None`` entries (unreachable) are skipped.
    ax : matplotlib Axes, optional
    color : color, optional
        One colour for all (default: agent i in its colour, as in :func:`agents`).
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    list of matplotlib.lines.Line2D, one per drawn route.

    Examples
    --------
    >>> import matplotlib.pyplot as plt, contextsteer as cs
    >>> w = cs.World(); _ = w.add_segments([[0, -2, 0, 2]])
    >>> lines = cs.plot.routes(cs.route(w, [[-3, 0], [-3, 1]], [3, 0], radius=0.3))
    >>> len(lines)
    2
    >>> plt.close("all")
    """
    if isinstance(paths, (str, bytes)) or not isinstance(paths, (Sequence, np.ndarray)):
        raise TypeError(
            "routes: expected a list of paths (route()'s list, Path objects or (P, 2) "
            f"arrays, None for no route), got {type(paths).__name__}"
        )
    ax = _plain_axes(ax)
    colors = _agent_colors(np.arange(len(paths)))
    lines = []
    for i, p in enumerate(paths):
        if p is None:
            continue
        pts, _ = _path_points(p)
        kw = {
            "color": colors[i] if color is None else color,
            "linewidth": 1.2,
            "zorder": 1,
            "marker": ".",
            "markersize": 3,
            **kwargs,
        }
        (line,) = ax.plot(pts[:, 0], pts[:, 1], **kw)
        lines.append(line)
    return lines


def _plot_trajectories(
    history: History | Recording | ArrayLike,
    ax: Axes,
    agents: Iterable[int] | None,
    color: Any,
    kwargs: dict[str, Any],
) -> LineCollection:
    from matplotlib.collections import LineCollection

    h = _floats(_positions(history), "history")
    if h.ndim != 3 or h.shape[2] != 2:
        raise ValueError(f"history: expected positions of shape (T, N, 2), got {h.shape}")
    index = np.arange(h.shape[1]) if agents is None else _agent_index(agents, h.shape[1], "agents")
    gens = _generations(history)
    if gens is not None and gens.shape != h.shape[:2]:
        gens = None
    # A slot reused by a new agent starts a new line (NaN breaks it).
    lines = [_break_at_new_agents(h[:, i, :], None if gens is None else gens[:, i]) for i in index]
    colors = _agent_colors(index) if color is None else color
    kwargs = {"linewidths": 1.0, "alpha": 0.8, "zorder": 1.5, "label": "trajectories", **kwargs}
    coll = LineCollection(lines, colors=colors, **kwargs)
    ax.add_collection(coll)
    ax.autoscale_view()
    return coll


@tidy
def trajectories(
    history: History | Recording | ArrayLike,
    ax: Axes | None = None,
    *,
    agents: Iterable[int] | None = None,
    color: Any = None,
    **kwargs: Any,
) -> LineCollection:
    """Draw each agent's trajectory as one polyline.

    Parameters
    ----------
    history : History, Recording or array_like of shape (T, N, 2)
        Positions at T recorded steps; NaN rows (e.g. dead agents) leave gaps.
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    agents : sequence of int or boolean mask of shape (N,), optional
        Agents to draw (default all).
    color : color or sequence of colors, optional
        Default: the ``tab10`` cycle by agent index, as in :func:`agents`.
    **kwargs
        Passed to the ``LineCollection``.

    Returns
    -------
    matplotlib.collections.LineCollection
        One (T, 2) line a drawn agent.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> t = np.linspace(0, 1, 5)
    >>> history = np.stack([np.c_[t, 0 * t], np.c_[t, 1 + t]], axis=1)   # (5, 2, 2)
    >>> lines = cs.plot.trajectories(history)
    >>> len(lines.get_segments()), lines.get_segments()[1][-1].tolist()
    (2, [1.0, 2.0])
    >>> plt.close("all")
    """
    return _plot_trajectories(history, _plain_axes(ax), agents, color, kwargs)
