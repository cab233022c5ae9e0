"""benchmarks/game_speeds.py: the README's "Game speeds" table comes from its run(); the
walkers' row and the acceleration's lever, checked on the table's own cases."""

from bench_modules import load

gs = load("game_speeds")


def test_walkers_on_the_circle_keep_their_margin():
    # 16 agents at 1.3 m/s: no contact, the 5 cm margin kept (50.6 mm in the table).
    contacts, clearance = gs.run(16, 1.3)
    assert contacts == 0 and clearance > 0.045


def test_fast_bodies_touch_and_more_acceleration_is_the_lever():
    # 16 agents at 5 m/s: 6 episodes at 6 m/s², 1 at 12 m/s² (the README's table); none
    # deeper than 0.1 mm, push-apart separating each within its step.
    slow_turn, clear6 = gs.run(16, 5.0, 6.0)
    fast_turn, clear12 = gs.run(16, 5.0, 12.0)
    assert slow_turn > fast_turn and min(clear6, clear12) > -1e-4
