#!/usr/bin/env python3
"""Smoke test of an installed contextsteer (a wheel in a fresh environment).

Run from outside the source tree, with the environment's python: imports the package
(and its compiled core), runs a short simulation and the command line. Used by
tools/wheel-smoke and as cibuildwheel's test-command. Exits non-zero on failure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

import contextsteer as cs

here = Path(cs.__file__).resolve().parent
assert "site-packages" in str(here), f"not an installed package: {here}"
print(f"contextsteer {cs.__version__} from {here}")

# The compiled core: maps, a ray cast, a short simulation with metrics.
slots = cs.SlotSet(16)
choice = cs.choose(cs.dot_map(slots, [[1.0, 0.0]]), slots, "vector_sum")
assert np.allclose(choice.direction, [[1.0, 0.0]], atol=1e-6), choice
sim = cs.scenarios.get("racetrack")(agents=4, seed=1)
sim.step(1 / 30, steps=90)
m = sim.metrics()
assert m["schema_version"] >= 1 and m["collisions"]["agent_wall"] == 0, m
assert m["progress"]["min"] > 0, m

# The command line of this environment (its own console script, not whichever
# `contextsteer` comes first on PATH), in a temporary directory.
scripts = sysconfig.get_path("scripts")
cli = shutil.which("contextsteer", path=scripts)
assert cli is not None, f"no contextsteer console script in {scripts}"
with tempfile.TemporaryDirectory() as tmp:
    version = subprocess.run(
        [cli, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert version == f"contextsteer {cs.__version__}", version
    subprocess.run(
        [
            cli,
            "run",
            "racetrack",
            "--agents",
            "4",
            "--steps",
            "60",
            "--frames",
            "3",
            "--size",
            "400",
            "--quiet",
            "--out",
            tmp,
        ],
        check=True,
    )
    out = Path(tmp)
    assert (out / "scene.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "animation.gif").read_bytes()[:3] == b"GIF"
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["steps"] == 60 and doc["schema_version"] >= 1
print("smoke test passed:", sys.executable)
