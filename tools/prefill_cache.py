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
    for uri in result.excepted + result.errored:
        print(f"  失败 {os.path.relpath(uri, ROOT)}（建站时会重新执行并报告错误）", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
