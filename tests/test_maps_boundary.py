"""Boundary behaviour of the map API: zero-copy views, out= semantics, bad input."""

import gc
import pickle

import numpy as np
import pytest

import contextsteer as cs


def test_context_maps_views_are_zero_copy_and_outlive_owner():
    maps = cs.ContextMaps(5, 8)
    interest, danger = maps.interest, maps.danger
    assert interest.shape == (5, 8) and interest.dtype == np.float32
    assert interest.flags.c_contiguous and interest.flags.writeable
    assert np.all(interest == 0) and np.all(danger == 0)
    assert interest.base is not None and not np.shares_memory(interest, danger)
    slots = cs.SlotSet(8)
    written = cs.dot_map(slots, np.tile([[1.0, 0.0]], (5, 1)), out=maps.interest)
    assert written is maps.interest or np.shares_memory(written, interest)
    assert np.shares_memory(interest, maps.interest)
    assert interest[0, 0] == pytest.approx(1.0)  # the kernel wrote into C++ memory
    danger[:, 0] = 1.0  # NumPy writes are seen by the kernels
    resolved = cs.resolve(maps.interest, maps.danger, "mask", out=maps.interest)
    assert np.shares_memory(resolved, interest) and np.all(interest[:, 0] == 0)
    maps.clear()
    assert np.all(interest == 0) and np.all(danger == 0)
    del maps, resolved, written
    gc.collect()
    interest[:] = 2.0  # still valid memory: the view keeps the owner alive
    assert float(interest.sum()) == 80.0


def test_context_maps_rejects_bad_sizes():
    with pytest.raises(ValueError, match="K >= 3"):
        cs.ContextMaps(4, 2)
    with pytest.raises(ValueError, match="n >= 0"):
        cs.ContextMaps(-1, 8)
    assert cs.ContextMaps(0, 8).interest.shape == (0, 8)


def test_slot_set_views_are_read_only_and_outlive_owner():
    s = cs.SlotSet(6, offset=0.5)
    d = s.directions
    assert not d.flags.writeable
    with pytest.raises(ValueError):
        d[0, 0] = 3.0
    del s
    gc.collect()
    np.testing.assert_allclose(d[0], [np.cos(0.5), np.sin(0.5)], atol=1e-6)


def test_slot_set_repr_names_a_ring_by_k_and_any_other_set_by_its_angles():
    assert repr(cs.SlotSet(8, 0.5)) == "SlotSet(k=8, offset=0.5)"
    # An irregular set printed as SlotSet(k=16, offset=0.0) read as the 22.5° ring.
    dense = cs.scenarios.crowd_slots()
    text = repr(dense)
    assert "k=16" in text and "offset" not in text
    d = np.asarray(dense.directions, dtype=np.float64)
    for a in np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 360.0:
        assert f"{a:.4g}" in text


@pytest.mark.parametrize("k", [-1, 0, 1, 2])
def test_fewer_than_three_slots_rejected(k):
    with pytest.raises(ValueError, match="K >= 3"):
        cs.slot_directions(k)
    with pytest.raises(ValueError, match="K >= 3"):
        cs.SlotSet(k)


def test_two_slot_maps_rejected_everywhere():
    m = np.zeros((4, 2), np.float32)
    for call in (
        lambda: cs.combine([m, m]),
        lambda: cs.resolve(m, m),
        lambda: cs.blend(m, m, 0.5),
        lambda: cs.spread(m, [1.0]),
        lambda: cs.choose(m, [[1, 0], [-1, 0]]),
    ):
        with pytest.raises(ValueError, match="K >= 3"):
            call()


def test_unknown_modes_list_the_choices():
    m = np.zeros((1, 4), np.float32)
    s = cs.SlotSet(4)
    with pytest.raises(ValueError, match="'max', 'sum', 'weighted_sum', 'multiply', 'min'"):
        cs.combine([m], "average")
    with pytest.raises(ValueError, match="'mask'.*'avoid_opposite'"):
        cs.resolve(m, m, "cancel")
    with pytest.raises(ValueError, match="'vector_sum'.*'subslot'"):
        cs.choose(m, s, "best")
    with pytest.raises(ValueError, match="clamped_cosine"):
        cs.dot_map(s, [[1, 0]], shape="square")
    with pytest.raises(ValueError, match="'sum', 'max'"):
        cs.spread(m, [1.0], "mean")


def test_out_is_written_in_place_and_returned():
    rng = np.random.default_rng(0)
    a, b = rng.random((2, 3, 8), dtype=np.float32)
    out = np.empty((3, 8), np.float32)
    assert cs.combine([a, b], "sum", out=out) is out
    np.testing.assert_array_equal(out, a + b)
    assert cs.resolve(a, b, "subtract", out=out) is out
    assert cs.blend(a, b, 0.5, out=out) is out
    assert cs.spread(a, [0.5, 0.5, 0.5], out=out) is out
    assert cs.dot_map(cs.SlotSet(8), rng.random((3, 2)), out=out) is out
    choice = cs.Choice(np.empty((3, 2), np.float32), np.empty(3, np.float32), np.empty(3, np.int32))
    got = cs.choose(a, cs.SlotSet(8), "argmax", out=choice)
    for x, y in zip(got, choice):
        assert x is y
    np.testing.assert_array_equal(choice.slot, a.argmax(axis=1))
    # in place on the first argument
    mem = a.copy()
    cs.blend(mem, b, 0.25, out=mem)
    np.testing.assert_allclose(mem, a + 0.25 * (b - a), rtol=1e-6)
    cs.resolve(mem, b, "mask", threshold=0.5, out=mem)
    assert np.all(mem[b > 0.5] == 0)


def bad_outs(shape, dtype=np.float32):
    big = np.zeros((shape[0], 2 * shape[1]) if len(shape) == 2 else (2 * shape[0],), dtype)
    ro = np.zeros(shape, dtype)
    ro.flags.writeable = False
    wrong = (shape[0] + 1,) + tuple(shape[1:])
    return {
        "float64": np.zeros(shape, np.float64),
        "non-contiguous": big[:, ::2] if len(shape) == 2 else big[::2],
        "fortran": np.asfortranarray(np.zeros(shape + (1,) if len(shape) == 1 else shape, dtype))[
            ..., 0
        ]
        if len(shape) == 1
        else np.asfortranarray(np.zeros(shape, dtype)),
        "wrong shape": np.zeros(wrong, dtype),
        "read-only": ro,
        "list": np.zeros(shape, dtype).tolist(),
    }


@pytest.mark.parametrize(
    "case", ["float64", "non-contiguous", "fortran", "wrong shape", "read-only", "list"]
)
def test_bad_out_is_refused_with_type_error(case):
    a = np.full((3, 8), 0.5, np.float32)
    out = bad_outs((3, 8))[case]
    if case == "fortran" and out.flags.c_contiguous:
        pytest.skip("not a distinct layout for this shape")
    slots = cs.SlotSet(8)
    calls = [
        lambda: cs.combine([a, a], out=out),
        lambda: cs.resolve(a, a, out=out),
        lambda: cs.blend(a, a, 0.5, out=out),
        lambda: cs.spread(a, out=out),
        lambda: cs.dot_map(slots, np.ones((3, 2)), out=out),
    ]
    for call in calls:
        with pytest.raises(TypeError):
            call()
    before = np.array(out, copy=True)
    np.testing.assert_array_equal(np.asarray(out), before)  # nothing was written


def test_bad_choose_out_is_refused():
    a = np.full((3, 8), 0.5, np.float32)
    slots = cs.SlotSet(8)
    good = (np.empty((3, 2), np.float32), np.empty(3, np.float32), np.empty(3, np.int32))
    for pos, bad in [
        (0, np.empty((3, 2))),
        (1, np.empty(4, np.float32)),
        (2, np.empty(3, np.int64)),
        (2, np.empty(3, np.float32)),
        (0, np.empty((2, 3), np.float32).T),
    ]:
        out = list(good)
        out[pos] = bad
        with pytest.raises(TypeError):
            cs.choose(a, slots, out=tuple(out))
    with pytest.raises(TypeError):
        cs.choose(a, slots, out=good[:2])


def test_out_overlapping_inputs_is_refused():
    a = np.full((3, 8), 0.5, np.float32)
    stack = np.stack([a, a])
    with pytest.raises(ValueError, match="overlap"):
        cs.combine(stack, out=stack[1])
    with pytest.raises(ValueError, match="overlap"):
        cs.spread(a, out=a)
    d = a.copy()
    with pytest.raises(ValueError, match="overlap"):
        cs.resolve(a, d, "avoid_opposite", directions=cs.SlotSet(8), out=d)
    vals = np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match="overlap"):
        cs.choose(
            vals,
            cs.SlotSet(8),
            out=(
                vals.reshape(-1)[:16].reshape(8, 2),
                np.empty(8, np.float32),
                np.empty(8, np.int32),
            ),
        )


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_names_the_argument(bad):
    slots = cs.SlotSet(8)
    a = np.full((300, 8), 0.5, np.float32)
    x = a.copy()
    x[217, 3] = bad
    with pytest.raises(ValueError, match=r"maps.*finite.*\(217, 3\)|maps"):
        cs.combine([a, x])
    with pytest.raises(ValueError, match="danger"):
        cs.resolve(a, x)
    with pytest.raises(ValueError, match="interest"):
        cs.resolve(x, a)
    with pytest.raises(ValueError, match="values"):
        cs.choose(x, slots)
    with pytest.raises(ValueError, match="values"):
        cs.spread(x)
    with pytest.raises(ValueError, match="current"):
        cs.blend(a, x, 0.5)
    v = np.ones((300, 2), np.float32)
    v[5, 1] = bad
    with pytest.raises(ValueError, match="vectors"):
        cs.dot_map(slots, v)
    with pytest.raises(ValueError, match="weights"):
        cs.dot_map(slots, np.ones((300, 2)), weight=np.where(np.arange(300) == 9, bad, 1.0))
    with pytest.raises(ValueError, match="directions"):
        cs.choose(a, np.where(np.arange(16).reshape(8, 2) == 3, bad, slots.directions))
    with pytest.raises(ValueError, match="weights"):
        cs.combine([a, a], "weighted_sum", weights=[1.0, bad])
    with pytest.raises(ValueError, match="finite"):
        cs.resolve(a, a, threshold=bad)
    with pytest.raises(ValueError):
        cs.blend(a, a, bad)
    with pytest.raises(ValueError, match="finite"):
        cs.slot_directions(8, bad)


def test_non_finite_message_locates_the_value():
    x = np.zeros((10, 4), np.float32)
    x[7, 2] = np.nan
    with pytest.raises(
        ValueError,
        match=r"values: expected finite values below 2\^60 "
        r"\(1.15e18\) in magnitude, got nan at index \(7, 2\)",
    ):
        cs.choose(x, cs.SlotSet(4))


def test_non_finite_message_locates_the_value_in_a_stack():
    m = np.zeros((5, 8), np.float32)
    m[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"got nan at index \(0, 2, 3\)"):
        cs.combine([m])


def test_values_beyond_the_supported_magnitude_are_refused():
    m = np.zeros((5, 8), np.float32)
    m[1, 1] = 3e38  # finite, but sums of such values overflow float32
    with pytest.raises(ValueError, match=r"in magnitude, got 3e\+38 at index \(1, 1\)"):
        cs.resolve(m, m)


def test_wrong_shapes_and_dtypes():
    slots = cs.SlotSet(8)
    a = np.zeros((3, 8), np.float32)
    with pytest.raises(ValueError, match=r"danger: expected shape \(3, 8\), got \(3, 7\)"):
        cs.resolve(a, np.zeros((3, 7)))
    with pytest.raises(ValueError, match="K = 7 slots but the slot set has 8"):
        cs.choose(np.zeros((3, 7)), slots)
    with pytest.raises(ValueError, match=r"vectors: expected shape \(N, 2\)"):
        cs.dot_map(slots, np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"maps: expected shape \(B, N, K\)"):
        cs.combine(np.zeros((3, 8), np.float32))
    with pytest.raises(ValueError, match="B >= 1"):
        cs.combine(np.zeros((0, 3, 8), np.float32))
    with pytest.raises(ValueError, match="needs weights"):
        cs.combine([a, a], "weighted_sum")
    with pytest.raises(ValueError, match="only used by"):
        cs.combine([a, a], "sum", weights=[1, 2])
    with pytest.raises(ValueError, match=r"weights: expected shape \(B=2,\)"):
        cs.combine([a, a], "weighted_sum", weights=[1, 2, 3])
    with pytest.raises(ValueError, match="odd length"):
        cs.spread(a, [0.5, 0.5])
    with pytest.raises(ValueError, match="odd length"):
        cs.spread(a, np.ones(9))
    with pytest.raises(ValueError, match=r"alpha.*\[0, 1\]"):
        cs.blend(a, a, 1.5)
    with pytest.raises(ValueError, match="epsilon"):
        cs.resolve(a, a, "mask_min_danger", epsilon=-1)
    with pytest.raises(ValueError, match="needs directions"):
        cs.resolve(a, a, "avoid_opposite")
    with pytest.raises(ValueError, match="width"):
        cs.choose(a, slots, "weighted_neighbours", width=-1)
    with pytest.raises(TypeError, match="width"):
        cs.choose(a, slots, "weighted_neighbours", width=1.5)
    # inputs are converted in plain sight: ints, float64, lists and strided arrays work
    ints = np.ones((3, 16), np.int64)[:, ::2]
    np.testing.assert_array_equal(cs.combine([ints, ints], "sum"), np.full((3, 8), 2.0, np.float32))
    assert cs.choose([[0, 1, 0, 0]], [[1, 0], [0, 1], [-1, 0], [0, -1]]).slot.tolist() == [1]


def test_directions_must_form_a_counter_clockwise_unit_ring():
    d = cs.slot_directions(6)
    with pytest.raises(ValueError, match="unit vectors"):
        cs.SlotSet.from_directions(2 * d)
    with pytest.raises(ValueError, match="counter-clockwise"):
        cs.SlotSet.from_directions(d[::-1])
    with pytest.raises(ValueError, match="counter-clockwise"):
        cs.SlotSet.from_directions(d[[0, 2, 1, 3, 4, 5]])
    with pytest.raises(ValueError, match="K >= 3"):
        cs.SlotSet.from_directions(d[:2])
    with pytest.raises(ValueError, match="shape"):
        cs.SlotSet.from_directions(np.zeros((6, 3)))
    # an irregular ring is fine and is recognised as such
    irregular = cs.SlotSet.from_directions(cs.slot_directions(64)[[0, 5, 16, 30, 40, 55]])
    assert not irregular.regular and irregular.k == 6
    assert cs.SlotSet.from_directions(d).regular


def test_irregular_ring_choose_and_subslot():
    idx = [0, 5, 16, 30, 40, 55]
    dirs = cs.slot_directions(64)[idx]
    s = cs.SlotSet.from_directions(dirs)
    gaps = np.diff(np.r_[idx, 64]) * 2 * np.pi / 64
    np.testing.assert_allclose(s.gaps, gaps, atol=1e-5)
    # parabola in angle sampled at uneven gaps is still exact
    theta = np.array(idx) * 2 * np.pi / 64
    peak = theta[2] + 0.1
    delta = theta - peak
    v = np.where(np.abs(delta) < 1.6, 0.8 - 0.2 * delta**2, 0.0).astype(np.float32)
    c = cs.choose(v[None], s, "subslot")
    np.testing.assert_allclose(c.direction[0], [np.cos(peak), np.sin(peak)], atol=2e-6)
    assert c.strength[0] == pytest.approx(0.8, abs=1e-6)
    # and so is an equal-slope peak for the gradient intersection
    v = np.maximum(0.8 - 0.3 * np.abs(delta), 0.0).astype(np.float32)
    c = cs.choose(v[None], s, "subslot_linear")
    np.testing.assert_allclose(c.direction[0], [np.cos(peak), np.sin(peak)], atol=2e-6)
    assert c.strength[0] == pytest.approx(0.8, abs=1e-6)


def test_empty_batches():
    s = cs.SlotSet(5)
    e = np.zeros((0, 5), np.float32)
    assert cs.combine([e, e]).shape == (0, 5)
    assert cs.resolve(e, e).shape == (0, 5)
    c = cs.choose(e, s)
    assert c.direction.shape == (0, 2) and c.strength.shape == (0,) and c.slot.shape == (0,)
    assert cs.dot_map(s, np.zeros((0, 2))).shape == (0, 5)


def test_nothing_positive_gives_zero_choice():
    s = cs.SlotSet(8)
    for mode in cs.CHOOSE_MODES:
        c = cs.choose(np.array([[0.0] * 8, [-1.0] * 8], np.float32), s, mode)
        if mode == "argmax_always":  # the Unity project: its first slot all the same
            assert (
                c.slot.tolist() == [0, 0]
                and np.all(c.direction == [1, 0])
                and np.all(c.strength == 0)
            )
            continue
        assert c.slot.tolist() == [-1, -1]
        assert np.all(c.direction == 0) and np.all(c.strength == 0)


def test_zero_vector_has_no_direction():
    m = cs.dot_map(cs.SlotSet(4), [[0.0, 0.0]], shape="half_cosine")
    np.testing.assert_array_equal(m, np.full((1, 4), 0.5, np.float32))


def test_steer_bad_input():
    slots = cs.SlotSet(8)
    stack = np.zeros((2, 4, 8), np.float32)
    danger = np.zeros((4, 8), np.float32)
    with pytest.raises(
        ValueError, match="steer: combine must be one of 'max', 'sum', 'weighted_sum'"
    ):
        cs.steer(stack, danger, slots, combine="mean")
    with pytest.raises(
        ValueError,
        match="steer: resolve must be one of 'mask', .*'subtract_unclamped', got 'ignore'",
    ):
        cs.steer(stack, danger, slots, resolve="ignore")
    with pytest.raises(
        ValueError,
        match="steer: choose must be one of 'vector_sum', .*'vector_sum_signed', got 'random'",
    ):
        cs.steer(stack, danger, slots, choose="random")
    with pytest.raises(ValueError, match="needs weights"):
        cs.steer(stack, danger, slots, combine="weighted_sum")
    with pytest.raises(ValueError, match="only used by mode 'weighted_sum'"):
        cs.steer(stack, danger, slots, weights=[1, 2])
    with pytest.raises(ValueError, match=r"weights: expected shape \(B=2,\), got \(3,\)"):
        cs.steer(stack, danger, slots, combine="weighted_sum", weights=[1, 2, 3])
    with pytest.raises(ValueError, match=r"danger.*\(4, 8\)"):
        cs.steer(stack, danger[:3], slots)
    with pytest.raises(ValueError, match="K = 8 slots but the slot set has 6"):
        cs.steer(stack, danger, cs.SlotSet(6))
    with pytest.raises(ValueError, match="B >= 1"):
        cs.steer(np.zeros((0, 4, 8), np.float32), danger, slots)
    with pytest.raises(ValueError, match="K >= 3"):
        cs.steer(np.zeros((1, 4, 2), np.float32), np.zeros((4, 2), np.float32), [[1, 0], [-1, 0]])
    with pytest.raises(ValueError, match="interest_maps"):
        cs.steer(np.zeros((4, 8), np.float32), danger, slots)  # missing the B axis
    with pytest.raises(ValueError, match="width"):
        cs.steer(stack, danger, slots, width=-1)
    with pytest.raises(TypeError, match="width"):
        cs.steer(stack, danger, slots, width=1.5)
    with pytest.raises(ValueError, match="epsilon"):
        cs.steer(stack, danger, slots, epsilon=-1.0)
    bad = stack.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="interest_maps"):
        cs.steer(bad, danger, slots)
    bad = danger.copy()
    bad[3, 7] = np.inf
    with pytest.raises(ValueError, match="danger"):
        cs.steer(stack, bad, slots)


def test_steer_out_is_written_in_place_or_refused():
    slots = cs.SlotSet(8)
    stack = np.random.default_rng(0).uniform(-0.2, 1, (2, 4, 8)).astype(np.float32)
    danger = np.zeros((4, 8), np.float32)
    out = cs.Choice(np.empty((4, 2), np.float32), np.empty(4, np.float32), np.empty(4, np.int32))
    got = cs.steer(stack, danger, slots, out=out)
    assert all(a is b for a, b in zip(got, out))
    want = cs.choose(cs.combine(stack), slots)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="out.direction"):
        cs.steer(stack, danger, slots, out=(np.empty((4, 2)), out.strength, out.slot))
    with pytest.raises(TypeError, match="out.slot"):
        cs.steer(stack, danger, slots, out=(out.direction, out.strength, np.empty(4, np.float32)))
    with pytest.raises(TypeError, match="out.strength"):
        cs.steer(stack, danger, slots, out=(out.direction, np.empty(5, np.float32), out.slot))
    with pytest.raises(TypeError, match="expected"):
        cs.steer(stack, danger, slots, out=(out.direction, out.strength))
    alias = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="must not overlap"):
        cs.steer(stack, danger, slots, out=(alias.reshape(4, 2), alias[:4], out.slot))
    flat = danger.reshape(-1)
    with pytest.raises(ValueError, match="must not overlap danger"):
        cs.steer(stack, danger, slots, out=(flat[:8].reshape(4, 2), out.strength, out.slot))
    assert cs.steer(
        np.zeros((1, 0, 8), np.float32), np.zeros((0, 8), np.float32), slots
    ).slot.shape == (0,)


def test_combine_rejects_an_empty_or_ragged_sequence():
    with pytest.raises(ValueError, match="at least one"):
        cs.combine([], "max")
    with pytest.raises(ValueError, match="one shape"):
        cs.combine([np.zeros((2, 8)), np.zeros((3, 8))], "max")


def test_mode_tables_come_from_the_core_and_drive_names_checks_and_messages():
    """One table per mode kind, in C++: the public tuples, the Python checks and the
    bindings' own parser all read it, with one message style."""
    tables = cs._core.modes()
    assert set(tables) == {
        "combine",
        "steering_combine",
        "resolve",
        "choose",
        "dot_shape",
        "spread",
    }
    assert tuple(n for n, _ in tables["combine"]) == cs.COMBINE_MODES
    assert tuple(n for n, _ in tables["resolve"]) == cs.RESOLVE_MODES
    assert tuple(n for n, _ in tables["choose"]) == cs.CHOOSE_MODES
    assert tuple(n for n, _ in tables["dot_shape"]) == cs.DOT_SHAPES
    assert tuple(n for n, _ in tables["spread"]) == cs.SPREAD_MODES
    assert tuple(n for n in cs.COMBINE_MODES if n != "weighted_sum") == cs.STEERING_COMBINE_MODES
    assert all(doc for rows in tables.values() for _, doc in rows)
    # Every listed name is accepted by the kernel behind it.
    m = np.ones((2, 3, 8), np.float32)
    for mode in cs.COMBINE_MODES:
        cs.combine(m, mode=mode, weights=[1, 1] if mode == "weighted_sum" else None)
    for mode in cs.SPREAD_MODES:
        cs.spread(m[0], [0.5, 1, 0.5], mode=mode)
    # Python's check and the binding's parser (reached directly) say the same thing.
    listed = ", ".join(repr(n) for n in cs.COMBINE_MODES)
    expected = f"combine: mode must be one of {listed}, got 'avg'"
    with pytest.raises(ValueError) as py_side:
        cs.combine(m, mode="avg")
    with pytest.raises(ValueError) as core_side:
        cs._core.combine(m, "avg", None, None)
    assert str(py_side.value) == str(core_side.value) == expected
    with pytest.raises(ValueError, match="spread: mode must be one of 'sum', 'max', got 3"):
        cs.spread(m[0], [0.5, 1, 0.5], mode=3)
    with pytest.raises(ValueError, match="dot_map: shape must be one of 'clamped_cosine'"):
        cs.dot_map(cs.SlotSet(8), np.ones((3, 2)), shape="square")


def test_step_outputs_and_generations_are_read_only_views():
    # Writes to resolved, sensed and acceleration were lost at the next decision (or kept
    # unchecked: a negative ray distance went into the recording), and a write to
    # generation made a living agent read as new (its run metrics wiped).
    w = cs.World()
    w.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    agents = cs.Agents(3, slots=8)
    agents.add([[0, 0], [1, 1], [-1, 2]], radius=0.2, target=[3, 3])
    sim = cs.Simulation(w, agents, cs.Steering([cs.Seek(), cs.WallDanger()]), motion=cs.Lerp())
    sim.step(0.05)
    for name in ("resolved", "sensed", "acceleration"):
        view = getattr(sim, name)
        assert not view.flags.writeable, name
        with pytest.raises(ValueError):
            view[0] = 1.0
    assert not agents.generation.flags.writeable
    with pytest.raises(ValueError):
        agents.generation[0] += 1
    with pytest.raises(AttributeError):
        agents.generation = [5, 5, 5]
    # A pickle still restores the generations (through the private writable view).
    agents.remove([1])
    agents.add([[2, 2]], radius=0.2)
    back = pickle.loads(pickle.dumps(agents))
    np.testing.assert_array_equal(back.generation, agents.generation)
    assert agents.generation.tolist() == [1, 2, 1]
