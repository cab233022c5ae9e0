"""benchmarks/crowd_jitter.py: the jitter split agrees with the crowd benchmark's own metric
and with hand-worked paths and decision traces."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from bench_modules import load

pytest.importorskip("scipy")  # crowd_quality.Metrics finds contacts with a k-d tree

cq = load("crowd_quality")
cj = load("crowd_jitter")


def _paths(rng, n=6, steps=40):
    """Random walks with slow and standing stretches (positions after steps 1..T)."""
    starts = rng.uniform(-5, 5, (n, 2))
    v = rng.normal(0, 1, (steps, n, 2)) * cq.DT
    v[5:9, 0] = 0.0  # agent 0 stands for a while
    v[:, 1] *= 0.03  # agent 1 creeps, mostly below the jitter's minimum speed
    return starts, starts + np.cumsum(v, axis=0)


@pytest.mark.parametrize("seed", range(5))
def test_turn_series_gives_the_benchmark_metrics_jitter(seed):
    # Oracle: crowd_quality.Metrics fed the same positions step by step, with agents
    # retired after their arrival step as crowd_quality.run does.
    rng = np.random.default_rng(seed)
    starts, pos = _paths(rng)
    steps, n = pos.shape[:2]
    arrival = np.full(n, np.nan)
    arrival[2] = 17 * cq.DT
    arrival[3] = 2 * cq.DT
    metrics = cq.Metrics(SimpleNamespace(walls=np.zeros((0, 4)), n=n, starts=starts))
    active = np.ones(n, dtype=bool)
    for s in range(1, steps + 1):
        metrics.update(pos[s - 1], active)
        active &= ~np.isclose(arrival, s * cq.DT)
    turn, _, counted = cj.turn_series(pos, starts, arrival)
    assert math.isclose(cj.jitter(turn, counted), metrics.summary()["jitter_deg_per_step"])
    # Arrived at step 2: only the turn into step 2's displacement (row 0) may count; at
    # step 17: rows 0..15.
    assert not counted[1:, 3].any()
    assert not counted[16:, 2].any() and counted[:16, 2].any()


def _path(headings_deg, speed=1.0):
    d = np.radians(headings_deg)
    steps = speed * cq.DT * np.c_[np.cos(d), np.sin(d)]
    return np.zeros((1, 2)), np.cumsum(steps, axis=0)[:, None, :]


def test_reversal_share_zero_for_a_curve_one_for_a_zigzag():
    never = np.array([np.nan])
    starts, pos = _path([0, 5, 10, 15, 20, 25])  # a steady left turn
    turn, speed, counted = cj.turn_series(pos, starts, never)
    assert np.allclose(np.degrees(turn[counted]), 5.0)
    assert cj.reversal_share(turn, counted) == 0.0
    assert np.allclose(speed[counted], 1.0)
    starts, pos = _path([0, 10, 0, 10, 0, 10])  # zig-zag
    turn, _, counted = cj.turn_series(pos, starts, never)
    assert cj.reversal_share(turn, counted) == 1.0
    # A turn of 10° undone (−10°), a straight step, then a 30° turn: the reversal is 10°
    # of the 10 + 0 + 30 that follow a counted turn.
    starts, pos = _path([0, 10, 0, 0, 30])
    turn, _, counted = cj.turn_series(pos, starts, never)
    assert np.allclose(np.degrees(turn[counted]), [10, -10, 0, 30])
    assert math.isclose(cj.reversal_share(turn, counted), 10 / 40)


def test_slow_share_splits_the_turning_by_speed():
    never = np.array([np.nan])
    starts = np.zeros((1, 2))
    # Steps at 1 m/s turning 2° each, then at 0.2 m/s turning 8° each.
    d = np.radians(np.r_[0, 2, 4, 6, 14, 22, 30])
    v = np.r_[1, 1, 1, 1, 0.2, 0.2, 0.2]
    pos = np.cumsum((v * cq.DT)[:, None] * np.c_[np.cos(d), np.sin(d)], axis=0)[:, None, :]
    turn, speed, counted = cj.turn_series(pos, starts, never)
    steps, turning, mean = cj.slow_share(turn, speed, counted, slow=0.5)
    assert math.isclose(steps, 3 / 6)
    assert math.isclose(turning, 24 / 30)
    assert math.isclose(mean, 8.0)


def _decisions(slots, danger_rows, speed_rows, strengths, k=4):
    """One agent's decision trace over len(slots) steps on a ring of k slots."""
    ang = 2 * np.pi * np.asarray(slots) / k
    direction = np.c_[np.cos(ang), np.sin(ang)][:, None, :]
    return (
        np.asarray(slots)[:, None],
        direction,
        np.asarray(strengths, float)[:, None],
        np.asarray(danger_rows, float)[:, None, :],
        np.asarray(speed_rows, float)[:, None, :],
        np.ones((len(slots), 1), dtype=bool),
    )


@pytest.mark.parametrize(
    "danger_mid, speed_mid, kind",
    [
        ([0.5, 0.2, 0.0, 0.0], [0.25, 0.5, 1, 1], "jam"),  # A and B dangerous at the flip
        ([0.5, 0.0, 0.0, 0.0], [0.25, 1, 1, 1], "turned unsafe"),
        ([0.0, 0.0, 0.0, 0.0], [0.5, 1, 1, 1], "turned unsafe"),  # A safe only slower
        ([0.0, 0.0, 0.0, 0.0], [1, 1, 1, 1], "outvalued"),
    ],
)
def test_decision_flips_classify_why_a_was_dropped(danger_mid, speed_mid, kind):
    # Slots 0, 1, 0, 0: one flip A = 0 -> B = 1 -> A (90° out, 90° back), then straight.
    safe = [0.0] * 4
    trace = _decisions(
        [0, 1, 0, 0],
        [safe, danger_mid, safe, safe],
        [[1] * 4, speed_mid, [1] * 4, [1] * 4],
        [1, 1, 1, 1],
    )
    out = cj.decision_flips(*trace)
    assert out["steps"] == 3 and math.isclose(out["total"], np.pi)
    # The flip's first turn (A -> B, 90°) is half of the 180° the decision turned.
    assert math.isclose(out["flips"], 0.5)
    for name in cj.FLIP_KINDS:
        assert math.isclose(out[name], 0.5 if name == kind else 0.0)


def test_decision_flips_ignore_steady_turns_and_standing_agents():
    safe = [0.0] * 4
    ones = [1.0] * 4
    # A steady turn 0 -> 1 -> 2 -> 3: no flip.
    out = cj.decision_flips(*_decisions([0, 1, 2, 3], [safe] * 4, [ones] * 4, [1] * 4))
    assert out["flips"] == 0.0 and math.isclose(out["total"], 1.5 * np.pi)
    # The same flip as above while the agent does not move: nothing counted.
    trace = list(_decisions([0, 1, 0, 0], [safe] * 4, [ones] * 4, [1] * 4))
    trace[5] = np.zeros((4, 1), dtype=bool)
    out = cj.decision_flips(*trace)
    assert out["total"] == 0.0 and out["flips"] == 0.0


def test_size_shares_bin_the_turning_by_turn_size():
    never = np.array([np.nan])
    # Turns of 0.5, 2, 5, 20 and 40° (67.5° in all): one in each bin.
    starts, pos = _path([0, 0.5, 2.5, 7.5, 27.5, 67.5])
    turn, _, counted = cj.turn_series(pos, starts, never)
    assert np.allclose(cj.size_shares(turn, counted), np.array([0.5, 2, 5, 20, 40]) / 67.5)
    # A straight path has no turning to share.
    starts, pos = _path([0, 0, 0])
    turn, _, counted = cj.turn_series(pos, starts, never)
    assert all(math.isnan(x) for x in cj.size_shares(turn, counted))


def test_phase_shares_split_start_middle_and_end():
    never = np.array([np.nan])
    # 50 steps at 1 m/s: a 10° turn into step 3 (the first second), 20° into step 36 and
    # 30° into step 46, after which 4 steps (0.13 m) are left to the goal at the end.
    h = np.zeros(50)
    h[2:] = 10
    h[35:] = 30
    h[45:] = 60
    starts, pos = _path(h)
    turn, _, counted = cj.turn_series(pos, starts, never)
    goals = pos[-1]
    start, middle, end = cj.phase_shares(turn, counted, pos, goals, near=0.2)
    assert np.allclose([start, middle, end], np.array([10, 20, 30]) / 60)
    # With a wider "near" the middle turn counts as the end's too.
    start, middle, end = cj.phase_shares(turn, counted, pos, goals, near=1.0)
    assert np.allclose([start, middle, end], np.array([10, 0, 50]) / 60)


def test_main_prints_the_split_tables(capsys):
    # The command line end to end on one scene (contextsteer only): both tables, and the
    # size and phase shares of each row add up to the whole turning.
    assert cj.main(["--scenes", "crossing", "--no-rvo2", "--split"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| crossing | contextsteer")]
    assert len(rows) == 2
    cells = [c.strip() for c in rows[1].strip("|").split("|")]
    shares = [float(c.rstrip(" %")) for c in cells[3:]]
    assert abs(sum(shares[:5]) - 100) <= 3 and abs(sum(shares[5:]) - 100) <= 2


@pytest.mark.parametrize(
    ("smooth", "system", "params"),
    [
        (False, "cs-velocity", {}),
        (True, "cs-smooth", {}),
        # --params equal to the preset's own values: the same steering, so the phases,
        # turning slots and slot set must survive the rebuild.
        (False, "cs-velocity", {"inertia": "CROWD"}),
    ],
)
def test_contextsteer_system_is_the_benchmarks_own(smooth, system, params):
    # Oracle: crowd_quality's own builder of the same system. The split is only worth
    # reading if its contextsteer rows are the crowd benchmark's rows.
    import contextsteer as cs

    if params.get("inertia") == "CROWD":
        params = {"inertia": cs.scenarios.CROWD["inertia"]}
    scene = cq.SCENES["doorway"](seed=1)
    mine = cq.run(cj.contextsteer_system(scene, params, smooth), scene)
    ref = cq.run(cq.SYSTEMS[system](scene, cq.Options()), scene)
    assert mine["jitter_deg_per_step"] == ref["jitter_deg_per_step"]
    assert np.array_equal(mine["arrival_s"], ref["arrival_s"], equal_nan=True)


@pytest.mark.parametrize("seed", range(3))
def test_scale_variation_at_lag_one_is_the_counted_turning(seed):
    # Oracle: turn_series' counted turns, whose sum the jitter averages.
    rng = np.random.default_rng(seed)
    starts, pos = _paths(rng)
    arrival = np.full(pos.shape[1], np.nan)
    arrival[2] = 17 * cq.DT
    turn, _, counted = cj.turn_series(pos, starts, arrival)
    tv = cj.scale_variation(pos, starts, arrival, ks=(1, 2, 40, 41))
    assert math.isclose(tv[0], np.abs(turn[counted]).sum())
    assert np.isnan(tv[2]) and np.isnan(tv[3])  # lags as long as the run


def test_scale_variation_keeps_a_bend_and_drops_a_zigzag():
    never = np.array([np.nan])
    # A steady 5° a step: 5° a step at every lag (10 steps, lags up to 8).
    starts, pos = _path(5.0 * np.arange(10))
    tv = np.degrees(cj.scale_variation(pos, starts, never, ks=(1, 2, 4, 8)))
    assert np.allclose(tv / [9, 8, 6, 2], 5.0)
    # A zig-zag of ±10°: 10° a step at lag 1, nothing at lag 2, 4 ...
    starts, pos = _path([0, 10] * 6)
    tv = np.degrees(cj.scale_variation(pos, starts, never, ks=(1, 2, 4)))
    assert math.isclose(tv[0], 110) and np.allclose(tv[1:], 0.0, atol=1e-9)


def _two(headings_deg, other_at, other_heading=None):
    """Agent 0 walks at 1 m/s along ``headings_deg`` from the origin; agent 1 stands at
    ``other_at`` (or walks at 1 m/s along ``other_heading``)."""
    starts, p0 = _path(headings_deg)
    if other_heading is None:
        p1 = np.broadcast_to(np.asarray(other_at, float), p0[:, 0].shape)[:, None]
    else:
        s1, p1 = _path(other_heading)
        p1 = p1 + np.asarray(other_at, float)
    return np.r_[starts, np.asarray(other_at, float)[None]], np.concatenate([p0, p1], axis=1)


def test_side_switch_share_counts_a_swerve_to_the_other_side():
    never = np.array([np.nan, np.nan])
    # Agent 1 stands 3 m ahead, 0.2 m left of agent 0's line: agent 0 passes it on its
    # right. A swerve of 20° to the left passes it on the left instead (a switch); 10°
    # more to the left keeps that side: 20 of the 30° turned.
    starts, pos = _two([0, 0, 20, 20, 30], (3.0, 0.2))
    assert math.isclose(cj.side_switch_share(pos, starts, never), 20 / 30)
    # Swerving left and straight back switches twice: the turn back is a switch too.
    starts, pos = _two([0, 0, 20, 0, 0], (3.0, 0.2))
    assert math.isclose(cj.side_switch_share(pos, starts, never), 1.0)
    # Swerving to the right, and partly back, keeps the side: no switch.
    starts, pos = _two([0, 0, -20, -20, -10], (3.0, 0.2))
    assert cj.side_switch_share(pos, starts, never) == 0.0
    # A neighbour out of reach (5 m) does not count.
    starts, pos = _two([0, 0, 20, 0, 0], (5.0, 0.2))
    assert cj.side_switch_share(pos, starts, never, reach=4.0) == 0.0
    # Nor does one that is home (arrived before the swerve).
    starts, pos = _two([0, 0, 20, 0, 0], (3.0, 0.2))
    assert cj.side_switch_share(pos, starts, np.array([np.nan, cq.DT])) == 0.0


def test_main_prints_the_pooled_scales(capsys):
    assert cj.main(["--scenes", "doorway", "--no-rvo2", "--seed", "0:2", "--scales"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert (
        sum(line.startswith(f"| doorway | {s} | contextsteer") for line in lines for s in (0, 1))
        == 2
    )
    # The pooled scales row: its k = 1 share is 1.
    rows = [line for line in lines if line.startswith("| doorway | contextsteer")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[3] == "1.00" and cells[-1].endswith("%")


def test_metrics_count_the_turn_across_a_stop_apart():
    # East for 5 steps at 1 m/s, 3 steps creeping (below the jitter's 0.05 m/s), north
    # for 5: the jitter, which compares consecutive steps, sees no turn; across stops the
    # 90° between the last step east and the first north counts, one turn in 9 pairs of
    # consecutive fast steps.
    d = np.radians([0] * 5 + [45] * 3 + [90] * 5)
    v = np.r_[[1.0] * 5, [0.01] * 3, [1.0] * 5] * cq.DT
    pos = np.cumsum(v[:, None] * np.c_[np.cos(d), np.sin(d)], axis=0)[:, None, :]
    metrics = cq.Metrics(SimpleNamespace(walls=np.zeros((0, 4)), n=1, starts=np.zeros((1, 2))))
    for p in pos:
        metrics.update(p, np.ones(1, dtype=bool))
    out = metrics.summary()
    assert out["jitter_deg_per_step"] == pytest.approx(0.0, abs=1e-9)
    assert out["jitter_stops_deg_per_step"] == pytest.approx(90.0 / 9)
    # Without a stop both measures agree: a steady 5° a step.
    starts, pos = _path(5.0 * np.arange(8))
    metrics = cq.Metrics(SimpleNamespace(walls=np.zeros((0, 4)), n=1, starts=starts))
    for p in pos:
        metrics.update(p, np.ones(1, dtype=bool))
    out = metrics.summary()
    assert out["jitter_stops_deg_per_step"] == pytest.approx(out["jitter_deg_per_step"])
    assert out["jitter_deg_per_step"] == pytest.approx(5.0)


def test_metrics_turning_per_metre_does_not_grow_with_speed():
    # The same path, a steady 5° a step in steps of 1/30 m, walked at 1 m/s and then, in
    # steps three times as long (the same turns at a third of the resolution, so 15° a
    # step), at 3 m/s. Hand-worked: the jitter is 5 and 15° a step; per metre both turn
    # 5° / (1/30 m) = 150°/m, counted over the steps the jitter counts.
    def metrics_of(headings, speed):
        starts, pos = _path(headings, speed)
        m = cq.Metrics(SimpleNamespace(walls=np.zeros((0, 4)), n=1, starts=starts))
        for p in pos:
            m.update(p, np.ones(1, dtype=bool))
        return m.summary()

    slow = metrics_of(5.0 * np.arange(12), 1.0)
    fast = metrics_of(15.0 * np.arange(4), 3.0)
    assert slow["jitter_deg_per_step"] == pytest.approx(5.0)
    assert fast["jitter_deg_per_step"] == pytest.approx(15.0)
    assert slow["turn_deg_per_m"] == pytest.approx(150.0)
    assert fast["turn_deg_per_m"] == pytest.approx(150.0)
    # Pooled over seeds as the benchmark pools it: the mean of the runs' figures.
    row = dict(slow, arrived_pct=100.0, mean_ttg_s=1.0, ms_per_step=1.0, pre_push=None)
    row.update(arrival_s=np.array([1.0]), steps=12, step_limit=12, agents=1, collisions=0)
    other = dict(row, turn_deg_per_m=50.0)
    assert cq.pool([row, other])["turn_deg_per_m"] == pytest.approx(100.0)
