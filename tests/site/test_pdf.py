"""The printed book (make pdf → _build/pdf/自注意力机制详解.pdf).

Chromium prints the single-page build (tools/make_pdf.py). Checked here: every chapter's title,
extractable Chinese text, every font embedded, no missing glyph (every character of the text is in
a font the PDF embeds), the size, and that sliders print as labelled key frames.
"""
from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess

import pytest

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
    printed = text + _page_text(ROOT / "_build" / "singlehtml" / "intro.html")
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
    singlehtml = (ROOT / "_build" / "singlehtml" / "intro.html").read_text(encoding="utf-8")
    sliders = singlehtml.split('<div class="attnbook-slider"')[1:]
    assert sliders
    for block in sliders:
        block = block.split("</script>", 1)[0]
        n_frames, n_keys = block.count("<img data-frame="), block.count('class="attnbook-key"')
        assert min(3, n_frames) <= n_keys <= 6, (n_frames, n_keys)
    captions = re.findall(r'<figcaption class="attnbook-caption">([^<]+)</figcaption>', singlehtml)
    assert captions and all(_squash(c.split("，")[0]) in _squash(text) for c in captions[:20])
