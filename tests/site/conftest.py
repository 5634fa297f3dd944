"""Fixtures for tests of the built site (_build/html): a local HTTP server and headless Chromium.

Every test here carries the marker ``site``: a bare ``pytest`` leaves them out (pyproject's addopts),
``pytest -m site tests/site`` runs them, and they skip, saying why, when no site is built.
Chromium: ``$CHROMIUM`` if set, else ``chromium`` on the PATH, else /usr/bin/chromium.
The site: ``$ATTNBOOK_SITE`` if set (a built site's html folder, e.g. one built with
``jupyter-book build . --path-output DIR``: DIR/_build/html), else _build/html.
"""
from __future__ import annotations

import functools
import http.server
import os
import pathlib
import re
import sys
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = pathlib.Path(os.environ.get("ATTNBOOK_SITE") or ROOT / "_build" / "html").resolve()
sys.path.insert(0, str(ROOT / "tools"))
from make_pdf import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  one definition for the tools and the tests


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config, items) -> None:
    here = pathlib.Path(__file__).parent
    for item in items:
        if here in pathlib.Path(item.path).parents:
            item.add_marker(pytest.mark.site)


@pytest.fixture(scope="session")
def site() -> pathlib.Path:
    if not (SITE / "index.html").exists():
        if os.environ.get("ATTNBOOK_SITE"):
            pytest.fail(f"ATTNBOOK_SITE={SITE} 里没有 index.html：它应指向一个已生成网站的 html 目录")
        pytest.skip("_build/html 尚未生成（先运行 make html 或 make html-noexec），跳过网站测试")
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not pathlib.Path(CHROMIUM).exists():
        pytest.fail(f"找不到 Chromium：{CHROMIUM}（apt-get install chromium，或用环境变量 CHROMIUM=/路径 指定）")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture()
def page(browser, server):
    """A Chromium page that records console errors and blocks (and records) off-site requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield _watched_page(context, server)
    context.close()


def _watched_page(context, server):
    page = context.new_page()
    page.attnbook_offsite = []
    page.attnbook_errors = []

    def block(r):
        page.attnbook_offsite.append(r.request.url)
        r.abort()

    # Only requests that leave the local site are routed through Python (routing every request
    # made each page load a third slower); those are recorded and blocked.
    page.route(re.compile("^(?!" + re.escape(server) + "/|data:)"), block)
    page.on("console", lambda m: m.type == "error" and page.attnbook_errors.append(m.text))
    page.on("pageerror", lambda e: page.attnbook_errors.append(str(e)))
    return page


@pytest.fixture(scope="session")
def pages(site) -> list[str]:
    """Every content page of the site, relative to _build/html."""
    return html_pages(site)


def html_pages(site: pathlib.Path) -> list[str]:
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if rel.startswith(("_static/", "_sources/")) or rel in ("genindex.html", "search.html", "index.html"):
            continue
        pages.append(rel)
    return pages


def _axe_source() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("attnbook_axe", ROOT / "tools" / "axe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.axe_script().read_text(encoding="utf-8")


AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


#: The page on which axe-core also checks the highlighted code. Every page colours code with the
#: same Pygments stylesheet, and the code's thousands of <span>s are half of axe's time on a page.
AXE_CODE_PAGE = "chapters/09_masks.html"
#: The one deck axe-core checks: every deck comes from the same template (tools/make_slides.py) and
#: carries its chapter's cells, which axe checks on the chapter's page.
AXE_DECK = "slides/12_training_pitfalls.slides.html"


def is_deck(rel: str) -> bool:
    """A reveal.js deck (slides/NAME.slides.html), not the decks' index page."""
    return rel.startswith("slides/") and rel.endswith(".slides.html")


def axe_scope(rel: str) -> list[list[str]] | None:
    """What axe-core leaves out on page ``rel`` (None: the page is not checked).

    Always MathJax's output: its thousands of generated nodes would triple the run time, and MathJax
    gives each formula its own accessible name (the assistive MathML that its a11y extension, served
    with the site, attaches). Highlighted code everywhere but AXE_CODE_PAGE; decks other than AXE_DECK
    and slides/index.html are not checked (see above); index.html only redirects.
    """
    if rel == "index.html" or (rel.startswith("slides/") and rel not in (AXE_DECK, "slides/index.html")):
        return None
    return [["mjx-container"]] + ([] if rel == AXE_CODE_PAGE else [["div.highlight"]])


def run_axe(page, axe_source: str, exclude: list[list[str]] = (("mjx-container",),)) -> list[dict]:
    """axe-core's WCAG 2.1 A/AA rules on the page, leaving out the ``exclude`` selectors."""
    page.add_script_tag(content=axe_source)
    return page.evaluate(
        "async ([tags, exclude]) => { const r = await axe.run({include: [document], exclude: exclude},"
        " {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});"
        " return r.violations.map(v => ({id: v.id, impact: v.impact, n: v.nodes.length,"
        " target: v.nodes.slice(0, 3).map(n => n.target.join(' '))})); }", [AXE_TAGS, [list(e) for e in exclude]])


@pytest.fixture(scope="session")
def tour(browser, server, site, pages) -> dict[str, dict]:
    """Every page of the site visited once (loading a page is most of a browser test's time), with
    what the tests of test_browser.py, test_a11y.py and test_layout.py check: console errors and
    off-site requests seen while it loaded, whether its formulas were typeset, axe-core's violations,
    and on chapter and appendix pages what overflows the column and the figures as shown."""
    from layout_js import EXEMPT, FIGURES_JS, OVERFLOW_JS, VIEWPORT, layout_page  # tests/site/layout_js.py

    axe_source = _axe_source()
    exempt = [[name, selector] for selector, name in EXEMPT.items()]
    context = browser.new_context(viewport=VIEWPORT)
    page = _watched_page(context, server)
    seen: dict[str, dict] = {}
    for rel in pages + ["index.html", "search.html", "genindex.html"]:
        if is_deck(rel) and rel != AXE_DECK:
            continue  # loaded once in test_slides.py's deck_tour, which checks the same there
        page.attnbook_errors.clear()
        page.attnbook_offsite.clear()
        page.goto(f"{server}/{rel}", wait_until="load")
        page.wait_for_timeout(300)
        has_math = 'class="math' in (site / rel).read_text(encoding="utf-8")
        typeset = errors = 0
        if has_math:
            try:
                page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
            except Exception:  # noqa: BLE001 - reported by test_math_is_typeset
                pass
            typeset = page.locator("mjx-container").count()
            errors = page.locator("mjx-merror").count()
        entry = {"errors": list(page.attnbook_errors), "offsite": list(page.attnbook_offsite),
                 "has_math": has_math, "mjx": typeset, "mjx_errors": errors}
        exclude = axe_scope(rel)
        if exclude is not None:
            entry["axe"] = run_axe(page, axe_source, exclude)
            entry["axe_code"] = ["div.highlight"] not in exclude  # code checked on this page
        if layout_page(rel):  # test_layout.py's measurements (they open every details box: last)
            entry["layout"] = (page.evaluate(OVERFLOW_JS, exempt), page.evaluate(FIGURES_JS))
        seen[rel] = entry
    context.close()
    return seen


#: Fonts that draw Chinese: the book's own (served with the site) and the CJK fonts of macOS, Windows
#: and Linux desktops that the site's CSS names before it.
CJK_FONTS = ("AttnBook Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC",
             "Source Han Sans SC", "WenQuanYi Micro Hei")


def chinese_fonts(page, selector: str) -> list[tuple[str, int, list[dict]]]:
    """The fonts Chromium really draws each shown element matching ``selector`` whose own text holds
    Chinese with (CDP's CSS.getPlatformFontsForNode, which counts the element's glyphs with those of
    its children): [(its text, its number of Chinese characters, [{familyName, glyphCount, ...}])].
    A machine without a CJK font draws empty boxes in some other font."""
    texts = page.evaluate("""sel => {
        const han = /[\\u4e00-\\u9fff]/, out = [];
        document.querySelectorAll('[data-font-probe]').forEach(e => e.removeAttribute('data-font-probe'));
        for (const el of document.querySelectorAll(sel)) {
          const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('');
          if (han.test(own) && el.checkVisibility({visibilityProperty: true})) {  // not in a closed box
            el.setAttribute('data-font-probe', out.length); out.push(own);
          }
        }
        return out; }""", selector)
    assert texts, f"没有含中文的 {selector}"
    page.evaluate("document.fonts.ready")
    page.wait_for_function("document.fonts.status === 'loaded'")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-font-probe]"})["nodeIds"]
    out = []
    for text, node in zip(texts, nodes):  # both in document order
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        out.append((text, len(re.findall(r"[\u4e00-\u9fff]", text)), fonts))
    cdp.detach()
    return out


def chinese_in_boxes(page, selector: str) -> tuple[int, list[str]]:
    """How many shown elements matching ``selector`` hold Chinese, and those of them whose Chinese is
    not all drawn in a CJK font (:data:`CJK_FONTS`), each described for an assert message."""
    seen = chinese_fonts(page, selector)
    return len(seen), [f"「{text[:30]}」：{han} 个汉字，用了 {fonts}" for text, han, fonts in seen
                       if sum(f["glyphCount"] for f in fonts if f["familyName"] in CJK_FONTS) < han]
