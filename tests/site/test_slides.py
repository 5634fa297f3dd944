"""The reveal.js decks (tools/make_slides.py, `make slides`) in headless Chromium, offline: one per
chapter, and the two decks of the teacher's 2 × 45 minute plan (session1, session2)."""
from __future__ import annotations

import functools
import importlib.util
import pathlib
import re
import sys
from html import unescape

import pytest

from conftest import _watched_page, chinese_in_boxes  # tests/site/conftest.py

ROOT = pathlib.Path(__file__).resolve().parents[2]
SESSIONS = ("session1", "session2")


def decks(site) -> list:
    return sorted((site / "slides").glob("*.slides.html"))


@functools.lru_cache(maxsize=None)
def make_slides():
    spec = importlib.util.spec_from_file_location("make_slides", ROOT / "tools" / "make_slides.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_slides", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def slides(site):
    if not decks(site):
        pytest.fail("_build/html/slides 里没有幻灯片：先运行 make slides（tools/make_slides.py）")
    return site / "slides"


def test_every_chapter_has_a_deck_and_reveal_is_served_with_the_site(slides):
    for notebook in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        assert (slides / f"{notebook.stem}.slides.html").exists(), notebook.name
    for name in SESSIONS:  # the decks of the teacher's 2 × 45 minute plan
        assert (slides / f"{name}.slides.html").exists(), name
    for part in ["dist/reveal.js", "dist/reveal.css", "dist/theme/white.css", "plugin/notes/notes.js", "LICENSE"]:
        assert (slides / "revealjs" / part).exists(), part
    index = (slides / "index.html").read_text(encoding="utf-8")
    assert all(deck.name in index for deck in decks(slides.parent))


def test_decks_load_nothing_from_another_host(slides):
    for deck in decks(slides.parent):
        html = deck.read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|link|img|iframe)[^>]*>", html):
            assert not re.search(r'(?:src|href)="(?:https?:)?//', tag), f"{deck.name}: {tag[:120]}"
        assert "require.js" not in html and "mermaid" not in html and "MathJax.Hub" not in html


def test_solutions_are_speaker_notes_not_slides(slides):
    deck = slides / "04_cat_eats_fish.slides.html"
    if not deck.exists():
        pytest.skip("没有第 4 章的幻灯片")
    html = deck.read_text(encoding="utf-8")
    notes = re.findall(r'<aside class="notes">(.*?)</aside>', html, flags=re.S)
    assert notes  # {dropdown} hints and solutions, and the reference-solution cells
    def text(part: str) -> str:
        return unescape(re.sub(r"<[^>]+>", "", part))  # code is split into highlighted spans
    shown = text(re.sub(r'<aside class="notes">.*?</aside>', "", html, flags=re.S))
    assert "google.colab" not in shown  # the setup cell is left out
    assert 'attnbook.check("04-1", answer)' in shown  # the exercise ...
    assert "answer = torch.softmax" not in shown  # ... but not its reference solution (hide-cell) ...
    assert "answer = torch.softmax" in text("".join(notes))  # ... which the teacher has in the notes


def test_every_chapter_page_links_its_deck(site, slides):
    for page in sorted((site / "chapters").glob("[0-9][0-9]_*.html")):
        html = page.read_text(encoding="utf-8")
        link = re.search(r'href="([^"]*slides/[^"]+\.slides\.html)"', html)
        assert link, f"{page.name}：页面顶部没有“幻灯片”按钮（_ext/slides_link.py 是否已注册？）"
        assert (page.parent / link.group(1)).resolve().exists(), f"{page.name} → {link.group(1)}"


def test_step_through_a_deck(page, server, slides):
    deck = slides / "04_cat_eats_fish.slides.html"
    deck = deck if deck.exists() else decks(slides.parent)[0]
    page.goto(f"{server}/slides/{deck.name}", wait_until="load")
    page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=15_000)
    assert page.evaluate("Reveal.getTotalSlides()") >= 5
    seen = [page.evaluate("JSON.stringify(Reveal.getIndices())")]
    for _ in range(6):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(150)
        seen.append(page.evaluate("JSON.stringify(Reveal.getIndices())"))
    assert len(set(seen)) == len(seen), f"方向键没有前进：{seen}"
    assert page.evaluate("Reveal.getIndices().h") >= 1
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(150)
    assert page.evaluate("JSON.stringify(Reveal.getIndices())") == seen[-2]
    if "$" in deck.read_text(encoding="utf-8"):
        page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
        assert page.locator("mjx-merror").count() == 0
    assert page.attnbook_errors == [], page.attnbook_errors
    assert page.attnbook_offsite == [], page.attnbook_offsite


def test_every_deck_was_built_from_the_current_notebook(slides):
    """make_slides reuses a deck whose inputs have not changed; the key it stored for each deck must be
    that of today's notebook(s), script, MyST renderer and nbconvert (else a stale deck would be shipped)."""
    keys = slides.parent.parent / ".cache" / "slides"
    for notebook in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        stored = keys / f"{notebook.stem}.sha256"
        assert stored.exists() and stored.read_text() == make_slides().deck_key(notebook), notebook.name
    for name in SESSIONS:
        stored = keys / f"{name}.sha256"
        assert stored.exists() and stored.read_text() == make_slides().deck_key(name), name


#: One call per deck: every slide (every sub-slide of every stack) is shown with Reveal.slide(h, v) and
#: measured once the fonts, MathJax and the figures are in. A slide overflows when its own box scrolls
#: or when any element in it (a table, a figure, a formula, a code block) reaches past the slide's
#: edge, even inside a box that scrolls or clips. Body text is the prose of the Markdown cells.
PROJECTOR_JS = r"""
async () => {
  await document.fonts.ready;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  const scale = Reveal.getScale();
  const out = {scale, overflow: [], font: 1e9, fontAt: '', sliders: [], raw: [], merror: 0, slides: 0};
  const inside = 'pre *, mjx-container *, aside, aside *, .attnbook-controls *';
  [...document.querySelectorAll('.reveal .slides > section')].forEach((stack, h) => {
    const leaves = [...stack.querySelectorAll(':scope > section')];
    (leaves.length ? leaves : [stack]).forEach((slide, v) => {
      Reveal.slide(h, v);
      out.slides += 1;
      const box = slide.getBoundingClientRect();
      let worst = slide.scrollHeight - slide.clientHeight, what = 'the slide itself';
      for (const el of slide.querySelectorAll('*')) {
        if (el.matches(inside)) continue;
        const r = el.getBoundingClientRect();
        if (!r.width && !r.height) continue;
        const past = Math.max(r.right - box.right, r.bottom - box.bottom) / scale;
        if (past > worst) { worst = past; what = `<${el.tagName.toLowerCase()}> ${el.textContent.trim().slice(0, 40)}`; }
      }
      if (worst > 2) out.overflow.push(`${h + 1}.${v} (${Math.round(worst)} px: ${what})`);
      for (const p of slide.querySelectorAll('.jp-RenderedMarkdown p, .jp-RenderedMarkdown li')) {
        if (p.closest('aside')) continue;
        const size = parseFloat(getComputedStyle(p).fontSize) * scale;
        if (size < out.font) { out.font = size; out.fontAt = `${h + 1}.${v} ${p.textContent.trim().slice(0, 20)}`; }
      }
      if (slide.querySelector('.attnbook-slider') && !slide.querySelector('.jp-RenderedMarkdown p'))
        out.sliders.push(`${h + 1}.${v}`);
    });
  });
  // what the Markdown says (slides and speaker notes), without code: no MyST, no glue keys
  for (const md of document.querySelectorAll('.jp-RenderedMarkdown')) {
    const walker = document.createTreeWalker(md, NodeFilter.SHOW_TEXT);
    let text = '';
    while (walker.nextNode()) {
      if (!walker.currentNode.parentElement.closest('code, pre, mjx-container')) text += walker.currentNode.textContent;
    }
    for (const m of text.matchAll(/\{(?:glue(?::\w+)?|term|ref|numref|doc|math|eq|dropdown|admonition|note|tip|warning|important)\}|(?:^|\n)\s*(?:```|:::)\{|\b[A-Za-z_]\w*:\.\d+[a-z%]/g))
      out.raw.push(text.slice(Math.max(0, m.index - 20), m.index + 30).trim());
  }
  out.merror = document.querySelectorAll('mjx-merror').length;
  return out;
}
"""


SIZES = [(1280, 720), (1024, 768)]


@pytest.fixture(scope="module")
def deck_tour(browser, server, slides) -> dict[str, dict]:
    """Every deck loaded once (loading a deck and typesetting its formulas is most of this file's
    time): at 1280 × 720 the projector measurement and the 选读 labels, then the same page resized to
    1024 × 768 (Reveal lays the deck out again) and measured again; with the console errors, the
    off-site requests and the formulas seen while it loaded."""
    context = browser.new_context(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    page = _watched_page(context, server)
    seen = {}
    for deck in decks(slides.parent):
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        page.attnbook_errors.clear()
        page.attnbook_offsite.clear()
        page.goto(f"{server}/slides/{deck.name}", wait_until="load")
        page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=15_000)
        entry = {SIZES[0]: page.evaluate(PROJECTOR_JS), "labels": page.evaluate(LABELS_JS)}
        for width, height in SIZES[1:]:
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("Reveal.layout()")
            entry[(width, height)] = page.evaluate(PROJECTOR_JS)
        entry["has_math"] = "$" in deck.read_text(encoding="utf-8")
        entry["mjx"] = page.locator("mjx-container").count()
        entry["errors"], entry["offsite"] = list(page.attnbook_errors), list(page.attnbook_offsite)
        seen[deck.name] = entry
    context.close()
    return seen


def test_every_deck_loads_offline_and_typesets_its_formulas(deck_tour):
    """What tests/site/test_browser.py checks on the pages (its tour leaves the decks to this file)."""
    for name, seen in deck_tour.items():
        assert seen["errors"] == [], f"{name}: {seen['errors']}"
        assert seen["offsite"] == [], f"{name}: {seen['offsite']}"
        assert seen["mjx"] > 0 or not seen["has_math"], f"{name}：公式没有排版"
    assert sum(seen["has_math"] for seen in deck_tour.values()) >= 10


@pytest.mark.parametrize("size", SIZES, ids=["1280x720", "1024x768"])
def test_every_slide_fits_a_projector(deck_tour, size):
    """Every deck (chapters and the 2 × 45 minute plan) at two projector resolutions: no slide overflows,
    body text is drawn at 28 px or more (at 1280 × 720), a slider shares its slide with its instruction,
    and no glue key or MyST reaches a slide or a speaker note."""
    width, height = size
    problems, total = [], 0
    for name, seen in deck_tour.items():
        found = seen[size]
        total += found["slides"]
        if found["overflow"]:
            problems.append(f"{name}：{len(found['overflow'])} 张幻灯片放不下（第 h.v 张）："
                            + "；".join(found["overflow"][:6]))
        if found["sliders"]:
            problems.append(f"{name}：滑块和它的说明不在同一张幻灯片上：{found['sliders']}")
        if found["raw"]:
            problems.append(f"{name}：没有渲染的 MyST 或 glue 键：{found['raw'][:5]}")
        if found["merror"]:
            problems.append(f"{name}：{found['merror']} 个公式排版出错")
        if size == SIZES[0] and found["font"] < 28:
            problems.append(f"{name}：正文字号 {found['font']:.1f} px < 28 px（{found['fontAt']}）")
    assert total > 0
    assert not problems, f"{width}×{height}：\n" + "\n".join(problems)


def _deep_dive_titles() -> dict[str, list[str]]:
    """Chapter notebook stem -> the titles of its deep dives (选读)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import book_text  # noqa: PLC0415

    out = {}
    for notebook in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        runs = [r for r in book_text.deep_dive_runs(book_text.read(notebook)["cells"]) if r.level]
        if runs:
            out[notebook.stem] = [book_text.title_text(r.title) for r in runs]
    return out


DEEP_DIVE_CELL = re.compile(r'class="[^"]*\bcelltag_deep-dive\b')  # a cell (not the template's CSS)
LABELS_JS = r"""
() => {
  const out = {labelled: [], unlabelled: []};
  for (const slide of document.querySelectorAll('.reveal .slides section:not(.stack)')) {
    if (!slide.querySelector('.celltag_deep-dive')) continue;
    const label = getComputedStyle(slide, '::after').content;
    (label === '"选读"' ? out.labelled : out.unlabelled).push(slide.innerText.trim().slice(0, 40));
  }
  return out;
}
"""


def test_deep_dives_are_labelled_in_chapter_decks_and_left_out_of_session_decks(deck_tour, slides):
    """Every slide of a chapter deck that shows a deep dive's cells carries the 选读 label; each deep
    dive's heading is on such a slide. The 2 × 45 minute session decks hold no deep dive."""
    titles = _deep_dive_titles()
    if not titles:
        pytest.skip("本书还没有选读（deep-dive 标签）")
    problems = []
    for stem, names in titles.items():
        deck = slides / f"{stem}.slides.html"
        if not DEEP_DIVE_CELL.search(deck.read_text(encoding="utf-8")):
            problems.append(f"{deck.name}：没有选读的单元")
            continue
        seen = deck_tour[deck.name]["labels"]
        if seen["unlabelled"]:
            problems.append(f"{deck.name}：选读的幻灯片没有“选读”标签：{seen['unlabelled'][:3]}")
        shown = "\n".join(seen["labelled"])
        problems += [f"{deck.name}：选读“{t}”的标题不在带标签的幻灯片上" for t in names if t[:10] not in shown]
    every = [t for names in titles.values() for t in names]
    for name in SESSIONS:
        html = (slides / f"{name}.slides.html").read_text(encoding="utf-8")
        if DEEP_DIVE_CELL.search(html) or [t for t in every if f"选读：{t}" in html]:
            problems.append(f"{name}.slides.html：课时幻灯片里有选读")
    assert not problems, "\n".join(problems)


def test_chinese_on_a_slide_is_drawn_in_a_chinese_font(page, server, slides):
    """The prose and the Chinese in code comments of a deck are drawn in a font that has their glyphs
    (on a machine without a CJK font: the book's own, served with the site)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server}/slides/04_cat_eats_fish.slides.html", wait_until="load")
    page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=15_000)
    for selector in (".jp-RenderedMarkdown p", ".highlight pre .c1"):
        page.evaluate("""sel => { const el = [...document.querySelectorAll(sel)]
            .find(e => /[\\u4e00-\\u9fff]/.test(e.textContent));
            Reveal.slide(...Object.values(Reveal.getIndices(el.closest('section')))); }""", selector)
        _, boxes = chinese_in_boxes(page, selector)
        assert not boxes, f"{selector}：\n" + "\n".join(boxes[:5])
