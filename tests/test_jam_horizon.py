"""CollisionDanger(jam_horizon=...): a jammed agent facing an oncomer decides at a
shorter horizon.

The maps against the NumPy oracle (``collision_danger_jam``: the rows at the full horizon,
replaced by the rows at the jam horizon for each agent whose full rows offer no safe way
to move and whom a neighbour wants to pass the other way, brute force); a hand-worked
corridor; a crowd going one way (nobody face to face, however its members turn) unchanged
bit for bit; the argument checks; the same bytes on any thread count.
"""

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import contextsteer as cs
import reference_velocity as rv
from test_collision_danger import build as build_crowd
from test_collision_danger import check, oracle_dirs, random_crowd, slot_sets, state_of
from test_dense_horizon import packed_crowds

# The explicit example: a drawn crowd with jammed agents (test_drawn_crowds_have_jammed_agents).
_DRAWN = dict(
    crowd=random_crowd(3, 12, box=3.0), dirs=16, speeds=4, horizon=2.0, share=0.3, radius=2.0
)


@settings(max_examples=40, deadline=None)
@given(
    crowd=packed_crowds(),
    dirs=slot_sets(),
    speeds=st.integers(1, 6),
    horizon=st.floats(0.5, 4.0),
    share=st.floats(0.05, 1.0),
    radius=st.floats(0.5, 3.0),
    oncomers=st.integers(1, 3),
)
@example(**_DRAWN, oncomers=1)
@example(**_DRAWN, oncomers=2)
def test_maps_match_the_oracle(crowd, dirs, speeds, horizon, share, radius, oncomers):
    a = build_crowd(crowd)
    state = state_of(a)
    kw = dict(horizon=horizon, speeds=speeds, margin=0.05)
    jam = dict(jam_horizon=horizon * share, jam_radius=radius, jam_oncomers=oncomers)
    maps = cs.CollisionDanger(**kw, **jam).evaluate(a, dirs, max_neighbours=32)
    exp, _ = rv.collision_danger_jam(state, oracle_dirs(dirs), **kw, **jam)
    # A crowd drawn with every agent inside another (three bodies 0.1 m apart) leaves the
    # oracle no slot it can decide: nothing to compare, so such a draw is set aside
    # (the explicit examples above compare most of their slots).
    comparable = (np.asarray(a.alive, dtype=bool)[:, None] & ~exp.ambiguous).sum()
    assume(comparable >= 0.2 * np.count_nonzero(a.alive) * exp.danger.shape[1])
    check(maps, exp, a.alive, speeds, min_fraction=0.2)


def test_drawn_crowds_have_jammed_agents():
    """The oracle's own count on the explicit example: some agents take the jam rows (so
    the test above compares both kinds of row)."""
    state = state_of(build_crowd(_DRAWN["crowd"]))
    _, jammed = rv.collision_danger_jam(
        state, 16, horizon=2.0, speeds=4, margin=0.05, jam_horizon=0.6, jam_radius=2.0
    )
    assert 0 < jammed.sum() < 12


def _corridor():
    """Agent 0 at the origin going to (5, 0); agent 1 at (1.5, 0) going to (-5, 0), face to
    face with it; agent 2 at (-1, 0) going to (5, 0) behind agent 0; all standing, radius
    0.3, max speed 1.3; walls at y = +-0.35 along the corridor. Their headings point
    anywhere but along their way: the test reads the desired directions, not them."""
    world = cs.World()
    world.add_segments([[-5.0, -0.35, 5.0, -0.35], [-5.0, 0.35, 5.0, 0.35]])
    a = cs.Agents(3, slots=3)
    a.add(
        [[0.0, 0.0], [1.5, 0.0], [-1.0, 0.0]],
        heading=[np.pi, 0.0, np.pi / 2],
        radius=0.3,
        max_speed=1.3,
        target=[[5.0, 0.0], [-5.0, 0.0], [5.0, 0.0]],
    )
    return world, a


def test_a_jammed_agent_facing_an_oncomer_walks_at_the_jam_horizon():
    """Hand-worked, slots +x, +y, -x (world frame), 2 speed levels (0.65, 1.3 m/s), horizon
    2 s. Agent 0: +x closes the 0.9 m gap to agent 1 in 1.38 s at 0.65 and 0.69 s at 1.3
    m/s, -x the 0.4 m gap to agent 2 in 0.62 and 0.31 s, +y meets the wall 5 cm away: no
    moving candidate is safe, standing is (nobody moves), and agent 1 faces it from 1.5 m.
    At the jam horizon 0.6 s, +x at full speed (0.69 s) is safe, -x at half speed (0.62 s)
    too. Agent 1 is free behind it (+x), agent 2 free behind it (-x): their maps do not
    change."""
    world, a = _corridor()
    dirs = np.float32([[1, 0], [0, 1], [-1, 0]])
    base = dict(horizon=2.0, speeds=2)
    full = cs.CollisionDanger(**base).evaluate(a, dirs, world=world)
    np.testing.assert_array_equal(full.speed[0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(full.danger[0], [0.0, 0.0, 0.0])
    jam = cs.CollisionDanger(**base, jam_horizon=0.6).evaluate(a, dirs, world=world)
    np.testing.assert_array_equal(jam.speed[0], [1.0, 0.0, 0.5])
    assert jam.danger[0, 0] == 0.0 and jam.danger[0, 2] == 0.0
    for i in (1, 2):
        np.testing.assert_array_equal(jam.speed[i], full.speed[i])
        np.testing.assert_array_equal(jam.danger[i], full.danger[i])
    # A jam radius short of agent 1 (1.5 m away): agent 0 is not facing an oncomer.
    near = cs.CollisionDanger(**base, jam_horizon=0.6, jam_radius=1.4).evaluate(
        a, dirs, world=world
    )
    np.testing.assert_array_equal(near.speed, full.speed)
    # Agent 1 going +x too, or on its target, or agent 0 on its own: nobody is oncoming.
    for who, goal in ((1, [5.0, 0.0]), (1, [1.5, 0.0]), (0, [0.0, 0.0])):
        a.target[...] = [[5.0, 0.0], [-5.0, 0.0], [5.0, 0.0]]
        a.target[who] = goal
        away = cs.CollisionDanger(**base, jam_horizon=0.6).evaluate(a, dirs, world=world)
        np.testing.assert_array_equal(away.speed[0], [0.0, 0.0, 0.0])
    # 125° apart is still the other way (cos −0.57); 115° is not (−0.42).
    for angle, jammed in ((125.0, True), (115.0, False)):
        t = np.radians(angle)
        a.target[...] = [[5.0, 0.0], [1.5 + 5.0 * np.cos(t), 5.0 * np.sin(t)], [5.0, 0.0]]
        turned = cs.CollisionDanger(**base, jam_horizon=0.6).evaluate(a, dirs, world=world)
        np.testing.assert_array_equal(turned.speed[0], jam.speed[0] if jammed else full.speed[0])


def test_jam_oncomers_is_how_many_oncomers_it_takes():
    """The corridor above with a second oncomer, agent 3 at (2.1, 0) going to (-5, 0)
    behind agent 1 (jam radius 2.5 m, so both count): agent 0's rows at either horizon are
    those of the three-agent corridor (agent 1 is nearer on +x), and they switch to the
    jam rows while at most two oncomers are asked for. With agent 1 alone, asking for two
    leaves the full rows."""
    world, a = _corridor()
    dirs = np.float32([[1, 0], [0, 1], [-1, 0]])
    base = dict(horizon=2.0, speeds=2, jam_horizon=0.6, jam_radius=2.5)
    one = cs.CollisionDanger(**base, jam_oncomers=2).evaluate(a, dirs, world=world)
    np.testing.assert_array_equal(one.speed[0], [0.0, 0.0, 0.0])
    b = cs.Agents(4, slots=3)
    b.add(
        [[0.0, 0.0], [1.5, 0.0], [-1.0, 0.0], [2.1, 0.0]],
        heading=[np.pi, 0.0, np.pi / 2, 0.0],
        radius=0.3,
        max_speed=1.3,
        target=[[5.0, 0.0], [-5.0, 0.0], [5.0, 0.0], [-5.0, 0.0]],
    )
    for oncomers, jammed in ((1, True), (2, True), (3, False)):
        maps = cs.CollisionDanger(**base, jam_oncomers=oncomers).evaluate(b, dirs, world=world)
        expected = [1.0, 0.0, 0.5] if jammed else [0.0, 0.0, 0.0]
        np.testing.assert_array_equal(maps.speed[0], expected, err_msg=str(oncomers))
    with pytest.raises(ValueError, match="jam_oncomers"):
        cs.CollisionDanger(jam_oncomers=0)


def _walk_corridor(a, half_length, width, options, steps, threads=1):
    """Step agents ``a`` along a corridor between walls at y = 0 and y = ``width`` (x from
    -``half_length`` to ``half_length``) with the crowd steering of ``options`` for
    ``steps`` steps of 1/30 s on ``threads`` threads; returns the simulation."""
    world = cs.World()
    world.add_segments(
        [[-half_length, 0.0, half_length, 0.0], [-half_length, width, half_length, width]]
    )
    sim = cs.Simulation(
        world,
        a,
        cs.scenarios.crowd_steering(options=options),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    with cs.threads(threads):
        sim.step(1 / 30, steps=steps)
    return sim


def _one_way_run(danger, steps=150):
    """40 agents walking +x through a 3 m corridor (nobody face to face: however they
    turn to make room, they all want to go +x)."""
    rng = np.random.default_rng(4)
    a = cs.Agents(40, slots=16, seed=4)
    gx, gy = np.meshgrid(np.arange(-12.0, -2.0, 1.0), np.arange(0.5, 2.9, 0.7))
    pos = np.c_[gx.ravel(), gy.ravel()] + rng.uniform(-0.03, 0.03, (40, 2))
    a.add(
        pos,
        heading=0.0,
        radius=0.25,
        max_speed=rng.uniform(0.8, 1.4, 40),
        max_accel=6.0,
        target=np.c_[np.full(40, 25.0), pos[:, 1]],
    )
    _walk_corridor(a, 30.0, 3.0, danger, steps)
    return np.array(a.position), np.array(a.heading)


def _without_jam(options):
    """``options`` without the jam horizon (CROWD has it since it joined the default)."""
    return {k: v for k, v in options.items() if not k.startswith("jam_")}


def test_a_one_way_crowd_is_unchanged_bit_for_bit():
    off = _one_way_run(_without_jam(cs.scenarios.CROWD))
    # The default (three oncomers at 0.6 s) and the most eager rule (one oncomer at 0.3 s).
    for options in (
        dict(cs.scenarios.CROWD),
        dict(_without_jam(cs.scenarios.CROWD), jam_horizon=0.3),
    ):
        on = _one_way_run(options)
        for x, y in zip(off, on):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(jam_horizon=3.0), "jam_horizon must be at most horizon"),
        (dict(jam_horizon=0.0), "jam_horizon must be > 0"),
        (dict(jam_horizon=float("inf")), "jam_horizon must be finite"),
        (dict(jam_radius=0.0), "jam_radius must be"),
        (dict(jam_radius=-1.0), "jam_radius must be"),
    ],
)
def test_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        cs.CollisionDanger(**kw)


def test_round_trip_and_defaults():
    import pickle

    b = cs.CollisionDanger(jam_horizon=0.5, jam_radius=1.5)
    c = pickle.loads(pickle.dumps(b))
    assert (c.jam_horizon, c.jam_radius) == (0.5, 1.5) and "jam_horizon=0.5" in repr(b)
    d = cs.CollisionDanger()
    assert d.jam_horizon is None and d.jam_radius == 2.0


def _counterflow_bytes(options, threads, steps=90):
    """Two packed groups of 98 meeting head-on in a 4 m corridor (walls), in 16 phases."""
    rng = np.random.default_rng(5)
    gx, gy = np.meshgrid(np.arange(1.0, 8.0, 0.5), np.arange(0.5, 3.6, 0.5))
    right = np.c_[gx.ravel(), gy.ravel()]
    pos = np.vstack([right * [-1, 1], right]) + rng.uniform(-0.04, 0.04, (2 * len(right), 2))
    goal = np.c_[np.where(pos[:, 0] < 0, 11.0, -11.0), pos[:, 1]]
    a = cs.Agents(len(pos), slots=16, seed=3)
    a.add(pos, radius=0.2, max_speed=1.3, max_accel=6.0, target=goal)
    sim = _walk_corridor(a, 12.0, 4.0, options, steps, threads)
    return np.array(a.position).tobytes() + np.array(sim.speed).tobytes()


def test_counterflow_runs_are_bit_identical_for_any_thread_count():
    """CROWD (with its jam horizon) where the fronts meet: the same bytes on 1, 2 and 4
    threads, and not those of CROWD without the jam horizon (the jam rule fired)."""
    crowd = cs.scenarios.CROWD
    one = _counterflow_bytes(crowd, 1)
    assert one == _counterflow_bytes(crowd, 2) == _counterflow_bytes(crowd, 4)
    assert one != _counterflow_bytes(_without_jam(crowd), 1)
