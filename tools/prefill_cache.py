"""Execute the book's notebooks in parallel into the build's jupyter-cache (``make html``).

Jupyter Book executes notebooks one after another; with 2 cores that leaves one idle. This
script fills ``_build/.jupyter_cache`` the same way myst-nb's ``cache`` mode does (same
library, same hashing, same working directory), using N worker processes. The build then
finds every notebook cached and executes nothing. A notebook that fails is left out of the
cache, so the build executes it again and reports the error as usual.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import pathlib
import sys
import time

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from execute_notebooks import BOOK_ENV, book_notebooks  # noqa: E402

CACHE = ROOT / "_build" / ".jupyter_cache"


def _run(path: str, timeout: int) -> tuple[str, str | None, str | None, float]:
    from jupyter_cache.executors.utils import single_nb_execution

    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(nb, cwd=str(pathlib.Path(path).parent), allow_errors=False,
                                 timeout=timeout, meta_override=True)
    if result.err is not None:
        return path, None, result.exc_string, result.time
    return path, nbformat.writes(nb), None, result.time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=300)
    args = parser.parse_args()
    os.environ.update(BOOK_ENV)

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(CACHE))
    todo = []
    for path in book_notebooks():
        nb = nbformat.read(path, as_version=4)
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            todo.append(path)
    if not todo:
        print("jupyter-cache：所有笔记本都已缓存，无需执行。")
        return 0
    print(f"jupyter-cache：并行执行 {len(todo)} 个笔记本（{args.jobs} 个进程）…", flush=True)
    start = time.perf_counter()
    failed = 0
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(_run, str(p), args.timeout) for p in todo]
        for future in cf.as_completed(futures):
            path, text, error, seconds = future.result()
            rel = pathlib.Path(path).relative_to(ROOT)
            if error is not None:
                failed += 1
                print(f"  失败 {rel}（建站时会重新执行并报告错误）", flush=True)
                continue
            record = cache.add_nb_to_project(path)
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(text, as_version=4), record.uri,
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            print(f"  {rel}: {seconds:.1f} s", flush=True)
    print(f"并行执行用时 {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
