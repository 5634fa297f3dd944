"""Run inside .venv-colab by tools/colab_env_test.sh: do the notebooks work on Colab's versions?

1. A live kernel builds an ``attnbook.slider`` (ipywidgets 7.7 there), displays it, moves each
   control and checks that the image is redrawn; the static HTML of the same slider renders too.
2. Every notebook of the book, in the reader edition that Colab opens (notebooks/), is executed
   top to bottom in a live kernel with ATTNBOOK_STATIC unset (as in Colab). A first cell, added to the in-memory copy only, checks that the kernel
   runs the versions of tests/colab-requirements.txt and the installed (non-editable) attnbook.
   Outputs are not compared and nothing is written back. An error output (outside cells tagged
   ``raises-exception``) or a missing-glyph warning fails; other warnings are listed.

    python tools/colab_env_test.py --root /path/to/repo [notebook ...]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
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
assert not attnbook.static_mode(), "Colab 的内核里滑块应是 ipywidgets"
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


def notebooks(root: pathlib.Path, names: list[str]) -> list[pathlib.Path]:
    if names:
        return [(root / n).resolve() if not pathlib.Path(n).is_absolute() else pathlib.Path(n) for n in names]
    import runpy

    # what a Colab reader opens: the reader edition (notebooks/) of every notebook in tools/book.py's list
    sources = runpy.run_path(str(root / "tools" / "book.py"))["NOTEBOOKS"]
    return [root / "notebooks" / path.relative_to(root) for path in sources]


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
    parser.add_argument("--times", type=pathlib.Path, default=None, help="write {notebook: seconds} here")
    parser.add_argument("notebooks", nargs="*")
    args = parser.parse_args()
    root = args.root.resolve()
    os.environ.pop("ATTNBOOK_STATIC", None)
    os.environ["PYTHONWARNINGS"] = "error:Glyph:UserWarning"
    os.environ["ATTNBOOK_RECORD"] = "0"  # no attnbook_results.jsonl next to the reader edition
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel 6.17's debugger chatter on 3.11

    import IPython, ipykernel, ipywidgets, matplotlib, numpy, pandas, PIL, torch  # noqa: E401
    want = {m: sys.modules[m].__version__ for m in PINNED}
    print("Colab 版本：", ", ".join(f"{k} {v}" for k, v in want.items()), flush=True)
    version_cell = nbformat.v4.new_code_cell(VERSION_CELL.format(want=want, root=str(root)))

    failures = 0
    start = time.perf_counter()
    check = nbformat.v4.new_notebook(cells=[version_cell, nbformat.v4.new_code_cell(WIDGET_CHECK)])
    check.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    problems = run(check, pathlib.Path.cwd())  # not the repository: import the installed attnbook
    print(f"滑块检查（ipywidgets {ipywidgets.__version__}）… {'通过' if not problems else '失败'}"
          f"  {time.perf_counter() - start:.1f} s", flush=True)
    for p in problems:
        print("   ", p)
    failures += bool(problems)

    times = {}
    for path in notebooks(root, args.notebooks):
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(VERSION_CELL.format(want=want, root=str(root))))
        rel = path.relative_to(root).as_posix().removeprefix("notebooks/")  # keyed by the source's path
        print(f"执行 {rel} …", end=" ", flush=True)
        t = time.perf_counter()
        problems = run(nb, path.parent)
        times[rel] = round(time.perf_counter() - t, 2)
        print(f"{'通过' if not problems else '失败'}  {times[rel]:.1f} s", flush=True)
        for p in problems:
            print("   ", p)
        for w in warnings_in(nb):
            print("    警告（不算失败）：", w)
        failures += bool(problems)
    if args.times:
        args.times.write_text(json.dumps(times, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"Colab 版本下：{len(times) + 1 - failures} 项通过，{failures} 项失败")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
