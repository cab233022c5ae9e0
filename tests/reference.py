"""Slow, obvious NumPy reference implementations: the oracle for the C++ kernels.

Written for clarity, never for speed, and never by calling contextsteer: each function
restates the rule from its source (the seeds in shared/seeds/) in plain loops or NumPy.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- maps ---


# -------------------------------------------------------------------------- world ---


# --------------------------------------------------------------------------- path ---
