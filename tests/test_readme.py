"""Every ```python block of README.md runs as written (each in a fresh namespace)."""

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, capsys):
    code = BLOCKS[index]
    if "\n    ...\n" in code:  # a skeleton, e.g. `with cs.threads(2): ...`
        code = code.replace("\n    ...\n", "\n    pass\n")
    exec(compile(code, f"README.md block {index}", "exec"), {"__name__": "__readme__"})
    plt.close("all")
