"""Agents too fast to stop at their goals: what lies beyond a goal, met at speed.

Lone agents walk to a goal short of a dead end's wall, or short of a body standing at its
own goal, at 1.3-4 m/s with 6 m/s² of braking; some goals lie within the danger's
5 cm margin of the wall or the body (docs/crowd.md, "Too fast to stop at the
target"). The field runs give the navigation field as ``crowd_steering(field=...,
field_ends_at_target=True)`` (its FollowField slows within 1 m); the extra runs give it in
``extra=`` beside Arrive, where its full pull does not slow at the goal. Prints, per kind,
the runs with a contact, the agents home and their mean time to goal.

    python benchmarks/past_goal.py
"""

from __future__ import annotations

import numpy as np

import contextsteer as cs

DT = 1 / 30
SPEEDS = (1.3, 2.0, 3.0, 4.0)


def dead_end(width: float, radius: float, speed: float, gap: float, mode: str) -> dict:
    """A corridor `width` wide and 10 m long, closed at x = 10, the goal `gap` short of the
    end; one agent from x = 0.6 for 40 s."""
    world = cs.World()
    n = 10.0
    world.add_segments(
        np.float32([[0, 0, n, 0], [n, 0, n, width], [0, width, n, width], [0, 0, 0, width]])
    )
    goal = (n - gap, width / 2)
    field = cs.NavField(world, [goal], radius=radius, cell=0.05)
    agents = cs.Agents(1, slots=16)
    agents.add([[0.6, width / 2]], radius=radius, max_speed=speed, max_accel=6.0, target=[goal])
    if mode == "extra":
        steering = cs.scenarios.crowd_steering(extra=[cs.FollowField(field)])
    else:
        steering = cs.scenarios.crowd_steering(field=field, field_ends_at_target=True)
    sim = cs.Simulation(world, agents, steering, cs.Accel(), slots=cs.scenarios.crowd_slots())
    sim.configure_metrics(goal_radius=0.2)
    sim.step(DT, steps=1200)
    m = sim.metrics()
    return {
        "contact": m["wall_contact_steps"] > 0,
        "home": m["time_to_goal"]["arrived"],
        "ttg": m["time_to_goal"]["mean"],
    }


def body_beyond(radius: float, speed: float, gap: float, mode: str) -> dict:
    """A 12 m × 4 m room; a body stands at its goal (10, 2), the agent's goal lies `gap`
    short of it; the agent from (1, 2) for 20 s."""
    world = cs.World()
    world.add_segments(np.float32([[0, 0, 12, 0], [12, 0, 12, 4], [0, 4, 12, 4], [0, 0, 0, 4]]))
    goals = [(10.0 - gap, 2.0), (10.0, 2.0)]
    agents = cs.Agents(2, slots=16)
    agents.add(
        [[1.0, 2.0], [10.0, 2.0]], radius=radius, max_speed=speed, max_accel=6.0, target=goals
    )
    extra = []
    if mode == "extra":
        field = cs.NavField(world, [goals[0]], radius=radius, cell=0.05)
        extra = [cs.FollowField(field, agent_weights=np.float32([1, 0]))]
    steering = cs.scenarios.crowd_steering(extra=extra)
    sim = cs.Simulation(world, agents, steering, cs.Accel(), slots=cs.scenarios.crowd_slots())
    sim.configure_metrics(goal_radius=0.2)
    sim.step(DT, steps=600)
    m = sim.metrics()
    ttg = sim.agent_metrics.time_to_goal[0]
    return {
        "contact": m["collisions"]["agent_agent"] > 0,
        "home": int(not np.isnan(ttg)),
        "ttg": float(ttg),
    }


def main() -> None:
    rows = []
    for mode in ("field", "extra"):
        runs = [
            dead_end(width, radius, speed, gap, mode)
            for width in (1.0, 1.2, 2.0)
            for radius in (0.25, 0.3, 0.4)
            for speed in SPEEDS
            for gap in (radius + 0.01, radius + 0.03, 0.4, 0.6, 0.8)
            if gap >= radius + 0.01
        ]
        rows.append((f"dead end, field in {'extra' if mode == 'extra' else 'field='}", runs))
    for mode in ("arrive", "extra"):
        runs = [
            body_beyond(radius, speed, gap, mode)
            for radius in (0.25, 0.3, 0.4)
            for speed in SPEEDS
            for gap in (2 * radius + x for x in (0.01, 0.03, 0.1, 0.3, 0.6))
        ]
        rows.append((f"body beyond, {'field in extra' if mode == 'extra' else 'Arrive'}", runs))
    print("| kind | runs | with a contact | home | mean time to goal (s) |")
    print("|---|---|---|---|---|")
    for name, runs in rows:
        ttg = [r["ttg"] for r in runs if r["ttg"] is not None and not np.isnan(r["ttg"])]
        print(
            f"| {name} | {len(runs)} | {sum(r['contact'] for r in runs)} | "
            f"{sum(r['home'] for r in runs)} | {np.mean(ttg):.3f} |"
        )


if __name__ == "__main__":
    main()
