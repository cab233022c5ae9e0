"""What a Flow costs on top of the step: not a test.

The ``counterflow`` scenario at ``--length`` × ``--width`` m, fed from both ends by its
``cs.Flow`` (``--rate`` persons/s each way; walkers and steering as the scenario's), for
``--fill`` seconds; then ``--measure`` seconds more are timed, the C++ steps
(``Simulation``'s core call) apart from the rest of ``Simulation.step``, which is the
flow's Python: arrivals, admissions, exits. No peer runs the same work, so the figure
is the flow's share of the step, a median over ``--runs`` runs. One thread.

    python benchmarks/bench_flow.py                      # 200 m x 50 m, 80 persons/s each way
    python benchmarks/bench_flow.py --rate 20 --fill 30  # fewer agents
"""

from __future__ import annotations

import argparse
import statistics
import time

import contextsteer as cs

DT = 1.0 / 30.0


def build(length: float, width: float, rate: float, capacity: int, seed: int = 0):
    """The ``counterflow`` scenario at this size: ``rate`` persons/s from each end."""
    return cs.scenarios.get("counterflow")(
        rate=2 * rate, length=length, width=width, agents=capacity, seed=seed
    )


def measure(sim, steps: int) -> tuple[float, float]:
    """(whole, core) seconds of ``steps`` steps: the core's own calls timed apart."""
    core = sim._core
    spent = [0.0]
    step = core._step

    class Timed:
        def __getattr__(self, name):
            return getattr(core, name)

        def _step(self, dt, n):
            t = time.perf_counter()
            step(dt, n)
            spent[0] += time.perf_counter() - t

    sim.__dict__["_core"] = Timed()
    try:
        t0 = time.perf_counter()
        sim.step(DT, steps)
        whole = time.perf_counter() - t0
    finally:
        sim.__dict__["_core"] = core
    return whole, spent[0]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--length", type=float, default=200.0)
    ap.add_argument("--width", type=float, default=50.0)
    ap.add_argument("--rate", type=float, default=80.0, help="persons/s from each end")
    ap.add_argument("--fill", type=float, default=60.0, help="seconds before timing")
    ap.add_argument("--measure", type=float, default=10.0, help="seconds timed")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--capacity", type=int, default=20000)
    args = ap.parse_args(argv)
    with cs.threads(1):
        rows = []
        for run in range(args.runs):
            sim = build(args.length, args.width, args.rate, args.capacity, seed=run)
            sim.step(DT, int(round(args.fill / DT)))
            n0 = sim.agents.count
            whole, core = measure(sim, int(round(args.measure / DT)))
            steps = int(round(args.measure / DT))
            rows.append((n0, sim.agents.count, whole / steps, (whole - core) / steps))
    n0 = statistics.median(r[0] for r in rows)
    n1 = statistics.median(r[1] for r in rows)
    step = statistics.median(r[2] for r in rows)
    flow = statistics.median(r[3] for r in rows)
    print(
        f"flow: {args.length:g} m x {args.width:g} m, {args.rate:g} persons/s each way, "
        f"{n0:.0f} -> {n1:.0f} agents, one thread, median of {args.runs} runs"
    )
    print(
        f"step {1e3 * step:.2f} ms, of it the flow {1e3 * flow:.2f} ms ({100 * flow / step:.1f} %)"
    )


if __name__ == "__main__":
    main()
