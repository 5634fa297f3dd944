"""The built site in headless Chromium with every off-site request blocked."""
from __future__ import annotations

import json
import re
import runpy
import sys

import pytest

from conftest import ROOT, chinese_in_boxes  # tests/site/conftest.py


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


# -- deep dives (选读): one closed box each, that opens without scripts -------------------------------
sys.path.insert(0, str(ROOT / "tools"))
import book_text  # noqa: E402  (tools/book_text.py)


def deep_dive_pages() -> dict[str, list]:
    """Page of the site -> the deep dives of its notebook (tools/book_text.py)."""
    pages = {}
    for path in runpy.run_path(str(ROOT / "tools" / "book.py"))["NOTEBOOKS"]:
        runs = [r for r in book_text.deep_dive_runs(book_text.read(path)["cells"]) if r.level]
        if runs:
            pages[path.relative_to(ROOT).with_suffix(".html").as_posix()] = runs
    return pages


CONTRAST = """box => {
  const rgba = s => { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const over = (top, bottom) => top.slice(0, 3).map((v, i) => v * top[3] + bottom[i] * (1 - top[3]));
  let bg = [255, 255, 255, 1];
  for (const el of [document.documentElement, document.body, box]) {
    const c = rgba(getComputedStyle(el).backgroundColor); if (c[3] > 0) bg = [...over(c, bg), 1];
  }
  const label = box.querySelector('.attnbook-deep-dive-label');
  const labelBg = over(rgba(getComputedStyle(label).backgroundColor), bg);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const border = rgba(getComputedStyle(box).borderLeftColor);
  return {label: ratio(rgba(getComputedStyle(label).color), labelBg),
          title: ratio(rgba(getComputedStyle(box.querySelector('summary')).color), bg),
          border: ratio(border, bg), borderWidth: parseFloat(getComputedStyle(box).borderLeftWidth)};
}"""


#: Every deep-dive box of the page at once (one round trip per page, not ten per box): open or not,
#: its summary and label, whether its body shows, and (contrast: true) CONTRAST in light and dark mode.
BOXES_JS = """([contrast, CONTRAST]) => {
  const measure = eval(CONTRAST);
  // as Playwright's isVisible: a box, not visibility: hidden, and not inside a closed <details>
  // (whose content Chromium hides with content-visibility, which checkVisibility sees)
  const shows = el => { if (!el || !el.checkVisibility()) return false; const r = el.getBoundingClientRect();
                        return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const boxes = [...document.querySelectorAll('details.attnbook-deep-dive')];
  const out = boxes.map(box => {
    const summary = box.querySelector(':scope > summary');
    const label = summary && summary.querySelector('.attnbook-deep-dive-label');
    return {open: box.open, said: summary ? summary.innerText : '', label: label ? label.innerText : '',
            body: shows(box.querySelector(':scope > :not(summary)')), contrast: {}};
  });
  if (contrast) for (const mode of ['light', 'dark']) {
    document.documentElement.dataset.theme = mode;
    boxes.forEach((box, n) => { out[n].contrast[mode] = measure(box); });
  }
  return out;
}"""


def test_deep_dives_are_closed_boxes_that_open_without_scripts(browser, server, site):
    """Every deep dive of a page is one <details class="attnbook-deep-dive">, closed, its summary the
    “选读” label, its title and the note; a click opens it with JavaScript off; label, title and the
    box's border read in light and dark mode; the search index has its title."""
    pages = deep_dive_pages()
    if not pages:
        pytest.skip("本书还没有选读（deep-dive 标签）")
    index = (site / "searchindex.js").read_text(encoding="utf-8")
    problems = []
    for javascript in (False, True):
        context = browser.new_context(viewport={"width": 1280, "height": 800}, java_script_enabled=javascript)
        page = context.new_page()
        page.route(re.compile("^(?!" + re.escape(server) + "/|data:)"), lambda r: r.abort())
        for rel, runs in pages.items():
            page.goto(f"{server}/{rel}", wait_until="load")
            boxes = page.evaluate(BOXES_JS, [javascript, CONTRAST])
            if len(boxes) != len(runs):
                problems.append(f"{rel}：{len(boxes)} 个选读框，笔记本里有 {len(runs)} 个选读")
                continue
            for box, run in zip(boxes, runs):
                title = book_text.title_text(run.title)
                if box["open"] or title not in box["said"] or "第一次阅读可以跳过" not in box["said"] \
                        or box["label"] != "选读":
                    problems.append(f"{rel}：选读“{run.title}”没有关着，或标题不对：{box['said']!r}")
                if box["body"]:
                    problems.append(f"{rel}：选读“{run.title}”关着时内容可见")
                for mode, seen in box["contrast"].items():
                    if min(seen["label"], seen["title"]) < 4.5 or seen["border"] < 1.5 or seen["borderWidth"] < 3:
                        problems.append(f"{rel}：选读“{run.title}”在{mode}模式下看不清：{seen}")
                if json.dumps(f"选读：{title}")[1:-1] not in index and f"选读：{title}" not in index:
                    problems.append(f"{rel}：搜索索引里没有选读“{run.title}”")
            if not javascript:  # a real click on the first summary (the others: the same click from
                # the DOM, which the browser handles the same way), then every box is open and shows its body
                page.locator("details.attnbook-deep-dive > summary").first.click()
                page.evaluate("() => [...document.querySelectorAll('details.attnbook-deep-dive > summary')]"
                              ".slice(1).forEach(s => s.click())")
                for box, run in zip(page.evaluate(BOXES_JS, [False, CONTRAST]), runs):
                    if not box["open"] or not box["body"]:
                        problems.append(f"{rel}：没有脚本时点不开选读“{run.title}”")
        context.close()
    assert not problems, "\n".join(problems)


def test_chinese_is_drawn_in_a_chinese_font(page, server):
    """Every shown piece of Chinese on ch04 (prose, headings, the admonition's title, table headers,
    code comments, the sidebar) is drawn in a font that has its glyphs: a system CJK font, or else the
    book's own (the CI machine has no CJK font, so there it must be the book's), never empty boxes."""
    visit(page, server, "chapters/04_cat_eats_fish.html")
    seen = {}
    for selector in ("article p", "article h1, article h2, article h3", ".admonition-title",
                     "table.dataframe th", "article .highlight .c1, article .highlight .s2",
                     ".bd-sidebar-primary a"):
        seen[selector], boxes = chinese_in_boxes(page, selector)
        assert not boxes, f"{selector}：\n" + "\n".join(boxes[:5])
    assert min(seen.values()) >= 1 and seen["article p"] >= 20, seen
