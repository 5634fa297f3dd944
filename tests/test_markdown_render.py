"""Markdown that MyST cannot parse as the author meant: emphasis that does not open or close.

CommonMark's rules for ``**`` were written for languages with spaces between words: an opening
``**`` right after a Chinese character and right before punctuation or a role (``叫**{term}`凸包`**``)
is not left-flanking, so the page shows the asterisks. Every Markdown cell of the book is parsed
with myst-parser's own markdown-it set-up; no text token may keep a ``**``.
"""
from __future__ import annotations

import json
import pathlib

import pytest
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from markdown_it.renderer import RendererHTML

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("appendix/*.ipynb"))
MD_PAGES = sorted(ROOT.glob("appendix/*.md")) + [ROOT / "intro.md"]
PARSER = create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence",
                                                            "deflist", "substitution"}), RendererHTML)


#: Directives whose body is not Markdown.
CODE_DIRECTIVES = ("{code", "{math", "{glue", "{raw", "{literalinclude")


def _stray(text: str) -> list[str]:
    """Text tokens that keep a ``**``; a directive's body (an admonition, a dropdown: MyST parses it
    as Markdown later) is parsed the same way, its ``:option:`` lines left out."""
    found = []
    for token in PARSER.parse(text):
        if token.type in ("fence", "colon_fence") and token.info.startswith("{") \
                and not token.info.startswith(CODE_DIRECTIVES):
            found += _stray("\n".join(line for line in token.content.splitlines()
                                       if not line.startswith(":")))
        for child in token.children or []:
            if child.type == "text" and "**" in child.content:
                found.append(child.content.strip()[:60])
    return found


def _markdown_cells(path: pathlib.Path) -> list[tuple[int, str]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(i, "".join(c["source"])) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", PAGES + MD_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_bold_opens_and_closes(path):
    cells = _markdown_cells(path) if path.suffix == ".ipynb" else [(0, path.read_text(encoding="utf-8"))]
    problems = [f"第 {i} 个单元：…{s}…" for i, text in cells for s in _stray(text)]
    assert not problems, ("粗体没有生效（`**` 紧跟汉字、后面是标点或角色时不能开始粗体；"
                          "去掉粗体或把 `**` 挪到标点外）：\n" + "\n".join(problems))


def test_the_rule_is_caught():
    assert _stray("这个三角形叫它们的**{term}`凸包`**（convex hull）")
    assert not _stray("这个三角形叫它们的{term}`凸包`（convex hull），**粗体**也行。")
    # inside an admonition or a dropdown too (the 本章导读 box): MyST parses the body as Markdown
    assert _stray(":::{admonition} 本章导读\n:class: tip\n1. 它是**{term}`置换等变`**的。\n:::")
    assert _stray("```{dropdown} 提示\n它是**{term}`置换等变`**的。\n```")
    assert not _stray("```{code-cell}\nx = a**2\n```")
