"""Detour: routes for agents that local steering leaves pacing in front of a blockage.

The traps are hand-built local minima of the crowd steering: a cup of agents (or walls)
standing between a walker and its goal, open towards the walker. Without a detour the
walker walks into the cup and stays at its bottom; the detour must lead it round, keep
its route clear of what stands (checked by brute force, not by the router's own
account), leave unreachable and taken goals alone, and follow the user's own writes
to ``agents.target``.
"""

from __future__ import annotations

import copy
import pickle
import types

import numpy as np
import pytest

import contextsteer as cs

DT = 1 / 30
GOAL = np.float32([7.0, 0.0])


def _cup(radius: float = 1.6, centre=(3.0, 0.0), spacing: float = 0.62) -> np.ndarray:
    """Points 0.62 m apart on an arc round ``centre`` that opens towards -x (about 250°)."""
    pts: list[np.ndarray] = []
    for t in np.linspace(-2.2, 2.2, 400):
        q = np.array([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)])
        if not pts or np.hypot(*(q - pts[-1])) >= spacing:
            pts.append(q)
    return np.array(pts, np.float32)


def _sim(
    standing: np.ndarray,
    *,
    kinematic: bool = True,
    world=None,
    start=(0.0, 0.0),
    goal=GOAL,
    make_way: float | None = None,
):
    """``make_way``: CollisionDanger's over CROWD's (0: bodies at their goals step aside
    only when the detour has them stand aside)."""
    agents = cs.Agents(len(standing) + 1, slots=16, seed=0)
    agents.add([start], radius=0.3, max_speed=1.3, max_accel=6.0, target=[goal])
    if len(standing):
        agents.add(
            standing, radius=0.3, max_speed=1.3, max_accel=6.0, target=standing, kinematic=kinematic
        )
    slots = cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True)
    changes = None if make_way is None else {"make_way": make_way}
    steering = cs.scenarios.crowd_steering(walls=world is not None, changes=changes)
    sim = cs.Simulation(world, agents, steering, motion=cs.Accel(), slots=slots)
    return sim, agents


def _walk(sim, agents, detour, seconds: float, *, rewrite=None):
    """Steps ``seconds``; returns the walker's least distance to GOAL and the least
    centre distance to any other agent over the run."""
    best, least = np.inf, np.inf
    for _ in range(int(round(seconds / DT))):
        if rewrite is not None:
            agents.target[0] = rewrite
        if detour is not None:
            detour.update()
        sim.step(DT)
        p = agents.position
        best = min(best, float(np.hypot(*(p[0] - GOAL))))
        if len(p) > 1:
            least = min(least, float(np.hypot(*(p[1:] - p[0]).T).min()))
    return best, least


def _until_detour(sim, detour, seconds: float = 20.0) -> None:
    """Steps until the walker is on a detour (asserted within ``seconds``)."""
    for _ in range(int(seconds / DT)):
        detour.update()
        if detour.active[0]:
            return
        sim.step(DT)
    raise AssertionError(f"no detour planned in {seconds} s")


def _until_aside(sim, detour, seconds: float = 10.0) -> np.ndarray:
    """Steps until some agent stands aside (asserted within ``seconds``); returns them."""
    for _ in range(int(seconds / DT)):
        detour.update()
        if detour.yielding.any():
            return np.flatnonzero(detour.yielding)
        sim.step(DT)
    raise AssertionError(f"nobody stood aside in {seconds} s")


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances from points p (P, 2) to the segment ab (brute force, float64)."""
    ab = b - a
    t = np.clip(((p - a) @ ab) / max(float(ab @ ab), 1e-300), 0.0, 1.0)
    return np.hypot(*(a + t[:, None] * ab - p).T)


def test_save_warns_while_a_detour_leads_agents_and_not_for_marks_set_by_hand(tmp_path):
    """A file saved while a Detour led an agent held its waypoint as its target and lost
    its goal, silently: loaded, the walker parked at the waypoint (fuzz round 14)."""
    sim, agents = _sim(_cup(), kinematic=True)
    agents.waypoint[3] = True  # the user's own mark: no detour's goal to lose
    sim.save(tmp_path / "plain.cssim")  # no warning (warnings are errors here)
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    with pytest.warns(UserWarning, match=r"a Detour leads 1 agent\(s\)") as caught:
        sim.save(tmp_path / "led.cssim")
    assert caught[0].filename == __file__  # attributed to the caller of save
    pair = pickle.loads(pickle.dumps((sim, detour)))  # the way the warning names
    with pytest.warns(UserWarning, match="a Detour leads 1 agent"):
        pair[0].save(tmp_path / "copy.cssim")  # the copy's detour leads its copy


def test_save_does_not_warn_on_the_last_leg_nor_after_a_detour_that_failed_to_build(tmp_path):
    """On the last leg the target is the goal, which the file holds, yet save warned that
    the agent would park at a waypoint; and a Detour whose constructor raised, kept alive
    by its traceback (as a REPL keeps sys.last_value), made every save raise
    AttributeError (fuzz round 15)."""
    sim, agents = _sim(_cup(), kinematic=True)
    try:
        cs.Detour(sim, stall_time=-1.0)
    except ValueError as e:
        kept = e  # its traceback holds the half-built detour
    sim.save(tmp_path / "before.cssim")  # no warning, no AttributeError
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    while detour.active[0] and len(detour.waypoints(0)) > 1:
        detour.update()
        sim.step(DT)
    assert detour.active[0] and np.array_equal(agents.target[0], detour.waypoints(0)[-1])
    sim.save(tmp_path / "last_leg.cssim")  # warnings are errors here
    assert np.array_equal(cs.load(tmp_path / "last_leg.cssim").agents.target[0], agents.target[0])
    del kept


def test_copy_copy_of_a_detour_or_a_flow_is_refused():
    """A shallow copy shared the generator, queues and plans: stepping the original moved
    the copy's counts, and a copy fed to a second simulation corrupted the first's run."""
    sim, _ = _sim(_cup(), kinematic=True)
    with pytest.raises(TypeError, match="Detour: copy.copy"):
        copy.copy(cs.Detour(sim))
    assert (
        repr(cs.Detour(sim))
        == "Detour(targets: 0 agents on a detour; plans=0, detours=0, yields=0)"
    )
    flow = cs.Flow([cs.Source([0, 0, 1, 1], 1.0, [5, 5], [4, 4, 6, 6])], seed=3)
    with pytest.raises(TypeError, match="Flow: copy.copy"):
        copy.copy(flow)
    copy.deepcopy(flow)  # still fine


def test_the_last_leg_to_the_goal_carries_the_agents_own_waypoint_mark():
    """An agent whose own target was marked a waypoint lost the mark on the detour's last
    leg (which ends at that target) and got it back only when the detour ended (fuzz
    round 14): its target is then its own again, and so is its mark."""
    sim, agents = _sim(_cup(), kinematic=True)
    agents.waypoint[0] = True
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    legs = set()
    while detour.active[0]:
        legs.add((len(detour.waypoints(0)), bool(agents.waypoint[0])))
        detour.update()
        sim.step(DT)
    assert (1, True) in legs and all(marked for _, marked in legs), legs
    assert agents.waypoint[0] and not agents.waypoint[1:].any()


@pytest.mark.parametrize("kinematic", [True, False])
def test_a_cup_of_standing_agents_holds_the_walker_without_a_detour_and_not_with_one(kinematic):
    cup = _cup()
    sim, agents = _sim(cup, kinematic=kinematic)
    best, least = _walk(sim, agents, None, 40.0)
    assert best > 3.0  # at the cup's bottom, 3.3 m from its goal, for good
    assert least >= 0.6 * 0.99

    sim, agents = _sim(cup, kinematic=kinematic)
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    # Led, its target is a waypoint on its way (Agents.waypoint), no one else's is, until
    # the route's last leg, which ends at the goal itself: a goal again.
    assert agents.waypoint.tolist() == [True] + [False] * len(cup)
    legs = []
    while detour.active[0]:
        legs.append((len(detour.waypoints(0)), bool(agents.waypoint[0])))
        detour.update()
        sim.step(DT)
    legs = sorted(set(legs), reverse=True)
    assert legs[0][0] >= 2 and all(marked == (left > 1) for left, marked in legs), legs
    np.testing.assert_array_equal(detour.waypoints(0), np.zeros((0, 2), np.float32))
    best, least = _walk(sim, agents, detour, 40.0)
    assert best < 0.05
    assert not agents.waypoint.any()  # its goal back, a goal again
    assert least >= 0.6 * 0.99  # no contact on the way round either
    assert detour.detours >= 1
    assert not detour.active[0]  # the detour ended: the goal is the target again
    np.testing.assert_array_equal(agents.target[0], GOAL)
    if not kinematic:  # the cup's agents stood: nothing moved them
        assert np.hypot(*(agents.position[1:] - cup).T).max() < 0.05


def test_the_route_keeps_its_clearance_from_every_standing_agent():
    cup = _cup()
    sim, agents = _sim(cup)
    detour = cs.Detour(sim, margin=0.05)
    _until_detour(sim, detour)
    start = agents.position[0].astype(np.float64)
    route = np.vstack([start, detour.waypoints(0).astype(np.float64)])
    assert len(route) >= 3  # it bends
    np.testing.assert_array_equal(route[-1], GOAL)  # the goal is within reach: routed to it
    need = 0.3 + 0.3 + 0.05
    for a, b in zip(route[:-1], route[1:]):
        d = _segment_distance(cup.astype(np.float64), a, b)
        assert d.min() >= need * (1 - 1e-4), (a, b, d.min())
    # And the target is the first waypoint.
    np.testing.assert_array_equal(agents.target[0], detour.waypoints(0)[0])


def test_a_route_that_leaves_reach_is_planned_again_round_what_lies_beyond():
    # The cup's way out runs round its rim, past two pillars 2.4 m (surface) from where
    # the walker stalls, beyond reach=2: between rim and pillars there is 0.3 m, too
    # little for the walker. Planned with only what lies within reach, the route went
    # through that gap, its waypoints inside the pillars' clearance; the plan grows its
    # region until the route's body lies within it, and the route goes round them.
    cup = _cup()
    pillars = np.float32([[3.0, 2.5], [3.0, -2.5]])
    world = cs.World()
    world.add_circles(pillars, [0.3, 0.3])
    sim, agents = _sim(cup, world=world)
    detour = cs.Detour(sim, reach=2.0)
    _until_detour(sim, detour)
    start = agents.position[0].astype(np.float64)
    route = np.vstack([start, detour.waypoints(0).astype(np.float64)])
    assert np.hypot(*(pillars - start).T).min() - 0.3 > detour.reach  # beyond reach
    need = 0.3 + 0.3 + detour.margin
    for a, b in zip(route[:-1], route[1:]):
        for obstacles in (cup, pillars):
            d = _segment_distance(obstacles.astype(np.float64), a, b)
            assert d.min() >= need * (1 - 1e-4), (a, b, d.min())
    best, least = _walk(sim, agents, detour, 40.0)
    assert best < 0.05
    assert least >= 0.6 * 0.99


def test_max_stretch_has_those_in_the_short_way_step_aside():
    # A line of 19 bodies standing across the way, 1.5 m ahead of a walker whose goal is
    # 1.5 m beyond it: the route round the line's end (about 14 m) is more than 4 times
    # the 3 m through it. Without max_stretch the walker is led round; with
    # max_stretch=4 those in the short way step aside and it walks through (here 12.5 s
    # against 19.2 s). The walker starts 1 cm off the line's middle body: from exactly
    # y = 0 it meets that body head-on, both sides tie, and the time through swings with
    # any change to a step (34 s, then 72.6 s since a walker led from inside its route's
    # clearance steps out first; 12-17 s from 1-3 cm either side, before and since).
    line = np.float32([[1.5, y] for y in np.arange(-5.58, 5.59, 0.62)])
    goal = np.float32([3.0, 0.0])
    for stretch in (None, 4.0):
        sim, agents = _sim(line, kinematic=False, goal=goal, start=(0.0, 0.01))
        detour = cs.Detour(sim, max_stretch=stretch)
        aside, first = False, None
        for _ in range(int(60 / DT)):
            detour.update()
            if detour.active[0] and first is None:  # the route as planned
                way = np.vstack([agents.position[0], detour.waypoints(0)])
                first = float(np.hypot(*np.diff(way, axis=0).T).sum())
                straight = float(np.hypot(*(agents.position[0] - goal)))
                if stretch is None:
                    assert first > 4 * straight, (first, straight)  # round the line's end
                else:
                    assert first < 1.5 * straight, (first, straight)  # through the line
            aside |= bool(detour.yielding.any())
            sim.step(DT)
            p = agents.position
            assert np.hypot(*(p[1:] - p[0]).T).min() >= 0.6 * 0.99  # no contact
            if np.hypot(*(p[0] - goal)) < 0.05:
                break
        else:
            raise AssertionError(f"max_stretch={stretch}: not home within 60 s")
        assert first is not None and aside == (stretch is not None)


def test_a_cup_of_walls_is_left_by_the_route_and_layers_choose_what_counts():
    cup = _cup(radius=1.6)
    world = cs.World()
    world.add_polyline(cup, layers=2)
    sim, agents = _sim(np.zeros((0, 2), np.float32), world=world)
    best, _ = _walk(sim, agents, None, 40.0)
    # Never out of the cup: inside it the body's centre stays within 1.6 - 0.3 m of
    # (3, 0) (less the chords' 3 cm sagitta), at least 2.67 m from the goal.
    assert best > 2.6

    sim, agents = _sim(np.zeros((0, 2), np.float32), world=world)
    detour = cs.Detour(sim)
    best, _ = _walk(sim, agents, detour, 40.0)
    assert best < 0.05
    assert int(np.sum(sim.wall_contacts)) == 0

    # Routed round layer 1 only, the cup (layer 2) is not seen: every route is straight,
    # and the walker stays in the cup (as above; it stood 3.0 m off before the lone
    # agent's wall speed below the levels joined CROWD, 2.99 m since).
    sim, agents = _sim(np.zeros((0, 2), np.float32), world=world)
    detour = cs.Detour(sim, layers=1)
    best, _ = _walk(sim, agents, detour, 20.0)
    assert best > 2.6
    assert detour.plans >= 1 and detour.detours == 0


def test_an_enclosed_walker_and_a_taken_goal_get_no_detour():
    # A closed ring of standing agents round the walker: no way out, nothing to route.
    ring = np.array(
        [[1.3 * np.cos(t), 1.3 * np.sin(t)] for t in np.linspace(0, 2 * np.pi, 14)[:-1]],
        np.float32,
    )
    sim, agents = _sim(ring)
    detour = cs.Detour(sim)
    _walk(sim, agents, detour, 15.0)
    assert detour.plans >= 2 and detour.detours == 0
    np.testing.assert_array_equal(agents.target[0], GOAL)

    # An agent standing on the goal: the goal is taken, no route reaches it.
    sim, agents = _sim(np.float32([GOAL]))
    detour = cs.Detour(sim)
    _walk(sim, agents, detour, 15.0)
    assert detour.plans >= 1 and detour.detours == 0
    np.testing.assert_array_equal(agents.target[0], GOAL)


def _ring(n: int, radius: float = 1.3) -> np.ndarray:
    """n points on a circle round the origin (the walker's start)."""
    t = np.linspace(0, 2 * np.pi, n + 1)[:-1]
    return np.stack([radius * np.cos(t), radius * np.sin(t)], axis=1).astype(np.float32)


def test_agents_standing_round_a_walker_make_way_and_go_back():
    # Ten agents standing at their goals round the walker, 0.2 m apart: no route out at
    # any margin. With the detour's make_way those on its way step aside, it walks home
    # without a touch, and they go back to their goals. The steering's own make_way
    # (CollisionDanger's, in CROWD) is off here, so that the detour's is what acts; with
    # it on, the ring opens without a detour (checked last).
    ring = _ring(10)
    sim, agents = _sim(ring, kinematic=False, make_way=0.0)
    detour = cs.Detour(sim, make_way=False)
    best, _ = _walk(sim, agents, detour, 20.0)
    assert best > 5.0 and detour.yields == 0 and detour.detours == 0

    sim, agents = _sim(ring, kinematic=False, make_way=0.0)
    detour = cs.Detour(sim)
    aside = _until_aside(sim, detour)
    assert len(aside) >= 1 and detour.active[0] and detour.yields == len(aside)
    # Their targets are off the walker's route (brute force: every leg, from where the
    # walker stands), by the two radii and the margin, each on its own side of it.
    way = np.vstack([agents.position[:1], detour.waypoints(0)]).astype(np.float64)
    need = 0.3 + 0.3 + detour.margin
    for j in aside:
        t = agents.target[j].astype(np.float64)
        clear = min(_segment_distance(t[None], a, b)[0] for a, b in zip(way[:-1], way[1:]))
        assert clear >= need, (j, clear)
        # Its own side of the leg nearest to where it stands.
        p = agents.position[j].astype(np.float64)
        k = int(np.argmin([_segment_distance(p[None], a, b)[0] for a, b in zip(way[:-1], way[1:])]))
        d = way[k + 1] - way[k]
        sides = [np.sign(d[0] * (q[1] - way[k][1]) - d[1] * (q[0] - way[k][0])) for q in (p, t)]
        assert sides[0] in (0.0, sides[1]), (j, sides)
    # The agents left standing were clear of the route already.
    stay = np.setdiff1d(np.arange(1, len(ring) + 1), aside)
    for j in stay:
        p = agents.position[j].astype(np.float64)
        assert min(_segment_distance(p[None], a, b)[0] for a, b in zip(way[:-1], way[1:])) >= need
    best, least = _walk(sim, agents, detour, 20.0)
    assert best < 0.05 and least >= 0.6 * 0.99
    assert not detour.yielding.any() and not detour.active[0]
    _walk(sim, agents, detour, 10.0)
    np.testing.assert_array_equal(agents.target[1:], ring)  # their goals again
    assert np.hypot(*(agents.position[1:] - ring).T).max() < 0.05

    # CROWD's make_way, no detour: the one in the walker's way steps aside, the walker is
    # home without a touch, and the ring is back on its goals.
    sim, agents = _sim(ring, kinematic=False)
    best, least = _walk(sim, agents, None, 20.0)
    assert best < 0.05 and least >= 0.6 * 0.99
    _walk(sim, agents, None, 10.0)
    assert np.hypot(*(agents.position[1:] - ring).T).max() < 0.05


def test_kinematic_agents_do_not_make_way():
    # The same ring, kinematic: nobody steps aside, and no route is planned.
    sim, agents = _sim(_ring(10), kinematic=True)
    detour = cs.Detour(sim)
    _walk(sim, agents, detour, 15.0)
    assert detour.plans >= 2 and detour.yields == 0 and detour.detours == 0


def test_a_target_written_for_an_agent_standing_aside_is_its_new_goal():
    ring = _ring(10)
    sim, agents = _sim(ring, kinematic=False, make_way=0.0)
    detour = cs.Detour(sim)
    j = int(_until_aside(sim, detour)[0])
    agents.target[j] = [0.0, 5.0]
    detour.update()
    assert not detour.yielding[j]
    np.testing.assert_array_equal(detour.goals[j], [0.0, 5.0])
    _walk(sim, agents, detour, 5.0)
    np.testing.assert_array_equal(agents.target[j], [0.0, 5.0])  # never written back


def test_yield_time_sends_them_back():
    # A walker that does not come (kinematic once the agents stepped aside): they go
    # back after yield_time.
    sim, agents = _sim(_ring(10), kinematic=False, make_way=0.0)
    detour = cs.Detour(sim, yield_time=2.0)
    aside = _until_aside(sim, detour)
    agents.velocity[0] = 0.0
    agents.kinematic[0] = True  # the walker stops for good; its detour ends
    detour.update()
    assert not detour.yielding.any()
    np.testing.assert_array_equal(agents.target[aside], detour.goals[aside])

    sim, agents = _sim(_ring(10), kinematic=False, make_way=0.0)
    detour = cs.Detour(sim, yield_time=2.0)
    aside = _until_aside(sim, detour)
    agents.max_speed[0] = 0.0  # the walker stays on its detour, and never comes
    for _ in range(int(1.9 / DT)):
        sim.step(DT)
        detour.update()
    assert detour.yielding[aside].all()
    for _ in range(int(0.2 / DT)):
        sim.step(DT)
        detour.update()
    assert not detour.yielding.any()
    np.testing.assert_array_equal(agents.target[aside], detour.goals[aside])


def test_a_pocket_whose_mouth_only_the_narrow_margin_passes():
    # The goal in a pocket of standing agents open to +x by 0.8 m between bodies: 0.6 m
    # of walker and 0.1 m on each side, so a route keeps 0.05 m there (narrow_margin)
    # but not 0.15 m (margin). The walker is held still (max speed 0) until it is
    # stalled, so the plan alone is tested, then let go.
    half = 2 * np.arcsin((0.8 + 0.6) / 2 / 1.3)  # the mouth's two agents 1.4 m apart
    a = np.linspace(half / 2, 2 * np.pi - half / 2, 12)  # the others 0.603 m apart
    pocket = (GOAL + 1.3 * np.stack([np.cos(a), np.sin(a)], axis=1)).astype(np.float32)
    for narrow in (0.15, 0.05):
        sim, agents = _sim(pocket, kinematic=False)
        agents.max_speed[0] = 0.0
        detour = cs.Detour(sim, narrow_margin=narrow, make_way=False)
        _walk(sim, agents, detour, 3.5)
        assert detour.plans >= 1
        if narrow == 0.15:
            assert detour.detours == 0 and not detour.active[0]
            continue
        assert detour.active[0]
        # Brute force over the legs: 0.05 m kept from every body, 0.15 m not.
        way = np.vstack([agents.position[:1], detour.waypoints(0)]).astype(np.float64)
        clear = min(
            _segment_distance(pocket.astype(np.float64), a, b).min()
            for a, b in zip(way[:-1], way[1:])
        )
        assert 0.6 + 0.05 <= clear < 0.6 + 0.15, clear
        agents.max_speed[0] = 1.3
        best, least = _walk(sim, agents, detour, 40.0)
        assert best < 0.05 and least >= 0.6 * 0.99

    # With make_way (the default) the agents nearer to the narrow route than the full
    # margin (brute force over the legs), the mouth's two among them, step aside to it,
    # and no one else does.
    sim, agents = _sim(pocket, kinematic=False)
    agents.max_speed[0] = 0.0
    detour = cs.Detour(sim)
    _walk(sim, agents, detour, 3.5)
    aside = np.flatnonzero(detour.yielding)
    way = np.vstack([agents.position[:1], detour.waypoints(0)]).astype(np.float64)
    near = [
        j
        for j in range(1, len(pocket) + 1)
        if min(
            _segment_distance(pocket[j - 1 : j].astype(np.float64), a, b)[0]  # where it stood
            for a, b in zip(way[:-1], way[1:])
        )
        < 0.75
    ]
    np.testing.assert_array_equal(aside, near)
    assert {1, len(pocket)} <= set(aside.tolist())  # the mouth's two
    for j in aside:
        t = agents.target[j].astype(np.float64)[None]
        assert min(_segment_distance(t, a, b)[0] for a, b in zip(way[:-1], way[1:])) >= 0.75
    agents.max_speed[0] = 1.3
    best, least = _walk(sim, agents, detour, 40.0)
    assert best < 0.05 and least >= 0.6 * 0.99 and not detour.yielding.any()


def test_a_far_goal_is_routed_to_itself():
    # A goal 20 m away behind a cup, with an agent standing 8 m along the straight line
    # (where a route ended when it stopped at ``reach``): the route runs to the goal.
    cup = _cup()
    far = np.float32([20.0, 0.0])
    sim, agents = _sim(np.vstack([cup, [[8.0, 0.0]]]).astype(np.float32), goal=far)
    detour = cs.Detour(sim, make_way=False)
    _until_detour(sim, detour)
    np.testing.assert_array_equal(detour.waypoints(0)[-1], far)
    for _ in range(int(40 / DT)):
        detour.update()
        sim.step(DT)
    assert np.hypot(*(agents.position[0] - far)) < 0.3


def test_the_users_targets_are_the_goals():
    cup = _cup()
    # Rewriting the same goal before every update does not end the detour.
    sim, agents = _sim(cup)
    detour = cs.Detour(sim)
    best, _ = _walk(sim, agents, detour, 40.0, rewrite=GOAL)
    assert best < 0.05 and detour.detours >= 1

    # A new goal written during a detour ends it and is adopted.
    sim, agents = _sim(cup)
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    agents.target[0] = [-3.0, 0.0]
    detour.update()
    assert not detour.active[0]
    np.testing.assert_array_equal(detour.goals[0], [-3.0, 0.0])
    np.testing.assert_array_equal(agents.target[0], [-3.0, 0.0])
    assert len(detour.waypoints(0)) == 0


def test_a_reused_slot_and_a_kinematic_agent_are_not_led():
    cup = _cup()
    sim, agents = _sim(cup)
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    agents.remove([0])
    detour.update()
    assert not detour.active[0]
    (slot,) = agents.add([[-2.0, 0.0]], radius=0.3, max_speed=1.3, target=[[-5.0, 0.0]])
    assert slot == 0
    detour.update()
    assert not detour.active[0]
    np.testing.assert_array_equal(detour.goals[0], [-5.0, 0.0])
    np.testing.assert_array_equal(agents.target[0], [-5.0, 0.0])

    # A kinematic walker is moved by its velocity: never planned for.
    sim, agents = _sim(cup)
    agents.kinematic[0] = True
    detour = cs.Detour(sim)
    _walk(sim, agents, detour, 10.0)
    assert detour.plans == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_the_same_run_is_the_same_on_any_thread_count(threads):
    cup = _cup()
    out = []
    for n in (1, threads):
        with cs.threads(n):
            sim, agents = _sim(cup, kinematic=False)
            detour = cs.Detour(sim)
            _walk(sim, agents, detour, 12.0)
        out.append((agents.position.copy(), detour.plans, detour.detours))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1:] == out[1][1:]
    assert out[0][2] >= 1  # it was led


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"stall_time": float("nan")}, ValueError, "stall_time"),
        ({"stall_time": 0}, ValueError, "stall_time"),
        ({"progress": -1}, ValueError, "progress"),
        ({"reach": float("inf")}, ValueError, "reach"),
        ({"advance": "1"}, TypeError, "advance"),
        ({"margin": True}, TypeError, "margin"),
        ({"max_plans": 0}, ValueError, "max_plans"),
        ({"max_plans": 1.5}, TypeError, "max_plans"),
        ({"max_standing": -1}, ValueError, "max_standing"),
        ({"max_standing": 2.0}, TypeError, "max_standing"),
        ({"arc_points": 3}, ValueError, "arc_points"),
        ({"layers": -1}, ValueError, "layers"),
        ({"narrow_margin": 0.2}, ValueError, "narrow_margin"),
        ({"narrow_margin": -0.01}, ValueError, "narrow_margin"),
        ({"make_way": 2}, TypeError, "make_way"),  # a bool or 0 and 1, as every switch
        ({"make_way": "no"}, TypeError, "make_way"),
        ({"yield_time": 0.0}, ValueError, "yield_time"),
        ({"max_stretch": 0.5}, ValueError, "max_stretch"),
        ({"max_stretch": float("nan")}, ValueError, "max_stretch"),
        ({"max_stretch": "2"}, TypeError, "max_stretch"),
    ],
)
def test_bad_parameters_are_refused(kwargs, err, match):
    sim, _ = _sim(np.zeros((0, 2), np.float32))
    with pytest.raises(err, match=match):
        cs.Detour(sim, **kwargs)


def test_it_needs_a_simulation():
    with pytest.raises(TypeError, match="expected a Simulation"):
        cs.Detour(object())  # type: ignore[arg-type]


def test_walls_are_copied_as_chains_with_every_segment_kept():
    from contextsteer.detour import _add_chains

    rng = np.random.default_rng(3)
    ring = rng.uniform(-5, 5, (7, 2)).astype(np.float32)
    line = rng.uniform(-5, 5, (4, 2)).astype(np.float32)
    src = cs.World()
    src.add_polyline(ring, closed=True)  # 7 segments, one obstacle
    src.add_polyline(line)  # 3 more, another
    src.add_segments(rng.uniform(-5, 5, (3, 4)).astype(np.float32))  # 3 obstacles
    segs = np.asarray(src.walls, np.float64)
    ids = np.asarray(src.wall_obstacles)
    for keep in (np.ones(len(segs), bool), rng.random(len(segs)) < 0.6):
        out = cs.World()
        _add_chains(out, segs[keep], ids[keep])
        np.testing.assert_array_equal(out.walls, segs[keep].astype(np.float32))
        # One polyline per run of one obstacle's meeting rows: the ring (its rows meet
        # end to start), the line, and each lone segment.
        joined = (ids[keep][1:] == ids[keep][:-1]) & np.all(
            segs[keep][1:, :2] == segs[keep][:-1, 2:], axis=1
        )
        assert out.obstacle_count == int(np.count_nonzero(~joined)) + 1
        if keep.all():
            assert out.obstacle_count == 5  # by hand: the ring, the line, 3 lone segments


def test_one_update_at_a_time():
    sim, _ = _sim(np.zeros((0, 2), np.float32))
    detour = cs.Detour(sim)
    detour._busy.acquire()  # another thread inside update()
    try:
        with pytest.raises(RuntimeError, match="another thread"):
            detour.update()
    finally:
        detour._busy.release()
    assert detour.update() == 0


def test_max_standing_limits_what_is_routed_round():
    # With none of the standing agents taken, the cup is invisible to the router: the
    # routes are straight and nobody is led.
    sim, agents = _sim(_cup())
    detour = cs.Detour(sim, max_standing=0)
    best, _ = _walk(sim, agents, detour, 15.0)
    assert detour.plans >= 1 and detour.detours == 0 and best > 3.0
    # All twelve taken, it is led round as with the default.
    sim, agents = _sim(_cup())
    detour = cs.Detour(sim, max_standing=12)
    best, _ = _walk(sim, agents, detour, 40.0)
    assert detour.detours >= 1 and best < 0.05


def test_a_pickled_detour_goes_on_as_the_original():
    import pickle

    sim, agents = _sim(_cup(), kinematic=False)
    detour = cs.Detour(sim)
    _until_detour(sim, detour)
    sim2, detour2 = pickle.loads(pickle.dumps((sim, detour)))
    assert detour2.sim is sim2 and detour2.active[0]
    np.testing.assert_array_equal(detour2.waypoints(0), detour.waypoints(0))
    for s, d in ((sim, detour), (sim2, detour2)):
        for _ in range(int(20 / DT)):
            d.update()
            s.step(DT)
    np.testing.assert_array_equal(sim2.agents.position, sim.agents.position)
    assert (detour2.plans, detour2.detours) == (detour.plans, detour.detours)
    assert detour2.update() == detour.update()  # its thread guard works


def _field_sim(standing: np.ndarray, *, detour_capacity=True, goal=GOAL):
    world = cs.World()
    world.add_polyline(np.float32([[-4, -6], [11, -6], [11, 6], [-4, 6]]), closed=True)
    field = cs.NavField(world, goal, radius=0.3, cell=0.1)
    n = len(standing) + 1
    agents = cs.Agents(n, slots=16, seed=0)
    agents.add([[0.0, 0.0]], radius=0.3, max_speed=1.3, max_accel=6.0)
    agents.add(standing, radius=0.3, max_speed=1.3, max_accel=6.0, kinematic=True)
    steering = cs.scenarios.crowd_steering(
        field=field, detour_capacity=n if detour_capacity else None
    )
    slots = cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True)
    sim = cs.Simulation(world, agents, steering, motion=cs.Accel(), slots=slots)
    return sim, agents, field


def test_a_walker_that_follows_a_field_is_led_round_the_cup_too():
    cup = _cup()
    sim, agents, field = _field_sim(cup)
    best, _ = _walk(sim, agents, None, 40.0)
    assert best > 3.0  # the field knows the room's walls, not the people in the cup

    sim, agents, field = _field_sim(cup)
    detour = cs.Detour(sim, field=field)
    ff, arrive = sim.steering.behaviours[0], sim.steering.behaviours[1]
    _until_detour(sim, detour)
    # Led: the field's interest off for the walker, the waypoint's on.
    assert (ff.agent_weights[0], arrive.agent_weights[0]) == (0.0, 1.0)
    np.testing.assert_array_equal(agents.target[0], detour.waypoints(0)[0])
    best, least = _walk(sim, agents, detour, 40.0)
    assert best < 0.3 and least >= 0.6 * 0.99
    assert not detour.active[0]
    assert (ff.agent_weights[0], arrive.agent_weights[0]) == (1.0, 0.0)  # the field again
    assert np.all(ff.agent_weights == 1.0) and np.all(arrive.agent_weights == 0.0)
    # and the target it had before the detour (its start: agents.add's default)
    np.testing.assert_array_equal(agents.target[0], [0.0, 0.0])


def test_a_body_standing_over_the_end_of_a_field_route_does_not_stop_the_route():
    # The field's goal is 10 m off; a route along it ends reach (4 m) down the field's
    # descent, on the body standing at (7.9, 0) beyond the cup. That end is no taken
    # goal: the route ends short of the body, where nobody stands, and the walker is led
    # out of the cup and home. (Read as a taken goal, no route was planned and the walker
    # stayed in the cup.)
    goal = np.float32([10.0, 0.0])
    sim, agents, field = _field_sim(np.vstack([_cup(), [[7.9, 0.0]]]), goal=goal)
    detour = cs.Detour(sim, field=field, reach=4.0)
    _until_detour(sim, detour)
    end = detour.waypoints(0)[-1]
    assert np.hypot(*(end - [7.9, 0.0])) >= 0.6  # short of the body
    for _ in range(int(40 / DT)):
        detour.update()
        sim.step(DT)
    assert np.hypot(*(agents.position[0] - goal)) < 0.3


def test_a_field_detour_needs_a_steering_it_can_switch():
    sim, _, field = _field_sim(_cup(), detour_capacity=False)
    with pytest.raises(ValueError, match="detour_capacity"):
        cs.Detour(sim, field=field)
    with pytest.raises(TypeError, match="NavField"):
        cs.Detour(sim, field="field")
    with pytest.raises(ValueError, match="is for a field"):
        cs.scenarios.crowd_steering(detour_capacity=4)
    with pytest.raises(ValueError, match="detour_capacity"):
        cs.scenarios.crowd_steering(field=field, detour_capacity=0)
    # Built for it, without a Detour, the steering steers as the plain one does.
    runs = []
    for ready in (False, True):
        sim, agents, _ = _field_sim(np.zeros((0, 2), np.float32), detour_capacity=ready)
        sim.step(DT, steps=300)
        runs.append(agents.position.copy())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_pickled_field_detour_switches_the_copys_weights():
    import pickle

    sim, agents, field = _field_sim(_cup())
    detour = cs.Detour(sim, field=field)
    _until_detour(sim, detour)
    sim2, detour2 = pickle.loads(pickle.dumps((sim, detour)))
    ff2, arrive2 = sim2.steering.behaviours[0], sim2.steering.behaviours[1]
    assert detour2.field is ff2.field
    for _ in range(int(40 / DT)):
        detour2.update()
        sim2.step(DT)
    assert np.hypot(*(sim2.agents.position[0] - GOAL)) < 0.3
    assert (ff2.agent_weights[0], arrive2.agent_weights[0]) == (1.0, 0.0)


def test_agents_that_follow_fields_make_way_too():
    # The ring of agents standing round the walker, each following a field to its own
    # goal (one field per agent): those stood aside are led by an Arrive to their place
    # aside (their field's weight 0), then their fields take them back.
    ring = _ring(10)
    world = cs.World()
    world.add_polyline(np.float32([[-4, -6], [11, -6], [11, 6], [-4, 6]]), closed=True)
    goals = np.vstack([GOAL[None], ring]).astype(np.float32)
    field = cs.NavField(world, list(goals), radius=0.3, cell=0.1)
    n = len(goals)
    agents = cs.Agents(n, slots=16, seed=0)
    agents.add(np.vstack([[[0.0, 0.0]], ring]), radius=0.3, max_speed=1.3, max_accel=6.0)
    steering = cs.scenarios.crowd_steering(field=field, which=np.arange(n), detour_capacity=n)
    slots = cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True)
    sim = cs.Simulation(world, agents, steering, motion=cs.Accel(), slots=slots)
    ff, arrive = sim.steering.behaviours[0], sim.steering.behaviours[1]
    detour = cs.Detour(sim, field=field)
    aside = _until_aside(sim, detour)
    assert len(aside) >= 1
    assert np.all(ff.agent_weights[aside] == 0.0) and np.all(arrive.agent_weights[aside] == 1.0)
    best, least = _walk(sim, agents, detour, 25.0)
    assert best < 0.3 and least >= 0.6 * 0.99
    _walk(sim, agents, detour, 10.0)
    assert not detour.yielding.any()
    assert np.all(ff.agent_weights == 1.0) and np.all(arrive.agent_weights == 0.0)
    assert np.hypot(*(agents.position[1:] - ring).T).max() < 0.3
    # Each got back the target it had (its start), and the walker too.
    np.testing.assert_array_equal(agents.target[1:], ring.astype(np.float32))
    np.testing.assert_array_equal(agents.target[0], [0.0, 0.0])


def _crowd_as_traced(monkeypatch):
    """Patch cs.scenarios.CROWD to the set before same_way_horizon joined it (the traced
    cases below were found with it); returns that set."""
    crowd = {k: v for k, v in cs.scenarios.CROWD.items() if k != "same_way_horizon"}
    monkeypatch.setattr(cs.scenarios, "CROWD", types.MappingProxyType(crowd))
    return crowd


def test_a_field_scenario_built_for_a_detour_gets_its_stranded_agent_home(monkeypatch):
    # The doorway with 30 agents, seed 45, with CROWD's make_way off: agent 4 is still not
    # home after four times the scenario's steps. (Seed 79's agent 1 was this test's case
    # until retreat_speed's cap was tested: it is home unled since. Seed 13's agent 2 was this
    # test's case until the refinements' fallback at the wanted speed got it home:
    # strength_from_speed.) Built with detour=True and led by a detour on its fields,
    # everyone is home, with no contact. Each agent's field ends at its goal, so
    # past_target holds either way (not for an agent the detour leads: Agents.waypoint).
    # (The bottleneck's seed 980 was this test's case until past_target left out bodies
    # standing past the target.) With make_way in CROWD (the default) the bodies at their
    # goals step aside and nobody is stranded on seeds 0-399 unled; seed 45 is home then
    # too.
    # Traced with CROWD less same_way_horizon (seed 79 had one pair touching with it,
    # docs/crowd.md, "In the default since"), so the test keeps that CROWD, and without the
    # doorway's lateral_cost (scenarios.QUEUE_CHANGES), as seed 79 was.
    crowd = _crowd_as_traced(monkeypatch)
    sc = cs.scenarios.get("doorway")

    def not_home(led):
        sim = sc(seed=45, agents=30, detour=led, changes={"lateral_cost": 0.0})
        danger = sim.steering.behaviours[-1]
        assert danger.past_target
        detour = cs.Detour.on_steering(sim) if led else None
        assert detour is None or detour.field is not None
        result = cs.run_simulation(sim, 4 * sc.steps, dt=sc.dt, detour=detour)
        assert result.metrics["collisions"]["total"] == 0
        return np.flatnonzero(np.isnan(sim.agent_metrics.time_to_goal)).tolist()

    assert not_home(False) == []
    monkeypatch.setattr(cs.scenarios, "CROWD", types.MappingProxyType({**crowd, "make_way": 0.0}))
    assert {led: not_home(led) for led in (False, True)} == {False: [4], True: []}


def test_an_agent_led_past_a_wall_end_reads_the_wall_beyond_its_waypoint(monkeypatch):
    # The maze's seed 233 with a detour on its fields, past_target on (each agent's field
    # ends at its goal). A led agent turns at a wall's end past one of its waypoints.
    # Were the waypoint read as a goal it stops at (past_target), the wall beyond it would
    # not limit the turn's speed: that run (the detour not marking Agents.waypoint) comes
    # 0.75 mm from the wall. Marked, every body keeps the steering's 5 cm margin. Traced
    # with CROWD before same_way_horizon joined it (with it nobody on this seed needs
    # leading), so the test keeps that CROWD.
    _crowd_as_traced(monkeypatch)
    sc = cs.scenarios.get("maze")
    sim = sc(seed=233, detour=True)
    assert sim.steering.behaviours[-1].past_target
    detour = cs.Detour.on_steering(sim)
    led = np.zeros(sim.agents.capacity, bool)
    for _ in range(sc.steps):
        detour.update()
        led |= sim.agents.waypoint
        assert not (sim.agents.waypoint & ~(detour.active | detour.yielding)).any()
        sim.step(sc.dt)
    m = sim.metrics()
    assert led.any()
    assert m["collisions"]["total"] == 0
    assert m["min_clearance"]["wall"] >= 0.05 - 1e-3, m["min_clearance"]
    assert not np.isnan(sim.agent_metrics.time_to_goal).any()


@pytest.mark.parametrize("start", [(0.792, 13.61), (0.718, 13.956), (0.77, 14.10)])
def test_a_walker_led_from_inside_its_routes_clearance_steps_out_first(start):
    # Seed 108 of benchmarks/bench_stranding.py, cut down: the top-left corner of its
    # 15.136 m room, three agents standing at their goals, the walker 0.65-0.70 m from
    # the first of them (inside the route's clearance, 0.3 + 0.3 + 0.15 m), its goal
    # beyond that body by the top wall. The route arcs round that body with corners
    # 0.5 m apart. Passing every corner within `advance` at once, the walker aimed at a
    # corner whose course passes the body nearer than the steering's 5 cm margin: from
    # the first start it was never home (24 plans in 40 s), from the others home after
    # 35.2 and 18.9 s. Stepping out first (a corner passed only within `margin` until it
    # is out), it is home by 15.2, 11.5 and 5.3 s, and nobody touches. The bodies do not
    # make way by themselves here (CollisionDanger's make_way off), as when this was
    # traced: the route is what is tested.
    w = 15.136
    world = cs.World()
    world.add_polyline(np.float32([[0, 0], [w, 0], [w, w], [0, w]]), closed=True)
    standing = np.float32([[1.392, 13.87], [2.666, 13.724], [2.195, 12.856]])
    goal = np.float32([1.981, 14.505])
    agents = cs.Agents(4, slots=16, seed=0)
    agents.add([start], radius=0.3, max_speed=1.3, max_accel=6.0, target=[goal])
    agents.add(standing, radius=0.3, max_speed=1.3, max_accel=6.0, target=standing)
    slots = cs.scenarios.crowd_slots_for(16, danger="velocity", rotate=True)
    steering = cs.scenarios.crowd_steering(changes={"make_way": 0.0})
    sim = cs.Simulation(world, agents, steering, motion=cs.Accel(), slots=slots)
    detour = cs.Detour(sim, stall_time=1.0)
    home, least = None, np.inf
    for k in range(int(17 / DT)):
        detour.update()
        sim.step(DT)
        least = min(least, float(np.hypot(*(agents.position[1:] - agents.position[0]).T).min()))
        if np.hypot(*(agents.position[0] - goal)) < 0.05:
            home = (k + 1) * DT
            break
    assert home is not None, (detour.plans, agents.position[0])
    assert detour.plans <= 6
    assert least >= 0.6 * 0.99
    np.testing.assert_array_equal(agents.position[1:], standing)  # they stood


@pytest.mark.parametrize("name", ["bottleneck", "doorway", "maze"])
def test_field_scenarios_check_their_detour_flag(name):
    with pytest.raises(ValueError, match="detour must be True or False"):
        cs.scenarios.get(name)(detour="yes")


def test_a_detour_leads_plain_local_steering_through_a_doorway():
    # The doorway with guide="none" (no field): on seed 7 agents press against the wall
    # beside the door and are still not home after four times the scenario's steps. A
    # detour without a field routes them through the door: everyone home, no contact.
    sc = cs.scenarios.get("doorway")
    not_home = {}
    for led in (False, True):
        sim = sc(seed=7, guide="none")
        detour = cs.Detour(sim) if led else None
        result = cs.run_simulation(sim, 4 * sc.steps, dt=sc.dt, detour=detour)
        assert result.metrics["collisions"]["total"] == 0
        not_home[led] = int(np.isnan(sim.agent_metrics.time_to_goal).sum())
    assert not_home[False] >= 1 and not_home[True] == 0


def test_agents_waypoint_is_a_column_add_clears_and_pickles_keep():
    # Agents.waypoint: a bool view into the agents' memory, cleared by add (a new agent's
    # target is its goal), kept by pickles; pickles from before it load with none set.
    import pickle

    from contextsteer.agents import _restore_agents

    a = cs.Agents(3, slots=8)
    a.add([[0, 0], [1, 0]])
    assert a.waypoint.dtype == np.bool_ and a.waypoint.tolist() == [False] * 3
    a.waypoint[1] = True
    assert a.waypoint.tolist() == [False, True, False]  # written through the view
    b = pickle.loads(pickle.dumps(a))
    assert b.waypoint.tolist() == [False, True, False]
    state = a._snapshot()
    del state["waypoint"]  # an agents pickle from before the column
    assert not _restore_agents(3, 8, state, 0).waypoint.any()
    a.remove([1])
    a.add([[5, 5]])  # slot 1 again
    assert not a.waypoint[1]


def test_a_step_from_another_thread_is_refused_during_an_update(monkeypatch):
    """update holds the simulation, as a Flow's step does: a step another thread starts
    meanwhile raises RuntimeError (it ran while the update wrote targets and waypoints;
    fuzz round 13). Deterministic: the other thread steps from inside the update."""
    import threading

    sim, _ = _sim(_ring(10))
    detour = cs.Detour(sim)
    real = detour._update
    seen = []

    def stepping_inside():
        def other():
            try:
                sim.step(1 / 30)
                seen.append(None)
            except RuntimeError as e:
                seen.append(str(e))

        t = threading.Thread(target=other)
        t.start()
        t.join()
        return real()

    monkeypatch.setattr(detour, "_update", stepping_inside)
    detour.update()
    assert len(seen) == 1 and seen[0] is not None and "in use by another thread" in seen[0], seen
    monkeypatch.undo()
    sim.step(1 / 30)  # released after it
    detour.update()


def test_a_hall_of_pillars_beyond_the_routers_corners_plans_no_route_and_does_not_raise():
    """Every wall and circle in reach is routed round: in a hall of 2,800 pillars the
    router's corner limit raised a ValueError naming route out of update(), and the
    caller's simulation loop stopped (fuzz round 19). Past the limit no route is planned
    and the agent steers locally."""
    world = cs.World()
    g = np.arange(-40, 40.01, 1.5)
    xs, ys = np.meshgrid(g, g)
    pillars = np.c_[xs.ravel(), ys.ravel()]
    pillars = pillars[(np.abs(pillars[:, 0] - 2) > 1.0) & (np.hypot(*pillars.T) > 1.0)]
    world.add_circles(pillars, np.full(len(pillars), 0.1))
    world.add_segments([[2, -30, 2, 30]])
    agents = cs.Agents(4, slots=16)
    agents.add(
        [[0.0, 0.3], [0.0, -0.3], [-0.5, 0.0], [-0.5, 0.6]],
        radius=0.3,
        max_speed=1.3,
        max_accel=4.0,
        target=[[10, 0]] * 4,
    )
    sim = cs.Simulation(
        world,
        agents,
        cs.scenarios.crowd_steering(),
        motion=cs.Accel(),
        slots=cs.scenarios.crowd_slots(),
    )
    det = cs.Detour(sim)
    # Past the router's 16,384 corners (2,800 circles of 24): no way, not an error.
    hall = cs.World()
    hall.add_circles(pillars, np.full(len(pillars), 0.1))
    with pytest.raises(ValueError, match="visibility graph would have"):
        cs.route(hall, [[0.0, 0.0]], [[10.0, 0.0]], radius=0.35)
    assert det._route(hall, np.zeros(2), np.array([10.0, 0.0]), 0.35).shape == (0, 2)
    for _ in range(200):
        det.update()
        sim.step(1 / 30)
    assert det.plans >= 1
