"""The old path of chapter 13's plumbing; it now lives in attnbook.book, attnbook.pages.ch13,
attnbook.toy."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import (  # noqa: F401
    CharLMRun,
    CharTransformer,
    future_influence,
    generate,
    leaks_future,
    make_mask,
    per_position_loss,
    prefix_only_loss,
    repeat_rate,
    teacher_forced_loss,
    train_charlm,
)
from .pages.ch13 import (  # noqa: F401
    KIND_COLORS,
    KIND_NAMES,
    MASK_DESCRIPTIONS,
    attention_figure,
    plot_influence,
    plot_loss_curves,
)
from .toy import (  # noqa: F401
    POEM_SEPARATOR,
    CharVocab,
    Poem,
    corpus_text,
    eval_windows,
    load_tang_poems,
    random_windows,
)
