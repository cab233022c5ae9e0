"""The recipes of docs/porting.md ("Coming from RVO2 / ORCA"), run as written.

Oracles: the preferred velocity itself (free space), the same run with every polygon's
winding reversed (bit for bit), and the docs' own code blocks executed.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import contextsteer as cs

PAGE = Path(__file__).resolve().parents[1] / "docs" / "porting.md"


def test_the_pages_code_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(PAGE), "exec"), {})


def test_a_target_ahead_by_the_slowing_radius_gives_the_preferred_velocity():
    agents = cs.Agents(3, slots=16)
    agents.add([[0, 0], [0, 2], [0, 4]], radius=0.3, max_speed=1.6, max_accel=6.0)
    sim = cs.Simulation(
        None,
        agents,
        cs.scenarios.crowd_steering(walls=False),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    pref = np.float32([[0.5, 0.0], [1.0, 0.3], [1.6, 0.0]])
    for _ in range(150):
        agents.target[:] = agents.position + pref / agents.max_speed[:, None] * 1.0
        sim.step(1 / 30)
    np.testing.assert_allclose(agents.velocity, pref, atol=1e-3)


def test_obstacle_winding_does_not_matter():
    def run(flip):
        w = cs.World()
        w.add_polyline([[-10, -6], [10, -6], [10, 6], [-10, 6]], closed=True)
        for ring in ([[-2, -1], [0, -1], [0, 1], [-1, 2], [-2, 1]], [[3, -3], [5, -3], [4, -1]]):
            w.add_polygon(np.float32(ring[::-1] if flip else ring))
        a = cs.Agents(20, slots=16)
        rng = np.random.default_rng(4)
        start = np.c_[rng.uniform(-9, -6, 20), rng.uniform(-5, 5, 20)]
        a.add(start, radius=0.3, max_speed=1.3, max_accel=6.0, target=start * [-1, 1])
        sim = cs.Simulation(
            w, a, cs.scenarios.crowd_steering(), motion=cs.Accel(), slots=cs.scenarios.crowd_slots()
        )
        sim.step(1 / 30, steps=150)
        return a.position.copy()

    np.testing.assert_array_equal(run(False), run(True))
