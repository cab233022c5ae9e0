"""Plots: returned artists carry the data (Agg backend, no pixels compared)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import contextsteer as cs


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_context_map_bars_follow_slots():
    interest = np.array([1.0, 0.707, 0, 0, 0, 0, 0, 0.707])
    art = cs.plot.context_map(interest)
    assert len(art.interest.patches) == 8
    heights = [p.get_height() for p in art.interest.patches]
    np.testing.assert_allclose(heights, interest)
    # slot 0 along +x, counter-clockwise
    xs = [p.get_x() + p.get_width() / 2 for p in art.interest.patches]
    np.testing.assert_allclose(xs, 2 * np.pi * np.arange(8) / 8)
    assert art.danger is None and art.masked is None and art.chosen is None


def test_context_map_marks_masked_slots_and_chosen_arrow():
    interest = np.array([1.0, 0.707, 0, 0, 0, 0, 0, 0.707])
    danger = np.zeros(8)
    danger[1] = 1.0
    danger[2] = 0.2
    art = cs.plot.context_map(interest, danger, chosen=(0.6, -0.8), threshold=0.5)
    np.testing.assert_allclose(art.masked.get_xdata(), [2 * np.pi / 8])
    t, r = art.danger.get_data()
    assert len(t) == 9 and r[0] == r[-1]
    angle, length = art.chosen.xy
    assert angle == pytest.approx(np.arctan2(-0.8, 0.6))
    assert length == pytest.approx(1.0)


def test_context_map_uses_given_axes():
    fig, ax = plt.subplots(subplot_kw={"projection": "polar"})
    art = cs.plot.context_map(np.ones(5), ax=ax)
    assert art.interest.patches[0].axes is ax


@pytest.mark.parametrize(
    "interest, danger, match",
    [
        (np.ones(2), None, "K >= 3"),
        (np.ones((2, 4)), None, "shape"),
        (np.ones(4), np.ones(5), "danger"),
        (np.array([1.0, np.nan, 0, 0]), None, "finite"),
    ],
)
def test_context_map_rejects_bad_input(interest, danger, match):
    with pytest.raises(ValueError, match=match):
        cs.plot.context_map(interest, danger)


# ----------------------------------------------------------- world, path, agents ---


def _square_world():
    w = cs.World()
    w.add_polyline([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    w.add_circles([[1.0, 2.0], [2.0, -3.0]], [0.5, 0.8])
    return w


def test_world_draws_walls_and_circles():
    w = _square_world()
    art = cs.plot.world(w)
    segs = np.array(art.walls.get_segments())
    np.testing.assert_allclose(segs.reshape(-1, 4), w.walls)
    paths = art.circles.get_paths()
    assert len(paths) == 2
    # PatchCollection paths are the unit circle under each patch's transform: check extents
    for patch_path, c, r in zip(paths, *w.circles):
        ext = patch_path.get_extents()
        np.testing.assert_allclose(
            [ext.x0, ext.y0, ext.x1, ext.y1], [c[0] - r, c[1] - r, c[0] + r, c[1] + r], atol=1e-6
        )
    assert art.walls.axes is art.circles.axes


def test_world_and_scene_draw_only_the_obstacles_queries_meet():
    """A door opened with set_layers(ids, 0) let rays through but was still drawn (a new
    user's audit); obstacles of a layer the agents do not collide with too. Oracle: the
    drawn segments and circles are those whose mask shares a bit with the layers."""
    w = cs.World()
    w.add_segments([[20, 0, 20, 8.5], [20, 11.5, 20, 20]])
    door = w.add_segments([[20, 8.5, 20, 11.5]])
    w.add_segments([[0, 30, 10, 30]], layers=2)
    w.add_circles([[5, 5], [8, 8]], [1.0, 0.5])
    w.set_layers(door, 0)
    w.set_layers([w.obstacle_count - 1], 2)  # the second circle: layer 2 only

    def drawn(art):
        segs = [] if art.walls is None else [s.tolist() for s in art.walls.get_segments()]
        circles = 0 if art.circles is None else len(art.circles.get_paths())
        return segs, circles

    left, right, wide = [[20, 0], [20, 8.5]], [[20, 11.5], [20, 20]], [[0, 30], [10, 30]]
    assert drawn(cs.plot.world(w)) == ([left, right, wide], 2)
    assert drawn(cs.plot.world(w, layers=1)) == ([left, right], 1)
    assert drawn(cs.plot.world(w, layers=2)) == ([left, right, wide], 2)  # all-layer walls too
    assert cs.raycast(w, [[15, 10]], [[1, 0]], 20.0).hit.tolist() == [False]
    w.set_layers(door, 1)  # closed again: drawn again
    assert drawn(cs.plot.world(w, layers=1)) == ([left, right, [[20, 8.5], [20, 11.5]]], 1)
    # scene: the simulation's layers by default, or the ones given.
    agents = cs.Agents(1)
    agents.add([[15, 10]])
    sim = cs.Simulation(w, agents, cs.Steering([cs.Seek()]), layers=2)
    assert drawn(cs.plot.scene(sim).world) == ([left, right, wide], 2)  # not the door (layer 1)
    assert len(drawn(cs.plot.scene(sim, layers=1).world)[0]) == 3
    assert len(drawn(cs.plot.scene(world=w).world)[0]) == 4
    with pytest.raises(ValueError, match="32-bit mask"):
        cs.plot.world(w, layers=-1)


def test_world_accepts_wall_array_and_kwargs():
    fig, ax = plt.subplots()
    art = cs.plot.world([[0, 0, 1, 0], [1, 0, 1, 1]], ax=ax, linewidths=4)
    assert art.walls.axes is ax and art.circles is None
    assert art.walls.get_linewidths()[0] == 4
    assert cs.plot.world(cs.World()) == (None, None)
    with pytest.raises(ValueError, match=r"\(M, 4\)"):
        cs.plot.world(np.zeros((3, 3)))


def test_path_closes_closed_paths():
    p = cs.Path([[0, 0], [4, 0], [4, 3]], closed=True)
    line = cs.plot.path(p, color="red")
    xy = line.get_xydata()
    assert len(xy) == 4 and np.array_equal(xy[0], xy[-1])
    assert line.get_color() == "red"
    open_line = cs.plot.path([[0, 0], [1, 1], [2, 0]])
    assert len(open_line.get_xydata()) == 3


def test_agents_oriented_circles():
    pos = np.array([[0.0, 0.0], [3.0, 1.0], [-2.0, 4.0]])
    heading = np.array([0.0, np.pi / 2, np.pi])
    art = cs.plot.agents(pos, heading, [0.5, 1.0, 2.0])
    assert len(art.bodies.get_paths()) == 3
    ticks = np.array(art.headings.get_segments())
    np.testing.assert_allclose(ticks[:, 0], pos)
    np.testing.assert_allclose(ticks[:, 1], [[0.5, 0], [3, 2], [-4, 4]], atol=1e-12)
    # colour by index: agents 0 and 1 differ
    fc = art.bodies.get_facecolors()
    assert not np.allclose(fc[0], fc[1])


def test_agents_from_agents_object_skips_dead():
    a = cs.Agents(4)
    a.add([[0, 0], [1, 0], [2, 0]], heading=[0.0, 0.5, 1.0], radius=[0.3, 0.4, 0.5])
    a.remove([1])
    art = cs.plot.agents(a)
    assert len(art.bodies.get_paths()) == 2
    starts = np.array(art.headings.get_segments())[:, 0]
    np.testing.assert_allclose(starts, [[0, 0], [2, 0]])
    # no headings: no ticks
    assert cs.plot.agents([[0, 0]]).headings is None


# ------------------------------------------------------------------------- rays ---


def test_rays_stop_at_hits_and_colour_by_closeness():
    dist = np.array([[1.0, np.inf, 2.0, 8.0]])
    lines = cs.plot.rays([[1.0, 1.0]], cs.SlotSet(4), dist, 4.0)
    ends = np.array(lines.get_segments())[:, 1]
    np.testing.assert_allclose(ends, [[2, 1], [1, 5], [-1, 1], [1, -3]], atol=1e-6)
    np.testing.assert_allclose(lines.get_array(), [0.75, 0.0, 0.5, 0.0])


def test_rays_coloured_by_danger_and_turned_by_heading():
    pos = np.array([[0.0, 0.0], [10.0, 0.0]])
    danger = np.array([[0, 1, 0, 0], [0, 0, 0.5, 2.0]])
    lines = cs.plot.rays(pos, 4, None, [1.0, 2.0], danger=danger, headings=[0.0, np.pi / 2])
    segs = np.array(lines.get_segments())
    assert segs.shape == (8, 2, 2)
    np.testing.assert_allclose(lines.get_array(), danger.ravel())
    assert lines.get_clim() == (0.0, 2.0)
    # agent 1's slot 0 turned to +y, length 2
    np.testing.assert_allclose(segs[4, 1], [10, 2], atol=1e-12)


def test_rays_rejects_bad_shapes():
    with pytest.raises(ValueError, match="distances"):
        cs.plot.rays([[0, 0]], 4, np.ones((1, 5)), 1.0)
    with pytest.raises(ValueError, match="K >= 3"):
        cs.plot.rays([[0, 0]], np.ones((2, 2)), None, 1.0)
    with pytest.raises(ValueError, match="look_ahead"):
        cs.plot.rays([[0, 0]], 4, None, -1.0)


def test_rays_match_slot_raycast_hits():
    w = _square_world()
    pos = np.array([[0.0, 0.0], [3.0, -3.0]], dtype=np.float32)
    slots = cs.SlotSet(16)
    dist = cs.slot_raycast(w, pos, slots, 6.0)
    lines = cs.plot.rays(pos, slots, dist, 6.0)
    segs = np.array(lines.get_segments())
    lengths = np.hypot(*(segs[:, 1] - segs[:, 0]).T).reshape(2, 16)
    np.testing.assert_allclose(lengths, np.minimum(dist, 6.0), rtol=1e-6)


# ------------------------------------------------------------------- map glyphs ---


def test_map_glyphs_star_vertices_and_chosen():
    g = cs.plot.map_glyphs(
        [[0, 0], [5, 5]],
        4,
        [[1, 0, 0, 0], [0, 0, 2, 0]],
        danger=[[0, 1, 0, 0], [0, 0, 0, 0]],
        chosen=[[1, 0], [-1, 0]],
        scale=2.0,
        base=0.5,
    )
    v0 = g.interest.get_paths()[0].vertices[:4]
    np.testing.assert_allclose(v0, [[2.5, 0], [0, 0.5], [-0.5, 0], [0, -0.5]], atol=1e-12)
    d0 = g.danger.get_paths()[0].vertices[:4]
    np.testing.assert_allclose(d0[1], [0, 2.5], atol=1e-12)
    tips = np.array(g.chosen.get_segments())[:, 1]
    np.testing.assert_allclose(tips, [[2.5, 0], [2.5, 5]])


# ------------------------------------------------------------------------ scene ---


def small_sim(rotate=False):
    """A real simulation of 3 agents (agent 1 removed) in the square world, after one step:
    a FollowPath (look-ahead 1) and a WallDanger (look-ahead 3, the rays' reach)."""
    agents = cs.Agents(5, slots=8)
    agents.add(
        [[0, 0], [2, 2], [-3, 0]], heading=[0.0, np.pi / 2, np.pi], radius=0.4, max_speed=1.0
    )
    agents.remove([1])
    track = cs.Path([[-4, -4], [4, -4], [4, 4], [-4, 4]], closed=True)
    steering = cs.Steering(
        [cs.FollowPath(track, look_ahead=1.0), cs.WallDanger(look_ahead=3.0, falloff="linear")],
        rotate=rotate,
    )
    sim = cs.Simulation(_square_world(), agents, steering, motion=cs.Lerp(steer_force=0.5))
    sim.step(0.05)
    return sim


def test_scene_from_sim_draws_every_part():
    sim = small_sim()
    art = cs.plot.scene(sim)
    assert len(art.world.walls.get_segments()) == 4
    assert len(art.paths) == 1 and len(art.paths[0].get_xydata()) == 5
    assert len(art.agents.bodies.get_paths()) == 2  # dead agent 1 skipped
    segs = np.array(art.rays.get_segments())
    assert segs.shape == (16, 2, 2)
    # rays reach the WallDanger's look-ahead (3), not the path's (1), or stop where that
    # WallDanger's rays stopped (sim.sensed): nothing is cast again; the colours are the
    # danger the agents hold (agent 2 sees the wall at -x)
    lengths = np.hypot(*(segs[:, 1] - segs[:, 0]).T)
    np.testing.assert_allclose(lengths, np.minimum(sim.sensed[[0, 2]], 3.0).ravel(), rtol=1e-6)
    assert (lengths < 3.0).any() and (lengths == 3.0).any()
    np.testing.assert_allclose(art.rays.get_array(), sim.danger[[0, 2]].ravel())
    assert sim.danger[2, 4] > 0
    assert art.maps is None and art.trajectories is None
    x0, x1 = art.ax.get_xlim()
    assert x0 < -5 < 5 < x1


def test_scene_rays_stop_at_given_distances():
    sim = small_sim()
    hits = cs.slot_raycast(sim.world, sim.agents.position, cs.SlotSet(8), 3.0)
    art = cs.plot.scene(sim, distances=hits)
    segs = np.array(art.rays.get_segments())
    lengths = np.hypot(*(segs[:, 1] - segs[:, 0]).T).reshape(2, 8)
    np.testing.assert_allclose(lengths, np.minimum(hits[[0, 2]], 3.0), rtol=1e-6)
    assert lengths[1, 4] < 3.0  # agent 2, -x: the wall


def test_scene_rotates_slots_with_heading_when_sim_does():
    sim = small_sim(rotate=True)
    art = cs.plot.scene(sim)
    segs = np.array(art.rays.get_segments())
    # agent 2's slot 0 points along its heading when it perceived (not along +x)
    d = segs[8, 1] - segs[8, 0]
    seen = float(sim.perceived_heading[2])
    assert np.cos(seen) < 0.9  # turned away from +x
    np.testing.assert_allclose(np.arctan2(d[1], d[0]) % (2 * np.pi), seen % (2 * np.pi), atol=1e-5)
    fixed = np.array(cs.plot.scene(small_sim(rotate=False)).rays.get_segments())
    np.testing.assert_allclose(fixed[8, 1] - fixed[8, 0], [3.0, 0.0], atol=1e-6)


def test_scene_maps_and_trajectories():
    sim = small_sim()
    hist = np.zeros((4, 5, 2))
    art = cs.plot.scene(sim, maps=[2], rays=False, trajectories=hist)
    assert art.rays is None
    assert len(art.maps.interest.get_paths()) == 1
    centre = sim.perceived_position[2]  # where the maps were perceived
    tip = np.array(art.maps.chosen.get_segments())[0, 1]
    np.testing.assert_allclose(tip, centre + sim.chosen_direction[2] * (0.4 + 1.2), rtol=1e-6)
    assert len(art.trajectories.get_segments()) == 5
    all_maps = cs.plot.scene(sim, maps=True, rays=False)
    assert len(all_maps.maps.interest.get_paths()) == 2


def test_scene_without_sim_uses_keywords():
    w = _square_world()
    fig, ax = plt.subplots()
    art = cs.plot.scene(
        world=w, path=[[-1, 0], [1, 0]], agents=[[0, 0], [1, 1]], slots=6, look_ahead=2.0, ax=ax
    )
    assert art.ax is ax
    assert len(art.paths) == 1 and len(art.paths[0].get_xydata()) == 2
    assert len(art.rays.get_segments()) == 12
    # nothing to draw rays with: no rays, no error
    assert cs.plot.scene(agents=[[0, 0]]).rays is None


def test_plots_take_a_real_simulation_only():
    class LooksLikeASimulation:
        world, agents, steering = None, cs.Agents(1), []
        interest = danger = np.zeros((1, 8), np.float32)

    with pytest.raises(TypeError, match="contextsteer.Simulation"):
        cs.plot.scene(LooksLikeASimulation())
    with pytest.raises(TypeError, match="Simulation"):
        cs.plot.animate(small_sim())  # record first: plots never step
    with pytest.raises(TypeError, match="History, a metrics dict, a RunResult or a Simulation"):
        cs.plot.metrics(LooksLikeASimulation())


# ----------------------------------------------------------------- context maps ---


def test_context_maps_grid_from_arrays():
    interest = cs.dot_map(cs.SlotSet(8), [[1, 0], [0, 1], [-1, 0], [0, -1], [1, 1]])
    danger = np.zeros_like(interest)
    danger[1, 2] = 1
    grid = cs.plot.context_maps(interest, danger, agents=[1, 3, 4], ncols=2)
    assert grid.agents == [1, 3, 4] and len(grid.axes) == 3 and len(grid.maps) == 3
    assert len(grid.figure.axes) == 4 and not grid.figure.axes[3].get_visible()
    heights = [p.get_height() for p in grid.maps[0].interest.patches]
    np.testing.assert_allclose(heights, interest[1], rtol=1e-6)
    np.testing.assert_allclose(grid.maps[0].masked.get_xdata(), [np.pi / 2])
    assert grid.axes[1].get_title() == "agent 3"


def test_context_maps_from_sim_uses_alive_agents_and_chosen():
    sim = small_sim()
    grid = cs.plot.context_maps(sim)
    assert grid.agents == [0, 2]
    angle, length = grid.maps[0].chosen.xy
    c = sim.chosen_direction[0]
    assert angle == pytest.approx(np.arctan2(c[1], c[0]), abs=1e-6)
    assert length == pytest.approx(float(sim.strength[0]), rel=1e-6)


def test_context_maps_draw_each_slot_along_the_simulations_own_slot_directions():
    """A crowd scenario's irregular slots (denser ahead, turning with the heading) and an
    offset ring: each bar along its slot's direction turned by the heading (they were
    drawn at 2πk/K, up to 52° off); curves go round in angle order."""
    sim = cs.scenarios.get("circle")()
    sim.step(1 / 30, steps=5)
    dirs = sim.slot_set.directions.astype(np.float64)
    grid = cs.plot.context_maps(sim, agents=[0, 3])
    for i, art in zip(grid.agents, grid.maps):
        expected = sim.agents.heading[i] + np.arctan2(dirs[:, 1], dirs[:, 0])
        drawn = np.array([p.get_x() + p.get_width() / 2 for p in art.interest.patches])
        np.testing.assert_allclose(np.cos(drawn), np.cos(expected), atol=1e-6)
        np.testing.assert_allclose(np.sin(drawn), np.sin(expected), atol=1e-6)
        widths = np.array([p.get_width() for p in art.interest.patches])
        assert widths.sum() == pytest.approx(0.8 * 2 * np.pi)  # the ring shared, no overlap
        t, _ = art.danger.get_data()
        assert np.all(np.diff(np.unwrap(t)) > 0)
    agents = cs.Agents(1, slots=8)
    agents.add([0, 0], max_speed=1, target=[5, 0])
    ring = cs.SlotSet(8, offset=0.3)
    sim = cs.Simulation(None, agents, [cs.Seek()], slots=ring)
    sim.step(0.1)
    bars = cs.plot.context_maps(sim).maps[0].interest.patches
    centres = np.array([p.get_x() + p.get_width() / 2 for p in bars])
    turn = np.angle(np.exp(1j * (centres - 0.3 - 2 * np.pi * np.arange(8) / 8)))
    np.testing.assert_allclose(turn, 0, atol=1e-6)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"offset": np.nan}, "offset: must be finite"),
        ({"strength": np.inf, "chosen": (1, 0)}, "strength: must be finite"),
        ({"strength": -1.0, "chosen": (1, 0)}, "strength: must be >= 0"),
        ({"threshold": np.nan}, "threshold: must be a number"),
        ({"slot_directions": np.tile([[1.0, 0.0]], (5, 1))}, "expected 4 directions"),
        ({"slot_directions": np.full((4, 2), np.nan)}, "slot_directions: must be finite"),
    ],
)
def test_context_map_rejects_non_finite_options(kw, match):
    with pytest.raises(ValueError, match=match):
        cs.plot.context_map(np.ones(4), np.zeros(4), **kw)


def test_context_maps_rejects_bad_agents():
    with pytest.raises(IndexError):
        cs.plot.context_maps(np.ones((2, 4)), agents=[2])
    with pytest.raises(ValueError, match="at least one"):
        cs.plot.context_maps(np.ones((2, 4)), agents=[])


# ----------------------------------------------------------------- trajectories ---


def test_trajectories_one_line_per_agent():
    t = np.linspace(0, 1, 6)
    hist = np.stack([np.c_[t, t], np.c_[t, -t], np.c_[-t, t]], axis=1)
    lines = cs.plot.trajectories(hist, agents=[0, 2])
    segs = lines.get_segments()
    assert len(segs) == 2
    np.testing.assert_allclose(segs[1], hist[:, 2])

    rec = cs.Recording(np.arange(6), hist, None, None, None)
    assert len(cs.plot.trajectories(rec).get_segments()) == 3
    with pytest.raises(ValueError, match=r"\(T, N, 2\)"):
        cs.plot.trajectories(np.zeros((3, 2)))


# ------------------------------------------------------------ record and animate ---


def test_deprecated_record_steps_through_the_application_layer():
    sim = small_sim()
    calls = []
    with pytest.warns(DeprecationWarning, match="run_simulation"):
        rec = cs.plot.record(sim, 10, dt=0.5, records=4, callback=calls.append)
    # Frame j at round(j * 10 / 4): 2.5, 5, 7.5, 10 rounded half up.
    assert rec.steps.tolist() == [0, 3, 5, 8, 10] and sum(calls) == 10
    assert rec.positions.shape == (5, 5, 2) and rec.danger.shape == (5, 5, 8)
    assert np.isnan(rec.positions[:, 1]).all()  # agent 1 is dead


def test_animate_replays_recorded_frames():
    sim = small_sim()
    rec = cs.run_simulation(sim, 6, dt=0.05, records=3, maps=True).history
    anim = cs.plot.animate(rec, sim)
    assert anim.history is rec and rec.positions.shape[0] == 4
    frames = list(anim.new_saved_frame_seq())
    assert frames == [0, 1, 2, 3]
    assert "frames[3]" in anim.to_jshtml()  # renders (an unrendered animation warns)
    drawn = anim._func(3)
    # trail + rays + bodies + heading ticks, rays for the 2 alive agents x 8 slots,
    # coloured by the danger recorded at that frame
    assert len(drawn) == 4 and len(drawn[1].get_segments()) == 16
    np.testing.assert_allclose(drawn[1].get_array(), rec.danger[3][[0, 2]].ravel())
    # without recorded maps there is nothing the agents saw to draw: no rays
    plain = cs.run_simulation(small_sim(), 6, dt=0.05, records=3).history
    anim = cs.plot.animate(plain, sim)
    anim._init_draw()
    assert len(anim._func(3)) == 3


def test_no_plot_function_steps_a_simulation(tmp_path):
    """Every plot function that reads a simulation leaves it exactly as it was."""
    sim = small_sim()
    history = sim.record(every=1, maps=True)
    sim.step(0.05, steps=4)
    rec = cs.run_simulation(sim, 4, dt=0.05, records=4, maps=True).history

    def state():
        return (
            sim.step_count,
            sim.time,
            len(history),
            sim.agents.position.tobytes(),
            sim.agents.heading.tobytes(),
            sim.interest.tobytes(),
            sim.danger.tobytes(),
            sim.chosen_direction.tobytes(),
            sim.sensed.tobytes(),
            json_metrics(),
        )

    def json_metrics():
        import json

        from contextsteer._json import jsonable

        return json.dumps(jsonable(sim.metrics()), sort_keys=True)

    before = state()
    cs.plot.scene(sim, maps=True, trajectories=history)
    cs.plot.scene(sim, rays=True, trajectories=rec)
    cs.plot.context_maps(sim)
    cs.plot.metrics(sim)
    cs.plot.metrics(history)
    cs.plot.trajectories(history)
    for anim in (cs.plot.animate(history), cs.plot.animate(rec, sim)):
        anim._init_draw()
        anim._func(2)
    out = cs.plot.frames(sim, history=rec, size=120, trail=True)
    list(out.images)
    cs.plot.frames(history=history, size=120)
    assert state() == before


def test_scene_and_context_maps_of_a_real_simulation():
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    world = cs.World()
    world.add_polyline(np.c_[100 * np.cos(t), 60 * np.sin(t)], closed=True)
    world.add_polyline(np.c_[80 * np.cos(t), 40 * np.sin(t)], closed=True)
    track = cs.Path(np.c_[90 * np.cos(t), 50 * np.sin(t)], closed=True)
    cars = cs.Agents(4, slots=12)
    cars.add(track.point_at([0.0, 20.0, 40.0]), radius=2.0, max_speed=25.0, heading=np.pi / 2)
    steering = cs.Steering(
        [cs.FollowPath(track, look_ahead=15), cs.WallDanger(look_ahead=12)], rotate=True
    )
    sim = cs.Simulation(world, cars, steering)
    sim.step(1 / 30, steps=10)
    art = cs.plot.scene(sim, maps=True)
    assert len(art.paths) == 1
    assert len(art.rays.get_segments()) == 3 * 12
    np.testing.assert_allclose(art.rays.get_array(), sim.danger[:3].ravel())
    assert len(art.maps.interest.get_paths()) == 3
    grid = cs.plot.context_maps(sim)
    assert grid.agents == [0, 1, 2]
    # slots turn with the car: the polar plot's slot 0 sits at the car's heading when it
    # perceived these maps (the step's move has turned it since)
    x0 = grid.maps[1].interest.patches[0]
    seen = float(sim.perceived_heading[1])
    assert seen != float(cars.heading[1])
    assert x0.get_x() + x0.get_width() / 2 == pytest.approx(seen, abs=1e-6)


def test_context_maps_marks_masked_slots_only_for_mask_resolve():
    world = cs.World()
    world.add_segments([[3, -5, 3, 5]])
    agents = cs.Agents(1, slots=8)
    agents.add([0, 0], radius=0.5)
    marks = {}
    for resolve in ("mask", "subtract"):
        steering = cs.Steering([cs.Forward(), cs.WallDanger(look_ahead=5)], resolve=resolve)
        sim = cs.Simulation(world, agents, steering)
        sim.perceive()
        marks[resolve] = len(cs.plot.context_maps(sim).maps[0].masked.get_xdata())
    assert marks["mask"] > 0 and marks["subtract"] == 0


# ------------------------------------------------------------- History and metrics ---


def _history_run():
    sim = cs.scenarios.get("racetrack")(agents=3, seed=1)
    history = sim.record(every=5)
    sim.step(1 / 30, steps=60)
    return sim, history


def test_trajectories_and_animate_take_a_history():
    import matplotlib.pyplot as plt

    sim, history = _history_run()
    lines = cs.plot.trajectories(history)
    assert len(lines.get_segments()) == 3
    np.testing.assert_allclose(lines.get_segments()[2], history.positions[:, 2])
    anim = cs.plot.animate(history)  # the History's simulation gives the world
    assert anim.history is history
    anim._init_draw()
    plt.close("all")


def test_metrics_plots_series_of_a_history_and_bars_of_a_summary():
    import matplotlib.pyplot as plt

    sim, history = _history_run()
    art = cs.plot.metrics(history)
    assert {"agent_collisions", "wall_collisions", "min_clearance", "mean_speed"} <= set(
        art.artists
    )
    assert len(art.axes) == len(art.artists)
    line = art.artists["mean_speed"]
    np.testing.assert_allclose(line.get_xdata(), history.times)
    np.testing.assert_allclose(line.get_ydata(), history.series["mean_speed"])
    bars = cs.plot.metrics(sim).artists["bars"]  # a simulation: its metrics() as bars
    m = sim.metrics()
    heights = [b.get_height() for b in bars]
    assert heights[:2] == [m["collisions"]["agent_agent"], m["collisions"]["agent_wall"]]
    assert len(bars) == 5  # + laps, overtakes, stuck (no goals)
    with pytest.raises(ValueError):
        cs.plot.metrics(history, series=["nope"])
    fig, axes = plt.subplots(2)
    art = cs.plot.metrics(history, axes, series=["laps", "mean_progress"])
    assert art.axes == list(axes)
    plt.close("all")


def test_metrics_refuses_an_empty_list_of_series():
    # series=[] made no axes and failed inside matplotlib (plt.subplots(0, 1)).
    sim, history = _history_run()
    with pytest.raises(ValueError, match=r"series must name at least one series .*got \[\]"):
        cs.plot.metrics(history, series=[])


def test_rays_not_cast_yet_are_not_drawn():
    """Before the first perception sensed is NaN (it was +inf, and the rays were drawn
    through the walls as clear); after a step each ray stops at its recorded hit."""
    sim = cs.scenarios.get("racetrack")(agents=6, seed=0)
    assert np.isnan(sim.sensed).all()
    seg = np.asarray(cs.plot.scene(sim).rays.get_segments())
    np.testing.assert_array_equal(seg[:, 0], seg[:, 1])  # every ray of length 0
    sim.step(1 / 30)
    seg = np.asarray(cs.plot.scene(sim).rays.get_segments())
    length = np.hypot(*(seg[:, 1] - seg[:, 0]).T).reshape(6, -1)
    sensed = np.asarray(sim.sensed, dtype=np.float64)
    assert not np.isnan(sensed).any() and np.isfinite(sensed).any()
    hit = np.isfinite(sensed)
    np.testing.assert_allclose(length[hit], sensed[hit], rtol=1e-5)
    assert np.all(length[~hit] > length[hit].max())  # clear: the whole look-ahead
    with pytest.raises(ValueError, match="distances: must be >= 0"):
        cs.plot.rays(np.zeros((1, 2)), 4, -np.ones((1, 4)), 1.0)


def test_glyphs_refuse_maps_that_are_not_finite():
    pos = np.zeros((2, 2))
    for interest, danger, name in [
        (np.array([[1.0, np.nan, 0, 0], [1, 1, 1, 1]]), None, "interest"),
        (np.ones((2, 4)), np.array([[0, np.inf, 0, 0], [0, 0, 0, 0]]), "danger"),
    ]:
        with pytest.raises(ValueError, match=f"{name}: must be finite"):
            cs.plot.map_glyphs(pos, 4, interest, danger)
    with pytest.raises(ValueError, match="danger: must be finite"):
        cs.plot.rays(pos, 4, None, 1.0, danger=np.full((2, 4), np.nan))


@pytest.mark.parametrize("rows", [[99], [-1], [1, 99]])
def test_scene_refuses_map_rows_of_agents_that_do_not_exist(rows):
    """They were dropped without a word (no glyph drawn)."""
    with pytest.raises(IndexError, match=r"maps: index -?\d+ out of range for 3 agents"):
        cs.plot.scene(agents=np.zeros((3, 2)), slots=8, interest=np.ones((3, 8)), maps=rows)


@pytest.mark.parametrize("rows", [[-1], [5]])
def test_trajectories_refuse_agents_that_do_not_exist(rows):
    """-1 drew the last agent in another agent's colour; 5 gave NumPy's bare IndexError."""
    with pytest.raises(IndexError, match=r"agents: index -?\d out of range for 3 agents"):
        cs.plot.trajectories(np.zeros((4, 3, 2)), agents=rows)


def test_metrics_takes_a_run_result_and_explains_a_recording():
    # cs.plot.metrics(run_scenario(...).history) raised "expected a History, a metrics
    # dict or a Simulation, got Recording" (fuzz round 11): the runner's user had no way
    # to the chart. A RunResult now gives its metrics' bars; a Recording says what to pass.
    res = cs.run_scenario("hallway", {"agents": 6}, steps=20, records=5)
    art = cs.plot.metrics(res)
    ref = cs.plot.metrics(res.metrics)
    assert [b.get_height() for b in art.artists["bars"]] == [
        b.get_height() for b in ref.artists["bars"]
    ]
    with pytest.raises(TypeError, match="Recording .* holds positions only"):
        cs.plot.metrics(res.history)
    plt.close("all")


def test_map_glyphs_do_not_tint_the_bodies_and_animations_hold_every_agent():
    """Two picture checks from a teaching session (fuzz round 13). The glyphs' translucent
    interest was drawn over the bodies and tinted their colours (the colour that matches
    a body to its trajectory); it lies under them now, its outlines above. And animate /
    frames took their limits from the world alone: agents beside a single wall were out
    of the picture."""
    import matplotlib.pyplot as plt

    w = cs.World()
    w.add_segments([[0, 0, 10, 0]])
    a = cs.Agents(2, slots=8)
    a.add([[2, 5], [6, 5]], target=[[9, 5], [0, 5]], max_speed=1)
    sim = cs.Simulation(w, a, [cs.Seek()], cs.Lerp())
    sim.step(0.1)
    art = cs.plot.scene(sim, maps=True)
    assert art.maps.interest.get_zorder() < art.agents.bodies.get_zorder()
    assert art.maps.danger.get_zorder() > art.agents.bodies.get_zorder()
    pos = np.zeros((3, 2, 2))
    pos[..., 1] = 5.0
    pos[:, 1, 0] = 3.0
    anim = cs.plot.animate(pos, world=w)
    anim.to_jshtml()  # rendered: an unrendered animation warns
    for ax in (anim._fig.axes[0], cs.plot.frames(history=pos, world=w).figure.axes[0]):
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        assert x0 < -0.5 and x1 > 10 and y0 < 0 and y1 > 5.5  # the wall and both bodies
    plt.close("all")


def test_trajectories_of_a_simulation_name_what_to_pass_and_a_used_generator_says_so(tmp_path):
    # A Simulation gave NumPy's "float() argument must be ... not 'Simulation'", and a
    # second write of Frames.images "write: no frames" (fuzz round 17).
    sim = cs.scenarios.get("oncoming")()
    with pytest.raises(TypeError, match="expected recorded frames .* got a Simulation"):
        cs.plot.trajectories(sim)
    from contextsteer import video

    with pytest.raises(ValueError, match="a generator such as Frames.images is used up"):
        video.write(iter(()), tmp_path / "x.gif")
    with pytest.raises(ValueError, match=r"no frames \(an empty sequence\)"):
        video.write([], tmp_path / "x.gif")


def test_failed_plot_calls_leave_no_figure_open_and_check_what_they_draw():
    """Each public plot function made its figure before checking its input, and a failed
    call left it open in pyplot; a negative glyph scale drew stars pointing away from the
    interest; nav_field("x") raised AttributeError; path(closed="no") drew it closed
    (fuzz round 20)."""
    import matplotlib.pyplot as plt

    plt.close("all")
    bad = [
        lambda: cs.plot.world(np.zeros((3, 3))),
        lambda: cs.plot.path([[0, 0]]),
        lambda: cs.plot.agents([[np.nan, 0]]),
        lambda: cs.plot.map_glyphs([[0, 0]], 8, np.ones((1, 8)), scale=-2.0),
        lambda: cs.plot.map_glyphs([[0, 0]], 8, np.ones((1, 8)), base=-1.0),
        lambda: cs.plot.scene("not a simulation"),
        lambda: cs.plot.context_map(np.ones(8), chosen=[1, 2, 3]),
        lambda: cs.plot.trajectories(np.zeros((3, 2))),
        lambda: cs.plot.nav_field("x"),
        lambda: cs.plot.path([[0, 0], [1, 0], [1, 1]], closed="no"),
        lambda: cs.plot.animate(np.zeros((2, 1, 2)), world=np.zeros((2, 3))),
    ]
    for call in bad:
        with pytest.raises((ValueError, TypeError)):
            call()
        assert plt.get_fignums() == [], call
    w = cs.World()
    w.add_segments([[0, -2, 0, 2]])
    field = cs.NavField(w, [2.0, 0.0], cell=0.1)
    for arrows in (-3, float("nan"), "24", True):
        with pytest.raises(ValueError, match="arrows must be a whole number"):
            cs.plot.nav_field(field, arrows=arrows)
    assert plt.get_fignums() == []


def test_animate_leaves_the_callers_figure_and_a_subfigure_alone():
    """animate(ax=...) closed the caller's whole figure in pyplot (their other subplots
    were not shown), and raised on the axes of a SubFigure (fuzz round 20)."""
    import matplotlib.pyplot as plt

    plt.close("all")
    pos = np.zeros((3, 1, 2))
    fig, (a, b) = plt.subplots(1, 2)
    anim = cs.plot.animate(pos, ax=a, rays=False)
    assert plt.fignum_exists(fig.number)
    sub = plt.figure().subfigures(1, 2)[0]
    anim2 = cs.plot.animate(pos, ax=sub.add_subplot(), rays=False)
    anim3 = cs.plot.animate(pos, rays=False)  # its own figure: closed, as before
    assert len(plt.get_fignums()) == 2
    for x in (anim, anim2, anim3):
        x.to_jshtml()
    plt.close("all")


def test_frames_of_a_world_of_one_vertical_wall_show_the_whole_wall():
    # Only a zero width was caught: the world's bounds were dropped and the picture was
    # 1 m tall round a 10 m wall (fuzz round 20).
    w = cs.World()
    w.add_segments([[0, 0, 0, 10]])
    fr = cs.plot.frames(history=np.full((2, 1, 2), [0.0, 5.0]), world=w, rays=False)
    ax = fr.figure.axes[0]
    lo, hi = ax.get_ylim()
    assert lo <= 0 and hi >= 10, (lo, hi)


def test_switches_take_a_bool_and_routes_a_list():
    """``rays="no"`` and ``rays=2.5`` drew every ray (README: a switch is a bool or 0/1,
    anything else a TypeError); ``routes(None)`` failed inside on ``len`` (fuzz round 24)."""
    sim = cs.scenarios.get("racetrack").builder(agents=2)
    sim.step(1 / 30)
    history = sim.record()
    sim.step(1 / 30, steps=2)
    for bad in ("no", None, 2.5):
        with pytest.raises(TypeError, match="scene: rays must be a bool"):
            cs.plot.scene(sim, rays=bad)
        with pytest.raises(TypeError, match="animate: rays must be a bool"):
            cs.plot.animate(history, rays=bad)
        with pytest.raises(TypeError, match="frames: rays must be a bool"):
            cs.plot.frames(history=history, size=64, rays=bad)
    with pytest.raises(TypeError, match="animate: trail must be a bool"):
        cs.plot.animate(history, trail="yes")
    with pytest.raises(TypeError, match="scene: rotate must be a bool"):
        cs.plot.scene(sim, rotate="yes")
    for bad in ("no", 2.5, np.float64(0.0)):  # (read with bool(): fuzz round 25)
        with pytest.raises(TypeError, match="animate: rotate must be a bool"):
            cs.plot.animate(history, rotate=bad)
        with pytest.raises(TypeError, match="frames: rotate must be a bool"):
            cs.plot.frames(history=history, size=64, rotate=bad)
    assert cs.plot.scene(sim, rays=0).rays is None  # 0 and 1 are switches too
    with pytest.raises(TypeError, match="routes: expected a list of paths"):
        cs.plot.routes(None)
    plt.close("all")


def test_metrics_refuses_a_summary_with_nothing_to_draw():
    # A dict with none of a summary's counts drew an empty figure without a word; metrics
    # turned off made the same empty figure; a count that is not a number failed inside
    # float().
    import matplotlib.pyplot as plt

    with pytest.raises(ValueError, match=r"none of the counts .*collisions\.agent_agent"):
        cs.plot.metrics({"a": "b"})
    with pytest.raises(ValueError, match=r"none of the counts"):
        cs.plot.metrics({})
    for bad, error in (
        ("x", TypeError),
        ("3", TypeError),
        (True, TypeError),
        (np.nan, ValueError),
        (-5, ValueError),
        (np.inf, ValueError),
        (2**1100, ValueError),  # a raw OverflowError (fuzz round 26)
        (1e308, ValueError),  # drawn as a bar to infinity
        (2**53 + 1, ValueError),
    ):
        with pytest.raises(error, match=r"collisions\.agent_agent of a metrics summary must be a"):
            cs.plot.metrics({"collisions": {"agent_agent": bad}})
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [3, 0]], velocity=[[1, 0], [-1, 0]], max_speed=1)
    sim = cs.Simulation(None, agents, [cs.Forward()], push_apart=False)
    sim.configure_metrics(enabled=False)
    sim.step(dt=0.1, steps=3)
    with pytest.raises(ValueError, match=r"run metrics were off"):
        cs.plot.metrics(sim)
    # One count is enough to draw.
    bars = cs.plot.metrics({"overtakes": 3}).artists["bars"]
    assert [b.get_height() for b in bars] == [3.0]
    plt.close("all")
