"""The mode tables of the core: one table per kind of string option, read from C++.

Each kind (``combine``, ``steering_combine``, ``resolve``, ``choose``, ``dot_shape``,
``spread``) is one table of ``(name, enum value, documentation line)`` in the C++ core,
next to its enum (``kCombineModes`` in ``combine.hpp``, ...). The public ``*_MODES``
tuples, the validation of arguments and the error messages are all built from it, so a
new mode is one table entry plus its kernel.
"""

from __future__ import annotations

from . import _core

#: ``{kind: ((name, documentation line), ...)}``, in table order.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    kind: tuple((str(name), str(doc)) for name, doc in rows) for kind, rows in _core.modes().items()
}


def names(kind: str) -> tuple[str, ...]:
    """The mode names of ``kind``, in table order."""
    return tuple(name for name, _ in TABLES[kind])


def check(kind: str, value: object, owner: str, argument: str) -> str:
    """``value`` when it names a mode of ``kind``.

    Raises
    ------
    ValueError
        ``"<owner>: <argument> must be one of 'a', 'b', ..., got <value>"`` otherwise (also
        for a value that is not a string), from the same table and parser the bindings use.
    """
    return _core.check_mode(kind, value, owner, argument)
