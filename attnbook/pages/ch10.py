"""Chapter 10 (位置编码): figures of the positional encoding and of the extrapolation experiment.

The experiment itself (``TinyPositionModel``, ``previous_token_loss``, ``train_model``,
``accuracy_by_position``) is written in the chapter's ``#@save`` cells, so it lives in
``attnbook.book``; the chapter runs it over five seeds and asserts its claims with margins.
This module only draws (the PE heatmap, the slider figure of one pair of dimensions, the
accuracy-by-position figure of the experiment's results) and draws random tokens.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..book import sinusoidal_positional_encoding
from ..infra.errors import fail


def random_tokens(batch: int, seq_len: int, vocab: int, seed: int) -> torch.Tensor:
    """Random token ids [batch, seq_len] from a private, seeded generator."""
    return torch.randint(0, vocab, (batch, seq_len), generator=torch.Generator().manual_seed(seed))


def plot_extrapolation(results, *, train_len: int = 16, vocab: int = 16, ax=None):
    """Accuracy against position at length 2L: mean over seeds, band = min..max. Returns Axes.

    results: a DataFrame with columns 方案, 种子, 位置, 准确率, 测试长度 (one row per position), as chapter 10 builds it.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    long = results[results["测试长度"] == 2 * train_len]
    colours = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2"]
    for colour, name in zip(colours, results["方案"].unique()):
        per_pos = long[long["方案"] == name].groupby("位置")["准确率"]
        x = per_pos.mean().index.to_numpy()
        ax.plot(x, per_pos.mean().to_numpy(), color=colour, label=name)
        ax.fill_between(x, per_pos.min().to_numpy(), per_pos.max().to_numpy(), color=colour, alpha=0.2, linewidth=0)
    ax.axvline(train_len - 0.5, color="grey", linestyle="--", linewidth=1)
    ax.text(train_len + 0.4, 0.62, "训练时没见过的位置 →", color="dimgrey", fontsize=10,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7})
    ax.axhline(1 / vocab, color="grey", linestyle=":", linewidth=1)
    ax.text(1, 1 / vocab + 0.02, f"随机猜 1/{vocab}", color="grey", fontsize=10)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("位置 t（任务：输出第 t−1 个词）")
    ax.set_ylabel("准确率")
    ax.set_title(f"训练长度 L = {train_len}，测试长度 2L = {2 * train_len}（线：种子均值；带：最小–最大）")
    ax.legend(loc="center left", fontsize=10, frameon=False)
    return ax


# ---------------------------------------------------------------------------------------------
# figures of the sinusoidal encoding
# ---------------------------------------------------------------------------------------------
def pe_heatmap(pe: torch.Tensor, *, ax=None, title: str | None = None):
    """Heatmap of a positional-encoding table pe [seq_len, d_model] (rows = positions). Returns Axes."""
    import matplotlib.pyplot as plt

    values = pe.detach().cpu().numpy() if hasattr(pe, "detach") else np.asarray(pe)
    if values.ndim != 2:
        raise fail("pe", pe, "二维表 [seq_len, d_model]")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
    image = ax.imshow(values, cmap="cividis", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_xlabel("维度（偶数列 sin，奇数列 cos）")
    ax.set_ylabel("位置 pos")
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
    if title:
        ax.set_title(title)
    return ax


def pe_wave_figure(i: int, *, seq_len: int = 64, d_model: int = 64):
    """Left: the PE table with columns 2i, 2i+1 framed (the others veiled). Right: those two columns
    against pos."""
    import matplotlib.pyplot as plt
    from matplotlib import patheffects
    from matplotlib.patches import Rectangle

    if not 0 <= 2 * i < d_model:
        raise fail("i", i, f"0 到 {(d_model - 1) // 2} 之间的整数（d_model={d_model}）")
    pe = sinusoidal_positional_encoding(seq_len, d_model)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 3.0), layout="constrained",
                                      gridspec_kw={"width_ratios": [1, 1.4]})
    pe_heatmap(pe, ax=left)
    left.set_xlabel("维度")
    # the other columns are veiled, and the two columns get a thick red frame with a white outline,
    # so the pair stands out on every colour of the map
    for x0, width in ((-0.5, 2 * i), (2 * i + 1.5, d_model - 2 * i - 2)):
        if width > 0:
            left.add_patch(Rectangle((x0, -0.5), width, seq_len, facecolor="white", alpha=0.55,
                                     edgecolor="none"))
    frame = left.add_patch(Rectangle((2 * i - 0.5, -0.5), 2, seq_len, fill=False, edgecolor="crimson",
                                     linewidth=2.4, clip_on=False))
    frame.set_path_effects([patheffects.Stroke(linewidth=5, foreground="white"), patheffects.Normal()])
    wavelength = 2 * math.pi * 10000 ** (2 * i / d_model)
    pos = np.arange(seq_len)
    right.plot(pos, pe[:, 2 * i].numpy(), color="#4C78A8", marker=".", label=f"第 {2 * i} 维 sin")
    if 2 * i + 1 < d_model:
        right.plot(pos, pe[:, 2 * i + 1].numpy(), color="#F58518", marker=".", label=f"第 {2 * i + 1} 维 cos")
    right.set_ylim(-1.15, 1.45)
    right.set_xlabel("位置 pos")
    right.set_title(f"i = {i}：波长 2π·10000^(2i/d) ≈ {wavelength:,.0f} 个位置")
    right.legend(loc="upper right", fontsize=10, ncol=2, frameon=False)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'pe_heatmap',
    'pe_wave_figure',
    'plot_extrapolation',
    'random_tokens',
)
