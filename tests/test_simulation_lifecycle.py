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
    for _ in range(4):  # neither has decided yet
        sim.step(0.1)
        assert a.velocity[0, 0] == a.velocity[1, 0] == 0.0


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
    assert sim.metrics()["stuck"] == {"now": 0, "ever": 0}


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
