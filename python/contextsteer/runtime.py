"""Thread control for the C++ kernels."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _core

__all__ = ["get_num_threads", "set_num_threads", "threads"]


def get_num_threads() -> int:
    """Return the number of threads the C++ kernels split their loops over.

    Examples
    --------
    >>> import contextsteer as cs
    >>> cs.get_num_threads() >= 1
    True
    """
    return _core.get_num_threads()


def set_num_threads(n: int) -> None:
    """Set the number of threads the C++ kernels use.

    Results never depend on the thread count: every kernel writes each agent's output
    from exactly one thread and reads only inputs no thread writes.

    Parameters
    ----------
    n : int
        Number of threads, at least 1.

    Raises
    ------
    ValueError
        If ``n < 1``.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads: expected an int, got {type(n).__name__}")
    _core.set_num_threads(n)


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Context manager that runs its block with ``n`` kernel threads.

    Examples
    --------
    >>> import contextsteer as cs
    >>> with cs.threads(1):
    ...     cs.get_num_threads()
    1
    """
    before = get_num_threads()
    set_num_threads(n)
    try:
        yield
    finally:
        set_num_threads(before)
