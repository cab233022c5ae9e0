"""History to pandas / CSV / PedPy, and the metrics' schema version."""

import csv
import json
import pickle

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
    assert list(rows[0])[:10] == [
        "id",
        "frame",
        "step",
        "time",
        "x",
        "y",
        "vx",
        "vy",
        "heading",
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
    np.testing.assert_allclose(
        back[["x", "y", "vx", "vy"]], df[["x", "y", "vx", "vy"]], rtol=1e-5, atol=1e-5
    )
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
    assert sim.metrics()["schema_version"] == cs.metrics.SCHEMA_VERSION == 2
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
    assert (
        doc["metrics"]["schema_version"] == 2
    )  # 2: a disabled run reports None where 1 reported zeros


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
