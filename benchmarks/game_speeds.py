"""Crowd steering at game speeds: contact episodes against max speed and acceleration.

The README's circle example (agents evenly on a circle, each walking to the antipode,
``crowd_steering(walls=False)`` with ``crowd_slots()`` and ``Accel``, dt 1/30 s, 30 s)
with only the max speed and the acceleration limit changed; the starting angles are
nudged by up to 0.01 rad (seeded). Contact episodes and the least clearance come from the
run metrics. The velocity obstacle takes it that a body turns to the velocity it chose;
at 6 m/s², the walkers' acceleration, bodies faster than walking touch (push-apart
separates them within the step). README, "Game speeds".

    python benchmarks/game_speeds.py [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

import contextsteer as cs

DT = 1 / 30


def run(n: int, speed: float, accel: float = 6.0, seed: int = 0) -> tuple[int, float]:
    """Contact episodes and the least agent clearance (m) of one circle of n agents."""
    radius = max(4.0, n * 0.9 / (2 * np.pi))
    a = 2 * np.pi * np.arange(n) / n + np.random.default_rng(seed).uniform(-0.01, 0.01, n)
    ring = radius * np.c_[np.cos(a), np.sin(a)]
    agents = cs.Agents(n, slots=16)
    agents.add(ring, radius=0.3, max_speed=speed, max_accel=accel, target=-ring)
    sim = cs.Simulation(
        None,
        agents,
        cs.scenarios.crowd_steering(walls=False),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    sim.configure_metrics(goal_radius=0.5)
    sim.step(DT, steps=int(30 / DT))
    m = sim.metrics()
    return int(m["collisions"]["agent_agent"]), float(m["min_clearance"]["agent"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print("| agents | max accel (m/s²) | 1.3 m/s | 2 m/s | 3 m/s | 5 m/s |")
    print("|---|---|---|---|---|---|")
    for accel in (6.0, 12.0):
        for n in (16, 40):
            cells = []
            for v in (1.3, 2.0, 3.0, 5.0):
                c, clear = run(n, v, accel, args.seed)
                cells.append(f"{c} ({clear * 1000:.2f} mm)")
            print(f"| {n} | {accel:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
