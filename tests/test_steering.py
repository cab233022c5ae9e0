"""Steering pipeline: the world/path behaviours against the oracle, and the simulation's
stages against the functional API composed by hand."""

import numpy as np
import pytest

import contextsteer as cs
import reference as ref
import reference_agents as ra


def box_world():
    world = cs.World()
    world.add_polyline([[-20, -20], [20, -20], [20, 20], [-20, 20]], closed=True)
    world.add_segments([[-5, -8, 5, -6], [8, 2, 9, 12]])
    world.add_circles([[-8, 6], [4, 4]], [2.0, 1.0])
    return world


def ring(k):
    a = 2 * np.pi * np.arange(k) / k
    return np.stack([np.cos(a), np.sin(a)], 1).astype(np.float32)


def random_agents(n, seed, world=None, clearance=0.0, **kw):
    rng = np.random.default_rng(seed)
    pts = []
    while len(pts) < n:
        p = rng.uniform(-18, 18, 2)
        if world is not None:
            nr = cs.nearest(world, p[None].astype(np.float32), 1e3)
            if nr.distance[0] < clearance:
                continue
        pts.append(p)
    a = cs.Agents(n, seed=seed)
    a.add(
        np.array(pts),
        velocity=rng.normal(size=(n, 2)),
        heading=rng.uniform(-3, 3, n),
        radius=rng.uniform(0.3, 1.0, n),
        max_speed=2.0,
        max_accel=3.0,
        max_turn_rate=2.0,
        target=rng.uniform(-15, 15, (n, 2)),
        **kw,
    )
    return a


# ----------------------------------------------------------------- behaviours ---


@pytest.mark.parametrize("mode", ["tangent", "seek"])
@pytest.mark.parametrize("look_ahead", [0.0, 3.0, -2.0])
def test_follow_path_matches_oracle(mode, look_ahead):
    path = cs.Path([[-10, -5], [10, -5], [12, 8], [-6, 10]], closed=True)
    a = random_agents(30, 1)
    maps = cs.FollowPath(path, look_ahead=look_ahead, mode=mode, weight=0.7).evaluate(a, 16)
    u = path.direction(a.position, look_ahead, mode=mode)
    np.testing.assert_allclose(maps.interest, ra.follow_path(u, ring(16), 0.7), atol=1e-5)
    assert not maps.danger.any()


def test_follow_path_rotated_slots_put_the_path_in_the_agent_frame():
    path = cs.Path([[-10, 0], [10, 0]])
    a = cs.Agents(1)
    a.add([0, 1], heading=np.pi / 2)  # facing +y, path runs along +x
    m = cs.FollowPath(path).evaluate(a, 4, rotate=True).interest[0]
    np.testing.assert_allclose(m, [0, 0, 0, 1], atol=1e-6)  # slot 3 = agent's right = +x


@pytest.mark.parametrize("falloff", ["binary", "linear", "quadratic"])
@pytest.mark.parametrize("spread", [0, 1, 2])
@pytest.mark.parametrize("padding", [0.0, 0.5])
def test_wall_danger_matches_oracle(falloff, spread, padding):
    world = box_world()
    k, look = 16, 6.0
    a = random_agents(25, 3, world, clearance=1.0 + padding + 0.05)
    b = cs.WallDanger(look_ahead=look, falloff=falloff, spread=spread, padding=padding, weight=0.8)
    got = b.evaluate(a, k, world=world).danger
    walls = np.asarray(world.walls)
    circles = world.circles
    dist = np.empty((len(a), k))
    for i in range(len(a)):
        dist[i] = ref.ref_raycast(
            walls,
            circles,
            [],
            np.repeat(a.position[i : i + 1], k, 0),
            ring(k),
            look,
            radius=float(a.radius[i]) + padding,
        )
    want = 0.8 * ra.wall_danger_from_distances(dist, look, falloff, spread)
    # Hits within float rounding of the look-ahead may go either way.
    ok = ~(np.abs(dist - look) < 1e-3).any(axis=1)
    assert ok.sum() >= 20
    np.testing.assert_allclose(got[ok], want[ok], atol=1e-4)


def test_wall_danger_godot_binary_and_rotation():
    world = cs.World()
    world.add_segments([[3, -5, 3, 5]])
    a = cs.Agents(2)
    a.add([[0, 0], [0, 0]], radius=0.5, heading=[0.0, np.pi / 2])
    d = cs.WallDanger(look_ahead=3).evaluate(a, 8, world=world, rotate=True).danger
    # Agent 0 faces the wall: forward slot (and the diagonals reach it); agent 1 faces +y:
    # the wall is on its right (slot 6 in its frame).
    assert d[0, 0] == 1 and d[0, 4] == 0
    assert d[1, 6] == 1 and d[1, 0] == 0


def test_wall_danger_touching_a_wall_keeps_only_slots_into_it():
    world = cs.World()
    world.add_segments([[1, -5, 1, 5]])
    a = cs.Agents(1)
    a.add([0.2, 0], radius=1.0)  # overlaps the wall (placed by the user)
    d = cs.WallDanger(look_ahead=2).evaluate(a, 8, world=world).danger[0]
    assert d[0] == 1 and d[1] == 1 and d[7] == 1  # into the wall
    assert d[2] == 0 and d[4] == 0 and d[6] == 0  # along it and away


@pytest.mark.parametrize(
    "start, heading, want",
    [
        ([0.2, 0.3], 0.0, [1, 1, 1, 1, 0, 0, 0, 1]),  # nearer the wall y = 1
        ([0.3, 0.2], 0.0, [1, 1, 1, 1, 0, 0, 0, 1]),  # nearer the wall x = 1
        # Slots turned by a quarter turn: slot j points at 45°·j + 90° in the world.
        ([0.2, 0.3], np.pi / 2, [1, 1, 0, 0, 0, 1, 1, 1]),
    ],
)
def test_wall_danger_in_a_corner_keeps_the_slots_into_either_wall(start, heading, want):
    # Walls x = 1 and y = 1 meet in a corner and the body overlaps both. A slot into either
    # wall stays dangerous (only the nearer wall's normal was asked before, and the slots
    # into the other wall read free); slots away from both, or along one and away from the
    # other, are free. Oracle: the corner worked by hand, slot by slot.
    world = cs.World()
    world.add_segments([[1, -5, 1, 5], [-5, 1, 5, 1]])
    a = cs.Agents(1)
    a.add(start, radius=1.0, heading=heading)
    d = cs.WallDanger(look_ahead=2).evaluate(a, 8, world=world, rotate=True).danger[0]
    np.testing.assert_array_equal(d, want)


def test_wall_danger_without_world_refused_and_validation():
    a = random_agents(3, 0)
    with pytest.raises(ValueError, match="world is needed"):
        cs.WallDanger(look_ahead=2).evaluate(a, 8)
    # With agents=True its rays see the other agents, so a world is optional.
    assert cs.WallDanger(look_ahead=2, agents=True).evaluate(a, 8).danger.shape == (3, 8)
    with pytest.raises(ValueError, match="falloff"):
        cs.WallDanger(falloff="cubic")
    with pytest.raises(ValueError, match="look_ahead"):
        cs.WallDanger(look_ahead=0)
    with pytest.raises(ValueError, match="spread"):
        cs.WallDanger(spread=-1)
    with pytest.raises(TypeError, match="Path"):
        cs.FollowPath([[0, 0], [1, 0]])
    with pytest.raises(ValueError, match="mode"):
        cs.FollowPath(cs.Path([[0, 0], [1, 0]]), mode="carrot")


# ------------------------------------------------------------------- steering ---


def test_steering_validation_lists_the_choices():
    with pytest.raises(ValueError, match="'max', 'sum', 'multiply', 'min'"):
        cs.Steering([cs.Seek()], combine="weighted_sum")
    with pytest.raises(ValueError, match="resolve must be one of"):
        cs.Steering([cs.Seek()], resolve="nope")
    with pytest.raises(ValueError, match="choose must be one of"):
        cs.Steering([cs.Seek()], choose="best")
    with pytest.raises(ValueError, match="blend"):
        cs.Steering([cs.Seek()], blend=1.5)
    with pytest.raises(ValueError, match="odd"):
        cs.Steering([cs.Seek()], spread=[0.5, 0.5])
    with pytest.raises(TypeError, match="behaviours"):
        cs.Steering(["seek"])
    s = cs.Steering([cs.Seek(), cs.Seek(), cs.Forward()])
    assert s.names == ("Seek", "Seek_1", "Forward")


CASES = [
    dict(combine="max", danger_combine="max", resolve="mask", choose="vector_sum"),
    dict(combine="sum", danger_combine="sum", resolve="subtract", choose="argmax"),
    dict(
        combine="max", danger_combine="max", resolve="scale", choose="weighted_neighbours", width=3
    ),
    dict(
        combine="max",
        danger_combine="max",
        resolve="mask_min_danger",
        epsilon=0.05,
        choose="subslot",
    ),
    dict(
        combine="sum",
        danger_combine="max",
        resolve="avoid_opposite",
        choose="vector_sum",
        contiguous=False,
    ),
    dict(
        combine="max",
        danger_combine="max",
        resolve="subtract",
        choose="vector_sum",
        spread=[0.5, 1.0, 0.5],
        spread_mode="max",
        spread_maps="both",
    ),
    dict(
        combine="max",
        danger_combine="sum",
        resolve="mask",
        threshold=0.3,
        choose="subslot",
        spread=[0.25, 0.5, 0.25],
        spread_mode="sum",
    ),
    dict(combine="max", danger_combine="max", resolve="subtract", choose="subslot_linear"),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("rotate", [False, True])
def test_pipeline_equals_the_functional_api_by_hand(case, rotate):
    k = 16
    world = box_world()
    a = random_agents(60, 7, world, clearance=1.1)
    path = cs.Path([[-12, -12], [12, -12], [12, 12], [-12, 12]], closed=True)
    behaviours = [
        cs.Seek(weight=0.9),
        cs.FollowPath(path, look_ahead=2, weight=0.5),
        cs.Wander(weight=0.3),
        cs.AgentDanger(radius=3.0, predictive=True),
        cs.WallDanger(look_ahead=4, falloff="linear", spread=1),
        cs.Avoid([[0, 0]], max_distance=8),
    ]
    steering = cs.Steering(behaviours, rotate=rotate, record=True, max_neighbours=12, **case)
    motion = cs.Lerp(steer_force=0.3)
    sim = cs.Simulation(world, a, steering, motion, slots=k, push_apart=False)
    sim.step(0.1, 3)  # a few steps first: time, headings and velocities move on

    sim.perceive()
    maps = {}
    for name, b in zip(steering.names, behaviours):
        m = b.evaluate(a, k, rotate=rotate, time=sim.time, max_neighbours=12, world=world)
        maps[name] = m.interest if b.writes == "interest" else m.danger
        np.testing.assert_array_equal(sim.behaviour_maps[name], maps[name], err_msg=name)
    interest = cs.combine(
        [maps[n] for n, b in zip(steering.names, behaviours) if b.writes == "interest"],
        case["combine"],
    )
    danger = cs.combine(
        [maps[n] for n, b in zip(steering.names, behaviours) if b.writes == "danger"],
        case["danger_combine"],
    )
    if "spread" in case:
        sm = case.get("spread_maps", "danger")
        if sm in ("interest", "both"):
            interest = cs.spread(interest, case["spread"], case["spread_mode"])
        if sm in ("danger", "both"):
            danger = cs.spread(danger, case["spread"], case["spread_mode"])
    np.testing.assert_array_equal(sim.interest, interest)
    np.testing.assert_array_equal(sim.danger, danger)

    slots = cs.SlotSet(k)
    resolved = cs.resolve(
        interest,
        danger,
        case["resolve"],
        threshold=case.get("threshold", 0.0),
        epsilon=case.get("epsilon", 0.0),
        directions=slots,
    )
    choice = cs.choose(
        resolved,
        slots,
        case["choose"],
        width=case.get("width", 2),
        contiguous=case.get("contiguous", True),
    )
    direction = choice.direction.astype(np.float64)
    if rotate:
        h = a.heading.astype(np.float32)
        c, s = np.cos(h), np.sin(h)
        d = choice.direction
        direction = np.stack([c * d[:, 0] - s * d[:, 1], s * d[:, 0] + c * d[:, 1]], 1)
    expected = motion.apply(a, direction, choice.strength, 0.1)
    sim.decide_and_move(0.1)
    np.testing.assert_array_equal(sim.resolved, resolved)
    np.testing.assert_allclose(sim.chosen_direction, direction, atol=1e-6)
    np.testing.assert_array_equal(sim.strength, choice.strength)
    np.testing.assert_array_equal(sim.chosen_slot, choice.slot)
    # Motion, then the walls: agents that did not touch a wall moved exactly as the model.
    free = sim.wall_contacts == 0
    assert free.sum() > 40
    np.testing.assert_allclose(a.position[free], expected.position[free], atol=1e-5)
    np.testing.assert_allclose(a.heading, expected.heading, atol=1e-5)


def test_temporal_blend_equals_cs_blend():
    k = 8
    a = random_agents(20, 2)
    steering = cs.Steering([cs.Seek(), cs.AgentDanger(radius=4)], blend=0.25)
    sim = cs.Simulation(None, a, steering, slots=k, push_apart=False)
    sim.perceive()  # first perceive: no memory, takes the new maps
    first_i, first_d = sim.interest.copy(), sim.danger.copy()
    np.testing.assert_array_equal(first_i, cs.Seek().evaluate(a, k).interest)
    a.position[...] += np.random.default_rng(0).normal(size=(20, 2)).astype(np.float32)
    sim.perceive()
    new_i = cs.Seek().evaluate(a, k).interest
    new_d = cs.AgentDanger(radius=4).evaluate(a, k, max_neighbours=16).danger
    np.testing.assert_allclose(sim.interest, cs.blend(first_i, new_i, 0.25), atol=1e-7)
    np.testing.assert_allclose(sim.danger, cs.blend(first_d, new_d, 0.25), atol=1e-7)


def test_behaviour_maps_are_empty_unless_recorded():
    a = random_agents(4, 0)
    sim = cs.Simulation(None, a, [cs.Seek()])
    sim.step(0.1)
    assert sim.behaviour_maps == {}
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()], record=True))
    sim.perceive()
    m = sim.behaviour_maps["Seek"]
    assert m.shape == (4, 16) and m.base is not None
    np.testing.assert_array_equal(m, cs.Seek().evaluate(a, 16).interest)


@pytest.mark.parametrize("k,seed", [(65, 0), (96, 1), (257, 2), (300, 3)])
def test_avoid_opposite_on_large_rings_equals_all_pairs(k, seed):
    """Rings of more than 64 slots visit the dangerous slots most dangerous first and stop
    early; the result is the all-pairs maximum of the reference (float64), including rows
    where a modest danger straight behind beats a larger one at the side, sparse and
    all-zero rows, negative danger and ties."""
    rng = np.random.default_rng(seed)
    slots = cs.SlotSet(k, offset=0.3)
    dirs = np.asarray(slots.directions, dtype=np.float64)
    danger = rng.uniform(0, 1, (6, k))
    danger[1] = 0.0  # nothing dangerous
    danger[2] = np.where(rng.uniform(size=k) < 0.05, danger[2], 0.0)  # sparse
    danger[3] = rng.choice([0.0, 0.5, 1.0], k)  # ties
    danger[4] = rng.uniform(-1, 1, k)  # negative danger adds nothing
    danger[5] = 0.0  # slot 0: 1.0 at its side, 0.6 behind
    danger[5, k // 4] = 1.0
    danger[5, k // 2] = 0.6
    interest = rng.uniform(0, 1, (6, k))
    got = cs.resolve(
        interest.astype(np.float32), danger.astype(np.float32), "avoid_opposite", directions=slots
    )
    expect = ref.ref_resolve(
        interest.astype(np.float32), danger.astype(np.float32), "avoid_opposite", dirs=dirs
    )
    np.testing.assert_allclose(got, expect, rtol=2e-6, atol=1e-7)
    behind = 0.6 * max(0.0, -float(dirs[0] @ dirs[k // 2]))
    assert behind > max(0.0, -float(dirs[0] @ dirs[k // 4]))  # the side slot adds less
    assert got[5, 0] == pytest.approx(interest[5, 0] + behind, rel=1e-5)


def test_repr_shows_every_option_that_is_not_its_default():
    # It printed only combine / resolve / choose: a crowd configuration (rotate=True,
    # decision_phases=16) read like the plain one (fuzz round 11).
    r = repr(cs.scenarios.crowd_steering())
    assert "rotate=True" in r and "decision_phases=16" in r and "resolve='mask_min_danger'" in r
    plain = repr(cs.Steering([cs.Seek()]))
    assert plain.endswith("combine='max', resolve='mask', choose='vector_sum')")
    assert "spread=[0.25, 0.5, 0.25]" in repr(cs.Steering([], spread=[0.25, 0.5, 0.25]))


def test_names_follow_reassigned_behaviours_and_flags_must_be_bools():
    # Reassigning behaviours kept the old names, so behaviour_maps labelled each map with
    # the other's name; rotate="no" was read as True (review of fuzz round 11).
    s = cs.Steering([cs.Seek(), cs.AgentDanger(radius=1.0)], record=True)
    s.behaviours = (cs.AgentDanger(radius=1.0), cs.Seek())
    assert s.names == ("AgentDanger", "Seek")
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [0.5, 0]], target=[[5, 0], [5, 0]])
    sim = cs.Simulation(None, a, s)
    sim.step(0.1)
    maps = sim.behaviour_maps
    assert list(maps) == ["AgentDanger", "Seek"]
    assert maps["Seek"][0].max() > 0  # Seek's interest under Seek's name
    for name in ("rotate", "record", "contiguous"):
        with pytest.raises(TypeError, match=f"{name} must be a bool"):
            cs.Steering([], **{name: "no"})
    assert cs.Steering([], rotate=np.bool_(True), record=1).rotate is True
    s.rotate = "no"
    with pytest.raises(TypeError, match="rotate must be a bool"):
        cs.Simulation(None, a, s)
