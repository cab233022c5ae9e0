"""An interactive playground: change the steering by name and see the scene and the maps.

The Python counterpart of gdx-ai's SteeringBehaviorsTest app. :class:`Playground` builds
the racetrack (cars following the centre line between two walls, with :class:`WallDanger`
and :class:`AgentDanger`) from a handful of settings — combine, resolve, choose, slots,
look-ahead, danger radius, number of agents — steps it for a few seconds and draws the
scene with the cars' trajectories next to one car's polar context map.
:meth:`Playground.update` does all of that for new settings and needs no widgets (tests
and scripts call it directly); :meth:`Playground.widgets` wraps it in ipywidgets
sliders and dropdowns (the ``widgets`` extra) that call it on every change.

>>> from contextsteer.playground import Playground
>>> pg = Playground(agents=4, steps=60)
>>> view = pg.update(resolve="subtract", slots=8)
>>> view.settings["resolve"], view.interest.shape, len(view.scene.rays.get_segments())
('subtract', (8,), 32)
>>> sorted(view.metrics)
['agent_contacts', 'mean_progress', 'wall_contacts']
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from . import _checks, _modes

__all__ = ["CHOICES", "DEFAULTS", "Playground", "PlaygroundView"]

#: The most cars a playground drives.
MAX_AGENTS = 40

#: Default settings of a :class:`Playground` (the racetrack scenario's choices).
DEFAULTS: dict[str, Any] = {
    "combine": "max",
    "resolve": "mask",
    "choose": "vector_sum",
    "slots": 16,
    "look_ahead": 22.0,
    "danger_radius": 8.0,
    "agents": 12,
    "agent": 0,
    "steps": 150,
    "seed": 0,
}

#: The options of each named stage, as the widgets offer them: the core's mode tables
#: (``_core.modes()``), less the variants that only reproduce a source's exact arithmetic
#: on negative values (the Unity project's ``subtract_unclamped`` and ``argmax_always``,
#: Godot's ``vector_sum_signed``), which the offered resolve modes never give.
CHOICES: dict[str, tuple[str, ...]] = {
    "combine": _modes.names("steering_combine"),
    "resolve": tuple(n for n in _modes.names("resolve") if n != "subtract_unclamped"),
    "choose": tuple(
        n for n in _modes.names("choose") if n not in ("argmax_always", "vector_sum_signed")
    ),
}


class PlaygroundView(NamedTuple):
    """What :meth:`Playground.update` drew."""

    settings: dict  #: the settings of this run
    sim: Any  #: the Simulation after ``steps`` steps
    scene: Any  #: plot.SceneArtists of the scene axes
    context_map: Any  #: plot.ContextMapArtists of the selected agent
    interest: np.ndarray  #: (K,) the selected agent's interest after the last step
    danger: np.ndarray  #: (K,) its danger
    metrics: dict  #: wall and agent contact episodes, mean progress along the track


class Playground:
    """Re-run a racetrack scene for new steering settings and redraw it.

    Parameters
    ----------
    **settings
        Any of :data:`DEFAULTS`: ``combine``, ``resolve``, ``choose`` (names, see
        :data:`CHOICES`), ``slots`` (K >= 3), ``look_ahead`` (of the wall rays),
        ``danger_radius`` (of :class:`AgentDanger`), ``agents`` (cars), ``agent`` (the
        car whose context map is drawn), ``steps`` (of 1/30 s) and ``seed``.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        Drawn by :meth:`update` (made without pyplot: it never opens a window).
    settings : dict
        The current settings.
    """

    def __init__(self, **settings: Any) -> None:
        from matplotlib.figure import Figure

        self.settings = self._checked({**DEFAULTS, **settings}, settings)
        self.figure = Figure(figsize=(11, 4.6), layout="constrained")
        self.view: PlaygroundView | None = None
        self._image = None

    @staticmethod
    def _checked(settings: dict[str, Any], given: Iterable[str] = ()) -> dict[str, Any]:
        """``settings`` checked. ``agent`` must name one of the cars when it is in
        ``given`` (the caller's own); an earlier selection that fewer cars no longer
        have becomes the last car."""
        unknown = sorted(set(settings) - set(DEFAULTS))
        if unknown:
            raise ValueError(
                f"Playground: unknown setting(s) {', '.join(unknown)} "
                f"(expected: {', '.join(DEFAULTS)})"
            )
        for stage, options in CHOICES.items():
            if settings[stage] not in options:
                raise ValueError(
                    f"Playground: {stage} must be one of {', '.join(map(repr, options))}, "
                    f"got {settings[stage]!r}"
                )
        for name in ("slots", "agents", "agent", "steps", "seed"):
            v = settings[name]
            if isinstance(v, bool) or not _checks.is_int(v):
                raise TypeError(f"Playground: {name} must be an int, got {v!r}")
            settings[name] = int(v)
        for name in ("look_ahead", "danger_radius"):
            v = settings[name]
            if isinstance(v, bool) or not _checks.is_real(v):
                raise TypeError(f"Playground: {name} must be a number, got {v!r}")
            if not 0 < float(v) < math.inf:
                raise ValueError(f"Playground: {name} must be finite and > 0, got {v}")
            settings[name] = float(v)
        if settings["slots"] < 3:
            raise ValueError(f"Playground: slots must be >= 3, got {settings['slots']}")
        if not 1 <= settings["agents"] <= MAX_AGENTS:
            raise ValueError(
                f"Playground: agents must be in 1..{MAX_AGENTS}, got {settings['agents']}"
            )
        if not 0 <= settings["agent"] < settings["agents"]:
            if "agent" in given:
                raise ValueError(
                    f"Playground: agent must be in 0..{settings['agents'] - 1} (one of the "
                    f"{settings['agents']} cars), got {settings['agent']}"
                )
            settings["agent"] = settings["agents"] - 1
        if settings["steps"] < 1:
            raise ValueError(f"Playground: steps must be >= 1, got {settings['steps']}")
        if settings["seed"] < 0:
            raise ValueError(f"Playground: seed must be >= 0, got {settings['seed']}")
        return settings

    def simulate(self, **changes: Any) -> tuple[Any, Any]:
        """Build the scene for the settings (with ``changes``) and step it; returns
        ``(sim, history)``. Draws nothing."""
        from . import agents as agents_mod
        from . import behaviours as beh
        from .history import History
        from .motion import Lerp
        from .scenarios import racetrack_geometry
        from .simulation import Simulation
        from .steering import Steering

        s = self._checked({**self.settings, **changes}, changes)
        n, k = int(s["agents"]), int(s["slots"])
        world, centre = racetrack_geometry()
        rng = np.random.default_rng(int(s["seed"]))
        offset = np.arange(n) * centre.length / n
        p, t = centre.point_at(offset), centre.tangent_at(offset)
        p = p + np.c_[-t[:, 1], t[:, 0]] * np.where(np.arange(n) % 2, 5.0, -5.0)[:, None]
        cars = agents_mod.Agents(n, slots=k, seed=int(s["seed"]))
        cars.add(
            p,
            velocity=t * 10.0,
            heading=np.arctan2(t[:, 1], t[:, 0]),
            radius=3.0,
            max_speed=rng.uniform(40.0, 60.0, n),
            steer_force=0.1,
        )
        steering = Steering(
            [
                beh.FollowPath(centre, look_ahead=25.0),
                beh.WallDanger(look_ahead=float(s["look_ahead"]), spread=1, falloff="linear"),
                beh.AgentDanger(radius=float(s["danger_radius"]), predictive=True, horizon=0.6),
            ],
            combine=s["combine"],
            resolve=s["resolve"],
            threshold=0.3,
            choose=s["choose"],
            rotate=True,
        )
        sim = Simulation(world, cars, steering, motion=Lerp(steer_force=0.1), slots=k)
        sim.configure_metrics(path=centre)
        history = History(sim, every=3)
        sim.step(1.0 / 30.0, steps=int(s["steps"]))
        history.detach()
        self.settings = s
        return sim, history

    def update(self, **changes: Any) -> PlaygroundView:
        """Apply ``changes`` to the settings, re-run the scene and redraw :attr:`figure`:
        the scene with trajectories on the left, the selected car's polar context map
        (interest bars, danger curve, chosen direction) on the right."""
        from . import plot
        from .plot._draw import SimView, _perceived_pose

        sim, history = self.simulate(**changes)
        s = self.settings
        i = int(s["agent"])
        fig = self.figure
        fig.clear()
        grid = fig.add_gridspec(1, 2, width_ratios=[2.3, 1])
        ax = fig.add_subplot(grid[0, 0])
        polar = fig.add_subplot(grid[0, 1], projection="polar")
        scene = plot.scene(sim, ax=ax, trajectories=history.positions, rays=True)
        pos = np.asarray(sim.agents.position)[i]
        ax.plot(
            *pos,
            marker="o",
            markersize=16,
            markerfacecolor="none",
            markeredgecolor="black",
            markeredgewidth=1.5,
        )
        ax.set_title(
            f"combine={s['combine']}, resolve={s['resolve']}, choose={s['choose']}, "
            f"{s['slots']} slots — {s['steps'] / 30:.1f} s",
            fontsize=10,
        )
        interest = np.array(sim.interest[i])
        danger = np.array(sim.danger[i])
        # The car's frame when it perceived these maps (the step's move turned it since).
        heading = float(_perceived_pose(sim)[1][i])
        chosen = np.asarray(sim.chosen_direction[i], dtype=np.float64)
        c, sn = np.cos(-heading), np.sin(-heading)  # world -> the car's frame
        chosen_local = np.array([c * chosen[0] - sn * chosen[1], sn * chosen[0] + c * chosen[1]])
        cmap = plot.context_map(
            interest,
            danger,
            chosen=chosen_local,
            strength=float(sim.strength[i]),
            threshold=SimView.of(sim).threshold,  # inf: resolve does not mask
            ax=polar,
        )
        polar.set_title(f"car {i} (its frame: 0° = ahead)", fontsize=10)
        m = sim.metrics()
        metrics = {
            "wall_contacts": m["collisions"]["agent_wall"],
            "agent_contacts": m["collisions"]["agent_agent"],
            "mean_progress": round(float((m.get("progress") or {}).get("mean") or 0.0), 1),
        }
        self.view = PlaygroundView(dict(s), sim, scene, cmap, interest, danger, metrics)
        if self._image is not None:
            self._image.value = self.png()
        return self.view

    def png(self, dpi: int = 80) -> bytes:
        """The current figure as PNG bytes."""
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=dpi)
        return buf.getvalue()

    def widgets(self):
        """ipywidgets controls and the picture, wired to :meth:`update`.

        Returns an ``ipywidgets.VBox`` (display it as the cell's last expression). Its
        ``controls`` attribute maps each setting to its widget; changing a widget's
        ``value`` (by hand or in code) re-runs and redraws.

        Raises
        ------
        ImportError
            ipywidgets is not installed (``pip install contextsteer[widgets]``).
        """
        try:
            import ipywidgets as w
        except ImportError as exc:
            raise ImportError(
                "Playground.widgets needs ipywidgets: pip install 'contextsteer[widgets]'"
            ) from exc
        s = self.settings
        style = {"description_width": "90px"}

        def slider(kind: Any, name: str, low: float, high: float, step: float, text: str) -> Any:
            """A slider over [low, high], widened to hold the current setting."""
            value = s[name]
            return kind(
                value=value,
                min=min(low, value),
                max=max(high, value),
                step=step,
                description=text,
                style=style,
            )

        controls = {
            "combine": w.Dropdown(
                options=CHOICES["combine"], value=s["combine"], description="combine", style=style
            ),
            "resolve": w.Dropdown(
                options=CHOICES["resolve"], value=s["resolve"], description="resolve", style=style
            ),
            "choose": w.Dropdown(
                options=CHOICES["choose"], value=s["choose"], description="choose", style=style
            ),
            # Each slider's range holds the current setting, so showing it never changes it.
            "slots": slider(w.IntSlider, "slots", 4, 64, 1, "slots"),
            "look_ahead": slider(w.FloatSlider, "look_ahead", 5.0, 60.0, 0.5, "look-ahead"),
            "danger_radius": slider(
                w.FloatSlider, "danger_radius", 1.0, 30.0, 0.5, "danger radius"
            ),
            "agents": slider(w.IntSlider, "agents", 1, MAX_AGENTS, 1, "agents"),
            "agent": w.IntSlider(
                value=s["agent"], min=0, max=s["agents"] - 1, description="map of car", style=style
            ),
            "steps": slider(w.IntSlider, "steps", 30, 900, 1, "steps"),
        }
        self._image = w.Image(format="png")
        status = w.HTML()

        busy: list[bool] = []

        def changed(_change: object = None) -> None:
            if busy:  # the car slider's own range change below
                return
            values = {name: c.value for name, c in controls.items()}
            values["agent"] = min(values["agent"], values["agents"] - 1)
            busy.append(True)
            try:  # the car slider offers exactly the cars there are
                controls["agent"].max = values["agents"] - 1
                controls["agent"].value = values["agent"]
            finally:
                busy.clear()
            view = self.update(**values)
            status.value = (
                f"wall contacts {view.metrics['wall_contacts']}, agent contacts "
                f"{view.metrics['agent_contacts']}, mean progress "
                f"{view.metrics['mean_progress']}"
            )

        for c in controls.values():
            c.observe(changed, names="value")
        changed()
        left = w.VBox([controls[n] for n in ("combine", "resolve", "choose", "slots")])
        right = w.VBox(
            [controls[n] for n in ("look_ahead", "danger_radius", "agents", "agent", "steps")]
        )
        box = w.VBox([w.HBox([left, right]), status, self._image])
        box.controls = controls
        box.changed = changed
        return box
