"""Where a crowd run's heading jitter comes from: not a test.

Runs RVO2 and contextsteer's velocity-space configuration on the crowd benchmark's scenes
(``crowd_quality``: same protocol, same positions-based metric) and splits the heading
jitter three ways:

- **reversals**: the share of all turning (Σ|Δheading| over the steps the jitter counts)
  that is a turn undone the very next step (lag-1 sign reversal). A smooth curve scores
  0, a zig-zag 1.
- **speed**: the share of the turning done below ``--slow`` m/s, and the mean turn per
  step there (a small change of a slow velocity is a large change of its heading).
- **sizes** (``--split``): the share of the turning done in steps that turn less than
  1°, 1–3°, 3–10°, 10–30° and more: many small corrections, or a few course changes
  each slewed over a few steps at the acceleration limit.
- **phases** (``--split``): the share done in the first second, within ``--near`` m
  (3) of the goal, and in between.
- **time scales** (``--scales``): the heading variation seen k steps apart,
  Σ|h(t + k) − h(t)| / k, for k = 1, 2, 4 ... 64, as a share of k = 1's (which is the
  turning the jitter counts). A zig-zag vanishes at coarse scales; a course that bends
  and stays bent keeps its share. With it, the share of the turning done in steps where
  the agent switched the side on which it passes an engaged neighbour (the sign of
  (p_j − p_i) × (v_i − v_j), which constant velocities keep).
- **decision flips** (contextsteer only): the decision itself (``Simulation.
  chosen_direction``) going A, B, A on three consecutive steps, classified by why A was
  dropped at the middle step: A's slot had turned dangerous and no slot was safe (a jam:
  every course collides within the horizon), A's slot had turned dangerous while B's was
  safe (a threat crossing the horizon, or the other agent's last dodge), or A's slot was
  still safe and B simply offered more progress. Each share is of the decision's total
  turning on the steps the agent moved.

Usage::

    python benchmarks/crowd_jitter.py [--scenes hallway,crossing,bottleneck,doorway]
        [--seed 0] [--params '{"inertia": 0.6}'] [--smooth] [--max-accel 6] [--slow 0.7]
        [--split] [--near 3] [--scales] [--seed 0 | --seed 0:8]

``--seed A:B`` runs seeds A..B−1, a row each; the ``--scales`` table pools them.
``--params`` are CollisionDanger keyword arguments on top of
``scenarios.crowd_steering``'s (``--smooth``: its ``smooth=True`` preset);
``--max-accel`` is the agents' acceleration limit (m/s², the benchmark's 6; 100 moves an
agent at its decision).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import crowd_quality as cq  # noqa: E402

FLIP_KINDS = ("jam", "turned unsafe", "outvalued")
"""Why a decision flip A, B, A dropped A (see the module docstring)."""


def _displacements(positions: np.ndarray, starts: np.ndarray):
    """(displacement of steps 1..T (T, N, 2), whether each is faster than the jitter's
    minimum speed (T, N)), from the positions before step 1 and after each step."""
    p = np.concatenate([np.asarray(starts, np.float64)[None], np.asarray(positions, np.float64)])
    steps = np.diff(p, axis=0)
    return steps, np.linalg.norm(steps, axis=2) > cq.JITTER_MIN_SPEED * cq.DT


def _walked(positions: np.ndarray, starts: np.ndarray, arrival_s: np.ndarray):
    """(displacement of steps 1..T (T, N, 2), its heading (T, N), whether the agent walked
    that step (the arrival step included), whether the jitter may count it: walked and
    faster than its minimum speed)."""
    steps, fast = _displacements(positions, starts)
    arrival_step = np.where(np.isnan(arrival_s), np.inf, np.round(arrival_s / cq.DT))
    walking = np.arange(1, steps.shape[0] + 1)[:, None] <= arrival_step[None, :]
    return steps, np.arctan2(steps[..., 1], steps[..., 0]), walking, fast & walking


def turn_series(positions: np.ndarray, starts: np.ndarray, arrival_s: np.ndarray):
    """The signed turns the benchmark's heading jitter counts.

    Parameters
    ----------
    positions : (T, N, 2) array
        Every agent's position after steps 1..T of a ``crowd_quality.run``.
    starts : (N, 2) array
        The positions before step 1.
    arrival_s : (N,) array
        Arrival times (s; NaN: never), as ``crowd_quality.run`` returns them.

    Returns
    -------
    turn : (T, N) float64
        turn[t] = the signed angle (rad, in [−π, π)) from the displacement of step t to
        that of step t + 1 (1-based steps; row 0 is the turn into step 2's displacement
        ... row T − 1 is 0).
    speed : (T, N) float64
        The speed (m/s) of the later displacement of each turn.
    counted : (T, N) bool
        The turns ``crowd_quality.Metrics`` counts: both displacements faster than
        ``JITTER_MIN_SPEED`` and the agent still walking at the later step (its arrival
        step included).
    """
    steps, heading, _, ok = _walked(positions, starts, arrival_s)
    t_count = steps.shape[0]
    turn = np.zeros((t_count, steps.shape[1]))
    speed = np.zeros_like(turn)
    counted = np.zeros(turn.shape, dtype=bool)
    if t_count >= 2:
        turn[:-1] = cq._wrap(heading[1:] - heading[:-1])
        speed[:-1] = np.linalg.norm(steps[1:], axis=2) / cq.DT
        # Both displacements fast, the later one walked (so the earlier one too).
        counted[:-1] = ok[1:] & ok[:-1]
    return turn, speed, counted


def jitter(turn: np.ndarray, counted: np.ndarray) -> float:
    """The benchmark's heading jitter (°/step): per agent the mean |turn| over its counted
    turns, then the mean over agents with any."""
    n = counted.sum(axis=0)
    total = np.where(counted, np.abs(turn), 0.0).sum(axis=0)
    moved = n > 0
    return float(np.degrees(np.mean(total[moved] / n[moved]))) if moved.any() else float("nan")


def reversal_share(turn: np.ndarray, counted: np.ndarray) -> float:
    """Share of the turning (over counted turns that follow a counted turn) whose sign is
    opposite to the turn before it: 0 for a smooth curve, 1 for a zig-zag."""
    a, b = turn[:-1], turn[1:]
    both = counted[:-1] & counted[1:]
    gross = np.abs(b)[both].sum()
    return float(np.abs(b)[both & (a * b < 0)].sum() / gross) if gross > 0 else float("nan")


def slow_share(turn: np.ndarray, speed: np.ndarray, counted: np.ndarray, slow: float):
    """(share of counted steps below ``slow`` m/s, share of the turning there, mean turn
    there in °/step)."""
    s = counted & (speed < slow)
    gross = np.abs(turn)[counted].sum()
    return (
        float(s.sum() / max(counted.sum(), 1)),
        float(np.abs(turn)[s].sum() / gross) if gross > 0 else float("nan"),
        float(np.degrees(np.abs(turn)[s].mean())) if s.any() else float("nan"),
    )


SIZE_EDGES_DEG = (1.0, 3.0, 10.0, 30.0)
"""Upper edges (°) of the turn-size bins of ``size_shares`` (the last bin is unbounded)."""


def size_shares(turn: np.ndarray, counted: np.ndarray) -> list[float]:
    """Share of the turning (Σ|turn| over counted turns) in turns of each size: below
    1°, 1–3°, 3–10°, 10–30° and 30° or more (``SIZE_EDGES_DEG``); NaN without turning."""
    a = np.degrees(np.abs(turn[counted]))
    gross = a.sum()
    if gross == 0:
        return [float("nan")] * (len(SIZE_EDGES_DEG) + 1)
    edges = (0.0, *SIZE_EDGES_DEG, np.inf)
    return [float(a[(a >= lo) & (a < hi)].sum() / gross) for lo, hi in zip(edges[:-1], edges[1:])]


def phase_shares(
    turn: np.ndarray, counted: np.ndarray, positions: np.ndarray, goals: np.ndarray, near: float
) -> tuple[float, float, float]:
    """(start, middle, end): shares of the turning in the first second (the turns into
    the displacements of steps 2 .. 1/DT), within ``near`` m of the goal after the later
    displacement (past the first second), and the rest. ``positions`` (T, N, 2) are the
    positions after steps 1..T, as for ``turn_series``; NaN without turning."""
    a = np.where(counted, np.abs(turn), 0.0)
    gross = a.sum()
    if gross == 0:
        return (float("nan"),) * 3
    t = np.arange(turn.shape[0])[:, None]
    start = np.broadcast_to(t < round(1.0 / cq.DT) - 1, a.shape)
    dist = np.full(a.shape, np.inf)
    dist[:-1] = np.linalg.norm(np.asarray(positions)[1:] - np.asarray(goals)[None], axis=2)
    end = ~start & (dist < near)
    return (
        float(a[start].sum() / gross),
        float(a[~start & ~end].sum() / gross),
        float(a[end].sum() / gross),
    )


def decision_flips(slot, direction, strength, danger, speed_map, moving):
    """Classify the decision's A, B, A flips.

    Parameters
    ----------
    slot : (T, N) int
        ``Simulation.chosen_slot`` after each step (−1: no slot, standing).
    direction : (T, N, 2) array
        ``Simulation.chosen_direction`` after each step.
    strength : (T, N) array
        ``Simulation.strength`` after each step.
    danger, speed_map : (T, N, K) arrays
        ``Simulation.danger`` and ``Simulation.speed`` after each step.
    moving : (T, N) bool
        The agent walked (and moved) at that step.

    Returns
    -------
    dict
        ``total``: the decision's turning (Σ|angle between consecutive decisions|, rad,
        over steps where the agent moved at both); ``steps``: how many such steps; for
        each kind of FLIP_KINDS, the share of that total in the flips of that kind (the
        A → B turn of A, B, A); ``flips``: the share in all flips.
    """
    d = np.asarray(direction, np.float64)
    cross = d[:-1, :, 0] * d[1:, :, 1] - d[:-1, :, 1] * d[1:, :, 0]
    dot = (d[:-1] * d[1:]).sum(axis=2)
    ang = np.arctan2(cross, dot)  # ang[t]: decision t -> t + 1
    both = moving[:-1] & moving[1:]
    total = float(np.abs(ang)[both].sum())
    out = {"total": total, "steps": int(both.sum()), "flips": 0.0, **{k: 0.0 for k in FLIP_KINDS}}
    if total == 0.0 or len(ang) < 2:
        return out
    # A, B, A: the turn t -> t + 1 undone by t + 1 -> t + 2.
    flip = both[:-1] & both[1:] & (ang[:-1] * ang[1:] < 0)
    t, i = np.nonzero(flip)
    a = slot[t, i]  # A: the decision at t
    b = slot[t + 1, i]  # B: at t + 1, when A was dropped
    valid = (a >= 0) & (b >= 0)
    t, i, a, b = t[valid], i[valid], a[valid], b[valid]
    mag = np.abs(ang[t, i])
    a_danger = danger[t + 1, i, a] > 0
    b_danger = danger[t + 1, i, b] > 0
    a_slower = speed_map[t + 1, i, a] < np.minimum(strength[t, i], 1.0)
    kind = np.where(a_danger, np.where(b_danger, 0, 1), np.where(a_slower, 1, 2))
    for k, name in enumerate(FLIP_KINDS):
        out[name] = float(mag[kind == k].sum() / total)
    out["flips"] = float(mag.sum() / total)
    return out


SCALES = (1, 2, 4, 8, 16, 32, 64)
"""Step lags of ``scale_variation`` (``--scales``)."""


def scale_variation(positions, starts, arrival_s, ks=SCALES) -> np.ndarray:
    """Heading variation at coarser time scales.

    For each lag k of ``ks``: Σ |wrap(h(t + k) − h(t))| / k (rad) over the displacements
    t and t + k that the jitter may count (both faster than its minimum speed, both
    walked), h being the heading of each step's displacement. For k = 1 this is the
    turning the jitter counts (``turn_series``' counted turns). A course that turns by
    θ and keeps it adds θ at every k ≥ 1 it spans; a zig-zag of ±θ adds 2θ a cycle at
    k = 1 and about nothing at k = 2. NaN for a lag not shorter than the run.
    """
    _, h, _, ok = _walked(positions, starts, arrival_s)
    out = np.full(len(ks), np.nan)
    for n, k in enumerate(ks):
        if k < h.shape[0]:
            both = ok[k:] & ok[:-k]
            out[n] = float(np.abs(cq._wrap(h[k:] - h[:-k]))[both].sum() / k)
    return out


def side_switch_share(
    positions, starts, arrival_s, reach: float = 4.0, horizon: float = 3.0, miss: float = 1.3
) -> float:
    """Share of the counted turning done in steps where the agent switched the side on
    which it passes an engaged neighbour.

    The side of agent i towards j is the sign of (p_j − p_i) × (v_i − v_j): constant
    while both keep their velocities, so only a change of velocity switches it. For the
    turn from displacement t to t + 1 of agent i, the side is taken with i's velocity
    of step t and of step t + 1, both against j's velocity of step t + 1 and the
    positions between the two steps, so that only i's own turn can switch it. j counts
    if it is within ``reach`` m, not yet home (standing or not), and engaged under either
    velocity: closing, with its closest approach within ``horizon`` s and nearer than
    ``miss`` m.
    """
    p = np.concatenate([np.asarray(starts, np.float64)[None], np.asarray(positions, np.float64)])
    v = np.diff(p, axis=0) / cq.DT
    _, h, walking, ok = _walked(positions, starts, arrival_s)
    total = switched = 0.0
    for t in range(v.shape[0] - 1):
        counted = ok[t] & ok[t + 1]
        if not counted.any():
            continue
        rel = p[t + 1][None, :, :] - p[t + 1][:, None, :]  # p_j − p_i
        dist = np.linalg.norm(rel, axis=2)
        near = (dist < reach) & (dist > 0.0) & walking[t + 1][None, :]
        sides = []
        engaged = np.zeros_like(near)
        for vi in (v[t], v[t + 1]):
            w = vi[:, None, :] - v[t + 1][None, :, :]
            cross = rel[..., 0] * w[..., 1] - rel[..., 1] * w[..., 0]
            ww = np.maximum((w**2).sum(axis=2), 1e-12)
            closing = (rel * w).sum(axis=2) / ww
            engaged |= (closing > 0) & (closing < horizon) & (np.abs(cross) / np.sqrt(ww) < miss)
            sides.append(np.sign(cross))
        switch = (near & engaged & (sides[0] * sides[1] < 0)).any(axis=1)
        turn = np.abs(cq._wrap(h[t + 1] - h[t]))
        total += turn[counted].sum()
        switched += turn[counted & switch].sum()
    return float(switched / total) if total > 0 else float("nan")


class _Recorder:
    """A crowd_quality adapter around another: keeps the positions after each step and,
    for contextsteer, the decision (slot, direction, strength, danger and speed maps)."""

    pre_push = None

    def __init__(self, system):
        self.system = system
        self.trace: list[np.ndarray] = []
        self.decisions: list[tuple] = []

    def set_targets(self, targets):
        self.system.set_targets(targets)

    def step(self):
        self.system.step()
        if isinstance(self.system, cq.ContextSteer):
            sim = self.system.sim
            self.decisions.append(
                (
                    np.array(sim.chosen_slot),
                    np.array(sim.chosen_direction),
                    np.array(sim.strength),
                    np.array(sim.danger),
                    np.array(sim.speed),
                    np.array(self.system.agents.alive),
                )
            )

    def positions(self):
        p = self.system.positions()
        self.trace.append(np.array(p, np.float64))
        return p

    def retire(self, ids):
        self.system.retire(ids)


def analyse(system, scene, slow: float, near: float = 3.0, scales: bool = False) -> dict:
    """Run ``system`` on ``scene`` under the benchmark's protocol and split its jitter
    (``scales``: also ``scale_variation`` and ``side_switch_share``)."""
    rec = _Recorder(system)
    row = cq.run(rec, scene)
    p = np.array(rec.trace)
    turn, speed, counted = turn_series(p, scene.starts, row["arrival_s"])
    out = {
        "jitter": row["jitter_deg_per_step"],
        "jitter_check": jitter(turn, counted),
        "reversals": reversal_share(turn, counted),
        "slow": slow_share(turn, speed, counted, slow),
        "sizes": size_shares(turn, counted),
        "phases": phase_shares(turn, counted, p, scene.goals, near),
        "turning_per_agent": float(
            np.degrees(np.where(counted, np.abs(turn), 0.0).sum()) / scene.n
        ),
        "arrived": row["arrived_pct"],
        "collisions": row["collisions"],
    }
    if scales:
        out["scales"] = scale_variation(p, scene.starts, row["arrival_s"])
        out["side_switches"] = side_switch_share(p, scene.starts, row["arrival_s"])
    if rec.decisions:
        slot, direction, strength, danger, speed_map, alive = (
            np.array([d[k] for d in rec.decisions]) for k in range(6)
        )
        _, moved = _displacements(p, scene.starts)
        out["decisions"] = decision_flips(
            slot, direction, strength, danger, speed_map, alive & moved
        )
    return out


def contextsteer_system(scene, params: dict, smooth: bool = False, max_accel: float = 6.0):
    """The crowd benchmark's contextsteer adapter on ``scene`` (``crowd_quality``'s
    cs-velocity, or cs-smooth with ``smooth``), with the CollisionDanger options
    ``params`` on top of the preset's. The decision phases, the turning slots and the slot
    set the crowd scenarios give the preset stay as they are, so that with no ``params``
    the figures are the benchmark's own."""
    import contextsteer as cs

    walls = len(scene.walls) > 0
    steering = cs.scenarios.crowd_steering(walls=walls, smooth=smooth)
    if params:
        base = cs.scenarios.SMOOTH_CROWD if smooth else cs.scenarios.CROWD
        steering = cs.scenarios.crowd_steering(
            walls=walls,
            options={**base, **params},
            decision_phases=steering.decision_phases,
            rotate=steering.rotate,
        )
    opt = cq.Options(velocity_accel=max_accel)
    return cq._velocity(scene, opt, "smooth" if smooth else "default", steering)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default="hallway,crossing,bottleneck,doorway")
    ap.add_argument("--seed", default="0", help="a seed, or A:B for seeds A..B-1")
    ap.add_argument("--params", default="{}", help="CollisionDanger keyword arguments (JSON)")
    ap.add_argument("--smooth", action="store_true", help="crowd_steering(smooth=True)")
    ap.add_argument("--max-accel", type=float, default=6.0)
    ap.add_argument("--slow", type=float, default=0.7, help="m/s: 'slow' steps below this")
    ap.add_argument("--no-rvo2", action="store_true")
    ap.add_argument("--split", action="store_true", help="also split by turn size and phase")
    ap.add_argument("--near", type=float, default=3.0, help="m: the 'end' phase (--split)")
    ap.add_argument("--scales", action="store_true", help="also the turning at coarser time scales")
    args = ap.parse_args(argv)
    unknown = [n for n in args.scenes.split(",") if n not in cq.SCENES]
    if unknown:
        ap.error(f"--scenes: unknown {', '.join(unknown)}; the scenes are {', '.join(cq.SCENES)}")

    params = json.loads(args.params)
    lo, _, hi = args.seed.partition(":")
    try:
        seeds = range(int(lo), int(hi)) if hi else [int(lo)]
    except ValueError:
        ap.error(f"--seed: expected an integer or A:B, got {args.seed!r}")

    print(
        f"seed {args.seed}; contextsteer: crowd_steering"
        f"{'(smooth=True)' if args.smooth else ''} {params or '(defaults)'}, "
        f"max_accel {args.max_accel} m/s²; slow: below {args.slow} m/s\n"
    )
    seed_cell = "seed | " if len(seeds) > 1 else ""
    print(
        f"| scene | {seed_cell}system | jitter °/step | reversals | slow steps | turning when slow "
        "| ° when slow | decision °/step | in flips | jam | turned unsafe | outvalued |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if seed_cell else ""))
    splits = []
    pooled: dict[tuple, list] = {}
    for name, seed in ((n, s) for n in args.scenes.split(",") for s in seeds):
        scene = cq.SCENES[name](seed=seed) if name in cq.SEEDED else cq.SCENES[name]()
        systems = [] if args.no_rvo2 else [("RVO2", cq.RVO2)]
        systems.append(
            (
                "contextsteer",
                lambda sc: contextsteer_system(sc, params, args.smooth, args.max_accel),
            )
        )
        for label, build in systems:
            try:
                system = build(scene)
            except cq.Unavailable as e:
                print(f"| {name} | {label} | unavailable: {e} |")
                continue
            r = analyse(system, scene, args.slow, args.near, args.scales)
            splits.append((name, label, r))
            if args.scales:
                tv = r["scales"]
                acc = pooled.setdefault((name, label), [np.zeros_like(tv), 0.0])
                acc[0] += tv
                acc[1] += r["side_switches"] * tv[0]
            assert abs(r["jitter"] - r["jitter_check"]) < 1e-9 * max(1.0, r["jitter"])
            steps_slow, turn_slow, deg_slow = r["slow"]
            cells = [
                name,
                *([str(seed)] if seed_cell else []),
                label,
                f"{r['jitter']:.2f}",
                f"{100 * r['reversals']:.0f} %",
                f"{100 * steps_slow:.0f} %",
                f"{100 * turn_slow:.0f} %",
                f"{deg_slow:.2f}",
            ]
            dec = r.get("decisions")
            if dec:
                cells += [
                    f"{np.degrees(dec['total']) / max(dec['steps'], 1):.1f}",
                    f"{100 * dec['flips']:.0f} %",
                    *(f"{100 * dec[k]:.0f} %" for k in FLIP_KINDS),
                ]
            else:
                cells += ["", "", "", "", ""]
            print("| " + " | ".join(cells) + " |", flush=True)
    if args.split:
        bins = ("<1°", "1–3°", "3–10°", "10–30°", ">=30°")
        print(
            "\nShare of the turning by turn size, and by phase (the first second; within "
            f"{args.near} m of the goal):\n"
        )
        print("| scene | system | ° per agent | " + " | ".join(bins) + " | start | middle | end |")
        print("|---|---|---|" + "---|" * (len(bins) + 3))
        for name, label, r in splits:
            cells = [name, label, f"{r['turning_per_agent']:.0f}"]
            cells += [f"{100 * x:.0f} %" for x in (*r["sizes"], *r["phases"])]
            print("| " + " | ".join(cells) + " |")
    if args.scales:
        print(
            "\nTurning at coarser time scales, Σ|h(t + k) − h(t)| / k as a share of k = 1's "
            "(the turning the jitter counts), and the share of the turning in steps that "
            f"switch the side of an engaged neighbour; seeds {args.seed} pooled:\n"
        )
        head = " | ".join(f"k = {k}" for k in SCALES)
        print(f"| scene | system | ° per agent | {head} | side switches |")
        print("|---|---|---|" + "---|" * (len(SCALES) + 1))
        for (name, label), (tv, switched) in pooled.items():
            n = cq.SCENES[name]().n * len(seeds)
            cells = [name, label, f"{np.degrees(tv[0]) / n:.0f}"]
            cells += [f"{x:.2f}" for x in tv / tv[0]]
            cells.append(f"{100 * switched / tv[0]:.0f} %")
            print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
