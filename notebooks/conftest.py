"""Notebook runs (nbmake): kernels start in notebooks/, so make PYTHONPATH absolute.

With a development tree (``PYTHONPATH=python pytest`` from the repository root) a relative
entry would point at notebooks/python inside the kernel and the notebooks would import
nothing, or another installed contextsteer. After ``pip install -e .`` this is a no-op.
"""

import os

_entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
if _entries:
    os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(e) for e in _entries)
