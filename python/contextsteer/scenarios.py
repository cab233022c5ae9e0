"""Ready-made scenarios: named functions that build a seeded simulation.

A scenario is a function registered with :func:`scenario`; it takes its parameters as
keyword arguments (``agents``, ``slots``, ``seed`` and its own) and returns a ready
simulation. The command line (``contextsteer run NAME``) and the notebooks look them up
by name with :func:`get`; :func:`available` lists them.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["Scenario", "available", "get", "scenario", "unregister"]


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A registered scenario: its name, a one-line description and its builder.

    Calling it calls the builder, so ``get("racetrack")(agents=8)`` builds a simulation.

    Attributes
    ----------
    name : str
    description : str
        One line, shown by ``contextsteer list``.
    builder : callable
        ``builder(**params)`` returns a simulation.
    steps : int
        Default number of steps of a run (``contextsteer run`` without ``--steps``).
    dt : float
        Time step in seconds.
    """

    name: str
    description: str
    builder: Callable[..., Any]
    steps: int = 600
    dt: float = 1.0 / 60.0

    def __call__(self, **params: Any) -> Any:
        return self.builder(**params)

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the keyword parameters the builder takes."""
        sig = inspect.signature(self.builder)
        return tuple(p.name for p in sig.parameters.values()
                     if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))

    def accepts(self, name: str) -> bool:
        """Whether the builder takes a keyword argument ``name`` (or any, via ``**kwargs``)."""
        sig = inspect.signature(self.builder)
        return name in self.parameters or any(
            p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


_REGISTRY: dict[str, Scenario] = {}


def scenario(name: str, *, description: str = "", steps: int = 600,
             dt: float = 1.0 / 60.0) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the scenario ``name``.

    The function is returned unchanged (it stays callable under its own name).

    Parameters
    ----------
    name : str
        Registry key: lower case, no spaces (a command-line word).
    description : str
        One line; defaults to the first line of the function's docstring.
    steps : int
        Default number of steps of a run.
    dt : float
        Time step in seconds.

    Raises
    ------
    ValueError
        If ``name`` is empty, has whitespace or is already registered, or ``steps``/``dt``
        are not positive.

    Examples
    --------
    >>> import contextsteer.scenarios as sc
    >>> @sc.scenario("demo-empty", description="Nothing at all", steps=10)
    ... def demo_empty(*, agents=1, seed=0):
    ...     return None
    >>> "demo-empty" in sc.available(), sc.get("demo-empty").steps
    (True, 10)
    >>> sc.get("demo-empty").accepts("slots")
    False
    >>> sc.unregister("demo-empty")
    """
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"scenario: expected a non-empty name without spaces, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"scenario: {name!r} is already registered")
    if int(steps) <= 0 or not float(dt) > 0:
        raise ValueError(f"scenario {name!r}: steps and dt must be > 0, got {steps}, {dt}")

    def register(builder: Callable[..., Any]) -> Callable[..., Any]:
        doc = (inspect.getdoc(builder) or "").strip().splitlines()
        text = description or (doc[0] if doc else "")
        _REGISTRY[name] = Scenario(name, text, builder, int(steps), float(dt))
        return builder

    return register


def unregister(name: str) -> None:
    """Remove a scenario (for tests and interactive experiments); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def available() -> dict[str, str]:
    """Registered scenarios as ``{name: description}``, sorted by name.

    Examples
    --------
    >>> import contextsteer.scenarios as sc
    >>> isinstance(sc.available(), dict)
    True
    """
    return {name: _REGISTRY[name].description for name in sorted(_REGISTRY)}


def get(name: str) -> Scenario:
    """The scenario registered as ``name``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the available scenarios.

    Examples
    --------
    >>> import contextsteer.scenarios as sc
    >>> sc.get("no-such-scenario")
    Traceback (most recent call last):
    ...
    ValueError: unknown scenario 'no-such-scenario'; available: ...
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        names = ", ".join(sorted(_REGISTRY)) or "(none yet)"
        raise ValueError(f"unknown scenario {name!r}; available: {names}") from None
