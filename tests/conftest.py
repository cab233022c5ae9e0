"""Shared pytest setup: headless matplotlib and hypothesis profiles."""

import os

import matplotlib
import pytest
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# CI runs derandomized so that a red build is reproducible; locally examples vary.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


CROWD_2026_11 = {
    "horizon": 2.05,
    "commit": 0.02,
    "commit_danger": 0.0,
    "turn_steps": 4,
    "turn_margin": 0.03,
    "return_margin": 0.6,
    "return_step": 0.18,
    "retreat_speed": 0.4,
    "inertia": 0.35,
    "side_bias": 0.02,
    "smoothness": 0.3,
    "unstick": True,
    "jam_horizon": 0.6,
    "jam_oncomers": 3,
    "squeeze": 0.8,
    "past_target": True,
}
"""``cs.scenarios.CROWD`` before the search that added ``speed_exponent`` to it
(docs/crowd.md, "A search with the speed exponent")."""


@pytest.fixture
def crowd_2026_11(monkeypatch):
    """``cs.scenarios.CROWD`` set to :data:`CROWD_2026_11` for the test. A test that replays
    one seed's trace (an agent stranded at a spot, found under that default) keeps the
    trajectories it was written for; any other set of options moves them."""
    import types

    import contextsteer as cs

    monkeypatch.setattr(cs.scenarios, "CROWD", types.MappingProxyType(dict(CROWD_2026_11)))
