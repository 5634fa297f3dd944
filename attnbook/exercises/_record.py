"""What ``attnbook.check`` remembers: one line per attempt in a small file next to the notebook.

Every call of ``attnbook.check`` appends one JSON line to ``attnbook_results.jsonl`` in the current
folder (a notebook's kernel runs in the notebook's folder in JupyterLab, Jupyter Notebook and VS
Code): the exercise, whether it was answered, right or wrong, which mistake the checker recognised,
and the time. No server, no network, no name: a teacher collects the files (one folder per student)
and runs ``python -m attnbook.collect FOLDER``; a student sees their own summary with
``attnbook.report()``.

Recording never gets in the reader's way: a folder that cannot be written to is skipped silently.
It is off where the book itself runs the notebooks (the site build, nbval, the Colab-version run set
``ATTNBOOK_RECORD=0``), so no results file lands in the repository.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import pathlib
import re
from typing import Any

RESULTS_FILE = "attnbook_results.jsonl"
FORMAT = 1  # the "v" field of every line


def enabled() -> bool:
    return os.environ.get("ATTNBOOK_RECORD", "1").strip().lower() not in ("0", "false", "no", "off")


def mistake_label(feedback: str, hints: set[str]) -> str:
    """A short, stable name for what went wrong: a recognised mistake's hint, else the first clause."""
    text = feedback.strip()
    if text in hints:
        return text
    first = re.split(r"[。；！？]", text, maxsplit=1)[0]
    first = re.sub(r"\d+(\.\d+)?", "N", first)  # "3 个数里有 2 个不对" and "… 1 个不对" are one kind
    return first[:80]


def record(key: str, *, answered: bool, ok: bool, mistake: str | None = None,
           folder: str | os.PathLike | None = None) -> None:
    """Append one attempt to the results file (never raises)."""
    if not enabled():
        return
    line = {"v": FORMAT, "exercise": key, "answered": answered, "ok": ok, "mistake": mistake,
            "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    try:
        path = pathlib.Path(folder or os.getcwd()) / RESULTS_FILE
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError:
        pass  # a read-only folder: the check itself still works


def read(path: str | os.PathLike) -> tuple[list[dict[str, Any]], list[str]]:
    """The attempts in one results file, and what could not be read (line by line, never raises).

    A line counts only if it is a JSON object of this format with an exercise key like "04-1" and
    boolean "answered" and "ok" fields; everything else is reported as a problem and skipped.
    """
    attempts: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        raw = pathlib.Path(path).read_bytes()
    except OSError as error:
        return [], [f"读不了：{error.strerror or error}"]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return [], ["不是 UTF-8 文本（文件损坏，或不是本书的结果文件）"]
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            problems.append(f"第 {number} 行不是 JSON")
            continue
        if not (isinstance(item, dict) and item.get("v") == FORMAT
                and isinstance(item.get("exercise"), str) and re.fullmatch(r"\d{2}-\d+", item["exercise"])
                and isinstance(item.get("answered"), bool) and isinstance(item.get("ok"), bool)):
            problems.append(f"第 {number} 行不是本书的作答记录")
            continue
        mistake = item.get("mistake")
        attempts.append({"exercise": item["exercise"], "answered": item["answered"], "ok": item["ok"],
                         "mistake": mistake if isinstance(mistake, str) else None,
                         "time": item.get("time") if isinstance(item.get("time"), str) else ""})
    return attempts, problems


def report(folder: str | os.PathLike | None = None):
    """A student's own summary (a pandas DataFrame): per exercise, attempts, solved, last result."""
    import pandas as pd

    path = pathlib.Path(folder or os.getcwd()) / RESULTS_FILE
    attempts, problems = read(path) if path.exists() else ([], [])
    for problem in problems:
        print(f"注意：{path.name} {problem}，已跳过")
    rows = {}
    for a in attempts:
        row = rows.setdefault(a["exercise"], {"练习": a["exercise"], "作答次数": 0, "做对": False, "最近一次": ""})
        if a["answered"]:
            row["作答次数"] += 1
        row["做对"] = row["做对"] or a["ok"]
        row["最近一次"] = "✓ 正确" if a["ok"] else ("还没有作答" if not a["answered"] else f"✗ {a['mistake'] or ''}")
    table = pd.DataFrame(sorted(rows.values(), key=lambda r: tuple(int(x) for x in r["练习"].split("-"))),
                         columns=["练习", "作答次数", "做对", "最近一次"])
    if table.empty:
        print(f"这个文件夹里还没有作答记录（{RESULTS_FILE}）：运行练习单元格里的 attnbook.check 之后再来看。")
    else:
        print(f"做对 {int(table['做对'].sum())} / {len(table)} 道练习（记录在 {RESULTS_FILE}）")
    return table
