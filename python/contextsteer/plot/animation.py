"""Animations of recorded frames: a matplotlib ``FuncAnimation`` (:func:`animate`) and
fast blitted RGB frames for a video (:func:`frames`). Both draw a recording (a
:class:`~contextsteer.History` or :class:`~contextsteer.Recording`); neither steps."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..history import History, Recording
from ..simulation import Simulation
from ._draw import (
    SimView,
    _agent_colors,
    _break_at_new_agents,
    _danger_cmap,
    _directions,
    _floats,
    _generations,
    _margin,
    _pose_or_now,
    _positions,
    _rotated,
    _segments,
    tidy,
)
from .parts import _plot_agents, _plot_rays, _plot_trajectories
from .scenes import _bounds, scene

if TYPE_CHECKING:
    from matplotlib.animation import FuncAnimation
    from matplotlib.axes import Axes

    from ..world import World

#: The largest frame side frames() draws (Agg's own limit is 2**16 pixels).
_MAX_PIXELS = 8192

__all__ = ["Frames", "animate", "frames"]


def _recording(
    history: History | Recording | ArrayLike, sim: Simulation | None, who: str
) -> tuple[Recording, Simulation | None]:
    """The frames to draw as a Recording, and the simulation to read the static parts
    from (a History's own when ``sim`` is None)."""
    if isinstance(history, Simulation):
        raise TypeError(
            f"{who}: expected recorded frames (a History, a Recording or positions "
            f"(T, N, 2)), got a Simulation; record it first, e.g. "
            f"cs.run_simulation(sim, steps, records=100, maps=True).history"
        )
    if sim is not None and not isinstance(sim, Simulation):
        raise TypeError(f"{who}: sim must be a contextsteer.Simulation, got {type(sim).__name__}")
    if isinstance(history, History):
        sim = history.sim if sim is None else sim
        frame_radii = history.frame_radii
        rec = Recording(
            history.steps,
            history.positions,
            history.headings,
            history.radii if frame_radii is None else frame_radii,
            history.danger,
            history.times,
            history.sensed,
            history.perceived_positions,
            history.perceived_headings,
            history.generations,
        )
    elif isinstance(history, Recording):
        rec = history
    else:
        rec = Recording(None, _floats(history, "history"), None, None, None)
    return rec, sim


def _first(a: np.ndarray | None, count: int) -> np.ndarray | None:
    return None if a is None else a[:count]


def _seen_pose(
    rec: Recording, f: int, index: np.ndarray, pos: np.ndarray, head: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Frame ``f``'s pose of agents ``index`` when they perceived the frame's maps (the
    recorded perceived pose), their pose at the frame where none was recorded."""
    if rec.perceived_positions is None or rec.perceived_headings is None:
        return pos, head
    now_head = np.zeros(len(index)) if head is None else head
    return _pose_or_now(
        np.asarray(rec.perceived_positions)[f, index],
        np.asarray(rec.perceived_headings)[f, index],
        pos,
        now_head,
    )


def _recorded_inputs(
    rec: Recording,
    sim: Simulation | None,
    t_count: int,
    n: int,
    world: World | ArrayLike | None,
    path: Any,
    slots: Any,
    look_ahead: ArrayLike | None,
    rotate: bool | None,
) -> tuple[
    np.ndarray | None, np.ndarray, np.ndarray | None, World | ArrayLike | None, Any, Any, Any, bool
]:
    """What the animations draw besides positions: the recording's headings, radii (T, N)
    (each frame's when recorded so; else the first frame's, the simulation's, or 0.5) and
    danger maps, and the world, path, slot set, look-ahead and rotation (given, else read
    from ``sim``)."""
    radii = rec.radii
    if radii is None and sim is not None:
        radii = np.asarray(sim.agents.radius)[:n]
    radii = np.full(n, 0.5) if radii is None else _floats(radii, "radii")
    if radii.shape == (n,):
        radii = np.broadcast_to(radii, (t_count, n))
    elif radii.shape != (t_count, n):
        raise ValueError(f"radii: expected shape ({n},) or ({t_count}, {n}), got {radii.shape}")
    if sim is not None:
        world, path, slots, look_ahead, rotate = SimView.of(sim).or_given(
            world, path, slots, look_ahead, rotate
        )
    if look_ahead is not None:
        la = _floats(look_ahead, "look_ahead")
        if la.ndim != 0 and la.shape != (n,):
            # (A bare IndexError came from the drawing of a frame.)
            raise ValueError(
                f"look_ahead: expected a number or one per agent ({n},), got shape {la.shape}"
            )
        # Checked here, as rays() checks it: frames() drew a ray of -5 backwards, and
        # animate() raised only while saving, under matplotlib's own IndexError.
        if not np.all(np.isfinite(la)):
            raise ValueError("look_ahead: must be finite")
        if np.any(la < 0):
            raise ValueError("look_ahead: must be >= 0")
    if slots is not None and rec.danger is not None:
        k = len(_directions(slots))
        if np.shape(rec.danger)[-1] != k:
            # (The rays of K slots were coloured by maps of another K, without a word.)
            raise ValueError(
                f"slots: {k} slots, but the recorded maps have {np.shape(rec.danger)[-1]}"
            )
    return rec.headings, radii, rec.danger, world, path, slots, look_ahead, bool(rotate)


def _with_agents(
    bounds: tuple[float, float, float, float], positions: np.ndarray, radii: Any
) -> tuple[float, float, float, float]:
    """``bounds`` grown to hold every finite recorded position and its largest body."""
    finite = positions[np.isfinite(positions).all(axis=-1)]
    if not len(finite):
        return bounds
    pad = float(np.nanmax(radii, initial=0.5)) if radii is not None else 0.5
    lo, hi = finite.min(axis=0) - pad, finite.max(axis=0) + pad
    grown = (
        min(bounds[0], float(lo[0])),
        min(bounds[1], float(lo[1])),
        max(bounds[2], float(hi[0])),
        max(bounds[3], float(hi[1])),
    )
    return bounds if grown == tuple(bounds) else grown


@tidy
def animate(
    history: History | Recording | ArrayLike,
    sim: Simulation | None = None,
    *,
    rays: bool = True,
    trail: bool = True,
    interval: float = 50,
    world: World | ArrayLike | None = None,
    path: Any = None,
    slots: Any = None,
    look_ahead: ArrayLike | None = None,
    rotate: bool | None = None,
    ax: Axes | None = None,
) -> FuncAnimation:
    """Animate recorded frames of agents moving through their world; a ``FuncAnimation``.

    Replays a recording: a :class:`~contextsteer.History`, a
    :class:`~contextsteer.Recording` (``RunResult.history`` of
    :func:`contextsteer.run_simulation`) or positions of shape (T, N, 2). It never steps
    a simulation: record first, e.g. ``cs.run_simulation(sim, steps, records=100,
    maps=True).history``. The static parts (walls, paths) are drawn once; each frame
    redraws the agents, their slot rays (coloured by the recorded danger maps and stopped
    at the recorded hits of the ``WallDanger`` rays, ``sensed``: what each agent saw at
    that frame; no rays without recorded maps; one colour scale for every frame, danger
    0 to 1, full red at 1 and above, where :func:`scene` scales its one frame to
    ``max(1, danger.max())``) and the trails. Save with
    ``anim.save("run.gif", writer="pillow")``; in a notebook show
    ``HTML(anim.to_jshtml())``.

    Parameters
    ----------
    history : History, Recording or array_like of shape (T, N, 2)
    sim : Simulation, optional
        Source of the world, paths, slots, look-ahead and rotation (a History's own
        simulation by default); read, never stepped.
    rays : bool
    trail : bool
        Draw each agent's trajectory so far.
    interval : float
        Milliseconds between frames, in (0, 3.6e6].
    world, path, slots, look_ahead, rotate
        Override the simulation's parts, as in :func:`scene`.
    ax : matplotlib Axes, optional
        Draw on this axes (its figure, or a SubFigure's, is left open and shown as the
        caller shows it). Without it a new figure is made and closed in pyplot, so that
        a notebook shows the animation only, not also a still of its first frame.

    Returns
    -------
    matplotlib.animation.FuncAnimation
        With the recording attached as ``anim.history``.

    Raises
    ------
    TypeError
        ``history`` is a Simulation (record it first), or ``sim`` is not one.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> t = np.linspace(0, 1, 4)[:, None, None]
    >>> positions = np.zeros((4, 2, 2)) + t * [[1.0, 0.0], [0.0, 1.0]]
    >>> anim = cs.plot.animate(positions, rays=False)
    >>> html = anim.to_jshtml()
    >>> plt.close("all")
    """
    from .. import _checks

    interval = _checks.real("animate: interval", interval)
    # Switches: a bool or 0/1 ("no" and 2.5 drew the rays; fuzz round 24).
    rays = _checks.flag("animate: rays", rays)
    if rotate is not None:  # "no" and 2.5 were read as on (fuzz round 25)
        rotate = _checks.flag("animate: rotate", rotate)
    trail = _checks.flag("animate: trail", trail)
    if not (math.isfinite(interval) and 0 < interval <= 3.6e6):
        raise ValueError(f"animate: interval must be milliseconds in (0, 3.6e6], got {interval!r}")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    rec, sim = _recording(history, sim, "animate")
    positions = np.asarray(rec.positions, dtype=np.float64)
    if positions.ndim != 3 or positions.shape[2] != 2:
        raise ValueError(f"history: expected positions of shape (T, N, 2), got {positions.shape}")
    t_count, n = positions.shape[:2]
    if t_count < 1:
        raise ValueError("history: expected at least one frame")
    headings, radii, dangers, world, path, slots, look_ahead, rotate = _recorded_inputs(
        rec, sim, t_count, n, world, path, slots, look_ahead, rotate
    )

    own = ax is None
    # The obstacles the simulation's agents meet, as they stand now (a door opened or
    # closed during the run is drawn as it is at the end).
    layers = SimView.of(sim).layers if sim is not None else None
    art = scene(world=world, path=path, ax=ax, rays=False, layers=layers)
    ax = art.ax
    bounds = _bounds(world)
    if bounds is None:
        finite = positions[np.isfinite(positions).all(axis=2)]
        if len(finite):
            lo, hi = finite.min(axis=0), finite.max(axis=0)
            pad = 0.05 * float(max(hi - lo)) + float(np.nanmax(radii, initial=0.5))
            ax.set_xlim(lo[0] - pad, hi[0] + pad)
            ax.set_ylim(lo[1] - pad, hi[1] + pad)
    elif (whole := _with_agents(bounds, positions, radii)) != bounds:
        # Agents beyond the world's box: the limits hold them too, as scene's do (they
        # were the world's alone, and agents beside a few walls were never in the picture).
        x0, y0, x1, y1 = whole
        pad = 0.05 * max(x1 - x0, y1 - y0)
        ax.set_xlim(x0 - pad, x1 + pad)
        ax.set_ylim(y0 - pad, y1 + pad)
    dynamic: list = []
    cast_rays = rays and slots is not None and look_ahead is not None and dangers is not None
    if cast_rays:
        dirs = _directions(slots)

    gens = None if rec.generations is None else np.asarray(rec.generations)

    def draw(f):
        for artist in dynamic:
            artist.remove()
        dynamic.clear()
        alive = np.flatnonzero(np.isfinite(positions[f]).all(axis=1))
        pos = positions[f, alive]
        head = None if headings is None else np.asarray(headings)[f, alive]
        if trail and f > 0:
            # Every agent's trail so far (also of agents since removed, as frames() draws
            # them), broken where a slot passed to a new agent.
            so_far = Recording(
                None, positions[: f + 1], None, None, None, generations=_first(gens, f + 1)
            )
            dynamic.append(_plot_trajectories(so_far, ax, None, None, {}))
        if cast_rays and len(alive):
            # A 0-d look_ahead: float() takes it (the stubs cannot tell it from an array).
            la = (
                np.full(len(alive), float(look_ahead))  # type: ignore[arg-type]
                if np.ndim(look_ahead) == 0
                else _floats(look_ahead, "look_ahead")[alive]
            )
            # From the pose the frame's maps were perceived from (before the move).
            see_pos, see_head = _seen_pose(rec, f, alive, pos, head)
            turn = see_head if rotate else None
            d = np.asarray(dangers)[f, alive]
            hit = None if rec.sensed is None else np.asarray(rec.sensed)[f, alive]
            # One colour scale for every frame (danger 1 and above: full red), as frames().
            dynamic.append(_plot_rays(see_pos, dirs, hit, la, d, ax, turn, None, 1.0, {}))
        body = _plot_agents(pos, head, radii[f, alive], ax, _agent_colors(alive), "black", {})
        dynamic.extend(a for a in body if a is not None)
        return dynamic

    if bounds is not None:
        ax.set_autoscale_on(False)
    # The root figure: FuncAnimation (and its savers) take a Figure, not a SubFigure.
    figure: Any = ax.figure
    while getattr(figure, "figure", figure) is not figure:
        figure = figure.figure
    anim = FuncAnimation(figure, draw, frames=t_count, interval=interval, blit=False, repeat=False)
    # FuncAnimation declares no such attribute: attach the recording for the caller.
    setattr(anim, "history", history)  # noqa: B010
    if own:
        # The animation keeps the figure; do not also show it statically. A figure of the
        # caller's axes is theirs (closing it dropped their other subplots from pyplot,
        # and a SubFigure could not be closed at all).
        plt.close(figure)
    return anim


class Frames(NamedTuple):
    """Frames rendered by :func:`frames`: an iterable of RGB images and their size."""

    images: Any  #: iterator of (height, width, 3) uint8 arrays, one a recorded frame
    #: number of images
    count: int  # type: ignore[assignment]  # (a public field shadowing tuple.count)
    size: tuple  #: (width, height) in pixels
    figure: Any  #: the Figure they are drawn on (static parts already drawn)


def _spread(
    bounds: tuple[float, float, float, float],
) -> tuple[float, float, float, float] | None:
    """World bounds with a side of zero length (a world of one vertical or horizontal
    wall) given that of the other, about their centre: only a zero width was caught, and
    a vertical wall 10 m long was drawn in a picture 1 m tall. None for a point."""
    x0, y0, x1, y1 = bounds
    w, h = x1 - x0, y1 - y0
    if not (w > 0 or h > 0):
        return None
    if not w > 0:
        cx = 0.5 * (x0 + x1)
        return (cx - 0.5 * h, y0, cx + 0.5 * h, y1)
    if not h > 0:
        cy = 0.5 * (y0 + y1)
        return (x0, cy - 0.5 * w, x1, cy + 0.5 * w)
    return bounds


def _frame_size(
    bounds: tuple[float, float, float, float] | None, width: int, height: int | None, title: bool
) -> tuple[int, int]:
    """Pixel size: ``width`` wide, height from the world's aspect (even numbers, for video)."""
    if height is None:
        if bounds is not None and bounds[2] > bounds[0]:
            aspect = (bounds[3] - bounds[1]) / (bounds[2] - bounds[0])
        else:
            aspect = 0.75
        height = int(round(width * min(1.5, max(0.3, aspect)))) + (30 if title else 0)
    return int(width) + int(width) % 2, int(height) + int(height) % 2


def _figsize(w_px: int, h_px: int, dpi: float) -> tuple[float, float]:
    """Inches for a figure of exactly ``w_px`` × ``h_px`` pixels at ``dpi``: a quarter
    pixel over, as matplotlib before 3.11 truncates figsize·dpi (2.3 · 100 is
    229.99999999999997, so 229 rows) and later versions round."""
    return (w_px + 0.25) / dpi, (h_px + 0.25) / dpi


@tidy
def frames(
    sim: Simulation | None = None,
    *,
    history: History | Recording | ArrayLike,
    size: tuple[int, int] | int = 960,
    dpi: float = 100.0,
    rays: bool = True,
    trail: History | Recording | ArrayLike | bool | None = None,
    trail_samples: int | None = None,
    title: str | None = None,
    dt: float | None = None,
    world: World | ArrayLike | None = None,
    path: Any = None,
    slots: Any = None,
    look_ahead: ArrayLike | None = None,
    rotate: bool | None = None,
    margin: float = 0.03,
) -> Frames:
    """Render a recording as RGB images, fast: static parts drawn once, agents blitted.

    The walls and paths are drawn once into a background; every frame restores it and
    draws only the moving artists (trails, slot rays coloured by danger, agents), each
    created once and updated in place. About 10-20 ms a frame at 960 px on one core,
    against 150 ms for a full matplotlib redraw. Use :func:`contextsteer.video.write`
    (or ``contextsteer run``) to encode the images as a GIF or an MP4.

    Parameters
    ----------
    sim : Simulation, optional
        Source of the world, paths, slots, look-ahead and rotation, as in :func:`scene`
        (a History's own simulation by default); read, never stepped.
    history : History, Recording or array_like of shape (T, N, 2)
        Frames to draw: ``positions`` (T, N, 2) and, when recorded, ``headings`` (T, N),
        ``radii`` (N,) or (T, N), ``danger`` (T, N, K), ``steps`` (T,) and ``times`` (T,).
    size : int or (int, int)
        Width in pixels (height from the world's aspect), or (width, height); 16 to 8192
        pixels a side. Rounded up to even numbers (video encoders need them).
    dpi : float
        Dots per inch, 10 to 1000: at a given pixel size a higher dpi draws thicker lines
        and larger text.
    rays : bool
        Draw each agent's slot rays, coloured by the recorded danger maps and stopped at
        the recorded hits (``sensed``), what the agent saw at that frame; no rays without
        recorded maps. The colours run from danger 0 to 1 in every frame (full red at 1
        and above), where :func:`scene` scales its one frame to ``max(1, danger.max())``.
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
    margin = _margin("frames", margin)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import EllipseCollection, LineCollection
    from matplotlib.figure import Figure

    rec, sim = _recording(history, sim, "frames")
    if rotate is not None:  # "no" and 2.5 were read as on (fuzz round 25)
        from .. import _checks

        rotate = _checks.flag("frames: rotate", rotate)
    positions = np.asarray(rec.positions, dtype=np.float64)
    if positions.ndim != 3 or positions.shape[2] != 2:
        raise ValueError(f"history: expected positions of shape (T, N, 2), got {positions.shape}")
    t_count, n = positions.shape[:2]
    if t_count < 1:
        raise ValueError("history: expected at least one frame")
    headings, radii, dangers, world, path, slots, look_ahead, rotate = _recorded_inputs(
        rec, sim, t_count, n, world, path, slots, look_ahead, rotate
    )
    from .. import _checks

    rays = _checks.flag("frames: rays", rays)
    headings = None if headings is None else _floats(headings, "headings")

    def whole(v: Any) -> bool:
        return _checks.is_int(v) and not isinstance(v, bool)

    if _checks.is_int(size) and not isinstance(size, bool):
        width, height = int(size), None
    elif isinstance(size, (tuple, list)) and len(size) == 2 and all(whole(v) for v in size):
        width, height = int(size[0]), int(size[1])
    else:
        raise TypeError(
            f"size: expected an int width or a (width, height) pair of ints, got {size!r}"
        )
    if not all(16 <= v <= _MAX_PIXELS for v in (width, height) if v is not None):
        raise ValueError(f"size: expected 16 to {_MAX_PIXELS} pixels a side, got {size!r}")
    if isinstance(dpi, bool) or not _checks.is_real(dpi):
        raise TypeError(f"dpi: expected a number, got {dpi!r}")
    if not 10 <= dpi <= 1000:
        # (Below about 3.3 the caption's font had no size, FreeType raised; far above,
        # a 200-pixel frame's font needed more memory than there is.)
        raise ValueError(f"dpi: expected 10 to 1000 (as the command line's --dpi), got {dpi!r}")
    if trail_samples is not None and (
        isinstance(trail_samples, bool) or not _checks.is_int(trail_samples) or trail_samples < 1
    ):
        raise ValueError(
            f"trail_samples: expected a whole number >= 1 (or None for the whole trail; "
            f"trail=False for none), got {trail_samples!r}"
        )
    bounds = _bounds(world)
    if bounds is not None:
        bounds = _spread(bounds)
    if bounds is not None:  # with every recorded agent in the picture, as in animate
        bounds = _with_agents(bounds, positions, radii)
    if bounds is None:
        finite = positions[np.isfinite(positions).all(axis=2)]
        lo, hi = (finite.min(axis=0), finite.max(axis=0)) if len(finite) else (np.zeros(2),) * 2
        pad = float(np.nanmax(radii, initial=0.5))
        bounds = (lo[0] - pad, lo[1] - pad, hi[0] + pad, hi[1] + pad)
    w_px, h_px = _frame_size(bounds, width, height, True)

    fig = Figure(figsize=_figsize(w_px, h_px, dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    caption_h = min(0.12, 30.0 / h_px)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0 - caption_h))
    ax.set_axis_off()
    layers = SimView.of(sim).layers if sim is not None else None
    scene(world=world, path=path, ax=ax, rays=False, layers=layers)
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
    caption = fig.text(
        0.01, 1.0 - caption_h / 2, "", va="center", ha="left", fontsize=11, animated=True
    )

    colors = _agent_colors(np.arange(n))
    trail_pos = None
    if trail is True:
        trail_pos = positions
    elif trail is not None and trail is not False:
        trail_pos = _floats(_positions(trail, "trail"), "trail")
        if trail_pos.ndim != 3 or trail_pos.shape[1:] != (n, 2):
            raise ValueError(
                f"trail: expected positions of shape (S, {n}, 2), got {trail_pos.shape}"
            )
    trail_gens = rec.generations if trail is True else _generations(trail)
    if trail_gens is not None and (
        trail_pos is None or np.shape(trail_gens) != np.shape(trail_pos)[:2]
    ):
        trail_gens = None
    trail_gens = None if trail_gens is None else np.asarray(trail_gens)
    trail_art = None
    if trail_pos is not None:
        trail_art = LineCollection(
            [], colors=colors, linewidths=1.2, alpha=0.7, zorder=1.5, animated=True
        )
        ax.add_collection(trail_art)
    ray_art = None
    if rays and slots is not None and look_ahead is not None and dangers is not None:
        dirs = _directions(slots)
        ray_art = LineCollection([], cmap=_danger_cmap(), linewidths=1.0, zorder=3, animated=True)
        ray_art.set_clim(0.0, 1.0)
        ax.add_collection(ray_art)

    def body_collection(r: np.ndarray) -> EllipseCollection:
        """The agents' bodies at radii ``r`` (matplotlib < 3.9 cannot resize them)."""
        art = EllipseCollection(
            2 * r,
            2 * r,
            np.zeros(n),
            units="xy",
            offsets=np.zeros((n, 2)),
            offset_transform=ax.transData,
            facecolors=colors,
            edgecolors="black",
            linewidths=1.0,
            zorder=4,
            animated=True,
        )
        ax.add_collection(art)
        return art

    bodies = body_collection(radii[0])
    bodies_radii = radii[0]
    ticks = LineCollection([], colors="black", linewidths=1.6, zorder=5, animated=True)
    ax.add_collection(ticks)

    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    times, steps = rec.times, rec.steps
    if times is None and steps is not None and dt is not None:
        times = np.asarray(steps, dtype=np.float64) * float(dt)
    label = title if title is not None else ""

    def render(f: int) -> np.ndarray:
        canvas.restore_region(background)
        alive = np.isfinite(positions[f]).all(axis=1)
        pos = positions[f]
        if trail_art is not None and trail_pos is not None:  # set together
            upto = int(round(f / max(t_count - 1, 1) * (len(trail_pos) - 1))) + 1
            first = 0 if trail_samples is None else max(0, upto - int(trail_samples))
            trail_art.set_segments(
                [
                    _break_at_new_agents(
                        trail_pos[first:upto, i],
                        None if trail_gens is None else trail_gens[first:upto, i],
                    )
                    for i in range(n)
                ]
            )
            ax.draw_artist(trail_art)
        head = np.zeros(n) if headings is None else headings[f]
        if ray_art is not None and dangers is not None and alive.any():  # set together
            idx = np.flatnonzero(alive)
            p = pos[idx]
            # A 0-d look_ahead: float() takes it (the stubs cannot tell it from an array).
            la = (
                np.full(len(idx), float(look_ahead))  # type: ignore[arg-type]
                if np.ndim(look_ahead) == 0
                else _floats(look_ahead, "look_ahead")[idx]
            )
            # From the pose the frame's maps were perceived from (before the move).
            p, see_head = _seen_pose(rec, f, idx, p, head[idx])
            turn = see_head if rotate else None
            u = _rotated(dirs, turn, len(idx))
            length = np.broadcast_to(la[:, None], u.shape[:2])  # each slot's reach
            if rec.sensed is not None:  # stopped where the agent's own ray stopped
                hit = np.asarray(rec.sensed[f], dtype=np.float64)[idx]
                length = np.where(np.isnan(hit), 0.0, np.minimum(hit, length))  # NaN: not cast
            value = np.asarray(dangers[f], dtype=np.float64)[idx]
            start = np.broadcast_to(p[:, None, :], u.shape)
            seg = np.stack([start, p[:, None, :] + u * length[..., None]], axis=2)
            ray_art.set_segments(_segments(seg.reshape(-1, 2, 2)))
            ray_art.set_array(np.clip(value, 0.0, 1.0).reshape(-1))
            ax.draw_artist(ray_art)
        nonlocal bodies, bodies_radii
        if not np.array_equal(radii[f], bodies_radii, equal_nan=True):  # a slot changed hands
            bodies.remove()
            bodies, bodies_radii = body_collection(radii[f]), radii[f]
        shown = np.where(alive[:, None], pos, np.nan)
        bodies.set_offsets(np.nan_to_num(shown, nan=1e12))
        ax.draw_artist(bodies)
        if headings is not None:
            tip = pos + radii[f][:, None] * np.stack([np.cos(head), np.sin(head)], axis=1)
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
