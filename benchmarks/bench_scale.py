"""Scale curve of the simulation step on "crowd-track-N" (SCENES.md), next to RVO2 (not a test).

For N in {1k, 10k, 100k, 1M} agents (the racetrack scaled by k = sqrt(N/100), so the
density stays the same) and K in {8, 16, 32, 64} slots, on one and on two threads, prints
the cost of a step per agent (ns) and the memory per agent (bytes), writes the table to
``docs/bench_scale.md`` and plots both against N in ``docs/bench_scale.png``. RVO2 (PyPI
``pyrvo``, SCENES.md parameters, walls as two obstacles, ``do_step`` alone timed) runs at
the sizes up to ``--rvo2-max`` (default 100k; 1M takes minutes a step).

Configuration: bench_step.py's (Seek + WallDanger(look_ahead=3) + AgentDanger(radius=3),
combine max, resolve subtract, choose vector_sum, Lerp, push-apart), with the built-in run
metrics on (a Simulation's default); ``--velocity`` uses the velocity-space configuration
(``cs.scenarios.crowd_steering``) instead.

Timing: every (N, K, threads) case runs in its own process: it builds the scene, runs
``--steps`` steps (default 10; the scene's 100 with ``--steps 100``) and reports the
median ``Simulation.step`` time of the steps after the first (which allocates). Cost per
agent = that median / N. Memory per agent = the growth of the process's resident set
from before the World, Agents and Simulation are made to after the last step, / N (the
scene's own NumPy arrays are not counted; at N = 1k the figure is dominated by fixed
allocations and page granularity). The load average is printed: on a shared machine
other processes inflate the times.

``--repeats R`` runs every case R times, in R rounds over all the cases (so that a slow
spell of a shared machine falls on different cases in different rounds), and reports the
median of the R figures per case; the default, 1, runs each case once.

``--shuffle`` stores the same agents in a seeded random order. crowd-track-N builds
them in order round the track, so an agent's neighbours sit near it in memory; in random
order the step's reads of neighbours miss the cache once the state outgrows it.

Flatness: the ratio of the largest to the smallest cost per agent over N = 10k .. 1M is
printed per (K, threads).

Usage: PYTHONPATH=python python3 benchmarks/bench_scale.py [--quick] [--steps S]
       [--sizes 1000,10000,...] [--ks 8,16,...] [--rvo2-max N] [--velocity] [--repeats R]
       [--write-docs]
(--quick: N <= 100k, K in {8, 16}, 5 steps; for a smoke run. --write-docs: write the table
and the plot to docs/bench_scale.md and .png, which the full default run made them from.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"
sys.path.insert(0, str(HERE))

from scenes import agent_count, agent_counts  # noqa: E402

AHEAD = 10.0


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(args) -> None:
    """One case in this process; prints a JSON line."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.path.insert(0, str(HERE))
    import numpy as np

    from scenes import crowd_preferred, crowd_track_scene

    scene = crowd_track_scene(args.n)
    if args.shuffle:
        # The same agents stored in a seeded random order (crowd-track-N's are in order
        # round the track, so neighbours sit next to each other in memory).
        order = np.random.default_rng(0).permutation(len(scene.positions))
        scene = scene._replace(positions=scene.positions[order])
    n = len(scene.positions)
    pref = crowd_preferred(scene.positions, scene.scale)
    targets = np.empty_like(scene.positions)
    if args.system == "rvo2":
        from crowd import make_rvo2, step_rvo2

        before = rss_bytes()
        times = step_rvo2(make_rvo2(scene), scene, args.steps)
        after = rss_bytes()
    else:
        import contextsteer as cs
        from bench_step import steering, velocity_slots, velocity_steering

        before = rss_bytes()
        world = cs.World()
        world.add_segments(scene.walls)
        agents = cs.Agents(n, slots=args.k)
        agents.add(
            scene.positions,
            velocity=0.0,
            radius=scene.radius,
            max_speed=scene.max_speed,
            max_accel=4.0,
            target=scene.positions + AHEAD * pref,
        )
        st = velocity_steering() if args.velocity else steering()
        # The velocity configuration on the crowd scenarios' slots (bench_step's): at K = 16
        # the set denser ahead, not the regular ring.
        slots = velocity_slots(args.k) if args.velocity else args.k
        sim = cs.Simulation(world, agents, st, motion=cs.Lerp(steer_force=0.5), slots=slots)
        times = []
        with cs.threads(args.threads):
            for _ in range(args.steps):
                p = agents.position
                np.multiply(crowd_preferred(p, scene.scale), AHEAD, out=targets)
                targets += p
                agents.target[...] = targets
                t0 = time.perf_counter()
                sim.step(scene.dt)
                times.append(time.perf_counter() - t0)
        after = rss_bytes()
    steady = times[1:] if len(times) > 1 else times
    print(json.dumps({"ms": 1e3 * statistics.median(steady), "mem": after - before, "n": n}))


def run_case(
    system: str, n: int, k: int, threads: int, steps: int, velocity: bool, shuffle: bool = False
) -> dict:
    cmd = (
        [
            sys.executable,
            __file__,
            "--child",
            system,
            "--n",
            str(n),
            "--k",
            str(k),
            "--threads",
            str(threads),
            "--steps",
            str(steps),
        ]
        + (["--velocity"] if velocity else [])
        + (["--shuffle"] if shuffle else [])
    )
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def plot(rows, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    keys = sorted(
        {(r["system"], r["k"], r["threads"]) for r in rows},
        key=lambda x: (x[0] != "contextsteer", x[1], x[2]),
    )
    for system, k, th in keys:
        rs = sorted(
            (r for r in rows if (r["system"], r["k"], r["threads"]) == (system, k, th)),
            key=lambda r: r["n"],
        )
        ns = [r["n"] for r in rs]
        label = "RVO2 (1 thread)" if system == "rvo2" else f"K={k}, {th} thr"
        style = (
            dict(color="k", marker="s")
            if system == "rvo2"
            else dict(
                marker="o",
                linestyle="-" if th == 1 else "--",
                color=plt.cm.viridis({8: 0.0, 16: 0.3, 32: 0.6, 64: 0.85}.get(k, 0.5)),
            )
        )
        a1.plot(ns, [r["ns_per_agent"] for r in rs], label=label, **style)
        a2.plot(ns, [r["bytes_per_agent"] for r in rs], label=label, **style)
    for ax, yl in ((a1, "step cost per agent (ns)"), (a2, "memory per agent (bytes)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("agents N (crowd-track-N)")
        ax.set_ylabel(yl)
        ax.grid(True, which="both", alpha=0.3)
    a1.legend(fontsize=7, ncol=2)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", choices=["contextsteer", "rvo2"], help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--k", type=int, default=16, help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=None, help="steps per case (default 10)")
    ap.add_argument("--sizes", default=None, help="comma-separated N (default 1k,10k,100k,1M)")
    ap.add_argument("--ks", default=None, help="comma-separated K (default 8,16,32,64)")
    ap.add_argument(
        "--rvo2-max", type=agent_count, default=100_000, help="largest N for RVO2 (e.g. 100k)"
    )
    ap.add_argument("--velocity", action="store_true", help="velocity-space configuration")
    ap.add_argument(
        "--shuffle",
        action="store_true",
        help="store the agents in a seeded random order (default: in order round the track)",
    )
    ap.add_argument("--quick", action="store_true", help="N <= 100k, K in {8, 16}, 5 steps")
    ap.add_argument(
        "--repeats", type=int, default=1, help="runs of every case, in rounds; median (default 1)"
    )
    ap.add_argument("--no-write", action="store_true", help=argparse.SUPPRESS)  # the default now
    ap.add_argument(
        "--write-docs",
        action="store_true",
        help="write the table and plot to docs/bench_scale.* (off: a run only prints)",
    )
    args = ap.parse_args()
    if args.child:
        args.system = args.child
        args.steps = args.steps or 10
        child(args)
        return
    sizes = [1_000, 10_000, 100_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    ks = [8, 16] if args.quick else [8, 16, 32, 64]
    steps = args.steps or (5 if args.quick else 10)
    if args.sizes:
        try:
            sizes = agent_counts(args.sizes)
        except ValueError as e:
            ap.error(f"--sizes: {e}")
    if args.ks:
        try:
            ks = [int(x) for x in args.ks.split(",")]
        except ValueError:
            ap.error(f"--ks: expected comma-separated slot counts such as 8,16, got {args.ks!r}")
        if min(ks) < 3:
            ap.error(f"--ks: slot counts must be >= 3, got {args.ks!r}")
    import contextsteer as cs

    all_threads = cs.get_num_threads()
    threads = sorted({1, min(2, all_threads)})
    config = "velocity-space (crowd_steering)" if args.velocity else "bench_step default"
    if args.shuffle:
        config += ", agents in random order"
    head = (
        f"crowd-track-N, {config}, run metrics on; {steps} steps a case (median of "
        f"steps 2..{steps}), {args.repeats} run(s) a case (median); load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    print(head, flush=True)
    cols = f"{'system':<13}{'N':>9}{'K':>4}{'thr':>4}{'ms/step':>10}{'ns/agent':>10}{'B/agent':>9}"
    print(cols)
    if args.repeats < 1:
        ap.error(f"--repeats: expected a count >= 1, got {args.repeats}")
    # (system, n, k, threads) in table order; RVO2 before contextsteer at each N.
    cases = []
    for n in sizes:
        if n <= args.rvo2_max:
            cases.append(("rvo2", n, "", 1))
        cases += [("contextsteer", n, k, th) for k in ks for th in threads]
    runs: dict = {case: [] for case in cases}
    for rnd in range(args.repeats):
        for case in cases:
            system, n, k, th = case
            runs[case].append(
                run_case(
                    system, n, k or 0, th, steps, args.velocity and system != "rvo2", args.shuffle
                )
            )
        if args.repeats > 1:
            print(f"(round {rnd + 1} of {args.repeats} done)", flush=True)
    rows = []
    for case in cases:
        system, n, k, th = case
        ms = statistics.median(r["ms"] for r in runs[case])
        mem = statistics.median(r["mem"] for r in runs[case])
        rows.append(
            {
                "system": system,
                "n": n,
                "k": k,
                "threads": th,
                "ms": ms,
                "ns_per_agent": 1e6 * ms / n,
                "bytes_per_agent": mem / n,
            }
        )
        r = rows[-1]
        print(
            f"{r['system']:<13}{r['n']:>9}{r['k']!s:>4}{r['threads']:>4}{r['ms']:>10.2f}"
            f"{r['ns_per_agent']:>10.0f}{r['bytes_per_agent']:>9.0f}",
            flush=True,
        )
    flat = []
    for k in ks:
        for th in threads:
            c = [
                r["ns_per_agent"]
                for r in rows
                if r["system"] == "contextsteer"
                and r["k"] == k
                and r["threads"] == th
                and r["n"] >= 10_000
            ]
            if len(c) >= 2:
                flat.append((k, th, max(c) / min(c)))
    for k, th, f in flat:
        print(f"flatness N >= 10k, K={k}, {th} thr: max/min cost per agent {f:.2f}")
    if not args.write_docs:
        return
    DOCS.mkdir(exist_ok=True)
    plot(rows, DOCS / "bench_scale.png", head)
    lines = [
        "# Scale curve (benchmarks/bench_scale.py)",
        "",
        "Generated by `python benchmarks/bench_scale.py"
        + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
        + "` on this machine (2-core x86-64 VM, shared).",
        "",
        head,
        "",
        "| system | N | K | threads | ms/step | ns per agent | bytes per agent |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['system']} | {r['n']:,} | {r['k']} | {r['threads']} | {r['ms']:.2f} | "
            f"{r['ns_per_agent']:.0f} | {r['bytes_per_agent']:.0f} |"
        )
    lines += ["", "Flatness (largest / smallest cost per agent over N = 10k .. 1M):", ""]
    lines += [f"- K = {k}, {th} thread{'s' if th > 1 else ''}: {f:.2f}" for k, th, f in flat]
    lines += ["", "![scale curve](bench_scale.png)", ""]
    (DOCS / "bench_scale.md").write_text("\n".join(lines))
    print(f"wrote {DOCS / 'bench_scale.md'} and {DOCS / 'bench_scale.png'}")


if __name__ == "__main__":
    main()
