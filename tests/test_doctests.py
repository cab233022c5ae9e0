"""Runs the Examples sections of every public module's docstrings as doctests.

A docstring whose example calls ``pytest.importorskip`` for an optional extra (shapely)
is skipped from that line on when the extra is not installed, like a pytest test.
"""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import contextsteer

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(contextsteer.__path__, "contextsteer.")
    if not name.split(".")[-1].startswith("_")
)


class _Skip(Exception):
    pass


class _Runner(doctest.DocTestRunner):
    def report_unexpected_exception(self, out, test, example, exc_info):
        if issubclass(exc_info[0], pytest.skip.Exception):
            raise _Skip(f"{test.name}: {exc_info[1]}")
        super().report_unexpected_exception(out, test, example, exc_info)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = _Runner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    skipped = []
    with np.printoptions(precision=4, suppress=True, legacy=False):
        for test in doctest.DocTestFinder().find(module, name):
            try:
                runner.run(test, clear_globs=True)
            except _Skip as why:
                skipped.append(str(why))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
    if skipped and result.attempted == 0:
        pytest.skip("; ".join(skipped))
    if result.attempted == 0:  # say so rather than pass without checking anything
        pytest.skip(f"{name} has no docstring examples")
