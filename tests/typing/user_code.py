"""A user's module, type-checked by mypy (pyproject.toml: ``files`` and the overrides for
``user_code``, which call nothing untyped) and run by tests/test_typing.py: the hints of
the public API must accept what the docs accept and give the documented types back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

import contextsteer as cs
from contextsteer import classic

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:

    def assert_type(value: Any, _type: Any) -> Any:
        return value


def main() -> None:
    cs.set_num_threads(np.int64(1))  # "a Python or NumPy integer"
    world = cs.World()
    world.add_box(center=(5, 0), half_extents=(1, 3))
    agents = cs.Agents(np.int64(4), slots=8, seed=np.uint32(2))
    agents.add([[0.0, 0.0]])
    assert_type(agents.position, NDArray[Any])
    agents.velocity = [[0.1, 0.0]]  # a view takes anything array-like
    sim = cs.Simulation(world, agents, [cs.Forward()])
    history = sim.record(every=np.int64(1))
    sim.step(0.1, steps=np.int64(2))
    assert_type(sim.interest, NDArray[Any])
    assert_type(history.positions, NDArray[Any])
    assert_type(sim.metrics(), "dict[str, Any]")
    assert_type(sim.agent_metrics, cs.metrics.AgentMetrics)
    paths = cs.route(world, [[0.0, 0.0]], [[10.0, 0.0]], 0.3)
    assert_type(paths, "list[cs.Path | None]")
    if paths[0] is not None:
        assert paths[0].length > 10.0
    points, offsets = cs.route(world, [[0.0, 0.0]], [[10.0, 0.0]], 0.3, packed=True)
    assert len(offsets) == 2 and len(points) >= 2
    sep = classic.Separation(radius=1.5)
    assert sep.radius == 1.5
    racetrack = cs.scenarios.racetrack(agents=2)
    assert_type(racetrack, cs.Simulation)
    assert_type(racetrack.steering, "cs.Steering | classic.Blended | classic.Priority")
    if isinstance(racetrack.steering, cs.Steering):
        assert racetrack.steering.choose == "vector_sum"


if __name__ == "__main__":
    main()
