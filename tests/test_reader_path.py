"""The reader's path (issue 23): the tools behind deep dives (选读), reading times, the glossary's
首次出现 column and the one-language check, on small fixtures, so each rule is seen to fail.

The book-wide checks that use them are in tests/test_structure.py; the media (site, PDF, slides,
JupyterLab) in tests/site/. The fixture chapter tests/fixtures/deep_dive_chapter.ipynb has two deep
dives: one under ``###`` followed by a ``###``, one under ``##`` followed by ``## 小结``.
"""
from __future__ import annotations

import copy
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import book_text  # noqa: E402
import make_glossary_first  # noqa: E402
import reading_time  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "deep_dive_chapter.ipynb"


@pytest.fixture()
def cells() -> list:
    return book_text.read(FIXTURE)["cells"]


def md(source: str, *tags: str) -> dict:
    return {"cell_type": "markdown", "metadata": {"tags": list(tags)} if tags else {}, "source": source}


def code(source: str, *tags: str) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)} if tags else {}, "source": source,
            "outputs": [], "execution_count": None}


# -- deep dives ---------------------------------------------------------------------------------
def test_the_fixture_has_two_deep_dives_that_follow_the_convention(cells):
    runs = book_text.deep_dive_runs(cells)
    assert [(r.start, r.stop, r.level, r.title) for r in runs] == [(7, 10, 3, "雅可比矩阵的测量"),
                                                                   (12, 14, 2, "二级选读")]
    assert book_text.run_problems(cells) == []
    assert all(book_text.ends_at_heading(cells, r) for r in runs)


def test_a_deep_dive_may_show_what_the_checker_says():
    cells = [md("## 节"), md("### 选读：甲\n\n看似合理的修法", "deep-dive"),
             code('verdict = attnbook.check("09-7", tempting)', "deep-dive"), md("## 小结")]
    assert book_text.run_problems(cells) == []


def test_adjacent_deep_dives_are_two_runs():
    cells = [md("## 节"), md("### 选读：甲\n\n甲文", "deep-dive"), md("### 选读：乙\n\n乙文", "deep-dive"), md("## 小结")]
    assert [(r.start, r.stop) for r in book_text.deep_dive_runs(cells)] == [(1, 2), (2, 3)]
    assert book_text.run_problems(cells) == []


@pytest.mark.parametrize("cells, message", [
    ([md("## 节"), md("没有标题的选读", "deep-dive"), md("## 小结")], "开头"),
    ([md("## 节"), md("### 选读：空", "deep-dive"), md("## 小结")], "空的"),
    ([md("## 节"), md("(label)=\n### 选读：空\n", "deep-dive"), md("## 小结")], "空的"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive"), md("### 乙\n\n文", "deep-dive"), md("## 小结")],
     "同级或更高级的标题"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive"), md("## 练习\n\n**练习 01-1** 题", "deep-dive")], "骨架"),
    ([md("## 节"), md("### 选读：甲\n\n**练习 01-1** 算", "deep-dive"), md("## 小结")], "练习"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive"), code("answer = None\nattnbook.check('01-1', answer)",
                                                             "deep-dive"), md("## 小结")], "练习"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive"), code("answer = 3\nattnbook.check('01-1', answer)",
                                                             "deep-dive", "hide-cell"), md("## 小结")], "练习"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive"), md("主线接着说"), md("## 小结")], "没有以 ### 或更高级的标题开头"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive"), md("#### 小标题\n\n主线"), md("## 小结")], "更高级的标题开头"),
    ([md("## 节"), md("### 选读：忘了标签\n\n文"), md("## 小结")], "没有 deep-dive 标签"),
    ([md("## 节"), md("### 选读：甲\n\n文", "deep-dive", "slides-s1"), md("## 小结")], "课时幻灯片"),
])
def test_each_break_of_the_convention_is_named(cells, message):
    problems = book_text.run_problems(cells, "x.ipynb")
    assert any(message in p for p in problems), problems


def test_prose_leaves_out_code_math_and_myst():
    text = ("(sec-a)=\n% 注释\n### 标题\n\n正文 $x^2$ 和 `code` 与 {term}`掩码 <掩码>`，数 {glue:text}`n:.2f`，"
            "见 {ref}`sec-a` 与 [链接](https://x.org)。\n\n$$\na = b\n$$\n\n```python\nx = 1\ny = 2\n```\n\n"
            ":::{admonition} 提示\n:class: tip\n盒子里的话\n:::\n![图](a.png)")
    prose = book_text.prose(text)
    assert prose.terms == ["掩码"]
    assert (prose.inline_math, prose.display_math, prose.code_lines, prose.images) == (1, 1, 2, 1)
    flat = prose.text.replace(" ", "").replace("\n", "")
    assert flat == "标题正文和与掩码，数0，见〈ref〉与链接。提示盒子里的话"


def test_display_width_counts_cjk_twice():
    assert book_text.display_width("x = 1  # 中文") == 13
    assert book_text.display_width("a" * 88) == 88


# -- reading time ---------------------------------------------------------------------------------
def test_reading_time_counts_what_a_reader_does(cells):
    main, dives = reading_time.notebook_counts(cells)
    assert main.exercises == 1 and dives.exercises == 0
    assert dives.code_lines == 4 and dives.output_lines == 2 and dives.inline_math == 1
    assert main.code_lines == 2 + 2 + 2  # not the two setup cells; the exercise cell counts
    assert "蓝鲸" not in "".join(book_text.text(c) for i, c in enumerate(cells)
                               if i not in book_text.deep_dive_cells(cells) and c["cell_type"] == "markdown")
    assert reading_time.estimate(cells) == (5, 5)
    # more prose in the main line, more minutes; the deep dives' minutes do not move
    more = copy.deepcopy(cells)
    more[5]["source"] += "长" * 3000
    n, m = reading_time.estimate(more)
    assert n >= 5 + 3000 / reading_time.CJK_PER_MIN
    assert m == 5


def test_a_cell_with_several_sections_is_counted_in_each():
    """The last exercise often shares a Markdown cell with 下一步 and 参考: the exercise's text counts
    as exercise time, 下一步 as reading, 参考 as nothing; 小结 before ## 练习 in one cell is reading."""
    cells = [md("# 章"), code("setup"), code("import torch"),
             md("## 小结\n" + "读" * 300 + "\n\n## 练习\n\n**练习 01-1.** " + "题" * 150),
             md("**练习 01-2.** " + "题" * 150 + "\n\n## 下一步\n\n" + "读" * 300 + "\n\n## 参考\n\n" + "书" * 900)]
    exercise = reading_time.exercise_counts(cells)
    main, _ = reading_time.notebook_counts(cells)
    assert exercise.exercises == 2
    assert exercise.cjk == len("练习" "练习" + "题" * 150 + "练习" + "题" * 150)
    # reading: the title, 小结 and 下一步; the 参考 list counts nothing
    assert main.cjk - exercise.cjk == len("章" "小结" + "读" * 300 + "下一步" + "读" * 300)


def test_the_header_is_checked_and_rewritten(cells):
    assert reading_time.header_problems(cells, "fx") == []
    stale = copy.deepcopy(cells)
    stale[1]["source"] = stale[1]["source"].replace("主线约 5 分钟", "主线约 50 分钟")
    assert any("估算" in p for p in reading_time.header_problems(stale, "fx"))
    assert reading_time.rewrite(stale) and book_text.text(stale[1]) == book_text.text(cells[1])
    assert not reading_time.rewrite(stale)  # idempotent
    missing = [c for i, c in enumerate(cells) if i != 1]
    assert any("缺少" in p for p in reading_time.header_problems(missing, "fx"))
    two = copy.deepcopy(cells)
    two[1]["source"] = two[1]["source"].replace("3. 主线的第三点。\n", "")
    assert any("三点" in p for p in reading_time.header_problems(two, "fx"))
    none = [c for i, c in enumerate(cells) if "deep-dive" not in c["metadata"].get("tags", [])]
    assert reading_time.rewrite(none) and "主线约 5 分钟（其中练习约 5 分钟），本章没有选读。" in book_text.text(none[1])


def test_reading_time_cli_check_and_rewrite(tmp_path):
    path = tmp_path / "99_fixture.ipynb"
    nb = book_text.read(FIXTURE)
    nb["cells"][1]["source"] = nb["cells"][1]["source"].replace("选读约 5 分钟", "选读约 15 分钟")
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tool = [sys.executable, str(ROOT / "tools" / "reading_time.py")]
    check = subprocess.run(tool + ["--check", str(path)], capture_output=True, text=True, cwd=ROOT)
    assert check.returncode == 1 and "选读约 15 分钟" in check.stderr
    assert "| 99_fixture | 5 | 5 |" in check.stdout
    subprocess.run(tool + [str(path)], check=True, capture_output=True, cwd=ROOT)
    once = path.read_bytes()
    subprocess.run(tool + [str(path)], check=True, capture_output=True, cwd=ROOT)
    assert path.read_bytes() == once
    assert json.loads(once)["cells"][1]["source"] == FIXTURE_HEADER()
    assert subprocess.run(tool + ["--check", str(path)], capture_output=True, cwd=ROOT).returncode == 0


def FIXTURE_HEADER() -> str:  # noqa: N802
    return book_text.read(FIXTURE)["cells"][1]["source"]


# -- the notebook editions and the slides ----------------------------------------------------------
def test_slides_leave_deep_dives_out_of_session_decks_and_label_them_in_chapter_decks():
    import nbformat

    import make_slides

    nb = nbformat.read(FIXTURE, as_version=4)
    page = FIXTURE.relative_to(ROOT).as_posix()
    deck = make_slides.prepare(nb, page)
    tagged = [c for c in deck.cells if "deep-dive" in c.metadata.get("tags", [])]
    assert any("蓝鲸" in c.source for c in tagged) and any("白鹭" in c.source for c in tagged)
    assert not [c for c in deck.cells if ("蓝鲸" in c.source or "白鹭" in c.source) and c not in tagged]
    assert not [c for c in tagged if "主线" in c.source]
    assert ".celltag_deep-dive" in make_slides.TEMPLATE  # the label's CSS
    session = copy.deepcopy(nb)
    for cell in session.cells:
        cell.metadata.setdefault("tags", []).append("slides-s1")
    items = make_slides.notebook_items(session, page, make_slides.Selection("slides-s1"))
    text = "\n".join(i.text for i in items)
    assert "主线的文字" in text and "蓝鲸" not in text and "白鹭" not in text and "选读：" not in text


# -- the site: the transform, in a small Sphinx build ----------------------------------------------
def test_site_wraps_each_deep_dive_in_one_closed_details(tmp_path):
    """tests/fixtures/deep_dive_chapter.ipynb built by Sphinx + myst-nb with _ext/deep_dive.py (and a
    copy with a main-line paragraph left after the first run, which must leave the box)."""
    pytest.importorskip("myst_nb")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURE, src / "chapter.ipynb")
    bad = book_text.read(FIXTURE)
    bad["cells"].insert(10, {"cell_type": "markdown", "id": "bad", "metadata": {}, "source": "主线回来了。"})
    (src / "bad.ipynb").write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    (src / "index.md").write_text("# 首页\n\n```{toctree}\nchapter\nbad\n```\n", encoding="utf-8")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'sphinx_design', 'deep_dive']\n"
        "myst_enable_extensions = ['dollarmath', 'colon_fence']\n"
        "nb_execution_mode = 'off'\nhtml_theme = 'basic'\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(tmp_path / "out")],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    page = (tmp_path / "out" / "chapter.html").read_text(encoding="utf-8")
    boxes = page.split('<details class="attnbook-deep-dive"')[1:]
    assert len(boxes) == 2 and "<details open" not in page
    first, second = (b.split("</details>")[0] for b in boxes)
    assert '<span class="attnbook-deep-dive-label">选读</span>' in first and "雅可比矩阵的测量" in first
    assert "第一次阅读可以跳过" in first.split("</summary>")[0]
    assert "蓝鲸测量法" in first and "选读的输出" in first and "选读里的小标题" in first
    assert "动手试试" not in first and "主线继续" not in first
    assert "白鹭推导法" in second and "小结" not in second
    bad_page = (tmp_path / "out" / "bad.html").read_text(encoding="utf-8")
    box = bad_page.split('<details class="attnbook-deep-dive"')[1].split("</details>")[0]
    assert "蓝鲸测量法" in box and "主线回来了" not in box and "主线回来了" in bad_page
    index = (tmp_path / "out" / "searchindex.js").read_text(encoding="utf-8")
    assert json.dumps("选读：雅可比矩阵的测量")[1:-1] in index  # the search index has the title


# -- the glossary -------------------------------------------------------------------------------------
ENTRIES = [book_text.Entry(["注意力"], "attention"), book_text.Entry(["自注意力"], "self-attention"),
           book_text.Entry(["键"], "key"), book_text.Entry(["掩码"], "mask"),
           book_text.Entry(["填充掩码"], "padding mask"), book_text.Entry(["分数", "注意力分数"], "attention score"),
           book_text.Entry(["softmax"], "softmax")]


def test_a_use_is_a_role_or_a_plain_word_outside_longer_terms_and_other_senses():
    page = [md("# 标题\n\n自注意力很有用。"), md("这里讲{term}`注意力`。"), md("关键是数值。"),
            md("每个词的分数很高。"), md("键（Key）与值。"), md("softmax 把分数变成权重。")]
    uses = make_glossary_first.entry_uses(page, ENTRIES)
    by_name = {e.terms[0]: u for e, u in zip(ENTRIES, uses)}
    assert by_name["注意力"].cells == [1]  # not inside 自注意力
    assert by_name["自注意力"].cells == [0]
    assert by_name["键"].cells == [4] and by_name["键"].introduced  # not inside 关键; its gloss
    assert by_name["分数"].cells == [5]  # 词的分数 is another sense
    assert by_name["softmax"].cells == [5]


def test_introduced_means_glossed_or_bold_and_main_line_counts_apart():
    chapter1 = [md("# 一\n\n先提一句掩码。"), md("### 选读：细节\n\n**掩码**是一张表。", "deep-dive"), md("## 小结")]
    chapter2 = [md("# 二\n\n这里用掩码（mask）遮住未来。")]
    usage = [make_glossary_first.Usage(ENTRIES[3], [])]
    for path, page in ((pathlib.Path("chapters/01_a.ipynb"), chapter1),
                       (pathlib.Path("chapters/02_b.ipynb"), chapter2)):
        use = make_glossary_first.entry_uses(page, ENTRIES)[3]
        if use.cells:
            usage[0].pages.append((path, use))
    problems = make_glossary_first.definition_problems(usage)
    assert "主线" in problems["掩码"]  # introduced only in ch01's deep dive, used in ch01's main line
    usage[0].pages.pop(0)
    assert make_glossary_first.definition_problems(usage) == {}  # ch02 glosses it in its main line
    plain = [md("# 三\n\n这里用掩码遮住未来，{term}`掩码`。")]
    usage = [make_glossary_first.Usage(ENTRIES[3], [(pathlib.Path("chapters/03_c.ipynb"),
                                                     make_glossary_first.entry_uses(plain, ENTRIES)[3])])]
    assert "没有介绍" in make_glossary_first.definition_problems(usage)["掩码"]  # a role alone is not a definition


def test_the_first_appearance_column_is_written_in_first_use_order(tmp_path):
    source = ("# 术语表\n\n| 中文 | English | 简释 | 首次出现 |\n|---|---|---|---|\n"
              "| {term}`掩码` | mask | 遮 | [第 9 章](../chapters/09_masks.ipynb) |\n"
              "| {term}`注意力` | attention | 看 | [第 2 章](../chapters/02_attention_lookup.ipynb) |\n"
              "| {term}`键` | key | 找 | [第 2 章](../chapters/02_attention_lookup.ipynb) |\n\n"
              "```{glossary}\n注意力\n  看。\n\n键\n  找。\n\n掩码\n  遮。\n```\n")
    entries = book_text.glossary_entries(source)
    assert [e.terms for e in entries] == [["注意力"], ["键"], ["掩码"]] and entries[2].english == "mask"
    chapters = [ROOT / "chapters" / "01_context.ipynb", ROOT / "chapters" / "02_attention_lookup.ipynb"]
    pages = {chapters[0]: [md("# 一\n\n掩码（mask）先出场。")], chapters[1]: [md("# 二\n\n注意力（attention）。")]}
    items = [make_glossary_first.Usage(e, []) for e in entries]
    for path in chapters:
        for item, use in zip(items, make_glossary_first.entry_uses(pages[path], entries)):
            if use.cells:
                item.pages.append((path, use))
    new = make_glossary_first.render_table(source, items, chapters)
    rows = [r for r in new.splitlines() if r.startswith("| {term}")]
    assert rows == ["| {term}`掩码` | mask | 遮 | [第 1 章](../chapters/01_context.ipynb) |",
                    "| {term}`注意力` | attention | 看 | [第 2 章](../chapters/02_attention_lookup.ipynb) |",
                    "| {term}`键` | key | 找 | — |"]
    assert make_glossary_first.render_table(new, items, chapters) == new  # idempotent


def test_english_terms_after_their_first_mention_are_found():
    page = [md("# 九\n\n掩码（mask）遮住未来。填充掩码（padding mask）遮住填充。"),
            md("这个 mask 写错了，padding mask 也是；代码 `mask = x > 0` 和 $mask$ 不算，attn_mask 也不算。"),
            md("## 参考\n\n- A Mask Paper")]
    uses = make_glossary_first.english_uses(page, ENTRIES)
    assert [(i, w.lower(), t) for i, w, t in uses] == [(1, "mask", "掩码"), (1, "padding mask", "填充掩码")]
    assert make_glossary_first.english_uses([md("softmax 与 softmax")], ENTRIES) == []  # its term is English


def test_the_front_page_states_the_rates_the_tool_uses():
    """intro.md's “阅读时间怎么估的” (label reading-time, for the 本章导读 headers to link) gives the
    rates of tools/reading_time.py."""
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    section = intro.split("(reading-time)=", 1)[1].split("\n## ", 1)[0]
    assert section.lstrip().startswith("### 阅读时间怎么估的")
    half = {0.5: "半分钟"}
    for said in (f"每分钟读 {reading_time.CJK_PER_MIN} 个汉字", f"每分钟 {reading_time.WORDS_PER_MIN} 个",
                 f"行内公式另加 {round(reading_time.INLINE_MATH * 60)} 秒", f"公式{half[reading_time.DISPLAY_MATH]}",
                 f"每行代码 {round(reading_time.CODE_LINE * 60)} 秒", f"每张图或滑块{half[reading_time.FIGURE]}",
                 f"每行输出 {round(reading_time.OUTPUT_LINE * 60)} 秒", f"最多算 {reading_time.OUTPUT_CAP} 行",
                 f"每道练习 {reading_time.EXERCISE:g} 分钟"):
        assert said in section, said


def test_a_header_may_cite_the_front_page_section():
    """{ref}`reading-time` (intro.md) works in every medium: the site links it, the slides link the
    site, the notebook editions (which have no front page) name the section."""
    import editions
    import myst_render

    ctx = editions.book_context(editions.all_pages())
    out = myst_render.render_markdown("怎么估的：{ref}`reading-time`。", medium="reader",
                                      page="chapters/01_context.ipynb", book=ctx).text
    assert out == "怎么估的：阅读时间怎么估的。"
    with pytest.raises(myst_render.RenderError, match="没有笔记本版"):  # other site-only pages still fail
        myst_render.render_markdown("见{doc}`../appendix/teaching`", medium="reader",
                                    page="chapters/01_context.ipynb", book=ctx)
