"""Run inside a .venv-versions/<name> venv by tools/versions_test.sh: do the notebooks work on this torch?

Every notebook of the book (tools/book.py's NOTEBOOKS) is executed top to bottom with
ATTNBOOK_STATIC=1 and PYTHONWARNINGS=error:Glyph:UserWarning (tools/book.py's BOOK_ENV), on the CPU
kernels ATEN_CPU_CAPABILITY selects (unset: the vectorised ones). A first cell, added to the
in-memory copy only, prints the versions and checks that the kernel imports the installed
(non-editable) attnbook and uses the requested CPU kernels. Outputs are not compared and nothing
is written back; an error output (outside cells tagged ``raises-exception``) or a missing-glyph
warning fails (tools/colab_env_test.py's ``run``). Writes, for tools/versions_test.sh to collect:

    {"name", "torch", "python", "versions", "cpu_capability", "passed", "total", "seconds",
     "notebooks": {path: {"ok", "seconds", "problems"}}}

    python tools/versions_test.py --root /path/to/repo --name newest --out run.json [notebook ...]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import time

import nbformat

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from book import BOOK_ENV, NOTEBOOKS  # noqa: E402  the one list (the chapters' sources) and environment
from colab_env_test import run, warnings_in  # noqa: E402  the executor of the Colab slider check

VERSION_CELL = """\
import os, attnbook, torch
print("torch", torch.__version__, "· CPU 内核", torch.backends.cpu.get_cpu_capability())
assert torch.__version__ == {torch!r}, torch.__version__
assert "site-packages" in attnbook.__file__ and not attnbook.__file__.startswith({root!r} + "/attnbook/"), attnbook.__file__
assert attnbook.static_mode(), "ATTNBOOK_STATIC=1 没有传到内核"
_isa, _got = os.environ.get("ATEN_CPU_CAPABILITY"), torch.backends.cpu.get_cpu_capability()
# torch 2.5 calls the non-vectorised kernels "NO AVX"; later releases call them "DEFAULT"
assert _isa is None or _got == _isa.upper() or (_isa == "default" and _got == "NO AVX"), (
    f"内核没有用 ATEN_CPU_CAPABILITY={{_isa}}：{{_got}}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, required=True, help="the repository")
    parser.add_argument("--name", required=True, help="oldest / pinned / newest")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="write the result (JSON) here")
    parser.add_argument("notebooks", nargs="*")
    args = parser.parse_args()
    root = args.root.resolve()
    os.environ.update(BOOK_ENV)
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"

    import matplotlib, numpy, pandas, PIL, torch  # noqa: E401
    versions = {m.__name__: m.__version__ for m in (torch, numpy, pandas, matplotlib, PIL)}
    capability = torch.backends.cpu.get_cpu_capability()
    print(f"== {args.name}：Python {platform.python_version()}，"
          + "，".join(f"{k} {v}" for k, v in versions.items()) + f"；CPU 内核 {capability}", flush=True)
    cell = nbformat.v4.new_code_cell(VERSION_CELL.format(torch=torch.__version__, root=str(root)))

    results = {}
    start = time.perf_counter()
    chosen = [(root / n).resolve() for n in args.notebooks] or NOTEBOOKS
    for path in chosen:
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(0, cell)
        rel = path.relative_to(root).as_posix()
        print(f"执行 {rel} …", end=" ", flush=True)
        t = time.perf_counter()
        problems = run(nb, path.parent)
        seconds = round(time.perf_counter() - t, 2)
        results[rel] = {"ok": not problems, "seconds": seconds, "problems": problems}
        print(f"{'通过' if not problems else '失败'}  {seconds:.1f} s", flush=True)
        for p in problems:
            print("   ", p)
        for w in warnings_in(nb):
            print("    警告（不算失败）：", w)
    passed = sum(r["ok"] for r in results.values())
    summary = {"name": args.name, "torch": torch.__version__, "python": platform.python_version(),
               "versions": versions, "cpu_capability": capability,
               "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY"),
               "passed": passed, "total": len(results),
               "seconds": round(time.perf_counter() - start, 1), "notebooks": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"torch {torch.__version__}（CPU 内核 {capability}）：{passed}/{len(results)} 个笔记本通过，"
          f"{summary['seconds']:.0f} s", flush=True)
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
