"""benchmarks/bench_step.py --paired: the interleaving and the ratios, with fake systems
whose step times are known (no RVO2 or timing involved)."""

import statistics

import pytest

from bench_modules import load

bs = load("bench_step")


class _Fake:
    """Steps with preset times; records the order of its calls in a shared log."""

    def __init__(self, name, times, log):
        self.name, self.times, self.log, self.done = name, list(times), log, 0

    def run(self, m):
        self.log.append((self.name, m))
        out = self.times[self.done : self.done + m]
        self.done += m
        return out


def test_paired_ratios_interleave_blocks_and_divide_medians():
    log = []
    # RVO2 steps take 10 s, then 30 s from step 5 on; "a" takes 1 s, then 2 s; "b" 5 s.
    ref = _Fake("ref", [10] * 5 + [30] * 5, log)
    a = _Fake("a", [1] * 5 + [2] * 5, log)
    b = _Fake("b", [5] * 10, log)
    out = bs.paired_ratios(ref, {"a": a, "b": b}, steps=10, segments=3)
    # Blocks of 3, 3 and 4 steps (sizes differ by at most one), the reference first in each.
    assert log == [
        ("ref", 3),
        ("a", 3),
        ("b", 3),
        ("ref", 3),
        ("a", 3),
        ("b", 3),
        ("ref", 4),
        ("a", 4),
        ("b", 4),
    ]
    overall, blocks = out["a"]
    # Block medians: ref 10, 10 (10, 10, 30), 30; a 1, 1 (1, 1, 2), 2.
    assert blocks == [10.0, 10.0, 15.0]
    assert overall == statistics.median([10] * 5 + [30] * 5) / statistics.median([1] * 5 + [2] * 5)
    overall_b, blocks_b = out["b"]
    assert blocks_b == [2.0, 2.0, 6.0] and overall_b == 20 / 5


@pytest.mark.parametrize("segments, steps", [(0, 10), (11, 10)])
def test_paired_ratios_reject_bad_segments(segments, steps):
    with pytest.raises(ValueError, match="segments"):
        bs.paired_ratios(_Fake("r", [1] * 20, []), {}, steps, segments)
