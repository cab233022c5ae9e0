"""Ctrl-C in a child process whose pool workers are busy: the harness shared by the sweep
and tune tests (a script is started, SIGINT is sent once ``workers`` runs have marked
themselves busy, and no worker may outlive the interrupt)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def interrupt_when_busy(
    tmp_path: Path,
    module: str,
    script: str,
    *,
    workers: int = 2,
    settle: float = 0.0,
    sig: int = signal.SIGINT,
) -> tuple[int, str, str]:
    """Write ``module`` as ``hang.py`` and ``script`` as ``main.py`` in ``tmp_path``, run
    the script, send SIGINT (or ``sig``) when ``workers`` files are in ``$MARKS`` (each run writes one
    named by its pid) and ``settle`` seconds more have passed, and return the script's
    (returncode, stdout, stderr). Fails if a marked worker is still alive 5 s later."""
    (tmp_path / "hang.py").write_text(module)
    (tmp_path / "main.py").write_text(script)
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "main.py"), str(tmp_path)],
        env={**os.environ, "MARKS": str(marks)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(marks.iterdir())) < workers:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.1)
        time.sleep(settle)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)  # waiting for the runs would be minutes
    finally:
        if proc.poll() is None:
            proc.kill()
    _no_worker_left(marks)
    return proc.returncode, out, err


def _no_worker_left(marks: Path) -> None:
    for mark in marks.iterdir():
        pid = int(mark.name)
        for _ in range(50):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"worker {pid} still running after the interrupt")


def ctrl_c_at_run(monkeypatch, n: int) -> None:
    """Make the n-th run a sweep or a tuning study starts in this process (serial
    executor) raise KeyboardInterrupt, as Ctrl-C during it would."""
    sweep_mod = sys.modules["contextsteer.sweep"]  # the package's `sweep` is the function
    real, calls = sweep_mod._call, []

    def call(task):
        calls.append(task)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(sweep_mod, "_call", call)


def sigint_during(call, *, delay: float = 0.1, on_signal=None) -> list[float]:
    """Run ``call()`` with SIGINT raised ``delay`` seconds into it, in this process, and
    return the times (``perf_counter``) at which the test's handler ran; the handler calls
    ``on_signal()`` first (to look at the call's output, half written) and then raises
    KeyboardInterrupt, which ``call`` must let through (asserted). The handler replaces
    whatever disposition SIGINT had (a shell's background job starts with it ignored) and
    is put back after. A sleep after the call makes a call that ran whole fail on time."""
    import pytest

    handled: list[float] = []

    def handler(signum, frame):
        if on_signal is not None:
            on_signal()
        handled.append(time.perf_counter())
        raise KeyboardInterrupt

    import threading

    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(delay, signal.raise_signal, (signal.SIGINT,))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
            time.sleep(5)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    return handled
