"""The ``contextsteer`` command (also ``python -m contextsteer``).

Subcommands:

- ``contextsteer run [SCENARIO] [--agents N] [--steps S] [--slots K] [--seed X] [--preset P]
  [-p NAME=VALUE ...] [--out DIR] [--frames F] [--size W[xH]] [--dpi DPI] [--format gif|mp4]
  [--fps FPS]`` builds a registered scenario (default ``racetrack``; ``--preset godot``: the
  Godot recipe's own parameters; ``-p``: any other keyword of its builder, such as
  ``-p danger=smooth``, or one key of a mapping keyword as ``NAME.KEY``, such as
  ``-p changes.horizon=3``), steps it headless with a progress bar and writes
  ``DIR/scene.png`` (final frame with trajectories), ``DIR/animation.gif`` (960 px wide by
  default; ``.mp4`` with ``--format mp4`` and ffmpeg on the PATH) and ``DIR/metrics.json``
  (with a ``schema_version``).
- ``contextsteer sweep SCENARIO -p NAME=V1,V2 ... [--seeds N] [--steps S] [--workers W]
  [--key KEY ...] [--out FILE]`` runs a parameter sweep (:func:`contextsteer.sweep`) over
  local processes, prints the mean and spread over seeds of each key per parameter set and
  optionally writes every run to a JSON file.
- ``contextsteer tune SCENARIO -p NAME=LOW:HIGH[:log] -p NAME=V1,V2 ... [--fix NAME=V]
  [--key KEY] [--constraint KEY] [--maximize] [--trials N] [--seeds N] [--steps S]
  [--sampler tpe|random] [--seed S] [--workers W] [--out FILE]`` tunes parameters with
  Optuna (:func:`contextsteer.tune`, the ``tune`` extra) and prints the best parameter
  set.
- ``contextsteer list`` lists the scenarios.
- ``contextsteer bench [--quick] [NAME ...]`` runs the benchmark scripts of a source
  checkout (``benchmarks/bench_*.py``).

Bad arguments print a usage message and exit with status 2; :func:`main` returns the exit
status instead of raising, so it can be called in-process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import persist
from ._json import jsonable

if TYPE_CHECKING:
    from .run import RunResult
    from .simulation import Simulation

__all__ = ["RunFiles", "main", "records_for", "write_run"]

DEFAULT_SCENARIO = "racetrack"


# ------------------------------------------------------------------------ argument types ---


#: Largest --steps (a run of more steps is a soak test: script it) and --slots.
MAX_STEPS = 10**9
MAX_SLOTS = 1024
#: Largest --frames, --size (pixels a side) and range of --dpi of ``contextsteer run``
#: (below about 4 dpi FreeType cannot draw the labels: "invalid ppem value").
MAX_FRAMES = 10_000
MAX_SIDE = 8192
DPI_RANGE = (10.0, 1000.0)


def _int_at_least(low: int, what: str, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"in [{low}, {high:,}]" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"{what} must be {bound}, got {value}")
        return value

    parse.__name__ = what  # argparse names the type in "invalid <name> value" messages
    return parse


def _path(text: str) -> Path:
    """``--out``: a path; an empty one (the current folder, unasked) is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return Path(text)


def _size(text: str) -> int | tuple[int, int]:
    """``--size``: ``W`` or ``WxH`` in pixels, each in [16, MAX_SIDE]."""
    parts = text.lower().split("x")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or min(values) < 16 or max(values) > MAX_SIDE:
        raise argparse.ArgumentTypeError(
            f"size must be W or WxH in pixels, each in [16, {MAX_SIDE}], got {text!r}"
        )
    return values[0] if len(values) == 1 else (values[0], values[1])


_size.__name__ = "size"


def _positive_float(what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") from None
        if not value > 0 or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{what} must be > 0, got {text}")
        return value

    parse.__name__ = what
    return parse


def _float_in(low: float, high: float, what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") from None
        if not low <= value <= high:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{what} must be in [{low:g}, {high:g}], got {text}")
        return value

    parse.__name__ = what
    return parse


def _fps(text: str) -> float:
    """``--fps``: a rate that a GIF or an MP4 can store (checked again with --format)."""
    from . import video

    value = _positive_float("fps")(text)
    problems = [_fps_problem(value, f) for f in video.FORMATS]
    if None not in problems:
        raise argparse.ArgumentTypeError("; ".join(p for p in problems if p))
    return value


def _fps_problem(fps: float, format: str) -> str | None:
    """Why an animation of ``format`` cannot play at ``fps`` (None when it can)."""
    from . import video

    try:
        video.check_fps(fps, format)
    except ValueError as exc:
        return str(exc).removeprefix("write: ")
    return None


_fps.__name__ = "fps"


def _out_file(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Exit status 2 (after a usage message) when ``--out FILE`` cannot be written: its
    folder is missing or it is a folder; else 0. Checked before a long sweep or tuning."""
    out: Path | None = args.out
    problem = None
    if out is not None and out.is_dir():
        problem = f"--out {out} is a directory, expected a file"
    elif out is not None and not out.resolve().parent.is_dir():
        problem = f"--out {out}: the directory {out.parent} does not exist"
    elif out is not None:
        # Can it be written? Opened for appending (an existing file keeps its bytes; one
        # made here is removed again), so a read-only folder fails now, not after the runs.
        existed = out.exists()
        try:
            with open(out, "a"):
                pass
        except OSError as exc:
            problem = f"--out {out} cannot be written: {exc.strerror or exc}"
        else:
            if not existed:
                out.unlink()
    if problem is None:
        return 0
    parser.print_usage(sys.stderr)
    print(f"contextsteer {args.command}: error: {problem}", file=sys.stderr)
    return 2


def _write_json(path: Path, doc: dict, command: str) -> int:
    """Write ``doc`` as JSON to ``path`` for ``contextsteer <command> --out``; the exit
    status (1 with a message when the file cannot be written)."""
    try:
        # Whole or not at all: a failed write (a full disk) keeps an earlier file.
        persist.write_text(path, json.dumps(jsonable(doc), indent=1) + "\n", "--out")
    except OSError as exc:
        print(f"contextsteer {command}: error: {exc}", file=sys.stderr)
        return 1
    _say(f"wrote {path}")
    return 0


def _say(text: str) -> None:
    """Print ``text`` to stdout, characters it cannot encode escaped: a path in Greek to
    an ASCII stdout (PYTHONIOENCODING=ascii) raised UnicodeEncodeError after the files
    were written, and the sweep's table was never printed (fuzz round 20)."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
    print(text)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``contextsteer`` command."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="contextsteer",
        description="Context-based steering: run scenarios, sweep and tune their "
        "parameters, list them, run benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"contextsteer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run",
        help="run a scenario headless and write a picture, an animation and metrics",
        description="Run a scenario headless; write DIR/scene.png, DIR/animation.gif (or "
        ".mp4) and DIR/metrics.json.",
    )
    run.add_argument(
        "scenario",
        nargs="?",
        default=DEFAULT_SCENARIO,
        help=f"scenario name (default: {DEFAULT_SCENARIO}; see 'contextsteer list')",
    )
    from .scenarios import MAX_SCENARIO_AGENTS

    run.add_argument(
        "--agents",
        type=_int_at_least(1, "agents", MAX_SCENARIO_AGENTS),
        metavar="N",
        help="number of agents (default: the scenario's)",
    )
    run.add_argument(
        "--steps",
        type=_int_at_least(1, "steps", MAX_STEPS),
        metavar="S",
        help="number of steps (default: the scenario's)",
    )
    run.add_argument(
        "--slots",
        type=_int_at_least(3, "slots", MAX_SLOTS),
        metavar="K",
        help="slots per agent, >= 3 (default: the scenario's)",
    )
    run.add_argument(
        "--seed",
        type=_int_at_least(0, "seed", 2**64 - 1),
        default=0,
        metavar="X",
        help="random seed (default: 0)",
    )
    run.add_argument(
        "--preset",
        default=None,
        metavar="P",
        help="a named preset of the scenario (racetrack: 'godot', the Godot "
        "recipe's own parameters, at its own steps and dt)",
    )
    run.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any other keyword of the scenario's builder, e.g. -p danger=smooth for the "
        "crowd scenarios, or NAME.KEY for one key of a mapping keyword, e.g. -p "
        "changes.horizon=3 (repeatable; numbers and true/false are parsed, and a "
        "comma-separated value is a list, e.g. -p speed=40,60 for the racetrack)",
    )
    run.add_argument(
        "--out",
        type=_path,
        default=None,
        metavar="DIR",
        help="output directory (default: out/SCENARIO)",
    )
    run.add_argument(
        "--frames",
        type=_int_at_least(0, "frames", MAX_FRAMES),
        default=100,
        metavar="F",
        help="animation frames (at most the run's steps are drawn); 0 writes no "
        "animation (default: 100)",
    )
    run.add_argument(
        "--size",
        type=_size,
        default=960,
        metavar="W[xH]",
        help="animation size in pixels: a width (height from the world's "
        f"aspect) or WxH, 16 to {MAX_SIDE} a side, odd sides rounded up to even ones as "
        "video encoders need (default: 960)",
    )
    run.add_argument(
        "--dpi",
        type=_float_in(*DPI_RANGE, "dpi"),
        default=100.0,
        metavar="DPI",
        help="dots per inch of scene.png and the animation, 10 to 1000; at a given size "
        "a higher dpi draws thicker lines and larger text (default: 100)",
    )
    run.add_argument(
        "--format",
        choices=["gif", "mp4"],
        default="gif",
        help="animation format; mp4 needs ffmpeg on the PATH (default: gif)",
    )
    run.add_argument(
        "--fps",
        type=_fps,
        default=15.0,
        metavar="FPS",
        help="animation frames per second; a GIF plays at most 50 (default: 15)",
    )
    run.add_argument(
        "--detour",
        action="store_true",
        help="update a contextsteer.Detour before every step: agents that stall are routed "
        "round the agents standing in their way, and those make way where nothing else "
        "helps (a scenario whose agents follow navigation fields and that takes a detour "
        "parameter, such as doorway, maze and bottleneck, is built with detour=true and led "
        "on its fields; evacuation and station are refused; the counts join metrics.json's "
        "report)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    run.set_defaults(handler=_cmd_run, subparser=run)

    sw = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of parameters and seeds",
        description="Run a scenario for every combination of parameter values and every seed "
        "(local processes), then print the mean and standard deviation over seeds "
        "of the chosen metrics per combination.",
    )
    sw.add_argument("scenario", help="scenario name (see 'contextsteer list')")
    sw.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a parameter and its values (repeatable; numbers are parsed)",
    )
    sw.add_argument(
        "--seeds",
        type=_int_at_least(1, "seeds"),
        default=3,
        metavar="N",
        help="seeds 0..N-1 per combination (default: 3)",
    )
    sw.add_argument(
        "--steps",
        type=_int_at_least(1, "steps", MAX_STEPS),
        metavar="S",
        help="steps per run (default: the scenario's)",
    )
    sw.add_argument(
        "--workers",
        type=_int_at_least(1, "workers"),
        metavar="W",
        help="processes (default: the CPU count; 1 runs in this process)",
    )
    sw.add_argument(
        "--key",
        action="append",
        default=None,
        metavar="KEY",
        help="result value to summarise, a dotted path (repeatable; default: "
        "metrics.composite and metrics.collisions.total)",
    )
    sw.add_argument(
        "--out",
        type=_path,
        default=None,
        metavar="FILE",
        help="write every run and the summary to this JSON file",
    )
    sw.add_argument("--quiet", action="store_true", help="no progress bar")
    sw.set_defaults(handler=_cmd_sweep, subparser=sw)

    tn = sub.add_parser(
        "tune",
        help="tune a scenario's parameters with Optuna (the 'tune' extra)",
        description="Search a scenario's parameters with Optuna (TPE or random sampling, a "
        "median pruner over seeds) and print the best parameter set. Ranges are "
        "NAME=LOW:HIGH (integers when both are ints; NAME=LOW:HIGH:log for a "
        "log scale), choices NAME=V1,V2,...",
    )
    tn.add_argument("scenario", help="scenario name (see 'contextsteer list')")
    tn.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=LOW:HIGH",
        help="a tuned parameter: a range LOW:HIGH[:log] or choices V1,V2 (repeatable)",
    )
    tn.add_argument(
        "--fix",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a fixed parameter (repeatable); V1,V2 is a list, as run -p reads it",
    )
    tn.add_argument(
        "--key",
        default="metrics.composite",
        metavar="KEY",
        help="objective: a dotted result key (default: metrics.composite)",
    )
    tn.add_argument("--maximize", action="store_true", help="maximise the objective")
    tn.add_argument(
        "--constraint",
        default=None,
        metavar="KEY",
        help="a result key whose mean over seeds must be <= 0 (e.g. metrics.collisions.agent_wall)",
    )
    tn.add_argument(
        "--trials",
        type=_int_at_least(1, "trials"),
        default=20,
        metavar="N",
        help="trials (default: 20)",
    )
    tn.add_argument(
        "--seeds",
        type=_int_at_least(1, "seeds"),
        default=2,
        metavar="N",
        help="seeds 0..N-1 per trial, pruned after each (default: 2)",
    )
    tn.add_argument(
        "--steps",
        type=_int_at_least(1, "steps", MAX_STEPS),
        metavar="S",
        help="steps per run (default: the scenario's)",
    )
    tn.add_argument(
        "--sampler", choices=["tpe", "random"], default="tpe", help="Optuna sampler (default: tpe)"
    )
    tn.add_argument(
        "--seed",
        type=_int_at_least(0, "seed", 2**32 - 1),  # Optuna's samplers take 32 bits
        default=0,
        metavar="X",
        help="sampler seed, 0 to 2**32 - 1 (default: 0); the trials also depend on --workers "
        "(the batch of trials proposed together): give both to reproduce a study",
    )
    tn.add_argument(
        "--workers",
        type=_int_at_least(1, "workers"),
        metavar="W",
        help="processes, and trials proposed together (default: the CPU count; 1 runs in "
        "this process)",
    )
    tn.add_argument(
        "--out",
        type=_path,
        default=None,
        metavar="FILE",
        help="write every trial and the best parameters to this JSON file",
    )
    tn.add_argument("--quiet", action="store_true", help="no progress bar")
    tn.set_defaults(handler=_cmd_tune, subparser=tn)

    listing = sub.add_parser(
        "list", help="list the available scenarios", description="List the available scenarios."
    )
    listing.set_defaults(handler=_cmd_list, subparser=listing)

    bench = sub.add_parser(
        "bench",
        help="run the benchmark suite (source checkout only)",
        description="Run the benchmark scripts benchmarks/bench_*.py of a source checkout.",
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="pass --quick to the scripts that take it (smaller sizes)",
    )
    bench.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="only these benchmarks (e.g. 'maps' for bench_maps.py)",
    )
    bench.set_defaults(handler=_cmd_bench, subparser=bench)
    return parser


# -------------------------------------------------------------------------------- run ---


class RunFiles(NamedTuple):
    """Files written by :func:`write_run` and the run they came from."""

    out_dir: Path
    scene: Path  #: scene.png
    animation: Path | None  #: animation.gif/.mp4, None when no frames were asked for
    metrics_file: Path  #: metrics.json
    metrics: dict  #: the content of metrics.json (``result.to_dict()``)
    result: Any = None  #: the :class:`contextsteer.RunResult`


def _figsize(sim: Simulation, width: float) -> tuple[float, float]:
    """A figure size that fits the world's aspect ratio (4:3 without a world)."""
    bounds = None if sim.world is None else sim.world.bounds
    if not bounds or bounds[2] <= bounds[0]:
        return width, 0.75 * width
    aspect = (bounds[3] - bounds[1]) / (bounds[2] - bounds[0])
    return width, min(1.2 * width, max(0.4 * width, aspect * width + 0.5))


def records_for(steps: int, frames: int) -> int:
    """Frames a run keeps for :func:`write_run`: at least ``frames`` (the animation's) and
    up to 600 trajectory samples, at most one a step."""
    return min(int(steps), max(int(frames), 600))


_SEED_PARAM = "seed: the runs' seeds are 0 .. N-1; give their number with --seeds N"
"""Why sweep and tune refuse a seed parameter (each run gets its own seed)."""


def _plus_minus() -> str:
    """ "±", or "+/-" where stdout cannot write it (LC_ALL=C, PYTHONIOENCODING=ascii: the
    sweep's table raised UnicodeEncodeError after every run)."""
    try:
        "±".encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return "+/-"
    return "±"


def _out_problem(out: Path) -> str | None:
    """Why ``run --out`` could not write its files into ``out`` (made now if missing), or
    None: a file name of the run taken by a folder, or a folder that takes no file."""
    from . import video

    for name in ("metrics.json", "scene.png", *(f"animation.{s}" for s in video.FORMATS)):
        if (out / name).is_dir():
            return f"{out / name} is a directory"
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        return f"cannot write there ({exc.strerror or exc})"
    return None


def write_run(
    result: RunResult,
    out_dir: str | os.PathLike[str],
    *,
    frames: int = 100,
    progress: bool = True,
    dpi: int = 100,
    size: int | tuple[int, int] = 960,
    format: str = "gif",
    fps: float = 15.0,
) -> RunFiles:
    """Draw and write a finished run: ``scene.png``, ``animation.gif`` (or ``.mp4``) and
    ``metrics.json`` (the run's JSON form, :meth:`contextsteer.RunResult.to_dict`).

    Parameters
    ----------
    result : RunResult
        A run with its simulation and its recorded frames (``records`` > 0; ``maps=True``
        for rays in the animation), e.g. ``cs.run_scenario(name, records=600, maps=True)``.
    out_dir : path-like
        Created if missing; existing files of the same names are replaced, and an
        ``animation.gif``/``.mp4`` this call does not write (``frames=0``, the other
        format, or encoding failed) is removed. ``metrics.json`` is written first.
    frames : int
        Animation frames after the first, picked evenly from the recorded ones (at most
        every recorded frame); 0 writes no animation.
    progress : bool
        Show a tqdm progress bar on stderr while encoding.
    dpi : int
        Resolution of scene.png, and the dots per inch of the animation (at its pixel
        size, a higher dpi draws thicker lines and larger text).
    size : int or (int, int)
        Animation size in pixels: a width (height from the world's aspect) or
        (width, height).
    format : {"gif", "mp4"}
        Animation format; MP4 needs ``ffmpeg`` on the PATH (see
        :func:`contextsteer.video.write`).
    fps : float
        Animation frames per second.

    Returns
    -------
    RunFiles

    Raises
    ------
    ValueError
        The result has no simulation or no recorded frames, a bad ``format``, negative
        ``frames``, or an ``fps`` the format cannot store (:func:`contextsteer.video.check_fps`).
    RuntimeError
        MP4 without ffmpeg, or ffmpeg failed.

    Examples
    --------
    >>> import tempfile, contextsteer as cs
    >>> from contextsteer.cli import write_run
    >>> result = cs.run_scenario("oncoming", steps=20, records=20, maps=True)
    >>> with tempfile.TemporaryDirectory() as out:
    ...     files = write_run(result, out, frames=2, progress=False)
    ...     sorted(p.name for p in files.out_dir.iterdir())
    ['animation.gif', 'metrics.json', 'scene.png']
    >>> files.metrics["steps"], files.metrics["agents"]
    (20, 2)
    """
    import numpy as np

    # Figures made without pyplot render with Agg whatever the session's backend is:
    # headless, no window, and the caller's pyplot state is left alone.
    from matplotlib.figure import Figure
    from tqdm.auto import tqdm

    from . import plot, video
    from .sweep import _bar_options

    sim, history = result.simulation, result.history
    if sim is None or history is None:
        raise ValueError(
            "write_run: the result needs its simulation and recorded frames "
            "(run it with records > 0)"
        )
    if format not in video.FORMATS:
        raise ValueError(f"format: expected one of {', '.join(video.FORMATS)}, got {format!r}")
    if int(frames) < 0:
        raise ValueError(f"frames: expected >= 0, got {frames}")
    if frames > 0:
        video.check_fps(fps, format)
    if frames > 0 and format == "mp4" and video.ffmpeg() is None:
        raise RuntimeError("format 'mp4' needs the ffmpeg executable on the PATH")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = result.scenario or "run"

    # The metrics first: a failure while drawing or encoding leaves this run's metrics,
    # not an earlier run's, and no animation of an earlier run stays beside them.
    metrics = result.to_dict()
    metrics_file = out / "metrics.json"
    persist.write_text(metrics_file, json.dumps(metrics, indent=2) + "\n", "metrics.json")
    for suffix in video.FORMATS:
        (out / f"animation.{suffix}").unlink(missing_ok=True)

    fig = Figure(figsize=_figsize(sim, 8.0), layout="constrained")
    ax = fig.subplots()
    plot.scene(sim, ax=ax, trajectories=history.positions, rays=True)
    ax.set_title(f"{title}: step {result.steps}")
    scene_png = out / "scene.png"
    # Whole or not at all, as metrics.json: savefig wrote in place, and a full disk left
    # a truncated PNG over the earlier good one (fuzz round 20).
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=dpi, bbox_inches="tight")
    persist.write_bytes(scene_png, png.getvalue(), "scene.png")

    animation = None
    if frames > 0:
        # `frames` + 1 evenly spaced samples (first and last included), drawn over the
        # denser trajectory samples as comet tails of about 4 s.
        if history.steps is None or history.headings is None:
            raise TypeError("write_run: the recorded frames need their steps and headings")
        last = len(history.steps) - 1
        samples = min(int(frames), last) + 1  # no more than the recorded frames
        k = np.unique(np.linspace(0, last, samples).round().astype(int))
        picked = history._take(k)
        dt = result.dt
        sample_dt = (
            dt * float(history.steps[-1] - history.steps[0]) / max(len(history.steps) - 1, 1)
        )
        rendered = plot.frames(
            sim,
            history=picked,
            size=size,
            dpi=dpi,
            trail=history.positions,
            trail_samples=max(2, int(round(4.0 / max(sample_dt, 1e-9)))),
            title=title,
            dt=dt,
        )
        animation = out / f"animation.{format}"
        if format.lower() == "gif":
            # A GIF holds its frames until written (video.write): one byte a pixel, and
            # the deflated RGB besides. Refuse up front what cannot fit.
            from .maps import _memory_text, _physical_memory

            w_px, h_px = rendered.size
            need = 1.1 * rendered.count * w_px * h_px
            if need > 0.5 * _physical_memory():
                raise MemoryError(
                    f"write_run: a GIF of {rendered.count:,} frames of {w_px}x{h_px} pixels "
                    f"holds about {need / 2**30:.3g} GiB while it is written, more than half "
                    f"of {_memory_text()}; write fewer "
                    f"frames, a smaller size, or an MP4 (format='mp4' streams its frames)"
                )
        images = tqdm(
            rendered.images,
            total=rendered.count,
            unit="frame",
            desc="animation",
            disable=not progress,
            **_bar_options(),
        )
        try:
            video.write(images, animation, fps=fps, format=format)
        except BaseException:  # no half-written animation
            animation.unlink(missing_ok=True)
            raise
    return RunFiles(out, scene_png, animation, metrics_file, metrics, result)


def run_scenario(
    sim_builder: Simulation | Callable[[], Simulation],
    steps: int,
    out_dir: str | os.PathLike[str],
    *,
    dt: float = 1.0 / 60.0,
    frames: int = 100,
    progress: bool = True,
    info: dict | None = None,
    dpi: int = 100,
    report: Callable[[Simulation], dict] | None = None,
    size: int | tuple[int, int] = 960,
    format: str = "gif",
    fps: float = 15.0,
) -> RunFiles:
    """Deprecated: use :func:`contextsteer.run_simulation` (or
    :func:`contextsteer.run_scenario`) and then :func:`write_run`.

    Kept as a thin alias: builds the simulation (``sim_builder()``, or a Simulation as it
    is), runs it through the application layer and writes the files.
    """
    import warnings

    from .run import run_simulation
    from .simulation import Simulation

    warnings.warn(
        "contextsteer.cli.run_scenario is deprecated: use contextsteer.run_simulation "
        "or contextsteer.run_scenario, then contextsteer.cli.write_run",
        DeprecationWarning,
        stacklevel=2,
    )
    steps = int(steps)
    if steps < 1:
        raise ValueError(f"steps: expected >= 1, got {steps}")
    sim = sim_builder if isinstance(sim_builder, Simulation) else sim_builder()
    info = dict(info or {})
    result = run_simulation(
        sim,
        steps,
        dt=dt,
        records=records_for(steps, frames),
        maps=frames > 0,
        scenario=info.get("scenario"),
        parameters=info.get("parameters"),
        report=report,
    )
    return write_run(
        result,
        out_dir,
        frames=frames,
        progress=progress,
        dpi=dpi,
        size=size,
        format=format,
        fps=fps,
    )


def __getattr__(name: str) -> Any:
    if name == "RunResult":  # the old name of RunFiles
        import warnings

        warnings.warn(
            "contextsteer.cli.RunResult is deprecated: it is contextsteer.cli.RunFiles "
            "(contextsteer.RunResult is the run's result record)",
            DeprecationWarning,
            stacklevel=2,
        )
        return RunFiles
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import scenarios

    try:
        sc = scenarios.get(args.scenario)
    except ValueError:
        names = scenarios.available()
        listed = ", ".join(names) if names else "none yet"
        parser.print_usage(sys.stderr)
        print(
            f"contextsteer run: error: unknown scenario {args.scenario!r} (available: {listed})",
            file=sys.stderr,
        )
        return 2
    params: dict[str, Any] = {}
    for name in ("agents", "slots", "seed"):
        value = getattr(args, name)
        if value is None:
            continue
        if not sc.accepts(name):
            if name == "seed" and value == 0:
                continue  # the default seed is fine for a scenario without randomness
            parser.print_usage(sys.stderr)
            print(
                f"contextsteer run: error: scenario {sc.name!r} does not take --{name}",
                file=sys.stderr,
            )
            return 2
        params[name] = value
    if args.preset is not None:
        if not sc.presets:
            parser.print_usage(sys.stderr)
            print(f"contextsteer run: error: scenario {sc.name!r} has no presets", file=sys.stderr)
            return 2
        if args.preset not in sc.presets:
            parser.print_usage(sys.stderr)
            print(
                f"contextsteer run: error: --preset must be one of {', '.join(sc.presets)}, "
                f"got {args.preset!r}",
                file=sys.stderr,
            )
            return 2
        params["preset"] = args.preset
    given: set[str] = set()
    for item in args.param:
        name, sep, value = item.partition("=")
        problem = None
        if not sep or not name or not value:
            problem = f"--param expects NAME=VALUE, got {item!r}"
        elif name in ("agents", "slots", "seed", "preset", "steps"):
            problem = f"use --{name}, not --param {name}"
        elif name in given:
            problem = f"--param {name} given twice"
        elif not sc.accepts(name):
            problem = f"scenario {sc.name!r} does not take {name!r}"
        if problem is not None:
            parser.print_usage(sys.stderr)
            print(f"contextsteer run: error: {problem}", file=sys.stderr)
            return 2
        given.add(name)
        # A comma-separated value is a list (racetrack's speed=LO,HI), as sweep's axes are.
        params[name] = (
            [_parse_value(v) for v in value.split(",")] if "," in value else _parse_value(value)
        )
    default_steps, dt = sc.timing(args.preset)
    steps = args.steps if args.steps is not None else default_steps
    out = args.out if args.out is not None else Path("out") / sc.name
    fps_problem = _fps_problem(args.fps, args.format) if args.frames > 0 else None
    if fps_problem is not None:
        parser.print_usage(sys.stderr)
        print(f"contextsteer run: error: argument --fps: {fps_problem}", file=sys.stderr)
        return 2
    if args.format == "mp4" and args.frames > 0:
        from . import video

        if video.ffmpeg() is None:
            parser.print_usage(sys.stderr)
            print(
                "contextsteer run: error: --format mp4 needs the ffmpeg executable on the "
                "PATH (or use --format gif)",
                file=sys.stderr,
            )
            return 2
    if out.exists() and not out.is_dir():
        parser.print_usage(sys.stderr)
        print(
            f"contextsteer run: error: --out {out} exists and is not a directory", file=sys.stderr
        )
        return 2
    # The folder is made after the run: a file on its way (--out afile/sub) is refused
    # now, as a usage error, not after the simulation has run.
    blocker = next((p for p in out.parents if p.exists() or p.is_symlink()), None)
    if blocker is not None and not blocker.is_dir():
        parser.print_usage(sys.stderr)
        print(
            f"contextsteer run: error: --out {out}: {blocker} is not a directory",
            file=sys.stderr,
        )
        return 2
    problem = _out_problem(out)
    if problem is not None:  # found now, not after the run (it ran, then wrote nothing)
        parser.print_usage(sys.stderr)
        print(f"contextsteer run: error: --out {out}: {problem}", file=sys.stderr)
        return 2
    from tqdm.auto import tqdm

    from .run import build, run_simulation
    from .sweep import _bar_options

    if args.detour and sc.accepts("detour") and "detour" not in params:
        # Scenarios whose agents follow a navigation field build their steering for a
        # detour on it when asked (crowd_steering(detour_capacity=N)).
        params["detour"] = True
    try:
        sc, sim, params = build(sc, params)
    except (ValueError, TypeError, MemoryError) as exc:  # a parameter the scenario refuses
        parser.print_usage(sys.stderr)
        text = str(exc) or type(exc).__name__
        prefix = "" if text.startswith(f"{sc.name}:") else f"{sc.name}: "
        print(f"contextsteer run: error: {prefix}{text}", file=sys.stderr)
        return 2
    detour = None
    if args.detour:
        from .detour import Detour

        try:
            detour = Detour.on_steering(sim)
        except ValueError:  # a field steering not built for it (detour=False, danger=agent)
            from . import scenarios

            able = [n for n in scenarios.available() if scenarios.get(n).accepts("detour")]
            how = (
                "with these parameters its steering is not built for one (detour=false, "
                "or a danger other than the velocity-space ones)"
                if sc.accepts("detour")
                else "this scenario has no detour parameter to build its steering for one"
            )
            parser.print_usage(sys.stderr)
            print(
                f"contextsteer run: error: --detour: the agents of {sc.name!r} follow a "
                f"navigation field with a steering that cannot hand them to a detour ({how}; "
                f"it needs crowd_steering(field=..., detour_capacity=N)). The scenarios that "
                f"build one: {', '.join(able)}; those whose agents follow no field take "
                "--detour as they are",
                file=sys.stderr,
            )
            return 2
    with tqdm(total=steps, unit="step", desc="steps", disable=args.quiet, **_bar_options()) as bar:
        result = run_simulation(
            sim,
            steps,
            dt=dt,
            records=records_for(steps, args.frames),
            maps=args.frames > 0,
            callback=bar.update,
            scenario=sc.name,
            parameters=params,
            report=sc.report,
            detour=detour,
        )
    try:
        files = write_run(
            result,
            out,
            frames=args.frames,
            progress=not args.quiet,
            size=args.size,
            dpi=int(round(args.dpi)),
            format=args.format,
            fps=args.fps,
        )
    except (OSError, RuntimeError) as exc:  # cannot write the output files, ffmpeg failed
        print(f"contextsteer run: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        written = [files.scene, files.animation, files.metrics_file]
        _say(
            f"{sc.name}: {steps} steps in {result.seconds:.2f} s; wrote "
            + ", ".join(str(f) for f in written if f is not None)
        )
    return 0


# ------------------------------------------------------------------------------ sweep ---


def _parse_value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def _refused(scenario: str, axes: dict[str, list[Any]], fixed: dict[str, Any]) -> str | None:
    """Build the scenario (seed 0, not stepped) with each value of each axis, the other
    axes at their first value and ``fixed`` as given; the first builder error as a
    message (a value the scenario refuses is a usage error, found before any run), or
    None. A scenario name, or a parameter it does not take, is left to the caller."""
    from . import scenarios
    from .run import build

    sc = scenarios.get(scenario)
    if any(not sc.accepts(name) for name in [*axes, *fixed]):
        return None  # the sweep or the study names the parameter
    first = {name: values[0] for name, values in axes.items()}
    for name, values in [("", [None])] + list(axes.items()):
        for value in values:
            params = {**fixed, **first, **({name: value} if name else {})}
            try:
                build(sc, params, seed=0)
            except (ValueError, TypeError, MemoryError) as exc:
                text = str(exc) or type(exc).__name__
                where = ", ".join(f"{k}={v!r}" for k, v in params.items())
                prefix = "" if text.startswith(f"{sc.name}:") else f"{sc.name}: "
                return f"{prefix}{text} (with {where})"
    return None


def _cmd_sweep(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import scenarios
    from .sweep import SweepInterrupted, _is_seed, _sigint_held, sweep

    def usage(message: str) -> int:
        parser.print_usage(sys.stderr)
        print(f"contextsteer sweep: error: {message}", file=sys.stderr)
        return 2

    axes: dict[str, list[Any]] = {}
    for item in args.param:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            return usage(f"--param expects NAME=V1,V2,..., got {item!r}")
        if name in axes:
            return usage(f"--param {name} given twice")
        if _is_seed(name):  # (the scenario takes one, but each run gets its own)
            return usage(f"--param {_SEED_PARAM}")
        axes[name] = [_parse_value(v) for v in values.split(",")]
    keys = args.key or ["metrics.composite", "metrics.collisions.total"]
    if _out_file(args, parser):
        return 2
    try:
        scenarios.get(args.scenario)
        refused = _refused(args.scenario, axes, {})
        if refused:
            return usage(refused)
        result = sweep(
            args.scenario,
            axes,
            seeds=args.seeds,
            steps=args.steps,
            # One worker: runs in this process (a pool's size has no use there).
            executor="serial" if args.workers == 1 else None,
            workers=None if args.workers == 1 else args.workers,
            progress=not args.quiet,
            errors="keep",  # a failed run must not lose the finished ones
        )
    except ValueError as exc:
        return usage(str(exc))
    except RuntimeError as exc:  # the workers died: no result came back
        print(f"contextsteer sweep: error: {exc}", file=sys.stderr)
        return 1
    except SweepInterrupted as stop:  # Ctrl-C: keep the finished runs
        where = ""
        if args.out is not None:
            doc = {
                "scenario": args.scenario,
                "seeds": list(stop.result.seeds),
                "steps": args.steps,
                "interrupted": True,
                "total_runs": stop.total,
                "summary": None,
                "runs": stop.result.to_records(),
            }
            with _sigint_held():  # (a second Ctrl-C must not lose them)
                failed = _write_json(args.out, doc, "sweep")
            if failed:
                return 1
            where = f"; wrote them to {args.out}"
        print(f"contextsteer sweep: {stop}{where}", file=sys.stderr)
        return 130
    # The runs are written before the summary is made: a key that names no number
    # (a dict, a string) must not lose them.
    rows: list[dict[str, Any]] | None = None
    problem = None
    written = 0
    try:
        rows = result.summary(*keys)
    except ValueError as exc:
        problem = str(exc)
    if args.out is not None:
        doc = {
            "scenario": args.scenario,
            "seeds": list(result.seeds),
            "steps": args.steps,
            "summary": rows,
            "runs": result.to_records(),
        }
        # A file that cannot be written after all (the disk filled up during the runs)
        # fails the command, but the table below is still printed.
        written = _write_json(args.out, doc, "sweep")
    for key in keys:
        if all(r.value(key, None) is None for r in result):
            print(
                f"contextsteer sweep: warning: no run's result has the key {key!r}",
                file=sys.stderr,
            )
    if rows is None:
        return usage(f"--key: {problem}")
    names = list(axes)
    pm = _plus_minus()
    header = names + [f"{k} (mean {pm} std)" for k in keys]
    table = [
        [str(row[n]) for n in names]
        + [f"{row[k]['mean']:.4g} {pm} {row[k]['std']:.2g}" if row[k]["n"] else "-" for k in keys]
        for row in rows
    ]
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    _say(f"{args.scenario}: {len(result)} runs ({len(rows)} combinations x {args.seeds} seeds)")
    _say("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in table:
        _say("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    failed_runs = result.failed
    if failed_runs:
        # The finished runs are in the table and the file; each failure is named here
        # (and kept with its error in the file's "runs").
        for run in failed_runs:
            print(
                f"contextsteer sweep: error: run {run.params} seed {run.seed}: {run.error}",
                file=sys.stderr,
            )
        saved = f"; the others are in {args.out}" if args.out is not None and not written else ""
        print(
            f"contextsteer sweep: {len(failed_runs)} of {len(result)} runs failed{saved}",
            file=sys.stderr,
        )
        return 1
    return written


# ------------------------------------------------------------------------------- tune ---


def _parse_space_item(values: str) -> Any:
    """``LOW:HIGH[:log]`` -> a range tuple; ``V1,V2,...`` -> a list of choices."""
    if ":" in values:
        parts = values.split(":")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "log"):
            raise ValueError(f"a range is LOW:HIGH or LOW:HIGH:log, got {values!r}")
        low, high = (_parse_value(p) for p in parts[:2])
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)):
            raise ValueError(f"a range needs numbers, got {values!r}")
        return (low, high, "log") if len(parts) == 3 else (low, high)
    return [_parse_value(v) for v in values.split(",")]


def _cmd_tune(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import scenarios
    from .sweep import _is_seed, _sigint_held

    def usage(message: str) -> int:
        parser.print_usage(sys.stderr)
        print(f"contextsteer tune: error: {message}", file=sys.stderr)
        return 2

    space: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    for item, into, what in [(p, space, "--param") for p in args.param] + [
        (f, fixed, "--fix") for f in args.fix
    ]:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            return usage(f"{what} expects NAME=..., got {item!r}")
        if name in space or name in fixed:
            return usage(f"{name} given twice")
        if _is_seed(name):  # (the scenario takes one, but each run gets its own)
            return usage(f"{what} {_SEED_PARAM}")
        try:
            if into is space:
                into[name] = _parse_space_item(values)
            else:  # a comma-separated value is a list, as run's -p reads it
                into[name] = (
                    [_parse_value(v) for v in values.split(",")]
                    if "," in values
                    else _parse_value(values)
                )
        except ValueError as exc:
            return usage(f"{what} {name}: {exc}")
    if not space:
        return usage("give at least one tuned parameter with -p NAME=LOW:HIGH or NAME=V1,V2")
    if _out_file(args, parser):
        return 2

    def study_doc() -> dict[str, Any]:
        """What --out records of the study, before its trials."""
        return {
            "scenario": args.scenario,
            "objective": args.key,
            "direction": "maximize" if args.maximize else "minimize",
            "constraint": args.constraint,
            "seeds": args.seeds,
            "steps": args.steps,
            "space": {k: list(v) if isinstance(v, tuple) else v for k, v in space.items()},
        }

    try:
        from .tune import NoFeasibleTrial, TuneInterrupted, tune
    except ImportError as exc:  # pragma: no cover - the tune module itself has no deps
        print(f"contextsteer tune: error: {exc}", file=sys.stderr)
        return 1
    try:
        scenarios.get(args.scenario)
        from .tune import distributions

        distributions(space)  # the space's own errors first (a range's ends, a log range)
        ends = {name: list(v[:2]) if isinstance(v, tuple) else list(v) for name, v in space.items()}
        refused = _refused(args.scenario, ends, fixed)
        if refused:
            return usage(refused)
        result = tune(
            args.scenario,
            space,
            params=fixed,
            objective=args.key,
            direction="maximize" if args.maximize else "minimize",
            constraint=args.constraint,
            n_trials=args.trials,
            seeds=args.seeds,
            steps=args.steps,
            sampler=args.sampler,
            seed=args.seed,
            # One worker: runs in this process (a pool's size has no use there).
            executor="serial" if args.workers == 1 else None,
            workers=None if args.workers == 1 else args.workers,
            progress=not args.quiet,
        )
    except ImportError as exc:
        print(f"contextsteer tune: error: {exc}", file=sys.stderr)
        return 1
    except TuneInterrupted as stop:  # Ctrl-C: keep the finished trials
        where = ""
        if args.out is not None:
            doc = {**study_doc(), "interrupted": True, "trials": [dict(t) for t in stop.trials]}
            with _sigint_held():  # (a second Ctrl-C must not lose them)
                failed = _write_json(args.out, doc, "tune")
            if failed:
                return 1
            where = f"; wrote the trials to {args.out}"
        print(f"contextsteer tune: {stop}{where}", file=sys.stderr)
        return 130
    except NoFeasibleTrial as none:  # the trials show why: keep them
        where = ""
        if args.out is not None:
            doc = {**study_doc(), "best_params": None, "best_value": None, "trials": none.trials}
            if _write_json(args.out, doc, "tune"):
                return 1
            where = f"; wrote the trials to {args.out}"
        print(f"contextsteer tune: error: {none}{where}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as exc:
        return usage(str(exc))
    states: dict[str, int] = {}
    for t in result.trials:
        states[t["state"]] = states.get(t["state"], 0) + 1
    _say(
        f"{args.scenario}: {len(result.trials)} trials ("
        + ", ".join(f"{n} {s.lower()}" for s, n in sorted(states.items()))
        + f"), {args.seeds} seed(s) each; objective {args.key} "
        + ("(maximised)" if args.maximize else "(minimised)")
    )
    _say(f"best {args.key} = {result.best_value:.6g} with")
    for name, value in result.best_params.items():
        shown = f"{value:.6g}" if isinstance(value, float) else str(value)
        _say(f"  {name} = {shown}")
    if args.out is not None:
        doc = {
            **study_doc(),
            "best_params": result.best_params,
            "best_value": result.best_value,
            "trials": result.to_records(),
        }
        return _write_json(args.out, doc, "tune")
    return 0


# ------------------------------------------------------------------------------- list ---


def _cmd_list(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import scenarios

    names = scenarios.available()
    if not names:
        print("no scenarios registered yet")
        return 0
    width = max(len(n) for n in names)
    for name, description in names.items():
        print(f"{name:<{width}}  {description}")
    return 0


# ------------------------------------------------------------------------------ bench ---


def find_benchmarks() -> Path | None:
    """The ``benchmarks/`` folder of a source checkout, or None for an installed package.

    Looks next to the package's source tree (``python/contextsteer/`` -> ``benchmarks/``,
    also right for an editable install) and then in the current directory; either must be
    contextsteer's checkout (its ``pyproject.toml`` names the project), never another
    project's benchmarks.
    """
    here = Path(__file__).resolve().parent
    for root in (here.parent.parent, Path.cwd()):
        folder = root / "benchmarks"
        if _is_checkout(root) and any(folder.glob("bench_*.py")):
            return folder
    return None


def _is_checkout(root: Path) -> bool:
    """Whether ``root`` holds contextsteer's ``pyproject.toml`` (``name = "contextsteer"``
    in its ``[project]`` table)."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    table = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            table = line
        elif table == "[project]" and re.fullmatch(r'name\s*=\s*"contextsteer"', line):
            return True
    return False


def _cmd_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    folder = find_benchmarks()
    if folder is None:
        print(
            "contextsteer bench: the benchmarks ship only with the source tree, not with "
            "the installed package.\nClone the repository, install it with "
            "'pip install -e .[bench]' and run 'contextsteer bench' from the checkout.",
            file=sys.stderr,
        )
        return 1
    scripts = sorted(folder.glob("bench_*.py"))
    if args.names:
        wanted = {n.removeprefix("bench_").removesuffix(".py") for n in args.names}
        known = {s.stem.removeprefix("bench_") for s in scripts}
        unknown = sorted(wanted - known)
        if unknown:
            parser.print_usage(sys.stderr)
            print(
                f"contextsteer bench: error: unknown benchmark(s) {', '.join(unknown)} "
                f"(available: {', '.join(sorted(known))})",
                file=sys.stderr,
            )
            return 2
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in wanted]
    # The scripts import the same contextsteer as this command.
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    failed = []
    for script in scripts:
        cmd = [sys.executable, str(script)]
        if args.quick and "--quick" in script.read_text(encoding="utf-8"):
            cmd.append("--quick")
        print(f"== {script.name} {' '.join(cmd[2:])}".rstrip(), flush=True)
        if subprocess.call(cmd, cwd=folder.parent, env=env) != 0:
            failed.append(script.name)
    if failed:
        print(f"contextsteer bench: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------------------- main ---


def _drop_stdout() -> None:
    """After a failed write to stdout: what it still buffers goes to /dev/null, so that
    the interpreter's last flush does not fail again with a traceback."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError:
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``contextsteer`` command with ``argv`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for bad arguments (after a usage message), 1
        when a command fails, 130 when interrupted (Ctrl-C, with a one-line message
        instead of a traceback), 143 when ended by SIGTERM (handled as Ctrl-C is: a
        sweep or a tune writes its finished runs and stops its workers).

    Examples
    --------
    >>> from contextsteer.cli import main
    >>> main(["run", "--steps", "0"])   # usage and the error go to stderr
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version (0) or a usage error (2)
        # (argparse drops a failed write of its help or usage: --help to a full disk
        # exits 0, as every argparse program does.)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    terminated: list[int] = []
    previous = None
    previous_int = None
    main_thread = threading.current_thread() is threading.main_thread()
    # Ctrl-C (SIGINT) and SIGTERM (a batch system's stop, kill) stop a command the same
    # way: a sweep or a tune writes its finished runs and stops its workers. A second
    # signal of either kind within 2 s of the first is the same stop and is dropped:
    # `timeout -s INT` signals the process and then its group, and supervisors send INT
    # then TERM; the second one, landing while the runs were written, lost them all (fuzz
    # rounds 20 and 21). After those 2 s a Ctrl-C stops the writing too, and a SIGTERM
    # ends the process at once. A caller that ignores SIGTERM (or handles SIGINT) keeps it
    # so.
    stops: list[float] = []

    def stop(signum: int, frame: Any) -> None:
        if signum == signal.SIGTERM:
            terminated.append(signum)
        now = time.monotonic()
        if stops and now - stops[-1] < 2.0:
            return
        if stops and signum == signal.SIGTERM:  # a later SIGTERM: end at once
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        stops.append(now)
        raise KeyboardInterrupt

    if main_thread and signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        previous = signal.signal(signal.SIGTERM, stop)
    if main_thread and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous_int = signal.signal(signal.SIGINT, stop)
    try:
        code = args.handler(args, args.subparser)
        if sys.stdout is not None:  # (None: started with stdout closed)
            sys.stdout.flush()  # a full or broken stdout fails here, with a one-line error
    except KeyboardInterrupt:
        print(f"contextsteer: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        code = 130
    except OSError as exc:  # stdout on a full disk (/dev/full), or a pipe closed early
        _drop_stdout()
        if not isinstance(exc, BrokenPipeError):  # (`contextsteer list | head`: quiet)
            print(f"contextsteer {args.command}: error: {exc}", file=sys.stderr)
        code = 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)
    # 128 + the signal, as a shell reports a process it ended.
    return 128 + signal.SIGTERM if terminated and code == 130 else code
