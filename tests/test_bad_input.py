"""The bad-input matrix (issue 13): every public entry point meets wrong dtypes, wrong
shapes, NaN/inf, overflowing scalars, negative sizes and huge counts, and answers with
TypeError / ValueError / MemoryError whose message names the argument — never a crash, a
hang, or a silently wrong result."""

from __future__ import annotations

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import rimea, video

NAN, INF = float("nan"), float("inf")
S8 = cs.SlotSet(8)
M = np.zeros((4, 8), np.float32)


def world():
    w = cs.World()
    w.add_segments([[0, -5, 0, 5]])
    return w


def agents(n=3):
    a = cs.Agents(n, slots=8)
    a.add(np.arange(2 * n, dtype=np.float32).reshape(n, 2))
    return a


CASES = [
    # ---- maps
    ("dot_map vectors shape", lambda: cs.dot_map(S8, np.zeros((3, 3))), ValueError, "vectors"),
    ("dot_map vectors NaN", lambda: cs.dot_map(S8, [[NAN, 0]]), ValueError, "vectors"),
    ("dot_map weight inf", lambda: cs.dot_map(S8, [[1, 0]], weight=INF), ValueError, "weight"),
    ("dot_map weight 1e300", lambda: cs.dot_map(S8, [[1, 0]], weight=1e300), ValueError, "weight"),
    ("dot_map shape name", lambda: cs.dot_map(S8, [[1, 0]], shape="round"), ValueError, "shape"),
    ("combine NaN in a stack", lambda: cs.combine([M, M + NAN]), ValueError, r"\(1, 0, 0\)"),
    ("combine 3e38", lambda: cs.combine([M + 3e38]), ValueError, "magnitude"),
    ("combine mode", lambda: cs.combine([M], mode="avg"), ValueError, "mode"),
    ("resolve danger shape", lambda: cs.resolve(M, np.zeros((4, 7))), ValueError, "danger"),
    ("resolve threshold NaN", lambda: cs.resolve(M, M, threshold=NAN), ValueError, "threshold"),
    ("resolve mode", lambda: cs.resolve(M, M, mode="xor"), ValueError, "mode"),
    ("choose K mismatch", lambda: cs.choose(np.zeros((2, 7)), S8), ValueError, "K = 7"),
    ("choose inf", lambda: cs.choose(M + INF, S8), ValueError, "values"),
    ("blend alpha 2", lambda: cs.blend(M, M, 2.0), ValueError, "alpha"),
    ("spread even kernel", lambda: cs.spread(M, [1, 1]), ValueError, "kernel"),
    ("SlotSet k=2", lambda: cs.SlotSet(2), ValueError, "K >= 3"),
    ("ContextMaps huge", lambda: cs.ContextMaps(2**61, 8), MemoryError, "needs about"),
    ("ContextMaps float n", lambda: cs.ContextMaps(2.5, 8), TypeError, "n must be an int"),
    # ---- world and queries
    ("segments NaN", lambda: world().add_segments([[0, 0, NAN, 1]]), ValueError, "segments"),
    ("segments 1e20", lambda: world().add_segments([[0, 0, 1e20, 1]]), ValueError, "segments"),
    ("segments shape", lambda: world().add_segments([[0, 0, 1]]), ValueError, "segments"),
    ("circles negative", lambda: world().add_circles([[0, 0]], [-1.0]), ValueError, "radi"),
    (
        "raycast dtype",
        lambda: cs.raycast(world(), np.zeros((1, 2), np.complex64), [[1, 0]], 1.0),
        TypeError,
        "complex",
    ),
    # Complex input was cast to float32 with its imaginary part dropped (a ComplexWarning
    # at most) by these entry points, found by a bad-input fuzz run.
    *[
        (f"complex {name}", call, TypeError, f"{arg}: expected real numbers")
        for name, call, arg in [
            ("segments", lambda: cs.World().add_segments(np.array([[0, 0, 1, 1j]])), "segments"),
            ("polyline", lambda: cs.World().add_polyline(np.array([[0, 0], [1, 1j]])), "points"),
            (
                "polygon",
                lambda: cs.World().add_polygon(np.array([[0, 0], [1, 0], [0, 1j]])),
                "ring",
            ),
            ("centers", lambda: cs.World().add_circles(np.array([[0, 1j]]), [1.0]), "centers"),
            ("radii", lambda: cs.World().add_circles([[0, 0]], np.array([1j])), "radii"),
            (
                "directions",
                lambda: cs.raycast(world(), [[1, 0]], np.array([[1, 1j]]), 1.0),
                "directions",
            ),
            ("max_dist", lambda: cs.raycast(world(), [[1, 0]], [[1, 0]], 1.0 + 1j), "max_dist"),
            (
                "headings",
                lambda: cs.slot_raycast(world(), [[1, 0]], S8, 1.0, headings=np.array([1j])),
                "headings",
            ),
            (
                "sweep start",
                lambda: cs.sweep_circle(world(), np.array([[1, 1j]]), [[1, 0]], 0.1),
                "start",
            ),
            ("combine", lambda: cs.combine([M + 0j]), "maps\\[0\\]"),
            (
                "neighbours",
                lambda: cs.neighbours(np.ones((3, 2), complex), radius=1.0, max_neighbours=2),
                "positions",
            ),
            ("Seek targets", lambda: cs.Seek(targets=np.ones((3, 2), complex)), "targets"),
            ("agent_weights", lambda: cs.Seek(agent_weights=np.ones(3, complex)), "agent_weights"),
            ("Path", lambda: cs.Path(np.array([[0, 0], [1, 1j], [2, 0]])), "points"),
            ("Steering spread", lambda: cs.Steering([cs.Seek()], spread=[1j, 1, 1j]), "spread"),
            ("NavField goal", lambda: cs.NavField(world(), np.array([1, 1j])), "goal"),
            (
                "FollowFlowField",
                lambda: cs.classic.FollowFlowField(np.ones((4, 4, 2), complex)),
                "field",
            ),
            (
                "Lerp.apply",
                lambda: cs.Lerp().apply(agents(1), [[1, 1j]], [1.0], dt=0.5),
                "direction",
            ),
        ]
    ],
    (
        "raycast NaN origin",
        lambda: cs.raycast(world(), [[NAN, 0]], [[1, 0]], 1.0),
        ValueError,
        "origins",
    ),
    (
        "raycast zero direction",
        lambda: cs.raycast(world(), [[1, 0]], [[0, 0]], 1.0),
        ValueError,
        "direction",
    ),
    (
        "raycast radius 1e30",
        lambda: cs.raycast(world(), [[1, 0]], [[1, 0]], 1.0, radius=1e30),
        ValueError,
        "radius",
    ),
    ("nearest max_dist -1", lambda: cs.nearest(world(), [[1, 0]], -1.0), ValueError, "max_dist"),
    (
        "neighbors radius 1e300",
        lambda: cs.neighbours(np.zeros((2, 2), np.float32), radius=1e300, max_neighbours=1),
        ValueError,
        "radius",
    ),
    (
        "neighbors max 1000",
        lambda: cs.neighbours(np.zeros((2, 2), np.float32), radius=1.0, max_neighbours=1000),
        ValueError,
        "max_neighbours",
    ),
    ("Path one point", lambda: cs.Path([[0, 0]]), ValueError, "at least 2 distinct points"),
    ("Path NaN", lambda: cs.Path([[0, 0], [NAN, 1]]), ValueError, r"points: .* index \(1, 0\)"),
    # ---- agents and behaviours
    ("Agents capacity -1", lambda: cs.Agents(-1), ValueError, "capacity"),
    ("Agents capacity 2**40", lambda: cs.Agents(2**40), ValueError, "capacity"),
    ("Agents slots 2", lambda: cs.Agents(3, slots=2), ValueError, "slots"),
    (
        "add radius negative",
        lambda: cs.Agents(1).add([[0, 0]], radius=-1),
        ValueError,
        "radius must be >= 0",
    ),
    ("add position NaN", lambda: cs.Agents(2).add([[NAN, 0]]), ValueError, "position"),
    ("add group 2**40", lambda: cs.Agents(2).add([[0, 0]], group=2**40), ValueError, "group"),
    ("add over capacity", lambda: cs.Agents(1).add([[0, 0], [1, 1]]), ValueError, "capacity"),
    ("Seek max_distance -1", lambda: cs.Seek(max_distance=-1), ValueError, "max_distance"),
    ("AgentDanger radius 0", lambda: cs.AgentDanger(radius=0), ValueError, "radius"),
    ("CollisionDanger speeds 0", lambda: cs.CollisionDanger(speeds=0), ValueError, "speeds"),
    (
        "CollisionDanger reciprocity 1",
        lambda: cs.CollisionDanger(reciprocity=1.0),
        ValueError,
        "reciprocity",
    ),
    ("CollisionDanger side", lambda: cs.CollisionDanger(side="up"), ValueError, "side"),
    ("WallDanger spread -1", lambda: cs.WallDanger(spread=-1), ValueError, "spread"),
    ("agent_weights NaN", lambda: cs.Seek(agent_weights=[NAN]), ValueError, "agent_weights"),
    ("Pursue id 2**32", lambda: cs.Pursue(targets=[2**32 + 1]), ValueError, "agent ids"),
    ("Steering mode", lambda: cs.Steering([], resolve="nope"), ValueError, "resolve"),
    ("Steering not a behaviour", lambda: cs.Steering([42]), TypeError, "behaviours"),
    ("Steering hysteresis -1", lambda: cs.Steering([], hysteresis=-1), ValueError, "hysteresis"),
    (
        "Steering decision_phases 0",
        lambda: cs.Steering([], decision_phases=0),
        ValueError,
        "decision_phases",
    ),
    # ---- simulation
    ("Simulation world str", lambda: cs.Simulation("x", agents(), [cs.Seek()]), TypeError, "world"),
    (
        "Simulation slots 2",
        lambda: cs.Simulation(None, agents(), [cs.Seek()], slots=2),
        ValueError,
        "slots",
    ),
    (
        "Simulation interval 2**62",
        lambda: cs.Simulation(None, agents(), [cs.Seek()], decision_interval=2**62),
        ValueError,
        "decision_interval",
    ),
    ("step dt 0", lambda: cs.Simulation(None, agents(), [cs.Seek()]).step(0.0), ValueError, "dt"),
    (
        "step dt 1e300",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).step(1e300),
        ValueError,
        "dt",
    ),
    (
        "step steps -1",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).step(0.1, -1),
        ValueError,
        "steps",
    ),
    (
        "Lerp apply dt 1e300",
        lambda: cs.Lerp().apply(
            agents(), np.ones((3, 2), np.float32), np.ones(3, np.float32), dt=1e300
        ),
        ValueError,
        "dt",
    ),
    (
        "record every 0",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).record(every=0),
        ValueError,
        "every",
    ),
    (
        "metrics tolerance 2",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(contact_tolerance=2.0),
        ValueError,
        "contact_tolerance",
    ),
    ("load not a file", lambda: cs.load(__file__), ValueError, "not a contextsteer simulation"),
    # ---- configure_metrics: beyond float32, flags that are not bools, overtakes off a lap
    (
        "metrics goal_radius 1e39",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(goal_radius=1e39),
        ValueError,
        "goal_radius",
    ),
    (
        "metrics clearance_range 1e40",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(clearance_range=1e40),
        ValueError,
        "clearance_range",
    ),
    (
        "metrics enabled 'no'",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(enabled="no"),
        TypeError,
        "enabled must be a bool, got str",
    ),
    (
        "metrics overtakes 'false'",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(
            overtakes="false", path=cs.Path([[0, 0], [1, 0], [1, 1]], closed=True)
        ),
        TypeError,
        "overtakes must be a bool, got str",
    ),
    (
        "metrics overtakes on an open path",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(
            overtakes=True, path=cs.Path([[0, 0], [10, 0]])
        ),
        ValueError,
        "overtakes need a closed path.*got an open path",
    ),
    (
        "metrics overtakes without a path",
        lambda: cs.Simulation(None, agents(), [cs.Seek()]).configure_metrics(overtakes=True),
        ValueError,
        "overtakes need a closed path.*got no path",
    ),
    # ---- History: integer counts in range, bool flags
    (
        "History reserve 2.5",
        lambda: cs.History(cs.Simulation(None, agents(), [cs.Seek()]), reserve=2.5),
        TypeError,
        "reserve must be an int, got float",
    ),
    (
        "History reserve '3'",
        lambda: cs.History(cs.Simulation(None, agents(), [cs.Seek()]), reserve="3"),
        TypeError,
        "reserve must be an int, got str",
    ),
    (
        "History maps 'no'",
        lambda: cs.History(cs.Simulation(None, agents(), [cs.Seek()]), maps="no"),
        TypeError,
        "maps must be a bool, got str",
    ),
    (
        "History every 2**63",
        lambda: cs.History(cs.Simulation(None, agents(), [cs.Seek()]), every=2**63),
        ValueError,
        r"every must be in \[1, 9223372036854775807\], got 9223372036854775808",
    ),
    (
        "History reserve 2**63",
        lambda: cs.History(cs.Simulation(None, agents(), [cs.Seek()]), reserve=2**63),
        ValueError,
        r"reserve must be in \[1, 2147483647\], got 9223372036854775808",
    ),
]


def _edited(**values):
    """agents() after writing values through the views (what only Simulation.step checked:
    a negative radius made the functional calls segfault, a NaN position hang)."""
    a = agents()
    for name, v in values.items():
        getattr(a, name)[0] = v
    return a


def _walled_agents(**values):
    a = cs.Agents(1, slots=8)
    a.add([[-0.5, 0.0]], max_speed=1.0, velocity=[[1.0, 0.0]], target=[[5.0, 0.0]])
    for name, v in values.items():
        getattr(a, name)[0] = v
    return a


CASES += [
    # ---- agent state written through the views, met by the functional calls (fuzz finds)
    (
        "WallDanger.evaluate negative radius (segfault)",
        lambda: cs.WallDanger(look_ahead=2).evaluate(
            _walled_agents(radius=-1e-3), 8, world=world()
        ),
        ValueError,
        r"Behaviour.evaluate: agents.radius",
    ),
    (
        "CollisionDanger.evaluate negative radius",
        lambda: cs.CollisionDanger().evaluate(_walled_agents(radius=-1e-3), 8, world=world()),
        ValueError,
        r"agents.radius",
    ),
    (
        "classic ray avoidance NaN position (hang)",
        lambda: cs.classic.accelerations(
            world(), _walled_agents(position=[NAN, 0.0]), cs.classic.RaycastObstacleAvoidance()
        ),
        ValueError,
        r"classic.accelerations: agents.position",
    ),
    (
        "classic Arrive NaN max_speed (NaN out)",
        lambda: cs.classic.accelerations(None, _edited(max_speed=NAN), cs.classic.Arrive([1, 1])),
        ValueError,
        r"agents.max_speed",
    ),
    (
        "Lerp.step inf velocity (NaN positions)",
        lambda: cs.Lerp().step(_edited(velocity=[INF, 0.0]), np.zeros((3, 2)), np.zeros(3), 0.1),
        ValueError,
        r"motion: agents.velocity",
    ),
    (
        "steer_force 5 written through the view",
        lambda: cs.Simulation(None, _edited(steer_force=5.0), [cs.Seek()]).step(0.1),
        ValueError,
        r"steer_force",
    ),
    # ---- values silently coerced or rounded
    ("SlotSet(8.7)", lambda: cs.SlotSet(8.7), TypeError, "k must be an int"),
    ("slot_directions('8')", lambda: cs.slot_directions("8"), TypeError, "k must be an int"),
    ("Agents seed 2.7", lambda: cs.Agents(2, seed=2.7), TypeError, "seed must be an int"),
    (
        "CollisionDanger reciprocity 1 - 1e-9 (1.0 as a float32)",
        lambda: cs.CollisionDanger(reciprocity=1 - 1e-9),
        ValueError,
        r"reciprocity must be in \[0, 1\) as a float32",
    ),
    (
        "CollisionDanger horizon 1e-50 (0 as a float32)",
        lambda: cs.CollisionDanger(horizon=1e-50),
        ValueError,
        r"horizon must be > 0 as a float32",
    ),
    (
        "Path beyond 1e8",
        lambda: cs.Path([[0, 0], [10, 0]]).closest_offset([[1e9, 1.0]]),
        ValueError,
        r"within ±1e\+08",
    ),
    ("Path built beyond 1e8", lambda: cs.Path([[0, 0], [1e9, 0]]), ValueError, r"±1e\+08"),
    (
        "classic Pursue id 2**31",
        lambda: cs.classic.Pursue([2**31]),
        ValueError,
        r"agent ids must be in \[0, 2\*\*31\)",
    ),
    ("classic Interpose id 2**63", lambda: cs.classic.Interpose(0, 2**63), ValueError, "b must be"),
    (
        "add_box centre 1e17 (a grid of infinite cells, a raycast that never returned)",
        lambda: cs.World().add_box((1e17, 0.0), (1.0, 1.0)),
        ValueError,
        "center",
    ),
    (
        "add_box half extents 3e38",
        lambda: cs.World().add_box((0.0, 0.0), (3e38, 3e38)),
        ValueError,
        "half_extents",
    ),
    (
        "add_box corners beyond 1e8",
        lambda: cs.World().add_box((9e7, 0.0), (9e6, 9e6), angle=0.7),
        ValueError,
        "corners must lie within",
    ),
    (
        "classic accelerations world 'w'",
        lambda: cs.classic.accelerations("w", agents(), cs.classic.Seek([1, 1])),
        TypeError,
        "world must be a contextsteer.World or None",
    ),
]


def test_agents_beyond_the_machine_memory_raise_memory_error(monkeypatch):
    # Agents(2**30) zero-filled 65 GiB and was killed by the kernel; it is now refused as
    # ContextMaps is (the machine's memory is patched small here, so nothing is allocated
    # if the check were gone: 6.5 MB).
    monkeypatch.setattr(cs.maps, "_physical_memory", lambda: 2**20)
    with pytest.raises(MemoryError, match=r"Agents\(100000\) needs about"):
        cs.Agents(100_000)


def test_classic_parameters_are_read_only():
    # Arrive.time_to_target = 0 was accepted after the checks and gave NaN accelerations.
    arrive = cs.classic.Arrive([1.0, 1.0])
    with pytest.raises(AttributeError, match="read-only: build a new behaviour"):
        arrive.time_to_target = 0.0
    assert arrive.time_to_target == 0.1


def test_a_flow_field_is_copied_when_given():
    field = np.zeros((4, 4, 2), np.float32)
    field[..., 0] = 1.0
    follow = cs.classic.FollowFlowField(field)
    field[...] = np.nan  # the caller's array, edited later
    a = cs.Agents(1)
    a.add([[1.5, 1.5]], max_speed=1.0, max_accel=1.0)
    acc = cs.classic.accelerations(None, a, follow)
    assert np.isfinite(acc).all() and acc[0, 0] > 0


CASES += [
    # ---- fuzz round 8: the docstrings' promises against the code
    ("Wander seed float", lambda: cs.Wander(seed=1.5), TypeError, "Wander: seed must be an int"),
    ("Wander seed bool", lambda: cs.Wander(seed=True), TypeError, "Wander: seed must be an int"),
    ("Wander seed nan", lambda: cs.Wander(seed=NAN), TypeError, "Wander: seed must be an int"),
    ("Wander seed 2**64", lambda: cs.Wander(seed=2**64), ValueError, "Wander: seed must be in"),
    ("route world str", lambda: cs.route("x", [[0, 0]], [[1, 1]]), TypeError, "world: expected"),
    ("route world None", lambda: cs.route(None, [[0, 0]], [[1, 1]]), TypeError, "world: expected"),
    (
        "sweep_circle world str",
        lambda: cs.sweep_circle("x", [[0, 0]], [[1, 0]], 0.1),
        TypeError,
        "world: expected",
    ),
    (
        "sweep_circle iterations float",
        lambda: cs.sweep_circle(world(), [[0, 0]], [[1, 0]], 0.1, iterations=2.7),
        TypeError,
        "sweep_circle: iterations must be an int",
    ),
    (
        "sweep_circle layers -1",
        lambda: cs.sweep_circle(world(), [[0, 0]], [[1, 0]], 0.1, layers=-1),
        ValueError,
        "layers: expected a 32-bit mask",
    ),
    (
        "evaluate world str",
        lambda: cs.Seek().evaluate(agents(), 8, world="x"),
        TypeError,
        "world: expected a contextsteer.World or None",
    ),
    ("History sim str", lambda: cs.History("x"), TypeError, "History: sim must be a Simulation"),
    (
        "Tether center beyond 1e8",
        lambda: cs.Tether(center=(2e8, 0)),
        ValueError,
        "Tether: center must be finite and at most 1e8",
    ),
    (
        "Bounds hi beyond 1e8",
        lambda: cs.Bounds(hi=(1e30, 1e30)),
        ValueError,
        "Bounds: hi must be finite and at most 1e8",
    ),
    (
        "classic FollowFlowField origin beyond 1e8",
        lambda: cs.classic.FollowFlowField(np.ones((2, 2, 2)), origin=(2e8, 0)),
        ValueError,
        "origin must be at most 1e8",
    ),
    (
        "crowd_slots_for danger typo",
        lambda: cs.scenarios.crowd_slots_for(danger="velocityy"),
        ValueError,
        "crowd_slots_for: danger must be",
    ),
    (
        "crowd_slots_for 2 slots",
        lambda: cs.scenarios.crowd_slots_for(2),
        ValueError,
        "crowd_slots_for: slots must be an integer in",
    ),
    (
        "scenario steps float",
        lambda: cs.scenarios.scenario("bad-steps", steps=1.5),
        ValueError,
        "steps must be an integer > 0",
    ),
    (
        "check_fps unknown format",
        lambda: __import__("contextsteer.video").video.check_fps(15, "avi"),
        ValueError,
        "format must be 'gif' or 'mp4'",
    ),
    (
        "slot_raycast headings of the wrong length",
        lambda: cs.slot_raycast(
            world(), [[0, 0], [0, 1]], cs.slot_directions(4), 2.0, headings=[0.5]
        ),
        ValueError,
        r"headings: expected a scalar or shape \(2,\)",
    ),
]


def _history():
    sim = cs.Simulation(None, agents(), [cs.Forward()])
    return sim, cs.run_simulation(sim, 3, dt=0.1, records=3).history


# Flags are bools (or 0 and 1): ``bool("no")`` is True, so a string, None or 2 is refused
# rather than read as a choice; and the messages of the last audit name their argument.
CASES += [
    ("clamp 'no'", lambda: cs.Separation(clamp="no"), TypeError, "Separation: clamp"),
    ("behaviour flag", lambda: cs.AgentDanger(predictive="false"), TypeError, "predictive"),
    (
        "evaluate rotate",
        lambda: cs.Seek().evaluate(agents(), S8, rotate="yes"),
        TypeError,
        "evaluate: rotate",
    ),
    ("Path closed", lambda: cs.Path([[0, 0], [1, 0]], closed="no"), TypeError, "Path: closed"),
    ("Path smooth", lambda: cs.Path([[0, 0], [1, 0]], smooth=2), TypeError, "Path: smooth"),
    (
        "Path smooth memory",
        lambda: cs.Path(
            np.zeros((10**8, 2)) + np.arange(10**8)[:, None], smooth=True, samples_per_segment=4096
        ),
        MemoryError,
        "Path: smoothing",
    ),  # fmt: skip
    ("choose contiguous", lambda: cs.choose(M, S8, contiguous="no"), TypeError, "contiguous"),
    ("dot_map magnitude", lambda: cs.dot_map(S8, [[1, 0]], magnitude="no"), TypeError, "magn"),
    (
        "push_apart",
        lambda: cs.Simulation(None, agents(), [cs.Forward()], push_apart="no"),
        TypeError,
        "push_apart",
    ),
    (
        "add_polyline closed",
        lambda: cs.World().add_polyline([[0, 0], [1, 0]], closed=None),
        TypeError,
        "add_polyline: closed",
    ),
    (
        "classic push_overlapping",
        lambda: cs.classic.CollisionAvoidance(push_overlapping="False"),
        TypeError,
        "push_overlapping",
    ),
    ("neighbours row width", lambda: cs.neighbours([[0, 0]], 1.0, 2**40), ValueError, r"0, 256"),
    ("dot_map text", lambda: cs.dot_map(S8, "ab"), TypeError, "vectors: expected an array"),
    ("radii as text", lambda: cs.World().add_circles([[0, 0]], ["1"]), TypeError, "radii"),
    (
        "hole outside its polygon",
        lambda: cs.World().add_polygon(
            [[0, 0], [10, 0], [10, 10], [0, 10]], holes=[[[20, 20], [30, 20], [30, 30]]]
        ),
        ValueError,
        r"holes\[0\] vertex 0 \[20.0, 20.0\] lies outside the ring",
    ),
    ("None in a list", lambda: cs.dot_map(S8, [[1, None]]), TypeError, "dtype object"),
    ("cell_size text", lambda: setattr(cs.World(), "cell_size", "2"), TypeError, "cell_size"),
    (
        "classic agents None",
        lambda: cs.classic.accelerations(None, None, cs.classic.Seek([1, 1])),
        TypeError,
        "accelerations: agents must be",
    ),
    ("steer danger None", lambda: cs.steer([M], None, S8), TypeError, "danger: expected"),
    ("Agents slots 2**63", lambda: cs.Agents(2, slots=2**63), ValueError, "at most 65536"),
    (
        "add_occupancy tiny cell",
        lambda: cs.World().add_occupancy(np.ones((2, 2), bool), cell=1e-46),
        ValueError,
        "add_occupancy: cell",
    ),
    # Empty goals in a world without obstacles: NumPy's "zero-size array to reduction
    # operation maximum" escaped (fuzz round 13).
    (
        "NavField empty goals, empty world",
        lambda: cs.NavField(cs.World(), np.zeros((0, 2))),
        ValueError,
        r"goals\[0\]: expected at least one point, segment or polygon",
    ),
    (
        "NavField goal sets mixed",
        lambda: cs.NavField(cs.World(), [{"points": [[0, 0]]}, [[1, 1]]], cell=0.5),
        TypeError,
        "goals: a list of goal sets",
    ),
    (
        "NavField ragged goals",
        lambda: cs.NavField(cs.World(), [[0, 0], [[1, 1], [2, 2]]], cell=0.5),
        ValueError,
        "several goal sets are a list",
    ),
    (
        "NavField goal sets as nested lists",
        lambda: cs.NavField(cs.World(), [[[0, 0]], [[1, 1]]], cell=0.5),
        ValueError,
        r"got shape \(2, 1, 2\) \(several goal sets: a list of NumPy arrays or dicts",
    ),
    (
        "run callback",
        lambda: cs.run_simulation(cs.Simulation(None, agents(), [cs.Forward()]), 1, callback=5),
        TypeError,
        "callback must be callable",
    ),
    (
        "animate interval 0",
        lambda: cs.plot.animate(_history()[1], interval=0),
        ValueError,
        "interv",
    ),
    ("animate interval -5", lambda: cs.plot.animate(_history()[1], interval=-5), ValueError, "int"),
    (
        "scene margin NaN",
        lambda: cs.plot.scene(_history()[0], margin=NAN),
        ValueError,
        "scene: margin",
    ),
    (
        "metrics series with bars",
        lambda: cs.plot.metrics(_history()[0].metrics(), series=["arrived"]),
        ValueError,
        "series picks the time series",
    ),
    (
        "nearest max_dist 1.5e8",
        lambda: cs.nearest(world(), [[0, 0]], 1.5e8),
        ValueError,
        r"max_dist must be a finite number >= 0 and at most 1e8, got 1.5e\+08",
    ),
]


def _sweep(**kw):
    args = dict(seeds=[0], steps=1, executor="serial", progress=False)
    return cs.sweep("oncoming", **{**args, **kw})


def _tune(**kw):
    pytest.importorskip("optuna")
    args = dict(n_trials=1, steps=1, executor="serial", progress=False)
    return cs.tune("oncoming", {"slots": [8, 16]}, **{**args, **kw})


def _combine_over_weights():
    """combine with its out= array over the weights it reads."""
    buf = np.zeros(16, np.float32)
    buf[:3] = [0.5, 2, 1]
    maps = np.ones((3, 2, 8), np.float32)
    return cs.combine(maps, "weighted_sum", buf[:3], out=buf.reshape(2, 8))


def _spread_over_kernel():
    """spread with its out= array over the kernel it reads (one buffer holds both)."""
    buf = np.zeros(16, np.float32)
    buf[:3] = [0.25, 0.5, 0.25]
    return cs.spread(np.ones((2, 8), np.float32), buf[:3], out=buf.reshape(2, 8))


def _recorded():
    """A simulation of 3 agents and 8 slots, and its History of 3 steps with maps."""
    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [1, 0], [2, 0]])
    sim = cs.Simulation(None, a, [cs.Forward()])
    history = sim.record(maps=True)
    sim.step(0.1, steps=3)
    return sim, history


def _three_of_ten():
    a = cs.Agents(10)
    a.add([[0, 0], [2, 0], [1, 1]])
    return a


def _four_agents() -> cs.Agents:
    a = cs.Agents(4)
    a.add([[0, 0], [0.5, 0], [0, 0.5], [0.5, 0.5]])
    return a


# The second audit: sizes that would exhaust memory or time, and arguments that were
# silently ignored, now refused up front.
CASES += [
    # A scalar where points are expected names the shape given, (), not the (1,) the
    # float32 conversion makes of it.
    (
        "raycast origins a scalar",
        lambda: cs.raycast(cs.World(), np.float32(3), np.zeros((1, 2)), 1.0),
        ValueError,
        r"origins: expected shape \(N, 2\), got \(\)$",
    ),
    (
        "closest_offset a scalar",
        lambda: cs.Path([[0, 0], [1, 0]]).closest_offset(3.0),
        ValueError,
        r"got \(\)$",
    ),
    (
        "crowd_steering extra one behaviour",
        lambda: cs.scenarios.crowd_steering(extra=cs.Seek()),
        TypeError,
        r"put it in a list, \[Seek\(\.\.\.\)\]",
    ),
    (
        "crowd_steering extra None",
        lambda: cs.scenarios.crowd_steering(extra=None),
        TypeError,
        "extra must be a sequence of behaviours, got NoneType",
    ),
    (
        "crowd_steering changes an unknown option",
        lambda: cs.scenarios.crowd_steering(changes={"horizonn": 1.0}),
        TypeError,
        "changes has 'horizonn', not an option of CollisionDanger; its options are .*horizon",
    ),
    (
        "crowd_steering options an unknown option",
        lambda: cs.scenarios.crowd_steering(options={"horizonn": 1.0}),
        TypeError,
        "options has 'horizonn'",
    ),
    (
        "crowd_steering changes clashing with CROWD",
        lambda: cs.scenarios.crowd_steering(changes={"horizon": 1.0}),
        ValueError,
        r"same_way_horizon=1\.6 from CROWD, kept by changes=: change it too",
    ),
    (
        "agent_weights a scalar",
        lambda: cs.Seek(agent_weights=0.5),
        ValueError,
        r"Seek: agent_weights must have shape \(capacity,\), got a scalar, 0\.5 \(weight=",
    ),
    (
        "agent_weights of another capacity",
        lambda: cs.Simulation(None, cs.Agents(4), [cs.Seek(agent_weights=np.ones(10))]),
        ValueError,
        r"Seek: agent_weights: expected one weight per agent slot, shape \(4,\) \(the agents'",
    ),
    (
        "SlotSet a gap wider than 180 degrees",
        lambda: cs.SlotSet.from_directions(np.c_[np.cos([0.1, 0.5, 1.0]), np.sin([0.1, 0.5, 1.0])]),
        ValueError,
        "by less than 180 degrees",
    ),
    ("route starts a scalar", lambda: cs.route(cs.World(), 2.0, [0, 0]), ValueError, r"got \(\)$"),
    ("Agents slots 1e9", lambda: cs.Agents(1, slots=10**9), ValueError, "at most 65536"),
    (
        "Simulation slots 1e9",
        lambda: cs.Simulation(None, agents(), [cs.Forward()], slots=10**9),
        ValueError,
        "slots",
    ),
    (
        "Simulation memory",
        lambda: cs.Simulation(None, cs.Agents(10**6, slots=65536), [cs.Forward()]),
        MemoryError,
        "1,000,000 agents × 65,536 slots",
    ),
    ("evaluate K 1e9", lambda: cs.Seek().evaluate(agents(), 10**9), ValueError, "most 65536"),
    ("evaluate agents None", lambda: cs.Seek().evaluate(None, 8), TypeError, "evaluate: agents"),
    (
        "circle of a million",
        lambda: cs.scenarios.get("circle")(agents=10**6, radius=1.0),
        ValueError,
        r"1,000,000 of them where at most 23 bodies",
    ),
    (
        "RiMEA ring of 1e8 agents",
        lambda: rimea.fundamental_point(10, radius=999, width=1990),
        ValueError,
        "needs 124,910,352 agents",
    ),
    ("sweep workers serial", lambda: _sweep(workers=4), ValueError, "workers sizes the local"),
    ("sweep progress 'no'", lambda: _sweep(progress="no"), TypeError, "sweep: progress"),
    ("sweep repeated seeds", lambda: _sweep(seeds=[0, 0]), ValueError, r"seeds repeat \[0\]"),
    ("sweep threads 1e9", lambda: _sweep(threads=10**9), ValueError, r"threads must be in"),
    ("tune workers serial", lambda: _tune(workers=4), ValueError, "workers has no use"),
    ("tune progress 'no'", lambda: _tune(progress="no"), TypeError, "tune: progress"),
    ("tune seed -1", lambda: _tune(seed=-1), ValueError, r"tune: seed \(the sampler's\)"),
    ("tune params text", lambda: _tune(params="ab"), TypeError, "tune: params must be a dict"),
    (
        "tune range overflows",
        lambda: cs.tune("oncoming", {"scale": (-1e308, 1e308)}, n_trials=1, progress=False),
        ValueError,
        "width must be finite",
    ),
    ("run params list", lambda: cs.run_scenario("oncoming", [1, 2]), TypeError, "run: params"),
    ("Steering blend text", lambda: cs.Steering([], blend="0.5"), TypeError, "blend"),
    ("Steering hysteresis None", lambda: cs.Steering([], hysteresis=None), TypeError, "hyster"),
    ("Steering width 1e30", lambda: cs.Steering([], width=10**30), ValueError, "width"),
    (
        "load None",
        lambda: cs.load(None),
        TypeError,
        r"load: path must be a file path \(str, bytes or os.PathLike\) or a readable binary file object",
    ),
    # Fuzz round 3: taken, truncated or parsed without a word.
    (
        "evaluate max_neighbours 0.5",
        lambda: cs.AgentDanger(radius=1.0).evaluate(_four_agents(), 8, max_neighbours=0.5),
        TypeError,
        "evaluate: max_neighbours must be an int",
    ),
    (
        "choose datetime64",
        lambda: cs.choose(np.zeros((1, 8), "M8[s]"), cs.SlotSet(8)),
        TypeError,
        "expected an array of real numbers, got dtype datetime64",
    ),
    (
        "choose timedelta64",
        lambda: cs.choose(np.full((1, 8), 5, "m8[s]"), cs.SlotSet(8)),
        TypeError,
        "got dtype timedelta64",
    ),
    (
        "choose masked",
        lambda: cs.choose(np.ma.masked_array(np.ones((1, 8)), mask=True), cs.SlotSet(8)),
        TypeError,
        "got a masked array",
    ),
    (
        "Agents.add masked position",
        lambda: cs.Agents(1).add(np.ma.masked_array([[0.0, 1.0]], mask=[[0, 1]])),
        TypeError,
        "position must be plain numbers, got a masked array",
    ),
    (
        "Agents.add timedelta radius",
        lambda: cs.Agents(1).add([0, 0], radius=np.timedelta64(1, "s")),
        TypeError,
        "radius must be numbers, got dtype timedelta64",
    ),
    # These two named the array but not the call ("position: expected finite values ...").
    (
        "Agents.add position 1e9",
        lambda: cs.Agents(1).add([[1e9, 0.0]]),
        ValueError,
        "Agents.add: position: expected finite values within",
    ),
    (
        "Agents.add heading 1e30",
        lambda: cs.Agents(1).add([0, 0], heading=1e30),
        ValueError,
        "Agents.add: heading: expected finite values within",
    ),
    # Fuzz round 12: masked arrays lost their masks here; an out= that overlapped
    # spread's kernel overwrote it mid-call (a wrong map); dot_map parsed text as a weight.
    (
        "spread out over its kernel",
        lambda: _spread_over_kernel(),
        ValueError,
        "out must not overlap kernel",
    ),
    (
        "neighbours masked alive",
        lambda: cs.neighbours(
            np.zeros((3, 2), np.float32),
            1.0,
            2,
            alive=np.ma.masked_array([1, 1, 1], mask=[0, 1, 0]),
        ),
        TypeError,
        "neighbours: alive: expected plain values, got a masked array",
    ),
    (
        "add_occupancy masked",
        lambda: cs.World().add_occupancy(np.ma.masked_array(np.ones((2, 2), bool), mask=True)),
        TypeError,
        "add_occupancy: occupied: expected plain values, got a masked array",
    ),
    (
        "Agents.remove masked",
        lambda: _four_agents().remove(np.ma.masked_array([0, 1], mask=[0, 1])),
        TypeError,
        "Agents.remove: ids: expected plain values, got a masked array",
    ),
    (
        "plot.context_map masked",
        lambda: cs.plot.context_map(np.ma.masked_array(np.ones(8), mask=np.arange(8) > 3)),
        TypeError,
        "interest: expected plain values, got a masked array",
    ),
    (
        "combine out over its weights",
        lambda: _combine_over_weights(),
        ValueError,
        "out must not overlap weights",
    ),
    (
        "add_box masked center",
        lambda: cs.World().add_box(np.ma.masked_array([0.0, 5.0], mask=[0, 1]), (1, 1)),
        TypeError,
        "center: expected plain values, got a masked array",
    ),
    (
        "dot_map weight text",
        lambda: cs.dot_map(cs.SlotSet(8), [[1, 0]], weight="2"),
        TypeError,
        "weight",
    ),
    (
        "dot_map weight None",
        lambda: cs.dot_map(cs.SlotSet(8), [[1, 0]], weight=None),
        TypeError,
        "weight",
    ),
    (
        "dot_map weight bool",
        lambda: cs.dot_map(cs.SlotSet(8), [[1, 0]], weight=True),
        TypeError,
        "weight",
    ),
    # The value printed at six digits read as the bound itself ("got 1e+08"), or with 301.
    (
        "add_segments just past 1e8",
        lambda: cs.World().add_segments([[0, 0, 1.0000001e8, 0]]),
        ValueError,
        r"got 100000008 at index \(0, 2\)",
    ),
    (
        "blend alpha 1e300",
        lambda: cs.blend(np.zeros((1, 8)), np.zeros((1, 8)), 1e300),
        ValueError,
        r"got 1e\+300",
    ),
    # plot.scene: fewer map rows than agents raised a bare IndexError, more were cut.
    (
        "plot.scene interest rows",
        lambda: cs.plot.scene(
            agents=np.zeros((5, 2)), slots=8, interest=np.ones((3, 8)), maps=True
        ),
        ValueError,
        r"interest: expected 5 rows, one per agent, got shape \(3, 8\)",
    ),
    (
        "plot.scene distances rows",
        lambda: cs.plot.scene(
            agents=np.zeros((5, 2)), slots=8, look_ahead=2.0, distances=np.ones((7, 8))
        ),
        ValueError,
        r"distances: expected 5 rows, one per agent, got shape \(7, 8\)",
    ),
    # ... and a wrong width was reported with the rows selected (3 of an Agents' 10 slots).
    (
        "plot.scene danger width",
        lambda: cs.plot.scene(
            agents=_three_of_ten(),
            slots=8,
            maps=True,
            interest=np.ones((10, 8)),
            danger=np.ones((10, 7)),
        ),
        ValueError,
        r"danger: expected shape \(10, 8\), got \(10, 7\)",
    ),
    (
        "plot.scene chosen width",
        lambda: cs.plot.scene(
            agents=_three_of_ten(),
            slots=8,
            maps=True,
            interest=np.ones((10, 8)),
            chosen=np.ones((10, 3)),
        ),
        ValueError,
        r"chosen: expected shape \(10, 2\), got \(10, 3\)",
    ),
    # Plot arguments a teaching session got bare NumPy errors for, or none (fuzz round 13).
    (
        "plot.context_maps headings rows",
        lambda: cs.plot.context_maps(np.ones((2, 8)), headings=[0]),
        ValueError,
        r"headings: expected 2 rows, one per interest row, got shape \(1,\)",
    ),
    (
        "plot.context_maps danger rows",
        lambda: cs.plot.context_maps(np.ones((2, 8)), np.ones((1, 8))),
        ValueError,
        r"danger: expected 2 rows",
    ),
    (
        "plot.context_map offset None",
        lambda: cs.plot.context_map(np.ones(4), offset=None),
        TypeError,
        "offset must be a real number, got NoneType",
    ),
    (
        "plot.context_map threshold text",
        lambda: cs.plot.context_map(np.ones(4), threshold="a"),
        TypeError,
        "threshold must be a real number",
    ),
    (
        "plot.frames look_ahead rows",
        lambda: cs.plot.frames(_recorded()[0], history=_recorded()[1], look_ahead=[1.0], slots=8),
        ValueError,
        r"look_ahead: expected a number or one per agent \(3,\), got shape \(1,\)",
    ),
    (
        "plot.frames slots of another K",
        lambda: cs.plot.frames(_recorded()[0], history=_recorded()[1], slots=16, look_ahead=1.0),
        ValueError,
        "slots: 16 slots, but the recorded maps have 8",
    ),
    (
        "plot.rays directions not unit",
        lambda: cs.plot.rays([[0, 0]], [[2, 0], [0, 2], [-2, 0]], None, 1.0),
        ValueError,
        r"slot_directions: slot directions must be unit vectors .* \(at slot 0: \|d\| = 2\)",
    ),
    (
        "plot.rays vmax 0",
        lambda: cs.plot.rays(np.zeros((1, 2)), 8, np.ones((1, 8)), 2.0, vmax=0),
        ValueError,
        "vmax: must be a finite number > 0",
    ),
    ("plot.agents radii -1", lambda: cs.plot.agents([[0, 0]], radii=-1), ValueError, "radii"),
    (
        "plot.world NaN wall",
        lambda: cs.plot.world([[0, 0, np.nan, 1]]),
        ValueError,
        "world: walls must be finite",
    ),
    (
        "plot.context_maps ncols 1.5",
        lambda: cs.plot.context_maps(np.ones((2, 8)), ncols=1.5),
        TypeError,
        "ncols",
    ),
    ("Agents.group = 1.7", lambda: setattr(_four_agents(), "group", 1.7), TypeError, "integers"),
    ("Agents.alive = nan", lambda: setattr(_four_agents(), "alive", np.nan), TypeError, "bools"),
    ("Agents.alive = 2", lambda: setattr(_four_agents(), "alive", 2), ValueError, "0 and 1"),
    ("Agents.position = '3'", lambda: setattr(_four_agents(), "position", "3"), TypeError, "real"),
    ("Agents.heading = None", lambda: setattr(_four_agents(), "heading", None), TypeError, "real"),
    # These three said "'NoneType' object is not iterable" (or 'int', 'Seek').
    (
        "Simulation steering None",
        lambda: cs.Simulation(None, cs.Agents(1), None),
        TypeError,
        "Simulation: steering must be a Steering, a list of behaviours",
    ),
    (
        "Simulation steering 5",
        lambda: cs.Simulation(None, cs.Agents(1), 5),
        TypeError,
        "Simulation: steering must be a Steering",
    ),
    (
        "Simulation one behaviour",
        lambda: cs.Simulation(None, cs.Agents(1), cs.Seek()),
        TypeError,
        r"got one Seek: put it in a list",
    ),
    ("Steering object", lambda: cs.Steering(object()), TypeError, "Steering: behaviours must"),
    (
        "RunResult.from_dict None",
        lambda: cs.RunResult.from_dict(None),
        TypeError,
        "from_dict: expected a mapping",
    ),
    (
        "video format 123",
        lambda: video.write([np.zeros((2, 2, 3), np.uint8)], "a.gif", format=123),
        TypeError,
        "write: format",
    ),
]


def test_a_tuning_study_given_keeps_its_direction_and_a_conflicting_one_is_refused():
    optuna = pytest.importorskip("optuna")
    study = optuna.create_study(direction="maximize")
    with pytest.raises(ValueError, match="the study given maximizes"):
        _tune(study=study, direction="minimize")
    assert len(study.trials) == 0


def test_detour_waypoints_name_an_agent_out_of_range():
    sim = cs.Simulation(None, agents(), [cs.Seek()])
    detour = cs.Detour(sim)
    assert detour.waypoints(0).shape == (0, 2)
    for i in (-1, 3, 10**6):
        with pytest.raises(ValueError, match=r"Detour.waypoints: i must be in \[0, 2\]"):
            detour.waypoints(i)


def test_sweep_summary_keys_are_strings():
    res = _sweep()
    with pytest.raises(TypeError, match="keys must be strings"):
        res.summary(5)


def test_a_nearest_query_takes_max_dist_1e8_as_a_raycast_does():
    w = world()
    assert cs.nearest(w, [[1, 0]], 1e8).distance[0] == 1.0
    assert cs.raycast(w, [[1, 0]], [[-1, 0]], 1e8).distance[0] == 1.0


def test_saving_onto_a_folder_names_it_and_leaves_no_temporary_file(tmp_path):
    sim = cs.Simulation(None, agents(), [cs.Forward()])
    (tmp_path / "run").mkdir()
    with pytest.raises(IsADirectoryError, match="a folder"):
        sim.save(tmp_path / "run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_computed_agent_metrics_are_read_only_too():
    sim = cs.Simulation(None, agents(), [cs.Forward()])
    sim.step(0.1)
    assert not sim.agent_metrics.heading_jitter.flags.writeable


def test_slot_raycast_takes_one_heading_for_every_agent():
    d = cs.slot_directions(8)
    one = cs.slot_raycast(world(), [[0, 0], [0, 1]], d, 3.0, headings=0.5)
    each = cs.slot_raycast(world(), [[0, 0], [0, 1]], d, 3.0, headings=[0.5, 0.5])
    np.testing.assert_array_equal(one, each)


def test_slot_raycast_reduces_double_headings_before_float32_takes_them():
    # 0.3 rad plus 1e7 turns, rounded to float32 first, was 0.3 + 8 rad: the ray read 20.9
    # where 10.47 was right, and inf at 1e9 turns (fuzz round 19).
    d = cs.slot_directions(8)
    base = cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=[0.3])
    for turns in (1, 1e3, 1e5, 1e7, 1e9):
        h = 0.3 + 2 * np.pi * turns
        np.testing.assert_allclose(
            cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=[h]), base, rtol=1e-5
        )
        np.testing.assert_allclose(
            cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=h), base, rtol=1e-5
        )
    # Headings exact in float32 too read the same either way, up to 2^59 (a remainder by
    # the double 2π turned 2^56 by 0.33 rad; fuzz round 21).
    for e in (30, 44, 52, 56, 59):
        h = 2.0**e
        np.testing.assert_allclose(
            cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=[h]),
            cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=np.float32([h])),
            rtol=1e-5,
        )
    # Below 2^60 in their own type though 2^60 in double: taken, not refused as not
    # below 2^60 (round 24); 2^60 itself is refused whatever its type.
    for h in (np.int64(2**60 - 1), 2**60 - 1, -(2**60) + 1, np.longdouble(2**60) - 0.25):
        assert np.isfinite(cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=[h])).any()
    # ... and reduced as given, not as the double they round to (2^60 - 1 was read as
    # 2^60, 2.16 rad off; fuzz round 25). References: atan2(sin h, cos h) of the exact
    # values with 60 digits (mpmath).
    from contextsteer.world import _reduced

    for h, want in (
        (np.array([2**60 - 1], np.int64), 3.1218653140398596),
        (np.array([2**60 - 1], np.uint64), 3.1218653140398596),
        (np.array([-(2**60) + 1], np.int64), -3.1218653140398596),
        (np.array([2**53 + 1], np.int64), -1.1276428765770465),
        (np.array([np.longdouble(2**60) - np.longdouble(0.25)]), -2.411319993139727),
    ):
        if h.dtype == np.longdouble and np.finfo(np.longdouble).nmant <= 52:
            continue  # (a platform whose long double is a double)
        assert _reduced(h)[0] == pytest.approx(want, abs=1e-15), h.dtype
        ray = cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=h)
        np.testing.assert_array_equal(
            ray, cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=np.float32([want]))
        )
    for h in (2**60, np.int64(2**60), 2.0**60):
        with pytest.raises(ValueError, match="below 2"):
            cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=[h])
    # Within ±π, and float32 headings, the bits are those of before.
    for h in ([0.3], np.float32([3.1]), [-np.pi], [np.pi]):
        want = cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=np.float32(h))
        np.testing.assert_array_equal(
            cs.slot_raycast(world(), [[-2, 0]], d, 30.0, headings=h), want
        )


@pytest.mark.parametrize("name, call, error, text", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error(name, call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_the_matrix_is_large():
    assert len(CASES) >= 55


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda big: cs.resolve(np.ones((1, 8)), big, "mask"), "danger"),
        (lambda big: cs.resolve(big, np.zeros((1, 8)), "mask"), "interest"),
        (lambda big: cs.spread(big, [0.5, 1.0, 0.5]), "values"),
        (lambda big: cs.blend(np.zeros((1, 8), np.float32), big, 0.5), "current"),
        # A sequence's element by its index and the caller's argument (a fuzz run: "maps:
        # ... at index (0, 3)" pointed into the first map, and steer named "maps").
        (lambda big: cs.combine([np.zeros((1, 8)), big]), "maps\\[1\\]"),
        (
            lambda big: cs.steer([np.zeros((1, 8)), big], np.zeros((1, 8)), cs.slot_directions(8)),
            "interest_maps\\[1\\]",
        ),
    ],
)
def test_a_finite_value_beyond_float32_is_named_not_reported_as_inf(call, name):
    """1e39 became inf in the float32 cast, with NumPy's overflow RuntimeWarning first (an
    error under -W error) and then 'got inf'."""
    big = np.zeros((1, 8))
    big[0, 3] = 1e39
    with pytest.raises(ValueError, match=rf"{name}: 1e\+39 at index \(0, 3\) overflows float32"):
        call(big)


@pytest.mark.parametrize("dt", [-1.0, 0.0, 1e-31, float("nan"), 1e7])
def test_every_bad_dt_gets_the_same_message_with_the_value_given(dt):
    """-1 said 'finite and >= 0.0', 0 said '[1e-30, 1e6] ... got 0.000000' (and so did 1e-31)."""
    sim = cs.Simulation(None, cs.Agents(1, slots=8), [cs.Forward()])
    with pytest.raises(
        ValueError, match=r"dt must be a number of seconds in \[1e-30, 1e6\]"
    ) as info:
        sim.step(dt)
    assert str(info.value).endswith(f"got {dt!r}")
    with pytest.raises(ValueError, match=r"dt must be a number of seconds in \[1e-30, 1e6\]"):
        sim.decide_and_move(dt)


def test_the_coordinate_range_includes_its_ends_for_arrays_and_scalars_alike():
    """README: within ±1e8. A scalar length of 1e8 was accepted and an array value of 1e8
    refused ('expected finite values within ±1e+08, got 1e+08')."""
    cs.WallDanger(look_ahead=1e8)
    cs.World().add_segments([[0, 0, 1e8, 0], [-1e8, 0, 0, -1e8]])
    agents = cs.Agents(1)
    agents.add([[0, 0]], radius=1e8)
    cs.raycast(cs.World(), [[0, 0]], [[1, 0]], 1e8)
    beyond = float(np.nextafter(np.float32(1e8), np.float32(np.inf)))
    with pytest.raises(ValueError, match="within ±1e\\+08"):
        cs.World().add_segments([[0, 0, beyond, 0]])
    with pytest.raises(ValueError, match="radius"):
        cs.Agents(1).add([[0, 0]], radius=beyond)


# ---- fuzz round 5: adversarial arrays across the public API


@pytest.mark.parametrize("mode", ["subtract", "scale", "subtract_unclamped", "mask"])
def test_in_place_resolve_names_the_input_that_holds_the_nan(mode):
    """resolve(i, d, out=i) with NaN in d said 'interest' (it checked i after writing the
    NaN into it); with NaN in i under a masked slot it raised nothing (the 0 written over
    the NaN passed the check). Oracle: the same call without out=."""
    i = np.full((2, 8), 0.5, np.float32)
    d = np.zeros((2, 8), np.float32)
    d[1, 2] = 1.0
    bad_d = d.copy()
    bad_d[1, 5] = np.nan
    bad_i = i.copy()
    bad_i[1, 2] = np.nan  # under the masked slot
    for interest, danger in ((i, bad_d), (bad_i, d)):
        with pytest.raises(ValueError) as plain:
            cs.resolve(interest.copy(), danger.copy(), mode)
        name = str(plain.value).split(":")[0]
        work = interest.copy()
        with pytest.raises(ValueError, match=f"^{name}: .* at index \\(1, [25]\\)"):
            cs.resolve(work, danger.copy(), mode, out=work)
        work = danger.copy()
        if mode != "avoid_opposite":
            with pytest.raises(ValueError, match=f"^{name}: "):
                cs.resolve(interest.copy(), work, mode, out=work)


def test_in_place_blend_names_the_input_that_holds_the_nan():
    prev = np.full((1, 8), 0.5, np.float32)
    cur = prev.copy()
    cur[0, 3] = np.nan
    with pytest.raises(ValueError, match=r"^current: .* at index \(0, 3\)"):
        cs.blend(prev, cur, 0.5, out=prev)
    assert np.isfinite(cur[0, [0, 1, 2, 4]]).all()  # the input that is not out is untouched
    prev = np.full((1, 8), 0.5, np.float32)  # out itself may have been written
    prev[0, 6] = np.nan
    with pytest.raises(ValueError, match=r"^previous: .* at index \(0, 6\)"):
        cs.blend(prev, np.zeros((1, 8), np.float32), 0.5, out=prev)


def test_an_error_leaves_the_inputs_that_are_not_out_as_they_were():
    """The documented rule: out= may be partly written, the inputs never."""
    rng = np.random.default_rng(0)
    maps = rng.random((3, 50, 8), dtype=np.float32)
    maps[2, 49, 7] = np.nan
    kept = maps.copy()
    out = np.zeros((50, 8), np.float32)
    with pytest.raises(ValueError, match=r"maps: .* \(2, 49, 7\)"):
        cs.combine(maps, out=out)
    np.testing.assert_array_equal(maps, kept)


def test_follow_path_index_is_checked_not_cast():
    """index=[2**32] wrapped to path 0, 1.9 became 1 and NaN became INT_MIN (a warning)."""
    paths = [cs.Path([[0, 0], [10, 0]]), cs.Path([[0, 0], [0, 10]])]
    cs.FollowPath(paths, index=np.array([0, 1, -1]))
    with pytest.raises(ValueError, match="FollowPath: index indexes must fit int32"):
        cs.FollowPath(paths, index=np.array([2**32], np.int64))
    for bad in ([1.9, 0.7], np.array([np.nan]), [1 + 0j], [True]):
        with pytest.raises(TypeError, match="FollowPath: index must be integer indexes"):
            cs.FollowPath(paths, index=bad)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda v: cs.raycast(world(), [[1, 0]], [[1, 0]], v), "max_dist"),
        (lambda v: cs.slot_raycast(world(), [[1, 0]], S8, v), "look_ahead"),
        (lambda v: cs.Path([[0, 0], [1, 0]]).point_at(v), ""),
    ],
)
def test_a_scalar_beyond_float32_is_named_not_an_index_error(call, name):
    """A 0-d array in the float32 check raised 'IndexError: too many indices'."""
    for v in (1e39, np.float64(3.5e38)):
        with pytest.raises(ValueError, match=rf"{name}.*overflows float32"):
            call(v)


@pytest.mark.parametrize(
    "call",
    [
        lambda: cs.World().add_box([1 + 5j, 2], [1, 1]),
        lambda: cs.World().add_box([1, 2], [1, 1j]),
        lambda: cs.classic.Seek(target=[1 + 1j, 0]),
        lambda: cs.classic.MatchVelocity(velocity=np.array([1j, 0])),
        lambda: cs.classic.FollowFlowField(np.zeros((2, 2, 2)), origin=[1j, 0]),
    ],
)
def test_complex_points_are_refused_not_truncated(call):
    with pytest.raises(TypeError, match="real numbers"):
        call()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda v: cs.sweep_circle(world(), [[1, 0]], [[1, 0]], v), "radius"),
        (lambda v: cs.Path([[0, 0], [1, 0]]).direction([[0, 0]], look_ahead=v), "look_ahead"),
        (lambda v: cs.WallDanger(look_ahead=v), "look_ahead"),
        (lambda v: cs.WallDanger(padding=v), "padding"),
        (lambda v: cs.AgentDanger(radius=v), "radius"),
        (lambda v: cs.CollisionDanger(margin=v), "margin"),
        (lambda v: cs.Wander(offset=v), "offset"),
        (lambda v: cs.Wander(radius=v), "radius"),
        (lambda v: cs.Seek(max_distance=v), "max_distance"),
        (lambda v: cs.Tether(radius=v), "radius"),
        (lambda v: cs.FollowPath(cs.Path([[0, 0], [1, 0]]), look_ahead=v), "look_ahead"),
        (lambda v: cs.classic.FollowPath(cs.Path([[0, 0], [1, 0]]), path_offset=v), "path_offset"),
        (lambda v: cs.classic.Arrive(target=[0, 0], slowing_radius=v), "slowing_radius"),
    ],
)
def test_lengths_beyond_the_coordinate_range_are_refused_when_given(call, name):
    """README: lengths and radii within ±1e8. These took 1e18 (sweep_circle moved a disc
    by 1e15) or, beyond float32, failed later without the behaviour's name."""
    call(1e8)
    for v in (1e18, 1e39):
        with pytest.raises(ValueError, match=name):
            call(v)


def test_a_behaviour_number_beyond_2_60_is_refused_when_built_naming_it():
    """Wander(rate=2e18) was refused only at the first step ('rate must be ... got
    1999999...'), without the behaviour's name."""
    with pytest.raises(ValueError, match="Wander: rate must be below 2\\^60"):
        cs.Wander(rate=2e18)
    with pytest.raises(ValueError, match="CollisionDanger: side_bias"):
        cs.CollisionDanger(side_bias=2e18)


def test_agents_add_names_a_value_beyond_float32_without_numpys_warning():
    """1e39 said 'got inf' after NumPy's overflow RuntimeWarning (raised under -W error)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kw in ({"velocity": [1e39, 0.0]}, {"radius": 1e39}, {"heading": [1e39]}):
            key = next(iter(kw))
            with pytest.raises(ValueError, match=rf"{key}: 1e\+39 at index 0 overflows float32"):
                cs.Agents(1).add([[0.0, 0.0]], **kw)
        with pytest.raises(ValueError, match=r"position: 1e\+39 at index 0 overflows"):
            cs.Agents(1).add([[1e39, 0.0]])


def test_neighbours_alive_takes_booleans_only():
    """NaN, 0.5, complex and the string 'False' all counted as alive."""
    pts = [[0, 0], [0.5, 0]]
    ok = cs.neighbours(pts, 1.0, 2, alive=np.array([1, 0]))
    assert ok.counts.tolist() == [0, 0]
    for bad in ([np.nan, 1.0], [0.5, 1.0], [1j, 1], ["False", "True"]):
        with pytest.raises(TypeError, match="alive must be booleans"):
            cs.neighbours(pts, 1.0, 2, alive=bad)
    with pytest.raises(ValueError, match="alive must be booleans"):
        cs.neighbours(pts, 1.0, 2, alive=[2, 1])
    with pytest.raises(ValueError, match=r"alive must have shape \(2,\)"):
        cs.neighbours(pts, 1.0, 2, alive=[True])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda v: cs.blend(M, M, v), "alpha"),
        (lambda v: cs.resolve(M, M, threshold=v), "threshold"),
        (lambda v: cs.resolve(M, M, "mask_min_danger", epsilon=v), "epsilon"),
        (lambda v: cs.raycast(world(), [[1, 0]], [[1, 0]], 1.0, radius=v), "radius"),
        (lambda v: cs.slot_raycast(world(), [[1, 0]], S8, 1.0, radius=v), "radius"),
        (lambda v: cs.neighbours([[0, 0]], v, 2), "radius"),
        (lambda v: cs.nearest(world(), [[0, 0]], v), "max_dist"),
        (lambda v: cs.sweep_circle(world(), [[1, 0]], [[1, 0]], v), "radius"),
        (lambda v: cs.Path([[0, 0], [1, 0]]).direction([[0, 0]], v), "look_ahead"),
        (lambda v: cs.Steering([cs.Seek()], threshold=v), "threshold"),
        (lambda v: cs.Wander().evaluate(agents(), 8, time=v), "time"),
        (lambda v: cs.slot_directions(8, v), "offset"),
        (lambda v: cs.World().add_box([0, 0], [1, 1], v), "angle"),
    ],
)
def test_a_scalar_that_is_not_a_number_is_named(call, name):
    """None, a one-element array or a complex number got float()'s message, naming nothing.
    NumPy scalars and 0-d arrays are numbers."""
    for v in (None, np.array([1.0]), 1j, "1", True, np.bool_(True), np.array(1j)):
        with pytest.raises(TypeError, match=rf"{name} must be a real number"):
            call(v)
    for v in (np.float32(0.5), np.array(0.5), np.array(0.5, np.float64)):
        try:
            call(v)
        except TypeError as e:  # a range error (ValueError) is fine, a type error is not
            raise AssertionError(f"{name}: {v!r} refused as a non-number") from e
        except ValueError:
            pass


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda v: cs.slot_directions(v), "k"),
        (lambda v: cs.SlotSet(v), "k"),
        (lambda v: cs.choose(M, S8, "weighted_neighbours", width=v), "width"),
        (lambda v: cs.neighbours([[0, 0]], 1.0, v), "max_neighbours"),
    ],
)
def test_an_int_beyond_int32_is_named_not_a_pybind_dump(call, name):
    with pytest.raises(ValueError, match=name):
        call(2**63)


def test_a_nav_field_index_is_an_int_in_range():
    """distances(1.9) and distances(True) gave field 1; inf an OverflowError; 1e39 a
    pybind11 dump."""
    nf = cs.NavField(world(), [np.float32([[3, 3]]), np.float32([[-3, 3]])], cell=0.5)
    assert np.array_equal(nf.distances(1), nf.distances(np.int64(1)))
    for bad in (1.9, True, None, INF, 1e39):
        with pytest.raises(TypeError, match="field index g must be an int"):
            nf.distances(bad)
    for bad in (2, -1, 2**63):
        with pytest.raises(ValueError, match=r"field index g must be in \[0, 1\]"):
            nf.descents(bad)


def test_a_stack_that_is_not_a_sequence_is_named():
    for bad in (np.float64(1.0), 3, "maps"):
        with pytest.raises(TypeError, match="maps: expected a"):
            cs.combine(bad)


def test_map_glyphs_names_a_row_count_mismatch():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with pytest.raises(ValueError, match=r"interest: expected shape \(3, 8\), got \(2, 8\)"):
        cs.plot.map_glyphs(np.zeros((3, 2)), 8, np.ones((2, 8)))
    with pytest.raises(ValueError, match=r"danger: expected shape \(1, 4\), got \(5,\)"):
        cs.plot.map_glyphs([[0, 0]], 4, [1, 0, 0, 0], danger=np.ones(5))
    cs.plot.map_glyphs([[0, 0]], 4, [1, 0, 0, 0])  # one agent's row given flat
    plt.close("all")


def test_stuck_thresholds_must_be_finite_as_float32():
    """Simulation(stuck_distance=1e39) was stored as float32 inf."""
    with pytest.raises(ValueError, match="stuck_time must be finite as a float32"):
        cs.Simulation(None, agents(), [cs.Forward()], stuck_time=1e39)
    # A distance is a length: at most 1e8 (README, "Supported ranges"), like the
    # metrics' goal_radius and clearance_range.
    for value in (2e8, 1e39):
        with pytest.raises(ValueError, match="stuck_distance must be >= 0 and at most 1e8"):
            cs.Simulation(None, agents(), [cs.Forward()], stuck_distance=value)
    sim = cs.Simulation(None, agents(), [cs.Forward()])
    for name in ("goal_radius", "clearance_range"):
        with pytest.raises(ValueError, match=f"{name} must be >= 0 and at most 1e8"):
            sim.configure_metrics(**{name: 2e8})


@pytest.mark.parametrize(
    "name, value, text",
    [
        ("epsilon", -1.0, "epsilon must be >= 0"),
        ("threshold", float("nan"), "threshold must be finite"),
        ("max_neighbours", 0, r"max_neighbours must be in \[1, 256\]"),
        ("choose", "nope", "choose must be one of"),
        ("blend", 2.0, r"blend must be in \[0, 1\]"),
    ],
)
def test_a_steering_option_reassigned_after_construction_is_checked_again(name, value, text):
    # Steering's options are plain attributes: reassigned after construction (the natural
    # way to give crowd_steering()'s result another max_neighbours) they went unchecked,
    # and epsilon = -1 made every agent stand for good (fuzz round 11).
    steering = cs.scenarios.crowd_steering(walls=False)
    setattr(steering, name, value)
    agents = cs.Agents(2, slots=16)
    agents.add([[0, 0], [3, 0]])
    with pytest.raises(ValueError, match=text):
        cs.Simulation(None, agents, steering)
    setattr(steering, name, getattr(cs.scenarios.crowd_steering(walls=False), name))
    steering.max_neighbours = 8  # a valid reassignment is taken
    sim = cs.Simulation(None, agents, steering)
    assert sim.steering.max_neighbours == 8


@pytest.mark.parametrize(
    "start, move, text",
    [
        ([[2e9, 0.0]], [[-2e9, -1.0]], "start"),
        ([[2.0, 0.0]], [[1e17, -1e17]], "displacement"),
    ],
)
def test_sweep_circle_refuses_coordinates_beyond_the_accepted_range(start, move, text):
    # Checked only below 2^60: a start at 2e9 stopped at x = 2482 against a wall spanning
    # x in [0, 5], and a displacement of 1e17 went through (fuzz round 11).
    w = cs.World()
    w.add_segments([[0, -5, 5, -5]])
    with pytest.raises(ValueError, match=text):
        cs.sweep_circle(w, start, move, 0.3)
    with pytest.raises(ValueError, match="radius"):
        cs.sweep_circle(w, [[0, 0]], [[1, 0]], 2e8)


def test_memory_checks_count_what_is_allocated(monkeypatch):
    """Three estimates were off (fuzz round 25): a Simulation counted 64 bytes an agent
    and slot, 0.18 GiB for 1M agents at K = 3 with max_neighbours=256 that took 1.35 GB
    (then a bare std::bad_alloc); a smoothed Path 56 bytes a vertex where the build peaks
    at 84-88; ContextMaps five maps where it holds two."""
    budget = 100 * 2**20
    import contextsteer.path as path_mod

    for module in (cs.maps, path_mod):
        monkeypatch.setattr(module, "_physical_memory", lambda: budget)
    agents = cs.Agents(100_000, slots=3)
    wide = cs.Steering([cs.Seek()], max_neighbours=256)
    # 100k × (448 + 24·3 + 4·256) = 154 MB: refused, naming the bytes an agent.
    with pytest.raises(
        MemoryError, match=r"max_neighbours 256\) need about .* \(1,544 bytes an agent\)"
    ):
        cs.Simulation(None, agents, wide, slots=3)
    cs.Simulation(None, agents, [cs.Seek()], slots=3)  # 58 MB with 16 neighbours: fits
    # record=True keeps each behaviour's (N, K) map (uncounted until 2026-12-07): with 16
    # slots and 12 recorded behaviours 100k × (448 + (24 + 4·12)·16 + 4·16) = 166 MB.
    seeks = [cs.Seek(weight=1.0 + i) for i in range(12)]
    with pytest.raises(
        MemoryError, match=r"12 recorded behaviour maps\) need about .* \(1,664 bytes an agent\)"
    ):
        cs.Simulation(None, cs.Agents(100_000, slots=16), cs.Steering(seeks, record=True))
    cs.Simulation(None, cs.Agents(100_000, slots=16), cs.Steering(seeks))  # 90 MB: fits
    # 1.2M vertices: 101 MB at 88 bytes a vertex (67 MB at the old 56).
    with pytest.raises(MemoryError, match="smoothing"):
        cs.Path(np.c_[np.arange(1200), np.zeros(1200)], smooth=True, samples_per_segment=999)
    # 2M × 5 slots × two float32 maps: 80 MB, within the budget (five maps: 200 MB).
    maps = cs.ContextMaps(2_000_000, 5)
    assert maps.interest.shape == (2_000_000, 5)
    with pytest.raises(MemoryError, match=r"ContextMaps\(4000000, 5\) needs about 0.149 GiB"):
        cs.ContextMaps(4_000_000, 5)


# Fuzz round 26: integer ids took masked arrays (their hidden entries read as ids) and
# durations (NumPy counts timedelta64 as an integer); an int column write wrapped a value
# beyond its dtype; a float32 masked agent_weights kept its hidden weights; plots dropped
# the imaginary part of complex input and drew masked entries; a masked out= was written
# with its old mask left over the new values.
def _masked(values, mask):
    return np.ma.masked_array(values, mask=mask)


def _nav2():
    return cs.NavField(world(), [np.array([[1, 1]]), np.array([[3, 3]])], cell=0.5)


_SECONDS = np.array([0, 1], dtype="timedelta64[s]")
_PATH = cs.Path([[0, 0], [5, 0]])
_IDS = [
    (
        "set_layers masked",
        lambda: world().set_layers(_masked([0, 0], [0, 1]), 0),
        "set_layers: ids",
    ),
    ("set_layers durations", lambda: world().set_layers(_SECONDS[:1], 0), "set_layers: ids"),
    (
        "add group masked",
        lambda: cs.Agents(2).add(np.zeros((2, 2)), group=_masked([1, 2], [0, 1])),
        "group",
    ),
    (
        "add kinematic masked",
        lambda: cs.Agents(2).add(np.zeros((2, 2)), kinematic=_masked([False, True], [0, 1])),
        "kinematic",
    ),
    ("remove durations", lambda: _four_agents().remove(_SECONDS), "Agents.remove: ids"),
    ("Pursue masked", lambda: cs.Pursue(targets=_masked([0, 1], [0, 1])), "Pursue: targets"),
    ("Evade durations", lambda: cs.Evade(targets=_SECONDS), "Evade: targets"),
    (
        "FollowPath index masked",
        lambda: cs.FollowPath([_PATH, _PATH], index=_masked([0, 0], [0, 1])),
        "index",
    ),
    ("FollowField which durations", lambda: cs.FollowField(_nav2(), which=_SECONDS), "which"),
    (
        "NavField which masked",
        lambda: _nav2().query([[2, 2], [2, 2]], which=_masked([0, 1], [0, 1])),
        "which",
    ),
    (
        "classic Seek agents masked",
        lambda: cs.classic.Seek(agents=_masked([0, 1], [0, 1])),
        "agents",
    ),
    ("classic Pursue agents durations", lambda: cs.classic.Pursue(agents=_SECONDS), "agents"),
    (
        "neighbours alive durations",
        lambda: cs.neighbours(np.zeros((2, 2), np.float32), 1.0, 2, alive=_SECONDS),
        "alive",
    ),
]


@pytest.mark.parametrize("name, call, text", _IDS, ids=[c[0] for c in _IDS])
def test_ids_refuse_masked_arrays_and_durations(name, call, text):
    with pytest.raises((TypeError, ValueError), match=text) as info:
        call()
    assert any(w in str(info.value) for w in ("masked array", "integer", "booleans", "ids"))


def test_an_int_column_write_beyond_its_dtype_is_refused_not_wrapped():
    a = agents()
    before = a.group.copy()
    for value in (2**32 + 7, [2**40, 0, 0], [-(2**31) - 1, 0, 0], np.uint64(2**63)):
        with pytest.raises(ValueError, match=r"Agents.group: values must fit int32 .* got"):
            a.group = value
    np.testing.assert_array_equal(a.group, before)
    with pytest.raises(ValueError, match="Agents.rng: values must fit uint64"):
        a.rng = -1
    a.group = [-(2**31), 2**31 - 1, np.int64(5)]  # the ends of the range are taken
    assert a.group.tolist() == [-(2**31), 2**31 - 1, 5]
    a.rng = np.uint64(2**64 - 1)
    assert int(a.rng[0]) == 2**64 - 1


def test_a_float_column_refuses_bools_as_agents_add_does():
    a = agents()
    with pytest.raises(TypeError, match="Agents.radius: expected real numbers"):
        a.radius = np.array([True, False, True])
    with pytest.raises(TypeError, match="Agents.max_speed"):
        a.max_speed = True


def test_masked_float32_agent_weights_are_refused_as_float64_ones_are():
    for dtype in (np.float32, np.float64):
        w = np.ma.masked_array(np.array([1, 1e6, 1], dtype), mask=[0, 1, 0])
        with pytest.raises(TypeError, match="agent_weights: .*masked array.*fill it first"):
            cs.Seek(agent_weights=w)
    plain = np.ones(3, np.float32)
    assert cs.Seek(agent_weights=plain).agent_weights is plain  # still kept in place


@pytest.mark.parametrize(
    "call",
    [
        lambda: cs.plot.agents(np.array([[0, 0], [1, 1]]) + 5j),
        lambda: cs.plot.path(np.array([[0, 0], [1, 1], [2, 0]]) + 1j),
        lambda: cs.plot.world(np.array([[0, 0, 1, 1]]) + 1j),
        lambda: cs.plot.world(np.array([[0, 0, 1, 1]], dtype=object)),
    ],
)
def test_plots_refuse_complex_and_object_numbers(call):
    import matplotlib.pyplot as plt

    try:
        with pytest.raises(TypeError, match="expected real numbers, got dtype"):
            call()
    finally:
        plt.close("all")


def test_plots_refuse_masked_distances_dangers_and_trajectories():
    import matplotlib.pyplot as plt

    pos, dirs = np.zeros((1, 2)), cs.SlotSet(4)
    try:
        with pytest.raises(TypeError, match="distances: expected plain values"):
            cs.plot.rays(pos, dirs, _masked([[0.5, 1, 1, 1]], [[1, 0, 0, 0]]), 1.0)
        with pytest.raises(TypeError, match="danger: expected plain values"):
            cs.plot.rays(pos, dirs, None, 1.0, danger=_masked([[0.5, 1, 1, 1]], [[1, 0, 0, 0]]))
        traj = np.zeros((3, 1, 2))
        with pytest.raises(TypeError, match="history: expected plain values"):
            cs.plot.trajectories(np.ma.masked_array(traj, mask=traj > 0))
    finally:
        plt.close("all")


def _masked_out(shape=(1, 4), dtype=np.float32):
    return np.ma.masked_array(np.zeros(shape, dtype), mask=np.zeros(shape, bool))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda o: cs.resolve(np.ones((1, 4)), np.zeros((1, 4)), out=o), "resolve: out"),
        (lambda o: cs.spread(np.ones((1, 4)), [0.5, 1, 0.5], out=o), "spread: out"),
        (lambda o: cs.combine([np.ones((1, 4))], out=o), "combine: out"),
        (lambda o: cs.blend(np.ones((1, 4)), np.zeros((1, 4)), 0.5, out=o), "blend: out"),
        (lambda o: cs.dot_map(cs.SlotSet(4), [[1, 0]], out=o), "dot_map: out"),
        (
            lambda o: cs.slot_raycast(world(), [[-2, 0]], cs.SlotSet(4), 3.0, out=o),
            "slot_raycast: out",
        ),
        (
            lambda o: cs.choose(
                np.ones((1, 4)),
                cs.SlotSet(4),
                out=(_masked_out((1, 2)), o[0], np.zeros(1, np.int32)),
            ),
            "choose: out",
        ),
    ],
)
def test_a_masked_out_is_refused(call, name):
    with pytest.raises(TypeError, match=f"{name}: expected plain values, got a masked array"):
        call(_masked_out())


def test_a_column_write_that_overflows_float32_is_named_at_once():
    a = agents()
    before = a.target.copy()
    with pytest.raises(ValueError, match=r"Agents.target: 1e\+39 at index \(2, 1\) overflows"):
        a.target = [[0, 0], [0, 0], [0, 1e39]]
    with pytest.raises(ValueError, match=r"Agents.radius: 1e\+300 overflows float32"):
        a.radius = 1e300
    np.testing.assert_array_equal(a.target, before)
    a.target = np.full((3, 2), np.nan)  # stored: the step names a live agent's
    assert np.isnan(a.target).all()
    a.target = np.full((3, 2), 3.4e38)  # the largest finite values are taken
    assert np.isfinite(a.target).all()


_NS = np.timedelta64(3, "ns")


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: cs.Agents(np.timedelta64(4, "ns")), "capacity must be an int"),
        (lambda: cs.Agents(4, slots=np.timedelta64(8, "ns")), "slots must be an int"),
        (lambda: cs.Simulation(None, agents(), [cs.Seek()]).step(0.1, steps=_NS), "steps"),
        (lambda: cs.Simulation(None, agents(), [cs.Seek()]).step(_NS), "dt must be a number"),
        (lambda: cs.SlotSet(np.timedelta64(8, "ns")), "k must be an int"),
        (lambda: cs.Seek(weight=_NS), "weight must be a number"),
        (lambda: cs.Steering([cs.Seek()], rotate=np.timedelta64(1, "ns")), "rotate"),
        (lambda: cs.Path([[0, 0], [1, 0]], samples_per_segment=_NS), "samples_per_segment"),
    ],
)
def test_a_duration_is_not_taken_as_an_int_or_a_number(call, text):
    """np.timedelta64 is a NumPy integer and a numbers.Integral: Agents(timedelta) built
    4 slots, steps=timedelta ran 3 steps, a flag read 1 ns as True (fuzz round 26)."""
    with pytest.raises(TypeError, match=text):
        call()


def test_column_writes_name_the_range_and_the_shape():
    """Python ints NumPy could not hold in one dtype were named as a float64 or object
    dtype, not by their range, and a write of the wrong shape raised NumPy's broadcast
    error naming no column (fuzz round 26)."""
    a = agents(4)
    for value, bad in (([2**64 - 1, -1, 0, 0], "-1"), (2**64, "18446744073709551616")):
        with pytest.raises(ValueError, match=rf"Agents.rng: values must fit uint64 .* got {bad}"):
            a.rng = value
    a.rng = [2**64 - 1, 5, 0, 0]
    assert int(a.rng[0]) == 2**64 - 1
    with pytest.raises(TypeError, match="Agents.group: expected integers"):
        a.group = [1.5, 2, 3, 4]
    with pytest.raises(ValueError, match=r"Agents.position: expected shape \(4, 2\)"):
        a.position = np.zeros((3, 2))
    with pytest.raises(TypeError, match="steer: out: expected plain values"):
        cs.steer(
            [np.ones((1, 4))],
            np.zeros((1, 4)),
            cs.SlotSet(4),
            out=(
                np.ma.masked_array(np.zeros((1, 2), np.float32)),
                np.zeros(1, np.float32),
                np.zeros(1, np.int32),
            ),
        )


def test_python_ints_past_int64_into_a_float_column_are_numbers():
    a = agents(2)
    a.max_speed = 2**64  # fits float32 as 1.8e19
    assert a.max_speed[0] == np.float32(2.0**64)
    for value in (10**40, [1, 10**400]):
        with pytest.raises(ValueError, match="Agents.max_speed: .* overflows float32"):
            a.max_speed = value


def test_a_smoothed_path_stays_within_the_range_positions_are_checked_against():
    """Control points at ±1e8 made vertices at 1.25e8 (the spline overshoots at corners),
    which the library's own checks then refused as positions (fuzz round of 2026-12-07)."""
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
    with pytest.raises(ValueError, match=r"smoothed curve reaches 1\.2\d+e\+08, beyond the ±1e8"):
        cs.Path(corners * 1e8, smooth=True, closed=True)
    path = cs.Path(corners * 5e7, smooth=True, closed=True)  # overshoot stays inside
    assert np.abs(path.points).max() <= 1e8
    agents = cs.Agents(1)
    agents.add(path.point_at(path.closest_offset([[5e7, 0]])))  # its points are positions
    cs.Path(corners * 1e8, closed=True)  # unsmoothed, the points themselves are the vertices
