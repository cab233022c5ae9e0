"""Rotated slot rays on track-M-L, alone: for profilers (not a test).

Casts ``slot_raycast`` with seeded random headings (the rotated-slot row of
bench_raycast.py) --casts times on one thread, so that a profiler sees nothing else; the
difference of two cast counts cancels the start-up:

    valgrind --tool=callgrind python benchmarks/ray_once.py --casts 3
    valgrind --tool=callgrind python benchmarks/ray_once.py --casts 1

(total instructions of the first less the second) / (2 × 160,000 rays) = instructions a
ray. Prints the hit count of the last cast (142,679 on track-10000-50).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextsteer as cs  # noqa: E402
from scenes import at_least, track_scene  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--walls", type=at_least(6), default=10_000, help="M of track-M-L (even: two ellipses)"
    )
    ap.add_argument("--length", type=float, default=50.0, help="L of track-M-L")
    ap.add_argument("--casts", type=at_least(1), default=1)
    ap.add_argument(
        "--method",
        choices=["auto", "per_ray", "gather", "sectors"],
        default="auto",
        help="slot_raycast's method ('sectors': the first cast builds the index, which the "
        "difference of two cast counts cancels)",
    )
    args = ap.parse_args(argv)
    if args.walls % 2:
        ap.error(f"--walls must be even (M/2 segments an ellipse), got {args.walls}")
    s = track_scene(args.walls, args.length)
    world = cs.World()
    world.add_segments(s.walls)
    rng = np.random.default_rng(7)
    headings = rng.uniform(-np.pi, np.pi, len(s.positions)).astype(np.float32)
    cs.set_num_threads(1)
    dist = None
    for _ in range(args.casts):
        dist = cs.slot_raycast(
            world, s.positions, s.slot_dirs, s.max_dist, headings=headings, method=args.method
        )
    print(int(np.isfinite(dist).sum()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
