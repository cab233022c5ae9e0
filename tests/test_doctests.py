"""Runs the Examples sections of every public module's docstrings as doctests."""

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


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    with np.printoptions(precision=4, suppress=True, legacy=False):
        result = doctest.testmod(
            module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
        )
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
