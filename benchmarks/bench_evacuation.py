"""RiMEA 9's room stepped on one and two threads: a dense, navigated crowd (not a test).

The room of ``cs.rimea.test9`` (30 m × 20 m, 1,000 agents of radius 0.25 m, 4 exits,
seed 0; ``cs.scenarios.evacuation`` with ``CROWD`` deciding in 16 phases and
``FollowField`` on a 0.15 m navigation field) is built, stepped ``--warm`` steps, then
``--steps`` more are timed, on 1 and 2 threads in turns, ``--runs`` times each. Prints
the median ms per step, the two-thread speed-up, and a hash of the agents' positions
after each run (one hash: the threads change no bit). ``--test9`` also times the whole
``rimea.test9()`` once on the default threads.

    python benchmarks/bench_evacuation.py --runs 5
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import contextsteer as cs  # noqa: E402
from contextsteer import rimea  # noqa: E402
from scenes import at_least  # noqa: E402


def run(threads: int, agents: int, warm: int, steps: int) -> tuple[float, str]:
    """ms per step over ``steps`` after ``warm`` steps, and the positions' hash."""
    sim = cs.scenarios.evacuation(agents=agents, seed=0, exits=4, width=30.0, depth=20.0)
    np.asarray(sim.agents.radius)[:] = 0.25  # as rimea.evacuation_time
    with cs.threads(threads):
        sim.step(rimea.DT, steps=warm)
        t0 = time.perf_counter()
        sim.step(rimea.DT, steps=steps)
        ms = (time.perf_counter() - t0) / steps * 1e3
    digest = hashlib.sha1(np.ascontiguousarray(sim.agents.position).tobytes()).hexdigest()
    return ms, digest[:12]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=at_least(1), default=1000)
    ap.add_argument("--warm", type=at_least(1), default=2)
    ap.add_argument("--steps", type=at_least(1), default=300)
    ap.add_argument("--runs", type=at_least(1), default=3)
    ap.add_argument("--test9", action="store_true", help="also time rimea.test9() once")
    args = ap.parse_args(argv)
    times: dict[int, list[float]] = {1: [], 2: []}
    hashes = set()
    for _ in range(args.runs):
        for threads in (1, 2):
            ms, digest = run(threads, args.agents, args.warm, args.steps)
            times[threads].append(ms)
            hashes.add(digest)
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"RiMEA 9 room, {args.agents} agents, steps {args.warm}..{args.warm + args.steps}")
    print("| threads | ms a step (median) | runs |")
    print("|---|---|---|")
    for threads, median in ((1, one), (2, two)):
        runs = ", ".join(f"{t:.2f}" for t in times[threads])
        print(f"| {threads} | {median:.2f} | {runs} |")
    print(f"two threads: {one / two:.2f}x one; position hashes: {sorted(hashes)}")
    if len(hashes) != 1:
        raise SystemExit("the runs disagree")
    if args.test9:
        t0 = time.perf_counter()
        res = rimea.test9()
        print(f"rimea.test9(): {time.perf_counter() - t0:.1f} s, {res.value} {res.details}")


if __name__ == "__main__":
    main()
