"""The “首次出现” column of the glossary (appendix/glossary.md), generated from the text.

    python tools/make_glossary_first.py           # rewrites the column (and the table's order)
    python tools/make_glossary_first.py --check   # exit 1 if the column is stale (changes nothing)
    python tools/make_glossary_first.py --report  # where each term is first used and introduced

Where a term first appears
--------------------------
The pages are the chapters in _toc.yml order, then the appendix page appendix/errata.ipynb (some
terms are met only there). A page's text is its Markdown cells read as prose (tools/book_text.py:
no code, inline code, math, link targets or MyST syntax), without its ``## 下一步`` and
``## 参考`` sections (a chapter's 下一步 names the next chapter's terms before that chapter defines
them; 参考 lists titles). A glossary entry is used in a cell when:

* a ``{term}`` role of the cell names one of its terms (the entry's term lines in the
  ``{glossary}`` directive: 词向量 and 嵌入 are one entry); or
* one of its terms occurs in the prose: not inside a longer glossary term (注意力 inside 自注意力
  or 注意力权重 is not a use of 注意力), not in another sense (tools/link_glossary.py's ``SKIP``:
  词的分数 is not an attention score); Latin terms (softmax, FLOPs) as whole words, in any case;
* a one-character term (键, 值, 头 occur inside too many words: 关键, 数值, 开头) counts only
  through its role or its gloss, the term with its English in parentheses: 键（Key）, （键，Key）.

The column links the first page (and the table is ordered by first use, as its heading says:
first page, then first cell; ties keep their order). A term no page uses gets “—”.

Defined before use
------------------
The column names the first page that uses a term, so “a term is used before the page the glossary
names” cannot happen once the column is generated. What can still go wrong is that the page uses
a term without introducing it. :func:`definition_problems` checks, for each term:

1. the first page that uses it introduces it; and
2. the first page whose *main line* uses it (deep dives, 选读, left out: a first reading skips
   them) introduces it in its main line, or an earlier page did.

A page introduces a term where the term (or its role) carries its English gloss in parentheses,
掩码（mask） or （键，Key）, as the glossary's rule (“中文（English）” on first use) asks; or where it
is set in bold, **掩码**, the book's way of marking a definition. A ``{term}`` role alone does
not introduce a term: tools/link_glossary.py puts one on every chapter's first use mechanically,
so it would say nothing about the text.
"""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import book  # noqa: E402  (tools/book.py: the notebooks in _toc.yml order)
import book_text  # noqa: E402
import link_glossary  # noqa: E402  (SKIP: other senses of a word)

ROOT = book_text.ROOT
APPENDIX_PAGES = ["appendix/errata.ipynb"]
LEFT_OUT_SECTIONS = {"下一步", "参考"}


@dataclasses.dataclass
class Use:
    """Where a page uses an entry: the cells that use it, and the cells that introduce it."""
    cells: list[int] = dataclasses.field(default_factory=list)
    main_cells: list[int] = dataclasses.field(default_factory=list)
    introduced: bool = False
    introduced_main: bool = False


def pages() -> list[pathlib.Path]:
    chapters = [p for p in book.NOTEBOOKS if p.parent.name == "chapters"]
    return chapters + [ROOT / p for p in APPENDIX_PAGES if (ROOT / p).exists()]


def page_label(path: pathlib.Path) -> str:
    number = re.match(r"(\d\d)_", path.name)
    if path.parent.name == "chapters" and number:
        return f"第 {int(number.group(1))} 章"
    cells = book_text.read(path)["cells"]
    title = book_text.first_line(book_text.text(cells[0])).lstrip("# ").strip()
    return title or path.stem


def page_link(path: pathlib.Path) -> str:
    """The link from appendix/glossary.md."""
    rel = path.relative_to(ROOT).as_posix()
    return rel.removeprefix("appendix/") if rel.startswith("appendix/") else f"../{rel}"


def cell_prose(source: str) -> book_text.Prose:
    kept = "\n".join(part for title, part in book_text.split_sections(source) if title not in LEFT_OUT_SECTIONS)
    return book_text.prose(kept)


def _is_latin(term: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9 .+-]*", term))


def _pattern(term: str) -> re.Pattern:
    if _is_latin(term):
        return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(term) + r"(?![A-Za-z0-9_])", re.I)
    return re.compile(re.escape(term))


GLOSS = r"\s*(?:\*\*)?\s*[（(]\s*\*?[A-Za-z]"  # what follows a term in its gloss: （English…
INNER_GLOSS = r"\s*[，,、]\s*\*?[A-Za-z]"  # …or the term is the gloss's first word: （键，Key）


def glossed(text: str, start: int, end: int) -> bool:
    """Whether the term at text[start:end] carries its English: 掩码（mask）, **掩码**（mask）, （键，Key）."""
    if re.match(GLOSS, text[end:]):
        return True
    return text[:start].rstrip().endswith(("（", "(")) and bool(re.match(INNER_GLOSS, text[end:]))


def term_spans(text: str, term: str, longer: list[str]) -> list[int]:
    """Start offsets of the plain uses of `term` in prose `text` (see the module docstring)."""
    out = []
    for match in _pattern(term).finditer(text):
        i = match.start()
        if link_glossary._inside_longer(text, i, term, longer) or link_glossary._other_sense(text, i, term):
            continue
        if len(term) == 1 and not glossed(text, i, match.end()):
            continue
        out.append(i)
    return out


def introduces(text: str, term: str, spans: list[int]) -> bool:
    """Whether one of the uses at `spans` is the term's introduction: glossed or in bold."""
    for i in spans:
        end = i + len(term)
        if glossed(text, i, end):
            return True
        before = text[:i]
        bold_open = before.rfind("**")
        if bold_open >= 0 and before.count("**") % 2 == 1 and "**" in text[end:end + 20] \
                and end - bold_open <= len(term) + 20:
            return True
    return False


def forms(term: str) -> list[str]:
    """The ways the text writes a term: 前置/后置归一化 -> 前置/后置归一化, 前置归一化, 后置归一化."""
    out = [term]
    if term.count("/") == 1:
        a, b = term.split("/")
        if len(b) > len(a):
            out += [a + b[len(a):], b]
    return out


def entry_uses(cells: list, entries: list[book_text.Entry]) -> list[Use]:
    """One Use per entry, for one page's cells."""
    all_terms = [f for e in entries for t in e.terms for f in forms(t)]
    deep = book_text.deep_dive_cells(cells)
    uses = [Use() for _ in entries]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        prose = cell_prose(book_text.text(cell))
        for entry, use in zip(entries, uses):
            used = any(t in entry.terms for t in prose.terms)
            intro = False
            for term in [f for t in entry.terms for f in forms(t)]:
                longer = [w for w in all_terms if term in w and w != term]
                spans = term_spans(prose.text, term, longer)
                if len(term) == 1:  # its role, shown as the term: a use, and an introduction if glossed
                    spans += [m.start() for m in re.finditer(re.escape(term), prose.text)
                              if term in prose.terms and m.start() not in spans
                              and not link_glossary._inside_longer(prose.text, m.start(), term, longer)
                              and glossed(prose.text, m.start(), m.end())]
                used = used or bool(spans)
                intro = intro or introduces(prose.text, term, spans)
            if used:
                use.cells.append(index)
                if index not in deep:
                    use.main_cells.append(index)
            if intro:
                use.introduced = True
                use.introduced_main = use.introduced_main or index not in deep
    return uses


@dataclasses.dataclass
class Usage:
    """An entry across the book: (page, Use) for every page that uses it, in book order."""
    entry: book_text.Entry
    pages: list[tuple[pathlib.Path, Use]]

    @property
    def first(self) -> tuple[pathlib.Path, Use] | None:
        return self.pages[0] if self.pages else None


def usage(entries: list[book_text.Entry] | None = None, paths: list[pathlib.Path] | None = None) -> list[Usage]:
    entries = book_text.glossary_entries() if entries is None else entries
    result = [Usage(e, []) for e in entries]
    for path in paths or pages():
        uses = entry_uses(book_text.read(path)["cells"], entries)
        for item, use in zip(result, uses):
            if use.cells:
                item.pages.append((path, use))
    return result


def definition_problems(items: list[Usage]) -> dict[str, str]:
    """Entry name -> what is wrong (the two rules of the module docstring); empty when all is well."""
    problems = {}
    for item in items:
        name = item.entry.terms[0]
        if not item.pages:
            continue
        path, use = item.pages[0]
        if not use.introduced:
            problems[name] = (f"“{name}”第一次出现在{page_label(path)}（第 {use.cells[0]} 个单元），"
                              "那一章没有介绍它（“术语（English）”或 **加粗**）")
            continue
        main = next(((p, u) for p, u in item.pages if u.main_cells), None)
        if main and not main[1].introduced_main:
            path, use = main
            problems[name] = (f"“{name}”在{page_label(path)}的主线里第一次用到（第 {use.main_cells[0]} 个单元），"
                              "那一章的主线没有介绍它（只在选读里介绍，或根本没介绍）：跳过选读的读者没见过它的定义")
    return problems


# -- English terms in the prose ----------------------------------------------------------------------
def english_forms(entries: list[book_text.Entry]) -> list[tuple[str, str]]:
    """(English form, entry name) for every entry, longest first; an entry whose term is its English
    (softmax, FLOPs) has none."""
    out = []
    for entry in entries:
        chinese = {t.lower() for t in entry.terms}
        for form in book_text.english_variants(entry.english):
            if form.lower() not in chinese:
                out.append((form, entry.terms[0]))
    return sorted(out, key=lambda f: (-len(f[0]), f[0]))


#: Abbreviations that are names, written the same way in Chinese technical prose: the model family
#: (RNN) and PyTorch's function (SDPA). They may follow their first mention; the words they
#: abbreviate may not.
ABBREVIATIONS = frozenset({"RNN", "SDPA"})


def english_uses(cells: list, entries: list[book_text.Entry]) -> list[tuple[int, str, str]]:
    """(cell, English word as written, entry) for each use of a glossary term's English in the prose
    of a page's Markdown cells (not code, inline code, math, link targets, the 参考 list), after
    the entry's first use on the page (its first mention: the gloss, 掩码（mask）). The glossary's
    rule: “中文（English）” once, then the Chinese term."""
    patterns = [(re.compile(r"(?<![A-Za-z0-9_\-])" + re.escape(form).replace(r"\ ", r"[\s-]+")
                            + r"(?:e?s)?(?![A-Za-z0-9_\-])", re.I), name)
                for form, name in english_forms(entries)]
    seen: set[str] = set()
    uses = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        source = book_text.text(cell)
        kept = "\n".join(part for title, part in book_text.split_sections(source) if title != "参考")
        text = book_text.prose(kept).text
        found = []
        taken = [False] * len(text)
        for pattern, name in patterns:
            for match in pattern.finditer(text):
                if any(taken[match.start():match.end()]):
                    continue
                taken[match.start():match.end()] = [True] * (match.end() - match.start())
                found.append((match.start(), match.group(0), name))
        for _, word, name in sorted(found):
            if word.rstrip("s") in ABBREVIATIONS:
                continue
            if name in seen:
                uses.append((index, word, name))
            seen.add(name)
    return uses


# -- the table ------------------------------------------------------------------------------------
def render_table(source: str, items: list[Usage], order: list[pathlib.Path]) -> str:
    """appendix/glossary.md with the 首次出现 column regenerated and the rows in first-use order."""
    rows = book_text.glossary_rows(source)
    if not rows:
        raise SystemExit("appendix/glossary.md 里找不到中英术语对照表")
    by_term = {t: item for item in items for t in item.entry.terms}
    lines = source.splitlines(keepends=True)
    keyed = []
    for position, row in enumerate(rows):
        item = by_term.get(row["term"])
        if item is None:
            raise SystemExit(f"对照表的“{row['term']}”不是术语表里的术语")
        first = item.first
        if first:
            path, use = first
            cell = f"[{page_label(path)}]({page_link(path)})"
            key = (order.index(path), use.cells[0], position)
        else:
            cell, key = "—", (len(order), 0, position)
        line = f"| {{term}}`{row['term']}`{row['rest']} | {row['english']} | {row['note']} | {cell} |\n"
        keyed.append((key, line))
    first_line, last_line = rows[0]["line"], rows[-1]["line"]
    if last_line - first_line + 1 != len(rows):
        raise SystemExit("中英术语对照表的行之间夹了别的内容")
    body = [line for _, line in sorted(keyed)]
    return "".join(lines[:first_line] + body + lines[last_line + 1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="只检查：首次出现一栏过时则退出码为 1")
    group.add_argument("--report", action="store_true", help="列出每个术语第一次出现和介绍的位置")
    group.add_argument("--english", action="store_true", help="各章正文里用英文写的术语（首次之后）")
    args = parser.parse_args()
    order = pages()
    if args.english:
        entries = book_text.glossary_entries()
        for path in order:
            uses = english_uses(book_text.read(path)["cells"], entries)
            words: dict[str, int] = {}
            for _, word, _ in uses:
                words[word.lower()] = words.get(word.lower(), 0) + 1
            top = ", ".join(f"{w} {n}" for w, n in sorted(words.items(), key=lambda kv: -kv[1])[:8])
            print(f"{path.stem:28} {len(uses):4d}  {top}")
        return 0
    items = usage(paths=order)
    if args.report:
        for item in items:
            where = [f"{page_label(p)}:{u.cells[0]}{'*' if u.introduced else ''}" for p, u in item.pages[:4]]
            print(f"{'/'.join(item.entry.terms):12} {', '.join(where) or '—'}")
        for name, problem in definition_problems(items).items():
            print(problem)
        return 0
    source = book_text.GLOSSARY.read_text(encoding="utf-8")
    new = render_table(source, items, order)
    if args.check:
        if new != source:
            print("appendix/glossary.md 的“首次出现”一栏过时：运行 python tools/make_glossary_first.py",
                  file=sys.stderr)
            return 1
        return 0
    if new != source:
        current = book_text.GLOSSARY.read_text(encoding="utf-8")
        if current != source:  # someone else wrote it meanwhile: start again from theirs
            new = render_table(current, items, order)
        book_text.GLOSSARY.write_text(new, encoding="utf-8")
        print("更新：appendix/glossary.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
