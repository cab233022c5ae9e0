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
