"""Counterflow with continuous inflow: a corridor fed from both ends, every system fed
the same pedestrians. Not a test.

A 20 m × 4 m corridor (walls along both sides, closed 3 m past each end) is fed from
both ends: every second, a Poisson number of pedestrians (``--rate`` persons/s in all,
half each way) joins a queue at each end, radii U(0.15, 0.3) m, desired speeds
N(1.34, 0.26) m/s clipped to [0.5, 2.2], acceleration limit 6 m/s², dt 1/30 s. The
arrivals are drawn once per seed, before any system runs, so every system is offered the
same people in the same order. Each second, the head of each queue enters at the first
free place found in a 1.45 m deep strip inside its end (the candidate places are drawn
with the arrivals too), and stays in the queue while none is free: a jammed corridor
admits fewer. Each pedestrian walks to a point 2.5 m past the far end at the height it
entered at, and is removed the step its centre crosses the far end (x = 20 or 0).

Printed per system, over ``--seeds`` seeds, each run ``--time`` seconds: pedestrians
out (through the corridor), entered, still inside and still queued at the end (mean
over the seeds and the worst seed's out), mean travel time of those out, contact
episodes (a pair of live agents whose discs overlap by more than 0.1 mm, counted once
each time it starts) and the deepest overlap, and the deepest wall penetration.

Systems: ``cs`` (``crowd_steering()``, the default, where a jammed agent facing three
oncomers decides at a shorter horizon), ``cs-counterflow`` (``CROWD_COUNTERFLOW``, which
is ``CROWD`` itself since that rule joined the default; ``--options JSON`` replaces its
options over ``CROWD``, e.g. ``'{"jam_horizon": null}'`` for the default before it),
``rvo2`` (RVO2 through ``pyrvo``, the crowd benchmark's parameters, each agent at its own
radius and speed, moved under the same acceleration limit) and ``rvo2-margin`` (RVO2 keeping context steering's
5 cm clearance between agents).

    python benchmarks/counterflow.py --seeds 16
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crowd_quality import (  # noqa: E402
    MAX_NEIGHBORS,
    NEIGHBOR_DIST,
    OVERLAP_TOLERANCE,
    TIME_HORIZON,
    TIME_HORIZON_OBST,
)

LENGTH, WIDTH = 20.0, 4.0
DT = 1.0 / 30.0
MAX_ACCEL = 6.0
ENTRY_DEPTH = (0.35, 1.8)  # the entry strip, from each end (m)
GOAL_BEYOND = 2.5  # goals this far past the far end (m)
#: The walls: both sides, 3 m longer than the corridor at each end, and closed there.
WALLS = np.array(
    [
        [-3.0, 0.0, LENGTH + 3.0, 0.0],
        [-3.0, WIDTH, LENGTH + 3.0, WIDTH],
        [-3.0, 0.0, -3.0, WIDTH],
        [LENGTH + 3.0, 0.0, LENGTH + 3.0, WIDTH],
    ]
)


@dataclass
class Arrivals:
    """One seed's demand: per second and direction (0: +x, 1: -x) the new pedestrians'
    radii and desired speeds, and per pedestrian 200 candidate places (x from the end,
    y) tried in order when it is at the head of its queue."""

    seconds: int
    count: np.ndarray  # (seconds, 2) int
    radius: list  # [direction] -> (n,) float
    speed: list
    places: list  # [direction] -> (n, 200, 2)


def arrivals(seed: int, rate: float, seconds: int) -> Arrivals:
    rng = np.random.default_rng(seed)
    count = rng.poisson(rate / 2.0, (seconds, 2))
    radius, speed, places = [], [], []
    for d in range(2):
        n = int(count[:, d].sum())
        r = rng.uniform(0.15, 0.3, n)
        radius.append(r)
        speed.append(np.clip(rng.normal(1.34, 0.26, n), 0.5, 2.2))
        u = rng.random((n, 200, 2))
        x = ENTRY_DEPTH[0] + u[..., 0] * (ENTRY_DEPTH[1] - ENTRY_DEPTH[0])
        y = (r[:, None] + 0.06) + u[..., 1] * (WIDTH - 2 * (r[:, None] + 0.06))
        places.append(np.stack([x, y], axis=-1))
    return Arrivals(seconds, count, radius, speed, places)


class ContextSteer:
    """``crowd_steering()`` in 16 phases; ``options`` replaces its CollisionDanger options
    (None: the default, CROWD)."""

    def __init__(self, capacity: int, seed: int, options=None):
        import contextsteer as cs

        world = cs.World()
        world.add_segments(WALLS.astype(np.float32))
        self.agents = cs.Agents(capacity, slots=16, seed=seed)
        steering = cs.scenarios.crowd_steering(options=options, decision_phases=16)
        self.sim = cs.Simulation(
            world,
            self.agents,
            steering,
            motion=cs.Accel(),
            slots=cs.scenarios.crowd_slots(),
        )

    def add(self, p, r, v0, target, direction) -> np.ndarray:
        return self.agents.add(
            p,
            radius=r,
            max_speed=v0,
            max_accel=MAX_ACCEL,
            target=target,
            heading=0.0 if direction == 0 else math.pi,
        )

    def live(self):
        ids = np.flatnonzero(self.agents.alive)
        return ids, np.asarray(self.agents.position, dtype=np.float64)[ids]

    def step(self) -> None:
        self.sim.step(DT)

    def remove(self, ids) -> None:
        self.agents.remove(ids)


class RVO2:
    """RVO2 (pyrvo) with a pool of agents parked far away (RVO2 cannot remove agents),
    each at its own radius (plus half of ``margin``) and speed, preferred velocity
    towards its goal, moved as crowd_quality.RVO2 moves it under an acceleration limit."""

    def __init__(self, capacity: int, margin: float):
        import pyrvo

        self.sim = pyrvo.RVOSimulator(
            DT, NEIGHBOR_DIST, MAX_NEIGHBORS, TIME_HORIZON, TIME_HORIZON_OBST, 0.3, 1.3
        )
        self.margin = margin
        for i in range(capacity):
            self.sim.add_agent((1e5 + 10.0 * i, 1e5))
        for x0, y0, x1, y1 in WALLS:
            self.sim.add_obstacle([(float(x0), float(y0)), (float(x1), float(y1))])
        self.sim.process_obstacles()
        self.alive = np.zeros(capacity, dtype=bool)
        self.top = np.zeros(capacity)
        self.target = np.zeros((capacity, 2))
        self.pos = np.zeros((capacity, 2))
        self.vel = np.zeros((capacity, 2))

    def add(self, p, r, v0, target, direction) -> np.ndarray:
        ids = np.flatnonzero(~self.alive)[: len(p)]
        for k, i in enumerate(ids):
            i = int(i)
            self.sim.set_agent_position(i, (float(p[k, 0]), float(p[k, 1])))
            self.sim.set_agent_velocity(i, (0.0, 0.0))
            self.sim.set_agent_radius(i, float(r[k] + 0.5 * self.margin))
            self.sim.set_agent_max_speed(i, float(v0[k]))
        self.alive[ids] = True
        self.top[ids], self.target[ids], self.pos[ids], self.vel[ids] = v0, target, p, 0.0
        return ids

    def live(self):
        ids = np.flatnonzero(self.alive)
        return ids, self.pos[ids].copy()

    def step(self) -> None:
        ids = np.flatnonzero(self.alive)
        for i in ids:
            d = self.target[i] - self.pos[i]
            dist = float(np.hypot(d[0], d[1]))
            v = d / max(dist, 1e-12) * min(self.top[i], dist / DT)
            self.sim.set_agent_pref_velocity(int(i), (float(v[0]), float(v[1])))
        self.sim.do_step()
        dv_max = MAX_ACCEL * DT
        for i in ids:
            i = int(i)
            v = self.sim.get_agent_velocity(i)
            dv = np.array([v.x, v.y]) - self.vel[i]
            n = float(np.hypot(dv[0], dv[1]))
            if n > dv_max:
                dv *= dv_max / n
            w = self.vel[i] + dv
            s = float(np.hypot(w[0], w[1]))
            if s > self.top[i]:
                w *= self.top[i] / s
            self.vel[i] = w
            self.pos[i] = self.pos[i] + w * DT
            self.sim.set_agent_velocity(i, (float(w[0]), float(w[1])))
            self.sim.set_agent_position(i, (float(self.pos[i, 0]), float(self.pos[i, 1])))

    def remove(self, ids) -> None:
        for i in ids:
            i = int(i)
            self.sim.set_agent_position(i, (1e5 + 10.0 * i, 1e5))
            self.sim.set_agent_velocity(i, (0.0, 0.0))
            self.sim.set_agent_pref_velocity(i, (0.0, 0.0))
        self.alive[ids] = False


def _counterflow_options(options):
    import contextsteer as cs

    return cs.scenarios.CROWD_COUNTERFLOW if options is None else {**cs.scenarios.CROWD, **options}


SYSTEMS = {
    "cs": lambda cap, seed, options: ContextSteer(cap, seed),
    "cs-counterflow": lambda cap, seed, options: ContextSteer(
        cap, seed, _counterflow_options(options)
    ),
    "rvo2": lambda cap, seed, options: RVO2(cap, 0.0),
    "rvo2-margin": lambda cap, seed, options: RVO2(cap, 0.05),
}
"""System name -> builder ``(capacity, seed, options)``; ``options``: CollisionDanger
options over CROWD for cs-counterflow (None: CROWD_COUNTERFLOW)."""


class Contacts:
    """Contact episodes between live agents: a pair whose discs overlap by more than
    OVERLAP_TOLERANCE counts once each time it starts overlapping; ``deepest`` is the
    largest overlap seen (m). Agents are named by their ids (a reused id must be
    forgotten with :meth:`forget` when its agent is removed)."""

    def __init__(self):
        self.episodes = 0
        self.deepest = 0.0
        self._pairs: set = set()

    def update(self, ids, pos, rad) -> None:
        if len(ids) < 2:
            self._pairs = set()
            return
        gap = np.hypot(*(pos[:, None] - pos[None]).transpose(2, 0, 1))
        depth = rad[:, None] + rad[None] - gap
        np.fill_diagonal(depth, -1.0)
        self.deepest = max(self.deepest, float(depth.max()))
        a, b = np.nonzero(np.triu(depth > OVERLAP_TOLERANCE, 1))
        now = {(int(min(ids[x], ids[y])), int(max(ids[x], ids[y]))) for x, y in zip(a, b)}
        self.episodes += len(now - self._pairs)
        self._pairs = now

    def forget(self, ids) -> None:
        gone = {int(i) for i in ids}
        self._pairs = {p for p in self._pairs if p[0] not in gone and p[1] not in gone}


def _free(p, r, pos, rad) -> bool:
    if not len(pos):
        return True
    d = np.hypot(pos[:, 0] - p[0], pos[:, 1] - p[1])
    return bool((d >= rad + r + 0.02).all())


def run(system: str, seed: int, rate: float = 4.0, seconds: int = 120, options=None) -> dict:
    """One run; see the module docstring for what it measures. ``options``: cs-counterflow's
    options over CROWD (None: CROWD_COUNTERFLOW)."""
    demand = arrivals(seed, rate, seconds)
    capacity = int(demand.count.sum()) + 1
    sim = SYSTEMS[system](capacity, seed, options)
    queue: list[list[int]] = [[], []]  # per direction, indexes into its arrival arrays
    drawn = [0, 0]
    radius = np.zeros(capacity)
    direction = np.zeros(capacity, dtype=np.int64)
    entered_at = np.zeros(capacity)
    entered = out = 0
    travel = []
    wall_deepest = 0.0
    contacts = Contacts()
    per_second = int(round(1.0 / DT))
    t0 = time.perf_counter()
    for s in range(seconds * per_second):
        if s % per_second == 0:
            sec = s // per_second
            for d in range(2):
                n = int(demand.count[sec, d])
                queue[d].extend(range(drawn[d], drawn[d] + n))
                drawn[d] += n
                ids, pos = sim.live()
                rad = radius[ids]
                while queue[d]:
                    q = queue[d][0]
                    r = demand.radius[d][q]
                    for x, y in demand.places[d][q]:
                        p = np.array([x if d == 0 else LENGTH - x, y])
                        if _free(p, r, pos, rad):
                            break
                    else:
                        break  # no free place: the queue waits
                    goal = np.array([[LENGTH + GOAL_BEYOND if d == 0 else -GOAL_BEYOND, p[1]]])
                    (i,) = sim.add(p[None], np.array([r]), np.array([demand.speed[d][q]]), goal, d)
                    radius[i], direction[i], entered_at[i] = r, d, s * DT
                    pos, rad = np.vstack([pos, p]), np.append(rad, r)
                    queue[d].pop(0)
                    entered += 1
        sim.step()
        ids, pos = sim.live()
        rad = radius[ids]
        contacts.update(ids, pos, rad)
        wall = np.maximum(rad - pos[:, 1], pos[:, 1] + rad - WIDTH)
        wall_deepest = max(wall_deepest, float(wall.max(initial=0.0)))
        done = ids[
            ((direction[ids] == 0) & (pos[:, 0] >= LENGTH))
            | ((direction[ids] == 1) & (pos[:, 0] <= 0.0))
        ]
        if len(done):
            travel.extend((s + 1) * DT - entered_at[done])
            sim.remove(done)
            out += len(done)
            contacts.forget(done)
    return {
        "system": system,
        "seed": seed,
        "offered": int(demand.count.sum()),
        "entered": entered,
        "out": out,
        "inside": entered - out,
        "queued": len(queue[0]) + len(queue[1]),
        "travel_s": float(np.mean(travel)) if travel else math.nan,
        "contacts": contacts.episodes,
        "deepest_m": contacts.deepest,
        "wall_deepest_m": wall_deepest,
        "wall_clock_s": time.perf_counter() - t0,
    }


def table(rows: list[dict], systems: list[str]) -> str:
    head = (
        "| system | out (mean) | out (worst seed) | entered | inside at end | queued at end "
        "| travel time of those out | contacts (all seeds) | deepest overlap | deepest wall "
        "penetration |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for name in systems:
        rs = [r for r in rows if r["system"] == name]
        if not rs:
            continue
        mean = {
            k: float(np.mean([r[k] for r in rs])) for k in ("out", "entered", "inside", "queued")
        }
        travel = np.nanmean([r["travel_s"] for r in rs])
        lines.append(
            f"| {name} | {mean['out']:.1f} | {min(r['out'] for r in rs)} | {mean['entered']:.1f} "
            f"| {mean['inside']:.1f} | {mean['queued']:.1f} | {travel:.1f} s "
            f"| {sum(r['contacts'] for r in rs)} | {1000 * max(r['deepest_m'] for r in rs):.1f} mm "
            f"| {1000 * max(r['wall_deepest_m'] for r in rs):.1f} mm |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", default="cs,cs-counterflow,rvo2,rvo2-margin")
    ap.add_argument("--seeds", default="8", help="N (seeds 0..N-1) or LO:HI")
    ap.add_argument("--rate", type=float, default=4.0, help="persons/s in all, half each way")
    ap.add_argument("--time", type=int, default=120, help="seconds per run")
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel (processes)")
    ap.add_argument("--json", help="also write every run's row to this file")
    ap.add_argument(
        "--options",
        type=json.loads,
        help="JSON of CollisionDanger options over CROWD for cs-counterflow (default: CROWD_COUNTERFLOW)",
    )
    args = ap.parse_args(argv)
    lo, _, hi = args.seeds.partition(":")
    seeds = range(int(lo), int(hi)) if hi else range(int(lo))
    systems = [s for s in args.systems.split(",") if s]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        ap.error(f"unknown systems {unknown}; known: {sorted(SYSTEMS)}")
    jobs = [(s, seed) for s in systems for seed in seeds]
    rows = []
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as ex:
            futures = [
                ex.submit(run, s, seed, args.rate, args.time, args.options) for s, seed in jobs
            ]
            rows = [f.result() for f in futures]
    else:
        rows = [run(s, seed, args.rate, args.time, args.options) for s, seed in jobs]
    print(
        f"counterflow: {LENGTH:g} m x {WIDTH:g} m, {args.rate:g} persons/s (half each way), "
        f"{args.time} s a run, seeds {seeds.start}-{seeds.stop - 1}"
    )
    print(table(rows, systems))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
