"""Results a teacher can collect offline: attnbook.check records, attnbook.report(), attnbook.collect."""
from __future__ import annotations

import json
import math
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch

import attnbook
from attnbook import collect
from attnbook.exercises._record import RESULTS_FILE, read

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture()
def lab_pc(tmp_path, monkeypatch):
    """A student's notebook folder with recording on (the book's own runs turn it off)."""
    monkeypatch.setenv("ATTNBOOK_RECORD", "1")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _lines(folder: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in (folder / RESULTS_FILE).read_text(encoding="utf-8").splitlines()]


def _right_04_1() -> torch.Tensor:
    d = attnbook.cat_eats_fish()
    return torch.softmax(d["Q"][1] @ d["K"].T / math.sqrt(2), dim=-1)


def test_check_records_every_attempt_next_to_the_notebook(lab_pc, capsys):
    d = attnbook.cat_eats_fish()
    attnbook.check("04-1", None)
    attnbook.check("04-1", torch.softmax(d["Q"][1] @ d["K"].T, dim=-1))  # forgot √d_k: a known mistake
    attnbook.check("04-1", _right_04_1())
    attnbook.check("04-1", _right_04_1(), record=False)
    lines = _lines(lab_pc)
    assert [(x["exercise"], x["answered"], x["ok"]) for x in lines] == [
        ("04-1", False, False), ("04-1", True, False), ("04-1", True, True)]
    assert lines[1]["mistake"] and "√" in lines[1]["mistake"] and lines[2]["mistake"] is None
    assert all(x["v"] == 1 and x["time"].endswith("+00:00") for x in lines)


def test_recording_is_off_where_the_book_runs_its_notebooks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNBOOK_RECORD", "0")
    attnbook.check("04-1", _right_04_1())
    assert not (tmp_path / RESULTS_FILE).exists()
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import book
    finally:
        sys.path.pop(0)
    assert book.BOOK_ENV["ATTNBOOK_RECORD"] == "0"


def test_a_folder_that_cannot_be_written_does_not_stop_the_check(lab_pc, capsys):
    (lab_pc / RESULTS_FILE).mkdir()  # opening it for writing fails (as a read-only folder would, even for root)
    assert attnbook.check("04-1", _right_04_1())
    assert "✓ 练习 04-1 正确" in capsys.readouterr().out


def test_report_shows_a_student_their_own_summary(lab_pc, capsys):
    attnbook.check("04-1", [0.1, 0.2, 0.7])
    attnbook.check("04-1", _right_04_1())
    attnbook.check("03-2", 7.5)
    capsys.readouterr()
    table = attnbook.report()
    out = capsys.readouterr().out
    assert "做对 1 / 2 道练习" in out
    assert table["练习"].tolist() == ["03-2", "04-1"]
    assert table.set_index("练习").loc["04-1", "作答次数"] == 2
    assert bool(table.set_index("练习").loc["04-1", "做对"]) is True
    assert table.set_index("练习").loc["03-2", "最近一次"].startswith("✗ ")


def test_report_in_an_empty_folder_says_so(lab_pc, capsys):
    assert attnbook.report().empty
    assert "还没有作答记录" in capsys.readouterr().out


def _class_folder(root: pathlib.Path) -> pathlib.Path:
    """60 students as a teacher gets them back, with the accidents of a real lab."""
    folder = root / "收上来的作业"
    folder.mkdir()
    right = {"type": "x", "v": 1}
    for n in range(1, 61):
        student = folder / f"s{n:02d}"
        if n == 60:
            continue  # a PC that was not copied: no folder at all
        student.mkdir()
        if n == 59:
            continue  # an empty folder
        sub = student / ("chapters" if n % 2 else "")
        sub.mkdir(exist_ok=True)
        lines = [{"v": 1, "exercise": "04-1", "answered": True, "ok": n % 3 != 0,
                  "mistake": None if n % 3 else "忘了除以 √d_k", "time": "2026-12-01T08:00:00+00:00"}]
        if n <= 40:
            lines.append({"v": 1, "exercise": "09-2", "answered": True, "ok": False,
                          "mistake": "只算了因果掩码", "time": "2026-12-01T08:10:00+00:00"})
        if n <= 20:
            lines.append({"v": 1, "exercise": "09-2", "answered": True, "ok": True, "mistake": None,
                          "time": "2026-12-01T08:12:00+00:00"})
        if n <= 10:
            lines.append({"v": 1, "exercise": "13-1", "answered": False, "ok": False, "mistake": None,
                          "time": "2026-12-01T08:20:00+00:00"})
        text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
        if n == 7:
            text += '{"v": 1, "exercise": "04-2", "answ'  # a file cut off while copying
        if n == 8:
            text += json.dumps(right) + "\n"  # a line that is JSON but not ours
        (sub / RESULTS_FILE).write_text(text, encoding="utf-8")
    (folder / "s05" / "chapters" / RESULTS_FILE).write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")  # overwritten by a picture
    (folder / "s06" / "notes.jsonl").write_text('{"a": 1}\n', encoding="utf-8")  # a foreign file
    (folder / "名单.xlsx").write_bytes(b"PK\x03\x04")  # a stray file next to the folders
    return folder


def test_collect_a_class_of_60_with_broken_files(tmp_path):
    folder = _class_folder(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    out = []

    class Out:
        def write(self, s):
            out.append(s)

    exercises, students, problems = collect.collect(folder, out=Out())
    text = "".join(out)
    rows = {r["练习"]: r for r in exercises}
    # 59 folders; s05's file is corrupt, s59 is empty; 57 students have readable 04-1 attempts
    assert len(students) == 59
    assert rows["04-1"]["作答人数"] == 57
    solved = sum(1 for n in range(1, 59) if n != 5 and n % 3 != 0)
    assert rows["04-1"]["做对人数"] == solved
    assert rows["04-1"]["最常见的错误"] == f"忘了除以 √d_k（{57 - solved} 人）"
    assert rows["09-2"]["作答人数"] == 39 and rows["09-2"]["做对人数"] == 19  # s05 is unreadable
    assert rows["09-2"]["最常见的错误"] == "只算了因果掩码（39 人）"  # students, not attempts
    assert rows["13-1"]["作答人数"] == 0  # opened, never answered
    # every accident is named, and none stopped the summary
    for name in ("s05/chapters/" + RESULTS_FILE, "s06/notes.jsonl", "名单.xlsx", "s59", "s07/chapters/" + RESULTS_FILE,
                 "s08/" + RESULTS_FILE + "：第 5 行不是本书的作答记录", "s07/chapters/" + RESULTS_FILE + "：第 5 行不是 JSON"):
        assert name in text, name
    assert "Traceback" not in text
    # nothing written outside the folder; inside it, exactly the two tables
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    new = set(after) - set(before)
    assert new == {pathlib.Path("收上来的作业") / collect.EXERCISE_TABLE,
                   pathlib.Path("收上来的作业") / collect.STUDENT_TABLE}
    table = (folder / collect.STUDENT_TABLE).read_text(encoding="utf-8-sig").splitlines()
    assert table[0] == "学生,04-1,09-2,13-1,做对题数,备注" and len(table) == 60
    notes = {line.split(",")[0]: line.split(",")[-1] for line in table[1:]}
    assert notes["s05"].startswith("结果文件损坏") and notes["s59"] == "没有结果文件"
    assert notes["s07"].startswith("结果文件有坏行") and notes["s01"] == ""


def test_collect_is_one_command(tmp_path):
    folder = _class_folder(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "attnbook.collect", str(folder)], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "59 个学生文件夹" in run.stdout and "练习 04-1" in run.stdout
    missing = subprocess.run([sys.executable, "-m", "attnbook.collect", str(tmp_path / "没有")],
                             capture_output=True, text=True, env=env, timeout=120)
    assert missing.returncode != 0 and "找不到文件夹" in missing.stderr and "Traceback" not in missing.stderr


def test_read_never_raises_on_junk(tmp_path):
    for data in (b"", b"\x00" * 10, b"[1, 2]\n", "{\"v\": 2}\n".encode(), b"\xff\xfe\x00"):
        path = tmp_path / RESULTS_FILE
        path.write_bytes(data)
        attempts, problems = read(path)
        assert attempts == []
    assert read(tmp_path / "nothing")[1]
    shutil.rmtree(tmp_path)
