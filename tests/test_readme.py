"""Every ```python block of README.md runs as written (each in a fresh namespace), and every
result its comments state is what the code gives (a doctest-like check).

The stated results are read from the trailing comment of a top-level statement:

- ``print(...)  # <output>``: the printed line. The comment starts with exactly what is
  printed; an explanation may follow after whitespace or ``;``
  (``print(x)  # [3.] [2]  (the cone)``). A ``print`` with a trailing comment always
  states its output, so an explanation of such a line goes on a comment line of its own.
- ``expr  # (2, 16) float32 ...`` or ``name = expr  # (2,) ...``: a shape written with
  integer literals is the value's ``np.shape``; a dtype right after it is its dtype.
  Symbolic shapes such as ``(N, K)`` are documentation only.
- ``expr  # 2 ...`` (a bare expression, not an assignment): the value equals the number.
"""

import ast
import contextlib
import io
import re
import tokenize
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)

SHAPE = re.compile(r"\((\d+(?:\s*,\s*\d+)*\s*,?)\)(?:\s+(float32|float64|int32|int64|bool))?")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?![\w.])")


def trailing_comments(code):
    """{line number: comment text} for the comments that end a line of code."""
    comments, code_lines = {}, set()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string[1:].strip()
        elif tok.type not in (
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            code_lines.add(tok.start[0])
    return {line: text for line, text in comments.items() if line in code_lines}


def is_print(node):
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "print"
    )


def check_printed(printed, stated, where):
    """The comment starts with the printed line, then ends or goes on with an explanation."""
    lines = printed.splitlines()
    assert len(lines) == 1, f"{where}: a stated print output must be one line, got {printed!r}"
    out = lines[0].rstrip()
    rest = stated[len(out) :]
    assert stated.startswith(out) and (rest == "" or rest[0] in " ;"), (
        f"{where}: README states {stated!r}, the code prints {out!r}"
    )


def check_value(value, stated, where):
    """A leading integer shape (and dtype), else a leading number (bare expressions only)."""
    m = SHAPE.match(stated)
    if m:
        shape = tuple(int(d) for d in m.group(1).replace(" ", "").rstrip(",").split(","))
        assert np.shape(value) == shape, (
            f"{where}: README states shape {shape}, got {np.shape(value)}"
        )
        if m.group(2):
            assert np.asarray(value).dtype == np.dtype(m.group(2)), (
                f"{where}: README states dtype {m.group(2)}, got {np.asarray(value).dtype}"
            )
        return
    number = NUMBER.match(stated).group()
    assert value == pytest.approx(float(number)), (
        f"{where}: README states {number}, the code gives {value!r}"
    )


def statements(code):
    """Each top-level statement of ``code`` with what its trailing comment states.

    Yields ``(node, kind, stated)``; kind is "print", "value" (a bare expression),
    "assigned" (``name = ...``) or None when nothing is stated.
    """
    comments = trailing_comments(code)
    for node in ast.parse(code).body:
        stated = comments.get(node.end_lineno)
        kind = None
        if stated and is_print(node):
            kind = "print"
        elif (
            stated and isinstance(node, ast.Expr) and (SHAPE.match(stated) or NUMBER.match(stated))
        ):
            kind = "value"
        elif (
            stated
            and SHAPE.match(stated)
            and isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            kind = "assigned"
        yield node, kind, stated


def run_block(code, name):
    """Run ``code`` statement by statement; check each stated result. Returns how many."""
    namespace = {"__name__": "__readme__"}
    checked = 0
    for node, kind, stated in statements(code):
        where = f"{name}, line {node.end_lineno}"
        if kind == "print":
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(ast.Module([node], []), name, "exec"), namespace)
            check_printed(buffer.getvalue(), stated, where)
        elif kind == "value":
            value = eval(compile(ast.Expression(node.value), name, "eval"), namespace)
            check_value(value, stated, where)
        else:
            exec(compile(ast.Module([node], []), name, "exec"), namespace)
            if kind == "assigned":
                check_value(namespace[node.targets[0].id], stated, where)
        checked += kind is not None
    return checked


def test_readme_has_examples():
    assert len(BLOCKS) >= 5


def test_readme_states_results_that_are_checked():
    # A silent parsing miss would let the block tests pass without checking anything.
    stated = sum(kind is not None for code in BLOCKS for _, kind, _ in statements(code))
    assert stated >= 10


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_and_states_its_results(index):
    code = BLOCKS[index]
    if "\n    ...\n" in code:  # a skeleton, e.g. `with cs.threads(2): ...`
        code = code.replace("\n    ...\n", "\n    pass\n")
    try:
        run_block(code, f"README.md block {index}")
    finally:
        plt.close("all")


def test_the_checker_catches_a_wrong_statement():
    ok = "import numpy as np\nx = np.zeros((2, 3), np.float32)  # (2, 3) float32\nx.shape[0]  # 2\n"
    assert run_block(ok + "print(x.sum())  # 0.0  (all zeros)\n", "ok") == 3
    for wrong in [
        "print(x.sum())  # 1.0\n",
        "print(x.sum())  # 0.01\n",
        "x  # (3, 2)\n",
        "x  # (2, 3) float64\n",
        "x.shape[1]  # 2 columns\n",
    ]:
        with pytest.raises(AssertionError, match="README states"):
            run_block(ok + wrong, "wrong")


def _crowd_table() -> list[tuple[str, int, float, int, int, float]]:
    """The rows of README's "The crowd cases at their defaults" table."""
    text = README.read_text()
    head = text.index("| scenario |", text.index("The crowd cases at their defaults"))
    table = text[head : text.index("\n\n", head)]
    rows = []
    for line in table.splitlines()[2:]:
        name, agents, arrived, collisions, composite = (
            c.strip() for c in line.strip("|").split("|")
        )
        agent_agent, agent_wall = (int(c) for c in collisions.split("/"))
        rows.append(
            (
                name.strip("`"),
                int(agents),
                float(arrived.rstrip(" %")) / 100,
                agent_agent,
                agent_wall,
                float(composite),
            )
        )
    return rows


def test_the_crowd_table_is_what_the_scenarios_give():
    """The table went stale (7 of 8 rows) as the crowd steering improved; re-measured here
    with the runner `contextsteer run NAME` uses."""
    import contextsteer as cs

    rows = _crowd_table()
    assert [r[0] for r in rows] == [
        "oncoming",
        "crossing",
        "corridor",
        "hallway",
        "bottleneck",
        "doorway",
        "circle",
        "flock",
    ]
    for name, agents, arrived, agent_agent, agent_wall, composite in rows:
        m = cs.run_scenario(name, seed=0).metrics
        got = (
            m["agents"],
            round(m["time_to_goal"]["fraction"], 2),
            m["collisions"]["agent_agent"],
            m["collisions"]["agent_wall"],
            round(m["composite"], 1),
        )
        assert got == (agents, arrived, agent_agent, agent_wall, composite), name


def test_the_api_reference_lists_every_exported_name():
    """docs/api.rst left out 28 of the names ``import contextsteer`` gives (the whole
    navigation API among them), so the docs site had no page for them."""
    import contextsteer as cs

    api = (README.parent / "docs" / "api.rst").read_text()
    listed = set(re.findall(r"^\s{3}([\w.]+)\s*$", api, re.M))
    missing = [n for n in cs.__all__ if n not in listed and not n.isupper()]
    assert not missing, f"docs/api.rst does not list {missing}"


def test_the_api_pages_mode_lists_are_the_library_s():
    """docs/api.rst lists each mode table by hand: DOT_SHAPES lacked 'chord' (a teaching
    session read four shapes; fuzz round 13). Each ``.. data::`` block that names modes
    names exactly the table's, in order."""
    import contextsteer as cs

    api = (README.parent / "docs" / "api.rst").read_text()
    tables = ["COMBINE_MODES", "STEERING_COMBINE_MODES", "RESOLVE_MODES", "CHOOSE_MODES"]
    for name in [*tables, "SPREAD_MODES", "DOT_SHAPES"]:
        block = api.split(f".. data:: {name}\n", 1)[1].split(".. data::", 1)[0]
        listed = tuple(re.findall(r"``(\w+)``", block.split(" (", 1)[0]))
        assert listed == tuple(getattr(cs, name)), (name, listed)
