"""The old path of chapter 12's plumbing; it now lives in attnbook.book, attnbook.pages.ch12."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import CopyTask, TinyTransformer, layer_report, lr_at  # noqa: F401
from .pages.ch12 import (  # noqa: F401
    RunResult,
    clipping_figure,
    depth_summary_figure,
    horizon_figure,
    lr_sweep_figure,
    norm_warmup_figure,
    plot_band,
    scaling_figure,
    summarize,
    train_runs,
)
