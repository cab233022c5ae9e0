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
