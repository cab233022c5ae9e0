"""CollisionDanger(dense_horizon=...): a horizon that shortens with the local density.

The maps against the NumPy oracle taught each agent's horizon (``agent_horizons``, brute
force over every agent); the simulation against its two limits (nobody dense: the option
off, bit for bit; everybody dense: the plain behaviour at the dense horizon, bit for bit);
a hand-worked pair; and the argument checks.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import contextsteer as cs
import reference_velocity as rv
from test_collision_danger import build as build_crowd
from test_collision_danger import (
    check,
    crowds,
    oracle_dirs,
    random_crowd,
    slot_sets,
    state_of,
    walls_clear_of,
)


@st.composite
def packed_crowds(draw):
    """Small crowds packed into a 3 m square (so that the density counts span their range,
    and with random headings some agents stand face to face: test_jam_horizon)."""
    c = draw(crowds(min_n=3, max_n=12))
    return random_crowd(
        c["seed"], len(c["position"]), overlap=True, still="some", dead=len(c["dead"]), box=3.0
    )


@settings(max_examples=40, deadline=None)
@given(
    crowd=packed_crowds(),
    dirs=slot_sets(),
    speeds=st.integers(1, 6),
    horizon=st.floats(0.5, 4.0),
    share=st.floats(0.1, 1.0),
    low=st.floats(0.0, 1.0),
    width=st.floats(0.05, 1.5),
    radius=st.floats(0.5, 2.5),
    walls=st.booleans(),
)
@example(
    crowd=random_crowd(3, 10, box=3.0),
    dirs=16,
    speeds=4,
    horizon=2.0,
    share=0.5,
    low=0.2,
    width=0.6,
    radius=1.5,
    walls=True,
)
def test_maps_match_the_oracle(crowd, dirs, speeds, horizon, share, low, width, radius, walls):
    a = build_crowd(crowd)
    state = state_of(a)
    dense = dict(
        dense_horizon=horizon * share,
        density_low=low,
        density_high=low + width,
        density_radius=radius,
    )
    kw = dict(horizon=horizon, speeds=speeds, margin=0.05)
    world, segs = None, None
    if walls:
        # Two walls beside the square, each kept only when it is clear of every agent by
        # the margin and 5 cm (as the walled tests of test_collision_danger: an agent whose
        # padded disc starts across a wall is another test's subject).
        segs = np.float32([[-1.0, -0.5, 4.0, -0.5], [3.6, -1.0, 3.6, 4.0]])
        segs = walls_clear_of(segs, state, 0.1)
        world = cs.World()
        if len(segs):
            world.add_segments(segs)
    b = cs.CollisionDanger(**kw, **dense)
    maps = b.evaluate(a, dirs, world=world, max_neighbours=32)
    exp = rv.collision_danger(state, oracle_dirs(dirs), walls=segs, **kw, **dense)
    check(maps, exp, a.alive, speeds, min_fraction=0.3)
    # The horizons really differ between the agents of most drawn crowds (not a test of
    # the kernel; the oracle's counts).
    h, _ = rv.agent_horizons(state, horizon, horizon * share, low, low + width, radius)
    assert (h[np.asarray(a.alive)] <= np.float32(horizon)).all()


def test_oracle_horizons_span_the_range():
    """The drawn dense crowds give horizons between the two ends, not only at them."""
    state = state_of(build_crowd(random_crowd(3, 10, box=3.0)))
    h, amb = rv.agent_horizons(state, 2.0, 1.0, 0.2, 0.8, 1.5)
    assert not amb.any()
    assert (h < 2.0).any() and (h > 1.0).any() and ((h > 1.0) & (h < 2.0)).any()


def test_a_dense_agent_takes_a_course_the_full_horizon_refuses():
    """Hand-worked. Agent 0 at the origin, max speed 1, slot +x; agent 1 comes at it from
    4.3 m at 1 m/s, radii 0.15 (R = 0.3): the gap of 4 m closes at 1 m/s standing (TTC
    4 s), 1.5 m/s at half speed (2.67 s) and 2 m/s at full speed (2 s), so at horizon
    2.5 s the slot's fastest safe level is half speed. Five standing agents within 1 m
    behind it make its density 5 / (π·1²) = 1.59 persons/m², above density_high = 1.5,
    so its horizon is dense_horizon = 1.5 s and full speed (TTC 2 s) is safe."""
    a = cs.Agents(7, slots=4)
    behind = [[-0.6, 0.0], [-0.6, 0.5], [-0.6, -0.5], [-0.9, 0.25], [-0.9, -0.25]]
    a.add(
        [[0.0, 0.0], [4.3, 0.0], *behind],
        velocity=[[0.0, 0.0], [-1.0, 0.0], *[[0.0, 0.0]] * 5],
        radius=0.15,
        max_speed=1.0,
    )
    full = cs.CollisionDanger(horizon=2.5, speeds=2).evaluate(a, 4)
    # Standing: TTC 4/1 = 4 s; half speed 4/1.5 = 2.67 s (safe at 2.5); full 2 s.
    assert full.speed[0, 0] == 0.5 and full.danger[0, 0] == 0.0
    dense = cs.CollisionDanger(
        horizon=2.5,
        speeds=2,
        dense_horizon=1.5,
        density_low=0.5,
        density_high=1.5,
        density_radius=1.0,
    ).evaluate(a, 4)
    assert dense.speed[0, 0] == 1.0 and dense.danger[0, 0] == 0.0
    # Agent 1 is alone within 1 m: its own horizon stays 2.5 s, its maps are unchanged.
    np.testing.assert_array_equal(dense.speed[1], full.speed[1])
    np.testing.assert_array_equal(dense.danger[1], full.danger[1])


def _run(danger, n=12, steps=120, seed=5):
    """A crowd of n agents crossing a 6 m square with a wall, stepped with `danger`."""
    rng = np.random.default_rng(seed)
    world = cs.World()
    world.add_segments([[-4.0, -4.0, 4.0, -4.0], [-4.0, 4.0, 4.0, 4.0]])
    a = cs.Agents(n, slots=16, seed=seed)
    pos = rng.uniform(-2.5, 2.5, (n, 2))
    while True:  # no two closer than 0.7 m (radius 0.3)
        d = np.hypot(*(pos[:, None] - pos[None]).transpose(2, 0, 1)) + 9 * np.eye(n)
        if d.min() >= 0.7:
            break
        pos = rng.uniform(-2.5, 2.5, (n, 2))
    a.add(pos, target=-pos, radius=0.3, max_speed=1.3, max_accel=6.0)
    steer = cs.Steering([cs.Arrive(slowing_radius=1.0, shape="half_cosine"), danger], combine="max")
    sim = cs.Simulation(world, a, steer, motion=cs.Accel())
    for _ in range(steps):
        sim.step(1 / 30)
    return np.array(a.position), np.array(a.velocity), np.array(a.heading)


def test_nobody_dense_is_the_option_off():
    """Densities never reach density_low: every horizon is the full one, bit for bit."""
    opts = dict(horizon=2.0, speeds=4, margin=0.05, commit=0.1, inertia=0.3, turn_steps=4)
    off = _run(cs.CollisionDanger(**opts))
    on = _run(cs.CollisionDanger(**opts, dense_horizon=0.5, density_low=50.0, density_high=60.0))
    for x, y in zip(off, on):
        np.testing.assert_array_equal(x, y)


def test_everybody_dense_is_the_dense_horizon():
    """Any neighbour within 1 km makes the density above density_high = 1e-9, so every
    agent's horizon is dense_horizon = 1 s (walls' 2·(1/2) = 1 s exactly): the run equals
    the plain behaviour with horizon=1, bit for bit. (No return_margin or turn_margin:
    their thresholds reach past the horizon, where the plain behaviour's shorter
    neighbour reach sees fewer agents.)"""
    opts = dict(speeds=4, margin=0.05, commit=0.1, inertia=0.3, retreat_speed=0.5)
    plain = _run(cs.CollisionDanger(horizon=1.0, **opts))
    dense = _run(
        cs.CollisionDanger(
            horizon=2.0,
            dense_horizon=1.0,
            density_low=0.0,
            density_high=1e-9,
            density_radius=1000.0,
            **opts,
        )
    )
    for x, y in zip(plain, dense):
        np.testing.assert_array_equal(x, y)
    # ... and differs from the full horizon's run (the option does something here).
    full = _run(cs.CollisionDanger(horizon=2.0, **opts))
    assert not np.array_equal(full[0], dense[0])


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(dense_horizon=3.0), "dense_horizon must be at most horizon"),
        (dict(dense_horizon=0.0), "dense_horizon must be > 0"),
        (dict(dense_horizon=float("nan")), "dense_horizon must be finite"),
        (dict(density_low=2.0, density_high=1.0), "density_high must be above density_low"),
        (dict(density_low=-1.0), "density_low must be"),
        (dict(density_radius=0.0), "density_radius must be"),
    ],
)
def test_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        cs.CollisionDanger(**kw)


def test_round_trips_and_defaults():
    b = cs.CollisionDanger(dense_horizon=1.0, density_low=0.5, density_high=1.5, density_radius=2.0)
    assert "dense_horizon=1.0" in repr(b)
    import pickle

    c = pickle.loads(pickle.dumps(b))
    assert (c.dense_horizon, c.density_low, c.density_high, c.density_radius) == (
        1.0,
        0.5,
        1.5,
        2.0,
    )
    d = cs.CollisionDanger()
    assert d.dense_horizon is None and (d.density_low, d.density_high, d.density_radius) == (
        1.0,
        2.0,
        1.5,
    )


def test_dense_runs_are_bit_identical_for_any_thread_count():
    """576 agents packed into 12 m × 12 m (about 4 persons/m² at the start, thinning as
    they cross), CROWD with a dense horizon, in 16 phases: the same bytes on 1, 2 and 4
    threads."""

    def go(threads):
        rng = np.random.default_rng(11)
        a = cs.Agents(576, slots=16, seed=3)
        gx, gy = np.meshgrid(np.arange(-6, 6, 0.5), np.arange(-6, 6, 0.5))
        pos = np.c_[gx.ravel(), gy.ravel()] + rng.uniform(-0.05, 0.05, (576, 2))
        a.add(pos, radius=0.2, max_speed=1.3, max_accel=6.0, target=-pos)
        sim = cs.Simulation(
            None,
            a,
            cs.scenarios.crowd_steering(
                walls=False,
                options=dict(
                    cs.scenarios.CROWD, dense_horizon=0.6, density_low=0.7, density_high=1.7
                ),
                decision_phases=16,
            ),
            motion=cs.Accel(),
            slots=cs.scenarios.crowd_slots(),
        )
        with cs.threads(threads):
            sim.step(1 / 30, steps=40)
        return np.array(a.position).tobytes() + np.array(sim.speed).tobytes()

    assert go(1) == go(2) == go(4)
