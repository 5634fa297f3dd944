"""The old path of chapter 05–06's plumbing; it now lives in attnbook.book, attnbook.pages.ch05,
attnbook.pages.ch06, attnbook.toy."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import barycentric, entropy, softmax_jacobian  # noqa: F401
from .pages.ch05 import (  # noqa: F401
    COLOR_SCALED,
    COLOR_UNSCALED,
    D_K_GRID,
    MARKER_SCALED,
    MARKER_UNSCALED,
    SCALE_NAMES,
    TINY_GRADIENT,
    RowStats,
    attention_logits,
    plot_gradients,
    plot_saturation,
    plot_variance,
    random_qk,
    row_stats,
    saturation_table,
    scaling_figure,
)
from .pages.ch06 import hull_figure, hull_outputs, plot_hull  # noqa: F401
from .toy import cat_eats_fish  # noqa: F401
