"""The seeds' scenarios, built in the test with small worlds, run on the simulation step.

(a) Godot recipe: cars on an elliptical track with a centre-line path complete a lap
    without touching a wall; (b) Unity ContextSteering: a chase + avoid agent crosses a
    corridor with obstacles to its target; (c) Lewis: a flock with separation keeps a
    minimum spacing; (d) Godot with randomised speeds: a fast car overtakes a slow one
    without collision. (a) also runs time-sliced (decision interval 3).
"""

import numpy as np
import pytest

import contextsteer as cs


def ellipse(a, b, m=96):
    t = 2 * np.pi * np.arange(m) / m
    return np.stack([a * np.cos(t), b * np.sin(t)], 1)


def track():
    world = cs.World()
    world.add_polyline(ellipse(100, 60), closed=True)
    world.add_polyline(ellipse(80, 40), closed=True)
    return world, cs.Path(ellipse(90, 50), closed=True)


def segment_distance(p, segs):
    a, b = segs[:, :2].astype(np.float64), segs[:, 2:].astype(np.float64)
    ab = b - a
    ap = p[:, None, :].astype(np.float64) - a[None]
    t = np.clip((ap * ab).sum(-1) / (ab * ab).sum(-1), 0, 1)
    return np.linalg.norm(ap - t[..., None] * ab, axis=-1).min(1)


class Laps:
    """Distance travelled along a closed path (unwrapped closest offsets)."""

    def __init__(self, path, positions):
        self.path, self.last = path, path.closest_offset(positions).astype(np.float64)
        self.total = np.zeros(len(positions))

    def update(self, positions):
        off = self.path.closest_offset(positions).astype(np.float64)
        half = self.path.length / 2
        self.total += (off - self.last + half) % self.path.length - half
        self.last = off


def add_cars(agents, path, offsets, speeds, start_speed=5.0):
    p, t = path.point_at(offsets), path.tangent_at(offsets)
    agents.add(
        p,
        velocity=t * start_speed,
        heading=np.arctan2(t[:, 1], t[:, 0]),
        radius=2.0,
        max_speed=speeds,
    )


@pytest.mark.parametrize("interval", [1, 3])
def test_godot_cars_complete_a_lap_without_touching_a_wall(interval):
    world, path = track()
    agents = cs.Agents(4, slots=16)
    add_cars(agents, path, np.array([0, 20, 40, 60.0]), np.array([25, 28, 30, 32.0]))
    steering = cs.Steering(
        [cs.FollowPath(path, look_ahead=15), cs.WallDanger(look_ahead=12, spread=1)],
        resolve="mask",
        choose="vector_sum",
        rotate=True,
    )
    sim = cs.Simulation(
        world, agents, steering, motion=cs.Lerp(steer_force=0.1), decision_interval=interval
    )
    laps, walls = Laps(path, agents.position), np.asarray(world.walls)
    closest = np.inf
    for _ in range(700):
        sim.step(1 / 30)
        laps.update(agents.position)
        closest = min(closest, segment_distance(agents.position, walls).min())
    assert (laps.total >= path.length).all()  # a full lap each, counter-clockwise
    assert closest > agents.radius[0]  # never touched a wall
    assert not sim.wall_contacts.any()


def test_unity_chase_and_avoid_crosses_a_corridor_with_obstacles():
    world = cs.World()
    world.add_polyline([[0, -5], [60, -5], [60, 5], [0, 5]], closed=True)
    obstacles = np.array([[20, 1.5], [35, -1.5], [47, 1.0]], np.float32)
    world.add_circles(obstacles, [2.0, 2.0, 2.0])
    agents = cs.Agents(1, slots=16)
    agents.add([2, 0], radius=0.5, max_speed=4.0, max_accel=8.0)
    goal = np.array([[57.0, 0.0]], np.float32)
    steering = cs.Steering(
        [
            cs.Chase(goal),
            cs.Avoid(obstacles, max_distance=5.0),
            cs.WallDanger(look_ahead=1.5, falloff="linear"),
        ],
        resolve="subtract",
        choose="argmax",
    )  # the Unity project's choices
    sim = cs.Simulation(world, agents, steering, motion=cs.Accel())
    for _ in range(500):
        sim.step(0.05)
        if np.hypot(*(agents.position[0] - goal[0])) < 1.0:
            break
    assert np.hypot(*(agents.position[0] - goal[0])) < 1.0
    assert not sim.wall_contacts.any()  # went round, never scraped


@pytest.mark.parametrize("seed", [16, 22, 37])
def test_the_corridor_strands_its_walker_by_an_obstacle_and_its_route_leads_it_home(seed):
    """On these seeds the Unity demo's steering (Chase against Avoid) walks the lone
    walker into the gap between an obstacle and a wall, 1.1 m for a 1 m body, and leaves
    it there for four times the scenario's run; ``route=True`` follows a navigation field
    whose route keeps clear of every gap narrower than 1.6 m, and gets it home without a
    wall contact."""
    sc = cs.scenarios.get("corridor")
    stranded = sc(seed=seed)
    stranded.step(sc.dt, steps=4 * sc.steps)
    p = stranded.agents.position[0].astype(np.float64)
    assert np.isnan(stranded.agent_metrics.time_to_goal[0])
    centres, radii = stranded.world.circles
    gap = np.hypot(*(centres - p).T) - radii  # from the walker's centre to each obstacle
    assert gap.min() < 0.6 and 5.0 - abs(p[1]) < 1.0  # wedged between an obstacle and a wall
    led = sc(seed=seed, route=True)
    led.step(sc.dt, steps=sc.steps)
    assert not np.isnan(led.agent_metrics.time_to_goal[0])
    m = led.metrics()
    assert m["collisions"]["agent_wall"] == 0 and m["min_clearance"]["wall"] > 0.1


def test_the_corridors_route_flag_is_checked():
    with pytest.raises(ValueError, match="corridor: route must be True or False"):
        cs.scenarios.get("corridor")(route="yes")


def run_flock(with_separation):
    n = 40
    rng = np.random.default_rng(1)
    agents = cs.Agents(n, slots=16)
    grid = np.stack(np.meshgrid(np.arange(8), np.arange(5)), -1).reshape(-1, 2) * 1.5
    agents.add(
        grid + rng.uniform(-0.2, 0.2, (n, 2)),
        radius=0.3,
        max_speed=2.0,
        max_accel=4.0,
        target=[40, 0],
    )
    rules = [
        cs.Seek(weight=0.5),
        cs.Alignment(radius=3.0, weight=0.2),
        cs.Cohesion(radius=4.0, weight=0.2),
    ]
    if with_separation:
        rules.append(cs.Separation(radius=2.5, weight=3.0))
    steering = cs.Steering(rules, combine="sum", resolve="subtract", choose="weighted_neighbours")
    sim = cs.Simulation(None, agents, steering, motion=cs.Accel(), push_apart=False)
    spacing = np.inf
    for _ in range(300):
        sim.step(0.05)
        p = agents.position.astype(np.float64)
        d = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1))
        spacing = min(spacing, d[np.triu_indices(n, 1)].min())
    return spacing, agents.position.mean(axis=0)


def test_lewis_flock_with_separation_keeps_a_minimum_spacing():
    spacing, centre = run_flock(True)
    assert spacing >= 1.0  # radius 0.3: bodies stay well apart
    assert centre[0] > 15  # and the flock travels towards its target
    collapsed, _ = run_flock(False)
    assert collapsed < 0.6  # without separation they pile up


def test_godot_fast_car_overtakes_a_slow_one_without_collision():
    world, path = track()
    agents = cs.Agents(2, slots=16)
    add_cars(agents, path, np.array([30.0, 10.0]), np.array([10.0, 30.0]), start_speed=10.0)
    steering = cs.Steering(
        [
            cs.FollowPath(path, look_ahead=15),
            cs.WallDanger(look_ahead=3),
            cs.AgentDanger(radius=4, predictive=True, horizon=1.0),
        ],
        resolve="mask",
        threshold=0.1,
        choose="vector_sum",
        rotate=True,
    )
    sim = cs.Simulation(world, agents, steering, motion=cs.Lerp(steer_force=0.15), push_apart=False)
    laps = Laps(path, agents.position)
    closest = np.inf
    for _ in range(600):
        sim.step(1 / 30)
        laps.update(agents.position)
        closest = min(closest, float(np.hypot(*(agents.position[0] - agents.position[1]))))
    lead = (10.0 + laps.total[1]) - (30.0 + laps.total[0])
    assert lead > 50  # the fast car is well ahead of the slow one
    assert closest > 4.0  # two radii: they never touched
    assert not sim.overlaps.any() and not sim.wall_contacts.any()
