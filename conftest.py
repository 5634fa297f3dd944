"""Root pytest configuration: the environment every notebook runs in (also under nbval).

* ATTNBOOK_STATIC=1: sliders render as precomputed frames, so outputs are deterministic.
* matplotlib's "Glyph … missing from font" warning is an error, in pytest and in the kernels
  nbval starts (they inherit PYTHONWARNINGS).
"""
import os

os.environ.setdefault("ATTNBOOK_STATIC", "1")
os.environ.setdefault("PYTHONWARNINGS", "error:Glyph:UserWarning")
