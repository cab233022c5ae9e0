"""One bench_step.py configuration on crowd-track-N, alone: for profilers (not a test).

Runs the scene's steps once (or --runs times) with one configuration and prints the
median ms per step, so that a profiler sees nothing else, e.g. instruction counts that a
shared machine's load cannot move:

    valgrind --tool=callgrind python benchmarks/step_once.py --n 10000 --config velocity

then ``callgrind_annotate --inclusive=yes`` and divide the counts of
``Simulation::step`` / ``Simulation::observe`` by N × steps (instructions an agent a step).

Configurations: ``default`` (bench_step.steering: Seek, WallDanger, AgentDanger) and
``velocity`` (cs.scenarios.crowd_steering: half-cosine Seek, CollisionDanger with the
tuned options of cs.scenarios.CROWD, deciding in phases), ``velocity-at-once`` (the same,
``decision_phases=1``), ``velocity-plain`` (options={}, at once); K slots
(default 16), one thread unless --threads, run metrics on unless --no-metrics.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextsteer as cs  # noqa: E402
from bench_step import AHEAD, steering, velocity_slots, velocity_steering  # noqa: E402
from scenes import agent_count, at_least, crowd_preferred, crowd_track_scene  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=agent_count, default=10_000, help="agents, e.g. 10000 or 10k")
    ap.add_argument("--k", type=at_least(3), default=16)
    ap.add_argument(
        "--config",
        choices=["default", "velocity", "velocity-at-once", "velocity-plain"],
        default="default",
    )
    ap.add_argument("--no-metrics", action="store_true", help="configure_metrics(enabled=False)")
    ap.add_argument("--steps", type=at_least(1), default=None, help="default: the scene's 100")
    ap.add_argument("--runs", type=at_least(1), default=1)
    ap.add_argument("--threads", type=at_least(1), default=1)
    args = ap.parse_args()
    scene = crowd_track_scene(args.n)
    steps = args.steps or scene.steps
    runs = []
    for _ in range(args.runs):
        world = cs.World()
        world.add_segments(scene.walls)
        agents = cs.Agents(args.n, slots=args.k)
        agents.add(
            scene.positions,
            velocity=0.0,
            radius=scene.radius,
            max_speed=scene.max_speed,
            max_accel=4.0,
            target=scene.positions + AHEAD * crowd_preferred(scene.positions, scene.scale),
        )
        if args.config.startswith("velocity"):
            st = velocity_steering(
                plain=args.config == "velocity-plain", at_once=args.config == "velocity-at-once"
            )
        else:
            st = steering()
        velocity = args.config.startswith("velocity")
        slots = velocity_slots(args.k, args.config == "velocity-plain") if velocity else args.k
        sim = cs.Simulation(world, agents, st, motion=cs.Lerp(steer_force=0.5), slots=slots)
        sim.configure_metrics(enabled=not args.no_metrics)
        times = []
        with cs.threads(args.threads):
            for _ in range(steps):
                p = agents.position
                agents.target[...] = p + AHEAD * crowd_preferred(p, scene.scale)
                t0 = time.perf_counter()
                sim.step(scene.dt)
                times.append(time.perf_counter() - t0)
        runs.append(1e3 * statistics.median(times))
    print(
        f"crowd-track-{args.n}, {args.config}, K={args.k}, metrics "
        f"{'off' if args.no_metrics else 'on'}, {args.threads} thread(s): "
        f"{statistics.median(runs):.3f} ms/step (median of {args.runs} run(s); "
        f"load average {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
