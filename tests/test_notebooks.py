"""Notebooks are committed without outputs; nbmake executes them in the same pytest run."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "expected notebooks in notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stripped_and_numbered(path):
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), "name: NN_words.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"cell {i} has outputs"
            assert cell.get("execution_count") is None, f"cell {i} has an execution count"
        assert "attachments" not in cell, f"cell {i} has attachments"
    # nbmake starts the kernel named here; python3 is the one ipykernel provides.
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb["metadata"]


def test_executed_copies_are_kept_for_the_docs(tmp_path):
    """With CONTEXTSTEER_NB_OUTPUTS, notebooks/conftest.py keeps each notebook nbmake ran
    without error, outputs included, for the docs build (.ci/run); a failing one is not
    kept (the docs build would execute it and fail on its own)."""
    import nbformat

    root = Path(__file__).resolve().parent.parent
    work = tmp_path / "nbs"
    work.mkdir()
    shutil.copyfile(root / "notebooks" / "conftest.py", work / "conftest.py")
    for name, code in (("01_ok.ipynb", "print(6 * 7)"), ("02_bad.ipynb", "1 / 0")):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(code)]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        nbformat.write(nb, str(work / name))
    out = tmp_path / "ran"
    env = {**os.environ, "CONTEXTSTEER_NB_OUTPUTS": str(out)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbmake", str(work)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["01_ok.ipynb"]
    kept = nbformat.read(str(out / "01_ok.ipynb"), 4)
    assert kept.cells[0].outputs[0]["text"] == "42\n"
    # The sources stay stripped.
    assert nbformat.read(str(work / "01_ok.ipynb"), 4).cells[0].outputs == []
