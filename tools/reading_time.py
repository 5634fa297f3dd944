"""Reading time of each chapter, main line and deep dives (选读), and the 本章导读 headers that state it.

    python tools/reading_time.py            # rewrites N and M in every chapter's 本章导读, prints the table
    python tools/reading_time.py --check    # prints the table; exit 1 if a header is missing or stale
    python tools/reading_time.py --table    # only the table (changes nothing)

The header is the chapter's second cell (right after the H1 cell)::

    :::{admonition} 本章导读
    :class: tip
    主线约 N 分钟，选读约 M 分钟。

    读完主线，你应当带走三点：
    1. …
    2. …
    3. …
    :::

This tool owns only the numbers N and M (a chapter with no deep dive reads “主线约 N 分钟，本章没有
选读。”); the rest of the header is the author's. A rewrite changes nothing else in the notebook
(outputs stay those of the last run); run ``python tools/editions.py reader`` after it.

How the minutes are estimated
-----------------------------
A second-year student reads a chapter, runs its cells and does its exercises; the estimate adds up
what there is to read and to do, cell by cell (tools/book_text.py says what prose is):

==========================================  ===========  ==========================================
what                                        minutes      why
==========================================  ===========  ==========================================
a Chinese character of prose                1/150        technical Chinese, read carefully, some
                                                         of it twice (the one fitted constant)
a Latin word of prose (a name, a number)    1/100
an inline formula ($…$)                     0.05         3 s on top of the sentence around it
a display formula ($$…$$, {math})           0.5          read term by term
a line of code shown (code cells, and       0.07         4 s: read it, run the cell
fenced code in the text)
a figure, or a slider's default frame       0.5
a line of printed output (text, tables)     0.02         at most 30 lines a cell
an exercise (**练习 NN-k**)                 3            try it, check it, read the hint
==========================================  ===========  ==========================================

Left out: the setup and import cells (the first two code cells), cells removed from the page
(``remove-cell``), the code of ``hide-input`` cells (their output counts), reference solutions
(``hide-cell``: part of an exercise's time), myst-nb's ``glue(...)`` bookkeeping lines, the
``## 参考`` list and the 本章导读 header itself. The main line is every other cell; the deep dives
are the cells tagged ``deep-dive``. Minutes are rounded up to the next 5 (N) and to the next whole
minute for a single deep dive; M is the deep dives' total, rounded up to the next 5.

Calibration: the student of ``../shared/reviews/student-ch01-10.md`` timed chapters 01–10 of commit
ccc8349: 70, 50, 60, 30, 80, 40, 45, 60, 100+, 60 minutes (595 in all), for reading, running the
code and doing the exercises. Every count grows with a chapter's length (their correlations are
0.7–0.97), so ten totals cannot tell the rates apart: a free least-squares fit of several rates
gives negative minutes per exercise. So the rates of the table are a reader's rates, set by what
each thing asks of a reader, and one constant, the prose speed, is fitted by least squares to the
ten totals (143 characters a minute; 150 is used). ``python tools/reading_time.py --calibrate``
prints the estimate beside the student's time for each chapter: 584 minutes against 595, 6 minutes
apart per chapter on average (ch04: 33 for 30, ch05: 64 for 80, ch10: 71 for 60), and the fit.
The student's own splits are a check the fit does not use, and they say the estimate is
conservative for the main line: the student spent longer on the dense parts (ch01's RNN gradient
measurement: 40 minutes, estimated 17; ch03's “为什么不直接用 X”: 35, estimated 22; ch05's
gradient section: about 45, estimated 15) and less on the rest (ch01: 30, estimated 39; ch03:
20–25, estimated 33; ch05: 35, estimated 49). A main line estimated at 6 hours is read faster.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import book_text  # noqa: E402

ROOT = book_text.ROOT

CJK_PER_MIN = 150  # the one constant fitted to the student's times (least squares: 143)
WORDS_PER_MIN = 100
INLINE_MATH = 0.05  # 3 s
DISPLAY_MATH = 0.5
CODE_LINE = 0.07  # 4 s: read the line, run the cell
FIGURE = 0.5
OUTPUT_LINE = 0.02
OUTPUT_CAP = 30
EXERCISE = 3.0

HEADER_TITLE = re.compile(r"^\s*(:{3,}|`{3,})\{admonition\}\s*本章导读\s*$", re.M)
NUMBERS = re.compile(r"主线约\s*(\d+)\s*分钟(?:（其中练习约\s*(\d+)\s*分钟）)?，"
                     r"(?:选读约\s*(\d+)\s*分钟|本章没有选读)")
EXERCISE_SECTION = "练习"  # the ## section whose main-line cells are the exercises' time
TAKEAWAYS = re.compile(r"^\s*([1-9])[.、]\s*\S", re.M)
GLUE_LINE = re.compile(r"^\s*glue\(.*\)\s*(#.*)?$")
SKIP_TAGS = {"remove-cell"}
NO_INPUT_TAGS = {"hide-input", "remove-input"}
NO_OUTPUT_TAGS = {"remove-output"}
SOLUTION_TAGS = {"hide-cell"}

#: The student's times (minutes) for chapters 01–10 at commit ccc8349 (09: "100+").
STUDENT = {"01": 70, "02": 50, "03": 60, "04": 30, "05": 80, "06": 40, "07": 45, "08": 60, "09": 100,
           "10": 60}
CALIBRATION_COMMIT = "ccc8349"


@dataclasses.dataclass
class Counts:
    """What there is to read and do in a set of cells."""
    cjk: int = 0
    words: int = 0
    inline_math: int = 0
    display_math: int = 0
    code_lines: int = 0
    figures: int = 0
    output_lines: int = 0
    exercises: int = 0

    def __iadd__(self, other: "Counts") -> "Counts":
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))
        return self

    def minutes(self) -> float:
        return (self.cjk / CJK_PER_MIN + self.words / WORDS_PER_MIN + self.inline_math * INLINE_MATH
                + self.display_math * DISPLAY_MATH + self.code_lines * CODE_LINE + self.figures * FIGURE
                + self.output_lines * OUTPUT_LINE + self.exercises * EXERCISE)


def is_header(cell) -> bool:
    return cell["cell_type"] == "markdown" and bool(HEADER_TITLE.search(book_text.text(cell)))


def _output_counts(outputs: list) -> tuple[int, int]:
    """(figures, printed lines) of a code cell's outputs."""
    figures = lines = 0
    for output in outputs:
        data = output.get("data") or {}
        if data and all(k.startswith("application/papermill.record/") for k in data):
            continue  # a glue record
        html = "".join(data.get("text/html", "")) if isinstance(data.get("text/html"), list) \
            else data.get("text/html", "")
        if "attnbook-slider" in html or "image/png" in data or "image/svg+xml" in data or "image/jpeg" in data:
            figures += 1
        elif "<table" in html:
            lines += html.count("<tr")
        elif output.get("output_type") == "stream":
            lines += "".join(output.get("text", "")).rstrip("\n").count("\n") + 1
        elif output.get("output_type") == "error":
            lines += 3
        elif "text/markdown" in data or "text/plain" in data:
            text = data.get("text/markdown") or data.get("text/plain")
            lines += "".join(text).rstrip("\n").count("\n") + 1
    return figures, min(lines, OUTPUT_CAP)


def markdown_counts(source: str) -> Counts:
    """The counts of a piece of Markdown (a 参考 section counts nothing: nobody reads a reference list)."""
    counts = Counts()
    kept = "\n".join(part for title, part in book_text.split_sections(source) if title != "参考")
    prose = book_text.prose(kept)
    counts.cjk = book_text.cjk_chars(prose.text)
    counts.words = book_text.latin_words(prose.text)
    counts.inline_math = prose.inline_math
    counts.display_math = prose.display_math
    counts.code_lines = prose.code_lines
    counts.figures = prose.images
    counts.exercises = len(set(re.findall(r"\*\*练习\s*(\d{2}-\d+)", kept)))
    return counts


def cell_counts(cell, *, setup: bool = False) -> Counts:
    """The counts of one cell (setup: one of the first two code cells, which count nothing)."""
    counts = Counts()
    cell_tags = book_text.tags(cell)
    if cell_tags & SKIP_TAGS or is_header(cell) or setup:
        return counts
    source = book_text.text(cell)
    if cell["cell_type"] == "markdown":
        return markdown_counts(source)
    if cell["cell_type"] != "code":
        return counts
    if not cell_tags & (NO_INPUT_TAGS | SOLUTION_TAGS):
        counts.code_lines = sum(1 for line in source.splitlines() if line.strip() and not GLUE_LINE.match(line))
    if not cell_tags & (NO_OUTPUT_TAGS | SOLUTION_TAGS):
        counts.figures, counts.output_lines = _output_counts(cell.get("outputs", []))
    return counts


def _section(title: str) -> str:
    return title.split()[0] if title.split() else title


def _each_cell(cells):
    """(index, the ## section it stands in, its counts) for every cell; the first two code cells
    (setup and imports) count nothing. A Markdown cell that holds several ## sections (the last
    exercise, then 下一步 and 参考) yields one piece per section, each counted where it stands."""
    section = None
    code_seen = 0
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            code_seen += 1
        elif cell["cell_type"] == "markdown" and not (book_text.tags(cell) & SKIP_TAGS or is_header(cell)):
            for title, part in book_text.split_sections(book_text.text(cell)):
                section = _section(title) if title else section
                yield index, section, (markdown_counts(part) if title != "参考" else Counts())
            continue
        setup = cell["cell_type"] == "code" and code_seen <= 2
        yield index, section, cell_counts(cell, setup=setup)


def notebook_counts(cells) -> tuple[Counts, Counts]:
    """(main line, deep dives) counts of a notebook's cells."""
    deep = book_text.deep_dive_cells(cells)
    main, dives = Counts(), Counts()
    for index, _, counts in _each_cell(cells):
        if index in deep:
            dives += counts
        else:
            main += counts
    return main, dives


def exercise_counts(cells) -> Counts:
    """The main line's counts inside the ``## 练习`` section (questions, hints, solutions, checks):
    the time a reader spends on the exercises rather than on reading and running the chapter."""
    deep = book_text.deep_dive_cells(cells)
    counts = Counts()
    for index, section, cell in _each_cell(cells):
        if section == EXERCISE_SECTION and index not in deep:
            counts += cell
    return counts


def round_up(minutes: float, step: int) -> int:
    return int(step * math.ceil(minutes / step - 1e-9)) if minutes > 0 else 0


def estimate(cells) -> tuple[int, int]:
    """(N, M): the main line's minutes (next 5) and the deep dives' (next 5; 0 when none)."""
    main, dives = notebook_counts(cells)
    return max(5, round_up(main.minutes(), 5)), round_up(dives.minutes(), 5)


def run_minutes(cells, run: book_text.Run) -> int:
    """One deep dive's minutes, rounded up to a whole minute (shown in its box on the site and in
    the notebook editions)."""
    counts = Counts()
    for index, _, cell in _each_cell(cells):
        if index in run.cells:
            counts += cell
    return max(1, round_up(counts.minutes(), 1))


# -- the header -------------------------------------------------------------------------------------
def exercise_minutes(cells) -> int:
    """K: the exercises' share of the main line (next 5; 0 when the chapter has none)."""
    return round_up(exercise_counts(cells).minutes(), 5)


def numbers_text(n: int, m: int, k: int = 0) -> str:
    return (f"主线约 {n} 分钟" + (f"（其中练习约 {k} 分钟）" if k else "") + "，"
            + (f"选读约 {m} 分钟" if m else "本章没有选读"))


def header_problems(cells, where: str) -> list[str]:
    """What is wrong with a chapter's 本章导读 (missing, misplaced, stale numbers, not three points)."""
    headers = [i for i, cell in enumerate(cells) if is_header(cell)]
    if not headers:
        return [f"{where}：缺少“本章导读”（H1 单元之后的 :::{{admonition}} 本章导读）"]
    problems = []
    if headers != [1]:
        problems.append(f"{where}：“本章导读”应当是第 1 个单元（紧跟 H1），现在在 {headers}")
    source = book_text.text(cells[headers[0]])
    found = NUMBERS.search(source)
    n, m = estimate(cells)
    k = exercise_minutes(cells)
    if not found:
        problems.append(f"{where}：“本章导读”里没有“主线约 N 分钟（其中练习约 K 分钟），选读约 M 分钟”"
                        "（或“本章没有选读”）")
    elif found.group(0) != numbers_text(n, m, k):
        problems.append(f"{where}：“本章导读”写的是“{found.group(0)}”，估算是“{numbers_text(n, m, k)}”"
                        "（运行 python tools/reading_time.py）")
    points = [int(k) for k in TAKEAWAYS.findall(source)]
    if points != [1, 2, 3]:
        problems.append(f"{where}：“本章导读”应当列出三点（1. 2. 3.），现在是 {points}")
    return problems


def rewrite(cells) -> bool:
    """Put the current N and M into the header; returns whether the text changed."""
    headers = [i for i, cell in enumerate(cells) if is_header(cell)]
    if not headers:
        return False
    cell = cells[headers[0]]
    source = book_text.text(cell)
    n, m = estimate(cells)
    new = NUMBERS.sub(numbers_text(n, m, exercise_minutes(cells)), source, count=1)
    if new == source:
        return False
    cell["source"] = new.splitlines(keepends=True) if isinstance(cell["source"], list) else new
    return True


# -- the book -------------------------------------------------------------------------------------
def chapters() -> list[pathlib.Path]:
    import book  # tools/book.py: the notebooks in _toc.yml order

    listed = [p for p in book.NOTEBOOKS if p.parent.name == "chapters"]
    # a chapter on disk that is not (yet) in _toc.yml still has a header to keep right
    extra = sorted(set((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")) - set(listed))
    return sorted(listed + extra, key=lambda p: p.name)


def table(rows: list[tuple[str, int, int, float, float, float]]) -> str:
    lines = ["| 章 | 主线（分钟） | 选读（分钟） | 主线估算 | 其中练习 | 主线阅读（不含练习） | 选读估算 |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, n, m, main, dives, exercises in rows:
        lines.append(f"| {name} | {n} | {m} | {main:.1f} | {exercises:.1f} | {main - exercises:.1f} | {dives:.1f} |")
    for last in (10, 11):
        first = [r for r in rows if r[0][:2].isdigit() and int(r[0][:2]) <= last]
        main = sum(r[3] for r in first)
        exercises = sum(r[5] for r in first)
        lines.append(f"| 第 1–{last} 章合计 | {sum(r[1] for r in first)} | {sum(r[2] for r in first)} | "
                     f"{main:.1f} | {exercises:.1f} | {main - exercises:.1f} | {sum(r[4] for r in first):.1f} |")
    ten = [r for r in rows if r[0][:2].isdigit() and int(r[0][:2]) <= 10]
    reading = sum(r[3] - r[5] for r in ten)
    lines.append(f"\n第 1–10 章主线：阅读与运行约 {reading / 60:.1f} 小时，练习另约 "
                 f"{sum(r[5] for r in ten) / 60:.1f} 小时")
    return "\n".join(lines)


def calibrate() -> str:
    """The estimate for chapters 01–10 as the student read them (commit ccc8349), beside the times."""
    lines = ["| 章 | 学生用时 | 估算（全章） | 其中练习 |", "|---|---:|---:|---:|"]
    pairs, fit = [], []  # fit: (characters, the minutes the student spent that prose must explain)
    for name in sorted(STUDENT):
        path = next((ROOT / "chapters").glob(f"{name}_*.ipynb"), None)
        stem = path.name if path else None
        listing = subprocess.run(["git", "ls-tree", "--name-only", CALIBRATION_COMMIT, "chapters/"],
                                 cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
        old = next(p for p in listing if pathlib.Path(p).name.startswith(f"{name}_"))
        nb = json.loads(subprocess.run(["git", "show", f"{CALIBRATION_COMMIT}:{old}"], cwd=ROOT,
                                       capture_output=True, text=True, check=True).stdout)
        main, dives = notebook_counts(nb["cells"])
        main += dives
        pairs.append((STUDENT[name], main.minutes()))
        prose = main.cjk / CJK_PER_MIN
        fit.append((main.cjk, STUDENT[name] - (main.minutes() - prose)))
        lines.append(f"| {stem or old} | {STUDENT[name]} | {main.minutes():.0f} | {main.exercises * EXERCISE:.0f} |")
    student, estimated = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    error = sum(abs(s - e) for s, e in pairs) / len(pairs)
    lines.append(f"| 合计 | {student} | {estimated:.0f} | |")
    lines.append(f"\n平均每章相差 {error:.1f} 分钟")
    rate = sum(c * c for c, _ in fit) / sum(c * t for c, t in fit)
    lines.append(f"其他常数不变时，最小二乘给出的阅读速度：每分钟 {rate:.0f} 个汉字（用的是 {CJK_PER_MIN}）")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="只检查：缺少或过时的“本章导读”让退出码为 1")
    group.add_argument("--table", action="store_true", help="只打印表格，不改文件")
    group.add_argument("--calibrate", action="store_true", help="与学生实测用时对照（第 1–10 章，ccc8349）")
    parser.add_argument("paths", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    if args.calibrate:
        print(calibrate())
        return 0
    rows, problems = [], []
    for path in args.paths or chapters():
        path = path.resolve()
        name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
        nb = json.loads(path.read_text(encoding="utf-8"))
        if not args.check and not args.table and rewrite(nb["cells"]):
            path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
            print(f"更新：{name}")
        n, m = estimate(nb["cells"])
        main, dives = notebook_counts(nb["cells"])
        rows.append((path.stem, n, m, main.minutes(), dives.minutes(), exercise_counts(nb["cells"]).minutes()))
        problems += header_problems(nb["cells"], name)
    print(table(rows))
    if problems and (args.check or not args.table):
        print("\n".join(problems), file=sys.stderr)
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    sys.exit(main())
