"""Standoffs in the bottleneck's mouth: how many agents they keep out, and what yielding
would give back. Not a test.

The crowd benchmark's bottleneck (``crowd_quality.bottleneck_scene``: 50 agents in a
room walk through a 1.2 m gap) loses most of a seed's arrivals on a few seeds. Traced,
those seeds show one mechanism: two bodies reach the gap's mouth side by side, each a
third of a metre off its centre line, and stand there. Straight on, each would brush a
door post; towards the middle, each would walk into the other; so neither has a safe
course with headway, and the crowd behind paces along the wall until something else
moves. ``crowd_steering()``'s default stood 10 s so on seed 272 (70 % home at the end),
trial 53 of docs/crowd.md's half-cosine search for 27 s on seed
80 (18 % home).

This script measures what a rule that breaks such standoffs could give, by emulating it
from outside the library: ``standoff_yielders`` finds, each step, the pairs of agents
that have both stood (slower than ``STILL_SPEED``) for ``STILL_STEPS`` steps or more,
whose bodies are within ``REACH`` m of touching and whose ways to their targets agree
(within 60°); the one farther from its target (ties: the higher index) yields. A
yielder's target is set ``BACK`` m behind it, against its way, for ``YIELD_STEPS`` steps,
so that its own steering walks it back (safely: its danger is untouched) and the other
can take the middle of the gap. Without ``--emulate`` the run is the benchmark's.
The library has such a rule since, ``CollisionDanger(standoff=)``, inside the decision
(``--params '{"standoff": 0.5}'``); the emulation stays, to compare the two.

Usage::

    python benchmarks/standoff.py --seeds 0:300 [--params JSON] [--emulate]

``--params``: CollisionDanger options over ``cs.scenarios.CROWD`` (as
``tune_crowd.py``'s sets). Printed: seeds, mean arrivals, the seeds under 95 % and the
worst, and the seeds under 95 % with their arrivals.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crowd_quality as cq  # noqa: E402
import tune_crowd as tc  # noqa: E402

STILL_SPEED = 0.05  # m/s: an agent slower than this stands
STILL_STEPS = 15  # steps an agent has stood before it is in a standoff (0.5 s)
REACH = 0.15  # m between the bodies
YIELD_STEPS = 20  # steps a yielder's target stays behind it (0.67 s)
BACK = 0.6  # m behind the yielder, against its way


def standoff_yielders(
    pos: np.ndarray, targets: np.ndarray, radius: np.ndarray, still: np.ndarray
) -> dict[int, int]:
    """The standoffs among the agents: ``{yielder: the one it yields to}``.

    Parameters
    ----------
    pos, targets : ndarray, shape (N, 2)
        Positions and the targets the agents steer to now.
    radius : ndarray, shape (N,)
    still : ndarray, shape (N,)
        Steps each agent has stood (negative or 0: moving; retired agents should carry 0).
    """
    cand = np.flatnonzero(still >= STILL_STEPS)
    out: dict[int, int] = {}
    for x, a in enumerate(cand):
        for b in cand[x + 1 :]:
            if np.linalg.norm(pos[a] - pos[b]) - radius[a] - radius[b] > REACH:
                continue
            ga, gb = targets[a] - pos[a], targets[b] - pos[b]
            la, lb = np.linalg.norm(ga), np.linalg.norm(gb)
            if not (la > 0 and lb > 0 and ga @ gb >= 0.5 * la * lb):
                continue
            i, j = (int(a), int(b)) if la > lb else (int(b), int(a))
            out[i] = j
    return out


class Yielding:
    """The emulated rule, as ``crowd_quality.run``'s ``adjust``: each step it counts how
    long every agent has stood, finds the standoffs (``standoff_yielders``) and moves a
    yielder's target ``BACK`` m behind it for ``YIELD_STEPS`` steps."""

    def __init__(self, n: int) -> None:
        self.prev: np.ndarray | None = None
        self.radius = np.full(n, cq.RADIUS)
        self.still = np.zeros(n, dtype=np.int64)
        self.left = np.zeros(n, dtype=np.int64)  # steps of yielding left

    def __call__(self, pos: np.ndarray, targets: np.ndarray, active: np.ndarray) -> np.ndarray:
        prev = pos if self.prev is None else self.prev
        self.prev = pos.copy()  # adapters may return their own array, updated in place
        slow = np.linalg.norm(pos - prev, axis=1) < STILL_SPEED * cq.DT
        self.still = np.where(slow & active, self.still + 1, 0)
        for i, j in standoff_yielders(pos, targets, self.radius, self.still).items():
            self.left[i], self.left[j] = YIELD_STEPS, 0
        for i in np.flatnonzero(self.left > 0):
            way = targets[i] - pos[i]
            targets[i] = pos[i] - BACK * way / np.linalg.norm(way)
            self.left[i] -= 1
        return targets


def run_seed(params: dict, seed: int, emulate: bool) -> float:
    """Per cent of the bottleneck's agents home at the end of seed ``seed`` (the crowd
    benchmark's protocol and adapter, ``tune_crowd.system``), with the yielding emulated
    (``Yielding``) or not."""
    scene = cq.SCENES["bottleneck"](seed=seed)
    adjust = Yielding(scene.n) if emulate else None
    return float(cq.run(tc.system(scene, params), scene, adjust=adjust)["arrived_pct"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0:100", help="a:b")
    ap.add_argument("--params", default="{}", help="JSON: options over cs.scenarios.CROWD")
    ap.add_argument("--emulate", action="store_true", help="emulate the yielding")
    args = ap.parse_args()
    import contextsteer as cs

    params = {**cs.scenarios.CROWD, **json.loads(args.params)}
    lo, hi = (int(x) for x in args.seeds.split(":"))
    home = {s: run_seed(params, s, args.emulate) for s in range(lo, hi)}
    short = {s: h for s, h in home.items() if h < 95.0}
    rule = f"the library's standoff={params['standoff']}" if params.get("standoff") else "off"
    print(
        f"bottleneck seeds {lo}-{hi - 1}, yielding {'emulated' if args.emulate else rule}: "
        f"home {np.mean(list(home.values())):.2f} %, {len(short)} seeds under 95 %, "
        f"worst {min(home.values()):.0f} %"
    )
    print("  under 95 %: " + ", ".join(f"{s} ({h:.0f})" for s, h in short.items()))


if __name__ == "__main__":
    main()
