"""Lone agents at 90° bends they fit: how many turn them within 40 s.

One agent per run walks an L-shaped corridor (8 m legs) on a navigation field built at its
radius, with ``crowd_steering(field=...)`` and the given ``changes``: corridors 0.9-1.4 m
wide, radii 0.25-0.5 m, three starts across the corridor, every bend wider than
2·(radius + margin) + 5 cm (docs/crowd.md, "Bends"). Prints the bends not turned.
``--uturn``: 180° turns instead. Two legs side by side, parted by a 0.2 m wall and joined
at their right ends; the goal is 4 m back along the upper leg, behind the wall.

    python benchmarks/bends.py                                  # CROWD as it is
    python benchmarks/bends.py --changes '{"unstick": false}'   # without its lone rule
    python benchmarks/bends.py --changes '{"wall_speed_alone": true}' --speed 3
    python benchmarks/bends.py --uturn --speed 3
"""

from __future__ import annotations

import argparse
import inspect
import json

import numpy as np

import contextsteer as cs

MARGIN = 0.05  # crowd_steering's


def l_corridor(width: float, length: float = 8.0) -> cs.World:
    """A corridor along x (y in [0, width]) turning up at its end (x in [length − width,
    length])."""
    world = cs.World()
    w, n = width, length
    world.add_segments(
        np.float32(
            [[0, 0, n, 0], [n, 0, n, n], [0, w, n - w, w], [n - w, w, n - w, n], [0, 0, 0, w]]
            + [[n - w, n, n, n]]
        )
    )
    return world


WALL = 0.2  # the wall between a U's legs


def u_corridor(width: float, length: float = 8.0) -> cs.World:
    """Two corridors along x (y in [0, width] and [width + WALL, 2·width + WALL]), parted
    by a wall WALL thick that ends `width` before their joined right ends."""
    world = cs.World()
    w, n, t = width, length, WALL
    world.add_segments(
        np.float32(
            [[0, 0, n, 0], [n, 0, n, 2 * w + t], [0, 2 * w + t, n, 2 * w + t], [0, 0, 0, 2 * w + t]]
            + [[0, w, n - w, w], [0, w + t, n - w, w + t], [n - w, w, n - w, w + t]]
        )
    )
    return world


def turns(
    width: float,
    radius: float,
    start_y: float,
    speed: float,
    changes: dict,
    uturn: bool = False,
    first=None,
) -> bool:
    """Whether the agent is within 0.2 m of its goal on the second leg after 40 s.
    ``first(world, start)``, when given, returns behaviours to put before the steering's
    own (e.g. the FollowField of another agent's route)."""
    world = u_corridor(width) if uturn else l_corridor(width)
    goal = (4.0, width + WALL + width / 2) if uturn else (8.0 - width / 2, 7.4)
    field = cs.NavField(world, [goal], radius=radius, cell=min(0.05, (width - 2 * radius) / 3))
    agents = cs.Agents(1, slots=16)
    agents.add([[0.6, start_y]], radius=radius, max_speed=speed, max_accel=6.0, target=[goal])
    steering = cs.scenarios.crowd_steering(field=field, field_ends_at_target=True, changes=changes)
    if first is not None:
        params = inspect.signature(cs.Steering).parameters
        kept = {p: getattr(steering, p) for p in params if p not in ("behaviours", "max_neighbors")}
        behaviours = list(first(world, (0.6, start_y))) + list(steering.behaviours)
        steering = cs.Steering(behaviours, **kept)
    sim = cs.Simulation(world, agents, steering, cs.Accel(), slots=cs.scenarios.crowd_slots())
    sim.configure_metrics(goal_radius=0.2)
    sim.step(1 / 30, steps=1200)
    return sim.metrics()["time_to_goal"]["arrived"] == 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", default="{}", help="crowd_steering changes= as JSON")
    ap.add_argument("--speed", type=float, default=1.3, help="max speed, m/s (default 1.3)")
    ap.add_argument("--uturn", action="store_true", help="180° turns round a wall's end")
    args = ap.parse_args()
    changes = json.loads(args.changes)
    runs, failed = 0, []
    for width in (0.9, 1.0, 1.1, 1.2, 1.4):
        for radius in (0.25, 0.3, 0.35, 0.4, 0.45, 0.5):
            if 2 * (radius + MARGIN) >= width - 0.05:
                continue
            for frac in (0.3, 0.5, 0.7):
                y = radius + frac * (width - 2 * radius)
                runs += 1
                if not turns(width, radius, y, args.speed, changes, args.uturn):
                    failed.append((width, radius, frac))
    kind = "U-turns" if args.uturn else "bends"
    print(f"{kind} not turned: {len(failed)} of {runs} ({args.speed} m/s, changes {changes})")
    for width, radius, frac in failed:
        print(f"  corridor {width} m, radius {radius} m, start {frac:.1f} across")


if __name__ == "__main__":
    main()
