"""Stranding: rooms of pillars where agents stand at their goals, and who gets home.

Not a test. The crowd benchmark (``bench_crowd_quality.py``) retires an agent at its goal,
so nobody stands in anyone's way for long. Here every agent stays at its goal once
there, as in the library's own scenarios and most applications: the agents home become
obstacles, and with the pillars they make pockets that local steering walks into and
paces in front of for good (a way round that starts by walking away from the goal).

Scenes (``pillar_room(seed)``): a square room 10–16 m wide; 0–8 pillars (discs of radius
0.2–0.6 m, 2 m or more from the walls); 20–60 agents with starts and goals drawn
uniformly in the room, clear of the pillars and 0.1 m clear of each other; on half of
the seeds mixed radii (0.2–0.4 m), on an independent half mixed top speeds (0.8–1.6
m/s), else 0.3 m and 1.3 m/s; max acceleration 6 m/s², dt 1/30 s, 120 s.

Systems, each measured by the same code (``Measure``) from the positions after each
step:

- ``cs``: ``scenarios.crowd_steering()`` (the crowd default), the slots the crowd
  scenarios give it, ``Accel`` motion.
- ``cs-detour``: the same with ``cs.Detour(sim)`` updated every step (its defaults).
- ``cs-detour-stretch``: ``cs-detour`` with ``cs.Detour(sim, max_stretch=4)``: where
  the route round the agents standing is more than 4 times as long as the route round
  the walls alone, those in the short way step aside instead.
- ``cs-field``: the same steering following one ``NavField`` per agent (its own goal;
  ``crowd_steering(field=..., which=arange(N), field_ends_at_target=True)``, cell 0.1
  m, so that walls past the goal do not slow the agent, as without a field): routes
  round the pillars,
  but not round agents standing.
- ``cs-field-detour``: ``cs-field`` with ``detour_capacity=N`` and ``cs.Detour(sim,
  field=field)``: the detour's route ends 8 m along the agent's field, and the agent
  follows it in place of the field while it is led (with ``field_ends_at_target``:
  the detour marks the agents it leads ``Agents.waypoint``).
- ``rvo2``: RVO2 2.0 (PyPI ``pyrvo``, ORCA) with each agent's radius and top speed,
  neighbourDist 5 m, maxNeighbors 10, both time horizons 2 s; pillars as circumscribed
  32-gons, the room as a closed polygon; preferred velocity towards the goal at the top
  speed, or distance/dt when closer.

Columns: contact episodes (pairs whose centres come closer than 0.99 (r_i + r_j); an
episode counts once until the pair parts), deepest penetration (m), wall and pillar
penetration episodes (a body closer than 0.99 r), agents never home (never within 0.3 m
of the goal), agents home once but not within 0.3 m of their goal when the run ends
(moved off it, by making way or a push, and not back), agents home after 60 s, mean
time to goal (s, agents home), heading
jitter (°/step, as the crowd benchmark's: steps faster than 0.05 m/s), and seeds with
anyone not home.

Usage::

    python benchmarks/bench_stranding.py [--seeds 0:100] [--systems cs,cs-detour,cs-field,rvo2]
        [--seconds 120] [--jobs 2] [--options '{"make_way": 0.5}']

``--options`` gives the contextsteer systems ``CollisionDanger`` options over
``cs.scenarios.CROWD`` (JSON), deciding in the default's 16 phases as without them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crowd_quality as cq  # noqa: E402

DT = cq.DT
HOME = 0.3
SYSTEMS = ("cs", "cs-detour", "cs-detour-stretch", "cs-field", "cs-field-detour", "rvo2")


@dataclass
class Room:
    width: float
    pillars: np.ndarray  # (P, 3): x, y, radius
    starts: np.ndarray  # (N, 2)
    goals: np.ndarray  # (N, 2)
    radius: np.ndarray  # (N,)
    speed: np.ndarray  # (N,)

    @property
    def n(self) -> int:
        return len(self.starts)


def pillar_room(seed: int) -> Room:
    """The scene of one seed (see the module docstring)."""
    rng = np.random.default_rng(seed)
    width = float(rng.uniform(10, 16))
    count = int(rng.integers(0, 9))
    pillars = np.c_[rng.uniform(2, width - 2, (count, 2)), rng.uniform(0.2, 0.6, count)]
    n = int(rng.integers(20, 60))
    radius = rng.uniform(0.2, 0.4, n) if rng.random() < 0.5 else np.full(n, 0.3)
    speed = rng.uniform(0.8, 1.6, n) if rng.random() < 0.5 else np.full(n, 1.3)

    def place() -> np.ndarray:
        pts: list[np.ndarray] = []
        for _ in range(100_000):
            if len(pts) == n:
                break
            q = rng.uniform(0.6, width - 0.6, 2)
            r = radius[len(pts)]
            if count and np.any(np.hypot(*(pillars[:, :2] - q).T) < pillars[:, 2] + r + 0.1):
                continue
            if pts and np.any(np.hypot(*(np.array(pts) - q).T) < r + radius[: len(pts)] + 0.1):
                continue
            pts.append(q)
        return np.array(pts)

    starts, goals = place(), place()
    m = min(len(starts), len(goals))
    return Room(width, pillars, starts[:m], goals[:m], radius[:m], speed[:m])


class Measure:
    """The same metrics for every system, from the positions after each step."""

    def __init__(self, room: Room):
        self.room = room
        n = room.n
        self.iu = np.triu_indices(n, 1)
        self.rr = (room.radius[:, None] + room.radius[None])[self.iu]
        self.pairs: set = set()
        self.contacts = 0
        self.depth = 0.0
        self.in_wall = np.zeros(n, bool)
        self.wall_pens = 0
        self.home_t = np.full(n, np.nan)
        self.home_now = np.zeros(n, bool)
        self.last = room.starts.astype(np.float64).copy()
        self.last_step = np.zeros((n, 2))
        self.last_fast = np.zeros(n, bool)
        self.turn = np.zeros(n)
        self.turn_steps = np.zeros(n)

    def update(self, p: np.ndarray, t: float) -> None:
        room = self.room
        d = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1))[self.iu]
        bad = d < 0.99 * self.rr
        pairs = set(zip(self.iu[0][bad].tolist(), self.iu[1][bad].tolist()))
        self.contacts += len(pairs - self.pairs)
        self.pairs = pairs
        if bad.any():
            self.depth = max(self.depth, float((self.rr - d)[bad].max()))
        w = room.width
        clear = np.minimum.reduce([p[:, 0], p[:, 1], w - p[:, 0], w - p[:, 1]])
        if len(room.pillars):
            dp = np.hypot(*(p[:, None] - room.pillars[None, :, :2]).transpose(2, 0, 1))
            clear = np.minimum(clear, (dp - room.pillars[None, :, 2]).min(axis=1))
        inside = clear < 0.99 * room.radius
        self.wall_pens += int(np.count_nonzero(inside & ~self.in_wall))
        self.in_wall = inside
        home = np.hypot(*(p - room.goals).T) < HOME
        self.home_t[np.isnan(self.home_t) & home] = t
        self.home_now = home
        step = p - self.last
        fast = np.hypot(*step.T) > cq.JITTER_MIN_SPEED * DT
        both = fast & self.last_fast
        a = np.arctan2(step[:, 1], step[:, 0]) - np.arctan2(
            self.last_step[:, 1], self.last_step[:, 0]
        )
        turn = np.abs(cq._wrap(a))
        self.turn[both] += turn[both]
        self.turn_steps[both] += 1
        self.last, self.last_step, self.last_fast = p.copy(), step, fast

    def row(self) -> dict:
        moved = self.turn_steps > 0
        return {
            "n": self.room.n,
            "contacts": self.contacts,
            "depth": self.depth,
            "wall_pens": self.wall_pens,
            "never_home": int(np.isnan(self.home_t).sum()),
            "late": int(np.nansum(self.home_t > 60.0)),
            # Home once, away at the end: moved off its goal (making way, pushed) and not
            # back. never_home does not see these.
            "away_end": int(np.count_nonzero(~np.isnan(self.home_t) & ~self.home_now)),
            "ttg_sum": float(np.nansum(self.home_t)),
            "ttg_n": int(np.count_nonzero(~np.isnan(self.home_t))),
            "turn_deg": float(np.degrees((self.turn[moved] / self.turn_steps[moved]).sum())),
            "turn_n": int(moved.sum()),
        }


def _cs(room: Room, system: str, options: dict | None = None):
    """A contextsteer simulation of ``room`` and the per-step hook of ``system``
    (``options``: CollisionDanger options over ``cs.scenarios.CROWD``)."""
    import contextsteer as cs

    world = cs.World()
    w = room.width
    world.add_polyline(np.array([[0, 0], [w, 0], [w, w], [0, w]], np.float32), closed=True)
    if len(room.pillars):
        world.add_circles(room.pillars[:, :2], room.pillars[:, 2])
    agents = cs.Agents(room.n, slots=16, seed=0)
    agents.add(
        room.starts,
        radius=room.radius,
        max_speed=room.speed,
        max_accel=6.0,
        target=room.goals,
    )
    # Changes to CROWD keep its 16 decision phases, so that a row differs from the
    # default by the options alone.
    kw: dict = {"changes": options} if options else {}
    field = None
    if system in ("cs-field", "cs-field-detour"):
        field = cs.NavField(
            world, [g for g in room.goals], radius=float(room.radius.max()), cell=0.1
        )
        # Each agent's field ends at its own target, so past_target stays on (the detour
        # marks the agents it leads Agents.waypoint, for which it does not hold).
        kw.update(field=field, which=np.arange(room.n), field_ends_at_target=True)
        if system == "cs-field-detour":
            kw["detour_capacity"] = room.n
    slots = cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True)
    sim = cs.Simulation(
        world, agents, cs.scenarios.crowd_steering(**kw), motion=cs.Accel(), slots=slots
    )
    sim.configure_metrics(enabled=False)
    detour = None
    if system == "cs-detour":
        detour = cs.Detour(sim)
    elif system == "cs-detour-stretch":
        detour = cs.Detour(sim, max_stretch=4.0)
    elif system == "cs-field-detour":
        detour = cs.Detour(sim, field=field)

    def step() -> np.ndarray:
        sim.step(DT)
        if detour is not None:
            detour.update()
        return agents.position.astype(np.float64)

    return step


def _rvo2(room: Room):
    import pyrvo

    sim = pyrvo.RVOSimulator(DT, 5.0, 10, 2.0, 2.0, 0.3, 1.3)
    for (x, y), r, v in zip(room.starts, room.radius, room.speed):
        i = sim.add_agent((float(x), float(y)))
        sim.set_agent_radius(i, float(r))
        sim.set_agent_max_speed(i, float(v))
    w = room.width
    # Obstacles: counter-clockwise polygons; the room's walls as one clockwise ring (its
    # inside is free).
    sim.add_obstacle([(0.0, 0.0), (0.0, w), (w, w), (w, 0.0)])
    k = 32
    for x, y, r in room.pillars:
        rc = r / math.cos(math.pi / k)  # circumscribed: the polygon holds the disc
        sim.add_obstacle(
            [
                (
                    float(x + rc * math.cos(2 * math.pi * j / k)),
                    float(y + rc * math.sin(2 * math.pi * j / k)),
                )
                for j in range(k)
            ]
        )
    sim.process_obstacles()
    n = room.n

    def _positions() -> np.ndarray:
        out = np.empty((n, 2))
        for i in range(n):
            v = sim.get_agent_position(i)
            out[i] = v.x, v.y
        return out

    def step() -> np.ndarray:
        p = _positions()
        d = room.goals - p
        dist = np.hypot(*d.T)[:, None]
        v = d / np.maximum(dist, 1e-12) * np.minimum(room.speed[:, None], dist / DT)
        for i in range(n):
            sim.set_agent_pref_velocity(i, (float(v[i, 0]), float(v[i, 1])))
        sim.do_step()
        return _positions()

    return step


def run(seed: int, system: str, seconds: float, options: dict | None = None) -> dict:
    """One seed of one system: its metrics row."""
    room = pillar_room(seed)
    step = _rvo2(room) if system == "rvo2" else _cs(room, system, options)
    m = Measure(room)
    for k in range(int(round(seconds / DT))):
        m.update(step(), (k + 1) * DT)
    return {"seed": seed, "system": system, **m.row()}


def _job(args: tuple) -> dict:
    return run(*args)


def table(rows: list[dict], systems: list[str]) -> str:
    """The pooled table, one line per system."""
    out = [
        "| system | agents | contact episodes | deepest (m) | wall/pillar pens | never home | "
        "seeds with anyone never home | home once, away at the end | home after 60 s | "
        "mean time to goal (s) | jitter °/step |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        rs = [r for r in rows if r["system"] == s]
        if not rs:
            continue
        n = sum(r["n"] for r in rs)
        never = sum(r["never_home"] for r in rs)
        ttg = sum(r["ttg_sum"] for r in rs) / max(1, sum(r["ttg_n"] for r in rs))
        jit = sum(r["turn_deg"] for r in rs) / max(1, sum(r["turn_n"] for r in rs))
        out.append(
            f"| {s} | {n} | {sum(r['contacts'] for r in rs)} | {max(r['depth'] for r in rs):.3f} | "
            f"{sum(r['wall_pens'] for r in rs)} | {never} ({100 * never / n:.2f} %) | "
            f"{sum(r['never_home'] > 0 for r in rs)} / {len(rs)} | "
            f"{sum(r['away_end'] for r in rs)} | {sum(r['late'] for r in rs)} | "
            f"{ttg:.2f} | {jit:.2f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0:100", help="a:b, seeds a..b-1 (default 0:100)")
    ap.add_argument("--systems", default="cs,cs-detour,cs-field,rvo2")
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument(
        "--per-seed", action="store_true", help="also list the seeds with anyone never home"
    )
    ap.add_argument(
        "--options",
        default="{}",
        help="JSON: CollisionDanger options over cs.scenarios.CROWD for the cs systems, "
        "e.g. '{\"make_way\": 0.3}'",
    )
    args = ap.parse_args()
    options = json.loads(args.options)
    a, b = (int(x) for x in args.seeds.split(":"))
    systems = [s for s in args.systems.split(",") if s]
    for s in systems:
        if s not in SYSTEMS:
            sys.exit(f"unknown system {s!r}; choose from {', '.join(SYSTEMS)}")
    jobs = [(seed, s, args.seconds, options) for s in systems for seed in range(a, b)]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as ex:
            rows = list(ex.map(_job, jobs, chunksize=4))
    else:
        rows = [_job(j) for j in jobs]
    extra = f", options {json.dumps(options)}" if options else ""
    print(f"pillar rooms, seeds {a}..{b - 1}, {args.seconds:g} s, dt 1/30 s{extra}\n")
    print(table(rows, systems))
    if args.per_seed:
        for s in systems:
            bad = [
                (r["seed"], r["never_home"]) for r in rows if r["system"] == s and r["never_home"]
            ]
            print(f"\n{s}: seeds with anyone never home (seed, agents): {bad}")
            away = [(r["seed"], r["away_end"]) for r in rows if r["system"] == s and r["away_end"]]
            print(f"{s}: seeds with anyone home once and away at the end (seed, agents): {away}")


if __name__ == "__main__":
    main()
