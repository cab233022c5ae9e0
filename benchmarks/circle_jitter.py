"""The crowd benchmark's circles with their starts jittered: not a test.

The benchmark's circles (``crowd_quality.circle_scene``) start exactly symmetric, where
RVO2 deadlocks: every agent's reciprocal half-planes cancel. A real crowd never starts so;
this runs RVO2 and contextsteer's velocity-space configuration on the same circles with
each start moved by a uniform offset in [-eps, eps] (seeded), and prints the benchmark's
own metrics (same protocol and metric code as ``bench_crowd_quality.py``).

    python benchmarks/circle_jitter.py                       # circles of 16 and 64
    python benchmarks/circle_jitter.py --sizes 16 --eps 0 0.01 --systems rvo2 cs-velocity
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crowd_quality as cq  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 64], help="agents a circle")
    ap.add_argument(
        "--eps", type=float, nargs="+", default=[0.0, 1e-3, 1e-2], help="start offsets (m)"
    )
    ap.add_argument("--systems", nargs="+", default=["rvo2", "cs-velocity"])
    ap.add_argument("--seed", type=int, default=1, help="seed of the offsets")
    args = ap.parse_args()
    print("| circle | offset | system | home | time to goal | collisions | jitter °/step |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for eps in args.eps:
            for name in args.systems:
                scene = cq.circle_scene(n)
                rng = np.random.default_rng(args.seed)
                scene.starts = scene.starts + rng.uniform(-eps, eps, scene.starts.shape)
                r = cq.run(cq.SYSTEMS[name](scene, cq.Options()), scene)
                print(
                    f"| {n} | {eps * 1000:g} mm | {name} | {r['arrived_pct']:.0f} % | "
                    f"{r['mean_ttg_s']:.1f} s | {r['collisions']} | "
                    f"{r['jitter_deg_per_step']:.2f} |"
                )


if __name__ == "__main__":
    main()
