"""benchmarks/bends.py: lone agents at bends they fit (docs/crowd.md, "Bends")."""

from __future__ import annotations

from bench_modules import load

bends = load("bends")


def test_a_bend_is_turned_by_default_and_with_wall_speed_alone_but_not_without_unstick():
    # One of the sweep's bends: 1.0 m corridor, radius 0.4 m, starting mid-corridor.
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {})
    assert bends.turns(1.0, 0.4, 0.5, 1.3, {"wall_speed_alone": True})
    assert not bends.turns(1.0, 0.4, 0.5, 1.3, {"unstick": False})
