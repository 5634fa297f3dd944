"""The one MyST renderer: the chapters' Markdown, made into what each medium can show.

The chapters are written once, in MyST (Jupyter Book's Markdown). The site renders MyST itself;
every other medium gets plain Markdown from this module:

* the notebook editions (tools/editions.py): the reader edition for JupyterLab, Jupyter
  Notebook, VS Code and Colab, and the student edition;
* the slides (tools/make_slides.py).

What it turns into what:

==========================================  =================================================
MyST                                        rendered
==========================================  =================================================
``{glue:text}`key:.2f``` / ``{glue:md}``    the value from the notebook's stored glue record,
                                            with its format spec (as myst-nb formats it)
``{term}`词``` / ``{term}`文字 <词>```      the text (a link to the site glossary where the
                                            medium has the site next to it)
``{ref}`label``` / ``{numref}`` / ``{doc}`` the section's title, linked to its page
``{math}`x```                               ``$x$``
``(label)=`` targets, ``%`` comments        dropped
admonitions (``{note}``, ``{admonition}``…)  a quote block with the title in bold
``{dropdown}``                              a closed ``<details>`` (notebooks) or speaker
                                            notes (slides); in the student edition a solution
                                            is dropped and a hint kept closed
``$…$``, ``$$…$$``, ``{math}`` blocks        math, unchanged
==========================================  =================================================

A dropdown titled "… 提示与解答" may separate its hint from its solution by a MyST comment line
``% 解答``: what stands before it is the hint (kept, closed, in the student edition), what follows
is the solution. A dropdown whose title names only 解答/答案 is all solution.

Anything this module does not know (another role or directive, a directive option it would drop
silently) raises :class:`RenderError` naming the file and the cell: it never reaches a reader raw.
"""
from __future__ import annotations

import ast
import dataclasses
import html
import posixpath
import re
from typing import Callable, Literal

Medium = Literal["reader", "student", "slides"]

GLUE_MIME = "application/papermill.record/"
ROLE = re.compile(r"\{([a-z][a-z:-]*)\}`([^`]*)`")
FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})\{([a-z-]+)\}\s*(.*)$")
TARGET = re.compile(r"^\s*\(([\w:.-]+)\)=\s*$")
COMMENT = re.compile(r"^\s*%")
SOLUTION_MARK = re.compile(r"^\s*%\s*解答\s*$")
PAGE_LINK = re.compile(r"(\]\()([^)#\s]+\.(?:ipynb|md))(#[^)\s]*)?(\))")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")

ADMONITIONS = {"note": "注", "tip": "提示", "hint": "提示", "warning": "注意", "important": "重要",
               "caution": "小心", "attention": "注意", "danger": "危险", "error": "错误",
               "seealso": "另见", "admonition": ""}
# Directive options the renderer understands (anything else fails): class only changes the look.
KNOWN_OPTIONS = {"class", "open", "name"}


class RenderError(ValueError):
    """A MyST construct the target medium cannot show (the message names the file and cell)."""


@dataclasses.dataclass
class Book:
    """What rendering one page needs to know about the whole book.

    labels: ``(label)=`` target -> (page, title of the heading that follows it), over all pages.
    link: how this medium links to another page: (this page, the other page's path like
          "chapters/09_masks.ipynb", anchor or "") -> URL, or None for the title only (a page this
          medium does not have); link None: the title only, no links at all.
    rewrite_links: whether Markdown links to other pages go through ``link`` too (the slides,
          which live in another folder) or stay as written (the notebook editions mirror the
          source's folders, so a relative link stays right).
    glossary_url: URL of the glossary page in this medium, or None (terms become plain text).
    """
    labels: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    link: Callable[[str, str, str], str] | None = None
    rewrite_links: bool = False
    glossary_url: str | None = None


@dataclasses.dataclass
class Rendered:
    text: str
    notes: list[str]  # dropdowns taken out as speaker notes (slides only)


# -- glue -----------------------------------------------------------------------------------------
def glue_values(nb) -> dict[str, dict[str, str]]:
    """key -> {mime type: data} of every glue record stored in the notebook's outputs."""
    values: dict[str, dict[str, str]] = {}
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) or []:
            meta = (output.get("metadata") or {}).get("scrapbook") or {}
            name = meta.get("name")
            data = output.get("data") or {}
            if name and any(k.startswith(GLUE_MIME) for k in data):
                values[name] = {k[len(GLUE_MIME):]: ("".join(v) if isinstance(v, list) else v)
                                for k, v in data.items() if k.startswith(GLUE_MIME)}
    return values


def format_glue(bundle: dict[str, str], spec: str) -> str:
    """The text myst-nb's {glue:text} shows: text/plain, formatted with spec when it is a number."""
    plain = bundle.get("text/plain")
    if plain is None:
        raise KeyError("text/plain")
    if not spec:
        try:
            value = ast.literal_eval(plain)
        except (ValueError, SyntaxError):
            return plain
        return value if isinstance(value, str) else plain
    value = ast.literal_eval(plain)
    return format(value, spec)


# -- labels ---------------------------------------------------------------------------------------
def collect_labels(pages: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
    """``(label)=`` targets -> (page, title of the next heading). pages: page -> markdown sources."""
    labels: dict[str, tuple[str, str]] = {}
    for page, sources in pages.items():
        pending: list[str] = []
        for text in sources:
            for line in text.splitlines():
                target = TARGET.match(line)
                if target:
                    pending.append(target.group(1))
                    continue
                heading = HEADING.match(line)
                if heading and pending:
                    for label in pending:
                        labels[label] = (page, heading.group(2))
                    pending = []
    return labels


# -- rendering ------------------------------------------------------------------------------------
def _is_solution_title(title: str) -> bool:
    return "解答" in title or "答案" in title


class _Renderer:
    def __init__(self, medium: Medium, page: str, glue: dict, book: Book, where: str):
        self.medium, self.page, self.glue, self.book, self.where = medium, page, glue, book, where

    def fail(self, message: str) -> None:
        raise RenderError(f"{self.where}：{message}")

    # roles ---------------------------------------------------------------------------------
    def role(self, match: re.Match) -> str:
        name, text = match.groups()
        if name in ("glue:text", "glue", "glue:md"):
            key, _, spec = text.partition(":")
            key = key.strip()
            if key not in self.glue:
                self.fail(f"{{{name}}}`{text}` 没有对应的 glue 记录（笔记本的输出里找不到 {key!r}；先执行笔记本）")
            bundle = self.glue[key]
            if name == "glue:md":
                if "text/markdown" in bundle:
                    return bundle["text/markdown"]
                return format_glue(bundle, spec)
            try:
                return format_glue(bundle, spec)
            except (KeyError, ValueError, SyntaxError, TypeError) as error:
                self.fail(f"{{{name}}}`{text}` 不能按 {spec!r} 格式化（{error}）")
        if name == "math":
            return f"${text}$"
        titled = re.fullmatch(r"(.*?)\s*<([^>]*)>", text, flags=re.S)
        shown, target = (titled.group(1), titled.group(2)) if titled else (text, text)
        if name == "term":
            if self.book.glossary_url:
                return f"[{shown}]({self.book.glossary_url})"
            return shown
        if name in ("ref", "numref"):
            if target not in self.book.labels:
                self.fail(f"{{{name}}}`{text}`：找不到标签 {target!r}")
            page, title = self.book.labels[target]
            return self._link_to(shown if titled else title, page, "")
        if name == "doc":
            page = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), target))
            return self._link_to(shown, page, "")
        if name in ("sub", "sup"):
            return f"<{name}>{text}</{name}>"
        if name in ("kbd", "code", "samp"):
            return f"`{text}`"
        self.fail(f"不认识的 MyST 角色 {{{name}}}`{text}`（这个媒介无法显示；请在 tools/myst_render.py 里加上它的写法）")
        return ""

    def _link_to(self, label: str, page: str, anchor: str) -> str:
        if self.book.link is None:
            return label
        if page == self.page and not anchor:
            return label
        url = self.book.link(self.page, page, anchor)
        return label if url is None else f"[{label}]({url})"

    def page_link(self, match: re.Match) -> str:
        start, target, anchor, end = match.groups()
        if "://" in target or self.book.link is None or not self.book.rewrite_links:
            return match.group(0)
        page = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), target))
        return f"{start}{self.book.link(self.page, page, (anchor or '').lstrip('#'))}{end}"

    def inline(self, line: str) -> str:
        line = ROLE.sub(self.role, line)
        return PAGE_LINK.sub(self.page_link, line)

    # blocks --------------------------------------------------------------------------------
    def render(self, text: str) -> Rendered:
        out: list[str] = []
        notes: list[str] = []
        lines = text.splitlines()
        i = 0
        in_code = None  # the fence of a plain ``` code block we are inside
        while i < len(lines):
            line = lines[i]
            if in_code is not None:
                out.append(line)
                if line.strip() == in_code:
                    in_code = None
                i += 1
                continue
            fence = FENCE.match(line)
            if fence:
                indent, marker, name, arg = fence.groups()
                body, options = [], {}
                i += 1
                depth = 0
                while i < len(lines):
                    inner = lines[i]
                    inner_fence = FENCE.match(inner)
                    if inner_fence and inner_fence.group(2) == marker:
                        depth += 1
                    elif inner.strip() == marker:
                        if depth == 0:
                            break
                        depth -= 1
                    option = re.match(r"^\s*:([\w-]+):\s*(.*)$", inner)
                    if option and not body:
                        options[option.group(1)] = option.group(2)
                    else:
                        body.append(inner)
                    i += 1
                else:
                    self.fail(f"指令 {{{name}}} 没有结束的 {marker}")
                i += 1
                unknown = set(options) - KNOWN_OPTIONS
                if unknown:
                    self.fail(f"指令 {{{name}}} 的选项 {sorted(unknown)} 这个媒介显示不了")
                out += self.directive(name, arg.strip(), "\n".join(body).strip("\n"), notes)
                continue
            if re.match(r"^\s*(`{3,}|~{3,})", line):
                in_code = re.match(r"^\s*(`{3,}|~{3,})", line).group(1)
                out.append(line)
                i += 1
                continue
            if TARGET.match(line) or COMMENT.match(line):
                i += 1
                continue
            out.append(self.inline(line))
            i += 1
        if in_code is not None:
            self.fail("代码块没有结束的 ```")
        return Rendered("\n".join(out).strip("\n"), notes)

    def directive(self, name: str, arg: str, body: str, notes: list[str]) -> list[str]:
        if name == "math":
            return ["$$", body, "$$"]
        if name == "dropdown":
            return self.dropdown(arg, body, notes)
        if name in ADMONITIONS:
            title = arg if name == "admonition" else (arg or ADMONITIONS[name])
            if name == "admonition" and not arg:
                self.fail("{admonition} 需要标题")
            inner = self.nested(body, notes)
            quoted = [f"> **{self.inline(title)}**", ">"] + [f"> {l}" if l else ">" for l in inner.splitlines()]
            return quoted
        self.fail(f"不认识的 MyST 指令 {{{name}}}（这个媒介无法显示；请在 tools/myst_render.py 里加上它的写法）")
        return []

    def nested(self, body: str, notes: list[str]) -> str:
        inner = _Renderer(self.medium, self.page, self.glue, self.book, self.where).render(body)
        notes += inner.notes
        return inner.text

    def dropdown(self, title: str, body: str, notes: list[str]) -> list[str]:
        title = title or "解答"
        hint_lines, solution_lines, seen_mark = [], [], False
        for line in body.splitlines():
            if SOLUTION_MARK.match(line):
                seen_mark = True
                continue
            (solution_lines if seen_mark else hint_lines).append(line)
        if not seen_mark and _is_solution_title(title):
            # a solution, or a 提示与解答 with no mark: all of it may give the answer away
            hint_lines, solution_lines = [], hint_lines
        if self.medium == "student":
            if not hint_lines or not any(l.strip() for l in hint_lines):
                return []
            shown_title = re.sub(r"的?提示与解答$", "的提示", title) if _is_solution_title(title) else title
            return self._details(shown_title, self.nested("\n".join(hint_lines), notes))
        text = self.nested("\n".join(hint_lines + ([""] if hint_lines and solution_lines else []) + solution_lines),
                           notes)
        if self.medium == "slides":
            notes.append(f"**{self.inline(title)}**\n\n{text}")
            return []
        return self._details(title, text)

    def _details(self, title: str, text: str) -> list[str]:
        summary = html.escape(re.sub(r"\*\*|`", "", self.inline(title)), quote=False)
        return ["<details>", f"<summary>{summary}</summary>", "", text, "", "</details>"]


def render_markdown(text: str, *, medium: Medium, page: str, glue: dict | None = None,
                    book: Book | None = None, where: str = "") -> Rendered:
    """Render one Markdown cell's MyST for a medium. where: "file, cell N" for error messages."""
    return _Renderer(medium, page, glue or {}, book or Book(), where or page).render(text)


RAW_MYST = re.compile(r"\{(?:term|glue:text|glue:md|glue|ref|doc|numref|math)\}`|^\s*(?:```|:::)\{[a-z-]+\}", re.M)


def raw_myst(text: str) -> list[str]:
    """The MyST tokens left in a text (empty for a properly rendered one)."""
    return [m.group(0).strip() for m in RAW_MYST.finditer(text)]
