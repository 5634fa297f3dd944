"""Run inside .venv-colab by tools/colab_env_test.sh: the book's one notebook run in ``make test``.

1. A live kernel builds an ``attnbook.slider`` (ipywidgets 7.7 there), displays it, moves each
   control and checks that the image is redrawn; the static HTML of the same slider renders too.
2. ``--prepare DIR`` writes the *run edition* into DIR for nbval (tools/colab_env_test.sh then runs
   nbval over it in .venv-colab, on PyTorch's non-vectorised kernels): every notebook of the reader
   edition that Colab opens (notebooks/, committed), cell for cell, with each code cell carrying the
   outputs that the source notebook (chapters/, appendix/) stores for it, so nbval compares what
   Colab's reader runs against what the book prints, glue records and solution outputs included.
   A reader-edition code cell whose code is not its source cell's (a ``#@title`` line aside) fails
   here: notebooks/ is out of date. A first cell checks that the kernel runs the versions of
   tests/colab-requirements.txt and the installed (non-editable) attnbook. nbval's cell numbers are
   those of the reader edition plus one (that first cell).

    python tools/colab_env_test.py --root /path/to/repo --prepare DIR [notebook ...]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import runpy
import sys
import time

import nbformat
from nbclient import NotebookClient

PINNED = ("numpy", "pandas", "matplotlib", "ipywidgets", "IPython", "ipykernel", "torch", "PIL")

VERSION_CELL = """\
import importlib, sys, attnbook
_want = {want!r}
_got = {{m: importlib.import_module(m).__version__ for m in _want}}
assert _got == _want, f"内核里的版本与 tests/colab-requirements.txt 不一致：{{_got}} != {{_want}}"
assert "site-packages" in attnbook.__file__ and not attnbook.__file__.startswith({root!r} + "/attnbook/"), attnbook.__file__
assert attnbook.static_mode() == {static!r}, "ATTNBOOK_STATIC 与这次运行的设定不一致"
import os, torch
_isa = os.environ.get("ATEN_CPU_CAPABILITY")
assert _isa is None or torch.backends.cpu.get_cpu_capability() == _isa.upper(), (
    f"内核没有用 ATEN_CPU_CAPABILITY={{_isa}}：{{torch.backends.cpu.get_cpu_capability()}}")
"""

WIDGET_CHECK = """\
import matplotlib.pyplot as plt
from IPython.display import display
import attnbook

attnbook.setup()

def _fig(a, flag):
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.plot([0, 1, 2], [0, a, 2 * a] if flag else [2 * a, a, 0])
    ax.set_title(f"斜率 {a}")
    return fig

s = attnbook.slider(_fig, {"a": [1, 2, 3], "flag": [True, False]}, labels={"a": "斜率", "flag": "方向"})
assert not attnbook.static_mode()
display(s)                                   # the live widget, as in Colab
box = s.widget()
import ipywidgets
assert isinstance(box, ipywidgets.VBox), type(box)
seen = {box.attnbook_image.value}
for key, control in box.attnbook_controls.items():
    control.value = (control.value + 1) % len(control.options)   # move the control
    seen.add(box.attnbook_image.value)
assert len(seen) == 1 + len(box.attnbook_controls), "移动控件后图像没有重绘"
html = s.html()                              # the static path renders too
assert html.count("<img data-frame=") == 6 and "data:image/png;base64," in html
print("滑块在 ipywidgets", ipywidgets.__version__, "下可以显示并重绘")
"""


def sources(root: pathlib.Path, names: list[str]) -> list[pathlib.Path]:
    """The source notebooks to run (tools/book.py's list, or the ones named, as ``chapters/…``)."""
    if names:
        paths = [pathlib.Path(n) if pathlib.Path(n).is_absolute() else root / n for n in names]
        return [(p.resolve().relative_to(root / "notebooks") if p.resolve().is_relative_to(root / "notebooks")
                 else p.resolve().relative_to(root)) for p in paths]
    return [path.relative_to(root) for path in runpy.run_path(str(root / "tools" / "book.py"))["NOTEBOOKS"]]


TITLE = "#@title "  # the line tools/editions.py puts above a collapsed cell (Colab's form view)


def _code(cell) -> str:
    return "".join(cell.source) if isinstance(cell.source, list) else cell.source


def run_edition(root: pathlib.Path, rel: pathlib.Path, version_cell: str) -> nbformat.NotebookNode:
    """The reader edition of ``rel`` (notebooks/rel, as committed), each code cell carrying the
    outputs and tags its source cell (rel, in chapters/ or appendix/) stores; the version check first.

    Raises ValueError when the two do not line up: the reader edition is not what the source gives."""
    source = nbformat.read(root / rel, as_version=4)
    reader = nbformat.read(root / "notebooks" / rel, as_version=4)
    src_cells = [c for c in source.cells if c.cell_type == "code"
                 and "remove-cell" not in c.metadata.get("tags", [])]
    run_cells = [c for c in reader.cells if c.cell_type == "code"]
    stale = f"notebooks/{rel.as_posix()} 与 {rel.as_posix()} 不一致，请运行 make execute（或 tools/editions.py reader）"
    if len(src_cells) != len(run_cells):
        raise ValueError(f"{stale}：代码单元 {len(run_cells)} 个，源文件 {len(src_cells)} 个")
    for n, (src, cell) in enumerate(zip(src_cells, run_cells)):
        code = _code(cell)
        if code.startswith(TITLE) and not _code(src).startswith(TITLE):
            code = code.split("\n", 1)[1] if "\n" in code else ""
        if code != _code(src):
            raise ValueError(f"{stale}：第 {n + 1} 个代码单元的代码不同")
        cell.outputs = src.outputs
        cell.metadata["tags"] = list(src.metadata.get("tags", []))
        cell.execution_count = src.get("execution_count")
    reader.cells.insert(0, nbformat.v4.new_code_cell(version_cell))
    return reader


def run(nb, cwd: pathlib.Path) -> list[str]:
    """Execute; return the problems found (empty when all is well)."""
    # shutdown_kernel="immediate" (as nbval does): every output is in by then, and a graceful shutdown
    # of Colab's ipykernel 6.17 takes about 3 s per notebook
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False, record_timing=False,
                            shutdown_kernel="immediate", resources={"metadata": {"path": str(cwd)}})
    problems = []
    try:
        client.execute()
    except Exception as exc:  # CellExecutionError and friends: report, go on with the next notebook
        problems.append(f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300]}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        allowed = "raises-exception" in cell.metadata.get("tags", [])
        for output in cell.get("outputs", []):
            if output.output_type == "error" and not allowed:
                problems.append(f"单元格 {index}: {output.ename}: {output.evalue[:200]}")
            text = output.get("text", "") if output.output_type == "stream" else ""
            if "Glyph" in text or "missing from font" in text:
                problems.append(f"单元格 {index}: 缺字警告：{text.strip()[:200]}")
    return problems


def warnings_in(nb) -> list[str]:
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream" and output.name == "stderr":
                for line in output.text.splitlines():
                    if re.search(r"Warning|warn", line):
                        found.append(f"单元格 {index}: {line.strip()[:200]}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, required=True, help="the repository")
    parser.add_argument("--prepare", type=pathlib.Path, default=None,
                        help="write the run edition here (for nbval) after the slider check")
    parser.add_argument("notebooks", nargs="*", help="source notebooks (default: the whole book)")
    args = parser.parse_args()
    root = args.root.resolve()
    os.environ.pop("ATTNBOOK_STATIC", None)  # the slider check runs live, as in Colab
    os.environ["PYTHONWARNINGS"] = "error:Glyph:UserWarning"
    os.environ["ATTNBOOK_RECORD"] = "0"  # no attnbook_results.jsonl next to the reader edition
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel 6.17's debugger chatter on 3.11

    import IPython, ipykernel, ipywidgets, matplotlib, numpy, pandas, PIL, torch  # noqa: E401
    want = {m: sys.modules[m].__version__ for m in PINNED}
    print("Colab 版本：", ", ".join(f"{k} {v}" for k, v in want.items()), flush=True)

    start = time.perf_counter()
    live_version = VERSION_CELL.format(want=want, root=str(root), static=False)
    check = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(live_version),
                                            nbformat.v4.new_code_cell(WIDGET_CHECK)])
    check.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    problems = run(check, pathlib.Path.cwd())  # not the repository: import the installed attnbook
    print(f"滑块检查（ipywidgets {ipywidgets.__version__}，活的内核）… {'通过' if not problems else '失败'}"
          f"  {time.perf_counter() - start:.1f} s", flush=True)
    for p in problems:
        print("   ", p)
    if problems:
        return 1
    if args.prepare is None:
        return 0

    # the notebook run: nbval's kernels get the book's environment (ATTNBOOK_STATIC=1: sliders as
    # precomputed frames, the outputs the book stores)
    book_env = runpy.run_path(str(root / "tools" / "book.py"))["BOOK_ENV"]
    version_cell = VERSION_CELL.format(want=want, root=str(root), static=book_env.get("ATTNBOOK_STATIC") == "1")
    written = []
    for rel in sources(root, args.notebooks):
        try:
            nb = run_edition(root, rel, version_cell)
        except ValueError as exc:
            print(exc)
            return 1
        target = args.prepare / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(rel.as_posix())
    # the longest first (bench/notebook_times.json), so that two workers end at about the same time
    times_file = root / "bench" / "notebook_times.json"
    times = json.loads(times_file.read_text(encoding="utf-8")) if times_file.exists() else {}
    written.sort(key=lambda rel: -times.get(rel, 0))
    (args.prepare / "notebooks.txt").write_text("\n".join(written) + "\n", encoding="utf-8")
    print(f"运行版（读者版的代码 + 源笔记本存下的输出）：{len(written)} 个笔记本写入 {args.prepare}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
