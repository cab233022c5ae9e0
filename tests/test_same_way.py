"""CollisionDanger(same_way_horizon=): a shorter horizon against neighbours walking the
agent's way.

The maps are checked against the brute-force oracle (reference_velocity.py, which
restates the same-way rule from the docstring in float64), hand-worked pairs pin what
the rule changes and what it leaves alone, and a crowd run checks that the refinements'
pair tests (the AVX2 four-lane loop and the scalar one) see the rule as the maps do.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contextsteer as cs
import reference_velocity as rv
from no_avx2 import without_avx2
from test_collision_danger import (
    build,
    check,
    crowds,
    oracle_dirs,
    random_crowd,
    slot_sets,
    state_of,
)


def make(**kw):
    kw.setdefault("side_bias", 0.0)
    return cs.CollisionDanger(**kw)


# ------------------------------------------------------------- the oracle's rule ---


def test_oracle_rule_by_hand():
    # Agent 0 at the origin wants +x (target 10 m away). A neighbour moving +x at 1 m/s
    # (max speed 1.3: above a quarter) walks its way; one at 40° too; one at 50° does not,
    # nor one at 0.3 m/s (below 0.325), nor any neighbour once agent 0 is on its target.
    state = {
        "position": np.array([[0.0, 0.0], [1.0, 0.0]]),
        "velocity": np.zeros((2, 2)),
        "radius": np.array([0.3, 0.3]),
        "max_speed": np.array([1.3, 1.3]),
        "target": np.array([[10.0, 0.0], [20.0, 0.0]]),
        "kinematic": np.array([False, False]),
    }

    def scale(vj, **change):
        s = {**state, **change}
        return rv.same_way_scale(s, 0, 1, vj, 0.5, h=1.0)[0]

    c, s = np.cos, np.sin
    assert scale((1.0, 0.0)) == 0.5
    assert scale((c(0.698), s(0.698))) == 0.5  # 40°
    assert scale((c(0.873), s(0.873))) == 1.0  # 50°
    assert scale((-1.0, 0.0)) == 1.0
    assert scale((0.3, 0.0)) == 1.0
    assert scale((0.33, 0.0)) == 0.5
    assert scale((1.0, 0.0), target=np.array([[0.2, 0.0], [20.0, 0.0]])) == 1.0
    assert scale((1.0, 0.0), kinematic=np.array([False, True])) == 1.0
    assert rv.same_way_scale(state, 0, 1, (1.0, 0.0), 1.0) == (1.0, False)
    # A neighbour about to stop at its goal: its target 0.9 m ahead at 1 m/s stops it
    # within h = 1 s; 1.1 m ahead keeps it walking.
    assert scale((1.0, 0.0), target=np.array([[10.0, 0.0], [1.9, 0.0]])) == 1.0
    assert scale((1.0, 0.0), target=np.array([[10.0, 0.0], [2.1, 0.0]])) == 0.5
    # A way that crosses agent 0's: the neighbour 0.8 m to its left (more than r_0 + r_1
    # = 0.6 from its way, the x axis) with a target 3 m to its right does not walk its
    # way; with a target 0.5 m to the right (not clear of the way), or on its own side,
    # it does; so does one within 0.6 m of the way.
    left = np.array([[0.0, 0.0], [1.0, 0.8]])
    assert scale((1.0, 0.0), position=left, target=np.array([[10.0, 0.0], [10.0, -3.0]])) == 1.0
    assert scale((1.0, 0.0), position=left, target=np.array([[10.0, 0.0], [10.0, -0.5]])) == 0.5
    assert scale((1.0, 0.0), position=left, target=np.array([[10.0, 0.0], [10.0, 3.0]])) == 0.5
    near = np.array([[0.0, 0.0], [1.0, 0.5]])
    assert scale((1.0, 0.0), position=near, target=np.array([[10.0, 0.0], [10.0, -3.0]])) == 0.5


# ------------------------------------------------------------ hand-worked maps ---


def pair(vj, target=(10.0, 0.0), target1=(20.0, 0.0)):
    """Agent 0 at the origin at 1.3 m/s towards +x, its target at ``target``; agent 1,
    1.2 m ahead, moving at vj towards ``target1``. R = 0.3 + 0.3 + 0.05 = 0.65, so the
    gap is 0.55 m."""
    a = cs.Agents(2)
    a.add(
        [[0.0, 0.0], [1.2, 0.0]],
        velocity=[[1.3, 0.0], list(vj)],
        radius=0.3,
        max_speed=1.3,
        target=[list(target), list(target1)],
    )
    return a


KW = dict(horizon=2.4, speeds=4, margin=0.05)


def test_a_slower_walker_ahead_is_followed_not_passed():
    # Straight ahead at full speed (1.3 m/s) the agent closes on a walker at 1.0 m/s at
    # 0.3 m/s: TTC 0.55 / 0.3 = 1.83 s. Below the 2.4 s horizon, so the straight slot's
    # fastest safe level is 0.975 m/s (3 of 4); against a same-way horizon of 1.6 s it is
    # safe at full speed.
    a = pair((1.0, 0.0))
    plain = make(**KW).evaluate(a, 16)
    same = make(same_way_horizon=1.6, **KW).evaluate(a, 16)
    assert plain.speed[0, 0] == pytest.approx(0.75) and plain.danger[0, 0] == 0.0
    assert same.speed[0, 0] == pytest.approx(1.0) and same.danger[0, 0] == 0.0
    # At same_way_horizon = horizon nothing changes.
    assert make(same_way_horizon=2.4, **KW).evaluate(a, 16).speed[0, 0] == pytest.approx(0.75)
    # The oracle agrees on every slot.
    for h in (1.0, 1.6, 2.0):
        maps = make(same_way_horizon=h, **KW).evaluate(a, 16)
        check(maps, rv.collision_danger(state_of(a), 16, same_way_horizon=h, **KW), a.alive, 4)


def test_a_walker_about_to_stop_at_its_goal_keeps_the_full_horizon():
    # The same walker ahead at 1.0 m/s, its goal 1.5 m ahead of it: it stops within the
    # same-way horizon of 1.6 s (it would walk 1.6 m), so it is not followed closely and
    # the straight slot keeps 0.75 of max speed. With its goal 1.7 m ahead it is.
    for goal, straight in ((2.7, 0.75), (2.9, 1.0)):
        a = pair((1.0, 0.0), target1=(goal, 0.0))
        same = make(same_way_horizon=1.6, **KW).evaluate(a, 16)
        assert same.speed[0, 0] == pytest.approx(straight)
        exp = rv.collision_danger(state_of(a), 16, same_way_horizon=1.6, **KW)
        check(same, exp, a.alive, 4)


def test_oncomers_and_crossers_keep_the_full_horizon():
    for vj in ((-1.0, 0.0), (0.0, 1.0), (0.3, 0.0)):
        a = pair(vj)
        plain = make(**KW).evaluate(a, 16)
        same = make(same_way_horizon=1.0, **KW).evaluate(a, 16)
        # Agent 0's row (agent 1, whose own target lies ahead along +x, may see agent 0
        # walking its way).
        np.testing.assert_array_equal(same.speed[0], plain.speed[0])
        np.testing.assert_array_equal(same.danger[0], plain.danger[0])


def test_the_agents_own_way_decides_not_its_velocity():
    # The same walker ahead, but agent 0 wants to go back (-x): the walker does not go its
    # way, so nothing changes, although the two move alike.
    a = pair((1.0, 0.0), target=(-10.0, 0.0))
    plain = make(**KW).evaluate(a, 16)
    same = make(same_way_horizon=1.0, **KW).evaluate(a, 16)
    np.testing.assert_array_equal(same.speed[0], plain.speed[0])
    np.testing.assert_array_equal(same.danger[0], plain.danger[0])


def test_a_walker_whose_way_crosses_keeps_the_full_horizon():
    # A walker 0.8 m to the left of agent 0's way, closing on it (1.0, -0.35) m/s: when
    # its target lies 3 m to the right, their ways cross (as on a circle, where everyone
    # walks roughly one way towards the centre), and it keeps the full horizon; with its
    # target on its own side it walks alongside, and the straight slot speeds up.
    def walker(target):
        a = cs.Agents(2)
        a.add(
            [[0.0, 0.0], [1.2, 0.8]],
            velocity=[[1.3, 0.0], [1.0, -0.35]],
            radius=0.3,
            max_speed=1.3,
            target=[[10.0, 0.0], list(target)],
        )
        return a

    for target, straight in (((10.0, -3.0), 0.75), ((20.0, 0.8), 1.0)):
        a = walker(target)
        plain = make(**KW).evaluate(a, 16)
        same = make(same_way_horizon=1.2, **KW).evaluate(a, 16)
        assert plain.speed[0, 0] == pytest.approx(0.75)
        assert same.speed[0, 0] == pytest.approx(straight)
        exp = rv.collision_danger(state_of(a), 16, same_way_horizon=1.2, **KW)
        check(same, exp, a.alive, 4)


def test_off_is_the_default_and_bad_values_are_refused():
    assert cs.CollisionDanger().same_way_horizon is None
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="same_way_horizon"):
            cs.CollisionDanger(same_way_horizon=bad)
    with pytest.raises(ValueError, match="at most horizon"):
        cs.CollisionDanger(horizon=2.0, same_way_horizon=2.5)


# ------------------------------------------------------------- random, oracle ---


@settings(max_examples=40, deadline=None)
@given(
    crowd=crowds(),
    dirs=slot_sets(),
    speeds=st.integers(1, 6),
    horizon=st.floats(0.5, 4.0),
    share=st.floats(0.1, 1.0),
    margin=st.floats(0.0, 0.2),
    reciprocity=st.sampled_from([0.0, 0.5]),
    extras=st.sampled_from(["none", "creep", "unstick"]),
)
def test_matches_reference(crowd, dirs, speeds, horizon, share, margin, reciprocity, extras):
    a = build(crowd)
    kw = dict(
        horizon=horizon,
        speeds=speeds,
        margin=margin,
        reciprocity=reciprocity,
        same_way_horizon=min(horizon * share, horizon),
        creep=extras == "creep",
        unstick=extras == "unstick",
    )
    maps = make(**kw).evaluate(a, dirs, max_neighbours=32)
    exp = rv.collision_danger(state_of(a), oracle_dirs(dirs), **kw)
    if extras == "none":
        check(maps, exp, a.alive, speeds)
        return
    # creep's speeds lie between the levels (the scalar pair loop's bisection).
    speed, danger = (np.asarray(x, np.float64) for x in (maps.speed, maps.danger))
    ok = np.asarray(a.alive, bool)[:, None] & ~exp.ambiguous
    np.testing.assert_allclose(speed[ok], exp.speed[ok], rtol=1e-4, atol=1e-4 / speeds)
    np.testing.assert_allclose(danger[ok], exp.danger[ok], atol=1e-5)


def test_random_crowds_are_changed():
    # The rule must act on random crowds, not only on the hand-made pair: over a few
    # crowds some slots' speeds rise. Where a slot is safe without it, it stays safe and
    # its speed never falls (each time to collision only grows); an unsafe slot takes the
    # level with the longest time, which may be another one.
    rose = 0
    for seed in range(6):
        a = build(random_crowd(seed, 12))
        plain = make(**KW).evaluate(a, 16, max_neighbours=32)
        same = make(same_way_horizon=1.0, **KW).evaluate(a, 16, max_neighbours=32)
        safe = np.asarray(plain.danger) == 0.0
        assert (np.asarray(same.danger)[safe] == 0.0).all()
        assert (np.asarray(same.speed)[safe] >= np.asarray(plain.speed)[safe]).all()
        rose += int((np.asarray(same.speed) > np.asarray(plain.speed))[safe].sum())
    assert rose > 0


# ------------------------------------------------------------ in a simulation ---


def _crowd_run(threads=1, same_way=1.6, steps=60, targets="far"):
    """Two groups crossing in a box under crowd_steering with same_way_horizon; positions
    and velocities after the run as raw bits. ``targets``: "far" (12 m on), "converge"
    (the first group's targets gather near one point, so that its walkers' ways cross) or
    "near" (the first group's 3 m on, so that its walkers stop at them during the run)."""
    world = cs.World()
    world.add_polyline(np.array([[-8, -8], [8, -8], [8, 8], [-8, 8]], np.float32), closed=True)
    n = 48
    rng = np.random.default_rng(5)
    start = np.concatenate(
        [rng.uniform([-7, -2], [-4, 2], (24, 2)), rng.uniform([-2, -7], [2, -4], (24, 2))]
    )
    target = np.concatenate([start[:24] + [12.0, 0.0], start[24:] + [0.0, 12.0]])
    if targets == "converge":
        target[:24] = rng.uniform([5.0, -0.5], [6.0, 0.5], (24, 2))
    elif targets == "near":
        target[:24] = start[:24] + [3.0, 0.0]
    agents = cs.Agents(n, slots=16, seed=2)
    agents.add(start, radius=0.3, max_speed=1.3, max_accel=6.0, target=target)
    options = {k: v for k, v in cs.scenarios.CROWD.items() if k != "same_way_horizon"}
    if same_way is not None:
        options["same_way_horizon"] = same_way
    steering = cs.scenarios.crowd_steering(walls=True, options=options)
    sim = cs.Simulation(world, agents, steering, push_apart=True)
    with cs.threads(threads):
        sim.step(1 / 30, steps=steps)
    return np.concatenate(
        [
            np.ascontiguousarray(x, np.float32).view(np.int32).ravel()
            for x in (agents.position, agents.velocity)
        ]
    )


@pytest.mark.parametrize("targets", ["far", "converge", "near"])
def test_simulation_is_bit_identical_across_thread_counts(targets):
    np.testing.assert_array_equal(
        _crowd_run(threads=1, targets=targets), _crowd_run(threads=2, targets=targets)
    )


def test_simulation_changes_with_the_rule():
    assert not np.array_equal(_crowd_run(same_way=1.6), _crowd_run(same_way=None))


@pytest.mark.parametrize("targets", ["far", "converge", "near"])
def test_avx2_and_baseline_pair_loops_agree(tmp_path, targets):
    # The refinements' pair tests take a four-lane AVX2 loop when the CPU has it, each
    # lane scaled by its own pair's factor; with AVX2 off (a fresh interpreter) the
    # scalar loop must give the same bits. The converging run has walkers whose ways
    # cross, the near one walkers stopping at their goals, which the lanes must leave
    # unscaled as the scalar test does.
    steps = 120 if targets == "near" else 60
    np.testing.assert_array_equal(
        without_avx2(tmp_path, "test_same_way", f"_crowd_run(targets={targets!r}, steps={steps})"),
        _crowd_run(targets=targets, steps=steps),
    )
