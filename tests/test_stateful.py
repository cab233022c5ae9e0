"""A simulation driven by random sequences of what users do to one: add and remove agents,
step, retarget through the views, save and load, copy, record, reconfigure the metrics.

Hypothesis's rule-based state machine runs each sequence on three copies of one crowd
(the crowd scenarios' velocity-space steering between walls, in 16 decision phases):

- ``main``, stepped on two threads;
- ``ref``, the same operations on one thread;
- ``twin``, a copy of ``main`` taken by a random means (pickle, ``copy.deepcopy``,
  ``Simulation.save``/``cs.load`` through a file) at a random point, then given the same
  operations;
- ``steady``, the same operations except that its run metrics are never reconfigured or
  turned off (the metrics' queries also serve the step, and on or off the agents must
  move identically).

The oracle is the library's own promise: same inputs and seed, bit-identical results,
whatever the thread count and whether the run was saved and reloaded on the way. After
every rule the three agree bit for bit on every agent column and on the run metrics, and
the invariants of a run hold (no NaN, no agent inside a wall, episode counts that never
fall, ids and generations as the operations made them). A history recorded on ``main``
and on ``ref`` gives the same frames.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    precondition,
    rule,
)

import contextsteer as cs
from contextsteer.scenarios import crowd_steering

CAPACITY = 12
DT = 1.0 / 30.0
BOX = (0.0, 0.0, 8.0, 5.0)  # the room's walls: x0, y0, x1, y1
AGENT_COLUMNS = ("position", "velocity", "heading", "alive", "generation", "target", "max_speed")
# The simulation's own per-agent state and last decision (what the next step starts from).
SIM_COLUMNS = ("chosen_slot", "chosen_direction", "strength", "still_time", "stuck", "overlaps")
COLUMNS = AGENT_COLUMNS + SIM_COLUMNS


def room() -> cs.World:
    x0, y0, x1, y1 = BOX
    w = cs.World()
    w.add_segments([[x0, y0, x1, y0], [x1, y0, x1, y1], [x1, y1, x0, y1], [x0, y1, x0, y0]])
    # A pillar in the middle, so that agents also meet a wall inside the room.
    w.add_circles([[4.0, 2.5]], [0.4])
    return w


def new_simulation() -> cs.Simulation:
    agents = cs.Agents(CAPACITY, seed=7)
    return cs.Simulation(
        room(), agents, crowd_steering(), cs.Accel(), slots=16, stuck_distance=0.05, stuck_time=1.0
    )


points = st.tuples(
    st.floats(BOX[0] + 0.5, BOX[2] - 0.5, width=32), st.floats(BOX[1] + 0.5, BOX[3] - 0.5, width=32)
)
# Where an agent may be put: in the room, its body clear of the pillar.
places = points.filter(lambda p: math.hypot(p[0] - 4.0, p[1] - 2.5) > 0.75)


def snapshot(sim: cs.Simulation) -> dict:
    a = sim.agents
    out = {name: np.array(getattr(a, name), copy=True) for name in AGENT_COLUMNS}
    out.update({name: np.array(getattr(sim, name), copy=True) for name in SIM_COLUMNS})
    out["time"] = sim.time
    out["steps"] = sim.step_count
    out["metrics"] = sim.metrics()
    return out


def assert_same(x: dict, y: dict, what: str) -> None:
    for name in COLUMNS:
        np.testing.assert_array_equal(x[name], y[name], err_msg=f"{what}: agents.{name}")
    assert x["time"] == y["time"], what
    assert x["steps"] == y["steps"], what
    same_metrics(x["metrics"], y["metrics"], f"{what}: metrics")


def same_metrics(x, y, where: str) -> None:
    """Equal, nested dicts walked, NaN equal to NaN (no tolerance)."""
    if isinstance(x, dict):
        assert isinstance(y, dict) and x.keys() == y.keys(), where
        for k in x:
            same_metrics(x[k], y[k], f"{where}[{k!r}]")
    elif isinstance(x, float) and math.isnan(x):
        assert isinstance(y, float) and math.isnan(y), f"{where}: {x!r} != {y!r}"
    else:
        assert x == y, f"{where}: {x!r} != {y!r}"


@settings(
    max_examples=25,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
class SimulationLife(RuleBasedStateMachine):
    agent_ids = Bundle("agent_ids")

    @initialize()
    def start(self) -> None:
        self.main = new_simulation()
        self.ref = new_simulation()
        self.steady = new_simulation()
        self.twin: cs.Simulation | None = None
        self.histories: list[tuple[cs.History, cs.History]] = []
        self.episodes = {"agent_agent": 0, "agent_wall": 0}
        self.generation = np.zeros(CAPACITY, dtype=np.int64)

    def each(self, steady: bool = True):
        yield self.main, 2
        yield self.ref, 1
        if steady:
            yield self.steady, 1
        if self.twin is not None:
            yield self.twin, 1

    # -- operations ------------------------------------------------------------------

    @precondition(lambda self: self.main.agents.count < CAPACITY)
    @rule(
        target=agent_ids,
        where=st.lists(places, min_size=1, max_size=4),
        goal=points,
        speed=st.sampled_from([0.5, 1.3, 2.0]),
    )
    def add(self, where, goal, speed):
        where = where[: CAPACITY - self.main.agents.count]
        ids = None
        for sim, _ in self.each():
            got = sim.agents.add(
                np.array(where, dtype=np.float32),
                radius=0.3,
                max_speed=speed,
                max_accel=6.0,
                target=np.array(goal, dtype=np.float32),
            )
            if ids is None:
                ids = got
            np.testing.assert_array_equal(got, ids)  # the same lowest free slots in every copy
        self.generation[ids] += 1
        return int(ids[0])

    @rule(agent=consumes(agent_ids))
    def remove(self, agent):
        if not self.main.agents.alive[agent]:
            return  # added and removed again under another bundle entry
        for sim, _ in self.each():
            sim.agents.remove([agent])

    @rule(steps=st.integers(1, 6))
    def step(self, steps):
        for sim, n in self.each():
            with cs.threads(n):
                sim.step(DT, steps=steps)

    @rule(agent=agent_ids, goal=points)
    def retarget(self, agent, goal):
        if not self.main.agents.alive[agent]:
            return
        for sim, _ in self.each():
            sim.agents.target[agent] = goal  # through the zero-copy view

    @rule(how=st.sampled_from(["pickle", "deepcopy", "file"]))
    def fork(self, how):
        """The twin starts again as a copy of main, taken the given way."""
        if how == "pickle":
            self.twin = pickle.loads(pickle.dumps(self.main))
        elif how == "deepcopy":
            self.twin = copy.deepcopy(self.main)
        else:
            path = self.tmp / "sim.cs"
            self.main.save(path)
            self.twin = cs.load(path)

    @rule()
    def reload_main(self):
        """Main is replaced by its own saved file, as a long job that resumes would."""
        path = self.tmp / "main.cs"
        self.main.save(path)
        self.main = cs.load(path)
        # Histories recording the old object stop with it; start afresh on both sides.
        for hm, hr in self.histories:
            hm.detach()
            hr.detach()
        self.histories.clear()

    @precondition(lambda self: len(self.histories) < 2)
    @rule(every=st.integers(1, 3))
    def record(self, every):
        self.histories.append((self.main.record(every=every), self.ref.record(every=every)))

    @rule(enabled=st.booleans(), goal_radius=st.sampled_from([None, 0.3]))
    def configure_metrics(self, enabled, goal_radius):
        for sim, _ in self.each(steady=False):
            sim.configure_metrics(enabled=enabled, goal_radius=goal_radius)
        self.episodes = dict.fromkeys(self.episodes, 0)  # a reset

    # -- what must hold after every rule ---------------------------------------------

    @invariant()
    def copies_agree(self):
        if not hasattr(self, "main"):
            return
        m = snapshot(self.main)
        assert_same(m, snapshot(self.ref), "two threads vs one")
        s = snapshot(self.steady)
        for name in COLUMNS:
            np.testing.assert_array_equal(m[name], s[name], err_msg=f"metrics off: {name}")
        if self.twin is not None:
            assert_same(m, snapshot(self.twin), "copy vs original")

    @invariant()
    def a_run_stays_physical(self):
        if not hasattr(self, "main"):
            return
        a = self.main.agents
        alive = np.asarray(a.alive, dtype=bool)
        pos = np.asarray(a.position)[alive]
        assert np.isfinite(pos).all() and np.isfinite(np.asarray(a.velocity)[alive]).all()
        # Bodies never cross the room's walls or enter the pillar.
        x0, y0, x1, y1 = BOX
        r = 0.3
        assert (pos[:, 0] >= x0 + r - 1e-3).all() and (pos[:, 0] <= x1 - r + 1e-3).all()
        assert (pos[:, 1] >= y0 + r - 1e-3).all() and (pos[:, 1] <= y1 - r + 1e-3).all()
        assert (np.hypot(pos[:, 0] - 4.0, pos[:, 1] - 2.5) >= 0.4 + r - 1e-3).all()
        speed = np.hypot(*np.asarray(a.velocity)[alive].T)
        assert (speed <= np.asarray(a.max_speed)[alive] * (1 + 1e-5)).all()
        # Ids and generations are what the operations made them.
        np.testing.assert_array_equal(np.asarray(a.generation, dtype=np.int64), self.generation)
        assert a.count == int(alive.sum())

    @invariant()
    def episode_counts_never_fall(self):
        if not hasattr(self, "main"):
            return
        m = self.main.metrics()
        if not m["enabled"]:
            return
        for k, before in self.episodes.items():
            now = m["collisions"][k]
            assert now >= before, k
            self.episodes[k] = now

    @invariant()
    def histories_agree(self):
        if not hasattr(self, "main"):
            return
        for hm, hr in self.histories:
            assert len(hm) == len(hr)
            if len(hm):
                np.testing.assert_array_equal(hm.times, hr.times)
                np.testing.assert_array_equal(hm.positions, hr.positions)
                np.testing.assert_array_equal(hm.alive, hr.alive)


@pytest.fixture
def life(tmp_path):
    class Machine(SimulationLife):
        tmp = tmp_path

    return Machine


def test_random_lives_of_a_simulation_agree_across_threads_and_copies(life):
    life.TestCase().runTest()
