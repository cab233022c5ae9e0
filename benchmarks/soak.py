"""Soak test (not a test of the suite): many agents for many steps on the racetrack scene.

Runs crowd-track-N (SCENES.md: the racetrack ellipses scaled for N agents, agents meeting
head-on) with the crowd steering (velocity-space danger) for ``--steps`` steps, and prints
the process's resident memory at start and end, the time per step and whether any state
became non-finite. Memory must stay flat: the step allocates nothing in steady state.

Usage: python benchmarks/soak.py [--agents 10000] [--steps 100000] [--report 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextsteer as cs  # noqa: E402
from scenes import crowd_preferred, crowd_track_scene  # noqa: E402


def rss_mib() -> float:
    """Resident set size of this process (MiB), from /proc."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--report", type=int, default=10_000, help="steps between reports")
    args = ap.parse_args()
    scene = crowd_track_scene(args.agents)
    world = cs.World()
    world.add_segments(scene.walls)
    agents = cs.Agents(args.agents, slots=16)
    agents.add(
        scene.positions,
        radius=scene.radius,
        max_speed=scene.max_speed,
        max_accel=4.0,
        target=scene.positions + 10 * crowd_preferred(scene.positions, scene.scale),
    )
    sim = cs.Simulation(world, agents, cs.scenarios.crowd_steering(arrive=False), motion=cs.Accel())
    start = rss_mib()
    print(
        f"crowd-track-{args.agents}, {args.steps} steps of {scene.dt} s; RSS at start "
        f"{start:.1f} MiB; threads {cs.get_num_threads()}",
        flush=True,
    )
    done, t0 = 0, time.perf_counter()
    while done < args.steps:
        n = min(args.report, args.steps - done)
        t = time.perf_counter()
        for _ in range(n):
            p = agents.position
            agents.target[...] = p + 10 * crowd_preferred(p, scene.scale)
            sim.step(scene.dt)
        done += n
        finite = bool(np.isfinite(agents.position).all() and np.isfinite(agents.velocity).all())
        m = sim.metrics()["collisions"]
        print(
            f"step {done:>8}: {1e3 * (time.perf_counter() - t) / n:6.2f} ms/step, RSS "
            f"{rss_mib():7.1f} MiB, finite {finite}, contacts {m['agent_agent']} agent / "
            f"{m['agent_wall']} wall",
            flush=True,
        )
        if not finite:
            raise SystemExit("non-finite state")
    print(f"done in {time.perf_counter() - t0:.0f} s; RSS {start:.1f} -> {rss_mib():.1f} MiB")


if __name__ == "__main__":
    main()
