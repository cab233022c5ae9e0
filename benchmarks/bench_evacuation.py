"""RiMEA 9's room stepped on one and two threads, and beside JuPedSim (not a test).

The room of ``cs.rimea.test9`` (30 m × 20 m, 1,000 agents of radius 0.25 m, 4 exits,
seed 0; ``cs.scenarios.evacuation`` with ``CROWD`` deciding in 16 phases and
``FollowField`` on a 0.15 m navigation field) is built, stepped ``--warm`` steps, then
``--steps`` more are timed, on 1 and 2 threads in turns, ``--runs`` times each. Prints
the median ms per step, the two-thread speed-up, and a hash of the agents' positions
after each run (one hash: the threads change no bit). ``--test9`` also times the whole
``rimea.test9()`` once on the default threads.

``--peers`` then empties the room once per system, from the same starts, walking speeds
(1.3 m/s ± 10 %) and radius, and prints one table from one metric code (:class:`Tally`):
the time the room empties (checked every step, so up to 0.5 s before
``rimea.evacuation_time``, which checks every 15), the agents left in it when a run
ends (at ``--limit`` s, or once nobody has left for 60 s), contact episodes (a pair
closer than the sum of radii less 0.1 mm, counted when it starts), the deepest overlap,
wall penetrations (a centre closer than 0.99 r to a wall, counted when it starts), and
the step calls' time alone on one thread: ms a step over the first 10 s (the whole crowd
still inside, so every system steps the same agents), that per simulated second against
contextsteer's, and ms a step over the whole run. An agent leaves the tally 1.5 m beyond
the room's wall, where ``rimea.remove_leavers`` removes contextsteer's agents and
JuPedSim's exit stage removes its own. JuPedSim (PyPI ``jupedsim``, the ``bench`` extra)
gets the same room as its walkable area (``crowd_quality.walkable_area``: the walls cut
out as 1 cm strips), one exit stage a door, and each agent the journey to the door
nearest its start; its routing steers it there. Its models are named by
``--jps-models`` (default: all seven of JuPedSim 1.4 at their default parameters:
``cfsm``, ``cfsm-v2``, ``cfsm-v3``, the collision-free speed models; ``avm``, the
anticipation velocity model; ``sfm``, the social force model; ``gcfm``, the generalized
centrifugal force model, its elliptic body made the tally's disc, see
``crowd_quality.jps_body``; ``warp``, the WarpDriver model). A model that stops the
simulation (JuPedSim raises when a force model pushes an agent off its walkable area)
ends its run there, with the reason in the table. Each model runs at every ``--jps-dt``
(1/30 s, contextsteer's step, and JuPedSim's own default 0.01 s) and body
radius of ``--jps-radius`` (the test's 0.25 m; JuPedSim's default is 0.2 m); contextsteer
empties the room once at each of those radii too, the first its reference.
``--jps-model-params`` and ``--jps-agent-params`` (JSON objects of JuPedSim's own field
names, checked against every model named before anything runs) replace defaults, for a
search over a model's parameters (docs/crowd.md has one).

    python benchmarks/bench_evacuation.py --runs 5
    python benchmarks/bench_evacuation.py --runs 1 --peers
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from types import SimpleNamespace

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import contextsteer as cs  # noqa: E402
from contextsteer import rimea  # noqa: E402
from crowd_quality import JPS_MODELS, jps_agent, jps_model, walkable_area, wall_distance  # noqa: E402
from scenes import at_least  # noqa: E402


def run(threads: int, agents: int, warm: int, steps: int) -> tuple[float, str]:
    """ms per step over ``steps`` after ``warm`` steps, and the positions' hash."""
    sim, _, _ = room(agents, 4)
    with cs.threads(threads):
        sim.step(rimea.DT, steps=warm)
        t0 = time.perf_counter()
        sim.step(rimea.DT, steps=steps)
        ms = (time.perf_counter() - t0) / steps * 1e3
    digest = hashlib.sha1(np.ascontiguousarray(sim.agents.position).tobytes()).hexdigest()
    return ms, digest[:12]


ROOM_DEPTH = 20.0
RADIUS = 0.25
LEAVE = 1.5
"""Agents leave the tally this far beyond the room's long walls (``rimea.remove_leavers``)."""
OVERLAP_TOLERANCE = 1e-4
EARLY = 10.0
"""The first seconds, timed apart: the whole crowd is still in the room (the first leave
after some 4 s, a few dozen by 10 s), so every system steps about the same agents."""


class Tally:
    """Contact episodes, the deepest overlap and wall penetrations of agents of radius
    ``radius`` among ``walls`` (M, 4), step by step; the same code for every system."""

    def __init__(self, radius: float, walls: np.ndarray):
        self.radius = radius
        self.walls = np.asarray(walls, dtype=np.float64)
        self._pairs: set[tuple[int, int]] = set()
        self._in_wall: set[int] = set()
        self.contacts = 0
        self.deepest = 0.0
        self.wall_penetrations = 0

    def update(self, ids: np.ndarray, p: np.ndarray) -> None:
        """One step: ``ids`` (k,) the agents' identities, ``p`` (k, 2) their positions."""
        from scipy.spatial import cKDTree

        contact = 2 * self.radius - OVERLAP_TOLERANCE
        pairs = cKDTree(p).query_pairs(r=contact, output_type="ndarray")
        now: set[tuple[int, int]] = set()
        if len(pairs):
            gap = np.linalg.norm(p[pairs[:, 0]] - p[pairs[:, 1]], axis=1)
            close = gap < contact
            if close.any():
                self.deepest = max(self.deepest, float((2 * self.radius - gap[close]).max()))
                a, b = ids[pairs[close, 0]], ids[pairs[close, 1]]
                now = set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist()))
        self.contacts += len(now - self._pairs)
        self._pairs = now
        inside = set(ids[wall_distance(p, self.walls) < 0.99 * self.radius].tolist())
        self.wall_penetrations += len(inside - self._in_wall)
        self._in_wall = inside


def room(
    agents: int, exits: int, seed: int = 0, radius: float = RADIUS
) -> tuple[cs.Simulation, np.ndarray, np.ndarray]:
    """The contextsteer room (bodies of ``radius``, 0.25 m as ``rimea.evacuation_time``
    by default), its walls (M, 4) and its goal lines (E, 4) in front of the exits."""
    sim = cs.scenarios.evacuation(agents=agents, seed=seed, exits=exits)
    np.asarray(sim.agents.radius)[:] = radius
    world, lines = cs.scenarios.evacuation_room(exits)
    return sim, np.asarray(world.walls, dtype=np.float64), lines


def _in_room(p: np.ndarray) -> int:
    """How many of the positions ``p`` (k, 2) lie between the room's long walls."""
    return int(((p[:, 1] > 0) & (p[:, 1] < ROOM_DEPTH)).sum())


def _evacuate(
    step, read, dt: float, walls: np.ndarray, limit: float, stall: float, radius: float = RADIUS
) -> dict:
    """Steps ``step()`` (timed) until the room is empty, ``limit`` s have passed, or
    nobody has left the room for ``stall`` s, or ``step()`` raises a ``RuntimeError``
    (kept as ``failed``: JuPedSim stops when a model pushes an agent off its walkable
    area); ``read()`` gives the identities and positions of the agents still in the
    tally."""
    if not limit > 0.0:
        raise ValueError(f"limit must be a positive number of seconds, got {limit}")
    tally = Tally(radius, walls)
    secs, steps, last_left, in_room = 0.0, 0, 0.0, -1
    early, early_steps = 0.0, 0
    empty_at = float("inf")
    failed = ""
    now = _in_room(read()[1])
    while steps * dt < limit:
        t0 = time.perf_counter()
        try:
            step()
        except RuntimeError as e:  # a peer gave up (JuPedSim: an agent pushed off its area)
            failed = f"{type(e).__name__} at {steps * dt:.1f} s: {e}"
            break
        took = time.perf_counter() - t0
        secs += took
        steps += 1
        if steps * dt <= EARLY + 1e-9:
            early += took
            early_steps += 1
        ids, p = read()
        keep = (p[:, 1] >= -LEAVE) & (p[:, 1] <= ROOM_DEPTH + LEAVE)
        ids, p = ids[keep], p[keep]
        if len(p):
            tally.update(ids, p)
        now = _in_room(p)
        if now == 0:
            empty_at = steps * dt
            break
        if now != in_room:
            in_room, last_left = now, steps * dt
        elif steps * dt - last_left >= stall:
            break
    return {
        "empty_at": empty_at,
        "in_room": now,
        "contacts": tally.contacts,
        "deepest_mm": 1e3 * tally.deepest,
        "wall_penetrations": tally.wall_penetrations,
        "ms_step": 1e3 * secs / max(steps, 1),
        "ms_step_early": 1e3 * early / max(early_steps, 1),
        "dt": dt,
        "failed": failed,
    }


def evacuate_contextsteer(
    agents: int,
    exits: int,
    seed: int = 0,
    limit: float = 600.0,
    stall: float = 60.0,
    radius: float = RADIUS,
) -> dict:
    """The contextsteer room emptied on one thread, its bodies of ``radius`` (the
    tally's too); see the module docstring."""
    sim, walls, _ = room(agents, exits, seed, radius)
    ag = sim.agents

    def step() -> None:
        sim.step(rimea.DT)

    def read() -> tuple[np.ndarray, np.ndarray]:
        rimea.remove_leavers(sim, ROOM_DEPTH)
        alive = np.flatnonzero(ag.alive)
        return alive, np.asarray(ag.position, dtype=np.float64)[alive]

    with cs.threads(1):
        return _evacuate(step, read, rimea.DT, walls, limit, stall, radius)


def evacuate_jupedsim(
    agents: int,
    exits: int,
    model: str,
    dt: float,
    seed: int = 0,
    limit: float = 600.0,
    stall: float = 60.0,
    radius: float = RADIUS,
    model_params: dict | None = None,
    agent_params: dict | None = None,
) -> dict:
    """The same room, starts and speeds in JuPedSim (``model``: a key of
    :data:`JPS_MODELS`), stepped at ``dt``, its agents of ``radius`` (the tally's too);
    see the module docstring. ``model_params`` and ``agent_params`` override the
    defaults of the model's and its agent parameters' fields (JuPedSim's names, e.g.
    ``{"strength_neighbor_repulsion": 2}``, ``{"time_gap": 0.5}``)."""
    import jupedsim as jps
    import shapely

    sim, walls, lines = room(agents, exits, seed)
    starts = np.asarray(sim.agents.position, dtype=np.float64)
    speeds = np.asarray(sim.agents.max_speed, dtype=np.float64)
    # The room and its corridors: the walls cut out of a box around them as 1 cm strips.
    goals = np.r_[lines[:, :2], lines[:, 2:]]
    area = walkable_area(SimpleNamespace(starts=starts, goals=goals, walls=walls))
    jsim = jps.Simulation(model=jps_model(model, **(model_params or {})), geometry=area, dt=dt)
    doors, journeys = [], []
    for x0, y, x1, _ in lines:
        x = (x0 + x1) / 2
        below = y < 0
        doors.append((x, 0.0 if below else ROOM_DEPTH))
        y0 = -LEAVE - 1.0 if below else ROOM_DEPTH + LEAVE
        stage = jsim.add_exit_stage(shapely.box(x - 3.0, y0, x + 3.0, y0 + 1.0))
        journeys.append((jsim.add_journey(jps.JourneyDescription([stage])), stage))
    nearest = np.argmin(np.linalg.norm(starts[:, None] - np.asarray(doors)[None], axis=2), axis=1)
    index = {}
    for i, ((x, y), v, k) in enumerate(zip(starts, speeds, nearest)):
        journey, stage = journeys[int(k)]
        agent = jps_agent(
            model,
            radius,
            position=(float(x), float(y)),
            journey_id=journey,
            stage_id=stage,
            desired_speed=float(v),
            **(agent_params or {}),
        )
        index[jsim.add_agent(agent)] = i

    def read() -> tuple[np.ndarray, np.ndarray]:
        now = list(jsim.agents())
        ids = np.fromiter((index[a.id] for a in now), dtype=np.int64, count=len(now))
        p = np.array([a.position for a in now], dtype=np.float64).reshape(-1, 2)
        return ids, p

    return _evacuate(jsim.iterate, read, dt, walls, limit, stall, radius)


def peers(
    agents: int,
    exits: int,
    models: list[str],
    dts: list[float],
    limit: float,
    radii: tuple[float, ...] = (RADIUS,),
    model_params: dict | None = None,
    agent_params: dict | None = None,
) -> Iterator[tuple[str, float, dict]]:
    """One row a system, each as soon as its run ends: contextsteer at each body radius,
    then each JuPedSim model at each step length and body radius (``model_params``,
    ``agent_params``: see :func:`evacuate_jupedsim`)."""
    for radius in radii:
        yield (
            "contextsteer (CROWD, 16 phases)",
            radius,
            evacuate_contextsteer(agents, exits, limit=limit, radius=radius),
        )
    for model in models:
        for radius in radii:
            for dt in dts:
                r = evacuate_jupedsim(
                    agents,
                    exits,
                    model,
                    dt,
                    limit=limit,
                    radius=radius,
                    model_params=model_params,
                    agent_params=agent_params,
                )
                yield (f"JuPedSim {model}", radius, r)


def print_peers(rows: Iterable[tuple[str, float, dict]], agents: int, exits: int) -> None:
    """The table of :func:`peers`' rows (the first, contextsteer's, the reference), a row printed as it
    comes: the full run takes most of an hour."""
    base = None
    print(f"\nRiMEA 9 room emptied, {agents} agents, {exits} exits, one thread")
    print(
        "| system | radius (m) | dt (s) | room empty at (s) | left in room | contact episodes "
        f"| deepest overlap (mm) | wall penetrations | ms a step, first {EARLY:g} s "
        f"| the same a simulated s, / contextsteer's | ms a step, whole run |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, radius, r in rows:
        base = base or r
        empty = f"{r['empty_at']:.1f}" if np.isfinite(r["empty_at"]) else "not empty"
        if r["failed"]:
            empty = f"stopped: {r['failed']}"
        ratio = (r["ms_step_early"] / r["dt"]) / (base["ms_step_early"] / base["dt"])
        print(
            f"| {name} | {radius:g} | {r['dt']:.4g} | {empty} | {r['in_room']} "
            f"| {r['contacts']} | {r['deepest_mm']:.1f} | {r['wall_penetrations']} "
            f"| {r['ms_step_early']:.2f} | {ratio:.2f} | {r['ms_step']:.2f} |",
            flush=True,
        )


def _json_object(text: str) -> dict:
    """argparse type: a JSON object (field name -> value)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not JSON ({e}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object {{...}}, got {text!r}")
    return value


def _unknown_fields(models: list[str], model_params: dict, agent_params: dict) -> str:
    """ "" when every field named is one of every model's (model or agent parameters),
    else which are not, and the fields there are."""
    import dataclasses

    import jupedsim as jps

    bad = []
    for model in models:
        for given, cls in zip((model_params, agent_params), JPS_MODELS[model]):
            known = {f.name for f in dataclasses.fields(getattr(jps, cls))}
            unknown = sorted(set(given) - known)
            if unknown:
                bad.append(f"{cls} has no {unknown} (it has {sorted(known)})")
    return "; ".join(bad)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=at_least(1), default=1000)
    ap.add_argument("--warm", type=at_least(1), default=2)
    ap.add_argument("--steps", type=at_least(1), default=300)
    ap.add_argument("--runs", type=at_least(1), default=3)
    ap.add_argument("--test9", action="store_true", help="also time rimea.test9() once")
    ap.add_argument("--peers", action="store_true", help="also empty the room beside JuPedSim")
    ap.add_argument("--exits", type=int, choices=(1, 2, 4), default=4, help="--peers' exits")
    ap.add_argument("--jps-models", default=",".join(JPS_MODELS), help="--peers' JuPedSim models")
    ap.add_argument("--jps-dt", default="0.0333333333333,0.01", help="--peers' JuPedSim steps")
    ap.add_argument(
        "--jps-radius", default=str(RADIUS), help="--peers' JuPedSim body radii (m), a list"
    )
    ap.add_argument("--limit", type=float, default=600.0, help="--peers' simulated seconds")
    ap.add_argument(
        "--jps-model-params",
        type=_json_object,
        default={},
        metavar="JSON",
        help="--peers' JuPedSim model fields, e.g. '{\"strength_neighbor_repulsion\": 2}'",
    )
    ap.add_argument(
        "--jps-agent-params",
        type=_json_object,
        default={},
        metavar="JSON",
        help="--peers' JuPedSim agent fields, e.g. '{\"time_gap\": 0.5}'",
    )
    args = ap.parse_args(argv)
    models = [m for m in args.jps_models.split(",") if m]
    unknown = sorted(set(models) - set(JPS_MODELS))
    if unknown:
        ap.error(f"--jps-models: unknown {unknown}; known: {sorted(JPS_MODELS)}")
    if args.peers and (args.jps_model_params or args.jps_agent_params):
        bad = _unknown_fields(models, args.jps_model_params, args.jps_agent_params)
        if bad:
            ap.error(f"--jps-model-params / --jps-agent-params: {bad}")
    dts = [float(d) for d in args.jps_dt.split(",") if d]
    radii = tuple(float(r) for r in args.jps_radius.split(",") if r)
    if not all(0.0 < r < 1.0 for r in radii) or not all(0.0 < d <= 1.0 for d in dts):
        ap.error("--jps-radius takes radii in (0, 1) m, --jps-dt steps in (0, 1] s")
    if not args.limit > 0.0:
        ap.error(f"--limit must be a positive number of seconds, got {args.limit}")
    times: dict[int, list[float]] = {1: [], 2: []}
    hashes = set()
    for _ in range(args.runs):
        for threads in (1, 2):
            ms, digest = run(threads, args.agents, args.warm, args.steps)
            times[threads].append(ms)
            hashes.add(digest)
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"RiMEA 9 room, {args.agents} agents, steps {args.warm}..{args.warm + args.steps}")
    print("| threads | ms a step (median) | runs |")
    print("|---|---|---|")
    for threads, median in ((1, one), (2, two)):
        runs = ", ".join(f"{t:.2f}" for t in times[threads])
        print(f"| {threads} | {median:.2f} | {runs} |")
    print(f"two threads: {one / two:.2f}x one; position hashes: {sorted(hashes)}")
    if len(hashes) != 1:
        raise SystemExit("the runs disagree")
    if args.test9:
        t0 = time.perf_counter()
        res = rimea.test9()
        print(f"rimea.test9(): {time.perf_counter() - t0:.1f} s, {res.value} {res.details}")
    if args.peers:
        rows = peers(
            args.agents,
            args.exits,
            models,
            dts,
            args.limit,
            radii,
            model_params=args.jps_model_params,
            agent_params=args.jps_agent_params,
        )
        print_peers(rows, args.agents, args.exits)


if __name__ == "__main__":
    main()
