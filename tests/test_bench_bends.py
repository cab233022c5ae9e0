"""benchmarks/bends.py: lone agents at bends they fit (docs/crowd.md, "Bends")."""

from __future__ import annotations

import pytest

from bench_modules import load

bends = load("bends")


def test_a_bend_is_turned_by_default_and_with_wall_speed_alone_but_not_without_unstick():
    # One of the sweep's bends: 1.0 m corridor, radius 0.4 m, starting mid-corridor.
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {})
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {"wall_speed_alone": True})
    assert not bends.turns(1.0, 0.4, 0.5, 1.3, {"unstick": False})


@pytest.mark.parametrize(
    "width, radius, speed, across",
    [(1.1, 0.45, 1.3, 0.5), (1.2, 0.3, 3.0, 0.7), (1.0, 0.3, 3.0, 0.5)],
)
def test_a_lone_agent_turns_back_round_a_walls_end(width, radius, speed, across):
    """A lone agent whose route turns 180° round the end of a wall (bends.py --uturn):
    unstick's lone-agent rule asked whether a slot could move within 90° of the straight
    line to the target. At the turn that line points back through the wall, and the
    corridor just walked lies within 90° of it and is free, so the rule did not fire and
    the agent paced at the wall's end (17 of 72 such U-turns missed at 1.3 m/s, 59 of 72
    at 3 m/s; fuzz round 28's attacker). The rule now asks the route's direction, the
    simulation's field's (BehaviourInputs::way). Oracle: home, where the build before
    was not, for each of these three; not without unstick."""
    y = radius + across * (width - 2 * radius)
    assert bends.turns(width, radius, y, speed, {}, uturn=True)
    assert not bends.turns(width, radius, y, speed, {"unstick": False}, uturn=True)
