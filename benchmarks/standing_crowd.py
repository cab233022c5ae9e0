"""A packed crowd standing at its goals, against the same crowd walking: µs an agent a step.

Not a test. A side × side lattice of bodies (radius 0.25 m, 1.3 m/s, 6 m/s²) at the
given spacings (0.5 m: touching), ``scenarios.crowd_steering(walls=False)`` on
``scenarios.crowd_slots()`` with ``Accel`` motion, no walls. Columns:

- ``standing``: each target on its body: the crowd has arrived.
- ``walking``: each target 100 m along +x: the crowd walks away, all one way.
- ``standing, options={}``: standing, with none of the ``CROWD`` options (no creep
  candidates from standing, no ``past_target``).
- ``standing, past_target=False``: standing, ``CROWD`` less that one option.

Each case warms up for ``--warm`` steps of 1/30 s, then times ``--steps``; the median
of ``--repeats`` runs, each a fresh simulation, all cases in one process, one after
another. The figures are in docs/performance.md ("A dense crowd standing at its goals").

For instruction counts (which a shared host's load cannot move), run one case alone:

    valgrind --tool=callgrind python benchmarks/standing_crowd.py --side 24 \\
        --spacings 0.7 --only standing --warm 0 --steps 30 --repeats 1 --threads 1

and divide ``Simulation::step``'s inclusive count by side² × steps.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import contextsteer as cs  # noqa: E402

CASES = {
    "standing": (False, None),
    "walking": (True, None),
    "standing, options={}": (False, "plain"),
    "standing, past_target=False": (False, {"past_target": False}),
}


def simulation(side: int, spacing: float, walk: bool, options) -> cs.Simulation:
    """The lattice and its steering (see the module docstring)."""
    g = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2) * spacing
    pos = (g - g.mean(0)).astype(np.float32)
    agents = cs.Agents(side * side, slots=16)
    target = pos + (np.float32([100.0, 0.0]) if walk else np.float32(0.0))
    agents.add(pos, radius=0.25, max_speed=1.3, max_accel=6.0, target=target)
    if options == "plain":
        steering = cs.scenarios.crowd_steering(walls=False, options={})
    else:
        steering = cs.scenarios.crowd_steering(walls=False, changes=options)
    return cs.Simulation(
        None, agents, steering, motion=cs.Accel(), slots=cs.scenarios.crowd_slots()
    )


def time_case(side: int, spacing: float, case: str, warm: int, steps: int) -> float:
    """µs an agent a step of one fresh run."""
    walk, options = CASES[case]
    sim = simulation(side, spacing, walk, options)
    if warm:
        sim.step(1 / 30, steps=warm)
    t0 = time.perf_counter()
    sim.step(1 / 30, steps=steps)
    return (time.perf_counter() - t0) / steps / (side * side) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--side", type=int, default=70, help="agents along a side (default 70)")
    ap.add_argument("--spacings", default="0.5,0.7", help="comma-separated, m")
    ap.add_argument("--only", choices=sorted(CASES), action="append", help="cases to run")
    ap.add_argument("--warm", type=int, default=60)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if args.side < 1 or args.steps < 1 or args.repeats < 1 or args.warm < 0:
        ap.error("--side, --steps and --repeats must be at least 1, --warm at least 0")
    spacings = [float(s) for s in args.spacings.split(",")]
    cases = args.only or list(CASES)
    print(
        f"{args.side}x{args.side} lattice, radius 0.25 m, {args.threads} thread(s), "
        f"{args.warm} steps then {args.steps} timed, median of {args.repeats}: "
        "µs an agent a step"
    )
    print("| spacing | " + " | ".join(cases) + " |")
    print("|---" * (len(cases) + 1) + "|")
    with cs.threads(args.threads):
        for spacing in spacings:
            row = []
            for case in cases:
                runs = [
                    time_case(args.side, spacing, case, args.warm, args.steps)
                    for _ in range(args.repeats)
                ]
                row.append(f"{statistics.median(runs):.1f}")
            print(f"| {spacing:g} m | " + " | ".join(row) + " |")
    print(f"(load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
