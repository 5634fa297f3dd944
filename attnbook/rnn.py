"""The old path of chapter 01's plumbing; it now lives in attnbook.book, attnbook.pages.ch01."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import factor_per_step, measure_gradient_decay  # noqa: F401
from .pages.ch01 import WEIGHT_SCALES, gradient_decay_figure  # noqa: F401
