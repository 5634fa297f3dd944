"""Write appendix/exercises.md: every exercise of the book, by chapter (generated, do not edit).

Sources:
  * the notebooks: each ``**练习 NN-k.**`` (or ``**练习 NN-k（思考）.**``) in chapters/*.ipynb is an
    exercise; its title is the registered title if there is one, else the first sentence of the
    question;
  * ``attnbook.exercises.load_all()``: the auto-checked ones (``attnbook.check("NN-k", answer)``).
An exercise is marked 自动批改 when it is registered AND its chapter calls ``attnbook.check`` on it.

    python tools/make_exercise_index.py           # write appendix/exercises.md
    python tools/make_exercise_index.py --check   # exit 1 if the committed page is out of date
"""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "appendix" / "exercises.md"
HEADING = re.compile(r"\*\*练习 (\d\d)-(\d+)(（[^）]*）)?[.．。]?\*\*\s*(.*)")
CHECK_CALL = re.compile(r"""attnbook\.check\(\s*["'](\d\d-\d+)["']""")
MAX_TITLE = 60
CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"  # CJK punctuation, hanzi, full-width forms


@dataclasses.dataclass
class Exercise:
    key: str
    chapter: str
    title: str
    kind: str  # e.g. "思考" from "（思考）", or ""
    checked: bool


@dataclasses.dataclass
class Chapter:
    number: str
    path: pathlib.Path
    title: str
    exercises: list[Exercise]


def _sentences(text: str) -> list[str]:
    """Split at 。？！? outside “quotes”, $math$ and `code`."""
    out, start, quote, math, code = [], 0, 0, False, False
    for i, ch in enumerate(text):
        if ch == "“":
            quote += 1
        elif ch == "”":
            quote = max(0, quote - 1)
        elif ch == "$":
            math = not math
        elif ch == "`":
            code = not code
        elif ch in "。？！?" and not (quote or math or code):
            out.append(text[start:i + 1].strip())
            start = i + 1
    if text[start:].strip():
        out.append(text[start:].strip())
    return out


def _short_title(text: str) -> str:
    """The question (first sentence ending in ？ if any), shortened without breaking $math$ or `code`."""
    text = " ".join(text.replace("**", "").split())
    text = re.sub(f"(?<=[{CJK}])\\s+(?=[{CJK}])", "", text)  # a line break inside Chinese text is no space
    sentences = _sentences(text)
    asks = [i for i, s in enumerate(sentences) if s.endswith(("？", "?"))]
    if not sentences:
        pass
    elif not asks:
        text = sentences[0]
    elif len(sentences[asks[0]]) < 12 and asks[0] > 0:  # “为什么？” alone says nothing
        text = sentences[asks[0] - 1] + sentences[asks[0]]
    else:
        text = sentences[asks[0]]
    if len(text) > MAX_TITLE:
        cut = text[:MAX_TITLE]
        for mark in ("$", "`"):
            if cut.count(mark) % 2:
                cut = cut[: cut.rindex(mark)]
        if cut.count("“") > cut.count("”"):
            cut += "”"
        text = cut.rstrip("，、；： ") + "…"
    return text


def chapter_exercises(path: pathlib.Path, registry: dict) -> Chapter:
    nb = nbformat.read(path, as_version=4)
    number = path.name[:2]
    title = next(line[2:].strip() for c in nb.cells if c.cell_type == "markdown"
                 for line in c.source.splitlines() if line.startswith("# "))
    checked_keys = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            checked_keys |= set(CHECK_CALL.findall(cell.source))
    exercises: dict[str, Exercise] = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        for i, line in enumerate(lines):
            match = HEADING.search(line)
            if not match:
                continue
            key = f"{match.group(1)}-{match.group(2)}"
            if key in exercises:
                continue
            question = [match.group(4)]
            for following in lines[i + 1:]:  # the question runs to the first blank line
                if not following.strip() or following.startswith("```"):
                    break
                question.append(following)
            registered = registry.get(key)
            exercises[key] = Exercise(
                key=key, chapter=number,
                title=registered.title if registered else _short_title(" ".join(question)),
                kind=(match.group(3) or "").strip("（）"),
                checked=registered is not None and key in checked_keys,
            )
    ordered = sorted(exercises.values(), key=lambda e: int(e.key.split("-")[1]))
    return Chapter(number=number, path=path, title=title, exercises=ordered)


def collect() -> tuple[list[Chapter], list[str]]:
    """Chapters with their exercises, and warnings about registry/notebook disagreements."""
    sys.path.insert(0, str(ROOT))
    from attnbook.exercises import load_all

    registry = load_all()
    chapters = [chapter_exercises(p, registry) for p in sorted(ROOT.glob("chapters/[0-9][0-9]_*.ipynb"))]
    in_notebooks = {e.key for c in chapters for e in c.exercises}
    warnings = [f"练习 {key} 已在 attnbook.exercises 中登记，但没有出现在任何章节里"
                for key in sorted(registry) if key not in in_notebooks
                and any(c.number == key[:2] for c in chapters)]
    for chapter in chapters:
        for ex in chapter.exercises:
            if ex.key in registry and not ex.checked:
                warnings.append(f"练习 {ex.key} 已登记，但 {chapter.path.name} 没有调用 attnbook.check(\"{ex.key}\", …)")
    return chapters, warnings


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(chapters: list[Chapter]) -> str:
    total = sum(len(c.exercises) for c in chapters)
    checked = sum(e.checked for c in chapters for e in c.exercises)
    lines = [
        "# 练习索引",
        "",
        "<!-- 本页由 tools/make_exercise_index.py 生成，请勿手改；改动章节的练习后重新运行该脚本。 -->",
        "",
        f"全书 {len(chapters)} 章共有 {total} 道练习，其中 {checked} 道可以自动批改。",
        "自动批改的练习在笔记本里这样作答：把 `answer = None` 改成你的结果，运行 `attnbook.check(\"编号\", answer)`，",
        "它会说出答案对不对；常见的错误答案还会得到针对性的中文提示。其余的是思考题或动手题，解答在各章每道题下面（网页上默认收起）。",
        "",
        "在课堂上，可以让学生在 Colab 中打开对应章节，只做标着“自动批改”的题，当场核对。",
        "",
    ]
    for chapter in chapters:
        rel = chapter.path.relative_to(ROOT).as_posix()
        lines += [
            f"## 第 {int(chapter.number)} 章 {chapter.title}",
            "",
            f"[打开本章](../{rel})",
            "",
            "| 编号 | 题目 | 批改方式 |",
            "|---|---|---|",
        ]
        for ex in chapter.exercises:
            how = "自动批改" if ex.checked else ("思考题，看解答" if ex.kind == "思考" else "看解答")
            lines.append(f"| {ex.key} | {_cell(ex.title)} | {how} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the committed page")
    args = parser.parse_args()
    chapters, warnings = collect()
    for warning in warnings:
        print("注意：" + warning, file=sys.stderr)
    text = render(chapters)
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} 已过期：运行 python tools/make_exercise_index.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    n = sum(len(c.exercises) for c in chapters)
    print(f"写入 {OUT.relative_to(ROOT)}：{len(chapters)} 章，{n} 道练习")
    return 0


if __name__ == "__main__":
    sys.exit(main())
