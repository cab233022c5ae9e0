"""Crowd quality: several crowd systems on the same scenes, measured by the same code.

Not a test. Every system walks the same pedestrians through the same scenes under one
protocol, and one metric object (crowd_quality.Metrics) measures every system from the
positions after each step, so the columns of the table compare like with like.

Systems
-------
- ``rvo2``: RVO2 2.0 (PyPI ``pyrvo``), ORCA. neighborDist 5 m, maxNeighbors 10,
  timeHorizon 2 s, timeHorizonObst 2 s, radius 0.3, maxSpeed 1.3; each wall segment a
  2-vertex obstacle.
- ``rvo2-margin``: the same RVO2 keeping the clearance between agents that
  ``cs-velocity``'s CollisionDanger keeps (its ``margin``, 5 cm, added to r_i + r_j; or
  ``--rvo2-margin``): it plans with radius 0.3 + 0.025 (the metrics keep 0.3), to see
  what that clearance costs ORCA.
- ``rvo2-accel``: the same RVO2 (no margin) moved with cs-velocity's acceleration limit
  (``--velocity-accel``, default 6 m/s²): each step the change of velocity is capped at
  max_accel·dt and the agent moved at that velocity, to see whether the lag of an
  acceleration-limited walker explains context steering's extra heading jitter.
- ``rvo2-slots``, ``rvo2-ring``: rvo2-accel with ORCA's velocity snapped, each step, to the
  nearest of a sampled candidate set turned with the agent's heading (crowd_quality.
  snap_velocity): rvo2-slots to cs-velocity's own 16 directions (``crowd_slots()``) at
  standing or the four speed levels of ``CollisionDanger(speeds=4)``; rvo2-ring to a
  regular ring of ``--rvo2-ring`` directions (default 64) at ORCA's own speed. They show
  how much turning sampling alone adds to ORCA's own decisions (docs/crowd.md).
- ``navground-orca``, ``navground-hl``: navground's simulation (PyPI ``navground``) with its
  ORCA or HL (human-like) behaviour; omnidirectional kinematics, max and optimal speed
  1.3, radius 0.3, neighbours within 5 m (Bounded state estimation), walls as line
  obstacles. ORCA: time_horizon = static_time_horizon = 2 s, max_neighbors 10, horizon
  2.5 m (its neighbour range is twice that). HL: horizon 2.6 m (2 s at 1.3 m/s; HL's
  horizon is a distance), tau 0.125 s, eta 0.5 s, aperture π. navground's world
  collision resolution (its default) is off unless --navground-resolve: it zeroes the
  velocities its ORCA plans from, and the same ORCA as RVO2's then jams (hallway seed 0:
  6,754 contact episodes and nobody home with it, 111 and everyone home without).
- ``jupedsim-cfsm``: JuPedSim's CollisionFreeSpeedModel (PyPI ``jupedsim``, the first
  version, model parameters at their defaults), radius 0.3, desired speed 1.3, time gap
  1 s; walkable area = a box around the scene minus the walls (1 cm strips). Agents are in
  a direct-steering journey, so their target is the protocol's waypoint, set each step
  (JuPedSim's routing is bypassed: it steers locally like every other system).
- ``jupedsim-sfm``: the same with JuPedSim's SocialForceModel (Helbing's social forces,
  default parameters: mass 80 kg, reaction time 0.5 s, body force 120,000, friction
  240,000). JuPedSim stops a simulation when a model pushes an agent off its walkable
  area; the run then ends there (the row counts the agents home by then, and a note
  line gives the time and JuPedSim's message).
- ``jupedsim-avm``, ``jupedsim-warp``: the same with JuPedSim's AnticipationVelocityModel
  (Xu, Chraibi and Seyfried's anticipation on top of the collision-free speed model) and
  its WarpDriverModel (Wolinski et al.'s probabilistic collision field), default
  parameters.
- ``cs-classic``: contextsteer.classic, the gdx-ai crowd stack of notebook 06
  (``classic_crowd()``: whisker raycast avoidance, CollisionAvoidance(2), then
  Separation(0.9) + Arrive(1) blended), ``Accel`` motion, max_accel 3.
- ``cs-context``: context steering with today's AgentDanger — scenarios._crowd's
  configuration: Seek + AgentDanger(radius=1, predictive, horizon=1.5) (+ WallDanger(
  look_ahead=1, linear) with walls), combine max, resolve subtract, choose
  weighted_neighbours, 16 slots, ``Accel`` motion, max_accel 3.
- ``cs-velocity``: context steering with velocity-space danger,
  crowd_quality.contextsteer_velocity_steering: ``scenarios.crowd_steering()``,
  Arrive(slowing_radius=1, shape="half_cosine") + CollisionDanger(speeds=4, margin
  0.05, walls only where the scene has walls, and the tuned options of
  ``scenarios.CROWD``), resolve mask_min_danger, choose argmax, slots turning with each
  agent's heading (``rotate=True``); ``Accel`` motion, max_accel ``--velocity-accel``
  (default 6). Skipped with a note when this contextsteer
  build has no CollisionDanger.
- ``cs-sliced``: cs-velocity with Lewis's time slicing, ``Simulation(decision_validity=
  0.25)``: each agent keeps its decision until its behaviours' validity estimates run
  out, at most 0.25 s (docs/crowd.md, "Lewis's time slicing").
- ``cs-smooth``: the same with ``crowd_steering(smooth=True)`` (``scenarios.SMOOTH_CROWD``
  instead of ``CROWD``: the hand-set smoothing preset).
- ``cs-plain``: the same with ``crowd_steering(options={})``: CollisionDanger with a 2 s
  horizon and ``commit`` 0.1 but none of the refinements (the default before ``CROWD``).
- ``cs-chord``: the same with ``crowd_steering(shape="chord",
  changes=scenarios.CHORD_CROWD)``: the chord interest, 1 − sin(θ/2), with the options
  a search found for it (docs/crowd.md, "A search for the chord shape"); opt-in.
- ``cs-lateral``: the same with ``crowd_steering(changes={"lateral_cost": 0.6})``: speed
  across the wanted way costs when that way is not free (docs/crowd.md, "Speed across a
  blocked way costs"); opt-in.
- ``cs-counterflow``: the same with ``crowd_steering(options=scenarios.CROWD_COUNTERFLOW)``,
  which is ``CROWD`` itself since the jam horizon (a jammed agent facing three oncomers
  decides at a 0.6 s horizon) joined the default: the same system as ``cs-velocity``,
  kept so that earlier commands run.

contextsteer systems run with the library's defaults: push-apart after the move (overlaps
resolved, swept against the walls) and as many threads as ``cs.get_num_threads()``. So the
systems that resolve overlaps after moving are cs-* (and navground with
``--navground-resolve``); RVO2, navground and JuPedSim do not (JuPedSim's model is
collision-free by construction). ``--no-resolve`` turns contextsteer's push-apart off,
so that every system is measured on its steering alone. Either way contextsteer moves every agent as a circle
swept against the walls (it stops short of a wall whatever the steering), so its wall
columns are 0 by construction.

Protocol (the same for every system)
------------------------------------
- Pedestrians: radius 0.3 m, preferred (and max) speed 1.3 m/s for every agent (no
  random spread, unlike scenarios._crowd's ±10%), dt = 1/30 s; each agent starts at rest
  facing its first waypoint.
- Waypoint: the agent's goal; in bottleneck and doorway (goals beyond a wall) a gate
  waypoint 1 m beyond the gap centre, on the goal's side, until the agent is 0.5 m past
  the wall (sticky), then its goal. (A waypoint at the gap centre itself would stop
  agents that slow down on arrival there before they pass the wall.)
- Preferred velocity: towards the waypoint at 1.3 m/s (RVO2: distance/dt when closer;
  navground: a point target; JuPedSim: the agent's target; contextsteer: agents.target).
- Retirement: the first time an agent's centre is within 0.5 m of its goal it has
  arrived and is removed (contextsteer ``Agents.remove``; JuPedSim
  ``mark_agent_for_removal``; RVO2 and navground, which cannot remove agents: moved to
  (1e5 + 10 i, 1e5), out of everyone's range, with zero preferred velocity). Retired
  agents leave the metrics. A run stops when everyone has arrived or at the step limit.

Scenes (crowd_quality.SCENES; step limit: 3x the longest unobstructed path time)
--------------------------------------------------------------------------------
- circle-16, circle-64, circle-250: agents evenly on a circle, no jitter, each to the
  antipodal point; radius max(4, N·1 m / 2π) (1 m of arc per agent; circle-16: 4 m).
- hallway: 40 agents, two-way traffic in a hallway 24 m long and 4 m wide (two wall
  segments running 7 m past each end), seed 0.
- crossing: two groups of 20 in rows of two cross at right angles, seed 0.
- bottleneck: 50 agents in a 24 x 12 m room walk to goals beyond a wall with a 1.2 m gap.
- doorway: two groups of 10 swap sides through a 1.8 m door in a 20 x 10 m room.

Metrics (from the positions of the active agents after each step, float64)
--------------------------------------------------------------------------
- collisions: episodes — a pair (i, j) starts overlapping (centre distance < r_i + r_j,
  less 0.1 mm of float32 rounding) at a step where it did not overlap at the step before
  (SciPy cKDTree.query_pairs).
- max pen.: the largest r_i + r_j − distance over steps and pairs (0 if none), in m and
  in % of the agent radius.
- wall pens: episodes where an agent's centre comes closer than 0.99 r to a wall segment
  (start of a run of such steps); wall pen m: the largest r − distance to a wall.
- arrived %: agents that arrived within the step limit; TTG: their mean time to goal (s).
- vs RVO2: the system's time to goal against RVO2's over the agents that arrived in both
  runs (%; crowd_quality.ttg_vs). TTG alone averages over the agents a system gets home,
  which flatters one that strands the slow ones (RVO2 on the bottleneck).
- jitter: per agent, the mean |Δθ| over the steps where it moved faster than 0.05 m/s in
  both that step and the one before (θ the direction of the step's displacement), then
  the mean over agents, in degrees per step.
- stops °: the same with the turns across a stop counted: per agent, the mean |Δθ|
  between consecutive steps faster than 0.05 m/s, slower steps between them or not. An
  agent that stops and sets off in another direction turned, but the jitter, which only
  compares consecutive steps, does not see it (a rule that makes agents stand can lower
  the jitter without lowering the turning: docs/crowd.md, "Waiting for the way to
  clear").
- ° per m: the jitter's turning per metre walked: per agent, the summed |Δθ| over the
  same steps divided by their summed length, then the mean over agents. It does not
  grow with speed: an agent that walks the same path in fewer steps turns as much per
  metre but more per step, so a system that gets its agents home sooner has a higher
  jitter for the same path.
- ms/step: the median wall time of the system's step call alone (``do_step``,
  ``World.update``, ``Simulation.iterate``, ``Simulation.step``), not the Python loop that
  sets targets or measures (rvo2-accel's includes its Python loop that caps the velocities).
- pre-push (cs-* only): overlapping pairs right after each move, before push-apart
  resolves them, summed over steps (pair-steps, from ``Simulation.overlaps``).

Usage: python benchmarks/bench_crowd_quality.py [--quick] [--scenes a,b] [--systems a,b]
[--velocity-accel 6] [--no-resolve] [--navground-resolve] [--seeds N [--per-seed]] [--rvo2-margin M]
[--rvo2-ring K] [--json out.json]. --seeds N: the seeded scenes (hallway, crossing,
bottleneck, doorway) on seeds 0..N-1, one pooled row per scene and system (crowd_quality.pool) with the worst
seed's arrivals in an extra column: a single seed can flatter or wrong any system.
--per-seed (with rvo2 among the systems): after each pooled row, each seed's time to goal
against RVO2's on that seed, summed up (median, seeds within 15 %, slower or faster by
more than 15 and 30 %, and which seeds were more than 30 % slower); the JSON rows then
carry the list as ``ttg_vs_rvo2_per_seed``. --quick: circle-16, circle-64,
hallway and crossing, at most 600 steps each. Needs the ``bench`` extra (pip install -e .[bench]).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from importlib import metadata

import numpy as np

# NumPy's BLAS threads spin after a call and would steal a core from the timed step.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crowd_quality import (  # noqa: E402
    CS_MARGIN,
    SCENES,
    SEEDED,
    SYSTEMS,
    Options,
    Unavailable,
    pool,
    run,
    ttg_vs,
)

QUICK_SCENES = ("circle-16", "circle-64", "hallway", "crossing")
QUICK_STEPS = 600
PACKAGES = ("contextsteer", "pyrvo", "navground", "jupedsim", "scipy", "shapely")

COLUMNS = (  # (header, key, width, format)
    ("scene", "scene", 11, "s"),
    ("system", "system", 15, "s"),
    ("collisions", "collisions", 11, "d"),
    ("max pen m", "max_penetration_m", 10, ".3f"),
    ("% r", "max_penetration_pct_r", 6, ".1f"),
    ("wall pens", "wall_penetrations", 10, "d"),
    ("wall pen m", "max_wall_penetration_m", 11, ".3f"),
    ("arrived %", "arrived_pct", 10, ".1f"),
    ("TTG s", "mean_ttg_s", 7, ".1f"),
    ("vs RVO2", "ttg_vs_rvo2_pct", 8, "+.0f"),
    ("jitter °", "jitter_deg_per_step", 9, ".2f"),
    ("stops °", "jitter_stops_deg_per_step", 8, ".2f"),
    ("° per m", "turn_deg_per_m", 8, ".1f"),
    ("ms/step", "ms_per_step", 9, ".3f"),
    ("pre-push", "pre_push", 10, "d"),
)
SEEDS_COLUMN = ("min arr %", "arrived_min_pct", 10, ".1f")


def _versions() -> dict[str, str | None]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _cell(value, width: int, spec: str) -> str:
    if value is None or isinstance(value, float) and math.isnan(value):
        return f"{'-':>{width}}"
    align = "<" if spec == "s" else ">"
    sign, spec = ("+", spec[1:]) if spec.startswith("+") else ("", spec)
    return f"{value:{align}{sign}{width}{spec}}"


def _json_value(value):
    """NaN (no arrivals, no moving steps) as null: strict JSON has no NaN; arrays as lists."""
    if hasattr(value, "tolist"):
        return [_json_value(v) for v in value.tolist()]
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def _row(row: dict, columns=COLUMNS) -> str:
    return "".join(_cell(row.get(key), width, spec) for _, key, width, spec in columns)


def _names(text: str | None, known, default) -> list[str]:
    names = list(default) if text is None else [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown name(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def per_seed_line(ttg: list[float]) -> str:
    """The spread of per-seed time to goal against RVO2 (%, seed k at index k; NaN where no
    agent arrived in both runs): median, seeds within 15 %, slower or faster by more than
    15 and 30 %, and which seeds were more than 30 % slower."""
    t = np.asarray(ttg, dtype=np.float64)
    ok = t[np.isfinite(t)]
    if ok.size == 0:
        return "  per seed vs RVO2: no seed with an agent home in both runs"
    slow = [int(k) for k in np.flatnonzero(np.isfinite(t) & (t > 30.0))]
    return (
        f"  per seed vs RVO2 ({ok.size} seeds): median {np.median(ok):+.0f} %, within 15 %: "
        f"{np.count_nonzero(np.abs(ok) <= 15.0)}, slower by > 15 %: "
        f"{np.count_nonzero(ok > 15.0)}, > 30 %: {len(slow)}"
        + (f" (seeds {', '.join(map(str, slow))})" if slow else "")
        + f"; faster by > 15 %: {np.count_nonzero(ok < -15.0)}, > 30 %: "
        f"{np.count_nonzero(ok < -30.0)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", help=f"comma list of {', '.join(SCENES)} (default: all)")
    ap.add_argument("--systems", help=f"comma list of {', '.join(SYSTEMS)} (default: all)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"{', '.join(QUICK_SCENES)} only, at most {QUICK_STEPS} steps",
    )
    ap.add_argument(
        "--velocity-accel",
        type=float,
        default=6.0,
        help="max acceleration of the cs-velocity and rvo2-accel agents (m/s², default 6)",
    )
    ap.add_argument(
        "--no-resolve",
        action="store_true",
        help="turn off contextsteer's push-apart: every system on its steering alone",
    )
    ap.add_argument(
        "--navground-resolve",
        action="store_true",
        help="turn on navground's world collision resolution (its default; it jams its ORCA)",
    )
    ap.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help=f"run the seeded scenes ({', '.join(SEEDED)}) with seeds 0..N-1 and "
        "print one pooled row per scene and system (collisions summed, "
        "arrivals/TTG/jitter averaged, plus the worst seed's arrivals)",
    )
    ap.add_argument(
        "--per-seed",
        action="store_true",
        help="with --seeds N > 1 and rvo2 among the systems: after each pooled row, the "
        "spread of the seeds' own time to goal against RVO2's on the same seed",
    )
    ap.add_argument("--slots", type=int, default=16, help="slots of the contextsteer systems")
    ap.add_argument(
        "--rvo2-margin",
        type=float,
        default=CS_MARGIN,
        metavar="M",
        help=f"clearance (m) rvo2-margin keeps between two agents, planning with radius "
        f"0.3 + M/2 (default {CS_MARGIN}, cs-velocity's margin)",
    )
    ap.add_argument(
        "--rvo2-ring",
        type=int,
        default=Options.rvo2_ring,
        metavar="K",
        help="directions of rvo2-ring's regular ring, turned with each agent's heading "
        f"(default {Options.rvo2_ring})",
    )
    ap.add_argument(
        "--jps-substeps",
        type=int,
        default=1,
        metavar="N",
        help="JuPedSim steps each 1/30 s step as N iterations of 1/(30 N) s (default 1)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the rows to this JSON file")
    args = ap.parse_args()
    scenes = _names(args.scenes, SCENES, QUICK_SCENES if args.quick else SCENES)
    systems = _names(args.systems, SYSTEMS, SYSTEMS)
    options = Options(
        velocity_accel=args.velocity_accel,
        resolve=not args.no_resolve,
        navground_resolve=args.navground_resolve,
        slots=args.slots,
        rvo2_margin=args.rvo2_margin,
        rvo2_ring=args.rvo2_ring,
        jps_substeps=args.jps_substeps,
    )
    if args.seeds < 1:
        raise SystemExit(f"--seeds must be >= 1, got {args.seeds}")
    if args.slots < 3:
        raise SystemExit(f"--slots must be >= 3, got {args.slots}")
    if args.rvo2_ring < 1:
        raise SystemExit(f"--rvo2-ring must be >= 1, got {args.rvo2_ring}")
    if args.jps_substeps < 1:
        raise SystemExit(f"--jps-substeps must be >= 1, got {args.jps_substeps}")
    if not args.rvo2_margin >= 0.0:
        raise SystemExit(f"--rvo2-margin must be >= 0 (m), got {args.rvo2_margin}")
    if not (args.velocity_accel > 0.0 and math.isfinite(args.velocity_accel)):
        raise SystemExit(f"--velocity-accel must be a finite number > 0, got {args.velocity_accel}")
    if args.per_seed and (args.seeds < 2 or "rvo2" not in systems):
        raise SystemExit("--per-seed needs --seeds N with N >= 2 and rvo2 among the systems")
    columns = COLUMNS + (SEEDS_COLUMN,) if args.seeds > 1 else COLUMNS
    # RVO2 runs first on every scene: the other rows are compared with it.
    systems = sorted(systems, key=lambda name: name != "rvo2")

    versions = _versions()
    print(
        "crowd quality: radius 0.3 m, speed 1.3 m/s, dt 1/30 s; overlap resolution "
        f"{'on' if options.resolve else 'off'}; load average "
        f"{os.getloadavg()[0]:.2f}; "
        + ", ".join(f"{k} {v or 'missing'}" for k, v in versions.items()),
        flush=True,
    )
    print("".join(f"{h:<{w}}" if spec == "s" else f"{h:>{w}}" for h, _, w, spec in columns))
    rows, skipped = [], {}
    for scene_name in scenes:
        seeds = range(args.seeds) if scene_name in SEEDED else range(1)
        built = [SCENES[scene_name](seed=seed) for seed in seeds]
        reference = None  # this scene's RVO2 row
        reference_runs: list[dict] = []  # and its runs, seed by seed
        for system_name in systems:
            if system_name in skipped:
                continue
            runs = []
            for scene in built:
                steps = min(scene.steps, QUICK_STEPS) if args.quick else scene.steps
                try:
                    system = SYSTEMS[system_name](scene, options)
                except Unavailable as e:
                    skipped[system_name] = str(e)
                    print(f"note: {system_name} skipped: {e}", flush=True)
                    break
                runs.append(run(system, scene, steps))
            if not runs:
                continue
            figures = runs[0] if args.seeds == 1 else pool(runs)
            row = {"scene": scene_name, "system": system_name, **figures}
            if system_name == "rvo2":
                reference, reference_runs = row, runs
            elif reference is not None:
                row["ttg_vs_rvo2_pct"] = ttg_vs(row, reference)
                if args.per_seed and len(runs) > 1:
                    row["ttg_vs_rvo2_per_seed"] = [
                        ttg_vs(mine, ref) for mine, ref in zip(runs, reference_runs)
                    ]
            rows.append(row)
            print(_row(row, columns), flush=True)
            if row.get("stopped"):
                print(f"note: {system_name} stopped on {scene_name}: {row['stopped']}", flush=True)
            if "ttg_vs_rvo2_per_seed" in row:
                print(per_seed_line(row["ttg_vs_rvo2_per_seed"]), flush=True)
    print(
        "collisions and wall pens are episodes; jitter in degrees per step and ° per m in "
        "degrees per metre walked; ms/step: the\nsystem's step call alone (median); "
        "pre-push (cs-* only): overlapping pairs right "
        "after each move, before push-apart, summed over steps."
    )
    if "rvo2-ring" in systems:
        print(f"rvo2-ring: ORCA's velocity snapped to {options.rvo2_ring} directions a step.")
    print(
        (
            "cs-* resolve overlaps after each move (push-apart)"
            if options.resolve
            else "no system resolves overlaps"
        )
        + ("; so does navground (its world's resolution)" if options.navground_resolve else "")
        + (
            "; RVO2 and JuPedSim do not."
            if options.navground_resolve
            else "; RVO2, navground and JuPedSim do not."
        )
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "versions": versions,
                    "quick": args.quick,
                    "seeds": args.seeds,
                    "velocity_accel": options.velocity_accel,
                    "resolve": options.resolve,
                    "navground_resolve": options.navground_resolve,
                    "rvo2_margin": options.rvo2_margin,
                    "slots": options.slots,
                    "rvo2_ring": options.rvo2_ring,
                    "jps_substeps": options.jps_substeps,
                    "skipped": skipped,
                    "rows": [{k: _json_value(v) for k, v in r.items()} for r in rows],
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
