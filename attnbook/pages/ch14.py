"""Chapter 14 (看见注意力头): the chapter's tables, the data of exercise 14-1, and its figures.

The model (``AttnOnlyTransformer``), its training loop, the head scores, head diversity and the
ablation are taught in the chapter (its ``#@save`` cells) and live in attnbook.book. The induction
task the loop trains on (``induction_batch``, ``eval_batch``, ``InductionBatch``) is data:
attnbook.toy.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
import torch

from ..book import causal_mask, previous_token_score
from ..infra.plots import heatmap
from ..toy import InductionBatch


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
    ax.legend(fontsize=10, loc="center right")
    return ax


def head_figure(weights: Sequence[torch.Tensor], data: InductionBatch, layer: int, head: int,
                *, row: int = 0, title: str = ""):
    """One head's heatmap on sequence ``row`` with the two reference diagonals marked.

    Circles: key t-1 (previous token). Crosses: key t-L+1 (the token after the earlier
    occurrence), drawn only for the queries of the second copy. layer, head count from 1.
    """
    import matplotlib.pyplot as plt

    w = weights[layer - 1][row, head - 1]  # [seq_len, seq_len]
    labels = data.labels(row)
    seq_len = len(labels)
    # Fixed margins instead of layout="constrained": the slider draws 16 of these, and the layout
    # solver was half of each frame's drawing time. The figure's contents never change size.
    fig, ax = plt.subplots(figsize=(5.6, 4.6), gridspec_kw=dict(left=0.09, right=0.95, bottom=0.11, top=0.94))
    heatmap(w, row_labels=labels, col_labels=labels, ax=ax, annotate=False, xlabel="键（被看的词）",
            ylabel="查询（看的词）", title=title)
    ax.tick_params(labelsize=10)
    t = torch.arange(1, seq_len)
    ax.scatter(t - 1, t, s=18, facecolors="none", edgecolors="#E45756", lw=0.8, label="前一个词")
    P, L = int(data.seg_start[row]), int(data.seg_len[row])
    q = torch.arange(P + L, seq_len - 1)
    ax.scatter(q - L + 1, q, s=22, marker="x", color="#F58518", lw=1.0, label="归纳目标")
    ax.legend(loc="lower left", fontsize=10, framealpha=0.8)
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
    ax.legend(fontsize=10, loc="center right")
    return ax


def heads_grid(weights: Sequence[torch.Tensor], data: InductionBatch, *, row: int = 0, suptitle: str | None = None):
    """All heads of all layers on sequence ``row``: one heatmap per (layer, head). Returns a Figure."""
    import matplotlib.pyplot as plt

    labels = data.labels(row)
    num_layers, num_heads = len(weights), weights[0].shape[1]
    fig, axes = plt.subplots(num_layers, num_heads, figsize=(3.4 * num_heads, 3.2 * num_layers), squeeze=False,
                             gridspec_kw=dict(left=0.06, right=0.99, bottom=0.05, top=0.88 if suptitle else 0.93,
                                              wspace=0.15, hspace=0.3))  # fixed margins: faster than "constrained"
    for layer, head in itertools.product(range(num_layers), range(num_heads)):
        ax = axes[layer, head]
        heatmap(weights[layer][row, head], row_labels=labels, col_labels=labels, ax=ax, annotate=False,
                colorbar=False, xlabel=None, ylabel=None, title=f"第 {layer + 1} 层 · 头 {head + 1}")
        if len(labels) > 12:  # 10 pt labels on a small panel: every other position (the slider shows all)
            every = range(0, len(labels), 2)
            ax.set_xticks(list(every), labels=[labels[i] for i in every])
            ax.set_yticks(list(every), labels=[labels[i] for i in every])
        ax.tick_params(labelsize=10)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'exercise_attention',
    'head_figure',
    'heads_grid',
    'plot_losses',
    'plot_scores',
    'score_table',
)
