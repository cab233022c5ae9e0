"""benchmarks/bench_stranding.py: its scenes are what its docstring says, its metrics count
what they claim on hand-made trajectories, and one traced seed strands an agent without a
detour and not with one."""

import numpy as np
import pytest

from bench_modules import load

bs = load("bench_stranding")


@pytest.mark.parametrize("seed", range(12))
def test_rooms_are_what_the_docstring_says(seed):
    a, b = bs.pillar_room(seed), bs.pillar_room(seed)
    np.testing.assert_array_equal(a.starts, b.starts)  # a seed is one scene
    assert 10 <= a.width <= 16 and 0 <= len(a.pillars) <= 8
    assert 20 <= a.n < 60
    for pts in (a.starts, a.goals):
        assert np.all((pts >= 0.6) & (pts <= a.width - 0.6))
        d = np.hypot(*(pts[:, None] - pts[None]).transpose(2, 0, 1))
        need = a.radius[:, None] + a.radius[None] + 0.1
        np.fill_diagonal(d, np.inf)
        assert np.all(d >= need - 1e-9)
        if len(a.pillars):
            dp = np.hypot(*(pts[:, None] - a.pillars[None, :, :2]).transpose(2, 0, 1))
            assert np.all(dp >= a.pillars[None, :, 2] + a.radius[:, None] + 0.1 - 1e-9)


def test_the_metrics_count_episodes_depths_and_homecomings():
    room = bs.Room(
        width=10.0,
        pillars=np.array([[5.0, 5.0, 0.5]]),
        starts=np.array([[1.0, 1.0], [3.0, 1.0]]),
        goals=np.array([[2.0, 1.0], [8.0, 8.0]]),
        radius=np.array([0.3, 0.3]),
        speed=np.array([1.3, 1.3]),
    )
    m = bs.Measure(room)
    # Step 1: 0.5 m apart (0.1 m deep: an episode). Step 2: still touching (the same one).
    # Step 3: apart. Step 4: touching again (a second episode), agent 1 in the pillar.
    m.update(np.array([[1.5, 1.0], [2.0, 1.0]]), bs.DT)
    m.update(np.array([[1.55, 1.0], [2.0, 1.0]]), 2 * bs.DT)
    m.update(np.array([[1.0, 1.0], [2.0, 1.0]]), 3 * bs.DT)
    m.update(np.array([[2.0, 1.0], [2.55, 1.0]]), 4 * bs.DT)
    m.update(np.array([[2.0, 1.0], [5.0, 4.6]]), 5 * bs.DT)
    row = m.row()
    assert row["contacts"] == 2
    assert row["depth"] == pytest.approx(0.15)
    assert row["wall_pens"] == 1  # 0.1 m from the pillar's edge: within 0.99 r
    assert row["never_home"] == 1  # agent 1; agent 0 is home at step 4
    assert row["ttg_n"] == 1 and row["ttg_sum"] == pytest.approx(4 * bs.DT)
    assert row["away_end"] == 0  # agent 0 is at its goal
    # Step 6: agent 0 steps 0.5 m off its goal (making way): home once, away at the end.
    m.update(np.array([[2.0, 1.5], [5.0, 4.6]]), 6 * bs.DT)
    row = m.row()
    assert row["away_end"] == 1 and row["never_home"] == 1 and row["ttg_n"] == 1


def test_a_traced_seed_strands_an_agent_without_a_detour_and_not_with_one():
    # Seed 172 strands one agent without a detour, and with one everyone is home, within
    # 60 s on the shorter way. Seed 116 was this test's seed until brake_at_target and
    # reachable_target joined CROWD: it is home unled since, and so is seed 11. (Since an
    # agent too fast for its goal is slowed for what lies beyond it
    # (Simulation::stop_short_past_target) seed 11 of 0-99 and seeds 116 and 172 of
    # 100-199 had stranded one agent each unled.) Seed 11 was this test's seed until
    # a first form of that rule got it home (its agent 4, 0.75 m wide, standing 2.5 m
    # from its goal after 120 s,
    # behind two pillars 0.13 m apart, with four bodies standing at their goals 1-1.5 m
    # from it). (Seed 65,
    # its agent 16 behind a cluster of four pillars whose gaps no body 0.8 m wide passes,
    # was this test's seed until retreat_speed's cap was tested: it is home unled since.
    # Seed 12, its agent 48 between three pillars with bodies standing at
    # their goals 0.7-1.5 m away, was this test's seed until same_way_horizon joined CROWD:
    # it is home unled since, and seeds 65 and 172 strand one agent each. Seed 15, its
    # agent 33 held 4.2 m from its goal by bodies standing at theirs, was this test's seed
    # until make_way joined CROWD: they step aside and it is home unled. Seed 20, its
    # agent 1 in a pocket of three bodies, was the seed before that, until a course
    # no faster than a body standing stopped being held against the goal,
    # Simulation::keep_course. Seed 1 was the seed before that, its agent 50 pacing behind
    # a pillar with agents standing beside it: since past_target leaves out a body standing
    # past the target, plain steering gets it home. Its agent 21, 2.2 m from a goal in the
    # room's corner that three bodies standing box in, was routed round the room, 45
    # waypoints, and home after 100 s, before a plan grew its region until the route lay
    # in it, detour.py's _grow; seed 1 with a detour stays here for that.)
    plain = bs.run(172, "cs", 120.0)
    led = bs.run(172, "cs-detour", 120.0)
    short_way = bs.run(172, "cs-detour-stretch", 60.0)
    assert plain["never_home"] == 1
    assert led["never_home"] == 0 and led["late"] == 0
    assert short_way["never_home"] == 0
    assert plain["contacts"] == led["contacts"] == short_way["contacts"] == 0
    corner = bs.run(1, "cs-detour", 60.0)
    assert corner["never_home"] == 0 and corner["contacts"] == 0


def test_an_agent_nearly_standing_does_not_hold_its_old_course_against_the_goals():
    # Seed 24, led by a detour: agent 26, after a wait, had a course 70° off its waypoint
    # 2.4 m away at 0.004 m/s (the tail of a slowing). Every step the new decision (towards
    # the waypoint at full speed, safe for the horizon) was held back by return_margin:
    # not free for 1.6 horizons, so the old course was kept, and kept at 0.004 m/s for the
    # remaining 100 s, 3 m from its goal in open floor. A course no faster than a body
    # standing (0.02 m/s) is not held (Simulation::keep_course): it is home.
    led = bs.run(24, "cs-detour", 60.0)
    assert led["never_home"] == 0 and led["contacts"] == 0
