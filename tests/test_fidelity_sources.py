"""Fidelity to the Unity project and the Godot recipe (issue 11): contextsteer against
line-by-line ports of their scripts (tests/reference_unity.py, tests/reference_godot.py)
on the issue's cases and on randomised scenes; the recipe's own parameters lapping the
racetrack (``--preset godot``); the options that make that possible."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contextsteer as cs
import reference_godot as godot
import reference_unity as unity
from contextsteer import scenarios

seeds = st.integers(0, 2**31 - 1)

# --------------------------------------------------------------------------- Unity ---


def test_issue_8_chase_center_between_targets_sums_the_raw_cosines():
    agents = cs.Agents(1)
    agents.add([0, 0])
    targets = [[10, 0], [-10, 1]]
    center = cs.Chase(targets, combine="center", falloff="none").evaluate(agents, 8).interest[0]
    assert abs(center[0] - 0.005) < 5e-4  # the Unity project: 1 − 10/√101
    clamped = cs.Chase(targets, combine="sum", falloff="none").evaluate(agents, 8).interest[0]
    assert clamped[0] == pytest.approx(1.0)  # contextsteer's sum of clamped scores
    want = unity.merge(
        [unity.chase_interest((0, 0), targets, math.inf, True, unity.directions(8))], 8
    )
    np.testing.assert_allclose(center, want, atol=1e-6)


def test_issue_9_unity_argmax_picks_a_slot_when_none_is_positive():
    # Everything around is dangerous: interest − danger < 0 in every slot.
    agents = cs.Agents(1)
    agents.add([0, 0], max_speed=2, max_accel=20)
    ring = 3 * cs.slot_directions(8)  # danger 1 in every slot, interest below 1 in all
    st_ = cs.Steering(
        [cs.Chase([[10, 3]], falloff="none"), cs.Avoid(ring, falloff="none", max_distance=5)],
        resolve="subtract_unclamped",
        choose="argmax_always",
    )
    sim = cs.Simulation(None, agents, st_, motion=cs.Accel(speed="max"), slots=8)
    sim.perceive()
    interest, idx = unity.choose(
        [sim.interest[0].tolist()], [sim.danger[0].tolist()], unity.directions(8)
    )
    sim.decide_and_move(0.1)
    assert max(interest) < 0
    assert sim.chosen_slot[0] == idx  # the Unity project's slot ...
    np.testing.assert_allclose(sim.resolved[0], interest, atol=1e-6)
    assert np.hypot(*agents.velocity[0]) > 0  # ... and it moves
    # contextsteer's own argmax: no slot, the agent stays put
    still = cs.Agents(1)
    still.add([0, 0], max_speed=2, max_accel=20)
    sim2 = cs.Simulation(
        None,
        still,
        cs.Steering(st_.behaviours, resolve="subtract", choose="argmax"),
        motion=cs.Accel(),
        slots=8,
    )
    sim2.step(0.1)
    assert sim2.chosen_slot[0] == -1 and np.hypot(*still.velocity[0]) == 0


@given(seed=seeds, k=st.sampled_from([4, 8, 12, 16]), center=st.booleans())
@settings(max_examples=60, deadline=None)
def test_unity_chase_avoid_matches_the_port(seed, k, center):
    rng = np.random.default_rng(seed)
    n = 6
    agents = cs.Agents(n)
    pos = rng.integers(-4, 5, (n, 2)).astype(np.float32)  # lattice: exact ties happen
    agents.add(pos)
    chase = rng.integers(-6, 7, (3, 2)).astype(np.float32)
    avoid = rng.integers(-6, 7, (3, 2)).astype(np.float32)
    chase[0] = pos[0]  # a target on agent 0
    if (chase[1] == pos[1]).all():
        chase[1, 0] += 1
    dist = unity.magnitude(chase[1] - pos[1])  # agent 1's target exactly at max distance
    st_ = cs.Steering(
        [
            cs.Chase(
                chase, max_distance=dist, falloff="none", combine="center" if center else "max"
            ),
            cs.Avoid(avoid, max_distance=6.0, falloff="none"),
        ],
        combine="max",
        resolve="subtract_unclamped",
        choose="argmax_always",
    )
    sim = cs.Simulation(None, agents, st_, slots=k)
    sim.perceive()
    sim.decide_and_move(0.01)
    dirs = unity.directions(k)
    for i in range(n):
        p = tuple(map(float, pos[i]))
        im = unity.chase_interest(p, [tuple(map(float, c)) for c in chase], dist, center, dirs)
        dm = unity.avoid_danger(p, [tuple(map(float, a)) for a in avoid], 6.0, dirs)
        final, idx = unity.choose([im], [dm], dirs)
        np.testing.assert_allclose(sim.resolved[i], final, atol=2e-6, err_msg=f"agent {i}")
        # the first slot holding the maximum (FindIndex); values within float32 rounding of
        # each other are ties (exact ties are common on the lattice)
        got = int(sim.chosen_slot[i])
        assert final[got] >= max(final) - 1e-6, f"agent {i}: {final}"
        assert got == int(np.argmax(sim.resolved[i]))  # FindIndex: the first of exact ties
        if sorted(final)[-2] < max(final) - 1e-6:
            assert got == idx


# --------------------------------------------------------------------------- Godot ---


def recipe_sim(world, pos, heads, vel, path, n, walls_hit_agents=True, collision="stop"):
    agents = cs.Agents(n)
    agents.add(pos, heading=heads, velocity=vel, radius=16.0, max_speed=350.0, steer_force=0.1)
    st_ = cs.Steering(
        [cs.FollowPath(path), cs.WallDanger(look_ahead=100, ray_radius=0, agents=walls_hit_agents)],
        resolve="mask",
        threshold=0.0,
        choose="vector_sum",
        contiguous=False,
        rotate=True,
    )
    return agents, cs.Simulation(
        world,
        agents,
        st_,
        motion=cs.Lerp(steer_force=0.1, speed="max"),
        collision=collision,
        push_apart=False,
        slots=8,
    )


@given(seed=seeds)
@settings(max_examples=40, deadline=None)
def test_godot_recipe_steps_match_the_port(seed):
    rng = np.random.default_rng(seed)
    walls = rng.uniform(-300, 300, (5, 4)).astype(np.float32)
    world = cs.World()
    world.add_segments(walls)
    path = cs.Path(rng.uniform(-300, 300, (5, 2)), closed=True)
    n = 6
    pos = rng.uniform(-250, 250, (n, 2)).astype(np.float32)
    heads = rng.uniform(-np.pi, np.pi, n).astype(np.float32)
    # speeds up to max_speed (the recipe's lerp never exceeds it; contextsteer clamps), some still
    ang = rng.uniform(-np.pi, np.pi, n)
    vel = (
        np.c_[np.cos(ang), np.sin(ang)]
        * rng.uniform(0, 350, (n, 1))
        * (rng.uniform(size=(n, 1)) < 0.7)
    )
    vel = vel.astype(np.float32)
    agents, sim = recipe_sim(world, pos, heads, vel, path, n)
    # Godot moves the cars one after the other, each reading the ones already moved;
    # contextsteer reads every car's state at t (double buffering): the port reads the
    # snapshot at t too.
    cars = [
        godot.Agent(tuple(map(float, pos[i])), float(heads[i]), tuple(map(float, vel[i])))
        for i in range(n)
    ]

    def get_path_direction(p):
        return tuple(map(float, path.tangent_at(path.closest_offset([p]))[0]))

    intersect_ray = godot.space([tuple(map(float, w)) for w in walls], cars, 16.0)
    dt = 1 / 60
    snapshot = cars
    for c in cars:
        c.next = godot.Agent(c.position, c.rotation, c.velocity)
        c.next._physics_process(
            dt, get_path_direction, lambda p, q, ex, c=c: intersect_ray(p, q, c)
        )
    sim.step(dt)
    pts = np.asarray(path.points, np.float64)
    corners = np.r_[0.0, np.cumsum(np.hypot(*(np.roll(pts, -1, 0) - pts).T))]
    for i, s in enumerate(snapshot):
        if ray_grazes(s, walls, snapshot) or sim.wall_contacts[i]:
            continue  # a ray grazing a wall end or a car: float32 may see it the other way
        if any(o is not s and math.dist(o.position, s.position) < 32 + 1e-2 for o in snapshot):
            continue  # overlapping cars (Godot stops them first): here rays may leave, there all hit
        if np.abs(corners - path.closest_offset([s.position])[0]).min() < 1e-2:
            continue  # closest to a corner: the tangent of either segment (the float32 offset decides)
        nxt = s.next
        np.testing.assert_allclose(agents.velocity[i], nxt.velocity, atol=2e-3, err_msg=f"car {i}")
        np.testing.assert_allclose(agents.position[i], nxt.position, atol=2e-3)
        if math.hypot(*nxt.velocity) > 0:  # Godot: velocity.angle() of zero is 0; kept here
            assert abs(math.remainder(float(agents.heading[i]) - nxt.rotation, 2 * math.pi)) < 1e-4


def ray_grazes(car, walls, cars):
    for k in range(8):
        d = godot.rotated(car.ray_directions[k], car.rotation)
        for x0, y0, x1, y1 in walls:
            for px, py in ((x0, y0), (x1, y1)):
                wx, wy = px - car.position[0], py - car.position[1]
                t = wx * d[0] + wy * d[1]
                if -1 < t < 101 and abs(d[0] * wy - d[1] * wx) < 1e-2:
                    return True
            # the ray's end on a wall
            ex, ey = car.position[0] + d[0] * 100, car.position[1] + d[1] * 100
            L = math.hypot(x1 - x0, y1 - y0)
            if abs((x1 - x0) * (ey - y0) - (y1 - y0) * (ex - x0)) / L < 1e-2:
                return True
        for o in cars:
            if o is car:
                continue
            cx, cy = o.position[0] - car.position[0], o.position[1] - car.position[1]
            t = cx * d[0] + cy * d[1]
            if -17 < t < 117 and abs(abs(d[0] * cy - d[1] * cx) - 16) < 1e-2:
                return True
            if abs(math.hypot(cx - d[0] * 100, cy - d[1] * 100) - 16) < 1e-2:
                return True
    return False


def test_godot_preset_laps_the_track_without_touching_a_wall():
    sc = scenarios.get("racetrack")
    steps, dt = sc.timing("godot")
    assert (steps, dt) == (3600, 1 / 60)
    sim = sc(preset="godot")
    assert sim.agents.max_speed.tolist() == [350.0] * 4 and sim.interest.shape[1] == 8
    sim.step(dt, steps=steps)
    report = sc.report(sim)
    assert min(report["laps"]) >= 3, report["laps"]
    assert report["wall_contacts"]["steps"] == 0 and int(sim.wall_contacts.sum()) == 0
    # the track's walls are the centre line offset by 100 px, not folded over a tight bend
    world, centre = scenarios.racetrack_geometry(200.0, 6.0)
    gap = cs.nearest(world, centre.points, 500.0).distance
    assert abs(gap.min() - 100.0) < 2 and abs(gap.max() - 100.0) < 2
    folded, centre4 = scenarios.racetrack_geometry(200.0, 4.0)  # 100 > 18.7·4: folds
    assert cs.nearest(folded, centre4.points, 500.0).distance.min() < 98
    # overridable: a parameter given beats the preset's
    assert scenarios.get("racetrack")(preset="godot", agents=2).agents.capacity == 2
    with pytest.raises(ValueError, match="preset"):
        scenarios.get("racetrack")(preset="unity")


def test_cli_runs_the_godot_preset(tmp_path):
    from contextsteer.cli import main

    out = tmp_path / "godot"
    assert (
        main(
            [
                "run",
                "racetrack",
                "--preset",
                "godot",
                "--steps",
                "240",
                "--frames",
                "2",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["parameters"]["preset"] == "godot" and metrics["dt"] == pytest.approx(1 / 60)
    assert main(["run", "racetrack", "--preset", "nope", "--quiet", "--out", str(out)]) == 2
    assert main(["run", "corridor", "--preset", "godot", "--quiet", "--out", str(out)]) == 2


def test_ray_radius_thin_rays_and_rays_that_see_agents():
    # A short wall at x = 5 and another agent at (0, 6) of radius 1; agent 0 of radius 3.
    world = cs.World()
    world.add_segments([[5, -2, 5, 2]])
    agents = cs.Agents(2)
    agents.add([[0, 0], [0, 6]], radius=[3.0, 1.0])
    thick = cs.WallDanger(look_ahead=10).evaluate(agents, 8, world=world).danger[0]
    thin = cs.WallDanger(look_ahead=10, ray_radius=0).evaluate(agents, 8, world=world).danger[0]
    # thick rays (radius 3) graze the short wall from the 45° slots too; thin ones only ahead
    assert thin.tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert thick[0] == 1 and thick[1] == 1 and thick[7] == 1
    seeing = (
        cs.WallDanger(look_ahead=10, ray_radius=0, agents=True)
        .evaluate(agents, 8, world=world)
        .danger
    )
    assert seeing[0].tolist() == [1, 0, 1, 0, 0, 0, 0, 0]  # the slot towards agent 1 too
    assert seeing[1][6] == 1  # and agent 1 sees agent 0 below it
    # distance: a thin ray hits agent 1's circle (radius 1) at 5; ray_radius 0.5 at 4.5
    lin = cs.WallDanger(look_ahead=10, ray_radius=0.5, agents=True, falloff="linear")
    assert lin.evaluate(agents, 8, world=world).danger[0][2] == pytest.approx(1 - 4.5 / 10)
    thin_lin = cs.WallDanger(look_ahead=10, ray_radius=0, agents=True, falloff="linear")
    assert thin_lin.evaluate(agents, 8, world=world).danger[0][2] == pytest.approx(1 - 5 / 10)
    # no world: the agent rays still work
    assert (
        cs.WallDanger(look_ahead=10, ray_radius=0, agents=True).evaluate(agents, 8).danger[0][2]
        == 1
    )


def test_lerp_speed_max_is_the_recipes_full_speed():
    agents = cs.Agents(1)
    agents.add([0, 0], max_speed=10.0)
    s = cs.Lerp(steer_force=0.5).apply(agents, [[1, 0]], [0.2], dt=0.1)
    np.testing.assert_allclose(s.velocity[0], [1.0, 0])  # lerp to 10·0.2
    s = cs.Lerp(steer_force=0.5, speed="max").apply(agents, [[1, 0]], [0.2], dt=0.1)
    np.testing.assert_allclose(s.velocity[0], [5.0, 0])  # lerp to 10, whatever the strength
    s = cs.Lerp(steer_force=0.5, speed="max").apply(agents, [[0, 0]], [1.0], dt=0.1)
    np.testing.assert_allclose(s.velocity[0], [0.0, 0])  # no direction: no speed
    fast = cs.Agents(1)
    fast.add([0, 0], max_speed=10.0, max_accel=1000.0)
    assert cs.Accel().apply(fast, [[0, 1]], [0.1], dt=0.1).velocity[0, 1] == pytest.approx(1.0)
    assert cs.Accel(speed="max").apply(fast, [[0, 1]], [0.1], dt=0.1).velocity[
        0, 1
    ] == pytest.approx(10.0)
    car = cs.Agents(1)
    car.add([0, 0], velocity=[2, 0], max_speed=4, max_accel=100, max_turn_rate=1)
    assert cs.Vehicle(speed="max").apply(car, [[1, 0]], [0.25], dt=0.1).velocity[
        0, 0
    ] == pytest.approx(4)


def test_collision_stop_keeps_the_velocity_at_the_wall():
    world = cs.World()
    world.add_segments([[2, -5, 2, 5]])
    out = {}
    for mode in ("slide", "stop"):
        agents = cs.Agents(1)
        agents.add([0, 0], velocity=[3, 3], heading=math.pi / 4, radius=0.5, max_speed=10)
        sim = cs.Simulation(
            world,
            agents,
            cs.Steering([cs.Seek([[100, 100]])]),
            motion=cs.Lerp(steer_force=0.0),
            collision=mode,
        )
        sim.step(1.0)
        out[mode] = (
            agents.position[0].copy(),
            agents.velocity[0].copy(),
            int(sim.wall_contacts[0]),
        )
    # slide: on along the wall, the velocity loses its x; stop: at the contact, velocity kept
    assert out["slide"][0][1] > out["stop"][0][1] + 1
    np.testing.assert_allclose(out["stop"][0], [1.5, 1.5], atol=2e-3)
    np.testing.assert_allclose(out["stop"][1], [3, 3])
    assert out["slide"][1][0] == 0 and out["stop"][2] == out["slide"][2] == 1
    with pytest.raises(ValueError, match="collision"):
        cs.Simulation(world, cs.Agents(1), cs.Steering([]), collision="bounce")


def test_sweep_runs_a_preset_at_its_own_dt():
    res = cs.sweep(
        "racetrack", {"preset": ["godot"]}, seeds=1, steps=60, executor="serial", progress=False
    )
    metrics = list(res)[0].result["metrics"]
    assert metrics["steps"] == 60 and metrics["time"] == pytest.approx(1.0)  # steps of 1/60 s


def test_godot_levels_of_danger_read_literally_push_away_from_danger():
    # The recipe: "subtract that amount from the interest rather than removing it", then
    # its choose_direction sums ray_directions[i] * interest[i] over every slot. Worked by
    # hand, K = 8, forward interest max(0, cos), danger 0.3 at 45° and 0.6 at 90° left:
    # interest - danger = [1, 0.407, -0.6, 0, 0, 0, 0, 0.707]; the sum is
    # (1.7878, -0.8122), a heading of -24.43°. vector_sum skipped the negative slot and
    # headed -6.8° whatever the 0.6 danger was.
    k = 8
    slots = cs.SlotSet(k)
    interest = np.maximum(0.0, slots.directions @ np.float32([1.0, 0.0]))[None].astype(np.float32)
    danger = np.zeros((1, k), np.float32)
    danger[0, 1], danger[0, 2] = 0.3, 0.6
    c = cs.steer(
        [interest], danger, slots, resolve="subtract_unclamped", choose="vector_sum_signed"
    )
    v = interest[0].astype(np.float64) - danger[0]
    want = (v[:, None] * slots.directions.astype(np.float64)).sum(axis=0)
    assert math.degrees(math.atan2(want[1], want[0])) == pytest.approx(-24.43, abs=0.01)
    np.testing.assert_allclose(c.direction[0], want / np.hypot(*want), atol=1e-6)
    assert c.slot[0] == 0 and c.strength[0] == 1.0
    # Without the 0.6 danger the heading changes (it did not with vector_sum).
    danger[0, 2] = 0.0
    d = cs.steer(
        [interest], danger, slots, resolve="subtract_unclamped", choose="vector_sum_signed"
    )
    assert abs(math.atan2(d.direction[0, 1], d.direction[0, 0])) < math.radians(20)
