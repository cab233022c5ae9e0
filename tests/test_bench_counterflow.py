"""benchmarks/counterflow.py: the demand, the contact count and a short run's bookkeeping."""

import math

import numpy as np
import pytest

from bench_modules import load

cf = load("counterflow", "bench_counterflow_module")


def test_demand_depends_on_the_seed_only():
    a, b = cf.arrivals(3, 4.0, 20), cf.arrivals(3, 4.0, 20)
    np.testing.assert_array_equal(a.count, b.count)
    for d in range(2):
        np.testing.assert_array_equal(a.radius[d], b.radius[d])
        np.testing.assert_array_equal(a.places[d], b.places[d])
        n = int(a.count[:, d].sum())
        assert a.radius[d].shape == (n,) and a.places[d].shape == (n, 200, 2)
        assert ((a.radius[d] >= 0.15) & (a.radius[d] <= 0.3)).all()
        x, y = a.places[d][..., 0], a.places[d][..., 1]
        assert ((x >= cf.ENTRY_DEPTH[0]) & (x <= cf.ENTRY_DEPTH[1])).all()
        # Clear of both side walls by the radius and 6 cm.
        r = a.radius[d][:, None]
        assert ((y >= r + 0.06 - 1e-12) & (y <= cf.WIDTH - r - 0.06 + 1e-12)).all()
    assert not np.array_equal(cf.arrivals(4, 4.0, 20).count, a.count)


def test_contact_episodes_hand_worked():
    c = cf.Contacts()
    rad = np.array([0.3, 0.3, 0.2])
    ids = np.array([0, 1, 2])
    # 0 and 1 overlap by 1 cm; 2 is far.
    c.update(ids, np.array([[0.0, 0.0], [0.59, 0.0], [5.0, 0.0]]), rad)
    assert c.episodes == 1 and math.isclose(c.deepest, 0.01)
    # Still overlapping: the same episode; deeper.
    c.update(ids, np.array([[0.0, 0.0], [0.55, 0.0], [5.0, 0.0]]), rad)
    assert c.episodes == 1 and math.isclose(c.deepest, 0.05)
    # Apart, then again: a second episode. Touching within 0.1 mm is no contact.
    c.update(ids, np.array([[0.0, 0.0], [0.59995, 0.0], [5.0, 0.0]]), rad)
    c.update(ids, np.array([[0.0, 0.0], [0.58, 0.0], [5.0, 0.0]]), rad)
    assert c.episodes == 2
    # Agent 1 removed and its id reused by a new agent overlapping 0: a new episode.
    c.forget([1])
    c.update(ids, np.array([[0.0, 0.0], [0.58, 0.0], [5.0, 0.0]]), rad)
    assert c.episodes == 3


def test_a_short_run_keeps_its_books():
    row = cf.run("cs", 0, rate=4.0, seconds=15)
    assert row["entered"] == row["out"] + row["inside"]
    assert row["entered"] + row["queued"] == row["offered"]
    assert row["entered"] > 30  # the corridor is not full after 15 s
    assert row["contacts"] == 0 and row["wall_deepest_m"] <= 1e-3
    dense = cf.run("cs-counterflow", 0, rate=4.0, seconds=15)
    assert dense["offered"] == row["offered"]  # the same demand


def test_rvo2_runs_the_same_demand():
    pytest.importorskip("pyrvo")
    row = cf.run("rvo2-margin", 1, rate=4.0, seconds=10)
    assert row["offered"] == cf.run("cs", 1, rate=4.0, seconds=10)["offered"]
    assert row["entered"] == row["out"] + row["inside"]


def test_table_lists_each_system():
    rows = [
        dict(
            system=s,
            seed=k,
            offered=10,
            entered=9,
            out=5 + k,
            inside=4 - k,
            queued=1,
            travel_s=20.0,
            contacts=k,
            deepest_m=0.001,
            wall_deepest_m=0.0,
        )
        for s in ("cs", "rvo2")
        for k in (0, 1)
    ]
    text = cf.table(rows, ["cs", "rvo2", "cs-counterflow"])
    lines = text.splitlines()
    assert len(lines) == 4 and lines[2].startswith("| cs | 5.5 | 5 |") and "| 1 |" in lines[3]
