"""A pytest plugin for nbval runs: a kernel that dies while starting is started again (at most three
tries), and the reason it died is shown.

Why: `make test` starts many kernels and browsers at once. Once, in a clean-clone run, both of nbval's
workers started their first kernels together and one of them died ("Kernel died before replying to
kernel_info"), failing every cell of that notebook before a line of it ran. nbval sends a kernel's
stderr to /dev/null, so the reason was lost; the known one for this message under parallel starts
(jupyter/jupyter_client#154, jupyter/nbconvert#1066) is a port race: jupyter_client picks a kernel's
ports (bind to port 0, note the number, close) before the kernel binds them, and a socket opened by
another process in between takes one ("Address already in use"). Here the stderr goes to a
temporary file, printed if the start fails. A notebook's own errors are untouched: only
a kernel that dies before it answers its first message is retried.

Loaded by tools/colab_env_test.sh (copied next to the run edition as its conftest.py) and by the
repository's conftest.py (bench's nbval runs on the pinned venv).
"""
from __future__ import annotations

import sys
import tempfile

import nbval.kernel

TRIES = 3
_start = nbval.kernel.start_new_kernel


def _start_with_retries(*args, **kwargs):
    for attempt in range(1, TRIES + 1):
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
            kwargs["stderr"] = err
            try:
                return _start(*args, **kwargs)
            except RuntimeError as exc:
                err.seek(0)
                said = err.read().strip().splitlines()[-3:]
                sys.stderr.write(f"\n内核启动失败（第 {attempt} 次，共 {TRIES} 次）：{exc}；内核的 stderr："
                                 f"{' | '.join(said) or '（空）'}\n")
                if attempt == TRIES:
                    raise


nbval.kernel.start_new_kernel = _start_with_retries
