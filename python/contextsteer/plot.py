"""Matplotlib pictures of context maps, worlds, agents, rays, scenes and trajectories.

Functions follow shapely's plotting conventions: matplotlib is imported inside them, an
axes is created only when ``ax is None``, ``plt.show()`` is never called, extra keyword
arguments go to the main artist, and the artists are returned (a NamedTuple when several).

One colour vocabulary everywhere: interest green, danger red (rays fade from grey, safe,
to red, dangerous), walls dark grey, paths blue dashed, agents in the ``tab10`` cycle by
index (the same colour for an agent's body and its trajectory).

Functions that draw a simulation take it by duck typing: anything with ``world``,
``agents``, ``steering``, ``interest``, ``danger``, ``chosen_direction`` and ``strength``
attributes works, and every piece can also be given directly as arrays.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "AgentArtists",
    "ContextMapArtists",
    "ContextMapsGrid",
    "MapGlyphs",
    "Recording",
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


class ContextMapArtists(NamedTuple):
    """Artists drawn by :func:`context_map`."""

    interest: Any  #: BarContainer, one bar a slot
    danger: Any  #: Line2D of the closed danger curve, or None
    masked: Any  #: Line2D of markers on masked slots, or None
    chosen: Any  #: FancyArrow / Annotation of the chosen direction, or None
    speed: Any = None  #: Line2D of the speed map (CollisionDanger), or None


def _slot_angles(k: int, offset: float) -> np.ndarray:
    return offset + 2.0 * np.pi * np.arange(k) / k


def context_map(
    interest,
    danger=None,
    *,
    chosen=None,
    strength: float | None = None,
    threshold: float = 0.0,
    offset: float = 0.0,
    speed=None,
    ax=None,
    interest_color: str = "tab:green",
    danger_color: str = "tab:red",
    chosen_color: str = "black",
    speed_color: str = "tab:blue",
    **kwargs,
) -> ContextMapArtists:
    """Polar plot of one agent's context maps.

    Interest is drawn as one bar a slot, danger as a closed red curve, slots whose
    interest the Godot ``mask`` rule removes (danger > ``threshold``) as crosses on the
    rim, the chosen direction as an arrow whose length is its strength and, for
    velocity-space danger, the speed map (the safe fraction of max speed per slot) as a
    dashed blue curve on the same radial scale as the arrow.

    Parameters
    ----------
    interest : array_like, shape (K,)
        Interest of each slot, slot 0 along +x (rotated by ``offset``), counter-clockwise.
    danger : array_like, shape (K,), optional
        Danger of each slot.
    chosen : array_like, shape (2,), optional
        Chosen direction (need not be unit length; its angle is drawn).
    strength : float, optional
        Arrow length; defaults to the length of ``chosen`` clipped to [0, 1], or 1.
    threshold : float
        Danger above which a slot counts as masked.
    offset : float
        Angle of slot 0 in radians.
    speed : array_like, shape (K,), optional
        Speed map of the agent (:attr:`Simulation.speed`, :class:`CollisionDanger`).
    ax : matplotlib polar Axes, optional
        Where to draw; a new polar axes is created when None.
    **kwargs
        Passed to ``ax.bar`` for the interest bars.

    Returns
    -------
    ContextMapArtists

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> interest = np.array([1, .707, 0, 0, 0, 0, 0, .707])
    >>> art = cs.plot.context_map(interest, np.eye(8)[1], chosen=(1.0, -0.2))
    >>> len(art.interest.patches)
    8
    >>> art = cs.plot.context_map(interest, speed=[1, 1, .5, 0, 0, .25, 1, 1])
    >>> art.speed.get_linestyle()
    '--'
    """
    import matplotlib.pyplot as plt

    interest = np.asarray(interest, dtype=np.float64)
    if interest.ndim != 1 or interest.shape[0] < 3:
        raise ValueError(f"interest: expected shape (K,) with K >= 3, got {interest.shape}")
    k = interest.shape[0]
    if danger is not None:
        danger = np.asarray(danger, dtype=np.float64)
        if danger.shape != (k,):
            raise ValueError(f"danger: expected shape ({k},), got {danger.shape}")
    if not np.all(np.isfinite(interest)) or (danger is not None and not np.all(np.isfinite(danger))):
        raise ValueError("interest and danger must be finite")
    if speed is not None:
        speed = np.asarray(speed, dtype=np.float64)
        if speed.shape != (k,) or not np.all(np.isfinite(speed)):
            raise ValueError(f"speed: expected a finite array of shape ({k},), got {speed.shape}")
    if ax is None:
        _, ax = plt.subplots(subplot_kw={"projection": "polar"})
    theta = _slot_angles(k, offset)
    width = 2.0 * np.pi / k * 0.8
    bars = ax.bar(theta, np.clip(interest, 0, None), width=width, color=interest_color,
                  alpha=0.7, label="interest", **kwargs)
    danger_line = masked = arrow = None
    rim = max(1.0, float(np.max(np.abs(interest))) if k else 1.0)
    if danger is not None:
        closed_t = np.append(theta, theta[0])
        closed_d = np.append(danger, danger[0])
        (danger_line,) = ax.plot(closed_t, closed_d, color=danger_color, lw=1.5, label="danger")
        ax.fill(closed_t, closed_d, color=danger_color, alpha=0.15)
        rim = max(rim, float(np.max(danger)))
        hit = danger > threshold
        (masked,) = ax.plot(theta[hit], np.full(int(hit.sum()), rim * 1.05), "x",
                            color=danger_color, ms=8, mew=2, label="masked")
        for patch in np.asarray(bars.patches, dtype=object)[hit]:
            patch.set_hatch("//")
            patch.set_alpha(0.3)
    if chosen is not None:
        c = np.asarray(chosen, dtype=np.float64)
        if c.shape != (2,) or not np.all(np.isfinite(c)):
            raise ValueError(f"chosen: expected a finite (2,) direction, got {chosen!r}")
        norm = float(np.hypot(*c))
        if norm > 0:
            length = float(np.clip(norm, 0, 1)) if strength is None else float(strength)
            angle = float(np.arctan2(c[1], c[0]))
            arrow = ax.annotate(
                "", xy=(angle, length * rim), xytext=(0.0, 0.0),
                arrowprops={"arrowstyle": "->", "color": chosen_color, "lw": 2},
            )
    speed_line = None
    if speed is not None:
        (speed_line,) = ax.plot(np.append(theta, theta[0]), np.append(speed, speed[0]) * rim,
                                "--", color=speed_color, lw=1.5, label="safe speed")
    ax.set_ylim(0, rim * 1.12)
    ax.set_yticklabels([])
    return ContextMapArtists(bars, danger_line, masked, arrow, speed_line)


# --------------------------------------------------------------------------- helpers ---

_WALL_COLOR = "0.2"
_PATH_COLOR = "tab:blue"
_INTEREST_COLOR = "tab:green"
_DANGER_COLOR = "tab:red"


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


def _points(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1 and a.shape[0] == 2:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{what}: expected shape (N, 2), got {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: must be finite")
    return a


def _per_agent(x, n: int, what: str, default: float | None = None) -> np.ndarray | None:
    """A scalar or an (n,) array as a float64 (n,) array; None stays None unless defaulted."""
    if x is None:
        return None if default is None else np.full(n, default)
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{what}: expected a scalar or shape ({n},), got {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: must be finite")
    return a


def _directions(slot_directions) -> np.ndarray:
    """(K, 2) float64 slot directions from a slot set, an array or an int K."""
    if isinstance(slot_directions, (int, np.integer)) and not isinstance(slot_directions, bool):
        k = int(slot_directions)
        if k < 3:
            raise ValueError(f"slot_directions: expected K >= 3 slots, got {k}")
        return np.stack([np.cos(_slot_angles(k, 0.0)), np.sin(_slot_angles(k, 0.0))], axis=1)
    d = getattr(slot_directions, "directions", slot_directions)
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] < 3:
        raise ValueError(f"slot_directions: expected shape (K, 2) with K >= 3, got {d.shape}")
    return d


def _rotated(directions: np.ndarray, headings: np.ndarray | None, n: int) -> np.ndarray:
    """(n, K, 2) slot directions of each agent, turned counter-clockwise by its heading."""
    if headings is None:
        return np.broadcast_to(directions, (n, *directions.shape))
    c, s = np.cos(headings)[:, None], np.sin(headings)[:, None]
    x, y = directions[None, :, 0], directions[None, :, 1]
    return np.stack([c * x - s * y, s * x + c * y], axis=-1)


def _alive(agents_like) -> np.ndarray | None:
    alive = getattr(agents_like, "alive", None)
    return None if alive is None else np.flatnonzero(np.asarray(alive))


# ----------------------------------------------------------------- world, path, agents ---


class WorldArtists(NamedTuple):
    """Artists drawn by :func:`world`."""

    walls: Any  #: LineCollection, one segment a wall row, or None for a world without walls
    circles: Any  #: PatchCollection of Circle patches, or None for a world without circles


def _plot_world(world, ax, color, circle_color, kwargs) -> WorldArtists:
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.patches import Circle

    if hasattr(world, "walls"):
        walls = np.asarray(world.walls, dtype=np.float64)
        centers, radii = getattr(world, "circles", (np.zeros((0, 2)), np.zeros(0)))
    else:
        walls, centers, radii = np.asarray(world, dtype=np.float64), np.zeros((0, 2)), np.zeros(0)
    if walls.ndim != 2 or walls.shape[1] != 4:
        raise ValueError(f"world: expected a World or walls of shape (M, 4), got {walls.shape}")
    centers = np.asarray(centers, dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(radii, dtype=np.float64).reshape(-1)
    wall_art = circle_art = None
    if len(walls):
        kwargs = {"colors": color, "linewidths": 2.0, "capstyle": "round", "zorder": 2, **kwargs}
        wall_art = LineCollection(walls.reshape(-1, 2, 2), label="walls", **kwargs)
        ax.add_collection(wall_art)
    if len(radii):
        patches = [Circle(tuple(c), r) for c, r in zip(centers, radii)]
        circle_art = PatchCollection(patches, facecolors=circle_color, edgecolors=color,
                                     linewidths=1.0, zorder=2, label="circles")
        ax.add_collection(circle_art)
    ax.autoscale_view()
    return WorldArtists(wall_art, circle_art)


def world(world, ax=None, *, color: str = _WALL_COLOR, circle_color: str = "0.65",
          **kwargs) -> WorldArtists:
    """Draw a world's walls (one LineCollection) and circles (Circle patches).

    Parameters
    ----------
    world : World or array_like of shape (M, 4)
        A :class:`contextsteer.World` (anything with ``walls`` and ``circles``) or wall
        segments ``(ax, ay, bx, by)``.
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    color : color
        Wall and circle outline colour.
    circle_color : color
        Fill of the circles.
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
    return _plot_world(world, _plain_axes(ax), color, circle_color, kwargs)


def _path_points(path) -> tuple[np.ndarray, bool]:
    if hasattr(path, "points"):
        return np.asarray(path.points, dtype=np.float64), bool(getattr(path, "closed", False))
    return _points(path, "path"), False


def _plot_path(path, ax, closed, color, kwargs):
    points, is_closed = _path_points(path)
    if closed is not None:
        is_closed = bool(closed)
    if len(points) < 2:
        raise ValueError(f"path: expected at least 2 points, got {len(points)}")
    if is_closed:
        points = np.vstack([points, points[:1]])
    kwargs = {"color": color, "linestyle": "--", "linewidth": 1.2, "zorder": 1, "label": "path",
              **kwargs}
    (line,) = ax.plot(points[:, 0], points[:, 1], **kwargs)
    return line


def path(path, ax=None, *, closed: bool | None = None, color: str = _PATH_COLOR, **kwargs):
    """Draw a path as a dashed line (closed paths return to their first point).

    Parameters
    ----------
    path : Path or array_like of shape (P, 2)
        A :class:`contextsteer.Path` (anything with ``points`` and ``closed``) or points.
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


def _agent_arrays(positions, headings, radii):
    """Positions, headings, radii and agent indices, from arrays or an Agents-like object."""
    if hasattr(positions, "position"):
        a = positions
        rows = _alive(a)
        pos = np.asarray(a.position, dtype=np.float64)
        index = np.arange(len(pos)) if rows is None else rows
        pos = pos[index]
        if headings is None and hasattr(a, "heading"):
            headings = np.asarray(a.heading)[index]
        if radii is None and hasattr(a, "radius"):
            radii = np.asarray(a.radius)[index]
    else:
        pos = _points(positions, "positions")
        index = np.arange(len(pos))
    n = len(pos)
    return pos, _per_agent(headings, n, "headings"), _per_agent(radii, n, "radii", 0.5), index


def _plot_agents(positions, headings, radii, ax, color, heading_color, kwargs) -> AgentArtists:
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.patches import Circle

    pos, head, rad, index = _agent_arrays(positions, headings, radii)
    facecolors = _agent_colors(index) if color is None else color
    kwargs = {"edgecolors": "black", "linewidths": 0.8, "zorder": 4, **kwargs}
    bodies = PatchCollection([Circle(tuple(p), r) for p, r in zip(pos, rad)],
                             facecolors=facecolors, label="agents", **kwargs)
    ax.add_collection(bodies)
    ticks = None
    if head is not None:
        tip = pos + rad[:, None] * np.stack([np.cos(head), np.sin(head)], axis=1)
        ticks = LineCollection(np.stack([pos, tip], axis=1), colors=heading_color,
                               linewidths=1.5, zorder=5)
        ax.add_collection(ticks)
    ax.autoscale_view()
    return AgentArtists(bodies, ticks)


def agents(positions, headings=None, radii=None, ax=None, *, color=None,
           heading_color: str = "black", **kwargs) -> AgentArtists:
    """Draw agents as oriented circles: a filled circle and a tick from centre to rim.

    Parameters
    ----------
    positions : array_like of shape (N, 2), or Agents
        Centres; an :class:`contextsteer.Agents` (anything with ``position``) gives its
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


# ------------------------------------------------------------------------------ rays ---


def _plot_rays(positions, slot_directions, distances, look_ahead, danger, ax, headings,
               cmap, vmax, kwargs):
    from matplotlib.collections import LineCollection

    pos = _points(positions, "positions")
    n = len(pos)
    dirs = _directions(slot_directions)
    k = len(dirs)
    la = _per_agent(look_ahead, n, "look_ahead")
    if np.any(la < 0):
        raise ValueError("look_ahead: must be >= 0")
    head = _per_agent(headings, n, "headings")
    if distances is None:
        dist = np.broadcast_to(la[:, None], (n, k))
    else:
        dist = np.asarray(distances, dtype=np.float64)
        if dist.shape != (n, k):
            raise ValueError(f"distances: expected shape ({n}, {k}), got {dist.shape}")
    # A ray stops at its hit, or at the look-ahead when it sees nothing (+inf).
    length = np.minimum(np.nan_to_num(dist, nan=np.inf, posinf=np.inf), la[:, None])
    if danger is not None:
        value = np.asarray(danger, dtype=np.float64)
        if value.shape != (n, k):
            raise ValueError(f"danger: expected shape ({n}, {k}), got {value.shape}")
    else:
        # Closeness of the hit: 0 for a miss or a hit at the look-ahead, 1 at the agent.
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(length < la[:, None], 1.0 - length / la[:, None], 0.0)
    u = _rotated(dirs, head, n)
    start = np.broadcast_to(pos[:, None, :], (n, k, 2))
    end = pos[:, None, :] + u * length[..., None]
    segments = np.stack([start, end], axis=2).reshape(n * k, 2, 2)
    top = max(1.0, float(np.max(value))) if vmax is None and value.size else (vmax or 1.0)
    kwargs = {"linewidths": 0.8, "zorder": 3, "label": "rays", **kwargs}
    lines = LineCollection(segments, cmap=cmap if cmap is not None else _danger_cmap(), **kwargs)
    lines.set_array(value.reshape(-1))
    lines.set_clim(0.0, top)
    ax.add_collection(lines)
    ax.autoscale_view()
    return lines


def rays(positions, slot_directions, distances, look_ahead, danger=None, ax=None,
         headings=None, *, cmap=None, vmax: float | None = None, **kwargs):
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
        Hit distances (+inf for a miss), e.g. from :func:`contextsteer.slot_raycast`;
        None draws full-length rays.
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
    return _plot_rays(positions, slot_directions, distances, look_ahead, danger,
                      _plain_axes(ax), headings, cmap, vmax, kwargs)


# -------------------------------------------------------------------- map glyphs ---


class MapGlyphs(NamedTuple):
    """Artists drawn by :func:`map_glyphs`."""

    interest: Any  #: PolyCollection, one star polygon a agent
    danger: Any  #: PolyCollection of danger outlines, or None
    chosen: Any  #: LineCollection of chosen directions, or None


def _plot_glyphs(positions, slot_directions, interest, danger, chosen, headings, scale, base,
                 ax, kwargs) -> MapGlyphs:
    from matplotlib.collections import LineCollection, PolyCollection

    pos = _points(positions, "positions")
    n = len(pos)
    dirs = _directions(slot_directions)
    k = len(dirs)
    values = np.asarray(interest, dtype=np.float64).reshape(n, -1) if n else np.zeros((0, k))
    if values.shape != (n, k):
        raise ValueError(f"interest: expected shape ({n}, {k}), got {np.shape(interest)}")
    sc = _per_agent(scale, n, "scale", 1.0)
    b = _per_agent(base, n, "base", 0.0)
    u = _rotated(dirs, _per_agent(headings, n, "headings"), n)

    def star(v):
        r = b[:, None] + sc[:, None] * np.clip(v, 0.0, None)
        return pos[:, None, :] + u * r[..., None]

    kwargs = {"facecolors": _INTEREST_COLOR, "edgecolors": _INTEREST_COLOR, "alpha": 0.35,
              "linewidths": 1.0, "zorder": 6, **kwargs}
    inter = PolyCollection(list(star(values)), closed=True, label="interest", **kwargs)
    ax.add_collection(inter)
    dang = arrows = None
    if danger is not None:
        d = np.asarray(danger, dtype=np.float64).reshape(n, -1) if n else np.zeros((0, k))
        if d.shape != (n, k):
            raise ValueError(f"danger: expected shape ({n}, {k}), got {np.shape(danger)}")
        dang = PolyCollection(list(star(d)), closed=True, facecolors="none",
                              edgecolors=_DANGER_COLOR, linewidths=1.0, zorder=6, label="danger")
        ax.add_collection(dang)
    if chosen is not None:
        c = _points(chosen, "chosen") if n else np.zeros((0, 2))
        if c.shape != (n, 2):
            raise ValueError(f"chosen: expected shape ({n}, 2), got {np.shape(chosen)}")
        tip = pos + c * (b + sc)[:, None]
        arrows = LineCollection(np.stack([pos, tip], axis=1), colors="black", linewidths=1.5,
                                zorder=7, label="chosen")
        ax.add_collection(arrows)
    ax.autoscale_view()
    return MapGlyphs(inter, dang, arrows)


def map_glyphs(positions, slot_directions, interest, danger=None, *, chosen=None,
               headings=None, scale=1.0, base=0.0, ax=None, **kwargs) -> MapGlyphs:
    """Draw context maps in the scene: a star polygon around each agent.

    Vertex ``j`` of agent ``i``'s star lies along slot ``j`` at distance
    ``base + scale * max(0, interest[i, j])`` from the agent, so the star bulges where the
    agent wants to go. Danger is an outline drawn the same way, and the chosen direction
    a line of length ``base + scale`` (times its length). Drawn in data coordinates, the
    glyphs follow the agents under zoom and in animations, unlike inset axes.

    Parameters
    ----------
    positions : array_like, shape (N, 2)
    slot_directions : SlotSet, array_like of shape (K, 2), or int K
    interest : array_like, shape (N, K)
    danger : array_like, shape (N, K), optional
    chosen : array_like, shape (N, 2), optional
    headings : array_like of shape (N,), optional
        Per-agent rotation of the slots (slots that turn with the agent).
    scale, base : float or array_like of shape (N,)
        Length of a value of 1, and the radius of the zero ring (e.g. the agent radius).
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    **kwargs
        Passed to the interest ``PolyCollection``.

    Returns
    -------
    MapGlyphs
        ``(interest, danger, chosen)``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt, contextsteer as cs
    >>> g = cs.plot.map_glyphs([[10, 0]], 4, [[1.0, 0.5, 0.0, 0.5]], scale=2.0)
    >>> g.interest.get_paths()[0].vertices[:4].round(2).tolist()
    [[12.0, 0.0], [10.0, 1.0], [10.0, 0.0], [10.0, -1.0]]
    >>> plt.close("all")
    """
    return _plot_glyphs(positions, slot_directions, interest, danger, chosen, headings, scale,
                        base, _plain_axes(ax), kwargs)


# --------------------------------------------------------------- simulation parts ---


class NavFieldArtists(NamedTuple):
    """Artists of :func:`nav_field`: the distance ``image`` (AxesImage) and the descent
    ``arrows`` (Quiver, or None)."""

    image: Any
    arrows: Any


def nav_field(field, ax=None, *, g: int = 0, arrows: int = 24, cmap: str = "viridis",
              arrow_color: str = "white", **kwargs) -> NavFieldArtists:
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
    ax = _plain_axes(ax)
    d = np.asarray(field.distances(g), dtype=np.float64)
    blocked = np.asarray(field.blocked)
    img = np.ma.masked_where(blocked | ~np.isfinite(d), d)
    image = ax.imshow(img, origin="lower", extent=field.extent, cmap=cmap,
                      **{"interpolation": "bilinear", "zorder": 0, **kwargs})
    quiver = None
    if arrows > 0:
        ny, nx = d.shape
        step = max(1, int(max(nx, ny) / arrows))
        v = np.asarray(field.descents(g))[::step, ::step]
        x0, y0, c, _, _ = field.grid
        X, Y = np.meshgrid(x0 + np.arange(0, nx, step) * c, y0 + np.arange(0, ny, step) * c)
        keep = ~img.mask[::step, ::step] if np.ndim(img.mask) else np.ones(X.shape, bool)
        keep &= np.hypot(v[..., 0], v[..., 1]) > 0
        quiver = ax.quiver(X[keep], Y[keep], v[..., 0][keep], v[..., 1][keep],
                           color=arrow_color, zorder=1, angles="xy", pivot="mid",
                           scale=1.6 / (step * c), scale_units="xy", width=0.003)
    return NavFieldArtists(image, quiver)


def routes(paths, ax=None, *, color=None, **kwargs) -> list:
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
    ax = _plain_axes(ax)
    colors = _agent_colors(np.arange(len(paths)))
    lines = []
    for i, p in enumerate(paths):
        if p is None:
            continue
        pts, _ = _path_points(p)
        kw = {"color": colors[i] if color is None else color, "linewidth": 1.2, "zorder": 1,
              "marker": ".", "markersize": 3, **kwargs}
        (line,) = ax.plot(pts[:, 0], pts[:, 1], **kw)
        lines.append(line)
    return lines


def _behaviours(steering) -> list:
    if steering is None:
        return []
    found = getattr(steering, "behaviours", None)
    if found is None:
        found = steering if isinstance(steering, (list, tuple)) else []
    return list(found)


def _sim_paths(sim) -> list:
    """Paths held by the simulation's behaviours (a FollowPath's ``.path``), unique."""
    out: list = []
    for b in _behaviours(getattr(sim, "steering", None)):
        p = getattr(b, "path", None)
        for q in (p if isinstance(p, tuple) else (p,)):  # per-agent paths: every one
            if q is not None and all(q is not r for r in out):
                out.append(q)
    return out


def _sim_look_ahead(sim) -> float | None:
    """Look-ahead of the first danger behaviour that casts rays (a WallDanger)."""
    for b in _behaviours(getattr(sim, "steering", None)):
        if getattr(b, "writes", None) == "danger" and hasattr(b, "look_ahead"):
            return float(b.look_ahead)
    return None


def _sim_slots(sim):
    """Slot directions of a simulation: a slot-set attribute, or the ring of K = maps' width."""
    for owner in (sim, getattr(sim, "steering", None)):
        for name in ("slots", "slot_set", "slot_directions", "directions"):
            value = getattr(owner, name, None) if owner is not None else None
            if value is not None and not callable(value):
                return value
    interest = getattr(sim, "interest", None)
    if interest is not None:
        return int(np.shape(interest)[1])
    k = getattr(getattr(sim, "agents", None), "slots", None)
    return None if k is None else int(k)


def _sim_rotate(sim) -> bool:
    for owner in (sim, getattr(sim, "steering", None)):
        value = getattr(owner, "rotate", None) if owner is not None else None
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
    return False



def _recorded_inputs(history, sim, n, world, path, slots, look_ahead, rotate):
    """What the animations draw besides positions: the history's headings, radii (else the
    simulation's, else 0.5) and danger maps, and the world, path, slot set, look-ahead and
    rotation (given, else read from ``sim``)."""
    headings = getattr(history, "headings", None)
    radii = getattr(history, "radii", None)
    if radii is None and sim is not None:
        radii = np.asarray(sim.agents.radius)[:n]
    radii = np.full(n, 0.5) if radii is None else np.asarray(radii, dtype=np.float64)
    dangers = getattr(history, "danger", None)
    if sim is not None:
        world = getattr(sim, "world", None) if world is None else world
        path = _sim_paths(sim) if path is None else path
        slots = _sim_slots(sim) if slots is None else slots
        look_ahead = _sim_look_ahead(sim) if look_ahead is None else look_ahead
        rotate = _sim_rotate(sim) if rotate is None else rotate
    return headings, radii, dangers, world, path, slots, look_ahead, bool(rotate)

def _rows(x, index):
    return None if x is None else np.asarray(x)[index]


# --------------------------------------------------------------------------- scene ---


class SceneArtists(NamedTuple):
    """Artists drawn by :func:`scene`; a part that was not drawn is None."""

    world: Any  #: WorldArtists
    paths: list  #: Line2D a path
    agents: Any  #: AgentArtists
    rays: Any  #: LineCollection
    maps: Any  #: MapGlyphs
    trajectories: Any  #: LineCollection
    ax: Any  #: the Axes


def scene(sim=None, *, world=None, path=None, agents=None, rays: bool = True,
          maps: bool | Any = False, ax=None, slots=None, look_ahead=None, rotate=None,
          interest=None, danger=None, chosen=None, map_scale=None, trajectories=None,
          margin: float = 0.05) -> SceneArtists:
    """Draw a scene: walls, paths, agents as oriented circles, slot rays, context maps.

    Everything comes from ``sim`` when given (its ``world``, ``agents``, the paths of
    its behaviours, its slot set, ``interest``/``danger``/``chosen_direction``); any
    keyword given explicitly replaces the simulation's part, and without ``sim`` the
    keywords alone describe the scene.

    Rays are cast against the world from each alive agent along its slots (turned with
    its heading when ``rotate``) up to ``look_ahead`` (default: the look-ahead of the
    simulation's wall-danger behaviour; no rays without one) and coloured by danger.
    They are drawn as thin rays from the agent's centre to the wall they hit, not as the
    circle casts a wall-danger behaviour uses, so the picture shows where the walls are.
    Glyphs show ``interest`` as given (a simulation's combined interest, before resolve).

    With ``maps``, each selected agent gets a star-shaped glyph of its context maps in
    data coordinates (see :func:`map_glyphs`): interest green, danger red, the chosen
    direction black. ``maps=True`` selects the first 16 alive agents; pass a list of
    agent indices to choose. Glyphs rather than inset polar axes: they scale with the
    scene, stay on their agent in animations and cost one collection for any count.

    Parameters
    ----------
    sim : Simulation-like, optional
    world : World or array_like of shape (M, 4), optional
    path : Path, array_like of shape (P, 2), or a list of them, optional
    agents : Agents or array_like of shape (N, 2), optional
    rays : bool
    maps : bool or sequence of int
    ax : matplotlib Axes, optional
        Where to draw; a new axes when None. The aspect is set equal.
    slots : SlotSet, array_like of shape (K, 2), or int K, optional
    look_ahead : float or array_like of shape (N,), optional
    rotate : bool, optional
        Slots turn with each agent's heading (default: the simulation's setting, else False).
    interest, danger : array_like of shape (capacity, K), optional
        Maps, one row per agent index (rows of dead agents are skipped).
    chosen : array_like of shape (capacity, 2), optional
    map_scale : float, optional
        Glyph length of a value of 1 (default three agent radii).
    trajectories : array_like of shape (T, N, 2), optional
        Drawn under the agents (see :func:`trajectories`).
    margin : float
        Fraction of the world's size added around its bounds.

    Returns
    -------
    SceneArtists

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    >>> a = cs.Agents(2); _ = a.add([[0, 0], [2, 0]], heading=[0, 1])
    >>> art = cs.plot.scene(world=w, agents=a, slots=8, look_ahead=4.0)
    >>> len(art.rays.get_segments())     # 2 agents x 8 slots
    16
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    ax.set_aspect("equal")
    if sim is not None:
        world = getattr(sim, "world", None) if world is None else world
        agents = getattr(sim, "agents", None) if agents is None else agents
        path = _sim_paths(sim) if path is None else path
        slots = _sim_slots(sim) if slots is None else slots
        look_ahead = _sim_look_ahead(sim) if look_ahead is None else look_ahead
        rotate = _sim_rotate(sim) if rotate is None else rotate
        interest = getattr(sim, "interest", None) if interest is None else interest
        danger = getattr(sim, "danger", None) if danger is None else danger
        chosen = getattr(sim, "chosen_direction", None) if chosen is None else chosen
    rotate = bool(rotate)

    world_art = traj_art = agent_art = ray_art = glyphs = None
    path_arts: list = []
    if world is not None:
        world_art = _plot_world(world, ax, _WALL_COLOR, "0.65", {})
    if path is not None:
        # A list of paths (Path objects or (P, 2) arrays), or one path (a list of points).
        many = isinstance(path, (list, tuple)) and all(
            hasattr(p, "points") or np.ndim(p) == 2 for p in path)
        for p in (path if many else [path]):
            path_arts.append(_plot_path(p, ax, None, _PATH_COLOR, {}))
    if trajectories is not None:
        traj_art = _plot_trajectories(trajectories, ax, None, None, {})

    if agents is not None:
        pos, head, rad, index = _agent_arrays(agents, None, None)
        agent_art = _plot_agents(pos, head, rad, ax, _agent_colors(index), "black", {})
        turn = head if (rotate and head is not None) else None
        if rays and slots is not None and look_ahead is not None and len(pos):
            la = _per_agent(look_ahead, len(index), "look_ahead") if np.ndim(look_ahead) == 0 \
                else np.asarray(look_ahead, dtype=np.float64)[index]
            dist = None
            if world is not None and hasattr(world, "walls"):
                from .world import World, slot_raycast

                if isinstance(world, World):
                    dist = slot_raycast(world, pos, _directions(slots), la, headings=turn)
            ray_art = _plot_rays(pos, slots, dist, la, _rows(danger, index), ax, turn, None,
                                 None, {})
        if maps is not False and maps is not None and interest is not None and slots is not None:
            chosen_rows = index[:16] if maps is True else np.asarray(list(maps), dtype=np.intp)
            sel = np.flatnonzero(np.isin(index, chosen_rows))
            rows = index[sel]
            scale = 3.0 * rad[sel] if map_scale is None else map_scale
            glyphs = _plot_glyphs(pos[sel], slots, _rows(interest, rows),
                                  _rows(danger, rows), _rows(chosen, rows),
                                  None if turn is None else turn[sel], scale, rad[sel], ax, {})

    bounds = getattr(world, "bounds", None) if world is not None else None
    if bounds is not None:
        x0, y0, x1, y1 = bounds
        pad = margin * max(x1 - x0, y1 - y0)
        ax.set_xlim(x0 - pad, x1 + pad)
        ax.set_ylim(y0 - pad, y1 + pad)
    else:
        ax.autoscale_view()
    return SceneArtists(world_art, path_arts, agent_art, ray_art, glyphs, traj_art, ax)


# -------------------------------------------------------------------- context maps ---


class ContextMapsGrid(NamedTuple):
    """Result of :func:`context_maps`."""

    figure: Any  #: the Figure
    axes: list  #: one polar Axes a drawn agent
    maps: list  #: one ContextMapArtists a drawn agent
    agents: list  #: the agent indices drawn, in order


def context_maps(interest, danger=None, chosen=None, agents=None, *, strength=None,
                 headings=None, threshold: float | None = None, speed=None, ncols: int = 4,
                 axes=None, titles=None, size: float = 2.4, **kwargs) -> ContextMapsGrid:
    """Small multiples: one polar :func:`context_map` per selected agent.

    Parameters
    ----------
    interest : array_like of shape (N, K), or a Simulation-like
        A simulation gives ``interest``, ``danger``, ``chosen_direction``, ``strength``,
        the headings when its slots turn with the agents, and the masking threshold
        when its steering resolves with ``mask`` (with other resolve modes no slot is
        marked as masked).
    danger : array_like of shape (N, K), optional
    chosen : array_like of shape (N, 2), optional
    agents : sequence of int, optional
        Rows to draw; default the first 8 (alive) agents.
    strength : array_like of shape (N,), optional
        Arrow lengths.
    headings : array_like of shape (N,), optional
        Rotation of each agent's slot 0 (slots that turn with the agent).
    threshold : float, optional
        Danger above which a slot is marked as masked (default 0, or from the simulation).
    speed : array_like of shape (N, K), optional
        Speed maps (default: the simulation's, when it has one).
    ncols : int
        Columns of the grid when the axes are created.
    axes : sequence of polar Axes, optional
        Where to draw, one per agent; created when None.
    titles : sequence of str, optional
        Default ``"agent i"``.
    size : float
        Inches per panel when creating the figure.
    **kwargs
        Passed to every :func:`context_map`.

    Returns
    -------
    ContextMapsGrid
        ``(figure, axes, maps, agents)``.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> interest = cs.dot_map(cs.SlotSet(8), [[1, 0], [0, 1], [-1, 0]])
    >>> grid = cs.plot.context_maps(interest, agents=[0, 2])
    >>> len(grid.axes), grid.agents
    (2, [0, 2])
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    alive_rows = None
    if hasattr(interest, "interest"):
        sim = interest
        danger = getattr(sim, "danger", None) if danger is None else danger
        chosen = getattr(sim, "chosen_direction", None) if chosen is None else chosen
        strength = getattr(sim, "strength", None) if strength is None else strength
        speed = getattr(sim, "speed", None) if speed is None else speed
        a = getattr(sim, "agents", None)
        if headings is None and _sim_rotate(sim) and a is not None:
            headings = getattr(a, "heading", None)
        alive_rows = None if a is None else _alive(a)
        if threshold is None:
            steering = getattr(sim, "steering", None)
            if getattr(steering, "resolve", "mask") == "mask":
                threshold = float(getattr(steering, "threshold", 0.0))
            else:
                threshold = np.inf
        interest = sim.interest
    threshold = 0.0 if threshold is None else threshold
    interest = np.asarray(interest, dtype=np.float64)
    if interest.ndim != 2:
        raise ValueError(f"interest: expected shape (N, K), got {interest.shape}")
    n = interest.shape[0]
    if agents is None:
        pool = np.arange(n) if alive_rows is None else alive_rows
        agents = [int(i) for i in pool[:8]]
    else:
        agents = [int(i) for i in agents]
    for i in agents:
        if not 0 <= i < n:
            raise IndexError(f"agents: index {i} out of range for {n} agents")
    if not agents:
        raise ValueError("agents: expected at least one agent index")
    if axes is None:
        cols = max(1, min(int(ncols), len(agents)))
        nrows = -(-len(agents) // cols)
        fig, grid = plt.subplots(nrows, cols, subplot_kw={"projection": "polar"}, squeeze=False,
                                 figsize=(size * cols, size * nrows), constrained_layout=True)
        flat = list(grid.ravel())
        for extra in flat[len(agents):]:
            extra.set_visible(False)
        axes = flat[: len(agents)]
    else:
        axes = list(np.ravel(np.asarray(axes, dtype=object)))
        if len(axes) < len(agents):
            raise ValueError(f"axes: expected at least {len(agents)} axes, got {len(axes)}")
        axes = axes[: len(agents)]
        fig = axes[0].figure
    drawn = []
    for j, (i, ax) in enumerate(zip(agents, axes)):
        art = context_map(
            interest[i],
            None if danger is None else np.asarray(danger)[i],
            chosen=None if chosen is None else np.asarray(chosen)[i],
            strength=None if strength is None else float(np.asarray(strength)[i]),
            threshold=threshold,
            offset=0.0 if headings is None else float(np.asarray(headings)[i]),
            speed=None if speed is None else np.asarray(speed)[i],
            ax=ax,
            **kwargs,
        )
        ax.set_title(f"agent {i}" if titles is None else titles[j], fontsize=9)
        drawn.append(art)
    return ContextMapsGrid(fig, axes, drawn, agents)


# -------------------------------------------------------------------- trajectories ---


def _plot_trajectories(history, ax, agents, color, kwargs):
    from matplotlib.collections import LineCollection

    h = getattr(history, "positions", history)
    h = np.asarray(h, dtype=np.float64)
    if h.ndim != 3 or h.shape[2] != 2:
        raise ValueError(f"history: expected positions of shape (T, N, 2), got {h.shape}")
    index = np.arange(h.shape[1]) if agents is None else np.asarray(list(agents), dtype=np.intp)
    lines = [h[:, i, :] for i in index]
    colors = _agent_colors(index) if color is None else color
    kwargs = {"linewidths": 1.0, "alpha": 0.8, "zorder": 1.5, "label": "trajectories", **kwargs}
    coll = LineCollection(lines, colors=colors, **kwargs)
    ax.add_collection(coll)
    ax.autoscale_view()
    return coll


def trajectories(history, ax=None, *, agents=None, color=None, **kwargs):
    """Draw each agent's trajectory as one polyline.

    Parameters
    ----------
    history : array_like of shape (T, N, 2), or an object with ``positions`` of that shape
        Positions at T recorded steps; NaN rows (e.g. dead agents) leave gaps.
    ax : matplotlib Axes, optional
        Where to draw; a new equal-aspect axes when None.
    agents : sequence of int, optional
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


# ----------------------------------------------------------- recording, animation ---


class Recording(NamedTuple):
    """Agent states at recorded steps, as :func:`record` keeps them for :func:`animate`.

    Any object with the same attributes (``positions`` at least) works in their place.
    """

    steps: np.ndarray  #: (T,) int64 step counts since the recording started
    positions: np.ndarray  #: (T, N, 2) float32; NaN where an agent is dead
    headings: np.ndarray  #: (T, N) float32
    radii: np.ndarray  #: (N,) float32, from the first record
    danger: Any  #: (T, N, K) float32, or None when the simulation has no danger map


def record(sim, steps: int, *, dt: float = 1.0 / 60.0, records: int = 100, danger: bool = True,
           callback=None) -> Recording:
    """Step a simulation ``steps`` times, keeping the agents' state ``records`` times.

    The simulation is advanced in ``records`` chunks with ``sim.step(dt, steps=chunk)``
    (the steps themselves run in C++; Python runs once per chunk). The first record is the
    state before stepping.

    Parameters
    ----------
    sim : Simulation-like
        Needs ``step(dt, steps=...)`` and ``agents`` (``position``, ``heading``,
        ``radius``, ``alive``); ``danger`` is recorded when present.
    steps : int
        Total steps, >= 0.
    dt : float
        Time step in seconds.
    records : int
        Records after the initial one (at most ``steps``), evenly spaced.
    danger : bool
        Also keep the danger maps (T x N x K floats).
    callback : callable, optional
        Called with the number of steps just taken after every chunk (e.g. a progress
        bar's ``update``).

    Returns
    -------
    Recording

    Examples
    --------
    >>> import contextsteer as cs
    >>> agents = cs.Agents(2, slots=8)
    >>> _ = agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
    >>> sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    >>> rec = cs.plot.record(sim, 30, dt=0.1, records=3)
    >>> rec.steps.tolist(), rec.positions.shape, rec.danger.shape
    ([0, 10, 20, 30], (4, 2, 2), (4, 2, 8))
    >>> rec.positions[-1].round(2).tolist()          # 3 s at speed 1 along +x
    [[3.0, 0.0], [3.0, 2.0]]
    """
    steps, records = int(steps), int(records)
    if steps < 0 or records < 1:
        raise ValueError(f"record: expected steps >= 0 and records >= 1, got {steps}, {records}")
    if hasattr(getattr(sim, "_core", None), "_record"):
        return _record_history(sim, steps, dt, records, danger, callback)
    records = min(records, steps) if steps else 0
    bounds = np.linspace(0, steps, records + 1).round().astype(np.int64)
    a = sim.agents
    radii = np.asarray(a.radius, dtype=np.float32).copy()
    keep_danger = danger and getattr(sim, "danger", None) is not None
    pos, head, dang = [], [], []

    def snap():
        alive = np.asarray(a.alive, dtype=bool)
        p = np.array(a.position, dtype=np.float32)
        p[~alive] = np.nan
        pos.append(p)
        head.append(np.array(a.heading, dtype=np.float32))
        if keep_danger:
            dang.append(np.array(sim.danger, dtype=np.float32))

    snap()
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi > lo:
            sim.step(dt, steps=int(hi - lo))
        snap()
        if callback is not None:
            callback(int(hi - lo))
    return Recording(bounds, np.stack(pos), np.stack(head), radii,
                     np.stack(dang) if keep_danger else None)


def _record_history(sim, steps, dt, records, danger, callback) -> Recording:
    """record() of a real Simulation: a C++ History every ``ceil(steps / records)`` steps,
    stepped in at most ``records`` chunks (Python runs once per chunk, for the callback);
    the final state is appended when ``steps`` is not a multiple of the interval."""
    from .history import History

    every = max(1, -(-steps // records)) if steps else 1
    history = History(sim, every, maps=danger, reserve=steps // every + 2)
    try:
        done = 0
        while done < steps:
            chunk = min(every * max(1, -(-steps // every) // min(records, 100)), steps - done)
            sim.step(dt, steps=chunk)
            done += chunk
            if callback is not None:
                callback(chunk)
    finally:
        history.detach()
    t = history.steps - history.steps[0]
    pos, head = np.array(history.positions), np.array(history.headings)
    dang = None if not danger else np.array(history.danger)
    if t[-1] != steps:  # the last state, between two frames
        alive = np.asarray(sim.agents.alive, dtype=bool)
        last = np.array(sim.agents.position, dtype=np.float32)
        last[~alive] = np.nan
        t = np.append(t, steps)
        pos = np.concatenate([pos, last[None]])
        head = np.concatenate([head, np.array(sim.agents.heading, dtype=np.float32)[None]])
        if dang is not None:
            dang = np.concatenate([dang, np.array(sim.danger, dtype=np.float32)[None]])
    return Recording(t.astype(np.int64), pos, head, history.radii, dang)


def animate(sim=None, steps: int | None = None, *, history=None, dt: float = 1.0 / 60.0,
            frames: int = 100, rays: bool = True, trail: bool = True, interval: int = 50,
            world=None, path=None, slots=None, look_ahead=None, rotate=None, ax=None):
    """Animate agents moving through their world; returns a ``FuncAnimation``.

    Either steps ``sim`` for ``steps`` steps while recording ``frames`` frames (see
    :func:`record`), or replays a given ``history`` (a :class:`~contextsteer.History`, a
    :class:`Recording`, or anything with ``positions`` (T, N, 2) and optionally
    ``headings``, ``radii``, ``danger``; ``animate(history)`` works too).
    The static parts (walls, paths) are drawn once; each frame redraws the agents, their
    slot rays (cast against the world, coloured by the recorded danger) and the trails.
    Save with ``anim.save("run.gif", writer="pillow")``; in a notebook show
    ``HTML(anim.to_jshtml())``.

    Parameters
    ----------
    sim : Simulation-like, optional
        Source of the world, paths, slots, look-ahead and rotation (and of the frames
        when ``history`` is None).
    steps : int, optional
        Steps to record; required when ``history`` is None.
    history : Recording-like, optional
    dt : float
    frames : int
        Frames to record after the first (ignored with ``history``).
    rays : bool
    trail : bool
        Draw each agent's trajectory so far.
    interval : int
        Milliseconds between frames.
    world, path, slots, look_ahead, rotate
        Override the simulation's parts, as in :func:`scene`.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.animation.FuncAnimation
        With the recording attached as ``anim.history``.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> t = np.linspace(0, 1, 4)[:, None, None]
    >>> history = np.zeros((4, 2, 2)) + t * [[1.0, 0.0], [0.0, 1.0]]
    >>> class H: positions = history
    >>> anim = cs.plot.animate(history=H(), rays=False)
    >>> html = anim.to_jshtml()
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    if history is None and hasattr(sim, "positions") and not hasattr(sim, "step"):
        # animate(history): a History (or Recording) given first; its simulation, if it
        # has one, supplies the world, paths and slots.
        history, sim = sim, getattr(sim, "sim", None)
    if history is None:
        if sim is None or steps is None:
            raise ValueError("animate: give sim and steps, or a history")
        history = record(sim, steps, dt=dt, records=frames, danger=rays)
    positions = np.asarray(history.positions, dtype=np.float64)
    if positions.ndim != 3 or positions.shape[2] != 2:
        raise ValueError(f"history: expected positions of shape (T, N, 2), got {positions.shape}")
    t_count, n = positions.shape[:2]
    headings, radii, dangers, world, path, slots, look_ahead, rotate = _recorded_inputs(
        history, sim, n, world, path, slots, look_ahead, rotate)

    art = scene(world=world, path=path, ax=ax, rays=False)
    ax = art.ax
    bounds = getattr(world, "bounds", None) if world is not None else None
    if bounds is None:
        finite = positions[np.isfinite(positions).all(axis=2)]
        if len(finite):
            lo, hi = finite.min(axis=0), finite.max(axis=0)
            pad = 0.05 * float(max(hi - lo)) + float(radii.max(initial=0.5))
            ax.set_xlim(lo[0] - pad, hi[0] + pad)
            ax.set_ylim(lo[1] - pad, hi[1] + pad)
    dynamic: list = []
    cast = rays and slots is not None and look_ahead is not None
    if cast:
        from .world import World, slot_raycast

        cast_world = world if isinstance(world, World) else None
        dirs = _directions(slots)

    def draw(f):
        for artist in dynamic:
            artist.remove()
        dynamic.clear()
        alive = np.flatnonzero(np.isfinite(positions[f]).all(axis=1))
        pos = positions[f, alive]
        head = None if headings is None else np.asarray(headings)[f, alive]
        if trail and f > 0:
            dynamic.append(_plot_trajectories(positions[: f + 1], ax, alive, None, {}))
        if cast and len(alive):
            la = np.full(len(alive), float(look_ahead)) if np.ndim(look_ahead) == 0 \
                else np.asarray(look_ahead, dtype=np.float64)[alive]
            turn = head if rotate else None
            dist = None if cast_world is None else slot_raycast(cast_world, pos, dirs, la,
                                                                headings=turn)
            d = None if dangers is None else np.asarray(dangers)[f, alive]
            dynamic.append(_plot_rays(pos, dirs, dist, la, d, ax, turn, None, None, {}))
        body = _plot_agents(pos, head, radii[alive], ax, _agent_colors(alive), "black", {})
        dynamic.extend(a for a in body if a is not None)
        return dynamic

    if bounds is not None:
        ax.set_autoscale_on(False)
    anim = FuncAnimation(ax.figure, draw, frames=t_count, interval=interval, blit=False,
                         repeat=False)
    anim.history = history
    plt.close(ax.figure)  # the animation keeps the figure; do not also show it statically
    return anim


class Frames(NamedTuple):
    """Frames rendered by :func:`frames`: an iterable of RGB images and their size."""

    images: Any  #: iterator of (height, width, 3) uint8 arrays, one a recorded frame
    count: int  #: number of images
    size: tuple  #: (width, height) in pixels
    figure: Any  #: the Figure they are drawn on (static parts already drawn)


def _frame_size(bounds, width: int, height: int | None, title: bool) -> tuple[int, int]:
    """Pixel size: ``width`` wide, height from the world's aspect (even numbers, for video)."""
    if height is None:
        if bounds is not None and bounds[2] > bounds[0]:
            aspect = (bounds[3] - bounds[1]) / (bounds[2] - bounds[0])
        else:
            aspect = 0.75
        height = int(round(width * min(1.5, max(0.3, aspect)))) + (30 if title else 0)
    return int(width) + int(width) % 2, int(height) + int(height) % 2


def frames(sim=None, *, history, size: tuple[int, int] | int = 960, dpi: float = 100.0,
           rays: bool = True, trail=None, trail_samples: int | None = None,
           title: str | None = None, dt: float | None = None, world=None, path=None,
           slots=None, look_ahead=None, rotate=None, margin: float = 0.03) -> Frames:
    """Render a recording as RGB images, fast: static parts drawn once, agents blitted.

    The walls and paths are drawn once into a background; every frame restores it and
    draws only the moving artists (trails, slot rays coloured by danger, agents), each
    created once and updated in place. About 10-20 ms a frame at 960 px on one core,
    against 150 ms for a full matplotlib redraw. Use :func:`contextsteer.video.write`
    (or ``contextsteer run``) to encode the images as a GIF or an MP4.

    Parameters
    ----------
    sim : Simulation-like, optional
        Source of the world, paths, slots, look-ahead and rotation, as in :func:`scene`.
    history : Recording-like
        Frames to draw: ``positions`` (T, N, 2) and optionally ``headings`` (T, N),
        ``radii`` (N,), ``danger`` (T, N, K), ``steps`` (T,) and ``times`` (T,).
    size : int or (int, int)
        Width in pixels (height from the world's aspect), or (width, height). Rounded up
        to even numbers (video encoders need them).
    dpi : float
        Dots per inch: at a given pixel size a higher dpi draws thicker lines and larger
        text.
    rays : bool
        Draw each agent's slot rays (cast against the world, coloured by danger).
    trail : array_like of shape (S, N, 2), bool or None
        Trajectories drawn up to each frame: evenly spaced samples over the same span
        as the frames, usually denser (frame ``f`` of ``T`` shows the first
        ``f / (T - 1)`` of them); True for the frames' own positions; None or False for
        none.
    trail_samples : int, optional
        Show only the last ``trail_samples`` trail points behind each agent (a comet
        tail); None shows the whole trajectory so far.
    title : str, optional
        Prefix of the per-frame caption (``"title  t = 12.3 s"``: times from
        ``history.times``, else ``history.steps * dt``, else the step number).
    dt : float, optional
        Seconds per step, for the caption.
    world, path, slots, look_ahead, rotate
        Override the simulation's parts, as in :func:`scene`.
    margin : float
        Fraction of the world's size added around its bounds.

    Returns
    -------
    Frames
        ``images`` is a generator: each image is rendered when it is taken.

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> t = np.linspace(0, 1, 4)[:, None, None]
    >>> rec = cs.plot.Recording(np.arange(4), np.zeros((4, 2, 2)) + t * [[1.0, 0], [0, 1.0]],
    ...                         np.zeros((4, 2)), np.full(2, 0.2), None)
    >>> out = cs.plot.frames(history=rec, size=200, rays=False)
    >>> out.count, out.size
    (4, (200, 230))
    >>> [im.shape for im in out.images][0]
    (230, 200, 3)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import EllipseCollection, LineCollection
    from matplotlib.figure import Figure

    positions = np.asarray(history.positions, dtype=np.float64)
    if positions.ndim != 3 or positions.shape[2] != 2:
        raise ValueError(f"history: expected positions of shape (T, N, 2), got {positions.shape}")
    t_count, n = positions.shape[:2]
    if t_count < 1:
        raise ValueError("history: expected at least one frame")
    headings, radii, dangers, world, path, slots, look_ahead, rotate = _recorded_inputs(
        history, sim, n, world, path, slots, look_ahead, rotate)
    headings = None if headings is None else np.asarray(headings, dtype=np.float64)
    if isinstance(size, (int, np.integer)):
        width, height = int(size), None
    else:
        width, height = (int(v) for v in size)
    if width < 16 or (height is not None and height < 16):
        raise ValueError(f"size: expected at least 16 pixels, got {size!r}")
    if not dpi > 0:
        raise ValueError(f"dpi: expected > 0, got {dpi!r}")
    bounds = getattr(world, "bounds", None) if world is not None else None
    if bounds is not None and not bounds[2] > bounds[0]:
        bounds = None
    if bounds is None:
        finite = positions[np.isfinite(positions).all(axis=2)]
        lo, hi = (finite.min(axis=0), finite.max(axis=0)) if len(finite) else (np.zeros(2),) * 2
        pad = float(radii.max(initial=0.5))
        bounds = (lo[0] - pad, lo[1] - pad, hi[0] + pad, hi[1] + pad)
    w_px, h_px = _frame_size(bounds, width, height, True)

    fig = Figure(figsize=(w_px / dpi, h_px / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    caption_h = min(0.12, 30.0 / h_px)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0 - caption_h))
    ax.set_axis_off()
    scene(world=world, path=path, ax=ax, rays=False)
    # Limits that fill the axes at equal aspect: widen the short side of the world's box.
    x0, y0, x1, y1 = bounds
    pad = margin * max(x1 - x0, y1 - y0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    dx, dy = x1 - x0 + 2 * pad, y1 - y0 + 2 * pad
    ratio = w_px / (h_px * (1.0 - caption_h))
    dx, dy = max(dx, dy * ratio), max(dy, dx / ratio)
    ax.set_xlim(cx - dx / 2, cx + dx / 2)
    ax.set_ylim(cy - dy / 2, cy + dy / 2)
    ax.set_autoscale_on(False)
    caption = fig.text(0.01, 1.0 - caption_h / 2, "", va="center", ha="left",
                       fontsize=11, animated=True)

    colors = _agent_colors(np.arange(n))
    trail_pos = None
    if trail is True:
        trail_pos = positions
    elif trail is not None and trail is not False:
        trail_pos = np.asarray(getattr(trail, "positions", trail), dtype=np.float64)
        if trail_pos.ndim != 3 or trail_pos.shape[1:] != (n, 2):
            raise ValueError(f"trail: expected positions of shape (S, {n}, 2), got "
                             f"{trail_pos.shape}")
    trail_art = None
    if trail_pos is not None:
        trail_art = LineCollection([], colors=colors, linewidths=1.2, alpha=0.7, zorder=1.5,
                                   animated=True)
        ax.add_collection(trail_art)
    cast = rays and slots is not None and look_ahead is not None
    ray_art = None
    if cast:
        from .world import World, slot_raycast

        cast_world = world if isinstance(world, World) else None
        dirs = _directions(slots)
        ray_art = LineCollection([], cmap=_danger_cmap(), linewidths=1.0, zorder=3,
                                 animated=True)
        ray_art.set_clim(0.0, 1.0)
        ax.add_collection(ray_art)
    bodies = EllipseCollection(2 * radii, 2 * radii, np.zeros(n), units="xy",
                               offsets=np.zeros((n, 2)), offset_transform=ax.transData,
                               facecolors=colors, edgecolors="black", linewidths=1.0,
                               zorder=4, animated=True)
    ax.add_collection(bodies)
    ticks = LineCollection([], colors="black", linewidths=1.6, zorder=5, animated=True)
    ax.add_collection(ticks)

    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    times = getattr(history, "times", None)
    steps = getattr(history, "steps", None)
    if times is None and steps is not None and dt is not None:
        times = np.asarray(steps, dtype=np.float64) * float(dt)
    label = title if title is not None else ""

    def render(f: int) -> np.ndarray:
        canvas.restore_region(background)
        alive = np.isfinite(positions[f]).all(axis=1)
        pos = positions[f]
        if trail_art is not None:
            upto = int(round(f / max(t_count - 1, 1) * (len(trail_pos) - 1))) + 1
            first = 0 if trail_samples is None else max(0, upto - int(trail_samples))
            trail_art.set_segments([trail_pos[first:upto, i] for i in range(n)])
            ax.draw_artist(trail_art)
        head = np.zeros(n) if headings is None else headings[f]
        if ray_art is not None and alive.any():
            idx = np.flatnonzero(alive)
            p = pos[idx]
            la = np.full(len(idx), float(look_ahead)) if np.ndim(look_ahead) == 0 \
                else np.asarray(look_ahead, dtype=np.float64)[idx]
            turn = head[idx] if rotate else None
            u = _rotated(dirs, turn, len(idx))
            if cast_world is not None:
                dist = slot_raycast(cast_world, p, dirs, la, headings=turn)
                length = np.minimum(np.nan_to_num(np.asarray(dist, np.float64), nan=np.inf),
                                    la[:, None])
            else:
                length = np.broadcast_to(la[:, None], u.shape[:2])
            if dangers is not None:
                value = np.asarray(dangers[f], dtype=np.float64)[idx]
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    value = np.where(length < la[:, None], 1.0 - length / la[:, None], 0.0)
            start = np.broadcast_to(p[:, None, :], u.shape)
            seg = np.stack([start, p[:, None, :] + u * length[..., None]], axis=2)
            ray_art.set_segments(seg.reshape(-1, 2, 2))
            ray_art.set_array(np.clip(value, 0.0, 1.0).reshape(-1))
            ax.draw_artist(ray_art)
        shown = np.where(alive[:, None], pos, np.nan)
        bodies.set_offsets(np.nan_to_num(shown, nan=1e12))
        ax.draw_artist(bodies)
        if headings is not None:
            tip = pos + radii[:, None] * np.stack([np.cos(head), np.sin(head)], axis=1)
            ticks.set_segments(np.stack([pos, tip], axis=1)[alive])
            ax.draw_artist(ticks)
        if times is not None:
            caption.set_text(f"{label}  t = {float(np.asarray(times)[f]):.1f} s".strip())
        elif steps is not None:
            caption.set_text(f"{label}  step {int(np.asarray(steps)[f])}".strip())
        else:
            caption.set_text(f"{label}  frame {f}".strip())
        fig.draw_artist(caption)
        return np.asarray(canvas.buffer_rgba())[..., :3].copy()

    return Frames((render(f) for f in range(t_count)), t_count, (w_px, h_px), fig)


# ------------------------------------------------------------------------ metrics ---


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


def metrics(data, ax=None, *, series=None, **kwargs) -> MetricsArtists:
    """Plot run metrics: time series of a :class:`~contextsteer.History`, or bars of a
    metric summary.

    Parameters
    ----------
    data : History, dict or Simulation
        A History (anything with ``times`` and a ``series`` dict): one line a series
        against simulated time. A dict from ``Simulation.metrics()`` (or a simulation,
        whose ``metrics()`` is called): bars of the counts it has — collisions by kind,
        arrivals, laps, overtakes, stuck agents.
    ax : Axes or sequence of Axes, optional
        For series: one axes a series (new stacked axes sharing x when None); for bars:
        one axes.
    series : sequence of str, optional
        Series to draw (default collisions, min clearance, mean speed, plus laps or
        arrivals when they are not all zero/NaN).
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

    if hasattr(data, "metrics") and callable(data.metrics) and not hasattr(data, "series"):
        data = data.metrics()
    if isinstance(data, dict):
        labels, values = [], []
        for label, keys in _SUMMARY_BARS:
            v = _lookup(data, keys)
            if v is not None:
                labels.append(label)
                values.append(float(v))
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
    series = list(series)
    unknown = [s for s in series if s not in table]
    if unknown:
        raise ValueError(f"metrics: unknown series {unknown}; valid: {sorted(table)}")
    if ax is None:
        fig, axes = plt.subplots(len(series), 1, sharex=True, squeeze=False,
                                 figsize=(6, 1.3 * len(series) + 0.6), layout="constrained")
        axes = list(axes[:, 0])
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
