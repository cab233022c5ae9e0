"""A simulation over its agents' lives and its users' threads, where a fuzz run found a
crash, an out-of-bounds write, NaN from a tiny dt, values written into views that the
step trusted, and a new agent inheriting the state of its slot's last occupant. Expected
values are worked by hand; the reused slot is compared with a never-used one."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import contextsteer as cs


def two_seekers(**kw):
    a = cs.Agents(2, slots=4)
    a.add([[0, 0], [5, 0]], max_speed=1.0, target=[[5, 5], [0, 5]])
    return a, cs.Simulation(None, a, [cs.Seek()], cs.Lerp(), **kw)


def test_histories_detached_while_another_thread_steps_do_not_crash():
    # The detach erased from the list the step was walking (a segmentation fault within
    # about a second); now it only marks the history, and the step drops it.
    a, sim = two_seekers()
    sim.configure_metrics(enabled=False)
    histories = [sim.record(every=2**40, reserve=1) for _ in range(5000)]
    errors, stop = [], threading.Event()

    def stepper():
        try:
            while not stop.is_set():
                sim.step(0.01, steps=20)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=stepper)
    t.start()
    time.sleep(0.02)
    for h in histories:
        h.detach()
    stop.set()
    t.join()
    assert not errors
    frames = [len(h) for h in histories]
    sim.step(0.01, steps=5)
    assert [len(h) for h in histories] == frames  # detached: no more frames


def test_the_chosen_slot_view_is_read_only():
    # The core indexes the maps with it: 2**31 - 1 written there was a segmentation fault.
    a = cs.Agents(2, slots=4)
    a.add([[0, 0], [5, 0]], max_speed=1.0, target=[[5, 5], [0, 5]])
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()], hysteresis=0.2), cs.Lerp())
    sim.step(0.1)
    with pytest.raises(ValueError, match="read-only"):
        sim.chosen_slot[0] = 2**31 - 1


def test_a_dt_or_time_to_target_too_small_for_float32_is_refused():
    a, sim = two_seekers()
    with pytest.raises(ValueError, match=r"\[1e-30, 1e6\]"):
        sim.step(1e-40)
    with pytest.raises(ValueError, match="time_to_target must be >= 1e-30"):
        cs.Accel(time_to_target=1e-40)
    with pytest.raises(ValueError, match="at least 1e-30"):
        cs.Accel().apply(a, [[1, 0], [1, 0]], [1.0, 1.0], dt=1e-38)


def test_a_tiny_time_to_target_is_capped_at_max_accel_not_zeroed():
    # (desired − v) / time_to_target is 1e25: its float32 square overflows, and the cap
    # used to scale it by max_accel / inf = 0.
    a = cs.Agents(1)
    a.add([0, 0], max_speed=1.0, max_accel=2.0)
    state = cs.Accel(time_to_target=1e-25).apply(a, [[1, 0]], [1.0], dt=0.1)
    np.testing.assert_allclose(state.velocity, [[0.2, 0.0]], rtol=1e-6)  # max_accel · dt


@pytest.mark.parametrize("name", ["interest", "danger"])
@pytest.mark.parametrize("value", [1e30, -3e38, 2.0**60, 1.2e18])
def test_maps_beyond_the_bound_written_between_the_stages_are_refused(name, value):
    # cs.steer, cs.choose and the other map calls refuse values of 2^60 and more, and the
    # README says anything outside the supported ranges raises; written between perceive()
    # and decide_and_move(), 1e30 was taken without a word.
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [5, 0]], max_speed=1.0, target=[[10, 10], [0, 10]])
    sim = cs.Simulation(None, a, [cs.Seek()], cs.Lerp())
    sim.perceive()
    getattr(sim, name)[1, 3] = value
    with pytest.raises(ValueError, match=rf"{name} must be finite, below 2\^60 .* at \(1, 3\)"):
        sim.decide_and_move(0.1)
    getattr(sim, name)[1, 3] = np.float32(2.0**60 - 2.0**36)  # the largest the maps hold
    sim.decide_and_move(0.1)


def test_non_finite_carried_decisions_and_blend_memory_are_refused_before_the_step():
    a = cs.Agents(1, slots=8)
    a.add([0, 0], max_speed=1.0, target=[10, 10])
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()], blend=0.5), cs.Lerp())
    sim.step(0.1)
    sim.interest[0, 2] = np.nan  # the blend reads it as memory
    with pytest.raises(ValueError, match="interest must be finite"):
        sim.step(0.1)

    a, sim = two_seekers(decision_interval=2)
    sim.step(0.1)
    before = a.position.copy()
    sim.chosen_direction[:] = [np.inf, 0.0]  # an agent not deciding moves on it
    with pytest.raises(ValueError, match="chosen_direction must be a finite unit vector"):
        sim.step(0.1)
    np.testing.assert_array_equal(a.position, before)  # refused before the state changed
    sim.chosen_direction[:] = 0.0
    sim.strength[0] = 2.0
    with pytest.raises(ValueError, match=r"strength must be in \[0, 1\]"):
        sim.step(0.1)


def test_a_new_agent_in_a_reused_slot_does_not_move_on_the_last_occupants_decision():
    a = cs.Agents(2, slots=8)
    a.add([0, 0], max_speed=1.0, target=[100, 0])  # slot 0 seeks east
    sim = cs.Simulation(None, a, [cs.Seek()], cs.Lerp(steer_force=1.0), decision_interval=10)
    sim.step(0.1, steps=25)
    a.remove([0])
    a.add([[0, 5], [0, -5]], max_speed=1.0, target=[[-100, 5], [-100, -5]])  # slots 0 and 1
    for _ in range(4):  # each decides at once, on its own target (west), then keeps it
        sim.step(0.1)
        np.testing.assert_allclose(a.velocity[:2], [[-1.0, 0.0], [-1.0, 0.0]], atol=1e-6)


def test_round_robin_agents_decide_at_their_first_step():
    """With decision_interval=4, three agents of four stood still until their turn came
    (an agent added with a velocity stopped dead), then went."""
    a = cs.Agents(4, slots=8)
    a.add([[0, 0], [0, 2], [0, 4], [0, 6]], velocity=[1, 0], max_speed=1.0)
    sim = cs.Simulation(None, a, [cs.Forward()], cs.Lerp(steer_force=1.0), decision_interval=4)
    sim.step(0.1)
    np.testing.assert_allclose(a.velocity, [[1, 0]] * 4, atol=1e-6)
    decided = []
    for _ in range(4):  # then each at its turn: one agent a step
        sim.step(0.1)
        decided.append(np.isclose(sim.perceived_position[:, 0], a.position[:, 0] - 0.1).sum())
    assert decided == [1, 1, 1, 1]


def test_a_new_agent_in_a_reused_slot_is_not_stuck_from_the_start():
    a = cs.Agents(1, slots=8)
    a.add([0, 0], max_speed=1.0, target=[0, 0])
    sim = cs.Simulation(None, a, [cs.Seek()], cs.Lerp(), stuck_distance=0.5, stuck_time=2.0)
    sim.step(0.1, steps=30)
    assert sim.stuck[0]
    a.remove([0])
    sim.step(0.1, steps=5)
    a.add([0.2, 0], max_speed=1.0, target=[0.2, 0])
    sim.step(0.1)
    assert not sim.stuck[0] and sim.still_time[0] == pytest.approx(0.1)
    # The removed agent's being stuck stays the run's; the new one is not stuck.
    assert sim.metrics()["stuck"] == {"now": 0, "ever": 1}
    assert not sim.agent_metrics.ever_stuck[0]


def test_a_new_agent_in_a_reused_slot_blends_no_memory_of_the_last_one():
    def first_velocity(reuse):
        a = cs.Agents(1, slots=8)
        if reuse:
            a.add([0, 0], max_speed=1.0, target=[100, 0])
        sim = cs.Simulation(None, a, cs.Steering([cs.Seek()], blend=0.1), cs.Lerp(steer_force=1.0))
        if reuse:
            sim.step(0.1, steps=20)
            a.remove([0])
        a.add([0, 0], max_speed=1.0, target=[-100, 0])  # seeks west
        sim.step(0.1)
        return a.velocity[0].copy()

    np.testing.assert_array_equal(first_velocity(True), first_velocity(False))
    np.testing.assert_allclose(first_velocity(False), [-1.0, 0.0], atol=1e-6)


@pytest.mark.parametrize("name", ["world", "agents", "steering", "motion"])
def test_the_objects_a_simulation_steps_cannot_be_reassigned(name):
    # Reassigning sim.world = None was accepted and ignored by step() (the core kept the
    # old world) while copies, histories and the checks used the new object: the original
    # stayed blocked by a wall its deepcopy walked through.
    a, sim = two_seekers()
    before = getattr(sim, name)
    with pytest.raises(AttributeError, match=f"Simulation.{name} is fixed at construction"):
        setattr(sim, name, None)
    assert getattr(sim, name) is before


def test_evaluate_checks_agent_weights_edited_since_they_were_given():
    # Simulation.step refused them; evaluate let NaN and -2 through into its maps.
    a = cs.Agents(2, slots=4)
    a.add([[0, 0], [5, 0]], target=[[5, 5], [0, 5]])
    w = np.ones(2, np.float32)
    seek = cs.Seek(agent_weights=w)
    w[1] = np.nan
    with pytest.raises(ValueError, match=r"agent_weights .* at index 1 \(edited since"):
        seek.evaluate(a, 4)
    w[1] = -2.0
    with pytest.raises(ValueError, match="agent_weights must be finite and >= 0"):
        seek.evaluate(a, 4)


def test_shared_targets_beyond_the_coordinate_range_are_refused():
    # A finite 3e38 written into a shared targets array zeroed the agent's interest
    # silently at the next step; 1e12 was accepted at construction (README: coordinates
    # within ±1e8, anything outside raises).
    with pytest.raises(ValueError, match="targets must be finite and at most 1e8"):
        cs.Seek(targets=[[1e12, 0.0]])
    t = np.float32([[5, 5], [0, 5]])
    a = cs.Agents(2, slots=4)
    a.add([[0, 0], [5, 0]])
    sim = cs.Simulation(None, a, [cs.Seek(targets=t)], cs.Lerp())
    sim.step(0.1)
    t[0] = [3e38, 0.0]
    with pytest.raises(ValueError, match=r"targets .* at index 0 \(edited since"):
        sim.step(0.1)
    with pytest.raises(ValueError, match="targets must be finite and at most 1e8"):
        cs.Seek(targets=t).evaluate(a, 4)


@pytest.mark.parametrize(
    "name, move",
    [
        ("agent_weights", lambda a: a.resize(10**6, refcheck=False)),  # a new buffer
        ("agent_weights", lambda a: setattr(a, "dtype", np.int32)),  # same bytes, read as int
        ("targets", lambda a: a.resize((10**5, 2), refcheck=False)),
        ("agent ids", lambda a: a.resize(10**6, refcheck=False)),
    ],
)
def test_a_lent_array_resized_or_retyped_is_refused(name, move):
    # The core keeps the data pointer of an array lent in place. Resized with
    # refcheck=False, NumPy freed the old buffer: the next step read freed memory and
    # wrote NaN into the interest maps with no error (the value check looked at the new
    # array, all zeros).
    a = cs.Agents(4, slots=8)
    a.add([[0, 0], [5, 0], [0, 5], [5, 5]], target=[[5, 5], [0, 5], [5, 0], [0, 0]])
    if name == "agent_weights":
        lent = np.ones(4, np.float32)
        behaviour = cs.Seek(agent_weights=lent)
    elif name == "targets":
        lent = np.float32([[5, 5], [0, 5]])
        behaviour = cs.Seek(targets=lent)
    else:
        lent = np.int32([1, 0, 3, 2])
        behaviour = cs.Pursue(targets=lent)
        name = "targets"
    kept = behaviour.agent_weights if name == "agent_weights" else behaviour.targets
    assert np.shares_memory(kept, lent)  # lent, not copied (Pursue keeps a view of it)
    sim = cs.Simulation(None, a, [behaviour], cs.Lerp())
    sim.step(0.1)
    move(lent)
    junk = [np.full(1000, np.nan, np.float32) for _ in range(200)]  # reuse the freed memory
    with pytest.raises(ValueError, match=f"{name} (.*)?was resized or reallocated since this"):
        sim.step(0.1)
    with pytest.raises(ValueError, match="was resized or reallocated"):
        sim.perceive()
    del junk
    assert np.isfinite(sim.interest).all()


def test_a_lent_array_seen_through_a_memoryview_is_refused_once_its_owner_is_resized():
    # np.frombuffer(memoryview(big)): the chain of bases stopped at the memoryview, so a
    # resize of big went unseen and the step read freed memory (fuzz round 15).
    a = cs.Agents(4, slots=8)
    a.add([[0, 0], [5, 0], [0, 5], [5, 5]], target=[[5, 5], [0, 5], [5, 0], [0, 0]])
    big = np.ones(4, np.float32)
    lent = np.frombuffer(memoryview(big), np.float32)
    sim = cs.Simulation(None, a, [cs.Seek(agent_weights=lent)], cs.Lerp())
    sim.step(0.1)
    big.resize(10**6, refcheck=False)
    with pytest.raises(ValueError, match="was resized or reallocated since this"):
        sim.step(0.1)


@pytest.mark.parametrize("bad", [np.nan, -5.0, np.inf, 1.5])
def test_an_edited_speed_map_is_checked_before_the_decision(bad):
    # decide_and_move read a NaN or negative speed as "stop" without a word.
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [5, 0]], radius=0.3, max_speed=1.3, target=[[5, 5], [0, 5]])
    sim = cs.Simulation(
        None, a, cs.scenarios.crowd_steering(walls=False, decision_phases=1), cs.Accel(), slots=8
    )
    sim.perceive()
    sim.speed[0, 0] = bad
    with pytest.raises(ValueError, match=r"speed must be in \[0, 1\].* at \(0, 0\)"):
        sim.decide_and_move(0.1)
    sim.speed[0, 0] = 0.5  # a valid edit is taken
    sim.decide_and_move(0.1)


@pytest.mark.parametrize("bad", [np.nan, -1e9, np.inf])
def test_an_edited_stuck_timer_is_checked_before_the_step(bad):
    # NaN in still_time never flagged the agent, -1e9 delayed the flag silently.
    a, sim = two_seekers(stuck_distance=0.1, stuck_time=1.0)
    sim.still_time[1] = bad
    with pytest.raises(ValueError, match="still_time must be finite and >= 0 seconds.*agent 1"):
        sim.step(0.1)


def _rss_mib() -> float:
    import ctypes
    import os

    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_a_detached_history_frees_its_frames_without_another_step():
    # Only the next step dropped detached histories from the simulation's list: 300
    # record/detach cycles of 200 agents held about 120 MB until then (for good if the
    # simulation was not stepped again).
    import gc

    a = cs.Agents(200, slots=16)
    a.add(np.random.default_rng(0).uniform(-50, 50, (200, 2)))
    sim = cs.Simulation(None, a, [cs.Forward()], cs.Lerp(0.5))
    h = sim.record(every=1)
    h.detach()
    del h
    gc.collect()
    before = _rss_mib()
    for _ in range(300):
        h = sim.record(every=1)
        h.detach()
        del h
    gc.collect()
    assert _rss_mib() - before < 40.0
    # A history that is still referenced keeps its frames after detach.
    kept = sim.record(every=1)
    sim.step(0.01)
    kept.detach()
    sim.step(0.01)
    assert len(kept) == 2


def test_a_simulation_of_capacity_zero_copies_and_loads():
    import copy
    import pickle

    a = cs.Agents(0)
    sim = cs.Simulation(None, a, [cs.Forward()], cs.Lerp())
    sim.step(0.1)
    for twin in (copy.deepcopy(sim), pickle.loads(pickle.dumps(sim))):
        twin.step(0.1)
        assert twin.step_count == 2


def test_pursue_agent_ids_are_not_checked_as_coordinates():
    # The lent-array check took Pursue's agent ids for points: an id of 1.5e8 (capacities
    # go to 2^31 - 1) was refused as "at most 1e8 in magnitude".
    a = cs.Agents(2, slots=4)
    a.add([[0, 0], [5, 0]])
    with pytest.raises(IndexError, match="Pursue: targets: agent id 150000000 out of range"):
        cs.Pursue(targets=[1, 150_000_000]).evaluate(a, 4)
    cs.Pursue(targets=[1, 0]).evaluate(a, 4)
    # A simulation names the behaviour too (the message named none).
    with pytest.raises(IndexError, match=r"Evade: targets: agent id 2 out of range \[0, 2\)"):
        cs.Simulation(None, a, [cs.Seek(), cs.Evade(targets=[2])])


@pytest.mark.parametrize("name", ["layers", "push_apart", "collision", "decision_interval"])
def test_assigning_a_construction_argument_is_refused(name):
    """sim.layers = 1 was taken as a plain attribute and changed nothing (an agent stayed
    blocked by a wall of the other layer), with no error."""
    sim = cs.Simulation(None, cs.Agents(2), [cs.Seek()])
    with pytest.raises(AttributeError, match=f"Simulation.{name} is fixed at construction"):
        setattr(sim, name, 1)
    sim.label = "mine"  # the caller's own attributes stay free
    assert sim.label == "mine"


def test_an_agent_stops_at_the_edge_of_the_accepted_coordinates():
    """max_speed 1e3 and dt 1e6 (each accepted) put an agent at x = 1e9, and every later
    step raised, so the simulation could not be used again. It now stops at the edge,
    ±1e8, and agents at the edge still move inwards (tests/test_fidelity_gdx.py)."""
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [0, 5]], radius=0.3, max_speed=1e3, max_accel=1e8, target=[[1e7, 0], [-1e7, 5]])
    a.velocity[:] = [[1e3, 0], [-1e3, 0]]
    sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel())
    sim.step(1e6)
    np.testing.assert_allclose(a.position, [[1e8, 0.0], [-1e8, 5.0]], atol=1e-6)
    sim.step(1.0, steps=3)  # still usable: back towards the targets, 1 km/s for 3 s
    np.testing.assert_allclose(a.position, [[1e8 - 3e3, 0.0], [-1e8 + 3e3, 5.0]], atol=1.0)
    assert sim.step_count == 4


def test_an_agent_added_between_perceive_and_decide_decides_at_its_next_step():
    """Added after perceive(), the agent has no maps of its own at decide_and_move(); it
    was marked as having decided and then waited for its turn (up to
    decision_interval - 1 steps) instead of deciding at the next step."""
    a = cs.Agents(2, slots=8)
    a.add([[0, 0]], max_speed=1.0, target=[[10, 0]])
    sim = cs.Simulation(None, a, [cs.Seek()], cs.Lerp(steer_force=1.0), decision_interval=4)
    sim.step(0.1)
    sim.perceive()
    a.add([[0, 5]], max_speed=1.0, target=[[10, 5]])
    sim.decide_and_move(0.1)
    assert (sim.step_count + 1) % 4 != 0  # the next step is not slot 1's turn
    sim.step(0.1)  # but it has not decided yet
    np.testing.assert_allclose(a.velocity[1], [1.0, 0.0], atol=1e-6)


def test_the_edge_of_the_coordinates_stops_the_velocity_out_of_them():
    a = cs.Agents(1, slots=8)
    a.add([[0, 0]], radius=0.3, max_speed=1e3, max_accel=1e8)
    a.velocity[0] = [1e3, 0]
    sim = cs.Simulation(None, a, [cs.Forward()], motion=cs.Lerp(steer_force=1.0))
    sim.step(1e6)
    assert a.position[0, 0] == 1e8 and a.velocity[0, 0] == 0.0


@pytest.mark.parametrize(
    "slicing", [{"decision_validity": 0.5}, {"decision_interval": 3}], ids=["validity", "interval"]
)
def test_a_removed_agents_maps_are_cleared_at_once_with_time_slicing(slicing):
    """Deciding every step, a removed agent's rows of every map are zero after the next
    step. With time slicing the agents not due kept their last decision's maps (stale
    interest, speed and recorded rows) until their turn came."""
    n = 30
    a = np.arange(n) * 2 * np.pi / n
    ring = 4.0 * np.c_[np.cos(a), np.sin(a)]
    st = cs.scenarios.crowd_steering(walls=False, decision_phases=1)
    st.record = True
    agents = cs.Agents(n, slots=16)
    agents.add(ring, radius=0.3, max_speed=1.3, max_accel=6.0, target=-ring)
    sim = cs.Simulation(None, agents, st, motion=cs.Accel(), **slicing)
    sim.step(1 / 30, 20)
    agents.remove(np.arange(0, n, 2))
    sim.step(1 / 30)
    gone = slice(0, n, 2)
    maps = [sim.interest, sim.danger, sim.resolved, sim.speed, *sim.behaviour_maps.values()]
    for m in maps:
        assert not m[gone].any()
    assert (sim.chosen_slot[gone] == -1).all() and not sim.strength[gone].any()
    assert sim.interest[1::2].any()  # the others still steer


def test_the_maps_of_no_agents_are_empty_arrays_not_none():
    """Recorded behaviour maps, the speed map and the sensed distances were None for a
    capacity of 0, where interest and danger were (0, K) arrays."""
    st = cs.scenarios.crowd_steering()
    st.record = True
    sim = cs.Simulation(cs.World(), cs.Agents(0, slots=16), st, motion=cs.Accel())
    sim.step(1 / 30)
    maps = {"speed": sim.speed, **sim.behaviour_maps}
    assert set(maps) == {"speed", "Arrive", "CollisionDanger"}
    for m in maps.values():
        assert m.shape == (0, 16) and m.dtype == np.float32
    sensed = cs.Simulation(cs.World(), cs.Agents(0), [cs.Seek(), cs.WallDanger()]).sensed
    assert sensed.shape == (0, 16)
    assert cs.Simulation(None, cs.Agents(0), [cs.Seek()]).speed is None  # no speed map at all


def test_a_step_asks_the_memory_bound_only_when_a_history_grows(monkeypatch):
    """Every step call read the memory bound (six /proc and cgroup files), 0.19 ms of a
    16-agent step at 0.22 ms, with no History at all (fuzz round 27). It is asked only
    when some History must grow in the call; the bound still holds then."""
    from contextsteer import maps

    calls = []
    real = maps._physical_memory

    def counting():
        calls.append(1)
        return real()

    monkeypatch.setattr(maps, "_physical_memory", counting)
    a = cs.Agents(4)
    a.add(np.zeros((4, 2)) + np.arange(4)[:, None], max_speed=1.0, target=[5.0, 5.0])
    sim = cs.Simulation(None, a, cs.Steering([cs.Seek()]))
    calls.clear()  # (building checks its own state's size once)
    for _ in range(20):
        sim.step(0.1)
    sim.perceive()
    sim.decide_and_move(0.1)
    assert calls == []
    hist = cs.History(sim)
    sim.step(0.1, steps=3)
    assert calls  # the History grew: the bound was asked
    monkeypatch.setattr(maps, "_physical_memory", lambda: 1000)
    with pytest.raises(MemoryError):
        sim.step(0.1, steps=100_000)
    assert len(hist) >= 3
