"""benchmarks/bends.py: lone agents at bends they fit (docs/crowd.md, "Bends")."""

from __future__ import annotations

import pytest

from bench_modules import load

bends = load("bends")


NEITHER = {"unstick": False, "wall_speed_alone": False}  # CROWD without its lone-agent rules


def test_a_bend_is_turned_by_default_and_by_either_lone_agent_rule_but_not_without_both():
    # One of the sweep's bends: 1.0 m corridor, radius 0.4 m, starting mid-corridor.
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {})
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {"wall_speed_alone": False})
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {"unstick": False})
    assert not bends.turns(1.0, 0.4, 0.5, 1.3, NEITHER)


@pytest.mark.parametrize(
    "width, radius, speed, across",
    [(1.1, 0.45, 1.3, 0.5), (1.2, 0.3, 3.0, 0.7), (1.0, 0.3, 3.0, 0.5), (1.0, 0.35, 4.0, 0.5)],
)
def test_a_lone_agent_turns_back_round_a_walls_end(width, radius, speed, across):
    """A lone agent whose route turns 180° round the end of a wall (bends.py --uturn):
    unstick's lone-agent rule asked whether a slot could move within 90° of the straight
    line to the target. At the turn that line points back through the wall, and the
    corridor just walked lies within 90° of it and is free, so the rule did not fire and
    the agent paced at the wall's end (17 of 72 such U-turns missed at 1.3 m/s, 59 of 72
    at 3 m/s; fuzz round 28's attacker). The rule now asks the route's direction, the
    simulation's field's (BehaviourInputs::ways). At 4 m/s the agent then crept along the
    first leg at its first creep speed, 0.08 m/s, for good: keep_course held each faster
    creep on the same heading back as a return (the last case). Oracle: home, where the
    builds before were not, for each of these, with unstick's rule alone (wall_speed_alone,
    in CROWD since, off); not without either."""
    y = radius + across * (width - 2 * radius)
    assert bends.turns(width, radius, y, speed, {}, uturn=True)
    assert bends.turns(width, radius, y, speed, {"wall_speed_alone": False}, uturn=True)
    assert not bends.turns(width, radius, y, speed, NEITHER, uturn=True)


def test_the_lone_rule_asks_the_field_the_agent_follows():
    """With two FollowFields, the first another agent's route and weighing 0 for this
    one, the lone-agent rule took the first field's direction as the agent's way, and
    the agent paced before a bend it turns alone (14 and 59 of 72 bends missed at 1.3 and
    3 m/s; fuzz round 29). Each agent's way is now the field it follows most (weight ·
    agent_weights above 0). Oracle: the bend is turned with the other route first, as
    without it, by unstick's rule alone (wall_speed_alone off); not with both off."""
    import numpy as np

    import contextsteer as cs

    def others_route(world, start):
        other = cs.NavField(world, [start], radius=0.35, cell=0.1)
        return [cs.FollowField(other, agent_weights=np.zeros(1, np.float32))]

    unstick_only = {"wall_speed_alone": False}
    assert bends.turns(1.0, 0.35, 0.5, 3.0, unstick_only)
    assert bends.turns(1.0, 0.35, 0.5, 3.0, unstick_only, first=others_route)
    assert not bends.turns(1.0, 0.35, 0.5, 3.0, NEITHER, first=others_route)
