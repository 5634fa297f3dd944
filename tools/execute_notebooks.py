"""Execute notebooks in place, once, from the top (``make execute``).

Same environment as the site build and the tests: ATTNBOOK_STATIC=1 (sliders become precomputed
frames) and matplotlib's missing-glyph warning turned into an error. Volatile metadata (widget
state, timings) is not stored, so a re-run changes nothing when nothing changed.

    python tools/execute_notebooks.py                # every notebook of the book
    python tools/execute_notebooks.py chapters/04_cat_eats_fish.ipynb
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from book import BOOK_ENV, NOTEBOOKS  # noqa: E402  the one list and environment


def book_notebooks() -> list[pathlib.Path]:
    return list(NOTEBOOKS)  # _toc.yml order


def execute(path: pathlib.Path, timeout: int = 600, write: bool = True) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", allow_errors=False,
        record_timing=False, store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    elapsed = time.perf_counter() - start
    # An exception in a display hook (e.g. a missing glyph while drawing a figure) does not fail
    # the cell, it only leaves an error output: treat it as a failure all the same.
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", []):
            for output in cell.outputs:
                if output.output_type == "error":
                    raise RuntimeError(f"{path.name} 第 {index} 个单元格出错：{output.ename}: {output.evalue}")
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    if write:
        nbformat.write(nb, path)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path)
    parser.add_argument("--times", type=pathlib.Path, default=None,
                        help="write {notebook: seconds} as JSON here")
    args = parser.parse_args()
    os.environ.update(BOOK_ENV)
    paths = [p.resolve() for p in args.notebooks] or book_notebooks()
    times = {}
    for path in paths:
        rel = path.relative_to(ROOT)
        print(f"执行 {rel} …", end=" ", flush=True)
        times[str(rel)] = round(execute(path), 2)
        print(f"{times[str(rel)]:.1f} s", flush=True)
    if args.times:
        args.times.parent.mkdir(parents=True, exist_ok=True)
        args.times.write_text(json.dumps(times, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
