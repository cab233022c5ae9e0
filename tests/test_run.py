"""The application layer (contextsteer.run): one result record, its JSON form, and the same
numbers as a simulation stepped by hand."""

import json
import re

import numpy as np
import pytest

import contextsteer as cs
from contextsteer._json import jsonable

FIELDS = {
    "scenario",
    "parameters",
    "steps",
    "dt",
    "agents",
    "seconds",
    "metrics",
    "report",
    "counters",
    "trajectory",
    "history",
    "simulation",
}


def by_hand(name, steps, **params):
    """The oracle: build the scenario and step it in one call, no runner involved."""
    sc = cs.scenarios.get(name)
    sim = sc(**params)
    sim.step(sc.dt, steps=steps)
    return sc, sim


def plain(x):
    return json.loads(json.dumps(jsonable(x)))


def test_result_record_fields_and_types():
    res = cs.run_scenario("racetrack", {"agents": 3}, seed=4, steps=40, records=4, maps=True)
    assert {f.name for f in __import__("dataclasses").fields(res)} == FIELDS
    assert res.scenario == "racetrack" and res.parameters == {"agents": 3, "seed": 4}
    assert res.steps == 40 and res.dt == pytest.approx(1 / 30) and res.agents == 3
    assert res.seconds >= 0
    assert set(res.counters) == {"wall_contacts", "overlaps", "stuck"}
    assert len(res.counters["overlaps"]["per_agent"]) == 3
    assert set(res.report) >= {"laps", "max_speed", "estimated_lap_time"}
    assert res.trajectory["path_length_mean"] > 0
    assert res.history.positions.shape == (5, 3, 2) and res.history.danger.shape[:2] == (5, 3)
    assert res.history.steps.tolist() == [0, 10, 20, 30, 40]
    np.testing.assert_allclose(res.history.times, res.history.steps / 30, rtol=1e-5)
    assert res.simulation.step_count == 40


def test_same_numbers_as_a_simulation_stepped_by_hand():
    for records in (0, 7):  # one call, or chunks while recording: the same steps
        res = cs.run_scenario("racetrack", {"agents": 4}, seed=3, steps=75, records=records)
        sc, sim = by_hand("racetrack", 75, agents=4, seed=3)
        assert res.metrics == sim.metrics()
        assert res.report == sc.report(sim)
        np.testing.assert_array_equal(res.simulation.agents.position, sim.agents.position)
        assert (
            res.counters["wall_contacts"]["per_agent"]
            == sim.wall_contacts[sim.agents.alive].astype(int).tolist()
        )
        assert res.agents == sim.agents.count


def test_json_round_trip():
    res = cs.run_scenario("oncoming", seed=2, steps=50, records=5)
    doc = json.loads(res.to_json())
    assert doc == res.to_dict() == plain(res.to_dict())
    assert list(doc) == [
        "schema_version",
        "scenario",
        "parameters",
        "steps",
        "dt",
        "simulated_seconds",
        "seconds",
        "steps_per_second",
        "agents",
        "trajectory",
        "counters",
        "metrics",
        "report",
    ]
    assert doc["schema_version"] == cs.run.SCHEMA_VERSION == 2
    assert doc["metrics"]["schema_version"] == cs.metrics.SCHEMA_VERSION
    assert doc["simulated_seconds"] == pytest.approx(50 * res.dt)
    back = cs.RunResult.from_json(res.to_json())
    assert back.to_dict() == doc
    assert back.history is None and back.simulation is None
    assert back.metrics == plain(res.metrics)
    with pytest.raises(ValueError, match="missing keys"):
        cs.RunResult.from_dict({"scenario": "x"})
    # Read back, a document of another schema or with values of the wrong kind loaded
    # without a word (only the keys were checked).
    for key, value, match in [
        ("schema_version", 99, "schema_version 99; this contextsteer reads version 2"),
        ("schema_version", True, "schema_version True"),
        ("steps", -1, "steps must be an integer in [0, 2^63)"),
        ("steps", 2.5, "steps must be an integer in [0, 2^63)"),
        ("agents", "x", "agents must be an integer in [0, 2^63)"),
        # 10**400 was accepted as steps (to_json then raised OverflowError) and raised
        # OverflowError as dt or seconds (fuzz round 14).
        ("steps", 10**400, "steps must be an integer in [0, 2^63)"),
        ("dt", 10**400, "dt must be a finite number"),
        # Beyond 4,300 digits the message's own repr raised (fuzz round 15).
        ("steps", 10**5000, "steps must be an integer in [0, 2^63), got an int of 16610 bits"),
        ("agents", -(10**5000), "got an int of 16610 bits"),
        ("seconds", -(10**400), "seconds must be a finite number"),
        ("seconds", float("nan"), "seconds must be a finite number"),
        ("seconds", -1.0, "seconds must be >= 0"),
        ("dt", 0, "dt must be > 0"),
        ("scenario", 5, "scenario must be a name"),
        ("parameters", None, "parameters must be a mapping"),
        ("metrics", [1], "metrics must be a mapping or None"),
    ]:
        with pytest.raises(ValueError, match=re.escape(match)):
            cs.RunResult.from_dict({**doc, key: value})
    assert cs.RunResult.from_dict({**doc, "seconds": None}).seconds is None  # JSON's NaN
    # ... and such a result writes itself again (to_dict raised TypeError: fuzz round 13).
    for key, derived in (("dt", "simulated_seconds"), ("seconds", "steps_per_second")):
        again = cs.RunResult.from_dict({**doc, key: None}).to_dict()
        assert again[key] is None and again[derived] is None
        assert cs.RunResult.from_json(json.dumps(again)).to_dict() == again


def test_run_simulation_of_a_simulation_built_by_hand():
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
    sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    seen = []
    res = cs.run_simulation(sim, 25, dt=0.1, records=2, callback=seen.append)
    assert sum(seen) == 25 and res.scenario is None and res.parameters == {}
    assert res.history.steps.tolist() == [0, 13, 25]  # the final state last
    assert res.report == {} and res.trajectory["mean_speed"] == pytest.approx(1.0, rel=1e-5)
    zero = cs.run_simulation(sim, 0)
    assert zero.steps == 0 and zero.history is None and zero.trajectory == {}


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: cs.run_simulation("sim", 10), TypeError, "contextsteer.Simulation"),
        (lambda: cs.run_scenario("no-such-scenario"), ValueError, "unknown scenario"),
        (lambda: cs.run_scenario(42), TypeError, "scenario name or a Scenario"),
        (lambda: cs.run_scenario("oncoming", {"seed": 1}, seed=2), ValueError, "seed once"),
        (lambda: cs.run_scenario("oncoming", steps=-1), ValueError, "steps must be >= 0"),
        (lambda: cs.run_scenario("oncoming", steps=2.5), TypeError, "steps must be an int"),
        (lambda: cs.run_scenario("oncoming", records=-1), ValueError, "records must be >= 0"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_builder_that_returns_no_simulation_is_refused():
    cs.scenarios.scenario("returns-none", description="nothing")(lambda *, seed=0: None)
    try:
        with pytest.raises(TypeError, match="built a NoneType"):
            cs.run_scenario("returns-none")
    finally:
        cs.scenarios.unregister("returns-none")


def test_sweep_and_tune_keep_the_runners_json_form():
    res = cs.sweep(
        "oncoming", {"slots": [8]}, seeds=[1], steps=40, executor="serial", progress=False
    )
    run = cs.run_scenario("oncoming", {"slots": 8}, seed=1, steps=40).to_dict()
    got = dict(res[0].result)
    for doc in (got, run):
        doc.pop("seconds"), doc.pop("steps_per_second")
    assert got == run


def test_no_import_cycle_between_cli_and_sweep():
    import subprocess
    import sys

    # a sweep run used to import the CLI for its JSON helper (cli <-> sweep)
    code = (
        "import sys, contextsteer as cs; "
        "cs.sweep('oncoming', steps=5, executor='serial', progress=False); "
        "print('contextsteer.cli' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def driving(capacity):
    """Two agents in a ``capacity``-slot Agents driving along +x at 1 m/s, 2 m apart."""
    agents = cs.Agents(capacity, slots=8)
    agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1)
    return cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))


def test_trajectory_counts_only_the_slots_alive_in_a_recorded_frame():
    # Hand-worked: 30 steps of 0.1 s at 1 m/s is 3 m each, at 1 m/s; the two free slots
    # of the capacity-4 Agents never move and must not count as agents that stood still.
    for capacity in (2, 4):
        res = cs.run_simulation(driving(capacity), 30, dt=0.1, records=3)
        t = res.trajectory
        assert t["path_length_mean"] == pytest.approx(3.0, rel=1e-5)
        assert t["path_length_min"] == pytest.approx(3.0, rel=1e-5)
        assert t["path_length_max"] == pytest.approx(3.0, rel=1e-5)
        assert t["mean_speed"] == pytest.approx(1.0, rel=1e-5)


def test_trajectory_without_any_agent_has_none_statistics_and_strict_json():
    sim = cs.Simulation(None, cs.Agents(0, slots=8), [cs.Forward()])
    res = cs.run_simulation(sim, 5, dt=0.1, records=2)
    stats = ("path_length_mean", "path_length_min", "path_length_max", "mean_speed")
    assert all(res.trajectory[k] is None for k in stats)
    doc = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert all(doc["trajectory"][k] is None for k in stats)


def test_the_appended_final_frame_has_the_simulations_own_time():
    # 31 steps in 3 frames, at round(31 j / 3) = 10, 21 and 31. Oracle: the clock of a
    # twin simulation stepped 31 times by hand (it accumulates the float32 dt, so it is
    # not 31 * 0.1).
    res = cs.run_simulation(driving(2), 31, dt=0.1, records=3)
    twin = driving(2)
    clock = [0.0]
    for _ in range(31):
        twin.step(0.1)
        clock.append(twin.time)
    assert res.history.steps.tolist() == [0, 10, 21, 31]
    assert res.history.times.tolist() == [clock[0], clock[10], clock[21], clock[31]]


@pytest.mark.parametrize("steps, records", [(900, 700), (900, 600), (10, 6), (10, 4), (5, 9)])
def test_records_keeps_that_many_evenly_spaced_frames(steps, records):
    """min(records, steps) frames after the first, frame j at round(j * steps / records)
    (ceil(steps / records) apart, it kept 450 of 700 asked for 900 steps)."""
    sim = cs.Simulation(None, cs.Agents(1, slots=8), [cs.Forward()])
    kept = cs.run_simulation(sim, steps, dt=0.1, records=records).history.steps
    frames = min(records, steps)
    assert kept.tolist() == [0] + [round(j * steps / frames + 1e-9) for j in range(1, frames + 1)]
    assert set(np.diff(kept).tolist()) <= {steps // frames, -(-steps // frames)}


def test_trajectory_tells_apart_two_agents_of_one_slot():
    """A slot reused by an agent 100 m away counted the jump as travel: path_length_max
    102 m and mean_speed 13 m/s for walkers at 1 m/s."""
    ag = cs.Agents(2, slots=8)
    ag.add([[0, 0], [0, 5]], velocity=[1, 0], max_speed=1)
    sim = cs.Simulation(None, ag, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    calls = []

    def swap(n):
        calls.append(n)
        if len(calls) == 2:  # after 20 steps agent 0 leaves; a new one takes its slot
            ag.remove([0])
            ag.add([[100.0, 0.0]], velocity=[1, 0], max_speed=1)

    res = cs.run_simulation(sim, 40, dt=0.1, records=4, callback=swap)
    t = res.trajectory
    # Three agents: slot 0's first (1 m in frames 0-1), its second (2 m in frames 2-4)
    # and slot 1 (4 m), all at 1 m/s.
    assert t["path_length_max"] == pytest.approx(4.0, abs=1e-4)
    assert t["path_length_min"] == pytest.approx(1.0, abs=1e-4)
    assert t["path_length_mean"] == pytest.approx(7.0 / 3.0, abs=1e-4)
    assert t["mean_speed"] == pytest.approx(1.0, abs=1e-4)


def _cup_walk():
    """A walker behind a cup of 12 agents standing at their goals (open towards it)."""
    t = np.linspace(-2.2, 2.2, 12)
    cup = np.c_[3 + 1.6 * np.cos(t), 1.6 * np.sin(t)].astype(np.float32)
    agents = cs.Agents(13, slots=16, seed=0)
    agents.add([[0.0, 0.0]], radius=0.3, max_speed=1.3, max_accel=6.0, target=[[7.0, 0.0]])
    agents.add(cup, radius=0.3, max_speed=1.3, max_accel=6.0, target=cup)
    steering = cs.scenarios.crowd_steering(walls=False)
    return cs.Simulation(None, agents, steering, motion=cs.Accel())


@pytest.mark.parametrize("records", [0, 4])
def test_run_simulation_with_a_detour_is_the_loop_by_hand(records):
    # The oracle: detour.update() then sim.step(dt), one step at a time.
    dt, steps = 1 / 30, 600
    sim = _cup_walk()
    detour = cs.Detour(sim)
    for _ in range(steps):
        detour.update()
        sim.step(dt)
    sim2 = _cup_walk()
    detour2 = cs.Detour(sim2)
    res = cs.run_simulation(sim2, steps, dt=dt, records=records, detour=detour2)
    np.testing.assert_array_equal(sim2.agents.position, sim.agents.position)
    assert res.report["detour"] == {
        "plans": detour.plans,
        "detours": detour.detours,
        "yields": detour.yields,
    }
    assert detour.detours >= 1 and np.hypot(*(sim.agents.position[0] - [7, 0])) < 0.3
    json.dumps(res.to_dict())  # plain types


def test_run_simulation_refuses_a_foreign_detour():
    sim = _cup_walk()
    with pytest.raises(ValueError, match="another simulation"):
        cs.run_simulation(sim, 1, detour=cs.Detour(_cup_walk()))
    with pytest.raises(TypeError, match="detour must be a contextsteer.Detour"):
        cs.run_simulation(sim, 1, detour=object())
