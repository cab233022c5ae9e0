"""benchmarks/tune_crowd.py: it tunes the library's own crowd configuration, and its score
is the documented one."""

import math
import pickle

import numpy as np
import pytest

import contextsteer as cs
from bench_modules import load

pytest.importorskip("scipy")  # crowd_quality.Metrics finds contacts with a k-d tree

cq = load("crowd_quality")
tc = load("tune_crowd")


def _run(scene, steering, steps=90):
    system = cq.ContextSteer(scene, steering, 6.0, True)
    passed = scene.gate_side() == 0
    out = []
    for _ in range(steps):
        system.set_targets(scene.targets(system.positions(), passed))
        system.step()
        out.append(system.positions().copy())
    return np.array(out)


@pytest.mark.parametrize("name", ["doorway", "crossing"])
def test_script_options_are_exactly_the_crowd_scenarios_steering(name):
    # Oracle: scenarios.crowd_steering, the configuration the search must start from; a
    # script that built its own copy could drift from it and tune something else.
    scene = cq.SCENES[name](seed=3)
    walls = len(scene.walls) > 0
    mine = _run(scene, tc.steering(walls, dict(cs.scenarios.CROWD)))
    library = _run(scene, cs.scenarios.crowd_steering(walls=walls))
    assert np.array_equal(mine, library)
    # Every set the script scores decides in the default's phases (CROWD_PHASES), the
    # plain and smooth sets included.
    phases = cs.scenarios.CROWD_PHASES
    plain = _run(scene, tc.steering(walls, {}))
    assert np.array_equal(
        plain,
        _run(scene, cs.scenarios.crowd_steering(walls=walls, options={}, decision_phases=phases)),
    )
    assert not np.array_equal(plain, library)
    # and the options do reach the danger behaviour
    smooth = _run(scene, tc.steering(walls, dict(cs.scenarios.SMOOTH_CROWD)))
    assert np.array_equal(
        smooth,
        _run(
            scene,
            cs.scenarios.crowd_steering(walls=walls, smooth=True, decision_phases=phases),
        ),
    )


def test_creep_flag_reaches_the_danger_behaviour(monkeypatch):
    # --creep sets tc.CREEP: every scored set then has CollisionDanger(creep=True), the
    # library's crowd_steering(creep=True); without it, creep stays off.
    def creep_of(st):
        (danger,) = [b for b in st.behaviours if isinstance(b, cs.CollisionDanger)]
        return danger.creep

    assert not creep_of(tc.steering(True, dict(cs.scenarios.CROWD)))
    monkeypatch.setattr(tc, "CREEP", True)
    assert creep_of(tc.steering(True, dict(cs.scenarios.CROWD)))
    assert creep_of(tc.steering(False, {}))
    scene = cq.SCENES["doorway"](seed=3)
    mine = _run(scene, tc.steering(True, dict(cs.scenarios.CROWD)), steps=60)
    library = _run(scene, cs.scenarios.crowd_steering(walls=True, creep=True), steps=60)
    assert np.array_equal(mine, library)


def test_script_slots_are_the_crowd_scenarios_slots():
    # Oracle: the slot set the crowd scenarios give their velocity configuration; the
    # search must tune the options for the slots they are used with.
    sim = cs.scenarios.get("hallway").builder(danger="velocity")
    expected = np.asarray(sim.slot_set.directions)
    assert np.array_equal(np.asarray(tc.slot_set().directions), expected)
    assert tc.slot_set(ring=True) is None and tc.slot_set(24) is None


def test_dense_contacts_are_the_benchmark_runs_contacts_summed():
    # Oracle: the benchmark's own runs of the scene with the nudged options, summed. A
    # 0.3 s horizon without margin lets the circle's agents touch (16 a run).
    params = {"horizon": 0.3, "margin": 0.0}
    got = tc.dense_contacts(params, 2, nudge=0.02, scene_name="circle-16")
    want = 0
    for k in range(2):
        scene = cq.SCENES["circle-16"]()
        steer = cs.scenarios.crowd_steering(
            walls=False,
            options=tc.nudged(params, k, 0.02),
            decision_phases=cs.scenarios.CROWD_PHASES,
        )
        system = cq.ContextSteer(scene, steer, 6.0, True, slot_set=cs.scenarios.crowd_slots())
        want += cq.run(system, scene)["collisions"]
    assert got == want > 0
    assert tc.dense_contacts(params, 0) == 0


def test_dense_contacts_cost_two_each():
    res = {"a": _row(1.0, 0.5)}
    assert math.isclose(tc.score(res, dense=3), tc.score(res) + 6.0)


def _row(jitter, rvo2, **kw):
    base = dict(jitter=jitter, rvo2_jitter=rvo2, collisions=0, wall=0, arrived=100.0)
    base.update(arrived_min=100.0, ttg_vs=0.0)
    base.update(kw)
    return base


def test_score_is_the_mean_log_jitter_ratio_plus_the_penalties():
    # Hand-worked: jitter 2x and 4x RVO2's -> mean log = (log 2 + log 4) / 2 = 1.5 log 2.
    res = {"a": _row(1.0, 0.5), "b": _row(2.0, 0.5)}
    assert math.isclose(tc.score(res), 1.5 * math.log(2.0))
    # One contact (2), arrivals 98.5 % pooled (0.3 x 1.0) with a seed at 90 % (0.1 x 2),
    # time to goal +15 % (0.1 x 2): 2 + 0.3 + 0.2 + 0.2 = 2.7 more.
    res["b"] = _row(2.0, 0.5, collisions=1, arrived=98.5, arrived_min=90.0, ttg_vs=15.0)
    assert math.isclose(tc.score(res), 1.5 * math.log(2.0) + 2.7)
    # Seed 0 alone: +20 % (0.1 x 6) and 95 % home (0.5 x 5) on one scene: 3.1 more.
    seed0 = {"a": _row(1.0, 0.5, ttg_vs=20.0, arrived=95.0), "b": _row(2.0, 0.5)}
    assert math.isclose(tc.score(res, seed0), 1.5 * math.log(2.0) + 2.7 + 3.1)


def test_nudged_scales_each_float_option_within_the_fraction_per_seed():
    params = {"horizon": 2.0, "turn_steps": 5, "inertia": 0.3, "commit_danger": 0.0}
    assert tc.nudged(params, 4, 0.0) == params
    a, b = tc.nudged(params, 4, 0.02), tc.nudged(params, 5, 0.02)
    assert a == tc.nudged(params, 4, 0.02)  # one seed, one neighbour, on every scene
    assert a != b
    assert a["turn_steps"] == 5 and a["commit_danger"] == 0.0  # integers and zeros stay
    for key in ("horizon", "inertia"):
        assert a[key] != params[key]
        assert abs(a[key] / params[key] - 1.0) <= 0.02


def test_fixed_options_are_held_and_never_asked_of_the_trial():
    optuna = pytest.importorskip("optuna")
    asked = {
        "commit": 0.05,
        "turn_margin": 0.02,
        "return_margin": 0.3,
        "return_step": 0.07,
        "retreat_speed": 0.45,
        "inertia": 0.15,
        "side_bias": 0.06,
        "smoothness": 0.35,
        "speed_exponent": 0.6,
        "horizon": 2.2,
    }
    # FixedTrial raises for any option it was not given, so commit_danger and turn_steps
    # must come from --fix, not from the trial.
    params = tc.search_space(optuna.trial.FixedTrial(asked), {"commit_danger": 0, "turn_steps": 6})
    assert params == {**asked, "commit_danger": 0.0, "turn_steps": 6}
    assert isinstance(params["turn_steps"], int)
    with pytest.raises(ValueError):
        tc.search_space(optuna.trial.FixedTrial(asked))


def test_fixed_options_outside_the_search_are_passed_on():
    # --fix '{"unstick": true, "jam_horizon": 0.6, ...}': a search over the default's other
    # options keeps them (search_space used to return the searched options alone).
    optuna = pytest.importorskip("optuna")
    asked = {
        "commit": 0.05, "commit_danger": 0.0, "turn_steps": 4, "turn_margin": 0.02,
        "return_margin": 0.3, "return_step": 0.07, "retreat_speed": 0.45, "inertia": 0.15,
        "side_bias": 0.06, "smoothness": 0.35, "speed_exponent": 0.6, "horizon": 2.2,
    }  # fmt: skip
    extra = {"unstick": True, "jam_horizon": 0.6, "jam_oncomers": 3}
    params = tc.search_space(optuna.trial.FixedTrial(asked), extra)
    assert params == {**asked, **extra}


def test_circle_score_by_hand():
    # circle-250 turns 2x RVO2's: 0.2 log 2. circle-16 turns 1.5x the reference: 2 log 1.5;
    # circle-64 turns less than the reference: nothing. circle-16 takes 10 % longer than
    # the reference (0.1 x 5), circle-250 4 % (within the 5 % allowed): nothing.
    ref = {"circle-250": (0.4, 100.0), "circle-16": (0.5, 10.0), "circle-64": (0.6, 20.0)}
    got = {"circle-250": (0.6, 104.0), "circle-16": (0.75, 11.0), "circle-64": (0.3, 20.0)}
    want = 0.2 * math.log(2.0) + 2.0 * math.log(1.5) + 0.5
    assert math.isclose(tc.circle_penalty(got, ref, 0.3), want)
    # With it the seeded scenes' mean weighs 4/5: jitter 2x RVO2's on one scene.
    res = {"a": _row(1.0, 0.5)}
    assert math.isclose(tc.score(res, circles=want), 0.8 * math.log(2.0) + want)


def test_circle_figures_pool_the_dense_runs():
    # Oracle: the benchmark's pooled rows (a nudged circle-16 run stands in for the
    # circle-250 runs, which take longer); circle-16 and circle-64 from one unnudged run.
    params = dict(cs.scenarios.CROWD)
    rows = tc.dense_runs(params, 1, nudge=0.02, scene_name="circle-16")
    got = tc.circle_figures(params, rows)
    pooled = cq.pool(rows)
    assert got["circle-250"] == (pooled["jitter_deg_per_step"], pooled["mean_ttg_s"])
    for n in (16, 64):
        scene = cq.SCENES[f"circle-{n}"]()
        row = cq.run(tc.system(scene, params), scene)
        assert got[f"circle-{n}"] == (row["jitter_deg_per_step"], row["mean_ttg_s"])


def test_validate_table_has_turning_per_metre_and_stale_rvo2_rows_are_run_again(tmp_path):
    # The table compares turning per metre walked as well as per step; RVO2 rows cached by
    # an older script (no turn_deg_per_m) are run again rather than raising a KeyError.
    pytest.importorskip("pyrvo")
    cache = tmp_path / "rvo2.pkl"
    fresh = tc.rvo2_runs([0], str(cache))
    stale = {
        k: {kk: vv for kk, vv in v.items() if kk != "turn_deg_per_m"} for k, v in fresh.items()
    }
    stale[("hallway", 0)]["jitter_deg_per_step"] = -1.0  # marks a row not run again
    cache.write_bytes(pickle.dumps(stale))
    again = tc.rvo2_runs([0], str(cache))
    for key, row in fresh.items():
        # Oracle: the fresh run (RVO2 is deterministic), not the stale row.
        assert again[key]["turn_deg_per_m"] == row["turn_deg_per_m"]
        assert again[key]["jitter_deg_per_step"] == row["jitter_deg_per_step"]
    res = {
        "hallway": {
            "jitter": 0.6,
            "rvo2_jitter": 0.4,
            "per_metre": 15.0,
            "rvo2_per_metre": 12.0,
            "arrived": 100.0,
            "arrived_min": 100.0,
            "ttg_vs": -2.0,
            "collisions": 0,
        }
    }
    assert "jitter 0.60 (RVO2 0.40, x1.50; 15.0 deg/m, x1.25)" in tc._table(res)
