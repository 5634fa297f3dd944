"""The old path of chapter 01–04's plumbing; it now lives in attnbook.book, attnbook.pages.ch01,
attnbook.pages.ch02, attnbook.pages.ch03, attnbook.pages.ch04."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import (  # noqa: F401
    ngram_window,
    path_lengths,
    random_scores,
    self_match_rate,
    soft_lookup,
)
from .pages.ch01 import (  # noqa: F401
    SEGMENTED,
    SENTENCE,
    ngram_window_figure,
    path_length_figure,
    tokenize,
)
from .pages.ch02 import (  # noqa: F401
    CONTENT_FEATURES,
    QUERY,
    TAG_FEATURES,
    TEMPERATURES,
    bottleneck_figure,
    learned_lookup_figure,
    library,
    temperature_figure,
)
from .pages.ch03 import D_MODELS, self_match_rates, xx_vs_qk_figure  # noqa: F401
from .pages.ch04 import cat_fish_figure  # noqa: F401
