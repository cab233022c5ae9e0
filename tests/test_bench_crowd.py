"""benchmarks/crowd_quality.py's pooling and time-to-goal comparison (hand-worked)."""

import math

import numpy as np
import pytest

from bench_modules import load

cq = load("crowd_quality", "bench_crowd_quality_module")

NAN = float("nan")


def test_ttg_vs_counts_only_agents_home_in_both():
    # Agent 0 arrives in both (10 s against 8 s), agent 1 only in the system (it would
    # lower the system's plain mean), agent 2 only in the reference, agent 3 in neither.
    row = {"arrival_s": np.array([10.0, 2.0, NAN, NAN])}
    ref = {"arrival_s": np.array([8.0, NAN, 30.0, NAN])}
    assert math.isclose(cq.ttg_vs(row, ref), 25.0)
    # Over two common agents: (10 + 20) / (8 + 16) - 1 = 25 %; against itself: 0.
    row = {"arrival_s": np.array([10.0, 20.0])}
    ref = {"arrival_s": np.array([8.0, 16.0])}
    assert math.isclose(cq.ttg_vs(row, ref), 25.0)
    assert cq.ttg_vs(row, row) == 0.0


def test_ttg_vs_nan_without_common_arrivals():
    row = {"arrival_s": np.array([5.0, NAN])}
    ref = {"arrival_s": np.array([NAN, 7.0])}
    assert math.isnan(cq.ttg_vs(row, ref))


def _run(collisions, arrived, ttg, arrival):
    return {
        "collisions": collisions,
        "max_penetration_m": 0.0,
        "max_penetration_pct_r": 0.0,
        "wall_penetrations": 0,
        "max_wall_penetration_m": 0.0,
        "arrived_pct": arrived,
        "mean_ttg_s": ttg,
        "jitter_deg_per_step": 1.0,
        "ms_per_step": 0.1,
        "pre_push": None,
        "steps": 10,
        "step_limit": 100,
        "agents": 2,
        "arrival_s": np.array(arrival),
    }


def test_pool_sums_averages_and_keeps_every_agent():
    pooled = cq.pool([_run(2, 100.0, 4.0, [3.0, 5.0]), _run(1, 50.0, 6.0, [6.0, NAN])])
    assert pooled["collisions"] == 3
    assert pooled["arrived_pct"] == 75.0 and pooled["arrived_min_pct"] == 50.0
    assert pooled["mean_ttg_s"] == 5.0
    np.testing.assert_array_equal(pooled["arrival_s"], [3.0, 5.0, 6.0, NAN])


def test_seeded_scenes_build_separated_for_many_seeds():
    # Hallway seed 28's first draw knots against the box edge; _spread draws again (a
    # seed whose first draw separates keeps its scene). The starts are at least two radii
    # and 5 cm apart (goals may coincide: agents retire on arrival).
    for name in cq.SEEDED:
        for seed in range(30) if name == "hallway" else range(8):
            scene = cq.SCENES[name](seed=seed)
            pts = scene.starts
            d = np.linalg.norm(pts[:, None] - pts[None], axis=2) + np.eye(len(pts)) * 1e9
            assert d.min() >= 2 * cq.RADIUS + 0.05 - 1e-9, (name, seed)


def test_every_contextsteer_system_takes_the_run_options():
    # --slots reaches every cs-* adapter (cs-smooth and cs-plain once missed it).
    scene = cq.SCENES["doorway"](seed=0)
    opt = cq.Options(slots=8)
    names = [n for n in cq.SYSTEMS if n.startswith("cs-")]
    assert len(names) == 9
    for name in names:
        system = cq.SYSTEMS[name](scene, opt)
        assert system.agents.slots == 8 and system.sim.slots == 8, name
        danger = (getattr(system.sim.steering, "behaviours", None) or [None])[-1]
        if hasattr(danger, "jam_horizon"):
            # The systems on CROWD's options take its jam horizon (cs-counterflow is the
            # default since the jam horizon joined CROWD); the smooth and plain ones do not.
            uses_crowd = name in (
                "cs-velocity",
                "cs-sliced",
                "cs-counterflow",
                "cs-chord",
                "cs-lateral",
            )
            assert (danger.jam_horizon is not None) == uses_crowd, name
            # Only cs-lateral charges speed across a blocked way.
            lateral = cq.LATERAL_COST if name == "cs-lateral" else 0.0
            assert danger.lateral_cost == lateral, name
        # Only cs-chord scores its interest with the chord shape, on CHORD_CROWD's options.
        goal = (getattr(system.sim.steering, "behaviours", None) or [None])[0]
        assert (getattr(goal, "shape", None) == "chord") == (name == "cs-chord"), name
        if name == "cs-chord":
            from contextsteer import scenarios

            assert danger.horizon == scenarios.CHORD_CROWD["horizon"]
            assert danger.inertia == pytest.approx(scenarios.CHORD_CROWD["inertia"])
            assert system.sim.steering.decision_phases == scenarios.CROWD_PHASES
        # Only cs-sliced decides by Lewis's validity times.
        sliced = system.sim.validity is not None
        assert sliced == (name == "cs-sliced"), name


def test_cs_margin_is_context_steerings_clearance():
    # CS_MARGIN is the margin cs-velocity's CollisionDanger adds to r_i + r_j.
    import contextsteer as cs

    danger = [
        b
        for b in cq.contextsteer_velocity_steering(True).behaviours
        if isinstance(b, cs.CollisionDanger)
    ]
    assert len(danger) == 1 and math.isclose(danger[0].margin, cq.CS_MARGIN, rel_tol=1e-6)


def test_rvo2_margin_plans_with_that_clearance():
    # rvo2-margin keeps that clearance between two agents: r_i + r_j grows by it, so each
    # radius by half of it; plain rvo2 plans with RADIUS.
    pytest.importorskip("pyrvo")
    scene = cq.SCENES["doorway"](seed=0)
    margin = cq.SYSTEMS["rvo2-margin"](scene, cq.Options())
    plain = cq.SYSTEMS["rvo2"](scene, cq.Options())
    for i in range(scene.n):
        assert math.isclose(
            margin.sim.get_agent_radius(i), cq.RADIUS + cq.CS_MARGIN / 2, rel_tol=1e-6
        )
        assert math.isclose(plain.sim.get_agent_radius(i), cq.RADIUS, rel_tol=1e-6)
    # --rvo2-margin reaches it through the run options.
    other = cq.SYSTEMS["rvo2-margin"](scene, cq.Options(rvo2_margin=0.02))
    assert math.isclose(other.sim.get_agent_radius(0), cq.RADIUS + 0.01, rel_tol=1e-6)
    with pytest.raises(ValueError, match="margin"):
        cq.RVO2(scene, margin=float("nan"))


def test_rvo2_accel_moves_within_the_acceleration_limit():
    # rvo2-accel: ORCA chooses freely, the walker follows at most max_accel·dt a step.
    # Invariants checked against the positions alone (an oracle independent of the
    # adapter's bookkeeping): each step's displacement / dt is the velocity moved at, its
    # change between steps is at most max_accel·dt, its norm at most SPEED.
    pytest.importorskip("pyrvo")
    scene = cq.SCENES["crossing"](seed=0)
    accel = cq.SYSTEMS["rvo2-accel"](scene, cq.Options(velocity_accel=2.0))
    assert accel.max_accel == 2.0
    plain = cq.RVO2(cq.SCENES["crossing"](seed=0))
    targets = np.asarray(scene.goals, dtype=np.float64)  # crossing: no gate
    last = np.array(scene.starts, dtype=np.float64)
    v_prev = np.zeros_like(last)
    saw_cap = False
    for _ in range(90):
        accel.set_targets(targets)
        plain.set_targets(targets)
        accel.step()
        plain.step()
        pos = accel.positions().copy()
        v = (pos - last) / cq.DT
        dv = np.linalg.norm(v - v_prev, axis=1)
        # float32 positions in RVO2: a few ulp of ~10 m over dt
        assert np.all(dv <= 2.0 * cq.DT + 1e-3)
        assert np.all(np.linalg.norm(v, axis=1) <= cq.SPEED + 1e-3)
        saw_cap |= bool(np.any(dv > 2.0 * cq.DT * 0.99))
        # ORCA's next lines start from the velocity moved at, not from its own choice.
        own = np.array([[(w := accel.sim.get_agent_velocity(i)).x, w.y] for i in range(scene.n)])
        assert np.allclose(own, v, atol=1e-3)
        last, v_prev = pos, v
    # The cap binds (ORCA alone starts at full speed in one step) ...
    assert saw_cap
    plain_pos = plain.positions()
    first = np.linalg.norm(plain_pos - np.array(scene.starts), axis=1)
    assert np.all(first > np.linalg.norm(pos - np.array(scene.starts), axis=1) - 1e-6)
    # ... and without it the adapter is plain RVO2.
    assert cq.SYSTEMS["rvo2"](scene, cq.Options()).max_accel is None
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="max_accel"):
            cq.RVO2(scene, max_accel=bad)


def test_snap_velocity_picks_the_nearest_candidate():
    # Hand-worked: heading 90° (+y), candidates at 0° and ±90° from it, speeds 0 and 1.
    angles = np.radians([0.0, 90.0, -90.0])
    levels = np.array([0.0, 1.0])
    # (0.2, 0.9): nearest is straight ahead at speed 1, (0, 1).
    np.testing.assert_allclose(
        cq.snap_velocity(np.array([0.2, 0.9]), math.pi / 2, angles, levels), [0.0, 1.0], atol=1e-12
    )
    # (0.9, 0.2): to the right of the heading, i.e. -90° from it: (1, 0).
    np.testing.assert_allclose(
        cq.snap_velocity(np.array([0.9, 0.2]), math.pi / 2, angles, levels), [1.0, 0.0], atol=1e-12
    )
    # (0.1, -0.3): behind, closest to standing.
    np.testing.assert_allclose(
        cq.snap_velocity(np.array([0.1, -0.3]), math.pi / 2, angles, levels), [0.0, 0.0]
    )
    # Directions only: the speed is kept, (3, 4) at speed 5 -> straight ahead, (0, 5).
    np.testing.assert_allclose(
        cq.snap_velocity(np.array([3.0, 4.0]), math.pi / 2, angles, None), [0.0, 5.0], atol=1e-12
    )


def test_snap_velocity_against_brute_force():
    # An independent oracle: every candidate's distance, by a Python loop.
    rng = np.random.default_rng(3)
    angles = np.radians(np.sort(rng.uniform(-180, 180, 7)))
    levels = np.array([0.0, 0.4, 0.9, 1.3])
    for _ in range(200):
        v, h = rng.normal(size=2), float(rng.uniform(-4, 4))
        best, best_d = None, math.inf
        for s in levels:
            for a in angles:
                c = np.array([s * math.cos(h + a), s * math.sin(h + a)])
                d = float(np.sum((c - v) ** 2))
                if d < best_d:
                    best, best_d = c, d
        got = cq.snap_velocity(v, h, angles, levels)
        assert math.isclose(float(np.sum((got - v) ** 2)), best_d, rel_tol=1e-12, abs_tol=1e-15)
        np.testing.assert_allclose(got, best, atol=1e-12)


def test_rvo2_snapped_commands_are_candidates_and_moved_within_the_limit():
    # rvo2-slots: each step ORCA's velocity becomes the nearest candidate in the agent's
    # heading frame (the direction it moved at the step before), which the walker then
    # follows at most max_accel·dt a step. Checked from the positions alone.
    pytest.importorskip("pyrvo")
    import contextsteer as cs

    scene = cq.SCENES["crossing"](seed=0)
    rvo = cq.SYSTEMS["rvo2-slots"](scene, cq.Options())
    angles = np.radians(np.asarray(cs.scenarios.CROWD_SLOT_ANGLES))
    targets = np.asarray(scene.goals, dtype=np.float64)
    last = np.array(scene.starts, dtype=np.float64)
    d0 = targets - last
    heading = np.arctan2(d0[:, 1], d0[:, 0])
    v_prev = np.zeros_like(last)
    known = np.ones(scene.n, dtype=bool)  # at first, facing the first waypoint
    snapped_away = False
    for _ in range(60):
        rvo.set_targets(targets)
        rvo.step()
        pos = rvo.positions().copy()
        v = (pos - last) / cq.DT  # float32 positions: ~1e-4 m/s of rounding
        for i in range(scene.n):
            c = rvo.command[i]
            speed = math.hypot(*c)
            assert np.min(np.abs(cq.SNAP_LEVELS - speed)) < 1e-9
            if speed > 0 and known[i]:
                off = math.remainder(math.atan2(c[1], c[0]) - heading[i], 2 * math.pi)
                wrapped = np.remainder(off - angles + math.pi, 2 * math.pi) - math.pi
                assert np.min(np.abs(wrapped)) < 2e-3
                snapped_away |= abs(off) > 0.05
        dv = np.linalg.norm(v - v_prev, axis=1)
        assert np.all(dv <= 6.0 * cq.DT + 1e-3)
        # The next frame: the direction moved at, where it is well defined from positions.
        known = np.linalg.norm(v, axis=1) > 0.2
        heading[known] = np.arctan2(v[known, 1], v[known, 0])
        last, v_prev = pos, v
    assert snapped_away  # some agent took a side slot (the crossing makes them dodge)
    ring = cq.SYSTEMS["rvo2-ring"](scene, cq.Options(rvo2_ring=8))
    assert len(ring.snap[0]) == 8 and ring.snap[1] is None
    with pytest.raises(ValueError, match="snap needs max_accel"):
        cq.RVO2(scene, snap=(angles, None))


def test_per_seed_line_counts_the_tails():
    bcq = load("bench_crowd_quality")
    # Seed 2 has no agent home in both runs; the others, sorted: -37 -20 -8 10 32 47.
    line = bcq.per_seed_line([32.0, -8.0, NAN, 47.0, -37.0, 10.0, -20.0])
    assert line == (
        "  per seed vs RVO2 (6 seeds): median +1 %, within 15 %: 2, slower by > 15 %: 2, "
        "> 30 %: 2 (seeds 0, 3); faster by > 15 %: 2, > 30 %: 1"
    )
    assert "no seed" in bcq.per_seed_line([NAN, NAN])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--velocity-accel", "0"], "--velocity-accel"),
        (["--velocity-accel", "nan"], "--velocity-accel"),
        (["--velocity-accel", "-1"], "--velocity-accel"),
        (["--rvo2-margin", "-0.1"], "--rvo2-margin"),
        (["--rvo2-ring", "0"], "--rvo2-ring"),
        (["--jps-substeps", "0"], "--jps-substeps"),
        (["--per-seed"], "--per-seed"),
        (["--per-seed", "--seeds", "4", "--systems", "cs-velocity"], "--per-seed"),
        (["--slots", "2"], "--slots must be >= 3"),  # refused before RVO2's row ran
    ],
)
def test_bench_crowd_quality_rejects_bad_options(monkeypatch, argv, message):
    bcq = load("bench_crowd_quality")
    monkeypatch.setattr("sys.argv", ["bench_crowd_quality.py", *argv])
    with pytest.raises(SystemExit, match=message):
        bcq.main()


def test_a_pair_exactly_at_the_contact_distance_is_not_an_overlap():
    """ "Centres closer than r_i + r_j - 0.1 mm overlap": a k-d tree's query_pairs also
    returns pairs at exactly that distance, which counted as an episode."""
    pytest.importorskip("scipy")
    contact = 2 * cq.RADIUS - cq.OVERLAP_TOLERANCE
    far = np.array([[0.0, 50.0], [5.0, 50.0]])
    m = cq.Metrics(cq.Scene("pair", far, far))
    alive = np.ones(2, bool)
    m.update(np.array([[0.0, 0.0], [contact, 0.0]]), alive)
    assert m.collisions == 0 and m.max_penetration == 0.0
    m.update(np.array([[0.0, 0.0], [contact - 0.01, 0.0]]), alive)
    assert m.collisions == 1
    assert m.max_penetration == pytest.approx(cq.OVERLAP_TOLERANCE + 0.01)


def test_rvo2_is_the_reference_whatever_the_order_of_systems(monkeypatch, tmp_path):
    """With rvo2 listed after a system, that system's row had no comparison ("-") and no
    per-seed line, without a word."""
    import json

    pytest.importorskip("pyrvo")
    bcq = load("bench_crowd_quality")
    out = tmp_path / "rows.json"
    argv = ["--systems", "cs-velocity,rvo2", "--scenes", "crossing", "--seeds", "2"]
    monkeypatch.setattr(
        "sys.argv", ["bench_crowd_quality.py", *argv, "--per-seed", "--quick", "--json", str(out)]
    )
    bcq.main()
    rows = {r["system"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["cs-velocity"]["ttg_vs_rvo2_pct"] is not None
    assert len(rows["cs-velocity"]["ttg_vs_rvo2_per_seed"]) == 2


def test_jupedsim_walkable_area_keeps_the_gaps_as_built():
    # Square-capped wall strips reached 5 mm past each wall end: the bottleneck's 1.2 m gap
    # was 1.19 m for JuPedSim alone. Walls that meet still close (one polygon, no holes).
    shapely = pytest.importorskip("shapely")
    for scene, gap in ((cq.bottleneck_scene(), 1.2), (cq.doorway_scene(), 1.8)):
        area = cq.walkable_area(scene)
        across = area.intersection(shapely.LineString([(0, -3), (0, 3)]))
        assert across.length == pytest.approx(gap, abs=1e-9)
        assert area.geom_type == "Polygon" and len(area.interiors) == 0


def test_scene_builders_take_the_seed_as_documented():
    # SCENES is documented as name -> builder (seed=0); the seeded builders took the agent
    # count first, so SCENES["hallway"](0) built no agent and failed in _min_distance.
    for name in cq.SEEDED:
        a, b = cq.SCENES[name](1), cq.SCENES[name](seed=1)
        np.testing.assert_array_equal(a.starts, b.starts)
        assert len(a.starts) > 0


def test_door_run_counts_the_starts_not_through():
    door = load("door_run", "bench_door_run_module")
    w = door.world(1.0)
    assert w.obstacle_count == 3
    pts = door.starts(w, 5)
    assert (cs_nearest(w, pts) > door.RADIUS).all() and (pts[:, 0] < 12).all()
    assert door.failures(1.0, 2.0, 3, 25.0, 8.0) == 0
    assert door.failures(0.7, 1.3, 2, 5.0, 8.0) == 2  # narrower than the body: none


def cs_nearest(w, pts):
    import contextsteer as cs

    return cs.nearest(w, pts, 5.0).distance


class _GivesUp:
    """A system that walks everyone 1 cm a step along +x and raises at its third step."""

    def __init__(self, scene):
        self.pos = np.array(scene.starts, dtype=np.float64)
        self.calls = 0

    def set_targets(self, targets):
        pass

    def step(self):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("Point (1, 2) is outside of accessible area")
        self.pos[:, 0] += 0.01

    def positions(self):
        return self.pos

    def retire(self, ids):
        pass


def test_a_system_that_raises_ends_its_run_with_the_reason():
    scene = cq.crossing_scene()
    r = cq.run(_GivesUp(scene), scene)
    # Two steps done; the third raised at t = 2 dt (0.1 s shown with one decimal).
    assert r["steps"] == 2 and r["stopped"].startswith("RuntimeError at 0.1 s: Point (1, 2)")
    assert r["arrived_pct"] == 0.0 and math.isnan(r["mean_ttg_s"])
    pooled = cq.pool([{**_run(0, 100.0, 4.0, [3.0, 5.0]), "stopped": ""}, {**r}])
    assert pooled["stopped"] == f"seed 1: {r['stopped']}"


@pytest.mark.parametrize("model", sorted(cq.JPS_MODELS))
def test_every_jupedsim_model_walks_the_protocols_agents(model):
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    scene = cq.crossing_scene()
    system = cq.JuPedSim(scene, model)
    r = cq.run(system, scene, steps=30)
    assert r["stopped"] == "" and r["steps"] == 30
    moved = np.linalg.norm(system.positions() - scene.starts, axis=1)
    assert np.all(moved > 0.05)  # everyone set off towards its waypoint in a second


def test_jupedsim_substeps_cover_one_protocol_step():
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    scene = cq.crossing_scene()
    system = cq.SYSTEMS["jupedsim-sfm"](scene, cq.Options(jps_substeps=3))
    system.set_targets(scene.targets(scene.starts, scene.gate_side() == 0))
    system.step()
    assert system.sim.iteration_count() == 3
    assert system.sim.elapsed_time() == pytest.approx(cq.DT)
    with pytest.raises(ValueError, match="substeps"):
        cq.JuPedSim(scene, "sfm", substeps=0)


@pytest.mark.parametrize(
    "name, state",
    [
        ("jupedsim-cfsm", "CollisionFreeSpeedModelState"),
        ("jupedsim-sfm", "SocialForceModelState"),
        ("jupedsim-avm", "AnticipationVelocityModelState"),
        ("jupedsim-warp", "WarpDriverModelState"),
    ],
)
def test_each_jupedsim_system_runs_its_own_model(name, state):
    pytest.importorskip("jupedsim")
    pytest.importorskip("shapely")
    system = cq.SYSTEMS[name](cq.crossing_scene(), cq.Options())
    assert {type(a.model).__name__ for a in system.sim.agents()} == {state}
