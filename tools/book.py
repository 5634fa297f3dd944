"""The one place that defines the book's notebooks and the environment they run in.

Read by the Makefile (``python3 tools/book.py --env``), tools/versions_test.sh (``--notebooks``),
tools/execute_notebooks.py, tools/prefill_cache.py, tools/bench.py, tools/colab_env_test.py, the root
conftest.py (pytest and the kernels nbval starts), _ext/attnbook_site.py (the site build) and
tests/test_structure.py.
Standard library only, so the Makefile can run it before the venv exists.

* ``NOTEBOOKS``: every ``.ipynb`` listed in _toc.yml, in book order (chapters, then appendix).
* ``BOOK_ENV``: ATTNBOOK_STATIC=1 (sliders render as precomputed frames, so outputs are
  deterministic), matplotlib's "Glyph … missing from font" warning as an error, and
  ATTNBOOK_RECORD=0 (``attnbook.check`` writes no results file next to the book's own notebooks).
* ``EXECUTION_TIMEOUT``: per-cell timeout in seconds, from _config.yml (execute: timeout).
"""
from __future__ import annotations

import argparse
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]

BOOK_ENV: dict[str, str] = {"ATTNBOOK_STATIC": "1", "PYTHONWARNINGS": "error:Glyph:UserWarning",
                            "ATTNBOOK_RECORD": "0"}


def _toc_notebooks() -> list[pathlib.Path]:
    # _toc.yml is jb-book format; its "file:" entries are all we need (no YAML library required).
    entries = re.findall(r"^\s*-?\s*file:\s*(\S+)\s*$", (ROOT / "_toc.yml").read_text(encoding="utf-8"), re.M)
    return [ROOT / f"{entry}.ipynb" for entry in entries if (ROOT / f"{entry}.ipynb").exists()]


def _timeout() -> int:
    match = re.search(r"^\s+timeout:\s*(\d+)", (ROOT / "_config.yml").read_text(encoding="utf-8"), re.M)
    return int(match.group(1)) if match else 300


NOTEBOOKS: list[pathlib.Path] = _toc_notebooks()
EXECUTION_TIMEOUT: int = _timeout()


def main() -> None:
    parser = argparse.ArgumentParser(description="打印全书的笔记本列表或运行环境（供 Makefile 使用）")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--env", action="store_true", help="KEY=VALUE …（放在命令前面）")
    group.add_argument("--notebooks", action="store_true", help="笔记本的相对路径，按目录顺序")
    group.add_argument("--timeout", action="store_true", help="单元格超时（秒）")
    args = parser.parse_args()
    if args.env:
        print(" ".join(f"{k}={v}" for k, v in BOOK_ENV.items()))
    elif args.notebooks:
        print(" ".join(p.relative_to(ROOT).as_posix() for p in NOTEBOOKS))
    else:
        print(EXECUTION_TIMEOUT)


if __name__ == "__main__":
    main()
