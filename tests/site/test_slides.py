"""The reveal.js decks (tools/make_slides.py, `make slides`) in headless Chromium, offline."""
from __future__ import annotations

import pathlib
import re
from html import unescape

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def decks(site) -> list:
    return sorted((site / "slides").glob("*.slides.html"))


@pytest.fixture(scope="module")
def slides(site):
    if not decks(site):
        pytest.fail("_build/html/slides 里没有幻灯片：先运行 make slides（tools/make_slides.py）")
    return site / "slides"


def test_every_chapter_has_a_deck_and_reveal_is_served_with_the_site(slides):
    for notebook in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        assert (slides / f"{notebook.stem}.slides.html").exists(), notebook.name
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
    assert '<aside class="notes">' in html  # {dropdown} hints and solutions
    text = unescape(re.sub(r"<[^>]+>", "", html))  # code is split into highlighted spans
    assert "google.colab" not in text  # the setup cell is left out
    assert 'attnbook.check("04-1", answer)' in text  # the exercise ...
    assert "answer = torch.softmax" not in text  # ... but not its reference solution (hide-cell)


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
    that of today's notebook, script and nbconvert (else a stale deck would be shipped)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_slides", ROOT / "tools" / "make_slides.py")
    make_slides = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_slides)
    keys = slides.parent.parent / ".cache" / "slides"
    for notebook in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        stored = keys / f"{notebook.stem}.sha256"
        assert stored.exists() and stored.read_text() == make_slides.deck_key(notebook), notebook.name
