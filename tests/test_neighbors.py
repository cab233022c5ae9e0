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
    got = cs.neighbors(pos, radius, max_n, alive=alive)
    idx, counts = ref.neighbors(pos, radius, max_n, alive)
    np.testing.assert_array_equal(got.counts, counts)
    np.testing.assert_array_equal(got.indices, idx)


def test_all_alive_default_and_ordering_example():
    pos = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0.5, 0.5]], np.float32)
    got = cs.neighbors(pos, 1.0, 4)
    # agent 0: 4 at d²=0.5, then 1, 2, 3 tied at d²=1 → by index
    assert got.indices[0].tolist() == [4, 1, 2, 3]
    idx, counts = ref.neighbors(pos, 1.0, 4)
    np.testing.assert_array_equal(got.indices, idx)


def test_sparse_crowd_over_a_huge_area_and_coincident_points():
    rng = np.random.default_rng(1)
    pos = rng.uniform(-1e5, 1e5, (300, 2)).astype(np.float32)
    pos[10:20] = pos[5]  # coincident agents are neighbours at distance 0
    got = cs.neighbors(pos, 3.0, 16)
    idx, counts = ref.neighbors(pos, 3.0, 16)
    np.testing.assert_array_equal(got.indices, idx)
    assert got.counts[5] == 10


def test_dense_crowd_truncates_to_the_nearest():
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 10, (400, 2)).astype(np.float32)
    got = cs.neighbors(pos, 2.0, 5)
    idx, counts = ref.neighbors(pos, 2.0, 5)
    np.testing.assert_array_equal(got.indices, idx)
    assert (got.counts == 5).all()


def test_same_result_for_any_thread_count():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 100, (5000, 2)).astype(np.float32)
    with cs.threads(1):
        a = cs.neighbors(pos, 3.0, 8)
    with cs.threads(2):
        b = cs.neighbors(pos, 3.0, 8)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_bad_inputs():
    with pytest.raises(ValueError, match="max_neighbors"):
        cs.neighbors(np.zeros((3, 2)), 1.0, 257)
    with pytest.raises(ValueError, match="radius"):
        cs.neighbors(np.zeros((3, 2)), -1.0, 2)
    with pytest.raises(ValueError, match="finite"):
        cs.neighbors([[0, 0], [np.nan, 0]], 1.0, 2)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        cs.neighbors(np.zeros((3, 3)), 1.0, 2)
    with pytest.raises(ValueError, match="alive"):
        cs.neighbors(np.zeros((3, 2)), 1.0, 2, alive=[True])
    with pytest.raises(TypeError):
        cs.neighbors(np.zeros((3, 2)), 1.0, 2.0)
    empty = cs.neighbors(np.zeros((0, 2)), 1.0, 3)
    assert empty.indices.shape == (0, 3)
