"""A whole scene in one call (:func:`scene`): walls, paths, agents, slot rays, context-map
glyphs and trajectories, from a :class:`~contextsteer.Simulation` or from keywords."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..agents import Agents
from ..path import Path
from ..simulation import Simulation
from ..world import ALL_LAYERS, _layers
from ._draw import (
    _PATH_COLOR,
    _WALL_COLOR,
    SimView,
    _agent_colors,
    _agent_index,
    _directions,
    _floats,
    _margin,
    _per_agent,
    _perceived_pose,
    _rows,
    tidy,
)
from .maps import _plot_glyphs
from .parts import (
    _agent_arrays,
    _plot_agents,
    _plot_path,
    _plot_rays,
    _plot_trajectories,
    _plot_world,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..history import History, Recording
    from ..maps import SlotSet
    from ..world import World

__all__ = ["SceneArtists", "scene"]


class SceneArtists(NamedTuple):
    """Artists drawn by :func:`scene`; a part that was not drawn is None."""

    world: Any  #: WorldArtists
    paths: list  #: Line2D a path
    agents: Any  #: AgentArtists
    rays: Any  #: LineCollection
    maps: Any  #: MapGlyphs
    trajectories: Any  #: LineCollection
    ax: Any  #: the Axes


@tidy
def scene(
    sim: Simulation | None = None,
    *,
    world: World | ArrayLike | None = None,
    path: Any = None,
    agents: Agents | ArrayLike | None = None,
    rays: bool = True,
    maps: bool | Sequence[int] = False,
    ax: Axes | None = None,
    slots: SlotSet | ArrayLike | int | None = None,
    look_ahead: ArrayLike | None = None,
    rotate: bool | None = None,
    interest: ArrayLike | None = None,
    danger: ArrayLike | None = None,
    chosen: ArrayLike | None = None,
    distances: ArrayLike | None = None,
    map_scale: ArrayLike | None = None,
    trajectories: History | Recording | ArrayLike | None = None,
    margin: float = 0.05,
    layers: int | None = None,
) -> SceneArtists:
    """Draw a scene: walls, paths, agents as oriented circles, slot rays, context maps.

    Everything comes from ``sim`` when given (its ``world``, ``agents``, the paths of
    its ``FollowPath`` behaviours, its K slots, ``interest``/``danger``/
    ``chosen_direction``, see :class:`~contextsteer.plot._draw.SimView`); any keyword
    given explicitly replaces the simulation's part, and without ``sim`` the keywords
    alone describe the scene. Nothing is stepped, perceived or cast: the picture shows
    the state the simulation holds. Its maps and sensed rays belong to the pose each
    agent perceived them from (:attr:`Simulation.perceived_position` and
    ``perceived_heading``: before the last step's move, which can turn an agent by a
    slot or more), so rays and glyphs are drawn from there, the bodies where the agents
    are now.

    Rays run from each alive agent along its slots (turned with its heading when
    ``rotate``), coloured by the danger the agent holds in that slot (a simulation's
    ``danger``: the maps of its last perceive, what the agent saw). They reach
    ``look_ahead`` (default: the look-ahead of the simulation's ``WallDanger``; no rays
    without one) and stop at ``distances``: by default, with a simulation, the hits its
    ``WallDanger`` sensed at the last perception (:attr:`Simulation.sensed`), so the rays
    stop where the agent's own rays stopped; or hit distances computed by the caller,
    e.g. :func:`contextsteer.slot_raycast`. Glyphs show ``interest`` as given
    (a simulation's combined interest, before resolve).

    With ``maps``, each selected agent gets a star-shaped glyph of its context maps in
    data coordinates (see :func:`map_glyphs`): interest green, danger red, the chosen
    direction black. ``maps=True`` selects the first 16 alive agents; pass a list of
    agent indices to choose. Glyphs rather than inset polar axes: they scale with the
    scene, stay on their agent in animations and cost one collection for any count.

    Parameters
    ----------
    sim : Simulation, optional
    world : World or array_like of shape (M, 4), optional
    path : Path, array_like of shape (P, 2), or a list of them, optional
    agents : Agents or array_like of shape (N, 2), optional
    rays : bool
    maps : bool, sequence of int or boolean mask of shape (N,)
    ax : matplotlib Axes, optional
        Where to draw; a new axes when None. The aspect is set equal, and the limits take
        in the world's bounds and the agents.
    slots : SlotSet, array_like of shape (K, 2), or int K, optional
    look_ahead : float or array_like of shape (N,), optional
    rotate : bool, optional
        Slots turn with each agent's heading (default: the simulation's setting, else False).
    interest, danger : array_like of shape (capacity, K), optional
        Maps, one row per agent index (rows of dead agents are skipped).
    chosen : array_like of shape (capacity, 2), optional
        World-frame directions (as :attr:`Simulation.chosen_direction`), not turned with
        the slots.
    distances : array_like of shape (capacity, K), optional
        Where each ray stops (+inf: at the look-ahead), one row per agent index.
    map_scale : float, optional
        Glyph length of a value of 1 (default three agent radii).
    trajectories : History, Recording or array_like of shape (T, N, 2), optional
        Drawn under the agents (see :func:`trajectories`).
    margin : float
        Fraction of the world's size added around its bounds.
    layers : int, optional
        Layer mask of the obstacles drawn (see :func:`world`): default the simulation's
        ``layers``, else all. A door opened with ``World.set_layers(ids, 0)`` is not drawn.

    Returns
    -------
    SceneArtists

    Raises
    ------
    TypeError
        ``sim`` is not a :class:`~contextsteer.Simulation`.

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt, contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    >>> a = cs.Agents(2); _ = a.add([[0, 0], [2, 0]], heading=[0, 1])
    >>> hits = cs.slot_raycast(w, a.position, cs.SlotSet(8), 4.0)
    >>> art = cs.plot.scene(world=w, agents=a, slots=8, look_ahead=4.0, distances=hits)
    >>> len(art.rays.get_segments())     # 2 agents x 8 slots
    16
    >>> round(float(np.ptp(art.rays.get_segments()[8], axis=0)[0]), 2)   # agent 1, +x: wall at 5
    3.0
    >>> plt.close("all")
    """
    margin = _margin("scene", margin)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    ax.set_aspect("equal")
    perceived = None
    drawn_layers = ALL_LAYERS if layers is None else _layers(layers)
    if sim is not None:
        view = SimView.of(sim)
        if layers is None:
            drawn_layers = view.layers
        if agents is None or agents is view.agents:
            agents = view.agents
            perceived = _perceived_pose(sim)
        world, path, slots, look_ahead, rotate = view.or_given(
            world, path, slots, look_ahead, rotate
        )
        interest = sim.interest if interest is None else interest
        danger = sim.danger if danger is None else danger
        chosen = sim.chosen_direction if chosen is None else chosen
        distances = sim.sensed if distances is None else distances
    # Switches: a bool or 0/1 ("no" and 2.5 drew the rays; fuzz round 24).
    rays = _checks.flag("scene: rays", rays)
    rotate = False if rotate is None else _checks.flag("scene: rotate", rotate)

    world_art = traj_art = agent_art = ray_art = glyphs = None
    path_arts: list = []
    if world is not None:
        world_art = _plot_world(world, ax, _WALL_COLOR, "0.65", {}, drawn_layers)
    if path is not None:
        # A list of paths (Path objects or (P, 2) arrays), or one path (a list of points).
        many = isinstance(path, (list, tuple)) and all(
            isinstance(p, Path) or np.ndim(p) == 2 for p in path
        )
        for p in path if many else [path]:
            path_arts.append(_plot_path(p, ax, None, _PATH_COLOR, {}))
    if trajectories is not None:
        traj_art = _plot_trajectories(trajectories, ax, None, None, {})

    if agents is not None:
        pos, head, rad, index = _agent_arrays(agents, None, None)
        n_all = len(agents.alive) if isinstance(agents, Agents) else len(pos)
        agent_art = _plot_agents(pos, head, rad, ax, _agent_colors(index), "black", {})
        # Rays and glyphs from the pose the maps were perceived from.
        see_pos, see_head = pos, head
        if perceived is not None:
            see_pos, see_head = perceived[0][index], perceived[1][index]
        turn = see_head if (rotate and see_head is not None) else None
        k = (len(_directions(slots)),) if slots is not None else ()
        if rays and slots is not None and look_ahead is not None and len(pos):
            la = (
                _per_agent(look_ahead, len(index), "look_ahead")
                if np.ndim(look_ahead) == 0
                else _rows(_floats(look_ahead, "look_ahead"), index, n_all, "look_ahead")
            )
            ray_art = _plot_rays(
                see_pos,
                slots,
                _rows(distances, index, n_all, "distances", k),
                la,
                _rows(danger, index, n_all, "danger", k),
                ax,
                turn,
                None,
                None,
                {},
            )
        if maps is not False and maps is not None and interest is not None and slots is not None:
            if maps is True:
                chosen_rows = index[:16]
            else:
                chosen_rows = _agent_index(maps, n_all, "maps")
            sel = np.flatnonzero(np.isin(index, chosen_rows))
            rows = index[sel]
            scale = 3.0 * rad[sel] if map_scale is None else map_scale
            glyphs = _plot_glyphs(
                see_pos[sel],
                slots,
                _rows(interest, rows, n_all, "interest", k),
                _rows(danger, rows, n_all, "danger", k),
                _rows(chosen, rows, n_all, "chosen", (2,)),
                None if turn is None else turn[sel],
                scale,
                rad[sel],
                ax,
                {},
            )

    bounds = _bounds(world)
    if bounds is not None and agent_art is not None and len(pos):
        # The agents too: the README's scene of a box beside an agent cut the agent off.
        reach = np.asarray(rad, dtype=np.float64)[:, None]
        lo, hi = (pos - reach).min(axis=0), (pos + reach).max(axis=0)
        bounds = (
            min(bounds[0], lo[0]),
            min(bounds[1], lo[1]),
            max(bounds[2], hi[0]),
            max(bounds[3], hi[1]),
        )
    if bounds is not None:
        x0, y0, x1, y1 = bounds
        pad = margin * max(x1 - x0, y1 - y0)
        ax.set_xlim(x0 - pad, x1 + pad)
        ax.set_ylim(y0 - pad, y1 + pad)
    else:
        ax.autoscale_view()
    return SceneArtists(world_art, path_arts, agent_art, ray_art, glyphs, traj_art, ax)


def _bounds(world):
    """``(x0, y0, x1, y1)`` of a World, None for wall arrays or no world."""
    from ..world import World

    return world.bounds if isinstance(world, World) else None
