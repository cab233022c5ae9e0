"""benchmarks/bench_flow.py: the timed split of a fed corridor's step."""

from bench_modules import load

bf = load("bench_flow", "bench_flow_module")


def test_the_core_is_timed_apart_and_restored():
    sim = bf.build(20.0, 4.0, 2.0, 200)
    sim.step(bf.DT, 90)
    core = sim._core
    n = sim.flow.report()["entered"]
    whole, in_core = bf.measure(sim, 60)
    assert 0 < in_core <= whole
    assert sim._core is core  # the wrapper is gone
    assert sim.step_count == 150 and sim.flow.report()["entered"] > n


def test_main_prints_the_flows_share(capsys):
    bf.main(["--length", "20", "--width", "4", "--rate", "2", "--fill", "3", "--measure", "1",
             "--runs", "1", "--capacity", "200"])  # fmt: skip
    out = capsys.readouterr().out
    assert "of it the flow" in out and "%" in out
