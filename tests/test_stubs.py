"""The hand-kept type stubs (_core.pyi) name exactly what the compiled module exports."""

import ast
from pathlib import Path

import contextsteer
from contextsteer import _core

STUB = Path(contextsteer.__file__).with_name("_core.pyi")


def _stub_names():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            members = set()
            if isinstance(node, ast.ClassDef):
                members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                members |= {
                    t.id
                    for n in node.body
                    if isinstance(n, ast.AnnAssign)
                    for t in [n.target]
                    if isinstance(t, ast.Name)
                }
            names[node.name] = members
    return names


def test_every_export_has_a_stub_and_every_stub_an_export():
    stubs = _stub_names()
    exported = {n for n in dir(_core) if not n.startswith("_")}
    assert sorted(exported - set(stubs)) == [], "exports without a stub"
    assert sorted(set(stubs) - exported) == [], "stubs without an export"


def test_class_stubs_name_real_members():
    for name, members in _stub_names().items():
        obj = getattr(_core, name)
        missing = sorted(m for m in members if not m.startswith("__") and not hasattr(obj, m))
        assert missing == [], f"{name}: stubbed members that do not exist: {missing}"


def test_every_member_of_a_compiled_class_has_a_stub():
    # The private members too: the Python layer calls them, and mypy checks those calls
    # against the stub.
    for name, members in _stub_names().items():
        obj = getattr(_core, name)
        if not isinstance(obj, type):
            continue
        real = {m for m in dir(obj) if not m.startswith("__") and m != "_pybind11_conduit_v1_"}
        assert sorted(real - members) == [], f"{name}: members without a stub"
