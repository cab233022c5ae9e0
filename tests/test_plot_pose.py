"""Pictures of a stepped simulation draw its maps at the pose they were perceived from.

A step perceives, decides and then moves: the maps, the sensed rays and the chosen
direction belong to the pose before the move, and with turning slots to the heading
before it (an agent can turn by a slot or more in one step). The plots drew them at the
pose after the move: rays through walls, a chosen arrow off its own argmax bar."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import contextsteer as cs  # noqa: E402


def _turning_sim(choose="argmax"):
    """Two Seek agents with turning slots whose targets are far off their headings: they
    turn fast (tens of degrees a step)."""
    world = cs.World()
    world.add_segments([[5.0, -20.0, 5.0, 20.0]])
    agents = cs.Agents(2, slots=8)
    agents.add(
        [[0.0, 0.0], [1.0, 3.0]],
        heading=[0.0, 1.0],
        velocity=[[3.0, 0.0], [0.0, 2.0]],
        max_speed=3.0,
        target=[[0.0, 10.0], [-4.0, 0.0]],
    )
    steering = cs.Steering(
        [cs.Seek(), cs.WallDanger(look_ahead=4.0)], resolve="mask", rotate=True, choose=choose
    )
    return cs.Simulation(world, agents, steering, motion=cs.Lerp(steer_force=0.2))


def test_perceived_pose_is_the_pose_before_the_move():
    sim = _turning_sim()
    assert np.isnan(sim.perceived_position).all() and np.isnan(sim.perceived_heading).all()
    for _ in range(3):
        before_p = np.array(sim.agents.position)
        before_h = np.array(sim.agents.heading)
        sim.step(1 / 30)
        np.testing.assert_array_equal(sim.perceived_position, before_p)
        np.testing.assert_array_equal(sim.perceived_heading, before_h)
        # The agents did move and turn, so the pictures would differ.
        assert np.abs(np.array(sim.agents.heading) - before_h).max() > 0.2
    with pytest.raises(ValueError):
        sim.perceived_position[0, 0] = 1.0  # read-only


def test_a_new_agent_in_a_reused_slot_has_its_own_perceived_pose():
    """Round-robin decisions: the new agent in slot 1 perceives at its first step (it has
    no decision to move on), from its own pose, never the old occupant's."""
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [0, 2]], velocity=[1, 0], max_speed=1.0)
    sim = cs.Simulation(None, agents, [cs.Forward()], decision_interval=2)
    sim.step(0.1, steps=3)
    agents.remove([1])
    agents.add([[5.0, 5.0]], velocity=[1, 0], max_speed=1.0)
    sim.step(0.1)
    np.testing.assert_array_equal(sim.perceived_position[1], [5.0, 5.0])


def test_time_slicing_keeps_the_pose_of_the_last_decision():
    world = cs.World()
    agents = cs.Agents(4, slots=8)
    agents.add([[0, 0], [0, 2], [0, 4], [0, 6]], velocity=[1, 0], max_speed=1.0)
    sim = cs.Simulation(world, agents, [cs.Forward()], decision_interval=4)
    poses = []
    for _ in range(4):
        poses.append(np.array(sim.agents.position))
        sim.step(0.1)
    # Agent i decided at step i of the round (round-robin): its pose then.
    got = np.array(sim.perceived_position)
    assert not np.array_equal(got, np.array(sim.agents.position))
    decided = [
        int(np.flatnonzero([np.array_equal(got[i], p[i]) for p in poses])[0]) for i in range(4)
    ]
    assert sorted(decided) == [0, 1, 2, 3]


def test_scene_rays_start_where_the_agent_perceived_them():
    sim = _turning_sim()
    sim.step(1 / 30, steps=2)
    art = cs.plot.scene(sim)
    seg = np.array(art.rays.get_segments())  # (2 agents x 8 slots, 2, 2)
    start = seg[:, 0, :].reshape(2, 8, 2)
    np.testing.assert_allclose(start, np.repeat(sim.perceived_position[:, None], 8, 1), atol=1e-6)
    # Each ray along its slot turned by the perceived heading, as far as it sensed.
    slots = cs.SlotSet(8).directions.astype(np.float64)
    h = np.asarray(sim.perceived_heading, dtype=np.float64)
    c, s = np.cos(h)[:, None], np.sin(h)[:, None]
    u = np.stack([c * slots[:, 0] - s * slots[:, 1], s * slots[:, 0] + c * slots[:, 1]], -1)
    reach = np.minimum(np.nan_to_num(np.asarray(sim.sensed, np.float64), posinf=4.0), 4.0)
    np.testing.assert_allclose(
        seg[:, 1, :].reshape(2, 8, 2), start + u * reach[..., None], atol=1e-5
    )
    # The pose after the move differs (the test would not see the fault otherwise).
    assert np.abs(np.array(sim.agents.heading) - h).max() > 0.2
    # The simulation's own agents passed explicitly: the same picture.
    again = np.array(cs.plot.scene(sim, agents=sim.agents).rays.get_segments())
    np.testing.assert_array_equal(again, seg)
    plt.close("all")


def test_context_maps_chosen_arrow_on_its_argmax_bar():
    sim = _turning_sim("argmax")
    sim.step(1 / 30, steps=2)
    grid = cs.plot.context_maps(sim, agents=[0])
    art = grid.maps[0]
    bars = art.interest.patches
    slot = int(sim.chosen_slot[0])
    bar_angle = bars[slot].get_x() + bars[slot].get_width() / 2
    chosen = np.asarray(sim.chosen_direction[0], np.float64)
    arrow = np.arctan2(chosen[1], chosen[0])
    assert abs(np.angle(np.exp(1j * (bar_angle - arrow)))) < 1e-5
    plt.close("all")


def test_history_and_animation_use_the_perceived_pose():
    sim = _turning_sim()
    history = cs.History(sim, maps=True)
    poses = []
    for _ in range(4):
        sim.step(1 / 30)
        poses.append((np.array(sim.perceived_position), np.array(sim.perceived_heading)))
    np.testing.assert_array_equal(history.perceived_positions[1:], [p for p, _ in poses])
    np.testing.assert_array_equal(history.perceived_headings[1:], [h for _, h in poses])
    assert np.isnan(history.perceived_positions[0]).all()  # frame 0: nothing perceived yet
    anim = cs.plot.animate(history)
    anim._init_draw()
    dynamic = anim._func(4)
    rays = [a for a in dynamic if hasattr(a, "get_segments") and len(a.get_segments()) == 16]
    starts = np.array(rays[0].get_segments())[:, 0, :].reshape(2, 8, 2)
    np.testing.assert_allclose(starts[:, 0], history.perceived_positions[4], atol=1e-6)
    assert cs.History(sim).perceived_positions is None  # without maps
    plt.close("all")


def test_run_recording_keeps_the_perceived_pose_and_generations():
    sim = _turning_sim()
    rec = cs.run_simulation(sim, steps=6, dt=1 / 30, records=3, maps=True).history
    assert rec.perceived_positions.shape == (4, 2, 2)
    np.testing.assert_array_equal(rec.perceived_positions[-1], sim.perceived_position)
    np.testing.assert_array_equal(rec.perceived_headings[-1], sim.perceived_heading)
    np.testing.assert_array_equal(rec.generations[-1], sim.agents.generation)
    taken = rec._take(np.array([0, 3]))
    assert taken.positions.shape == (2, 2, 2) and taken.radii.shape == (2, 2)
    np.testing.assert_array_equal(taken.perceived_headings[1], rec.perceived_headings[3])


def test_save_and_load_keep_the_perceived_pose(tmp_path):
    sim = _turning_sim()
    sim.step(1 / 30, steps=3)
    path = tmp_path / "sim.cssim"
    sim.save(path)
    other = cs.load(path)
    np.testing.assert_array_equal(other.perceived_position, sim.perceived_position)
    np.testing.assert_array_equal(other.perceived_heading, sim.perceived_heading)


def _reused_history():
    agents = cs.Agents(2, slots=8)
    agents.add([[0, 0], [0, 5]], velocity=[1, 0], max_speed=1.0)
    sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    history = cs.History(sim)
    sim.step(0.5, steps=4)
    agents.remove([1])
    agents.add([[20.0, -20.0]], velocity=[1, 0], max_speed=1.0)
    sim.step(0.5, steps=4)
    return history


def _steps_drawn(collection, line):
    """Lengths of the drawn steps of a LineCollection's line (NaN where a gap breaks it:
    matplotlib draws no segment to or from a NaN vertex)."""
    v = np.asarray(collection.get_paths()[line].vertices)
    return np.linalg.norm(np.diff(v, axis=0), axis=1)


def test_trails_do_not_join_two_agents_of_one_slot():
    history = _reused_history()
    assert len(np.unique(history.generations[:, 1])) == 2
    coll = cs.plot.trajectories(history)
    step = _steps_drawn(coll, 1)
    # No drawn step joins the old agent (x <= 2, y = 5) to the new one (x >= 20, y = -20).
    assert np.isnan(step).any() and np.nanmax(step) < 1.0
    anim = cs.plot.animate(history, rays=False)
    anim._init_draw()
    trail = anim._func(len(history) - 1)[0]
    step = _steps_drawn(trail, 1)
    assert np.isnan(step).any() and np.nanmax(step) < 1.0
    # A recording of run_simulation carries the generations too.
    plt.close("all")


def test_a_boolean_mask_selects_agents_and_a_float_is_refused():
    """A mask used as indices drew agents 0 and 1 for every False and True."""
    sim = _turning_sim()
    sim.step(1 / 30)
    mask = np.array([False, True])
    grid = cs.plot.context_maps(sim, agents=mask)
    assert grid.agents == [1]
    art = cs.plot.scene(sim, maps=mask)
    one = cs.plot.scene(sim, maps=[1])
    np.testing.assert_array_equal(
        [p.vertices for p in art.maps.interest.get_paths()],
        [p.vertices for p in one.maps.interest.get_paths()],
    )
    coll = cs.plot.trajectories(np.zeros((3, 4, 2)), agents=np.array([0, 0, 1, 1], bool))
    assert len(coll.get_segments()) == 2
    with pytest.raises(TypeError, match="agents"):
        cs.plot.context_maps(sim, agents=[0.7])
    with pytest.raises(IndexError, match="mask"):
        cs.plot.context_maps(sim, agents=np.array([True]))
    plt.close("all")


def test_scene_limits_take_in_the_agents():
    w = cs.World()
    w.add_polyline([[45, 0], [75, 0], [75, 60], [45, 60]], closed=True)
    a = cs.Agents(1, slots=8)
    a.add([[0, 0]], radius=0.5)
    art = cs.plot.scene(world=w, agents=a)
    x0, x1 = art.ax.get_xlim()
    y0, y1 = art.ax.get_ylim()
    assert x0 < -0.5 and x1 > 75 and y0 < -0.5 and y1 > 60
    plt.close("all")


def test_nav_field_pixels_sit_on_their_nodes():
    w = cs.World()
    w.add_segments([[0, -2, 0, 2]])
    field = cs.NavField(w, [2.0, 0.0], cell=0.5)
    art = cs.plot.nav_field(field)
    x_lo, x_hi, y_lo, y_hi = field.extent
    c = field.grid[2]
    np.testing.assert_allclose(
        art.image.get_extent(), [x_lo - c / 2, x_hi + c / 2, y_lo - c / 2, y_hi + c / 2]
    )
    plt.close("all")


def test_plot_misuse_gets_clear_errors():
    interest = cs.dot_map(cs.SlotSet(8), [[1, 0], [0, 1], [-1, 0]])
    with pytest.raises(ValueError, match="titles"):
        cs.plot.context_maps(interest, agents=[0, 1], titles=["only one"])
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="polar"):
        cs.plot.context_map(interest[0], ax=ax)
    plt.close("all")
