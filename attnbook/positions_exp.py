"""The old path of chapter 10's plumbing; it now lives in attnbook.book, attnbook.pages.ch10."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import sinusoidal_positional_encoding  # noqa: F401
from .pages.ch10 import pe_heatmap, pe_wave_figure, plot_extrapolation, random_tokens  # noqa: F401
