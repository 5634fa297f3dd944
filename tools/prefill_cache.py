"""Fill the build's jupyter-cache with jupyter-cache's own parallel executor (``make html``).

Jupyter Book executes notebooks one after another; ``local-parallel`` (jupyter-cache's public
executor API: get_cache / add_nb_to_project / load_executor) runs them on every core, in the
notebook's own folder as myst-nb does, into the cache myst-nb reads (_build/.jupyter_cache). The
build then finds every notebook cached and executes nothing. A notebook that fails is left out of
the cache, so the build executes it again and reports the error as usual.
The notebook list, environment and timeout come from tools/book.py (the timeout from _config.yml).
"""
from __future__ import annotations

import logging
import os
import re
import sys

from book import BOOK_ENV, EXECUTION_TIMEOUT, NOTEBOOKS, ROOT


def main() -> int:
    os.environ.update(BOOK_ENV)
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor

    cache = get_cache(str(ROOT / "_build" / ".jupyter_cache"))
    pks = [cache.add_nb_to_project(str(path)).pk for path in NOTEBOOKS]
    logger = logging.getLogger("attnbook.prefill")  # its own handler: not multiprocessing's chatter
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("jupyter-cache：%(message)s"))
    logger.addHandler(handler)
    executor = load_executor("local-parallel", cache, logger=logger)
    result = executor.run_and_cache(filter_pks=pks, timeout=EXECUTION_TIMEOUT)
    print(build_log(cache, result), flush=True)
    return 0


def failure_summary(traceback: str) -> str:
    """From jupyter-cache's stored traceback: the failing cell's first line and the error line."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", traceback or "")
    cell = re.search(r"executing the following cell:\n-+\n(.*?)\n-+\n", text, re.S)
    first = next((line for line in (cell.group(1).splitlines() if cell else []) if line.strip()
                  and not line.lstrip().startswith("#")), "?")
    # the failing line: attnbook.setup()'s short traceback ("单元格第 N 行：…") or IPython's "----> N …"
    pointed = re.findall(r"单元格第 \d+ 行：(.*)|^-+> *\d+ (.*)$", text, re.M)
    if pointed:
        first = next(part for part in pointed[-1] if part)
    errors = [line for line in text.splitlines() if re.match(r"^\w*(Error|Exception)\b.*:", line)]
    return f"单元格 `{first.strip()[:70]}` → {errors[-1].strip()[:160] if errors else text.strip().splitlines()[-1:]}"


def build_log(cache, result) -> str:
    """One line per notebook (name, seconds, ok / cached / failed with the cell and the error) and a summary."""
    executed = set(result.succeeded)
    failed = set(result.excepted) | set(result.errored)
    lines, total = ["", "笔记本执行情况（jupyter-cache）："], 0.0
    for path in NOTEBOOKS:
        uri, rel = str(path), path.relative_to(ROOT).as_posix()
        if uri in failed:
            record = cache.get_project_record(uri)
            lines.append(f"  ✗ {rel:45s} 失败：{failure_summary(record.traceback)}")
            continue
        cached = cache.get_cached_project_nb(uri)
        seconds = float((cached.data or {}).get("execution_seconds", 0.0)) if cached else 0.0
        total += seconds if uri in executed else 0.0
        state = "执行成功" if uri in executed else "已在缓存中（上次执行用时）"
        lines.append(f"  ✓ {rel:45s} {seconds:6.1f} s  {state}")
    lines.append(f"共 {len(NOTEBOOKS)} 个：本次执行 {len(executed)} 个（合计 {total:.0f} s 的内核时间），"
                 f"沿用缓存 {len(NOTEBOOKS) - len(executed) - len(failed)} 个，失败 {len(failed)} 个"
                 + ("（建站时会重新执行这些笔记本并报告完整错误）" if failed else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
