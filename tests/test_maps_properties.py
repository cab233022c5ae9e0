"""Property tests of the context-map kernels against the NumPy oracle (tests/reference.py)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import contextsteer as cs
from no_avx2 import without_avx2
from reference import (
    ref_blend,
    ref_choose,
    ref_combine,
    ref_dot_map,
    ref_resolve,
    ref_slot_directions,
    ref_spread,
)

# Values: many exact zeros (masked slots), no pathological tiny magnitudes.
value = st.one_of(
    st.just(0.0),
    st.floats(0.015625, 1.5, width=32),
    st.floats(-1.0, -0.015625, width=32),
    st.sampled_from([0.25, 0.5, 1.0]),
)
agents = st.one_of(st.just(0), st.just(1), st.integers(2, 12))
slots_k = st.one_of(st.integers(3, 24), st.integers(25, 256))


@st.composite
def maps(draw, count=1, elements=value):
    n = draw(agents)
    k = draw(slots_k)
    out = [draw(hnp.arrays(np.float32, (n, k), elements=elements)) for _ in range(count)]
    return out if count > 1 else out[0]


@st.composite
def generic_maps(draw):
    """Continuous random values with random masked runs: no ties, for symmetry tests."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 8))
    k = draw(slots_k)
    rng = np.random.default_rng(seed)
    v = rng.uniform(-0.2, 1.0, (n, k)).astype(np.float32)
    v[rng.random((n, k)) < draw(st.sampled_from([0.0, 0.3, 0.7]))] = 0.0
    return v


@given(k=st.integers(3, 256), offset=st.floats(-10, 10))
def test_slot_directions_vs_oracle(k, offset):
    d = cs.slot_directions(k, offset)
    assert d.dtype == np.float32 and d.shape == (k, 2)
    np.testing.assert_allclose(d, ref_slot_directions(k, offset), atol=1e-6)
    s = cs.SlotSet(k, offset)
    np.testing.assert_array_equal(s.directions, d)
    assert s.regular
    np.testing.assert_array_equal(
        s.neighbours, np.stack([(np.arange(k) - 1) % k, (np.arange(k) + 1) % k], 1)
    )


@pytest.mark.parametrize("k", [4, 8, 12, 16, 32, 64])
def test_the_quarter_turn_slots_are_the_axes_exactly(k):
    """cos(pi/2) is 6e-17: the quarter-turn slots leaned off their axes, and a thin ray
    along one missed a wall seen end-on that slot 0 met in the same scene turned a quarter
    turn (fuzz round 24, a metamorphic tester)."""
    d = cs.slot_directions(k)
    axes = d[:: k // 4]
    np.testing.assert_array_equal(axes, np.float32([[1, 0], [0, 1], [-1, 0], [0, -1]]))
    world = cs.World()
    world.add_segments([[2.0, 0.0, 3.0, 0.0]])  # end-on ahead of slot 0
    hits = []
    for quarter in range(4):
        turned = cs.World()
        c, s_ = [(1, 0), (0, 1), (-1, 0), (0, -1)][quarter]
        turned.add_segments([[2.0 * c, 2.0 * s_, 3.0 * c, 3.0 * s_]])
        hits.append(cs.slot_raycast(turned, [[0.0, 0.0]], cs.SlotSet(k), 5.0)[0, quarter * k // 4])
    assert hits == [2.0] * 4
    # Other slots are cos and sin rounded to float32, as before.
    np.testing.assert_allclose(d, ref_slot_directions(k, 0.0), rtol=0, atol=1e-7)


@given(
    k=st.integers(3, 64),
    offset=st.floats(-(2.0**60), 2.0**60, exclude_min=True, exclude_max=True),
    seed=st.integers(0, 99),
)
def test_a_large_offset_keeps_a_regular_ring(k, offset, seed):
    # At offset 1e17 every slot had the same direction (the slot steps were lost to the
    # offset's rounding), and the interpolating choose modes gave NaN. Whole turns add
    # nothing: the ring is the one of the offset's remainder (math.fmod is exact).
    s = cs.SlotSet(k, offset)
    d = s.directions
    np.testing.assert_allclose(d, ref_slot_directions(k, math.fmod(offset, 2 * math.pi)), atol=1e-6)
    np.testing.assert_allclose(s.gaps, 2 * np.pi / k, atol=1e-5)
    assert s.regular
    v = np.random.default_rng(seed).random((3, k)).astype(np.float32)
    for mode in ("vector_sum", "subslot", "subslot_linear", "weighted_neighbours", "argmax"):
        direction, strength = cs.choose(v, s, mode)[:2]
        assert np.isfinite(direction).all() and np.isfinite(strength).all(), mode


@given(
    n=agents,
    k=slots_k,
    shape=st.sampled_from(cs.DOT_SHAPES),
    magnitude=st.booleans(),
    data=st.data(),
)
def test_dot_map_vs_oracle(n, k, shape, magnitude, data):
    vectors = data.draw(hnp.arrays(np.float32, (n, 2), elements=st.floats(-100, 100, width=32)))
    per_agent = data.draw(st.booleans())
    weight = (
        data.draw(hnp.arrays(np.float32, (n,), elements=st.floats(0, 2, width=32)))
        if per_agent
        else data.draw(st.floats(-2, 2))
    )
    slots = cs.SlotSet(k)
    got = cs.dot_map(slots, vectors, shape=shape, weight=weight, magnitude=magnitude)
    want = ref_dot_map(slots.directions, vectors, shape, weight, magnitude)
    scale = 1 + (np.hypot(vectors[:, 0], vectors[:, 1])[:, None] if magnitude else 0)
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= 4e-6 * scale * 2 + 1e-5 * np.abs(want))


@given(data=st.data(), mode=st.sampled_from(cs.COMBINE_MODES), b=st.integers(1, 4))
def test_combine_vs_oracle(data, mode, b):
    stack = np.stack(data.draw(maps(count=b))) if b > 1 else data.draw(maps())[None]
    weights = None
    if mode == "weighted_sum":
        weights = data.draw(hnp.arrays(np.float32, (b,), elements=st.floats(-2, 2, width=32)))
    got = cs.combine(stack, mode, weights)
    np.testing.assert_array_equal(got, ref_combine(stack, mode, weights))  # same float32 ops
    listed = cs.combine(list(stack), mode, weights)
    np.testing.assert_array_equal(listed, got)


@given(
    data=st.data(),
    mode=st.sampled_from(cs.RESOLVE_MODES),
    threshold=st.sampled_from([0.0, 0.5]),
    epsilon=st.sampled_from([0.0, 0.1]),
)
def test_resolve_vs_oracle(data, mode, threshold, epsilon):
    interest, danger = data.draw(maps(count=2))
    slots = cs.SlotSet(interest.shape[1])
    got = cs.resolve(interest, danger, mode, threshold=threshold, epsilon=epsilon, directions=slots)
    want = ref_resolve(interest, danger, mode, threshold, epsilon, slots.directions)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=1e-6)


@given(
    values=maps(),
    mode=st.sampled_from(cs.CHOOSE_MODES),
    width=st.integers(0, 4),
    contiguous=st.booleans(),
)
def test_choose_vs_oracle(values, mode, width, contiguous):
    slots = cs.SlotSet(values.shape[1])
    c = cs.choose(values, slots, mode, width=width, contiguous=contiguous)
    d, s, i = ref_choose(values, slots.directions, mode, width, contiguous)
    assert c.slot.dtype == np.int32 and c.direction.dtype == np.float32
    np.testing.assert_array_equal(c.slot, i)
    np.testing.assert_allclose(c.direction, d, atol=1e-4)
    np.testing.assert_allclose(c.strength, s, atol=1e-5)
    assert np.all((c.strength >= 0) & (c.strength <= 1))
    none = c.slot < 0
    assert np.all(c.direction[none] == 0) and np.all(c.strength[none] == 0)
    np.testing.assert_allclose(np.hypot(*c.direction[~none].T), 1.0, atol=1e-5)


@given(
    values=generic_maps(),
    mode=st.sampled_from(
        ["vector_sum", "weighted_neighbours", "subslot", "subslot_linear", "argmax"]
    ),
)
def test_choose_never_points_into_a_non_positive_slot(values, mode):
    slots = cs.SlotSet(values.shape[1])
    c = cs.choose(values, slots, mode, width=3)
    for i in np.flatnonzero(c.slot >= 0):
        nearest = int(np.argmax(slots.directions @ c.direction[i]))
        assert values[i, nearest] > 0


@given(values=generic_maps(), mode=st.sampled_from(cs.CHOOSE_MODES), contiguous=st.booleans())
def test_choose_rotation_equivariant(values, mode, contiguous):
    if mode in ("argmax_always", "vector_sum_signed"):  # any sign: tied maxima pick the first
        values = values[(values == values.max(axis=1, keepdims=True)).sum(axis=1) == 1]
    k = values.shape[1]
    slots = cs.SlotSet(k)
    a = cs.choose(values, slots, mode, contiguous=contiguous)
    b = cs.choose(np.roll(values, 1, axis=1), slots, mode, contiguous=contiguous)
    np.testing.assert_array_equal(b.slot, np.where(a.slot < 0, -1, (a.slot + 1) % k))
    t = 2 * np.pi / k
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    np.testing.assert_allclose(b.direction, a.direction @ rot.T, atol=1e-4)
    np.testing.assert_allclose(b.strength, a.strength, atol=1e-5)


@given(data=st.data(), mode=st.sampled_from(cs.RESOLVE_MODES))
def test_resolve_rotation_equivariant(data, mode):
    interest, danger = data.draw(maps(count=2))
    slots = cs.SlotSet(interest.shape[1])
    a = cs.resolve(interest, danger, mode, directions=slots)
    b = cs.resolve(np.roll(interest, 1, 1), np.roll(danger, 1, 1), mode, directions=slots)
    np.testing.assert_allclose(b, np.roll(a, 1, 1), atol=1e-5)


@given(data=st.data(), mode=st.sampled_from(cs.SPREAD_MODES))
def test_spread_vs_oracle_and_rotation(data, mode):
    values = data.draw(maps())
    k = values.shape[1]
    length = data.draw(st.sampled_from([1, 3, 5])) if k >= 5 else data.draw(st.sampled_from([1, 3]))
    kernel = data.draw(hnp.arrays(np.float32, (length,), elements=st.floats(0, 1, width=32)))
    got = cs.spread(values, kernel, mode)
    np.testing.assert_allclose(got, ref_spread(values, kernel, mode), atol=1e-5)
    np.testing.assert_allclose(
        cs.spread(np.roll(values, 1, 1), kernel, mode), np.roll(got, 1, 1), atol=1e-5
    )


@given(data=st.data(), alpha=st.floats(0, 1))
def test_blend_vs_oracle(data, alpha):
    previous, current = data.draw(maps(count=2))
    np.testing.assert_allclose(
        cs.blend(previous, current, alpha), ref_blend(previous, current, alpha), atol=1e-5
    )


@given(values=generic_maps(), mode=st.sampled_from(cs.CHOOSE_MODES), seed=st.integers(0, 1000))
def test_agent_order_does_not_matter(values, mode, seed):
    perm = np.random.default_rng(seed).permutation(len(values))
    slots = cs.SlotSet(values.shape[1])
    a = cs.choose(values, slots, mode)
    b = cs.choose(values[perm], slots, mode)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x[perm], y)
    danger = np.roll(values, 3, axis=1)
    for m in cs.RESOLVE_MODES:
        r = cs.resolve(values, danger, m, directions=slots)
        np.testing.assert_array_equal(
            r[perm], cs.resolve(values[perm], danger[perm], m, directions=slots)
        )


@pytest.mark.parametrize("k", [3, 8, 16, 33])
def test_thread_count_invariance(k):
    rng = np.random.default_rng(k)
    n = 20000
    stack = rng.uniform(-0.2, 1, (3, n, k)).astype(np.float32)
    danger = (rng.random((n, k)) < 0.2).astype(np.float32)
    slots = cs.SlotSet(k)
    vectors = rng.normal(size=(n, 2)).astype(np.float32)

    def run():
        out = [
            cs.dot_map(slots, vectors),
            cs.combine(stack, "max"),
            cs.combine(stack, "sum"),
            cs.spread(stack[0], [0.25, 0.5, 0.25]),
            cs.blend(stack[0], stack[1], 0.3),
        ]
        interest = cs.combine(stack, "max")
        for m in cs.RESOLVE_MODES:
            out.append(cs.resolve(interest, danger, m, directions=slots))
        resolved = out[-5]  # mask
        for m in cs.CHOOSE_MODES:
            out.extend(cs.choose(resolved, slots, m))
            out.extend(cs.choose(resolved, slots, m, contiguous=False))
        return out

    with cs.threads(1):
        one = run()
    with cs.threads(2):
        two = run()
    with cs.threads(3):
        three = run()
    for a, b, c in zip(one, two, three):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("k", [3, 4, 31, 32, 33, 63, 64, 65, 200])
@pytest.mark.parametrize("masked", [0.0, 0.3, 0.7])
def test_choose_fast_and_general_paths_vs_oracle(k, masked):
    # K <= 64 takes the bit-mask path, larger K the general walk: both must match.
    rng = np.random.default_rng(k)
    v = rng.uniform(-0.2, 1.0, (40, k)).astype(np.float32)
    v[rng.random(v.shape) < masked] = 0.0
    slots = cs.SlotSet(k)
    for mode in cs.CHOOSE_MODES:
        for contiguous in (True, False):
            c = cs.choose(v, slots, mode, contiguous=contiguous)
            d, s, i = ref_choose(v, slots.directions, mode, 2, contiguous)
            np.testing.assert_array_equal(c.slot, i)
            np.testing.assert_allclose(c.direction, d, atol=1e-5)
            np.testing.assert_allclose(c.strength, s, atol=1e-6)


@given(
    data=st.data(),
    combine=st.sampled_from(cs.COMBINE_MODES),
    b=st.integers(1, 3),
    resolve=st.sampled_from(cs.RESOLVE_MODES),
    choose=st.sampled_from(cs.CHOOSE_MODES),
    width=st.integers(0, 3),
    contiguous=st.booleans(),
    threshold=st.sampled_from([0.0, 0.5]),
    epsilon=st.sampled_from([0.0, 0.1]),
)
def test_steer_is_the_composed_pipeline(
    data, combine, b, resolve, choose, width, contiguous, threshold, epsilon
):
    *stack, danger = data.draw(maps(count=b + 1))
    stack = np.stack(stack)
    n, k = danger.shape
    weights = None
    if combine == "weighted_sum":
        weights = data.draw(hnp.arrays(np.float32, (b,), elements=st.floats(-2, 2, width=32)))
    slots = cs.SlotSet(k)
    got = cs.steer(
        stack,
        danger,
        slots,
        combine=combine,
        weights=weights,
        resolve=resolve,
        threshold=threshold,
        epsilon=epsilon,
        choose=choose,
        width=width,
        contiguous=contiguous,
    )
    # Bit-identical to the three separate calls.
    resolved = cs.resolve(
        cs.combine(stack, combine, weights),
        danger,
        resolve,
        threshold=threshold,
        epsilon=epsilon,
        directions=slots,
    )
    three = cs.choose(resolved, slots, choose, width=width, contiguous=contiguous)
    for x, y in zip(got, three):
        np.testing.assert_array_equal(x, y)
    # And the composed oracle, wherever the oracle's resolved map is the kernels' one
    # (resolve in double may round differently from float32, which may move a tie).
    want_resolved = ref_resolve(
        ref_combine(stack, combine, weights), danger, resolve, threshold, epsilon, slots.directions
    ).astype(np.float32)
    d, s, i = ref_choose(want_resolved, slots.directions, choose, width, contiguous)
    same = np.all(want_resolved == resolved, axis=1)
    np.testing.assert_array_equal(got.slot[same], i[same])
    np.testing.assert_allclose(got.direction[same], d[same], atol=1e-4)
    np.testing.assert_allclose(got.strength[same], s[same], atol=1e-5)
    np.testing.assert_allclose(want_resolved, resolved, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("k", [3, 8, 16, 33, 300, 5000])
def test_steer_blocks_and_threads(k):
    # Many blocks of rows (and, for K > 4096, rows longer than a block), any thread count.
    rng = np.random.default_rng(k)
    n = 3000 if k < 1000 else 40
    stack = rng.uniform(-0.2, 1, (3, n, k)).astype(np.float32)
    danger = (rng.random((n, k)) < 0.2).astype(np.float32)
    slots = cs.SlotSet(k)
    three = cs.choose(cs.resolve(cs.combine(stack, "sum"), danger, "subtract"), slots)
    for threads in (1, 2, 3):
        with cs.threads(threads):
            got = cs.steer(stack, danger, slots, combine="sum", resolve="subtract")
        for x, y in zip(got, three):
            np.testing.assert_array_equal(x, y)


def _isa_case_outputs():
    out = []
    for k in (8, 12, 16, 32, 64):
        rng = np.random.default_rng(k)
        for masked in (0.0, 0.3, 0.7):
            v = rng.uniform(-0.2, 1.0, (400, k)).astype(np.float32)
            v[rng.random(v.shape) < masked] = 0.0
            v[:100] = rng.choice([0.0, 0.25, 0.5, 1.0], (100, k))  # ties between runs
            a = 2 * np.pi * (np.arange(k) + 0.2 * np.sin(np.arange(k))) / k
            irregular = cs.SlotSet.from_directions(np.stack([np.cos(a), np.sin(a)], 1))
            for slots in (cs.SlotSet(k), irregular):
                c = cs.choose(v, slots, "vector_sum")
                out.append(
                    np.concatenate(
                        [c.direction.view(np.int32).ravel(), c.strength.view(np.int32), c.slot]
                    )
                )
    return np.concatenate(out)


def test_choose_avx2_and_sse2_paths_are_bit_identical(tmp_path):
    # The AVX2 kernel (used when the CPU has it) must give exactly the SSE2 results:
    # run the same cases with AVX2 switched off in a fresh interpreter and compare.
    sse2 = without_avx2(tmp_path, "test_maps_properties", "_isa_case_outputs()")
    np.testing.assert_array_equal(sse2, _isa_case_outputs())


@pytest.mark.parametrize("k", [4, 6, 8, 12, 16, 64])
def test_argmax_across_agents_equals_the_row_at_a_time_path(k):
    # For K % 4 == 0 argmax runs four agents side by side (one per SIMD lane); single rows
    # and the rows after the last full group of four take the one-row path. Both must
    # give the same bits, ties (lowest slot), signed zeros and all-non-positive rows
    # included, and the chosen slot's own direction and clamped value.
    rng = np.random.default_rng(k)
    n = 103
    v = rng.choice(np.array([-1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5], np.float32), (n, k))
    v[::7] = np.minimum(v[::7], 0)  # rows with nothing positive
    v[1::5] = rng.uniform(-0.2, 1.2, (len(v[1::5]), k))  # rows without ties
    slots = cs.SlotSet(k)
    whole = cs.choose(v, slots, "argmax")
    for i in range(n):
        one = cs.choose(v[i : i + 1], slots, "argmax")
        assert one.slot[0] == whole.slot[i]
        np.testing.assert_array_equal(
            one.direction[0].view(np.int32), whole.direction[i].view(np.int32)
        )
        assert one.strength[0].view(np.int32) == whole.strength[i].view(np.int32)
    best = v.max(axis=1)
    want = np.where(best > 0, v.argmax(axis=1), -1)  # lowest index among the maxima
    np.testing.assert_array_equal(whole.slot, want)
    hit = want >= 0
    np.testing.assert_array_equal(whole.direction[hit], slots.directions[want[hit]])
    np.testing.assert_array_equal(whole.strength[hit], np.clip(best[hit], 0, 1))
    assert np.all(whole.direction[~hit] == 0) and np.all(whole.strength[~hit] == 0)
    # cs.steer (fused, the same kernel on blocks of rows) agrees with the separate calls.
    c = cs.steer(v[None], np.zeros_like(v), slots, choose="argmax")
    np.testing.assert_array_equal(c.slot, whole.slot)
    np.testing.assert_array_equal(c.direction, whole.direction)


def _argmax_pipeline_cases(modes=("argmax",)):
    """cs.steer with combine max, resolve mask and each choose mode of ``modes`` (for
    K = 8, 16, 32, 64 with AVX2: argmax the one-pass kernel, every other mode the rows
    combined and masked in registers, then chosen a block at a time; the blocked path
    otherwise), on ties, signed zeros, rows with nothing positive, B = 1..5 and two
    thresholds; NaN and inf inputs with out= arrays (the call raises, the outputs are
    written all the same). Returns every output's bits and, per case, whether the call
    raised."""
    out = []
    for k, name in itertools.product((8, 12, 16, 32, 64), modes):
        # "vector_sum:all": vector_sum over every positive slot (contiguous=False)
        mode, _, every = name.partition(":")
        kw = {"choose": mode, "contiguous": not every}
        rng = np.random.default_rng(k)
        n = 203  # not a multiple of any block
        for b in (1, 2, 3, 4, 5):
            stack = rng.choice(
                np.array([-1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5], np.float32), (b, n, k)
            )
            stack[:, 1::3] = rng.uniform(-0.2, 1.2, (b, len(stack[0, 1::3]), k))
            stack[:, ::11] = np.minimum(stack[:, ::11], 0)
            danger = rng.choice(np.array([0.0, 0.0, 0.3, 1.0], np.float32), (n, k))
            for threshold in (0.0, 0.5):
                c = cs.steer(stack, danger, cs.SlotSet(k), threshold=threshold, **kw)
                out += [c.direction.view(np.int32).ravel(), c.strength.view(np.int32), c.slot]
            for bad in (np.nan, np.inf, np.float32(2.0**60)):
                s2, d2 = stack.copy(), danger.copy()
                s2[b - 1, 5, 3] = bad
                d2[17, k - 1] = bad
                ch = cs.Choice(
                    np.zeros((n, 2), np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32)
                )
                try:
                    cs.steer(s2, d2, cs.SlotSet(k), out=ch, **kw)
                    raised = 0
                except ValueError:
                    raised = 1
                out += [
                    ch.direction.view(np.int32).ravel(),
                    ch.strength.view(np.int32),
                    ch.slot,
                    np.array([raised], np.int32),
                ]
        # cs.choose argmax alone (the AVX2 one-row kernel, else four agents in SSE2 lanes),
        # NaN at the first slot, a later slot, everywhere, next to ties and infinities.
        v = rng.choice(np.array([-1.0, -0.0, 0.0, 0.5, 1.0, np.inf, -np.inf], np.float32), (64, k))
        v[0, 0] = v[1, k // 2] = v[2, k - 1] = np.nan
        v[3] = np.nan
        v[4, ::2] = np.nan
        ch = cs.Choice(
            np.zeros((64, 2), np.float32), np.zeros(64, np.float32), np.zeros(64, np.int32)
        )
        with pytest.raises(ValueError):
            cs.choose(v, cs.SlotSet(k), "argmax", out=ch)
        out += [ch.direction.view(np.int32).ravel(), ch.strength.view(np.int32), ch.slot]
    return np.concatenate(out)


@pytest.mark.parametrize(
    "modes", [("argmax",), (*(m for m in cs.CHOOSE_MODES if m != "argmax"), "vector_sum:all")]
)
def test_steer_max_mask_in_registers_equals_the_blocked_path(tmp_path, modes):
    # With AVX2 off (CONTEXTSTEER_NO_AVX2=1, a fresh interpreter) cs.steer takes the blocked
    # path (combine, resolve and choose one block of rows at a time, SSE2 kernels): the
    # one-pass argmax kernel, and for every other choose mode the rows combined and masked
    # in registers, must give the same bits, NaN rows and the finite check included.
    blocked = without_avx2(tmp_path, "test_maps_properties", f"_argmax_pipeline_cases({modes!r})")
    np.testing.assert_array_equal(blocked, _argmax_pipeline_cases(modes))


@pytest.mark.parametrize("k", [8, 16, 32, 64])
@pytest.mark.parametrize("b", [1, 3, 5])
def test_steer_argmax_equals_numpy(k, b):
    # The one-pass kernel against NumPy: max over the maps, zero where danger > threshold,
    # the first slot of the row maximum (-1 when it is not positive), its direction and
    # its value clamped to [0, 1]; values of 2^60 and beyond are refused, just below is not.
    rng = np.random.default_rng(10 * k + b)
    n = 157
    stack = rng.choice(np.array([-0.5, -0.0, 0.0, 0.2, 0.7, 1.0, 3.0], np.float32), (b, n, k))
    danger = rng.choice(np.array([0.0, 0.1, 0.9], np.float32), (n, k))
    slots = cs.SlotSet(k)
    got = cs.steer(stack, danger, slots, choose="argmax", threshold=0.5)
    res = np.where(danger > 0.5, np.float32(0), stack.max(axis=0))
    best = res.max(axis=1)
    want = np.where(best > 0, res.argmax(axis=1), -1)
    np.testing.assert_array_equal(got.slot, want)
    hit = want >= 0
    np.testing.assert_array_equal(got.direction[hit], slots.directions[want[hit]])
    np.testing.assert_array_equal(got.strength[hit], np.clip(best[hit], 0, 1))
    assert np.all(got.direction[~hit] == 0) and np.all(got.strength[~hit] == 0)
    big = stack.copy()
    big[0, n - 1, k - 1] = np.nextafter(np.float32(2.0**60), np.float32(0))
    cs.steer(big, danger, slots, choose="argmax")
    big[0, n - 1, k - 1] = -np.float32(2.0**60)
    with pytest.raises(ValueError, match="interest_maps"):
        cs.steer(big, danger, slots, choose="argmax")
