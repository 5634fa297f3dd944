"""The teacher's material points at what the chapters really have.

appendix/teaching.md, appendix/classroom_pack.ipynb and appendix/homework.ipynb send the teacher and the
students to sections, exercises and errata items of the chapters. When a chapter renames or moves a
section, renumbers or removes an exercise, these tests name the stale reference.

Section references, and the rule they must follow:

* ``§标题`` (the guide's “网页 §标题”): the text after § up to the next space, Chinese full stop, comma,
  semicolon, parenthesis or table bar must equal the text of a heading of the chapter meant, or be a
  prefix of it (``§切头`` → “切头：view 与 transpose”). Markdown emphasis and code marks are ignored,
  as the page shows the heading without them. The chapter meant is the last “第 N 章” written before
  the § in the same table cell; in a table row without one, the first “第 N 章” of the row's 内容
  column; outside tables, the last “第 N 章” before it in the same paragraph.
* ``第 N 章“标题”`` (also ``[第 N 章](…)“标题”“标题”``) and ``“标题”一节`` / ``“甲”“乙”两节``: every quoted
  title must equal a heading of chapter N or be a prefix of it. A quote right after 第 N 章 may instead be
  a quote from chapter N's title (第 4 章“猫吃鱼”). For ``“标题”一节`` without a chapter in front, the
  chapter is the last “第 N 章” before it in the same paragraph (in a notebook: the same cell), or else
  the chapter of the exercise the paragraph is about (练习 NN-k).
* The 2 × 45 minute plan is taught from the main line: none of its § references may point at a 选读
  (deep dive) section, which the session decks leave out.

Exercise ids (NN-k) must be exercises of the book (appendix/exercises.md, generated from the chapters);
errata items (辨误第 N 条) must exist in appendix/errata.ipynb.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import book_text  # noqa: E402  (tools/book_text.py: headings as the page shows them)

APPENDIX = ROOT / "appendix"
GUIDE = APPENDIX / "teaching.md"
NOTEBOOKS = [APPENDIX / "classroom_pack.ipynb", APPENDIX / "homework.ipynb"]

CHAPTER = re.compile(r"第 ?(\d+) ?章")
SECTION = re.compile(r"§")
SECTION_END = re.compile(r"[ 。，；（(|]")
EXERCISE = re.compile(r"(?<![\d.\-])(\d{2})-(\d{1,2})(?![\d\-])")
# 第 N 章“…”“…” or [第 N 章](…)“…”: a chapter followed directly by quoted titles
CHAPTER_QUOTES = re.compile(r"(\[)?第 ?(\d+) ?章(?(1)\]\([^)]*\))((?:“[^”\n]+”)+)")
# “…”一节, “…”“…”两节
QUOTES_SECTION = re.compile(r"((?:“[^”\n]+”)+)[一两三]节")
ERRATA_ITEM = re.compile(r"(?:辨误|勘误)(?:\]\([^)]*\)|\s*<[^>]*>`)?\s*第 ?([\d、,，–\-～ ]+?) ?条")


def plain(title: str) -> str:
    """A title as the page shows it: no emphasis, no code marks, no {role} markup."""
    title = re.sub(r"\{[a-z:]+\}`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", title)
    return re.sub(r"\*\*|`", "", title).strip()


# -- the chapters --------------------------------------------------------------------------------------
def chapter_pages() -> dict[int, pathlib.Path]:
    pages = {}
    for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        pages[int(path.name[:2])] = path
    return pages


PAGES = chapter_pages()


def _headings(number: int) -> tuple[str, list[tuple[str, bool]]]:
    """(chapter title, [(heading text, in a deep dive)]) of chapter `number` (## and deeper)."""
    nb = json.loads(PAGES[number].read_text(encoding="utf-8"))
    deep = book_text.deep_dive_cells(nb["cells"])
    title, out = "", []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for level, text in book_text.headings("".join(cell["source"])):
            if level == 1:
                title = plain(text)
            else:
                shown = plain(book_text.title_text(text)) if "$" in text else plain(text)
                out.append((shown, i in deep or shown.startswith("选读")))
    return title, out


HEADINGS = {n: _headings(n) for n in PAGES}


def heading_for(number: int, ref: str) -> tuple[str, bool] | None:
    """The heading of chapter `number` that `ref` names (equal, or a prefix of it), if any."""
    for text, deep in HEADINGS[number][1]:
        if text == ref or text.startswith(ref):
            return text, deep
    return None


# -- the book's exercises and errata items ------------------------------------------------------------
def exercise_ids() -> set[str]:
    index = (APPENDIX / "exercises.md").read_text(encoding="utf-8")
    ids = set(re.findall(r"^\| (\d{2}-\d+) \|", index, flags=re.M))
    from attnbook.exercises import load_all

    return ids | set(load_all())


def errata_items() -> set[int]:
    nb = json.loads((APPENDIX / "errata.ipynb").read_text(encoding="utf-8"))
    return {int(n) for c in nb["cells"] if c["cell_type"] == "markdown"
            for n in re.findall(r"^### (\d+)\. ", "".join(c["source"]), flags=re.M)}


def numbers(spec: str) -> list[int]:
    """'5、9–11' -> [5, 9, 10, 11]."""
    out = []
    for part in re.split(r"[、,，]", spec):
        part = part.strip()
        if not part:
            continue
        ends = [int(x) for x in re.split(r"\s*[–\-～]\s*", part)]
        out += list(range(ends[0], ends[-1] + 1))
    return out


# -- where the references are -----------------------------------------------------------------------
def guide_units() -> list[tuple[str, str, str, str]]:
    """(where, text, section of the guide) per unit of teaching.md: a table cell of a row (with the
    row's 内容 column as a fallback chapter), or a paragraph. Code fences are left out."""
    text = GUIDE.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    units, section, header, paragraph = [], "", None, []

    def flush():
        if paragraph:
            units.append((f"teaching.md（{section}）段落：{paragraph[0][:30]}…", "\n".join(paragraph), section, ""))
            paragraph.clear()

    for line in text.splitlines():
        if line.startswith("## "):
            flush()
            section = line[3:].strip()
        if line.startswith("|"):
            flush()
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                continue
            if set("".join(cells)) <= set("-: "):
                continue
            content = cells[header.index("内容")] if "内容" in header and len(cells) == len(header) else ""
            for cell in cells:
                units.append((f"teaching.md（{section}）表格行：{cells[0]}", cell, section, content))
            continue
        header = None
        if line.strip():
            paragraph.append(line)
        else:
            flush()
    flush()
    return units


def notebook_units() -> list[tuple[str, str, str, str]]:
    units = []
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                units.append((f"{path.name} 第 {i} 个单元格", "".join(cell["source"]), "", ""))
    return units


UNITS = guide_units() + notebook_units()


def chapter_before(text: str, position: int) -> int | None:
    found = [int(m.group(1)) for m in CHAPTER.finditer(text[:position])]
    return found[-1] if found else None


def exercise_chapter(text: str) -> int | None:
    match = re.search(r"练习 (\d{2})-\d+", text)
    return int(match.group(1)) if match else None


def section_refs():
    """(where, chapter, reference, kind, guide section) for every section reference in the material."""
    out = []
    for where, text, section, content in UNITS:
        for m in SECTION.finditer(text):
            rest = text[m.end():]
            if not rest or rest[0].isspace() or rest[0] in "”\"":
                continue  # a bare sign (“§ 指小节”), not a reference
            ref = plain(SECTION_END.split(rest, maxsplit=1)[0])
            chapter = chapter_before(text, m.start())
            if chapter is None and content:
                first = CHAPTER.search(content)
                chapter = int(first.group(1)) if first else None
            out.append((where, chapter, ref, "§", section))
        for m in CHAPTER_QUOTES.finditer(text):
            for quote in re.findall(r"“([^”]+)”", m.group(3)):
                out.append((where, int(m.group(2)), plain(quote), "第 N 章“…”", section))
        for m in QUOTES_SECTION.finditer(text):
            before = text[:m.start()]
            if re.search(r"第 ?\d+ ?章(?:\]\([^)]*\))?$", before):
                continue  # already taken as 第 N 章“…”
            chapter = chapter_before(text, m.start()) or exercise_chapter(text)
            for quote in re.findall(r"“([^”]+)”", m.group(1)):
                out.append((where, chapter, plain(quote), "“…”一节", section))
    return out


REFS = section_refs()


def test_the_material_has_section_references():
    kinds = {kind for *_, kind, _ in REFS}
    assert len(REFS) >= 40 and kinds == {"§", "第 N 章“…”", "“…”一节"}, (len(REFS), kinds)


@pytest.mark.parametrize("where, chapter, ref, kind, section", REFS,
                         ids=[f"{i}-ch{r[1]}" for i, r in enumerate(REFS)])
def test_section_reference_names_a_heading_of_its_chapter(where, chapter, ref, kind, section):
    assert chapter is not None, f"{where}：引用 {kind}“{ref}”，但找不到它说的是哪一章（在同一格或同一段里写明“第 N 章”）"
    assert chapter in PAGES, f"{where}：第 {chapter} 章不存在"
    assert len(ref) >= 2, f"{where}：§ 后面的标题太短：“{ref}”"
    title, headings = HEADINGS[chapter]
    found = heading_for(chapter, ref)
    if found is None and kind == "第 N 章“…”" and ref in title:
        return  # 第 4 章“猫吃鱼”: a quote from the chapter's title
    assert found, (f"{where}：第 {chapter} 章没有标题为（或以）“{ref}”（开头）的小节。"
                   f"该章主线的小节：{'、'.join(t for t, _ in headings if not t.startswith('选读'))}"
                   "（选读的标题以“选读：”开头）")
    if section.startswith("两课时方案"):
        assert not found[1], f"{where}：两课时方案引用了选读“{found[0]}”（精选幻灯片不收选读，课上按主线讲）"


def exercise_refs():
    out = []
    for where, text, _, _ in UNITS:
        for m in EXERCISE.finditer(text):
            out.append((where, m.group(0)))
    return out


def test_every_exercise_mentioned_exists():
    known = exercise_ids()
    refs = exercise_refs()
    assert len({key for _, key in refs}) >= 25
    missing = [f"{where}：{key}" for where, key in refs if key not in known]
    assert not missing, "这些练习编号在书里不存在（appendix/exercises.md）：\n" + "\n".join(missing)


def test_every_errata_item_mentioned_exists():
    items = errata_items()
    assert len(items) >= 24
    found = []
    for where, text, _, _ in UNITS:
        for m in ERRATA_ITEM.finditer(text):
            for n in numbers(m.group(1)):
                found.append((where, n))
    assert len(found) >= 20
    missing = [f"{where}：第 {n} 条" for where, n in found if n not in items]
    assert not missing, "参考文章辨误里没有这些条目：\n" + "\n".join(missing)


def test_the_book_s_words():
    """The errata page is 参考文章辨误; the book says 软检索 and N 元语法 (N-gram only as the gloss)."""
    texts = {GUIDE.name: GUIDE.read_text(encoding="utf-8")}
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        texts[path.name] = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for name, text in texts.items():
        assert "勘误" not in text, f"{name}：附录已改名为“参考文章辨误”，条目写成“辨误第 N 条”"
        assert "软查找" not in text and "硬查找" not in text, f"{name}：本书说“软检索”“硬检索”"
        for m in re.finditer(r"N-gram", text):
            assert text[max(0, m.start() - 7):m.start()].endswith(("N 元语法（", "N 元语法 (")), \
                f"{name}：N-gram 只在第一次出现时作为“N 元语法（N-gram）”的英文注出现"
        assert len(re.findall(r"N-gram", text)) <= 1, name
