"""Kinematic agents (``Agents.kinematic``): moved by the velocity their user writes, never
steered or pushed, seen by the others as any neighbour.

Oracles: the integration ``p + v·dt`` in float32 (no world), ``cs.sweep_circle`` (with
walls), the push-apart rule worked by hand, the velocity-danger oracle of
``reference_velocity.py`` with α = 0 for kinematic neighbours, and the same simulation
without the kinematic agent's influence.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import contextsteer as cs
import reference_velocity as rv
import test_collision_danger as tcd
from contextsteer.agents import _restore_agents


def _crowd_with_player(n=12, seed=0):
    """A player (slot 0, kinematic) walking east through n crowd agents walking west."""
    rng = np.random.default_rng(seed)
    a = cs.Agents(n + 1, slots=16)
    a.add([-6.0, 0.0], velocity=[1.2, 0.0], radius=0.4, kinematic=True)
    pos = np.c_[rng.uniform(2, 8, n), rng.uniform(-2.5, 2.5, n)]
    a.add(pos, radius=0.3, max_speed=1.3, max_accel=6.0, target=pos - [16.0, 0.0])
    return a


def _steer(a, world=None, **kw):
    return cs.Simulation(world, a, cs.scenarios.crowd_steering(), motion=cs.Accel(), **kw)


# ------------------------------------------------------------- the column ---


def test_add_sets_the_column_and_a_reused_slot_starts_not_kinematic():
    a = cs.Agents(3)
    ids = a.add([[0, 0], [1, 0], [2, 0]], kinematic=[True, False, True])
    assert ids.tolist() == [0, 1, 2]
    assert a.kinematic.dtype == np.bool_ and a.kinematic.tolist() == [True, False, True]
    a.remove([0])
    a.add([5, 5])  # slot 0 again
    assert not a.kinematic[0]
    a.kinematic[1] = True  # a view into C++ memory, like alive
    assert a.kinematic.tolist() == [False, True, True]


@pytest.mark.parametrize(
    "value, error, text",
    [
        ([1, 0], TypeError, "kinematic must be bool"),
        (np.array([0.5, 0.0]), TypeError, "kinematic must be bool"),
        ([True, False, True], ValueError, r"kinematic must be a bool or one per agent \(2,\)"),
    ],
)
def test_add_rejects_a_kinematic_that_is_not_bool_per_agent(value, error, text):
    a = cs.Agents(4)
    with pytest.raises(error, match=text):
        a.add([[0, 0], [1, 0]], kinematic=value)
    assert a.count == 0


def test_pickles_keep_the_column_and_old_pickles_load_with_none_kinematic():
    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [1, 0]], kinematic=[False, True])
    b = pickle.loads(pickle.dumps(a))
    assert b.kinematic.tolist() == [False, True, False]
    state = a._snapshot()
    del state["kinematic"]  # an agents pickle from before the column
    c = _restore_agents(3, 8, state, 0)
    assert not c.kinematic.any()
    np.testing.assert_array_equal(c.position, a.position)


# --------------------------------------------------------------- motion ---


def test_a_kinematic_agent_moves_by_its_own_velocity_through_a_crowd():
    a = _crowd_with_player()
    sim = _steer(a)
    dt = np.float32(1 / 30)
    rng = np.random.default_rng(1)
    for _ in range(150):
        v = rng.uniform(-1.5, 1.5, 2).astype(np.float32)  # a player's input, every step
        v[0] = abs(v[0])
        a.velocity[0] = v
        a.heading[0] = 0.25
        p = a.position[0].copy()
        sim.step(1 / 30)
        np.testing.assert_array_equal(a.position[0], p + v * dt)  # float32, bit for bit
        np.testing.assert_array_equal(a.velocity[0], v)
        assert a.heading[0] == np.float32(0.25)
    # Never steered: no decision of its own.
    assert sim.chosen_slot[0] == -1 and not np.asarray(sim.interest)[0].any()


def test_the_functional_motion_models_move_a_kinematic_agent_by_its_velocity():
    for model in (cs.Lerp(steer_force=1.0), cs.Accel(), cs.Vehicle()):
        a = cs.Agents(2)
        a.add(
            [[0, 0], [0, 5]],
            velocity=[[0.5, -0.25], [0.5, -0.25]],
            max_speed=2.0,
            max_accel=10.0,
            heading=1.0,
            kinematic=[True, False],
        )
        direction = np.array([[0, 1], [0, 1]], np.float32)
        moved = model.step(a, direction, np.ones(2, np.float32), dt=0.5)
        del moved
        np.testing.assert_array_equal(a.position[0], np.float32([0.25, -0.125]))
        np.testing.assert_array_equal(a.velocity[0], np.float32([0.5, -0.25]))
        assert a.heading[0] == np.float32(1.0)
        assert not np.array_equal(a.velocity[1], np.float32([0.5, -0.25]))  # steered


def test_walls_stop_a_kinematic_agent_as_the_swept_circle_does():
    world = cs.World()
    world.add_segments([[3, -5, 3, 5], [-5, 2, 10, 2]])
    a = cs.Agents(2, slots=8)
    a.add([[0, 0]], radius=0.5, kinematic=True, heading=0.5)
    a.add([[-3, -3]], radius=0.3, max_speed=1.0, target=[-3, -4])
    sim = cs.Simulation(world, a, [cs.Seek()], motion=cs.Accel())
    for _ in range(40):
        a.velocity[0] = [2.0, 1.0]  # into the corner of the two walls
        p = a.position[0:1].copy()
        want, _ = cs.sweep_circle(world, p, a.velocity[0:1] * np.float32(0.1), 0.5)
        sim.step(0.1)
        np.testing.assert_array_equal(a.position[0], want[0])
        assert a.heading[0] == np.float32(0.5)  # a slide does not turn it
    # In the corner, a skin short of both walls.
    assert 2.49 < a.position[0, 0] < 2.5 and 1.49 < a.position[0, 1] < 1.5


# ------------------------------------------------------------ push-apart ---


@pytest.mark.parametrize("kin", [(True, False), (False, True), (False, False), (True, True)])
def test_push_apart_never_moves_a_kinematic_agent_and_its_partner_takes_it_all(kin):
    a = cs.Agents(2, slots=8)
    a.add([[0.0, 0.0], [0.6, 0.0]], radius=0.5, max_speed=1.0, kinematic=list(kin))
    sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel(), push_passes=1)
    sim.step(0.1)
    # Hand-worked: overlap reach − d = 1 − 0.6; each side moves ½·(1.001·reach − d)
    # (the push ends a hair beyond contact), or the whole of it against a kinematic one.
    full = 1.001 * 1.0 - 0.6
    if kin == (True, True):
        want = [0.0, 0.6]
    elif kin[0]:
        want = [0.0, 0.6 + full]
    elif kin[1]:
        want = [-full, 0.6]
    else:
        want = [-full / 2, 0.6 + full / 2]
    np.testing.assert_allclose(a.position[:, 0], want, atol=1e-6)
    assert (np.asarray(sim.overlaps) == 1).all()  # the overlap is counted on both sides


def test_settling_passes_push_a_packed_crowd_off_a_kinematic_agent():
    rng = np.random.default_rng(3)
    a = cs.Agents(41, slots=8)
    a.add([0.0, 0.0], radius=1.0, kinematic=True)
    a.add(rng.uniform(-1, 1, (40, 2)), radius=0.2, max_speed=1.0)
    a.target[1:] = a.position[1:]
    sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel(), push_passes=64)
    sim.step(0.05)
    assert np.array_equal(a.position[0], [0, 0])
    d = np.linalg.norm(a.position[1:] - a.position[0], axis=1)
    assert (d >= 1.2 - 1e-4).all()  # everyone off the player


# --------------------------------------------------------------- others ---


def test_the_crowd_avoids_a_kinematic_agent_walking_through_it():
    for seed in range(4):
        a = _crowd_with_player(seed=seed)
        sim = _steer(a)
        closest = np.inf
        for _ in range(330):  # 11 s: the player walks 13 m through the crowd
            a.velocity[0] = [1.2, 0.0]
            sim.step(1 / 30)
            d = np.linalg.norm(a.position[1:] - a.position[0], axis=1) - (0.4 + 0.3)
            closest = min(closest, d.min())
        assert closest > 0.0, (seed, closest)
        assert a.position[0, 1] == 0.0  # it kept its line: nobody pushed it


def test_reciprocity_takes_no_share_from_a_kinematic_neighbour():
    # Two agents meeting head-on: at reciprocity 1/2 the row of agent 0 depends on whether
    # agent 1 will dodge; a kinematic agent 1 makes it the row at reciprocity 0.
    def maps(reciprocity, kinematic):
        a = cs.Agents(2)
        a.add(
            [[0, 0], [3, 0.2]],
            velocity=[[1, 0], [-1, 0]],
            radius=0.4,
            max_speed=1.5,
            kinematic=[False, kinematic],
        )
        return tcd.make(horizon=3.0, speeds=4, reciprocity=reciprocity).evaluate(a, 16)

    plain, shared, alone = maps(0.0, False), maps(0.5, False), maps(0.5, True)
    np.testing.assert_array_equal(alone.danger[0], plain.danger[0])
    np.testing.assert_array_equal(alone.speed[0], plain.speed[0])
    assert not np.array_equal(shared.danger[0], plain.danger[0])


@pytest.mark.parametrize("option", [None, "creep", "wall_speed", "unstick"])
@pytest.mark.parametrize("seed", range(6))
def test_velocity_danger_with_kinematic_neighbours_matches_the_oracle(option, seed):
    # The oracle takes α = 0 for a kinematic neighbour (reference_velocity._pair_alpha);
    # the options' candidates between the levels go through the pair test of the
    # refinements, which takes the scalar loop when a kinematic neighbour is about.
    crowd = tcd.random_crowd(seed, 10, coincident=True, overlap=True, kinematic=True)
    assert crowd["kinematic"].any() and not crowd["kinematic"].all()
    case = dict(
        crowd=crowd,
        dirs=16,
        speeds=4,
        horizon=2.0,
        margin=0.05,
        reciprocity=0.5,
        wall_seed=seed,
        wall_horizon=None,
    )
    if option is None:
        a, state, segs, world = tcd.walled_scene(crowd, seed, 0.05)
        kw = {k: case[k] for k in ("speeds", "horizon", "margin", "reciprocity")}
        got = tcd.make(**kw).evaluate(a, 16, world=world, max_neighbours=32)
        tcd.check(
            got, rv.collision_danger(state, tcd.oracle_dirs(16), walls=segs, **kw), a.alive, 4
        )
        return
    level = {"wall_speed": -2, "creep": -3, "unstick": -4}[option]
    tcd.between_levels(option, level, atol=1e-4 / 4 if option != "wall_speed" else 1e-6, **case)


# ------------------------------------------------------- determinism, API ---


def _hash(a, sim):
    import hashlib

    h = hashlib.sha256()
    for x in (a.position, a.velocity, a.heading, sim.interest, sim.danger, sim.overlaps):
        h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("slicing", [{}, {"decision_interval": 3}, {"decision_validity": 0.3}])
def test_kinematic_runs_are_bit_identical_for_any_thread_count(slicing):
    def go(threads):
        rng = np.random.default_rng(5)
        a = cs.Agents(300, slots=16)
        pos = rng.uniform(-15, 15, (300, 2))
        a.add(
            pos,
            radius=0.3,
            max_speed=1.3,
            max_accel=6.0,
            target=-pos,
            kinematic=rng.random(300) < 0.1,
        )
        a.velocity[a.kinematic] = rng.uniform(-1, 1, (int(a.kinematic.sum()), 2))
        sim = _steer(a, **slicing)
        with cs.threads(threads):
            sim.step(1 / 30, steps=60)
        return _hash(a, sim)

    assert go(1) == go(2) == go(4)


def test_stepping_in_stages_equals_the_fused_step_with_kinematic_agents():
    a1, a2 = _crowd_with_player(seed=2), _crowd_with_player(seed=2)
    s1 = cs.Simulation(
        None, a1, cs.scenarios.crowd_steering(rotate=False, options={}), motion=cs.Accel()
    )
    s2 = cs.Simulation(
        None, a2, cs.scenarios.crowd_steering(rotate=False, options={}), motion=cs.Accel()
    )
    s1.step(1 / 30, steps=40)
    for _ in range(40):
        s2.perceive()
        s2.decide_and_move(1 / 30)
    assert _hash(a1, s1) == _hash(a2, s2)


def test_a_simulation_pickled_mid_run_continues_with_its_kinematic_agents():
    a = _crowd_with_player(seed=1)
    sim = _steer(a)
    sim.step(1 / 30, steps=30)
    twin = pickle.loads(pickle.dumps(sim))
    assert twin.agents.kinematic[0]
    sim.step(1 / 30, steps=30)
    twin.step(1 / 30, steps=30)
    assert _hash(a, sim) == _hash(twin.agents, twin)


# ----------------------------------------------------------------- flips ---


def _walker(**sim_kw):
    a = cs.Agents(2, slots=16)
    a.add([[0.0, 0.0]], max_speed=1.0, max_accel=8.0, target=[[10.0, 0.0]])
    a.add([[0.0, 30.0]], max_speed=1.0, target=[[0.0, 30.0]])  # far away, standing
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()]), motion=cs.Accel(), **sim_kw)
    return a, sim


@pytest.mark.parametrize("interval", [1, 8])
def test_a_flip_forgets_the_decision_both_ways(interval):
    # Review of fuzz round 11: made kinematic, an agent kept its chosen slot and maps;
    # handed back under decision_interval = 8 it drove on its decision from before for 7
    # steps. Oracle: a new agent (it decides at its next step).
    a, sim = _walker(decision_interval=interval)
    sim.step(0.1, steps=5)
    assert sim.chosen_slot[0] == 0  # east
    a.kinematic[0] = True
    a.velocity[0] = [0.0, 0.0]
    sim.step(0.1, steps=9)
    assert sim.chosen_slot[0] == -1 and not np.asarray(sim.interest)[0].any()
    assert np.isnan(np.asarray(sim.perceived_position)[0]).all()
    a.kinematic[0] = False
    a.target[0] = a.position[0] + [0.0, -10.0]  # south now
    sim.step(0.1)
    np.testing.assert_allclose(sim.chosen_direction[0], [0.0, -1.0], atol=1e-5)
    assert a.velocity[0, 1] < 0


def test_handed_back_between_the_stages_it_stands_like_a_new_agent():
    # perceive() saw it kinematic (no maps); handed back before decide_and_move() it
    # decided from the maps of before it was driven (east, away from its new target).
    # Now it stands, as an agent added between the stages does, and decides next step.
    a, sim = _walker()
    sim.step(0.1, steps=5)
    a.kinematic[0] = True
    a.velocity[0] = [0.0, 0.0]
    sim.step(0.1, steps=3)
    a.target[0] = a.position[0] + [0.0, -10.0]
    sim.perceive()
    a.kinematic[0] = False
    sim.decide_and_move(0.1)
    np.testing.assert_array_equal(sim.chosen_direction[0], [0.0, 0.0])
    np.testing.assert_array_equal(a.velocity[0], [0.0, 0.0])
    sim.perceive()
    sim.decide_and_move(0.1)
    np.testing.assert_allclose(sim.chosen_direction[0], [0.0, -1.0], atol=1e-5)


def test_a_flip_pending_at_a_pickle_is_carried():
    a, sim = _walker(decision_interval=4)
    sim.step(0.1, steps=5)
    a.kinematic[0] = True  # not yet seen by a step
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.step(0.1, steps=3)
        s.agents.kinematic[0] = False
        s.agents.target[0] = [0.0, -10.0]
        s.step(0.1, steps=3)
    assert _hash(a, sim) == _hash(twin.agents, twin)


@pytest.mark.parametrize("row", [1, 5])
def test_agents_standing_at_their_goal_step_aside_from_a_vehicle(row):
    # A pedestrian at its goal (Arrive's interest 0 everywhere: nothing to choose) stood
    # while a kinematic vehicle (r 1.5, 1 m/s) drove up at it; against a wall it ended
    # with its centre inside the vehicle for good, 0.6 m deep (fuzz round 11, a flow
    # study). Oracle: the gap between every pedestrian and the vehicle, every step.
    w = cs.World()
    w.add_segments([[0, 0, 20, 0], [20, 0, 20, 20], [20, 20, 0, 20], [0, 20, 0, 0]])
    a = cs.Agents(row + 1, slots=16)
    veh = a.add([10.0, 10.0], radius=1.5, kinematic=True)[0]
    xs = 10 + 0.62 * (np.arange(row) - (row - 1) / 2)
    people = np.c_[xs, np.full(row, 19.65)]
    ids = a.add(people, radius=0.3, max_speed=1.34, max_accel=6.0, target=people)
    sim = cs.Simulation(
        w, a, cs.scenarios.crowd_steering(), motion=cs.Accel(), slots=cs.scenarios.crowd_slots()
    )
    worst = np.inf
    for _ in range(360):
        a.velocity[veh] = [0.0, 1.0]
        sim.step(1 / 30)
        gap = np.linalg.norm(a.position[ids] - a.position[veh], axis=1) - 1.8
        worst = min(worst, gap.min())
    assert worst > -0.01, worst  # was -0.6
    assert (a.position[ids, 1] <= 19.7 + 1e-4).all()  # nobody through the wall


def test_the_run_metrics_leave_kinematic_agents_out_of_the_steering_statistics():
    # A vehicle whose target is where it was added "arrived" at 0 s with path length 0,
    # and diluted the crowd's time to goal (fuzz round 11, a flow study). It still counts
    # in collisions. Oracle: the walkers' own per-agent values.
    a = cs.Agents(3, slots=16)
    veh = a.add([0.0, 0.0], radius=1.5, kinematic=True)[0]
    a.add([[5, 5], [5, 8]], radius=0.3, max_speed=1.34, max_accel=6.0, target=[[15, 5], [15, 8]])
    sim = cs.Simulation(
        None,
        a,
        cs.scenarios.crowd_steering(walls=False),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    sim.configure_metrics(goal_radius=0.5)
    for _ in range(300):
        a.velocity[veh] = [1.0, 0.0]
        sim.step(1 / 30)
    m, per = sim.metrics(), sim.agent_metrics
    assert m["agents"] == 3
    ttg = m["time_to_goal"]
    assert ttg["arrived"] == 2 and ttg["fraction"] == 1.0
    assert ttg["mean"] == pytest.approx(float(np.mean(per.time_to_goal[1:])))
    assert m["path_length"]["mean"] == pytest.approx(float(np.mean(per.path_length[1:])))
