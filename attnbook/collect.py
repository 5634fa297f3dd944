"""A class's results, collected offline: ``python -m attnbook.collect FOLDER``.

FOLDER is what a teacher gets back from a computer lab: one subfolder per student (named as the
teacher likes: a student number, a PC name), each holding the ``attnbook_results.jsonl`` files that
``attnbook.check`` wrote next to the notebooks (in any subfolder). Missing students, empty folders,
corrupt or foreign files are reported by name and skipped; the summary is never stopped by them.

It writes two tables into FOLDER, and nowhere else:

* ``attnbook_练习汇总.csv``: per exercise, how many students attempted it, how many solved it, and the
  most common mistakes (what the checker told them, with how many students got that message);
* ``attnbook_学生汇总.csv``: per student, which exercises were solved (✓), tried (✗) or not attempted,
  and a note where the student's results file was missing, corrupt or partly unreadable.

Both are UTF-8 with a byte-order mark, so Excel on Windows opens them with the Chinese intact.
No server, no network.
"""
from __future__ import annotations

import argparse
import collections
import csv
import pathlib
import sys
from typing import Iterable

from .exercises._record import RESULTS_FILE, read

EXERCISE_TABLE = "attnbook_练习汇总.csv"
STUDENT_TABLE = "attnbook_学生汇总.csv"
TOP_MISTAKES = 3


def _key(exercise: str) -> tuple[int, int]:
    chapter, number = exercise.split("-")
    return int(chapter), int(number)


def gather(folder: pathlib.Path) -> tuple[dict[str, list[dict]], list[str], dict[str, str]]:
    """student -> attempts, the problems met (each naming its file), and student -> a note for the
    table ("结果文件损坏" …), so that a student whose file broke is not mistaken for one who did nothing."""
    students: dict[str, list[dict]] = {}
    problems: list[str] = []
    notes: dict[str, str] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name in (EXERCISE_TABLE, STUDENT_TABLE):
            continue
        if not entry.is_dir():
            problems.append(f"{entry.name}：不是学生文件夹（每个学生一个子文件夹），已跳过")
            continue
        files = sorted(p for p in entry.rglob(RESULTS_FILE) if p.is_file())
        others = sorted(p for p in entry.rglob("*.jsonl") if p.is_file() and p.name != RESULTS_FILE)
        for other in others:
            problems.append(f"{other.relative_to(folder).as_posix()}：不是本书的结果文件，已跳过")
        if not files:
            problems.append(f"{entry.name}：没有找到 {RESULTS_FILE}（这个学生没有作答，或文件没有拷过来）")
            students[entry.name] = []
            notes[entry.name] = "没有结果文件"
            continue
        attempts: list[dict] = []
        for path in files:
            found, bad = read(path)
            attempts += found
            rel = path.relative_to(folder).as_posix()
            if bad and not found:
                problems.append(f"{rel}：损坏，整个文件已跳过（{bad[0]}）")
                notes[entry.name] = "结果文件损坏（见屏幕上的说明）"
            else:
                problems += [f"{rel}：{b}，已跳过这一行" for b in bad]
                if bad:
                    notes.setdefault(entry.name, "结果文件有坏行（已跳过）")
        students[entry.name] = attempts
    return students, problems, notes


def summarise(students: dict[str, list[dict]], notes: dict[str, str] | None = None
              ) -> tuple[list[dict], list[dict], list[str]]:
    """(exercise rows, student rows, exercise keys in book order)."""
    keys = sorted({a["exercise"] for attempts in students.values() for a in attempts}, key=_key)
    exercise_rows = []
    for key in keys:
        attempted = solved = 0
        mistakes: collections.Counter[str] = collections.Counter()
        for attempts in students.values():
            mine = [a for a in attempts if a["exercise"] == key and a["answered"]]
            if not mine:
                continue
            attempted += 1
            solved += any(a["ok"] for a in mine)
            for message in {a["mistake"] for a in mine if not a["ok"] and a["mistake"]}:
                mistakes[message] += 1  # students who got this message, not attempts
        common = "；".join(f"{m}（{n} 人）" for m, n in mistakes.most_common(TOP_MISTAKES))
        exercise_rows.append({"练习": key, "作答人数": attempted, "做对人数": solved,
                              "做对比例": f"{solved / attempted:.0%}" if attempted else "",
                              "最常见的错误": common})
    student_rows = []
    for name, attempts in students.items():
        row = {"学生": name}
        for key in keys:
            mine = [a for a in attempts if a["exercise"] == key and a["answered"]]
            row[key] = "✓" if any(a["ok"] for a in mine) else ("✗" if mine else "")
        row["做对题数"] = sum(v == "✓" for k, v in row.items() if k in keys)
        row["备注"] = (notes or {}).get(name, "")
        student_rows.append(row)
    return exercise_rows, student_rows, keys


def _write(path: pathlib.Path, rows: Iterable[dict], columns: list[str]) -> None:
    with open(path, "w", encoding="utf-8-sig", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def collect(folder: str | pathlib.Path, out=sys.stdout) -> tuple[list[dict], list[dict], list[str]]:
    """Read FOLDER, write the two tables into it, print a summary. Returns (exercises, students, problems)."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise SystemExit(f"找不到文件夹：{folder}（应为一个文件夹，里面每个学生一个子文件夹）")
    students, problems, notes = gather(folder)
    exercise_rows, student_rows, keys = summarise(students, notes)
    _write(folder / EXERCISE_TABLE, exercise_rows, ["练习", "作答人数", "做对人数", "做对比例", "最常见的错误"])
    _write(folder / STUDENT_TABLE, student_rows, ["学生", *keys, "做对题数", "备注"])
    with_results = sum(bool(a) for a in students.values())
    print(f"{len(students)} 个学生文件夹，其中 {with_results} 个有作答记录；{len(keys)} 道练习。", file=out)
    for row in exercise_rows:
        line = f"  练习 {row['练习']}：{row['作答人数']} 人作答，{row['做对人数']} 人做对"
        print(line + (f"；常见错误：{row['最常见的错误']}" if row["最常见的错误"] else ""), file=out)
    if problems:
        print(f"跳过了 {len(problems)} 处（不影响其余的汇总）：", file=out)
        for problem in problems:
            print(f"  - {problem}", file=out)
    print(f"已写入 {folder / EXERCISE_TABLE} 和 {folder / STUDENT_TABLE}", file=out)
    return exercise_rows, student_rows, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnbook.collect",
                                     description="汇总全班的练习结果（每个学生一个子文件夹，离线即可）")
    parser.add_argument("folder", help="收上来的文件夹：每个学生一个子文件夹，里面有 attnbook_results.jsonl")
    args = parser.parse_args(argv)
    collect(args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
