"""Search the crowd steering's commitment options for less heading jitter: not a test.

Runs Optuna (TPE) over ``CollisionDanger``'s options on the crowd benchmark's four
seeded scenes (``crowd_quality``: same protocol, adapters and metric code as
``bench_crowd_quality.py``) and scores a parameter set by the mean over the scenes of
log(jitter / RVO2's jitter), pooled over ``--seeds``, plus penalties for what the crowd
issue forbids: any contact or wall penetration, pooled arrivals below 99.5 %, a seed
below 92 %, pooled time to goal more than 13 % over RVO2's, and (``--seed0``) seed 0
alone more than 14 % over RVO2's or short of 100 % home. RVO2's runs are cached in
``--cache``. With ``--nudge F`` each seed runs with every float option scaled by its own
factor in [1 - F, 1 + F] drawn from the seed (``nudged``), so a set is scored on its
neighbourhood and a set whose worst seeds hold only at its exact values loses. The
options are searched on grids (``commit`` in steps of 0.01, ``horizon`` of 0.05, ...), so
the best set needs no rounding; ``--enqueue JSON`` tries a set first. ``--dense RUNS``
also scores the contacts of circle-250 over RUNS nudged runs (``dense_contacts``): a set
tuned on the four seeded scenes alone can touch there. ``--validate`` evaluates one
parameter set instead and prints its table (per scene the jitter and the turning per metre
walked, each against RVO2's, arrivals, time to goal and contacts), with the circles when
``--circles`` is given. The score stays the jitter per step, the issue's figure.
``--creep`` runs every set with ``crowd_steering(creep=True)``, ``--shape chord`` with
``crowd_steering(shape="chord")``. ``--circle-score`` (with ``--dense``) scores the
circles' turning and time to goal as well (``circle_penalty``): circle-250's jitter
against RVO2's as a fifth scene, and circle-16's and circle-64's jitter and every circle's
time to goal against the library's default, since RVO2 deadlocks on the two symmetric
circles.
The agents turn ``cs.scenarios.crowd_slots()`` with their heading, as the crowd
scenarios' do (``--ring``: a regular ring of ``--slots``). docs/crowd.md has what it
found: ``scenarios.CROWD``, the crowd scenarios' default, came from a ``--nudge 0.02``
search with world-frame slots; the search repeated for the turning ``crowd_slots`` found
less jitter but contacts on circle-250 (docs/crowd.md, "A search for the turning slots").

Usage::

    python benchmarks/tune_crowd.py --trials 100 --seeds 0:16 --nudge 0.02 --dense 3 --study /tmp/crowd.db
    python benchmarks/tune_crowd.py --validate '{"inertia": 0.3}' --seeds 32:64 --circles
    python benchmarks/tune_crowd.py --trials 300 --seeds 0:16 --nudge 0.02 --dense 3 \
        --seed0 --fix '{"commit_danger": 0}' --study /tmp/crowd2.db

``--fix JSON`` holds those options at its values instead of searching them (the last
search, in docs/crowd.md, held ``commit_danger`` at 0); its other keys are passed on to
every set, e.g. ``--fix '{"unstick": true, "jam_horizon": 0.6, "jam_oncomers": 3}'`` for
a search over the default's other options. ``speed_exponent`` joined the
searched options after that search; ``--fix '{"speed_exponent": 1}'`` searches the space
it searched. The search with it (docs/crowd.md, "A search with the speed exponent") found
today's ``CROWD`` and widened three ranges whose edges its best sets reached: ``horizon``
to 3.0 s, ``side_bias`` to 0.3 and ``smoothness`` to 1.0; the chord search's best sets
reached ``return_margin``'s edge, 0.7, which now runs to 0.9.

Run two processes with the same ``--study`` (and different ``--sampler-seed``) to use
both cores. Needs the ``tune`` extra (Optuna) for the search.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crowd_quality as cq  # noqa: E402

SCENES = ("hallway", "crossing", "bottleneck", "doorway")


PHASES: int | None = None
"""``Steering(decision_phases=)`` of every run (``--phases``; None: ``CROWD_PHASES``)."""

CREEP = False
"""``crowd_steering(creep=)`` of every run (``--creep``)."""

SHAPE = "half_cosine"
"""``crowd_steering(shape=)`` of every run (``--shape``): the interest's shape."""


def steering(has_walls: bool, params: dict):
    """``crowd_steering(options=params)``: the crowd scenarios' configuration with exactly
    ``params`` on its CollisionDanger (``{}``: the plain one), deciding in ``PHASES``
    phases (the default configuration's ``CROWD_PHASES`` unless ``--phases`` is given),
    with ``creep=CREEP`` (``--creep``) and ``shape=SHAPE`` (``--shape``)."""
    import contextsteer as cs

    phases = cs.scenarios.CROWD_PHASES if PHASES is None else PHASES
    return cs.scenarios.crowd_steering(
        walls=has_walls, options=params, decision_phases=phases, creep=CREEP, shape=SHAPE
    )


def rvo2_runs(seeds, cache: str) -> dict:
    """RVO2's run of every scene and seed, from ``cache`` when it holds them."""
    runs = {}
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            runs = pickle.load(f)
    # (A row cached before the metrics had turning per metre is run again.)
    missing = [
        (sc, s)
        for sc in SCENES
        for s in seeds
        if (sc, s) not in runs or "turn_deg_per_m" not in runs[(sc, s)]
    ]
    for sc, s in missing:
        scene = cq.SCENES[sc](seed=s)
        runs[(sc, s)] = cq.run(cq.RVO2(scene), scene)
    if missing:
        with open(cache, "wb") as f:
            pickle.dump(runs, f)
    return runs


def nudged(params: dict, seed: int, frac: float) -> dict:
    """``params`` with every float option scaled by its own factor in [1 - frac, 1 + frac],
    drawn from ``seed`` (the same for every scene of that seed); integers untouched.
    Scoring each seed on a different neighbour of a parameter set scores the set's
    neighbourhood: a set whose worst seeds hold only at its exact values loses."""
    rng = np.random.default_rng([seed, 7919])
    return {
        k: (v if isinstance(v, int) else v * (1.0 + frac * rng.uniform(-1.0, 1.0)))
        for k, v in sorted(params.items())
    }


def slot_set(slots: int = 16, ring: bool = False):
    """The slots the agents turn with their heading: the crowd scenarios' for the
    velocity configuration (``cs.scenarios.crowd_slots_for``: at 16 the set denser
    ahead) unless ``ring``; None for a regular ring (the adapter's ring of ``slots``)."""
    import contextsteer as cs

    chosen = cs.scenarios.crowd_slots_for(slots, rotate=not ring)
    return None if isinstance(chosen, int) else chosen


def system(scene, params: dict, slots: int = 16, max_accel: float = 6.0, ring: bool = False):
    """The benchmark's contextsteer adapter on ``scene``: ``steering`` with ``params`` (walls
    when the scene has them), the slots of ``slot_set(slots, ring)``, ``max_accel``,
    push-apart on."""
    steer = steering(len(scene.walls) > 0, params)
    return cq.ContextSteer(scene, steer, max_accel, True, slots, slot_set=slot_set(slots, ring))


def evaluate(
    params: dict,
    seeds,
    rvo2: dict,
    nudge: float = 0.0,
    slots: int = 16,
    max_accel: float = 6.0,
    ring: bool = False,
) -> dict:
    """Per scene: contextsteer's pooled figures over ``seeds`` against RVO2's, each seed
    run with ``nudged(params, seed, nudge)``, the slots of ``slot_set(slots, ring)`` and
    ``max_accel`` (the benchmark's ``crowd_slots`` and 6 m/s² by default)."""
    out = {}
    for sc in SCENES:
        rows = []
        for s in seeds:
            scene = cq.SCENES[sc](seed=s)
            adapter = system(scene, nudged(params, s, nudge), slots, max_accel, ring)
            rows.append(cq.run(adapter, scene))
        mine, ref = cq.pool(rows), cq.pool([rvo2[(sc, s)] for s in seeds])
        out[sc] = {
            "jitter": mine["jitter_deg_per_step"],
            "rvo2_jitter": ref["jitter_deg_per_step"],
            "per_metre": mine["turn_deg_per_m"],
            "rvo2_per_metre": ref["turn_deg_per_m"],
            "collisions": mine["collisions"],
            "wall": mine["wall_penetrations"],
            "arrived": mine["arrived_pct"],
            "arrived_min": mine["arrived_min_pct"],
            "ttg_vs": cq.ttg_vs(mine, ref),
        }
    return out


def dense_runs(
    params: dict,
    runs: int,
    nudge: float = 0.0,
    slots: int = 16,
    max_accel: float = 6.0,
    ring: bool = False,
    scene_name: str = "circle-250",
) -> list[dict]:
    """The rows of ``runs`` runs on ``scene_name`` (circle-250: 250 agents crossing one
    centre, the densest scene of the benchmark, which the four seeded scenes do not stand
    for), run k with ``nudged(params, k, nudge)``, k = 0 .. runs - 1 (the circle has no
    seed: the nudges are its neighbourhood)."""
    rows = []
    for k in range(runs):
        scene = cq.SCENES[scene_name]()
        adapter = system(scene, nudged(params, k, nudge), slots, max_accel, ring)
        rows.append(cq.run(adapter, scene))
    return rows


def contacts(rows: list[dict]) -> int:
    """Contact episodes summed over the runs' ``rows``."""
    return sum(int(r["collisions"]) for r in rows)


def dense_contacts(*args, **kwargs) -> int:
    """Contact episodes summed over ``dense_runs(*args, **kwargs)``."""
    return contacts(dense_runs(*args, **kwargs))


def circle_figures(
    params: dict, dense: list[dict], slots: int = 16, max_accel: float = 6.0, ring: bool = False
) -> dict:
    """The circles' figures of ``--circle-score``: circle-250's jitter and time to goal
    pooled over the ``dense`` runs (``dense_runs``), circle-16's and circle-64's from one
    unnudged run each (their perfect symmetry is the test)."""
    pooled = cq.pool(dense)
    out = {"circle-250": (pooled["jitter_deg_per_step"], pooled["mean_ttg_s"])}
    for n in (16, 64):
        scene = cq.SCENES[f"circle-{n}"]()
        row = cq.run(system(scene, params, slots, max_accel, ring), scene)
        out[f"circle-{n}"] = (row["jitter_deg_per_step"], row["mean_ttg_s"])
    return out


def circle_penalty(circles: dict, reference: dict, rvo2_jitter: float) -> float:
    """What ``--circle-score`` adds to a set's score: log(circle-250's jitter / RVO2's) as
    one more scene of the mean (weight 1/5, the four seeded scenes' mean taking 4/5), plus
    2 × log of how much more circle-16 and circle-64 turn than ``reference`` (the library's
    default, whose circles RVO2 deadlocks on) where they turn more, plus 0.1 a per cent of
    time to goal on any circle more than 5 % over the reference's."""
    j250 = circles["circle-250"][0]
    value = 0.2 * math.log(j250 / rvo2_jitter)
    for name, (jit, ttg) in circles.items():
        ref_jit, ref_ttg = reference[name]
        if name != "circle-250":
            value += 2.0 * max(0.0, math.log(jit / ref_jit))
        value += 0.1 * max(0.0, 100.0 * (ttg / ref_ttg - 1.0) - 5.0)
    return value


def score(
    res: dict, seed0: dict | None = None, dense: int = 0, circles: float | None = None
) -> float:
    """Mean log jitter ratio to RVO2's plus the penalties (see the module docstring);
    ``dense``: contact episodes of ``dense_contacts``, 2 each like the seeded scenes';
    ``circles``: ``circle_penalty``'s value (``--circle-score``), the seeded scenes' mean
    then weighing 4/5."""
    value = float(np.mean([math.log(r["jitter"] / r["rvo2_jitter"]) for r in res.values()]))
    if circles is not None:
        value = 0.8 * value + circles
    value += 2.0 * dense
    for sc, r in res.items():
        value += 2.0 * (r["collisions"] + r["wall"])
        value += 0.3 * max(0.0, 99.5 - r["arrived"]) + 0.1 * max(0.0, 92.0 - r["arrived_min"])
        value += 0.1 * max(0.0, r["ttg_vs"] - 13.0)
        if seed0 is not None:
            value += 0.1 * max(0.0, seed0[sc]["ttg_vs"] - 14.0)
            value += 0.5 * max(0.0, 100.0 - seed0[sc]["arrived"])
    return value


def _table(res: dict) -> str:
    return "\n".join(
        f"  {sc:10s} jitter {r['jitter']:.2f} (RVO2 {r['rvo2_jitter']:.2f}, "
        f"x{r['jitter'] / r['rvo2_jitter']:.2f}; {r['per_metre']:.1f} deg/m, "
        f"x{r['per_metre'] / r['rvo2_per_metre']:.2f})  arrived {r['arrived']:.1f} % "
        f"(worst {r['arrived_min']:.0f})  TTG {r['ttg_vs']:+.1f} %  contacts {r['collisions']}"
        for sc, r in res.items()
    )


def _seeds(text: str) -> list[int]:
    if ":" in text:
        lo, hi = (int(x) for x in text.split(":"))
        return list(range(lo, hi))
    return list(range(int(text)))


def search_space(trial, fixed: dict | None = None) -> dict:
    """One parameter set from an Optuna ``trial``: every option on its grid (steps keep
    every value round, so the best set can become a default as found), except those in
    ``fixed`` (``--fix``), which are held at their values and never asked of the trial;
    keys of ``fixed`` outside the searched options (``unstick``, ``jam_horizon``, ...) are
    passed on as they are, so a search can run over the default's other options."""
    fixed = fixed or {}
    searched = {
        "commit", "commit_danger", "turn_steps", "turn_margin", "return_margin",
        "return_step", "retreat_speed", "inertia", "side_bias", "smoothness",
        "speed_exponent", "horizon",
    }  # fmt: skip
    extra = {k: v for k, v in fixed.items() if k not in searched}

    def pick(name: str, low: float, high: float, step: float) -> float:
        if name in fixed:
            return float(fixed[name])
        # Optuna's grid values are low + i·step in floats (0.060000000000000005): rounded
        # to the step's decimals, so the set is printed and used as the round grid value.
        decimals = max(0, -math.floor(math.log10(step)))
        return round(trial.suggest_float(name, low, high, step=step), decimals)

    return {
        **extra,
        "commit": pick("commit", 0.0, 0.2, 0.01),
        "commit_danger": pick("commit_danger", 0.0, 0.2, 0.01),
        "turn_steps": int(fixed["turn_steps"])
        if "turn_steps" in fixed
        else trial.suggest_int("turn_steps", 3, 6),
        "turn_margin": pick("turn_margin", 0.0, 0.15, 0.01),
        "return_margin": pick("return_margin", 0.2, 0.9, 0.05),
        "return_step": pick("return_step", 0.05, 0.25, 0.01),
        "retreat_speed": pick("retreat_speed", 0.35, 0.8, 0.05),
        "inertia": pick("inertia", 0.1, 0.5, 0.05),
        "side_bias": pick("side_bias", 0.0, 0.3, 0.01),
        "smoothness": pick("smoothness", 0.05, 1.0, 0.05),
        "speed_exponent": pick("speed_exponent", 0.3, 1.0, 0.05),
        "horizon": pick("horizon", 1.8, 3.0, 0.05),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="12", help="N (seeds 0..N-1) or LO:HI")
    ap.add_argument("--seed0", action="store_true", help="also score seed 0 alone")
    ap.add_argument("--trials", type=int, default=26)
    ap.add_argument("--study", default="/tmp/contextsteer-tune-crowd.db")
    ap.add_argument("--sampler-seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/contextsteer-tune-crowd-rvo2.pkl")
    ap.add_argument("--validate", metavar="JSON", help="evaluate these CollisionDanger options")
    ap.add_argument("--circles", action="store_true", help="with --validate: the circles too")
    ap.add_argument(
        "--circle-score",
        action="store_true",
        help="with --dense: score the circles' turning and time to goal too (circle_penalty)",
    )
    ap.add_argument(
        "--nudge",
        type=float,
        default=0.0,
        help="run each seed with the float options scaled by up to 1 +- NUDGE (see nudged)",
    )
    ap.add_argument(
        "--enqueue", metavar="JSON", action="append", default=[], help="try this set first"
    )
    ap.add_argument(
        "--dense",
        type=int,
        default=0,
        metavar="RUNS",
        help="also run circle-250 RUNS times (nudged) and score its contacts (see dense_contacts)",
    )
    ap.add_argument("--slots", type=int, default=16, help="slots per agent (benchmark: 16)")
    ap.add_argument(
        "--ring",
        action="store_true",
        help="a regular ring of --slots (default for 16: cs.scenarios.crowd_slots())",
    )
    ap.add_argument(
        "--max-accel", type=float, default=6.0, help="the agents' max acceleration (m/s^2)"
    )
    ap.add_argument(
        "--fix",
        default="{}",
        help="JSON of options held at these values instead of searched, e.g. "
        "'{\"commit_danger\": 0}'",
    )
    ap.add_argument(
        "--phases",
        type=int,
        default=None,
        help="Steering(decision_phases=) of every run (default: CROWD_PHASES)",
    )
    ap.add_argument(
        "--creep",
        action="store_true",
        help="crowd_steering(creep=True) in every run: the speeds between the levels",
    )
    ap.add_argument(
        "--shape",
        choices=("half_cosine", "chord"),
        default="half_cosine",
        help="crowd_steering(shape=) in every run: the interest's shape",
    )
    args = ap.parse_args()
    global PHASES, CREEP, SHAPE
    PHASES = args.phases
    CREEP = args.creep
    SHAPE = args.shape
    seeds = _seeds(args.seeds)
    rvo2 = rvo2_runs(sorted(set(seeds) | ({0} if args.seed0 else set())), args.cache)

    if args.validate is not None:
        params = json.loads(args.validate)
        t = time.perf_counter()
        res = evaluate(params, seeds, rvo2, args.nudge, args.slots, args.max_accel, args.ring)
        # As the search scores (objective below): seed 0 alone, unnudged, with --seed0.
        res0 = (
            evaluate(params, [0], rvo2, 0.0, args.slots, args.max_accel, args.ring)
            if args.seed0
            else None
        )
        dense = dense_contacts(
            params, args.dense, args.nudge, args.slots, args.max_accel, args.ring
        )
        print(
            f"seeds {seeds[0]}-{seeds[-1]}: score {score(res, res0, dense):.3f} "
            f"({time.perf_counter() - t:.0f} s)"
        )
        print(_table(res))
        if args.dense:
            print(f"  circle-250 contacts over {args.dense} nudged runs: {dense}")
        if args.circles:
            for n in (16, 64, 250):
                scene = cq.SCENES[f"circle-{n}"]()
                adapter = system(scene, params, args.slots, args.max_accel, args.ring)
                row = cq.run(adapter, scene)
                print(
                    f"  circle-{n:<3d} jitter {row['jitter_deg_per_step']:.2f}  arrived "
                    f"{row['arrived_pct']:.1f} %  TTG {row['mean_ttg_s']:.1f} s  "
                    f"contacts {row['collisions']}"
                )
        return

    import optuna

    study = optuna.create_study(
        study_name="crowd-jitter",
        storage=f"sqlite:///{args.study}",
        load_if_exists=True,
        sampler=optuna.samplers.TPESampler(seed=args.sampler_seed, multivariate=True),
    )

    fixed = json.loads(args.fix)

    reference: list = []

    def circle_reference() -> tuple[dict, float]:
        """``circle_figures`` of the library's default (``CROWD``, the half-cosine, the same
        nudged runs) and RVO2's circle-250 jitter, computed once."""
        if not reference:
            import contextsteer as cs

            global SHAPE
            shape, SHAPE = SHAPE, "half_cosine"
            crowd = dict(cs.scenarios.CROWD)
            try:
                ref_rows = dense_runs(
                    crowd, args.dense, args.nudge, args.slots, args.max_accel, args.ring
                )
                figures = circle_figures(crowd, ref_rows, args.slots, args.max_accel, args.ring)
            finally:
                SHAPE = shape  # the searched sets run with --shape again, even after an error
            scene = cq.SCENES["circle-250"]()
            rvo2_row = cq.run(cq.RVO2(scene), scene)
            reference.extend([figures, rvo2_row["jitter_deg_per_step"]])
            print(
                f"circle reference (CROWD, half-cosine): {figures}; RVO2 circle-250 jitter "
                f"{reference[1]:.3f}",
                flush=True,
            )
        return reference[0], reference[1]

    def objective(trial) -> float:
        params = search_space(trial, fixed)
        res = evaluate(params, seeds, rvo2, args.nudge, args.slots, args.max_accel, args.ring)
        res0 = (
            evaluate(params, [0], rvo2, 0.0, args.slots, args.max_accel, args.ring)
            if args.seed0
            else None
        )
        rows = dense_runs(params, args.dense, args.nudge, args.slots, args.max_accel, args.ring)
        dense = contacts(rows)
        extra, circles = None, ""
        if args.circle_score:
            figures = circle_figures(params, rows, args.slots, args.max_accel, args.ring)
            extra = circle_penalty(figures, *circle_reference())
            circles = "".join(
                f"\n  {name:10s} jitter {j:.2f}  TTG {t:.1f} s" for name, (j, t) in figures.items()
            )
        value = score(res, res0, dense, extra)
        print(
            f"trial {trial.number}: score {value:.3f}, circle-250 contacts {dense}\n"
            f"{_table(res)}{circles}",
            flush=True,
        )
        return value

    for text in args.enqueue:
        study.enqueue_trial(json.loads(text), skip_if_exists=True)
    study.optimize(objective, n_trials=args.trials)
    best = study.best_trial
    # The trial's stored values are Optuna's floats; the set it ran is their round grid
    # values (search_space), printed so.
    print(
        f"best: trial {best.number}, score {best.value:.3f}\n"
        f"{json.dumps(search_space(optuna.trial.FixedTrial(best.params), fixed))}"
    )


if __name__ == "__main__":
    main()
