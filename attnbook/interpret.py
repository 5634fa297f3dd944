"""Looking inside attention heads (chapter 14): the plumbing of the chapter, i.e. the induction task
(a data generator), a held-out batch, tables and figures.

The model, its training loop, the head scores, head diversity and the ablation are taught in the
chapter (its ``#@save`` cells, generated into :mod:`attnbook.book`) and re-exported here.

The model reuses the book's own pieces: :class:`attnbook.MultiHeadSelfAttention` (its projections),
:func:`attnbook.scaled_dot_product_attention`, :func:`attnbook.causal_mask` and
:func:`attnbook.sinusoidal_positional_encoding`.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ._errors import fail
from .book import (  # the chapter's own code (its #@save cells), re-exported here
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

#: Token i is shown as the i-th capital letter.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---------------------------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------------------------
@dataclass
class InductionBatch:
    """A batch of the induction task.

    tokens: long ``[batch, seq_len]``: a random prefix, then a segment A, then A again.
    loss_mask: bool ``[batch, seq_len]``: True at position t when the token at t+1 can be
        predicted by copying (t runs over the second copy of A except its last token).
    seg_start: long ``[batch]``: where the first copy of A starts.
    seg_len: long ``[batch]``: the length L of A (the second copy starts at seg_start + L).
    """

    tokens: torch.Tensor
    loss_mask: torch.Tensor
    seg_start: torch.Tensor
    seg_len: torch.Tensor

    def labels(self, row: int = 0) -> list[str]:
        """The tokens of one sequence as letters, e.g. ``["Q", "X", ...]``."""
        return token_labels(self.tokens[row])


def token_labels(tokens: torch.Tensor | Sequence[int]) -> list[str]:
    """Token ids ``[seq_len]`` -> letters (A for 0, B for 1, …; ids ≥ 26 become ``t26`` …)."""
    return [LETTERS[i] if 0 <= i < len(LETTERS) else f"t{i}" for i in torch.as_tensor(tokens).tolist()]


def induction_batch(
    batch: int,
    *,
    seq_len: int = 24,
    vocab_size: int = 26,
    min_len: int = 4,
    max_len: int = 10,
    generator: torch.Generator | None = None,
) -> InductionBatch:
    """Random sequences ``prefix + A + A`` with ``len(A) = L`` drawn from ``[min_len, max_len]``.

    The L tokens of A are distinct; the prefix (length ``seq_len - 2L``) uses only tokens that are
    not in A, so every token of the second copy has exactly one earlier occurrence. Because L
    varies, the distance to that occurrence varies: position alone cannot solve the task.
    """
    if not isinstance(batch, int) or batch < 1:
        raise fail("batch", batch, "正整数")
    if not isinstance(min_len, int) or not isinstance(max_len, int) or not 2 <= min_len <= max_len:
        raise fail("min_len/max_len", (min_len, max_len), "满足 2 ≤ min_len ≤ max_len 的整数")
    if 2 * max_len > seq_len:
        raise fail("seq_len", seq_len, f"至少 2 × max_len = {2 * max_len}（要放得下两份 A）")
    if vocab_size <= max_len:
        raise fail("vocab_size", vocab_size, f"大于 max_len = {max_len}（A 的词互不相同，前缀还要用 A 以外的词）")
    g = generator
    L = torch.randint(min_len, max_len + 1, (batch,), generator=g)  # [batch]
    P = seq_len - 2 * L  # 前缀长度 [batch]
    perm = torch.argsort(torch.rand(batch, vocab_size, generator=g), dim=1)  # 每行一个随机排列
    t = torch.arange(seq_len)[None, :]  # [1, seq_len]
    in_A = torch.where(t < (P + L)[:, None], t - P[:, None], t - (P + L)[:, None])  # A 中的下标
    seg_tok = perm.gather(1, in_A.clamp(min=0))  # [batch, seq_len]
    # 前缀：从排列的后 vocab_size - L 个词（不在 A 中）里有放回地抽
    r = (torch.rand(batch, seq_len, generator=g) * (vocab_size - L)[:, None]).long()
    prefix_tok = perm.gather(1, L[:, None] + r)
    tokens = torch.where(t < P[:, None], prefix_tok, seg_tok)
    loss_mask = (t >= (P + L)[:, None]) & (t <= seq_len - 2)
    return InductionBatch(tokens=tokens, loss_mask=loss_mask, seg_start=P, seg_len=L)


def eval_batch(batch: int = 256, seed: int = 12345, **kwargs: Any) -> InductionBatch:
    """A fixed held-out batch (its own generator, never seen in training)."""
    return induction_batch(batch, generator=torch.Generator().manual_seed(seed), **kwargs)


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------
def score_table(scores_by_run: dict[str, dict[str, torch.Tensor]], digits: int = 2):
    """A pandas DataFrame: one row per (run, layer, head), columns 前一词得分 and 归纳得分.

    Layers and heads are numbered from 1 in the table (第 1 层, 头 1) as in the figures.
    """
    import pandas as pd

    rows = []
    for name, s in scores_by_run.items():
        num_layers, num_heads = s["prev"].shape
        for layer, head in itertools.product(range(num_layers), range(num_heads)):
            rows.append({"运行": name, "层": layer + 1, "头": head + 1,
                         "前一词得分": round(float(s["prev"][layer, head]), digits),
                         "归纳得分": round(float(s["induction"][layer, head]), digits)})
    return pd.DataFrame(rows).set_index(["运行", "层", "头"])


# ---------------------------------------------------------------------------------------------
# Exercise data
# ---------------------------------------------------------------------------------------------
def exercise_attention() -> torch.Tensor:
    """A fixed causal 6×6 attention matrix for exercise 14-1 (rows sum to 1)."""
    scores = torch.tensor([[((3 * i + 5 * j) % 7) / 2 + 2.0 * (j == i - 1) for j in range(6)]
                           for i in range(6)])  # [6, 6]；前一个词额外加 2 分
    scores = scores.masked_fill(~causal_mask(6)[0, 0], float("-inf"))
    return torch.softmax(scores, dim=-1)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------
def plot_losses(curves: dict[str, Sequence[float]], *, ax=None, window: int = 10):
    """Training curves (moving average over ``window`` steps), one line per run. Returns Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    for name, losses in curves.items():
        y = np.asarray(losses, dtype=float)
        if len(y) >= window:
            y = np.convolve(y, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(len(y)) + window, y, label=name, lw=1.5)
    ax.axhline(math.log(26), color="grey", ls=":", lw=1, label="瞎猜：ln 26")
    ax.set_xlabel("训练步数")
    ax.set_ylabel("交叉熵损失")
    ax.legend(fontsize=8, loc="center right")
    return ax


def head_figure(weights: Sequence[torch.Tensor], data: InductionBatch, layer: int, head: int,
                *, row: int = 0, title: str = ""):
    """One head's heatmap on sequence ``row`` with the two reference diagonals marked.

    Circles: key t-1 (previous token). Crosses: key t-L+1 (the token after the earlier
    occurrence), drawn only for the queries of the second copy. layer, head count from 1.
    """
    import matplotlib.pyplot as plt

    from .plots import heatmap

    w = weights[layer - 1][row, head - 1]  # [seq_len, seq_len]
    labels = data.labels(row)
    seq_len = len(labels)
    # Fixed margins instead of layout="constrained": the slider draws 16 of these, and the layout
    # solver was half of each frame's drawing time. The figure's contents never change size.
    fig, ax = plt.subplots(figsize=(5.6, 4.6), gridspec_kw=dict(left=0.09, right=0.95, bottom=0.11, top=0.94))
    heatmap(w, row_labels=labels, col_labels=labels, ax=ax, annotate=False, xlabel="键（被看的词）",
            ylabel="查询（看的词）", title=title)
    ax.tick_params(labelsize=7)
    t = torch.arange(1, seq_len)
    ax.scatter(t - 1, t, s=18, facecolors="none", edgecolors="#E45756", lw=0.8, label="前一个词")
    P, L = int(data.seg_start[row]), int(data.seg_len[row])
    q = torch.arange(P + L, seq_len - 1)
    ax.scatter(q - L + 1, q, s=22, marker="x", color="#F58518", lw=1.0, label="归纳目标")
    ax.legend(loc="lower left", fontsize=7, framealpha=0.8)
    prev = previous_token_score(w).item()
    ind = w[q, q - L + 1].mean().item()
    ax.set_xlabel(f"键（被看的词）   本句：前一词得分 {prev:.2f}，归纳得分 {ind:.2f}")
    return fig


def plot_scores(table, *, ax=None):
    """Scatter of 前一词得分 vs 归纳得分, one point per (run, layer, head), coloured by layer."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 3.6), layout="constrained")
    colours = {1: "#4C78A8", 2: "#F58518", 3: "#54A24B", 4: "#B279A2"}
    markers = ["o", "s", "^", "D", "v"]
    runs = list(dict.fromkeys(table.index.get_level_values(0)))
    for (run_name, layer, head), row in table.iterrows():
        ax.scatter(row["前一词得分"], row["归纳得分"], color=colours.get(layer, "grey"),
                   marker=markers[runs.index(run_name) % len(markers)], s=40, alpha=0.8)
    for layer, colour in colours.items():
        if layer in table.index.get_level_values(1):
            ax.scatter([], [], color=colour, label=f"第 {layer} 层")
    for i, run_name in enumerate(runs):
        ax.scatter([], [], color="grey", marker=markers[i % len(markers)], label=str(run_name))
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("前一词得分")
    ax.set_ylabel("归纳得分")
    ax.legend(fontsize=7, loc="center right")
    return ax


def heads_grid(weights: Sequence[torch.Tensor], data: InductionBatch, *, row: int = 0, suptitle: str | None = None):
    """All heads of all layers on sequence ``row``: one heatmap per (layer, head). Returns a Figure."""
    import matplotlib.pyplot as plt

    from .plots import heatmap

    labels = data.labels(row)
    num_layers, num_heads = len(weights), weights[0].shape[1]
    fig, axes = plt.subplots(num_layers, num_heads, figsize=(3.1 * num_heads, 3.0 * num_layers), squeeze=False,
                             gridspec_kw=dict(left=0.06, right=0.99, bottom=0.05, top=0.88 if suptitle else 0.93,
                                              wspace=0.15, hspace=0.3))  # fixed margins: faster than "constrained"
    for layer, head in itertools.product(range(num_layers), range(num_heads)):
        ax = axes[layer, head]
        heatmap(weights[layer][row, head], row_labels=labels, col_labels=labels, ax=ax, annotate=False,
                colorbar=False, xlabel=None, ylabel=None, title=f"第 {layer + 1} 层 · 头 {head + 1}")
        ax.tick_params(labelsize=5)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "eval_batch",
    "exercise_attention",
    "head_figure",
    "heads_grid",
    "induction_batch",
    "plot_losses",
    "plot_scores",
    "score_table",
)
