"""Collide and slide in acute corners: a body pressed into a corner never goes into a wall.

Found by a fuzz run of the crowd steering (130 agents with ``crowd_steering``'s velocity
danger and random options, walls it does not see, pressing into the corners of a room
with a diagonal wall and circles). Two faults of ``sweep_circle``, both in corners where
two obstacles (wall and wall, wall and circle) meet at an acute angle:

- after a contact the body was pushed a skin (1e-3 of its radius) away from the wall along
  the wall's normal without testing that push, and in an acute corner that normal points
  into the other obstacle: a little deeper every step, up to 36 mm with one slide
  iteration. The skin is now swept against every obstacle but the one touched;
- that swept skin may end exactly on the other obstacle's boundary, where the sweep's
  inside test and its entry solve disagreed by a rounding: a move into that obstacle went
  through it (1.5 mm). A start within rounding of a boundary now counts as on it.

The oracle is ``cs.nearest``, the world's exact distance query (other code than the sweep).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import contextsteer as cs

DATA = Path(__file__).parent / "data"

# Float32 positions a few metres from the origin round by ~5e-7 m; a body may end that far
# inside the wall it touches, not more.
ROUNDING = 1e-5


def penetration(world: cs.World, positions, radius) -> np.ndarray:
    """How far each body (radius) reaches into the nearest wall (negative: clear of it)."""
    p = np.asarray(positions, np.float32).reshape(-1, 2)
    return np.asarray(radius, np.float64) - cs.nearest(world, p, np.float32(1e6)).distance


def corner(rng: np.random.Generator):
    """Two obstacles meeting at an acute corner (5-40 degrees between its sides) at (5, 5):
    two walls, a wall and a circle, or two circles; returns the world, a start point well
    inside the corner's mouth and the unit direction into the corner."""
    world = cs.World()
    apex = np.array([5.0, 5.0])
    ang = rng.uniform(0, 2 * np.pi)
    half = np.radians(rng.uniform(5, 40)) / 2
    u1 = np.array([np.cos(ang + half), np.sin(ang + half)])
    u2 = np.array([np.cos(ang - half), np.sin(ang - half)])
    inward = -(u1 + u2) / np.linalg.norm(u1 + u2)

    def circle_along(u):
        # A circle tangent to the ray apex + s·u at s = 2, on the side away from the mouth.
        n = np.array([u[1], -u[0]])
        n = n if np.dot(n, u1 + u2) < 0 else -n
        rc = rng.uniform(0.3, 2.0)
        world.add_circles([apex + 2.0 * u + rc * n], [rc])

    kind = rng.integers(0, 3)
    world.add_segments([[*apex, *(apex + 4.0 * u1)]]) if kind < 2 else circle_along(u1)
    world.add_segments([[*apex, *(apex + 4.0 * u2)]]) if kind == 0 else circle_along(u2)
    return world, apex - 3.5 * inward, inward


def test_bodies_pressed_into_acute_corners_stay_out():
    """500 seeded corners, each a body swept into it 60 times (a random push towards the
    apex plus noise, 1-4 slide iterations, radius 5-50 cm): never inside a wall."""
    worst = []
    for case in range(500):
        rng = np.random.default_rng(case)
        world, start, inward = corner(rng)
        r = rng.uniform(0.05, 0.5)
        p = np.array([start], np.float32)
        if penetration(world, p, r)[0] > 0 or cs.inside(world, p)[0]:
            continue  # the corner's mouth is narrower than the body
        iterations = int(rng.integers(1, 5))
        for _ in range(60):
            d = (inward * rng.uniform(0.0, 0.1) + rng.normal(0, 0.03, 2)).astype(np.float32)
            p, _ = cs.sweep_circle(world, p, d[None], r, iterations=iterations)
            worst.append(penetration(world, p, r)[0])
    assert len(worst) > 10_000
    assert max(worst) <= ROUNDING, max(worst)


@pytest.mark.parametrize("iterations", [1, 2, 3, 4])
def test_a_slide_ending_on_a_second_obstacle_stops_there(iterations):
    """The fuzz run's move, between a wall and a circle 0.3 mm apart at the body: the
    first contact's skin ends on the circle, the slide along it turns into the wall."""
    world = cs.World()
    world.add_segments([[3.9122486, 7.2290883, 1.8697933, 7.6743317]])
    world.add_circles([[0.84361804, 7.1420727]], [1.1231846])
    r = 0.2738254964351654
    start = np.array([[2.22985697, 7.3152957]], np.float32)
    target = np.array([[2.2280283, 7.32992887]], np.float32)
    assert penetration(world, start, r)[0] <= 0
    p, contacts = cs.sweep_circle(world, start, target - start, r, iterations=iterations)
    assert contacts[0] >= 1
    assert penetration(world, p, r)[0] <= ROUNDING


@pytest.mark.parametrize("slide_iterations", [1, 4])
def test_a_crowd_pressed_into_corners_does_not_sink_into_them(slide_iterations):
    """The fuzz run's crowd (tests/data/crowd_pressed_into_corners.pkl: 130 agents whose
    velocity danger does not see the walls, one of them already 0.6 mm into a circle
    where it meets a wall): 150 steps. No agent goes deeper than that start (before the
    fix: 36 mm with one slide iteration, 1.4 mm with four)."""
    with open(DATA / "crowd_pressed_into_corners.pkl", "rb") as f:
        state = pickle.load(f)
    world, agents = state["world"], state["agents"]
    sim = cs.Simulation(
        world,
        agents,
        state["steering"],
        state["motion"],
        slots=state["slots"],
        slide_iterations=slide_iterations,
    )
    alive = np.asarray(agents.alive)
    radius = np.asarray(agents.radius)[alive]
    start = penetration(world, agents.position[alive], radius).max()
    assert 5e-4 < start < 7e-4
    for _ in range(150):
        sim.step(state["dt"])
        deepest = penetration(world, agents.position[alive], radius).max()
        assert deepest <= start + ROUNDING, deepest


def test_a_body_wedged_between_obstacles_does_not_creep_into_them():
    # A motion fuzz run (seed 66: 165 agents of radius up to 1.5 m among random walls,
    # Lerp, dt 2 s, push-apart with 64 passes) pressed one agent into a wedge narrower
    # than its body. The skin is clipped to nothing there, and each pass's float32 rounding
    # took it an ulp or so into the other wall: 1.4 mm after 400 steps and still growing.
    # A sweep now never ends deeper in an obstacle than it started.
    sim = cs.load(DATA / "wedge_creep.cssim")
    walls = np.asarray(sim.world.walls, np.float64)
    radius = np.asarray(sim.agents.radius, np.float64)
    alive = np.asarray(sim.agents.alive, bool)
    worst = 0.0
    for _ in range(8):
        sim.step(2.0, steps=50)
        worst = max(
            worst, float((penetration(sim.world, sim.agents.position, radius))[alive].max())
        )
    assert len(walls) and worst <= ROUNDING, worst


@pytest.mark.parametrize(
    "start, disp", [((19.3125, 19.125), (-5.5625, -1.875)), ((9.375, 16.875), (6.6875, 4.125))]
)
def test_a_slide_into_a_wedge_far_from_the_origin_is_not_dropped_whole(start, disp):
    # Two walls crossing at a shallow angle; the circle starts 0.9 m clear of both and
    # slides into the wedge. Shifted by +1024 (exact in float32) the last slide ended an
    # ulp deeper than its contact stop, and the depth check dropped the whole move: the
    # circle stayed at its start with 4 contacts, where at the origin it slid 2.8 m.
    # Oracle: the same move at the origin (translation changes only rounding), and the
    # move reaches at least its first contact (what iterations=1 gives).
    segs = np.float32([[-15.375, 9.125, 17.125, 18.75], [-19.375, 14.5, 19.25, 18.25]])
    ends = {}
    for off in (0.0, 64.0, 1024.0):
        o = np.float32(off)
        w = cs.World()
        w.add_segments(segs + o)
        s = np.float32([start]) + o
        first, _ = cs.sweep_circle(w, s, np.float32([disp]), 0.3, iterations=1)
        for it in (2, 3, 4):
            p, c = cs.sweep_circle(w, s, np.float32([disp]), 0.3, iterations=it)
            moved = np.linalg.norm(p[0].astype(np.float64) - s[0])
            assert moved >= np.linalg.norm(first[0].astype(np.float64) - s[0]) - 1e-3, (off, it)
            ends[off, it] = p[0].astype(np.float64) - off
            # and it never ends inside a wall grown by the radius
            assert cs.nearest(w, p, 1.0).distance[0] >= 0.3 - 1e-4, (off, it)
    for it in (2, 3, 4):
        np.testing.assert_allclose(ends[1024.0, it], ends[0.0, it], atol=0.02, err_msg=str(it))


def _inside_triangle(tri, q):
    """Strictly inside the triangle (same sign of every edge's cross product), float64."""
    t = np.asarray(tri, np.float64)
    s = [
        (t[(i + 1) % 3, 0] - t[i, 0]) * (q[1] - t[i, 1])
        - (t[(i + 1) % 3, 1] - t[i, 1]) * (q[0] - t[i, 0])
        for i in range(3)
    ]
    return all(v > 0 for v in s) or all(v < 0 for v in s)


@pytest.mark.parametrize("radius", [0.0, 1e-9, 1e-3])
def test_a_point_in_a_sharp_corner_never_leaves_through_its_vertex(radius):
    """A radius-0 circle a float32 step inside the 37° tip of a closed triangle, moved
    outwards, slid along one wall into the shared vertex and passed between the two walls:
    41 of 117 sweeps ended outside (the depth check r - distance is never positive for
    r = 0 to catch it). Agents of radius 0 escaped closed rooms so, 25-53 times in 2,000
    steps of a game-loop fuzz run."""
    tip = np.array([18.7386, 6.1399], np.float32)
    tri = np.array([[23.6945, 8.4438], tip, [20.2874, 5.8061]], np.float32)
    world = cs.World()
    world.add_polyline(tri, closed=True)
    bis = (tri[0] - tip) / np.linalg.norm(tri[0] - tip)
    bis = bis + (tri[2] - tip) / np.linalg.norm(tri[2] - tip)
    bis /= np.linalg.norm(bis)
    starts, moves = [], []
    for off in np.geomspace(1e-6, 1e-2, 9):
        for th in np.linspace(-0.6, 0.6, 13):
            c, s = np.cos(th), np.sin(th)
            d = np.array([-c * bis[0] + s * bis[1], -s * bis[0] - c * bis[1]])
            st = (tip + off * bis).astype(np.float32)
            if _inside_triangle(tri, st.astype(np.float64)):
                starts.append(st)
                moves.append(0.2 * d)
    assert len(starts) > 100
    end, _ = cs.sweep_circle(world, np.array(starts), np.float32(moves), radius)
    out = [
        q
        for q in end.astype(np.float64)
        if not _inside_triangle(tri, q) and np.linalg.norm(q - tip) > 1e-3
    ]
    assert out == []


def test_a_centre_on_a_plain_walls_line_moves_the_way_it_goes_and_not_into_a_solid():
    """A body whose centre lay exactly on a wall's line was blocked whichever way it
    moved, and the skin stepped it against its motion, to the wall's far side: an agent
    spawned on a room's wall at y = -10 ended outside the room for good (fuzz round 9).
    Every way leaves a plain wall's line; a solid's edge still blocks the way in."""
    line = cs.World()
    line.add_segments([[-10, 0, 10, 0]])
    for d in ([0, 1.0], [0, -1.0], [1.0, 0]):
        end, contacts = cs.sweep_circle(line, [[0.3, 0.0]], [d], 0.1)
        np.testing.assert_array_equal(end, np.float32([[0.3, 0.0]]) + np.float32([d]))
        assert contacts[0] == 0
    box = cs.World()
    box.add_box((0, 0), (1, 1))
    end, contacts = cs.sweep_circle(box, [[1.0, 0.0]], [[-1.0, 0.0]], 0.1)  # into the box
    assert end[0, 0] >= 1.0 and contacts[0] == 1
    room = cs.World()
    room.add_polyline(np.array([[-10, -10], [10, -10], [10, 10], [-10, 10]]), closed=True)
    a = cs.Agents(1, slots=16)
    a.add([[3.0, -10.0]], radius=0.5, max_speed=1.5, max_accel=5, target=[0.0, 0.0])
    sim = cs.Simulation(room, a, cs.Steering([cs.Seek()]), motion=cs.Accel())
    sim.step(1 / 30, 200)
    assert a.position[0, 1] > -10 and np.hypot(*a.position[0]) < 1.0


def test_an_agent_centred_on_a_rooms_wall_with_wall_danger_walks_into_the_room():
    """moves_into said every way was into a wall whose line holds the centre: WallDanger
    marked every slot and the agent stood for good, where 1 mm inside it walked in."""
    room = cs.World()
    room.add_polyline([[0, 0], [10, 0], [10, 10], [0, 10]], closed=True)
    ends = []
    for start in ([0.0, 5.0], [1e-3, 5.0]):
        a = cs.Agents(1)
        a.add([start], radius=0.3, target=[[5, 5]])
        sim = cs.Simulation(room, a, [cs.Seek(), cs.WallDanger()])
        sim.step(0.1, 30)
        ends.append(a.position[0].copy())
    assert ends[0][0] > 1.0 and abs(ends[0][0] - ends[1][0]) < 0.01
