"""Shared pytest setup: headless matplotlib and hypothesis profiles."""

import os

import matplotlib
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
