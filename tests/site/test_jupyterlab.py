"""The notebook editions in their real client: the pinned JupyterLab, in headless Chromium.

JupyterLab is started on 127.0.0.1 with a token, on copies of the reader edition (notebooks/, as
committed) and the student edition (_build/student, ``make student``), so nothing is written into
the repository. Every notebook of both editions is opened as a reader opens it, and what JupyterLab
shows is checked:

* its rendered Markdown holds no raw MyST (``{term}``, ``{glue``, ```` ```{ ````, ``:::{``);
* no solution block is open (``<details open>``) and no solution code is visible (a visible code
  cell whose answer is filled in, or a reference-solution cell);
* the reader edition shows the numbers the prose is built around (ch04's 猫对猫 score) and its
  typeset formulas.

Deep dives (选读) open collapsed under their heading, which says they may be skipped, and the main
line after them shows: in the fixture chapter tests/fixtures/deep_dive_chapter.ipynb (both editions,
written next to the copies) and in every deep dive of the reader edition.

In the reader edition, ch05 is run in a live kernel (Run ▸ Run All Cells) and its d_k slider, now an
ipywidget, redraws its figure when moved. Every off-host request is blocked and recorded.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT  # tests/site/conftest.py

READER = ROOT / "notebooks"
STUDENT = ROOT / "_build" / "student"
RAW_MYST = re.compile(r"\{(?:term|glue:text|glue:md|glue|ref|doc|numref)\}|```\{|:::\{")
FILLED_ANSWER = re.compile(r"^answer\s*=(?!\s*None\b)", re.M)
FIXTURE = ROOT / "tests" / "fixtures" / "deep_dive_chapter.ipynb"


def _notebooks(folder: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts)


def write_fixture_editions(folder: pathlib.Path) -> None:
    """Both editions of tests/fixtures/deep_dive_chapter.ipynb (a chapter with two deep dives, one
    under a ``###`` heading followed by a ``###``, one under a ``##`` followed by ``## 小结``)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import editions  # noqa: PLC0415

    ctx = editions.book_context(editions.source_pages())
    for edition in ("reader", "student"):
        editions.write(folder / f"{edition}.ipynb", editions.make_edition(FIXTURE, edition, ctx))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on loopback serving copies of both editions: (base URL, token)."""
    if not _notebooks(READER):
        pytest.fail("notebooks/ 里没有读者版笔记本：运行 python tools/editions.py reader")
    if not _notebooks(STUDENT):
        pytest.fail("_build/student 里没有学生版笔记本：运行 make student")
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(READER, root / "reader")
    shutil.copytree(STUDENT, root / "student")
    write_fixture_editions(root / "fixture")
    settings = root / ".settings"
    # every cell rendered (JupyterLab 4 otherwise renders only the cells near the viewport)
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTER_CONFIG_DIR=str(root / ".config"),
               JUPYTER_RUNTIME_DIR=str(root / ".runtime"), PYTHONWARNINGS="error:Glyph:UserWarning")
    env.pop("ATTNBOOK_STATIC", None)  # a live kernel: sliders are ipywidgets, as in JupyterLab at home
    log = open(root / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--expose-app-in-browser", "--MappingKernelManager.cull_idle_timeout=0"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail("JupyterLab 没有启动：\n" + (root / "lab.log").read_text()[-3000:])
            time.sleep(0.5)
    yield base, token
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


@pytest.fixture(scope="module")
def lab_page(lab, browser):
    """A page in the session's Chromium (tests/site/conftest.py: one Playwright per process)."""
    base, _token = lab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.attnbook_offsite = []

    def block(route):
        page.attnbook_offsite.append(route.request.url)
        route.abort()

    page.route(re.compile("^(?!" + re.escape(base) + "/|data:|blob:)"), block)
    yield page
    context.close()


def open_notebook(page, lab, path: str) -> None:
    """Open a notebook as a reader does; JupyterLab is loaded once, then each notebook replaces the last."""
    base, token = lab
    if not page.url.startswith(f"{base}/lab"):
        page.goto(f"{base}/lab?token={token}&reset", wait_until="domcontentloaded")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
        page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)
    page.evaluate("async (path) => { const app = window.jupyterapp;"
                  " for (const w of Array.from(app.shell.widgets('main'))) {"
                  "   if (w.context) { w.context.model.dirty = false; } w.dispose(); }"
                  " await app.serviceManager.sessions.shutdownAll();"
                  " await app.commands.execute('docmanager:open', {path, factory: 'Notebook'}); }", path)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=60_000)
    # every Markdown cell rendered (a cell still being rendered has no .jp-RenderedMarkdown yet)
    page.wait_for_function(
        "() => { const p = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');"
        " if (!p) return false; const md = p.querySelectorAll('.jp-MarkdownCell');"
        " return md.length > 0 && [...md].every(c => c.querySelector('.jp-RenderedMarkdown')); }",
        timeout=60_000)
    page.wait_for_timeout(300)


SEEN = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const md = [...panel.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')];
  const visible = el => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const code = [...panel.querySelectorAll('.jp-CodeCell')].map(cell => {
    const editor = cell.querySelector('.jp-InputArea-editor');
    return editor && visible(editor) ? editor.innerText : null;
  });
  return {
    markdown: md.map(m => m.innerText),
    openDetails: panel.querySelectorAll('.jp-RenderedMarkdown details[open]').length,
    details: panel.querySelectorAll('.jp-RenderedMarkdown details').length,
    code: code,
    math: panel.querySelectorAll('.jp-RenderedMarkdown mjx-container, .jp-RenderedMarkdown .MathJax').length,
  };
}"""


def _problems(folder: str, seen: dict[str, dict]) -> list[str]:
    """What is wrong with how JupyterLab shows each notebook of an edition (SEEN's states)."""
    problems = []
    for name, state in seen.items():
        raw = [m.group(0) for text in state["markdown"] for m in RAW_MYST.finditer(text)]
        if raw:
            problems.append(f"{folder}/{name}: 原样显示的 MyST {sorted(set(raw))}（{len(raw)} 处）")
        if state["openDetails"]:
            problems.append(f"{folder}/{name}: {state['openDetails']} 个解答块是展开的")
        shown = [c for c in state["code"] if c is not None]
        solutions = [c[:60] for c in shown if FILLED_ANSWER.search(c) or "参考解答" in c]
        if solutions:
            problems.append(f"{folder}/{name}: 看得见的解答代码 {solutions[:3]}")
    return problems


def _check_edition(lab_page, lab, folder: str, names: list[str]) -> dict[str, dict]:
    seen = {}
    for name in names:
        open_notebook(lab_page, lab, f"{folder}/{name}")
        seen[name] = lab_page.evaluate(SEEN)
    problems = _problems(folder, seen)
    assert not problems, "\n".join(problems)
    return seen


def _deep_dive_runs(cells: list) -> list:
    sys.path.insert(0, str(ROOT / "tools"))
    import book_text  # noqa: PLC0415

    return [r for r in book_text.deep_dive_runs(cells) if r.level]


@pytest.fixture(scope="module")
def reader_views(lab_page, lab) -> dict[str, dict]:
    """Every reader-edition notebook opened once (opening one is most of this file's time): what
    SEEN reads, and, where it has deep dives, what DEEP_DIVES reads once JupyterLab has folded them."""
    views = {}
    for name in _notebooks(READER):
        cells = json.loads((READER / name).read_text(encoding="utf-8"))["cells"]
        runs = _deep_dive_runs(cells)
        open_notebook(lab_page, lab, f"reader/{name}")
        view = {"seen": lab_page.evaluate(SEEN), "cells": cells, "runs": runs, "deep": None}
        if runs:
            view["deep"] = _folded_view(lab_page, len(runs))
        views[name] = view
    return views


def test_reader_edition_in_jupyterlab(reader_views, lab_page):
    seen = {name: view["seen"] for name, view in reader_views.items()}
    problems = _problems("reader", seen)
    assert not problems, "\n".join(problems)
    ch04 = seen["chapters/04_cat_eats_fish.ipynb"]
    text = "\n".join(ch04["markdown"])
    assert re.search(r"猫对猫是[^。]*?=\s*0\.82", text), "ch04 的分数没有显示出来"
    assert ch04["math"] > 10, "ch04 的公式没有排版"
    # every exercise with a solution has it, closed
    assert all(s["details"] >= 1 for n, s in seen.items() if n.startswith("chapters/")), \
        {n: s["details"] for n, s in seen.items()}
    assert not lab_page.attnbook_offsite, lab_page.attnbook_offsite[:5]


def test_student_edition_in_jupyterlab(lab_page, lab):
    names = _notebooks(STUDENT)
    seen = _check_edition(lab_page, lab, "student", names)
    for name, state in seen.items():
        code = "\n".join(c for c in state["code"] if c is not None)
        if name.startswith("chapters/"):
            assert "answer = None" in code, f"{name}: 学生版里没有练习单元"
    assert not lab_page.attnbook_offsite, lab_page.attnbook_offsite[:5]


def test_reader_slider_redraws_in_a_live_kernel(lab_page, lab):
    open_notebook(lab_page, lab, "reader/chapters/05_scaling.ipynb")
    page = lab_page
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").click(position={"x": 5, "y": 5})
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
    # a live slider: an ipywidgets SelectionSlider with its image
    slider = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-hslider, "
                          ".jp-NotebookPanel:not(.lm-mod-hidden) .widget-slider").first
    slider.wait_for(state="attached", timeout=240_000)
    page.wait_for_function(
        "() => { const p = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');"
        " return p && p.querySelector('.jp-Notebook-ExecutionIndicator[data-status=\"idle\"], "
        ".jp-Notebook') && ![...p.querySelectorAll('.jp-InputPrompt')]"
        ".some(e => e.textContent.includes('*')); }", timeout=240_000)
    box = slider.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
    image = box.locator("img").first
    before = image.get_attribute("src")
    handle = slider.locator(".noUi-handle, .ui-slider-handle, input").first
    handle.focus()
    handle.press("ArrowLeft")
    handle.press("ArrowLeft")
    page.wait_for_function("([el, old]) => el.getAttribute('src') !== old",
                           arg=[image.element_handle(), before], timeout=60_000)
    errors = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output[data-mime-type="
                          "'application/vnd.jupyter.stderr']").all_inner_texts()
    assert not [e for e in errors if "Error" in e], errors[:3]


# What a reader sees of each deep dive: its heading and the line under it, not the cells it holds;
# the cells after it (the next heading and its text) are there.
DEEP_DIVES = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const visible = el => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  return [...panel.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => ({
    visible: visible(cell),
    text: (cell.querySelector('.jp-RenderedMarkdown') || cell.querySelector('.jp-InputArea-editor') || cell).innerText,
    hiddenButton: !!cell.querySelector('.jp-showHiddenCellsButton'),
  }));
}"""


def _folded_view(lab_page, n_runs: int) -> list[dict]:
    """DEEP_DIVES on the open notebook, once JupyterLab has folded its ``n_runs`` collapsed headings."""
    try:  # JupyterLab folds the collapsed headings' sections once the notebook is laid out
        lab_page.wait_for_function(
            "n => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-showHiddenCellsButton')"
            ".length >= n", arg=n_runs, timeout=15_000)
    except Exception:  # noqa: BLE001 - what is (not) folded is reported by _deep_dive_problems
        pass
    return lab_page.evaluate(DEEP_DIVES)


def _deep_dive_problems(path: str, shown: list[dict], cells: list, runs: list) -> list[str]:
    """Problems with how JupyterLab shows the deep dives of one edition notebook (edition cells)."""
    assert len(shown) == len(cells), (path, len(shown), len(cells))
    problems = []
    for run in runs:
        head = shown[run.start]
        if not head["visible"] or "选读" not in head["text"] or "第一次阅读可以跳过" not in head["text"]:
            problems.append(f"{path}：选读“{run.title}”的标题或说明看不见")
        if not head["hiddenButton"]:
            problems.append(f"{path}：选读“{run.title}”没有“N cells hidden”按钮（没有折叠）")
        inside = [i for i in run.cells if i != run.start and shown[i]["visible"]]
        if inside:
            problems.append(f"{path}：选读“{run.title}”里的单元 {inside} 没有折叠")
        if run.stop < len(shown) and not shown[run.stop]["visible"]:
            problems.append(f"{path}：选读“{run.title}”之后的主线（单元 {run.stop}）也被折叠了")
    return problems


def test_deep_dives_open_collapsed_in_jupyterlab(lab_page, lab, reader_views):
    """Each deep dive (选读) opens collapsed under its heading, which says it may be skipped; the main
    line after it shows; the reader can open it. Checked on the fixture chapter (two deep dives) in
    both editions, and on every deep dive of the reader edition."""
    sys.path.insert(0, str(ROOT / "tools"))
    import editions  # noqa: PLC0415

    problems, seen = [], 0
    ctx = editions.book_context(editions.source_pages())
    for edition in ("reader", "student"):
        path = f"fixture/{edition}.ipynb"
        cells = editions.make_edition(FIXTURE, edition, ctx)["cells"]
        runs = _deep_dive_runs(cells)
        open_notebook(lab_page, lab, path)
        problems += _deep_dive_problems(path, _folded_view(lab_page, len(runs)), cells, runs)
        seen += len(runs)
    for name, view in reader_views.items():
        if view["runs"]:
            problems += _deep_dive_problems(f"reader/{name}", view["deep"], view["cells"], view["runs"])
            seen += len(view["runs"])
    assert seen >= 4, seen  # the fixture's two, in two editions
    assert not problems, "\n".join(problems)
    # a click on the “N cells hidden” button opens a deep dive
    open_notebook(lab_page, lab, "fixture/reader.ipynb")
    lab_page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-showHiddenCellsButton").first.click()
    lab_page.wait_for_timeout(500)
    shown = lab_page.evaluate(DEEP_DIVES)
    opened = [c["text"] for c in shown if c["visible"]]
    assert any("蓝鲸测量法" in text for text in opened), "点“N cells hidden”没有展开选读"
    assert not any("白鹭推导法" in text for text in opened)  # the other deep dive stays closed
    assert not lab_page.attnbook_offsite, lab_page.attnbook_offsite[:5]
