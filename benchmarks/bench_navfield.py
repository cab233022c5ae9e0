"""Benchmark of navigation fields: build time, query cost, and the crowd-track-10k step
with and without FollowField.

Not a test. Prints four tables:

1. Build: one NavField (fast marching, one goal) on a 500 × 500 node grid — an open
   100 m × 100 m frame at cell 0.2, margin 0 (503 × 503 nodes with the one-cell pad), and the same
   frame with 60 random boxes — one thread (the build is serial), median of 7 builds,
   wall clock and CPU time.
2. Query: distance + descent at 1 M random points (one bilinear lookup each), ns/point,
   one thread and all threads; and the string-pulled direction (look_ahead 2 m).
3. Behaviour alone: Seek(half_cosine) and FollowField evaluated on the crowd-track-10k
   agents (16 slots, one thread, CPU time, ns per agent, including the (N, K) maps'
   allocation and the Python call): the cost of the lookup itself.
4. Step: crowd-track-10k (benchmarks/scenes.py, 100 steps of dt 0.25) in a plain
   velocity-space configuration (half-cosine Seek + CollisionDanger(horizon=2, speeds=4)
   with none of CROWD's options, resolve mask_min_danger, choose argmax, the regular ring
   of 16 slots in the world frame, deciding at once, Lerp(0.5): not bench_step.py's
   "cs vel" rows, which add the tuned options, the phases and the turning crowd slots;
   the guide's own cost is what this table isolates), against the same
   configuration with Seek replaced by FollowField (two fields, agents choosing theirs by
   group: even agents to a goal line across the track at the top, odd ones at the bottom;
   cell 3, radius 1.5: 2 × 0.38 M nodes), plain and string-pulled (look_ahead 6).
   ms/step is the median over the steps: wall clock with one thread and all threads, and
   CPU time with one thread (steady on a shared machine).

Usage: PYTHONPATH=python python3 benchmarks/bench_navfield.py [--quick]
(--quick: crowd-track-1k instead of 10k.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextsteer as cs  # noqa: E402
from scenes import crowd_preferred, crowd_track_scene  # noqa: E402

AHEAD = 10.0


def build_times(world, goal, repeats=7):
    """Median wall-clock and CPU milliseconds of a build (the build is serial, so CPU time
    is its single-thread cost even when other processes share the cores)."""
    field = cs.NavField(world, goal, cell=0.2, radius=0.0, margin=0.0)
    wall, cpu = [], []
    with cs.threads(1):
        for _ in range(repeats):
            c0 = time.process_time()
            field._core.rebuild(world._core)
            cpu.append(time.process_time() - c0)
            wall.append(field.build_seconds)
    return field, 1e3 * statistics.median(wall), 1e3 * statistics.median(cpu)


def table_build():
    print("== build (one thread, median of 7) ==")
    print(f"{'world':<28}{'nodes':>12}{'wall ms':>9}{'cpu ms':>9}")
    world = cs.World()
    world.add_polyline([[0, 0], [100, 0], [100, 100], [0, 100]], closed=True)
    field, ms, cpu = build_times(world, np.float32([50.3, 50.7]))
    x0, y0, c, nx, ny = field.grid
    print(f"{'open 100 m x 100 m':<28}{f'{nx} x {ny}':>12}{ms:>9.1f}{cpu:>9.1f}")
    rng = np.random.default_rng(0)
    for c_, h in zip(rng.uniform(5, 95, (60, 2)), rng.uniform(0.5, 3, (60, 2))):
        world.add_box(center=c_, half_extents=h)
    field, ms, cpu = build_times(world, np.float32([50.3, 50.7]))
    print(f"{'60 boxes':<28}{f'{nx} x {ny}':>12}{ms:>9.1f}{cpu:>9.1f}")
    return field


def table_query(field):
    print("== query (1 M points) ==")
    pts = np.random.default_rng(1).uniform(1, 99, (1_000_000, 2)).astype(np.float32)
    for label, kw in [("distance + descent", {}), ("string-pulled 2 m", {"look_ahead": 2.0})]:
        for threads in (1, cs.get_num_threads()):
            with cs.threads(threads):
                field.query(pts[:1000], **kw)
                t0 = time.perf_counter()
                field.query(pts, **kw)
                dt = time.perf_counter() - t0
            print(f"{label:<24}{threads:>3} thr {1e9 * dt / len(pts):>8.1f} ns/point")


def crowd_sim(scene, mode):
    world = cs.World()
    world.add_segments(scene.walls)
    n = len(scene.positions)
    agents = cs.Agents(n, slots=16)
    pref = crowd_preferred(scene.positions, scene.scale)
    agents.add(
        scene.positions,
        velocity=0.0,
        radius=scene.radius,
        max_speed=scene.max_speed,
        max_accel=4.0,
        target=scene.positions + AHEAD * pref,
        group=np.arange(n) % 2,
    )
    if mode == "seek":
        guide = cs.Seek(shape="half_cosine")
    else:
        k = scene.scale
        # Goal lines across the track: top (y = 40k..60k at x = 0) and bottom.
        top = np.float32([[0, 40 * k, 0, 60 * k]])
        bottom = np.float32([[0, -60 * k, 0, -40 * k]])
        field = cs.NavField(world, [top, bottom], cell=3.0, radius=1.5)
        guide = cs.FollowField(
            field, which="group", shape="half_cosine", look_ahead=6.0 if mode == "pulled" else 0.0
        )
    st = cs.Steering(
        [guide, cs.CollisionDanger(horizon=2.0, speeds=4)],
        resolve="mask_min_danger",
        choose="argmax",
    )
    sim = cs.Simulation(world, agents, st, motion=cs.Lerp(steer_force=0.5))
    sim.configure_metrics(enabled=False)
    return sim, agents


def run(scene, mode, threads, clock=time.perf_counter):
    sim, agents = crowd_sim(scene, mode)
    times = []
    with cs.threads(threads):
        for _ in range(scene.steps):
            if mode == "seek":
                p = agents.position
                agents.target[...] = p + AHEAD * crowd_preferred(p, scene.scale)
            t0 = clock()
            sim.step(scene.dt)
            times.append(clock() - t0)
    return 1e3 * statistics.median(times)


def table_behaviour(n):
    """Each interest behaviour evaluated alone on the scene's agents (16 slots, one
    thread): what the behaviour itself costs, apart from how it changes the crowd."""
    scene = crowd_track_scene(n)
    sim, agents = crowd_sim(scene, "field")
    field = sim.steering.behaviours[0].field
    print(f"== behaviour alone: {scene.name}, 16 slots, one thread, ns/agent (min of 5) ==")
    for label, b in [
        ("Seek(half_cosine)", cs.Seek(shape="half_cosine")),
        ("FollowField", cs.FollowField(field, which="group", shape="half_cosine")),
        (
            "FollowField look_ahead=6",
            cs.FollowField(field, which="group", shape="half_cosine", look_ahead=6.0),
        ),
    ]:
        best = np.inf
        with cs.threads(1):
            for _ in range(5):
                c0 = time.process_time()
                b.evaluate(agents, 16)
                best = min(best, time.process_time() - c0)
        print(f"{label:<34}{1e9 * best / n:>8.1f}", flush=True)


def table_step(n):
    scene = crowd_track_scene(n)
    print(f"== step: {scene.name}, 100 steps, ms/step (median) ==")
    print(f"{'interest':<34}{'1 thr':>8}{'1 thr cpu':>10}{'all':>8}")
    for label, mode in [
        ("Seek(half_cosine) [no field]", "seek"),
        ("FollowField", "field"),
        ("FollowField look_ahead=6", "pulled"),
    ]:
        one = run(scene, mode, 1)
        cpu = run(scene, mode, 1, clock=time.process_time)
        allt = run(scene, mode, cs.get_num_threads())
        print(f"{label:<34}{one:>8.2f}{cpu:>10.2f}{allt:>8.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f}; threads: {cs.get_num_threads()}")
    field = table_build()
    table_query(field)
    table_behaviour(1000 if args.quick else 10_000)
    table_step(1000 if args.quick else 10_000)


if __name__ == "__main__":
    main()
