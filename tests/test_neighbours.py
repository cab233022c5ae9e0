"""Neighbour queries (uniform grid) against a brute-force oracle."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import contextsteer as cs
import reference_agents as ref

# Coordinates on a coarse lattice produce many exact distance ties; floats the rest.
coords = st.one_of(
    st.integers(-6, 6).map(float),
    st.floats(-50, 50, allow_nan=False, width=32),
)


@given(
    pos=hnp.arrays(np.float32, st.tuples(st.integers(0, 40), st.just(2)), elements=coords),
    radius=st.one_of(st.sampled_from([0.0, 1.0, 2.0, 5.0]), st.floats(0, 30, width=32)),
    max_n=st.integers(0, 12),
    data=st.data(),
)
def test_matches_brute_force(pos, radius, max_n, data):
    alive = data.draw(hnp.arrays(bool, len(pos)))
    got = cs.neighbours(pos, radius, max_n, alive=alive)
    idx, counts = ref.neighbors(pos, radius, max_n, alive)
    np.testing.assert_array_equal(got.counts, counts)
    np.testing.assert_array_equal(got.indices, idx)


def test_all_alive_default_and_ordering_example():
    pos = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0.5, 0.5]], np.float32)
    got = cs.neighbours(pos, 1.0, 4)
    # agent 0: 4 at d²=0.5, then 1, 2, 3 tied at d²=1 → by index
    assert got.indices[0].tolist() == [4, 1, 2, 3]
    idx, counts = ref.neighbors(pos, 1.0, 4)
    np.testing.assert_array_equal(got.indices, idx)


def test_sparse_crowd_over_a_huge_area_and_coincident_points():
    rng = np.random.default_rng(1)
    pos = rng.uniform(-1e5, 1e5, (300, 2)).astype(np.float32)
    pos[10:20] = pos[5]  # coincident agents are neighbours at distance 0
    got = cs.neighbours(pos, 3.0, 16)
    idx, counts = ref.neighbors(pos, 3.0, 16)
    np.testing.assert_array_equal(got.indices, idx)
    assert got.counts[5] == 10


@pytest.mark.parametrize(
    "far", [[[1e6, 1e6]], [[-1e6, 3.0], [20.0, -2e6]], [[7e5, 7e5], [7e5 + 1, 7e5]]]
)
def test_a_crowd_with_agents_far_away_matches_brute_force(far):
    # One agent 1e6 m away put the crowd in one grid cell: each query read all of it
    # (200k points: 62 s; fuzz round 19). The grid keeps only its occupied columns and
    # rows then (tests/cpp/test_neighbours.cpp checks that it does); the answers stay.
    rng = np.random.default_rng(3)
    pos = np.concatenate([rng.uniform(0, 40, (600, 2)), far]).astype(np.float32)
    for radius in (2.0, 0.7):
        got = cs.neighbours(pos, radius, 16)
        idx, counts = ref.neighbors(pos, radius, 16)
        np.testing.assert_array_equal(got.counts, counts)
        np.testing.assert_array_equal(got.indices, idx)


def test_dense_crowd_truncates_to_the_nearest():
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 10, (400, 2)).astype(np.float32)
    got = cs.neighbours(pos, 2.0, 5)
    idx, counts = ref.neighbors(pos, 2.0, 5)
    np.testing.assert_array_equal(got.indices, idx)
    assert (got.counts == 5).all()


def test_same_result_for_any_thread_count():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 100, (5000, 2)).astype(np.float32)
    with cs.threads(1):
        a = cs.neighbours(pos, 3.0, 8)
    with cs.threads(2):
        b = cs.neighbours(pos, 3.0, 8)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_bad_inputs():
    with pytest.raises(ValueError, match="max_neighbours"):
        cs.neighbours(np.zeros((3, 2)), 1.0, 257)
    with pytest.raises(ValueError, match="radius"):
        cs.neighbours(np.zeros((3, 2)), -1.0, 2)
    with pytest.raises(ValueError, match="finite"):
        cs.neighbours([[0, 0], [np.nan, 0]], 1.0, 2)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        cs.neighbours(np.zeros((3, 3)), 1.0, 2)
    with pytest.raises(ValueError, match="alive"):
        cs.neighbours(np.zeros((3, 2)), 1.0, 2, alive=[True])
    with pytest.raises(TypeError):
        cs.neighbours(np.zeros((3, 2)), 1.0, 2.0)
    empty = cs.neighbours(np.zeros((0, 2)), 1.0, 3)
    assert empty.indices.shape == (0, 3)


def test_american_spellings_are_deprecated_aliases_that_warn():
    """The API says neighbours; the old spellings still work and warn."""
    pos = np.float32([[0, 0], [1, 0], [5, 0]])
    new = cs.neighbours(pos, 2.0, 2)
    with pytest.warns(DeprecationWarning, match="neighbours"):
        old = cs.neighbors(pos, 2.0, max_neighbors=2)
    np.testing.assert_array_equal(old.indices, new.indices)
    with pytest.warns(DeprecationWarning, match="Neighbours"):
        assert cs.Neighbors is cs.Neighbours
    with pytest.warns(DeprecationWarning, match="max_neighbours"):
        st = cs.Steering([cs.Seek()], max_neighbors=4)
    assert st.max_neighbours == 4
    with pytest.warns(DeprecationWarning, match="max_neighbours"):
        assert st.max_neighbors == 4
    a = cs.Agents(3)
    a.add(pos)
    with pytest.warns(DeprecationWarning, match="max_neighbours"):
        old_maps = cs.Separation(radius=2.0, groups="all").evaluate(a, 8, max_neighbors=1)
    new_maps = cs.Separation(radius=2.0, groups="all").evaluate(a, 8, max_neighbours=1)
    np.testing.assert_array_equal(old_maps.danger, new_maps.danger)
    np.testing.assert_array_equal(old_maps.interest, new_maps.interest)
    with pytest.warns(DeprecationWarning, match="needs_neighbours"):
        assert cs.Separation().needs_neighbors is cs.Separation().needs_neighbours


def test_agents_beside_a_dense_cluster_match_brute_force():
    # A cluster of 300 in a 1 m disc and 60 agents around it out to 3 m: the cluster's
    # cell is crowded, so its agents' queries ask half the radius first, and for those
    # beside the cluster that half disc holds any number of agents, max_n - 1 included,
    # where the whole radius must be asked (max_n 20, 8 and 12 below).
    rng = np.random.default_rng(4)
    a = rng.uniform(0, 2 * np.pi, 360)
    r = np.r_[np.sqrt(rng.uniform(0, 1, 300)), rng.uniform(1, 3, 60)]
    pos = (r[:, None] * np.c_[np.cos(a), np.sin(a)]).astype(np.float32)
    for radius, max_n in [(4.0, 10), (4.0, 20), (4.0, 30), (3.0, 8), (3.0, 12)]:
        got = cs.neighbours(pos, radius, max_n)
        idx, counts = ref.neighbors(pos, radius, max_n)
        np.testing.assert_array_equal(got.counts, counts)
        np.testing.assert_array_equal(got.indices, idx)


@pytest.mark.parametrize("lattice", [False, True])
def test_very_dense_crowd_matches_brute_force(lattice):
    # 20 agents a square metre: a cell of the query radius holds ~80, enough that the
    # query first asks half the radius (and answers from it when that finds max_n). On a
    # 0.25 m lattice many distances tie exactly, and ties go by index.
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 5.5, (600, 2))
    if lattice:
        pos = np.round(pos * 4) / 4
    pos = pos.astype(np.float32)
    for radius, max_n in [(2.0, 5), (2.0, 10), (1.5, 4), (1.0, 2), (0.3, 8)]:
        got = cs.neighbours(pos, radius, max_n)
        idx, counts = ref.neighbors(pos, radius, max_n)
        np.testing.assert_array_equal(got.counts, counts)
        np.testing.assert_array_equal(got.indices, idx)


def test_dead_rows_may_hold_nan_when_alive_is_given():
    # The README's idiom cs.neighbours(agents.position, ..., alive=agents.alive) failed
    # when dead agents were marked with NaN, which the simulation, the metrics and
    # pickling accept (fuzz round 11). Oracle: the same query with the dead rows moved
    # far away; an alive NaN is still refused.
    pos = np.float32([[0, 0], [np.nan, np.nan], [1, 0], [np.inf, 0]])
    alive = np.array([True, False, True, False])
    idx, cnt = cs.neighbours(pos, 2.0, 4, alive=alive)
    far = pos.copy()
    far[~alive] = 1e6
    idx2, cnt2 = cs.neighbours(far, 2.0, 4, alive=alive)
    np.testing.assert_array_equal(idx, idx2)
    np.testing.assert_array_equal(cnt, cnt2)
    assert cnt.tolist() == [1, 0, 1, 0]
    with pytest.raises(ValueError, match=r"where alive, got nan at index \(1, 0\)"):
        cs.neighbours(pos, 2.0, 4, alive=np.ones(4, bool))
    with pytest.raises(ValueError, match="positions"):
        cs.neighbours(pos, 2.0, 4)
