"""CollisionDanger(standoff=): of two walkers standing side by side in each other's way
(an arch in an exit's mouth), the one farther from its target backs off."""

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

import contextsteer as cs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

R, TOP, DT = 0.3, 1.3, 1 / 30
MOUTH_GOALS = np.array([[8.0, 1.0], [8.0, -1.0]])


def _sim(world, starts, goals, standoff, changes=None, bodies=None):
    """The crowd configuration (``crowd_steering``, its rotated slots, ``Accel``) with
    ``standoff``; ``bodies``: positions of agents standing at their own goals, added after
    the walkers."""
    n = len(starts) + (0 if bodies is None else len(bodies))
    a = cs.Agents(n, slots=16, seed=0)
    a.add(starts, heading=0.0, radius=R, max_speed=TOP, max_accel=6.0, target=goals)
    if bodies is not None:
        a.add(bodies, heading=0.0, radius=R, max_speed=TOP, max_accel=6.0, target=bodies)
    steering = cs.scenarios.crowd_steering(changes={"standoff": standoff, **(changes or {})})
    slots = cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True)
    return cs.Simulation(world, a, steering, motion=cs.Accel(), slots=slots), a


def _mouth_sim(standoff, goal0=8.0):
    """A wall along x = 0 with a 1.2 m gap (the crowd benchmark's bottleneck). Walkers 0
    and 1 start side by side in its mouth, at (-0.22, ±0.33), 6 cm apart, with goals 8 m
    beyond (agent 0's at x = ``goal0``); six more walkers stand in two rows behind them
    with goals beyond too. Straight on, each of the two would brush a post; towards the
    middle, each would walk into the other; and the rows behind keep them from stepping
    back: they arch in the mouth."""
    w = cs.World()
    w.add_segments([[0, -6, 0, -0.6], [0, 0.6, 0, 6], [-12, -6, -12, 6], [12, -6, 12, 6]])
    w.add_segments([[-12, -6, 12, -6], [-12, 6, 12, 6]])
    starts = [[-0.22, 0.33], [-0.22, -0.33]]
    goals = [[goal0, 1.0], [8.0, -1.0]]
    for row in range(2):
        for y in (-0.7, 0.0, 0.7):
            starts.append([-1.0 - 0.7 * row, y])
            goals.append([7.0 + 0.7 * row, 2 * y])
    return _sim(w, np.array(starts), np.array(goals), standoff)


def _mouth(standoff, goal0=8.0, seconds=20.0):
    """The mouth (_mouth_sim) run for ``seconds``: the longest time both of the two stood
    at once (slower than 0.05 m/s), how far each stepped back (least x change), when each
    was home (within R of its goal; None: never) and the least gap between any bodies."""
    sim, a = _mouth_sim(standoff, goal0)
    goals = a.target.astype(np.float64)[:2].copy()
    x0 = a.position.astype(np.float64)[:2, 0].copy()
    run = longest = 0
    back = np.zeros(2)
    home = [None, None]
    gap = np.inf
    for k in range(int(seconds / DT)):
        sim.step(DT)
        p = a.position.astype(np.float64)
        run = run + 1 if (np.hypot(*a.velocity[:2].astype(np.float64).T) < 0.05).all() else 0
        longest = max(longest, run)
        back = np.minimum(back, p[:2, 0] - x0)
        for i in range(2):
            if home[i] is None and np.hypot(*(p[i] - goals[i])) < R:
                home[i] = (k + 1) * DT
        d = np.hypot(*(p[:, None] - p[None]).transpose(2, 0, 1)) + 9 * np.eye(len(p))
        gap = min(gap, float(d.min()) - 2 * R)
    return longest * DT, back, home, gap


def test_two_walkers_arch_in_an_exits_mouth_without_standoff():
    stood, back, home, gap = _mouth(0.0)
    assert stood > 5.0  # both stood 7.1 s at once
    assert home[0] > 12.0 and home[1] > 12.0
    assert gap > 0.0


@pytest.mark.parametrize("goal0, yielder", [(8.0, 1), (8.5, 0)])
def test_the_walker_farther_from_its_target_backs_off_and_both_get_out(goal0, yielder):
    # Equal distances (mirror images, bit for bit in float32): the higher index backs
    # off. Agent 0's goal 0.5 m farther: agent 0 does. The other never steps back and is
    # through first; both are home within 9 s, where they stood 7 s without the rule.
    stood, back, home, gap = _mouth(0.5, goal0)
    other = 1 - yielder
    assert back[yielder] < -0.3  # backed off (0.49-0.52 m)
    assert back[other] > -0.01
    assert stood < 1.5  # the start (at rest, 0.5 s to the trigger) and the back-off
    assert home[other] < home[yielder] < 10.0
    assert gap > 0.0


def _corridor(standoff, kind):
    """``queue``: a dead-end corridor 0.62 m wide closed at x = 1, two walkers one behind
    the other (the front 1 cm from the end) with goals beyond it. ``blocked``: a corridor
    1.3 m wide, two walkers side by side with goals down it, two bodies standing at their
    goals across it 0.7 m ahead (make_way off, so they stay). Both stand for good either
    way; neither is a standoff one walker's stepping back would free."""
    w = cs.World()
    if kind == "queue":
        w.add_segments([[-6, 0.31, 1, 0.31], [-6, -0.31, 1, -0.31], [1, -0.31, 1, 0.31]])
        starts, goals, bodies = [[0.69, 0.0], [0.05, 0.0]], [[5.0, 0.0], [5.0, 0.0]], None
    else:
        w.add_segments([[-6, 0.65, 6, 0.65], [-6, -0.65, 6, -0.65]])
        starts, goals = [[0.3, 0.32], [0.3, -0.32]], [[5.0, 0.32], [5.0, -0.32]]
        bodies = np.array([[1.0, 0.32], [1.0, -0.32]])
    return _sim(w, np.array(starts), np.array(goals), standoff, {"make_way": 0.0}, bodies)


@pytest.mark.parametrize("kind", ["queue", "blocked"])
def test_a_queue_or_a_pair_with_bodies_ahead_is_no_standoff(kind):
    # Condition (4) (side by side, not one behind the other) and (6) (nothing else in the
    # nearer one's way): both walkers stand the whole 10 s, and nobody backs off.
    sim, a = _corridor(0.5, kind)
    p0 = a.position.astype(np.float64).copy()
    moved = 0.0
    for _ in range(300):
        sim.step(DT)
        moved = max(moved, float(np.abs(a.position.astype(np.float64) - p0).max()))
    assert moved < 0.05
    assert _state(sim, "stood")[:2].min() > 9.5  # both stood (so the rule was asked)


def _state(sim, name):
    return np.frombuffer(sim.__reduce__()[1][-2][name], dtype=np.float64)


def test_standoff_state_is_saved_and_continues_bit_for_bit(tmp_path):
    # Standing times and the back-off's end are state: a copy saved mid back-off
    # continues bit for bit. A new agent in a slot starts with neither.
    sim, _ = _mouth_sim(0.5)
    for _ in range(200):
        sim.step(DT)
        if _state(sim, "back_until")[1] > sim.time:
            break
    assert _state(sim, "back_until")[1] > sim.time  # agent 1 backs off now
    assert _state(sim, "stood")[0] >= 0.5  # agent 0 stands (the trigger)
    sim.save(tmp_path / "back.cssim")
    copy = cs.load(tmp_path / "back.cssim")
    twin = cs.load(tmp_path / "back.cssim")
    for _ in range(150):
        copy.step(DT)
        twin.step(DT)
    assert np.array_equal(copy.agents.position, twin.agents.position)
    assert np.isfinite(copy.agents.position).all()
    # Agent 1 replaced mid back-off, before the next step: a walker in its slot owes
    # nobody a back-off, and a newcomer on its goal has stood one step, not its
    # predecessor's time too.
    for goal, name in (([8.0, 0.0], "back_until"), ([-3.0, 0.0], "stood")):
        s = cs.load(tmp_path / "back.cssim")
        s.agents.remove([1])
        s.agents.add([[-3.0, 0.0]], radius=R, max_speed=TOP, max_accel=6.0, target=[goal])
        assert s.agents.alive[1]  # the new agent takes the freed slot
        s.step(DT)
        assert _state(s, name)[1] == (0.0 if name == "back_until" else pytest.approx(DT))


def test_standoff_is_checked():
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="standoff"):
            cs.CollisionDanger(standoff=bad)
    assert cs.CollisionDanger().standoff == 0.0
    assert cs.scenarios.CROWD["standoff"] == 0.5


def _bottleneck_hash(seed, threads):
    """The crowd benchmark's run of bottleneck seed ``seed`` for 12 s (its protocol and
    adapter, with ``standoff``), hashed: every step's positions, through
    ``crowd_quality.run``'s ``adjust`` hook, which leaves the targets as they are."""
    import crowd_quality as cq
    import tune_crowd as tc

    scene = cq.SCENES["bottleneck"](seed=seed)
    h = hashlib.sha256()

    def record(pos, targets, active):
        h.update(pos.tobytes())
        return targets

    with cs.threads(threads):
        adapter = tc.system(scene, {**cs.scenarios.CROWD, "standoff": 0.5})
        cq.run(adapter, scene, steps=int(12 / DT), adjust=record)
    return h.hexdigest()


def test_standoff_is_bit_identical_whatever_the_thread_count():
    # The benchmark's bottleneck seed 272, whose two bodies in the gap's mouth stand for
    # 8 s without the rule: the first 12 s the same on 1 and 2 threads.
    assert _bottleneck_hash(272, 1) == _bottleneck_hash(272, 2)
