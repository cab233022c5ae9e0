"""The API describes itself truthfully: the typed user module runs, half-built objects
print, reprs stay short, deprecated spellings warn at the user's line and never win
silently, dir() lists the public names (fuzz round 24: an IDE and type-checker user)."""

import dataclasses
import inspect
import runpy
import traceback
import warnings
from pathlib import Path

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import classic, metrics

HERE = Path(__file__).parent


def test_the_typed_user_module_runs():
    """tests/typing/user_code.py passes mypy (CI's lint); here it must also work."""
    runpy.run_path(str(HERE / "typing" / "user_code.py"), run_name="__main__")


@pytest.mark.parametrize(
    "args, kwargs", [((-1,), {}), (("4",), {}), ((4,), {"slots": 2}), ((4,), {"seed": -1})]
)
def test_refused_agents_leave_no_half_built_object_behind(args, kwargs):
    """Agents checked its arguments in __init__, after the object existed: its C++ part was
    never built, and a repr of the ``self`` a traceback holds (pytest -l, a debugger)
    crashed the process. They are checked before the object exists."""
    with pytest.raises((TypeError, ValueError)) as info:
        cs.Agents(*args, **kwargs)
    for frame, _ in traceback.walk_tb(info.value.__traceback__):
        for value in frame.f_locals.values():
            assert not isinstance(value, cs.Agents)
    with pytest.raises(TypeError, match="capacity"):
        cs.Agents.__new__(cs.Agents)


@pytest.mark.parametrize(
    "cls",
    [
        cs.Simulation,
        cs.World,
        cs.NavField,
        cs.Flow,
        cs.Detour,
        cs.Path,
        cs.Steering,
        cs.SlotSet,
        cs.History,
        cs.ContextMaps,
    ],
)
def test_the_repr_of_a_half_built_object_never_raises(cls):
    assert repr(cls.__new__(cls)) == f"<{cls.__name__} (not built)>"


def test_both_spellings_of_max_neighbours_with_different_values_are_refused():
    """The deprecated max_neighbors= won silently over max_neighbours=."""
    with pytest.raises(TypeError, match="max_neighbors=.*max_neighbours="):
        cs.Steering([cs.Seek()], max_neighbors=4, max_neighbours=8)
    agents = cs.Agents(2)
    agents.add([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(TypeError, match="evaluate"):
        cs.CollisionDanger().evaluate(agents, 8, max_neighbors=1, max_neighbours=2)
    with pytest.raises(TypeError, match="accelerations"):
        classic.accelerations(None, agents, classic.Separation(), max_neighbors=1, max_neighbours=2)
    with pytest.warns(DeprecationWarning):  # alone, or agreeing: taken, with the warning
        assert cs.Steering([cs.Seek()], max_neighbors=4).max_neighbours == 4
    with pytest.warns(DeprecationWarning):
        assert cs.Steering([cs.Seek()], max_neighbors=8, max_neighbours=8).max_neighbours == 8


def test_result_reprs_stay_short_however_many_agents():
    """A run's per-agent counters printed 9 million characters at 1M agents."""
    run = cs.run_scenario("hallway", steps=2)
    big = dataclasses.replace(
        run, counters={"laps": {"per_agent": list(range(10**6))}}, parameters={"x": "y" * 10**5}
    )
    assert len(repr(big)) < 2000
    assert repr(big).startswith("RunResult(scenario='hallway'")
    tune = cs.TuneResult(
        study=None, best_params={"a": 1}, best_value=0.5, trials=[{"n": 1}] * 10**5
    )
    assert len(repr(tune)) < 2000


def test_summarize_takes_a_simulation():
    sim = cs.scenarios.get("hallway").builder()
    sim.step(1 / 30, steps=3)
    got = metrics.summarize(sim, sim.agents.alive, sim.time)
    want = sim.metrics()
    assert {k: v for k, v in got.items() if k != "stuck"} == {
        k: v for k, v in want.items() if k != "stuck"
    }
    assert isinstance(metrics.agent_metrics(sim), metrics.AgentMetrics)
    with pytest.raises(TypeError, match="expected a contextsteer.Simulation, got int"):
        metrics.summarize(3, np.ones(1, bool), 0.0)


def test_the_deprecated_alias_warns_at_the_users_line():
    """It was attributed to contextsteer/__init__.py, which the default filters hide."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cs.Neighbors is cs.Neighbours
    assert [w.filename for w in caught] == [__file__]


def test_dir_lists_the_public_names_and_submodules():
    names = dir(cs)
    assert {"video", "rimea", "playground", "scenarios", "World", "__version__"} <= set(names)
    assert not {"Any", "annotations"} & set(names)
    assert set(cs.__all__) <= set(names)


def test_no_prose_is_read_as_a_parameter_of_the_api_reference():
    """Paragraphs inside numpydoc Parameters sections became parameters in the docs."""
    docscrape = pytest.importorskip("numpydoc.docscrape")
    for name in cs.__all__:
        obj = getattr(cs, name)
        if not callable(obj) or not obj.__doc__:
            continue
        for p in docscrape.NumpyDocString(obj.__doc__)["Parameters"]:
            assert all(t.strip().lstrip("*").isidentifier() for t in p.name.split(",")), (
                name,
                p.name[:60],
            )


def test_a_subclass_of_agents_keeps_its_own_constructor():
    """Agents checks its arguments in __new__; a subclass taking other arguments must still
    be constructible, and Agents.__init__ still checks what it is given."""

    class Coloured(cs.Agents):
        def __init__(self, n, colour):
            super().__init__(n, slots=8)
            self.colour = colour

    a = Coloured(5, "red")
    assert a.capacity == 5 and a.slots == 8 and a.colour == "red"
    with pytest.raises(ValueError, match="capacity must be >= 0"):
        Coloured(-1, "red")

    class Plain(cs.Agents):
        pass

    assert Plain(3, seed=2).capacity == 3
    with pytest.raises(ValueError, match="slots must be >= 3"):
        Plain(3, slots=2)


def test_every_scenario_builder_documents_its_parameters():
    """The builders had prose only: ``help(cs.scenarios.hallway)`` named no parameter."""
    docscrape = pytest.importorskip("numpydoc.docscrape")
    for name in cs.scenarios.available():
        builder = cs.scenarios.get(name).builder
        doc = docscrape.FunctionDoc(builder)
        documented = [p.name for p in doc["Parameters"]]
        assert documented == list(inspect.signature(builder).parameters), name
        assert all(p.desc for p in doc["Parameters"]), name
        assert [r.type for r in doc["Returns"]] == ["Simulation"], name
