"""A lone agent walking to a goal beside a wall, with and without ``past_target``.

The agent (the crowd cases' walker: radius 0.3 m, 1.3 m/s, 6 m/s², 16 crowd slots,
``cs.scenarios.crowd_steering``) starts ``--distance`` metres from its goal, which lies
``clearance`` metres from a long wall (body edge to wall), approaching at ``angle``
degrees to the wall. Printed per case: the time to goal (first within ``--goal-radius``
of it) with ``CROWD`` as it is, with ``CROWD`` and ``past_target=False``, and the same
walk with no wall at all (the open-space time, the reference); and the least wall
clearance of the two walled runs (negative: a penetration).

Usage::

    python benchmarks/goal_by_wall.py
    python benchmarks/goal_by_wall.py --clearances 0.05,0.3 --angles 90
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import contextsteer as cs

RADIUS, SPEED, ACCEL, DT = 0.3, 1.3, 6.0, 1.0 / 30.0


def walk(options, clearance: float, angle: float, *, wall: bool, distance: float, goal_radius):
    """(time to goal in s or NaN, least wall clearance in m or inf) of one walk."""
    world = cs.World()
    if wall:
        world.add_segments([[-50.0, 0.0, 50.0, 0.0]])
    goal = np.array([0.0, RADIUS + clearance])
    a = math.radians(angle)
    start = goal + distance * np.array([math.cos(a), math.sin(a)])
    agents = cs.Agents(1, slots=16, seed=0)
    d = goal - start
    agents.add(
        [start],
        heading=math.atan2(d[1], d[0]),
        radius=RADIUS,
        max_speed=SPEED,
        max_accel=ACCEL,
        target=[goal],
    )
    steering = cs.scenarios.crowd_steering(walls=wall, options=options)
    sim = cs.Simulation(
        world if wall else None,
        agents,
        steering,
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True),
    )
    sim.configure_metrics(goal_radius=goal_radius)
    sim.step(DT, steps=int(round(4 * distance / SPEED / DT)) + 300)
    ttg = float(np.asarray(sim.agent_metrics.time_to_goal)[0])
    least = sim.metrics()["min_clearance"]["wall"]
    return ttg, (math.inf if least is None else float(least))


def run(clearances, angles, *, distance: float = 6.0, goal_radius: float = 0.05) -> list[dict]:
    """One row per (clearance, angle): the three times and the walled runs' clearances."""
    crowd = cs.scenarios.CROWD
    without = {**crowd, "past_target": False}
    rows = []
    for clearance in clearances:
        for angle in angles:
            kw = dict(distance=distance, goal_radius=goal_radius)
            t_on, c_on = walk(crowd, clearance, angle, wall=True, **kw)
            t_off, c_off = walk(without, clearance, angle, wall=True, **kw)
            t_open, _ = walk(crowd, clearance, angle, wall=False, **kw)
            rows.append(
                {
                    "clearance": clearance,
                    "angle": angle,
                    "past_target": t_on,
                    "without": t_off,
                    "open": t_open,
                    "least_on": c_on,
                    "least_off": c_off,
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clearances", default="0.05,0.15,0.3,0.6,1.0", help="m, comma list")
    ap.add_argument("--angles", default="90,60,30", help="degrees to the wall, comma list")
    ap.add_argument("--distance", type=float, default=6.0, help="start to goal (m)")
    ap.add_argument("--goal-radius", type=float, default=0.05, help="arrival radius (m)")
    args = ap.parse_args()
    clearances = [float(x) for x in args.clearances.split(",")]
    angles = [float(x) for x in args.angles.split(",")]
    rows = run(clearances, angles, distance=args.distance, goal_radius=args.goal_radius)
    print(
        f"a lone walker, {args.distance:g} m to a goal beside a wall; time to goal (s, within "
        f"{args.goal_radius:g} m) and its ratio to the walk in open space"
    )
    print(
        "| goal's clearance (m) | approach (° to the wall) | open space | CROWD (past_target) "
        "| CROWD without past_target | least wall clearance (m), with / without |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['clearance']:g} | {r['angle']:g} | {r['open']:.2f} "
            f"| {r['past_target']:.2f} ({r['past_target'] / r['open']:.2f}×) "
            f"| {r['without']:.2f} ({r['without'] / r['open']:.2f}×) "
            f"| {r['least_on']:.3f} / {r['least_off']:.3f} |"
        )


if __name__ == "__main__":
    main()
