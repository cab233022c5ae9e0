"""Parameter sweeps: many seeded runs of a scenario, on any ``concurrent.futures.Executor``.

A sweep is the Cartesian product of parameter values (:func:`grid`), each run for several
seeds. Every run builds its own simulation from a registered scenario (or calls your
function), steps it and returns its metrics, so runs are independent and can go to local
processes (the default), a Dask cluster (``client.get_executor()``) or Ray
(:func:`ray_executor`). Results come back in run order whatever order they finish in, and
each run depends only on its parameters and seed, so a sweep gives the same numbers on
one process, many processes or a cluster.

>>> import contextsteer as cs
>>> res = cs.sweep("oncoming", cs.grid(slots=[8, 16]), seeds=[0, 1], steps=60,
...                executor="serial", progress=False)
>>> len(res), res[0].params, res[0].seed
(4, {'slots': 8}, 0)
>>> res.column("slots").tolist(), res.column("seed").tolist()
([8, 8, 16, 16], [0, 1, 0, 1])
>>> sorted(res[0].result)            # a RunResult's JSON form (see contextsteer.run)
['agents', 'counters', 'dt', 'metrics', 'parameters', 'report', 'scenario',
 'schema_version', 'seconds', 'simulated_seconds', 'steps', 'steps_per_second',
 'trajectory']
>>> summary = res.summary("metrics.composite")   # mean and spread over the seeds
>>> [row["slots"] for row in summary]
[8, 16]
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextlib
import dataclasses
import functools
import itertools
import math
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any, SupportsIndex, overload

import numpy as np

from . import _checks

__all__ = ["Run", "SweepInterrupted", "SweepResult", "grid", "ray_executor", "sweep"]

#: The most runs (parameter sets, or parameter sets times seeds) one sweep builds. Each
#: run is a dict held until the sweep returns, so a bigger count would fill memory long
#: before it ran; it is refused up front with the count.
MAX_RUNS = 10_000_000


def _too_many(owner: str, count: int, what: str) -> None:
    if count > MAX_RUNS:
        holder = "one trial" if owner == "tune" else "one sweep"
        raise ValueError(
            f"{owner}: {what} give {count:,} runs, more than the {MAX_RUNS:,} {holder} "
            "holds (MAX_RUNS of the module contextsteer.sweep); split the work"
        )


def _length(values: Iterable[Any]) -> int | None:
    """``len(values)`` of a sized collection, else None; a range longer than
    ``sys.maxsize`` (whose len() overflows) by its arithmetic."""
    if not isinstance(values, Sized):
        return None
    try:
        return len(values)
    except OverflowError:
        if isinstance(values, range):  # (not empty: its length overflowed)
            return -(-(values.stop - values.start) // values.step)
        return sys.maxsize


def _listed(values: Iterable[Any], owner: str, what: str, room: int) -> list[Any]:
    """``values`` as a list of at most ``room`` (else the count refused as too many,
    before the list is built: ``range(10**10)`` and ``itertools.count()`` filled memory
    first, ``range(2**70)`` raised a bare OverflowError; fuzz round 20)."""
    n = _length(values)
    if n is not None:
        if n > room:
            _too_many(owner, n, what)
        return list(values)
    out = list(itertools.islice(values, room + 1))
    if len(out) > room:
        raise ValueError(
            f"{owner}: {what} give more than {MAX_RUNS:,} runs, the most one "
            f"{'trial' if owner == 'tune' else 'sweep'} holds (MAX_RUNS of the module "
            "contextsteer.sweep); split the work"
        )
    return out


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """The Cartesian product of parameter values, as a list of dicts.

    Keys keep their order; the last key varies fastest. Each axis needs at least one value,
    and the product holds at most ``MAX_RUNS`` (ten million) dicts: a bigger one is
    refused before any is built.

    >>> from contextsteer.sweep import grid
    >>> grid(agents=[10, 20], slots=[8, 16])
    [{'agents': 10, 'slots': 8}, {'agents': 10, 'slots': 16}, {'agents': 20, 'slots': 8}, {'agents': 20, 'slots': 16}]
    >>> grid()
    [{}]
    """
    names = list(axes)
    values: list[list[Any]] = []
    for name in names:
        v = axes[name]
        if (
            isinstance(v, (str, bytes, Mapping, set, frozenset))
            or not isinstance(v, Iterable)
            or (isinstance(v, np.ndarray) and v.ndim == 0)  # (len() raised a bare TypeError)
        ):
            # (A dict swept its keys, a set in an order that changes with the hash seed.)
            raise TypeError(
                f"grid: {name} must be a sequence of values (a list, tuple or array), got {v!r}"
            )
        # Each axis listed only within the room the axes before it leave.
        before = math.prod(len(w) for w in values)
        sizes = "".join(f"{len(w)} {n} × " for n, w in zip(names, values))
        n = _length(v)
        if n is not None and before * n > MAX_RUNS:
            _too_many("grid", before * n, f"{sizes}{n} {name}")
        v = _listed(v, "grid", f"{sizes}the values of {name}", MAX_RUNS // max(before, 1))
        if not v:
            raise ValueError(f"grid: {name} has no values")
        values.append(v)
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of a sweep.

    Attributes
    ----------
    index : int
        Position in the sweep: parameter set ``index // len(seeds)``, seed
        ``index % len(seeds)``.
    params : dict
        The parameters (without the seed).
    seed : int
    result : dict
        What the run returned: for a scenario the JSON form of its
        :class:`~contextsteer.RunResult` (``metrics``: ``sim.metrics()``, ``report``: the
        scenario's report or {}, ``seconds``: wall time of the steps, ``counters``, ...);
        for a function its return value. Empty when the run failed with ``errors="keep"``.
    error : str or None
        ``"ExceptionType: message"`` of a failed run (``errors="keep"``), else None.
    """

    index: int
    params: dict[str, Any]
    seed: int
    result: dict[str, Any]
    error: str | None = None

    def value(self, key: str, default: Any = math.nan) -> Any:
        """A parameter, ``"seed"``, or a dotted path into the result
        (``"metrics.collisions.total"``); ``default`` when absent or None. A result key
        named like a parameter (a scenario's ``agents`` left at the end, beside its
        ``agents`` parameter) reads as ``"result.agents"``."""
        if key == "seed":
            return self.seed
        if key.startswith("result."):
            key = key[len("result.") :]
        elif key in self.params:
            v = self.params[key]
            return default if v is None else v
        node: Any = self.result
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return default if node is None else node


class SweepResult(Sequence[Run]):
    """The runs of a sweep, in run order (parameter sets in grid order, seeds inside).

    A sequence of :class:`Run`, plus column access (:meth:`column`), per-parameter-set
    statistics over seeds (:meth:`summary`) and the best parameter set (:meth:`best`).
    """

    def __init__(self, runs: Sequence[Run], seeds: Sequence[int]):
        self._runs = list(runs)
        self.seeds = tuple(seeds)

    def __len__(self) -> int:
        return len(self._runs)

    @overload
    def __getitem__(self, i: SupportsIndex) -> Run: ...
    @overload
    def __getitem__(self, i: slice) -> list[Run]: ...
    def __getitem__(self, i: SupportsIndex | slice) -> Run | list[Run]:
        return self._runs[i]

    def __iter__(self) -> Iterator[Run]:
        return iter(self._runs)

    @_checks.safe_repr
    def __repr__(self) -> str:
        failed = sum(r.error is not None for r in self._runs)
        return f"SweepResult(runs={len(self)}, seeds={len(self.seeds)}, failed={failed})"

    @property
    def failed(self) -> list[Run]:
        """Runs that raised (only with ``errors="keep"``)."""
        return [r for r in self._runs if r.error is not None]

    def column(self, key: str, default: Any = math.nan) -> np.ndarray:
        """``key`` of every run (see :meth:`Run.value`) as an array, in run order.

        Raises
        ------
        ValueError
            The runs' values of ``key`` do not stack into one array (lists of different
            lengths, say): read them with :meth:`Run.value` one run at a time."""
        values = [r.value(key, default) for r in self._runs]
        if values and all(_checks.is_int(v) for v in values):
            # As exact ints: NumPy made float64 of ints past 2**63 beside smaller ones (a
            # seed of 2**64 - 1 read back as 2**64; fuzz round 26).
            low, high = min(int(v) for v in values), max(int(v) for v in values)
            kind = (
                np.int64
                if low >= -(2**63) and high < 2**63
                else np.uint64
                if low >= 0 and high < 2**64
                else object
            )
            return np.array([int(v) for v in values], dtype=kind)
        try:
            return np.asarray(values)
        except ValueError:
            shapes = sorted({str(np.shape(v)) for v in values if _stacks(v)} or {"mixed"})
            raise ValueError(
                f"column: the runs' values of {key!r} do not stack into one array (shapes "
                f"{', '.join(shapes)}); read them with Run.value one run at a time"
            ) from None

    def summary(self, *keys: str) -> list[dict[str, Any]]:
        """Per parameter set: its parameters, and for each key the ``mean``, ``std`` and
        ``n`` over the seeds whose run has a finite value (a list of dicts, grid order).
        ``std`` is the spread of those values (NumPy's default, ``ddof=0``), not an
        estimate of the seeds' population; with 2-3 seeds it reads low.

        A key missing from a run counts as no value; a key whose value is not a number
        (a dict of metrics, a string) raises a ValueError naming the key and its type.
        """
        return self._summary(keys, "summary")

    def _summary(self, keys: tuple[str, ...], owner: str) -> list[dict[str, Any]]:
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"summary: keys must be strings (dotted result keys), got {key!r}")
        out: list[dict[str, Any]] = []
        groups: dict[int, list[Run]] = {}
        for r in self._runs:
            groups.setdefault(r.index // max(len(self.seeds), 1), []).append(r)
        for key in keys:
            if any(key in r.params for r in self._runs):
                # Its statistics would take the parameter's place in the row, and read the
                # parameter, not the result of that name (fuzz round 26).
                raise ValueError(
                    f"{owner}: {key!r} is a parameter of the sweep; a result value of that "
                    f"name reads as 'result.{key}'"
                )
        for _, runs in sorted(groups.items()):
            row: dict[str, Any] = dict(runs[0].params)
            for key in keys:
                values = [r.value(key) for r in runs]
                for r, value in zip(runs, values):
                    if not _checks.is_real(value):
                        inside = (
                            " (name a number inside it: "
                            + ", ".join(f"{key}.{name}" for name in value)
                            + ")"
                            if isinstance(value, Mapping) and value
                            else ""
                        )
                        raise ValueError(
                            f"summary: {key!r} must be a number in every run's result, got "
                            f"a {type(value).__name__} in run {r.index} (seed {r.seed}){inside}"
                        )
                v = np.asarray(values, dtype=np.float64)
                v = v[np.isfinite(v)]
                row[key] = {
                    "mean": float(v.mean()) if len(v) else math.nan,
                    "std": float(v.std()) if len(v) else math.nan,
                    "n": int(len(v)),
                }
            out.append(row)
        return out

    def best(self, key: str, *, minimize: bool = True) -> dict[str, Any]:
        """The parameter set with the lowest (or highest) mean of ``key`` over the seeds
        (ties: the first in grid order), as a :meth:`summary` row."""
        rows = [r for r in self._summary((key,), "best") if r[key]["n"] > 0]
        if not rows:
            raise ValueError(f"best: no run has a finite {key!r}")
        sign = 1.0 if _checks.flag("best: minimize", minimize) else -1.0
        return min(rows, key=lambda r: sign * r[key]["mean"])

    def to_records(self) -> list[dict[str, Any]]:
        """Plain dicts (index, params, seed, result, error), e.g. for ``json.dump``: the
        parameters as plain JSON types (a grid of NumPy values left ``np.int64`` in them,
        which ``json.dump`` refuses); ``result`` as the run returned it (a scenario
        run's JSON form already is plain)."""
        from ._json import jsonable

        out = []
        for r in self._runs:
            d = dataclasses.asdict(r)
            d["params"] = jsonable(d["params"])
            out.append(d)
        return out


# ------------------------------------------------------------------------- running ---


def _run_scenario(
    name: str, params: dict[str, Any], seed: int, steps: int | None, threads: int, caller: int
) -> dict[str, Any]:
    """One scenario run (:func:`contextsteer.run_scenario`), as its JSON form. In a worker
    process (not the caller's, ``caller`` is its pid) the C++ core gets ``threads``
    threads; in the caller's own process (serial runs, thread-based executors) its setting
    is left alone."""
    from .run import run_scenario
    from .runtime import set_num_threads

    if os.getpid() != caller:
        set_num_threads(threads)
    return run_scenario(name, params, seed=seed, steps=steps).to_dict()


def _run_function(fn: Callable[..., Any], params: dict[str, Any], seed: int) -> dict[str, Any]:
    out = fn(**params, seed=seed)
    if not isinstance(out, Mapping):
        raise TypeError(f"sweep: the run function must return a dict, got {type(out).__name__}")
    return dict(out)


def _stacks(value: Any) -> bool:
    """Whether NumPy can take the shape of ``value`` (a ragged list raises)."""
    try:
        np.shape(value)
    except ValueError:
        return False
    return True


class _RunFailed(Exception):
    """What a run raised, in a worker process, when that exception would not come back
    through pickle (an ``__init__`` of two arguments, say): its type's name and message.
    Sent as it was, it broke the whole pool, and every finished run was lost."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(kind, text)
        self.kind, self.text = kind, text

    def __str__(self) -> str:
        return self.text


def _travels(value: Any) -> bool:
    """Whether ``value`` (a run's error or result) comes back whole from a worker process
    (pickle both ways)."""
    try:
        pickle.loads(pickle.dumps(value))
    except Exception:
        return False
    return True


def _checked(task: tuple, pool: cf.Executor) -> tuple:
    """``task`` marked for a local process pool, which sends results back with plain
    pickle (Dask and Ray use cloudpickle, which takes what pickle cannot)."""
    return (*task, isinstance(pool, cf.ProcessPoolExecutor))


def _call(task: tuple) -> dict[str, Any]:
    kind, target, params, seed, steps, threads, caller, *marks = task
    pickled_back = bool(marks and marks[0])
    try:
        if kind == "scenario":
            out = _run_scenario(target, params, seed, steps, threads, caller)
        else:
            out = _run_function(target, params, seed)
    except SystemExit as exc:  # a run that gave up (sys.exit) failed; the sweep goes on
        raise _RunFailed("SystemExit", str(exc.code)) from None
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if os.getpid() == caller or _travels(exc):
            raise
        raise _RunFailed(type(exc).__name__, _text(exc)) from None
    except BaseException as exc:  # (asyncio.CancelledError, say): this run failed
        raise _RunFailed(type(exc).__name__, _text(exc)) from None
    if pickled_back and os.getpid() != caller and not _travels(out):
        # A result that would not come back whole through pickle broke the pool too.
        raise _RunFailed("TypeError", "the run's result does not pickle back to the caller")
    return out


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


class _RayExecutor(cf.Executor):
    """submit() as a Ray task; the future is the ObjectRef's concurrent.futures.Future."""

    def __init__(self, options: dict[str, Any]):
        ray = _ray()
        self._ray = ray
        self._remote = ray.remote(**options)(_call) if options else ray.remote(_call)

    def submit(self, fn, /, *args, **kwargs):
        if fn is not _call or kwargs:
            return self._ray.remote(fn).remote(*args, **kwargs).future()
        return self._remote.remote(*args).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass  # the Ray runtime belongs to the caller


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a :func:`sweep`: a KeyboardInterrupt (so an interrupt still ends a
    script as one does) that keeps what had finished.

    Attributes
    ----------
    result : SweepResult
        The runs that finished before the interrupt, in run order (with ``errors="keep"``
        semantics: a run that had failed is there with its ``error``); the runs in
        flight and the pending ones are not.
    total : int
        How many runs the sweep had.

    Examples
    --------
    >>> from contextsteer.sweep import SweepInterrupted, SweepResult
    >>> e = SweepInterrupted(SweepResult([], [0]), 4)
    >>> isinstance(e, KeyboardInterrupt), len(e.result), e.total
    (True, 0, 4)
    >>> str(e)
    'sweep interrupted after 0 of 4 runs'
    """

    def __init__(self, result: SweepResult, total: int):
        super().__init__(f"sweep interrupted after {len(result)} of {total} runs")
        self.result = result
        self.total = total


def ray_executor(**options: Any) -> cf.Executor:
    """A ``concurrent.futures.Executor`` that runs each submitted call as a Ray task.

    Ray must be installed (``pip install contextsteer[ray]``) and initialised
    (``ray.init()``, or connected to a cluster) by the caller. ``options`` go to
    ``ray.remote`` (e.g. ``num_cpus=1``).

    Raises
    ------
    ImportError
        Ray is not installed.
    """
    _ray()  # a clear ImportError now rather than on submit
    return _RayExecutor(options)


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ImportError("ray_executor needs Ray: pip install 'contextsteer[ray]'") from exc
    return ray


def _open_pool(
    executor: cf.Executor | str | None, workers: int | None, n_tasks: int, who: str
) -> tuple[cf.Executor, cf.Executor | None]:
    """``(pool, own)``: the executor to submit to, and the one to shut down when done (a
    local process pool created here; None for an executor the caller passed)."""
    if executor is None or executor == "processes":
        import multiprocessing

        n = int(workers) if workers is not None else (os.cpu_count() or 1)
        if sys.platform == "win32":  # Windows' process pools take at most 61 workers
            n = min(n, 61)
        # "spawn": a fresh interpreter per worker, safe whatever threads this
        # process runs (the C++ thread pool, a notebook kernel).
        own = cf.ProcessPoolExecutor(
            max_workers=min(n, n_tasks) or 1, mp_context=multiprocessing.get_context("spawn")
        )
        return own, own
    if isinstance(executor, cf.Executor):
        return executor, None
    raise ValueError(
        f"{who}: executor must be a concurrent.futures.Executor, "
        f"'serial' or 'processes', got {executor!r}"
    )


class _BarFile:
    """Where a progress bar writes: stderr, with a write that fails dropped (a log on a
    full disk, /dev/full, a closed pipe) and nothing when stderr is None (started with it
    closed): the bar's OSError or AttributeError stopped run, sweep and tune, and their
    results were never written (fuzz rounds 20 and 21)."""

    def write(self, text: str) -> int:
        try:
            return sys.stderr.write(text) if sys.stderr is not None else len(text)
        except (OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.flush()

    # What tqdm reads to draw a terminal's full-width Unicode bar (without them it drew
    # a 10-character ASCII one; fuzz round 22).
    @property
    def encoding(self) -> str | None:
        return getattr(sys.stderr, "encoding", None)

    def isatty(self) -> bool:
        try:
            return sys.stderr is not None and sys.stderr.isatty()
        except (OSError, ValueError, AttributeError):
            return False

    def fileno(self) -> int:
        if sys.stderr is None:
            raise OSError("stderr is closed")
        return sys.stderr.fileno()


def _bar_options() -> dict[str, Any]:
    """What every progress bar of the package gives tqdm besides its counts: gone when
    done, written through :class:`_BarFile`, as wide as the terminal."""
    return {"leave": False, "file": _BarFile(), "dynamic_ncols": True}


@contextlib.contextmanager
def _sigint_held(pressed: list[int] | None = None) -> Iterator[None]:
    """Ctrl-C (SIGINT) noted in ``pressed`` (or dropped) instead of raised, for the
    duration: on the main thread, when Python's default handler is installed (anything
    else is left alone). For the steps that must not be cut: tune's ask, and the keeping
    of finished runs after a first Ctrl-C (a second one 10 ms later, as ``timeout -s
    INT`` sends to a process group, replaced the runs with a bare KeyboardInterrupt;
    fuzz round 20)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    noted = pressed if pressed is not None else []
    signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _close_pool(own: cf.Executor | None, futures: Iterable[cf.Future], interrupted: bool) -> None:
    """Shut down the pool this module opened (``own``). After Ctrl-C (``interrupted``) the
    runs in flight are not waited for — one may take minutes — : pending runs are
    cancelled and the local worker processes terminated, so the KeyboardInterrupt reaches
    the caller at once. A caller's executor is never shut down, only our pending futures
    cancelled."""
    if interrupted:
        for fut in futures:
            fut.cancel()
    if own is None:
        return
    if not interrupted:
        own.shutdown(wait=True, cancel_futures=True)
        return
    workers = list((getattr(own, "_processes", None) or {}).values())
    own.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        proc.terminate()
    for proc in workers:
        proc.join(timeout=5)


def _check_broken(fut: cf.Future, who: str) -> None:
    """Raise RuntimeError when the executor itself died (not just this run)."""
    exc = fut.exception()
    if isinstance(exc, cf.BrokenExecutor):
        # The pool itself died; every pending future carries this same
        # exception object, so stop at the first instead of re-raising it.
        exc.__traceback__ = None
        raise RuntimeError(
            f"{who}: the executor's workers died before finishing "
            f"({type(exc).__name__}: {exc}). With local processes this usually means "
            "the workers could not import the run function or the script that "
            "started them: define the function in an importable module, guard the "
            'script with `if __name__ == "__main__":`, or pass executor="serial". '
            "It also happens when a run's result holds an object of a module only the "
            "workers can import."
        ) from exc


def _run_tasks(
    tasks: Sequence[tuple], executor: cf.Executor | str | None, workers: int | None, who: str
) -> list[tuple[dict[str, Any] | None, BaseException | None]]:
    """Run sweep tasks (see :func:`_call`) on an executor; ``(result, error)`` per task,
    in task order. The building block :func:`contextsteer.tune` evaluates trials with."""
    out: list[tuple[dict[str, Any] | None, BaseException | None]] = [(None, None)] * len(tasks)
    if executor == "serial":
        for i, t in enumerate(tasks):
            try:
                out[i] = (_call(t), None)
            except Exception as exc:
                out[i] = (None, exc)
        return out
    pool, own = _open_pool(executor, workers, len(tasks), who)
    futures: dict[cf.Future, int] = {}
    interrupted = False
    try:
        futures = {pool.submit(_call, _checked(t, pool)): i for i, t in enumerate(tasks)}
        for fut in cf.as_completed(futures):
            _check_broken(fut, who)
            error = fut.exception()
            if isinstance(error, KeyboardInterrupt):  # (a run's Ctrl-C stops it all)
                raise error
            out[futures[fut]] = (None, error) if error is not None else (fut.result(), None)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _close_pool(own, futures, interrupted)
    return out


def _whole(value: Any, name: str, owner: str, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum``. A bool, a float or a string is refused
    (TypeError) rather than truncated; errors are prefixed with ``owner``."""
    if isinstance(value, bool) or not _checks.is_int(value):
        raise TypeError(f"{owner}: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be >= {minimum}, got {value}")
    return int(value)


def _threads(value: Any, owner: str) -> int:
    """A run's thread count: an int in [1, 1024] (``set_num_threads``'s range), checked
    here rather than in every worker's run."""
    n = _whole(value, "threads", owner)
    if n > 1024:
        raise ValueError(f"{owner}: threads must be in [1, 1024], got {n}")
    return n


def _seed_list(seeds: Any, owner: str) -> list[int]:
    """The seeds of a sweep or a tuning study: a count (``range(count)``) or integers,
    each in [0, 2**64) as the agents' random state takes them."""
    if isinstance(seeds, np.ma.MaskedArray):  # (a masked entry's hidden value would be read)
        raise TypeError(f"{owner}: seeds must be a count or integers, not a masked array")
    if isinstance(seeds, np.ndarray) and seeds.ndim == 0:  # (np.array(3): a count)
        seeds = seeds[()]
    if _checks.is_int(seeds) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"{owner}: seeds must be >= 1 when given as a count, got {seeds}")
        seeds = range(int(seeds))
    elif isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise TypeError(f"{owner}: seeds must be a count or integers, got {seeds!r}")
    seed_list = _listed(seeds, owner, "the seeds", MAX_RUNS)
    if not seed_list:
        raise ValueError(f"{owner}: no seeds")
    for seed in seed_list:
        if isinstance(seed, bool) or not _checks.is_int(seed):
            raise TypeError(f"{owner}: seeds must be integers, got {seed!r}")
        if not 0 <= seed < 2**64:
            raise ValueError(f"{owner}: seeds must be in [0, 2**64), got {seed}")
    out = [int(seed) for seed in seed_list]
    if len(set(out)) != len(out):
        twice = sorted(s for s, n in collections.Counter(out).items() if n > 1)
        raise ValueError(
            f"{owner}: seeds repeat {twice} (a repeated seed repeats its run: the spread "
            "over the seeds would read low)"
        )
    return out


def _error_text(error: BaseException) -> str:
    """``"Type: message"`` of a failed run. Ray wraps a task's exception in a
    ``RayTaskError`` whose text is the remote traceback; its ``cause`` is what the run
    raised, as the other executors report it."""
    cause = getattr(error, "cause", None)
    if type(error).__name__.startswith("RayTaskError") and isinstance(cause, BaseException):
        error = cause
    if isinstance(error, _RunFailed):
        return f"{error.kind}: {error.text}"
    return f"{type(error).__name__}: {error}"


def _is_seed(name: Any) -> bool:
    """``seed``, or a key inside it (``seed.x``: seed is no mapping, and every run failed
    on it where ``seed`` itself is refused up front). A name that is not a string is a
    TypeError naming it (an int key raised a bare AttributeError)."""
    if not isinstance(name, str):
        raise TypeError(f"parameter names must be strings, got {name!r}")
    return name.split(".", 1)[0] == "seed"


def _run_target(
    scenario: str | Callable[..., Any],
    names: Collection[str],
    owner: str,
    seed_message: str,
    *,
    functions_too: bool,
) -> tuple[str, Any]:
    """What a sweep or a tuning study runs: ``("scenario", name)`` after checking that the
    scenario takes every parameter in ``names`` (and none is ``seed``, which has its own
    argument), or ``("function", fn)`` for a callable (the ``seed`` check too when
    ``functions_too``). Errors are prefixed with ``owner``."""
    from . import scenarios

    if isinstance(scenario, str):
        sc = scenarios.get(scenario)  # ValueError listing the scenarios
        for name in names:
            if _is_seed(name):
                raise ValueError(f"{owner}: {seed_message}")
            if not sc.accepts(name):
                takes = ", ".join(p for p in sc.parameters if p != "seed")
                raise ValueError(
                    f"{owner}: scenario {sc.name!r} does not take {name!r} "
                    f"(it takes: {takes}; each run gets its own seed)"
                )
        return "scenario", sc.name
    if callable(scenario):
        if functions_too and any(_is_seed(name) for name in names):
            raise ValueError(f"{owner}: {seed_message}")
        return "function", scenario
    raise TypeError(f"{owner}: scenario must be a scenario name or a callable, got {scenario!r}")


def sweep(
    scenario: str | Callable[..., Mapping[str, Any]],
    params: Sequence[Mapping[str, Any]] | Mapping[str, Iterable[Any]] | None = None,
    *,
    seeds: Iterable[int] | int = (0,),
    steps: int | None = None,
    executor: cf.Executor | str | None = None,
    workers: int | None = None,
    threads: int = 1,
    errors: str = "raise",
    progress: bool = True,
) -> SweepResult:
    """Run ``scenario`` for every parameter set and seed.

    Parameters
    ----------
    scenario : str or callable
        A registered scenario name (see :func:`contextsteer.scenarios.available`): each run
        builds it with the parameters and ``seed=``, steps it (``steps``, default the
        scenario's) through :func:`contextsteer.run_scenario` and keeps the JSON form of
        its :class:`~contextsteer.RunResult` (``metrics``, ``report``, ``seconds``, ...). Or a function
        ``fn(**params, seed=...) -> dict``; with a process pool it must be importable
        (defined at module level, not in a notebook cell: use ``executor="serial"`` there).
        A script that starts a process pool needs the ``if __name__ == "__main__":`` guard,
        as for any ``multiprocessing`` program.
    params : list of dicts, or dict of value lists, optional
        Parameter sets (e.g. :func:`grid`); a dict of lists is expanded with :func:`grid`.
        None runs the defaults once per seed.
    seeds : iterable of int, or int
        Seeds each parameter set runs with; an int ``n`` means ``range(n)``. A repeated
        seed is a ValueError (it would repeat its run and shrink the spread).
    steps : int, optional
        Steps per run (scenarios only: with a run function it is a ValueError, as it
        would be ignored).
    executor : concurrent.futures.Executor, "serial" or "processes", optional
        Where runs go. None or "processes": a local process pool of ``workers`` processes
        (default: the CPU count), created and shut down here. "serial": one after the other
        in this process. An Executor instance is used as given and left running, e.g.
        ``client.get_executor()`` of a ``dask.distributed.Client`` or
        :func:`ray_executor`.
    workers : int, optional
        Size of the local process pool; a ValueError with any other executor, which
        would ignore it.
    threads : int
        Threads of the C++ core in each worker process (1 by default: the runs themselves
        already spread over the cores). Runs in this process ("serial", thread-based
        executors) keep its setting (:func:`contextsteer.set_num_threads`). Results do not
        depend on it. In [1, 1024].
    errors : {"raise", "keep"}
        "raise": the first failed run (in run order) raises RuntimeError naming its
        parameters and seed. "keep": failed runs are returned with ``error`` set.
    progress : bool
        A tqdm progress bar over finished runs.

    Returns
    -------
    SweepResult
        The runs in run order: parameter sets in order, each with its seeds in order.

    Raises
    ------
    ValueError
        Unknown scenario, a parameter the scenario does not take (or ``seed`` among the
        parameters), no seeds, a bad ``errors``/``executor``/``steps``/``threads``/``workers``.
    TypeError
        ``scenario`` is neither a name nor callable, or seeds are not integers.
    RuntimeError
        A run failed and ``errors="raise"``, or the executor's workers died (whatever
        ``errors`` says: then no result can be trusted to come back).
    SweepInterrupted
        Ctrl-C: a KeyboardInterrupt carrying the finished runs.

    Notes
    -----
    Ctrl-C (KeyboardInterrupt) stops a sweep at once: pending runs are cancelled and the
    workers of a local process pool terminated, without waiting for the runs in flight.
    The :class:`SweepInterrupted` raised (a KeyboardInterrupt) keeps the runs that had
    finished in its ``result``, so an hour of runs is not lost to one keystroke.
    """
    if errors not in ("raise", "keep"):
        raise ValueError(f"sweep: errors must be 'raise' or 'keep', got {errors!r}")
    seed_list = _seed_list(seeds, "sweep")
    if params is None:
        param_sets: list[dict[str, Any]] = [{}]
    elif isinstance(params, Mapping):
        param_sets = grid(**params)
    else:
        iterable = isinstance(params, Iterable) and not isinstance(params, (str, bytes))
        # Counted as they are listed (a generator of dicts filled memory before the
        # count was checked; fuzz round 24).
        room = MAX_RUNS // max(1, len(seed_list))
        given = _listed(params, "sweep", "params (times the seeds)", room) if iterable else []
        if not iterable or not all(isinstance(p, Mapping) for p in given):
            raise TypeError(
                f"sweep: params must be a list of dicts or a dict of value lists, got {params!r}"
            )
        if not given:
            raise ValueError("sweep: params is an empty list (no parameter sets to run)")
        param_sets = [dict(p) for p in given]
    if steps is not None:
        steps = _whole(steps, "steps", "sweep")
    threads = _threads(threads, "sweep")
    if workers is not None:
        workers = _whole(workers, "workers", "sweep")
        if not (executor is None or executor == "processes"):
            raise ValueError(
                "sweep: workers sizes the local process pool (executor None or 'processes'); "
                f"with executor={executor!r} it would be ignored"
            )
    progress = _checks.flag("sweep: progress", progress)

    names = [name for p in param_sets for name in p]
    kind, target = _run_target(
        scenario, names, "sweep", "pass seeds with seeds=, not as a parameter", functions_too=True
    )
    if kind == "function" and steps is not None:
        raise ValueError(
            "sweep: steps applies to scenarios only (a run function steps its own "
            "simulation); pass it as a parameter instead"
        )

    _too_many(
        "sweep",
        len(param_sets) * len(seed_list),
        f"{len(param_sets):,} parameter sets × {len(seed_list):,} seeds",
    )
    caller = os.getpid()
    tasks = [
        (kind, target, p, s, steps, int(threads), caller) for p in param_sets for s in seed_list
    ]
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    failures: dict[int, BaseException] = {}

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc="sweep", unit="run", **_bar_options())

    def finished(i: int, fn: Callable[[], dict[str, Any]]) -> None:
        try:
            results[i] = fn()
        except Exception as exc:  # kept or re-raised below, in run order
            failures[i] = exc
        if bar is not None:
            bar.update(1)

    own = None
    futures: dict[cf.Future, int] = {}
    interrupted = False
    held = contextlib.ExitStack()
    try:
        if executor == "serial":
            for i, t in enumerate(tasks):
                finished(i, functools.partial(_call, t))
                if i in failures and errors == "raise":
                    break
        else:
            pool, own = _open_pool(executor, workers, len(tasks), "sweep")
            futures = {pool.submit(_call, _checked(t, pool)): i for i, t in enumerate(tasks)}
            for fut in cf.as_completed(futures):
                _check_broken(fut, "sweep")
                finished(futures[fut], fut.result)
    except KeyboardInterrupt as exc:
        interrupted = True
        held.enter_context(_sigint_held())  # (until the pool is closed, below)
        done = _collect_runs(tasks, results, failures)
        raise SweepInterrupted(SweepResult(done, seed_list), len(tasks)) from exc
    finally:
        with held:
            _close_pool(own, futures, interrupted)
            if bar is not None:
                bar.close()

    if errors == "raise":
        for i, t in enumerate(tasks):
            err = failures.get(i)
            if err is not None:
                raise RuntimeError(
                    f"sweep: run {i} ({t[2]}, seed {t[3]}) failed: {_error_text(err)}"
                ) from err
    return SweepResult(_collect_runs(tasks, results, failures), seed_list)


def _collect_runs(
    tasks: Sequence[tuple],
    results: Sequence[dict[str, Any] | None],
    failures: Mapping[int, BaseException],
) -> list[Run]:
    """The finished runs (a result or an error), in run order; runs never run are left out."""
    runs = []
    for i, t in enumerate(tasks):
        err = failures.get(i)
        if err is None and results[i] is None:
            continue  # not run: an earlier serial run failed, or the sweep was interrupted
        runs.append(
            Run(
                i,
                dict(t[2]),
                t[3],
                results[i] or {},
                None if err is None else _error_text(err),
            )
        )
    return runs
