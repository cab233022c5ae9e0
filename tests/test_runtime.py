"""Thread-count control."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import contextsteer as cs


def test_threads_context_manager_restores():
    before = cs.get_num_threads()
    with cs.threads(1):
        assert cs.get_num_threads() == 1
    with cs.threads(3):
        assert cs.get_num_threads() == 3
    assert cs.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, -2, 1025, 2**31, 2**70])
def test_set_num_threads_rejects_counts_out_of_range(bad):
    # 2**31 gave pybind11's 'incompatible function arguments'; 100000 was taken and the
    # pool tried to start that many OS threads.
    with pytest.raises(ValueError, match=r"expected n in \[1, 1024\]"):
        cs.set_num_threads(bad)


def test_set_num_threads_takes_numpy_integers():
    before = cs.get_num_threads()
    try:
        cs.set_num_threads(np.int64(3))
        assert cs.get_num_threads() == 3
    finally:
        cs.set_num_threads(before)
    with pytest.raises(TypeError, match="int"):
        cs.set_num_threads(np.True_)


def test_threads_blocks_open_in_two_python_threads_restore_the_count():
    # Each block saved and restored the count on its own: with two overlapping blocks the
    # count inside the later one was the earlier's, and after both it stayed changed.
    before = cs.get_num_threads()
    inside_b = []
    a_open, b_open, a_closed = threading.Event(), threading.Event(), threading.Event()

    def a():
        with cs.threads(before + 1):
            a_open.set()
            b_open.wait()
        a_closed.set()

    def b():
        a_open.wait()
        with cs.threads(before + 2):
            b_open.set()
            a_closed.wait()
            inside_b.append(cs.get_num_threads())

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert inside_b == [before + 2]
    assert cs.get_num_threads() == before


def test_nested_threads_blocks_and_a_refused_count_restore():
    before = cs.get_num_threads()
    with cs.threads(2):
        with cs.threads(3):
            assert cs.get_num_threads() == 3
        assert cs.get_num_threads() == 2
        with pytest.raises(ValueError), cs.threads(0):
            pass
        assert cs.get_num_threads() == 2
    assert cs.get_num_threads() == before


def test_set_num_threads_rejects_non_int():
    with pytest.raises(TypeError, match="int"):
        cs.set_num_threads(2.5)


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs sched_setaffinity and at least two usable CPUs",
)
def test_the_default_thread_count_follows_the_cpus_the_process_may_use():
    """A process pinned to one CPU (taskset, a container's cpuset) defaults to one kernel
    thread, not the machine's core count; unpinned, to its affinity's CPUs or fewer (a
    cgroup quota caps it)."""
    code = "import contextsteer as cs; print(cs.get_num_threads())"
    one = next(iter(os.sched_getaffinity(0)))
    pinned = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {one}),
    )
    assert pinned.stdout.strip() == "1"
    free = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 1 <= int(free.stdout) <= len(os.sched_getaffinity(0))


def test_a_child_forked_while_another_thread_sets_the_count_can_set_it():
    """threads() holds a lock across set_num_threads, which waits for a running step: a
    fork in that window gave the child a held lock with no owner, and its first
    threads() waited for good (10 of 10 children; fuzz round 13). Each child must get
    through threads(1) within its alarm."""
    code = """
import os, signal, threading, time
import numpy as np
import contextsteer as cs
a = cs.Agents(20000, slots=16)
a.add(np.random.default_rng(0).uniform(-60, 60, (20000, 2)), radius=0.3, target=[[0, 0]])
sim = cs.Simulation(None, a, cs.scenarios.crowd_steering(), motion=cs.Accel())
def stepper():
    while True:
        sim.step(1 / 30)
def knob():
    while True:
        with cs.threads(1):
            pass
threading.Thread(target=stepper, daemon=True).start()
threading.Thread(target=knob, daemon=True).start()
time.sleep(0.5)
bad = 0
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)
        with cs.threads(1):
            assert cs.get_num_threads() == 1
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    bad += status != 0
    time.sleep(0.1)
print("bad", bad)
os._exit(0)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "bad 0", out


def test_a_child_forked_while_the_first_pool_starts_can_set_the_count():
    """The C++ fork handler that resets the pool's lock was registered after the first
    pool was built, under that lock: a fork while another thread built it left the child
    a held lock, and its first thread-count call waited for good (3 of 3 runs; a helper
    on fuzz round 13's fixes). 256 threads make the first start slow."""
    code = """
import os, threading, time, faulthandler
import numpy as np
import contextsteer as cs
cs.set_num_threads(256)
a = cs.Agents(2000, slots=16)
a.add(np.random.default_rng(0).uniform(-50, 50, (2000, 2)), max_speed=1.0, target=[[0.0, 0.0]])
sim = cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel())
t = threading.Thread(target=lambda: sim.step(0.05))
t.start()
time.sleep(0.002)
pid = os.fork()
if pid == 0:
    faulthandler.dump_traceback_later(10, exit=True)
    with cs.threads(1):
        pass
    os._exit(0)
_, status = os.waitpid(pid, 0)
t.join()
print("status", status)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "status 0", out


def test_a_forked_child_drops_another_thread_s_count():
    """Another thread's open threads(7) block: the child forked meanwhile dropped the
    block but kept its count, 7 after its own block closed (a helper on fuzz round 13's
    fixes). It returns to the count before any block."""
    code = """
import os, threading
import contextsteer as cs
cs.set_num_threads(2)
opened, done = threading.Event(), threading.Event()
def other():
    with cs.threads(7):
        opened.set()
        done.wait()
t = threading.Thread(target=other)
t.start()
opened.wait()
pid = os.fork()
if pid == 0:
    ok = cs.get_num_threads() == 2
    with cs.threads(1):
        ok = ok and cs.get_num_threads() == 1
    os._exit(0 if ok and cs.get_num_threads() == 2 else 1)
_, status = os.waitpid(pid, 0)
done.set()
t.join()
print("status", status, cs.get_num_threads())
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "status 0 2", out
