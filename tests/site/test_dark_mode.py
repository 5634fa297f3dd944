"""Dark mode: a figure page rendered in each colour mode; the figure's background follows the page's.

Figures and slider frames are PNGs with transparent backgrounds (attnbook.setup()'s rcParams,
attnbook/infra/sliders.py keeps the alpha); in dark mode _static/attnbook.css inverts their lightness and
turns the hues back, so dark ink becomes light and the page's own background shows through.
"""
from __future__ import annotations

import io

import pytest

PAGE = "chapters/04_cat_eats_fish.html"


def _luminance(rgb) -> float:
    r, g, b = (c / 255 for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _shot(page, server, mode: str, selector: str):
    from PIL import Image

    page.add_init_script(f"localStorage.setItem('theme', '{mode}'); localStorage.setItem('mode', '{mode}');")
    page.goto(f"{server}/{PAGE}", wait_until="load")
    page.wait_for_timeout(300)
    assert page.evaluate("document.documentElement.dataset.theme") == mode
    element = page.locator(selector).first
    element.scroll_into_view_if_needed()
    figure = Image.open(io.BytesIO(element.screenshot())).convert("RGB")
    body = page.evaluate("getComputedStyle(document.body).backgroundColor")
    return figure, body


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(float(x)) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])


@pytest.mark.parametrize("selector", [".cell_output img", ".attnbook-frames img[data-frame]:visible"])
def test_figure_background_follows_the_page(browser, server, selector):
    corners = {}
    for mode in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=mode)
        page = context.new_page()
        try:
            figure, body = _shot(page, server, mode, selector)
        finally:
            context.close()
        w, h = figure.size
        corner = figure.getpixel((2, 2))  # figure margin: background only
        page_bg = _rgb(body)
        assert max(abs(a - b) for a, b in zip(corner, page_bg)) <= 24, (mode, selector, corner, page_bg)
        # and the figure has ink that contrasts with that background (text, axes)
        lums = [_luminance(figure.getpixel((x, y))) for x in range(0, w, 7) for y in range(0, h, 7)]
        bg = _luminance(page_bg)
        assert max(abs(l - bg) for l in lums) > 0.5, (mode, selector)
        corners[mode] = corner
    assert _luminance(corners["light"]) > 0.7 > 0.3 > _luminance(corners["dark"])
