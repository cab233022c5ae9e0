"""Paths: polylines agents follow, with closest-offset and look-ahead queries.

A path is an open or closed polyline, optionally smoothed by a centripetal Catmull-Rom
spline and resampled into a dense polyline. Offsets are arc lengths from the first
point. ``Path.direction`` is the Godot recipe's ``get_path_direction`` (the tangent at
the closest point) plus a look-ahead, so that cars turn before the bend.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, _core
from .maps import _f32, _given_shape, _memory_text, _physical_memory

__all__ = ["Path"]

_DIRECTION_MODES = ("tangent", "seek")

MAX_SAMPLES_PER_SEGMENT = 4096
"""The most points a smoothed segment is resampled into."""


def _points_2d(points: ArrayLike, what: str = "points") -> tuple[NDArray[np.float32], bool]:
    """Return points as float32 (N, 2) and whether a single (2,) point was given."""
    p = _f32(points, what)
    if p.shape == (2,):
        return p.reshape(1, 2), True
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"{what}: expected shape (N, 2) or (2,), got {_given_shape(points, p)}")
    return p, False


def _offsets_1d(offsets: ArrayLike) -> tuple[NDArray[np.float32], bool]:
    """Return offsets as float32 (N,) and whether a scalar was given."""
    scalar = np.ndim(offsets) == 0
    s = _f32(offsets, "offsets")
    if scalar:
        return s.reshape(1), True
    if s.ndim != 1:
        raise ValueError(f"offsets: expected shape (N,) or a scalar, got {s.shape}")
    return s, False


class Path:
    """An open or closed polyline with offset queries.

    Parameters
    ----------
    points : array_like, shape (P, 2)
        Vertices (or, with ``smooth=True``, control points the curve passes through).
        Consecutive duplicates are dropped, and on a closed path a last point equal to
        the first.
    closed : bool, default False
        Join the last point to the first. Closed paths wrap offsets into
        ``[0, length)``; open paths clamp them into ``[0, length]``.
    smooth : bool, default False
        Interpolate the points with a centripetal Catmull-Rom spline (no cusps or loops
        inside a span, unlike the uniform variant; open ends use mirrored phantom
        points) and resample it into a dense polyline.
    samples_per_segment : int, default 8
        Polyline segments per span between two control points when smoothing (equal
        steps of the spline parameter), in [1, 4096] (checked even without ``smooth``,
        which alone uses it). A span
        whose control points are too close for the spline's knots to separate (a 1e-30
        step beside a 100 m one) is drawn straight.

    Raises
    ------
    TypeError
        ``closed`` or ``smooth`` is not a bool, ``samples_per_segment`` not an int.
    ValueError
        If ``points`` is not (P, 2), holds NaN or inf, has fewer than 2 distinct
        points, or ``samples_per_segment`` is not in [1, 4096]; with ``smooth``, if the
        curve passes beyond ±1e8 (it overshoots its control points at sharp corners).
    MemoryError
        ``smooth`` would make more vertices (points × ``samples_per_segment``) than
        the memory this process may use holds.

    Notes
    -----
    Closest-offset queries descend a bounding-volume hierarchy over the segments, so
    they cost O(log S) for points near a path of S segments. ``tangent_at`` is the
    direction of the polyline segment under the offset: piecewise constant, so a
    smoothed path turns in steps of its sampling.

    Examples
    --------
    >>> import contextsteer as cs
    >>> track = cs.Path([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
    >>> track.length
    40.0
    >>> float(track.closest_offset([5, -1]))
    5.0
    >>> track.point_at(45.0).tolist()        # wraps around a closed path
    [5.0, 0.0]
    >>> track.direction([9, 1], look_ahead=2.0).tolist()  # already turning up the bend
    [0.0, 1.0]
    """

    def __init__(
        self,
        points: ArrayLike,
        *,
        closed: bool = False,
        smooth: bool = False,
        samples_per_segment: int = 8,
    ) -> None:
        p = _f32(points, "points")
        if p.ndim != 2 or p.shape[1] != 2:
            raise ValueError(f"points: expected shape (P, 2), got {p.shape}")
        if isinstance(samples_per_segment, (bool, np.bool_)) or not _checks.is_int(
            samples_per_segment
        ):
            raise TypeError(
                f"samples_per_segment: expected an int, got {type(samples_per_segment).__name__}"
            )
        if not 1 <= samples_per_segment <= MAX_SAMPLES_PER_SEGMENT:
            raise ValueError(
                f"samples_per_segment: expected an int in [1, {MAX_SAMPLES_PER_SEGMENT}], "
                f"got {samples_per_segment}"
            )
        samples_per_segment = int(samples_per_segment)
        closed = _checks.flag("Path: closed", closed)
        smooth = _checks.flag("Path: smooth", smooth)
        if smooth:
            # The spline's points in double, then float32 vertices, lengths, directions and
            # cumulative offsets: 84-88 bytes a vertex at the peak of the build (measured;
            # 56 let a build through that then failed with a bare bad_alloc, round 25).
            vertices = (len(p) + 1) * samples_per_segment
            if vertices * 88 > _physical_memory():
                raise MemoryError(
                    f"Path: smoothing {len(p):,} points with samples_per_segment="
                    f"{samples_per_segment} makes {vertices:,} vertices, about "
                    f"{vertices * 88 / 2**30:.3g} GiB, more than {_memory_text()}"
                )
        self._path = _core.Path(p, closed, smooth, samples_per_segment)
        if smooth:
            # The spline overshoots its control points at sharp corners, which can carry a
            # vertex past the range every position is checked against (points at ±1e8 gave
            # vertices at 1.25e8, which Agents.add then refused; fuzz round of 2026-12-07).
            reach = float(np.abs(self._path.points).max())
            if not reach <= _checks.MAX_COORDINATE:
                raise ValueError(
                    f"Path: the smoothed curve reaches {reach:.4g}, beyond the ±1e8 that "
                    "positions are checked against (the spline overshoots its control "
                    "points at sharp corners); keep the points further inside it"
                )
        self._args = (p.copy(), closed, smooth, samples_per_segment)

    def __reduce__(self):
        """Pickle (and ``copy``) support: the constructor's arguments (a path is immutable)."""
        points, closed, smooth, samples = self._args
        return (_restore_path, (points, closed, smooth, samples))

    @property
    def length(self) -> float:
        """Total arc length of the (dense) polyline."""
        return self._path.length

    @property
    def closed(self) -> bool:
        """Whether the last point joins the first."""
        return self._path.closed

    @property
    def points(self) -> NDArray[np.float32]:
        """Read-only float32 (V, 2) view of the dense polyline (no repeated end point)."""
        return self._path.points

    @_checks.safe_repr
    def __repr__(self) -> str:
        kind = "closed" if self.closed else "open"
        return f"Path({kind}, {len(self.points)} points, length={self.length:.6g})"

    def closest_offset(self, points: ArrayLike) -> NDArray[np.float32]:
        """Offset of the path point nearest to each point.

        Parameters
        ----------
        points : array_like, shape (N, 2) or (2,)

        Returns
        -------
        ndarray of float32, shape (N,) (0-d for a single point)
            In ``[0, length)`` on closed paths, ``[0, length]`` on open ones. Candidates at
            the same computed distance (squared, in double) resolve to the lowest segment
            index, so the answer is unique and does not depend on the search order. Two
            segments exactly as far in exact arithmetic can still differ in the last bit
            of their computed distances (a segment end against a segment's interior); then
            the computed nearer one wins, whatever its index.

        Examples
        --------
        >>> import contextsteer as cs
        >>> cs.Path([[0, 0], [4, 0]]).closest_offset([[1, 3], [9, 9]]).tolist()
        [1.0, 4.0]
        """
        p, single = _points_2d(points)
        out = self._path.closest_offset(p)
        return out.reshape(()) if single else out

    def point_at(self, offsets: ArrayLike) -> NDArray[np.float32]:
        """Points of the path at the given offsets (wrapped or clamped).

        Parameters
        ----------
        offsets : array_like, shape (N,) or scalar

        Returns
        -------
        ndarray of float32, shape (N, 2) ((2,) for a scalar)

        Examples
        --------
        >>> import contextsteer as cs
        >>> cs.Path([[0, 0], [4, 0]]).point_at([-1, 1, 9]).tolist()  # open: clamped
        [[0.0, 0.0], [1.0, 0.0], [4.0, 0.0]]
        """
        s, single = _offsets_1d(offsets)
        out = self._path.point_at(s)
        return out.reshape(2) if single else out

    def tangent_at(self, offsets: ArrayLike) -> NDArray[np.float32]:
        """Unit tangents of the path at the given offsets (wrapped or clamped).

        The tangent of the segment containing the offset; at a vertex, the segment
        that starts there (the last one at the end of an open path).

        Parameters
        ----------
        offsets : array_like, shape (N,) or scalar

        Returns
        -------
        ndarray of float32, shape (N, 2) ((2,) for a scalar)

        Examples
        --------
        >>> import contextsteer as cs
        >>> cs.Path([[0, 0], [4, 0], [4, 4]]).tangent_at([1, 4, 100]).tolist()
        [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
        """
        s, single = _offsets_1d(offsets)
        out = self._path.tangent_at(s)
        return out.reshape(2) if single else out

    def direction(
        self, points: ArrayLike, look_ahead: float = 0.0, *, mode: str = "tangent"
    ) -> NDArray[np.float32]:
        """Direction to follow the path from each point (Godot's ``get_path_direction``).

        Parameters
        ----------
        points : array_like, shape (N, 2) or (2,)
        look_ahead : float, default 0
            Arc length added to the closest offset before the direction is taken, so
            that agents start turning before a bend (negative looks back).
        mode : {"tangent", "seek"}, default "tangent"
            ``"tangent"``: the unit tangent at ``closest_offset + look_ahead`` (the
            recipe's ``PathFollow2D.transform.x``); parallel to the path, it never pulls
            an agent back to the centre line. ``"seek"``: the unit vector from the point
            to the path point at ``closest_offset + look_ahead`` ("seek the carrot");
            it also corrects lateral drift, which suits cars with a look-ahead of a few
            car lengths. It falls back to the tangent when the point is on the carrot.

        Returns
        -------
        ndarray of float32, shape (N, 2) ((2,) for a single point)
            Unit vectors.

        Raises
        ------
        ValueError
            If ``mode`` is unknown or ``look_ahead`` is not finite.

        Examples
        --------
        >>> import contextsteer as cs
        >>> road = cs.Path([[0, 0], [10, 0], [10, 10]])
        >>> road.direction([[5, 1], [9, 0]], look_ahead=2.0).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        >>> [round(float(c), 3) for c in road.direction([5, 3], look_ahead=4.0, mode="seek")]
        [0.8, -0.6]
        """
        if mode not in _DIRECTION_MODES:
            raise ValueError(f"mode: expected one of {_DIRECTION_MODES}, got {mode!r}")
        p, single = _points_2d(points)
        out = self._path.direction(
            p, _checks.length("direction: look_ahead", look_ahead, low=-math.inf), mode
        )
        return out.reshape(2) if single else out


def _restore_path(points: ArrayLike, closed: bool, smooth: bool, samples: int) -> Path:
    return Path(points, closed=closed, smooth=smooth, samples_per_segment=samples)
