"""Link the first use of each glossary term in every chapter to appendix/glossary.md.

    python tools/link_glossary.py          # edits chapters/*.ipynb (Markdown cells only)
    python tools/link_glossary.py --check  # exit 1 if a chapter would change

Terms and their labels come from the glossary itself: each entry is ``(glossary-xxx)=`` followed
by ``中文（English）``. In each chapter, the first occurrence of the Chinese term in running text
(not in a heading, math, code, or an existing link) becomes ``[术语](../appendix/glossary.md)``.
The link goes to the glossary page, not to the entry: MyST checks ``file.md#id`` links against
heading anchors only and would warn on a label. The labels already linked are recorded in
the notebook metadata ``attnbook.glossary``, so a second run changes nothing.
Only Markdown changes, so stored outputs stay those of the last clean run. Idempotent.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "appendix" / "glossary.md"
# stretches of Markdown that must not be touched: math, code, links, MyST roles/directives, headings
PROTECTED = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|```.*?```|`[^`\n]+`|\[[^\]]*\]\([^)]*\)|\{[a-z]+\}`[^`]*`|^#.*$|^:::.*$",
                       re.S | re.M)


def glossary_terms() -> list[tuple[str, str]]:
    """(Chinese term, label) pairs; a heading 甲、乙（English） gives both 甲 and 乙.

    One-character terms (键, 值, 头) are left out: they occur inside too many other words.
    """
    lines = GLOSSARY.read_text(encoding="utf-8").splitlines()
    terms = []
    for i, line in enumerate(lines[:-1]):
        m = re.fullmatch(r"\((glossary-[a-z0-9-]+)\)=", line.strip())
        if m:
            head = lines[i + 1].strip().split("（", 1)[0]
            for term in head.split("、"):
                term = term.strip()
                if len(term) >= 2 and re.search(r"[\u4e00-\u9fff]", term):
                    terms.append((term, m.group(1)))
    # longer terms first, so that 因果掩码 is linked before 掩码
    return sorted(terms, key=lambda t: -len(t[0]))


def _inside_longer(text: str, i: int, term: str, longer: list[str]) -> bool:
    """Is the occurrence of `term` at `i` part of a longer glossary term (自注意力 for 注意力)?"""
    for word in longer:
        k = word.find(term)
        while k >= 0:
            if text[i - k: i - k + len(word)] == word:
                return True
            k = word.find(term, k + 1)
    return False


def link_first(text: str, term: str, label: str, longer: list[str] = ()) -> tuple[str, bool]:
    target = "../appendix/glossary.md"
    protected = [m.span() for m in PROTECTED.finditer(text)]
    start = 0
    while True:
        i = text.find(term, start)
        if i < 0:
            return text, False
        if not any(a <= i < b for a, b in protected) and not _inside_longer(text, i, term, longer):
            return text[:i] + f"[{term}]({target})" + text[i + len(term):], True
        start = i + len(term)


def process(path: pathlib.Path, terms) -> bool:
    nb = nbformat.read(path, as_version=4)
    changed = False
    words = [t for t, _ in terms]
    linked = nb.metadata.setdefault("attnbook", {}).setdefault("glossary", [])
    for term, label in terms:
        if label in linked:
            continue  # already linked
        longer = [w for w in words if term in w and w != term]
        for cell in nb.cells[1:]:  # not the title cell
            if cell.cell_type != "markdown" or "## 学习目标" in cell.source:
                continue
            new, done = link_first(cell.source, term, label, longer)
            if done:
                cell.source, changed = new, True
                linked.append(label)
                break
    if changed:
        tmp = path.with_suffix(".tmp")
        nbformat.write(nb, tmp)
        tmp.replace(path)
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    terms = glossary_terms()
    stale = []
    for path in sorted(ROOT.glob("chapters/*.ipynb")):
        if args.check:
            nb_before = path.read_bytes()
            if process(path, terms):
                stale.append(path.name)
                path.write_bytes(nb_before)
        elif process(path, terms):
            print(f"链接术语：{path.name}")
    if args.check and stale:
        print("这些章节有术语未链接到术语表：", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
