"""The benchmark scripts (benchmarks/*.py) as modules, for the tests that check them."""

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str, module: str | None = None):
    """benchmarks/<name>.py, run as module ``module`` (default ``name``) and registered in
    sys.modules under it (dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(module or name, BENCHMARKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
