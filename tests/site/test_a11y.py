"""Accessibility of the built site: axe-core (WCAG 2.1 A/AA) on every page, alt text, Chinese UI."""
from __future__ import annotations

import json
import re
import sys

#: Remaining critical/serious violations, each with the reason it is accepted. Empty today.
JUSTIFIED: dict[str, str] = {}


def test_axe_no_serious_violations(tour, site):
    report = {rel: seen["axe"] for rel, seen in tour.items() if "axe" in seen}
    serious = {rel: [v for v in vs if v["impact"] in ("critical", "serious") and v["id"] not in JUSTIFIED]
               for rel, vs in report.items()}
    serious = {rel: vs for rel, vs in serious.items() if vs}
    counts: dict[str, int] = {}
    for vs in report.values():
        for v in vs:
            counts[f"{v['id']} ({v['impact']})"] = counts.get(f"{v['id']} ({v['impact']})", 0) + 1
    sys.stdout.write(f"\naxe-core {len(report)} 页；各规则出现的页数：{json.dumps(counts, ensure_ascii=False)}\n")
    # what axe left out (conftest.axe_scope) still leaves every chapter, appendix page and a deck checked,
    # and highlighted code on a page that has it
    assert {rel for rel in tour if rel.startswith(("chapters/", "appendix/"))} <= set(report)
    assert any(rel.startswith("slides/") and rel != "slides/index.html" for rel in report)
    code_pages = [rel for rel, seen in tour.items() if seen.get("axe_code")]
    assert len(code_pages) == 1 and 'class="highlight' in (site / code_pages[0]).read_text(encoding="utf-8")
    assert not serious, json.dumps(serious, ensure_ascii=False, indent=1)


def test_every_image_has_chinese_alt(site, pages):
    """Every figure and slider frame says in Chinese what it shows (not a file name)."""
    han = re.compile(r"[\u4e00-\u9fff]")
    bad = []
    for rel in pages:
        html = (site / rel).read_text(encoding="utf-8")
        for tag in re.findall(r"<img\b[^>]*>", html):
            alt = re.search(r'\balt="([^"]*)"', tag)
            if "logo" in tag or "data:image/svg" in tag:
                continue
            # "图：代码单元画出的图" is the site's fallback for a PNG without a description:
            # a notebook whose outputs predate attnbook's alt text (re-execute it)
            if alt is None or not han.search(alt.group(1)) or alt.group(1) == "图：代码单元画出的图":
                bad.append((rel, tag[:160]))
    assert not bad, bad[:10]


ENGLISH_UI = ["Show code cell", "Hide code cell", "Toggle hidden content", "Search this book",
              "Color mode", "Launch interactive content", "Source repositories"]


def test_theme_strings_are_chinese(page, server):
    page.goto(f"{server}/chapters/04_cat_eats_fish.html", wait_until="load")
    page.wait_for_timeout(300)
    html = page.content()
    left = [s for s in ENGLISH_UI if s in html]
    assert not left, left


def test_figure_alt_and_slider_alt_are_chinese():
    """The helpers behind the alt text (no site needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import attnbook
    from attnbook.infra.plots import figure_alt, heatmap
    from attnbook.infra.sliders import key_frames

    attnbook.setup()
    ax = heatmap([[1.0, 0.0], [0.5, 0.5]], row_labels="猫鱼", col_labels="猫鱼", title="注意力权重")
    assert figure_alt(ax.figure).startswith("图：热力图「注意力权重」（横轴：键")

    def fig_fn(scale):
        return heatmap([[scale, 0.0], [0.0, scale]], vmin=0, vmax=3, title=f"缩放 {scale}").figure

    html = attnbook.slider(fig_fn, {"scale": [0.5, 1.0, 2.0, 3.0]}, labels={"scale": "缩放"}).html()
    alts = re.findall(r'<img data-frame="[^"]*" alt="([^"]*)"', html)
    assert len(alts) == 4 and all(a.startswith("图：热力图「缩放") and "缩放 = " in a for a in alts)
    assert html.count('class="attnbook-key"') == 4  # ≤ 6 frames: every frame is a key frame
    grid = [(i, j) for i in range(10) for j in range(2)]
    keys = key_frames(grid, (4, 1))
    assert 3 <= len(keys) <= 6 and (4, 1) in keys and keys[0] == grid[0] and keys[-1] == grid[-1]
