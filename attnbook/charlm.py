"""A tiny character-level language model on Tang poems, and the tools of chapter 13 (mask bugs).

* ``load_tang_poems()`` reads the corpus shipped in ``attnbook/data/tang_poems.txt``.
* ``make_mask(seq_len, kind)`` builds the right causal mask and three classic wrong ones.
* ``CharTransformer`` is a small Pre-Norm decoder built from ``attnbook.MultiHeadSelfAttention``;
  the mask it uses is part of the model (``mask_kind``), so a wrong mask is wrong at training
  *and* at generation, exactly as in a real bug.
* ``train_charlm`` / ``generate`` / ``teacher_forced_loss`` / ``prefix_only_loss``.
* ``future_influence`` and ``leaks_future``: the diagnostic "change a future input token; do the
  outputs at earlier positions move?" (with a correct causal mask they must not).

Mask convention everywhere in attnbook: True/1 = keep, False/0 = block.
"""
from __future__ import annotations

import importlib.resources
import math
from dataclasses import dataclass, field
from typing import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._errors import fail
from .runtime import torch_state
# The model, the masks, the training loop, generation, the two losses and the leak diagnostic are
# taught in chapter 13 (#@save cells); they live in attnbook.book and are re-exported here.
from .book import (CharBlock, CharLMRun, CharTransformer, future_influence, generate, leaks_future,
                   make_mask, per_position_loss, prefix_only_loss, repeat_rate, teacher_forced_loss,
                   train_charlm)

#: The mask variants of chapter 13 and what they let query i see. "correct" is attnbook.causal_mask.
MASK_DESCRIPTIONS: dict[str, str] = {
    "correct": "正确：第 i 个位置看 0..i",
    "offset": "错位一格：第 i 个位置还能看 i+1",
    "transposed": "转置：第 i 个位置看 i..seq_len-1",
    "flipped": "极性反了：第 i 个位置只看 i+1..seq_len-1",
    "none": "没有掩码：每个位置看全部",
}

#: Separator between poems in the training text (the model also learns where a poem ends).
POEM_SEPARATOR = "\n"


# --------------------------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Poem:
    """One poem of the corpus: author, title and the text (简体, full-width punctuation)."""

    author: str
    title: str
    text: str


def load_tang_poems() -> list[Poem]:
    """Read ``attnbook/data/tang_poems.txt`` (shipped with the package; see its README.md).

    Returns the poems in file order. Lines starting with ``#`` are comments.
    """
    resource = importlib.resources.files("attnbook.data").joinpath("tang_poems.txt")
    poems = []
    for number, line in enumerate(resource.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"tang_poems.txt 第 {number} 行应为 作者<TAB>题目<TAB>正文，收到 {line!r}")
        poems.append(Poem(*parts))
    return poems


def corpus_text(poems: Sequence[Poem] | None = None) -> str:
    """All poem texts joined by ``POEM_SEPARATOR`` (and ending with it)."""
    poems = load_tang_poems() if poems is None else poems
    return "".join(p.text + POEM_SEPARATOR for p in poems)


class CharVocab:
    """Characters <-> integer ids. ``CharVocab(text)``; ids are sorted by code point (stable)."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise fail("text", text, "非空字符串（用来建立字表的语料）")
        self.itos: list[str] = sorted(set(text))
        self.stoi: dict[str, int] = {ch: i for i, ch in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> torch.Tensor:
        """str -> int64 tensor [len(text)]."""
        unknown = sorted({ch for ch in text if ch not in self.stoi})
        if unknown:
            raise fail("text", text, f"只含字表里的字；这些字不在语料中：{''.join(unknown)}")
        return torch.tensor([self.stoi[ch] for ch in text], dtype=torch.long)

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """int ids [n] -> str."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        return "".join(self.itos[i] for i in ids)


# --------------------------------------------------------------------------------------------
# masks
# --------------------------------------------------------------------------------------------
# --------------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------------
# --------------------------------------------------------------------------------------------
# training, generation, losses
# --------------------------------------------------------------------------------------------
def random_windows(data: torch.Tensor, seq_len: int, batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random training windows. data [n] -> (x [batch, seq_len], y [batch, seq_len]); y is x shifted by one."""
    if data.numel() <= seq_len + 1:
        raise fail("data", data, f"长度大于 seq_len + 1 = {seq_len + 1} 的一维 id 序列")
    starts = torch.randint(0, data.numel() - seq_len - 1, (batch,), generator=generator)
    offsets = torch.arange(seq_len + 1)
    chunk = data[starts[:, None] + offsets]  # [batch, seq_len + 1]
    return chunk[:, :-1], chunk[:, 1:]


def eval_windows(data: torch.Tensor, seq_len: int, n: int, seed: int = 1234) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed set of ``n`` evaluation windows (x, y), each [n, seq_len]."""
    return random_windows(data, seq_len, n, torch.Generator().manual_seed(seed))


# --------------------------------------------------------------------------------------------
# the diagnostic: change the future, watch the past
# --------------------------------------------------------------------------------------------
# --------------------------------------------------------------------------------------------
# figures (pure: data -> Figure / Axes)
# --------------------------------------------------------------------------------------------
KIND_COLORS = {"correct": "#4C78A8", "offset": "#F58518", "transposed": "#E45756", "flipped": "#72B7B2",
               "none": "#54A24B"}
KIND_NAMES = {"correct": "正确掩码", "offset": "错位一格", "transposed": "转置", "flipped": "极性反了",
              "none": "没有掩码"}


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
    """The attn_weights of every head of one layer on ``line``: a 1 × num_heads row of heatmaps.

    Returns the Figure. Cells above the diagonal are the future: with a correct mask they are 0.
    """
    import matplotlib.pyplot as plt

    from .plots import heatmap

    idx = vocab.encode(line)[None]  # [1, seq_len]
    with torch.no_grad(), torch_state(threads=1):
        _, attns = model(idx, return_attn=True)
    if not 0 <= layer < len(attns):
        raise fail("layer", layer, f"0 到 {len(attns) - 1} 之间的层号")
    weights = torch.nan_to_num(attns[layer][0], nan=0.0)  # [num_heads, seq_len, seq_len]
    num_heads = weights.size(0)
    fig, axes = plt.subplots(1, num_heads, figsize=(2.0 * num_heads + 0.4, 2.5), layout="constrained")
    for h, ax in enumerate(axes):
        heatmap(weights[h], row_labels=line, col_labels=line, ax=ax, annotate=False, colorbar=False,
                xlabel=None, ylabel=None, title=f"头 {h + 1}")
        ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "CharVocab",
    "KIND_COLORS",
    "KIND_NAMES",
    "attention_figure",
    "corpus_text",
    "eval_windows",
    "load_tang_poems",
    "plot_influence",
    "plot_loss_curves",
    "random_windows",
)
