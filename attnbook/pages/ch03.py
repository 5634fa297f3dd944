"""Chapter 03 (自注意力与 Q、K、V): why not score with X·Xᵀ — the slider of the self-match rate.

The taught code (``random_scores``, ``self_match_rate``) is written in the chapter's ``#@save``
cells and imported from attnbook.book.
"""
from __future__ import annotations

import functools
import math

import torch

from ..book import random_scores, self_match_rate
from ..infra.errors import check_int
from ..infra.plots import heatmap


def _check_int(value, arg: str, minimum: int = 1) -> int:
    return check_int(value, arg, minimum=minimum)


#: d_model values offered by the chapter 03 slider.
D_MODELS: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128)


@functools.lru_cache(maxsize=32)
def _rates(d_model: int, seq_len: int, trials: int) -> tuple[float, float, float]:
    return tuple(self_match_rate(random_scores(d_model, seq_len, trials, how=how)) for how in ("XXT", "unit", "QKT"))


def self_match_rates(d_model: int, *, seq_len: int = 6, trials: int = 500) -> dict[str, float]:
    """Share of tokens that give themselves the top score, over ``trials`` random sentences
    (seed 0), for the three scorings of :func:`random_scores`. Cached.

    Returns ``{"XXT": …, "unit": …, "QKT": …}``.
    """
    d_model = _check_int(d_model, "d_model")
    seq_len = _check_int(seq_len, "seq_len", 2)
    trials = _check_int(trials, "trials")
    return dict(zip(("XXT", "unit", "QKT"), _rates(d_model, seq_len, trials)))


def xx_vs_qk_figure(d_model: int, *, seq_len: int = 6, trials: int = 500):
    """Slider frame: softmax(X·Xᵀ/√d) next to softmax(Q·Kᵀ/√d) for one random sentence, with the
    measured share of tokens whose top score is themselves (over ``trials`` sentences).
    Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    d_model = _check_int(d_model, "d_model")
    labels = [f"t{i}" for i in range(seq_len)]
    xx = torch.softmax(random_scores(d_model, seq_len, 1, how="XXT", seed=1)[0] / math.sqrt(d_model), dim=-1)
    qk = torch.softmax(random_scores(d_model, seq_len, 1, how="QKT", seed=1)[0] / math.sqrt(d_model), dim=-1)
    rates = self_match_rates(d_model, seq_len=seq_len, trials=trials)
    rate_xx, rate_qk = rates["XXT"], rates["QKT"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.6, 3.3), layout="constrained")
    heatmap(xx, row_labels=labels, col_labels=labels, ax=ax1, colorbar=False, annotate=False,
            title=rf"$XX^\top$：{rate_xx:.0%} 的词最看重自己", xlabel="键", ylabel="查询")
    heatmap(qk, row_labels=labels, col_labels=labels, ax=ax2, colorbar=False, annotate=False,
            title=rf"$(XW_q)(XW_k)^\top$：{rate_qk:.0%}", xlabel="键", ylabel=None)
    fig.suptitle(f"d_model = {d_model}，seq_len = {seq_len}（百分比来自 {trials} 个随机句子）", fontsize=10)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'D_MODELS',
    'xx_vs_qk_figure',
)
