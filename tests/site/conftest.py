"""Fixtures for tests of the built site (_build/html): a local HTTP server and headless Chromium.

Every test here carries the marker ``site``: a bare ``pytest`` leaves them out (pyproject's addopts),
``pytest -m site tests/site`` runs them, and they skip, saying why, when no site is built.
Chromium: ``$CHROMIUM`` if set, else ``chromium`` on the PATH, else /usr/bin/chromium.
"""
from __future__ import annotations

import functools
import http.server
import os
import pathlib
import shutil
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-quic", "--no-first-run", "--disable-sync"]


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config, items) -> None:
    here = pathlib.Path(__file__).parent
    for item in items:
        if here in pathlib.Path(item.path).parents:
            item.add_marker(pytest.mark.site)


@pytest.fixture(scope="session")
def site() -> pathlib.Path:
    if not (SITE / "index.html").exists():
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
    page = context.new_page()
    page.attnbook_offsite = []
    page.attnbook_errors = []

    def route(r):
        if r.request.url.startswith(server) or r.request.url.startswith("data:"):
            r.continue_()
        else:
            page.attnbook_offsite.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and page.attnbook_errors.append(m.text))
    page.on("pageerror", lambda e: page.attnbook_errors.append(str(e)))
    yield page
    context.close()


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
