"""Chapter 10's experiments and figures: positions, and what happens past the training length.

The extrapolation experiment is deliberately tiny (a few seconds on two CPU cores):

* task: "copy the previous token": at position t the model must output token t-1. The tokens
  are random, so content alone cannot solve it: the model must know *where* it is.
* model: token embedding + position (sinusoidal or a learned table) -> one single-head
  self-attention layer (``attnbook.SelfAttention``, no mask) -> a linear read-out.
* train on sequences of length ``train_len``; test on ``2 * train_len``.

Everything is seeded; training runs on one thread so the numbers do not depend on the
machine's thread count.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ._errors import fail
from .book import SelfAttention
from .book import sinusoidal_positional_encoding
from ._threads import one_thread

KINDS = ("sinusoidal", "learned")
PAST_END = ("error", "clamp", "untrained")
#: How each evaluated variant is named in tables and figures.
VARIANT_NAMES = {
    ("sinusoidal", "error"): "正弦编码",
    ("learned", "clamp"): "可学习 + 截断到 L−1",
    ("learned", "untrained"): "可学习 + 预留未训练的行",
}




class TinyPositionModel(nn.Module):
    """词嵌入 + 位置 → 单头自注意力（无 mask）→ 线性层输出每个位置的词表打分。

    kind: "sinusoidal"（正弦编码，无参数）或 "learned"（nn.Embedding(max_len, d_model) 位置表）。
    forward(tokens [batch, seq_len], past_end="error") -> logits [batch, seq_len, vocab]。
    past_end 只对 "learned" 有意义，决定 seq_len > max_len 时怎么办：
    "error"（直接查表，nn.Embedding 抛 IndexError）、"clamp"（超出的位置都用最后一行）、
    "untrained"（临时补上按 nn.Embedding 默认方式随机初始化、从未训练过的行）。
    """

    def __init__(self, kind: str, *, vocab: int = 16, d_model: int = 32, max_len: int = 16) -> None:
        super().__init__()
        if kind not in KINDS:
            raise fail("kind", kind, f"{KINDS} 之一")
        self.kind = kind
        self.vocab = vocab
        self.d_model = d_model
        self.max_len = max_len
        self.tok = nn.Embedding(vocab, d_model)
        if kind == "learned":
            self.pos = nn.Embedding(max_len, d_model)  # 只有 max_len 行
        self.attn = SelfAttention(d_model)
        self.readout = nn.Linear(d_model, vocab)

    def positions(self, seq_len: int, past_end: str = "error") -> torch.Tensor:
        """位置向量 [seq_len, d_model]。"""
        if past_end not in PAST_END:
            raise fail("past_end", past_end, f"{PAST_END} 之一")
        if self.kind == "sinusoidal":
            return sinusoidal_positional_encoding(seq_len, self.d_model)
        pos = torch.arange(seq_len)
        if past_end == "error" or seq_len <= self.max_len:
            return self.pos(pos)  # seq_len > max_len 时：IndexError: index out of range in self
        if past_end == "clamp":
            return self.pos(pos.clamp(max=self.max_len - 1))
        extra = torch.randn(seq_len - self.max_len, self.d_model,
                            generator=torch.Generator().manual_seed(12345))  # N(0, 1)，与 nn.Embedding 的初始化相同
        return torch.cat([self.pos.weight, extra])

    def forward(self, tokens: torch.Tensor, past_end: str = "error") -> torch.Tensor:
        if tokens.dim() != 2:
            raise fail("tokens", tokens, "二维整数张量 [batch, seq_len]")
        x = self.tok(tokens) + self.positions(tokens.size(1), past_end)  # [batch, seq_len, d_model]
        out, _ = self.attn(x)  # [batch, seq_len, d_model]
        return self.readout(out)  # [batch, seq_len, vocab]


def random_tokens(batch: int, seq_len: int, vocab: int, seed: int) -> torch.Tensor:
    """Random token ids [batch, seq_len] from a private, seeded generator."""
    return torch.randint(0, vocab, (batch, seq_len), generator=torch.Generator().manual_seed(seed))


def previous_token_loss(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of predicting token t-1 at every position t ≥ 1."""
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, 1:].reshape(-1, vocab), tokens[:, :-1].reshape(-1))


def train_model(kind: str, seed: int, *, train_len: int = 16, steps: int = 200, batch: int = 32,
                lr: float = 3e-3, vocab: int = 16, d_model: int = 32) -> tuple[TinyPositionModel, float]:
    """Train a TinyPositionModel on length-``train_len`` sequences; return (model, last loss)."""
    if not isinstance(train_len, int) or train_len < 2:
        raise fail("train_len", train_len, "不小于 2 的整数")
    with one_thread():
        torch.manual_seed(seed)
        model = TinyPositionModel(kind, vocab=vocab, d_model=d_model, max_len=train_len)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        generator = torch.Generator().manual_seed(seed)
        for _ in range(steps):
            tokens = torch.randint(0, vocab, (batch, train_len), generator=generator)
            loss = previous_token_loss(model(tokens), tokens)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval(), loss.item()


@torch.no_grad()
def accuracy_by_position(model: TinyPositionModel, seq_len: int, *, past_end: str = "error",
                         n: int = 256, seed: int = 1000) -> np.ndarray:
    """Accuracy of "output token t-1" at every position t = 1 .. seq_len-1: float array [seq_len - 1]."""
    with one_thread():
        tokens = random_tokens(n, seq_len, model.vocab, seed)
        pred = model(tokens, past_end=past_end).argmax(-1)  # [n, seq_len]
        return (pred[:, 1:] == tokens[:, :-1]).float().mean(0).numpy()


def extrapolation_experiment(seeds: Sequence[int] = (0, 1, 2, 3, 4), *, train_len: int = 16, steps: int = 200):
    """Train sinusoidal and learned models for each seed; test at lengths L and 2L.

    Returns a pandas DataFrame with one row per (方案, 种子, 位置): columns
    ``方案, 种子, 位置, 准确率, 测试长度``. Positions are t = 1 .. 2L-1 for the 2L test and
    1 .. L-1 for the L test.
    """
    import pandas as pd

    rows = []
    for seed in seeds:
        models = {kind: train_model(kind, seed, train_len=train_len, steps=steps)[0] for kind in KINDS}
        for (kind, past_end), name in VARIANT_NAMES.items():
            for length in (train_len, 2 * train_len):
                acc = accuracy_by_position(models[kind], length, past_end=past_end, seed=1000 + seed)
                rows += [{"方案": name, "种子": seed, "位置": t + 1, "准确率": float(a), "测试长度": length}
                         for t, a in enumerate(acc)]
    return pd.DataFrame(rows)


def summarize(results, train_len: int = 16):
    """Mean accuracy per (方案, 种子) on: length L; length 2L positions < L; length 2L positions ≥ L."""
    import pandas as pd

    short = results[results["测试长度"] == train_len]
    long = results[results["测试长度"] == 2 * train_len]
    table = pd.DataFrame({
        "长度 L": short.groupby(["方案", "种子"])["准确率"].mean(),
        "长度 2L，位置 < L": long[long["位置"] < train_len].groupby(["方案", "种子"])["准确率"].mean(),
        "长度 2L，位置 ≥ L": long[long["位置"] >= train_len].groupby(["方案", "种子"])["准确率"].mean(),
    })
    return table.reindex(list(VARIANT_NAMES.values()), level=0)


def plot_extrapolation(results, *, train_len: int = 16, vocab: int = 16, ax=None):
    """Accuracy against position at length 2L: mean over seeds, band = min..max. Returns Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    long = results[results["测试长度"] == 2 * train_len]
    colours = ["#4C78A8", "#F58518", "#54A24B"]
    for colour, name in zip(colours, VARIANT_NAMES.values()):
        per_pos = long[long["方案"] == name].groupby("位置")["准确率"]
        x = per_pos.mean().index.to_numpy()
        ax.plot(x, per_pos.mean().to_numpy(), color=colour, label=name)
        ax.fill_between(x, per_pos.min().to_numpy(), per_pos.max().to_numpy(), color=colour, alpha=0.2, linewidth=0)
    ax.axvline(train_len - 0.5, color="grey", linestyle="--", linewidth=1)
    ax.text(train_len + 0.4, 0.62, "训练时没见过的位置 →", color="dimgrey", fontsize=9,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7})
    ax.axhline(1 / vocab, color="grey", linestyle=":", linewidth=1)
    ax.text(1, 1 / vocab + 0.02, f"随机猜 1/{vocab}", color="grey", fontsize=9)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("位置 t（任务：输出第 t−1 个词）")
    ax.set_ylabel("准确率")
    ax.set_title(f"训练长度 L = {train_len}，测试长度 2L = {2 * train_len}（线：种子均值；带：最小–最大）")
    ax.legend(loc="center left", fontsize=8, frameon=False)
    return ax


# -- figures of the sinusoidal encoding ----------------------------------------------------------

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
    """Left: the PE table with columns 2i, 2i+1 outlined. Right: those two columns against pos."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    if not 0 <= 2 * i < d_model:
        raise fail("i", i, f"0 到 {(d_model - 1) // 2} 之间的整数（d_model={d_model}）")
    pe = sinusoidal_positional_encoding(seq_len, d_model)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.4, 3.0), layout="constrained",
                                      gridspec_kw={"width_ratios": [1, 1.4]})
    pe_heatmap(pe, ax=left)
    left.set_xlabel("维度")
    left.add_patch(Rectangle((2 * i - 0.5, -0.5), 2, seq_len, fill=False, edgecolor="crimson", linewidth=1.5))
    wavelength = 2 * math.pi * 10000 ** (2 * i / d_model)
    pos = np.arange(seq_len)
    right.plot(pos, pe[:, 2 * i].numpy(), color="#4C78A8", marker=".", label=f"第 {2 * i} 维 sin")
    if 2 * i + 1 < d_model:
        right.plot(pos, pe[:, 2 * i + 1].numpy(), color="#F58518", marker=".", label=f"第 {2 * i + 1} 维 cos")
    right.set_ylim(-1.15, 1.45)
    right.set_xlabel("位置 pos")
    right.set_title(f"i = {i}：波长 2π·10000^(2i/d) ≈ {wavelength:,.0f} 个位置")
    right.legend(loc="upper right", fontsize=8, ncol=2, frameon=False)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "pe_heatmap",
    "pe_wave_figure",
    "plot_extrapolation",
    "random_tokens",
)
