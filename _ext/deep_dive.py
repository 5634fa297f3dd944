"""The 选读 (deep dive) box of the site: one closed ``<details>`` per deep dive, no JavaScript.

A deep dive is a run of notebook cells tagged ``deep-dive`` that opens with a heading
``### 选读：<title>`` (or ``##``); tools/book_text.py states the convention and finds the runs.
myst-nb turns the heading into a section that holds the cells up to the next heading of the same
or a higher level, and gives every node the line ``(cell index + 1) × 10000 + …`` (a code cell's
container also carries ``cell_index``), so the nodes of a run are known. On ``doctree-read``,
before Sphinx collects the page's table of contents, each run's section becomes a
:class:`deep_dive` node (a section, so the table of contents, the anchors, the numbering and the
search index treat it as one), written in HTML as::

    <details class="attnbook-deep-dive" id="…">
      <summary><h3><span class="attnbook-deep-dive-label">选读</span><span class="…-sep">：</span>标题</h3>
        <span class="attnbook-deep-dive-note">第一次阅读可以跳过 · 约 M 分钟</span></summary>
      …the run's cells…
    </details>

Closed by default; the browser opens it when a link or find-in-page leads into it. Nodes of the
section that do not come from the run (cells after it, before the next heading: the structure
test forbids this, but the page must still be right) are moved out, after the box. The styles
(a border and a label, readable in dark mode; open and labelled in print) are in
_static/attnbook.css; tools/make_pdf.py prints each box open under its label.

Loaded by _ext/attnbook_site.py's ``setup(app)`` as ``app.setup_extension("deep_dive")``.
"""
from __future__ import annotations

import html
import json
import pathlib
import sys

from docutils import nodes

TOOLS = pathlib.Path(__file__).resolve().parents[1] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import book_text  # noqa: E402  (tools/book_text.py: the convention)
import reading_time  # noqa: E402  (tools/reading_time.py: the minutes)

LINE_BASE = 10000  # myst-nb: a node of cell i has a line in [(i + 1) × 10000, (i + 2) × 10000)
NOTE = "第一次阅读可以跳过 · 约 {minutes} 分钟"


class deep_dive(nodes.section):
    """A deep dive's section, written as a closed <details> (a section for everything else)."""


class deep_dive_summary_end(nodes.Element):
    """Ends the <summary> after the deep dive's title (HTML only)."""


def cell_of(node: nodes.Node) -> int | None:
    """The notebook cell a node comes from, or None when no node in it tells."""
    for sub in node.findall(include_self=True):
        if not isinstance(sub, nodes.Element):
            continue
        if sub.get("cell_index") is not None:
            return int(sub["cell_index"])
        line = sub.line
        if line and line >= LINE_BASE:
            return line // LINE_BASE - 1
    return None


def _label_title(title: nodes.title) -> None:
    """“选读：标题” -> a label “选读”, a separator “：” (hidden on screen) and the title."""
    if not title.children or not isinstance(title[0], nodes.Text):
        return
    first = str(title[0])
    for sep in ("：", ":"):
        if first.startswith("选读" + sep):
            rest = first[len("选读" + sep):].lstrip()
            new = [nodes.inline("", "选读", classes=["attnbook-deep-dive-label"]),
                   nodes.inline("", sep, classes=["attnbook-deep-dive-sep"])]
            if rest:
                new.append(nodes.Text(rest))
            title.replace(title[0], new[0])
            for offset, node in enumerate(new[1:], start=1):
                title.insert(offset, node)
            return


def _take_foreign(section: nodes.section, run: book_text.Run, current: int) -> list[nodes.Node]:
    """Remove from `section` (and its subsections) the nodes from the first one that does not come
    from the run onwards; return them in document order."""
    out: list[nodes.Node] = []
    for child in list(section.children[1:]):  # after the title
        if out:
            section.remove(child)
            out.append(child)
            continue
        cell = cell_of(child[0] if isinstance(child, nodes.section) and child.children else child)
        current = current if cell is None else cell
        if current not in run.cells:
            section.remove(child)
            out.append(child)
        elif isinstance(child, nodes.section):
            out += _take_foreign(child, run, current)
    return out


def wrap_runs(doctree: nodes.document, runs: list[book_text.Run], minutes: list[int]) -> int:
    """Turn each run's section into a deep_dive node; returns how many were wrapped."""
    done = 0
    for run, run_minutes in zip(runs, minutes):
        if not run.level:
            continue
        section = next((s for s in doctree.findall(nodes.section)
                        if not isinstance(s, deep_dive) and s.children and isinstance(s[0], nodes.title)
                        and cell_of(s[0]) == run.start and s[0].astext().startswith("选读")), None)
        if section is None:
            continue
        leave = _take_foreign(section, run, run.start)  # cells after the run leave the box, in order
        box = deep_dive()
        box.update_all_atts(section)
        box["classes"] = list(dict.fromkeys(section["classes"] + ["attnbook-deep-dive"]))
        box.source, box.line = section.source, section.line
        for child in list(section.children):
            section.remove(child)
            box.append(child)
        _label_title(box[0])
        box.insert(1, deep_dive_summary_end(minutes=run_minutes))
        parent = section.parent
        at = parent.index(section)
        parent.replace(section, box)
        for offset, child in enumerate(leave, start=1):
            parent.insert(at + offset, child)
        for node_id in box["ids"]:
            doctree.ids[node_id] = box
        done += 1
    return done


def _doctree_read(app, doctree) -> None:
    path = pathlib.Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    runs = book_text.deep_dive_runs(cells)
    if runs:
        minutes = [reading_time.run_minutes(cells, run) for run in runs]
        wrap_runs(doctree, runs, minutes)


# -- writers ----------------------------------------------------------------------------------
def visit_deep_dive_html(self, node: deep_dive) -> None:
    self.section_level += 1
    self.body.append(self.starttag(node, "details"))
    self.body.append('<summary class="attnbook-deep-dive-summary">')


def depart_deep_dive_html(self, node: deep_dive) -> None:
    self.section_level -= 1
    self.body.append("</details>\n")


def visit_summary_end_html(self, node: deep_dive_summary_end) -> None:
    note = html.escape(NOTE.format(minutes=node.get("minutes", 1)))
    self.body.append(f'<span class="attnbook-deep-dive-note">{note}</span></summary>\n')
    raise nodes.SkipNode


def visit_as_section(self, node) -> None:
    self.visit_section(node)


def depart_as_section(self, node) -> None:
    self.depart_section(node)


def skip(self, node) -> None:
    raise nodes.SkipNode


def setup(app):
    other = {name: (visit_as_section, depart_as_section) for name in ("latex", "text", "man", "texinfo")}
    app.add_node(deep_dive, html=(visit_deep_dive_html, depart_deep_dive_html), **other)
    app.add_node(deep_dive_summary_end, html=(visit_summary_end_html, None),
                 **{name: (skip, None) for name in other})
    app.connect("doctree-read", _doctree_read, priority=400)  # before the table of contents (500)
    # env_version: pages read before this transform existed (or changed) are read again
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0", "env_version": 1}
