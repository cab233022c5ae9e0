"""Fast agents and a narrow door: how many of them get through.

One agent at a time (radius 0.4 m, ``--accel`` m/s²) starts at a random point of a 12 m
room and follows a navigation field to a goal in the next room, through a door of
``--door`` metres in the wall between (``crowd_steering(field=...)``, ``crowd_slots()``,
``Accel``). Prints, per speed, how many of ``--starts`` starts are not within 0.5 m of the
goal after ``--seconds``. docs/crowd.md, "A door run past", has the figures.

    python benchmarks/door_run.py --door 1.0 --speeds 1.3,2,3
"""

from __future__ import annotations

import argparse

import numpy as np

import contextsteer as cs

RADIUS = 0.4
GOAL = (18.0, 7.5)


def world(door: float) -> cs.World:
    """Two 12 m rooms side by side; the door is y in [5, 5 + door] in the wall x = 12."""
    w = cs.World()
    w.add_polyline([[0, 0], [24, 0], [24, 12], [0, 12]], closed=True)
    w.add_segments([[12, 0, 12, 5], [12, 5 + door, 12, 12]])
    return w


def starts(w: cs.World, n: int, seed: int = 11) -> np.ndarray:
    """n random points of the left room, each at least the radius (+2 cm) from a wall."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        p = rng.uniform([0.5, 0.5], [11.5, 11.5]).astype(np.float32)
        if cs.nearest(w, p[None], 2.0).distance[0] > RADIUS + 0.02:
            out.append(p)
    return np.array(out, np.float32)


def failures(door: float, speed: float, n: int, seconds: float, accel: float) -> int:
    w = world(door)
    field = cs.NavField(w, GOAL, cell=0.1, radius=RADIUS)
    bad = 0
    for s, p in enumerate(starts(w, n)):
        a = cs.Agents(1, slots=16, seed=s)
        a.add(p[None], velocity=[[0.0, 1.0]], radius=RADIUS, max_speed=speed, max_accel=accel)
        st = cs.scenarios.crowd_steering(field=field, look_ahead_field=2.0, slowing_radius=1.5)
        sim = cs.Simulation(w, a, st, cs.Accel(), slots=cs.scenarios.crowd_slots())
        sim.step(1 / 30, steps=int(round(seconds * 30)))
        bad += bool(np.hypot(*(a.position[0] - GOAL)) > 0.5)
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--door", type=float, default=1.0, help="door width (m), default 1.0")
    ap.add_argument("--speeds", default="1.3,1.6,2,3", help="max speeds (m/s), comma list")
    ap.add_argument("--starts", type=int, default=30, help="starts per speed (default 30)")
    ap.add_argument("--seconds", type=float, default=25.0, help="time allowed (default 25)")
    ap.add_argument("--accel", type=float, default=8.0, help="max acceleration (default 8)")
    args = ap.parse_args()
    print(f"door {args.door} m, radius {RADIUS} m, {args.starts} starts, {args.seconds:g} s")
    for v in (float(x) for x in args.speeds.split(",")):
        bad = failures(args.door, v, args.starts, args.seconds, args.accel)
        print(f"  {v:g} m/s: {bad} of {args.starts} not through")


if __name__ == "__main__":
    main()
