"""The built site, read as files: search, offline assets, sizes."""
from __future__ import annotations

import json
import re

from conftest import ROOT  # tests/site/conftest.py

MAX_PAGE_BYTES = 3_000_000


def search_index(site) -> dict:
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1: text.rindex(")")])


def test_chinese_search_index(site):
    index = search_index(site)
    assert "注意力" in index["terms"]  # body text, segmented by jieba
    for word in ["权重", "缩放", "点积"]:
        assert word in index["terms"] or word in index["titleterms"], f"搜索索引里没有“{word}”"


def test_language_is_chinese(site):
    assert '<html lang="zh-CN"' in (site / "intro.html").read_text(encoding="utf-8")


def test_mathjax_is_served_with_the_site(site):
    assert (site / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 500_000
    fonts = list((site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert len(fonts) > 10


def test_no_script_or_style_from_another_host(site, pages):
    for page in pages:
        html = (site / page).read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|link|img|iframe)[^>]*>", html):
            src = re.search(r'(?:src|href)="(https?:)?//', tag)
            if src and "<link" in tag and 'rel="canonical"' in tag:
                continue
            assert not src, f"{page}: {tag[:120]}"


def test_page_sizes(site, pages):
    for page in pages:
        html_path = site / page
        size = html_path.stat().st_size
        for img in re.findall(r'<img[^>]*src="(?!data:)([^"]+)"', html_path.read_text(encoding="utf-8")):
            size += (html_path.parent / img).resolve().stat().st_size
        assert size <= MAX_PAGE_BYTES, f"{page}: {size / 1e6:.2f} MB"


def test_every_chapter_has_colab_and_download(site, pages):
    for page in pages:
        if not page.startswith("chapters/"):
            continue
        html = (site / page).read_text(encoding="utf-8")
        # Colab, Binder and the download button give the reader edition (notebooks/), not the source
        source = page.removesuffix(".html") + ".ipynb"
        assert f"colab.research.google.com/github/attnbook/self-attention-zh/blob/main/notebooks/{source}" \
            in html, page
        assert f"urlpath=lab/tree/notebooks/{source}" in html, page
        assert f"_sources/{source}" in html, page
        downloaded = (site / "_sources" / source).read_bytes()
        assert downloaded == (ROOT / "notebooks" / source).read_bytes(), f"{page}: 下载的不是读者版"


def test_no_error_output_on_any_page(site, pages):
    for page in pages:
        html = (site / page).read_text(encoding="utf-8")
        # a traceback only where a cell is tagged raises-exception (and explained in the prose)
        assert html.count("output traceback") <= html.count("tag_raises-exception"), page
        assert "Glyph" not in html, page


# An absolute path of the machine that built the site (a traceback frame, site-packages, a home,
# /tmp or /work directory); tests/test_structure.py checks the notebooks' stored outputs the same way.
MACHINE_PATH = re.compile(r"(?<![\w.:/])/(?:[\w.-]+/)+[\w.-]+\.py\b|site-packages|(?<![\w.:/])/(?:root|home|tmp|work)/\w")


def test_no_machine_paths_in_pages_or_search_index(site, pages):
    for name in list(pages) + ["searchindex.js"]:
        text = re.sub(r"\x1b\[[0-9;]*m", "", (site / name).read_text(encoding="utf-8"))
        hit = MACHINE_PATH.search(text)
        assert hit is None, f"{name} 含有本机路径：{text[max(0, hit.start() - 60):hit.end()]!r}"


def test_chapter_pages_say_where_their_numbers_come_from(site, pages):
    for page in pages:
        if page.startswith("chapters/"):
            html = (site / page).read_text(encoding="utf-8")
            assert re.search(r"本页输出由 \d{4}-\d\d-\d\d 的一次运行生成：Python [\d.]+ · PyTorch [\d.]+ · CPU：", html), page
