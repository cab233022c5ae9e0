"""History to pandas / CSV / PedPy, and the metrics' schema version."""

import csv
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import cli


def _history(agents=3, steps=60, every=5):
    sim = cs.scenarios.get("racetrack")(agents=agents, seed=2)
    history = sim.record(every=every)
    sim.step(1 / 30, steps=steps)
    return sim, history


def test_to_csv_has_one_row_per_agent_per_frame(tmp_path):
    sim, h = _history()
    path = tmp_path / "run.csv"
    h.to_csv(path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(h) * 3
    assert list(rows[0])[:11] == [
        "id",
        "frame",
        "step",
        "time",
        "x",
        "y",
        "vx",
        "vy",
        "heading",
        "radius",
        "group",
    ]
    assert {"progress", "laps", "min_clearance", "mean_speed"} <= set(rows[0])
    last = [r for r in rows if r["frame"] == str(len(h) - 1)]
    assert [int(r["id"]) for r in last] == [0, 1, 2]
    np.testing.assert_allclose(
        [[float(r["x"]), float(r["y"])] for r in last], h.positions[-1], rtol=1e-5
    )
    assert [int(r["step"]) for r in rows[::3]] == h.steps.tolist()


def test_dead_agents_have_no_rows(tmp_path):
    sim, h = _history(agents=3, steps=10, every=5)
    sim.agents.alive[1] = False
    sim.step(1 / 30, steps=5)
    cols = h._table()
    frame, ids = cols["frame"], cols["id"]
    assert sorted(ids[frame == len(h) - 1].tolist()) == [0, 2]
    empty = tmp_path / "e.csv"
    sim2 = cs.Simulation(None, cs.Agents(2, slots=8), [cs.Forward()])
    cs.History(sim2).to_csv(empty)  # no agents: only the header
    assert empty.read_text().count("\n") == 1


def test_to_dataframe_matches_the_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    sim, h = _history()
    df = h.to_dataframe()
    assert len(df) == len(h) * 3
    assert df["id"].dtype == np.int64 and df["frame"].is_monotonic_increasing
    h.to_csv(tmp_path / "run.csv")
    back = pd.read_csv(tmp_path / "run.csv")
    assert list(back.columns) == list(df.columns)
    # Every value comes back bit for bit: time in float64, the rest as recorded, in float32.
    for name in df.columns:
        dtype = np.float64 if name == "time" else np.float32
        assert_equal = np.testing.assert_array_equal
        assert_equal(back[name].to_numpy(dtype), df[name].to_numpy(dtype), name)
    h.to_csv(tmp_path / "rounded.csv", float_format="%.2f")
    rounded = pd.read_csv(tmp_path / "rounded.csv")["x"]
    np.testing.assert_allclose(rounded, df["x"], rtol=0, atol=0.0051)
    assert (rounded != df["x"]).any()
    # Per-frame series repeat on every row of a frame.
    first = df[df.frame == len(h) - 1]
    assert first["laps"].nunique() == 1
    np.testing.assert_allclose(
        df.groupby("frame")["mean_speed"].first(), h.series["mean_speed"], rtol=1e-6
    )


def test_to_pedpy_trajectory_data():
    pedpy = pytest.importorskip("pedpy")
    sim = cs.scenarios.get("hallway")(agents=6)
    h = sim.record(every=3)
    sim.step(1 / 30, steps=150)
    traj = h.to_pedpy()
    assert isinstance(traj, pedpy.TrajectoryData)
    assert traj.frame_rate == 10.0
    assert len(traj.data) == int(np.asarray(h.alive).sum())
    speed = pedpy.compute_individual_speed(traj_data=traj, frame_step=5)
    assert speed["speed"].between(0.0, 2.0).all()  # pedestrians at ~1.3 m/s
    assert h.to_pedpy(frame_rate=25.0).frame_rate == 25.0
    with pytest.raises(ValueError, match="frame_rate"):
        h.to_pedpy(frame_rate=0)


def test_exports_explain_a_missing_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_extras(name, *args, **kwargs):
        if name in ("pandas", "pedpy"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    sim, h = _history(agents=1, steps=5)
    monkeypatch.setattr(builtins, "__import__", no_extras)
    with pytest.raises(ImportError, match=r"contextsteer\[pandas\]"):
        h.to_dataframe()
    with pytest.raises(ImportError, match=r"contextsteer\[pedpy\]"):
        h.to_pedpy()


def test_metrics_carry_a_schema_version(tmp_path):
    sim, _ = _history(agents=2, steps=5)
    assert sim.metrics()["schema_version"] == cs.metrics.SCHEMA_VERSION == 4
    assert (
        cli.main(
            [
                "run",
                "racetrack",
                "--agents",
                "2",
                "--steps",
                "5",
                "--frames",
                "0",
                "--quiet",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    doc = json.loads((tmp_path / "metrics.json").read_text())
    # metrics.json is the run record (contextsteer.run, layout 2: report/seconds replaced
    # scenario_metrics/step_seconds); the metrics inside keep their own version
    assert doc["schema_version"] == cs.run.SCHEMA_VERSION == 2
    # 2: a disabled run reports None where 1 reported zeros; 3: collisions of the whole run
    # 4: added agents' time to goal from their entry, kinematic agents out of the statistics
    assert doc["metrics"]["schema_version"] == 4


def test_exports_label_each_frame_with_the_group_and_agent_it_had_then():
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1, group=[1, 2])
    sim = cs.Simulation(None, a, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    h = sim.record(every=5)
    sim.step(0.1, 10)  # frames 0-2: slot 1 holds an agent of group 2
    a.remove([1])
    sim.step(0.1, 5)  # frame 3: slot 1 empty
    a.add([[9, 9]], group=7)  # frame 4: a new agent of group 7 in slot 1
    sim.step(0.1, 5)
    cols = h._table()
    one = cols["id"] == 1
    np.testing.assert_array_equal(cols["frame"][one], [0, 1, 2, 4])
    np.testing.assert_array_equal(cols["group"][one], [2, 2, 2, 7])
    np.testing.assert_array_equal(cols["generation"][one], [1, 1, 1, 2])
    np.testing.assert_array_equal(h.groups[:, 0], [1] * 5)
    back = pickle.loads(pickle.dumps(h))
    np.testing.assert_array_equal(back._table()["group"], cols["group"])


def test_trajectory_ids_split_a_slot_only_when_it_held_several_agents():
    from contextsteer.history import _trajectory_ids

    slot = np.array([0, 3, 0, 3])
    np.testing.assert_array_equal(_trajectory_ids(slot, np.array([1, 1, 1, 1])), slot)
    # Slot 3 held two agents: (0, 1) -> 0, (3, 1) -> 1, (3, 2) -> 2.
    got = _trajectory_ids(np.array([0, 3, 0, 3]), np.array([1, 1, 1, 2]))
    np.testing.assert_array_equal(got, [0, 1, 0, 2])


def _revived_history():
    """A History of the oncoming pair in which agent 0 is off for frames 11-20."""
    sim = cs.scenarios.get("oncoming")()
    h = sim.record(every=1)
    sim.step(1 / 30, steps=10)
    sim.agents.alive[0] = False
    sim.step(1 / 30, steps=10)
    sim.agents.alive[0] = True
    sim.step(1 / 30, steps=10)
    return h


def test_trajectory_ids_split_an_agent_whose_frames_have_a_gap():
    """PedPy reads a trajectory's rows as consecutive frames: an agent switched off and on
    again kept one id, and PedPy's speeds across the gap read 0.36 m/s for 1.33 (fuzz
    round 25)."""
    from contextsteer.history import _trajectory_ids

    # Slot 0: frames 0, 1, then 4, 5 (a gap); slot 2: frames 0-5 without one.
    slot = np.array([0, 2, 0, 2, 2, 2, 0, 2, 0, 2])
    frame = np.array([0, 0, 1, 1, 2, 3, 4, 4, 5, 5])
    gen = np.ones(10, np.int64)
    got = _trajectory_ids(slot, gen, frame)
    np.testing.assert_array_equal(got, [0, 2, 0, 2, 2, 2, 1, 2, 1, 2])
    # No gap and one agent a slot: the ids stay the slots.
    keep = frame < 2
    np.testing.assert_array_equal(_trajectory_ids(slot[keep], gen[keep], frame[keep]), slot[keep])
    # A recorded run: agent 0 off for frames 11-20 comes back as a trajectory of its own.
    h = _revived_history()
    cols = h._table()
    ids = _trajectory_ids(cols["id"], cols["generation"], cols["frame"])
    mine = cols["id"] == 0
    assert sorted(set(ids[mine & (cols["frame"] <= 10)])) != sorted(
        set(ids[mine & (cols["frame"] > 20)])
    )
    for i in np.unique(ids):
        frames = cols["frame"][ids == i]
        assert np.array_equal(frames, np.arange(frames[0], frames[0] + len(frames)))


def test_to_pedpy_refuses_frames_at_more_than_one_rate():
    """One mean frame rate for a history of 1/30 s and 1/10 s steps made PedPy's speeds
    0.56 and 1.67 times the recorded ones (fuzz round 25)."""
    from contextsteer.history import _check_one_frame_rate

    _check_one_frame_rate(np.cumsum(np.full(100, np.float32(1 / 30)), dtype=np.float64))
    _check_one_frame_rate([0.0, 0.1])
    with pytest.raises(ValueError, match=r"PedPy assumes one frame rate.*0\.0333333 to 0\.1 s"):
        _check_one_frame_rate(np.r_[np.arange(61) / 30, 2 + np.arange(1, 41) / 10])
    pytest.importorskip("pedpy")
    sim = cs.scenarios.get("oncoming")()
    h = sim.record(every=1)
    sim.step(1 / 30, steps=6)
    sim.step(1 / 10, steps=4)
    with pytest.raises(ValueError, match="PedPy assumes one frame rate"):
        h.to_pedpy()


def test_to_pedpy_gives_a_revived_agent_a_new_trajectory():
    pedpy = pytest.importorskip("pedpy")
    h = _revived_history()
    traj = h.to_pedpy()
    speed = pedpy.compute_individual_speed(
        traj_data=traj, frame_step=2, speed_calculation=pedpy.SpeedCalculation.BORDER_EXCLUDE
    )
    # Both walkers are at about 1.3 m/s from frame 8 on (6 m/s² from rest); across the gap
    # as one trajectory, agent 0 read 0.36 m/s.
    recorded = np.linalg.norm(np.asarray(h.velocities)[8:], axis=2)
    assert recorded[np.isfinite(recorded)].min() > 1.0
    assert speed[speed.frame >= 8].speed.min() > 1.0


@pytest.mark.parametrize(
    "rate, error",
    [
        (np.inf, ValueError),
        (np.nan, ValueError),
        (0.0, ValueError),
        (True, TypeError),
        ("10", TypeError),
    ],
)
def test_to_pedpy_refuses_a_frame_rate_that_is_not_a_finite_positive_number(rate, error):
    pytest.importorskip("pedpy")
    _, h = _history(agents=2, steps=6)
    with pytest.raises(error, match="to_pedpy: frame_rate must be a"):
        h.to_pedpy(frame_rate=rate)


def test_a_reserve_larger_than_memory_is_refused_naming_it():
    sim = cs.scenarios.get("oncoming")(agents=100)
    with pytest.raises(MemoryError, match=r"History: reserve=2,147,483,647 frames of 100 agents"):
        cs.History(sim, reserve=2**31 - 1)
    assert len(cs.History(sim, reserve=1000)) == 1  # a reserve that fits


_GROW_OOM = """
import resource, sys
import numpy as np, contextsteer as cs
rng = np.random.default_rng(0)
n = 2000
agents = cs.Agents(n, slots=16)
agents.add(rng.uniform(-500, 500, (n, 2)), velocity=rng.uniform(-1, 1, (n, 2)))
sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=0.5))
history = sim.record(maps=True, reserve=200)  # about 90 MB; doubling needs 180 MB more
sim.step(0.1, 199)  # frames 0..199: full, nothing grown yet
vm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize")][0]
limit = vm * 1024 + 60 * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
before = (sim.step_count, len(history), sim.agents.position.copy())
try:
    sim.step(0.1)
except MemoryError as exc:
    print("error:", exc)
after = (sim.step_count, len(history))
print("unchanged:", after == before[:2], np.array_equal(sim.agents.position, before[2]))
history.detach()
sim.step(0.1)
print("after detach:", sim.step_count, len(history))
# A call of many steps whose frames cannot all fit raises before its first step (each
# slice of the call made room for its own frames: thousands of steps ran, then the error
# said none had; fuzz round 24).
small = sim.record(maps=True, reserve=10)
sim.step(0.1, 10)
before = sim.step_count
try:
    sim.step(0.1, 100_000)
except MemoryError as exc:
    print("error:", exc)
print("many steps:", sim.step_count - before, len(small))
"""


@pytest.mark.skipif(
    "asan" in __import__("os").environ.get("LD_PRELOAD", ""),
    reason="an address-space limit and AddressSanitizer's shadow memory do not mix",
)
def test_a_history_that_cannot_grow_stops_the_step_before_it_changes_anything(tmp_path):
    """The room for a step call's frames is made before the call changes any state, so an
    allocation failure raises without losing a frame or advancing the simulation (it
    advanced, then raised 'std::bad_alloc')."""
    import subprocess
    import sys

    script = tmp_path / "grow.py"
    script.write_text(_GROW_OOM)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("error: History: out of memory for the recorded frames")
    assert lines[1] == "unchanged: True True"
    assert lines[2] == "after detach: 200 200"
    assert lines[3].startswith("error: History: out of memory for the recorded frames")
    assert lines[4] == "many steps: 0 11"


def test_to_csv_refuses_a_bad_format_before_touching_the_file(tmp_path):
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
    sim = cs.Simulation(None, agents, [cs.Forward()])
    history = sim.record(every=1)
    sim.step(0.1, steps=3)
    path = tmp_path / "run.csv"
    history.to_csv(path)
    before = path.read_text()
    # Two conversions; '%%' (savetxt splits at every '%' and cut the file to its header);
    # a carriage return or a quote, which csv readers take for a row break or a quoted cell.
    # '%r' and '%a' write a NumPy scalar's repr, np.float64(1.5) (fuzz round 15).
    for bad in ("%d", "{:.3f}", "%.3f,%.3f", 3, "%.3f%%", "%.3f\r", '"%.3f', "%.3f;", "%r", "%a"):
        with pytest.raises(ValueError, match="float_format"):
            history.to_csv(path, float_format=bad)
        assert path.read_text() == before  # the old file stands (it was left a header)
    with pytest.raises(TypeError, match="to_csv: path"):
        history.to_csv(None)
    history.to_csv(path, float_format="%.3f")
    assert path.read_text() != before and len(path.read_text().splitlines()) == 9


def test_series_are_nan_where_the_metrics_measure_nothing():
    """Without a goal radius or a metrics path, arrived / mean_progress / laps read 0 in
    the series where Simulation.metrics() says None: "nobody arrived", not "not measured"."""
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1, target=[[5, 0], [5, 2]])
    sim = cs.Simulation(None, agents, [cs.Forward()])
    history = sim.record()
    sim.step(0.1, steps=3)
    s = history.series
    assert np.isnan(s["arrived"]).all() and np.isnan(s["mean_progress"]).all()
    assert np.isnan(s["laps"]).all() and (s["mean_speed"] == 1.0).all()
    sim.configure_metrics(goal_radius=0.5, path=cs.Path([[0, 0], [10, 0]]))
    history = sim.record()
    sim.step(0.1, steps=3)
    s = history.series
    assert (s["arrived"] == 0).all() and np.isfinite(s["mean_progress"]).all()
    assert (s["laps"] == 0).all() and np.isfinite(history.to_dataframe()["progress"]).all()
    # The path taken away while recording: each agent's progress reads NaN too, as the
    # mean does (it read 0 beside a NaN mean; fuzz round 13).
    sim.configure_metrics(path=None)
    sim.step(0.1, steps=2)
    table = history.to_dataframe()
    later = table["frame"] >= 4
    assert np.isnan(table["progress"][later]).all() and np.isnan(history.series["laps"][4:]).all()
    assert np.isfinite(table["progress"][~later]).all()


def test_to_csv_writes_through_a_symlink_and_keeps_the_mode(tmp_path):
    import os

    agents = cs.Agents(1, slots=8)
    agents.add([[0, 0]], velocity=[1, 0], max_speed=1)
    sim = cs.Simulation(None, agents, [cs.Forward()])
    history = sim.record()
    sim.step(0.1)
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    os.chmod(target, 0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    history.to_csv(link)
    assert link.is_symlink() and target.read_text().startswith("id,frame")
    assert (os.stat(target).st_mode & 0o777) == 0o600


def test_the_table_carries_each_frames_radius():
    # A flow study with mixed radii could not check overlaps from the CSV without joining
    # frame_radii by hand (fuzz round 11). Oracle: the agents' radii, and a radius
    # changed mid-recording at the frames after.
    agents = cs.Agents(3, slots=8)
    agents.add([[0, 0], [0, 2], [0, 4]], radius=[0.15, 0.2, 0.3], velocity=[1, 0], max_speed=1)
    sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    h = sim.record(every=1)
    sim.step(0.1, steps=2)
    agents.radius[1] = 0.25
    sim.step(0.1, steps=2)
    cols = h._table()
    first = cols["frame"] == 0
    np.testing.assert_allclose(cols["radius"][first], [0.15, 0.2, 0.3], rtol=1e-7)
    last = cols["frame"] == len(h) - 1
    np.testing.assert_allclose(cols["radius"][last], [0.15, 0.25, 0.3], rtol=1e-7)


def test_record_takes_the_ints_0_and_1_for_maps_as_every_switch_does():
    a = cs.Agents(2, slots=8)
    a.add([[0, 0]], max_speed=1)
    sim = cs.Simulation(None, a, [cs.Forward()], cs.Lerp())
    sim.step(0.1)
    assert sim.record(maps=1).interest is not None  # refused as "must be a bool, got int"
    assert sim.record(maps=0).interest is None
    with pytest.raises(TypeError, match="History: maps must be a bool, got int 2"):
        sim.record(maps=2)


def test_every_switch_takes_the_ints_0_and_1():
    """README ("Reliability"): switches take a bool or the ints 0 and 1. Four of them
    refused 1 (push_apart among those the README names), so one switch took 1 and its
    neighbour did not (fuzz round 13)."""
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [3, 0]], max_speed=1)
    sim = cs.Simulation(None, a, [cs.Forward()], cs.Lerp(), push_apart=0)
    sim.step(0.1)
    sim.configure_metrics(enabled=1, overtakes=0)
    assert cs.Accel(independent_facing=1).independent_facing is True
    w = cs.World()
    w.add_segments([[0, -1, 0, 1]])
    assert cs.NavField(w, [[3, 0]], share=0)._share is False
    assert cs.Detour(sim, make_way=0).make_way is False
    for call in (
        lambda: cs.Simulation(None, a, [cs.Forward()], cs.Lerp(), push_apart=2),
        lambda: sim.configure_metrics(enabled="yes"),
        lambda: cs.Accel(independent_facing=None),
        lambda: cs.NavField(w, [[3, 0]], share=2),
        lambda: cs.Detour(sim, make_way="no"),
    ):
        with pytest.raises(TypeError, match="must be a bool"):
            call()


def test_history_radii_are_read_only_like_its_other_arrays():
    """History.radii was the one writable array of a History: a write stuck there but
    reached neither frame_radii nor the table (fuzz round 13)."""
    import pickle

    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [0, 2]], velocity=[1, 0])
    sim = cs.Simulation(None, a, [cs.Forward()], cs.Lerp())
    h = cs.History(sim)
    sim.step(0.1, steps=2)
    for history in (h, pickle.loads(pickle.dumps(h))):
        assert not history.radii.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            history.radii[0] = 9.0
        np.testing.assert_array_equal(history.radii, history.frame_radii[0])


def test_a_call_whose_frames_cannot_exist_is_refused_as_the_historys_memory_error():
    """steps=2**62 with a History every step surfaced std::vector's length_error as
    "ValueError: vector::_M_default_append" (fuzz round 25); it is the History's
    MemoryError, naming the frames, and no step runs."""
    agents = cs.Agents(10, slots=8)
    agents.add(np.zeros((1, 2)))
    sim = cs.Simulation(None, agents, [cs.Forward()])
    for every, frames in ((1, 2**62), (10**6, 2**62 // 10**6)):
        h = sim.record(every=every)
        with pytest.raises(
            MemoryError, match=rf"recorded frames \({frames} more for this step call\)"
        ):
            sim.step(1 / 60, steps=2**62)
        assert sim.step_count == 0 and len(h.times) == 1
        h.detach()
    sim.step(1 / 60, steps=3)
    assert sim.step_count == 3


def test_a_call_too_large_for_memory_is_refused_before_anything_is_allocated():
    """1,000 agents recorded every step for 2**31 steps: the buffer's first arrays (the
    frames' steps and times, zero-filled) were written before the allocation that failed,
    32 GiB on a 23 GiB machine, and the process was killed (fuzz round 25); 2**27 steps
    were refused after 2 GiB. Now the size is checked first. Run in a subprocess, whose
    peak memory is its own."""
    code = textwrap.dedent(
        """
        import resource, numpy as np, contextsteer as cs
        agents = cs.Agents(1000, slots=8)
        agents.add(np.zeros((1000, 2)))
        sim = cs.Simulation(None, agents, [cs.Forward()])
        h = sim.record(every=1)
        for steps in (2**31, 2**27):
            try:
                sim.step(1 / 60, steps=steps)
            except MemoryError as e:
                assert "recorded frames" in str(e) and sim.step_count == 0, e
            else:
                raise AssertionError("ran")
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        """
    )
    resource = pytest.importorskip("resource")

    def cap_memory():  # were the check lost, the child fails at 6 GiB, not the machine
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
        preexec_fn=cap_memory,
    )
    assert out.returncode == 0, out.stderr[-800:]
    assert int(out.stdout.split()[-1]) < 600  # MiB: nothing of the buffers was touched


def test_the_memory_bound_holds_for_every_history_together_and_the_buffer_a_grow_replaces(
    monkeypatch,
):
    """Each History's new buffer was checked alone against the memory bound: two that
    each fit took 280 MiB under a 200 MiB bound, and a grow to 0.9 of the bound held the
    old 0.45 beside it (fuzz round 26). The bound is lowered here, so nothing large is
    allocated."""
    from contextsteer import maps

    n, bound = 200, 8 * 2**20
    frame = 33 * n + 8 + 8 + 4 * 16  # a frame's bytes without maps (HistoryFrames::bytes)
    monkeypatch.setattr(maps, "_physical_memory", lambda: bound)

    def sim_with(histories):
        agents = cs.Agents(n, slots=8)
        agents.add(np.zeros((n, 2)))
        sim = cs.Simulation(None, agents, [cs.Forward()])
        return sim, [cs.History(sim, reserve=1) for _ in range(histories)]

    sim, (h,) = sim_with(1)
    sim.step(0.01, steps=int(0.6 * bound / frame))  # one History alone: fits
    sim, (h1, h2) = sim_with(2)
    sim.step(0.01, steps=int(0.35 * bound / frame))  # two that fit together
    with pytest.raises(MemoryError, match="recorded frames"):
        sim.step(0.01, steps=int(0.3 * bound / frame))  # each grows to ~0.65: 1.3 together
    assert len(h1) == len(h2) == int(0.35 * bound / frame) + 1
    sim, (h,) = sim_with(1)
    sim.step(0.01, steps=int(0.45 * bound / frame))
    with pytest.raises(MemoryError, match="recorded frames"):
        sim.step(0.01)  # to 0.9 of the bound, beside the 0.45 it replaces
    sim.step(0.01, steps=0)
    # Staged steps had no bound at all (round 26's second look).
    count = sim.step_count
    with pytest.raises(MemoryError, match=r"recorded frames \(1 more"):
        sim.perceive()
        sim.decide_and_move(0.01)
    assert sim.step_count == count
