"""benchmarks/scenes.py builds the SCENES.md scenes exactly (formulas, not timings)."""

import math

import numpy as np
import pytest

from bench_modules import load

scenes = load("scenes", "bench_scenes")


@pytest.fixture(scope="module")
def track():
    return scenes.track_scene(1000, 50.0)


def test_shapes_and_dtypes(track):
    assert track.name == "track-1000-50"
    assert track.walls.shape == (1000, 4) and track.walls.dtype == np.float32
    assert track.positions.shape == (10_000, 2) and track.positions.dtype == np.float32
    assert track.slot_dirs.shape == (16, 2)
    assert track.origins.shape == (160_000, 2) and track.directions.shape == (160_000, 2)
    assert track.max_dist == 50.0


def test_walls_hand_computed(track):
    w = track.walls
    # Outer ellipse a=100, b=60 in 500 segments: P_0 = (100, 0),
    # P_1 = (100 cos(2π/500), 60 sin(2π/500)) = (99.992104, 0.753962).
    np.testing.assert_allclose(w[0], [100.0, 0.0, 99.992104, 0.753962], atol=1e-5)
    # The last outer segment closes the ring back to P_0.
    np.testing.assert_allclose(w[499, 2:], [100.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(w[499, :2], [99.992104, -0.753962], atol=1e-5)
    # Inner ellipse a=80, b=40 starts at segment 500; P_125 is at a quarter turn.
    np.testing.assert_allclose(w[500, :2], [80.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(w[625, :2], [0.0, 40.0], atol=1e-5)
    np.testing.assert_allclose(w[250, :2], [-100.0, 0.0], atol=1e-5)
    # Segments chain: each ends where the next starts.
    np.testing.assert_array_equal(w[:499, 2:], w[1:500, :2])


def test_origins_hand_computed(track):
    # i = 0: θ = π/10000, s = 0.1 + 0.8 · 0.6180339887 = 0.5944271910,
    # o = (91.888540 cos θ, 51.888544 sin θ) = (91.888539, 0.016301).
    np.testing.assert_allclose(track.positions[0], [91.888539, 0.0163013], atol=1e-5)
    # i = 1234: frac(1235 · 0.6180339887) = 0.2719761, s = 0.3175809,
    # θ = 2π · 1234.5 / 10000 = 0.7756636 rad → (61.651567, 32.454795).
    np.testing.assert_allclose(track.positions[1234], [61.651567, 32.454795], atol=1e-4)
    # Strictly inside the track: outside the inner ellipse, inside the outer one.
    x, y = track.positions.astype(np.float64).T
    assert np.all((x / 80) ** 2 + (y / 40) ** 2 > 1)
    assert np.all((x / 100) ** 2 + (y / 60) ** 2 < 1)


def test_rays_expand_origins_by_directions(track):
    # Ray r = i·16 + j runs from o_i along φ_j = 2πj/16.
    i, j = 777, 5
    r = i * 16 + j
    np.testing.assert_array_equal(track.origins[r], track.positions[i])
    np.testing.assert_allclose(
        track.directions[r],
        [math.cos(2 * math.pi * 5 / 16), math.sin(2 * math.pi * 5 / 16)],
        atol=1e-7,
    )
    np.testing.assert_allclose(np.hypot(*track.directions.T), 1.0, atol=1e-6)
    np.testing.assert_array_equal(track.slot_dirs[0], [1.0, 0.0])


def test_hit_checksum_on_a_subset(track):
    # Every 100th origin's rays against every wall (exact float64 brute force): the full
    # scene has 142,674 hits; this 1% subset is a regression value for the builder.
    rays = (np.arange(0, 10_000, 100)[:, None] * 16 + np.arange(16)).ravel()
    a = track.walls[:, :2].astype(np.float64)
    e = track.walls[:, 2:].astype(np.float64) - a
    o = track.origins[rays].astype(np.float64)
    d = 50.0 * track.directions[rays].astype(np.float64)
    w = a[None] - o[:, None]
    den = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[..., 0] * e[None, :, 1] - w[..., 1] * e[None, :, 0]) / den
        u = (w[..., 0] * d[:, None, 1] - w[..., 1] * d[:, None, 0]) / den
    ok = (den != 0) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    frac = np.where(ok, t, np.inf).min(axis=1)
    hit = np.isfinite(frac)
    assert hit.sum() == 1423  # 142,674 / 160,000 = 0.8917 on the full scene
    assert frac[hit].sum() == pytest.approx(463.09482, abs=1e-4)


def test_track_walls_rejects_odd_counts():
    with pytest.raises(ValueError, match="even"):
        scenes.track_walls(999)


def test_crowd_scene_scales_the_track():
    c = scenes.crowd_track_scene(400)
    k = math.sqrt(400 / 100)
    assert c.scale == k == 2.0
    assert c.walls.shape == (1000, 4)
    np.testing.assert_allclose(c.walls[0, :2], [200.0, 0.0])
    np.testing.assert_allclose(c.walls[500, :2], [160.0, 0.0])
    base = scenes.track_origins(400)
    np.testing.assert_allclose(c.positions, 2.0 * base, rtol=1e-6)
    np.testing.assert_allclose(np.hypot(*c.preferred.T), 1.0, atol=1e-6)
    # Agent 0 sits near +x: even agents go counter-clockwise (+y), odd ones clockwise.
    assert c.preferred[0, 1] > 0.99
    cross = c.positions[:, 0] * c.preferred[:, 1] - c.positions[:, 1] * c.preferred[:, 0]
    assert np.all(cross[0::2] > 0) and np.all(cross[1::2] < 0)
    assert (c.radius, c.max_speed, c.dt, c.steps) == (1.5, 2.0, 0.25, 100)


def test_agent_count_reads_sizes_as_written():
    assert scenes.agent_counts("1k,10k,100k,1M") == [1_000, 10_000, 100_000, 1_000_000]
    assert scenes.agent_counts("1000, 2.5K,1_000") == [1_000, 2_500, 1_000]
    for bad in ["", "k", "0", "-1k", "1.5", "10x", "nan", "infk", "1e400"]:
        with pytest.raises(ValueError, match="positive whole number of agents"):
            scenes.agent_count(bad)


def test_raycast_scene_names_parse_or_say_what_was_expected():
    bench_raycast = load("bench_raycast")
    assert bench_raycast.parse_scene("10000-50") == (10_000, 50.0)
    assert bench_raycast.parse_scene(" 1k-10 ") == (1_000, 10.0)
    for bad in ["10000", "10000-", "1001-50", "0-50", "10k-0", "10k--5", "10k-nan", "x-50"]:
        with pytest.raises(ValueError, match="M an even number of segments"):
            bench_raycast.parse_scene(bad)
