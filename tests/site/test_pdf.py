"""The printed book (make pdf → _build/pdf/自注意力机制详解.pdf).

Chromium prints the single-page build (tools/make_pdf.py). Checked here: every chapter's title,
extractable Chinese text, every font embedded, no missing glyph (every character of the text is in
a font the PDF embeds), the size, that sliders print as labelled key frames, and that nothing made
for a screen prints (issue 22): no toggle, launch, download or navigation text; every reference
solution prints as a labelled block with its code, every dropdown open under its title, and a
hide-input cell only as its output.
"""
from __future__ import annotations

import collections
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import make_pdf  # noqa: E402  (the one-page build's folder)

ROOT = pathlib.Path(__file__).resolve().parents[2]
PDF = ROOT / "_build" / "pdf" / "自注意力机制详解.pdf"
MAX_MB = 40


def _run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def pdf() -> pathlib.Path:
    if shutil.which("pdftotext") is None:
        pytest.fail("找不到 poppler-utils 的 pdftotext（apt-get install poppler-utils）")
    if not PDF.exists():
        pytest.skip("_build/pdf/自注意力机制详解.pdf 尚未生成（先运行 make pdf），跳过 PDF 测试")
    return PDF


@pytest.fixture(scope="module")
def text(pdf) -> str:
    return _run("pdftotext", "-enc", "UTF-8", str(pdf), "-")


def chapter_titles() -> list[str]:
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    titles = []
    for stem in re.findall(r"- file: (\S+)", toc):
        path = next(p for p in (ROOT / f"{stem}.ipynb", ROOT / f"{stem}.md") if p.exists())
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            source = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
        else:
            source = path.read_text(encoding="utf-8")
        titles.append(re.search(r"^# (.+)$", source, re.M).group(1).strip())
    return titles


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


def test_every_chapter_title_once_as_a_heading(text):
    flat = _squash(text)
    for title in chapter_titles():
        plain = _squash(re.sub(r"[`*$\\]", "", title))
        # once in the printed table of contents, once as the chapter's heading
        assert flat.count(plain) >= 2, f"PDF 中缺少章节标题：{title}"


def test_chinese_text_is_extractable(text):
    assert "猫吃鱼" in text
    assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 50_000


def test_print_reads_its_text_back(pdf, tmp_path):
    """make_pdf.py reads the printed text back and prints again if the body text is missing (a busy
    machine once printed only formulas and page numbers): the book passes that check, its first page
    alone (the table of contents: no code) does not."""
    assert make_pdf._text_missing(pdf) == ""
    cover = tmp_path / "cover.pdf"
    _run("pdfseparate", "-f", "1", "-l", "1", str(pdf), str(cover))
    assert "import torch" in make_pdf._text_missing(cover)


def _fonts(pdf) -> list[list[str]]:
    lines = _run("pdffonts", str(pdf)).splitlines()[2:]
    return [line.split() for line in lines]


def test_every_font_is_embedded(pdf):
    rows = _fonts(pdf)
    assert rows
    # columns: name type [type…] encoding emb sub uni object-id gen; emb is the 5th from the end
    not_embedded = [row for row in rows if row[-5] != "yes"]
    assert not not_embedded, not_embedded


def test_no_missing_glyph(pdf, text):
    """Every character of the text is in a font Chromium had: the book's own font (printed as
    Type 3 outlines) or a system font the PDF embeds (DejaVu for Latin and code)."""
    from fontTools.ttLib import TTFont

    files = [ROOT / "attnbook" / "fonts" / "AttnBookSansSC-Regular.otf"]
    for row in _fonts(pdf):
        name = row[0].split("+", 1)[-1]
        if name == "[none]" or "FontAwesome" in name:
            continue
        found = _run("fc-list", f":postscriptname={name}", "file").split(":")[0].strip()
        assert found, f"PDF 嵌入的字体 {name} 在本机找不到"
        files.append(pathlib.Path(found))
    covered: set[int] = set()
    for path in files:
        covered |= set(TTFont(str(path), fontNumber=0).getBestCmap())
    # A character no font has is printed as an empty box that pdftotext drops, so the text that
    # was printed (the single-page build's, outside scripts, styles and formulas) is checked too.
    printed = text + _page_text(make_pdf.SINGLE / "intro.html")
    missing = sorted({c for c in printed if not c.isspace() and ord(c) not in covered
                      and not 0xE000 <= ord(c) <= 0xF8FF})  # Private Use Area: the theme's icons
    assert not missing, f"这些字符没有字形（重新生成字体子集：tools/make_font_subset.py）：{missing[:40]}"


def _page_text(path: pathlib.Path) -> str:
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.skip, self.parts = 0, []

        def handle_starttag(self, tag, attrs):
            if tag in ("script", "style", "math", "title"):
                self.skip += 1

        def handle_endtag(self, tag):
            if tag in ("script", "style", "math", "title"):
                self.skip -= 1

        def handle_data(self, data):
            if not self.skip:
                self.parts.append(data)

    parser = Text()
    parser.feed(path.read_text(encoding="utf-8"))
    # TeX source of formulas (\( … \), $$ … $$) is typeset by MathJax in its own fonts
    return re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", "", "".join(parser.parts), flags=re.S)


def test_size(pdf):
    size_mb = pdf.stat().st_size / 1e6
    assert size_mb <= MAX_MB, f"PDF 有 {size_mb:.1f} MB，超过 {MAX_MB} MB"


def test_pages_are_numbered(pdf):
    pages = int(re.search(r"Pages:\s+(\d+)", _run("pdfinfo", str(pdf))).group(1))
    last = _run("pdftotext", "-f", str(pages), "-l", str(pages), str(pdf), "-")
    assert f"{pages} / {pages}" in last


def test_sliders_print_as_labelled_key_frames(text):
    """A printed slider shows its key frames, each captioned with its values (“温度 τ = …”)."""
    singlehtml = (make_pdf.SINGLE / "intro.html").read_text(encoding="utf-8")
    sliders = singlehtml.split('<div class="attnbook-slider"')[1:]
    assert sliders
    for block in sliders:
        block = block.split("</script>", 1)[0]
        n_frames, n_keys = block.count("<img data-frame="), block.count('class="attnbook-key"')
        assert min(3, n_frames) <= n_keys <= 6, (n_frames, n_keys)
    captions = re.findall(r'<figcaption class="attnbook-caption">([^<]+)</figcaption>', singlehtml)
    assert captions and all(_squash(c.split("，")[0]) in _squash(text) for c in captions[:20])


# Text of the screen's controls, none of which may print. The first two are what the PDF printed
# before issue 22 (70 toggle bars over hidden code cells); the rest are the site's buttons, links
# and tooltips (sphinx-book-theme, myst-nb, sphinx-copybutton, in Chinese and English).
# Not listed because the prose uses them: 目录, 复制, 搜索, Colab, Binder, 幻灯片.
SCREEN_UI = [
    "显示代码单元", "显示代码", "隐藏代码单元", "隐藏代码", "显示输出", "隐藏输出", "▶", "▸", "►",
    "回到顶部", "Ctrl+K", "Launch on", "在线运行", "源代码仓库", "源码库", "Repository", "Open issue",
    "创建议题", "下载此页面", "下载源文件", "列印成 PDF", "全屏模式", "方向键翻页，S 键看讲者备注",
    "颜色模式", "Toggle primary sidebar", "Toggle secondary sidebar", "网页导航", "当前页面",
    "复制到剪贴板", "已复制", "Copy to clipboard", "Copied!", "上一页", "下一页",
]


def test_no_screen_ui(text):
    flat = _squash(text)
    found = {ui: flat.count(_squash(ui)) for ui in SCREEN_UI if _squash(ui) in flat}
    assert not found, f"PDF 里印出了只在屏幕上有用的控件文字：{found}"


def _code_cells() -> list[tuple[str, list[str], str]]:
    """(notebook, tags, source) of every code cell of the chapters and the appendix notebooks."""
    cells = []
    for path in sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("appendix/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                tags = cell.get("metadata", {}).get("tags", [])
                cells.append((path.name, tags, "".join(cell["source"])))
    return cells


def _solution_label(ids: list[str]) -> str:
    """make_pdf.py's label: “参考解答（练习 09-3 到 09-7）” for a cell that checks several."""
    return "参考解答（练习 " + (f"{ids[0]} 到 {ids[-1]}" if len(ids) > 2 else "、".join(ids)) + "）"


def test_every_reference_solution_prints_labelled(text):
    """Each hide-cell cell that calls attnbook.check prints once as “参考解答（练习 NN-N）”."""
    solutions = [re.findall(r"""attnbook\.check\(\s*["'](\d{2}-\d+)["']""", source)
                 for _, tags, source in _code_cells() if "hide-cell" in tags]
    solutions = [ids for ids in solutions if ids]
    assert len(solutions) >= 40
    flat = _squash(text)
    assert flat.count("参考解答（练习") == len(solutions)
    # once per cell that checks it (the homework repeats some chapters' exercises)
    expected = collections.Counter(_squash(_solution_label(ids)) for ids in solutions)
    for label, n in expected.items():
        assert flat.count(label) == n, label


def _unique_code_line(source: str, counts: collections.Counter, others: str = "") -> str | None:
    """The cell's longest line of plain code that no other code cell has, whitespace removed
    (pdftotext can move comments, printed in another font, out of their line). ``others``: the
    other cells' code, squashed; a line found inside it (``f,`` inside ``import f, g``) is not unique."""
    lines = [_squash(line) for line in source.splitlines() if line.isascii() and "#" not in line
             and counts[_squash(line)] == 1 and len(_squash(line)) >= 12
             and _squash(line) not in others]
    return max(lines, key=len, default=None)


def test_hidden_code_prints_by_kind(text):
    """A hide-cell cell prints its code (the solution); a hide-input cell only its output."""
    cells = _code_cells()
    counts = collections.Counter(_squash(line) for _, _, source in cells
                                 for line in set(source.splitlines()))
    flat = _squash(text)
    squashed = [_squash(source) for _, _, source in cells]

    def others(i: int) -> str:
        return "\n".join(squashed[:i] + squashed[i + 1:])

    shown = [(name, line) for i, (name, tags, source) in enumerate(cells) if "hide-cell" in tags
             if (line := _unique_code_line(source, counts, others(i)))]
    hidden = [(name, line) for i, (name, tags, source) in enumerate(cells) if "hide-input" in tags
              if (line := _unique_code_line(source, counts, others(i)))]
    assert len(shown) >= 30 and len(hidden) >= 15, (len(shown), len(hidden))
    assert not [(n, line) for n, line in shown if line not in flat], "参考解答的代码没有印出来"
    assert not [(n, line) for n, line in hidden if line in flat], "hide-input 单元的代码印出来了"


def _dropdowns() -> list[str]:
    """The label each {dropdown} of the book's pages prints under, in make_pdf.py's words: its
    title, or “练习 NN-N 的<title>” when the title does not name the exercise above it."""
    labels = []
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for stem in ["intro"] + re.findall(r"- file: (\S+)", toc):
        path = next(p for p in (ROOT / f"{stem}.ipynb", ROOT / f"{stem}.md") if p.exists())
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        else:
            source = path.read_text(encoding="utf-8")
        exercise = None
        for line in source.splitlines():
            if re.match(r"#{1,2} ", line):
                exercise = None
            if m := re.match(r"\*\*练习\s*(\d{2}-\d+)", line):
                exercise = m.group(1)
            if m := re.match(r"(?:`{3,}|:{3,})\{dropdown\}\s*(.*)$", line):
                title = m.group(1).strip()
                labels.append(title if "练习" in title or not exercise else f"练习 {exercise} 的{title}")
    return labels


def test_every_dropdown_prints_open_under_its_title(text):
    labels = _dropdowns()
    assert len(labels) >= 60
    flat = _squash(text)
    # on the site a title sits on a bar and the text under it is folded; in print both show
    printed = re.findall(r"练习\d{2}-\d+(?:到\d{2}-\d+)?的(?:提示与解答|解答|提示)", flat)
    exercise_labels = [lab for lab in labels if re.match(r"练习\s*\d{2}-\d+", lab)]
    assert len(printed) == len(exercise_labels), (len(printed), len(exercise_labels))
    assert collections.Counter(printed) == collections.Counter(_squash(lab) for lab in exercise_labels)
    # the other dropdowns (the classroom pack's answers, …) print under their own titles
    assert all(_squash(lab) in flat for lab in labels if lab not in exercise_labels)
    # the text under the first title printed (it was folded away before issue 22)
    assert "窗口是前" in flat.split(_squash(labels[0]), 1)[1][:200]


def test_solution_page_is_not_blank(pdf, text):
    """The page with the first reference solution, rendered: ink on it, not an empty page."""
    if shutil.which("pdftoppm") is None:
        pytest.skip("没有 poppler-utils 的 pdftoppm")
    page = text[:text.index("参考解答（练习")].count("\f") + 1
    pgm = subprocess.run(["pdftoppm", "-r", "30", "-gray", "-f", str(page), "-l", str(page),
                          str(pdf)], check=True, capture_output=True).stdout
    # binary PGM: "P5\n<w> <h>\n255\n" then one byte per pixel
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", pgm)
    pixels = pgm[header.end():]
    assert len(pixels) == int(header.group(1)) * int(header.group(2))
    ink = sum(1 for value in pixels if value < 128) / len(pixels)
    assert ink > 0.01, f"第 {page} 页几乎是空白（墨迹 {ink:.2%}）"


def _deep_dives() -> list[tuple[str, str]]:
    """(title, a piece of its first paragraph) of every deep dive (选读) of the book's notebooks."""
    import runpy
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import book_text  # noqa: PLC0415

    found = []
    for path in runpy.run_path(str(ROOT / "tools" / "book.py"))["NOTEBOOKS"]:
        cells = book_text.read(path)["cells"]
        for run in book_text.deep_dive_runs(cells):
            if not run.level:
                continue
            prose = "\n".join(book_text.prose(book_text.text(cells[i])).text for i in run.cells
                             if cells[i]["cell_type"] == "markdown")
            # the first words after the heading, up to the first formula, code or line break
            body = re.match(r"\s*([\u4e00-\u9fff，、“”]{6,16})", prose.split("\n", 1)[-1].lstrip())
            found.append((book_text.title_text(run.title), body.group(1) if body else ""))
    return found


def test_deep_dives_print_open_in_a_labelled_box(text):
    """A deep dive prints open (tools/make_pdf.py), in a box under its heading with the 选读 label and
    the note that a first reading may skip it; its text is printed."""
    dives = _deep_dives()
    if not dives:
        pytest.skip("本书还没有选读（deep-dive 标签）")
    flat = _squash(text)
    assert flat.count("第一次阅读可以跳过·约") >= len(dives), (flat.count("第一次阅读可以跳过·约"), len(dives))
    missing = [title for title, _ in dives if _squash(f"选读{title}") not in flat]
    assert not missing, f"PDF 里没有这些选读的标题（带“选读”标签）：{missing}"
    unprinted = [(title, body) for title, body in dives if body and body not in flat]
    assert not unprinted, f"这些选读的正文没有印出来：{unprinted[:5]}"
