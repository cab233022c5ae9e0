"""Thread control for the C++ kernels."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _checks, _core

__all__ = ["MAX_THREADS", "get_num_threads", "set_num_threads", "threads"]


def get_num_threads() -> int:
    """Return the number of threads the C++ kernels split their loops over.

    Until :func:`set_num_threads` is called, the cores the process may use: on Linux the
    CPUs of its affinity mask, capped by its cgroup's CPU quota rounded up (at least 1);
    elsewhere the hardware's thread count.

    Examples
    --------
    >>> import contextsteer as cs
    >>> cs.get_num_threads() >= 1
    True
    """
    return _core.get_num_threads()


MAX_THREADS = 1024
"""The most kernel threads :func:`set_num_threads` takes (the pool starts that many OS
threads; beyond the machine's cores they only add switching)."""

_lock = threading.Lock()
_blocks: list[tuple[object, int, int]] = []  # open threads() blocks: token, n, thread ident
_base: list[int] = []  # the count before the first of them opened


def _after_fork_in_child() -> None:
    """A fork while another thread held ``_lock`` (it does so across a
    ``set_num_threads`` that waits for a running step) left the child's first
    ``threads()`` waiting for good on a lock whose owner does not exist there (fuzz round
    13). The child has only the forking thread: a fresh lock, and only its own blocks."""
    global _lock
    _lock = threading.Lock()
    me = threading.get_ident()
    had = bool(_blocks)
    _blocks[:] = [b for b in _blocks if b[2] == me]
    # The count the child's own blocks set, or the one before any (another thread's open
    # block had left its count with the child).
    if _blocks:
        set_num_threads(_blocks[-1][1])
    elif had:
        set_num_threads(_base[0])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def set_num_threads(n: int | np.integer[Any]) -> None:
    """Set the number of threads the C++ kernels use (process-wide).

    Results never depend on the thread count: every kernel writes each agent's output
    from exactly one thread and reads only inputs no thread writes. When ``n`` is at most
    the cores the process may use (:func:`get_num_threads`' default), idle pool threads
    spin for up to 50 µs before they sleep, so that the short parallel loops of a phased
    step start at once; with more threads than that they sleep at once.

    Parameters
    ----------
    n : int
        Number of threads, in [1, :data:`MAX_THREADS`] (a Python or NumPy integer).

    Raises
    ------
    TypeError
        If ``n`` is not an integer (a bool, float or string).
    ValueError
        If ``n < 1`` or ``n > MAX_THREADS``.
    """
    if isinstance(n, (bool, np.bool_)) or not _checks.is_int(n):
        raise TypeError(f"set_num_threads: expected an int, got {type(n).__name__}")
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"set_num_threads: expected n in [1, {MAX_THREADS}], got {n}")
    _core.set_num_threads(int(n))


@contextlib.contextmanager
def threads(n: int | np.integer[Any]) -> Iterator[None]:
    """Context manager that runs its block with ``n`` kernel threads.

    The count is process-wide. Blocks may nest, and may be open in several Python
    threads at once: the count is the ``n`` of the block entered last among those still
    open, and when the last one closes it returns to what it was before the first
    opened (results never depend on it).

    Examples
    --------
    >>> import contextsteer as cs
    >>> with cs.threads(1):
    ...     cs.get_num_threads()
    1
    """
    token = object()
    with _lock:
        before = get_num_threads()
        set_num_threads(n)  # checked before anything is recorded
        if not _blocks:
            _base[:] = [before]
        _blocks.append((token, int(n), threading.get_ident()))
    try:
        yield
    finally:
        with _lock:
            _blocks[:] = [b for b in _blocks if b[0] is not token]
            set_num_threads(_blocks[-1][1] if _blocks else _base[0])
