"""The old path of chapter 14's plumbing; it now lives in attnbook.book, attnbook.pages.ch14,
attnbook.toy."""
# TEMPORARY (issue 26): removed once chapters import attnbook.pages
from __future__ import annotations

from .book import (  # noqa: F401
    AttnOnlyTransformer,
    TrainResult,
    ablation_accuracy,
    accuracy,
    causal_mask,
    head_diversity,
    head_scores,
    induction_loss,
    induction_score,
    js_divergence,
    previous_token_score,
    train_induction,
    train_induction_seeds,
)
from .pages.ch14 import (  # noqa: F401
    exercise_attention,
    head_figure,
    heads_grid,
    plot_losses,
    plot_scores,
    score_table,
)
from .toy import LETTERS, InductionBatch, eval_batch, induction_batch, token_labels  # noqa: F401
