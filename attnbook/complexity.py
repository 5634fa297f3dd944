"""The old path of chapter 15's plumbing; it now lives in attnbook.book, attnbook.pages.ch15."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import (  # noqa: F401
    ConvMixer,
    attention_flops,
    band_mask,
    conv_flops,
    fit_slope,
    scaled_dot_product_attention,
    score_matrix_bytes,
    sliding_window_attention,
    window_flops,
)
from .pages.ch15 import (  # noqa: F401
    benchmark,
    flops_figure,
    make_inputs,
    median_time,
    memory_table,
    methods,
    peak_memory,
    peak_memory_supported,
    plot_loglog,
    window_blocks_figure,
)
