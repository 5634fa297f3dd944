"""What a reader reads in a notebook: its prose, its deep dives (选读), its skeleton, its glossary.

One module, so that every medium and every check agrees on the same rules. Used by
tools/reading_time.py, tools/make_glossary_first.py, tools/editions.py, tools/make_slides.py,
_ext/deep_dive.py and the structure tests. Standard library only.

Deep dives (选读)
-----------------
A deep dive is a run of consecutive cells tagged ``deep-dive``. Its first cell is a Markdown cell
whose first line (after any ``(label)=`` target or ``%`` comment) is a heading
``### 选读：<title>`` (or ``## 选读：<title>``). A tagged cell that opens with such a heading starts a
new run, so two deep dives may follow each other. :func:`run_problems` holds the rules:

* the run starts with the heading, and has something besides it;
* no heading of the same or a higher level inside it, and none of the skeleton's sections
  (学习目标, 小结, 练习, 下一步, 参考), no exercise (``**练习 NN-k**``, a dropdown titled 练习…,
  an ``answer = None`` cell, a folded reference solution that calls ``attnbook.check``): a first
  reading skips the run, and the exercises belong to everyone (a deep dive may still call the
  checker to show what it says about a tempting answer);
* the cell after the run opens with a heading of the same or a higher level (``##`` or ``###``
  after a ``###`` run). The site ends the run's section there, and JupyterLab, which shows the run
  collapsed under its heading, hides the cells up to the next heading of the same or a higher
  level: so the box ends exactly where the run does, in both;
* a ``选读：`` heading is always tagged, and a deep-dive cell carries no ``slides-s…`` tag (the
  2 × 45 minute session decks leave deep dives out).

Prose
-----
:func:`prose` is the text of a Markdown cell as a reader reads it: headings, paragraphs, lists,
tables, admonition and dropdown bodies; without code (fenced or inline), math, HTML tags, link
targets, ``(label)=`` targets, ``%`` comments and MyST syntax (a role shows its text: ``{term}`掩码```
reads 掩码, a ``{glue:text}`` number reads as the digit 0, a ``{ref}`` as its text or 〈ref〉).
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import unicodedata

import myst_render  # tools/myst_render.py (same folder; it imports nothing of ours)

ROOT = pathlib.Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "appendix" / "glossary.md"

DEEP_DIVE = "deep-dive"
DEEP_DIVE_HEADING = re.compile(r"^(#{2,3})\s+选读[：:]\s*(\S.*?)\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TARGET = re.compile(r"^\s*\([\w:.-]+\)=\s*$")
COMMENT = re.compile(r"^\s*%")
SKELETON = ("学习目标", "小结", "练习", "下一步", "参考")
EXERCISE_MD = re.compile(r"\*\*练习\s*\d{2}-\d+|\{dropdown\}\s*练习")
EXERCISE_CODE = re.compile(r"^answer\s*=\s*None\b", re.M)  # an exercise's cell (its solution: hide-cell)


# -- cells ------------------------------------------------------------------------------------
def read(path: pathlib.Path) -> dict:
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def text(cell) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def tags(cell) -> set[str]:
    return set((cell.get("metadata") or {}).get("tags", []))


def first_line(source: str) -> str:
    """The first line a reader sees: not blank, not a ``(label)=`` target, not a ``%`` comment."""
    for line in source.splitlines():
        if line.strip() and not TARGET.match(line) and not COMMENT.match(line):
            return line
    return ""


def heading_level(line: str) -> int:
    """1–6 for a Markdown heading line, 0 otherwise."""
    match = HEADING.match(line)
    return len(match.group(1)) if match else 0


def headings(source: str) -> list[tuple[int, str]]:
    """(level, title) of every heading of a Markdown text, outside code fences."""
    out, fence = [], None
    for line in source.splitlines():
        marker = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence is None and marker and not re.match(r"^\s*(`{3,}|~{3,})\{", line):
            fence = marker.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        match = HEADING.match(line)
        if match:
            out.append((len(match.group(1)), match.group(2)))
    return out


# -- deep dives -------------------------------------------------------------------------------
@dataclasses.dataclass
class Run:
    """A deep dive: cells[start:stop]. level: its heading's level (2 or 3; 0 when the first cell
    does not open with a 选读 heading), title: the text after “选读：”."""
    start: int
    stop: int
    level: int
    title: str

    @property
    def cells(self) -> range:
        return range(self.start, self.stop)


def title_text(title: str) -> str:
    """A heading's Markdown as the page shows it, up to its first formula (which each medium typesets
    its own way): 同一个 `nn.MultiheadAttention` -> 同一个 nn.MultiheadAttention."""
    return re.sub(r"\*\*|`", "", title.split("$", 1)[0]).strip()


def deep_dive_heading(cell) -> tuple[int, str] | None:
    """(level, title) when the cell is Markdown opening with ``## 选读：…`` or ``### 选读：…``."""
    if cell["cell_type"] != "markdown":
        return None
    match = DEEP_DIVE_HEADING.match(first_line(text(cell)))
    return (len(match.group(1)), match.group(2)) if match else None


def deep_dive_runs(cells) -> list[Run]:
    """The deep dives of a notebook's cells, in order."""
    runs: list[Run] = []
    current: Run | None = None
    for index, cell in enumerate(cells):
        if DEEP_DIVE not in tags(cell):
            current = None
            continue
        head = deep_dive_heading(cell)
        if current is None or head is not None:
            level, title = head or (0, "")
            current = Run(index, index + 1, level, title)
            runs.append(current)
        else:
            current.stop = index + 1
    return runs


def deep_dive_cells(cells) -> set[int]:
    return {i for run in deep_dive_runs(cells) for i in run.cells}


def ends_at_heading(cells, run: Run) -> bool:
    """Whether the cell after the run (if any) opens with a heading of the run's level or higher, so
    that a section that starts at the run's heading ends exactly where the run does."""
    if run.stop >= len(cells):
        return True
    after = cells[run.stop]
    level = heading_level(first_line(text(after))) if after["cell_type"] == "markdown" else 0
    return 0 < level <= run.level


def run_problems(cells, where: str = "") -> list[str]:
    """Every break of the deep-dive convention (module docstring), as messages naming the cell."""
    problems = []
    at = f"{where}：" if where else ""
    runs = deep_dive_runs(cells)
    in_runs = {i for run in runs for i in run.cells}
    for index, cell in enumerate(cells):
        if deep_dive_heading(cell) and index not in in_runs:
            problems.append(f"{at}第 {index} 个单元的标题是“选读：”，却没有 {DEEP_DIVE} 标签")
        if index in in_runs and any(t.startswith("slides-s") for t in tags(cell)):
            problems.append(f"{at}第 {index} 个单元既是选读又在课时幻灯片里（{sorted(tags(cell))}）：课时幻灯片不放选读")
    for run in runs:
        name = f"{at}第 {run.start}–{run.stop - 1} 个单元的选读块"
        if not run.level:
            problems.append(f"{name}不是以“### 选读：标题”（或“## 选读：标题”）开头的 Markdown 单元")
            continue
        first = text(cells[run.start])
        rest = first.split(first_line(first), 1)[1]
        if run.stop - run.start == 1 and not rest.strip():
            problems.append(f"{name}（{run.title}）只有标题，是空的")
        for index in run.cells:
            cell = text(cells[index])
            if cells[index]["cell_type"] == "markdown":
                found = headings(cell)
                if index == run.start:
                    found = found[1:]
                for level, title in found:
                    if level <= run.level:
                        problems.append(f"{name}（{run.title}）里有同级或更高级的标题“{'#' * level} {title}”："
                                        "选读块只能是一个小节（它会在网站和 JupyterLab 里把选读块截断）")
                    if level == 2 and title.strip() in SKELETON:
                        problems.append(f"{name}（{run.title}）含有本章骨架的“## {title}”")
                if EXERCISE_MD.search(cell):
                    problems.append(f"{name}（{run.title}）含有练习：练习不是选读")
            elif cells[index]["cell_type"] == "code" and (
                    EXERCISE_CODE.search(cell) or ("hide-cell" in tags(cells[index]) and "attnbook.check(" in cell)):
                problems.append(f"{name}（{run.title}）的第 {index} 个单元是练习或它的参考解答"
                                "（answer = None，或折叠的 attnbook.check）")
        if not ends_at_heading(cells, run):
            problems.append(
                f"{name}（{run.title}）之后的第 {run.stop} 个单元没有以 {'#' * run.level} 或更高级的标题开头："
                "选读块要以小节结尾（网站和 JupyterLab 都在下一个同级标题处结束一个小节），"
                "把选读块移到小节末尾，或者给后面的主线加一个标题")
    return problems


# -- prose ------------------------------------------------------------------------------------
ROLE = myst_render.ROLE  # {role}`text`: the one pattern the renderer uses
FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})(\{[a-z-]+\})?\s*(.*)$")
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)([^$\n]+?)(?<![\\$])\$(?!\$)")
DISPLAY_MATH_LINE = re.compile(r"^\s*\$\$.*\$\$\s*$")
IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^>\n]+>")
INLINE_CODE = re.compile(r"`[^`\n]+`")
OPTION = re.compile(r"^\s*:[\w-]+:")


@dataclasses.dataclass
class Prose:
    """A Markdown cell as read: ``text`` (prose only, one line per source line kept),
    ``terms`` (the targets of its {term} roles, in order), and what else it holds, counted:
    ``inline_math``, ``display_math`` (blocks), ``images``, ``code_lines`` (of fenced code)."""
    text: str
    terms: list[str]
    inline_math: int = 0
    display_math: int = 0
    images: int = 0
    code_lines: int = 0


def _role_text(match: re.Match, terms: list[str]) -> str:
    name, body = match.groups()
    titled = re.fullmatch(r"(.*?)\s*<([^>]*)>", body, flags=re.S)
    shown, target = (titled.group(1), titled.group(2)) if titled else (body, body)
    if name == "term":
        terms.append(target.strip())
        return shown
    if name.startswith("glue"):
        return "0"
    if name in ("ref", "numref", "doc"):
        return shown if titled else "〈ref〉"
    if name == "math":
        return ""
    return shown


def prose(source: str) -> Prose:
    """The prose of one Markdown cell (see the module docstring)."""
    terms: list[str] = []
    out = Prose("", terms)
    kept: list[str] = []
    lines = source.splitlines()
    fence = None  # the closing marker of the code or math block we are in
    fence_kind = ""
    directives: list[str] = []  # closing markers of the directives (admonitions, dropdowns) we are in
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.strip()
        if fence is not None:
            if stripped == fence:
                fence = None
            elif fence_kind == "code":
                out.code_lines += 1
            continue
        if directives and stripped == directives[-1]:
            directives.pop()
            continue
        opened = FENCE_OPEN.match(line)
        if opened:
            marker, directive, argument = opened.groups()
            if directive in (None, "{code}", "{code-block}", "{code-cell}", "{math}"):
                if directive is None and marker.startswith(":"):
                    continue  # a stray ::: line
                fence, fence_kind = marker, ("math" if directive == "{math}" else "code")
                out.display_math += directive == "{math}"
                continue
            # an admonition, a dropdown …: its title and body are prose, its options are not
            directives.append(marker)
            while i < len(lines) and OPTION.match(lines[i]):
                i += 1
            line = argument
        elif stripped.startswith("$$"):
            out.display_math += 1
            if not DISPLAY_MATH_LINE.match(line) or stripped == "$$":
                while i < len(lines) and "$$" not in lines[i]:
                    i += 1
                i += 1
            continue
        elif TARGET.match(line) or COMMENT.match(line):
            continue
        line = re.sub(r"^\s*#{1,6}\s+", "", line)
        line = ROLE.sub(lambda m: _role_text(m, terms), line)
        out.inline_math += len(INLINE_MATH.findall(line))
        line = INLINE_MATH.sub(" ", line)
        line = INLINE_CODE.sub(" ", line)
        out.images += len(IMAGE.findall(line))
        line = IMAGE.sub(" ", line)
        line = LINK.sub(r"\1", line)
        line = HTML_TAG.sub(" ", line)
        kept.append(line)
    out.text = "\n".join(kept)
    return out


def sections(cells) -> list[str]:
    """The title of the ``##`` section each cell is in ("" before the first), one per cell. A cell
    that holds several ``##`` headings (``## 小结`` then ``## 练习``) counts as in the first."""
    current, out = "", []
    for cell in cells:
        if cell["cell_type"] == "markdown":
            found = [title for level, title in headings(text(cell)) if level == 2]
            first = first_line(text(cell))
            if found and heading_level(first) == 2:
                current = found[0]
            out.append(current)
            if found:
                current = found[-1]
        else:
            out.append(current)
    return out


def split_sections(source: str) -> list[tuple[str, str]]:
    """A Markdown cell cut at its ``##`` headings: (section title or "", text) pieces."""
    pieces: list[tuple[str, list[str]]] = [("", [])]
    for line in source.splitlines():
        if heading_level(line) == 2:
            pieces.append((HEADING.match(line).group(2), []))
        pieces[-1][1].append(line)
    return [(title, "\n".join(lines)) for title, lines in pieces if lines]


CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+\-']*")


def cjk_chars(s: str) -> int:
    return len(CJK.findall(s))


def latin_words(s: str) -> int:
    return len(LATIN_WORD.findall(s))


def display_width(line: str) -> int:
    """Columns a code line takes in a monospace font: East Asian wide characters take two (as
    ruff's and Black's line length count them)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line.expandtabs(4))


# -- the glossary -----------------------------------------------------------------------------
@dataclasses.dataclass
class Entry:
    """One glossary entry: its terms (the first is the entry's name, the others its aliases, as the
    ``{glossary}`` directive lists them) and the English of its row in the 中英术语对照 table."""
    terms: list[str]
    english: str = ""


def glossary_entries(source: str | None = None) -> list[Entry]:
    """The entries of appendix/glossary.md's ``{glossary}`` directives, with the English column."""
    source = GLOSSARY.read_text(encoding="utf-8") if source is None else source
    entries: list[Entry] = []
    for block in re.findall(r"^```\{glossary\}\n(.*?)^```$", source, flags=re.S | re.M):
        pending: list[str] = []
        for line in block.splitlines():
            if not line.strip():
                continue
            if not line[0].isspace():
                pending.append(line.strip())
            elif pending:
                entries.append(Entry(pending))
                pending = []
    by_term = {t: e for e in entries for t in e.terms}
    for row in glossary_rows(source):
        entry = by_term.get(row["term"])
        if entry is not None:
            entry.english = row["english"]
    return entries


TABLE_ROW = re.compile(r"^\|\s*\{term\}`([^`]+)`(.*?)\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$")


def glossary_rows(source: str) -> list[dict]:
    """The rows of the 中英术语对照 table: term, the rest of the first cell, English, note, first."""
    rows = []
    for number, line in enumerate(source.splitlines()):
        match = TABLE_ROW.match(line)
        if match:
            term, rest, english, note, first = (g.strip() for g in match.groups())
            rows.append({"line": number, "term": term, "rest": rest, "english": english, "note": note,
                         "first": first})
    return rows


def english_variants(english: str) -> list[str]:
    """'recurrent neural network, RNN' -> ['recurrent neural network', 'RNN']; 'Pre-Norm / Post-Norm'
    -> ['Pre-Norm', 'Post-Norm']; 'local / sliding-window attention' -> both."""
    parts = [p.strip() for p in re.split(r",|，|;", english) if p.strip()]
    out = []
    for part in parts:
        if " / " in part:
            left, right = part.split(" / ", 1)
            out.append(left.strip())
            out.append(right.strip())
            if " " in right and " " not in left.strip():  # local / sliding-window attention
                out.append(f"{left.strip()} {right.split(' ', 1)[1]}")
        else:
            out.append(part)
    return [v for v in dict.fromkeys(out) if v]
