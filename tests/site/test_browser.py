"""The built site in headless Chromium with every off-site request blocked."""
from __future__ import annotations


def visit(page, server, rel):
    page.goto(f"{server}/{rel}", wait_until="load")
    page.wait_for_timeout(300)


def test_every_page_loads_offline_without_errors(page, server, pages):
    for rel in pages + ["index.html", "search.html"]:
        visit(page, server, rel)
        assert page.attnbook_errors == [], f"{rel}: {page.attnbook_errors}"
        assert page.attnbook_offsite == [], f"{rel}: {page.attnbook_offsite}"


def test_math_is_typeset(page, server, site, pages):
    for rel in pages:
        html = (site / rel).read_text(encoding="utf-8")
        if 'class="math' not in html:
            continue
        visit(page, server, rel)
        page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
        assert page.locator("mjx-container").count() > 0, rel
        assert page.locator("mjx-merror").count() == 0, rel


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
