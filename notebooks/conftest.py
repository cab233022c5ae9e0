"""Notebook runs (nbmake): kernels start in notebooks/, so make PYTHONPATH absolute.

With a development tree (``PYTHONPATH=python pytest`` from the repository root) a relative
entry would point at notebooks/python inside the kernel and the notebooks would import
nothing, or another installed contextsteer. After ``pip install -e .`` this is a no-op.
"""

import os

_entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
if _entries:
    os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(e) for e in _entries)

# CONTEXTSTEER_NB_OUTPUTS=DIR (.ci/run sets it): keep a copy of every notebook that ran
# without error, with its outputs, in DIR. The docs build (docs/conf.py) then renders those
# copies instead of executing the notebooks a second time. It wraps nbmake's runner; if a
# future nbmake has no NotebookRun.execute, nothing is kept and the docs build executes
# the notebooks itself.
_outputs = os.environ.get("CONTEXTSTEER_NB_OUTPUTS")
if _outputs:
    from pathlib import Path

    import nbformat
    from nbmake import nb_run

    _execute = getattr(nb_run.NotebookRun, "execute", None)

    if _execute is not None:

        def _execute_and_keep(self):
            result = _execute(self)
            if result.error is None:
                Path(_outputs).mkdir(parents=True, exist_ok=True)
                nbformat.write(result.nb, str(Path(_outputs) / Path(self.filename).name))
            return result

        nb_run.NotebookRun.execute = _execute_and_keep
