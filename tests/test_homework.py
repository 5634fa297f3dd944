"""The homework notebook (appendix/homework.ipynb): auto-checked with the chapters' ids, collectable.

* every exercise it checks is a registered exercise of the chapter it comes from, set up the way the
  chapters do it (exercise cell, a "提示与解答" dropdown with ``% 解答``, a hide-cell reference solution);
* run from the top with the solutions in, every reference solution passes ``attnbook.check``
  (``record=False``: nothing is written);
* its student edition has no outputs, solutions or written-answer key, but every exercise cell and hint;
* a simulated student: the student edition in a folder of its own, some answers right (one after a wrong
  try), two wrong, the rest untouched, executed with recording on; ``attnbook.collect`` over the class
  folder then shows exactly those exercises solved, tried and not attempted.
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import re
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import book  # noqa: E402  (tools/book.py: the book's environment)
import editions  # noqa: E402  (tools/editions.py: the student edition)

HOMEWORK = ROOT / "appendix" / "homework.ipynb"
# The lecturer's list (reviews/teacher-2x45.md, "Homework"), in book order; none needs a training run.
KEYS = ["04-3", "05-2", "07-1", "07-3", "08-3", "08-4", "09-2",
        "09-3", "09-4", "09-5", "09-6", "09-7", "13-1", "13-3"]
CHECK = re.compile(r"""attnbook\.check\(\s*["'](\d\d-\d+)["']""")
EMPTY = re.compile(r"^(answer|fix_\d) = None\b", re.M)


def read(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    return "".join(cell["source"])


def is_solution(cell: dict) -> bool:
    return "hide-cell" in cell.get("metadata", {}).get("tags", [])


def exercise_cells(nb: dict) -> dict[str, str]:
    """key -> the student's cell (``answer = None`` / ``fix_k = None`` and its check)."""
    found = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and not is_solution(cell) and EMPTY.search(source(cell)):
            keys = CHECK.findall(source(cell))
            assert len(keys) == 1, source(cell)
            assert keys[0] not in found, f"练习 {keys[0]} 有两个作答单元格"
            found[keys[0]] = source(cell)
    return found


def solution_cells(nb: dict) -> dict[str, str]:
    """key -> the reference solution (a hide-cell that checks exactly that exercise)."""
    found = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and is_solution(cell):
            keys = set(CHECK.findall(source(cell)))
            assert len(keys) == 1, source(cell)
            found[keys.pop()] = source(cell)
    return found


@pytest.fixture(scope="module")
def homework() -> dict:
    return read(HOMEWORK)


def test_exercises_are_the_lecturers_list_and_registered(homework):
    from attnbook.exercises import load_all

    registered = load_all()
    checked = sorted(set(CHECK.findall("\n".join(source(c) for c in homework["cells"] if c["cell_type"] == "code"))),
                     key=KEYS.index)
    assert checked == KEYS
    assert all(key in registered for key in checked)
    assert list(exercise_cells(homework)) == KEYS  # one answer cell each, in book order
    assert sorted(solution_cells(homework)) == sorted(KEYS)  # one reference solution each
    markdown = "\n".join(source(c) for c in homework["cells"] if c["cell_type"] == "markdown")
    for key in KEYS:
        assert re.search(rf"\*\*练习 {key}[（.]", markdown), f"练习 {key} 没有题目"
        dropdown = re.search(rf"```{{dropdown}} 练习 {key} 的提示与解答\n(.*?)\n```", markdown, re.S)
        assert dropdown and "**提示.**" in dropdown.group(1) and "\n% 解答\n" in dropdown.group(1), key
    # the written questions and the hand-in section close the notebook, in this order
    h2 = re.findall(r"^## (.+)$", markdown, re.M)
    assert h2[-2:] == ["写作题", "交作业之前"], h2
    assert "**练习 09-8（思考）.**" in markdown and "**讨论题 8.**" in markdown
    written = markdown[markdown.index("## 写作题"):markdown.index("## 交作业之前")]
    assert "attnbook.check" not in written
    last_code = [c for c in homework["cells"] if c["cell_type"] == "code"][-1]
    assert source(last_code).strip() == "attnbook.report()"


# Runs the homework's code cells in one namespace (magics become `pass`), in a fresh interpreter so
# that attnbook.setup() changes nothing in this one. attnbook.check is wrapped: record=False, and each
# call is reported with the index of the cell that made it.
DRIVER = r"""
import json, sys
import attnbook

cells = json.load(sys.stdin)
calls = []
current = None
original = attnbook.check


def check(key, answer, **kwargs):
    kwargs["record"] = False
    ok = original(key, answer, **kwargs)
    calls.append({"cell": current, "key": key, "ok": bool(ok)})
    return ok


attnbook.check = check
namespace = {"__name__": "__main__"}
for current, text in cells:
    lines = [line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
             for line in text.splitlines()]
    exec(compile("\n".join(lines), f"<cell {current}>", "exec"), namespace)
print("CALLS=" + json.dumps(calls))
"""


def test_reference_solutions_pass_the_checker(homework, tmp_path):
    cells = [(i, source(c)) for i, c in enumerate(homework["cells"]) if c["cell_type"] == "code"]
    env = {**os.environ, **book.BOOK_ENV, "ATTNBOOK_RECORD": "0"}
    result = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(cells), capture_output=True,
                            text=True, cwd=tmp_path, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    calls = json.loads(result.stdout.rsplit("CALLS=", 1)[1])
    solved = {c["key"] for c in calls if is_solution(homework["cells"][c["cell"]]) and c["ok"]}
    failed = [c for c in calls if is_solution(homework["cells"][c["cell"]]) and not c["ok"]]
    assert not failed and solved == set(KEYS), (failed, sorted(set(KEYS) - solved))
    assert not list(tmp_path.iterdir()), "record=False：不应写出结果文件"


def test_student_edition_has_every_exercise_and_hint_and_no_solution(homework):
    ctx = editions.book_context(editions.all_pages())
    nb = editions.make_edition(HOMEWORK, "student", ctx)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert list(exercise_cells(nb)) == KEYS
    text = "\n".join(source(c) for c in nb["cells"])
    for key in KEYS:
        assert f"<summary>练习 {key} 的提示</summary>" in text, key
    assert "**解答.**" not in text and "解答</summary>" not in text
    assert "评分要点" not in text and "参考答案" not in text
    code_text = "\n".join(source(c) for c in code)
    assert not re.search(r"^answer\s*=(?!\s*None\b)", code_text, re.M) and "def fix_" not in code_text
    assert "attnbook.report()" in text and "attnbook_results.jsonl" in text


# The simulated student: which exercises they answer, and how.
SOLVED = ["04-3", "07-1", "07-3", "08-3", "09-2", "09-3", "09-7", "13-1"]  # 13-1 after a wrong try
WRONG = {"05-2": "answer = 1 / math.sqrt(768)  # 忘了按头拆分\n_ = attnbook.check(\"05-2\", answer)",
         "09-6": "fix_4 = bug_4  # 没有改\n_ = attnbook.check(\"09-6\", fix_4)"}
UNTOUCHED = sorted(set(KEYS) - set(SOLVED) - set(WRONG))


def test_a_students_results_are_collected(homework, tmp_path, monkeypatch):
    from attnbook.collect import EXERCISE_TABLE, STUDENT_TABLE, collect

    assert len(SOLVED) >= len(KEYS) // 2 and len(UNTOUCHED) == 4
    ctx = editions.book_context(editions.all_pages())
    nb = editions.make_edition(HOMEWORK, "student", ctx)
    reference = solution_cells(homework)
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or not EMPTY.search(source(cell)):
            continue
        key = CHECK.search(source(cell)).group(1)
        if key == "13-1":  # a wrong try first, then the right answer in the same cell
            cell["source"] = "answer = 8\n_ = attnbook.check(\"13-1\", answer)\n" + reference[key]
        elif key in SOLVED:
            cell["source"] = reference[key]
        elif key in WRONG:
            cell["source"] = WRONG[key]
    folder = tmp_path / "作业" / "学生01"
    folder.mkdir(parents=True)
    (folder / "homework.ipynb").write_text(editions.dumps(nb), encoding="utf-8")

    monkeypatch.setenv("ATTNBOOK_RECORD", "1")  # as on a student's computer (the kernel inherits it)
    run = nbformat.read(folder / "homework.ipynb", as_version=4)
    NotebookClient(run, timeout=300, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(folder)}}).execute()
    printed = "".join(o.get("text", "") for c in run.cells if c.cell_type == "code" for o in c.outputs)
    assert "✓ 练习 13-1 正确" in printed and "✗ 练习 05-2 还不对" in printed
    report = run.cells[[i for i, c in enumerate(run.cells) if c.source.strip() == "attnbook.report()"][0]]
    report_text = "".join(o.get("text", "") for o in report.outputs)
    assert f"做对 {len(SOLVED)} / {len(KEYS)} 道练习" in report_text, report_text

    lines = (folder / "attnbook_results.jsonl").read_text(encoding="utf-8").splitlines()
    # one line per check a cell ran: every exercise cell once, 13-1 twice; the bug demo cell records nothing
    assert len(lines) == len(KEYS) + 1

    out = io.StringIO()
    exercise_rows, student_rows, problems = collect(tmp_path / "作业", out=out)
    assert problems == []
    assert (tmp_path / "作业" / EXERCISE_TABLE).exists() and (tmp_path / "作业" / STUDENT_TABLE).exists()
    by_key = {row["练习"]: row for row in exercise_rows}
    assert list(by_key) == KEYS
    for key in KEYS:
        attempted, solved = by_key[key]["作答人数"], by_key[key]["做对人数"]
        assert (attempted, solved) == ((1, 1) if key in SOLVED else (1, 0) if key in WRONG else (0, 0)), key
    assert "1/√d_model" in by_key["05-2"]["最常见的错误"]
    assert "最后一个位置" in by_key["13-1"]["最常见的错误"]  # solved in the end, the wrong try still shows
    (student,) = student_rows
    assert student["学生"] == "学生01" and student["做对题数"] == len(SOLVED)
    assert {k for k in KEYS if student[k] == "✓"} == set(SOLVED)
    assert {k for k in KEYS if student[k] == "✗"} == set(WRONG)
    assert {k for k in KEYS if student[k] == ""} == set(UNTOUCHED)
    assert "1 个学生文件夹，其中 1 个有作答记录" in out.getvalue()
