"""Chapter 13 (掩码的 bug): the names of the mask variants and the chapter's figures.

The masks (``make_mask``), the model (``CharTransformer``), the training loop (``train_charlm``),
generation, the two losses and the leak diagnostic (``future_influence``, ``leaks_future``) are
taught in the chapter (its ``#@save`` cells) and live in attnbook.book. The corpus and the windows
the loop trains on (``load_tang_poems``, ``CharVocab``, ``random_windows``, ``eval_windows``) are
data: attnbook.toy.

Mask convention everywhere in attnbook: True/1 = keep, False/0 = block.
"""
from __future__ import annotations

from typing import Sequence

import torch

from ..book import CharLMRun, CharTransformer
from ..infra.errors import fail
from ..infra.plots import heatmap
from ..infra.runtime import torch_state
from ..toy import CharVocab


#: The mask variants of chapter 13 and what they let query i see. "correct" is attnbook.causal_mask.
MASK_DESCRIPTIONS: dict[str, str] = {
    "correct": "正确：第 i 个位置看 0..i",
    "offset": "错位一格：第 i 个位置还能看 i+1",
    "transposed": "转置：第 i 个位置看 i..seq_len-1",
    "flipped": "极性反了：第 i 个位置只看 i+1..seq_len-1",
    "none": "没有掩码：每个位置看全部",
}
KIND_COLORS = {"correct": "#4C78A8", "offset": "#F58518", "transposed": "#E45756", "flipped": "#72B7B2",
               "none": "#54A24B"}
KIND_NAMES = {"correct": "正确掩码", "offset": "错位一格", "transposed": "转置", "flipped": "极性反了",
              "none": "没有掩码"}


# ---------------------------------------------------------------------------------------------
# figures (pure: data -> Figure / Axes)
# ---------------------------------------------------------------------------------------------
def plot_loss_curves(results: Sequence[CharLMRun], *, ax=None, smooth: int = 10):
    """Training loss against step, one thin line per seed, colour per mask kind. Returns Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    seen = set()
    for r in results:
        losses = torch.tensor(r.losses)
        if smooth > 1 and len(losses) >= smooth:
            losses = torch.nn.functional.avg_pool1d(losses[None, None], smooth, stride=1)[0, 0]
        label = None if r.mask_kind in seen else KIND_NAMES.get(r.mask_kind, r.mask_kind)
        seen.add(r.mask_kind)
        steps = torch.arange(len(losses)) + (smooth if smooth > 1 else 1)
        ax.plot(steps.numpy(), losses.numpy(), color=KIND_COLORS.get(r.mask_kind, "gray"), lw=1.2,
                alpha=0.85, label=label)
    ax.set_xlabel("训练步数")
    ax.set_ylabel("训练损失（交叉熵）")
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False)
    return ax


def plot_influence(influence: torch.Tensor, *, ax=None, title: str | None = None, labels=None, colorbar: bool = True):
    """Heatmap of ``future_influence`` (rows: output position i; columns: changed input j).

    Cells above the diagonal (j > i) are the future: they must be 0. Returns Axes.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.2), layout="constrained")
    value = np.log10(1e-6 + influence.detach().cpu().numpy().clip(max=1e6))
    seq_len = value.shape[0]
    image = ax.imshow(value, cmap="cividis", vmin=-6, vmax=1.5)
    ax.plot([-0.5, seq_len - 0.5], [-0.5, seq_len - 0.5], color="white", lw=0.8, ls="--")
    ax.set_xlabel("被改动的输入位置 j")
    ax.set_ylabel("输出位置 i")
    if labels is not None:
        ax.set_xticks(range(seq_len), list(labels))
        ax.set_yticks(range(seq_len), list(labels))
    if title:
        ax.set_title(title)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label("log10 |logits 的变化|")
    return ax


def attention_figure(model: CharTransformer, vocab: CharVocab, line: str, *, layer: int = 0, title: str | None = None):
    """The attn_weights of every head of one layer on ``line``: heatmaps, two heads a row.

    Returns the Figure. Cells above the diagonal are the future: with a correct mask they are 0.
    """
    import matplotlib.pyplot as plt

    idx = vocab.encode(line)[None]  # [1, seq_len]
    with torch.no_grad(), torch_state(threads=1):
        _, attns = model(idx, return_attn=True)
    if not 0 <= layer < len(attns):
        raise fail("layer", layer, f"0 到 {len(attns) - 1} 之间的层号")
    weights = torch.nan_to_num(attns[layer][0], nan=0.0)  # [num_heads, seq_len, seq_len]
    num_heads = weights.size(0)
    # at most two heads a row, 6.9 in wide: each character of ``line`` gets room for a 10 pt label
    ncols = min(num_heads, 2)
    nrows = -(-num_heads // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.9, 3.1 * nrows + 0.3), layout="constrained", squeeze=False)
    for ax in axes.flat[num_heads:]:
        ax.axis("off")
    for h, ax in enumerate(axes.flat[:num_heads]):
        heatmap(weights[h], row_labels=line, col_labels=line, ax=ax, annotate=False, colorbar=False,
                xlabel=None, ylabel=None, title=f"头 {h + 1}")
        ax.tick_params(labelsize=10)
    if title:
        fig.suptitle(title)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'KIND_COLORS',
    'KIND_NAMES',
    'attention_figure',
    'plot_influence',
    'plot_loss_curves',
)
