"""The playground (notebook 08) runs headless: update() directly and through its widgets."""

import numpy as np
import pytest

from contextsteer.playground import CHOICES, DEFAULTS, Playground


def test_update_reruns_and_redraws():
    pg = Playground(agents=3, steps=30)
    first = pg.update()
    assert first.settings == {**DEFAULTS, "agents": 3, "steps": 30}
    assert first.interest.shape == (16,) and first.danger.shape == (16,)
    assert len(first.scene.rays.get_segments()) == 3 * 16
    assert len(first.context_map.interest.patches) == 16
    assert len(pg.figure.axes) == 2 and pg.figure.axes[1].name == "polar"
    second = pg.update(slots=8, resolve="subtract", choose="argmax", agent=2)
    assert len(second.context_map.interest.patches) == 8
    assert second.sim is not first.sim and pg.settings["resolve"] == "subtract"
    assert len(pg.figure.axes) == 2  # redrawn, not stacked
    assert pg.png()[:4] == b"\x89PNG"


@pytest.mark.parametrize("stage", sorted(CHOICES))
def test_every_named_option_runs(stage):
    pg = Playground(agents=2, steps=10)
    for option in CHOICES[stage]:
        view = pg.update(**{stage: option})
        assert np.isfinite(view.interest).all()


def test_bad_settings():
    with pytest.raises(ValueError, match="resolve must be one of"):
        Playground(resolve="nope")
    with pytest.raises(ValueError, match="unknown setting"):
        Playground(wings=2)
    with pytest.raises(ValueError, match="slots must be >= 3"):
        Playground().update(slots=2)


def test_widgets_call_update_on_change():
    pytest.importorskip("ipywidgets")
    pg = Playground(agents=3, steps=30)
    box = pg.widgets()
    assert set(box.controls) == {
        "combine",
        "resolve",
        "choose",
        "slots",
        "look_ahead",
        "danger_radius",
        "agents",
        "agent",
        "steps",
    }
    image = box.children[-1]
    before = image.value
    assert before[:4] == b"\x89PNG"
    box.controls["resolve"].value = "scale"  # as a user would in the notebook
    assert pg.settings["resolve"] == "scale" and pg.view.settings["resolve"] == "scale"
    box.controls["slots"].value = 8
    assert len(pg.view.context_map.interest.patches) == 8
    assert image.value != before
    box.controls["agents"].value = 2  # the mapped car follows the count
    box.controls["agent"].value = 5
    assert pg.settings["agent"] == 1


@pytest.mark.parametrize(
    "settings, error, match",
    [
        ({"agent": 7, "agents": 4}, ValueError, r"agent must be in 0\.\.3"),
        ({"agent": -2}, ValueError, r"agent must be in 0\.\.11"),
        ({"slots": 8.7}, TypeError, "slots must be an int"),
        ({"agents": "3"}, TypeError, "agents must be an int"),
        ({"look_ahead": float("inf")}, ValueError, "look_ahead must be finite and > 0"),
        ({"danger_radius": True}, TypeError, "danger_radius must be a number"),
        ({"agents": 41}, ValueError, r"agents must be in 1\.\.40"),
    ],
)
def test_a_setting_the_playground_cannot_show_is_refused_not_replaced(settings, error, match):
    with pytest.raises(error, match=match):
        Playground(**settings)
    with pytest.raises(error, match=match):
        Playground(agents=12).update(**settings)


def test_a_selection_fewer_cars_no_longer_have_moves_to_the_last_car():
    pg = Playground(agents=6, agent=5, steps=10)
    assert pg.update(agents=3).settings["agent"] == 2


def test_only_the_mask_rule_marks_slots_as_masked():
    """The polar map marks a slot only where the simulation's resolve masked it (it used a
    fixed 0.3 for every resolve mode, so slots still positive after subtract were marked)."""
    for resolve in CHOICES["resolve"]:
        view = Playground(agents=6, steps=60, resolve=resolve).update()
        marked = view.context_map.masked
        count = 0 if marked is None else len(marked.get_xdata())
        if resolve == "mask":
            assert count == int(np.count_nonzero(view.danger > 0.3))
        else:
            assert count == 0, resolve


def test_widgets_show_the_settings_they_were_given():
    """Sliders whose range did not hold a setting changed it on display (35 cars became
    30, 10 steps 30); the car slider offers exactly the cars there are."""
    pytest.importorskip("ipywidgets")
    given = {"agents": 35, "agent": 33, "steps": 10, "look_ahead": 100.0, "danger_radius": 0.5}
    pg = Playground(**given)
    box = pg.widgets()
    assert {name: pg.settings[name] for name in given} == given
    assert box.controls["agent"].max == 34
    box.controls["agents"].value = 5
    assert box.controls["agent"].max == 4 and box.controls["agent"].value == 4
    assert pg.settings["agent"] == 4 and pg.view.settings["agents"] == 5
