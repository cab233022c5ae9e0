"""contextsteer: context-based steering for autonomous agents.

A C++ core steps thousands of agents; this package is its public, array-first surface.
Every array crossing into the core is float32 and C-contiguous; arrays the core owns are
returned as zero-copy NumPy views.
"""

from __future__ import annotations

from typing import Any

from . import (
    agents,
    behaviours,
    classic,
    detour,
    flow,
    history,
    maps,
    metrics,
    motion,
    nav,
    path,
    plot,
    runtime,
    scenarios,
    simulation,
    steering,
    world,
)
from ._version import __version__
from .agents import *  # noqa: F403

# Deprecated American spellings of the neighbour query (they warn); the API says neighbours.
from .agents import neighbors  # noqa: E402
from .behaviours import *  # noqa: F403
from .detour import *  # noqa: F403
from .flow import *  # noqa: F403
from .history import *  # noqa: F403
from .maps import *  # noqa: F403
from .motion import *  # noqa: F403
from .nav import *  # noqa: F403
from .path import *  # noqa: F403
from .persist import load

# The application layer: build and run a scenario, one result record (module contextsteer.run).
from .run import RunResult, run_scenario, run_simulation  # noqa: E402
from .runtime import *  # noqa: F403
from .simulation import *  # noqa: F403
from .steering import *  # noqa: F403

# Parameter sweeps (module contextsteer.sweep; its function shadows the module attribute,
# so import its other names from here or with ``from contextsteer.sweep import ...``).
from .sweep import Run, SweepInterrupted, SweepResult, grid, ray_executor, sweep

# Tuning with Optuna (module contextsteer.tune, shadowed by its function in the same way).
from .tune import NoFeasibleTrial, TuneInterrupted, TuneResult, tune
from .world import *  # noqa: F403

# Submodules imported on first use (``cs.video.write(...)``, as the README writes it, raised
# AttributeError unless ``import contextsteer.video`` had run; fuzz round 13). Every
# submodule the package does not import is here, since ``dir()`` lists them all.
_ON_FIRST_USE = ("video", "playground", "rimea", "cli")


def __dir__() -> list[str]:
    """The public names and the submodules (tab completion offered neither ``video`` nor
    ``rimea``, loaded on first use, and offered ``Any`` and ``annotations``)."""
    import pkgutil

    here = globals()["__path__"]
    modules = {m.name for m in pkgutil.iter_modules(here) if not m.name.startswith("_")}
    return sorted(set(__all__) | modules | {"__version__"})


def __getattr__(name: str) -> Any:  # the deprecated alias Neighbors, and the modules above
    if name == "Neighbors":
        return agents._alias(name)
    if name in _ON_FIRST_USE:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    *runtime.__all__,
    *maps.__all__,
    *world.__all__,
    *path.__all__,
    *agents.__all__,
    *behaviours.__all__,
    *flow.__all__,
    *motion.__all__,
    *nav.__all__,
    *detour.__all__,
    *steering.__all__,
    *simulation.__all__,
    *history.__all__,
    "RunResult",
    "run_scenario",
    "run_simulation",
    "Run",
    "SweepInterrupted",
    "SweepResult",
    "grid",
    "ray_executor",
    "sweep",
    "TuneInterrupted",
    "NoFeasibleTrial",
    "TuneResult",
    "tune",
    "load",
]
