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


def test_every_behaviour_documents_every_parameter():
    """Twelve behaviours had no Parameters section (their ranges showed only in error
    messages), five left out ``weight`` and ``agent_weights``."""
    import dataclasses
    import re

    import contextsteer as cs

    missing = {}
    for name in cs.__all__:
        cls = getattr(cs, name)
        if not (isinstance(cls, type) and issubclass(cls, cs.Behaviour)) or cls is cs.Behaviour:
            continue
        doc = cls.__doc__ or ""
        if "Parameters" not in doc:
            missing[name] = "no Parameters section"
            continue
        section = doc.split("Parameters", 1)[1]
        section = re.split(r"\n\s*(?:Examples|Notes|Returns|Raises|See Also)\n\s*-+", section)[0]
        absent = [
            f.name for f in dataclasses.fields(cls) if not re.search(rf"\b{f.name}\b", section)
        ]
        if absent:
            missing[name] = absent
    assert not missing, missing
