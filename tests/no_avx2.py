"""A test module's outputs computed again in a fresh interpreter with AVX2 switched off.

The library picks its AVX2 kernels once per process (``CONTEXTSTEER_NO_AVX2=1`` keeps it
on the baseline ones), so the tests that pin the two paths bit for bit compute the same
cases in a subprocess and compare.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np


def without_avx2(tmp_path, module: str, call: str) -> np.ndarray:
    """``module.call`` (an expression such as ``"_isa_case_outputs()"``) evaluated in a
    fresh interpreter with ``CONTEXTSTEER_NO_AVX2=1``; its array, loaded back."""
    here = os.path.dirname(__file__)
    out = str(tmp_path / f"{module}_no_avx2.npy")
    code = (
        f"import sys, numpy as np; sys.path.insert(0, {here!r}); "
        f"import {module} as t; np.save({out!r}, t.{call})"
    )
    env = dict(os.environ, CONTEXTSTEER_NO_AVX2="1")
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return np.load(out)
