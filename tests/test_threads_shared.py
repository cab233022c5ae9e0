"""Objects shared between threads: navigation fields rebuilt while others read them, one
simulation stepped from two threads after a world edit, pickles taken while another thread
steps, arrays a call reads while another thread writes them. Each case once crashed
(segmentation fault, heap corruption) or gave a state or an answer that never existed."""

import pickle
import threading
import time

import numpy as np
import pytest

import contextsteer as cs


def _walled_world():
    world = cs.World()
    world.add_polyline([[-20, -20], [20, -20], [20, 20], [-20, 20]], closed=True)
    world.add_segments([[0, -20, 0, 10]])
    return world


def _field_sim(world, seed, n=600, cell=0.1):
    field = cs.NavField(world, [15.0, 0.0], cell=cell, radius=0.3)
    agents = cs.Agents(n, slots=16, seed=seed)
    rng = np.random.default_rng(seed)
    agents.add(
        np.column_stack([rng.uniform(-19, -1, n), rng.uniform(-19, 19, n)]),
        radius=0.2,
        max_speed=1.5,
        target=[15, 0],
    )
    steering = [cs.FollowField(field), cs.WallDanger(look_ahead=2)]
    return field, cs.Simulation(world, agents, steering, motion=cs.Lerp(steer_force=0.5))


def _rounds(world, r):
    # the world grows each round, so a rebuilt field's grid is larger (new buffers)
    world.add_segments([[21 + r, 0, 21 + r, 1 + 0.5 * r]])


def test_simulations_in_two_threads_sharing_a_navigation_field_match_a_sequential_run():
    # Each thread has its own Simulation, Agents and NavField over one World, as the
    # threading rules say; the two NavFields share one cached C++ field. After a world
    # edit both steps rebuilt that field in place at once, and one read it mid-rebuild:
    # a segmentation fault in 6 of 6 runs when the grid grew, wrong positions otherwise.
    # Rebuilds now make a new field (copy-on-write) and a step holds the one it started.
    seq_world, par_world = _walled_world(), _walled_world()
    (f1, s1), (_, s2) = _field_sim(par_world, 1, 2000, 0.05), _field_sim(par_world, 2, 2000, 0.05)
    assert f1._core is _field_sim(par_world, 3, 1, 0.05)[0]._core  # the shared cached field
    (_, q1), (_, q2) = _field_sim(seq_world, 1, 2000, 0.05), _field_sim(seq_world, 2, 2000, 0.05)
    for r in range(12):
        _rounds(par_world, r)
        _rounds(seq_world, r)
        barrier = threading.Barrier(2)

        def run(sim, barrier=barrier):
            barrier.wait()
            sim.step(0.05, steps=3)

        threads = [threading.Thread(target=run, args=(s,)) for s in (s1, s2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        q1.step(0.05, steps=3)
        q2.step(0.05, steps=3)
        np.testing.assert_array_equal(s1.agents.position, q1.agents.position)
        np.testing.assert_array_equal(s2.agents.position, q2.agents.position)


def test_one_simulation_stepped_from_two_threads_after_a_world_edit_refuses_the_second():
    # step() rebuilt the field before taking its thread guard, so both threads rebuilt
    # one field at once (a segmentation fault in 5 of 5 runs). The rebuild now runs under
    # the guard: the second thread gets the documented RuntimeError.
    world = _walled_world()
    _, sim = _field_sim(world, 1)
    busy = []
    for r in range(12):
        _rounds(world, r)
        barrier = threading.Barrier(2)

        def run(barrier=barrier):
            barrier.wait()
            try:
                sim.step(0.05, steps=2)
            except RuntimeError as e:
                busy.append(str(e))

        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert all("in use by another thread" in m for m in busy)
    assert np.isfinite(sim.agents.position).all()


def test_perceive_follows_the_field_rebuilt_after_a_world_edit():
    # perceive() did not rebuild the field: after a wall went up between the agent and its
    # goal, it steered straight into the wall while the field said to go round.
    def interest(split):
        w = cs.World()
        w.add_polyline([[-10, -10], [10, -10], [10, 10], [-10, 10]], closed=True)
        f = cs.NavField(w, [5.0, 0.0], cell=0.1)
        agents = cs.Agents(1, slots=16)
        agents.add([[-5.0, 0.0]], max_speed=1)
        sim = cs.Simulation(w, agents, [cs.FollowField(f)], motion=cs.Lerp(steer_force=1))
        w.add_segments([[0, -10, 0, 8]])  # a wall in the way, after the field was built
        if split:
            sim.perceive()
        else:
            sim.step(0.01)
        return np.array(sim.interest[0]), f.query([[-5.0, 0.0]]).direction[0]

    (perceived, way), (stepped, _) = interest(True), interest(False)
    np.testing.assert_array_equal(perceived, stepped)
    slots = cs.slot_directions(16)
    assert np.argmax(perceived) == np.argmax(slots @ way) != 0  # round the wall, not into it


@pytest.mark.parametrize("how", ["pickle", "agents"])
def test_pickles_taken_while_another_thread_steps_are_of_one_step(how):
    # The simulation's buffers were copied under its guard and its agents afterwards, so a
    # step could fall between: 31-54 copies a run had the step count of one step and the
    # positions of the next. Both are copied under one guard now; a copy that meets a
    # running step raises RuntimeError (and so may the step, which then retries).
    def build():
        world = cs.World()
        world.add_polyline([[-30, -30], [30, -30], [30, 30], [-30, 30]], closed=True)
        agents = cs.Agents(2000, slots=16, seed=3)
        rng = np.random.default_rng(0)
        agents.add(rng.uniform(-28, 28, (2000, 2)), radius=0.2, max_speed=1.5, target=[20, 0])
        steering = [cs.Seek(), cs.WallDanger(look_ahead=2), cs.Separation()]
        return cs.Simulation(world, agents, steering, motion=cs.Lerp(steer_force=0.5))

    steps = 40
    sim = build()
    reference = [sim.agents.position.copy()]
    for _ in range(steps):
        sim.step(0.05)
        reference.append(sim.agents.position.copy())
    sim = build()
    if how == "pickle":
        blobs = _in_turns(sim, steps, lambda: pickle.dumps(sim))
    else:  # the agents alone: a step count is not in them, so compare by step
        blobs = _in_turns(sim, steps, lambda: pickle.dumps((sim.agents, sim.step_count)))
    assert blobs
    for blob in blobs:
        got = pickle.loads(blob)
        if how == "pickle":
            np.testing.assert_array_equal(got.agents.position, reference[got.step_count])
        else:
            agents, _ = got
            # one step's positions (which step is not known: the count was read apart)
            assert any(np.array_equal(agents.position, ref) for ref in reference)


def _crowd(n=1500):
    world = cs.World()
    world.add_polyline([[-30, -30], [30, -30], [30, 30], [-30, 30]], closed=True)
    agents = cs.Agents(n, slots=16, seed=5)
    rng = np.random.default_rng(5)
    agents.add(rng.uniform(-28, 28, (n, 2)), radius=0.3, max_speed=1.5, target=[0, 0])
    steering = [cs.Seek(), cs.WallDanger(look_ahead=2), cs.Separation()]
    sim = cs.Simulation(world, agents, steering, motion=cs.Lerp(steer_force=0.5))
    sim.configure_metrics(goal_radius=2.0)
    return sim


def _in_turns(sim, steps, read):
    """Steps ``sim`` in one thread (retrying when a read holds it) while another thread
    calls ``read()`` until the steps are done; the reads' results, RuntimeErrors skipped."""
    got, done = [], threading.Event()

    def stepper():
        k = 0
        while k < steps:
            try:
                sim.step(0.05)
                k += 1
            except RuntimeError:
                pass
            time.sleep(0.001)
        done.set()

    def reader():
        while not done.is_set() and len(got) < 200:
            try:
                got.append(read())
            except RuntimeError:
                pass
            time.sleep(0.0003)

    threads = [threading.Thread(target=stepper), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def test_metrics_read_while_another_thread_steps_are_of_one_step():
    # metrics() read the accumulators while the step updated them: 104 of 439 reads were
    # of no step (steps=1 with the collisions of step 2). It copies them under the guard.
    steps = 30
    reference = [_crowd().metrics()]
    sim = _crowd()
    for _ in range(steps):
        sim.step(0.05)
        reference.append(sim.metrics())
    sim = _crowd()
    got = _in_turns(sim, steps, sim.metrics)
    assert got
    for m in got:
        assert m == reference[m["steps"]]


def test_history_tables_read_while_recording_are_whole():
    # Each column was read on its own while the step added frames: a table could mix
    # columns one frame apart (a NumPy broadcast error). One snapshot serves them all now.
    sim = _crowd(400)
    history = sim.record(every=1, reserve=1)  # grows while recording, too

    def read():
        cols = history._table()
        assert len({len(c) for c in cols.values()}) == 1
        frames = cols["frame"].max() + 1 if len(cols["frame"]) else 0
        copy = pickle.loads(pickle.dumps(history))
        return frames, len(copy), copy.positions.shape[0]

    got = _in_turns(sim, 60, read)
    assert got
    for _, n, rows in got:
        assert n == rows


def test_ray_inputs_in_other_buffers_are_copied_before_the_cast():
    # Only ndarrays were copied: an array.array or a memoryview reached the GIL-free cast
    # as the caller's memory, so another thread could write a NaN after the check.
    import array

    import contextsteer.world as world_mod

    dirs = array.array("f", [1.0, 0.0])
    view = memoryview(np.ones(1, np.float32))
    for given in (dirs, view, np.zeros((1, 2), np.float32)):
        a = np.ascontiguousarray(given, dtype=np.float32)
        assert not np.may_share_memory(world_mod._private(a, given), a)


def test_a_flow_fields_arrays_are_read_only():
    # The field and origin were writable: NaN written into them after the checks reached a
    # running simulation, and its pickle then failed to load.
    field = np.ones((4, 4, 2), np.float32)
    follow = cs.classic.FollowFlowField(field)
    with pytest.raises(ValueError, match="read-only"):
        follow.field[...] = np.nan
    with pytest.raises(ValueError, match="read-only"):
        follow.origin[0] = np.nan


_RACE = """
import threading
import numpy as np
import contextsteer as cs
n = 1_000_000
pos = np.random.default_rng(0).uniform(-100, 100, (n, 2)).astype(np.float32)
alive = np.zeros(n, bool)
stop = False
def flip():
    while not stop:
        alive[:] = True
        alive[:] = False
threading.Thread(target=flip, daemon=True).start()
for _ in range(200):
    idx, cnt = cs.neighbours(pos, 0.5, 4, alive=alive)
    assert ((idx >= -1) & (idx < n)).all() and ((cnt >= 0) & (cnt <= 4)).all()
stop = True
print("ok")
"""


def test_an_alive_mask_rewritten_by_another_thread_does_not_corrupt_memory():
    # The neighbour grid read the caller's alive mask once to size its buffers and again
    # to fill them: rows that came alive in between were written past the end, and every
    # run of this script died ("malloc(): corrupted top size", or a segfault) within a few
    # seconds. The answer of a call racing such a writer is not defined; it must stay a
    # valid answer. (In a subprocess, so that a crash fails this test, not the session.)
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


_RACE_CHECK = """
import threading
import numpy as np
import contextsteer as cs
n = 400_000
good = np.random.default_rng(0).uniform(-50, 50, (n, 2)).astype(np.float32)
bad = good.copy()
bad[-1, 1] = np.nan
pts = good.copy()
w = cs.World()
w.add_circles([[0, 0]], [1.0])
stop = False
def writer():
    while not stop:
        pts[:] = bad  # a large copy releases the GIL
        pts[:] = good
threading.Thread(target=writer, daemon=True).start()
wrong = []
for _ in range(1500):
    try:
        cs.inside(w, pts)
    except ValueError as e:
        m = str(e)
        if f"at index ({n - 1}, 1)" not in m and "changed while being checked" not in m:
            wrong.append(m)
stop = True
print(len(wrong), wrong[:2])
"""


def test_a_value_fixed_while_being_checked_is_not_read_past_the_array():
    # The finite check located a bad value in a second pass; when another thread had
    # restored it by then, the pass ran to the end and read the element past the array:
    # "got 0 at index (0, 0)" for a NaN at (n - 1, 1) (2-5 times in 1,500 calls), and a
    # segfault when the array ended at an unmapped page. (In a subprocess: a fault must
    # fail this test, not the session.)
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", _RACE_CHECK], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("0 "), run.stdout


def test_sweep_and_route_inputs_rewritten_by_another_thread_never_reach_the_core():
    # sweep_circle and route checked their inputs, then read them again in place without
    # the GIL: a NaN another thread wrote in between came back in about half of the
    # outputs of every sweep that passed the check (and in the points of 3 routes of 12).
    # Their inputs are now copied when still the caller's, as raycast's are.
    world = cs.World()
    world.add_segments([[5, -50, 5, 50], [-5, -50, -5, 50]])
    n = 100_000
    good = np.random.default_rng(0).uniform(-4, 4, (n, 2)).astype(np.float32)
    start = good.copy()
    disp = np.full((n, 2), 0.5, np.float32)
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            start[:] = np.nan  # large copies release the GIL
            start[:] = good

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    passed = tries = 0
    try:
        # Until some calls have passed the check (under load, 300 tries could all meet
        # the writer's NaN and test nothing, failing the count below).
        while (tries < 300 or passed < 5) and tries < 5000:
            tries += 1
            try:
                out = cs.sweep_circle(world, start, disp, 0.2)
            except ValueError:
                continue
            passed += 1
            assert np.isfinite(out[0] if isinstance(out, tuple) else out).all()
        for _ in range(100):
            try:
                points, offsets = cs.route(world, start[:50], [[0.0, 40.0]], packed=True)
            except ValueError:
                continue
            assert np.isfinite(points).all()
    finally:
        stop.set()
        t.join()
    assert passed > 0


def test_record_and_configure_metrics_refuse_agents_another_simulation_is_stepping():
    """Two simulations may share one Agents. While one stepped in another thread, the
    other's metrics(), perceive() and pickles were refused, but record() and
    configure_metrics() went ahead and read the agents mid-step: 2–8 torn first frames in
    every hundred records (fuzz round 7). They take the agents' guard too."""
    agents = cs.Agents(3000, slots=16, seed=3)
    agents.add(
        np.random.default_rng(1).uniform(-28, 28, (3000, 2)),
        radius=0.2,
        max_speed=1.5,
        target=[20, 0],
    )
    stepper = cs.Simulation(None, agents, [cs.Seek(), cs.Separation()], cs.Lerp(0.5))
    other = cs.Simulation(None, agents, [cs.Seek()], cs.Lerp())
    done = threading.Event()

    def run():
        try:
            stepper.step(0.05, 400)
        finally:
            done.set()

    t = threading.Thread(target=run)
    t.start()
    met = 0
    try:
        while not done.is_set() and met < 20:
            try:
                other.metrics()  # refused while the step holds the agents
                continue
            except RuntimeError:
                pass
            for call in (other.record, other.configure_metrics):
                try:
                    h = call()
                except RuntimeError as e:
                    assert "in use by another thread" in str(e)
                    met += 1
                else:  # went ahead: only right if the step ended just now
                    if h is not None:
                        h.detach()
                    assert done.is_set(), f"{call.__name__} ran while the agents were stepped"
    finally:
        t.join()
    assert met, "the threads never met: the workload is too small for this machine"


def test_a_held_simulation_refuses_other_threads_and_lets_its_own_calls_through():
    """A Flow's step is a sequence of calls (admissions, the step, the exits) that another
    thread's pickle could split: walkers counted in and never added (fuzz round 7). The
    sequence holds the simulation; the holding thread's calls pass, others are refused."""
    agents = cs.Agents(4, slots=8)
    agents.add([[0, 0], [3, 0]], max_speed=1, target=[[5, 5], [0, 5]])
    sim = cs.Simulation(None, agents, [cs.Seek()])
    held, release, errors = threading.Event(), threading.Event(), []

    def holder():
        with sim._core._hold():
            sim.step(0.1)  # its own calls pass, nested
            agents.add([[1, 1]])
            pickle.dumps(sim)
            held.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(30)
    for call in (lambda: pickle.dumps(sim), lambda: sim.step(0.1), lambda: agents.add([[2, 2]])):
        try:
            call()
        except RuntimeError as e:
            errors.append(str(e))
    release.set()
    t.join()
    assert len(errors) == 3 and all("in use by another thread" in e for e in errors)
    sim.step(0.1)  # free again once released
    assert sim.step_count == 2 and agents.count == 3


def test_a_hold_left_by_an_ended_thread_is_not_taken_by_a_later_one():
    """The guard knew its owner by std::thread::id, which a new thread may be given once the
    old one has ended: a hold entered and kept alive past its thread let such a thread in
    (on Linux the next thread usually had the ended one's id). Owners are now tokens no
    later thread is given, so every later thread is refused."""
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0]], max_speed=1, target=[[5, 5]])
    sim = cs.Simulation(None, agents, [cs.Seek()])
    kept = []

    def leave_held():
        hold = sim._core._hold()
        hold.__enter__()
        kept.append(hold)  # alive past its thread, never exited

    t = threading.Thread(target=leave_held)
    t.start()
    t.join()
    outcomes = []

    def try_step():
        try:
            sim.step(0.1)
            outcomes.append("stepped")
        except RuntimeError as e:
            outcomes.append(str(e))

    for _ in range(8):
        t = threading.Thread(target=try_step)
        t.start()
        t.join()
    assert len(outcomes) == 8 and all("in use by another thread" in o for o in outcomes)
    kept[0].__exit__(None, None, None)  # released (from any thread), the simulation is free
    assert sim.step_count == 0
    sim.step(0.1)
    assert sim.step_count == 1


def test_a_flow_pickled_from_another_thread_loses_no_walker():
    """The pickler's guard made the Flow's Agents.add raise after the flow had counted the
    walkers in: 2–18 walkers lost in 10 of 17 runs, reported as left otherwise."""
    code = """
        import pickle, threading, time
        import contextsteer as cs

        def run(pickler_on):
            sim = cs.scenarios.get("counterflow")(seed=1)
            done = threading.Event()
            def stepper():
                k = 0
                while k < 400:
                    try:
                        sim.step(1 / 30)
                        k += 1
                    except RuntimeError:
                        pass
                done.set()
            def pickler():
                while not done.is_set():
                    try:
                        pickle.dumps(sim)
                    except RuntimeError:
                        pass
                    time.sleep(0.001)
            ts = [threading.Thread(target=stepper)]
            if pickler_on:
                ts.append(threading.Thread(target=pickler))
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            r = sim.flow.report()
            return r["entered"], r["out"], r["inside"], r["left_otherwise"], sim.agents.count

        alone = run(False)
        assert alone[3] == 0
        for _ in range(4):
            got = run(True)
            assert got == alone, (got, alone)
        print("ok")
    """
    import subprocess
    import sys
    import textwrap

    # (In a subprocess: a stepper starved by the pickler must fail this test by its
    # timeout, not hang the session.)
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]


def test_agents_add_while_another_thread_rewrites_the_alive_mask_stays_in_bounds():
    """Agents.add counted the free slots, then scanned for each one without a bound: when
    another thread filled the alive view in between, the scan ran past the arrays and
    wrote there (segfault in 6 of 6 runs, fuzz round 8). Each flag is read once now, and
    too few free slots raise the capacity error."""
    code = """
        import threading
        import numpy as np, contextsteer as cs
        cap, k = 1_000_000, 1000
        agents = cs.Agents(cap)
        some = np.zeros(cap, bool); some[: cap - k] = True  # k free slots at the end
        full = np.ones(cap, bool)
        agents.alive = some
        stop = False
        def flip():  # a large NumPy copy releases the GIL
            while not stop:
                agents.alive[...] = full
                agents.alive[...] = some
        t = threading.Thread(target=flip, daemon=True)
        t.start()
        pos = np.zeros((k, 2), np.float32)
        added = refused = 0
        for _ in range(1500):
            try:
                ids = agents.add(pos)
            except ValueError as e:
                assert "capacity exceeded" in str(e), e
                refused += 1
                continue
            added += 1
            assert ids.min() >= 0 and ids.max() < cap and len(set(ids.tolist())) == k
        stop = True
        t.join()
        print("ok", added, refused)
    """
    import subprocess
    import sys
    import textwrap

    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stderr[-2000:])


def test_goals_set_while_another_thread_rebuilds_the_field_for_a_world_edit_stand():
    """A rebuild for a world edit that began while set_goals built took the old goals
    with the new version, finished last, and put the old goals back: 55–58 of 60 calls
    undone (fuzz round 8). It builds for the newest goals asked for now."""
    world = cs.World()
    world.add_polyline([[0, 0], [60, 0], [60, 60], [0, 60]], closed=True)
    field = cs.NavField(world, [30.0, 30.0], cell=0.2)
    stop = threading.Event()

    def editor():
        r = np.random.default_rng(3)
        while not stop.is_set():
            x, y = r.uniform(2, 55, 2)
            world.add_segments([[x, y, x + 1, y + 1]])
            time.sleep(0.001)

    def querier():
        while not stop.is_set():
            field.query([[1.0, 1.0]])

    threads = [threading.Thread(target=f) for f in (editor, querier)]
    for t in threads:
        t.start()
    lost = []
    try:
        r = np.random.default_rng(5)
        for _ in range(15):
            goal = np.float32(r.uniform(5, 55, 2))
            field.set_goals(goal)
            time.sleep(0.05)
            now = field.goals[0]["points"][0]
            if not np.array_equal(now, goal):
                lost.append((goal.tolist(), now.tolist()))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not lost
    field.query([[1.0, 1.0]])  # synced with the last edit, for the last goals
    assert field.distance(field.goals[0]["points"][0]) < 0.2  # (a cell: interpolated)


def test_a_pickle_is_of_one_step_of_the_simulation_and_its_flow():
    """The simulation's state was copied under its guard, the Flow pickled later: a Flow
    step in another thread in between gave a copy whose flow was ahead of its agents
    (walkers counted in and never added). The state and the flow's copy are taken under
    one hold now. The other thread's steps are forced into the window."""
    import io

    agents = cs.Agents(capacity=200)
    w = cs.World()
    w.add_segments([[100, 100, 101, 100]])
    sim = cs.Simulation(w, agents, [cs.Seek()])
    sim.flow = cs.Flow([cs.flow.Source([0, 0, 10, 10], 40.0, [30, 5], [28, 0, 32, 10])], period=0.1)
    sim.step(0.1, steps=3)

    class SlowPickler(pickle.Pickler):
        def reducer_override(self, obj):
            if obj is w:  # after the simulation's state was taken
                t = threading.Thread(target=lambda: sim.step(0.1, steps=2))
                t.start()
                t.join()
            return NotImplemented

    buf = io.BytesIO()
    SlowPickler(buf, protocol=5).dump(sim)
    copy_ = pickle.loads(buf.getvalue())
    f = copy_.flow
    assert f._ran_until == pytest.approx(copy_.time)
    assert int((f._source >= 0).sum()) == int(copy_.agents.alive.sum())
    copy_.step(0.1)
    f = copy_.flow
    inside = sum(s.entered - s.out for s in f._streams)
    assert inside == int((f._source >= 0).sum()) == int(copy_.agents.alive.sum())
