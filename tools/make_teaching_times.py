"""Write appendix/teaching_times.md: how long each notebook takes to run (for the teacher's guide).

Reads bench/notebook_times.json ({"chapters/04_cat_eats_fish.ipynb": 12.3, ...}), which
``make bench`` (tools/bench.py) or ``tools/execute_notebooks.py --times`` write, and turns it into
a Markdown table that appendix/teaching.md includes. The page is generated: do not edit it.
Besides the measured time it gives the time to plan for in class (SLACK × measured, rounded up
to 5 s), and the advice (run before class when the time to plan for exceeds SLOW seconds); the
teacher's guide refers to this column instead of naming chapters, so the two cannot disagree.

    python tools/make_teaching_times.py              # from bench/notebook_times.json
    python tools/make_teaching_times.py --measure    # first run every notebook once (not saved),
                                                     # write bench/notebook_times.json, then the page
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import pathlib
import shutil
import sys
import tempfile

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIMES = ROOT / "bench" / "notebook_times.json"
OUT = ROOT / "appendix" / "teaching_times.md"
# The table is measured on whichever machine ran `make bench`, and two 2-core machines of this project
# differed by about a factor of two (bench/report.md names the CPU); a classroom's or Colab's free CPU
# can be slower still. So plan for three times the measured time, and advise running a notebook
# before class when that planned time exceeds a minute.
SLACK = 3.0
SLOW = 60.0  # seconds planned (SLACK × measured): above this, run the notebook before class


def measure(path_json: pathlib.Path) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "tools"))
    from execute_notebooks import BOOK_ENV, book_notebooks, execute

    os.environ.update(BOOK_ENV)
    times = {}
    for path in book_notebooks():
        rel = path.relative_to(ROOT).as_posix()
        print(f"执行 {rel} …", end=" ", flush=True)
        if "write" in inspect.signature(execute).parameters:
            seconds = execute(path, write=False)
        else:  # an older execute_notebooks.py writes back: run a copy beside the original
            with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
                copy = pathlib.Path(tmp) / path.name
                shutil.copy2(path, copy)
                seconds = execute(copy)
        times[rel] = round(seconds, 1)
        print(f"{times[rel]:.1f} s", flush=True)
    path_json.parent.mkdir(parents=True, exist_ok=True)
    path_json.write_text(json.dumps(times, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return times


def title_of(path: pathlib.Path) -> str:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return path.stem


def render(times: dict[str, float]) -> str:
    rows = []
    total = 0.0
    for rel in sorted(times, key=lambda r: (r.startswith("appendix/"), r)):
        path = ROOT / rel
        if not path.exists():
            continue
        seconds = float(times[rel])
        total += seconds
        name = path.stem
        label = f"第 {int(name[:2])} 章" if rel.startswith("chapters/") and name[:2].isdigit() else "附录"
        planned = 5 * math.ceil(SLACK * seconds / 5)  # 课上预留：留出余量，取整到 5 秒
        advice = "课前先运行一遍" if planned > SLOW else "课上现场运行"
        rows.append(f"| {label} | [{title_of(path)}](../{rel}) | {seconds:.1f} | {planned} | {advice} |")
    lines = [
        "<!-- 本表由 tools/make_teaching_times.py 根据 bench/notebook_times.json 生成，请勿手改。 -->",
        "",
        "| 章节 | 标题 | 从头运行（秒） | 课上预留（秒） | 建议 |",
        "|---|---|---:|---:|---|",
        *rows,
        f"| 合计 | {len(rows)} 个笔记本 | {total:.1f} | {5 * math.ceil(SLACK * total / 5)} | |",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=pathlib.Path, default=TIMES, help="JSON {notebook: seconds}")
    parser.add_argument("--measure", action="store_true", help="run every notebook first and write --times")
    args = parser.parse_args()
    if args.measure:
        times = measure(args.times)
    elif args.times.exists():
        times = json.loads(args.times.read_text(encoding="utf-8"))
    else:
        print(f"找不到 {args.times}：先运行 make bench，或加 --measure", file=sys.stderr)
        return 1
    OUT.write_text(render(times), encoding="utf-8")
    print(f"写入 {OUT.relative_to(ROOT)}：{len(times)} 个笔记本")
    return 0


if __name__ == "__main__":
    sys.exit(main())
