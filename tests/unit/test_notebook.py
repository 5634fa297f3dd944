"""attnbook.infra.notebook: the provenance line and the short tracebacks that setup() installs in a kernel."""
from __future__ import annotations

import datetime
import re
import sys

from attnbook.infra import notebook as _notebook


def test_provenance_names_date_versions_and_cpu():
    line = _notebook.provenance(datetime.date(2026, 11, 30))
    assert line.startswith("本页输出由 2026-11-30 的一次运行生成：Python ")
    assert re.search(r"PyTorch \d+\.\d+\.\d+ · CPU：.+，PyTorch CPU 内核：\w+", line), line
    assert "+cpu" not in line  # the version without the local build tag


def _raise_inside_a_library():
    raise ValueError("参数 `seq_len` 收到了 0，但应为正整数")


def test_short_traceback_keeps_cell_lines_and_message_only():
    code = compile("_raise_inside_a_library()\n", "/tmp/ipykernel_123/456.py", "exec")
    try:
        exec(code, {"_raise_inside_a_library": _raise_inside_a_library})
    except ValueError:
        lines = _notebook.short_traceback_lines(*sys.exc_info())
    assert lines == ["Traceback（只列出单元格里的代码行，库内部的调用从略）：",
                     "  单元格第 1 行：",  # compiled code without a source file: no text for the line
                     "ValueError: 参数 `seq_len` 收到了 0，但应为正整数"]
    assert not any(__file__ in line or "/tmp/" in line for line in lines)


def test_short_traceback_without_cell_frames_is_the_message():
    try:
        _raise_inside_a_library()
    except ValueError:
        assert _notebook.short_traceback_lines(*sys.exc_info()) == ["ValueError: 参数 `seq_len` 收到了 0，但应为正整数"]


def test_activate_outside_a_kernel_does_nothing(capsys):
    _notebook.activate()
    assert capsys.readouterr().out == ""


def test_glue_writes_what_myst_nb_glue_writes(monkeypatch):
    """attnbook.glue is a drop-in for myst_nb.glue (the site build reads its output), for Colab."""
    import myst_nb
    import pandas as pd

    import attnbook

    import myst_nb.ext.glue

    shown = []
    record = lambda *a, **k: shown.append((a, k))  # noqa: E731
    monkeypatch.setattr("IPython.display.display", record)
    monkeypatch.setattr(myst_nb.ext.glue, "ipy_display", record)
    for value, display in [(0.123456, False), ("文字", True), (pd.DataFrame({"列": [1, 2]}), False)]:
        shown.clear()
        attnbook.glue("x", value, display=display)
        mine = shown[:]
        shown.clear()
        myst_nb.glue("x", value, display=display)
        assert mine and repr(mine) == repr(shown)


def test_glue_rejects_an_empty_name(assert_reader_error):
    import attnbook

    assert_reader_error(lambda: attnbook.glue("", 1), "name")


def test_glue_turns_numpy_scalars_into_python_numbers(monkeypatch):
    """NumPy 2 prints np.float64(0.5), which myst-nb's {glue:text}`x:.2f` cannot format."""
    import numpy as np

    import attnbook

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    attnbook.glue("x", np.float64(0.5), display=False)
    assert shown[0]["application/papermill.record/text/plain"] == "0.5"
