"""The notebook editions of the book, generated from chapters/ (the one source).

    python tools/editions.py reader             # notebooks/ (committed; make lab opens it)
    python tools/editions.py student --out DIR  # the student edition (make student, the kit)
    python tools/editions.py reader --check     # fails when notebooks/ is not what chapters/ gives

* **reader edition** (``notebooks/chapters/…``, ``notebooks/appendix/…``): plain Jupyter Markdown
  that JupyterLab, Jupyter Notebook, VS Code and Colab render without any extension (the MyST is
  rendered by tools/myst_render.py: numbers from the glue records, terms as text, admonitions as
  quotes, dropdowns as closed ``<details>``); the stored outputs are kept so the page reads before
  anything runs. The reference-solution cells (``hide-cell``) are collapsed (JupyterLab's
  ``jupyter.source_hidden``/``outputs_hidden``, Colab's form view with a ``#@title``) and their
  outputs dropped; ``hide-input`` cells show only their output; ``remove-cell`` cells are left out.
  The Colab and download buttons of the site point here.
* **deep dives** (选读, runs of cells tagged ``deep-dive``: tools/book_text.py) open collapsed under
  their heading: JupyterLab's ``jp-MarkdownHeadingCollapsed`` on the heading cell, Colab's
  ``colab.collapsed_sections`` (the heading cell's id); a line under the heading says a first
  reading may skip it (and how long it takes), which is what a client that does not collapse
  (VS Code) shows. The heading gets a cell of its own (the rest of its cell follows in a new one),
  since a collapsed heading hides the cells below it but not its own cell's text. A run that does
  not end at a heading of its level or higher (the structure test forbids it) is not collapsed:
  collapsing would hide the main line after it too.
* **student edition**: the same text with no outputs and no solutions: reference-solution cells,
  answer-key cells (tag ``answer-key``: the classroom pack's) and solution dropdowns removed, hints
  kept (closed); every exercise cell (``answer = None`` and its ``attnbook.check``) stays.
* **teacher's copy**: the source notebooks in chapters/, as they are.

The folders mirror the source's (``chapters/``, ``appendix/``), so the links between notebooks
stay as the chapters write them.
"""
from __future__ import annotations

import argparse
import copy
import json
import pathlib
import posixpath
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import book  # noqa: E402  (tools/book.py: the notebook list)
import book_text  # noqa: E402  (tools/book_text.py: deep dives)
import myst_render  # noqa: E402
import reading_time  # noqa: E402

ROOT = book.ROOT
READER = ROOT / "notebooks"
SOLUTION_TAGS = {"hide-cell"}
FRONT_PAGE = "intro.md"  # no notebook edition: a {ref} to one of its sections shows the section's title
#: Code that computes a worksheet's or quiz's answer key (the classroom pack): shown in the reader
#: edition and on the site, left out of the student edition.
ANSWER_KEY_TAGS = {"answer-key"}
REMOVE_TAGS = {"remove-cell"}
NO_INPUT_TAGS = {"hide-input", "remove-input"}
EDITION_TAGS = {"hide-cell", "hide-input", "remove-input", "remove-cell", "hide-output", "remove-output"}
SOLUTION_TITLE = "#@title 参考解答（点击展开）"
CODE_TITLE = "#@title 画图代码（点击展开）"
#: JupyterLab (4) opens a Markdown heading cell with this metadata collapsed: the cells under it, up to
#: the next heading of the same or a higher level, are hidden behind a “N cells hidden” button.
COLLAPSED = "jp-MarkdownHeadingCollapsed"
DEEP_DIVE_NOTE = "> **选读**（约 {minutes} 分钟）：第一次阅读可以跳过，后面的主线不需要它。"
HEADER = ("> 本笔记本由 `tools/editions.py` 从 `{source}` 生成（{edition}），请不要直接修改。"
          "网页版、幻灯片和打印版见本书网站。")


def read(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: pathlib.Path, nb: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(nb), encoding="utf-8")


def dumps(nb: dict) -> str:
    return json.dumps(nb, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


#: Markdown pages of the book that notebooks link to with a plain Markdown link: each gets a notebook
#: in the editions too (one Markdown cell per ## section), and the links point to it. A link from a
#: notebook to any other .md page fails the build (it would be a dead link in JupyterLab and Colab).
MARKDOWN_PAGES = ("appendix/math_refresher.md",)


def source_pages() -> list[pathlib.Path]:
    """The notebooks of the book (the editions' sources that have cells and outputs)."""
    return list(book.NOTEBOOKS)


def all_pages() -> list[pathlib.Path]:
    """Every page with a notebook edition: the notebooks and MARKDOWN_PAGES."""
    return source_pages() + [ROOT / page for page in MARKDOWN_PAGES]


def markdown_page_cells(path: pathlib.Path) -> list[dict]:
    """A Markdown page as notebook cells: one Markdown cell per ## section."""
    text = path.read_text(encoding="utf-8")
    parts = re.split(r"(?m)^(?=## )", text)
    return [{"cell_type": "markdown", "metadata": {}, "source": part.rstrip("\n")}
            for part in parts if part.strip()]


def read_page(path: pathlib.Path) -> dict:
    """A page of the book as a notebook dict (a .md page: Markdown cells, no outputs)."""
    if path.suffix == ".md":
        return {"cells": markdown_page_cells(path), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return read(path)


def link_md_pages(text: str, page: str, where: str) -> str:
    """Point Markdown links to a .md page of the book at that page's notebook edition."""
    def repl(match: re.Match) -> str:
        target = match.group(2)
        if "://" in target or not target.endswith(".md"):
            return match.group(0)
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
        if resolved not in MARKDOWN_PAGES:
            raise myst_render.RenderError(f"{where}：链接到 {resolved}，这一页没有笔记本版"
                                          "（把它加进 tools/editions.py 的 MARKDOWN_PAGES，或改成文字）")
        return f"{match.group(1)}{target[:-3]}.ipynb{match.group(3) or ''}{match.group(4)}"
    return myst_render.PAGE_LINK.sub(repl, text)  # links to .ipynb pages stay as written


def book_context(pages: list[pathlib.Path]) -> myst_render.Book:
    """Labels over every page; links to another notebook are relative (the folders mirror the source)."""
    sources = {}
    for path in pages:
        nb = read_page(path)
        sources[path.relative_to(ROOT).as_posix()] = [
            "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    # the front page's sections (“阅读时间怎么估的”, which every 本章导读 may cite): named, not linked
    front = {FRONT_PAGE: [(ROOT / FRONT_PAGE).read_text(encoding="utf-8")]} if (ROOT / FRONT_PAGE).exists() else {}

    def link(here: str, page: str, anchor: str) -> str | None:
        if page in front:
            return None
        if page not in sources:  # the glossary and the teacher's guide have no notebook edition
            raise myst_render.RenderError(f"{here} 链接到 {page}：这一页没有笔记本版")
        if page.endswith(".md"):
            page = page[:-3] + ".ipynb"
        return posixpath.relpath(page, posixpath.dirname(here))

    return myst_render.Book(labels=myst_render.collect_labels({**front, **sources}), link=link)


def _text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _is_glue_record(output: dict) -> bool:
    data = output.get("data") or {}
    return bool(data) and all(k.startswith(myst_render.GLUE_MIME) for k in data)


def make_edition(path: pathlib.Path, edition: str, ctx: myst_render.Book) -> dict:
    """One notebook of the reader or student edition (a new dict; the source is not touched)."""
    src = read_page(path)
    page = path.relative_to(ROOT).as_posix()
    glue = myst_render.glue_values(src)
    nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    nb["metadata"] = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": [], "toc_visible": True},
    }
    cells = []
    runs = {run.start: run for run in book_text.deep_dive_runs(src["cells"]) if run.level}
    collapsed = []  # the deep dives' heading cells, collapsed when the notebook opens
    for index, cell in enumerate(src["cells"]):
        tags = set(cell.get("metadata", {}).get("tags", []))
        where = f"{page}，第 {index} 个单元"
        if tags & REMOVE_TAGS:
            continue
        if cell["cell_type"] == "markdown":
            rendered = myst_render.render_markdown(_text(cell), medium=edition, page=page, glue=glue,
                                                   book=ctx, where=where)
            rendered.text = link_md_pages(rendered.text, page, where)
            if not rendered.text.strip():
                continue
            new = {"cell_type": "markdown", "metadata": {}, "source": _lines(rendered.text)}
            if book_text.DEEP_DIVE in tags:
                new["metadata"]["tags"] = [book_text.DEEP_DIVE]
            if index in runs:  # the heading (and the note) alone, the rest of the cell under it
                head, rest = deep_dive_heading(rendered.text, src["cells"], runs[index])
                new["source"] = _lines(head)
                if book_text.ends_at_heading(src["cells"], runs[index]):
                    new["metadata"][COLLAPSED] = True
                    collapsed.append(new)
                cells.append(new)
                if rest.strip():
                    cells.append({"cell_type": "markdown", "metadata": copy.deepcopy(new["metadata"]),
                                  "source": _lines(rest)})
                    cells[-1]["metadata"].pop(COLLAPSED, None)
                continue
            cells.append(new)
            continue
        if cell["cell_type"] != "code":
            continue
        meta: dict = {}
        keep_tags = sorted(t for t in tags - EDITION_TAGS if not t.startswith("slides-"))  # deck picks
        if keep_tags:
            meta["tags"] = keep_tags
        source = _text(cell)
        outputs = [o for o in cell.get("outputs", []) if not _is_glue_record(o)]
        if tags & ANSWER_KEY_TAGS and edition == "student":
            continue
        if tags & SOLUTION_TAGS:
            if edition == "student":
                continue
            source = f"{SOLUTION_TITLE}\n{source}"
            meta["cellView"] = "form"
            meta["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
            outputs = []
        elif tags & NO_INPUT_TAGS:
            source = f"{CODE_TITLE}\n{source}"
            meta["cellView"] = "form"
            meta["jupyter"] = {"source_hidden": True}
        if edition == "student":
            outputs = []
        new = {"cell_type": "code", "metadata": meta, "source": _lines(source), "outputs": [],
               "execution_count": None}
        if edition == "reader":
            new["outputs"] = [_clean_output(o) for o in outputs]
            new["execution_count"] = cell.get("execution_count")  # one run from the top, as stored
        cells.append(new)
    # where the notebook came from, under the title
    note = HEADER.format(source=page, edition={"reader": "读者版", "student": "学生版（无输出、无解答）"}[edition])
    if edition == "student":  # students do edit this one: their answers go into its cells
        note = (f"> 学生版（无输出、无解答），由 `tools/editions.py` 从 `{page}` 生成。把练习单元里的 `answer = None`"
                " 改成你的答案再运行；每次批改都记在本笔记本旁边的 `attnbook_results.jsonl` 里。")
    cells.insert(1, {"cell_type": "markdown", "metadata": {}, "source": _lines(note)})
    for n, cell in enumerate(cells):
        cell["id"] = f"{edition[0]}{n:03d}"
    for cell in collapsed:  # Colab: the sections that open collapsed, by the heading cell's id
        cell["metadata"]["id"] = cell["id"]
    if collapsed:
        nb["metadata"]["colab"]["collapsed_sections"] = [cell["id"] for cell in collapsed]
    nb["cells"] = cells
    return nb


def deep_dive_heading(text: str, cells: list, run: book_text.Run) -> tuple[str, str]:
    """A deep dive's first cell, rendered, cut in two: its heading with the line that says a first
    reading may skip it, and the rest (which goes into a cell of its own, so that it folds away with
    the rest of the deep dive: a collapsed heading hides the cells below it, not its own text)."""
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if book_text.DEEP_DIVE_HEADING.match(line)), 0)
    note = DEEP_DIVE_NOTE.format(minutes=reading_time.run_minutes(cells, run))
    return "\n".join(lines[:at + 1] + ["", note]), "\n".join(lines[at + 1:]).strip("\n")


SLIDER_FRAME = re.compile(r'<img data-frame="[^"]*" alt="([^"]*)" style="display:block;[^"]*" src="([^"]+)"')


def _clean_output(output: dict) -> dict:
    """A stored output as the reader edition keeps it.

    A precomputed slider (attnbook.slider in static mode: every frame plus inline JS) becomes its
    default frame with a caption: a notebook opened before it is run is untrusted, so JupyterLab
    and Colab run none of its JS, and would show the frames' print captions around one picture.
    Run, the cell draws the live ipywidgets slider instead.
    """
    output = copy.deepcopy(output)
    html_text = "".join(output.get("data", {}).get("text/html", ""))
    if 'class="attnbook-slider"' in html_text:
        frame = SLIDER_FRAME.search(html_text)
        if frame is None:
            raise myst_render.RenderError("滑块的输出里找不到初始帧（attnbook/infra/sliders.py 的格式变了？）")
        alt, src = frame.groups()
        output["data"] = {
            "text/html": (f'<figure style="margin:0"><img src="{src}" alt="{alt}" style="max-width:100%">'
                          f"<figcaption>静态图：{alt.split('（', 1)[-1].rstrip('）')}。"
                          "运行本笔记本后，这里是可以拖动的滑块。</figcaption></figure>"),
            "text/plain": "".join(output["data"].get("text/plain", "")),
        }
    return output


def edition_paths(out: pathlib.Path) -> dict[pathlib.Path, pathlib.Path]:
    return {path: (out / path.relative_to(ROOT)).with_suffix(".ipynb") for path in all_pages()}


def build(edition: str, out: pathlib.Path) -> list[pathlib.Path]:
    ctx = book_context(all_pages())
    written = []
    for path, target in edition_paths(out).items():
        write(target, make_edition(path, edition, ctx))
        written.append(target)
    return written


def check_reader() -> list[str]:
    """Differences between the committed reader edition and what chapters/ gives now."""
    ctx = book_context(all_pages())
    problems = []
    expected = {target: dumps(make_edition(path, "reader", ctx))
                for path, target in edition_paths(READER).items()}
    for target, text in expected.items():
        if not target.exists():
            problems.append(f"{target.relative_to(ROOT)} 不存在")
        elif target.read_text(encoding="utf-8") != text:
            problems.append(f"{target.relative_to(ROOT)} 与 {target.relative_to(READER)} 的源文件不一致")
    for extra in sorted(READER.rglob("*.ipynb")):
        if extra not in expected and ".ipynb_checkpoints" not in extra.parts:
            problems.append(f"{extra.relative_to(ROOT)} 没有对应的源文件")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description="由 chapters/ 生成读者版或学生版笔记本")
    parser.add_argument("edition", choices=["reader", "student"])
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="输出文件夹（读者版默认 notebooks/，学生版默认 _build/student/）")
    parser.add_argument("--check", action="store_true", help="只检查 notebooks/ 是否与源文件一致")
    args = parser.parse_args()
    try:
        if args.check:
            problems = check_reader()
            for problem in problems:
                print(problem, file=sys.stderr)
            if problems:
                print("运行 python tools/editions.py reader 重新生成读者版", file=sys.stderr)
            return 1 if problems else 0
        out = args.out or (READER if args.edition == "reader" else ROOT / "_build" / "student")
        written = build(args.edition, out)
    except myst_render.RenderError as error:
        print(f"错误：{error}", file=sys.stderr)
        return 1
    print(f"{len(written)} 个笔记本 → {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
