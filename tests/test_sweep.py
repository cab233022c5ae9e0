"""Parameter sweeps (contextsteer.sweep): grid order, run order and determinism on every
executor, per-seed statistics, validation and failed runs; Dask and Ray when installed."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import json
import math
import re
import signal
import sys

import numpy as np
import pytest

import contextsteer as cs
from contextsteer._json import jsonable
from contextsteer.sweep import grid
from ctrl_c import interrupt_when_busy


def summed(*, a, b=0.0, seed):
    """A module-level run function (importable by worker processes)."""
    rng = np.random.default_rng(seed)
    return {"value": a * 10 + b + float(rng.integers(0, 100)), "nested": {"seed": seed}}


def labelled(*, a, seed):
    return {**summed(a=a, seed=seed), "label": f"a={a}"}


def fails_on_two(*, a, seed):
    if a == 2:
        raise ValueError("a = 2 is not allowed")
    return {"value": float(a)}


class TwoArgError(Exception):
    """An exception pickle cannot rebuild (its __init__ takes two arguments)."""

    def __init__(self, a, b):
        super().__init__(f"{a}/{b}")


def fails_unpicklably_on_two(*, a, seed):
    if a == 2:
        raise TwoArgError("x", "y")
    return {"value": float(a)}


def returns_unpicklably_on_two(*, a, seed):
    return {"value": float(a), "note": TwoArgError("p", "q") if a == 2 else None}


def cancelled_on_two(*, a, seed):
    import asyncio

    if a == 2:
        raise asyncio.CancelledError("cancelled run")
    return {"value": float(a)}


def exits_on_two(*, a, seed):
    if a == 2:
        sys.exit("run gave up")
    return {"value": float(a)}


def metrics_only(res):
    return [(r.index, r.params, r.seed, r.result["metrics"], r.result["report"]) for r in res]


def test_grid_is_the_cartesian_product_in_key_order():
    g = grid(a=[1, 2], b=["x", "y", "z"])
    assert g == [{"a": a, "b": b} for a in (1, 2) for b in "xyz"]
    assert grid() == [{}]
    with pytest.raises(ValueError, match="b has no values"):
        grid(a=[1], b=[])
    with pytest.raises(TypeError, match="sequence"):
        grid(a=3)
    with pytest.raises(TypeError, match="sequence"):
        grid(a="abc")
    with pytest.raises(TypeError, match="grid: a must be a sequence"):  # (a bare len() error)
        grid(a=np.array(5))
    assert (
        len(cs.sweep(summed, {"a": [1]}, seeds=np.array(2), executor="serial", progress=False)) == 2
    )


def test_a_sweep_too_big_to_hold_is_refused_with_its_count(monkeypatch):
    # 10**10 dicts would fill memory before the first run; the count is refused first.
    with pytest.raises(ValueError, match=r"100000 a × 100000 b give 10,000,000,000 runs"):
        grid(a=range(100_000), b=range(100_000))
    with pytest.raises(ValueError, match=r"the seeds give 10,000,000,000 runs.*one sweep"):
        cs.sweep(summed, seeds=10**10, executor="serial", progress=False)
    with pytest.raises(ValueError, match=r"the seeds give 10,000,000,000 runs.*one trial"):
        cs.tune(summed, {"a": (0.0, 1.0)}, objective="value", n_trials=1, seeds=range(10**10))
    # Lists, ranges longer than sys.maxsize and endless generators are counted before
    # they are listed (range(10**10) and itertools.count() filled memory; range(2**70)
    # raised a bare OverflowError; fuzz round 20).
    with pytest.raises(ValueError, match=r"2 a × 10000000000 b give 20,000,000,000 runs"):
        grid(a=[1, 2], b=range(10**10))
    with pytest.raises(ValueError, match=r"the seeds give 1,180,591,620,717,411,303,424 runs"):
        cs.sweep(summed, seeds=range(2**70), executor="serial", progress=False)
    with pytest.raises(ValueError, match=r"the seeds give more than 10,000,000 runs"):
        cs.sweep(summed, seeds=itertools.count(), executor="serial", progress=False)
    with pytest.raises(ValueError, match=r"10000 a × the values of b give more than"):
        grid(a=range(10**4), b=(x for x in range(10**4)))
    # A generator of parameter sets is counted as it is listed, times the seeds (it was
    # listed whole first: an endless one filled memory; fuzz round 24).
    endless = ({"a": i} for i in itertools.count())
    with pytest.raises(ValueError, match=r"params \(times the seeds\) give more than"):
        cs.sweep(summed, endless, seeds=2, executor="serial", progress=False)
    monkeypatch.setattr(sys.modules["contextsteer.sweep"], "MAX_RUNS", 6)
    assert len(grid(a=[1, 2], b=[1, 2, 3])) == 6  # the limit itself is allowed
    with pytest.raises(ValueError, match="7 a give 7 runs"):
        grid(a=range(7), b=[0])
    with pytest.raises(ValueError, match=r"4 parameter sets × 2 seeds give 8 runs"):
        cs.sweep(summed, {"a": [1, 2, 3, 4]}, seeds=2, executor="serial", progress=False)
    with pytest.raises(ValueError, match=r"params \(times the seeds\) give more than"):
        cs.sweep(summed, ({"a": i} for i in range(4)), seeds=2, executor="serial", progress=False)
    assert len(cs.sweep(summed, ({"a": i} for i in range(3)), seeds=2, progress=False)) == 6
    assert len(cs.sweep(summed, {"a": [1, 2, 3]}, seeds=2, executor="serial", progress=False)) == 6


def test_function_sweep_order_seeds_and_columns():
    res = cs.sweep(summed, {"a": [1, 2], "b": [0.5]}, seeds=3, executor="serial", progress=False)
    assert len(res) == 6 and res.seeds == (0, 1, 2)
    assert [(r.params["a"], r.seed) for r in res] == [(a, s) for a in (1, 2) for s in range(3)]
    assert [r.index for r in res] == list(range(6))
    want = [summed(a=a, b=0.5, seed=s)["value"] for a in (1, 2) for s in range(3)]
    np.testing.assert_array_equal(res.column("value"), want)
    np.testing.assert_array_equal(res.column("nested.seed"), [0, 1, 2] * 2)
    np.testing.assert_array_equal(res.column("a"), [1, 1, 1, 2, 2, 2])
    assert math.isnan(res.column("missing")[0]) and res.column("missing", default=-1)[0] == -1
    rows = res.summary("value")
    assert [r["a"] for r in rows] == [1, 2]
    for row, chunk in zip(rows, np.reshape(want, (2, 3))):
        assert row["value"]["mean"] == pytest.approx(chunk.mean())
        assert row["value"]["std"] == pytest.approx(chunk.std())
        assert row["value"]["n"] == 3
    assert res.best("value")["a"] == 1 and res.best("value", minimize=False)["a"] == 2
    json.dumps(res.to_records())  # plain data


def test_scenario_sweep_is_identical_on_every_executor():
    # Each run depends only on its parameters and seed: serial, a process pool and a thread
    # pool (finishing in any order) give the same metrics, in the same run order.
    kw = dict(seeds=[0, 3], steps=80, progress=False)
    params = grid(agents=[2, 4], slots=[8, 16])
    serial = cs.sweep("oncoming", params, executor="serial", **kw)
    procs = cs.sweep("oncoming", params, workers=2, **kw)
    with cf.ThreadPoolExecutor(3) as pool:
        threaded = cs.sweep("oncoming", params, executor=pool, **kw)
    assert len(serial) == 8
    assert metrics_only(procs) == metrics_only(serial)
    assert metrics_only(threaded) == metrics_only(serial)
    # and a run equals building and stepping the scenario by hand
    sim = cs.scenarios.get("oncoming")(agents=4, slots=16, seed=3)
    sim.step(cs.scenarios.get("oncoming").dt, steps=80)
    assert serial[7].result["metrics"] == json.loads(json.dumps(jsonable(sim.metrics())))
    assert serial[7].params == {"agents": 4, "slots": 16} and serial[7].seed == 3
    assert all(r.result["seconds"] >= 0 for r in serial)


def test_serial_runs_keep_the_callers_thread_count():
    with cs.threads(2):
        cs.sweep("oncoming", None, seeds=[0], steps=5, executor="serial", threads=1, progress=False)
        assert cs.get_num_threads() == 2


def test_a_run_error_that_does_not_pickle_back_is_kept_like_any_other():
    # It broke the process pool ("the workers could not import the run function"), and
    # every finished run was lost (fuzz round 15).
    kw = dict(seeds=[0], errors="keep", progress=False)
    serial = cs.sweep(fails_unpicklably_on_two, {"a": [1, 2, 3]}, executor="serial", **kw)
    procs = cs.sweep(fails_unpicklably_on_two, {"a": [1, 2, 3]}, workers=2, **kw)
    for res in (serial, procs):
        assert [r.error for r in res] == [None, "TwoArgError: x/y", None]
        np.testing.assert_array_equal(res.column("value"), [1, np.nan, 3])
    with pytest.raises(RuntimeError, match=r"run 1 .* failed: TwoArgError: x/y"):
        cs.sweep(fails_unpicklably_on_two, {"a": [1, 2, 3]}, workers=2, progress=False)


def test_failed_runs_raise_in_run_order_or_are_kept():
    with pytest.raises(RuntimeError, match=r"run 1 \({'a': 2}, seed 0\) failed: ValueError: a = 2"):
        cs.sweep(fails_on_two, {"a": [1, 2, 3]}, executor="serial", progress=False)
    with pytest.raises(RuntimeError, match="a = 2 is not allowed"):
        cs.sweep(fails_on_two, {"a": [1, 2, 3]}, workers=2, progress=False)
    res = cs.sweep(
        fails_on_two, {"a": [1, 2, 3]}, seeds=[0, 1], errors="keep", workers=2, progress=False
    )
    assert len(res) == 6 and [r.params["a"] for r in res.failed] == [2, 2]
    assert res.failed[0].error == "ValueError: a = 2 is not allowed" and res.failed[0].result == {}
    np.testing.assert_array_equal(res.column("value"), [1, 1, np.nan, np.nan, 3, 3])
    assert res.summary("value")[1]["value"]["n"] == 0
    assert "failed=2" in repr(res)


class BrokenPool(cf.Executor):
    """Every submit fails with one shared BrokenExecutor, like a pool whose workers died."""

    def __init__(self):
        self.error = cf.BrokenExecutor("a process in the pool was terminated abruptly")

    def submit(self, fn, /, *args, **kwargs):
        fut = cf.Future()
        fut.set_exception(self.error)
        return fut


def test_a_dead_pool_stops_the_sweep_with_one_clear_error():
    with pytest.raises(RuntimeError, match="workers died.*importable module") as info:
        cs.sweep(
            summed, {"a": list(range(50))}, executor=BrokenPool(), errors="keep", progress=False
        )
    # the shared exception is raised once, not re-raised 50 times with a growing traceback
    assert info.value.__cause__.__traceback__ is None


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: cs.sweep("no-such", None, progress=False), "unknown scenario"),
        (lambda: cs.sweep("oncoming", {"wings": [1]}, progress=False), "does not take 'wings'"),
        (lambda: cs.sweep("oncoming", {"seed": [1]}, progress=False), "seeds="),
        (lambda: cs.sweep(summed, [{"a": 1, "seed": 2}], progress=False), "seeds="),
        (lambda: cs.sweep(summed, {"a": [1]}, seeds=[], progress=False), "no seeds"),
        (lambda: cs.sweep(summed, {"a": [1]}, seeds=0, progress=False), "seeds must be >= 1"),
        (lambda: cs.sweep(summed, {"a": [1]}, errors="ignore", progress=False), "errors"),
        (lambda: cs.sweep(summed, {"a": [1]}, executor="cluster", progress=False), "executor"),
        (lambda: cs.sweep("oncoming", None, steps=0, progress=False), "steps"),
        (lambda: cs.sweep("oncoming", None, threads=0, progress=False), "threads"),
        (lambda: cs.sweep("oncoming", None, workers=0, progress=False), "workers"),
    ],
)
def test_bad_arguments_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_types_raise_type_error():
    with pytest.raises(TypeError, match="name or a callable"):
        cs.sweep(42, None, progress=False)
    with pytest.raises(TypeError, match="integers"):
        cs.sweep(summed, {"a": [1]}, seeds=[0.5], progress=False)
    with pytest.raises(RuntimeError, match="TypeError: sweep: the run function must return a dict"):
        cs.sweep(lambda **kw: 3.0, None, executor="serial", progress=False)


@pytest.mark.parametrize(
    "kw, error, message",
    [
        ({"params": [1, 2]}, TypeError, "params must be a list of dicts or a dict of value lists"),
        ({"params": "slots"}, TypeError, "params must be a list of dicts"),
        ({"params": 5}, TypeError, "params must be a list of dicts"),
        ({"params": []}, ValueError, "params is an empty list"),
        ({"seeds": 2.0}, TypeError, "seeds must be a count or integers, got 2.0"),
        ({"seeds": None}, TypeError, "seeds must be a count or integers, got None"),
        ({"seeds": "01"}, TypeError, "seeds must be a count or integers"),
        ({"seeds": [-1]}, ValueError, r"seeds must be in \[0, 2\*\*64\), got -1"),
        ({"seeds": [2**64]}, ValueError, r"seeds must be in \[0, 2\*\*64\)"),
        ({"steps": "a"}, TypeError, "steps must be an integer, got 'a'"),
        ({"steps": 1.5}, TypeError, "steps must be an integer, got 1.5"),
        ({"steps": True}, TypeError, "steps must be an integer, got True"),
        ({"threads": 1.5}, TypeError, "threads must be an integer"),
        ({"workers": 1.5}, TypeError, "workers must be an integer"),
    ],
)
def test_arguments_are_checked_before_any_run(kw, error, message):
    """Refused up front with a message naming the argument: not truncated (steps=1.5 ran
    1 step), not failing inside every run (seeds=[-1]), not a bare 'not iterable'."""
    ran = []

    def run(**params):
        ran.append(params)
        return {"x": 1.0}

    args = {"params": [{}], **kw}
    with pytest.raises(error, match=f"^sweep: {message}"):
        cs.sweep(run, args.pop("params"), executor="serial", progress=False, **args)
    assert ran == []


class RayTaskError(Exception):
    """Stands in for ray.exceptions.RayTaskError: a remote traceback as its text and what
    the task raised as ``cause``."""

    def __init__(self, cause):
        super().__init__("ray::_call() (pid=1, ip=127.0.0.1)\nTraceback ...\n" + str(cause))
        self.cause = cause


class RayLikeExecutor(cf.Executor):
    def submit(self, fn, /, *args, **kwargs):
        fut = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:
            fut.set_exception(RayTaskError(exc))
        return fut


def test_a_failed_run_reads_the_same_on_ray_as_on_the_other_executors():
    keep = cs.sweep(
        fails_on_two, {"a": [1, 2]}, executor=RayLikeExecutor(), errors="keep", progress=False
    )
    assert keep.failed[0].error == "ValueError: a = 2 is not allowed"
    with pytest.raises(RuntimeError, match=r"failed: ValueError: a = 2 is not allowed$"):
        cs.sweep(fails_on_two, {"a": [1, 2]}, executor=RayLikeExecutor(), progress=False)


def test_a_key_inside_seed_is_refused_as_seed_is():
    # {"seed.x": [1]} ran, and every run failed on it (fuzz round 19).
    for target in ("crossing", summed):
        with pytest.raises(ValueError, match="pass seeds with seeds="):
            cs.sweep(target, {"seed.x": [1]}, executor="serial", progress=False)


def test_a_bool_seed_count_is_refused():
    # True was a count: range(1).
    with pytest.raises(TypeError, match="sweep: seeds must be a count or integers, got True"):
        cs.sweep(summed, {"a": [1]}, seeds=True, executor="serial", progress=False)


@pytest.mark.parametrize(
    "key, message",
    [
        # The dict {"seed": s} was cast to float64: "float() argument must be ... not 'dict'".
        (
            "nested",
            "'nested' must be a number in every run's result, got a dict in run 0 "
            "(seed 0) (name a number inside it: nested.seed)",
        ),
        ("label", "'label' must be a number in every run's result, got a str in run 0 (seed 0)"),
    ],
)
def test_summary_of_a_key_that_is_not_a_number_names_it(key, message):
    res = cs.sweep(labelled, {"a": [1, 2]}, seeds=2, executor="serial", progress=False)
    with pytest.raises(ValueError) as info:
        res.summary("value", key)
    assert str(info.value) == "summary: " + message
    # A key missing from every run is no value (n = 0), not an error.
    assert [row["missing"]["n"] for row in res.summary("missing")] == [0, 0]


def test_dask_executor():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ) as client:
        res = cs.sweep(
            "oncoming",
            grid(slots=[8, 16]),
            seeds=[0, 1],
            steps=40,
            executor=client.get_executor(),
            progress=False,
        )
    serial = cs.sweep(
        "oncoming", grid(slots=[8, 16]), seeds=[0, 1], steps=40, executor="serial", progress=False
    )
    assert metrics_only(res) == metrics_only(serial)


def test_ray_executor():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        res = cs.sweep(
            "oncoming",
            grid(slots=[8, 16]),
            seeds=[0, 1],
            steps=40,
            executor=cs.ray_executor(num_cpus=1),
            progress=False,
        )
        failed = cs.sweep(
            "oncoming",
            {"slots": [2]},
            steps=2,
            executor=cs.ray_executor(num_cpus=1),
            errors="keep",
            progress=False,
        )
    finally:
        ray.shutdown()
    serial = cs.sweep(
        "oncoming", grid(slots=[8, 16]), seeds=[0, 1], steps=40, executor="serial", progress=False
    )
    assert metrics_only(res) == metrics_only(serial)
    # The run's own error, as every other executor reports it, not Ray's remote traceback.
    kept = cs.sweep(
        "oncoming", {"slots": [2]}, steps=2, executor="serial", errors="keep", progress=False
    )
    assert (
        failed.failed[0].error
        == kept.failed[0].error
        == ("ValueError: Agents: slots must be >= 3, got 2")
    )


_HANG = """
import os, sys, time
def run(x, seed):
    open(os.path.join(os.environ["MARKS"], f"{os.getpid()}"), "w").close()
    time.sleep(600)     # a run far longer than anyone waits
    return {"x": x}
"""

_SCRIPT = """
import signal, sys
sys.path.insert(0, sys.argv[1])
import contextsteer as cs, hang
if __name__ == "__main__":
    # A shell's background job starts with SIGINT ignored, and Python then installs no
    # handler: restore it, as in a program run in the foreground.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        cs.{call}
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        raise SystemExit(3)
"""


@pytest.mark.parametrize(
    "call",
    [
        'sweep(hang.run, {"x": [1, 2, 3, 4]}, seeds=1, workers=2)',
        'sweep(hang.run, {"x": [1, 2, 3, 4]}, seeds=1, workers=2, progress=True)',
    ],
)
def test_ctrl_c_stops_a_process_sweep_and_its_workers(tmp_path, call):
    """Ctrl-C during a sweep on local processes raises KeyboardInterrupt in the caller
    without waiting for the runs in flight (each would take 10 minutes), and leaves no
    worker behind."""
    code, out, err = interrupt_when_busy(tmp_path, _HANG, _SCRIPT.replace("{call}", call))
    assert code == 3 and "interrupted" in out, err


def test_ctrl_c_keeps_the_finished_runs_of_a_serial_sweep():
    """The KeyboardInterrupt a sweep raises (SweepInterrupted) carries the runs that had
    finished, in run order; it used to drop them all."""
    calls = []

    def run(x, seed):
        calls.append((x, seed))
        if len(calls) == 4:  # Ctrl-C during the fourth run
            raise KeyboardInterrupt
        if x == 2 and seed == 1:
            raise ValueError("bad run")
        return {"y": x * 10}

    with pytest.raises(KeyboardInterrupt) as info:
        cs.sweep(run, {"x": [1, 2, 3]}, seeds=2, executor="serial", progress=False)
    stop = info.value
    assert isinstance(stop, cs.SweepInterrupted) and stop.total == 6
    done = stop.result
    assert [(r.index, r.params, r.seed) for r in done] == [
        (0, {"x": 1}, 0),
        (1, {"x": 1}, 1),
        (2, {"x": 2}, 0),
    ]
    assert done.column("y").tolist() == [10, 10, 20] and done.seeds == (0, 1)
    assert str(stop) == "sweep interrupted after 3 of 6 runs"


def test_ctrl_c_keeps_a_failed_run_with_its_error(monkeypatch):
    def run(x, seed):
        if x == 2:
            raise ValueError("bad run")
        if x == 3:
            raise KeyboardInterrupt
        return {"x": x}

    # errors="raise" would raise for x=2 at the end; interrupted first, the failure is kept
    with pytest.raises(cs.SweepInterrupted) as info:
        cs.sweep(run, {"x": [1, 2, 3]}, seeds=1, executor="serial", errors="keep", progress=False)
    runs = list(info.value.result)
    assert [r.error for r in runs] == [None, "ValueError: bad run"]


_FINISH_THEN_HANG = """
import os, time
def run(x, seed):
    if x <= 2:
        return {"x": x}
    open(os.path.join(os.environ["MARKS"], f"{os.getpid()}"), "w").close()
    time.sleep(600)
    return {"x": x}
"""

_KEEP_SCRIPT = """
import signal, sys
sys.path.insert(0, sys.argv[1])
import contextsteer as cs, hang
if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        cs.sweep(hang.run, {"x": [1, 2, 3, 4]}, seeds=1, workers=2, progress=False)
    except cs.SweepInterrupted as stop:
        print("kept", [r.params["x"] for r in stop.result], stop.total, flush=True)
        raise SystemExit(3)
"""


def test_ctrl_c_keeps_the_finished_runs_of_a_process_sweep(tmp_path):
    # runs 1 and 2 finish, then both workers hang; the finished results reach the caller
    code, out, err = interrupt_when_busy(tmp_path, _FINISH_THEN_HANG, _KEEP_SCRIPT, settle=1.0)
    assert code == 3 and "kept [1, 2] 4" in out, (out, err)


def test_records_of_numpy_grid_values_are_json_ready_and_function_steps_refused():
    """to_records() (documented "e.g. for json.dump") left np.int64 parameters that
    json.dumps refuses; steps= was silently ignored for a run function."""
    res = cs.sweep(
        "oncoming", {"slots": np.array([8, 16])}, steps=5, executor="serial", progress=False
    )
    doc = json.loads(json.dumps(res.to_records()))
    assert [r["params"]["slots"] for r in doc] == [8, 16]
    with pytest.raises(ValueError, match="steps applies to scenarios only"):
        cs.sweep(lambda seed: {"v": seed}, seeds=1, steps=500, executor="serial", progress=False)


_TERM_SCRIPT = """
import os, sys, time
from contextsteer.cli import main
sweep_mod = sys.modules["contextsteer.sweep"]
real, calls = sweep_mod._call, []

def call(task):  # runs 1 and 2 finish; run 3 marks itself busy and hangs
    calls.append(task)
    if len(calls) == 3:
        open(os.path.join(os.environ["MARKS"], str(os.getpid())), "w").close()
        time.sleep(600)
    return real(task)

sweep_mod._call = call
out = os.path.join(sys.argv[1], "runs.json")
sys.exit(main(["sweep", "oncoming", "--seeds", "5", "--steps", "3", "--workers", "1",
                      "--quiet", "--out", out]))
"""


def test_sigterm_ends_a_cli_sweep_as_ctrl_c_does_and_keeps_its_runs(tmp_path):
    """SIGTERM (a batch system's stop) killed `contextsteer sweep` with its finished runs
    unwritten, and its pool workers were left running (fuzz round 12). It ends the
    command as Ctrl-C does now, with 143 (128 + SIGTERM) as the status."""
    code, out, err = interrupt_when_busy(tmp_path, "", _TERM_SCRIPT, workers=1, sig=signal.SIGTERM)
    assert code == 143, (out, err)
    assert "contextsteer sweep: " in err and "wrote them to" in err
    doc = json.loads((tmp_path / "runs.json").read_text())
    assert doc["interrupted"] is True and [r["seed"] for r in doc["runs"]] == [0, 1]


@pytest.mark.parametrize(
    "module, call, extra",
    [
        ("ray", lambda: cs.ray_executor(), "ray"),
        ("optuna", lambda: cs.tune("oncoming", {"slots": [8, 16]}, n_trials=1), "tune"),
    ],
)
def test_a_missing_extra_is_named(monkeypatch, module, call, extra):
    """ray_executor raised a bare "No module named 'ray'" where every other optional
    feature names its extra (fuzz round 14)."""
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    with pytest.raises(ImportError, match=re.escape(f"pip install 'contextsteer[{extra}]'")):
        call()


def test_column_names_a_ragged_key_and_best_takes_a_switch():
    def lists(*, a, seed):
        return {"l": list(range(a)), "v": float(a)}

    res = cs.sweep(lists, {"a": [2, 4]}, executor="serial", progress=False)
    with pytest.raises(ValueError, match=r"values of 'l' do not stack .*\(2,\), \(4,\)"):
        res.column("l")
    for bad in ("no", "False", None):
        with pytest.raises(TypeError, match="best: minimize"):
            res.best("v", minimize=bad)
    assert res.best("v", minimize=0)["a"] == 4


def test_a_result_that_does_not_pickle_back_and_a_sys_exit_fail_their_runs_only():
    # A result the caller could not unpickle broke the pool (every run lost, the message
    # blaming imports), and sys.exit() in a run escaped errors="keep" (fuzz round 16).
    kw = dict(seeds=[0], errors="keep", progress=False)
    res = cs.sweep(returns_unpicklably_on_two, {"a": [1, 2, 3]}, workers=2, **kw)
    assert [r.error for r in res] == [
        None,
        "TypeError: the run's result does not pickle back to the caller",
        None,
    ]
    for executor in ({"workers": 2}, {"executor": "serial"}):
        res = cs.sweep(exits_on_two, {"a": [1, 2, 3]}, **executor, **kw)
        assert [r.error for r in res] == [None, "SystemExit: run gave up", None]


def test_results_only_plain_pickle_refuses_stay_whole_on_other_executors_and_base_exceptions_fail_one_run():
    # The check that a result pickles back ran on every executor: one that moves results
    # as Dask and Ray do (cloudpickle, or none at all in threads) failed every run whose
    # result held a notebook's object; and asyncio.CancelledError ended the sweep
    # (a helper on fuzz round 16's fixes).
    kw = dict(seeds=[0], errors="keep", progress=False)
    with cf.ThreadPoolExecutor(2) as pool:
        res = cs.sweep(returns_unpicklably_on_two, {"a": [1, 2]}, executor=pool, **kw)
    assert [r.error for r in res] == [None, None] and isinstance(res[1].result["note"], TwoArgError)
    for executor in ({"workers": 2}, {"executor": "serial"}):
        res = cs.sweep(cancelled_on_two, {"a": [1, 2, 3]}, **executor, **kw)
        assert [r.error for r in res] == [None, "CancelledError: cancelled run", None]


def test_the_progress_bars_file_drops_failed_writes_and_shows_stderrs_encoding(monkeypatch):
    # A bar's OSError on a full stderr stopped run, sweep and tune (fuzz round 21); without
    # stderr's encoding tqdm drew a 10-character ASCII bar on a terminal (round 22).
    import io

    from contextsteer.sweep import _BarFile

    class Full(io.TextIOWrapper):
        def write(self, text):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(sys, "stderr", Full(io.BytesIO(), encoding="utf-8"))
    bar = _BarFile()
    assert bar.write("50%") == 3
    bar.flush()
    assert bar.encoding == "utf-8" and bar.isatty() is False
    monkeypatch.setattr(sys, "stderr", None)
    assert bar.write("x") == 1 and bar.encoding is None and bar.isatty() is False
    with pytest.raises(OSError):
        bar.fileno()
    with pytest.raises(TypeError, match="not a masked array"):
        cs.sweep(summed, {"a": [1]}, seeds=np.ma.masked_array(3, mask=True), progress=False)


def shadowed(*, agents, seed):
    """A run whose result has a key named like its parameter (a scenario's agents left)."""
    return {"agents": agents - 1 - seed % 2}


def test_a_result_named_like_a_parameter_is_read_as_result_and_never_replaces_it():
    """column("agents") gave the parameter where the result had its own "agents", and
    summary("agents") put the statistics in the parameter's place (fuzz round 26)."""
    res = cs.sweep(shadowed, {"agents": [20, 30]}, seeds=2, executor="serial", progress=False)
    np.testing.assert_array_equal(res.column("agents"), [20, 20, 30, 30])
    np.testing.assert_array_equal(res.column("result.agents"), [19, 18, 29, 28])
    with pytest.raises(ValueError, match=r"'agents' is a parameter .* 'result.agents'"):
        res.summary("agents")
    rows = res.summary("result.agents")
    assert rows[0]["agents"] == 20 and rows[0]["result.agents"]["mean"] == 18.5
    assert res.best("result.agents")["agents"] == 20


def test_columns_of_ints_past_2_63_stay_exact_and_none_reads_as_the_default():
    """A seed of 2**64 - 1 beside 0 came back float64 (2**64) from column("seed"), and a
    parameter given None read None, not the default (fuzz round 26)."""
    from contextsteer.sweep import Run, SweepResult

    runs = [
        Run(0, {"a": 1, "b": None}, 0, {"v": 1}),
        Run(1, {"a": 1, "b": None}, 2**64 - 1, {"v": 2**64 - 1}),
    ]
    res = SweepResult(runs, [0, 2**64 - 1])
    seeds = res.column("seed")
    assert seeds.dtype == np.uint64 and int(seeds[1]) == 2**64 - 1  # was float64 2**64
    assert res.column("v").tolist() == [1, 2**64 - 1]
    assert res.column("a").dtype == np.int64
    assert math.isnan(runs[0].value("b")) and runs[0].value("b", default=7) == 7


@pytest.mark.parametrize("axis", [{"make_way": [0, 1]}, {1, 2}, frozenset({3})])
def test_grid_refuses_an_axis_that_is_no_sequence(axis):
    """A dict axis swept its keys; a set's order changed with the hash seed (round 26)."""
    with pytest.raises(TypeError, match="must be a sequence of values"):
        cs.grid(changes=axis)


def test_a_parameter_name_that_is_not_a_string_is_named():
    with pytest.raises(TypeError, match="parameter names must be strings, got 1"):
        cs.sweep("oncoming", [{1: 8}], progress=False)


def test_summary_refuses_a_name_that_is_a_parameter_of_any_run():
    """Only the first run's parameters were looked at: with parameter sets {a} and {b},
    summary("b") summarised a result in one row and the parameter in the other."""
    from contextsteer.sweep import Run, SweepResult

    res = SweepResult([Run(0, {"a": 1}, 0, {"b": 100}), Run(1, {"b": 2}, 0, {"b": 100})], [0])
    with pytest.raises(ValueError, match=r"summary: 'b' is a parameter"):
        res.summary("b")
    with pytest.raises(ValueError, match=r"best: 'b' is a parameter"):
        res.best("b")
