"""contextsteer.tune: Optuna ask/tell over sweep executors, pruning over seeds, the CLI."""

import concurrent.futures as cf
import json
import math
import os
import re
import signal

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import cli
from ctrl_c import ctrl_c_at_run, interrupt_when_busy

optuna = pytest.importorskip("optuna")


def _quad(x, y=0.0, seed=0):
    """A module-level run function (importable by process pools): a bowl at (2, y)."""
    return {"loss": (x - 2.0) ** 2 + y + 0.01 * seed, "walls": 1.0 if x > 3.5 else 0.0}


def _quad_none(x, seed=0):
    """As _quad, with a key whose value is None (as a time to goal nobody reached)."""
    return {**_quad(x, seed=seed), "none": None}


def test_space_shorthands_and_errors():
    from contextsteer.tune import distributions

    d = distributions(
        {
            "a": (1, 4),
            "b": (0.5, 2.0),
            "c": (1e-3, 1.0, "log"),
            "d": ["x", "y"],
            "e": optuna.distributions.FloatDistribution(0, 1),
        }
    )
    assert isinstance(d["a"], optuna.distributions.IntDistribution)
    assert d["c"].log and d["d"].choices == ("x", "y")
    for bad, err in [
        ({}, ValueError),
        ({"a": (2, 1)}, ValueError),
        ({"a": []}, ValueError),
        ({"a": (1, 2, "ln")}, ValueError),
        ({"a": ("p", "q")}, TypeError),
        ({"a": 3}, TypeError),
    ]:
        with pytest.raises(err):
            distributions(bad)


def test_tune_a_function_finds_the_bowl_and_is_seeded():
    kw = dict(
        objective="loss",
        n_trials=25,
        seeds=1,
        sampler="tpe",
        seed=3,
        executor="serial",
        progress=False,
    )
    res = cs.tune(_quad, {"x": (-5.0, 5.0)}, **kw)
    assert abs(res.best_params["x"] - 2.0) < 1.0
    assert res.best_value == min(t["value"] for t in res.trials if t["state"] == "COMPLETE")
    again = cs.tune(_quad, {"x": (-5.0, 5.0)}, **kw)
    assert [t["params"] for t in again.trials] == [t["params"] for t in res.trials]


def test_constraint_and_fixed_params():
    res = cs.tune(
        _quad,
        {"x": (0.0, 5.0)},
        params={"y": 1.0},
        objective=lambda r: -r["loss"],
        direction="maximize",
        constraint="walls",
        n_trials=12,
        sampler="random",
        executor="serial",
        progress=False,
    )
    assert res.best_params["y"] == 1.0
    assert res.best_params["x"] <= 3.5  # feasible only
    assert all(t["params"]["y"] == 1.0 for t in res.trials)
    with pytest.raises(ValueError, match="both fixed"):
        cs.tune(_quad, {"x": (0.0, 1.0)}, params={"x": 1.0}, executor="serial")


def test_a_continued_study_reports_the_fixed_params_its_best_trial_ran_with():
    """study= with other fixed params: the best trial of the first call ran with its own
    fixed params, and best_params must say so (it said the second call's)."""

    def run(x, agents, seed=0):
        return {"loss": (x - 2.0) ** 2 + agents}

    kw = dict(objective="loss", n_trials=4, sampler="random", executor="serial", progress=False)
    first = cs.tune(run, {"x": (0.0, 4.0)}, params={"agents": 0}, **kw)
    again = cs.tune(run, {"x": (0.0, 4.0)}, params={"agents": 10}, study=first.study, **kw)
    assert again.best_value == first.best_value  # every trial of the second call is worse
    assert again.best_params == first.best_params
    assert again.best_params["agents"] == 0
    assert run(**again.best_params)["loss"] == again.best_value


def test_a_continued_study_in_a_database_gives_the_fixed_params_back_with_their_types(tmp_path):
    """A database storage keeps user attributes as JSON: plain JSON gave an earlier call's
    tuple back as a list, inf as None, a float32 as a float, and an object with no JSON
    form failed the call."""
    optuna = pytest.importorskip("optuna")

    def run(x, size, limit, scale, table, thing, seed=0):
        return {"loss": (x - 2.0) ** 2 + size[0]}

    fixed = {
        "size": (0, 2.5),
        "limit": float("inf"),
        "scale": np.float32(0.1),
        "table": {1: [np.nan, (3,)], "n": np.arange(4, dtype=np.int16).reshape(2, 2)},
        "thing": object(),
    }
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'study.db'}")
    kw = dict(objective="loss", n_trials=3, sampler="random", executor="serial", progress=False)
    first = cs.tune(run, {"x": (0.0, 4.0)}, params=fixed, study=study, **kw)
    assert first.best_params["thing"] is fixed["thing"]  # this call's own objects
    worse = {**fixed, "size": (10, 2.5)}
    again = cs.tune(run, {"x": (0.0, 4.0)}, params=worse, study=study, **kw)
    got = again.best_params
    assert again.best_value == first.best_value and got["x"] == first.best_params["x"]
    assert got["size"] == (0, 2.5) and type(got["size"]) is tuple
    assert got["limit"] == float("inf")
    assert type(got["scale"]) is np.float32 and got["scale"] == np.float32(0.1)
    assert math.isnan(got["table"][1][0]) and got["table"][1][1] == (3,)
    assert got["table"]["n"].dtype == np.int16
    np.testing.assert_array_equal(got["table"]["n"], fixed["table"]["n"])
    assert got["thing"] == repr(fixed["thing"])  # no JSON form: its repr


def test_trial_records_are_json_ready_with_numpy_params():
    import numpy as np

    res = cs.tune(
        _quad,
        {"x": [1, 2]},
        params={"y": np.float32(0.5)},
        objective="loss",
        n_trials=2,
        executor="serial",
        progress=False,
    )
    records = res.to_records()
    json.dumps(records)
    assert {type(r["params"]["y"]) for r in records} == {float}


@pytest.mark.parametrize(
    "kw, error, message",
    [
        ({"n_trials": 1.5}, TypeError, "n_trials must be an integer, got 1.5"),
        ({"n_trials": "2"}, TypeError, "n_trials must be an integer, got '2'"),
        ({"n_trials": 0}, ValueError, "n_trials must be >= 1, got 0"),
        ({"batch": 1.5}, TypeError, "batch must be an integer"),
        ({"threads": 1.5}, TypeError, "threads must be an integer"),
        ({"workers": 1.5}, TypeError, "workers must be an integer"),
        ({"steps": 2.5}, TypeError, "steps must be an integer"),
        ({"seed": 1.5}, TypeError, r"seed \(the sampler's\) must be an integer"),
        ({"seeds": None}, TypeError, "seeds must be a count or integers"),
        ({"seeds": [-1]}, ValueError, r"seeds must be in \[0, 2\*\*64\)"),
        ({"space": {"x": (0.0, 10.0, "log")}}, ValueError, "x: a 'log' range needs low > 0"),
    ],
)
def test_bad_arguments_are_refused_up_front(kw, error, message):
    space = kw.pop("space", {"x": (0.0, 1.0)})
    with pytest.raises(error, match=f"^tune: {message}"):
        cs.tune(_quad, space, objective="loss", executor="serial", progress=False, **kw)


def test_pruner_stops_bad_trials_after_the_first_seed():
    """Seeds 0..3: the median pruner stops trials that are worse than the median after a
    seed, so pruned trials ran fewer seeds than complete ones."""
    res = cs.tune(
        _quad,
        {"x": (-10.0, 10.0)},
        objective="loss",
        n_trials=30,
        seeds=4,
        sampler="random",
        seed=1,
        executor="serial",
        progress=False,
    )
    states = {t["state"] for t in res.trials}
    assert "PRUNED" in states and "COMPLETE" in states
    for t in res.trials:
        assert len(t["values"]) == (4 if t["state"] == "COMPLETE" else len(t["values"]))
        if t["state"] == "PRUNED":
            assert len(t["values"]) < 4


def test_failures_and_non_finite_objectives_fail_the_trial():
    def boom(x, seed=0):
        if x > 0:
            raise RuntimeError("no")
        return {"loss": float("nan") if x < -0.5 else x}

    res = cs.tune(
        boom,
        {"x": (-1.0, 1.0)},
        objective="loss",
        n_trials=10,
        sampler="random",
        seed=2,
        executor="serial",
        progress=False,
        pruner=None,
    )
    fails = [t for t in res.trials if t["state"] == "FAIL"]
    assert fails and all(t["error"] for t in fails)
    assert -0.5 <= res.best_params["x"] <= 0


def test_tune_a_scenario_on_an_executor():
    """The same runner as sweep: a thread pool executor (any concurrent.futures.Executor)."""
    with cf.ThreadPoolExecutor(2) as pool:
        res = cs.tune(
            "oncoming",
            {"slots": [8, 16]},
            objective="metrics.composite",
            n_trials=4,
            seeds=2,
            steps=40,
            sampler="random",
            executor=pool,
            batch=2,
            progress=False,
        )
    assert len(res.trials) == 4 and {t["state"] for t in res.trials} <= {"COMPLETE", "PRUNED"}
    direct = cs.sweep(
        "oncoming",
        {"slots": [res.trials[0]["params"]["slots"]]},
        seeds=2,
        steps=40,
        executor="serial",
        progress=False,
    )
    assert res.trials[0]["values"][0] == pytest.approx(direct[0].value("metrics.composite"))
    with pytest.raises(ValueError, match="does not take 'wings'"):
        cs.tune("oncoming", {"wings": [1, 2]}, executor="serial")


def test_tune_with_local_processes():
    res = cs.tune(
        _quad,
        {"x": (0.0, 4.0)},
        objective="loss",
        n_trials=2,
        seeds=1,
        sampler="random",
        workers=2,
        progress=False,
    )
    assert [t["state"] for t in res.trials] == ["COMPLETE", "COMPLETE"]


def test_cli_tune(tmp_path, capsys):
    out = tmp_path / "tune.json"
    code = cli.main(
        [
            "tune",
            "racetrack",
            "-p",
            "look_ahead=12.0:30.0",
            "-p",
            "slots=8,16",
            "--fix",
            "agents=3",
            "--key",
            "report.estimated_lap_time",
            "--constraint",
            "metrics.collisions.agent_wall",
            "--trials",
            "3",
            "--seeds",
            "1",
            "--steps",
            "60",
            "--workers",
            "1",
            "--sampler",
            "random",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "racetrack: 3 trials" in text and "look_ahead =" in text
    doc = json.loads(out.read_text())
    assert doc["best_params"]["agents"] == 3 and len(doc["trials"]) == 3
    assert doc["space"]["slots"] == [8, 16]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tune", "racetrack"], "at least one tuned parameter"),
        (["tune", "racetrack", "-p", "look_ahead"], "NAME=..."),
        (["tune", "racetrack", "-p", "look_ahead=1:2:ln"], "LOW:HIGH:log"),
        (["tune", "racetrack", "-p", "look_ahead=a:b"], "needs numbers"),
        (["tune", "racetrack", "-p", "wings=1:2"], "does not take 'wings'"),
        (["tune", "racetrack", "-p", "slots=8,16", "--fix", "slots=8"], "given twice"),
    ],
)
def test_cli_tune_bad_arguments_exit_2(argv, message, capsys):
    assert cli.main([*argv, "--quiet"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("spec", [(1.0, math.inf), (-math.inf, 0.0), (0, math.inf, "log")])
def test_a_range_needs_finite_ends(spec):
    # (1.0, inf) passed and crashed later in NumPy's sampler (OverflowError).
    from contextsteer.tune import distributions

    with pytest.raises(ValueError, match=r"tune: distance: a range needs finite ends"):
        distributions({"distance": spec})


def test_cli_tune_refuses_an_infinite_range_before_running(capsys):
    argv = ["tune", "oncoming", "-p", "distance=0:inf", "--trials", "1", "--seeds", "1"]
    assert cli.main([*argv, "--steps", "5", "--workers", "1", "--quiet"]) == 2
    assert "distance: a range needs finite ends, got (0, inf)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kw, message",
    [
        # A misspelled key was NaN, refused by Optuna ("NaN is not allowed"); then it failed
        # every trial, each after its runs: all of them ran for nothing.
        ({"constraint": "wals"}, "constraint key 'wals' is not in the run's result; there: "),
        ({"objective": "los"}, "objective key 'los' is not in the run's result; there: loss"),
        ({"constraint": "loss.x"}, "constraint key 'loss.x' is not in the run's result"),
    ],
)
def test_a_missing_key_stops_tune_at_the_first_result(kw, message):
    calls = []

    def counted(**params):
        calls.append(params)
        return _quad(**params)

    kw = {"objective": "loss", **kw}
    with pytest.raises(ValueError, match=re.escape(message)):
        cs.tune(
            counted,
            {"x": (0.0, 1.0)},
            n_trials=5,
            seeds=3,
            executor="serial",
            batch=2,
            progress=False,
            **kw,
        )
    assert len(calls) == 2  # the first batch's first seed, not 5 trials x 3 seeds


def _trial_states_after(error, match, **kw):
    """The states of a study's trials after a tune of _quad (batches of 2) that raised."""
    study = optuna.create_study()
    with pytest.raises(error, match=match):
        cs.tune(_quad, {"x": (0.0, 1.0)}, batch=2, progress=False, study=study, **kw)
    return [t.state for t in study.trials]


def test_a_missing_key_leaves_the_study_without_running_trials():
    states = _trial_states_after(
        ValueError, "not in the run's result", objective="los", n_trials=3, executor="serial"
    )
    assert states == [optuna.trial.TrialState.FAIL] * 2


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"constraint": lambda r: math.nan}, "constraint <lambda> is not finite (nan) for seed 0"),
        # A key whose value is None (nobody home: no time to goal) fails only its trial.
        ({"constraint": "none"}, "constraint key 'none' is None in the run's result"),
    ],
)
def test_a_bad_value_fails_the_trials_with_a_message_naming_it(kw, message):
    kw = {"objective": "loss", **kw}
    with pytest.raises(ValueError, match="no feasible complete trial") as info:
        cs.tune(_quad_none, {"x": (0.0, 1.0)}, n_trials=2, executor="serial", progress=False, **kw)
    assert f"the first failed trial: ValueError: {message}" in str(info.value)


def test_cli_tune_names_a_missing_constraint_key(capsys):
    argv = ["tune", "oncoming", "-p", "distance=10:16", "--trials", "3", "--seeds", "2"]
    argv += ["--steps", "5", "--workers", "1", "--quiet"]
    assert cli.main([*argv, "--constraint", "metrics.collisions.agent_wal"]) == 2
    err = capsys.readouterr().err
    assert "constraint key 'metrics.collisions.agent_wal' is not in the run's result" in err
    assert "metrics.collisions.agent_wall" in err  # the keys that are there


@pytest.mark.parametrize("seeds", [[0.7], [0, 1.0], True, [True], ["0"]])
def test_seeds_must_be_integers(seeds):
    # [0.7] ran seed 0 (int(0.7)); True ran range(1). sweep() raises TypeError too.
    with pytest.raises(TypeError, match="tune: seeds must be"):
        cs.tune(_quad, {"x": (0.0, 1.0)}, objective="loss", seeds=seeds, executor="serial")


def test_cli_tune_steps_has_the_same_bound_as_run_and_sweep(capsys):
    parser = cli.build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["tune", "oncoming", "--steps", str(cli.MAX_STEPS + 1)])
    assert "argument --steps: steps must be in [1, 1,000,000,000]" in capsys.readouterr().err
    assert parser.parse_args(["tune", "oncoming", "--steps", str(cli.MAX_STEPS)]).steps == 10**9


def test_cli_tune_checks_the_out_folder_before_running(tmp_path, capsys):
    argv = ["tune", "oncoming", "-p", "distance=10:16", "--trials", "1", "--seeds", "1"]
    argv += ["--steps", "5", "--workers", "1", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "missing" / "t.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli.main([*argv, "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_ctrl_c_keeps_the_study_and_fails_the_trial_in_flight():
    """Ctrl-C during a trial raises TuneInterrupted (a KeyboardInterrupt) with the study
    and the finished trials; the interrupted trial is told as failed, as Optuna's own
    optimize does, so the study continues."""
    calls = []

    def run(x, seed):
        calls.append(x)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return {"loss": (x - 2.0) ** 2}

    with pytest.raises(KeyboardInterrupt) as info:
        cs.tune(
            run,
            {"x": (0.0, 4.0)},
            objective="loss",
            n_trials=5,
            seeds=1,
            sampler="random",
            executor="serial",
            progress=False,
        )
    stop = info.value
    assert isinstance(stop, cs.TuneInterrupted)
    assert [t["state"] for t in stop.trials] == ["COMPLETE", "COMPLETE", "FAIL"]
    assert stop.trials[2]["error"] == "KeyboardInterrupt"
    states = [t.state.name for t in stop.study.trials]
    assert states == ["COMPLETE", "COMPLETE", "FAIL"]
    done = [t["value"] for t in stop.trials[:2]]
    assert done == [t.value for t in stop.study.trials[:2]]
    more = cs.tune(
        run,
        {"x": (0.0, 4.0)},
        objective="loss",
        n_trials=2,
        seeds=1,
        executor="serial",
        progress=False,
        study=stop.study,
    )
    assert len(more.study.trials) == 5 and more.best_value <= min(done)


_TUNE_HANG = """
import os, time
def run(x, seed):
    open(os.path.join(os.environ["MARKS"], f"{os.getpid()}"), "w").close()
    time.sleep(600)     # a run far longer than anyone waits
    return {"loss": x}
"""

_TUNE_SCRIPT = """
import signal, sys
sys.path.insert(0, sys.argv[1])
import contextsteer as cs, hang
if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        cs.tune(hang.run, {"x": (0.0, 1.0)}, objective="loss", n_trials=4, workers=2,
                progress=False)
    except cs.TuneInterrupted as stop:
        print("interrupted", [t["state"] for t in stop.trials], flush=True)
        raise SystemExit(3)
"""


def test_ctrl_c_stops_a_process_tune_without_waiting_for_its_runs(tmp_path):
    """tune used to shut its pool down with wait=True after Ctrl-C: the caller waited for
    every run in flight (here 10 minutes)."""
    code, out, err = interrupt_when_busy(tmp_path, _TUNE_HANG, _TUNE_SCRIPT)
    assert code == 3 and "interrupted ['FAIL', 'FAIL']" in out, (out, err)


def test_cli_tune_interrupted_writes_the_trials(tmp_path, capsys, monkeypatch):
    # Ctrl-C during the second trial: exit 130, and --out holds the first and the failed one.
    ctrl_c_at_run(monkeypatch, 2)
    out = tmp_path / "tune.json"
    argv = ["tune", "racetrack", "-p", "look_ahead=12.0:30.0", "--fix", "agents=2"]
    argv += [
        "--trials",
        "3",
        "--seeds",
        "1",
        "--steps",
        "10",
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(out),
    ]
    assert cli.main(argv) == 130
    assert "tune interrupted after 1 complete trials; wrote the trials to" in (
        capsys.readouterr().err
    )
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True
    assert [t["state"] for t in doc["trials"]] == ["COMPLETE", "FAIL"]


def test_an_objective_that_is_not_a_number_stops_at_once_and_function_steps_refused():
    """objective="metrics.collisions" (a dict) failed every trial one by one; a missing
    key stopped at once with the private _KeyMissing as its type."""
    pytest.importorskip("optuna")

    def nested(x, seed=0):
        return {"metrics": {"collisions": {"total": 1}}, "x": x}

    with pytest.raises(ValueError, match="must name a number.*its keys: total") as info:
        cs.tune(
            nested,
            {"x": (0.0, 1.0)},
            objective="metrics.collisions",
            n_trials=4,
            executor="serial",
            progress=False,
        )
    assert type(info.value) is ValueError
    with pytest.raises(ValueError, match="steps applies to scenarios only"):
        cs.tune(
            _quad,
            {"x": (0.0, 4.0)},
            objective="loss",
            n_trials=2,
            steps=10,
            executor="serial",
            progress=False,
        )


def test_a_trial_that_ran_without_the_constraint_is_not_feasible():
    """A study continued with a constraint: its earlier trials never measured it. They
    were read as feasible (0), so the first call's best came back as the best although
    every trial that measured the constraint broke it (fuzz round 13)."""

    def run(x, seed=0):
        return {"loss": (x - 2.0) ** 2, "broken": 1.0}

    kw = dict(objective="loss", n_trials=3, sampler="random", executor="serial", progress=False)
    first = cs.tune(run, {"x": (0.0, 4.0)}, **kw)
    with pytest.raises(cs.NoFeasibleTrial) as info:
        cs.tune(run, {"x": (0.0, 4.0)}, constraint="broken", study=first.study, **kw)
    assert "no feasible" in str(info.value)

    def fine(x, seed=0):
        return {"loss": (x - 2.0) ** 2, "broken": 0.0}

    again = cs.tune(fine, {"x": (0.0, 4.0)}, constraint="broken", study=first.study, **kw)
    ours = [t for t in again.trials if t["state"] == "COMPLETE"]
    assert again.best_value == min(t["value"] for t in ours)  # one of this call's


def test_any_error_that_ends_tune_fails_its_trials_in_flight():
    # An executor that refuses work (here one already shut down) ended tune with the
    # trials it had asked left RUNNING in the study for good (fuzz round 15).
    pool = cf.ThreadPoolExecutor(2)
    pool.shutdown()
    states = _trial_states_after(
        RuntimeError, "shutdown", objective="loss", n_trials=4, executor=pool
    )
    assert states == [optuna.trial.TrialState.FAIL] * 2


def _on(study, space, **kw):
    """tune of _quad on ``study``, one serial trial at a time unless ``kw`` says."""
    return cs.tune(
        _quad, space, objective="loss", executor="serial", study=study, progress=False, **kw
    )


def test_a_study_of_several_objectives_and_a_seed_parameter_are_refused_up_front():
    study = optuna.create_study(directions=["minimize", "minimize"])
    with pytest.raises(ValueError, match="2 objectives"):
        _on(study, {"x": (0.0, 1.0)}, n_trials=1)
    assert study.trials == []
    # A run function gets seed= from tune: every trial failed on "multiple values".
    for kw in ({"params": {"seed": 3}}, {}):
        space = {"x": (0.0, 1.0), **({} if kw else {"seed": (0, 9)})}
        with pytest.raises(ValueError, match="seeds go in seeds="):
            _on(None, space, n_trials=1, **kw)


def test_a_failing_ask_leaves_no_trial_running():
    # Continuing a study with a parameter of another kind: Optuna's ask() makes the trial,
    # then raises; it stayed RUNNING for good (fuzz round 16).
    study = optuna.create_study()
    _on(study, {"x": (0.0, 1.0)}, n_trials=2)
    with pytest.raises(ValueError):
        _on(study, {"x": [0.0, 1.0]}, n_trials=1)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE", "FAIL"]


class _SamplerThatBreaks(optuna.samplers.RandomSampler):
    """Raises (or presses Ctrl-C) in before_trial, which Optuna's ask() runs after it has
    made the trial."""

    def __init__(self, error, after):
        super().__init__(seed=0)
        self.error, self.after, self.n = error, after, 0

    def before_trial(self, study, trial):
        self.n += 1
        if self.n > self.after:
            if self.error == "SIGINT":
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, inside ask()
            else:
                raise self.error
        return super().before_trial(study, trial)


@pytest.mark.parametrize("error", [RuntimeError("sampler broke"), KeyboardInterrupt(), "SIGINT"])
def test_an_ask_that_raises_after_making_its_trial_leaves_it_failed(error):
    # The trial made by ask() stayed RUNNING for good when the sampler raised in it, or
    # Ctrl-C landed there (fuzz round 19).
    study = optuna.create_study(sampler=_SamplerThatBreaks(error, after=3))
    want = RuntimeError if isinstance(error, RuntimeError) else cs.TuneInterrupted
    with pytest.raises(want):
        _on(study, {"x": (0.0, 1.0)}, n_trials=6, batch=2)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE", "FAIL", "FAIL"]


def _interrupts(x, seed=0):
    raise KeyboardInterrupt("ctrl-c in run")


def test_a_runs_keyboard_interrupt_on_a_pool_stops_tune():
    # On a thread pool it failed its trial only and tune went on (fuzz round 18).
    with cf.ThreadPoolExecutor(2) as pool, pytest.raises(cs.TuneInterrupted):
        cs.tune(
            _interrupts,
            {"x": (0.0, 1.0)},
            objective="loss",
            n_trials=4,
            batch=2,
            executor=pool,
            progress=False,
        )


def test_fixed_params_of_numpy_types_wider_than_a_python_number_are_kept_as_their_repr():
    # A longdouble's item() is a longdouble: the tagging recursed without end, and every
    # tune with one among its fixed params raised RecursionError (fuzz round 20).
    from contextsteer.tune import _from_attr, _to_attr

    for value in (np.longdouble(1.1), np.array([1.1], dtype=np.longdouble)):
        back = _from_attr(json.loads(json.dumps(_to_attr(value))))
        assert back == repr(value)
    res = cs.tune(
        lambda x, c, seed=0: {"loss": x},
        {"x": (0.0, 1.0)},
        objective="loss",
        n_trials=2,
        executor="serial",
        params={"c": np.longdouble(1.1)},
        progress=False,
    )
    assert res.best_params["c"] == np.longdouble(1.1)  # this call's own value


def test_tune_names_its_own_mistakes_not_pythons_or_optunas():
    """An int range end past float range raised a bare OverflowError, and a continued
    study given another kind of distribution for a parameter raised Optuna's message,
    naming neither the parameter nor tune (fuzz round 26)."""
    kw = dict(objective="loss", n_trials=2, sampler="random", executor="serial", progress=False)
    with pytest.raises(ValueError, match="tune: x: a range needs finite ends"):
        cs.tune(_quad, {"x": (1, 10**400)}, **kw)
    first = cs.tune(_quad, {"x": (0.0, 4.0)}, **kw)
    with pytest.raises(ValueError, match=r"tune: 'x' is drawn from another kind of distribution"):
        cs.tune(_quad, {"x": [1.0, 2.0]}, study=first.study, **kw)
