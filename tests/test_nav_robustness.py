"""Navigation and paths where a fuzz run found them wrong: rows of nodes inside a polygon
left unblocked by a rounding of the scanline, grids read after a rebuild had freed them,
and smoothed paths that divided 0 by 0. Oracles: the world's own `cs.inside`, the grid as
first read, and the straight polyline."""

from __future__ import annotations

import numpy as np
import pytest

import contextsteer as cs


def box_room() -> cs.World:
    world = cs.World()
    world.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
    world.add_box(center=(0, 0), half_extents=(3, 3))
    return world


@pytest.mark.parametrize("cell", [0.19, 0.2, 0.21, 0.23, 0.27, 0.31, 0.37])
def test_every_node_inside_a_polygon_is_blocked(cell):
    world = box_room()
    field = cs.NavField(world, [8.0, 8.0], cell=cell, radius=0.3)
    x0, y0, c, nx, ny = field.grid
    xs, ys = np.meshgrid(x0 + np.arange(nx) * c, y0 + np.arange(ny) * c)
    nodes = np.c_[xs.ravel(), ys.ravel()].astype(np.float32)
    inside = cs.inside(world, nodes).reshape(ny, nx)
    assert inside.sum() > 100
    assert not (inside & ~field.blocked).any()
    # An agent pushed into the box is led out, as blocked nodes promise.
    q = field.query([[0.0, 0.5]])
    assert np.isfinite(q.distance[0]) and np.hypot(*q.direction[0]) == pytest.approx(1, abs=1e-5)


def test_distance_and_descent_grids_are_copies_that_a_rebuild_leaves_alone():
    world = cs.World()
    world.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
    field = cs.NavField(world, [8.0, 8.0], cell=0.1, radius=0.3)
    d, g = field.distances(), field.descents()
    first_d, first_g = d.copy(), g.copy()
    assert not d.flags.writeable and not g.flags.writeable
    world.add_segments([[-30, 0, 30, 0]])  # grows the bounds: the rebuild reallocates
    field.query([[0.0, 0.0]])
    junk = [np.full(d.shape, 12345.0, np.float32) for _ in range(20)]
    np.testing.assert_array_equal(d, first_d)
    np.testing.assert_array_equal(g, first_g)
    assert field.distances().shape != d.shape and junk


@pytest.mark.parametrize(
    "points",
    [[[0, 1], [0, 0], [0, 1.1754944e-38]], [[-100, 0], [0, 0], [1e-30, 0], [100, 0]]],
)
def test_a_smoothed_path_with_a_vanishing_step_stays_finite(points):
    straight = cs.Path(points)
    smooth = cs.Path(points, smooth=True, samples_per_segment=4)
    assert np.isfinite(smooth.points).all()
    assert smooth.length == pytest.approx(straight.length, rel=1e-6)
    assert np.isfinite(smooth.point_at(0.5)).all()
