"""The seeds' worked examples, reproduced with the context-map engine.

Godot recipe (godot-recipe-context-steering.txt), Unity ContextSteering README
(unity-contextsteering-readme.txt), Mike Lewis "Smarter Steering" (lewis-smarter-steering.txt),
Andrew Fray's lowest-danger masking (as retold by Lewis and in DESIGN.md).
"""

import numpy as np
import pytest

import contextsteer as cs


def angle(d):
    return float(np.arctan2(d[1], d[0]))


# ------------------------------------------------------------------------------ Godot ---


def test_godot_forward_interest_8_rays():
    # "the interest array would look like this": forward 1, forward-left/right .707, rest 0
    interest = cs.dot_map(cs.SlotSet(8), [[1.0, 0.0]], shape="clamped_cosine")
    np.testing.assert_allclose(interest[0], [1, 0.7071068, 0, 0, 0, 0, 0, 0.7071068], atol=1e-6)
    c = cs.choose(interest, cs.SlotSet(8), "vector_sum")
    np.testing.assert_allclose(c.direction[0], [1.0, 0.0], atol=1e-6)
    assert c.slot[0] == 0 and c.strength[0] == pytest.approx(1.0)


def test_godot_obstacle_turns_away():
    # An obstacle forward-left (slot 1, counter-clockwise of forward): the recipe zeroes
    # interest where danger > 0 and sums the rest; the new heading points away (to the right).
    slots = cs.SlotSet(8)
    interest = cs.dot_map(slots, [[1.0, 0.0]])
    danger = np.zeros((1, 8), np.float32)
    danger[0, 1] = 1.0
    resolved = cs.resolve(interest, danger, "mask")
    np.testing.assert_allclose(resolved[0], [1, 0, 0, 0, 0, 0, 0, 0.7071068], atol=1e-6)
    for contiguous in (True, False):
        c = cs.choose(resolved, slots, "vector_sum", contiguous=contiguous)
        expected = np.array([1.0, 0.0]) + 0.7071068 * np.array([np.sqrt(0.5), -np.sqrt(0.5)])
        np.testing.assert_allclose(c.direction[0], expected / np.linalg.norm(expected), atol=1e-6)
        assert angle(c.direction[0]) < 0  # turned away from the obstacle on the left


def test_godot_obstacle_dead_ahead_does_not_sum_to_straight_ahead():
    # Symmetric interest around a blocked forward slot: the raw recipe sums the two side
    # slots to exactly straight ahead, into the obstacle; the contiguous rule picks one side.
    slots = cs.SlotSet(8)
    interest = cs.dot_map(slots, [[1.0, 0.0]])
    danger = np.zeros((1, 8), np.float32)
    danger[0, 0] = 1.0
    resolved = cs.resolve(interest, danger, "mask")
    raw = cs.choose(resolved, slots, "vector_sum", contiguous=False)
    np.testing.assert_allclose(raw.direction[0], [1.0, 0.0], atol=1e-6)  # the recipe's flaw
    c = cs.choose(resolved, slots, "vector_sum")
    assert c.slot[0] == 1  # tie between runs {1} and {7}: lowest first slot
    np.testing.assert_allclose(c.direction[0], slots.directions[1], atol=1e-6)
    nearest = int(np.argmax(slots.directions @ c.direction[0]))
    assert resolved[0, nearest] > 0
    for mode in ("argmax", "weighted_neighbours", "subslot", "subslot_linear"):
        c = cs.choose(resolved, slots, mode)
        assert resolved[0, int(np.argmax(slots.directions @ c.direction[0]))] > 0, mode


def test_godot_levels_of_danger_and_avoidance_variants():
    slots = cs.SlotSet(8)
    interest = cs.dot_map(slots, [[1.0, 0.0]])
    danger = np.zeros((1, 8), np.float32)
    danger[0, 0] = 0.4  # a far obstacle ahead: small score, subtracted
    sub = cs.resolve(interest, danger, "subtract")
    assert sub[0, 0] == pytest.approx(0.6)
    # "Avoidance": danger ahead adds interest behind (slot 4), computed from vectors
    avoid = cs.resolve(np.zeros((1, 8)), danger, "avoid_opposite", directions=slots)
    assert avoid[0, 4] == pytest.approx(0.4)
    np.testing.assert_allclose(avoid[0, [3, 5]], 0.4 * np.sqrt(0.5), atol=1e-6)
    # odd K: no slot is exactly opposite, the two nearest share the lobe
    s7 = cs.SlotSet(7)
    d7 = np.zeros((1, 7), np.float32)
    d7[0, 0] = 1.0
    a7 = cs.resolve(np.zeros((1, 7)), d7, "avoid_opposite", directions=s7)
    np.testing.assert_allclose(a7[0, 3], a7[0, 4], atol=1e-6)
    assert a7[0, 3] == pytest.approx(np.cos(np.pi / 7), abs=1e-6)


# ------------------------------------------------------------------------------ Unity ---


def unity_merge(interest_maps, danger_maps, directions):
    """The Unity ContextMerger, transcribed from the README's C#."""
    k = len(directions)
    interest = [0.0] * k
    danger = [0.0] * k
    for i in range(k):
        biggest = 0.0
        for m in interest_maps:
            if m[i] > biggest:
                biggest = m[i]
        interest[i] = biggest
    for i in range(k):
        biggest = 0.0
        for m in danger_maps:
            if m[i] > biggest:
                biggest = m[i]
        danger[i] = biggest
    for i in range(k):
        interest[i] -= danger[i]
    best = max(interest)
    return interest, interest.index(best)


def test_unity_max_merge_subtract_argmax():
    k = 12
    slots = cs.SlotSet(k)
    dirs = slots.directions.astype(np.float64)
    to_target = np.array([[-3.0, 4.0]])  # chase: dot(toTarget, d) / |toTarget|
    chase = cs.dot_map(slots, to_target, shape="clamped_cosine")
    # Directional: Dot(up * 0.8, d): the vector's length scales the value
    directional = cs.dot_map(slots, [[0.0, 0.8]], shape="clamped_cosine", magnitude=True)
    avoid = cs.dot_map(slots, [[-1.0, 1.5]], shape="clamped_cosine")
    chase_c = [max(0.0, float(d @ to_target[0]) / 5.0) for d in dirs]
    directional_c = [max(0.0, float(np.array([0.0, 0.8]) @ d)) for d in dirs]
    avoid_c = [max(0.0, float(d @ [-1.0, 1.5]) / np.hypot(1.0, 1.5)) for d in dirs]
    np.testing.assert_allclose(chase[0], chase_c, atol=1e-6)
    np.testing.assert_allclose(directional[0], directional_c, atol=1e-6)

    interest = cs.combine([chase, directional], "max")
    danger = cs.combine([avoid], "max")
    resolved = cs.resolve(interest, danger, "subtract")
    expected, best = unity_merge([chase_c, directional_c], [avoid_c], dirs)
    np.testing.assert_allclose(resolved[0], np.maximum(expected, 0.0), atol=1e-6)
    c = cs.choose(resolved, slots, "argmax")
    assert c.slot[0] == best
    np.testing.assert_allclose(c.direction[0], dirs[best], atol=1e-7)
    assert c.strength[0] == pytest.approx(expected[best], abs=1e-6)


# ------------------------------------------------------------------------------ Lewis ---


def test_lewis_multiply_neighbour_average_and_speed():
    k = 16
    slots = cs.SlotSet(k)
    # Two evaluators with scores normalised to [0, 1], multiplied per direction
    target = cs.dot_map(slots, [[1.0, 1.0]], shape="half_cosine")
    flee = cs.dot_map(slots, [[-1.0, 0.0]], shape="opposite_cosine")  # away from a threat at -x
    flee = 0.5 + 0.5 * flee  # normalised to [0.5, 1]: never vetoes a direction outright
    desire = cs.combine([target, flee], "multiply")
    np.testing.assert_allclose(desire, target * flee, rtol=1e-6)

    # "look at the highest scoring direction, then two or three to either side, and do a
    # weighted average"
    c = cs.choose(desire, slots, "weighted_neighbours", width=2)
    b = int(np.argmax(desire[0]))
    idx = [(b + t) % k for t in range(-2, 3)]
    avg = (desire[0, idx, None] * slots.directions[idx]).sum(axis=0)
    np.testing.assert_allclose(c.direction[0], avg / np.linalg.norm(avg), atol=1e-6)
    assert c.slot[0] == b and c.strength[0] == pytest.approx(desire[0, b])
    assert 0 < angle(c.direction[0]) < np.pi / 4  # between the target and the other evaluator

    # Speed control: one more evaluator "chooses how fast to move"; the strength scales
    half_speed = np.full((1, k), 0.5, np.float32)
    slow = cs.choose(
        cs.combine([target, flee, half_speed], "multiply"), slots, "weighted_neighbours"
    )
    np.testing.assert_allclose(slow.direction, c.direction, atol=1e-6)
    assert slow.strength[0] == pytest.approx(0.5 * c.strength[0])


def test_lewis_blocked_direction_zeroed():
    # "setting the blocked direction's score to zero": the average stops at the zero
    slots = cs.SlotSet(8)
    desire = np.array([[0.9, 1.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.3]], np.float32)
    c = cs.choose(desire, slots, "weighted_neighbours", width=3)
    used = [7, 0, 1]  # left of 1: 0 then 7 (then 6 is zero); right of 1: slot 2 is zero
    s = (desire[0, used, None] * slots.directions[used]).sum(axis=0)
    np.testing.assert_allclose(c.direction[0], s / np.linalg.norm(s), atol=1e-6)


# ------------------------------------------------------------------------------- Fray ---


def test_fray_lowest_danger_masking():
    # Racing: every direction carries some danger; keep only the least dangerous slots,
    # then take the best interest among them, even if more interest lies elsewhere.
    slots = cs.SlotSet(8)
    interest = np.array([[1.0, 0.8, 0.3, 0.1, 0.0, 0.1, 0.3, 0.8]], np.float32)
    danger = np.array([[0.7, 0.5, 0.2, 0.6, 0.9, 0.9, 0.21, 0.4]], np.float32)
    kept = cs.resolve(interest, danger, "mask_min_danger")
    np.testing.assert_array_equal(kept[0], np.float32([0, 0, 0.3, 0, 0, 0, 0, 0]))
    kept = cs.resolve(interest, danger, "mask_min_danger", epsilon=0.02)
    np.testing.assert_array_equal(kept[0], np.float32([0, 0, 0.3, 0, 0, 0, 0.3, 0]))
    c = cs.choose(kept, slots, "argmax")
    assert c.slot[0] == 2  # tie between 2 and 6: lowest index


K_PEAK, OFFSET = 16, 0.1
GAP = 2 * np.pi / K_PEAK


def sampled_peaks(profile):
    """(peak angle, values) for peaks a fraction of a gap either side of slot 5 of a
    16-ring rotated by 0.1: profile(delta) of each slot's angle from the peak."""
    theta = OFFSET + GAP * np.arange(K_PEAK)
    for frac in (-0.45, -0.2, 0.0, 0.3, 0.49):
        peak_angle = OFFSET + 5 * GAP + frac * GAP
        delta = (theta - peak_angle + np.pi) % (2 * np.pi) - np.pi
        yield frac, peak_angle, profile(delta).astype(np.float32)


def assert_peak_found(mode, values, peak_angle, height):
    c = cs.choose(values[None], cs.SlotSet(K_PEAK, offset=OFFSET), mode)
    np.testing.assert_allclose(c.direction[0], [np.cos(peak_angle), np.sin(peak_angle)], atol=2e-6)
    assert c.strength[0] == pytest.approx(height, abs=1e-6)
    assert c.slot[0] == 5


def test_subslot_is_exact_for_a_parabola_in_angle():
    parabola = lambda d: np.where(np.abs(d) < 1.6 * GAP, 0.9 - 0.8 * d**2, 0.0)  # noqa: E731
    for _, peak_angle, values in sampled_peaks(parabola):
        assert_peak_found("subslot", values, peak_angle, 0.9)


def test_subslot_linear_is_exact_for_a_peak_with_equal_slopes():
    # Fray's gradient intersection: values falling linearly in angle on both sides of a
    # peak between slots, P - m |angle - peak|, give back the peak angle and height; a
    # parabola's vertex fit would not (and vice versa, see above).
    slots = cs.SlotSet(K_PEAK, offset=OFFSET)
    for frac, peak_angle, values in sampled_peaks(lambda d: np.maximum(0.9 - 0.5 * np.abs(d), 0.0)):
        assert_peak_found("subslot_linear", values, peak_angle, 0.9)
        if frac != 0.0:
            p = cs.choose(values[None], slots, "subslot")
            assert (
                abs(np.arctan2(*p.direction[0][::-1]) - peak_angle) > 1e-3
            )  # the parabola misses it
    # Hand-worked: neighbours 0.5 and 0.8 around 1.0 on a regular 8-ring (gap pi/4): the
    # left side falls 0.5 per gap, steeper than the right (0.2): m = 0.5 / gap, the peak
    # lies right of slot b by (gap / 2)(1 - 0.2 / 0.5) = 0.3 gap, at height 1 + 0.15.
    s8 = cs.SlotSet(8)
    v = np.float32([[0.5, 1.0, 0.8, 0, 0, 0, 0, 0]])
    c = cs.choose(v, s8, "subslot_linear")
    ang = np.pi / 4 + 0.3 * np.pi / 4
    np.testing.assert_allclose(c.direction[0], [np.cos(ang), np.sin(ang)], atol=1e-6)
    assert c.strength[0] == 1.0 and c.slot[0] == 1  # 1.15 clipped to 1
    c = cs.choose(v * 0.5, s8, "subslot_linear")
    assert c.strength[0] == pytest.approx(0.575, abs=1e-6)
    # Flat: the best slot itself. A plateau's edge slot: half a gap into the plateau.
    c = cs.choose(np.full((1, 8), 0.4, np.float32), s8, "subslot_linear")
    np.testing.assert_allclose(c.direction[0], s8.directions[0], atol=1e-7)
    c = cs.choose(np.float32([[0.4, 0.4, 0.4, 0, 0, 0, 0, 0]]), s8, "subslot_linear")
    np.testing.assert_allclose(c.direction[0], [np.cos(np.pi / 8), np.sin(np.pi / 8)], atol=1e-6)


@pytest.mark.parametrize("k", [8, 9, 80])
def test_long_run_sum_that_crosses_the_gap_falls_back_to_its_best_slot(k):
    # One masked slot ahead, strong interest just either side of it, weak elsewhere: the
    # run's sum points straight into the masked slot; the guard keeps the heading out.
    slots = cs.SlotSet(k)
    v = np.full((1, k), 0.05, np.float32)
    v[0, 0] = 0.0
    v[0, 1], v[0, k - 1] = 1.0, 0.9
    raw = cs.choose(v, slots, "vector_sum", contiguous=False)
    assert int(np.argmax(slots.directions @ raw.direction[0])) == 0  # the raw sum would
    c = cs.choose(v, slots, "vector_sum")
    assert c.slot[0] == 1
    np.testing.assert_allclose(c.direction[0], slots.directions[1], atol=1e-7)
    w = cs.choose(v, slots, "weighted_neighbours", width=k)
    np.testing.assert_allclose(w.direction[0], slots.directions[1], atol=1e-7)
