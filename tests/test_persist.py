"""Pickling, deepcopy and Simulation.save / cs.load: every object survives a round trip,
and a restored simulation continues bit-identically (issue 13)."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import threading
import zipfile
from unittest import mock

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import classic, scenarios

STATE = ("position", "velocity", "heading")


def same_run(a, b):
    for name in STATE:
        np.testing.assert_array_equal(getattr(a.agents, name), getattr(b.agents, name))
    np.testing.assert_array_equal(a.interest, b.interest)
    np.testing.assert_array_equal(a.danger, b.danger)
    assert a.step_count == b.step_count and a.time == b.time
    assert a.metrics() == b.metrics()


@pytest.mark.parametrize("name", sorted(scenarios.available()))
def test_save_half_way_and_continue_equals_one_straight_run(name, tmp_path):
    case = scenarios.get(name)
    straight = case(seed=3)
    straight.step(case.dt, 1000)
    first = case(seed=3)
    first.step(case.dt, 500)
    first.save(tmp_path / "half.cssim")
    back = cs.load(tmp_path / "half.cssim")
    back.step(case.dt, 500)
    same_run(straight, back)


def test_a_path_given_as_bytes_saves_and_loads(tmp_path):
    # load let bytes through its type check, and zipfile then took them for a file object
    # ("'bytes' object has no attribute 'seek'"); save concatenated str and bytes.
    sim = scenarios.get("oncoming")(seed=1)
    sim.step(1 / 30, 10)
    path = os.fsencode(tmp_path / "b.cssim")
    sim.save(path)
    back = cs.load(path)
    sim.step(1 / 30, 10)
    back.step(1 / 30, 10)
    same_run(sim, back)
    with pytest.raises(TypeError, match=r"save: path must be a file path \(str, bytes"):
        sim.save(5)


def test_pickle_and_deepcopy_continue_bit_identically_with_memory_in_the_pipeline():
    # Temporal blend and hysteresis keep memory in the maps and the last decisions.
    a = cs.Agents(30, slots=16, seed=4)
    rng = np.random.default_rng(4)
    a.add(
        rng.uniform(-5, 5, (30, 2)), radius=0.3, max_speed=1.3, target=rng.uniform(-5, 5, (30, 2))
    )
    st = cs.Steering(
        [cs.Seek(shape="half_cosine"), cs.CollisionDanger(), cs.Wander(weight=0.2)],
        resolve="mask_min_danger",
        choose="argmax",
        blend=0.5,
        hysteresis=0.2,
    )
    sim = cs.Simulation(None, a, st, motion=cs.Accel(), stuck_distance=0.1, stuck_time=1.0)
    sim.configure_metrics(goal_radius=0.5)
    sim.step(1 / 30, 40)
    twins = [pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim)]
    for s in (sim, *twins):
        s.step(1 / 30, 60)
    for t in twins:
        same_run(sim, t)
        np.testing.assert_array_equal(sim.speed, t.speed)
        assert t.agents is not sim.agents


def test_push_passes_survive_a_round_trip_and_older_pickles_keep_one_pass():
    # A packed block whose overlaps the later push-apart passes resolve: a simulation
    # with one pass and one with three differ, and each continues as itself when restored.
    def packed(passes):
        g = np.stack(np.meshgrid(np.arange(8), np.arange(8)), -1).reshape(-1, 2) * 0.5
        a = cs.Agents(len(g), slots=8)
        a.add(g, radius=0.3, max_speed=1.0, target=[10, 10])
        return cs.Simulation(None, a, [cs.Seek()], motion=cs.Accel(), push_passes=passes)

    runs = {}
    for passes in (1, 3):
        sim = packed(passes)
        sim.step(0.05, 5)
        back = pickle.loads(pickle.dumps(sim))
        assert back._init["push_passes"] == passes
        sim.step(0.05, 5)
        back.step(0.05, 5)
        same_run(sim, back)
        runs[passes] = np.array(sim.agents.position)
    assert not np.array_equal(runs[1], runs[3])
    # A pickle from before push_passes (its parameters without the key) restores to one
    # pass, the push-apart it was made with.
    sim = packed(1)
    reduce, args = sim.__reduce__()
    init = {k: v for k, v in args[4].items() if k != "push_passes"}
    old = reduce(*args[:4], init, *args[5:])
    assert old._init["push_passes"] == 1


def test_classic_random_walk_wander_continues_after_a_round_trip():
    a = cs.Agents(5, seed=2)
    a.add(np.random.default_rng(2).uniform(-3, 3, (5, 2)), max_speed=1.0, max_accel=2.0)
    sim = cs.Simulation(None, a, classic.Wander(rate=2.0, walk="random", seed=1), motion=cs.Accel())
    sim.step(0.1, 20)
    back = pickle.loads(pickle.dumps(sim))
    sim.step(0.1, 20)
    back.step(0.1, 20)
    same_run(sim, back)


@pytest.mark.parametrize(
    "make",
    [
        lambda: cs.SlotSet(12, offset=0.3),
        lambda: cs.SlotSet.from_directions(
            np.c_[np.cos([0, 1.0, 2.5, 4.0]), np.sin([0, 1.0, 2.5, 4.0])]
        ),
        lambda: cs.Path([[0, 0], [3, 1], [5, 5]], closed=True, smooth=True),
        lambda: cs.Steering([cs.Seek(), cs.WallDanger(look_ahead=2)], resolve="subtract"),
        lambda: cs.CollisionDanger(horizon=3.0, side="left"),
    ],
)
def test_small_objects_round_trip(make):
    obj = make()
    for back in (pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj)):
        assert type(back) is type(obj)
        if hasattr(obj, "directions"):
            np.testing.assert_array_equal(back.directions, obj.directions)
        elif hasattr(obj, "length"):
            assert back.length == obj.length and back.closed == obj.closed
        elif hasattr(obj, "behaviours"):
            assert back._config().keys() == obj._config().keys()
        else:
            assert repr(back) == repr(obj)


def test_world_round_trip_keeps_ids_layers_and_answers():
    w = cs.World()
    w.add_segments([[0, -5, 0, 5]], layers=2)
    w.add_polyline([[2, 2], [4, 2], [4, 4]], closed=True)
    w.add_circles([[8, 0], [9, 3]], [0.5, 1.0], layers=4)
    w.cell_size = 1.5
    for back in (pickle.loads(pickle.dumps(w)), copy.deepcopy(w)):
        np.testing.assert_array_equal(back.walls, w.walls)
        np.testing.assert_array_equal(back.wall_obstacles, w.wall_obstacles)
        assert back.cell_size == w.cell_size and back.obstacle_count == w.obstacle_count
        o, d = [[-3, 0], [6, 0]], [[1, 0], [1, 0]]
        for layers in (2, 4, 0xFFFFFFFF):
            np.testing.assert_array_equal(
                cs.raycast(back, o, d, 20.0, layers=layers).distance,
                cs.raycast(w, o, d, 20.0, layers=layers).distance,
            )
    w2 = copy.deepcopy(w)
    w2.add_segments([[20, 0, 21, 0]])
    assert w2.obstacle_count == w.obstacle_count + 1  # independent


def test_agents_and_context_maps_round_trip():
    a = cs.Agents(6, slots=8, seed=9)
    a.add(np.arange(8.0).reshape(4, 2), radius=[0.1, 0.2, 0.3, 0.4], group=[1, 2, 3, 4])
    a.remove([1])
    m = cs.ContextMaps(3, 8)
    m.interest[...] = np.arange(24).reshape(3, 8)
    for back in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        for name in cs.Agents.STATE:
            np.testing.assert_array_equal(getattr(back, name), getattr(a, name))
        assert back.count == a.count == 3 and back.slots == 8
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.interest, m.interest)
    with pytest.raises(TypeError, match="copy.copy would share"):
        copy.copy(a)


def test_truncated_or_corrupted_files_raise_clearly(tmp_path):
    sim = scenarios.get("oncoming")()
    sim.step(1 / 30, 10)
    good = tmp_path / "good.cssim"
    sim.save(good)
    raw = good.read_bytes()
    (tmp_path / "cut.cssim").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="not a contextsteer simulation file"):
        cs.load(tmp_path / "cut.cssim")
    # A payload changed inside a well-formed archive: the digest catches it.
    with zipfile.ZipFile(good) as z:
        meta, payload = z.read("meta.json"), bytearray(z.read("simulation.pickle"))
    payload[len(payload) // 2] ^= 0xFF
    with zipfile.ZipFile(tmp_path / "bad.cssim", "w") as z:
        z.writestr("meta.json", meta)
        z.writestr("simulation.pickle", bytes(payload))
    with pytest.raises(ValueError, match="corrupted"):
        cs.load(tmp_path / "bad.cssim")
    (tmp_path / "other.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with pytest.raises(ValueError, match="not a contextsteer simulation file"):
        cs.load(tmp_path / "other.zip")


def test_save_metadata_is_of_the_saved_state_even_if_the_simulation_steps_meanwhile(
    tmp_path, monkeypatch
):
    """meta.json's time, step count and agent count come from the snapshot the payload
    holds. Stand-in for a step in another thread: the simulation steps (and loses an
    agent) right after its state is copied; save() must not read it again."""
    sim = scenarios.get("oncoming")(agents=4)
    sim.step(1 / 30, 3)
    time = sim.time
    reduce = type(sim).__reduce__

    def reduce_then_step(self):
        reduced = reduce(self)
        self.step(1 / 30, 2)
        self.agents.remove([0])
        return reduced

    monkeypatch.setattr(type(sim), "__reduce__", reduce_then_step)
    sim.save(tmp_path / "a.cssim")
    monkeypatch.undo()
    with zipfile.ZipFile(tmp_path / "a.cssim") as z:
        meta = json.loads(z.read("meta.json"))
    loaded = cs.load(tmp_path / "a.cssim")
    assert (loaded.step_count, loaded.time, loaded.agents.count) == (3, time, 4)
    assert sim.step_count == 5  # the stand-in step ran
    assert meta["step_count"] == loaded.step_count == 3
    assert meta["time"] == loaded.time
    assert meta["agents"] == loaded.agents.count == 4


def test_state_of_another_configuration_is_refused_whole():
    a = scenarios.get("oncoming")(agents=2)
    b = scenarios.get("oncoming")(agents=4)
    before = np.array(b.interest)
    with pytest.raises(ValueError, match="a different configuration"):
        b._core._set_state(a._core._state())
    np.testing.assert_array_equal(b.interest, before)  # nothing half-loaded


def test_history_pickles_as_a_detached_copy_of_its_frames():
    sim = scenarios.get("racetrack")(agents=6, seed=2)
    hist = cs.History(sim, every=2, maps=True)
    sim.step(1 / 60, steps=10)
    names = [
        "steps",
        "times",
        "positions",
        "velocities",
        "headings",
        "alive",
        "interest",
        "danger",
        "sensed",
    ]
    for copied in (pickle.loads(pickle.dumps(hist)), copy.deepcopy(hist)):
        assert not copied.attached and len(copied) == len(hist) == 6
        for name in names:
            np.testing.assert_array_equal(getattr(copied, name), getattr(hist, name))
            assert not getattr(copied, name).flags.writeable
        for key, values in hist.series.items():
            np.testing.assert_array_equal(copied.series[key], values)
        assert copied.to_dataframe().equals(hist.to_dataframe())
    sim.step(1 / 60, steps=4)  # the original goes on recording
    assert len(hist) == 8 and len(copied) == 6
    # pickled together with its simulation, the copy refers to the copied simulation
    sim2, hist2 = pickle.loads(pickle.dumps((sim, hist)))
    assert hist2.sim is sim2
    with pytest.raises(TypeError, match="deepcopy"):
        copy.copy(hist)


def routed(capacity=4):
    """Agents on per-agent routes (FollowPath over a sequence of Paths, with an index)."""
    a = cs.Agents(capacity, slots=8)
    a.add([[0, 0], [0, 1], [1, 0]], max_speed=1)
    routes = [cs.Path([[0, 0], [5, 0], [5, 5]]), cs.Path([[0, 1], [0, 6]]), None]
    beh = cs.FollowPath(routes, look_ahead=0.5, mode="seek", index=np.int32([0, 1, 0, 2]))
    return cs.Simulation(None, a, [beh], motion=cs.Lerp(steer_force=1))


def test_followpath_with_per_agent_routes_saves_and_continues_bit_identically(tmp_path):
    straight = routed()
    straight.step(0.1, 60)
    first = routed()
    first.step(0.1, 25)
    first.save(tmp_path / "routes.cssim")
    twins = [cs.load(tmp_path / "routes.cssim"), pickle.loads(pickle.dumps(first))]
    twins.append(copy.deepcopy(first))
    for t in twins:
        t.step(0.1, 35)
        same_run(straight, t)
    beh = pickle.loads(pickle.dumps(first._source_steering.behaviours[0]))
    assert [p is None for p in beh.path] == [False, False, True]
    np.testing.assert_array_equal(beh.path[1].points, [[0, 1], [0, 6]])
    np.testing.assert_array_equal(beh.index, [0, 1, 0, 2])


def test_older_pickles_with_overtakes_off_a_closed_path_load_as_they_ran():
    # Before configure_metrics refused overtakes without a closed path, they counted
    # nothing there; such a pickle still loads, and continues as the original.
    a = cs.Agents(2, slots=8)
    a.add([[0, 0], [3, 0]], target=[[10, 0], [10, 1]], max_speed=1)
    sim = cs.Simulation(None, a, [cs.Seek()])
    sim.configure_metrics(path=cs.Path([[0, 0], [10, 0]]))
    sim.step(0.1, 5)
    sim._metrics_args["overtakes"] = True  # as an older version kept it
    back = pickle.loads(pickle.dumps(sim))
    for s in (sim, back):
        s.step(0.1, 5)
    same_run(sim, back)


def test_attributes_set_after_construction_survive_a_round_trip(tmp_path):
    """The evacuation scenario keeps its room depth on the simulation for its report;
    pickling dropped it, so a loaded room of depth 8 was measured as one of 20 (in_room
    35 against 38 for the same positions)."""
    from contextsteer.simulation import _OWN_ATTRIBUTES

    sim = scenarios.get("evacuation")(agents=40, depth=8.0, seed=1)
    sim.step(1 / 30, steps=60)
    sim.my_label = {"run": 7}  # a user's own attribute
    path = tmp_path / "evac.cssim"
    sim.save(path)
    for other in (pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim), cs.load(path)):
        assert other._room_depth == 8.0 and other.my_label == {"run": 7}
        assert scenarios.evacuation_report(other) == scenarios.evacuation_report(sim)
    # Everything the constructor sets is rebuilt, not pickled as an extra: the list of
    # the constructor's own attributes must cover every configuration's.
    plain = cs.Simulation(None, cs.Agents(2), [cs.Seek()])
    slotted = cs.Simulation(None, cs.Agents(2, slots=8), [cs.Seek()], slots=cs.SlotSet(8))
    slotted.configure_metrics(goal_radius=1.0)
    for s in (plain, slotted):
        assert set(vars(s)) <= _OWN_ATTRIBUTES


def test_save_into_a_missing_folder_names_the_path(tmp_path):
    sim = cs.Simulation(None, cs.Agents(2), [cs.Seek()])
    target = tmp_path / "no" / "such" / "run.cssim"
    with pytest.raises(FileNotFoundError, match="no folder") as info:
        sim.save(target)
    assert info.value.filename == str(target)


def test_attributes_that_are_not_plain_data_are_left_out_as_before():
    """Pickling every extra attribute broke pickle, deepcopy and save() of a simulation
    holding a callback or a lock, which had worked (the attributes were dropped)."""
    import threading

    sim = cs.Simulation(None, cs.Agents(2), [cs.Seek()])
    sim.on_step = lambda s: None
    sim.lock = threading.Lock()
    sim.settings = {"depth": 8.0, "tags": ["a", "b"], "offset": np.float32(0.5)}
    back = copy.deepcopy(sim)
    assert back.settings == sim.settings
    assert not hasattr(back, "on_step") and not hasattr(back, "lock")
    assert pickle.loads(pickle.dumps(sim)).settings["depth"] == 8.0


def _crafted(tmp_path, sim, change):
    """A save file of ``sim`` whose state ``change(state)`` edited, with a digest that
    matches: what a crafted (or another version's) file may hold."""
    reduced = sim.__reduce__()
    change(reduced[1][-2])
    return _with_payload(tmp_path / "crafted.cssim", pickle.dumps(_Reduced(reduced)))


def _with_payload(path, payload: bytes):
    """A save file at ``path`` holding ``payload`` under a digest that matches it."""
    meta = {"format": "contextsteer-simulation", "version": 1}
    meta["sha256"] = hashlib.sha256(payload).hexdigest()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("meta.json", json.dumps(meta))
        z.writestr("simulation.pickle", payload)
    return path


def _declare_payload_size(path, size: int):
    """Make the save file at ``path`` declare its payload's size as ``size`` (the
    central directory's entry, which zipfile reads), whatever the data holds."""
    data = bytearray(path.read_bytes())
    at = data.rfind(b"simulation.pickle")  # its central directory entry; size at -22..-18
    data[at - 22 : at - 18] = size.to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


def _peak_of_a_refused_load(path, match: str) -> int:
    """The peak of memory ``cs.load(path)`` traced before it raised ValueError(match)."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=match):
            cs.load(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class _Reduced:
    """Pickles as the given reduce tuple (a simulation rebuilt from an edited state)."""

    def __init__(self, reduced):
        self.reduced = reduced

    def __reduce__(self):
        return self.reduced


@pytest.mark.parametrize(
    "name, value",
    [("metrics.n_partners", 0xFF), ("metrics.partners", 10_000), ("slot", 99)],
)
def test_a_crafted_state_with_out_of_range_indices_is_refused(tmp_path, name, value):
    """_set_state checked each buffer's length, not its indices: partner counts of 255
    wrote past the partner rows (heap corruption, a segfault later; fuzz round 12)."""
    sim = scenarios.get("oncoming")(agents=4)
    sim.step(1 / 30, 3)

    def change(state):
        raw = np.frombuffer(
            state[name], dtype=np.uint8 if name.endswith("n_partners") else np.int32
        )
        state[name] = np.full_like(raw, value).tobytes()

    with pytest.raises(ValueError, match=f"Simulation state: {name} holds"):
        cs.load(_crafted(tmp_path, sim, change))


def test_a_crafted_lap_difference_does_not_hang_the_overtakes(tmp_path):
    """Overtakes counted a lap at a time from the stored lap difference: one near 2^31 (or
    an infinite progress) looped for billions of laps, or for ever (fuzz round 12)."""
    sim = scenarios.get("racetrack")(agents=4, seed=1)
    sim.step(1 / 30, 5)
    straight = copy.deepcopy(sim)

    def change(state):
        diff = np.frombuffer(state["metrics.lap_diff"], dtype=np.int32).copy()
        diff[diff != np.iinfo(np.int32).min] = 2**31 - 10
        state["metrics.lap_diff"] = diff.tobytes()

    back = cs.load(_crafted(tmp_path, sim, change))
    back.step(1 / 30, 20)  # returns (it did not)
    straight.step(1 / 30, 20)
    np.testing.assert_array_equal(back.agents.position, straight.agents.position)


def test_save_never_writes_through_a_device_a_link_or_another_save(tmp_path):
    """save wrote `path + ".tmp"` and renamed it over the path: as root, saving to
    /dev/full turned the device into a file; a link planted at the .tmp name was written
    through; two saves to one path raced on the one name and lost saves (fuzz round 12)."""
    sim = scenarios.get("oncoming")(agents=4)
    with pytest.raises(ValueError, match="is not a regular file"):
        sim.save(os.devnull)
    assert not os.path.isfile(os.devnull)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    os.symlink(victim, tmp_path / "run.cssim.tmp")
    sim.save(tmp_path / "run.cssim")
    assert victim.read_text() == "keep me" and cs.load(tmp_path / "run.cssim").step_count == 0
    errors = []

    def save_many():
        try:
            for _ in range(15):
                copy.deepcopy(sim).save(tmp_path / "shared.cssim")
        except Exception as e:  # noqa: BLE001 (any failure is the finding)
            errors.append(e)

    threads = [threading.Thread(target=save_many) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and cs.load(tmp_path / "shared.cssim").agents.count == 4
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["run.cssim", "run.cssim.tmp", "shared.cssim", "victim"]  # no stray files


def test_load_refuses_bombs_bad_pickles_and_names_file_objects(tmp_path):
    """A member that inflates to gigabytes was read whole before any check; a payload with
    the right digest that is no pickle raised UnpicklingError; a damaged file object
    raised TypeError from the message's os.fspath (fuzz round 12)."""
    bomb = tmp_path / "bomb.cssim"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("meta.json", b" " * (2 << 20))  # 2 MiB that deflate to 2 kB
        z.writestr("simulation.pickle", b"")
    assert bomb.stat().st_size < 10_000
    with pytest.raises(ValueError, match="meta.json inflates to 2,097,152 bytes"):
        cs.load(bomb)
    with pytest.raises(ValueError, match="does not hold a simulation this library can read"):
        cs.load(_with_payload(tmp_path / "junk.cssim", b"not a pickle"))
    sim = scenarios.get("oncoming")(agents=2)
    sim.save(tmp_path / "good.cssim")
    cut = io.BytesIO((tmp_path / "good.cssim").read_bytes()[:100])
    with pytest.raises(ValueError, match="the BytesIO given is not a contextsteer simulation"):
        cs.load(cut)


def test_save_takes_any_name_the_folder_takes_and_refuses_a_folder_path(tmp_path):
    """The temporary name was the path plus 17 characters: a name of 240-255 bytes, which
    a plain open takes, failed with ENAMETOOLONG naming the temporary file; "" and a path
    ending in a slash failed naming it too."""
    sim = scenarios.get("oncoming")(agents=2)
    long_name = tmp_path / ("r" * 250)
    sim.save(long_name)
    assert cs.load(long_name).agents.count == 2
    for bad in ("", str(tmp_path) + os.sep):
        with pytest.raises(IsADirectoryError, match="the path is a folder"):
            sim.save(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r" * 250]


def test_load_wraps_a_payload_that_fails_to_rebuild_and_a_crafted_time(tmp_path):
    """A payload with the right digest whose rebuild raises TypeError escaped as such; a
    state whose time is NaN loaded, and the next step of a flow failed on it."""
    sim = scenarios.get("oncoming")(agents=2)
    sim.step(1 / 30, 2)

    def nan_time(state):
        state["time"] = np.array([np.nan]).tobytes()

    with pytest.raises(ValueError, match="Simulation state: time holds nan"):
        cs.load(_crafted(tmp_path, sim, nan_time))
    payload = pickle.dumps(_Reduced((int, ("1", "2", "3"))))  # int() takes 2 arguments
    with pytest.raises(ValueError, match="does not hold a simulation this library can read"):
        cs.load(_with_payload(tmp_path / "t.cssim", payload))


def test_load_refuses_devices_and_pipes_by_path_and_reads_a_pipe_given_as_a_file(tmp_path):
    """cs.load("/dev/zero") read the device to its end (gigabytes a second, never
    returning) and a FIFO path blocked in open(); a valid file read through a pipe was
    reported as not a simulation file (fuzz round 14)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        with pytest.raises(ValueError, match="is not a regular file"):
            cs.load(path)
    sim = scenarios.get("oncoming")(agents=3)
    sim.step(1 / 30, 5)
    sim.save(tmp_path / "run.cssim")
    data = (tmp_path / "run.cssim").read_bytes()
    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, data), os.close(w)))
    writer.start()
    with os.fdopen(r, "rb") as stream:
        back = cs.load(stream)
    writer.join()
    assert back.step_count == 5 and np.array_equal(back.agents.position, sim.agents.position)


def test_a_payload_is_read_once_and_checked_in_order(tmp_path):
    """A payload that did not match its digest was read whole, then copied (a 0.5 MB
    file took 1 GB): it is now read once into one buffer, its digest taken on the way.
    A payload declared larger than the memory is refused unread, and a future format
    version is named as such before any digest (fuzz round 14)."""

    def bomb(path, size, meta):
        # A zip that declares its payload's size as ``size`` (deflated zeros).
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("meta.json", json.dumps({"format": "contextsteer-simulation", **meta}))
            z.writestr("simulation.pickle", bytes(size))
        return path

    path = bomb(tmp_path / "bomb.cssim", 64 << 20, {"version": 1})
    peak = _peak_of_a_refused_load(path, "does not match the recorded SHA-256")
    assert peak < 1.25 * (64 << 20)  # one copy, not two
    with pytest.raises(ValueError, match="file format version 2; this contextsteer reads up to 1"):
        cs.load(bomb(tmp_path / "future.cssim", 10, {"version": 2}))
    # Declared beyond the memory: refused from the zip's directory (a real one would take
    # minutes to inflate), as the declared size is read from there.
    path = _declare_payload_size(bomb(tmp_path / "huge.cssim", 10, {"version": 1}), 0xFFFFFFFE)
    with (
        mock.patch.object(cs.persist, "_physical_memory", return_value=1 << 30),
        pytest.raises(ValueError, match="inflates to 4,294,967,294 bytes"),
    ):
        cs.load(path)


@pytest.mark.parametrize(
    "reduced, error",
    [
        ((bytes, (2**70,)), "OverflowError"),  # cannot fit 'int' into an index-sized integer
        ((bytearray, (2**62,)), "not enough memory"),
    ],
)
def test_a_payload_whose_rebuild_overflows_is_refused_as_a_bad_file(tmp_path, reduced, error):
    """OverflowError and MemoryError from a payload with the right digest escaped load,
    whose docstring promises ValueError (fuzz round 14)."""
    payload = pickle.dumps(_Reduced(reduced))
    with pytest.raises(ValueError, match=error):
        cs.load(_with_payload(tmp_path / "x.cssim", payload))


def test_save_keeps_the_mode_writes_through_a_link_and_names_the_path_it_was_given(
    tmp_path, monkeypatch
):
    """Saving over a 0600 file made it 0644, a symbolic link became a regular file, and a
    folder where no file could be made gave a PermissionError naming the temporary file
    (fuzz round 14)."""
    sim = scenarios.get("oncoming")(agents=2)
    path = tmp_path / "run.cssim"
    sim.save(path)
    os.chmod(path, 0o600)
    sim.step(1 / 30)
    sim.save(path)
    assert (path.stat().st_mode & 0o777) == 0o600 and cs.load(path).step_count == 1
    link = tmp_path / "link.cssim"
    os.symlink(path, link)
    sim.step(1 / 30)
    sim.save(link)
    assert link.is_symlink() and cs.load(path).step_count == 2

    def refused(target):
        raise PermissionError(13, "Permission denied", os.path.join(tmp_path, ".cssim-x.tmp"))

    monkeypatch.setattr(cs.persist, "_new_file", refused)
    with pytest.raises(PermissionError, match="save: cannot create a file") as info:
        sim.save(path)
    assert info.value.filename == str(path)


def test_a_failed_text_write_keeps_the_earlier_file_and_a_device_is_written_in_place(tmp_path):
    """The CLI's --out and metrics.json and History.to_csv wrote in place: a write that
    failed part-way (a full disk) left a cut file where a good one had been (fuzz round
    14). Devices are still written in place, as open() writes them."""
    path = tmp_path / "sweep.json"
    cs.persist.write_text(path, '{"good": 1}\n', "--out")
    with pytest.raises(UnicodeEncodeError):
        cs.persist.write_text(path, '{"half": "\ud800"}', "--out")  # fails while writing
    assert path.read_text() == '{"good": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.json"]
    cs.persist.write_text(os.devnull, "x", "--out")
    assert not os.path.isfile(os.devnull)


def test_text_writes_go_in_place_where_a_rename_would_not_do_what_open_does(tmp_path):
    """The first whole-or-nothing writer (fuzz round 14) renamed over whatever the path
    resolved to: /dev/stdout on a pipe became '/proc/<pid>/fd/.cssim-….tmp' (not found),
    a hard link was split, a path through a missing folder was written, and errors named
    the temporary file. Oracle: what open(path, "wb") does."""
    code = (
        "import contextsteer as cs\ncs.persist.write_text('/dev/stdout', 'a,b\\n1,2\\n', '--out')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, timeout=60, check=True
    )
    assert proc.stdout == "a,b\n1,2\n"
    first = tmp_path / "a.csv"
    first.write_text("old")
    os.link(first, tmp_path / "b.csv")
    cs.persist.write_text(first, "new", "--out")
    assert (tmp_path / "b.csv").read_text() == "new"  # one file, as open() writes it
    for bad in (tmp_path / "nodir" / ".." / "x.csv", tmp_path / "nodir" / "x.csv"):
        with pytest.raises(FileNotFoundError) as info:
            cs.persist.write_text(bad, "x", "--out")
        assert info.value.filename == str(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_load_refuses_a_text_mode_file_by_name(tmp_path):
    sim = scenarios.get("oncoming")(agents=2)
    sim.save(tmp_path / "run.cssim")
    with (
        open(tmp_path / "run.cssim", encoding="latin-1") as text,
        pytest.raises(TypeError, match=r"must be opened in binary mode \('rb'\)"),
    ):
        cs.load(text)


def test_dev_stdout_redirected_to_a_file_is_written_in_place(tmp_path):
    """With stdout redirected to a file, writing "/dev/stdout" renamed a new file over it:
    this process's descriptor stayed on the old, unlinked one, so what it printed after
    was lost (a helper on fuzz round 14's fixes). Oracle: the same program with a plain
    open(), the file as the shell leaves it (for ">" and for ">>")."""
    links = tmp_path / "links"
    links.mkdir()
    os.symlink("/proc/self/fd", links / "fds")  # a folder link on the way
    os.symlink(os.path.relpath("/dev/fd/1", links), links / "rel")  # a relative link
    for target, mode in [
        ("/dev/stdout", "w"),
        ("/dev/stdout", "a"),
        ("//dev/fd/1", "w"),  # (abspath keeps a leading //)
        (str(links / "fds" / "1"), "w"),
        (str(links / "rel"), "w"),
    ]:
        write = {
            "ours": f"cs.persist.write_text({target!r}, 'a,b\\n', '--out')",
            "open": f"open({target!r}, 'wb').write(b'a,b\\n')",
        }
        got = {}
        for name, line in write.items():
            code = (
                "import contextsteer as cs\n"
                "print('before', flush=True)\n"
                f"{line}\n"
                "print('after', flush=True)\n"
            )
            out = tmp_path / f"{name}-{mode}.txt"
            out.write_text("earlier\n")
            with open(out, mode) as f:
                subprocess.run([sys.executable, "-c", code], stdout=f, timeout=60, check=True)
            got[name] = out.read_bytes()
        assert got["ours"] == got["open"] and b"after" in got["ours"], got


def test_a_payload_declared_far_larger_than_it_is_takes_no_more_than_256_mib(tmp_path):
    """A payload declared as 3 GB in a 2 kB file zero-filled 3 GB before the data was
    seen to be short (a helper on fuzz round 14's fixes)."""
    path = _declare_payload_size(_with_payload(tmp_path / "lie.cssim", pickle.dumps(1)), 3 << 30)
    peak = _peak_of_a_refused_load(path, "cut short|truncated or corrupted")
    assert peak < (1 << 28) + (32 << 20)


def test_a_replaced_file_keeps_its_group_and_dev_shm_is_written_whole(tmp_path):
    """A group-shared file (0660, another group) came back in the writer's group after a
    text write or a save (open() keeps the group); a path in /dev/shm, a plain folder of
    files in memory, was written in place like a device (fuzz round 15)."""
    import grp

    groups = [g.gr_gid for g in grp.getgrall() if g.gr_gid != os.getegid()]
    shared = tmp_path / "shared.json"
    shared.write_text("old")
    try:
        os.chown(shared, -1, groups[0])
    except (IndexError, PermissionError):
        pytest.skip("no other group this user may give a file")
    os.chmod(shared, 0o660)
    cs.persist.write_text(shared, "new", "--out")
    st = os.stat(shared)
    assert (st.st_gid, st.st_mode & 0o777, shared.read_text()) == (groups[0], 0o660, "new")
    sim = scenarios.get("oncoming")(agents=2)
    sim.save(shared)
    assert os.stat(shared).st_gid == groups[0]
    assert not cs.persist._through_devices("/dev/shm/run.cssim")
    assert cs.persist._through_devices("/dev/stdout") and cs.persist._through_devices("/dev/null")


def test_a_write_past_the_file_size_limit_names_the_path_and_keeps_the_old_file(tmp_path):
    """Past `ulimit -f` the error was "[Errno 27] File too large" with no file named, and
    write_text("") named its temporary file (fuzz round 15). Oracle: open()'s errors."""
    path = tmp_path / "metrics.json"
    path.write_text("old")
    code = (
        "import resource, signal, contextsteer as cs\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
        f"cs.persist.write_text({str(path)!r}, 'x' * 100000, '--out')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert f"File too large: '{path}'" in proc.stderr, proc.stderr[-500:]
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == [
        "metrics.json"
    ]
    with pytest.raises(FileNotFoundError) as info:
        cs.persist.write_text("", "x", "--out")
    assert info.value.filename == ""


def test_saving_over_a_file_works_where_os_has_no_fchmod(tmp_path, monkeypatch):
    """Windows Python before 3.13 has no os.fchmod: saving over a file raised
    AttributeError (fuzz round 16)."""
    monkeypatch.delattr(os, "fchmod")
    sim = scenarios.get("oncoming")(agents=2)
    sim.save(tmp_path / "run.cssim")
    sim.save(tmp_path / "run.cssim")
    cs.persist.write_text(tmp_path / "m.json", "a", "--out")
    cs.persist.write_text(tmp_path / "m.json", "b", "--out")
    assert (tmp_path / "m.json").read_text() == "b"
    assert cs.load(tmp_path / "run.cssim").agents.count == 2


def test_security_labels_do_not_force_writes_in_place(tmp_path, monkeypatch):
    """Every file of an SELinux host has a security.selinux attribute: counted as an
    extended attribute to keep, every text write went in place, never whole (a helper on
    fuzz round 15's fixes). user.* attributes still keep a file in place, as open() keeps
    them; an in-place write that fails names the path."""
    path = tmp_path / "m.json"
    path.write_text("old")
    try:
        os.setxattr(path, "user.note", b"x")
    except OSError:
        pytest.skip("this file system takes no user attributes")
    assert cs.persist._has_xattrs(str(path))
    with open(path, "rb") as f:
        inode = os.fstat(f.fileno()).st_ino
    cs.persist.write_text(path, "new", "--out")
    assert os.stat(path).st_ino == inode and os.getxattr(path, "user.note") == b"x"
    os.removexattr(path, "user.note")
    monkeypatch.setattr(os, "listxattr", lambda p: ["security.selinux"])
    assert not cs.persist._has_xattrs(str(path))
