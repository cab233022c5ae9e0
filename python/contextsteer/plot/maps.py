"""Context maps: one agent's maps as a polar plot (:func:`context_map`), a grid of them
(:func:`context_maps`), and maps drawn as star glyphs in the scene (:func:`map_glyphs`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..simulation import Simulation
from ._draw import (
    _DANGER_COLOR,
    _INTEREST_COLOR,
    SimView,
    _agent_index,
    _directions,
    _floats,
    _per_agent,
    _perceived_pose,
    _plain_axes,
    _points,
    _rotated,
    _segments,
    _slot_angles,
    tidy,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

    from ..maps import SlotSet

__all__ = [
    "ContextMapArtists",
    "ContextMapsGrid",
    "MapGlyphs",
    "context_map",
    "context_maps",
    "map_glyphs",
]


class ContextMapArtists(NamedTuple):
    """Artists drawn by :func:`context_map`."""

    interest: Any  #: BarContainer, one bar a slot
    danger: Any  #: Line2D of the closed danger curve, or None
    masked: Any  #: Line2D of markers on masked slots, or None
    chosen: Any  #: FancyArrow / Annotation of the chosen direction, or None
    speed: Any = None  #: Line2D of the speed map (CollisionDanger), or None


@tidy
def context_map(
    interest: ArrayLike,
    danger: ArrayLike | None = None,
    *,
    chosen: ArrayLike | None = None,
    strength: float | None = None,
    threshold: float = 0.0,
    offset: float = 0.0,
    speed: ArrayLike | None = None,
    slot_directions: SlotSet | ArrayLike | None = None,
    ax: Axes | None = None,
    interest_color: str = "tab:green",
    danger_color: str = "tab:red",
    chosen_color: str = "black",
    speed_color: str = "tab:blue",
    **kwargs: Any,
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
        Interest of each slot: slot k along ``slot_directions[k]`` (default K slots evenly
        spaced, slot 0 along +x, counter-clockwise), turned by ``offset``.
    danger : array_like, shape (K,), optional
        Danger of each slot.
    chosen : array_like, shape (2,), optional
        Chosen direction (need not be unit length; its angle is drawn), in the frame the
        plot's angles are (the world frame when ``offset`` is the heading, as
        :attr:`Simulation.chosen_direction`); it is not turned by ``offset``. A direction
        from :func:`contextsteer.choose` on maps of turning slots is in the slot frame:
        turn it by the heading first.
    strength : float, optional
        Arrow length; defaults to the length of ``chosen`` clipped to [0, 1], or 1.
    threshold : float
        Danger above which a slot counts as masked (``inf``: none is).
    offset : float
        Angle in radians by which every slot is turned (an agent's heading when its slots
        turn with it).
    speed : array_like, shape (K,), optional
        Speed map of the agent (:attr:`Simulation.speed`, :class:`CollisionDanger`).
    slot_directions : SlotSet or array_like of shape (K, 2), optional
        The slots' directions, for a slot set that is not K evenly spaced directions from
        +x (an ``offset`` or irregular slots such as ``scenarios.crowd_slots()``). Each
        bar is 0.8 of the angle between the midpoints to its neighbours wide.
    ax : matplotlib polar Axes, optional
        Where to draw; a new polar axes is created when None.
    interest_color, danger_color, chosen_color, speed_color : color
        Colours of the interest bars, the danger curve and its masked marks, the chosen
        arrow and the speed curve.
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

    interest = _floats(interest, "interest")
    if interest.ndim != 1 or interest.shape[0] < 3:
        raise ValueError(f"interest: expected shape (K,) with K >= 3, got {interest.shape}")
    k = interest.shape[0]
    if danger is not None:
        danger = _floats(danger, "danger")
        if danger.shape != (k,):
            raise ValueError(f"danger: expected shape ({k},), got {danger.shape}")
    if not np.all(np.isfinite(interest)) or (
        danger is not None and not np.all(np.isfinite(danger))
    ):
        raise ValueError("interest and danger must be finite")
    if speed is not None:
        speed = _floats(speed, "speed")
        if speed.shape != (k,) or not np.all(np.isfinite(speed)):
            raise ValueError(f"speed: expected a finite array of shape ({k},), got {speed.shape}")
    from .. import _checks

    # Real numbers first (text or None met NumPy's ufuncs: "ufunc 'isfinite' not
    # supported", "unsupported operand NoneType + float").
    offset = _checks.real("offset", offset)
    threshold = _checks.real("threshold", threshold)
    if strength is not None:
        strength = _checks.real("strength", strength)
    for name, value in (("offset", offset), ("strength", strength)):
        if value is not None and not np.isfinite(value):
            raise ValueError(f"{name}: must be finite, got {value}")
    if strength is not None and strength < 0:
        raise ValueError(f"strength: must be >= 0, got {strength}")
    if np.isnan(threshold):
        raise ValueError("threshold: must be a number (inf: no slot is masked), got nan")
    if slot_directions is None:
        theta = _slot_angles(k, offset)
        width: float | np.ndarray = 2.0 * np.pi / k * 0.8
    else:
        dirs = _directions(slot_directions)
        if len(dirs) != k:
            raise ValueError(f"slot_directions: expected {k} directions, got {len(dirs)}")
        theta = offset + np.arctan2(dirs[:, 1], dirs[:, 0])
        width = 0.8 * _slot_widths(theta)
    ring = np.argsort(np.mod(theta, 2.0 * np.pi), kind="stable")
    if ax is None:
        _, ax = plt.subplots(subplot_kw={"projection": "polar"})
    elif getattr(ax, "name", None) != "polar":
        raise ValueError(
            f"ax: expected polar axes (subplot_kw={{'projection': 'polar'}}), got "
            f"{getattr(ax, 'name', type(ax).__name__)!r} axes"
        )
    bars = ax.bar(
        theta,
        np.clip(interest, 0, None),
        width=width,
        color=interest_color,
        alpha=0.7,
        label="interest",
        **kwargs,
    )
    danger_line = masked = arrow = None
    rim = max(1.0, float(np.max(np.abs(interest))) if k else 1.0)
    if danger is not None:
        closed_t = np.append(theta[ring], theta[ring[0]])  # around the circle, in angle order
        closed_d = np.append(danger[ring], danger[ring[0]])
        (danger_line,) = ax.plot(closed_t, closed_d, color=danger_color, lw=1.5, label="danger")
        ax.fill(closed_t, closed_d, color=danger_color, alpha=0.15)
        rim = max(rim, float(np.max(danger)))
        hit = danger > threshold
        (masked,) = ax.plot(
            theta[hit],
            np.full(int(hit.sum()), rim * 1.05),
            "x",
            color=danger_color,
            ms=8,
            mew=2,
            label="masked",
        )
        for patch in np.asarray(bars.patches, dtype=object)[hit]:
            patch.set_hatch("//")
            patch.set_alpha(0.3)
    if chosen is not None:
        c = _floats(chosen, "chosen")
        if c.shape != (2,) or not np.all(np.isfinite(c)):
            raise ValueError(f"chosen: expected a finite (2,) direction, got {chosen!r}")
        norm = float(np.hypot(*c))
        if norm > 0:
            length = float(np.clip(norm, 0, 1)) if strength is None else float(strength)
            angle = float(np.arctan2(c[1], c[0]))
            arrow = ax.annotate(
                "",
                xy=(angle, length * rim),
                xytext=(0.0, 0.0),
                arrowprops={"arrowstyle": "->", "color": chosen_color, "lw": 2},
            )
    speed_line = None
    if speed is not None:
        (speed_line,) = ax.plot(
            np.append(theta[ring], theta[ring[0]]),
            np.append(speed[ring], speed[ring[0]]) * rim,
            "--",
            color=speed_color,
            lw=1.5,
            label="safe speed",
        )
    ax.set_ylim(0, rim * 1.12)
    ax.set_yticklabels([])
    return ContextMapArtists(bars, danger_line, masked, arrow, speed_line)


def _slot_widths(theta: np.ndarray) -> np.ndarray:
    """The angle each slot covers: from the midpoint to its previous neighbour (by angle)
    to the midpoint to its next; 2π/K each for K evenly spaced slots."""
    order = np.argsort(np.mod(theta, 2.0 * np.pi), kind="stable")
    a = np.mod(theta[order], 2.0 * np.pi)
    gap_next = np.diff(np.append(a, a[0] + 2.0 * np.pi))
    covered = np.empty_like(theta)
    covered[order] = 0.5 * (gap_next + np.roll(gap_next, 1))
    return covered


class MapGlyphs(NamedTuple):
    """Artists drawn by :func:`map_glyphs`."""

    interest: Any  #: PolyCollection, one star polygon a agent
    danger: Any  #: PolyCollection of danger outlines, or None
    chosen: Any  #: LineCollection of chosen directions, or None


def _glyph_rows(maps: ArrayLike, n: int, k: int, what: str) -> np.ndarray:
    """(n, k) finite float64 map rows; one agent's row may be given flat, (k,)."""
    if not n:
        return np.zeros((0, k))
    v = _floats(maps, what)
    if v.shape == (k,) and n == 1:
        v = v[None, :]
    if v.shape != (n, k):
        raise ValueError(f"{what}: expected shape ({n}, {k}), got {np.shape(maps)}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what}: must be finite")
    return v


def _plot_glyphs(
    positions: ArrayLike,
    slot_directions: SlotSet | ArrayLike | int,
    interest: ArrayLike,
    danger: ArrayLike | None,
    chosen: ArrayLike | None,
    headings: ArrayLike | None,
    scale: ArrayLike,
    base: ArrayLike,
    ax: Axes,
    kwargs: dict[str, Any],
) -> MapGlyphs:
    from matplotlib.collections import LineCollection, PolyCollection

    pos = _points(positions, "positions")
    n = len(pos)
    dirs = _directions(slot_directions)
    k = len(dirs)
    values = _glyph_rows(interest, n, k, "interest")
    sc = _per_agent(scale, n, "scale", 1.0)
    b = _per_agent(base, n, "base", 0.0)
    for v, name in ((sc, "scale"), (b, "base")):
        if (v < 0).any():  # (a star pointing away from the interest, without a word)
            raise ValueError(f"{name}: must be >= 0, got {float(v[v < 0][0])}")
    u = _rotated(dirs, _per_agent(headings, n, "headings"), n)

    def star(v: np.ndarray) -> np.ndarray:
        r = b[:, None] + sc[:, None] * np.clip(v, 0.0, None)
        return pos[:, None, :] + u * r[..., None]

    kwargs = {
        "facecolors": _INTEREST_COLOR,
        "edgecolors": _INTEREST_COLOR,
        "alpha": 0.35,
        "linewidths": 1.0,
        # Under the bodies (zorder 4): drawn over them, the translucent green tinted each
        # agent's colour (blue read teal), the colour its trajectory is matched by. The
        # star starts at the body's edge, so what it shows is outside the body.
        "zorder": 3.9,
        **kwargs,
    }
    inter = PolyCollection(list(star(values)), closed=True, label="interest", **kwargs)
    ax.add_collection(inter)
    dang = arrows = None
    if danger is not None:
        d = _glyph_rows(danger, n, k, "danger")
        dang = PolyCollection(
            list(star(d)),
            closed=True,
            facecolors="none",
            edgecolors=_DANGER_COLOR,
            linewidths=1.0,
            zorder=6,
            label="danger",
        )
        ax.add_collection(dang)
    if chosen is not None:
        c = _points(chosen, "chosen") if n else np.zeros((0, 2))
        if c.shape != (n, 2):
            raise ValueError(f"chosen: expected shape ({n}, 2), got {np.shape(chosen)}")
        tip = pos + c * (b + sc)[:, None]
        arrows = LineCollection(
            _segments(np.stack([pos, tip], axis=1)),
            colors="black",
            linewidths=1.5,
            zorder=7,
            label="chosen",
        )
        ax.add_collection(arrows)
    ax.autoscale_view()
    return MapGlyphs(inter, dang, arrows)


@tidy
def map_glyphs(
    positions: ArrayLike,
    slot_directions: SlotSet | ArrayLike | int,
    interest: ArrayLike,
    danger: ArrayLike | None = None,
    *,
    chosen: ArrayLike | None = None,
    headings: ArrayLike | None = None,
    scale: ArrayLike = 1.0,
    base: ArrayLike = 0.0,
    ax: Axes | None = None,
    **kwargs: Any,
) -> MapGlyphs:
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
        World-frame directions (as :attr:`Simulation.chosen_direction`), not turned by
        ``headings``.
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
    return _plot_glyphs(
        positions,
        slot_directions,
        interest,
        danger,
        chosen,
        headings,
        scale,
        base,
        _plain_axes(ax),
        kwargs,
    )


class ContextMapsGrid(NamedTuple):
    """Result of :func:`context_maps`."""

    figure: Any  #: the Figure
    axes: list  #: one polar Axes a drawn agent
    maps: list  #: one ContextMapArtists a drawn agent
    agents: list  #: the agent indices drawn, in order


@tidy
def context_maps(
    interest: ArrayLike | Simulation,
    danger: ArrayLike | None = None,
    chosen: ArrayLike | None = None,
    agents: Sequence[int] | None = None,
    *,
    strength: ArrayLike | None = None,
    headings: ArrayLike | None = None,
    threshold: float | None = None,
    speed: ArrayLike | None = None,
    slot_directions: SlotSet | ArrayLike | None = None,
    ncols: int = 4,
    axes: Sequence[Axes] | None = None,
    titles: Sequence[str] | None = None,
    size: float = 2.4,
    **kwargs: Any,
) -> ContextMapsGrid:
    """Small multiples: one polar :func:`context_map` per selected agent.

    Parameters
    ----------
    interest : array_like of shape (N, K), or Simulation
        A :class:`~contextsteer.Simulation` gives ``interest``, ``danger``, ``chosen_direction``, ``strength``,
        its slot directions, the headings when its slots turn with the agents, and the masking threshold
        when its steering resolves with ``mask`` (with other resolve modes no slot is
        marked as masked).
    danger : array_like of shape (N, K), optional
    chosen : array_like of shape (N, 2), optional
        World-frame directions (as :attr:`Simulation.chosen_direction`), not turned by
        ``headings``.
    agents : sequence of int or boolean mask of shape (N,), optional
        Rows to draw; default the first 8 (alive) agents.
    strength : array_like of shape (N,), optional
        Arrow lengths.
    headings : array_like of shape (N,), optional
        Rotation of each agent's slot 0 (slots that turn with the agent). From a
        simulation: the headings the maps were perceived with
        (:attr:`Simulation.perceived_heading`).
    threshold : float, optional
        Danger above which a slot is marked as masked (default 0, or from the simulation).
    speed : array_like of shape (N, K), optional
        Speed maps (default: the simulation's, when it has one).
    slot_directions : SlotSet or array_like of shape (K, 2), optional
        The slots' directions (default: the simulation's slot set, or K evenly spaced
        from +x); see :func:`context_map`.
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
    if isinstance(interest, Simulation):
        sim, view = interest, SimView.of(interest)
        danger = sim.danger if danger is None else danger
        chosen = sim.chosen_direction if chosen is None else chosen
        strength = sim.strength if strength is None else strength
        speed = sim.speed if speed is None else speed
        if headings is None and view.rotate:
            # The slot frame of the maps: the heading they were perceived with (the
            # step's move turns the agent after it).
            headings = _perceived_pose(sim)[1]
        alive_rows = np.flatnonzero(np.asarray(sim.agents.alive))
        threshold = view.threshold if threshold is None else threshold
        slot_directions = view.slots if slot_directions is None else slot_directions
        interest = sim.interest
    threshold = 0.0 if threshold is None else threshold
    interest = _floats(interest, "interest")
    if interest.ndim != 2:
        raise ValueError(f"interest: expected shape (N, K), got {interest.shape}")
    n = interest.shape[0]
    if agents is None:
        pool = np.arange(n) if alive_rows is None else alive_rows
        agents = [int(i) for i in pool[:8]]
    else:
        agents = [int(i) for i in _agent_index(agents, n, "agents")]
    if not agents:
        raise ValueError("agents: expected at least one agent index")

    def per_row(x: Any, what: str) -> np.ndarray | None:
        # One row per interest row (a bare IndexError came from the loop below).
        if x is None:
            return None
        a = np.asarray(x)
        if a.ndim == 0 or a.shape[0] != n:
            raise ValueError(
                f"{what}: expected {n} rows, one per interest row, got shape {a.shape}"
            )
        return a

    danger, chosen, strength = (
        per_row(danger, "danger"),
        per_row(chosen, "chosen"),
        per_row(strength, "strength"),
    )
    headings, speed = per_row(headings, "headings"), per_row(speed, "speed")
    if titles is not None and len(titles) < len(agents):
        raise ValueError(f"titles: expected at least {len(agents)} titles, got {len(titles)}")
    fig: Figure | SubFigure  # given axes may sit in a subfigure
    if axes is None:
        cols = max(1, min(_checks.integer("ncols", ncols, 1, 2**31 - 1), len(agents)))
        nrows = -(-len(agents) // cols)
        fig, grid = plt.subplots(
            nrows,
            cols,
            subplot_kw={"projection": "polar"},
            squeeze=False,
            figsize=(size * cols, size * nrows),
            constrained_layout=True,
        )
        flat = list(grid.ravel())
        for extra in flat[len(agents) :]:
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
            slot_directions=None if isinstance(slot_directions, int) else slot_directions,
            ax=ax,
            **kwargs,
        )
        ax.set_title(f"agent {i}" if titles is None else titles[j], fontsize=9)
        drawn.append(art)
    return ContextMapsGrid(fig, axes, drawn, agents)
