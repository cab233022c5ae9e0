"""Plots: returned artists carry the data (Agg backend, no pixels compared)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import contextsteer as cs


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_context_map_bars_follow_slots():
    interest = np.array([1.0, 0.707, 0, 0, 0, 0, 0, 0.707])
    art = cs.plot.context_map(interest)
    assert len(art.interest.patches) == 8
    heights = [p.get_height() for p in art.interest.patches]
    np.testing.assert_allclose(heights, interest)
    # slot 0 along +x, counter-clockwise
    xs = [p.get_x() + p.get_width() / 2 for p in art.interest.patches]
    np.testing.assert_allclose(xs, 2 * np.pi * np.arange(8) / 8)
    assert art.danger is None and art.masked is None and art.chosen is None


def test_context_map_marks_masked_slots_and_chosen_arrow():
    interest = np.array([1.0, 0.707, 0, 0, 0, 0, 0, 0.707])
    danger = np.zeros(8)
    danger[1] = 1.0
    danger[2] = 0.2
    art = cs.plot.context_map(interest, danger, chosen=(0.6, -0.8), threshold=0.5)
    np.testing.assert_allclose(art.masked.get_xdata(), [2 * np.pi / 8])
    t, r = art.danger.get_data()
    assert len(t) == 9 and r[0] == r[-1]
    angle, length = art.chosen.xy
    assert angle == pytest.approx(np.arctan2(-0.8, 0.6))
    assert length == pytest.approx(1.0)


def test_context_map_uses_given_axes():
    fig, ax = plt.subplots(subplot_kw={"projection": "polar"})
    art = cs.plot.context_map(np.ones(5), ax=ax)
    assert art.interest.patches[0].axes is ax


@pytest.mark.parametrize(
    "interest, danger, match",
    [
        (np.ones(2), None, "K >= 3"),
        (np.ones((2, 4)), None, "shape"),
        (np.ones(4), np.ones(5), "danger"),
        (np.array([1.0, np.nan, 0, 0]), None, "finite"),
    ],
)
def test_context_map_rejects_bad_input(interest, danger, match):
    with pytest.raises(ValueError, match=match):
        cs.plot.context_map(interest, danger)
