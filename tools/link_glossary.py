"""Link the first use of each glossary term in a chapter to its entry, with MyST's {term} role.

    python tools/link_glossary.py                      # edits every chapters/*.ipynb and appendix/errata.ipynb
    python tools/link_glossary.py chapters/13_x.ipynb  # only these notebooks
    python tools/link_glossary.py --check [paths…]     # exit 1 if a notebook would change (changes nothing)

Terms come from the ```{glossary}``` directives of appendix/glossary.md (every unindented line of a
directive is a term). In each notebook, the first occurrence of a term in running Markdown (not in
a heading, math, code, a link or a role) becomes {term}`术语`, which Sphinx resolves to the entry
itself. Older links ``[术语](../appendix/glossary.md)`` (to the top of the page) are turned into
{term} roles first. Occurrences in another sense are skipped (``SKIP``): logits and the head
metrics of chapter 14 are not attention scores (分数). The terms already linked are recorded in
the notebook metadata ``attnbook.glossary``, so a second run changes nothing (a term whose link an
author removed stays unlinked). When text added later uses a linked term before its link, the link
moves to that first use. Only Markdown cells
change, so the stored outputs stay those of the last clean run.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "appendix" / "glossary.md"
OLD_LINK = re.compile(r"\[([^\]]+)\]\(\.\./appendix/glossary\.md\)")
# stretches of Markdown that must not be touched: math, code, links, MyST roles/directives, headings
PROTECTED = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|```.*?```|`[^`\n]+`|\[[^\]]*\]\([^)]*\)|\{[a-z]+\}`[^`]*`|^#[^\n]*$|^:::[^\n]*$",
                       re.S | re.M)  # (re.S is for math and code fences; headings stop at the line end)
# term -> a pattern of the text just before it that means another sense of the word
SKIP = {
    "分数": re.compile(r"(词的|字母的|头的|前一词|归纳|logits 的|类别的|输出的|打)$"),
}


def glossary_terms() -> list[str]:
    """Terms of the {glossary} directives, longest first (so 因果掩码 is linked before 掩码).

    One-character terms (键, 值, 头) are left out: they occur inside too many other words.
    """
    text = GLOSSARY.read_text(encoding="utf-8")
    terms = []
    for block in re.findall(r"^```\{glossary\}\n(.*?)^```$", text, flags=re.S | re.M):
        terms += [line.strip() for line in block.splitlines() if line.strip() and not line[0].isspace()]
    return sorted({t for t in terms if len(t) >= 2}, key=lambda t: (-len(t), t))


def _inside_longer(text: str, i: int, term: str, longer: list[str]) -> bool:
    """Is the occurrence of `term` at `i` part of a longer glossary term (自注意力 for 注意力)?"""
    for word in longer:
        k = word.find(term)
        while k >= 0:
            if text[i - k: i - k + len(word)] == word:
                return True
            k = word.find(term, k + 1)
    return False


def _other_sense(text: str, i: int, term: str) -> bool:
    pattern = SKIP.get(term)
    return bool(pattern and pattern.search(text[max(0, i - 12):i]))


def first_plain(text: str, term: str, longer: list[str] = ()) -> int:
    """Index of the first linkable plain occurrence of `term` in `text`, or -1."""
    protected = [m.span() for m in PROTECTED.finditer(text)]
    start = 0
    while True:
        i = text.find(term, start)
        if i < 0:
            return -1
        if (not any(a <= i < b for a, b in protected) and not _inside_longer(text, i, term, longer)
                and not _other_sense(text, i, term)):
            return i
        start = i + len(term)


def link_first(text: str, term: str, longer: list[str] = ()) -> tuple[str, bool]:
    """Text with the first linkable occurrence of `term` made a {term} role, and whether it changed."""
    i = first_plain(text, term, longer)
    if i < 0:
        return text, False
    return text[:i] + "{term}`" + term + "`" + text[i + len(term):], True


def _role(term: str) -> re.Pattern:
    return re.compile(r"\{term\}`" + re.escape(term) + "`")


def move_to_first_use(cells: list, term: str, longer: list[str]) -> bool:
    """If a plain occurrence of `term` comes before its {term} role (text written after the link was
    made), link that occurrence instead and make the later role plain text again."""
    role = _role(term)
    for cell in cells:
        plain, linked = first_plain(cell.source, term, longer), role.search(cell.source)
        if linked and (plain < 0 or linked.start() < plain):
            return False  # the role already is the first use
        if plain >= 0:
            break
    else:
        return False
    for later in cells:
        if role.search(later.source):
            later.source = role.sub(term, later.source, count=1)
            break
    cell.source, _ = link_first(cell.source, term, longer)
    return True


def convert_old_links(text: str, terms: set[str]) -> str:
    """[术语](../appendix/glossary.md) -> {term}`术语` (plain text when it is not a term or the wrong sense)."""
    def repl(m: re.Match) -> str:
        word = m.group(1)
        if word in terms and not _other_sense(text, m.start(), word):
            return "{term}`" + word + "`"
        return word
    return OLD_LINK.sub(repl, text)


def process(path: pathlib.Path, terms: list[str], *, write: bool = True) -> bool:
    nb = nbformat.read(path, as_version=4)
    changed = False
    term_set = set(terms)
    meta = nb.metadata.setdefault("attnbook", {})
    linked = [t for t in meta.get("glossary", []) if t in term_set]  # older runs stored labels
    for cell in nb.cells:
        if cell.cell_type == "markdown" and OLD_LINK.search(cell.source):
            cell.source, changed = convert_old_links(cell.source, term_set), True
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for m in re.finditer(r"\{term\}`([^`<]+)`", cell.source):
                if m.group(1) in term_set and m.group(1) not in linked:
                    linked.append(m.group(1))
    prose = [c for c in nb.cells[1:]  # not the title cell, nor the learning goals
             if c.cell_type == "markdown" and "## 学习目标" not in c.source]
    for term in terms:
        longer = [w for w in terms if term in w and w != term]
        if term in linked:
            if any(_role(term).search(c.source) for c in prose):
                changed |= move_to_first_use(prose, term, longer)
            continue
        for cell in prose:
            new, done = link_first(cell.source, term, longer)
            if done:
                cell.source, changed = new, True
                linked.append(term)
                break
    if meta.get("glossary") != sorted(linked):
        meta["glossary"] = sorted(linked)
        changed = True
    if changed and write:
        tmp = path.with_suffix(".tmp")
        nbformat.write(nb, tmp)
        tmp.replace(path)
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report, change nothing")
    parser.add_argument("paths", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    terms = glossary_terms()
    paths = args.paths or sorted(ROOT.glob("chapters/*.ipynb")) + [ROOT / "appendix" / "errata.ipynb"]
    stale = [p.name for p in paths if process(p, terms, write=not args.check)]
    if args.check:
        if stale:
            print("这些笔记本有术语未链接到术语表：", ", ".join(stale))
            return 1
        return 0
    for name in stale:
        print(f"链接术语：{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
