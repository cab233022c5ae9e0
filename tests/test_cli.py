"""The contextsteer command: argument errors exit 2 without a traceback; run writes files."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import cli, scenarios
from contextsteer._json import jsonable
from ctrl_c import ctrl_c_at_run

PACKAGE_PARENT = str(Path(cs.__file__).resolve().parent.parent)
ROOT = Path(__file__).resolve().parent.parent  # the checkout these tests belong to


def run_command(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "contextsteer", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def toy(*, agents=3, slots=8, seed=0):
    """A small real simulation: agents on a circle inside a box, steered by Forward and
    WallDanger (the look-ahead the rays are drawn with)."""
    if agents > 10:
        raise ValueError(f"at most 10 agents, got {agents}")
    world = cs.World()
    world.add_polyline([[-6, -6], [6, -6], [6, 6], [-6, 6]], closed=True)
    cars = cs.Agents(agents + 1, slots=slots, seed=seed)
    angle = np.linspace(0, 2 * np.pi, agents, endpoint=False) + seed
    cars.add(
        np.c_[3 * np.cos(angle), 3 * np.sin(angle)],
        heading=angle + np.pi / 2,
        radius=0.3,
        max_speed=1.0,
    )
    steering = cs.Steering([cs.Forward(), cs.WallDanger(look_ahead=2.0)])
    return cs.Simulation(world, cars, steering, motion=cs.Lerp(steer_force=0.5))


@pytest.fixture
def toy_scenario():
    scenarios.scenario("toy", description="Toy circles", steps=30)(toy)
    yield scenarios.get("toy")
    scenarios.unregister("toy")


# ------------------------------------------------------------------ argument errors ---


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["run", "--agents", "x"],
        ["run", "--agents", "0"],
        ["run", "--steps", "-5"],
        ["run", "--slots", "2"],
        ["run", "--seed", "1.5"],
        ["run", "--bogus"],
        ["run", "no-such-scenario"],
        ["list", "extra"],
        ["bench", "no-such-bench"],
    ],
)
def test_bad_arguments_exit_2_in_process(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: contextsteer" in err and "error" in err
    assert "Traceback" not in err


def test_bad_arguments_exit_2_in_a_process():
    for argv in (["run", "--steps", "many"], ["run", "nowhere"], ["nope"]):
        proc = run_command(*argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert "usage: contextsteer" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_unknown_scenario_lists_the_available_ones(toy_scenario, capsys):
    assert cli.main(["run", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'nowhere'" in err and "toy" in err


def test_scenario_errors_and_unknown_options_exit_2(toy_scenario, capsys):
    assert cli.main(["run", "toy", "--agents", "50", "--quiet"]) == 2  # builder refuses
    assert "at most 10 agents" in capsys.readouterr().err
    scenarios.scenario("fixed", description="no agents parameter")(lambda *, seed=0: None)
    try:
        assert cli.main(["run", "fixed", "--agents", "3"]) == 2
        assert "does not take --agents" in capsys.readouterr().err
    finally:
        scenarios.unregister("fixed")


def test_help_and_version_exit_0(capsys):
    assert cli.main(["--help"]) == 0
    assert "run" in capsys.readouterr().out
    assert cli.main(["--version"]) == 0
    assert cs.__version__ in capsys.readouterr().out


# ------------------------------------------------------------------------ registry ---


def test_registry(toy_scenario):
    assert scenarios.available()["toy"] == "Toy circles"
    assert toy_scenario.steps == 30
    assert toy_scenario.accepts("agents") and not toy_scenario.accepts("colour")
    with pytest.raises(ValueError, match="already registered"):
        scenarios.scenario("toy")(toy)
    with pytest.raises(ValueError, match="without spaces"):
        scenarios.scenario("two words")
    with pytest.raises(ValueError, match="available: .*toy"):
        scenarios.get("missing")


def test_description_defaults_to_docstring():
    @scenarios.scenario("documented")
    def documented(*, seed=0):
        """First line.

        More.
        """

    try:
        assert scenarios.available()["documented"] == "First line."
    finally:
        scenarios.unregister("documented")


def test_list(toy_scenario, capsys):
    assert cli.main(["list"]) == 0
    assert "toy" in capsys.readouterr().out


# ---------------------------------------------------------------------------- run ---


def test_run_writes_scene_animation_and_metrics(toy_scenario, tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(
        [
            "run",
            "toy",
            "--agents",
            "4",
            "--steps",
            "12",
            "--slots",
            "6",
            "--seed",
            "1",
            "--frames",
            "4",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    assert (out / "scene.png").stat().st_size > 1000
    assert (out / "animation.gif").read_bytes()[:3] == b"GIF"
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["scenario"] == "toy"
    assert metrics["parameters"] == {"agents": 4, "slots": 6, "seed": 1}
    assert metrics["steps"] == 12 and metrics["agents"] == 4
    assert metrics["trajectory"]["path_length_mean"] > 0
    # metrics.json is the run's JSON form, the numbers of the same run made by hand
    sim = toy(agents=4, slots=6, seed=1)
    sim.step(1 / 60, steps=12)
    assert metrics["metrics"] == json.loads(json.dumps(jsonable(sim.metrics())))
    assert metrics["report"] == {} and metrics["seconds"] >= 0
    assert metrics == cs.RunResult.from_dict(metrics).to_dict()


def test_run_leaves_pyplot_alone_and_refuses_a_file_as_out(toy_scenario, tmp_path, capsys):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    assert (
        cli.main(
            ["run", "toy", "--steps", "3", "--frames", "1", "--quiet", "--out", str(tmp_path / "o")]
        )
        == 0
    )
    assert plt.get_fignums() == before
    (tmp_path / "file").write_text("x")
    assert cli.main(["run", "toy", "--out", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err
    # A file on the way to the folder is a usage error found before the run (it was
    # exit 1, after the simulation had run, when the folder could not be made).
    assert cli.main(["run", "toy", "--out", str(tmp_path / "file" / "sub")]) == 2
    assert f"{tmp_path / 'file'} is not a directory" in capsys.readouterr().err


def test_write_run_writes_the_files_of_a_recorded_run(tmp_path):
    from PIL import Image

    sim = toy(agents=2)
    result = cs.run_simulation(sim, 10, records=cli.records_for(10, 3), maps=True)
    assert sim.step_count == 10
    files = cli.write_run(result, tmp_path, frames=3, progress=False)
    assert sim.step_count == 10  # drawing and writing never step
    with Image.open(files.animation) as gif:
        assert gif.n_frames >= 3
    assert files.metrics == result.to_dict() and files.result is result
    assert json.loads(files.metrics_file.read_text()) == result.to_dict()
    no_gif = cli.write_run(
        cs.run_simulation(toy(agents=2), 5, records=5), tmp_path / "b", frames=0, progress=False
    )
    assert no_gif.animation is None and no_gif.scene.exists()
    with pytest.raises(ValueError, match="recorded frames"):
        cli.write_run(cs.run_simulation(toy(agents=2), 5), tmp_path / "c", progress=False)


def test_deprecated_run_scenario_and_run_result_still_work(tmp_path):
    with pytest.warns(DeprecationWarning, match="run_simulation"):
        res = cli.run_scenario(
            lambda: toy(agents=2),
            6,
            tmp_path,
            frames=1,
            progress=False,
            info={"scenario": "toy", "parameters": {"agents": 2}},
        )
    assert res.metrics["scenario"] == "toy" and res.metrics["steps"] == 6
    assert res.result.simulation.step_count == 6
    with pytest.warns(DeprecationWarning, match="RunFiles"):
        assert cli.RunResult is cli.RunFiles


def test_a_scenario_must_build_a_simulation(capsys):
    scenarios.scenario("not-a-sim", description="builds nothing")(lambda *, seed=0: None)
    try:
        assert cli.main(["run", "not-a-sim", "--quiet"]) == 2
        assert "expected a contextsteer.Simulation" in capsys.readouterr().err
    finally:
        scenarios.unregister("not-a-sim")


# --------------------------------------------------------------------------- bench ---


def test_bench_finds_the_source_tree(monkeypatch):
    monkeypatch.chdir(ROOT)  # found next to the package (dev tree, editable install) or here
    found = cli.find_benchmarks()
    assert found is not None and found.samefile(ROOT / "benchmarks")


def test_bench_outside_a_checkout_says_so(monkeypatch, tmp_path, capsys):
    fake = tmp_path / "site-packages" / "contextsteer" / "cli.py"
    monkeypatch.setattr(cli, "__file__", str(fake))
    monkeypatch.chdir(tmp_path)
    assert cli.find_benchmarks() is None
    assert cli.main(["bench"]) == 1
    assert "only with the source tree" in capsys.readouterr().err


def test_bench_ignores_another_projects_benchmarks(monkeypatch, tmp_path, capsys):
    fake = tmp_path / "site-packages" / "contextsteer" / "cli.py"
    monkeypatch.setattr(cli, "__file__", str(fake))
    other = tmp_path / "other"
    (other / "benchmarks").mkdir(parents=True)
    (other / "benchmarks" / "bench_x.py").write_text("raise SystemExit('ran another project')\n")
    (other / "pyproject.toml").write_text(
        '[tool.something]\nname = "contextsteer"\n[project]\nname = "other"\n'
    )
    monkeypatch.chdir(other)
    assert cli.find_benchmarks() is None
    assert cli.main(["bench"]) == 1
    assert "only with the source tree" in capsys.readouterr().err
    # the same folder as contextsteer's checkout is found
    (other / "pyproject.toml").write_text('[project]\nname = "contextsteer"\n')
    assert cli.find_benchmarks() == other / "benchmarks"


# ---------------------------------------------------------- with a real Simulation ---


def small_track(*, agents=3, slots=8, seed=0):
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    world = cs.World()
    world.add_polyline(np.c_[100 * np.cos(t), 60 * np.sin(t)], closed=True)
    world.add_polyline(np.c_[80 * np.cos(t), 40 * np.sin(t)], closed=True)
    track = cs.Path(np.c_[90 * np.cos(t), 50 * np.sin(t)], closed=True)
    cars = cs.Agents(agents, slots=slots, seed=seed)
    cars.add(
        track.point_at(np.arange(agents) * 20.0), radius=2.0, max_speed=25.0, heading=np.pi / 2
    )
    steering = cs.Steering(
        [cs.FollowPath(track, look_ahead=15), cs.WallDanger(look_ahead=12)], rotate=True
    )
    return cs.Simulation(world, cars, steering, motion=cs.Lerp(steer_force=0.1))


def test_run_with_a_real_simulation(tmp_path):
    scenarios.scenario("small-track", description="cars on an ellipse", steps=40, dt=1 / 30)(
        small_track
    )
    try:
        code = cli.main(
            [
                "run",
                "small-track",
                "--agents",
                "2",
                "--frames",
                "2",
                "--quiet",
                "--out",
                str(tmp_path),
            ]
        )
    finally:
        scenarios.unregister("small-track")
    assert code == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["steps"] == 40 and metrics["agents"] == 2
    assert set(metrics["counters"]) >= {"wall_contacts", "overlaps"}
    assert len(metrics["counters"]["wall_contacts"]["per_agent"]) == 2
    assert metrics["trajectory"]["mean_speed"] > 0


def test_console_script_points_at_main():
    tomllib = pytest.importorskip("tomllib")
    pyproject = ROOT / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    module, _, attr = scripts["contextsteer"].partition(":")
    assert (module, attr) == ("contextsteer.cli", "main")
    assert callable(getattr(cli, attr))


def test_make_figures_writes_the_readme_pictures(tmp_path):
    script = ROOT / "tools" / "make-figures"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, str(script), "--only", "context_map", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "context_map.png").read_bytes()[:4] == b"\x89PNG"


# ------------------------------------------------------------- the main job, end to end ---


def test_contextsteer_run_racetrack_end_to_end(tmp_path):
    """`contextsteer run racetrack` in a fresh process, in a temp dir, small sizes."""
    proc = run_command(
        "run",
        "racetrack",
        "--agents",
        "4",
        "--steps",
        "120",
        "--frames",
        "3",
        "--seed",
        "2",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out" / "racetrack"  # the default --out, relative to cwd
    assert (out / "scene.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "animation.gif").read_bytes()[:6] in (b"GIF89a", b"GIF87a")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["scenario"] == "racetrack" and metrics["steps"] == 120
    assert metrics["parameters"] == {"agents": 4, "seed": 2}
    assert metrics["agents"] == 4
    m = metrics["metrics"]
    assert set(m) >= {
        "collisions",
        "min_clearance",
        "path_length",
        "heading_jitter",
        "effort",
        "stuck",
        "composite",
        "progress",
        "laps",
        "lap_time",
        "overtakes",
    }
    assert m["steps"] == 120 and m["collisions"]["agent_wall"] == 0
    assert m["progress"]["min"] > 0  # every car moved forward along the track
    s = metrics["report"]
    assert set(s) == {
        "estimated_lap_time",
        "laps",
        "best_lap_time",
        "last_lap_time",
        "max_speed",
        "wall_contacts",
        "overtakes",
        "overlaps",
    }
    assert len(s["laps"]) == 4 and len(s["max_speed"]) == 4
    assert "racetrack: 120 steps" in proc.stdout


def test_list_shows_every_scenario():
    proc = run_command("list")
    assert proc.returncode == 0
    for name in (
        "racetrack",
        "corridor",
        "flock",
        "oncoming",
        "crossing",
        "hallway",
        "bottleneck",
        "doorway",
        "circle",
    ):
        assert any(line.startswith(name + " ") for line in proc.stdout.splitlines()), name


def test_sweep_prints_a_summary_and_writes_every_run(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    code = cli.main(
        [
            "sweep",
            "oncoming",
            "-p",
            "slots=8,16",
            "--seeds",
            "2",
            "--steps",
            "30",
            "--workers",
            "1",
            "--key",
            "metrics.composite",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "oncoming: 4 runs (2 combinations x 2 seeds)" in text and "metrics.composite" in text
    doc = json.loads(out.read_text())
    assert [(r["params"]["slots"], r["seed"]) for r in doc["runs"]] == [
        (8, 0),
        (8, 1),
        (16, 0),
        (16, 1),
    ]
    direct = cs.sweep(
        "oncoming", {"slots": [8, 16]}, seeds=2, steps=30, executor="serial", progress=False
    )
    assert [r["result"]["metrics"] for r in doc["runs"]] == [r.result["metrics"] for r in direct]
    assert [row["slots"] for row in doc["summary"]] == [8, 16]
    assert doc["summary"][0]["metrics.composite"]["n"] == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sweep", "oncoming", "-p", "slots"], "NAME=V1,V2"),
        (["sweep", "oncoming", "-p", "slots=8", "-p", "slots=16"], "given twice"),
        (["sweep", "oncoming", "-p", "wings=1"], "does not take 'wings'"),
        (["sweep", "no-such-scenario"], "unknown scenario"),
        (["sweep", "oncoming", "--seeds", "0"], "seeds must be >= 1"),
    ],
)
def test_sweep_bad_arguments_exit_2(argv, message, capsys):
    assert cli.main([*argv, "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_run_passes_builder_keywords_with_param(tmp_path, capsys):
    # -p NAME=VALUE reaches the scenario's builder (parsed like sweep's values) and is
    # recorded with the run's parameters.
    out = tmp_path / "smooth"
    argv = ["run", "oncoming", "--steps", "3", "--frames", "0", "--quiet", "--out", str(out)]
    assert cli.main([*argv, "-p", "danger=smooth", "-p", "distance=12"]) == 0
    params = json.loads((out / "metrics.json").read_text())["parameters"]
    assert params["danger"] == "smooth" and params["distance"] == 12
    capsys.readouterr()
    for bad, message in [
        (["-p", "danger"], "expects NAME=VALUE"),
        (["-p", "=smooth"], "expects NAME=VALUE"),
        (["-p", "seed=3"], "use --seed"),
        (["-p", "danger=smooth", "-p", "danger=agent"], "danger given twice"),
        (["-p", "warp=9"], "does not take 'warp'"),
        (
            ["-p", "danger=orca"],
            "'velocity', 'counterflow', 'smooth', 'plain' or 'agent'",
        ),  # the builder refuses
    ]:
        assert cli.main([*argv, *bad]) == 2
        assert message in capsys.readouterr().err


# ------------------------------------------------------------- fuzzed run options ---


@pytest.mark.parametrize(
    "option, message",
    [
        # Each used to run the whole simulation and then fail: dpi 0.4 rounded to 0, a
        # GIF delay of 100000 cs overflowed, a 70000 px frame, 10**9 frames (linspace of
        # 8 GB); fps 500 wrote a 0 cs delay (viewers play it at 10 fps).
        (["--dpi", "0.4"], "argument --dpi: dpi must be in [10, 1000], got 0.4"),
        (["--dpi", "nan"], "argument --dpi: dpi must be in [10, 1000], got nan"),
        (["--dpi", "1001"], "argument --dpi: dpi must be in [10, 1000], got 1001"),
        (["--fps", "0.001"], "argument --fps: a GIF frame delay must be 2 to 65535 centiseconds"),
        (["--fps", "500"], "argument --fps: a GIF frame delay must be 2 to 65535 centiseconds"),
        (["--size", "16x70000"], "argument --size: size must be W or WxH in pixels, each in "),
        (["--size", "8193"], "each in [16, 8192], got '8193'"),
        (["--frames", "10001"], "argument --frames: frames must be in [0, 10,000], got 10001"),
        (["--frames", "1000000000"], "frames must be in [0, 10,000], got 1000000000"),
    ],
)
def test_run_refuses_image_options_out_of_range_up_front(
    toy_scenario, tmp_path, option, message, capsys
):
    out = tmp_path / "o"
    assert cli.main(["run", "toy", "--steps", "3", "--quiet", "--out", str(out), *option]) == 2
    err = capsys.readouterr().err
    assert message in err and "usage: contextsteer run" in err
    assert not out.exists()  # refused before the run


def test_run_accepts_the_ends_of_the_ranges(toy_scenario, tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "o"
    argv = ["run", "toy", "--steps", "2", "--quiet", "--out", str(out), "--frames", "1"]
    assert cli.main([*argv, "--dpi", "10", "--fps", "66", "--size", "16x64"]) == 0
    with Image.open(out / "animation.gif") as gif:
        assert gif.info["duration"] == 20  # 100 / 66 = 1.5 -> 2 cs, in ms
    assert cli.main([*argv, "--fps", "100", "--frames", "0"]) == 0  # no animation: no GIF


def test_write_run_draws_at_most_the_recorded_frames(tmp_path):
    from PIL import Image

    # A 4-step run records its start and every step: 5 frames, so frames=10**15 draws
    # those 5 (it used to build a linspace of 10**15 + 1 samples first: MemoryError).
    result = cs.run_scenario("oncoming", steps=4, records=4, maps=True)
    files = cli.write_run(result, tmp_path, frames=10**15, progress=False, size=64)
    with Image.open(files.animation) as gif:
        assert gif.n_frames == 5
    with pytest.raises(ValueError, match="frames: expected >= 0, got -1"):
        cli.write_run(result, tmp_path, frames=-1, progress=False)


def test_run_into_an_old_directory_leaves_no_stale_animation(toy_scenario, tmp_path, monkeypatch):
    from contextsteer import video

    out = tmp_path / "o"
    argv = ["run", "toy", "--quiet", "--size", "64", "--out", str(out)]
    assert cli.main([*argv, "--steps", "6", "--frames", "2", "--seed", "1"]) == 0
    assert (out / "animation.gif").is_file()
    # --frames 0: no animation, and not the one of the run before.
    assert cli.main([*argv, "--steps", "3", "--frames", "0", "--seed", "2"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json", "scene.png"]
    # Encoding fails: the metrics are this run's (written first), no animation is left.
    assert cli.main([*argv, "--steps", "6", "--frames", "2", "--seed", "1"]) == 0

    def broken(images, path, **kwargs):
        Path(path).write_bytes(b"GIF89a")  # a half-written file
        raise RuntimeError("encoder broke")

    monkeypatch.setattr(video, "write", broken)
    assert cli.main([*argv, "--steps", "4", "--frames", "2", "--seed", "3"]) == 1
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["steps"], metrics["parameters"]["seed"]) == (4, 3)
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json", "scene.png"]


# --------------------------------------------------------------- fuzzed sweep keys ---


def _sweep_argv(out, *extra):
    return ["sweep", "oncoming", "-p", "slots=8,16", "--seeds", "1", "--steps", "5"] + [
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.parametrize("key, kind", [("metrics.collisions", "dict"), ("scenario", "str")])
def test_sweep_key_that_is_not_a_number_keeps_the_runs(tmp_path, key, kind, capsys):
    # The summary cast a dict or a string to float after every run, before --out was
    # written: a traceback, and the sweep was lost.
    out = tmp_path / "sweep.json"
    assert cli.main(_sweep_argv(out, "--key", key)) == 2
    err = capsys.readouterr().err
    assert (
        f"error: --key: summary: {key!r} must be a number in every run's result, got a {kind}"
        in err
    )
    doc = json.loads(out.read_text())
    assert [r["params"]["slots"] for r in doc["runs"]] == [8, 16] and doc["summary"] is None


def test_sweep_warns_about_a_key_no_run_has(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    assert cli.main(_sweep_argv(out, "--key", "metrics.compsite")) == 0
    captured = capsys.readouterr()
    assert "warning: no run's result has the key 'metrics.compsite'" in captured.err
    assert json.loads(out.read_text())["summary"][0]["metrics.compsite"]["n"] == 0


def test_sweep_checks_the_out_folder_before_running(tmp_path, capsys):
    missing = tmp_path / "missing" / "sweep.json"
    assert cli.main(_sweep_argv(missing)) == 2
    assert f"--out {missing}: the directory {missing.parent} does not exist" in (
        capsys.readouterr().err
    )
    assert cli.main(_sweep_argv(tmp_path)) == 2
    assert "is a directory, expected a file" in capsys.readouterr().err


def test_run_checks_the_out_folder_takes_its_files_before_running(tmp_path, capsys, monkeypatch):
    """--out whose metrics.json was a folder, or under /proc, ran the whole simulation and
    then wrote nothing (fuzz round 15)."""
    ran = []
    monkeypatch.setattr("contextsteer.run.run_simulation", lambda *a, **k: ran.append(1))
    taken = tmp_path / "taken"
    (taken / "metrics.json").mkdir(parents=True)
    for out, text in (
        (taken, "metrics.json is a directory"),
        (Path("/proc/cs-run"), "cannot write there"),
    ):
        assert cli.main(["run", "oncoming", "--steps", "5", "--out", str(out), "--quiet"]) == 2
        assert f"--out {out}: " in (err := capsys.readouterr().err) and text in err, err
    assert ran == []


def test_sweep_checks_the_out_file_can_be_written_before_running(tmp_path, capsys):
    """--out /proc/sweep.json ran every run, then lost them all ('No such file')."""
    assert cli.main(_sweep_argv(Path("/proc/sweep.json"))) == 2
    assert "--out /proc/sweep.json cannot be written" in capsys.readouterr().err
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if not os.access(ro, os.W_OK):  # root writes anywhere: nothing to test then
            assert cli.main(_sweep_argv(ro / "sweep.json")) == 2
            capsys.readouterr()
    finally:
        ro.chmod(0o700)
    assert not (ro / "sweep.json").exists()


def test_sweep_prints_its_table_when_the_file_cannot_be_written(tmp_path, capsys, monkeypatch):
    """A write that fails after the runs (a full disk) failed the command and dropped the
    table too."""
    out = tmp_path / "sweep.json"

    def broken(path, doc, command):
        print(f"contextsteer {command}: error: disk full", file=sys.stderr)
        return 1

    monkeypatch.setattr(cli, "_write_json", broken)
    assert cli.main(_sweep_argv(out)) == 1
    captured = capsys.readouterr()
    assert "disk full" in captured.err
    assert "(mean ± std)" in captured.out


@pytest.mark.parametrize(
    "argv, text",
    [
        (["run", "oncoming", "--out", ""], "expected a path, got an empty one"),
        (["sweep", "oncoming", "-p", "distance=8,9", "--out", " "], "expected a path"),
        (["tune", "oncoming", "-p", "distance=8:16", "--seed", str(2**32)], "seed must be in"),
        (["run", "oncoming", "--seed", str(2**64)], "seed must be in"),
    ],
)
def test_empty_out_paths_and_seeds_beyond_their_range_are_usage_errors(argv, text, capsys):
    assert cli.main(argv) == 2
    assert text in capsys.readouterr().err


# ------------------------------------------------------------------------ Ctrl-C ---


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    def interrupted(args, parser):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_list", interrupted)
    try:
        code = cli.main(["list"])
    except KeyboardInterrupt:  # what main did: a traceback from the command line
        code = None
    assert code == 130
    assert capsys.readouterr().err == "contextsteer: interrupted\n"


@pytest.mark.parametrize(
    "first, second",
    [("SIGINT", "SIGINT"), ("SIGINT", "SIGTERM"), ("SIGTERM", "SIGINT"), ("SIGTERM", "SIGTERM")],
)
def test_a_second_stop_signal_of_the_same_stop_does_not_cut_the_keeping_of_results(
    monkeypatch, first, second
):
    """`timeout -s INT` signals the process and then its group, and supervisors send INT
    then TERM: the second signal landed while a sweep wrote its finished runs, and they
    were all lost (fuzz rounds 20, 21). A signal within 2 s of the first is the same
    stop."""
    import os
    import signal
    import time

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is handled by the test runner here")

    term = signal.getsignal(signal.SIGTERM)

    def command(args, parser):
        try:
            os.kill(os.getpid(), getattr(signal, first))
            time.sleep(1)  # (the KeyboardInterrupt lands here)
        except KeyboardInterrupt:
            os.kill(os.getpid(), getattr(signal, second))  # while results are kept
            time.sleep(0.1)
            return 7
        return 0

    monkeypatch.setattr(cli, "_cmd_list", command)
    assert cli.main(["list"]) == 7
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == term


def test_commands_run_with_stderr_closed(tmp_path):
    """With stderr closed (`2>&-`) Python's sys.stderr is None, and the progress bars
    raised AttributeError: run, sweep and tune exited 1 and wrote nothing (fuzz round
    20)."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; from contextsteer.cli import main; assert sys.stderr is None\n"
        "sys.exit(main(sys.argv[1:]))"
    )
    for argv, made in (
        (["run", "oncoming", "--steps", "3", "--frames", "0", "--out", "run"], "run/metrics.json"),
        (
            [
                "sweep",
                "oncoming",
                "-p",
                "slots=8",
                "--steps",
                "3",
                "--workers",
                "1",
                "--out",
                "sweep.json",
            ],
            "sweep.json",
        ),
        (
            [
                "tune",
                "oncoming",
                "-p",
                "distance=10:12",
                "--trials",
                "2",
                "--steps",
                "3",
                "--workers",
                "1",
                "--out",
                "tune.json",
            ],
            "tune.json",
        ),
    ):
        done = subprocess.run(
            [sys.executable, "-c", code, *argv],
            cwd=tmp_path,
            preexec_fn=lambda: os.close(2),
            capture_output=False,
            stdout=subprocess.DEVNULL,
            timeout=120,
        )
        assert done.returncode == 0, argv
        assert (tmp_path / made).exists(), argv
        # And with stderr on a full disk: the bar's OSError stopped them too (round 21).
        if os.path.exists("/dev/full"):
            (tmp_path / made).unlink()
            with open("/dev/full", "w") as full:
                done = subprocess.run(
                    [sys.executable, "-m", "contextsteer", *argv],
                    cwd=tmp_path,
                    stdout=subprocess.DEVNULL,
                    stderr=full,
                    timeout=120,
                )
            assert done.returncode == 0, argv
            assert (tmp_path / made).exists(), argv


def test_a_full_disk_keeps_the_earlier_scene_and_names_the_file(tmp_path, monkeypatch, capsys):
    """savefig wrote scene.png in place: a full disk left a truncated PNG over the earlier
    one; and the GIF's error named no file (fuzz round 20)."""
    import io
    import os

    from PIL import Image

    from contextsteer import video

    argv = ["run", "oncoming", "--steps", "3", "--frames", "0", "--quiet", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    before = (tmp_path / "scene.png").read_bytes()

    def full(fd):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", full)
        assert cli.main(argv) == 1
    assert (tmp_path / "scene.png").read_bytes() == before
    Image.open(io.BytesIO(before)).verify()
    assert "No space left on device" in capsys.readouterr().err

    def gif_full(images, path, fps):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(video, "_gif", gif_full)
    gif = ["run", "oncoming", "--steps", "3", "--frames", "2", "--quiet", "--out", str(tmp_path)]
    assert cli.main(gif) == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and "animation.gif" in err, err


def test_paths_an_ascii_stdout_cannot_write_are_escaped(tmp_path, monkeypatch, capsys):
    # print(f"wrote {path}") raised UnicodeEncodeError after the file was written, and
    # the sweep's table was never printed (fuzz round 20).
    import io
    import sys

    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    path = tmp_path / "αποτελέσματα.json"
    assert cli._write_json(path, {"a": 1}, "sweep") == 0
    out.flush()
    assert path.exists()
    assert "\\u03b1" in out.buffer.getvalue().decode("ascii")


def test_sweep_interrupted_writes_the_finished_runs(tmp_path, capsys, monkeypatch):
    # Ctrl-C during the third run: exit 130, and --out holds the two finished runs.
    ctrl_c_at_run(monkeypatch, 3)
    out = tmp_path / "sweep.json"
    argv = ["sweep", "oncoming", "-p", "slots=8,12,16", "--seeds", "1", "--steps", "5"]
    assert cli.main(argv + ["--workers", "1", "--quiet", "--out", str(out)]) == 130
    assert "sweep interrupted after 2 of 3 runs; wrote them to" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True and doc["total_runs"] == 3
    assert [r["params"]["slots"] for r in doc["runs"]] == [8, 12]


def test_run_takes_a_list_parameter(tmp_path):
    # -p speed=40,60 could not be given: every value was one number or one string.
    argv = ["run", "racetrack", "--agents", "2", "--steps", "3", "--frames", "0", "--quiet"]
    assert cli.main(argv + ["-p", "speed=40,60", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "metrics.json").read_text())
    assert doc["parameters"]["speed"] == [40, 60]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["sweep", "oncoming", "-p", "danger=nope", "--steps", "5"],
            "sweep: error: oncoming: danger must be",
        ),
        (
            ["sweep", "oncoming", "-p", "slots=8,2", "--steps", "5"],
            r"sweep: error: oncoming: Agents: slots must be >= 3, got 2 \(with slots=2\)",
        ),
        (
            ["tune", "oncoming", "-p", "distance=5:10", "--fix", "danger=abc", "--trials", "2"],
            "tune: error: oncoming: danger must be",
        ),
        (
            ["run", "oncoming", "-p", "distance=-3", "--frames", "0"],
            "run: error: oncoming: distance must be",
        ),
    ],
)
def test_a_value_the_scenario_refuses_is_a_usage_error_before_any_run(argv, message, capsys):
    """Exit 2 with the builder's message, as `run` does (sweep and tune ran every run and
    exited 1 with 'run 0 failed' or 'no feasible trial'), and the scenario's name once."""
    assert cli.main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert re.search(f"contextsteer {message}", err), err
    assert "oncoming: oncoming:" not in err


def test_sweep_with_a_failing_run_writes_the_others(tmp_path, capsys):
    """The pre-check tries each value with the other axes at their first value, so
    maze agents=40 with size=2 (too many for the maze) passed it; the run failed and
    the command exited without writing any of the other runs."""
    out = tmp_path / "combo.json"
    argv = ["sweep", "maze", "-p", "agents=10,40", "-p", "size=3,2", "--seeds", "1"]
    code = cli.main([*argv, "--steps", "10", "--workers", "1", "--out", str(out), "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert "1 of 4 runs failed" in err and "agents" in err
    runs = json.loads(out.read_text())["runs"]
    assert len(runs) == 4
    failed = [r for r in runs if r["error"]]
    assert [(r["params"]["agents"], r["params"]["size"]) for r in failed] == [(40, 2)]
    assert all(r["result"]["metrics"] for r in runs if not r["error"])


def test_tune_without_a_feasible_trial_writes_the_trials(tmp_path, capsys):
    pytest.importorskip("optuna")
    out = tmp_path / "infeasible.json"
    code = cli.main(
        [
            *("tune", "oncoming", "-p", "distance=10.0:16.0", "--constraint", "metrics.time"),
            *("--trials", "3", "--steps", "20", "--workers", "1", "--quiet", "--out", str(out)),
        ]
    )
    assert code == 1
    assert "no feasible complete trial" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["best_params"] is None and len(doc["trials"]) == 3
    assert all(t["constraint"] > 0 for t in doc["trials"])  # why: every one broke it


def test_run_with_a_detour_reports_its_counts_and_leads_field_scenarios_too(tmp_path, capsys):
    code = cli.main(
        ["run", "hallway", "--steps", "30", "--frames", "0", "--detour", "--quiet"]
        + ["--out", str(tmp_path / "hallway")]
    )
    assert code == 0
    report = json.loads((tmp_path / "hallway" / "metrics.json").read_text())["report"]
    assert set(report["detour"]) == {"plans", "detours", "yields"}
    # The doorway's agents follow navigation fields: the scenario is built with
    # detour=True, and the detour leads them on their fields.
    code = cli.main(
        ["run", "doorway", "--steps", "30", "--frames", "0", "--detour", "--quiet"]
        + ["--out", str(tmp_path / "doorway")]
    )
    assert code == 0
    doc = json.loads((tmp_path / "doorway" / "metrics.json").read_text())
    assert doc["parameters"]["detour"] is True
    assert set(doc["report"]["detour"]) == {"plans", "detours", "yields"}
    capsys.readouterr()
    # A field steering that cannot hand its agents over is refused, with the reason.
    for extra in (["-p", "detour=false"], ["-p", "danger=agent"]):
        code = cli.main(["run", "doorway", "--frames", "0", "--detour", "--quiet", *extra])
        assert code == 2
        assert "cannot hand them to a detour" in capsys.readouterr().err
    # A field scenario without a detour parameter names the ones that build one.
    assert cli.main(["run", "evacuation", "--frames", "0", "--detour", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "has no detour parameter" in err and "build one: bottleneck, doorway, maze" in err


def test_main_leaves_an_ignored_sigterm_ignored_and_restores_the_handler():
    """main() handles SIGTERM as Ctrl-C for the command's length; a caller that ignores
    SIGTERM keeps it ignored, and every caller gets its own handler back."""
    import signal

    from contextsteer.cli import main

    mine = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        assert main(["list"]) == 0
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN

        def handler(signum, frame):  # pragma: no cover (never sent)
            pass

        signal.signal(signal.SIGTERM, handler)
        assert main(["list"]) == 0
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, mine)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_gives_a_one_line_error():
    """`contextsteer list > /dev/full` ended with a traceback (fuzz round 14)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "contextsteer", "list"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=60,
        )
    assert proc.returncode == 1
    assert proc.stderr == "contextsteer list: error: [Errno 28] No space left on device\n"


def test_a_closed_stdout_is_no_error():
    """`contextsteer list >&-` raised AttributeError from a flush of sys.stdout, which is
    None there (a regression of the full-stdout fix, fuzz round 14)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        f"{sys.executable} -m contextsteer list >&-",
        shell=True,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr


def test_sweep_prints_its_table_on_an_ascii_stdout(tmp_path):
    """Under LC_ALL=C (or PYTHONIOENCODING=ascii) the table's "±" raised
    UnicodeEncodeError after every run (fuzz round 16)."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    argv = ["sweep", "oncoming", "-p", "slots=8", "--seeds", "1", "--steps", "3", "--workers", "1"]
    proc = subprocess.run(
        [sys.executable, "-m", "contextsteer", *argv, "--quiet", "--out", str(tmp_path / "s.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "(mean +/- std)" in proc.stdout


@pytest.mark.parametrize("name", ["seed", "seed.x"])
def test_sweep_refuses_a_seed_parameter_naming_seeds(name, capsys):
    """-p seed=1,2 was refused as "give the seed once, as seed= or in params, not both",
    after listing seed among the scenario's parameters (fuzz round 16); -p seed.x=1 as
    "seed.x is a key of the mapping seed" (fuzz round 19)."""
    assert cli.main(["sweep", "hallway", "-p", f"{name}=1,2", "--steps", "2", "--quiet"]) == 2
    assert "--param seed: the runs' seeds are 0 .. N-1; give their number with --seeds N" in (
        capsys.readouterr().err
    )
    # A parameter the scenario does not take: the list of those it does leaves seed out.
    assert cli.main(["sweep", "hallway", "-p", "SEED=1", "--steps", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "does not take 'SEED'" in err and "each run gets its own seed" in err
    assert "seed," not in err.split("it takes:")[1]


def test_tune_refuses_a_seed_parameter_naming_seeds(capsys):
    for flag in ("-p", "--fix"):
        assert (
            cli.main(
                [
                    "tune",
                    "hallway",
                    flag,
                    "seed=0:5" if flag == "-p" else "seed=3",
                    "-p",
                    "slots=8,16",
                ]
            )
            == 2
        )
        assert (
            "seed: the runs' seeds are 0 .. N-1; give their number with --seeds N"
            in capsys.readouterr().err
        )


def test_tune_fix_reads_a_comma_separated_value_as_a_list_as_run_does(tmp_path, capsys):
    """run -p speed=20,30 took a list where tune --fix speed=20,30 was refused
    (fuzz round 26)."""
    pytest.importorskip("optuna")
    out = tmp_path / "t.json"
    argv = ["tune", "racetrack", "-p", "slots=8,16", "--fix", "speed=20,30", "--trials", "2"]
    assert cli.main([*argv, "--steps", "30", "--out", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text())["best_params"]["speed"] == [20, 30]
