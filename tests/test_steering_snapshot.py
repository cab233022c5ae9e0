"""A simulation keeps the steering it was built with (fuzz round 6).

The options of a ``Steering`` are plain attributes, so one Steering can be edited between
building two simulations. The first simulation ran its old options, but its pickles,
deep copies and saves were rebuilt from the edited object: they steered differently from
the original, and an invalid edit (``epsilon = -1``) made a saved file unloadable. The
oracle throughout is the original simulation itself: a copy must continue bit for bit.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import contextsteer as cs


def ring_agents(n=16):
    a = np.arange(n) * 2 * np.pi / n
    ring = 4.0 * np.c_[np.cos(a), np.sin(a)]
    agents = cs.Agents(n, slots=16)
    agents.add(ring, radius=0.3, max_speed=1.3, max_accel=6.0, target=-ring)
    return agents


def crowd(steering):
    slots = cs.scenarios.crowd_slots()
    return cs.Simulation(None, ring_agents(), steering, motion=cs.Accel(), slots=slots)


def continue_alike(sim, tmp_path):
    """Save, load, pickle and deep-copy ``sim``, step all of them, and compare."""
    path = tmp_path / "sim.cssim"
    sim.save(path)
    copies = [cs.load(path), pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim)]
    for s in [sim, *copies]:
        s.step(1 / 30, 40)
    for c in copies:
        assert c.agents.position.tobytes() == sim.agents.position.tobytes()


@pytest.mark.parametrize(
    "edit",
    [
        {"decision_phases": 1, "resolve": "subtract"},
        {"max_neighbours": 2},
        {"rotate": False},
        {"hysteresis": 0.5},
        {"behaviours": (cs.Seek(), cs.CollisionDanger())},
    ],
    ids=["phases+resolve", "max_neighbours", "rotate", "hysteresis", "behaviours"],
)
def test_a_steering_edited_after_building_leaves_the_simulation_and_its_copies(edit, tmp_path):
    st = cs.scenarios.crowd_steering(walls=False)
    st.record = True
    sim = crowd(st)
    sim.step(1 / 30, 30)
    names = sim.steering.names
    for name, value in edit.items():
        setattr(st, name, value)
    other = crowd(st)  # the edit is for the next simulation, and it takes it
    assert getattr(other.steering, next(iter(edit))) == next(iter(edit.values()))
    # The running one reports and records what it runs, and so do its copies.
    assert sim.steering.names == names and list(sim.behaviour_maps) == list(names)
    assert sim.steering.decision_phases == 16 and sim.steering.resolve == "mask_min_danger"
    continue_alike(sim, tmp_path)


def test_an_invalid_edit_after_building_does_not_reach_a_saved_file(tmp_path):
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [3, 0]], max_speed=1, target=[[5, 5], [0, 5]])
    st = cs.Steering([cs.Seek(), cs.AgentDanger(radius=2)])
    sim = cs.Simulation(None, agents, st)
    sim.step(0.1, 5)
    st.epsilon = -1
    sim.save(tmp_path / "run.cssim")
    again = cs.load(tmp_path / "run.cssim")  # raised "epsilon must be >= 0"
    assert again.steering.epsilon == 0.0
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        cs.Simulation(None, cs.Agents(2, slots=8), st)  # the edit itself is still checked


def test_a_list_of_behaviours_edited_after_building_leaves_the_simulation(tmp_path):
    rules = [cs.Seek(), cs.AgentDanger(radius=2)]
    agents = cs.Agents(3, slots=8)
    agents.add([[0, 0], [3, 0], [0, 3]], max_speed=1, target=[[5, 5], [0, 5], [4, 0]])
    sim = cs.Simulation(None, agents, rules)
    sim.step(0.1, 5)
    rules.append(cs.Forward())
    assert len(sim.steering.behaviours) == 2
    continue_alike(sim, tmp_path)


def test_the_simulations_steering_is_read_only_and_copies_to_an_editable_one():
    st = cs.scenarios.crowd_steering(walls=False)
    sim = crowd(st)
    assert sim.steering is not st and isinstance(sim.steering, cs.Steering)
    assert sim.steering.behaviours == st.behaviours  # the very behaviour objects
    with pytest.raises(AttributeError, match="read-only"):
        sim.steering.record = True
    with pytest.raises(AttributeError, match="read-only"):
        del sim.steering.rotate
    for mine in (copy.copy(sim.steering), pickle.loads(pickle.dumps(sim.steering))):
        mine.record = True  # a plain Steering again
        assert type(mine) is cs.Steering and not sim.steering.record
        assert crowd(mine).steering.record
    assert repr(sim.steering) == repr(st)


def test_a_spread_kernel_stays_the_callers_array_to_edit():
    kernel = np.float32([0.25, 1, 0.25])
    st = cs.Steering([cs.Seek()], spread=kernel)
    sim = crowd(st)
    kernel[0] = 0.5  # the caller's array stays writeable
    assert sim.steering.spread[0] == 0.25 and not sim.steering.spread.flags.writeable


@pytest.mark.parametrize(
    "make, edit",
    [
        (lambda: cs.classic.Priority([cs.classic.Seek()]), ("epsilon", -1.0)),
        (lambda: cs.classic.Priority([cs.classic.Seek()]), ("groups", ())),
        (lambda: cs.classic.Blended([cs.classic.Seek()]), ("items", (("x", 1.0),))),
    ],
)
def test_classic_groups_are_read_only(make, edit):
    """A Priority edited to no groups steered nothing, silently; items of a string gave an
    AttributeError deep in the build."""
    g = make()
    with pytest.raises(AttributeError, match="read-only"):
        setattr(g, *edit)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: cs.Arrive(target=[5, 0]), "target"),
        (lambda: cs.Tether(center=[1, 1]), "center"),
        (lambda: cs.Bounds(), "lo"),
        (lambda: cs.Bounds(), "hi"),
    ],
)
def test_a_behaviours_fixed_point_is_read_only_and_stays_so_when_copied(make, name):
    """The core copies these points when a simulation is built: an edit in place was
    ignored by the simulation and then taken up by its saves (a NaN made the file
    unloadable)."""
    b = make()
    for obj in (b, pickle.loads(pickle.dumps(b)), copy.deepcopy(b)):
        with pytest.raises(ValueError, match="read-only"):
            getattr(obj, name)[0] = 0.0


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_per_agent_indexes_are_copied_whatever_their_dtype(dtype):
    """FollowPath(index=) and FollowField(which=) kept an int32 array as the caller's
    memory: an edit re-routed agents where the same edit to an int64 array did nothing,
    and a resize left the core reading freed memory (fuzz round 9). Both are read-only
    copies now; the run with the edit is the run without it, bit for bit."""
    a_path, b_path = cs.Path([[0, 0], [100, 0]]), cs.Path([[0, 0], [0, 100]])
    world = cs.World()
    world.add_polyline([[-5, -5], [50, -5], [50, 50], [-5, 50]], closed=True)
    field = cs.NavField(world, [np.float32([[40.0, 0.0]]), np.float32([[0.0, 40.0]])])
    runs = []
    for edit in (False, True):
        idx = np.array([0, 1, 0, 1], dtype)
        for b in (cs.FollowPath([a_path, b_path], index=idx), cs.FollowField(field, which=idx)):
            agents = cs.Agents(4, slots=8)
            agents.add(np.float32([[1, 1]] * 4), max_speed=1.0)
            sim = cs.Simulation(world, agents, [b])
            sim.step(0.1)
            assert not np.shares_memory(b.__dict__.get("index", b.__dict__.get("which")), idx)
            if edit:
                idx[:] = [1, 0, 1, 0]
            sim.step(0.1, 20)
            runs.append(agents.position.tobytes())
    assert runs[:2] == runs[2:]
    with pytest.raises(ValueError, match="read-only"):
        cs.FollowPath([a_path, b_path], index=[0, 1]).index[0] = 1
    with pytest.raises(ValueError, match=r"must have shape \(capacity,\), got \(1, 3\)"):
        cs.FollowPath([a_path, b_path], index=[[0, 1, 1]])


def test_a_spread_kernel_edited_after_building_leaves_the_simulations_copies(tmp_path):
    """The snapshot kept the caller's spread array itself: an edit for the next simulation
    reached the first one's copies and saves (a deep copy steered differently)."""
    kernel = np.float32([0.0, 1.0, 0.0])
    sim = crowd(cs.Steering([cs.Seek(), cs.AgentDanger(radius=2)], spread=kernel))
    sim.step(1 / 30, 10)
    kernel[:] = 1.0
    assert sim._source_steering.spread.tolist() == [0.0, 1.0, 0.0]
    continue_alike(sim, tmp_path)


def test_a_hold_entered_twice_is_refused():
    """Entering one hold object again replaced its guard, and the inner exit released the
    simulation while the outer `with` was open."""
    sim = crowd(cs.Steering([cs.Seek()]))
    h = sim._core._hold()
    with h:
        with pytest.raises(RuntimeError, match="entered already"):
            h.__enter__()
        sim.step(0.1)  # still held, by this thread


def test_classic_attributes_cannot_be_deleted_either():
    seek = cs.classic.Seek()
    with pytest.raises(AttributeError, match="read-only"):
        del seek.target
    with pytest.raises(AttributeError, match="read-only"):
        del cs.classic.Priority([seek]).epsilon
