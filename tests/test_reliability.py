"""Misuse and hostile input never crash, hang or silently corrupt (issue 13): each case
below once segfaulted, looped forever or returned garbage. Cases that could hang run in a
subprocess under a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import contextsteer as cs
from ctrl_c import sigint_during


def run_isolated(code: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a hang fails the test instead of the suite."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ------------------------------------------------------------ one object, two threads ---


def test_one_simulation_stepped_from_two_threads_raises_instead_of_corrupting():
    # In a subprocess: before the guard this crashed the interpreter (NeighborGrid::rebuild
    # run by two threads at once).
    code = """
        import threading
        rng = np.random.default_rng(0)
        a = cs.Agents(2000, slots=8)
        a.add(rng.uniform(-40, 40, (2000, 2)), radius=0.3, max_speed=1.3,
              target=rng.uniform(-40, 40, (2000, 2)))
        sim = cs.Simulation(None, a, cs.Steering([cs.Seek(), cs.AgentDanger(radius=1.0)]),
                            motion=cs.Accel())
        errors, reads, done = [], [], threading.Event()

        def stepper():
            try:
                sim.step(0.05, 300)
            except RuntimeError as e:
                errors.append(str(e))
            finally:
                done.set()

        t = threading.Thread(target=stepper)
        t.start()
        while not done.is_set():
            # (A history recorded here is detached at once: attached ones would all record
            # every step of the other thread's run.)
            for call in (lambda: sim.step(0.05), sim.perceive, lambda: sim.configure_metrics(),
                         lambda: sim.record(every=1).detach(), lambda: a.add([[0, 0]])):
                try:
                    call()
                except RuntimeError as e:
                    errors.append(str(e))
                except ValueError:      # Agents full: a.add got in between two steps
                    pass
            # time and step_count read what the step writes (a data race under
            # ThreadSanitizer): guarded too.
            for read in (lambda: sim.time, lambda: sim.step_count):
                try:
                    read()
                except RuntimeError as e:
                    reads.append(str(e))
        t.join()
        assert errors, "the threads never met: the workload is too small for this machine"
        assert reads and all("in use by another thread" in e for e in reads), reads[:3]
        assert all("in use by another thread" in e for e in errors), errors[:3]
        assert np.isfinite(a.position[a.alive]).all()
        sim.step(0.05)                  # still usable afterwards
    """
    r = run_isolated(PRELUDE + textwrap.dedent(code), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_two_simulations_sharing_one_world_run_concurrently():
    world = cs.World()
    world.add_polyline([[-50, -50], [50, -50], [50, 50], [-50, 50]], closed=True)
    sims = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        a = cs.Agents(500, slots=8, seed=seed)
        a.add(
            rng.uniform(-40, 40, (500, 2)),
            radius=0.3,
            max_speed=1.3,
            target=rng.uniform(-40, 40, (500, 2)),
        )
        sims.append(cs.Simulation(world, a, cs.scenarios.crowd_steering(), motion=cs.Accel()))
    threads = [threading.Thread(target=s.step, args=(0.05, 60)) for s in sims]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s.step_count == 60 for s in sims)


# ----------------------------------------------------------- hangs and overflows ---

HANGS = {
    "dt overflowing float32": """
        a = cs.Agents(10); a.add(np.random.default_rng(0).uniform(0, 5, (10, 2)))
        sim = cs.Simulation(None, a, [cs.Seek(), cs.AgentDanger()])
        expect(ValueError, "dt must be a number of seconds in [1e-30, 1e6], got 1e+300", sim.step, 1e300)
        expect(ValueError, "dt must be a number of seconds in [1e-30, 1e6], got 1e-300", sim.step, 1e-300)
    """,
    "radius written near float max": """
        a = cs.Agents(10); a.add(np.random.default_rng(0).uniform(0, 5, (10, 2)))
        sim = cs.Simulation(None, a, [cs.Seek(), cs.AgentDanger()])
        a.radius[:5] = 1e38
        expect(ValueError, "agents.radius must be finite and within", sim.step, 0.1)
    """,
    "world wider than float32": """
        w = cs.World()
        expect(ValueError, "segments: expected finite values within", w.add_segments,
               [[-3.4e38, -3.4e38, 3.4e38, 3.4e38]])
        expect(ValueError, "radii: expected finite values within", w.add_circles, [[0, 0]], [3e38])
        w.add_segments([[0, -1, 0, 1]])
        expect(ValueError, "origins: expected finite values within", cs.raycast, w,
               [[1e20, 1]], [[1, 0]], 10.0)
    """,
    "scalars that overflow float32": """
        expect(ValueError, "radius must be a finite number >= 0", cs.neighbours,
               np.zeros((3, 2), np.float32), radius=1e300, max_neighbours=2)
        expect(ValueError, "weight", cs.dot_map, cs.SlotSet(8), np.ones((2, 2)), weight=1e300)
        a = cs.Agents(2); a.add([[0, 0], [1, 0]])
        expect(ValueError, "dt", cs.Lerp().apply, a, np.ones((2, 2), np.float32),
               np.ones(2, np.float32), dt=1e300)
    """,
    "thread pool under a memory limit": """
        import resource
        ref = cs.combine([np.ones((20000, 16), np.float32)] * 3, mode="sum")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (used + 64 * 2**20, hard))
        cs.set_num_threads(32)          # 8 MiB stacks: most of these threads cannot start
        out = cs.combine([np.ones((20000, 16), np.float32)] * 3, mode="sum")
        assert np.array_equal(out, ref)
        assert 1 <= cs.get_num_threads() <= 32
    """,
}

PRELUDE = """
import os
import numpy as np
import contextsteer as cs

def expect(error, text, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except error as e:
        assert text in str(e), (text, str(e))
    else:
        raise AssertionError(f"{fn} did not raise {error.__name__}")
"""


@pytest.mark.parametrize("name", sorted(HANGS))
def test_case_neither_hangs_nor_crashes(name):
    r = run_isolated(PRELUDE + textwrap.dedent(HANGS[name]), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_slot_raycast_refuses_an_out_overlapping_its_inputs():
    w = cs.World()
    w.add_segments([[5, -5, 5, 5]])
    buf = np.zeros((4, 2), np.float32)
    positions = buf[:2]
    out = buf.reshape(2, 4)  # shares memory with positions
    with pytest.raises(ValueError, match="out must not overlap positions"):
        cs.slot_raycast(w, positions, cs.slot_directions(4), 10.0, out=out)


# ------------------------------------------------------------------- interruptible ---


def test_ctrl_c_stops_a_long_step_at_a_whole_step():
    code = """
        import threading, signal
        # A shell's background job starts with SIGINT ignored, and Python then installs no
        # handler: restore it, as in a program run in the foreground.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        a = cs.Agents(3000, slots=8)
        rng = np.random.default_rng(0)
        a.add(rng.uniform(-50, 50, (3000, 2)), target=rng.uniform(-50, 50, (3000, 2)))
        sim = cs.Simulation(None, a, [cs.Seek(), cs.AgentDanger()], motion=cs.Accel())
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            sim.step(0.05, 10**7)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("not interrupted")
        n = sim.step_count
        assert 0 < n < 10**7 and abs(sim.time - n * 0.05) < 1e-6 * n
        assert np.isfinite(a.position).all()
        sim.step(0.05)
        assert sim.step_count == n + 1
    """
    r = run_isolated(PRELUDE + textwrap.dedent(code), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


# ---------------------------------------------------------- clear errors, not garbage ---


@pytest.mark.parametrize(
    "make, error, text",
    [
        (
            lambda: cs.Simulation("x", cs.Agents(2), [cs.Seek()]),
            TypeError,
            "world must be a contextsteer.World or None, got str",
        ),
        (
            lambda: cs.Simulation(None, "agents", [cs.Seek()]),
            TypeError,
            "agents must be a contextsteer.Agents, got str",
        ),
        (
            lambda: cs.Simulation(None, cs.Agents(2), [cs.Seek()], decision_interval=2**62),
            ValueError,
            r"decision_interval must be in \[1, 2147483647\]",
        ),
        (lambda: cs.ContextMaps(2**61, 8), MemoryError, "needs about"),
        (lambda: cs.Agents(2).add([[0, 0]], group=2**40), ValueError, "group ids must fit int32"),
        (lambda: cs.Pursue(targets=[2**32 + 1]), ValueError, r"agent ids >= 0 and <= 2\*\*31 - 1"),
        (lambda: cs.scenarios.get("bottleneck")(agents=30000), ValueError, "start area holds 120"),
    ],
)
def test_misuse_gets_a_clear_error(make, error, text):
    with pytest.raises(error, match=text):
        make()


@pytest.mark.parametrize(
    "obj",
    [
        lambda: cs.World(),
        lambda: cs.ContextMaps(2, 8),
        lambda: cs.Simulation(None, cs.Agents(2), [cs.Seek()]),
    ],
)
def test_shallow_copies_that_would_share_cpp_state_are_refused(obj):
    import copy

    with pytest.raises(TypeError, match="copy.copy would share"):
        copy.copy(obj())


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--steps", "99999999999999999999999"],
        ["run", "--slots", "100000000"],
        ["run", "bottleneck", "--agents", "30000"],
    ],
)
def test_cli_refuses_impossible_sizes_with_usage_and_status_2(argv, capsys, tmp_path):
    from contextsteer.cli import main

    assert main([*argv, "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "error:" in err


def test_start_spreading_is_linear_not_quadratic():
    # 5,000 walkers: the old all-pairs relaxation needed ~1.6 GB; the grid one a few MB.
    import tracemalloc

    rng = np.random.default_rng(0)
    pts = np.c_[rng.uniform(0, 120, 5000), rng.uniform(0, 120, 5000)]
    tracemalloc.start()
    out = cs.scenarios._spread(pts, 0.8)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20
    d = np.linalg.norm(out[:200, None] - out[None, :200], axis=2) + np.eye(200) * 9
    assert d.min() > 0.79


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf])
def test_borrowed_arrays_edited_to_bad_values_are_caught_at_the_next_step(bad):
    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [3, 0], [0, 3]], target=[[5, 5]] * 3)
    caution = np.ones(3, np.float32)
    goals = np.float32([[9, 9]])
    sim = cs.Simulation(
        None, a, [cs.Seek(targets=goals), cs.AgentDanger(radius=1.0, agent_weights=caution)]
    )
    sim.step(0.1)
    caution[1] = bad  # used in place: the next step must notice
    with pytest.raises(ValueError, match="agent_weights must be finite and >= 0"):
        sim.step(0.1)
    caution[1] = 1.0
    goals[0, 0] = np.nan
    with pytest.raises(ValueError, match="targets must be finite"):
        sim.perceive()


def test_agents_wider_than_their_room_never_leave_it():
    """Bodies of radius 0.3-3 m in a 1 m box (inside every wall's reach from the start),
    seeking targets outside, pushing each other apart: no centre ever leaves the box."""
    world = cs.World()
    world.add_polyline([[0, 0], [1, 0], [1, 1], [0, 1]], closed=True)
    rng = np.random.default_rng(0)
    n = 60
    agents = cs.Agents(n, slots=8)
    agents.add(
        rng.uniform(0.1, 0.9, (n, 2)),
        radius=rng.uniform(0.3, 3.0, n),
        max_speed=5,
        target=rng.uniform(-5, 6, (n, 2)),
    )
    sim = cs.Simulation(
        world,
        agents,
        cs.Steering([cs.Seek(), cs.WallDanger(look_ahead=1.0)]),
        motion=cs.Lerp(steer_force=1.0),
    )
    for _ in range(100):
        sim.step(0.1)
        p = np.asarray(agents.position)
        assert ((p > 0) & (p < 1)).all(), p[~((p > 0) & (p < 1)).all(axis=1)]


def _ray_world():
    world = cs.World()
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 100, (2000, 2))
    world.add_segments(np.hstack([a, a + rng.normal(0, 2, (2000, 2))]))
    return world, rng


def test_long_ray_queries_are_sliced_without_changing_a_result():
    """raycast and slot_raycast run in slices of 2^18 rays (checking for Ctrl-C between
    them): a call spanning several slices equals the same rays cast in small calls."""
    world, rng = _ray_world()
    n, k = 40_000, 16  # 640k slot rays: 3 slices
    pos = rng.uniform(0, 100, (n, 2)).astype(np.float32)
    head = rng.uniform(-np.pi, np.pi, n).astype(np.float32)
    look = rng.uniform(0, 8, n).astype(np.float32)
    whole = cs.slot_raycast(world, pos, cs.SlotSet(k), look, headings=head)
    parts = np.concatenate(
        [
            cs.slot_raycast(
                world,
                pos[i : i + 1000],
                cs.SlotSet(k),
                look[i : i + 1000],
                headings=head[i : i + 1000],
            )
            for i in range(0, n, 1000)
        ]
    )
    np.testing.assert_array_equal(whole, parts)
    m = 600_000  # 3 slices of plain rays
    org = rng.uniform(0, 100, (m, 2)).astype(np.float32)
    dirs = rng.normal(0, 1, (m, 2)).astype(np.float32)
    hits = cs.raycast(world, org, dirs, np.float32(6.0))
    for i in (0, 262_143, 262_144, 599_999):
        one = cs.raycast(world, org[i : i + 1], dirs[i : i + 1], np.float32(6.0))
        assert one.distance[0] == hits.distance[i] or (
            np.isinf(one.distance[0]) and np.isinf(hits.distance[i])
        )


def test_ctrl_c_interrupts_a_long_slot_raycast():
    """A SIGINT arriving while one slot_raycast call works through millions of rays raises
    KeyboardInterrupt from inside that call, between two slices: when the Python handler
    runs, part of the output is still unwritten."""
    import time

    world, rng = _ray_world()
    k = 64
    small = rng.uniform(0, 100, (5000, 2)).astype(np.float32)
    t0 = time.perf_counter()
    cs.slot_raycast(world, small, cs.SlotSet(k), 6.0, headings=np.zeros(5000, np.float32))
    per_agent = (time.perf_counter() - t0) / 5000
    # A call of about 40x the interrupt's delay (at most 1.5 M agents, 384 MB of output).
    n = int(min(1_500_000, max(20_000, 4.0 / per_agent)))
    pos = rng.uniform(0, 100, (n, 2)).astype(np.float32)
    heads = rng.uniform(-np.pi, np.pi, n).astype(np.float32)
    out = np.full((n, k), np.nan, np.float32)
    seen: list[bool] = []
    sigint_during(
        lambda: cs.slot_raycast(world, pos, cs.SlotSet(k), 6.0, headings=heads, out=out),
        on_signal=lambda: seen.append(bool(np.isnan(out[-1]).all())),  # last slice unwritten
    )
    assert seen == [True]


def test_exiting_while_a_daemon_thread_is_inside_a_step_does_not_abort():
    """Python ends a daemon thread that asks for the GIL at exit with pthread_exit. From
    inside pybind11's GIL release (a noexcept destructor) that called std::terminate:
    "terminate called without an active exception", exit status 134, in 2 of 3 runs (fuzz
    round 7; pybind/pybind11#2215). The bindings take the GIL back where the unwind may
    pass."""
    code = """
        import threading, time
        import numpy as np, contextsteer as cs
        agents = cs.Agents(2000, slots=16)
        agents.add(np.random.default_rng(0).uniform(-28, 28, (2000, 2)), radius=0.2,
                   max_speed=1.5, target=[20, 0])
        sim = cs.Simulation(None, agents, [cs.Seek(), cs.Separation()], cs.Lerp(0.5))
        def stepper():
            while True:
                sim.step(0.05, steps=50)
        threading.Thread(target=stepper, daemon=True).start()
        time.sleep(%s)
        print("exiting", flush=True)
    """
    for pause in (0.2, 0.3, 0.5, 0.7):
        r = run_isolated(code % pause, timeout=120)
        assert r.returncode == 0 and "terminate called" not in r.stderr, (pause, r.stderr[-800:])
    # A NavField building in a daemon thread: its Ctrl-C poll asked for the GIL at exit
    # and the unwind from there aborted (5 of 5 runs). A check of Py_IsFinalizing before
    # the ask left a window (1 abort in 60 runs under load, one in a CI run); the poll no
    # longer takes the GIL off the main thread (0 in 200).
    nav = """
        import threading, time
        import numpy as np, contextsteer as cs
        rng = np.random.default_rng(0)
        w = cs.World(); w.add_circles(rng.uniform(0, 300, (3000, 2)), np.full(3000, 0.5))
        f = cs.NavField(w, [[1, 1]], cell=0.5, share=False)
        def run():
            i = 0
            while True:
                i += 1
                f.set_goals([[1 + i % 7, 1]])
        threading.Thread(target=run, daemon=True).start()
        time.sleep(PAUSE)
        print("exiting", flush=True)
    """
    for pause in (0.5, 1.0):
        r = run_isolated(nav.replace("PAUSE", str(pause)), timeout=120)
        assert r.returncode == 0 and "terminate called" not in r.stderr, (pause, r.stderr[-800:])


# A field whose rebuild takes about a second, and whether an alarm raising
# KeyboardInterrupt 50 ms into a rebuild stopped it inside: the field then keeps its old
# goal, where a rebuild run to its end (Ctrl-C heard only on the way back to Python) has
# the new one.
_REBUILD_STOPPED = textwrap.dedent("""
    import signal
    import numpy as np
    import contextsteer as cs
    rng = np.random.default_rng(0)
    w = cs.World(); w.add_circles(rng.uniform(0, 300, (3000, 2)), np.full(3000, 0.5))
    f = cs.NavField(w, [[1, 1]], cell=0.2, share=False)
    def interrupt(*_):
        raise KeyboardInterrupt
    def stopped_inside():
        signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        try:
            f.set_goals([[250, 250]])
        except KeyboardInterrupt:
            pass
        return bool(f.distance([[250, 250]])[0] > 10)
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_ctrl_c_interrupts_a_build_in_a_child_forked_from_another_thread():
    """Builds ask for Ctrl-C from the main thread only (where Python runs its signal
    handlers; a daemon thread asking at exit aborted). A child forked from another thread
    has that thread for its main thread: its builds must still hear Ctrl-C there. The
    alarm's handler raises KeyboardInterrupt 50 ms into a rebuild of about a second. A
    rebuild stopped inside keeps the field's old goal; one run to its end (Ctrl-C heard
    only on the way back to Python) has the new goal. The same in the parent's main
    thread is the control."""
    code = _REBUILD_STOPPED + textwrap.dedent("""
        import os, threading
        def fork_here():
            pid = os.fork()
            if pid == 0:
                os._exit(7 if stopped_inside() else 0)
            print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
        t = threading.Thread(target=fork_here)
        t.start()
        t.join()
        print("parent", stopped_inside(), flush=True)
    """)
    r = run_isolated(code, timeout=120)
    assert r.returncode == 0, r.stderr[-800:]
    assert "parent True" in r.stdout, (r.stdout, r.stderr[-800:])
    assert "child 7" in r.stdout, (r.stdout, r.stderr[-800:])


def test_ctrl_c_interrupts_a_build_when_threading_was_first_imported_from_a_worker():
    """On Python 3.11 threading.main_thread() is whichever thread imported threading
    first. A poll that trusted it asked for Ctrl-C from the wrong thread: the real main
    thread ran its builds to the end, and a daemon thread given the worker's old ident
    aborted at exit (fuzz round 28). Here site (whose .pth files import threading) and the
    library are imported from a _thread worker, with `python -S`; the rebuild in the main
    thread must stop inside, keeping the old goal."""
    code = (
        textwrap.dedent("""
        import sys, _thread, time
        done = []
        def worker():
            import site
            site.main()
            import contextsteer
            done.append(contextsteer)
        _thread.start_new_thread(worker, ())
        while not done:
            time.sleep(0.01)
        import threading
        print("worker is main", threading.main_thread().ident != _thread.get_ident())
    """)
        + _REBUILD_STOPPED
        + textwrap.dedent("""
        print("stopped inside", stopped_inside(), flush=True)
    """)
    )
    r = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-800:]
    assert "stopped inside True" in r.stdout, (r.stdout, r.stderr[-800:])


def test_ctrl_c_interrupts_a_long_spread():
    """spread's work is N·K·L: a ring of 4096 slots with a kernel as long takes about 10 ms
    a row, so thousands of rows took minutes with no way to stop them. A SIGINT raises
    KeyboardInterrupt from inside the call, between two slices of rows, and the slices
    already done equal a call on those rows alone."""
    import time

    k, length = 4095, 4095
    rng = np.random.default_rng(5)
    kernel = rng.uniform(0, 1, length).astype(np.float32)
    t0 = time.perf_counter()
    cs.spread(rng.uniform(0, 1, (16, k)).astype(np.float32), kernel)
    per_row = (time.perf_counter() - t0) / 16
    n = int(min(20_000, max(400, 4.0 / per_row)))  # about 40x the interrupt's delay
    values = rng.uniform(0, 1, (n, k)).astype(np.float32)
    out = np.full((n, k), np.nan, np.float32)
    seen: list[bool] = []
    sigint_during(
        lambda: cs.spread(values, kernel, out=out),
        on_signal=lambda: seen.append(bool(np.isnan(out[-1]).all())),  # last slice unwritten
    )
    assert seen == [True]
    done = int(np.argmax(np.isnan(out[:, 0])))
    assert done > 0
    np.testing.assert_array_equal(out[:done], cs.spread(values[:done], kernel))


def _geometry():
    """20,000 short walls over 2 km and a closed path of 50,000 points."""
    rng = np.random.default_rng(0)
    world = cs.World()
    p = rng.uniform(-1e3, 1e3, (20_000, 2))
    world.add_segments(np.c_[p, p + rng.uniform(-5, 5, (20_000, 2))])
    t = np.linspace(0, 2 * np.pi, 50_000)
    return world, cs.Path(np.c_[np.cos(t) * 100, np.sin(t) * 50], closed=True)


def _query(name, world, path, pts):
    """The outputs of query ``name`` at ``pts``, as a tuple of arrays."""
    if name == "sweep_circle":
        return tuple(cs.sweep_circle(world, pts, np.full_like(pts, 40.0), 0.3))
    if name == "nearest":
        return tuple(cs.nearest(world, pts, max_dist=50.0))
    return (path.closest_offset(pts),)


def _points(n):
    return np.random.default_rng(1).uniform(-1e3, 1e3, (n, 2)).astype(np.float32)


@pytest.mark.parametrize("name", ["sweep_circle", "nearest", "closest_offset"])
def test_ctrl_c_interrupts_long_geometry_queries(name):
    """sweep_circle, nearest and Path.closest_offset over millions of points ran whole
    before a Ctrl-C was seen (24 s, 14 s and 94 s; fuzz round 13): they now check between
    slices of points, so the KeyboardInterrupt comes from inside the call, long before it
    could have finished."""
    import time

    world, path = _geometry()
    _query(name, world, path, _points(20_000))
    t0 = time.perf_counter()
    _query(name, world, path, _points(20_000))
    per_point = (time.perf_counter() - t0) / 20_000
    n = int(min(30_000_000, max(200_000, 4.0 / per_point)))  # about 4 s whole
    whole = per_point * n
    pts = _points(n)
    start = time.perf_counter()
    handled = sigint_during(lambda: _query(name, world, path, pts))
    assert handled and handled[0] - start < 0.5 * whole, (handled, whole)


@pytest.mark.parametrize("name", ["sweep_circle", "nearest", "closest_offset"])
def test_sliced_geometry_queries_equal_their_points_in_two_calls(name):
    """Across the slice boundaries (every 2^14 or 2^16 points), each point's answer is
    the one it gets in another split: 70,000 points in one call equal them in two calls
    split off the boundaries, bit for bit."""
    world, path = _geometry()
    pts = _points(70_000)
    whole = _query(name, world, path, pts)
    first = _query(name, world, path, pts[:30_001])
    second = _query(name, world, path, pts[30_001:])
    for got, a, b in zip(whole, first, second, strict=True):
        np.testing.assert_array_equal(got, np.concatenate([a, b]))


def test_a_dt_whose_conversion_edits_a_lent_array_is_caught_in_that_step():
    """step converted dt after checking the arrays the behaviours lend the core: a dt
    whose __float__ wrote NaN into agent_weights put NaN into the step's maps, and the
    error came one step late (fuzz round 13). The arguments are converted first."""
    a = cs.Agents(4, slots=8)
    a.add([[0, 0], [3, 0]], max_speed=1.0, target=[[5, 5]])
    w = np.ones(4, np.float32)
    sim = cs.Simulation(None, a, [cs.Seek(agent_weights=w)], motion=cs.Lerp(steer_force=1))

    class Dt(float):
        def __float__(self):
            w[:] = np.nan
            return 0.1

    before = a.position.copy()
    with pytest.raises(ValueError, match="agent_weights"):
        sim.step(Dt(0.1))
    assert sim.step_count == 0 and np.array_equal(a.position, before)
    assert not np.isnan(sim.interest).any()


@pytest.mark.parametrize("name", ["nearest", "sweep_circle"])
def test_ctrl_c_interrupts_queries_whose_points_each_cost_much(name):
    """Slices were counted in points (2^16 for nearest): among 4,000 long walls through
    one place, which every grid cell there lists, a point costs about 0.1 ms, so one slice
    ran for seconds and 10 k points took 52 s to stop (fuzz round 14). The slices are now
    timed, so the KeyboardInterrupt comes long before the call could have finished."""
    import time

    w = cs.World()
    a = np.linspace(0, np.pi, 4000, endpoint=False)
    w.add_segments(
        np.c_[
            50 - 50 * np.cos(a), 50 - 50 * np.sin(a), 50 + 50 * np.cos(a), 50 + 50 * np.sin(a)
        ].astype(np.float32)
    )
    rng = np.random.default_rng(1)

    def query(pts):
        if name == "nearest":
            return cs.nearest(w, pts, 5.0)
        return cs.sweep_circle(w, pts, np.tile([[30.0, 1.0]], (len(pts), 1)), 0.1)

    probe = rng.uniform(45, 55, (2000 if name == "nearest" else 20, 2)).astype(np.float32)
    query(probe[:2])
    t0 = time.perf_counter()
    query(probe)
    per_point = (time.perf_counter() - t0) / len(probe)
    # About 4 s whole, within the first slice of the former counts (2^16 points for
    # nearest; 1,024 sweeps, a sweep here taking tens of ms, when the first slice was
    # capped at 1,024 items).
    n = int(min(60_000 if name == "nearest" else 1_000, 4.0 / per_point))
    whole = per_point * n
    pts = rng.uniform(45, 55, (n, 2)).astype(np.float32)
    start = time.perf_counter()
    handled = sigint_during(lambda: query(pts))
    assert handled and handled[0] - start < 0.5 * whole, (handled, whole)
