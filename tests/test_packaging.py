"""Packaging: one version, the CLI's --version, the wheel configuration, the CI scripts."""

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import contextsteer as cs

ROOT = Path(__file__).resolve().parent.parent

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None


def _pyproject() -> dict:
    if tomllib is None:
        pytest.skip("tomllib needs Python >= 3.11")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once():
    text = (ROOT / "python" / "contextsteer" / "_version.py").read_text(encoding="utf-8")
    (written,) = re.findall(r'^__version__ = "([^"]+)"$', text, flags=re.M)
    assert cs.__version__ == written
    assert importlib.metadata.version("contextsteer") == written  # the installed metadata
    project = _pyproject()
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    meta = project["tool"]["scikit-build"]["metadata"]["version"]
    assert meta["input"] == "python/contextsteer/_version.py"


def test_cli_version():
    proc = subprocess.run(
        [sys.executable, "-m", "contextsteer", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == f"contextsteer {cs.__version__}"


def test_extras_and_cibuildwheel_configuration():
    project = _pyproject()
    extras = project["project"]["optional-dependencies"]
    assert {"test", "pandas", "pedpy", "tune", "docs", "widgets"} <= set(extras)
    assert any(d.startswith("pedpy") for d in extras["pedpy"])
    assert any(d.startswith("optuna") for d in extras["tune"])
    assert any(d.startswith("sphinx") for d in extras["docs"])
    cibw = project["tool"]["cibuildwheel"]
    assert cibw["build"] == ["cp310-*", "cp311-*", "cp312-*", "cp313-*"]
    assert "tools/smoke_test.py" in cibw["test-command"]
    assert {"linux", "macos"} <= set(cibw)
    # No Windows wheels: the core is not ported to MSVC (README, "Packaging").
    assert "windows" not in cibw and "*-win*" in cibw["skip"]


def test_ci_runs_readme_commands_the_wheel_smoke_and_the_docs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install -e ".[test]" && contextsteer run racetrack' in ci
    assert "pytest" in ci and "tools/wheel-smoke" in ci and "tools/build-docs" in ci
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pip install -e ".[test]" && contextsteer run racetrack' in readme
    for tool in ("wheel-smoke", "smoke_test.py", "build-docs", "check-docs"):
        assert (ROOT / "tools" / tool).is_file(), tool


def test_the_license_text_ships_with_the_declared_license():
    # The MIT terms ask for the notice in every copy: LICENSE at the root, which the sdist
    # holds and scikit-build-core copies into the wheel's .dist-info (tools/wheel-smoke
    # checks both files).
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Permission is hereby granted" in text
    assert _pyproject()["project"]["license"] == {"text": "MIT"}
