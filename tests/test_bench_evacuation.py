"""benchmarks/bench_evacuation.py: RiMEA 9's room timed on one and two threads."""

from bench_modules import load

be = load("bench_evacuation", "bench_evacuation_module")


def test_one_and_two_threads_end_at_the_same_positions():
    one = be.run(1, 80, 1, 3)
    two = be.run(2, 80, 1, 3)
    assert one[0] > 0 and two[0] > 0
    assert one[1] == two[1]


def test_main_prints_both_rows_and_one_hash(capsys):
    be.main(["--agents", "80", "--warm", "1", "--steps", "2", "--runs", "1"])
    out = capsys.readouterr().out
    assert "| 1 |" in out and "| 2 |" in out
    assert "two threads:" in out and out.count("position hashes: ['") == 1
