"""A pinned golden hash of a 1,000-step racetrack run (Box2D's EXPECTED_HASH habit).

The thread-count identity tests say that runs agree with each other; this one says that
they agree with yesterday. It hashes the committed agent state and the combined maps after
1,000 steps of the default ``racetrack`` scenario (12 cars, seed 0, dt 1/30), on one and
on two threads. A change that alters the numbers must re-pin the hash in the same commit
and say why in its message (a deliberate behaviour change, a new compiler or libm: the
step calls sin/cos/sqrt).
"""

import hashlib

import numpy as np
import pytest

import contextsteer as cs

# Re-pinned when rotated slot rays were normalised as raycast normalises its directions
# (slot_raycast with headings is now bit for bit raycast on the expanded rays), and again
# when ray_circle took b^2 - c as (r - e)(r + e) (thick rays from far away missed walls;
# the cars' thick slot rays meet the walls' end discs: the run's metrics are unchanged).
EXPECTED = "b756caeb3f402236b49c05e3fd2a7cdc7b463bf2405c0e300a0576bfd2751cd6"


def state_hash(sim) -> str:
    h = hashlib.sha256()
    a = sim.agents
    for arr in (a.position, a.velocity, a.heading, sim.interest, sim.danger):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("threads", [1, 2])
def test_racetrack_thousand_steps_matches_the_pinned_hash(threads):
    with cs.threads(threads):
        sim = cs.scenarios.get("racetrack")(seed=0)
        sim.step(1 / 30, 1000)
    assert state_hash(sim) == EXPECTED


# A packed crowd standing at its goals under cs.scenarios.crowd_steering(): every agent
# within its radius of its target, its neighbours standing round it, so that
# CollisionDanger's past_target, unstick and squeeze test many creep candidates against
# every neighbour. Pinned from the code before those tests were worked out once per
# decision (PairTest in behaviours.cpp), which had to leave every bit as it was.
STANDING = {
    0.5: "deb3c5fb35a145f460760e979b5b54aee0197f99dc8edd14347572242d538c1d",
    0.62: "00854147c0616eadf560c62a02c1532e0e8430c570ec96e307292c2433b62af3",
    0.7: "b0275a05eb77be91b8094ad734849dfa60d72abf0b38b9e04b1d32a270e6f03f",
}


def standing_crowd(spacing: float):
    """16 × 16 bodies of radius 0.25 m on a lattice of the given spacing (0.5: touching),
    each target up to about 0.3 m from its body, and the crowd scenarios' steering."""
    n = 16
    g = np.stack(np.meshgrid(np.arange(n), np.arange(n)), -1).reshape(-1, 2) * spacing
    pos = (g - g.mean(0)).astype(np.float32)
    rng = np.random.default_rng(5)
    a = cs.Agents(n * n, slots=16, seed=5)
    jitter = rng.normal(0, 0.1, pos.shape).astype(np.float32)
    a.add(pos, radius=0.25, max_speed=1.3, max_accel=6.0, target=pos + jitter)
    steering = cs.scenarios.crowd_steering(walls=False)
    return cs.Simulation(None, a, steering, motion=cs.Accel(), slots=cs.scenarios.crowd_slots())


def standing_hash(sim) -> str:
    h = hashlib.sha256()
    for arr in (sim.agents.position, sim.agents.velocity, sim.danger, sim.speed):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("spacing", sorted(STANDING))
def test_a_packed_crowd_standing_at_its_goals_matches_the_pinned_hash(spacing, threads):
    sim = standing_crowd(spacing)
    with cs.threads(threads):
        sim.step(1 / 30, steps=40)
    assert standing_hash(sim) == STANDING[spacing]
