"""A bounded fuzz target: random worlds, agents and steering stepped for a while must keep
every state finite, never carry an agent's centre across a wall, and never crash (issue 13).

Hypothesis draws the scene; CI runs ``FUZZ_EXAMPLES`` examples (environment variable
``CONTEXTSTEER_FUZZ_EXAMPLES``, default 200); run more locally to search longer.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import contextsteer as cs

FUZZ_EXAMPLES = int(os.environ.get("CONTEXTSTEER_FUZZ_EXAMPLES", "200"))

BEHAVIOURS = [
    lambda: cs.Seek(), lambda: cs.Seek(shape="half_cosine"), lambda: cs.Arrive(slowing_radius=1.0),
    lambda: cs.Wander(weight=0.3), lambda: cs.Forward(weight=0.2),
    lambda: cs.AgentDanger(radius=1.0, predictive=True), lambda: cs.WallDanger(look_ahead=2.0),
    lambda: cs.CollisionDanger(horizon=1.5, speeds=3), lambda: cs.Separation(radius=1.0),
]


@st.composite
def scenes(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    box = draw(st.floats(6.0, 30.0))
    world = cs.World()
    world.add_polyline([[0, 0], [box, 0], [box, box], [0, box]], closed=True)
    for _ in range(draw(st.integers(0, 6))):
        a = rng.uniform(0, box, 2)
        b = a + rng.normal(0, box / 4, 2)
        if np.linalg.norm(b - a) > 1e-3:
            world.add_segments([[*a, *b]])
    if draw(st.booleans()):
        world.add_circles(rng.uniform(0, box, (3, 2)), rng.uniform(0.2, 1.5, 3))
    n = draw(st.integers(1, 40))
    radius = rng.uniform(0.1, 0.5, n)
    pos = rng.uniform(0, box, (n, 2))
    clear = (cs.nearest(world, pos.astype(np.float32), 2 * box).distance > radius + 0.01) & \
        ~cs.inside(world, pos.astype(np.float32))     # (nearest measures to a circle's rim)
    assume(clear.any())
    pos, radius = pos[clear], radius[clear]
    a = cs.Agents(len(pos), slots=draw(st.sampled_from([4, 8, 16, 32])), seed=seed)
    a.add(pos, velocity=rng.normal(0, 1, (len(pos), 2)), radius=radius,
          max_speed=rng.uniform(0.1, 5.0, len(pos)), max_accel=rng.uniform(0.5, 20, len(pos)),
          target=rng.uniform(0, box, (len(pos), 2)))
    picks = draw(st.lists(st.integers(0, len(BEHAVIOURS) - 1), min_size=1, max_size=4))
    steering = cs.Steering(
        [BEHAVIOURS[i]() for i in picks],
        combine=draw(st.sampled_from(["max", "sum"])),
        resolve=draw(st.sampled_from(["mask", "subtract", "scale", "mask_min_danger",
                                      "avoid_opposite"])),
        choose=draw(st.sampled_from(["vector_sum", "argmax", "weighted_neighbours", "subslot",
                                     "subslot_linear"])),
        blend=draw(st.none() | st.floats(0.0, 1.0)), rotate=draw(st.booleans()),
        hysteresis=draw(st.sampled_from([0.0, 0.3])))
    motion = draw(st.sampled_from([cs.Lerp(), cs.Accel(), cs.Vehicle()]))
    dt = draw(st.sampled_from([1 / 60, 1 / 30, 0.1, 0.5]))
    return world, a, steering, motion, dt


@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scene=scenes(), steps=st.integers(1, 60))
def test_random_scenes_stay_finite_and_inside_their_walls(scene, steps):
    world, a, steering, motion, dt = scene
    sim = cs.Simulation(world, a, steering, motion)
    alive = np.asarray(a.alive)
    for _ in range(steps):
        before = np.array(a.position[alive], dtype=np.float32)
        sim.step(dt)
        after = np.array(a.position[alive], dtype=np.float32)
        assert np.isfinite(after).all() and np.isfinite(a.velocity[alive]).all()
        move = after - before
        length = np.linalg.norm(move, axis=1)
        moving = length > 1e-6
        if moving.any():
            # The centre's own path from the old to the new position never meets a wall
            # (a body stops a hair before contact, so its centre stays a radius away).
            hits = cs.raycast(world, before[moving], move[moving], length[moving].astype(np.float32))
            assert not hits.hit.any(), (before[moving][hits.hit], after[moving][hits.hit])
