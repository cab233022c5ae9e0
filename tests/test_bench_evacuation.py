"""benchmarks/bench_evacuation.py: RiMEA 9's room timed on one and two threads, and its
comparison with JuPedSim (one metric code for both)."""

import contextlib
import io

import numpy as np
import pytest

from bench_modules import load

be = load("bench_evacuation", "bench_evacuation_module")


def test_one_and_two_threads_end_at_the_same_positions():
    one = be.run(1, 80, 1, 3)
    two = be.run(2, 80, 1, 3)
    assert one[0] > 0 and two[0] > 0
    assert one[1] == two[1]


def test_main_prints_both_rows_and_one_hash(capsys):
    be.main(["--agents", "80", "--warm", "1", "--steps", "2", "--runs", "1"])
    out = capsys.readouterr().out
    assert "| 1 |" in out and "| 2 |" in out
    assert "two threads:" in out and out.count("position hashes: ['") == 1


def test_tally_counts_episodes_when_they_start_and_keeps_the_deepest_overlap():
    np = pytest.importorskip("numpy")
    pytest.importorskip("scipy")
    walls = np.array([[0.0, 0.0, 10.0, 0.0]])
    tally = be.Tally(0.25, walls)
    ids = np.array([3, 7])
    far = np.array([[2.0, 2.0], [4.0, 2.0]])
    touching = np.array([[2.0, 2.0], [2.45, 2.0]])  # 5 cm deep
    deeper = np.array([[2.0, 2.0], [2.4, 2.0]])  # 10 cm deep
    exactly = np.array([[2.0, 2.0], [2.5, 2.0]])  # touching, not overlapping
    for p in (far, touching, deeper, exactly, touching, far):
        tally.update(ids, p)
    assert tally.contacts == 2  # two episodes: steps 2-3 and step 5
    assert tally.deepest == pytest.approx(0.1)
    # The same pair under other indices in a step (agents removed before them) is the
    # same episode: identities, not rows.
    tally.update(np.array([9, 7, 3]), np.array([[8.0, 8.0], [2.45, 2.0], [2.0, 2.0]]))
    assert tally.contacts == 3
    tally.update(np.array([3, 7, 9]), np.array([[2.0, 2.0], [2.45, 2.0], [8.0, 8.0]]))
    assert tally.contacts == 3
    # Wall: a centre 0.2 m from the wall is in it (< 0.99 r); 0.3 m is not.
    for y in (0.3, 0.2, 0.2, 0.3, 0.2):
        tally.update(np.array([1]), np.array([[5.0, y]]))
    assert tally.wall_penetrations == 2
    # Past the wall's end the distance is to its end point.
    tally.update(np.array([1]), np.array([[10.2, 0.1]]))
    assert tally.wall_penetrations == 2  # still in it: the same episode


def test_both_systems_empty_a_small_room_from_the_same_starts():
    pytest.importorskip("scipy")
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    ours = be.evacuate_contextsteer(24, 4, limit=120.0)
    theirs = be.evacuate_jupedsim(24, 4, "cfsm", 1 / 30, limit=120.0)
    for r in (ours, theirs):
        assert r["in_room"] == 0 and 5.0 < r["empty_at"] < 120.0
        assert r["ms_step"] > 0 and r["ms_step_early"] > 0 and r["dt"] == pytest.approx(1 / 30)
    assert ours["contacts"] == 0 and ours["wall_penetrations"] == 0


def test_main_prints_one_peer_row_a_model_and_step(capsys):
    pytest.importorskip("scipy")
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    args = "--agents 12 --warm 1 --steps 1 --runs 1 --peers --jps-models cfsm,avm"
    be.main([*args.split(), "--jps-dt", "0.0333333333333", "--jps-radius", "0.25,0.2"])
    out = capsys.readouterr().out
    for radius in ("0.25", "0.2"):  # contextsteer at each radius, as each model
        assert out.count(f"| contextsteer (CROWD, 16 phases) | {radius} |") == 1
    for model in ("cfsm", "avm"):
        assert out.count(f"| JuPedSim {model} | 0.25 |") == 1
        assert out.count(f"| JuPedSim {model} | 0.2 |") == 1
    for bad in (["--jps-models", "cfsm,orca"], ["--jps-radius", "-1"], ["--limit", "0"]):
        with pytest.raises(SystemExit):
            be.main(["--peers", *bad])


@pytest.mark.parametrize("model", sorted(be.JPS_MODELS))
def test_every_jupedsim_model_takes_the_rooms_agents(model):
    pytest.importorskip("scipy")
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    r = be.evacuate_jupedsim(12, 4, model, 1 / 30, limit=1.0, radius=0.22)
    assert r["failed"] == "" and r["in_room"] == 12  # a second: nobody is out yet
    assert r["ms_step"] > 0


def test_the_centrifugal_force_models_body_is_the_tallys_disc():
    jps = pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    at = {"position": (0.0, 0.0), "journey_id": 0, "stage_id": 0}
    agent = be.jps_agent("gcfm", 0.22, **at)
    assert isinstance(agent, jps.GeneralizedCentrifugalForceModelAgentParameters)
    # Semi-axes a_min + a_v v along the motion, b_max..b_min across: 0.22 at any speed.
    assert (agent.a_min, agent.a_v, agent.b_min, agent.b_max) == (0.22, 0.0, 0.22, 0.22)
    assert be.jps_agent("sfm", 0.22, **at).radius == 0.22


def test_a_peer_that_gives_up_ends_its_run_with_the_reason():
    calls = []

    def step():
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("Point (1, 2) is outside of accessible area")

    def read():
        return np.array([0, 1]), np.array([[5.0, 5.0], [6.0, -3.0]])

    r = be._evacuate(step, read, 0.05, np.zeros((0, 4)), limit=10.0, stall=60.0)
    assert r["failed"] == "RuntimeError at 0.1 s: Point (1, 2) is outside of accessible area"
    assert r["in_room"] == 1 and r["empty_at"] == float("inf") and len(calls) == 3
    row = ("JuPedSim gcfm", 0.25, r)
    ours = ("contextsteer", 0.25, {**r, "failed": ""})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        be.print_peers([ours, row], 2, 4)
    assert "| JuPedSim gcfm | 0.25 | 0.05 | stopped: RuntimeError at 0.1 s:" in out.getvalue()


def test_jupedsim_parameters_reach_the_model_and_its_agents():
    pytest.importorskip("scipy")
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    runs = [
        be.evacuate_jupedsim(24, 4, "cfsm", 1 / 30, limit=40.0, **kw)
        for kw in (
            {},
            {"agent_params": {"time_gap": 0.4}},
            {"model_params": {"strength_neighbor_repulsion": 1.0}},
        )
    ]
    # Each override changes the run: the same starts, and JuPedSim's speed model is
    # deterministic (a second default run gives the same figures).
    again = be.evacuate_jupedsim(24, 4, "cfsm", 1 / 30, limit=40.0)
    keys = ("empty_at", "in_room", "contacts", "deepest_mm", "wall_penetrations")
    figures = [tuple(r[k] for k in keys) for r in runs]
    assert tuple(again[k] for k in keys) == figures[0]
    assert figures[1] != figures[0] and figures[2] != figures[0]


def test_unknown_jupedsim_fields_are_refused_before_any_run(capsys):
    pytest.importorskip("jupedsim")
    assert be._unknown_fields(["cfsm", "avm"], {}, {"time_gap": 0.5}) == ""
    bad = be._unknown_fields(["cfsm"], {"time_gap": 0.5}, {})
    assert "CollisionFreeSpeedModel has no ['time_gap']" in bad
    for args in (
        ["--jps-model-params", '{"foo": 1}'],
        ["--jps-agent-params", "[1]"],
        ["--jps-agent-params", "{not json"],
    ):
        with pytest.raises(SystemExit):
            be.main(["--peers", "--jps-models", "cfsm", *args])
    assert "foo" in capsys.readouterr().err
