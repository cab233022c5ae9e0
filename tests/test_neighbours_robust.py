"""Neighbour queries on degenerate crowds: many agents at one point (a grid cell read by
position), clusters, and a call long enough to be interrupted with Ctrl-C."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import contextsteer as cs
import reference_agents as ref
from ctrl_c import sigint_during


def _check(pos, radius, max_n, alive=None):
    got = cs.neighbours(pos, radius, max_n, alive=alive)
    idx, counts = ref.neighbors_vectorised(pos, radius, max_n, alive)
    np.testing.assert_array_equal(got.counts, counts)
    np.testing.assert_array_equal(got.indices, idx)


@given(
    pos=hnp.arrays(
        np.float32,
        st.tuples(st.integers(0, 30), st.just(2)),
        elements=st.one_of(st.integers(-3, 3).map(float), st.floats(-5, 5, width=32)),
    ),
    repeats=st.integers(1, 5),
    radius=st.sampled_from([0.0, 0.5, 1.0, 4.0]),
    max_n=st.integers(0, 20),
)
def test_the_vectorised_oracle_is_the_plain_one(pos, repeats, radius, max_n):
    pos = np.repeat(pos, repeats, axis=0)  # coincident points too
    got = ref.neighbors_vectorised(pos, radius, max_n)
    want = ref.neighbors(pos, radius, max_n)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@st.composite
def crowds(draw):
    """Up to four sites, the first with more than 256 agents on it (a grid cell that full
    with repeated positions is read by position), the others with any number; agents
    scattered round the sites (on a lattice of 1/8 m, so distances tie, or anywhere within
    a metre) and over the whole area; in shuffled order, so a site's agents have indices
    all over the range."""
    sites = draw(hnp.arrays(np.float32, (draw(st.integers(1, 4)), 2), elements=st.integers(-4, 4)))
    counts = [draw(st.integers(257, 400))] + [draw(st.integers(0, 300)) for _ in sites[1:]]
    parts = [np.repeat(sites[k : k + 1], c, axis=0) for k, c in enumerate(counts)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    near = sites[rng.integers(0, len(sites), draw(st.integers(0, 200)))]
    lattice = np.round(rng.normal(0, 0.5, near.shape) * 8) / 8
    parts.append(
        near + np.where(rng.random((len(near), 1)) < 0.5, lattice, rng.normal(0, 0.5, near.shape))
    )
    parts.append(rng.uniform(-6, 6, (draw(st.integers(0, 100)), 2)))
    pos = np.concatenate(parts).astype(np.float32)
    return pos[rng.permutation(len(pos))]


@settings(max_examples=40)
@given(
    pos=crowds(),
    radius=st.sampled_from([0.0, 0.125, 0.5, 1.0, 3.0, 20.0]),
    max_n=st.sampled_from([1, 2, 5, 16, 40, 256]),
    dead=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 1000),
)
def test_crowds_with_coincident_agents_match_brute_force(pos, radius, max_n, dead, seed):
    alive = np.random.default_rng(seed).random(len(pos)) >= dead
    _check(pos, radius, max_n, alive if dead else None)


def test_agents_beside_a_large_coincident_group_match_brute_force():
    # 2,000 agents at one point and 300 around it out to 2 m: the neighbours of those
    # around it are the group's lowest indices (at one distance), then the others.
    rng = np.random.default_rng(7)
    a = rng.uniform(0, 2 * np.pi, 300)
    r = rng.uniform(0.01, 2, 300)
    pos = np.r_[np.zeros((2000, 2)), r[:, None] * np.c_[np.cos(a), np.sin(a)]]
    pos = pos[rng.permutation(len(pos))].astype(np.float32)
    for radius, max_n in [(0.5, 8), (1.0, 16), (2.5, 64), (3.0, 256)]:
        _check(pos, radius, max_n)


def test_a_hundred_thousand_coincident_agents():
    # Each row: the max_n lowest other indices, all at distance 0 (the query read every one
    # of the 100,000 agents for each: 17 s for the table; now each reads at most 18).
    n, max_n = 100_000, 16
    got = cs.neighbours(np.full((n, 2), 2.5, np.float32), 1.0, max_n)
    i = np.arange(n)[:, None]
    k = np.arange(max_n)[None, :]
    np.testing.assert_array_equal(got.indices, np.where(k < i, k, k + 1))
    assert (got.counts == max_n).all()
    # Every other one dead: the lowest other alive (even) indices.
    alive = np.arange(n) % 2 == 0
    got = cs.neighbours(np.full((n, 2), 2.5, np.float32), 1.0, max_n, alive=alive)
    even = 2 * np.where(k < i // 2, k, k + 1)
    np.testing.assert_array_equal(got.indices[alive], even[alive])
    assert (got.counts[~alive] == 0).all() and (got.indices[~alive] == -1).all()


def _neighbours_call(pos):
    cs.neighbours(pos, 1.0, 16)


def _evaluate_call(pos):
    agents = cs.Agents(len(pos))
    agents.add(pos, radius=0.3)
    cs.AgentDanger(radius=1.0).evaluate(agents, 8, max_neighbours=16)


@pytest.mark.parametrize("call", [_neighbours_call, _evaluate_call], ids=["neighbours", "evaluate"])
def test_ctrl_c_interrupts_a_long_neighbours_call(call):
    """A SIGINT arriving while one neighbours call (or a behaviour's evaluate, which fills
    the same table) works through a crowd packed into one grid cell at distinct positions
    (every query reads every agent: n² distance tests, which grouping by position cannot
    save) raises KeyboardInterrupt from inside that call, between two slices of rows, long
    before the call could have finished; the next call answers whole."""

    def crowd(n):
        return np.random.default_rng(0).uniform(0, 1e-3, (n, 2)).astype(np.float32)

    small = crowd(4000)
    call(small)
    t0 = time.perf_counter()
    call(small)
    per_pair = (time.perf_counter() - t0) / 4000**2
    # A call of about 40x the interrupt's delay (at most 400,000 points).
    whole = 4.0
    n = int(min(400_000, max(20_000, np.sqrt(whole / per_pair))))
    whole = per_pair * n * n
    pos = crowd(n)
    start = time.perf_counter()
    handled = sigint_during(lambda: call(pos))
    assert handled and handled[0] - start < 0.5 * whole, (handled, whole)
    _check(crowd(1000), 1.0, 16)
