"""The classroom pack (appendix/classroom_pack.ipynb): its answer key, discussion answers and quiz.

* the hand-calculation key gives chapter 04's numbers (glue records and printed tables, as stored);
* every discussion question of the teacher's guide has an answer, restated in the guide's words;
* the quiz has 10 questions, each with options A–D, one answer and a misconception per wrong option;
* the answers sit in dropdowns titled …答案…, so the student edition has none of them.
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

PACK = ROOT / "appendix" / "classroom_pack.ipynb"
CH04 = ROOT / "chapters" / "04_cat_eats_fish.ipynb"
GUIDE = ROOT / "appendix" / "teaching.md"


def read(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def markdown(nb: dict) -> str:
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def glued(path: pathlib.Path) -> dict[str, float]:
    """Numeric glue records stored in a notebook's outputs (application/papermill.record/text/plain)."""
    values = {}
    for key, bundle in myst_render.glue_values(read(path)).items():
        try:
            values[key] = float(bundle["text/plain"])
        except (KeyError, ValueError):
            continue
    return values


def section(text: str, heading: str) -> str:
    """The text of a `## heading` section, up to the next `## `."""
    start = text.index(f"## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


@pytest.fixture(scope="module")
def pack() -> dict:
    return read(PACK)


# -- the worksheet's answer key ----------------------------------------------------------------------
def printed_tables(nb: dict) -> list[dict[str, list[float]]]:
    """Every DataFrame a notebook printed (text/plain of execute_result): row label -> numbers."""
    tables = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/plain", ""))
            if output.get("output_type") != "execute_result" or not text:
                continue
            rows = {}
            for line in text.splitlines()[1:]:
                label, *cells = line.split()
                try:
                    rows[label] = [float(x) for x in cells]
                except ValueError:
                    continue
            tables.append({"header": text.splitlines()[0], **rows})
    return tables


def test_key_has_chapter_04s_numbers_for_the_cat_row():
    ch04, key = glued(CH04), glued(PACK)
    pairs = {f"w_cat_{j}": f"cat_w_{j}" for j in range(3)}
    pairs |= {f"exp_{j}": f"cat_exp_{j}" for j in range(3)} | {f"scaled_{j}": f"cat_scaled_{j}" for j in range(3)}
    pairs |= {f"s_cat_{j}": f"cat_s_{j}" for j in range(3)} | {"exp_sum": "cat_exp_sum"}
    for ch04_key, pack_key in pairs.items():
        assert ch04_key in ch04, f"第 4 章不再 glue {ch04_key}：更新这个测试"
        assert key[pack_key] == pytest.approx(ch04[ch04_key], abs=1e-6), (pack_key, ch04_key)


def test_key_has_chapter_04s_numbers_for_the_eat_row():
    """Chapter 04 prints the 吃 row (exercises 04-1, 04-2) in its weight and output tables, to 3 places."""
    tables = printed_tables(read(CH04))
    weights = [t for t in tables if "键" in t["header"] and "吃" in t
               and len(t["吃"]) == 3 and abs(sum(t["吃"]) - 1) < 0.002]
    outputs = [t for t in tables if "维度 0" in t["header"] and "吃" in t]
    assert len(weights) == 1 and len(outputs) == 1, "第 4 章的权重表或输出表变了：更新这个测试"
    key = glued(PACK)
    assert [round(key[f"eat_w_{j}"], 3) for j in range(3)] == weights[0]["吃"]
    assert [round(key[f"eat_out_{t}"], 3) for t in range(2)] == outputs[0]["吃"]
    assert [round(key[f"cat_w_{j}"], 3) for j in range(3)] == weights[0]["猫"]
    assert [round(key[f"cat_out_{t}"], 3) for t in range(2)] == outputs[0]["猫"]


def test_every_number_in_the_pack_is_glued(pack):
    """Each {glue:text} role has a stored record (the site build and the editions would fail too)."""
    used = set(re.findall(r"\{glue:text\}`([^`:]+)", markdown(pack)))
    stored = set(myst_render.glue_values(pack))
    assert used and used <= stored, sorted(used - stored)
    assert used >= {f"{row}_w_{j}" for row in ("cat", "eat") for j in range(3)}  # the key is in the text


# -- discussion questions ----------------------------------------------------------------------------
def guide_questions() -> dict[int, str]:
    text = section(GUIDE.read_text(encoding="utf-8"), "讨论题")
    return {int(n): q.strip() for n, q in re.findall(r"^(\d+)\. (.+)$", text, flags=re.M)}


def normalised(question: str) -> str:
    """A question without MyST roles, its trailing reference “（…）” and whitespace."""
    question = re.sub(r"\{doc\}`([^<`]*?)\s*(?:<[^>]*>)?`", r"\1", question)
    question = re.sub(r"（[^（）]*）$", "", question.strip())
    return re.sub(r"\s+", "", question)


def pack_discussions(pack) -> dict[int, str]:
    """讨论题 N -> its block: the restated question and the answer dropdown."""
    text = section(markdown(pack), "讨论题参考答案")
    blocks = re.split(r"^### 讨论题 (\d+)\s*$", text, flags=re.M)
    return {int(n): block for n, block in zip(blocks[1::2], blocks[2::2])}


def test_every_discussion_question_has_an_answer(pack):
    questions, answers = guide_questions(), pack_discussions(pack)
    assert len(questions) >= 10
    assert sorted(answers) == sorted(questions), "教师指南的讨论题与课堂包的参考答案数目或编号不一致"
    for n, block in answers.items():
        dropdown = re.search(rf"^```\{{dropdown\}} 讨论题 {n} 的参考答案\n(.*?)^```$", block, flags=re.S | re.M)
        assert dropdown, f"讨论题 {n} 没有标题为“讨论题 {n} 的参考答案”的下拉框"
        answer = dropdown.group(1)
        assert "依据：" in answer, f"讨论题 {n} 的答案没有写依据的章节或辨误"
        sentences = len(re.findall(r"[。！？]", answer))
        assert 2 <= sentences <= 6, f"讨论题 {n} 的答案有 {sentences} 句（应为 2–5 句，外加依据）"


def test_discussion_questions_are_the_guides(pack):
    """The pack restates each question; when the guide rewords one, the pack must follow."""
    questions, answers = guide_questions(), pack_discussions(pack)
    for n, question in questions.items():
        restated = re.search(r"^> (.+)$", answers[n], flags=re.M)
        assert restated and normalised(restated.group(1)) == normalised(question), \
            f"教师指南的讨论题 {n} 改过了：同步 appendix/classroom_pack.ipynb 里的题目和参考答案"


# -- the quiz ----------------------------------------------------------------------------------------
def quiz_questions(pack) -> dict[int, str]:
    text = section(markdown(pack), "小测验")
    blocks = re.split(r"^### 第 (\d+) 题.*$", text, flags=re.M)
    return {int(n): block.split("\n### ", 1)[0] for n, block in zip(blocks[1::2], blocks[2::2])}


def test_quiz_has_ten_questions_each_with_four_options_and_one_answer(pack):
    questions = quiz_questions(pack)
    assert sorted(questions) == list(range(1, 11))
    letters = []
    for n, block in questions.items():
        stem, _, answer = block.partition(f"```{{dropdown}} 第 {n} 题答案\n")
        assert answer, f"第 {n} 题没有标题为“第 {n} 题答案”的下拉框"
        options = re.findall(r"^- ([A-Z])：\S", stem, flags=re.M)
        assert options == list("ABCD"), f"第 {n} 题的选项是 {options}"
        correct = re.findall(r"\*\*答案：([A-D])。\*\*", answer)
        assert len(correct) == 1, f"第 {n} 题应当恰好有一个答案"
        explained = re.findall(r"^- 选 ([A-D])：\S", answer, flags=re.M)
        assert sorted(explained) == sorted(set("ABCD") - set(correct)), \
            f"第 {n} 题：每个错误选项都要写出它暴露的误解（现有 {explained}）"
        letters += correct
    assert len(set(letters)) >= 3, "正确答案不要总是同一个字母"


def test_quiz_answers_are_the_ones_the_code_verifies(pack):
    """The 核对答案 cell prints 第 N 题：X for every answer it computes; the dropdowns say the same."""
    printed = ""
    for cell in pack["cells"]:
        if cell["cell_type"] == "code" and "quiz_answers" in "".join(cell["source"]):
            printed += "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
    verified = {int(n): x for n, x in re.findall(r"第 (\d+) 题：([A-D])", printed)}
    assert len(verified) >= 9
    stated = {n: re.search(r"\*\*答案：([A-D])。", block).group(1) for n, block in quiz_questions(pack).items()}
    assert {n: stated[n] for n in verified} == verified


# -- what the student edition keeps --------------------------------------------------------------------
def test_answers_are_only_in_dropdowns_the_student_edition_drops(pack):
    tags = [t for c in pack["cells"] for t in c["metadata"].get("tags", [])]
    assert "hide-cell" not in tags, "hide-cell 只用于练习的参考解答"
    titles = re.findall(r"^```\{dropdown\} (.+)$", markdown(pack), flags=re.M)
    assert titles and all("答案" in t for t in titles), [t for t in titles if "答案" not in t]
    ctx = editions.book_context(editions.all_pages())
    student = markdown(editions.make_edition(PACK, "student", ctx))
    assert "<details>" not in student and "**答案：" not in student and "**参考答案.**" not in student
    assert student.count("____") == markdown(pack).count("____") > 50  # the blank worksheet stays
