"""What the slot rays sensed (``Simulation.sensed``, ``History.sensed``) and the pictures
drawn from it: rays stop where the agent's own rays stopped, never where a second cast
says (issue 12, "plotting only draws")."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

import contextsteer as cs


def _scene(rotate=False, agents_too=False, k=16):
    """Agents in a box with an inner wall, facing different ways; a WallDanger of 4 m."""
    w = cs.World()
    w.add_polyline([[0, 0], [12, 0], [12, 8], [0, 8]], closed=True)
    w.add_segments([[6, 1, 6, 7]])
    rng = np.random.default_rng(3)
    pos = np.array([[2.0, 4.0], [4.5, 2.0], [8.0, 6.0], [10.5, 1.5], [5.2, 4.0]])
    a = cs.Agents(6, slots=k)
    a.add(
        pos,
        heading=rng.uniform(-np.pi, np.pi, len(pos)),
        radius=0.3,
        max_speed=1.0,
        target=[[11, 4]] * len(pos),
    )
    wd = cs.WallDanger(look_ahead=4.0, padding=0.1, agents=agents_too)
    sim = cs.Simulation(
        w, a, cs.Steering([cs.Seek(), wd], rotate=rotate), motion=cs.Lerp(steer_force=1.0)
    )
    return w, a, sim


@pytest.mark.parametrize("rotate", [False, True])
def test_sensed_is_the_walldanger_cast(rotate):
    w, a, sim = _scene(rotate=rotate)
    assert np.isnan(sim.sensed).all()  # nothing cast yet
    for _ in range(3):
        sim.perceive()
        alive = np.asarray(a.alive)
        pos = np.asarray(a.position)[alive]
        # The oracle: an independent cast of the same rays (disc of radius r + padding).
        expect = cs.slot_raycast(
            w,
            pos,
            cs.SlotSet(16),
            4.0,
            radius=0.4,
            headings=np.asarray(a.heading)[alive] if rotate else None,
        )
        got = np.array(sim.sensed)[alive]
        far = expect > 4.0
        np.testing.assert_array_equal(np.isinf(got), far | np.isinf(expect))
        np.testing.assert_allclose(got[~far], expect[~far], rtol=0, atol=1e-6)
        assert np.isnan(np.array(sim.sensed)[~alive]).all()  # the dead cast no rays
        sim.decide_and_move(0.2)


def test_sensed_sees_other_agents_when_the_walldanger_does():
    _, a, sim = _scene(agents_too=True)
    sim.perceive()
    # Agent 4 at (5.2, 4) sees the inner wall at x = 6 along +x (slot 0): 0.8 - 0.4 = 0.4;
    # agent 0 at (2, 4) sees nothing in 4 m along +x without agents ... and agent 4
    # (a disc of 0.3 + 0.4 at 3.2 m) with them.
    assert np.array(sim.sensed)[4, 0] == pytest.approx(0.4, abs=1e-5)
    assert np.array(sim.sensed)[0, 0] == pytest.approx(3.2 - 0.7, abs=1e-5)


def test_no_walldanger_no_sensed():
    a = cs.Agents(1, slots=8)
    a.add([0, 0], target=[1, 0])
    assert cs.Simulation(None, a, cs.Steering([cs.Seek()])).sensed is None


def test_history_records_what_was_sensed_at_each_step():
    _, a, sim = _scene()
    hist = cs.History(sim, maps=True)
    seen = []
    for _ in range(4):
        sim.step(0.2)
        seen.append(np.array(sim.sensed))
    np.testing.assert_array_equal(np.asarray(hist.sensed)[1:], np.stack(seen))
    assert cs.History(sim).sensed is None  # only with maps


def _lengths(segments):
    seg = np.asarray(segments)
    return np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)


def test_scene_rays_stop_at_the_sensed_hits():
    _, a, sim = _scene()
    sim.step(0.2)
    art = cs.plot.scene(sim)
    alive = np.flatnonzero(a.alive)
    expect = np.minimum(np.array(sim.sensed)[alive], 4.0).reshape(-1)
    np.testing.assert_allclose(_lengths(art.rays.get_segments()), expect, atol=1e-5)
    assert (expect < 4.0).any() and (expect == 4.0).any()
    matplotlib.pyplot.close("all")


def test_animation_rays_stop_at_the_recorded_hits():
    _, a, sim = _scene()
    res = cs.run_simulation(sim, 6, dt=0.2, records=6, maps=True)
    rec = res.history
    assert rec.sensed is not None
    # A deliberately wrong recording (every hit at 1 m) must show in the picture: the
    # rays come from the recording, not from a new cast.
    fake = rec._replace(sensed=np.ones_like(rec.sensed))
    for r, cap in ((rec, None), (fake, 1.0)):
        anim = cs.plot.animate(r, sim)
        artists = anim._func(len(r.steps) - 1)
        rays = [
            x
            for x in artists
            if isinstance(x, matplotlib.collections.LineCollection)
            and len(x.get_segments()) == 5 * 16
        ]
        assert len(rays) == 1
        want = np.minimum(np.asarray(r.sensed)[-1][np.asarray(a.alive)], 4.0).reshape(-1)
        if cap is not None:
            want = np.minimum(want, cap)
        np.testing.assert_allclose(_lengths(rays[0].get_segments()), want, atol=1e-5)
        anim._draw_was_started = True  # drawn by hand above; no "never rendered" warning
    matplotlib.pyplot.close("all")


def test_rendered_frames_draw_the_recorded_hits():
    _, a, sim = _scene()
    rec = cs.run_simulation(sim, 4, dt=0.2, records=4, maps=True).history
    short = rec._replace(sensed=np.full_like(rec.sensed, 0.5))
    images = [
        np.stack(list(cs.plot.frames(sim, history=r, size=160, trail=False).images))
        for r in (rec, short, rec)
    ]
    np.testing.assert_array_equal(images[0], images[2])  # deterministic drawing
    assert (images[0] != images[1]).any()  # the recorded hits are drawn
    matplotlib.pyplot.close("all")
