"""The built site in headless Chromium with every off-site request blocked."""
from __future__ import annotations


def visit(page, server, rel):
    page.goto(f"{server}/{rel}", wait_until="load")
    page.wait_for_timeout(300)


def test_every_page_loads_offline_without_errors(tour):
    for rel, seen in tour.items():
        assert seen["errors"] == [], f"{rel}: {seen['errors']}"
        assert seen["offsite"] == [], f"{rel}: {seen['offsite']}"


def test_math_is_typeset(tour):
    with_math = {rel: seen for rel, seen in tour.items() if seen["has_math"]}
    assert len(with_math) >= 10, sorted(with_math)  # the chapters' formulas are really there
    for rel, seen in with_math.items():
        assert seen["mjx"] > 0, rel
        assert seen["mjx_errors"] == 0, rel


def test_search_finds_chinese(page, server):
    visit(page, server, "search.html?q=%E6%B3%A8%E6%84%8F%E5%8A%9B")  # 注意力
    page.wait_for_selector("#search-results li", timeout=15_000)
    assert page.locator("#search-results li").count() >= 1


def visible_frame(slider):
    return slider.evaluate(
        "el => [...el.querySelectorAll('img[data-frame]')].filter(i => i.style.display !== 'none')"
        ".map(i => i.dataset.frame)")


def test_slider_moves_on_cat_eats_fish(page, server):
    visit(page, server, "chapters/04_cat_eats_fish.html")
    slider = page.locator(".attnbook-slider").first
    before = visible_frame(slider)
    assert len(before) == 1
    rng = slider.locator('input[type="range"]').first
    rng.focus()
    page.keyboard.press("ArrowRight")
    after = visible_frame(slider)
    assert len(after) == 1 and after != before
    assert slider.locator("output").first.inner_text() == "1.5"
    slider.locator("select").first.select_option("1")
    assert visible_frame(slider) != after
    img = slider.locator("img[data-frame]:visible")
    assert img.evaluate("i => i.naturalWidth") > 100  # the frame really decodes
