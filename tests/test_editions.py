"""The one MyST renderer (tools/myst_render.py) and the notebook editions (tools/editions.py).

The reader edition (notebooks/) is committed and generated from chapters/: like attnbook/book.py,
a test fails when the two differ. Every edition must hold no raw MyST, the student edition no
output and no solution.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import editions  # noqa: E402
import myst_render  # noqa: E402
from myst_render import Book, RenderError, render_markdown  # noqa: E402

GLUE = {"s_cat_0": {"text/plain": "0.8200000000000001"}, "name": {"text/plain": "'猫'"},
        "n": {"text/plain": "7"}, "table": {"text/plain": "'x'", "text/markdown": "| a |\n|---|\n| 1 |"}}


def render(text: str, medium: str = "reader", **kw) -> myst_render.Rendered:
    return render_markdown(text, medium=medium, page="chapters/04_cat_eats_fish.ipynb", glue=GLUE,
                           where="chapters/04_cat_eats_fish.ipynb，第 6 个单元", **kw)


# -- the renderer -----------------------------------------------------------------------------
def test_glue_text_is_the_stored_value_with_its_format_spec():
    out = render("猫对猫是 {glue:text}`s_cat_0:.2f`，词是 {glue:text}`name`，共 {glue}`n` 个").text
    assert out == "猫对猫是 0.82，词是 猫，共 7 个"
    assert render("{glue:md}`table`").text.startswith("| a |")
    assert render("{glue:text}`n:,d` 与 {glue:text}`s_cat_0:.1%`").text == "7 与 82.0%"


def test_missing_glue_and_bad_spec_fail_naming_the_file_and_cell():
    with pytest.raises(RenderError, match=r"04_cat_eats_fish.ipynb，第 6 个单元.*missing"):
        render("{glue:text}`missing:.2f`")
    with pytest.raises(RenderError, match="第 6 个单元"):
        render("{glue:text}`name:.2f`")


def test_terms_refs_and_math_roles():
    book = Book(labels={"sec-a": ("chapters/09_masks.ipynb", "填充掩码")},
                link=lambda here, page, anchor: f"LINK({page}#{anchor})")
    out = render("{term}`查询` 与 {term}`掩码 <掩码（Mask）>`，见 {ref}`sec-a` 或 {ref}`这里 <sec-a>`，"
                 "以及 {math}`x^2`", book=book).text
    assert out == ("查询 与 掩码，见 [填充掩码](LINK(chapters/09_masks.ipynb#)) 或 "
                   "[这里](LINK(chapters/09_masks.ipynb#))，以及 $x^2$")
    assert render("{term}`查询`", book=Book(glossary_url="../appendix/glossary.html")).text == \
        "[查询](../appendix/glossary.html)"
    with pytest.raises(RenderError, match="找不到标签"):
        render("{ref}`nowhere`")


def test_unknown_role_or_directive_or_option_fails():
    with pytest.raises(RenderError, match=r"不认识的 MyST 角色 \{cite\}"):
        render("见 {cite}`vaswani2017`")
    with pytest.raises(RenderError, match=r"不认识的 MyST 指令 \{figure\}"):
        render("```{figure} a.png\n图\n```")
    with pytest.raises(RenderError, match="选项"):
        render("```{note}\n:width: 3\n文字\n```")


def test_admonition_is_a_titled_quote_and_targets_comments_go():
    out = render("(sec-x)=\n% 注释\n```{admonition} 与原文的小出入\n:class: note\n第一行 {glue:text}`s_cat_0:.2f`\n\n"
                 "第二行\n```\n正文").text
    assert out == "> **与原文的小出入**\n>\n> 第一行 0.82\n>\n> 第二行\n正文"
    assert render("```{note}\n短\n```").text == "> **注**\n>\n> 短"


def test_dropdown_is_closed_details_and_math_and_code_are_untouched():
    text = "```{dropdown} 练习 04-1 的提示与解答\n先算点积 $q\\cdot k$。\n% 解答\n答案是 {glue:text}`s_cat_0:.2f`。\n```"
    out = render(text).text
    assert out.startswith("<details>\n<summary>练习 04-1 的提示与解答</summary>\n\n先算点积 $q\\cdot k$。")
    assert "答案是 0.82" in out and out.endswith("</details>") and "<details open" not in out
    code = "```python\nx = {glue:text}`n`\n```\n$$\na_{ij}\n$$"
    assert render(code).text == code


def test_student_edition_keeps_the_hint_and_drops_the_solution():
    marked = "```{dropdown} 练习 04-1 的提示与解答\n先算点积。\n% 解答\n答案是 0.35。\n```"
    out = render(marked, "student").text
    assert "先算点积" in out and "0.35" not in out and "<summary>练习 04-1 的提示</summary>" in out
    # unmarked: a "提示与解答" dropdown may give the answer away anywhere in it, so all of it goes
    assert render("```{dropdown} 练习 04-3 的提示与解答\n分数不变，权重变小。\n```", "student").text == ""
    assert render("```{dropdown} 解答\n权重不变。\n```", "student").text == ""
    hint = render("```{dropdown} 练习 09-3 的提示\n看第三行。\n```", "student").text
    assert "看第三行" in hint and "<details>" in hint


def test_slides_take_dropdowns_as_speaker_notes_and_rewrite_page_links():
    book = Book(link=lambda here, page, anchor: "../" + page.replace(".ipynb", ".html"), rewrite_links=True)
    out = render("见[第 9 章](09_masks.ipynb)。\n```{dropdown} 解答\n权重不变。\n```", "slides", book=book)
    assert out.text == "见[第 9 章](../chapters/09_masks.html)。"
    assert out.notes == ["**解答**\n\n权重不变。"]


# -- the editions -------------------------------------------------------------------------------
def test_reader_edition_is_generated_from_the_chapters():
    problems = editions.check_reader()
    assert not problems, "\n".join(problems) + "\n运行 python tools/editions.py reader（或 make execute）"


def _edition_notebooks(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted(folder.rglob("*.ipynb"))


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("student")
    editions.build("student", out)
    return out


def _markdown(nb: dict) -> str:
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_no_raw_myst_in_any_edition(student):
    for folder in (editions.READER, student):
        for path in _edition_notebooks(folder):
            raw = myst_render.raw_myst(_markdown(json.loads(path.read_text(encoding="utf-8"))))
            assert not raw, f"{path}: {raw[:5]}"


def _solution_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "hide-cell" in c["metadata"].get("tags", [])]


def test_reader_edition_closes_the_solutions_and_keeps_the_outputs():
    for source in editions.source_pages():
        src = json.loads(source.read_text(encoding="utf-8"))
        nb = json.loads((editions.READER / source.relative_to(ROOT)).read_text(encoding="utf-8"))
        hidden = [c for c in nb["cells"] if c["cell_type"] == "code"
                  and c["metadata"].get("jupyter", {}).get("source_hidden")]
        solutions = [c for c in hidden if "".join(c["source"]).startswith(editions.SOLUTION_TITLE)]
        assert len(solutions) == len(_solution_cells(src)), source
        for cell in solutions:  # collapsed in JupyterLab and in Colab's form view, nothing printed
            assert cell["metadata"]["cellView"] == "form" and cell["outputs"] == []
            assert cell["metadata"]["jupyter"]["outputs_hidden"] is True
        assert "<details open" not in _markdown(nb)
        # a precomputed slider (JS that an untrusted notebook does not run) is its default frame
        html = json.dumps([c.get("outputs", []) for c in nb["cells"]], ensure_ascii=False)
        sliders = json.dumps([c.get("outputs", []) for c in src["cells"]]).count('class=\\"attnbook-slider\\"')
        assert "attnbook-slider" not in html and html.count("运行本笔记本后，这里是可以拖动的滑块") == sliders, source
        kept = sum(bool(c.get("outputs")) for c in nb["cells"] if c["cell_type"] == "code")
        assert kept >= 0.5 * sum(bool(c.get("outputs")) for c in src["cells"] if c["cell_type"] == "code"), source


def test_student_edition_has_no_outputs_and_no_solutions(student):
    exercises = 0
    for path in _edition_notebooks(student):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            assert cell["outputs"] == [] and cell["execution_count"] is None, path
            assert not re.search(r"^answer\s*=(?!\s*None\b)", source, re.M), f"{path}: {source[:80]}"
            assert editions.SOLUTION_TITLE not in source
            exercises += bool(re.search(r"^answer = None", source, re.M))
        text = _markdown(nb)
        assert "解答</summary>" not in text, path
    # every exercise cell of the source is still there
    expected = sum(bool(re.search(r"^answer = None", "".join(c["source"]), re.M))
                   for p in editions.source_pages()
                   for c in json.loads(p.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code")
    assert exercises == expected > 40
    # a worksheet's answer key (cells tagged answer-key) stays with the teacher
    keys = 0
    for source in editions.source_pages():
        cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
        student_code = "\n".join("".join(c["source"]) for c in json.loads(
            (student / source.relative_to(ROOT)).read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code")
        for cell in cells:
            if "answer-key" in cell["metadata"].get("tags", []):
                keys += 1
                assert "".join(cell["source"]) not in student_code, source
    assert keys >= 10


# -- deep dives (选读) ------------------------------------------------------------------------------
FIXTURE = ROOT / "tests" / "fixtures" / "deep_dive_chapter.ipynb"


@pytest.mark.parametrize("edition", ["reader", "student"])
def test_deep_dives_open_collapsed_with_a_note(edition):
    """Each deep dive's heading gets a cell of its own, collapsed in JupyterLab (and in Colab's
    collapsed_sections), with the line that says a first reading may skip it; the rest of the deep
    dive follows it, the main line after it is not collapsed (tests/site/test_jupyterlab.py checks
    what JupyterLab shows)."""
    import book_text

    ctx = editions.book_context(editions.all_pages())
    nb = editions.make_edition(FIXTURE, edition, ctx)
    cells = nb["cells"]
    heads = [c for c in cells if c["metadata"].get(editions.COLLAPSED)]
    assert ["".join(c["source"]).splitlines()[0] for c in heads] == ["### 选读：雅可比矩阵的测量", "## 选读：二级选读"]
    for head in heads:
        text = "".join(head["source"])
        assert "第一次阅读可以跳过" in text and "分钟" in text
        assert "蓝鲸" not in text and "白鹭" not in text  # the deep dive's own text is in the next cell
    assert nb["metadata"]["colab"]["collapsed_sections"] == [c["id"] for c in heads]
    assert all(c["metadata"]["id"] == c["id"] for c in heads)
    runs = book_text.deep_dive_runs(cells)
    assert [cells[r.start]["id"] for r in runs] == [c["id"] for c in heads]
    assert all(book_text.ends_at_heading(cells, r) for r in runs)
    assert any("蓝鲸" in "".join(cells[i]["source"]) for i in runs[0].cells)
    assert not any(c["metadata"].get(editions.COLLAPSED) for c in cells if c not in heads)


def test_a_deep_dive_that_does_not_end_at_a_heading_is_not_collapsed(tmp_path):
    """Collapsing it would hide the main line after it too; the note is still there."""
    nb = json.loads(FIXTURE.read_text(encoding="utf-8"))
    nb["cells"].insert(10, {"cell_type": "markdown", "id": "bad", "metadata": {}, "source": "主线回来了。"})
    path = ROOT / "tests" / "fixtures" / f"_tmp_{tmp_path.name}.ipynb"  # make_edition wants a path in the book
    try:
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
        out = editions.make_edition(path, "reader", editions.book_context(editions.all_pages()))
    finally:
        path.unlink()
    heads = {"".join(c["source"]).splitlines()[0]: c for c in out["cells"] if "选读：" in "".join(c["source"])[:12]}
    assert editions.COLLAPSED not in heads["### 选读：雅可比矩阵的测量"]["metadata"]
    assert "第一次阅读可以跳过" in "".join(heads["### 选读：雅可比矩阵的测量"]["source"])
    assert heads["## 选读：二级选读"]["metadata"][editions.COLLAPSED] is True
