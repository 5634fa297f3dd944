"""Root pytest configuration: the environment every notebook runs in (also under nbval).

tools/book.py's BOOK_ENV, the one definition: ATTNBOOK_STATIC=1 (sliders render as precomputed
frames, so outputs are deterministic) and matplotlib's "Glyph … missing from font" warning as an
error, in pytest and in the kernels nbval starts (they inherit PYTHONWARNINGS).
"""
import os
import pathlib
import runpy

BOOK = runpy.run_path(str(pathlib.Path(__file__).resolve().parent / "tools" / "book.py"))

for _key, _value in BOOK["BOOK_ENV"].items():
    os.environ.setdefault(_key, _value)


def pytest_configure(config):
    """Under nbval (bench's runs on the pinned venv), a kernel that dies while starting is started
    again: tests/nbval_kernel_start.py says why."""
    if config.getoption("nbval", default=False) or config.getoption("nbval_lax", default=False):
        runpy.run_path(str(pathlib.Path(__file__).resolve().parent / "tests" / "nbval_kernel_start.py"))
