"""Benchmark of the full simulation step on "crowd-track-N" (SCENES.md), next to RVO2.

Not a test. For N agents and K slots, contextsteer runs the scene's 100 steps of
dt = 0.25 with this configuration (chosen for the scene, stated here so it can be
judged):

- behaviours: ``Seek()`` towards each agent's own target, set before every step to
  ``p + 10·preferred(p)`` where ``preferred`` is the scene's preferred direction (the
  mid-ellipse tangent, even agents counter-clockwise, odd clockwise — the same function
  that gives RVO2 its preferred velocity, scenes.crowd_preferred); ``WallDanger(
  look_ahead=3, falloff="linear")`` (slot rays as circles of the agent radius);
  ``AgentDanger(radius=3)`` (the predictive variant, horizon 2 s, gave the same overlap
  and penetration counts and 1% more progress at N = 10k for 50% more time: its
  neighbour query reaches 14 instead of 6 units);
- engine: combine max, resolve subtract, choose vector_sum; ``Lerp(steer_force=0.5)``;
  push_apart on (swept against the walls).

Timing: ``Simulation.step(dt)`` alone (the NumPy line that sets the targets is outside
the timer, as RVO2's Python loop that sets preferred velocities is outside its
``do_step`` timer). ms/step is the median over the 100 steps of a run; contextsteer's
figure is the median of ``--repeats`` runs (default 3; the first also collects the
metrics), RVO2's is from one run (a 10k run takes tens of seconds). "1 thr" runs with
one thread, "all" with every core (``cs.get_num_threads()`` at start-up). The machine's
load average is printed first: on a shared machine other processes inflate both
columns and hide the multi-thread speed-up.

Metrics (benchmarks/crowd.py, the same code for both systems, from the positions after
each step): agent–agent overlap episodes, wall penetration episodes (centre closer than
0.99·radius to a wall), mean progress along the preferred direction. For contextsteer,
"pre-push" also counts the overlapping pairs right after the move, before push-apart
resolves them (pair-steps, from ``Simulation.overlaps``). Metrics need
SciPy and cost seconds per run in Python, so at N = 100k they are skipped unless
``--full``.

RVO2 (PyPI ``pyrvo``; SCENES.md parameters, walls as two obstacles) runs at N = 1k and
10k (100k with ``--full``); ``do_step`` alone is timed.

"cs classic" steers the same agents with contextsteer.classic instead (gdx-ai's stack,
batched in C++): ``Priority([RaycastObstacleAvoidance("whiskers", length=3),
CollisionAvoidance(radius=3), Blended([Separation(radius=3), Seek()])])`` with
``Accel()`` motion (gdx-ai's integration), push-apart on; one thread, one run.

"cs velocity" is the crowd scenarios' velocity-space configuration
(``cs.scenarios.crowd_steering``, with the tuned options of ``cs.scenarios.CROWD``,
deciding in ``cs.scenarios.CROWD_PHASES`` phases), "cs vel at once" the same deciding every
agent at once (``decision_phases=1``: what the phases cost), and "cs vel plain" the same
with ``options={}`` (none of the refinements, at once): its difference to "at once" is
what the refinements cost; one run each.

"cs interval 3" is the default configuration time-sliced (``decision_interval=3``: each
agent re-steers every third step, staggered, and moves on its last decision between);
one run.

"cs +metrics" and "cs vel +metr" time the default and the velocity configuration with the
built-in C++ run metrics on (``Simulation``'s default; collision episodes, clearances,
progress), K = 16, one thread, median of ``--repeats`` runs, and print what the metrics
cost against the same configuration without them in the same run (runs with and without
alternate; the share is the median of the pairs' shares).

"--paired" times RVO2 and contextsteer side by side instead, so that the machine's drift
skews the ratio less. One RVO2 simulator and one contextsteer simulation of each
configuration (default, velocity, velocity at once, velocity plain; run metrics on, one
thread) step the scene in turns, in ``--segments`` blocks: RVO2's block, then each
configuration's block over the same steps of its own run, then the next block. The
figure is RVO2's median ms per step over all its steps divided by the configuration's,
the same definition as the separate runs above but from interleaved steps; each block's
own ratio is printed too.
On this 2-core VM the speed drifts by tens of percent within a minute, so separate runs
can catch RVO2 and contextsteer at different speeds; blocks of a second or so share the
machine's state.

Usage: PYTHONPATH=python python3 benchmarks/bench_step.py [--quick] [--full] [--sizes N,..]
[--paired [--segments 10]]
(--quick: N = 1k only.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

# NumPy's BLAS threads spin after a call and would steal a core from the timed step.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextsteer as cs  # noqa: E402
from crowd import CrowdMetrics, make_rvo2, run_rvo2, step_rvo2  # noqa: E402
from scenes import agent_counts, crowd_preferred, crowd_track_scene  # noqa: E402

AHEAD = 10.0  # distance of the seek target along the preferred direction


def steering() -> cs.Steering:
    return cs.Steering(
        [cs.Seek(), cs.WallDanger(look_ahead=3.0, falloff="linear"), cs.AgentDanger(radius=3.0)],
        combine="max",
        resolve="subtract",
        choose="vector_sum",
    )


def velocity_steering(plain: bool = False, at_once: bool = False) -> cs.Steering:
    """The velocity-space configuration (the crowd scenarios' default,
    ``cs.scenarios.crowd_steering``): half-cosine Seek and CollisionDanger (agents and
    walls on one time-to-collision scale) with the tuned options of
    ``cs.scenarios.CROWD``, deciding in phases; ``plain``: without the options
    (``options={}``, deciding at once); ``at_once``: ``decision_phases=1``."""
    kw = {"decision_phases": 1} if at_once else {}
    return cs.scenarios.crowd_steering(
        walls=True, arrive=False, options={} if plain else None, **kw
    )


def velocity_slots(k: int, plain: bool = False):
    """The slots the crowd scenarios give the velocity configuration
    (``cs.scenarios.crowd_slots_for``: at K = 16 with turning slots and CROWD's options,
    not ``plain``, the set denser ahead); the regular ring of K on builds without it."""
    slots_for = getattr(cs.scenarios, "crowd_slots_for", None)
    if slots_for is None:
        return k
    danger = "plain" if plain else "velocity"
    return slots_for(k, danger=danger, rotate=velocity_steering(plain).rotate)


def classic_steering():
    from contextsteer import classic

    return classic.Priority(
        [
            classic.RaycastObstacleAvoidance(
                "whiskers",
                length=3.0,
                whisker_length=2.0,
                whisker_angle=0.7,
                distance_from_boundary=1.5,
            ),
            classic.CollisionAvoidance(radius=3.0),
            classic.Blended([(classic.Separation(radius=3.0), 1.0), (classic.Seek(), 1.0)]),
        ]
    )


def scene_agents(scene, k: int) -> tuple[cs.World, cs.Agents]:
    """The scene's walls, and its agents (K slots, at rest) seeking AHEAD along the
    preferred direction."""
    world = cs.World()
    world.add_segments(scene.walls)
    agents = cs.Agents(len(scene.positions), slots=k)
    pref = crowd_preferred(scene.positions, scene.scale)
    agents.add(
        scene.positions,
        velocity=0.0,
        radius=scene.radius,
        max_speed=scene.max_speed,
        max_accel=4.0,
        target=scene.positions + AHEAD * pref,
    )
    return world, agents


def run_contextsteer(
    scene,
    k: int,
    threads: int,
    metrics: bool,
    interval: int = 1,
    use_classic: bool = False,
    velocity: bool = False,
    run_metrics: bool = False,
    plain: bool = False,
    at_once: bool = False,
) -> dict:
    world, agents = scene_agents(scene, k)
    if use_classic:
        sim = cs.Simulation(world, agents, classic_steering(), motion=cs.Accel())
    elif velocity:
        sim = cs.Simulation(
            world,
            agents,
            velocity_steering(plain, at_once),
            motion=cs.Lerp(steer_force=0.5),
            slots=velocity_slots(k, plain),
        )
    else:
        sim = cs.Simulation(
            world, agents, steering(), motion=cs.Lerp(steer_force=0.5), decision_interval=interval
        )
    # Both systems are measured by the same Python CrowdMetrics outside the timer, so the
    # built-in C++ run metrics (on by default) are switched off, as RVO2 has none; the
    # "+metrics" rows keep them on (their cost is part of the timed step).
    sim.configure_metrics(enabled=run_metrics)
    tracker = CrowdMetrics(scene) if metrics else None
    if tracker:
        tracker.update(agents.position)
    times = []
    with cs.threads(threads):
        for _ in range(scene.steps):
            p = agents.position
            agents.target[...] = p + AHEAD * crowd_preferred(p, scene.scale)
            t0 = time.perf_counter()
            sim.step(scene.dt)
            times.append(time.perf_counter() - t0)
            if tracker:
                tracker.update(agents.position)
    # Overlapping pairs right after moving, before push-apart, summed over steps.
    out = {"ms_per_step": 1e3 * statistics.median(times), "pre_push": int(sim.overlaps.sum()) // 2}
    if tracker:
        out.update(tracker.summary())
    return out


class _RVO2Steps:
    """RVO2 on the scene, stepped in blocks (``run(m)`` -> the m ``do_step`` times, s)."""

    def __init__(self, scene):
        self.scene = scene
        self.sim = make_rvo2(scene, walls=True)
        self.pos = scene.positions.astype("float64")

    def run(self, m: int) -> list[float]:
        return step_rvo2(self.sim, self.scene, m, start=self.pos)


class _ContextSteerSteps:
    """A contextsteer simulation of the scene (one thread, run metrics on), stepped in
    blocks: ``run(m)`` -> the m ``Simulation.step`` times (s), targets set outside."""

    def __init__(self, scene, velocity: bool, plain: bool = False, at_once: bool = False):
        self.scene = scene
        world, self.agents = scene_agents(scene, 16)
        st = velocity_steering(plain, at_once) if velocity else steering()
        slots = velocity_slots(16, plain) if velocity else 16
        self.sim = cs.Simulation(
            world, self.agents, st, motion=cs.Lerp(steer_force=0.5), slots=slots
        )

    def run(self, m: int) -> list[float]:
        times = []
        with cs.threads(1):
            for _ in range(m):
                p = self.agents.position
                self.agents.target[...] = p + AHEAD * crowd_preferred(p, self.scene.scale)
                t0 = time.perf_counter()
                self.sim.step(self.scene.dt)
                times.append(time.perf_counter() - t0)
        return times


def paired_ratios(reference, systems: dict, steps: int, segments: int) -> dict:
    """Step ``reference`` and each of ``systems`` (name -> object with ``run(m)`` returning
    m step times) in turns: ``segments`` blocks covering ``steps`` steps (block sizes differ
    by at most one), the reference's block first. Returns, per name, ``(overall, blocks)``:
    the reference's median step time over all its steps over the system's (the separate
    runs' figure, from interleaved steps), and per block the same ratio within the block."""
    if segments < 1 or steps < segments:
        raise ValueError(f"need 1 <= segments <= steps, got {segments} segments of {steps} steps")
    bounds = [steps * b // segments for b in range(segments + 1)]
    ref_all: list = []
    times: dict = {name: [] for name in systems}
    blocks: dict = {name: [] for name in systems}
    for b in range(segments):
        m = bounds[b + 1] - bounds[b]
        ref = reference.run(m)
        ref_all += ref
        for name, system in systems.items():
            t = system.run(m)
            times[name] += t
            blocks[name].append(statistics.median(ref) / statistics.median(t))
    return {
        name: (statistics.median(ref_all) / statistics.median(times[name]), blocks[name])
        for name in systems
    }


def fmt(x, spec):
    return format(x, spec) if x is not None else "-"


def print_row(label, n, k, r, ms_all, rvo):
    """One contextsteer line: r from run_contextsteer (1 thread), ms_all or None."""
    ratio = rvo["ms_per_step"] / r["ms_per_step"] if rvo else None
    print(
        f"{label:<14}{n:>7}{k:>4}{r['ms_per_step']:>9.2f}{fmt(ms_all, '.2f'):>8}"
        f"{fmt(r.get('overlap_episodes'), 'd'):>10}{fmt(r.get('wall_penetrations'), 'd'):>9}"
        f"{fmt(r.get('mean_progress'), '.1f'):>10}{fmt(ratio, '.1f'):>9}"
        f"{r['pre_push']:>10d}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="N = 1k only")
    ap.add_argument("--full", action="store_true", help="metrics and RVO2 at N = 100k too")
    ap.add_argument("--repeats", type=int, default=3, help="contextsteer runs per figure")
    ap.add_argument("--sizes", default=None, help="comma-separated N (default 1k,10k,100k)")
    ap.add_argument("--paired", action="store_true", help="RVO2 and contextsteer in turns")
    ap.add_argument(
        "--segments", type=int, default=10, help="blocks of the 100 steps (--paired), 1 to 100"
    )
    args = ap.parse_args()
    try:
        args.sizes = agent_counts(args.sizes) if args.sizes else None
    except ValueError as e:
        ap.error(f"--sizes: {e}")
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.paired:
        # --paired steps each system once through the scene in blocks: the size comes from
        # --sizes alone (default 10k), and the figure is the blocks' median, not repeats.
        given = [o for o, on in (("--quick", args.quick), ("--full", args.full)) if on]
        if "--repeats" in sys.argv[1:]:
            given.append("--repeats")
        if given:
            ap.error(f"--paired takes --sizes and --segments, not {', '.join(given)}")
        steps = 100  # crowd-track-N's steps (SCENES.md; crowd.crowd_scene)
        if not 1 <= args.segments <= steps:
            ap.error(f"--segments must be in [1, {steps}] (blocks of the {steps} steps)")
        main_paired(args)
        return
    sizes = args.sizes or ([1000] if args.quick else [1000, 10_000, 100_000])
    all_threads = cs.get_num_threads()
    print(
        f"crowd-track-N, 100 steps, dt 0.25; threads: 1 and {all_threads}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'system':<14}{'N':>7}{'K':>4}{'ms 1thr':>9}{'ms all':>8}{'overlaps':>10}"
        f"{'wall pen':>9}{'progress':>10}{'RVO2/cs':>9}{'pre-push':>10}"
    )
    for n in sizes:
        scene = crowd_track_scene(n)
        rvo = None
        if n <= 10_000 or args.full:
            rvo = run_rvo2(scene, walls=True, metrics=n <= 10_000 or args.full)
            rvo["ms_per_step"] = rvo["ms_median"]
            print(
                f"{'RVO2 (pyrvo)':<14}{n:>7}{'':>4}{rvo['ms_per_step']:>9.2f}{'':>8}"
                f"{fmt(rvo.get('overlap_episodes'), 'd'):>10}"
                f"{fmt(rvo.get('wall_penetrations'), 'd'):>9}"
                f"{fmt(rvo.get('mean_progress'), '.1f'):>10}{'1.0':>9}",
                flush=True,
            )
        for k in (8, 16, 32):
            metrics = n <= 10_000 or args.full
            one = run_contextsteer(scene, k, 1, metrics)
            runs = [one["ms_per_step"]] + [
                run_contextsteer(scene, k, 1, False)["ms_per_step"] for _ in range(args.repeats - 1)
            ]
            one["ms_per_step"] = statistics.median(runs)
            multi = {
                "ms_per_step": statistics.median(
                    run_contextsteer(scene, k, all_threads, False)["ms_per_step"]
                    for _ in range(args.repeats)
                )
            }
            print_row("contextsteer", n, k, one, multi["ms_per_step"], rvo)
        # One-run variants on the same agents: the classic (gdx-ai) stack, and time slicing
        # (Lewis: agents re-steer every 3rd step, staggered).
        metrics = n <= 10_000 or args.full
        for label, k_shown, kw in (
            ("cs velocity", 16, {"velocity": True}),
            ("cs vel at once", 16, {"velocity": True, "at_once": True}),
            ("cs vel plain", 16, {"velocity": True, "plain": True}),
            ("cs classic", "", {"use_classic": True}),
            ("cs interval 3", 16, {"interval": 3}),
        ):
            print_row(label, n, k_shown, run_contextsteer(scene, 16, 1, metrics, **kw), None, rvo)
        # The built-in C++ run metrics (on by default in a Simulation) inside the timed
        # step, for the default and the velocity configuration: --repeats pairs of runs,
        # one thread, with and without (the rows above run without), the two runs of a
        # pair back to back so that the machine's load drifts less between them; the
        # share is the median of the pairs' shares.
        for label, kw in (("cs +metrics", {}), ("cs vel +metr", {"velocity": True})):
            on, off = [], []
            for _ in range(args.repeats):
                on.append(run_contextsteer(scene, 16, 1, False, run_metrics=True, **kw))
                off.append(run_contextsteer(scene, 16, 1, False, **kw)["ms_per_step"])
            r = dict(on[0], ms_per_step=statistics.median(x["ms_per_step"] for x in on))
            print_row(label, n, 16, r, None, rvo)
            ms_off = statistics.median(off)
            share = statistics.median(1 - b / a["ms_per_step"] for a, b in zip(on, off))
            print(
                f"{'':<14}{'':>7}{'':>4}  metrics cost {r['ms_per_step'] - ms_off:.2f} ms "
                f"of {r['ms_per_step']:.2f} ({100 * share:.0f}% by pairs; "
                f"without {ms_off:.2f} ms)",
                flush=True,
            )
    print("RVO2/cs: RVO2 ms per step / contextsteer single-thread ms per step (same run).")


def main_paired(args) -> None:
    """--paired: RVO2 / contextsteer ratios from blocks of steps run in turns."""
    sizes = args.sizes or [10_000]
    print(
        f"crowd-track-N, dt 0.25, one thread, run metrics on; RVO2 and contextsteer in "
        f"{args.segments} blocks of steps, in turns; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'system':<14}{'N':>7}  RVO2/cs over all steps; per block: median (min-max), blocks")
    for n in sizes:
        scene = crowd_track_scene(n)
        systems = {
            "cs +metrics": _ContextSteerSteps(scene, velocity=False),
            "cs vel +metr": _ContextSteerSteps(scene, velocity=True),
            "cs vel at once": _ContextSteerSteps(scene, velocity=True, at_once=True),
            "cs vel plain": _ContextSteerSteps(scene, velocity=True, plain=True),
        }
        ratios = paired_ratios(_RVO2Steps(scene), systems, scene.steps, args.segments)
        for name, (overall, r) in ratios.items():
            print(
                f"{name:<14}{n:>7}  {overall:.1f}x; {statistics.median(r):.1f}x "
                f"({min(r):.1f}-{max(r):.1f}); " + " ".join(f"{x:.1f}" for x in r),
                flush=True,
            )


if __name__ == "__main__":
    main()
