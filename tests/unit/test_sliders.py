from __future__ import annotations

import re

import matplotlib.pyplot as plt
import pytest

import attnbook
from attnbook.infra.sliders import Slider, static_mode


def line_figure(slope, label):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, slope])
    ax.set_title(f"斜率 {slope} {label}")
    return fig


@pytest.fixture()
def slider() -> Slider:
    attnbook.setup()
    return attnbook.slider(line_figure, {"slope": [1, 2, 3, 4], "label": ["甲", "乙"]},
                           initial={"slope": 3}, labels={"slope": "斜率"})


def test_static_html_has_every_frame_and_no_external_script(slider):
    html = slider.html()
    frames = re.findall(r'data-frame="([0-9,]+)"', html)
    assert sorted(frames) == sorted(f"{i},{j}" for i in range(4) for j in range(2))
    assert '<input type="range" min="0" max="3"' in html        # numbers -> slider
    assert "<select" in html and ">乙</option>" in html         # strings -> menu
    assert "src=\"http" not in html and "<script src" not in html
    assert html.count("display:block") == 1                      # exactly the initial frame shown
    assert re.search(r'data-frame="2,0"[^>]*display:block', html)


def test_static_html_is_deterministic(slider):
    other = attnbook.slider(line_figure, {"slope": [1, 2, 3, 4], "label": ["甲", "乙"]},
                            initial={"slope": 3}, labels={"slope": "斜率"})
    assert slider.html() == other.html()
    assert not re.search(r'id="[^"]*[0-9a-f]{8}', slider.html())  # no random ids


def test_frames_differ_and_are_small(slider):
    frames = slider.frames()
    assert len(set(frames.values())) == len(frames)
    assert max(len(png) for png in frames.values()) < 40_000


def test_defaults_to_middle_value():
    s = attnbook.slider(line_figure, {"slope": [1, 2, 3], "label": ["a", "b"]})
    assert s.initial == {"slope": 2, "label": "a"}


def test_static_mode_follows_environment(monkeypatch):
    monkeypatch.setenv("ATTNBOOK_STATIC", "1")
    assert static_mode()
    monkeypatch.setenv("ATTNBOOK_STATIC", "0")
    assert static_mode()  # no running kernel here, so still static


def test_live_widget_redraws(slider):
    pytest.importorskip("ipywidgets")
    box = slider.widget()
    image = box.attnbook_image
    first = image.value
    box.attnbook_controls["slope"].value = 0  # index of slope=1
    assert image.value != first
    assert image.value == slider.render({"slope": 1}, compact=False)
    box.attnbook_controls["label"].value = 1
    assert image.value == slider.render({"slope": 1, "label": "乙"}, compact=False)


def test_live_redraw_renders_every_uncached_frame():
    """Each move draws that frame (its speed, ≤ 200 ms median, is measured by tools/bench.py)."""
    pytest.importorskip("ipywidgets")
    attnbook.setup()
    s = attnbook.slider(line_figure, {"slope": list(range(5)), "label": ["甲"]}, initial={"slope": 0})
    box = s.widget()
    seen = [box.attnbook_image.value]
    for index in range(1, 5):
        box.attnbook_controls["slope"].value = index
        seen.append(box.attnbook_image.value)
        assert seen[-1] == s.render({"slope": index, "label": "甲"}, compact=False)
    assert len(set(seen)) == len(seen)


def test_repr_names_the_grid(slider):
    assert repr(slider) == "<attnbook 滑块：slope(4) × label(2)>"
