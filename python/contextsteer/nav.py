"""Navigation: global guidance for local steering.

Context steering sees only what its rays see, so an agent whose goal lies behind a wall
slides along it or stops. A :class:`NavField` knows the way: the geodesic distance to the
nearest goal over a grid of the world, with the obstacles inflated by the agents' radius,
computed in C++ by fast marching. :class:`~contextsteer.FollowField` turns its descent
into interest; :func:`route` gives per-agent shortest paths (visibility graph) that
:class:`~contextsteer.FollowPath` can follow, one path per agent.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

import numpy as np
from numpy.typing import ArrayLike

from . import _checks, _core
from .maps import _f32, _given_shape
from .world import _core_world, _layers, _private, _world

if TYPE_CHECKING:
    from .path import Path
    from .world import World

__all__ = ["NavField", "NavQuery", "route"]

ALL_LAYERS = 0xFFFFFFFF
#: Most grid nodes a field gets when its cell is chosen automatically.
AUTO_MAX_NODES = 4_000_000

#: The coordinate range every position and length must lie in (the World's, README
#: "Reliability").
_MAX_COORD = _checks.MAX_COORDINATE


def _coords(x: ArrayLike, what: str) -> np.ndarray:
    """``x`` as float32 (see ``maps._f32``) with every value finite and within ±1e8, else a
    ValueError naming ``what``, the value and its index. For the goals only: the automatic
    cell reads them before the core (which checks every other position itself) sees them."""
    a = _f32(x, what)
    bad = ~(np.abs(a) <= _MAX_COORD)
    if np.any(bad):
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{what}: expected finite values within ±1e+08, got {a[at].item()!r} at index {at}"
        )
    return a


def _length(value: Any, what: str, *, zero: bool = True) -> float:
    """A length: a finite number in [0, 1e8] (in (0, 1e8] without ``zero``)."""
    if isinstance(value, bool) or not _checks.is_real(value):
        raise TypeError(f"{what} must be a number, got {value!r}")
    v = float(value)
    if not (0 <= v <= _MAX_COORD and (zero or v > 0)):
        where = "in [0, 1e8]" if zero else "> 0 and at most 1e8"
        raise ValueError(f"{what} must be a finite number {where}, got {value!r}")
    return v


class NavQuery(NamedTuple):
    """Field queries at N points: ``distance`` (N,) float32 (inf where no goal can be
    reached) and unit ``direction`` (N, 2) float32 ((0, 0) on a goal, inside a polygon
    goal, or where no goal can be reached)."""

    distance: np.ndarray
    direction: np.ndarray


def _goal_set(goal: Any, k: int) -> dict:
    """One goal set as the dict the core reads: points (P,2), segments (S,4), polygons.
    The arrays are copies, as the field is built from the goals as they are now."""
    out = _goal_arrays(goal, k)
    return {key: [a.copy() for a in v] if key == "polygons" else v.copy() for key, v in out.items()}


def _goal_arrays(goal: Any, k: int) -> dict:
    if isinstance(goal, dict):
        unknown = set(goal) - {"points", "segments", "polygons"}
        if unknown:
            raise ValueError(
                f"goals[{k}]: unknown keys {sorted(unknown)}; expected 'points', "
                "'segments', 'polygons'"
            )
        out: dict = {}
        if goal.get("points") is not None:
            p = _coords(goal["points"], "goal points")
            out["points"] = p.reshape(1, 2) if p.shape == (2,) else p
        if goal.get("segments") is not None:
            s = _coords(goal["segments"], "goal segments")
            out["segments"] = s.reshape(1, 4) if s.shape == (4,) else s
        if goal.get("polygons") is not None:
            polys = goal["polygons"]
            if isinstance(polys, np.ndarray) and polys.ndim == 2:
                polys = [polys]
            out["polygons"] = [_coords(r, "goal polygons") for r in polys]
        return out
    a = _coords(goal, "goal")
    if a.shape == (2,):
        return {"points": a.reshape(1, 2)}
    if a.ndim == 2 and a.shape[1] == 2:
        return {"points": a}
    if a.ndim == 2 and a.shape[1] == 4:
        return {"segments": a}
    # Nested Python lists are one goal set (a list of several holds NumPy arrays or
    # dicts): say so when they read as a stack of sets.
    several = (
        " (several goal sets: a list of NumPy arrays or dicts, one a set)" if a.ndim == 3 else ""
    )
    raise ValueError(
        f"goals[{k}]: expected a point (2,), points (P, 2), segments (S, 4) or a dict "
        f"with 'points', 'segments', 'polygons'; got shape {a.shape}{several}"
    )


def _goal_sets(goals: Any) -> list[dict]:
    if (
        isinstance(goals, (list, tuple))
        and goals
        and all(isinstance(g, (dict, np.ndarray)) for g in goals)
    ):
        return [_goal_set(g, k) for k, g in enumerate(goals)]
    if isinstance(goals, (list, tuple)) and any(isinstance(g, dict) for g in goals):
        raise TypeError(
            "goals: a list of goal sets holds only dicts and NumPy arrays (one a set), got "
            f"{', '.join(type(g).__name__ for g in goals)}"
        )
    try:
        return [_goal_set(goals, 0)]
    except ValueError as e:
        if not isinstance(goals, (list, tuple)) or "expected an array" not in str(e):
            raise
        raise ValueError(
            f"{e}; several goal sets are a list of dicts or NumPy arrays, one a set"
        ) from None


def _key(sets: list[dict]) -> tuple:
    parts = []
    for s in sets:
        parts.append(
            tuple(
                (
                    name,
                    tuple(
                        np.asarray(v).tobytes()
                        for v in (s[name] if name == "polygons" else [s[name]])
                    ),
                )
                for name in sorted(s)
            )
        )
    return tuple(parts)


class NavField:
    """Geodesic distance to the nearest goal over a grid of the world, and its descent.

    One field per goal set: pass a list of goal sets for several groups (agents pick
    theirs by group id or an index array, see :class:`~contextsteer.FollowField`).

    Parameters
    ----------
    world : World
    goals : goal set or list of goal sets
        A goal set is a point (2,), points (P, 2), segments (S, 4) — exit lines — or a
        dict with any of ``"points"``, ``"segments"`` and ``"polygons"`` (a list of
        (V, 2) rings whose interiors are goal regions).
    cell : float, optional
        Grid spacing in world units; default ``radius / 2`` (or, when ``radius`` is 0,
        1/256 of the grid's extent: the world's bounds and the goals, grown by ``margin``
        on every side), grown if the grid would exceed 4 M nodes (with a
        ``UserWarning``: a coarser cell can close narrow passages).
    radius : float, default 0.3
        Agent radius: obstacles are inflated by ``max(radius, cell / 2)``. A passage is
        open to the field only where free nodes lie across it: one whose width leaves
        less than about a cell to spare (narrower than ``2·radius + cell``; slanted ones
        up to ``2·radius + 1.4·cell``) can read closed (+inf, or a longer way round),
        depending on how it lies against the grid, where :func:`route` finds the way. At
        the default cell, a 1 m corridor is open to agents of radius 0.45 at some offsets
        and closed at others. For doors and corridors with little to spare, give ``cell``
        at most half the spare width, ``(width - 2·radius) / 2``.
    layers : int, optional
        Obstacles of these layers count.
    margin : float, default 1.0
        The grid covers the world's bounds (and every goal) grown by this much, and at
        least by the blocking radius and a cell, so that its edge nodes are free.
    share : bool, default True
        Share the field with any other built over this world with the same goals and
        parameters (the world's cache: built once, and :meth:`set_goals` on one retargets
        every field sharing it). ``False`` builds a field of its own, for groups that
        start at one goal and are retargeted apart.

    Raises
    ------
    ValueError
        An empty goal set; a grid of more than 2**24 nodes (use a larger cell).
    MemoryError
        The fields would not fit in the memory this process may use: each node takes about
        17 + 12 G bytes with G goal sets (and each wall about 84 bytes a cell it
        crosses). Checked before allocating, at construction and at every rebuild.

    Notes
    -----
    Built in C++ by fast marching (the Eikonal equation ``|∇T| = 1``, second-order upwind
    stencil, exact distances kept within three cells of a goal). Measured on an open field from
    a point goal (500 × 500 nodes): absolute node error within [-0.22, +0.07] cell
    everywhere (the low end with the goal between nodes), mean relative error 0.06 %,
    under 0.2 % beyond 100 cells. Within a cell of the nearest point or segment goal, when
    it is in sight by the field's own account (the field's distance within a cell of the
    straight one; a wall between them sends the field round, and the reading fades out by
    two cells; beside the tip of a thin wall that the grid does not resolve, the field's
    own way round is short too, and the reading can go straight through: a goal 0.06 m
    past a wall 0.2 m from its tip reads 0.12 m from 0.06 m on the other side at cell
    0.15, where the way round is 0.51 m, and an agent following it slides round the tip),
    a query reads its exact distance and direction (0 and (0, 0) on the
    goal itself, wherever it lies between the nodes), blended back into the field over
    the next cell. A goal in a room with no free node inside (a room no larger than a
    cell, its nodes on its walls or in their inflated band) cannot be represented: the
    room and the goal read +inf; give a finer ``cell``. The nearest goal is looked up in
    buckets of two cells, so that many point or segment goals cost a query no more than
    one (0.4 µs a query near 10,000 segment goals). Fields are cached with the world while anything uses them (a second
    field with the same goals and parameters shares the first; one no longer referenced
    is freed, so a field built every frame for a moving goal costs no memory beyond the
    fields in use) and rebuilt after the world is edited, on the next query or
    simulation step (or ``perceive`` / ``decide_and_move``). A rebuild makes a new field: a query or a step in
    another thread keeps reading the one it started with, so simulations in several
    threads may share a field.
    Queries interpolate node distances and node descents bilinearly, so directions are
    continuous and agents do not zig-zag on cell boundaries. Outside the grid (where
    there is no obstacle: it covers the world and the goals, grown by ``margin``) a
    query reads the shortest way in: the least, over the points b of the grid's sides
    facing it, of the straight way to b plus the field's distance there (linear between
    two nodes), and the direction towards that b. Where the goal cannot be
    reached a query reads +inf and no direction ((0, 0)). A goal inside an obstacle (no
    free node within three cells of it) is reached at the obstacle's sides nearest it:
    the free nodes about as near the goal as the nearest free node start from their
    straight-line distance to the goal, and the field leads round the obstacle to them
    (each goal of a set on its own; precisely, the free nodes at most three cells
    farther from the goal than the nearest one, on every side of the obstacle: a goal at
    the centre of a square is reached from all four). When that side lies outside the world (an obstacle
    against the outer wall, its nearest free nodes in the grid's margin beyond the wall),
    the goal cannot be reached from inside: put it on the obstacle's free side. A goal
    lying exactly on a thin wall (a point on a wall's line, an exit segment drawn along
    one) is reached from both sides of it. "On" it means within 4 float32 spacings of the
    goal's coordinates plus 1e-6 of the grid's cell (a goal meant on a slanted wall
    rounds up to half a spacing off its line): 0.25 mm at 1e3 m, but 0.125 m at 3e5 m,
    where a goal that near a thin wall is reached from both sides too
    (the README's precision note: keep a scene within about ±1e5). A query
    outside the grid scans the grid's facing sides (O(nx + ny): 14 µs on a 2,000 × 2,000
    grid, where one inside takes 0.3 µs); ``look_ahead`` does not pull it (the way in is
    already straight). Within the blocking radius of
    a wall (the band where no agent of ``radius`` fits) the nodes are blocked and carry
    the distance of their nearest reached node on their own side of the walls (found
    through grid edges that cross no wall; the edges of a solid holding a node lead out of
    it), plus the distance to it, so an agent pushed into the band is led out. A point in
    a grid cell that a wall passes through reads only the cell's corners on its side of
    the wall. So beside a thin wall the far side reads the way round the wall, never the
    goal side's distance through it, and every point of a room the walls seal reads
    ``inf`` up to the walls (before, 4.05 m to a goal 4 m behind a wall 0.05 m away, and
    a direction into the wall).

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> world = cs.World()
    >>> _ = world.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    >>> _ = world.add_segments([[0, -5, 0, 3]])                 # a wall with a gap at the top
    >>> field = cs.NavField(world, [4.0, -4.0], cell=0.1, radius=0.3)
    >>> q = field.query([[-3, -4]])
    >>> bool(q.distance[0] > 10.0)                              # round the wall, not through it
    True
    >>> print(np.round(q.direction[0], 1))                      # first up, towards the gap
    [0.3 0.9]
    """

    def __init__(
        self,
        world: World,
        goals: Any,
        *,
        cell: float | None = None,
        radius: float = 0.3,
        layers: int = ALL_LAYERS,
        margin: float = 1.0,
        share: bool = True,
    ) -> None:
        core_world = _core_world(world)
        if not isinstance(core_world, _core.World):
            raise TypeError(
                f"NavField: world must be a contextsteer.World, got {type(world).__name__}"
            )
        radius = _length(radius, "NavField: radius")
        margin = _length(margin, "NavField: margin")
        sets = _goal_sets(goals)
        if cell is None:
            cell = self._auto_cell(world, sets, radius, float(margin))
        cell = _length(cell, "NavField: cell", zero=False)
        if not np.float32(cell) > 0:  # the core's cell is a float32: 1e-46 would be zero
            raise ValueError(f"NavField: cell must be a positive float32, got {cell}")
        # The core's cell is a float32: 1e39 would be inf there, 1e-46 zero.
        if not (0 < cell <= float(np.finfo(np.float32).max) and np.float32(cell) > 0):
            raise ValueError(
                f"NavField: cell must be a finite number > 0 within float32's range, got {cell}"
            )
        self.world = world
        self.cell = cell
        self.radius = radius
        self.layers = _layers(layers)
        self.margin = float(margin)
        self._share = _checks.flag("NavField: share", share)
        cache = getattr(world, "_nav_cache", None) if self._share else None
        key = (_key(sets), cell, radius, self.layers, self.margin)
        hit = cache.get(key) if cache is not None else None
        if hit is not None and _key(list(hit.goal_sets)) != key[0]:
            # Its goals were set anew since it was cached under these (set_goals in two
            # threads at once can leave such an entry): not this field.
            hit = None
        if hit is not None:
            self._core = hit
            self._sync()
        else:
            self._core = _core.NavField(core_world, sets, cell, radius, self.layers, self.margin)
            if cache is not None:
                cache[key] = self._core

    def __reduce__(self):
        """Pickle (and ``copy.deepcopy``) support: the world and the parameters; the field
        is rebuilt (or found in the restored world's cache) on unpickling."""
        return (
            _restore_nav_field,
            (
                self.world,
                self.goals,
                self.cell,
                self.radius,
                self.layers,
                self.margin,
                self._share,
            ),
        )

    @staticmethod
    def _auto_cell(world: World, sets: list[dict[str, Any]], radius: float, margin: float) -> float:
        pts = [
            np.asarray(v, dtype=np.float64).reshape(-1, 2)
            for s in sets
            for name, vs in s.items()
            for v in (vs if name == "polygons" else [vs])
        ]
        b = world.bounds
        if b is not None:
            pts.append(np.array([[b[0], b[1]], [b[2], b[3]]]))
        allp = np.vstack(pts)
        if not len(allp):
            # Empty goals in a world without obstacles: NumPy's "zero-size array to
            # reduction operation maximum" escaped where a world with walls gave this.
            raise ValueError("goals[0]: expected at least one point, segment or polygon")
        span = allp.max(0) - allp.min(0)
        cell = radius / 2 if radius > 0 else max((span.max() + 2 * margin) / 256, 1e-6)

        def nodes(c: float) -> float:
            # The core's padding: the margin, at least the blocking radius and a cell, and a
            # cell more (so that the grid's edge nodes are free).
            pad = max(margin, max(radius, c / 2) + c) + c
            return float(np.prod(np.ceil((span + 2 * pad) / c) + 1))

        wanted = cell
        while nodes(cell) > AUTO_MAX_NODES:
            cell *= 1.25
        if radius > 0 and cell > wanted:
            # A coarser grid closes passages with less than a cell to spare, silently: a
            # 1.2 m door on a 2 km site read +inf (fuzz round 25).
            warnings.warn(
                f"NavField: the automatic cell grew from {wanted:.4g} to {cell:.4g} to keep "
                f"the grid of this {span[0]:.4g} × {span[1]:.4g} area (grown by margin "
                f"{margin:g}) under {AUTO_MAX_NODES:,} nodes; a passage narrower than about "
                f"2·max(radius, cell/2) + cell = {2 * max(radius, cell / 2) + cell:.4g} may "
                "read closed. Give cell= "
                "(memory grows as 1/cell²), a margin to suit the units, or fields over a "
                "smaller area",
                stacklevel=3,
            )
        return float(cell)

    def set_goals(self, goals: Any) -> None:
        """Point the field at new goals, in place: a moving target (a player the monsters
        chase), without a new :class:`~contextsteer.Simulation`.

        The fields are rebuilt now (as after a world edit; :attr:`build_seconds` says what
        that costs, so a game retargets when the goal has moved a cell or more, not every
        frame), and every simulation whose ``FollowField`` reads this field follows the
        new goals from its next step, its agents' last commands and time-slicing state
        kept (a new Simulation each frame started every agent from rest: 41 % of the
        distance with the crowd default's inertia). Queries and steps already running in
        other threads finish on the field they started with. A field built with the same
        goals and parameters shares this one (the world's cache) and is retargeted with it,
        unless one of them was built with ``share=False``.

        Parameters
        ----------
        goals
            As for the constructor, with as many goal sets as the field has
            (:attr:`count`).

        Raises
        ------
        ValueError
            Another number of goal sets, or goals the constructor refuses; the field is
            left as it was.

        Examples
        --------
        >>> import contextsteer as cs
        >>> w = cs.World(); _ = w.add_polyline([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
        >>> field = cs.NavField(w, [2.0, 2.0], cell=0.25)
        >>> field.set_goals([8.0, 8.0])
        >>> round(float(field.distance([[2.0, 2.0]])[0]), 1)   # the old goal: 0 before
        8.4
        >>> field.goals[0]["points"].tolist()
        [[8.0, 8.0]]
        """
        sets = _goal_sets(goals)
        if len(sets) != self.count:
            raise ValueError(
                f"NavField.set_goals: expected {self.count} goal set(s), as the field was "
                f"built with, got {len(sets)}"
            )
        cache = getattr(self.world, "_nav_cache", None) if self._share else None
        if not self._core.set_goals(sets, _core_world(self.world)):
            return  # newer goals were set meanwhile (another thread): theirs stand
        if cache is not None:
            # The cache finds this field under the goals it now has, and under no other
            # key (another field built with the old ones builds its own). Keyed by what
            # the field holds, not by what this call set: another thread's set_goals may
            # have swapped its goals in since (a lookup checks the goals too).
            params = (self.cell, self.radius, self.layers, self.margin)
            now = (_key(list(self._core.goal_sets)), *params)
            for k, core in list(cache.items()):
                if core is self._core and k != now:
                    cache.pop(k, None)
            cache.setdefault(now, self._core)

    @property
    def goals(self) -> list[dict[str, Any]]:
        """The goal sets the field is built for (one dict per set: ``points``,
        ``segments``, ``polygons``), as :meth:`set_goals` last set them, also through
        another NavField sharing this one."""
        return list(self._core.goal_sets)

    def _sync(self) -> None:
        """Rebuild the fields if the world was edited since they were built."""
        core_world = getattr(self.world, "_core", self.world)
        if not self._core.built_from(core_world):
            self._core.rebuild(core_world)

    @property
    def count(self) -> int:
        """Number of fields (goal sets)."""
        return int(self._core.count)

    @property
    def grid(self) -> tuple[float, float, float, int, int]:
        """``(x0, y0, cell, nx, ny)``: node (i, j) sits at (x0 + i·cell, y0 + j·cell)."""
        self._sync()
        return tuple(self._core.grid)

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """``(xmin, xmax, ymin, ymax)``: the first and last nodes of the grid. An image of
        the nodes (``imshow``) covers half a cell more on every side, its pixels centred
        on the nodes (:func:`contextsteer.plot.nav_field` draws it so)."""
        x0, y0, c, nx, ny = self.grid
        return (x0, x0 + (nx - 1) * c, y0, y0 + (ny - 1) * c)

    @property
    def build_seconds(self) -> float:
        """Wall time of the last build (all fields), in seconds."""
        return float(self._core.build_seconds)

    @property
    def blocking_radius(self) -> float:
        """The inflation radius, ``max(radius, cell / 2)``."""
        return float(self._core.blocking_radius)

    @property
    def blocked(self) -> np.ndarray:
        """(ny, nx) bool: nodes inside the inflated obstacles."""
        self._sync()
        return self._core.blocked

    def _field(self, g: Any) -> int:
        """``g`` as a field index in [0, count): an int (a float is not truncated)."""
        return _checks.integer("field index g", g, 0, self.count - 1)

    def distances(self, g: int = 0) -> np.ndarray:
        """(ny, nx) float32 node distances of field ``g`` (inf where unreachable): a
        read-only copy of the field as it is now, which a rebuild after a world edit
        leaves as it was."""
        self._sync()
        out = self._core.distance_grid(self._field(g))
        out.flags.writeable = False
        return out

    def descents(self, g: int = 0) -> np.ndarray:
        """(ny, nx, 2) float32 unit node descents of field ``g``: a read-only copy, as
        :meth:`distances`."""
        self._sync()
        out = self._core.descent_grid(self._field(g))
        out.flags.writeable = False
        return out

    def query(self, points: ArrayLike, which: Any = None, *, look_ahead: float = 0.0) -> NavQuery:
        """Distance and descent direction at any batch of points.

        Parameters
        ----------
        points : array_like, shape (N, 2) or (2,)
        which : int or array_like of int, shape (N,), optional
            The field of each point (default 0), in ``[0, count)``; anything else raises
            (``TypeError`` for a non-integer, ``ValueError`` out of range).
        look_ahead : float, default 0
            > 0: the string-pulled direction, towards the farthest point of the descent
            trail within ``look_ahead`` that is visible from the point: every sample of
            the segment (every half cell) at least a node away from the blocked nodes.
            A point inside the inflated band skips the samples of its first cell, so it
            still sees out.

        Returns
        -------
        NavQuery
            ``distance`` (N,) and ``direction`` (N, 2), float32; for a single point of
            shape (2,), a 0-d ``distance`` and a (2,) ``direction`` (as :class:`Path`
            answers one point).
        """
        self._sync()
        p = _f32(points, "points")  # the core checks the ±1e8 range
        single = p.shape == (2,)
        if single:
            p = p.reshape(1, 2)
        if p.ndim != 2 or p.shape[1] != 2:
            raise ValueError(
                f"points: expected shape (N, 2) or (2,), got {_given_shape(points, p)}"
            )
        w = None
        if which is not None:
            raw = _checks.integer_array("which", which)
            if not _checks.is_integer(raw):
                raise TypeError(f"which: expected integer field indexes, got dtype {raw.dtype}")
            bad = (raw < 0) | (raw >= self.count)
            if np.any(bad):
                raise ValueError(
                    f"which: field indexes must be in [0, {self.count}), got "
                    f"{np.ravel(raw)[np.flatnonzero(np.ravel(bad))[0]]}"
                )
            if raw.ndim > 1 or raw.size not in (1, len(p)):
                raise ValueError(
                    f"which: expected one field index or one per point ({len(p)},), got "
                    f"shape {raw.shape}"
                )
            w = np.ascontiguousarray(np.broadcast_to(raw.astype(np.int32), (len(p),)))
        d, v = self._core.query(p, w, _checks.length("NavField.query: look_ahead", look_ahead))
        if single:
            return NavQuery(d.reshape(()), v.reshape(2))
        return NavQuery(d, v)

    def distance(self, points: ArrayLike, which: Any = None) -> np.ndarray:
        """(N,) geodesic distances at ``points`` (0-d for one point; see :meth:`query`)."""
        return self.query(points, which).distance

    def direction(
        self, points: ArrayLike, which: Any = None, *, look_ahead: float = 0.0
    ) -> np.ndarray:
        """(N, 2) unit descent directions at ``points`` ((2,) for one point; see
        :meth:`query`)."""
        return self.query(points, which, look_ahead=look_ahead).direction

    @_checks.safe_repr
    def __repr__(self) -> str:
        x0, y0, c, nx, ny = self.grid
        return f"NavField(fields={self.count}, grid={nx}x{ny}, cell={c:g}, radius={self.radius:g})"


@overload
def route(
    world: World,
    starts: ArrayLike,
    goals: ArrayLike,
    radius: float = 0.3,
    *,
    layers: int = ALL_LAYERS,
    packed: Literal[False] = False,
    arc_points: int = 12,
) -> list[Path | None]: ...
@overload
def route(
    world: World,
    starts: ArrayLike,
    goals: ArrayLike,
    radius: float = 0.3,
    *,
    layers: int = ALL_LAYERS,
    packed: Literal[True],
    arc_points: int = 12,
) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def route(
    world: World,
    starts: ArrayLike,
    goals: ArrayLike,
    radius: float = 0.3,
    *,
    layers: int = ALL_LAYERS,
    packed: bool = False,
    arc_points: int = 12,
) -> list[Path | None] | tuple[np.ndarray, np.ndarray]: ...
def route(
    world: World,
    starts: ArrayLike,
    goals: ArrayLike,
    radius: float = 0.3,
    *,
    layers: int = ALL_LAYERS,
    packed: bool = False,
    arc_points: int = 12,
) -> list[Path | None] | tuple[np.ndarray, np.ndarray]:
    """Shortest paths from ``starts`` to ``goals`` around the obstacles inflated by ``radius``.

    A visibility graph over circumscribed corners of the inflated obstacles (a regular
    ``arc_points``-gon around every wall end point and circle), built in C++: every route
    keeps a disc of ``radius`` clear of every wall, and is at most ``1/cos(π/arc_points)``
    longer than the true shortest path on its arcs round corners (1.035 for 12). With a
    radius of 0 or below about a thousandth of the scene, a leg may pass through the point
    where two walls meet, as a thin ray may graze a shared vertex (210 of 15,000 routes
    through random V-shaped joints touched or crossed a wall at radii 0–1e-3): give the
    bodies' radius for routes that must not touch walls.

    A start or goal closer than ``radius`` to a wall (an agent pressed against it) first
    steps straight off its nearest wall to where a disc of ``radius`` is clear: the route
    gains that point after the start (before the goal), a leg shorter than ``radius``,
    and keeps ``radius`` from every wall beyond it. Where no such point exists (a
    passage narrower than the disc) or no route keeps ``radius`` from there, the legs
    from and to that end keep a disc of its own clearance instead. An end exactly on a
    wall (an exit point drawn on a wall line) has no nearer side: it steps off to the side
    facing the route's other end, or the other side where that one is inside a solid or
    blocked. A start or goal inside a solid (a box, polygon or circle) has no route
    (``None``): a :class:`NavField` leads an agent out of one.

    Parameters
    ----------
    world : World
    starts, goals : array_like, shape (N, 2) or (2,)
        One route per row; a single goal (2,) is shared by all starts.
    radius : float, default 0.3
    layers : int, optional
        Obstacles of these layers count (a 32-bit mask).
    packed : bool, default False
        Return ``(points, offsets)``: all route points (P, 2) float32, route i owning
        rows ``offsets[i]:offsets[i + 1]`` (int64, N + 1), empty when unreachable. A goal
        equal to its start is reachable: its route is that point twice (the list form
        gives ``None`` there, a :class:`Path` having a positive length).
    arc_points : int, default 12
        Corners of the polygon round each wall end and circle, in [4, 256]. The corners
        sit a little beyond ``radius`` (1e-4 of the scene's extent plus 8 float32 ulps of
        its largest coordinate), so that float32 rounding never puts a corner inside a
        wall, and legs between corners keep half that margin too. Far from the origin the
        ulps grow (6 cm at 1e5), so a gap that a body clears by less than that is closed
        there and routed round: a scene routes alike wherever it sits only where its gaps
        are wider than that. A corner's clearance is read by :func:`nearest`, which puts a
        point within 1e-12 of a unit of a wall near the origin on it: a scene whose
        corners sit that close to its walls (a room 2e-9 units wide with ``radius=0``)
        has no route, never one through a wall.

    Returns
    -------
    list of Path or None, or (points, offsets)
        ``None`` where a goal cannot be reached (or equals its start).

    Raises
    ------
    ValueError
        More than 16,384 corners kept (``Router::kMaxCorners``): the graph tests every
        pair of corners, O(V²) in time and memory (about 25 s of two cores and up to
        1.6 GB at the limit). Open fields of many small obstacles route better on a
        :class:`NavField`. Ctrl-C interrupts the build (``KeyboardInterrupt``).

    Examples
    --------
    >>> import contextsteer as cs
    >>> world = cs.World(); _ = world.add_segments([[0, -2, 0, 2]])
    >>> (path,) = cs.route(world, [[-3, 0]], [[3, 0]], radius=0.5)
    >>> round(path.length, 2)             # round the end of the wall (exact: 7.87)
    7.89
    """
    from .path import Path

    core_world = _world(world)
    # Copied when still the caller's memory (as raycast's inputs): the core checks them,
    # then reads them again without the GIL (a NaN written in between reached the route).
    s = _private(_f32(starts, "starts"), starts)  # the core checks the ±1e8 range of both
    if s.shape == (2,):
        s = s.reshape(1, 2)
    if s.ndim != 2 or s.shape[1] != 2:
        raise ValueError(f"starts: expected shape (N, 2) or (2,), got {_given_shape(starts, s)}")
    g0 = _private(_f32(goals, "goals"), goals)
    if g0.shape not in ((2,), (1, 2), s.shape):
        raise ValueError(
            f"goals: expected one goal (2,) or one per start {s.shape}, got shape {g0.shape}"
        )
    g = np.ascontiguousarray(np.broadcast_to(g0, s.shape))
    radius = _length(radius, "route: radius")
    if isinstance(arc_points, bool) or not _checks.is_int(arc_points):
        raise TypeError(f"route: arc_points must be an int, got {type(arc_points).__name__}")
    points, offsets, _ = _core.route(
        core_world, s, g, float(radius), _layers(layers), int(np.clip(arc_points, -1, 2**20))
    )
    if packed:
        return points, offsets
    out: list[Path | None] = []
    for i in range(len(s)):
        seg = points[offsets[i] : offsets[i + 1]]
        try:
            out.append(Path(seg) if len(seg) >= 2 else None)
        except ValueError:
            out.append(None)
    return out


def _restore_nav_field(
    world: World,
    goals: Any,
    cell: float | None,
    radius: float,
    layers: int,
    margin: float,
    share: bool = True,
) -> NavField:
    return NavField(
        world, goals, cell=cell, radius=radius, layers=layers, margin=margin, share=share
    )
