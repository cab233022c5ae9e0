"""Stranded agents in the library's own scenarios, seed after seed.

Runs each named scenario (``cs.run_scenario``, its default parameters unless
``--params`` says otherwise) on every seed in ``--seeds`` for its own step count, and
counts the agents not at their goal then. Those are run on for ``--extend`` times as
many steps again: an agent still not home then is **stranded** (standing in a dead end,
or pacing between two wants for good), the others were only **late**. Also printed, over
all seeds: the run metrics' contact episodes (touching within their 1 % tolerance, see
``contextsteer.metrics``), the least agent and wall clearance (negative: bodies
overlapped), and the mean time to goal.

Usage::

    python benchmarks/scenario_seeds.py --scenarios bottleneck,doorway --seeds 0:200
    python benchmarks/scenario_seeds.py --scenarios bottleneck --params '{"guide": "path"}'
    python benchmarks/scenario_seeds.py --scenarios hallway --seeds 0:100 --detour

``--detour`` updates a ``cs.Detour`` (its defaults) before every step. The scenarios whose
agents follow a navigation field (``doorway``, ``maze``, the bottleneck's default guide)
are built with ``detour=True`` and get a detour on that field, as ``contextsteer run
NAME --detour`` does.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

import contextsteer as cs

DEFAULT_SCENARIOS = "oncoming,crossing,hallway,bottleneck,doorway,circle,maze,corridor"


def seed_range(text: str) -> range:
    """``"a:b"`` -> range(a, b); ``"n"`` -> range(n)."""
    a, _, b = text.partition(":")
    return range(int(a), int(b)) if b else range(int(a))


def _stepper(sim, detour: bool):
    """``steps(dt, n)``: ``sim.step`` n times, with a ``cs.Detour`` updated before each one
    when ``detour``."""
    if not detour:
        return lambda dt, n: sim.step(dt, steps=n)
    d = cs.Detour.on_steering(sim)

    def steps(dt: float, n: int) -> None:
        for _ in range(n):
            d.update()
            sim.step(dt)

    return steps


def run_seed(name: str, params: dict, seed: int, extend: float, detour: bool = False) -> dict:
    """One seed: who is home at the scenario's end, who after ``extend`` × its steps more
    (``detour``: a ``cs.Detour`` leads the stalled agents)."""
    sc = cs.scenarios.get(name)
    if detour and sc.accepts("detour"):
        params = {"detour": True, **params}
    sim = sc(**params, seed=seed)
    step = _stepper(sim, detour)
    step(sc.dt, sc.steps)
    m = sim.metrics()
    away = np.isnan(np.asarray(sim.agent_metrics.time_to_goal))
    late_or_stranded = int(away.sum())
    stranded = late_or_stranded
    if late_or_stranded and extend > 0:
        step(sc.dt, int(round(extend * sc.steps)))
        stranded = int(np.isnan(np.asarray(sim.agent_metrics.time_to_goal)).sum())
    ttg = m["time_to_goal"]
    return {
        "agents": int(m["agents"]),
        "away": late_or_stranded,
        "stranded": stranded,
        "contacts": int(m["collisions"]["agent_agent"]),
        "wall_contacts": int(m["collisions"]["agent_wall"]),
        # None: nothing to measure (no walls, one agent).
        "min_agent": float(m["min_clearance"]["agent"] or math.inf),
        "min_wall": float(m["min_clearance"]["wall"] or math.inf),
        "ttg": float("nan") if ttg["mean"] is None else float(ttg["mean"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default=DEFAULT_SCENARIOS)
    ap.add_argument("--seeds", default="0:60", help="a:b (or n for 0:n)")
    ap.add_argument("--params", default="{}", help="JSON: keyword arguments for every scenario")
    ap.add_argument("--extend", type=float, default=3.0, help="steps run on, × the scenario's")
    ap.add_argument("--per-seed", action="store_true", help="print the seeds with anyone away")
    ap.add_argument("--detour", action="store_true", help="a cs.Detour updated before each step")
    args = ap.parse_args()
    params = json.loads(args.params)
    seeds = seed_range(args.seeds)
    print(
        f"seeds {seeds.start}-{seeds.stop - 1}, params {params or 'defaults'}"
        f"{', with cs.Detour' if args.detour else ''}; stranded: not "
        f"home after {args.extend:g} x the scenario's steps more"
    )
    header = (
        "| scenario | agents | seeds everyone home | seeds with anyone stranded | agents late "
        "| agents stranded | contact episodes | least agent / wall clearance (m) "
        "| mean time to goal (s) | s a seed |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in args.scenarios.split(","):
        t0 = time.perf_counter()
        rows = [run_seed(name, params, seed, args.extend, args.detour) for seed in seeds]
        secs = (time.perf_counter() - t0) / len(rows)
        home = sum(r["away"] == 0 for r in rows)
        stranded_seeds = [s for s, r in zip(seeds, rows) if r["stranded"]]
        late = sum(r["away"] - r["stranded"] for r in rows)
        stranded = sum(r["stranded"] for r in rows)
        ttg = [r["ttg"] for r in rows if not math.isnan(r["ttg"])]
        print(
            f"| {name} | {rows[0]['agents']} | {home}/{len(rows)} | {len(stranded_seeds)} "
            f"| {late} | {stranded} | {sum(r['contacts'] for r in rows)} + "
            f"{sum(r['wall_contacts'] for r in rows)} wall "
            f"| {min(r['min_agent'] for r in rows):.4f} / {min(r['min_wall'] for r in rows):.4f} "
            f"| {np.mean(ttg) if ttg else float('nan'):.2f} | {secs:.2f} |",
            flush=True,
        )
        if args.per_seed and stranded_seeds:
            print(f"  {name}: stranded on seeds {stranded_seeds}")


if __name__ == "__main__":
    main()
