"""Lone agents leaving a room by a door on its far side: how many are out and home in 30 s.

Not a test. Each seed draws a room (3-6 m a side), a radius (0.25-0.45 m), a door in the
far wall 0.25-1.0 m wider than the body and a speed (1.3, 2, 3 or 4 m/s). One agent
starts at rest in the room's near half; its goal lies 0.8 m outside the near wall, in a
corridor 2 m wide round the room, so its route leaves by the door and turns back round
the room. Navigation field at the agent's radius, ``crowd_steering(field=...,
field_ends_at_target=True)`` with the given ``changes``, ``Accel`` (6 m/s²), dt 1/30.
Prints, per speed, the agents not home (within 0.3 m of the goal) after 30 s, the mean
time to goal of the others and the wall contacts (docs/crowd.md, "Bends").

    python benchmarks/rooms.py                                   # CROWD as it is
    python benchmarks/rooms.py --changes '{"unstick": false}'
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict

import numpy as np

import contextsteer as cs

DT = 1 / 30


def room(seed: int, changes: dict) -> tuple[float, float | None, int]:
    """(speed, time to goal or None, wall contacts) of the seed's room."""
    rng = np.random.default_rng(seed)
    w, h = rng.uniform(3, 6), rng.uniform(3, 6)
    r = float(rng.choice([0.25, 0.3, 0.35, 0.45]))
    door = rng.uniform(2 * r + 0.25, 2 * r + 1.0)
    y = rng.uniform(door / 2 + 0.1, h - door / 2 - 0.1)
    speed = float(rng.choice([1.3, 2.0, 3.0, 4.0]))
    world = cs.World()
    world.add_segments(
        np.float32([[0, 0, w, 0], [0, h, w, h], [0, 0, 0, h], [w, 0, w, y - door / 2]])
    )
    world.add_segments(np.float32([[w, y + door / 2, w, h]]))
    world.add_polyline([[-2, -2], [w + 2, -2], [w + 2, h + 2], [-2, h + 2]], closed=True)
    start = (rng.uniform(r + 0.1, min(1.5, w - r - 0.1)), rng.uniform(r + 0.1, h - r - 0.1))
    goal = (-0.8, rng.uniform(0.5, h - 0.5))
    agents = cs.Agents(1, slots=16)
    agents.add([start], radius=r, max_speed=speed, max_accel=6.0, target=[goal])
    field = cs.NavField(world, [goal], radius=r, cell=0.05)
    steering = cs.scenarios.crowd_steering(field=field, field_ends_at_target=True, changes=changes)
    sim = cs.Simulation(world, agents, steering, cs.Accel(), slots=cs.scenarios.crowd_slots())
    t = None
    for s in range(int(30 / DT)):
        sim.step(DT)
        if np.hypot(*(agents.position[0] - goal)) < 0.3:
            t = (s + 1) * DT
            break
    return speed, t, int(sim.metrics()["collisions"]["agent_wall"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", default="{}", help="crowd_steering changes= as JSON")
    ap.add_argument("--seeds", type=int, default=120, help="rooms, seeds 0..N-1 (default 120)")
    args = ap.parse_args()
    changes = json.loads(args.changes)
    by_speed: dict = defaultdict(list)
    contacts = 0
    for seed in range(args.seeds):
        speed, t, c = room(seed, changes)
        by_speed[speed].append(t)
        contacts += c
    print(f"{args.seeds} rooms, changes {changes}; wall contacts {contacts}")
    for speed in sorted(by_speed):
        times = by_speed[speed]
        home = [t for t in times if t is not None]
        mean = f"{statistics.mean(home):.2f} s" if home else "-"
        print(f"  {speed} m/s: {len(times) - len(home)} of {len(times)} not home, mean {mean}")


if __name__ == "__main__":
    main()
