"""The static world (walls, polygons, boxes, circles) and its batched queries.

Obstacles are stored in flat float32 arrays in the C++ core with a uniform-grid index that
is rebuilt lazily after edits. Queries take arrays of any batch size, release the GIL and
split the work over :func:`contextsteer.set_num_threads` threads; results never depend on
the thread count.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, NamedTuple, overload

import numpy as np

from . import _checks, _core
from .maps import _f32, _given_shape

__all__ = ["World", "RayHits", "Nearest", "raycast", "slot_raycast", "nearest", "inside"]

ALL_LAYERS = 0xFFFFFFFF
_SLOT_METHODS = ("auto", "gather", "per_ray", "strips", "sectors")


def _layers(layers: Any) -> int:
    if isinstance(layers, bool) or not _checks.is_int(layers):
        raise TypeError(f"layers: expected an int bit mask, got {type(layers).__name__}")
    if not 0 <= int(layers) <= ALL_LAYERS:
        raise ValueError(f"layers: expected a 32-bit mask in [0, 0xFFFFFFFF], got {layers}")
    return int(layers)


def _points(x: Any, what: str) -> np.ndarray:
    a = _f32(x, what)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{what}: expected shape (N, 2), got {_given_shape(x, a)}")
    return a


def _rows(a: np.ndarray, cols: int) -> np.ndarray:
    """An empty 1-D array (``[]``: nothing to add) as zero rows of ``cols`` columns; any
    other array as it is (a stress run's loop adding a random number of pillars, none
    this time, got "expected shape (C, 2), got (0,)")."""
    return a.reshape(0, cols) if a.ndim == 1 and a.size == 0 else a


def _private(a: np.ndarray, given: Any) -> np.ndarray:
    """``a`` (converted from ``given``), copied if it is still the caller's memory: a cast
    checks its inputs and then reads them again without the GIL, so another thread writing
    the caller's array in between (a zero direction, a NaN length) would reach the walk
    unchecked. A copy costs about 1 % of a cast."""
    # A fresh conversion owns its data; the caller's array is the very object given, or a
    # view (of an ndarray subclass, a memoryview's or an array.array's buffer).
    return a.copy() if a is given or not a.flags.owndata else a


def _reduced(headings: Any) -> Any:
    """Headings given in double (or as integers), those beyond ±π reduced modulo 2π in
    double before the core takes them as float32: rounded to float32 first, a heading of
    0.3 rad plus 10**7 turns was 0.3 + 8 rad (fuzz round 19). Headings within ±π, float32
    ones and anything the checks refuse (non-finite, 2^60 and beyond, text, bools,
    masked) are passed on as given."""
    if isinstance(headings, np.ma.MaskedArray) or getattr(headings, "dtype", None) == np.float32:
        return headings
    try:
        arr = np.asarray(headings)
    except (TypeError, ValueError):
        return headings
    if arr.dtype.kind not in "iuf" or arr.dtype == np.float32:
        return headings
    h = arr.astype(np.float64, copy=False)  # (copied below only when one is reduced)
    with np.errstate(invalid="ignore"):
        # (Up to 2^60, the bound every float input has: beyond it a heading is refused
        # whatever its dtype, not reduced in double and refused in float32. Compared in
        # the given dtype: the integer 2^60 - 1 and the long double 2^60 - 0.25 are below
        # it but round to 2^60 in double, and were refused as not below it; round 24.)
        if arr.dtype.kind in "iu":
            below = (arr > -(2**60)) & (arr < 2**60)
        else:
            below = np.abs(arr) < np.longdouble(2.0**60)
        far = np.isfinite(h) & (np.abs(h) > np.pi) & below
    if not far.any():
        return headings
    h = h.copy()

    def wrap(x: np.ndarray) -> np.ndarray:
        # The angle of (cos x, sin x): their argument reduction is exact (a remainder by
        # the double 2π is off by turns × 2.4e-16 rad: 0.33 rad at 2^56; fuzz round 21).
        return np.arctan2(np.sin(x), np.cos(x))

    hi = h[far]
    # What the double dropped: an integer beyond 2^53 (2^60 - 1 read as 2^60, 2.16 rad
    # off) or a long double's last bits (fuzz round 25). The remainder is exact in the
    # given type and in double (under 2^8 at 2^60), and is turned separately.
    given = arr[far]
    if arr.dtype.kind in "iu":
        lo = (given.astype(object) - hi.astype(np.int64).astype(object)).astype(np.float64)
    elif arr.dtype.itemsize > 8:
        lo = (given - hi.astype(arr.dtype)).astype(np.float64)
    else:
        lo = np.zeros_like(hi)
    h[far] = wrap(wrap(hi) + wrap(lo))
    return h


def _per_row(x: Any, n: int, what: str) -> np.ndarray:
    """A scalar or an (n,) array as a float32 (1,) or (n,) array."""
    if np.ndim(x) == 0:
        return np.full(1, _f32(x, what), dtype=np.float32)
    a = _f32(x, what)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{what}: expected a scalar or shape ({n},), got {a.shape}")
    return a


def _vertex_outside(points: np.ndarray, ring: np.ndarray) -> int | None:
    """Index of the first of ``points`` strictly outside the closed ``ring`` (even-odd
    rule, double precision; a point within 1e-6 of the ring's size of its boundary counts
    as inside), else None. Inputs the core would refuse (shapes, non-finite values) are
    left to its messages: None."""
    shaped = points.ndim == 2 and points.shape[1] == 2 and ring.ndim == 2 and ring.shape[1] == 2
    if not shaped or len(ring) < 3 or not (np.isfinite(points).all() and np.isfinite(ring).all()):
        return None
    a = ring.astype(np.float64)
    b = np.roll(a, -1, axis=0)
    d = b - a
    dd = np.maximum((d * d).sum(axis=1), 1e-300)
    tol = 1e-6 * max(float(np.ptp(a, axis=0).max()), 1e-30)
    step = max(1, 2_000_000 // len(a))  # points a chunk: at most ~2M point-edge pairs
    for s in range(0, len(points), step):
        p = points[s : s + step].astype(np.float64)[:, None, :]  # (m, 1, 2)
        ay, by = a[None, :, 1], b[None, :, 1]
        straddle = (ay > p[..., 1]) != (by > p[..., 1])
        with np.errstate(divide="ignore", invalid="ignore"):
            x_cross = a[None, :, 0] + (p[..., 1] - ay) * d[None, :, 0] / (by - ay)
        inside = (straddle & (p[..., 0] < x_cross)).sum(axis=1) % 2 == 1
        t = np.clip(((p - a[None]) * d[None]).sum(axis=2) / dd[None], 0.0, 1.0)
        near = np.hypot(*(a[None] + t[..., None] * d[None] - p).transpose(2, 0, 1))
        ok = inside | (near.min(axis=1) <= tol)
        if not ok.all():
            return s + int(np.argmin(ok))
    return None


class World:
    """Static obstacles: segments, polylines, polygons, boxes and circles.

    Every obstacle gets an id (0, 1, 2, ... in order of addition) and a 32-bit layer mask;
    queries take a ``layers`` mask and see only obstacles sharing a bit with it.
    Polylines, polygons and boxes are stored as segments (:attr:`walls`); polygons and
    boxes also keep their ring so that :func:`inside` knows their interior.

    Adding obstacles never changes arrays handed out before: :attr:`walls` and
    :attr:`circles` are read-only zero-copy views of the geometry as it was when they were
    taken, and each edit stores the geometry in a new buffer.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> world = cs.World()
    >>> world.add_segments([[0, -1, 0, 1], [2, -1, 2, 1]]).tolist()
    [0, 1]
    >>> world.add_box(center=(5, 0), half_extents=(1, 1))
    2
    >>> world.obstacle_count, world.segment_count
    (3, 6)
    >>> world.walls[:2]
    array([[ 0., -1.,  0.,  1.],
           [ 2., -1.,  2.,  1.]], dtype=float32)
    """

    def __init__(self) -> None:
        self._core = _core.World()
        # Navigation fields built over this world (contextsteer.NavField), by goals and
        # parameters, while anything still uses them (weak values: a field built per frame
        # for a moving goal kept every one, 1.4 GB a minute); each rebuilds itself after an
        # edit.
        self._nav_cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._log: list[tuple[str, tuple]] = []  # every edit, replayed by pickle
        # The layers set_layers gave each obstacle, the last call's (not in the log: a door
        # opened and closed every step logged 230 B a call, for good, and the pickle
        # replayed every one; fuzz round 24). Replayed after the log: an obstacle's layers
        # are whatever the last call set, whenever it came.
        self._layers: dict[int, int] = {}
        # Held across an edit and its log entry: two threads editing at once logged their
        # edits in another order than they were made, and a pickle or a saved simulation
        # replayed them into other ids (or failed to load: set_layers on an id not yet made).
        self._log_lock = threading.Lock()

    def _edit(self, method: str, *args: Any) -> Any:
        """Apply one edit to the C++ world and remember it (for pickling)."""
        with self._log_lock:
            out = getattr(self._core, method)(*args)
            # Copies: the core copied the arrays, and the caller may reuse its buffers.
            self._log.append(
                (method, tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args))
            )
        return out

    def __copy__(self):
        raise TypeError(
            "World: copy.copy would share the C++ world with the original (edits "
            "to one would change the other); use copy.deepcopy for an independent "
            "copy"
        )

    def __reduce__(self):
        """Pickle (and ``copy.deepcopy``) support: the edits that built this world, replayed
        in order, so obstacle ids, layers and the grid cell size come back the same."""
        with self._log_lock:
            return (_restore_world, (list(self._log), dict(self._layers)))

    # ------------------------------------------------------------------ adding ---
    def add_segments(self, segments: Any, *, layers: int = ALL_LAYERS) -> np.ndarray:
        """Add M independent segments, one obstacle each.

        Parameters
        ----------
        segments : array_like, shape (M, 4)
            Rows ``(ax, ay, bx, by)``.
        layers : int, optional
            Layer mask of the new obstacles (all layers by default).

        Returns
        -------
        ids : numpy.ndarray of int32, shape (M,)
            The new obstacle ids.

        Raises
        ------
        ValueError
            Wrong shape, a non-finite coordinate or a zero-length segment (named by index).
        """
        a = _rows(_f32(segments, "segments"), 4)
        return self._edit("add_segments", a, _layers(layers))

    def add_polyline(self, points: Any, *, closed: bool = False, layers: int = ALL_LAYERS) -> int:
        """Add one polyline obstacle through P >= 2 points (``closed`` joins last to first).

        A polyline is a wall without interior: rays starting on its far side still hit it.
        For a closed ring given with its first point repeated at the end, the repeat is
        dropped.

        Returns
        -------
        int
            The obstacle id.

        Raises
        ------
        ValueError
            Fewer than 2 distinct points, repeated consecutive points (a zero-length
            segment, named by index) or non-finite coordinates.

        Examples
        --------
        >>> import contextsteer as cs
        >>> w = cs.World()
        >>> w.add_polyline([[0, 0], [4, 0], [4, 3]], closed=True)
        0
        >>> w.segment_count
        3
        """
        pts = _f32(points, "points")
        return int(
            self._edit(
                "add_polyline", pts, _checks.flag("add_polyline: closed", closed), _layers(layers)
            )
        )

    def add_polygon(self, ring: Any, *, holes: Any = (), layers: int = ALL_LAYERS) -> int:
        """Add one simple polygon (a closed ring of P >= 3 points, either orientation),
        optionally with holes.

        Its edges are walls and its interior (boundary included) counts for :func:`inside`;
        rays starting inside it report distance 0. The polygon must not self-intersect
        (not checked). ``holes``: rings (each (H, 2), H >= 3) inside it (a hole vertex
        outside the ring is a ``ValueError``), not touching it or each other (not
        checked): their edges are walls of the same obstacle, and the
        interior leaves them out (a courtyard in a building is free space for
        :func:`inside`, navigation fields, rays and the push out of walls after an edit).

        Returns
        -------
        int
            The obstacle id.

        Raises
        ------
        ValueError
            Fewer than 3 distinct points, a zero-length edge (named by index),
            non-finite coordinates, or a hole vertex outside the ring.
        """
        pts = _f32(ring, "ring")
        if holes is None:
            holes = ()
        if isinstance(holes, np.ndarray) and holes.ndim == 2:
            raise TypeError(
                f"add_polygon: holes must be a list of rings, got one array of shape "
                f"{holes.shape} (pass [ring] for one hole)"
            )
        hole_list = [np.array(_f32(h, f"holes[{i}]")) for i, h in enumerate(holes)]
        for i, h in enumerate(hole_list):
            outside = _vertex_outside(h, pts)
            if outside is not None:
                raise ValueError(
                    f"add_polygon: holes[{i}] vertex {outside} {h[outside].tolist()} lies "
                    "outside the ring (a hole must lie inside its polygon)"
                )
        if hole_list:
            return int(self._edit("add_polygon", pts, _layers(layers), hole_list))
        return int(self._edit("add_polygon", pts, _layers(layers)))

    def add_box(
        self, center: Any, half_extents: Any, angle: float = 0.0, *, layers: int = ALL_LAYERS
    ) -> int:
        """Add a box (a 4-point polygon) with centre, half extents > 0 and rotation in radians.

        Examples
        --------
        >>> import contextsteer as cs
        >>> w = cs.World()
        >>> w.add_box((0, 0), (2, 1), angle=0.5)
        0
        >>> bool(cs.inside(w, [[0.0, 0.0]])[0])
        True
        """
        c = _checks.real_array("add_box: center", center).reshape(-1)
        h = _checks.real_array("add_box: half_extents", half_extents).reshape(-1)
        if c.shape != (2,) or h.shape != (2,):
            raise ValueError(
                f"add_box: expected center and half_extents of shape (2,), got {c.shape} and {h.shape}"
            )
        return int(
            self._edit(
                "add_box",
                float(c[0]),
                float(c[1]),
                float(h[0]),
                float(h[1]),
                _checks.real("add_box: angle", angle),
                _layers(layers),
            )
        )

    def add_boxes(
        self, centers: Any, half_extents: Any, angles: Any = 0.0, *, layers: int = ALL_LAYERS
    ) -> np.ndarray:
        """Add B boxes at once (as :meth:`add_box`, one obstacle each, in one edit).

        Parameters
        ----------
        centers : array_like, shape (B, 2)
        half_extents : array_like, shape (B, 2) or (2,)
            Half extents > 0, per box or shared.
        angles : float or array_like, shape (B,)
            Rotations in radians, counter-clockwise.
        layers : int, optional

        Returns
        -------
        ids : numpy.ndarray of int32, shape (B,)

        Raises
        ------
        ValueError
            Wrong shapes, a half extent not in (0, 1e8], a non-finite value or a corner
            beyond ±1e8 (named by box).

        Notes
        -----
        Every edit stores the geometry in a new buffer, so :meth:`add_box` in a loop
        costs O(world) a box (66 µs a box at 16,000 boxes); this is one edit.

        Examples
        --------
        >>> import contextsteer as cs
        >>> w = cs.World()
        >>> w.add_boxes([[0, 0], [5, 0]], [0.5, 0.5]).tolist()
        [0, 1]
        >>> cs.inside(w, [[5.2, 0.1], [2.5, 0]]).tolist()
        [True, False]
        """
        c = _f32(centers, "centers")
        if c.ndim != 2 or c.shape[1] != 2:
            raise ValueError(f"add_boxes: expected centers of shape (B, 2), got {c.shape}")
        h = _f32(half_extents, "half_extents")
        if np.shape(half_extents) == (2,):
            h = np.broadcast_to(h.reshape(2), c.shape)
        if np.ndim(angles) == 0:
            a = np.full(len(c), _checks.real("add_boxes: angles", angles), np.float32)
        else:
            a = _f32(angles, "angles")
        return self._edit(
            "add_boxes",
            c,
            np.ascontiguousarray(h, np.float32),
            np.ascontiguousarray(a, np.float32),
            _layers(layers),
        )

    def add_occupancy(
        self,
        occupied: Any,
        cell: float = 1.0,
        origin: Any = (0.0, 0.0),
        *,
        layers: int = ALL_LAYERS,
    ) -> np.ndarray:
        """Add an occupancy grid (a tile map, a robot's map) as solid boxes.

        Cell ``(i, j)`` of ``occupied`` covers x in ``[ox + j·cell, ox + (j+1)·cell]`` and y
        in ``[oy + i·cell, oy + (i+1)·cell]``: row 0 is the lowest (y up; an image, row 0
        at the top, is ``np.flipud`` of it). Occupied cells are merged into rectangles
        (runs along each row, then equal runs of consecutive rows), each added as one box
        in a single edit (boxes given by their corners, so neighbours share their edges bit for
        bit): their interiors count for :func:`inside`, and
        rays starting in them report distance 0.

        Parameters
        ----------
        occupied : array_like of bool, shape (H, W)
        cell : float, default 1
            Cell size in world units, > 0.
        origin : (float, float), default (0, 0)
            World position of cell (0, 0)'s lower-left corner.
        layers : int, optional

        Returns
        -------
        ids : numpy.ndarray of int32
            The boxes' obstacle ids.

        Examples
        --------
        >>> import numpy as np, contextsteer as cs
        >>> grid = np.zeros((4, 6), bool)
        >>> grid[1:3, 1:5] = True                      # one 4 x 2 block
        >>> grid[0, 0] = True
        >>> w = cs.World()
        >>> len(w.add_occupancy(grid, cell=0.5))      # two boxes
        2
        >>> cs.inside(w, [[1.5, 1.0], [0.25, 0.25], [2.9, 1.9]]).tolist()
        [True, True, False]
        """
        occ = np.asarray(_checks.not_masked("add_occupancy: occupied", occupied))
        if occ.ndim != 2:
            raise ValueError(f"add_occupancy: expected a (H, W) grid, got shape {occ.shape}")
        if occ.dtype != bool:
            raise TypeError(f"add_occupancy: expected a bool grid, got dtype {occ.dtype}")
        cell = _checks.length("add_occupancy: cell", cell)
        if not cell > 0:
            raise ValueError(f"add_occupancy: cell must be > 0, got {cell}")
        o = _checks.real_array("add_occupancy: origin", origin).reshape(-1)
        if o.shape != (2,):
            raise ValueError(f"add_occupancy: expected origin of shape (2,), got {o.shape}")
        # Runs along each row: [start, stop) columns.
        rects: list[list[int]] = []  # i0, i1 (rows, exclusive), j0, j1
        open_runs: dict[tuple[int, int], int] = {}  # run -> index in rects, still growing
        for i in range(occ.shape[0]):
            row = np.concatenate(([False], occ[i], [False]))
            edges = np.flatnonzero(row[1:] != row[:-1])
            runs = list(zip(edges[::2].tolist(), edges[1::2].tolist()))
            grown: dict[tuple[int, int], int] = {}
            for run in runs:
                k = open_runs.get(run)
                if k is None:
                    rects.append([i, i + 1, run[0], run[1]])
                    k = len(rects) - 1
                else:
                    rects[k][1] = i + 1
                grown[run] = k
            open_runs = grown
        if not rects:
            return np.zeros(0, np.int32)
        r = np.array(rects, np.float64)
        lo = np.c_[r[:, 2], r[:, 0]] * cell + o
        hi = np.c_[r[:, 3], r[:, 1]] * cell + o
        with np.errstate(over="ignore"):
            lo32, hi32 = lo.astype(np.float32), hi.astype(np.float32)
        if not (
            (lo32 < hi32).all()
            and (np.abs(lo32) <= _checks.MAX_COORDINATE).all()
            and (np.abs(hi32) <= _checks.MAX_COORDINATE).all()
        ):
            raise ValueError(
                f"add_occupancy: cell={cell:g} at origin {o.tolist()} makes boxes that float32 "
                "cannot hold (a cell rounds to no width, or a corner lies beyond ±1e8); take a "
                "larger cell or an origin nearer 0"
            )
        # By their corners, each rounded once: neighbouring rectangles share their edges bit
        # for bit. (As centres and half extents in float32, one box's top could lie 2e-7
        # below the next one's bottom, and a ray or an inside test passed the seam.)
        return self._edit("add_rects", lo32, hi32, _layers(layers))

    def add_circles(self, centers: Any, radii: Any, *, layers: int = ALL_LAYERS) -> np.ndarray:
        """Add C circles (solid discs), one obstacle each.

        Parameters
        ----------
        centers : array_like, shape (C, 2)
        radii : array_like, shape (C,) or scalar
            Radii >= 0.
        layers : int, optional
            Layer mask of the new obstacles (all layers by default).

        Returns
        -------
        ids : numpy.ndarray of int32, shape (C,)

        Raises
        ------
        ValueError
            Wrong shapes, non-finite values or a negative radius (named by index).
        """
        c = _rows(_f32(centers, "centers"), 2)
        r = _f32(radii, "radii")
        if np.ndim(radii) == 0 and c.ndim == 2:
            r = np.full(c.shape[0], radii, dtype=np.float32)
        return self._edit("add_circles", c, r, _layers(layers))

    def add_shapely(self, geometry: Any, *, layers: int = ALL_LAYERS) -> list[int]:
        """Add a shapely geometry (needs the optional ``shapely`` package).

        Polygons become polygons (with their holes), LineStrings polylines,
        LinearRings closed polylines, Points circles of radius 0; multi-part geometries and
        collections add every part. Empty geometries (and empty parts) add nothing. The
        parts are added all or none: a bad part raises, naming it by its index, and leaves
        the world as it was.

        Returns
        -------
        list of int
            The new obstacle ids.
        """
        try:
            import shapely  # noqa: F401
        except ImportError as exc:  # pragma: no cover - exercised only without shapely
            raise ImportError(
                "add_shapely needs shapely (pip install 'contextsteer[geo]')"
            ) from exc
        from shapely.geometry import LinearRing, LineString, Point, Polygon

        # The parts in order (an empty one, of any type, adds nothing), each checked by
        # adding it to a scratch world first: a bad part left the parts before it in this
        # world, with their ids lost in the error.
        parts: list[tuple[str, Any]] = []

        def flatten(g: Any) -> None:
            if isinstance(g, (Polygon, LineString, Point)):  # LinearRing is a LineString
                if not g.is_empty:
                    parts.append((type(g).__name__, g))
            elif hasattr(g, "geoms"):
                for part in g.geoms:
                    flatten(part)
            else:
                raise TypeError(f"add_shapely: unsupported geometry type {type(g).__name__}")

        flatten(geometry)

        def add(world: World, g: Any) -> list[int]:
            if isinstance(g, Polygon):
                return [
                    world.add_polygon(
                        np.asarray(g.exterior.coords)[:, :2],
                        holes=[np.asarray(h.coords)[:, :2] for h in g.interiors],
                        layers=layers,
                    )
                ]
            if isinstance(g, LineString):
                closed = isinstance(g, LinearRing)
                return [
                    world.add_polyline(np.asarray(g.coords)[:, :2], closed=closed, layers=layers)
                ]
            return world.add_circles([[g.x, g.y]], [0.0], layers=layers).tolist()

        scratch = World()
        for i, (kind, g) in enumerate(parts):
            try:
                add(scratch, g)
            except (ValueError, TypeError) as exc:
                where = f"part {i} ({kind})" if len(parts) > 1 else kind
                raise type(exc)(f"add_shapely: {where}: {exc}") from None
        ids: list[int] = []
        for _, g in parts:
            ids.extend(add(self, g))
        return ids

    @classmethod
    def from_shapely(cls, geometry: Any, *, layers: int = ALL_LAYERS) -> World:
        """A new world holding a shapely geometry (see :meth:`add_shapely`).

        Examples
        --------
        >>> import pytest
        >>> geometry = pytest.importorskip("shapely.geometry")  # optional extra 'geo'
        >>> import contextsteer as cs
        >>> w = cs.World.from_shapely(geometry.box(0, 0, 2, 1))
        >>> w.obstacle_count, w.segment_count
        (1, 4)
        """
        world = cls()
        world.add_shapely(geometry, layers=layers)
        return world

    # ----------------------------------------------------------------- editing ---
    def set_layers(self, ids: Any, layers: int) -> None:
        """Change the layer mask of existing obstacles: open and close doors.

        ``layers=0`` hides the obstacles from every query (rays, sweeps, collisions,
        navigation fields, :func:`inside`): a door opened. Giving back their mask (or any
        other) shows them again: the door closed. Ids, geometry and the order of
        :attr:`walls` do not change. Like adding obstacles, it is an edit: simulations and
        navigation fields over this world see it from their next step or query, and an
        agent that a shown wall now cuts through is pushed out at the simulation's next
        step (see :class:`~contextsteer.Simulation`).

        Parameters
        ----------
        ids : int or array_like of int
            Obstacle ids, as the ``add_*`` methods returned them.
        layers : int
            The new 32-bit layer mask (0: hidden).

        Raises
        ------
        TypeError
            Non-integer ids.
        ValueError
            An id outside ``[0, obstacle_count)``, or a mask outside 32 bits.

        Examples
        --------
        >>> import contextsteer as cs
        >>> w = cs.World()
        >>> door = w.add_segments([[0, -1, 0, 1]])
        >>> hit = lambda: bool(cs.raycast(w, [[-1, 0]], [[1, 0]], 5.0).hit[0])
        >>> w.set_layers(door, 0); hit()        # open
        False
        >>> w.set_layers(door, 0xFFFFFFFF); hit()     # closed again
        True
        """
        raw = _checks.integer_array("set_layers: ids", ids)
        if raw.size == 0 and raw.dtype.kind == "f":
            raw = raw.astype(np.int64)  # no ids: nothing to change (np.asarray([]) is float)
        if not _checks.is_integer(raw):
            raise TypeError(f"set_layers: ids must be integer obstacle ids, got dtype {raw.dtype}")
        flat = raw.reshape(-1)
        bad = (flat < 0) | (flat >= self.obstacle_count)
        if bad.any():
            raise ValueError(
                f"set_layers: obstacle id {int(flat[np.flatnonzero(bad)[0]])} is not in "
                f"[0, {self.obstacle_count})"
            )
        ids32 = np.ascontiguousarray(flat, dtype=np.int32)
        mask = _layers(layers)
        with self._log_lock:
            self._core.set_layers(ids32, mask)
            self._layers.update(dict.fromkeys(ids32.tolist(), mask))

    # ------------------------------------------------------------------- views ---
    @property
    def obstacle_layers(self) -> np.ndarray:
        """Read-only (obstacle_count,) uint32 view: the layer mask of each obstacle
        (change them with :meth:`set_layers`)."""
        return self._core.obstacle_layers

    @property
    def walls(self) -> np.ndarray:
        """Read-only (M, 4) float32 view of every wall segment (polylines, polygons, boxes included)."""
        return self._core.walls

    @property
    def wall_obstacles(self) -> np.ndarray:
        """Read-only (M,) int32 view: the obstacle id of each row of :attr:`walls`."""
        return self._core.wall_obstacles

    @property
    def circle_obstacles(self) -> np.ndarray:
        """Read-only (C,) int32 view: the obstacle id of each circle of :attr:`circles`."""
        return self._core.circle_obstacles

    @property
    def circles(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views ``(centers (C, 2), radii (C,))`` of the circles."""
        return self._core.circle_centers, self._core.circle_radii

    @property
    def obstacle_count(self) -> int:
        """Number of obstacles (ids run from 0 to obstacle_count - 1)."""
        return int(self._core.obstacle_count)

    @property
    def segment_count(self) -> int:
        """Number of wall segments (rows of :attr:`walls`)."""
        return int(self._core.segment_count)

    @property
    def bounds(self) -> tuple[float, float, float, float] | None:
        """``(xmin, ymin, xmax, ymax)`` of all geometry, or None for an empty world."""
        return self._core.bounds

    @property
    def cell_size(self) -> float:
        """Edge length of the grid cells; 0 (default) picks it from the geometry.

        Set it only to tune or benchmark the index; results do not depend on it, but for
        :func:`sweep_circle` moves that start overlapping an obstacle: their slides meet
        the obstacles of the cells round them in the order the cells are visited, and two
        contacts within rounding of each other may be taken in another order.
        """
        return float(self._core.cell_size)

    @cell_size.setter
    def cell_size(self, value: float) -> None:
        v = _checks.real("World.cell_size", value)  # not "2" or True, which float() takes
        with self._log_lock:
            self._core.cell_size = v
            self._log.append(("cell_size", (v,)))

    @property
    def index_info(self) -> dict[str, Any]:
        """The spatial indexes built so far, and their memory (read-only, a fresh dict).

        Keys: ``'grid'``, ``(nx, ny, cell)`` of the uniform grid; ``'thick_grids'``, the
        radii of the inflated grids that thick per-ray casts built; ``'strips'``, one dict per
        strip index built by :func:`slot_raycast` for a fixed slot set, with ``slots`` (K),
        ``radius``, ``built`` (False when it would have exceeded its memory budget, then the
        rays walk the grid), ``strip_width`` and ``bytes``; ``'sectors'``, one dict per
        sector index built for rays in any direction (``method='sectors'``, or 'auto'
        with headings once it pays), with ``layers``, ``reach``, ``radius`` (0 for thin
        rays; for thick rays the rung it was built for, serving every radius up to it),
        ``built`` (False when the world has circles in those layers or the index would
        exceed 64 MB), ``cell``, ``bins``, ``walls``, ``pieces`` (runs of walls searched
        as one), ``loose`` (walls tested one by one) and ``bytes``; ``'sector_builds'``,
        how many sector indexes were built (kept or declined). Up to 4 are kept; a
        look-ahead longer than every index held for its layers and radius builds one a
        quarter longer than the longest (so look-aheads that vary with speed share a few),
        and once 4 are held the rest walk. Adding obstacles drops them all.

        Examples
        --------
        >>> import contextsteer as cs
        >>> w = cs.World()
        >>> _ = w.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
        >>> _ = cs.slot_raycast(w, [[0, 0]], cs.SlotSet(8), 10.0, method="strips")
        >>> info = w.index_info["strips"][0]
        >>> info["slots"], info["radius"], info["built"], info["strip_width"]
        (8, 0.0, True, 2.5)
        """
        return dict(self._core.index_info)

    @_checks.safe_repr
    def __repr__(self) -> str:
        return (
            f"World(obstacles={self.obstacle_count}, segments={self.segment_count}, "
            f"circles={self._core.circle_count})"
        )


class RayHits(NamedTuple):
    """Closest hits of a batch of R rays (see :func:`raycast`)."""

    distance: np.ndarray
    """(R,) float32: distance along the unit direction, +inf on a miss."""
    hit: np.ndarray
    """(R,) bool."""
    normal: np.ndarray
    """(R, 2) float32 unit normal facing the ray; (0, 0) on a miss."""
    obstacle: np.ndarray
    """(R,) int32 obstacle id, -1 on a miss."""


class Nearest(NamedTuple):
    """Closest wall points of a batch of N points (see :func:`nearest`)."""

    distance: np.ndarray
    """(N,) float32, +inf when nothing is within max_dist."""
    point: np.ndarray
    """(N, 2) float32 closest wall point, (0, 0) on a miss."""
    normal: np.ndarray
    """(N, 2) float32 unit vector from the wall point toward the query point, (0, 0) on a miss."""
    obstacle: np.ndarray
    """(N,) int32 obstacle id, -1 on a miss."""


@overload
def _core_world(world: World | _core.World) -> _core.World: ...
@overload
def _core_world(world: None) -> None: ...
def _core_world(world: World | _core.World | None) -> _core.World | None:
    """The compiled world of ``world`` (a :class:`World`, a compiled world, or None).

    Anything else raises the same ``TypeError`` as :func:`raycast` and the other world
    queries, instead of pybind11's cast error from deep inside the call.
    """
    if isinstance(world, World):
        return world._core
    if world is None or isinstance(world, _core.World):
        return world
    raise TypeError(f"world: expected a contextsteer.World or None, got {type(world).__name__}")


def _world(world: Any) -> Any:
    if not isinstance(world, World):
        raise TypeError(f"world: expected a contextsteer.World, got {type(world).__name__}")
    return world._core


def raycast(
    world: World,
    origins: Any,
    directions: Any,
    max_dist: Any,
    *,
    radius: float = 0.0,
    layers: int = ALL_LAYERS,
) -> RayHits:
    """Closest hit of each of R rays.

    Parameters
    ----------
    world : World
    origins : array_like, shape (R, 2)
    directions : array_like, shape (R, 2)
        Non-zero; normalised internally, so distances are in world units.
    max_dist : float or array_like, shape (R,)
        Finite, >= 0. A hit needs distance <= max_dist.
    radius : float, optional
        > 0 casts a circle of this radius (a thick ray): the distance the circle's centre
        travels until it touches an obstacle.
    layers : int, optional
        Only obstacles whose layer mask shares a bit with this one count.

    Returns
    -------
    RayHits
        ``distance`` (inf on a miss), ``hit``, ``normal`` ((0, 0) on a miss) and
        ``obstacle`` (-1 on a miss). The normal is the unit surface normal facing the ray.
        Rays that start inside or on an obstacle (inside a circle, polygon or box, on a
        segment, or for ``radius > 0`` closer than ``radius`` to it) report distance 0,
        ``hit`` True and normal ``-direction``. A ray running along a segment (collinear)
        hits its near end, also with normal ``-direction``, when the collinearity is exact
        after the direction is normalised in float64 (axis-parallel rays, a ray starting
        on the segment); a diagonal ray along a wall from beyond its end is grazing within
        rounding and may pass it, as a ray grazing a vertex may (a thick ray,
        ``radius > 0``, meets it). A parallel ray misses. Hits
        are solved in float64 from the float32 inputs, relative to the ray origin, with
        side tests that agree at shared vertices, so rays never leak between joined walls;
        the distance is then rounded to float32. The oracle tests hold them to 1e-4.
        When several obstacles are hit at exactly the same distance (a ray through a
        point they share, or a thick ray starting within its radius of several walls, at
        distance 0), ``obstacle`` and ``normal`` are those of the first added of the
        walls the walk tests there (walls before circles), whatever the grid walked (the
        cached thick grids or the plain one). A rotated scene or a reversed ray may test
        another set where a hit falls exactly on a cell's edge.

    Raises
    ------
    ValueError
        Wrong shapes, non-finite values, a negative max_dist or radius, or a zero-length
        direction (named by ray index).

    Examples
    --------
    >>> import contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_segments([[5, -1, 5, 1]])
    >>> hits = cs.raycast(w, [[0, 0], [0, 0]], [[2, 0], [0, 1]], 10.0)
    >>> hits.distance.tolist(), hits.hit.tolist(), hits.obstacle.tolist()
    ([5.0, inf], [True, False], [0, -1])
    >>> hits.normal[0].tolist()
    [-1.0, 0.0]
    """
    core = _world(world)
    o = _private(_points(origins, "origins"), origins)
    d = _private(_f32(directions, "directions"), directions)
    m = _private(_per_row(max_dist, o.shape[0], "max_dist"), max_dist)
    distance, hit, normal, obstacle = _core.raycast(
        core, o, d, m, _checks.real("raycast: radius", radius), _layers(layers)
    )
    return RayHits(distance, hit, normal, obstacle)


def slot_raycast(
    world: World,
    positions: Any,
    slot_directions: Any,
    look_ahead: Any,
    *,
    headings: Any = None,
    radius: float = 0.0,
    layers: int = ALL_LAYERS,
    out: np.ndarray | None = None,
    method: str = "auto",
) -> np.ndarray:
    """Distance along every slot ray of every agent (the context-steering sensor).

    Agent i casts K rays from ``positions[i]`` along ``slot_directions`` rotated
    counter-clockwise by ``headings[i]`` and reports the closest hit within its look-ahead.
    Equal (same maths, bit for bit) to :func:`raycast` on the N*K expanded rays. With
    ``headings``, those rays are the slot directions taken as float32, normalised in double
    and rounded to float32, then rotated in float32 as ``(c·ux − s·uy, s·ux + c·uy)`` with
    ``c, s`` the float32 cosine and sine of the heading. Without them, the rays are the
    slot directions as given (``raycast`` normalises them itself); so ``headings=0.0`` can
    differ from ``headings=None`` by a float32 rounding of a direction.

    Parameters
    ----------
    world : World
    positions : array_like, shape (N, 2)
    slot_directions : array_like, shape (K, 2), or an object with a ``directions`` attribute
        Non-zero directions (normalised internally), e.g. a slot set.
    look_ahead : float or array_like, shape (N,)
        Ray length per agent, finite >= 0.
    headings : float or array_like, shape (N,), optional
        Angles in radians (a scalar: the same for every agent); None keeps the slot
        directions as given (world frame). Double (or integer) headings beyond ±π are
        reduced modulo 2π in double before they are rounded to float32, and the rays turn
        by that float32 heading; headings within ±π and float32 ones are taken as given.
    radius : float, optional
        > 0 casts circles (agent-radius padding).
    layers : int, optional
        Layer mask of the obstacles that count.
    out : numpy.ndarray, optional
        float32, C-contiguous, writeable (N, K) array written in place and returned.
    method : {'auto', 'gather', 'per_ray', 'strips', 'sectors'}, optional
        How walls are found. 'strips' (fixed slot directions only, ``headings=None``):
        per slot direction the obstacles are sorted into thin strips parallel to it, and a
        ray scans the few entries of its strip that lie ahead; the cost per ray hardly
        depends on the look-ahead. 'sectors' (rays in any direction: the rotated slots of
        ``headings``): per grid cell and sector of directions, the walls a ray from there
        can meet, cut into pieces that a ray's line crosses at most once, so a ray
        searches one or two pieces instead of walking; built on the first call. Thick
        rays (``radius > 0``) read an index whose cells are grown by the radius: a search
        per piece bounds the walls within the radius of the ray's line, and those are
        solved in the order of a lower bound of their entries. 'gather' collects the
        walls within the look-ahead once per agent and tests all K rays against them;
        'per_ray' walks the grid along each ray, jumping over empty cells. 'auto' uses
        'strips' without headings when the longest look-ahead spans at least 8 grid
        cells; with headings it uses 'sectors' once the index is built, and builds it
        once the rotated rays walked on the world (of that radius) have cost about what
        the build does (thick rays, which gain less from it, three times that; so a
        one-off cast never pays for it); otherwise 'gather' for
        look-aheads of a few cells and 'per_ray' beyond. Results are the same (bit for
        bit).

    Returns
    -------
    numpy.ndarray of float32, shape (N, K)
        Hit distances, +inf where a slot sees nothing; 0 for agents inside an obstacle.

    Notes
    -----
    Memory built once and cached with the world (up to 4 entries of each kind, dropped
    when obstacles are added), so later calls with the same slot set and radius reuse it;
    results never depend on it. 'strips': for each slot direction every obstacle is listed
    in the strips it comes within ``radius`` of, 16 bytes an entry, strips a quarter of the
    median wall length wide. On the 10,000-wall racetrack with 16 slots that is 9.5 MB,
    built in about 20 ms; an index that would exceed 64 MB is built with wider strips, or
    not at all (then 'per_ray' is used). 'sectors': one index per layer mask, reach
    (the call's longest look-ahead) and radius rung (thick rays read the index built for
    the next 2^(n/4) m at or above their radius), 128 sectors of directions and cells of
    about a 25th of the reach; on the 10,000-wall racetrack with 50 m rays that is 10 MB,
    built in about 1 s on two threads (thin), 11–12 MB and 1–2 s for radii 0.3–1.5. It is
    not built for worlds with circles in the rays' layers, nor past 64 MB; agents whose
    look-ahead exceeds its reach, or that stand outside the walls' box, walk. 'per_ray'
    with ``radius > 0``: a copy of the grid with every obstacle grown by the radius.

    Raises
    ------
    TypeError
        ``out`` is not a writeable C-contiguous float32 array.
    ValueError
        Wrong shapes, non-finite values, negative look-ahead, zero-length slot direction,
        an unknown method, or method 'strips' with headings.

    Examples
    --------
    >>> import numpy as np
    >>> import contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_polyline([[-3, -3], [3, -3], [3, 3], [-3, 3]], closed=True)
    >>> slots = [[1, 0], [0, 1], [-1, 0], [0, -1]]
    >>> cs.slot_raycast(w, [[0, 0], [1, 0]], slots, 10.0, headings=[0.0, np.pi / 2])
    array([[3., 3., 3., 3.],
           [3., 4., 3., 2.]], dtype=float32)
    """
    if method not in _SLOT_METHODS:
        raise ValueError(
            f"method: expected one of {', '.join(map(repr, _SLOT_METHODS))}, got {method!r}"
        )
    _checks.not_masked("slot_raycast: out", out)
    if isinstance(out, np.ndarray):
        # The inputs are copied below, so the core no longer sees an overlap: refuse it
        # here (writing the distances over the positions is a caller's mistake).
        given = {"positions": positions, "slot_directions": slot_directions}
        given.update(look_ahead=look_ahead, headings=headings)
        for name, arr in given.items():
            if arr is None or np.ndim(arr) == 0 or hasattr(arr, "directions"):
                continue  # a scalar, no headings, a SlotSet (its own read-only array)
            try:
                shared = np.may_share_memory(out, np.asarray(arr))
            except (TypeError, ValueError):
                continue  # not array-like: the conversion below names the error
            if shared:
                raise ValueError(f"out must not overlap {name}")
    core = _world(world)
    p = _private(_points(positions, "positions"), positions)
    if hasattr(slot_directions, "directions"):
        slot_directions = slot_directions.directions
    s = _private(_points(slot_directions, "slot_directions"), slot_directions)
    la = _private(_per_row(look_ahead, p.shape[0], "look_ahead"), look_ahead)
    h = None
    if headings is not None and np.ndim(headings) == 0:  # one heading for every agent
        h = np.full(p.shape[0], _f32(_reduced(headings), "headings"), dtype=np.float32)
    elif headings is not None:
        h = _private(_f32(_reduced(headings), "headings"), headings)
        if h.shape != (p.shape[0],):
            raise ValueError(f"headings: expected a scalar or shape ({p.shape[0]},), got {h.shape}")
    radius = _checks.real("slot_raycast: radius", radius)
    return _core.slot_raycast(core, p, s, la, h, radius, _layers(layers), out, method)


def nearest(world: World, points: Any, max_dist: float, *, layers: int = ALL_LAYERS) -> Nearest:
    """Closest wall point (segment or circle boundary) to each point, within ``max_dist``.

    Returns
    -------
    Nearest
        ``distance`` (+inf when nothing is within max_dist), ``point`` (closest wall point;
        (0, 0) on a miss), ``normal`` (unit vector from the wall point toward the query
        point; for a point on a wall, up to ``1e-12 * (1 + max(|x|, |y|))`` (a relative
        1e-12 of its coordinates, and 1e-12 within a unit of the origin), distance
        0 and the segment direction turned counter-clockwise or the circle's outward
        normal; (0, 0) on a miss) and
        ``obstacle`` (-1 on a miss). Points inside a circle get the circle's boundary.

    Examples
    --------
    >>> import contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_segments([[0, 0, 4, 0]])
    >>> r = cs.nearest(w, [[1, 2], [9, 9]], 5.0)
    >>> r.distance.tolist(), r.point[0].tolist(), r.normal[0].tolist(), r.obstacle.tolist()
    ([2.0, inf], [1.0, 0.0], [0.0, 1.0], [0, -1])
    """
    core = _world(world)
    p = _points(points, "points")
    max_dist = _checks.real("nearest: max_dist", max_dist)
    distance, point, normal, obstacle = _core.nearest(core, p, max_dist, _layers(layers))
    return Nearest(distance, point, normal, obstacle)


def inside(world: World, points: Any, *, layers: int = ALL_LAYERS) -> np.ndarray:
    """Whether each point lies in the closed interior of a polygon, box or circle.

    Segments and polylines (even closed ones) have no interior. A point's test walks the
    whole ring of a polygon it may be in (O(V)); Ctrl-C is checked between slices of about
    2^24 vertex visits.

    Returns
    -------
    numpy.ndarray of bool, shape (N,)

    Examples
    --------
    >>> import contextsteer as cs
    >>> w = cs.World()
    >>> _ = w.add_circles([[0, 0]], [1.0])
    >>> _ = w.add_polygon([[3, 0], [5, 0], [4, 2]])
    >>> cs.inside(w, [[0.5, 0.5], [4, 1], [2, 0]]).tolist()
    [True, True, False]
    """
    core = _world(world)
    return _core.inside(core, _points(points, "points"), _layers(layers))


def _restore_world(log: list, layers: dict[int, int] | None = None) -> World:
    """Rebuild a pickled world by replaying its edits, then the layers set_layers gave
    (see :meth:`World.__reduce__`; older pickles logged each set_layers call)."""
    w = World()
    for method, args in log:
        if method == "cell_size":
            w.cell_size = args[0]
        elif method == "set_layers":
            w.set_layers(args[0], args[1])
        else:
            w._edit(method, *args)
    by_mask: dict[int, list[int]] = {}
    for obstacle, mask in (layers or {}).items():
        by_mask.setdefault(mask, []).append(obstacle)
    for mask, ids in by_mask.items():
        w.set_layers(np.array(ids, dtype=np.int32), mask)
    return w
