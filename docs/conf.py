# SPDX-License-Identifier: MIT
# Sphinx configuration of the contextsteer documentation (tools/build-docs builds it).
"""The site: the README tour, the architecture notes, the API reference generated from
the numpydoc docstrings, and the notebooks rendered with their outputs (myst-nb executes
them once and caches the results in docs/_build/.jupyter_cache)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
if list((ROOT / "python" / "contextsteer").glob("_core*")):
    sys.path.insert(0, str(ROOT / "python"))  # a tools/dev-build tree; else the installed one

import contextsteer  # noqa: E402

project = "contextsteer"
author = "the contextsteer developers"
copyright = "the contextsteer developers"
version = release = contextsteer.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

# The notebooks live in notebooks/ (executed by pytest through nbmake); copy them under
# the source tree so Sphinx sees them. Copies are refreshed only when changed, so the
# execution cache keeps hitting. With CONTEXTSTEER_NB_OUTPUTS=DIR (.ci/run: the copies
# pytest kept, see notebooks/conftest.py), a notebook whose executed copy in DIR has the
# same cells is rendered from that copy, outputs included, and not executed again.
_NB_SRC, _NB_DST = ROOT / "notebooks", DOCS / "notebooks"
_NB_DST.mkdir(exist_ok=True)
_NB_RAN = os.environ.get("CONTEXTSTEER_NB_OUTPUTS")


def _cells(path: Path) -> list[tuple[str, str]]:
    import nbformat

    return [(c.cell_type, c.source) for c in nbformat.read(str(path), 4).cells]


nb_execution_excludepatterns: list[str] = []
for _nb in sorted(_NB_SRC.glob("[0-9][0-9]_*.ipynb")):
    _dst = _NB_DST / _nb.name
    _ran = Path(_NB_RAN) / _nb.name if _NB_RAN else None
    if _ran is not None and _ran.is_file() and _cells(_ran) == _cells(_nb):
        _nb = _ran
        nb_execution_excludepatterns.append(f"notebooks/{_nb.name}")
    if not _dst.exists() or _dst.read_bytes() != _nb.read_bytes():
        shutil.copyfile(_nb, _dst)
for _old in _NB_DST.glob("*.ipynb"):
    if not (_NB_SRC / _old.name).exists():
        _old.unlink()

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "img"]

# myst-nb: execute each notebook once, keep the outputs in a cache keyed by its code.
nb_execution_mode = os.environ.get("CONTEXTSTEER_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
# Markdown the notebooks display (their result tables) is rendered with MyST: tables work.
nb_render_markdown_format = "myst"
# Widget views need a live kernel; the page shows their text fallback and the static
# figures the playground draws next to them.
suppress_warnings = ["mystnb.unknown_mime_type"]

# API reference: autosummary pages from the numpydoc docstrings.
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

html_theme = "furo"
html_title = f"contextsteer {release}"
html_static_path: list[str] = []
html_extra_path: list[str] = []
