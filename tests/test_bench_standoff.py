"""benchmarks/standoff.py: the standoffs it emulates a yielding for are the ones its
docstring names, on hand-made positions."""

import numpy as np

from bench_modules import load

so = load("standoff")

R = np.full(4, 0.3)


def test_two_bodies_side_by_side_in_a_mouth_the_farther_yields():
    # Agents 0 and 1 stand side by side before a gap at x = 0, 0.06 m apart, both bound
    # for (0.5, 0); agent 1 is a centimetre farther from it. Agents 2 and 3 are far off.
    pos = np.array([[-0.22, 0.33], [-0.23, -0.33], [-5.0, 3.0], [-5.0, -3.0]])
    targets = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0]])
    still = np.array([so.STILL_STEPS] * 4)
    assert so.standoff_yielders(pos, targets, R, still) == {1: 0}
    # Swapped distances: the other one yields.
    pos2 = pos.copy()
    pos2[:2] = [[-0.23, 0.33], [-0.22, -0.33]]
    assert so.standoff_yielders(pos2, targets, R, still) == {0: 1}


def test_no_standoff_when_moving_apart_or_opposed():
    pos = np.array([[-0.22, 0.33], [-0.23, -0.33], [-5.0, 3.0], [-5.0, -3.0]])
    targets = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0]])
    # One of the pair has not stood long enough.
    still = np.array([so.STILL_STEPS, so.STILL_STEPS - 1, 99, 99])
    assert so.standoff_yielders(pos, targets, R, still) == {}
    # Both stood, but their ways disagree by more than 60°: an oncoming pair is the jam
    # horizon's case, not this one.
    still = np.array([so.STILL_STEPS] * 4)
    opposed = targets.copy()
    opposed[1] = [-0.23, -3.0]  # straight down: 90° off agent 0's way
    assert so.standoff_yielders(pos, opposed, R, still) == {}
    # Bodies 0.16 m apart: beyond REACH.
    apart = pos.copy()
    apart[1, 1] = 0.33 - 0.6 - so.REACH - 0.01
    assert so.standoff_yielders(apart, targets, R, still) == {}
