"""Parameter tuning with Optuna's ask/tell interface, on the executors of :func:`sweep`.

:func:`tune` asks Optuna for parameter sets (TPE or random sampling), evaluates each on
one seed after another through the same runner as :func:`contextsteer.sweep` (local
processes, Dask's ``client.get_executor()``, :func:`contextsteer.ray_executor`, or
``"serial"``), reports the running mean over seeds to Optuna's pruner after each seed,
and tells Optuna the mean — or that the trial was pruned or failed. Samplers, pruners and
the study are Optuna's own; contextsteer adds only the loop that sends runs to executors.
Needs the ``tune`` extra (``pip install contextsteer[tune]``).

A search space maps parameter names to Optuna distributions or to shorthands: a tuple
``(low, high)`` is a range (integers when both ends are ints), ``(low, high, "log")`` a
log-uniform range, and a list is a set of choices::

    space = {"slots": [8, 16, 32], "look_ahead": (10.0, 40.0),
             "steer_force": (0.03, 0.3, "log"), "falloff": ["linear", "quadratic"]}
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from . import _checks
from ._json import jsonable, short_repr

__all__ = ["NoFeasibleTrial", "TuneInterrupted", "TuneResult", "tune"]

#: Key of :func:`tune`'s constraint in Optuna's trial constraints / user attributes.
_CONSTRAINT = "constraint"
#: User attribute of a trial: the fixed ``params`` of the call that ran it.
_FIXED = "contextsteer.fixed_params"
#: The key that marks a value :func:`_to_attr` tagged (a tuple, a non-finite float, ...).
_TAG = "contextsteer.type"


def _to_attr(value: Any) -> Any:
    """``value`` as JSON that :func:`_from_attr` reads back to an equal value of the same
    type. Optuna keeps user attributes as JSON in a database storage, where plain JSON
    would give a tuple back as a list, inf as None and a float32 as a float, and an object
    with no JSON form could not be stored at all: that one is kept as its ``repr``."""
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and _TAG not in value:
            return {k: _to_attr(v) for k, v in value.items()}
        return {_TAG: "dict", "items": [[_to_attr(k), _to_attr(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TAG: "tuple", "items": [_to_attr(v) for v in value]}
    if isinstance(value, list):
        return [_to_attr(v) for v in value]
    # (NumPy types whose item() is a Python number: a longdouble's is a longdouble, and
    # it recursed without end; fuzz round 20. Those are kept as their repr.)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.dtype.itemsize <= 8:
        items = [_to_attr(v) for v in value.ravel().tolist()]
        return {_TAG: "ndarray", "dtype": value.dtype.str, "shape": value.shape, "items": items}
    if isinstance(value, np.generic) and value.dtype.kind in "biuf" and value.dtype.itemsize <= 8:
        return {_TAG: "numpy", "dtype": value.dtype.str, "value": _to_attr(value.item())}
    if isinstance(value, float) and not math.isfinite(value):
        return {_TAG: "float", "value": repr(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {_TAG: "repr", "value": repr(value)}


def _from_attr(value: Any) -> Any:
    """The value :func:`_to_attr` stored (a plain JSON value, as earlier versions stored
    their fixed params, comes back as it is)."""
    if isinstance(value, list):
        return [_from_attr(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(_TAG)
    if tag is None:
        return {k: _from_attr(v) for k, v in value.items()}
    if tag == "dict":
        return {_from_attr(k): _from_attr(v) for k, v in value["items"]}
    if tag == "tuple":
        return tuple(_from_attr(v) for v in value["items"])
    if tag == "ndarray":
        items = [_from_attr(v) for v in value["items"]]
        return np.array(items, dtype=np.dtype(value["dtype"])).reshape(value["shape"])
    if tag == "numpy":
        return np.dtype(value["dtype"]).type(_from_attr(value["value"]))
    if tag == "float":
        return float(value["value"])
    return value["value"]  # "repr": what is left of an object with no JSON form


def _optuna():
    try:
        import optuna
    except ImportError as exc:
        raise ImportError(
            "contextsteer.tune needs Optuna: pip install 'contextsteer[tune]'"
        ) from exc
    return optuna


def distributions(space: Mapping[str, Any]) -> dict[str, Any]:
    """Optuna distributions from a search space (see the module doc for the shorthands).

    >>> import pytest
    >>> optuna = pytest.importorskip("optuna")
    >>> from contextsteer.tune import distributions
    >>> d = distributions({"slots": [8, 16], "look_ahead": (10.0, 40.0), "k": (1, 5),
    ...                    "force": (0.01, 1.0, "log")})
    >>> [type(v).__name__ for v in d.values()]
    ['CategoricalDistribution', 'FloatDistribution', 'IntDistribution', 'FloatDistribution']
    >>> d["force"].log
    True
    """
    optuna = _optuna()
    D = optuna.distributions
    if not isinstance(space, Mapping) or not space:
        raise ValueError(
            f"tune: space must be a non-empty dict of name -> range/choices, got {space!r}"
        )
    out: dict[str, Any] = {}
    for name, spec in space.items():
        if isinstance(spec, D.BaseDistribution):
            out[name] = spec
        elif isinstance(spec, list):
            if not spec:
                raise ValueError(f"tune: {name} has no choices")
            out[name] = D.CategoricalDistribution(spec)
        elif isinstance(spec, tuple) and len(spec) in (2, 3):
            low, high = spec[0], spec[1]
            log = len(spec) == 3
            if log and spec[2] != "log":
                raise ValueError(
                    f"tune: {name}: the third item of a range must be 'log', got {spec[2]!r}"
                )
            if not all(_checks.is_real(v) and not isinstance(v, bool) for v in (low, high)):
                raise TypeError(f"tune: {name}: a range needs numbers, got {spec!r}")
            try:
                finite = math.isfinite(low) and math.isfinite(high)
            except OverflowError:  # an int beyond float range
                finite = False
            if not finite:
                raise ValueError(f"tune: {name}: a range needs finite ends, got {spec!r:.80}")
            if not low < high:
                raise ValueError(f"tune: {name}: expected low < high, got {spec!r}")
            if not math.isfinite(float(high) - float(low)):
                raise ValueError(
                    f"tune: {name}: a range's width must be finite as a float, got {spec!r}"
                )
            if log and not low > 0:
                raise ValueError(f"tune: {name}: a 'log' range needs low > 0, got {spec!r}")
            if all(_checks.is_int(v) for v in (low, high)):
                out[name] = D.IntDistribution(int(low), int(high), log=log)
            else:
                out[name] = D.FloatDistribution(float(low), float(high), log=log)
        else:
            raise TypeError(
                f"tune: {name}: expected a (low, high[, 'log']) tuple, a list of "
                f"choices or an Optuna distribution, got {spec!r}"
            )
    return out


@dataclasses.dataclass
class TuneResult:
    """What :func:`tune` found.

    Attributes
    ----------
    study : optuna.Study
        The study, with every trial (complete, pruned, failed); continue it by passing it
        back as ``tune(..., study=result.study)``.
    best_params : dict
        Parameters of the best feasible complete trial (fixed ``params`` included). When
        that trial ran in an earlier call on the same ``study``, its fixed params are read
        back from the trial, with their types (tuples, NumPy values, inf); a fixed object
        with no JSON form comes back as its ``repr``.
    best_value : float
        Its objective, the mean over seeds.
    trials : list of dict
        One record per trial of this call: ``number``, ``params``, ``state``
        ("COMPLETE", "PRUNED", "FAIL"), ``value`` (mean over the seeds run),
        ``values`` (per seed), ``constraint`` (mean, or None) and ``error``.
    """

    study: Any
    best_params: dict[str, Any]
    best_value: float
    trials: list[dict[str, Any]]

    @_checks.safe_repr
    def __repr__(self) -> str:
        return short_repr(self)  # cut: per-agent lists and trials grow with the run

    def to_records(self) -> list[dict[str, Any]]:
        """The trial records (plain, JSON-ready values: NumPy values become Python ones,
        tuples lists and non-finite numbers None)."""
        return [jsonable(dict(t)) for t in self.trials]


class TuneInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`tune`: a KeyboardInterrupt that keeps what had finished.

    The trials in flight are told to the study as failed (as Optuna's own ``optimize``
    does), so ``tune(..., study=stop.study)`` continues it.

    Attributes
    ----------
    study : optuna.Study
        The study, with every trial told so far.
    trials : list of dict
        The records of this call's trials (as :attr:`TuneResult.trials`), the interrupted
        ones with state "FAIL" and error "KeyboardInterrupt".
    """

    def __init__(self, study: Any, trials: list[dict[str, Any]]):
        done = sum(t["state"] == "COMPLETE" for t in trials)
        super().__init__(f"tune interrupted after {done} complete trials")
        self.study = study
        self.trials = trials


class NoFeasibleTrial(ValueError):
    """:func:`tune` ended without a feasible complete trial (every trial failed, was
    pruned or broke the constraint): a ValueError that keeps the trials, which show why.

    Attributes
    ----------
    study : optuna.Study
    trials : list of dict
        The records of this call's trials (as :attr:`TuneResult.trials`).
    """

    def __init__(self, message: str, study: Any, trials: list[dict[str, Any]]):
        super().__init__(message)
        self.study = study
        self.trials = trials


class _KeyMissing(ValueError):
    """A dotted objective or constraint key that names nothing in a run's result: a
    mistake in the call, not a failed trial, so tune stops at the first result."""


def _lookup(result: Any, key: str, what: str) -> Any:
    """The value at a dotted ``key`` of a run's result; None where a level on the way is
    None (e.g. ``metrics.time_to_goal`` of a run without goals). A level that does not
    have the next part raises :class:`_KeyMissing`, naming the keys it has."""
    node: Any = result
    for i, part in enumerate(key.split(".")):
        if node is None:
            return None
        if not isinstance(node, Mapping) or part not in node:
            there = ""
            if isinstance(node, Mapping):
                prefix = ".".join(key.split(".")[:i])
                names = [f"{prefix}.{k}" if prefix else str(k) for k in node]
                there = f"; there: {', '.join(names[:16])}" + (" ..." if len(names) > 16 else "")
            raise _KeyMissing(f"tune: {what} key {key!r} is not in the run's result{there}")
        node = node[part]
    return node


def _getter(
    spec: str | Callable[[dict[str, Any]], float], what: str
) -> Callable[[dict[str, Any]], float]:
    """A function of a run's result: a dotted key (``"metrics.composite"``) or a callable."""
    if callable(spec):
        return lambda result: float(spec(result))
    if isinstance(spec, str):

        def get(result: dict[str, Any]) -> float:
            value = _lookup(result, spec, what)
            if value is None:
                raise ValueError(f"{what} key {spec!r} is None in the run's result")
            if isinstance(value, bool) or not _checks.is_real(value):
                # A dict of metrics or a string is a mistake in the call, as a missing key
                # is: every trial would fail the same way.
                raise _KeyMissing(
                    f"tune: {what} key {spec!r} must name a number, got a {type(value).__name__}"
                    + (
                        f" (its keys: {', '.join(map(str, list(value)[:16]))})"
                        if isinstance(value, Mapping)
                        else ""
                    )
                )
            return float(value)

        return get
    raise TypeError(f"tune: {what} must be a dotted result key or a callable, got {spec!r}")


def _name(spec: Any) -> str:
    """How an error names an objective or a constraint: its key, or the function's name."""
    return repr(spec) if isinstance(spec, str) else getattr(spec, "__name__", repr(spec))


def _not_finite(what: str, name: str | None, value: float, seed: int) -> str:
    """The message of a trial failed by a non-finite objective or constraint value."""
    return f"{what} {name} is not finite ({value}) for seed {seed}"


def tune(
    scenario: str | Callable[..., Mapping[str, Any]],
    space: Mapping[str, Any],
    *,
    objective: str | Callable[[dict[str, Any]], float] = "metrics.composite",
    direction: str = "minimize",
    n_trials: int = 20,
    seeds: Iterable[int] | int = 1,
    steps: int | None = None,
    params: Mapping[str, Any] | None = None,
    constraint: str | Callable[[dict[str, Any]], float] | None = None,
    sampler: Any = "tpe",
    pruner: Any = "median",
    batch: int | None = None,
    executor: Any = None,
    workers: int | None = None,
    threads: int = 1,
    seed: int = 0,
    study: Any = None,
    progress: bool = True,
) -> TuneResult:
    """Tune a scenario's parameters with Optuna (ask/tell), runs on sweep executors.

    Each trial asks Optuna for a parameter set from ``space``, then runs the scenario
    (or function) with it for one seed after another. After each seed the running mean
    of ``objective`` is reported to the pruner, which may stop the trial early (a
    pruner over seeds: a parameter set that is clearly worse after one seed is not run
    on the others). The trial's value is the mean over its seeds. ``batch`` trials are
    asked at a time and their runs for a seed go to the executor together.

    Parameters
    ----------
    scenario : str or callable
        A registered scenario name or a function ``fn(**params, seed=...) -> dict``, as
        for :func:`contextsteer.sweep`. A scenario run returns the JSON form of its
        :class:`~contextsteer.RunResult` (``metrics``, ``report``, ``seconds``, ...).
    space : dict
        Parameter name -> Optuna distribution, ``(low, high)``, ``(low, high, "log")``
        or a list of choices.
    objective : str or callable
        A dotted key into a run's result (``"metrics.composite"``,
        ``"report.estimated_lap_time"``) or ``objective(result) -> float``. Non-finite
        values fail the trial.
    direction : {"minimize", "maximize"}
    n_trials : int
        Trials to run in this call.
    seeds : iterable of int, or int
        Seeds each trial runs (an int ``n`` means ``range(n)``), in order; a bool or a
        non-integer seed is a TypeError.
    steps : int, optional
        Steps per run (scenarios only, default the scenario's; with a run function a
        ValueError, as it would be ignored).
    params : dict, optional
        Fixed parameters passed to every run (not tuned).
    constraint : str or callable, optional
        A result key or function whose mean over seeds must be <= 0 for a trial to be
        feasible (e.g. wall contacts). TPE samples with it (Optuna's constrained TPE);
        the best trial is the best feasible one. Trials of a continued ``study`` that ran
        without this constraint are not feasible (it was never measured for them).
    sampler : {"tpe", "random"} or optuna sampler
        Seeded with ``seed``. Ignored when ``study`` is given.
    pruner : {"median", None} or optuna pruner
        "median": ``MedianPruner(n_startup_trials=5)`` over seeds. Ignored when
        ``study`` is given.
    batch : int, optional
        Trials evaluated together (default: ``workers``, else the CPU count; 1 with
        ``executor="serial"``). The sampler proposes each batch from the trials told
        before it, so the trials depend on ``batch`` as well as ``seed``: with the
        default, a machine with another CPU count (or another ``workers``) proposes
        other trials once TPE's random start-up trials are done. Pass ``batch`` (and
        ``seed``) to reproduce a study anywhere.
    executor : concurrent.futures.Executor, "serial" or "processes", optional
        Where runs go, as for :func:`contextsteer.sweep` (default: a local process pool,
        created once for the whole tuning).
    workers : int, optional
        The local process pool's size (executor None or "processes"), as for
        :func:`contextsteer.sweep`, and the default ``batch``. With an executor of the
        caller's, which sizes itself, it only sets the default ``batch`` (``sweep``
        refuses it there); with ``executor="serial"`` it is refused.
    threads
        As for :func:`contextsteer.sweep`.
    seed : int
        Seed of the sampler, in [0, 2**32).
    study : optuna.Study, optional
        Continue this study (its direction, sampler and pruner are used; ``direction``
        must name the study's own, else a ValueError).
    progress : bool
        A tqdm progress bar over trials.

    Returns
    -------
    TuneResult

    Raises
    ------
    ImportError
        Optuna is not installed.
    ValueError
        Bad space (a range with an infinite end), direction, n_trials, seeds, sampler or
        pruner; a parameter the scenario does not take; an objective or constraint key
        that is not in a run's result (raised at the first result that lacks it, naming
        the keys at that level; a key whose value is None, such as a time to goal nobody
        reached, fails only its trial); no feasible complete trial (a
        :class:`NoFeasibleTrial`, whose message gives the first failed trial's error and
        whose ``trials`` keep the records).
    TypeError
        A range that is not numbers; seeds that are not integers.
    TuneInterrupted
        Ctrl-C: a KeyboardInterrupt carrying the study and the trials so far. The runs in
        flight are not waited for; a local process pool's workers are terminated.

    Examples
    --------
    >>> import pytest, contextsteer as cs
    >>> optuna = pytest.importorskip("optuna")
    >>> res = cs.tune("oncoming", {"slots": [8, 16], "distance": (10.0, 16.0)},
    ...               objective="metrics.composite", n_trials=3, seeds=2, steps=60,
    ...               sampler="random", executor="serial", progress=False)
    >>> len(res.trials), sorted(res.best_params)
    (3, ['distance', 'slots'])
    >>> res.trials[0]["state"], len(res.trials[0]["values"])
    ('COMPLETE', 2)
    """
    optuna = _optuna()
    from .sweep import _run_target, _seed_list, _threads, _whole

    dists = distributions(space)
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"tune: params must be a dict of fixed parameters, got {params!r}")
    fixed = dict(params or {})
    overlap = sorted(set(fixed) & set(dists))
    if overlap:
        raise ValueError(f"tune: {', '.join(overlap)} both fixed (params=) and tuned (space)")
    if direction not in ("minimize", "maximize"):
        raise ValueError(f"tune: direction must be 'minimize' or 'maximize', got {direction!r}")
    n_trials = _whole(n_trials, "n_trials", "tune")
    seed_list = _seed_list(seeds, "tune")
    if steps is not None:
        steps = _whole(steps, "steps", "tune")
    threads = _threads(threads, "tune")
    if workers is not None:
        workers = _whole(workers, "workers", "tune")
        if executor == "serial":
            raise ValueError("tune: workers has no use with executor='serial'")
    progress = _checks.flag("tune: progress", progress)
    if batch is not None:
        batch = _whole(batch, "batch", "tune")
    if isinstance(seed, bool) or not _checks.is_int(seed):
        raise TypeError(f"tune: seed (the sampler's) must be an integer, got {seed!r}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"tune: seed (the sampler's) must be in [0, 2**32), got {seed}")
    if study is not None:
        dirs = [d.name.lower() for d in getattr(study, "directions", [])]
        if len(dirs) > 1:
            raise ValueError(
                f"tune: the study given has {len(dirs)} objectives ({', '.join(dirs)}); tune "
                "optimises one, so pass a study made with optuna.create_study(direction=...)"
            )
        if len(dirs) == 1 and dirs[0] != direction:
            raise ValueError(
                f"tune: the study given {dirs[0]}s, but direction={direction!r}; pass "
                f"direction={dirs[0]!r} (a study keeps the direction it was created with)"
            )
    get_value = _getter(objective, "objective")
    get_constraint = None if constraint is None else _getter(constraint, "constraint")
    names = (_name(objective), None if constraint is None else _name(constraint))

    kind, target = _run_target(
        scenario,
        [*dists, *fixed],
        "tune",
        "seeds go in seeds=, not in the space or params",
        functions_too=True,  # a run function is called with seed= of its own
    )
    if kind == "function" and steps is not None:
        raise ValueError(
            "tune: steps applies to scenarios only (a run function steps its own "
            "simulation); pass it as a fixed parameter in params= instead"
        )

    use_set_constraint = hasattr(optuna.trial.Trial, "set_constraint")  # Optuna >= 5
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no log line per study and trial
    try:
        return _tune(
            optuna,
            study,
            sampler,
            pruner,
            direction,
            seed,
            get_constraint,
            use_set_constraint,
            executor,
            workers,
            batch,
            n_trials,
            progress,
            dists,
            fixed,
            kind,
            target,
            seed_list,
            steps,
            threads,
            get_value,
            names,
        )
    finally:
        optuna.logging.set_verbosity(verbosity)


def _tune(
    optuna: Any,
    study: Any,
    sampler: Any,
    pruner: Any,
    direction: str,
    seed: int,
    get_constraint: Callable[[dict[str, Any]], float] | None,
    use_set_constraint: bool,
    executor: Any,
    workers: int | None,
    batch: int | None,
    n_trials: int,
    progress: bool,
    dists: dict[str, Any],
    fixed: dict[str, Any],
    kind: str,
    target: Any,
    seed_list: list[int],
    steps: int | None,
    threads: int,
    get_value: Callable[[dict[str, Any]], float],
    names: tuple[str, str | None],
) -> TuneResult:
    from .sweep import _close_pool, _error_text, _open_pool, _run_tasks, _sigint_held

    if study is None:
        if isinstance(sampler, str):
            if sampler == "tpe":
                kw: dict[str, Any] = {"seed": int(seed)}
                if get_constraint is not None and not use_set_constraint:
                    kw["constraints_func"] = lambda t: (t.user_attrs.get(_CONSTRAINT, 0.0),)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                    sampler = optuna.samplers.TPESampler(**kw)
            elif sampler == "random":
                sampler = optuna.samplers.RandomSampler(seed=int(seed))
            else:
                raise ValueError(
                    f"tune: sampler must be 'tpe', 'random' or an Optuna sampler, got {sampler!r}"
                )
        if isinstance(pruner, str):
            if pruner != "median":
                raise ValueError(
                    f"tune: pruner must be 'median', None or an Optuna pruner, got {pruner!r}"
                )
            pruner = optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=0)
        elif pruner is None:
            pruner = optuna.pruners.NopPruner()
        study = optuna.create_study(direction=direction, sampler=sampler, pruner=pruner)

    serial = executor == "serial"
    n_batch = (
        int(batch)
        if batch is not None
        else (1 if serial else int(workers) if workers is not None else (os.cpu_count() or 1))
    )

    bar = None
    if progress:
        from tqdm.auto import tqdm

        from .sweep import _bar_options

        bar = tqdm(total=int(n_trials), desc="tune", unit="trial", **_bar_options())
    caller = os.getpid()
    records: list[dict[str, Any]] = []
    pool, own = (executor, None) if serial else _open_pool(executor, workers, n_batch, "tune")
    trials: list[Any] = []
    rec: dict[int, dict[str, Any]] = {}
    interrupted = False
    held = contextlib.ExitStack()
    try:
        asked = 0
        while asked < int(n_trials):
            trials = []  # filled one by one: an ask that raises leaves those before it here
            for _ in range(min(n_batch, int(n_trials) - asked)):
                trials.append(_ask(study, dists, optuna))
            asked += len(trials)
            for t in trials:  # so that a continued study's best knows what this call fixed
                t.set_user_attr(_FIXED, _to_attr(fixed))
            rec = {
                t.number: {
                    "number": t.number,
                    "params": {**fixed, **t.params},
                    "state": "RUNNING",
                    "value": None,
                    "values": [],
                    "constraint": None,
                    "constraints": [],
                    "error": None,
                }
                for t in trials
            }
            live = list(trials)
            for step, s in enumerate(seed_list):
                tasks = [
                    (kind, target, {**fixed, **t.params}, s, steps, int(threads), caller)
                    for t in live
                ]
                outcomes = _run_tasks(tasks, pool, workers, "tune")
                still = []
                for t, (result, error) in zip(live, outcomes):
                    r = rec[t.number]
                    value = math.nan
                    if error is None and result is not None:  # (no error: a result)
                        try:
                            value = get_value(result)
                            if not math.isfinite(value):
                                raise ValueError(_not_finite("objective", names[0], value, s))
                            if get_constraint is not None:
                                c = get_constraint(result)
                                if not math.isfinite(c):
                                    raise ValueError(_not_finite("constraint", names[1], c, s))
                                r["constraints"].append(c)
                        except _KeyMissing as bad:
                            # A key naming nothing: every trial would fail the same way.
                            for u in trials:
                                if rec[u.number]["state"] == "RUNNING":
                                    rec[u.number]["state"] = "FAIL"
                                    study.tell(u, state=optuna.trial.TrialState.FAIL)
                            raise ValueError(str(bad)) from None
                        except Exception as exc:  # a None value or a failing objective
                            error = exc
                    if error is not None:
                        r["state"], r["error"] = "FAIL", _error_text(error)
                        study.tell(t, state=optuna.trial.TrialState.FAIL)
                        continue
                    r["values"].append(value)
                    r["value"] = float(np.mean(r["values"]))
                    if r["constraints"]:
                        r["constraint"] = float(np.mean(r["constraints"]))
                    t.report(r["value"], step)
                    if step < len(seed_list) - 1 and t.should_prune():
                        r["state"] = "PRUNED"
                        study.tell(t, state=optuna.trial.TrialState.PRUNED)
                        continue
                    still.append(t)
                live = still
                if not live:
                    break
            for t in live:
                r = rec[t.number]
                if r["constraint"] is not None:
                    if use_set_constraint:
                        t.set_constraint(_CONSTRAINT, r["constraint"])
                    else:
                        t.set_user_attr(_CONSTRAINT, r["constraint"])
                r["state"] = "COMPLETE"
                study.tell(t, r["value"])
            records.extend(rec[t.number] for t in trials)
            if bar is not None:
                bar.update(len(trials))
            trials = []
    except KeyboardInterrupt as exc:
        interrupted = True
        # A second Ctrl-C while the trials are kept and the pool closed is dropped.
        held.enter_context(_sigint_held())
        # As Optuna's own optimize does: the trials in flight fail, so the study can be
        # continued; the finished ones are kept, in the study and in the exception.
        _fail_in_flight(study, trials, rec, "KeyboardInterrupt", optuna)
        records.extend(rec[t.number] for t in trials if t.number in rec)
        for done in records:
            done.pop("constraints", None)
        raise TuneInterrupted(study, records) from exc
    except BaseException as exc:
        # Any other way out (a broken pool, an executor that refuses work): the trials in
        # flight fail as well, or they stayed RUNNING in the study for good.
        _fail_in_flight(study, trials, rec, _error_text(exc), optuna)
        raise
    finally:
        # After Ctrl-C the runs in flight are not waited for (the local workers are
        # terminated), as in a sweep.
        with held:
            _close_pool(own, [], interrupted)
            if bar is not None:
                bar.close()

    for r in records:
        r.pop("constraints", None)
    best = _best(study, get_constraint is not None, use_set_constraint)
    if best is None:
        errors = [r["error"] for r in records if r["error"]]
        first = f"; the first failed trial: {errors[0]}" if errors else ""
        raise NoFeasibleTrial(
            "tune: no feasible complete trial (every trial failed, was pruned "
            f"or broke the constraint){first}; see the study's trials",
            study,
            records,
        )
    ours = {r["number"] for r in records}
    # A best trial of an earlier call (study=) ran with that call's fixed params.
    best_fixed = fixed if best.number in ours else _from_attr(best.user_attrs.get(_FIXED, fixed))
    return TuneResult(study, {**best_fixed, **best.params}, float(best.value), records)


def _fail_in_flight(
    study: Any, trials: list[Any], rec: dict[int, dict[str, Any]], error: str, optuna: Any
) -> None:
    """Tell the study that this batch's trials still running failed (``error`` in their
    records; a trial asked but not yet recorded fails too), keeping the error that ended
    the call should a tell raise."""
    for t in trials:
        running = rec.get(t.number)
        if running is None or running["state"] == "RUNNING":
            if running is not None:
                running["state"], running["error"] = "FAIL", error
            with contextlib.suppress(Exception):
                study.tell(t, state=optuna.trial.TrialState.FAIL)


def _ask(study: Any, dists: dict[str, Any], optuna: Any) -> Any:
    """``study.ask(dists)``, done as Optuna does it (a trial, then each parameter drawn
    from its distribution in turn) but with the trial in hand: when a draw raises (a study
    continued with a parameter of another kind), this trial is failed, so that it does not
    stay RUNNING, and no other caller's trial is touched (a shared study).

    ``study.ask()`` itself creates the trial and then runs the sampler's ``before_trial``:
    a sampler that raises there, or Ctrl-C landing there, left the new trial RUNNING for
    good (fuzz round 19). Ctrl-C is held back while it runs (on the main thread, with
    Python's own handler installed) and raised once the trial is in hand; for any other
    error the trial is found by the id Optuna's ``ask`` had given it."""
    from .sweep import _sigint_held

    pressed: list[int] = []
    try:
        with _sigint_held(pressed):
            trial = study.ask()
    except BaseException as exc:
        number = _trial_asked(study, exc)
        if number is not None:
            with contextlib.suppress(Exception):
                study.tell(number, state=optuna.trial.TrialState.FAIL)
        raise
    try:
        if pressed:
            raise KeyboardInterrupt
        for name, dist in dists.items():
            _draw(trial, name, dist, optuna)
    except BaseException:
        with contextlib.suppress(Exception):
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        raise
    return trial


def _trial_asked(study: Any, exc: BaseException) -> int | None:
    """The number of the trial that Optuna's ``Study.ask`` had created (or taken from the
    waiting ones) when it raised ``exc``: its ``trial_id`` local in the traceback. None
    when it raised before that, or when Optuna's ``ask`` no longer reads so."""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if (
            frame.f_code.co_name == "ask"
            and str(frame.f_globals.get("__name__", "")).startswith("optuna.")
            and isinstance(frame.f_locals.get("trial_id"), int)
        ):
            try:
                return int(study._storage.get_trial_number_from_id(frame.f_locals["trial_id"]))
            except Exception:
                return None
        tb = tb.tb_next
    return None


def _draw(trial: Any, name: str, dist: Any, optuna: Any) -> Any:
    """One parameter of ``trial`` from ``dist`` through the public suggest methods (what
    ``study.ask(fixed_distributions)`` does for each)."""
    d = optuna.distributions
    try:
        return _suggest(trial, name, dist, d)
    except ValueError as exc:
        if "distribution" not in str(exc):
            raise
        # Optuna's "Cannot set different distribution kind to the same parameter name"
        # named neither the parameter nor tune.
        raise ValueError(
            f"tune: {name!r} is drawn from another kind of distribution than in the study's "
            f"earlier trials ({type(dist).__name__} now); give it the kind it had, or start "
            f"a new study ({exc})"
        ) from None


def _suggest(trial: Any, name: str, dist: Any, d: Any) -> Any:
    if isinstance(dist, d.FloatDistribution):
        return trial.suggest_float(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, d.IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, d.CategoricalDistribution):
        return trial.suggest_categorical(name, dist.choices)
    raise TypeError(f"tune: no way to draw {name!r} from {type(dist).__name__}")


def _best(study: Any, constrained: bool, use_set_constraint: bool) -> Any:
    """The best complete trial; with a constraint, the best of those whose constraint was
    measured and is <= 0. A trial of a continued study that ran without the constraint
    is not known to be feasible: it was taken as 0 (feasible) and returned as the best
    where every trial measured broke the constraint (fuzz round 13)."""
    optuna = _optuna()
    done = [t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))]
    if constrained:

        def feasible(t: Any) -> bool:
            if use_set_constraint:
                values = getattr(t, "constraints", None) or {}
                value = (
                    values.get(_CONSTRAINT)
                    if isinstance(values, Mapping)
                    else max(values, default=None)
                )
            else:
                value = t.user_attrs.get(_CONSTRAINT)
            return value is not None and float(value) <= 0.0

        done = [t for t in done if feasible(t)]
    if not done:
        return None
    sign = 1.0 if study.direction == optuna.study.StudyDirection.MINIMIZE else -1.0
    return min(done, key=lambda t: (sign * t.value, t.number))
