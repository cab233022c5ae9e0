"""Behaviour parameters declared once (C++ BehaviourSpec tables): the Python classes, the
bindings' checks and the classes generated for behaviours that only C++ declares."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contextsteer as cs
from contextsteer import _core
from contextsteer import behaviours as beh

SPECS = _core.behaviour_specs()
COMMON = {"weight", "agent_weights"}


def test_the_danger_behaviours_have_tables():
    assert {s["name"] for s in SPECS} >= {"AgentDanger", "WallDanger", "CollisionDanger"}
    assert {s["kind"] for s in SPECS} == set(beh._SPECS)


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_every_table_has_a_class_with_its_parameters_and_defaults(spec):
    cls = getattr(cs, spec["name"])
    assert cls.kind == spec["kind"] and cls.writes == spec["writes"]
    fields = [f for f in dataclasses.fields(cls) if f.name not in COMMON]
    assert [f.name for f in fields] == [p["name"] for p in spec["params"]]
    for f, p in zip(fields, spec["params"]):
        want = p["default"]
        if isinstance(want, float):
            # The table holds float32 values; Python shows their shortest decimal.
            assert np.float32(f.default) == np.float32(want), f.name
        else:
            assert f.default == want, f.name
    b = cls()
    assert b._params() == {p["name"]: getattr(b, p["name"]) for p in spec["params"]}
    assert b.needs_neighbours == bool(_core.behaviour_needs_neighbours(b))


def test_needs_neighbours_is_asked_of_the_instance():
    # WallDanger needs neighbours only when its rays hit agents too.
    assert not cs.WallDanger().needs_neighbours
    assert cs.WallDanger(agents=True).needs_neighbours


class Raw:
    """A behaviour whose parameters skip Python's checks: what the bindings must catch."""

    def __init__(self, kind, **params):
        self.kind, self.params = kind, params

    def _config(self):
        return self.kind, {"weight": 1.0, "agent_weights": None} | self.params


def _valid(kind):
    spec = next(s for s in SPECS if s["kind"] == kind)
    return {p["name"]: p["default"] for p in spec["params"]}


@pytest.mark.parametrize(
    "kind, name, value, words",
    [
        ("collision_danger", "speeds", 0, "speeds must be in [1, 64], got 0"),
        ("collision_danger", "speeds", 65, "speeds must be in [1, 64], got 65"),
        ("collision_danger", "reciprocity", 1.0, "reciprocity must be a finite number in [0, 1)"),
        ("collision_danger", "commit", -0.5, "commit must be a finite number in [0, 1)"),
        ("collision_danger", "horizon", 0.0, "horizon must be a finite number > 0"),
        ("collision_danger", "horizon", math.nan, "horizon must be a finite number > 0"),
        (
            "collision_danger",
            "margin",
            math.inf,
            "margin must be a finite number in [0, 1e+08]",
        ),
        ("collision_danger", "side", "up", "side must be 'right', 'left' or 'none', got 'up'"),
        ("collision_danger", "layers", -1, "layers must be in [0, 2**32), got -1"),
        ("wall_danger", "falloff", "soft", "falloff must be 'binary', 'linear' or 'quadratic'"),
        ("wall_danger", "spread", -1, "spread must be in [0, 4294967295], got -1"),
        ("agent_danger", "groups", "mine", "groups must be 'all', 'same' or 'other'"),
        ("agent_danger", "radius", 1e30, "below 2^60"),
    ],
)
def test_the_bindings_check_parameters_from_the_table(kind, name, value, words):
    agents = cs.Agents(1)
    agents.add([0, 0])
    raw = Raw(kind, **{**_valid(kind), name: value})
    with pytest.raises(ValueError) as e:
        _core.evaluate_behaviour(agents, raw, np.float32([[1, 0], [0, 1]]), False, 0.0, 8, None)
    assert words in str(e.value)


def test_an_optional_parameter_given_as_none_takes_its_stand_in():
    # CollisionDanger's wall_horizon None means "the horizon": same maps as giving it.
    world = cs.World()
    world.add_segments([[2.0, -3.0, 2.0, 3.0]])
    agents = cs.Agents(1)
    agents.add([0, 0], radius=0.3, max_speed=1.5)
    a = cs.CollisionDanger(horizon=1.5).evaluate(agents, 8, world=world)
    b = cs.CollisionDanger(horizon=1.5, wall_horizon=1.5).evaluate(agents, 8, world=world)
    c = cs.CollisionDanger(horizon=1.5, wall_horizon=3.0).evaluate(agents, 8, world=world)
    np.testing.assert_array_equal(a.speed, b.speed)
    assert not np.array_equal(a.speed, c.speed)


def test_a_class_generated_from_a_table_behaves_as_the_written_one():
    # What a behaviour declared only in C++ gets: here CollisionDanger's own table under
    # another class name, against the hand-written class.
    spec = {**next(s for s in SPECS if s["kind"] == "collision_danger"), "name": "Generated"}
    Generated = beh._behaviour_class(spec)
    assert issubclass(Generated, cs.Behaviour) and Generated.__module__ == beh.__name__
    assert "horizon : float, > 0, default 2.0" in Generated.__doc__
    assert "side : {'right', 'left', 'none'}, default 'right'" in Generated.__doc__
    rng = np.random.default_rng(4)
    agents = cs.Agents(12)
    agents.add(rng.uniform(-3, 3, (12, 2)), velocity=rng.uniform(-1, 1, (12, 2)), radius=0.3)
    kw = dict(horizon=1.5, speeds=3, margin=0.05, side="left", reciprocity=0.5)
    got = Generated(**kw).evaluate(agents, 16)
    want = cs.CollisionDanger(**kw).evaluate(agents, 16)
    assert type(got) is cs.CollisionMaps
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert Generated(**kw).needs_neighbours
    with pytest.raises(ValueError, match="Generated: speeds must be in"):
        Generated(speeds=0)
    with pytest.raises(TypeError, match="Generated: speeds must be an int"):
        Generated(speeds=2.5)


ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["right", "left", "none", "linear", "binary", "all", "same"]),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_parameter_values_give_maps_or_a_clear_error(data):
    # Whatever reaches the bindings (Python's checks skipped): maps, or a ValueError /
    # TypeError naming a parameter — never a crash, NaN maps or another exception.
    spec = data.draw(st.sampled_from(SPECS))
    params = _valid(spec["kind"])
    names = [p["name"] for p in spec["params"]] + ["weight"]
    for name in data.draw(st.lists(st.sampled_from(names), max_size=3)):
        params[name] = data.draw(ODD_VALUES)
    agents = cs.Agents(3)
    agents.add([[0, 0], [1.5, 0], [0, 2]], velocity=[[1, 0], [-1, 0], [0, 0]], radius=0.3)
    world = cs.World()
    world.add_segments([[3.0, -3.0, 3.0, 3.0]])
    try:
        maps = _core.evaluate_behaviour(
            agents, Raw(spec["kind"], **params), beh._slot_directions(8), False, 0.0, 8, world._core
        )
    except (ValueError, TypeError) as e:
        assert any(name in str(e) for name in names), str(e)
        return
    for m in maps:
        assert np.isfinite(m).all()


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_a_huge_value_is_told_the_parameters_own_range(spec):
    # WallDanger(padding=1e39) was told "below 2^60 (1.15e18)", padding=1e9 "in [0, 1e8]":
    # a parameter with a range of its own below 2^60 names that range (fuzz round 27).
    cls = getattr(cs, spec["name"])
    bounded = [
        p
        for p in spec["params"]
        if p["kind"] == "number" and math.isfinite(p["hi"]) and p["hi"] <= 2.0**60
    ]
    assert bounded or spec["name"] not in ("WallDanger", "CollisionDanger")
    for p in bounded:
        # (10**400 is past float64: it was told "below 2^60" while 10**300 was told the
        # range, fuzz round 28.)
        for v in (1e39, -1e39, 2e18, 10**400, -(10**400)):
            with pytest.raises(ValueError, match=rf"{p['name']} must be in [\[(]") as e:
                cls(**{p["name"]: v})
            assert "2^60" not in str(e.value)
    # Below a lower bound, however far: the bound (a horizon of -1e39 was told "below 2^60").
    for p in spec["params"]:
        if p["kind"] == "number" and math.isfinite(p["lo"]):
            for v in (-1e39, -(2**70), p["lo"] - 1e30, -(10**400)):
                with pytest.raises(ValueError, match=rf"{p['name']} must be ") as e:
                    cls(**{p["name"]: v})
                assert "2^60" not in str(e.value), (p["name"], v)
    # An int past float64 is still refused with a clear message, not an OverflowError.
    first = next(p for p in spec["params"] if p["kind"] == "number")
    with pytest.raises(ValueError, match=first["name"]):
        cls(**{first["name"]: 10**400})
    # A long int is shown by its leading digits, not its 301 digits.
    for v in (10**300, -(10**400)):
        with pytest.raises(ValueError) as e:
            cls(**{first["name"]: v})
        assert len(str(e.value)) < 200 and "e+" in str(e.value), str(e.value)[:300]


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_an_int_of_any_length_is_refused_by_name_in_a_short_message(spec):
    # str() of an int past 4300 digits raises: 10**5000 was refused with "Exceeds the
    # limit (4300 digits) for integer string conversion", naming no parameter, and flags,
    # choices and layers printed 10**400 in full (fuzz round 28).
    cls = getattr(cs, spec["name"])
    for p in spec["params"]:
        for v in (10**5000, -(10**5000), 10**400):
            with pytest.raises((TypeError, ValueError)) as e:
                cls(**{p["name"]: v})
            text = str(e.value)
            assert p["name"] in text and len(text) < 250, (p["name"], text[:300])
    # And the Python-declared weight, below its bound however far: the bound.
    with pytest.raises(ValueError, match=r"weight must be >= 0"):
        cls(weight=-(10**400))


def test_shown_keeps_four_digits_and_the_exponent():
    from contextsteer._checks import shown

    assert shown(10**300) == "1.000e+300"
    assert shown(-(10**5000)) == "-1.000e+5000"
    assert shown(123456789 * 10**20) == "1.234e+28"
    assert shown(10**20 - 1) == "99999999999999999999" and shown(10**20) == "1.000e+20"
    assert shown(12345) == "12345" and shown(1.5) == "1.5"
