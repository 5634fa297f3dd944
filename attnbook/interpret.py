"""Looking inside attention heads (chapter 13): an induction task, a small attention-only model,
per-head scores, head diversity, ablation and the figures of the chapter.

The model reuses the book's own pieces: :class:`attnbook.MultiHeadSelfAttention` (its projections),
:func:`attnbook.scaled_dot_product_attention`, :func:`attnbook.causal_mask` and
:func:`attnbook.sinusoidal_positional_encoding`.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ._errors import fail
from .book import AttnOnlyTransformer
from .book import scaled_dot_product_attention
from .book import causal_mask
from .book import MultiHeadSelfAttention
from .book import sinusoidal_positional_encoding
from ._threads import one_thread

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


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------
@dataclass
class TrainResult:
    """A trained model, its loss after every step and the settings that produced it."""

    model: AttnOnlyTransformer
    losses: list[float]
    config: dict[str, Any] = field(default_factory=dict)


def induction_loss(logits: torch.Tensor, data: InductionBatch) -> torch.Tensor:
    """Cross-entropy of predicting token t+1 at the positions of ``data.loss_mask``."""
    pred = logits[:, :-1]  # [batch, seq_len-1, vocab_size]
    target = data.tokens[:, 1:]
    keep = data.loss_mask[:, :-1]
    return F.cross_entropy(pred[keep], target[keep])


def train_induction(
    seed: int = 0,
    *,
    steps: int = 500,
    lr: float = 1e-2,
    batch: int = 64,
    d_model: int = 32,
    num_heads: int = 2,
    num_layers: int = 2,
    seq_len: int = 24,
    vocab_size: int = 26,
) -> TrainResult:
    """Train an :class:`AttnOnlyTransformer` on fresh induction batches with Adam.

    Deterministic: the weights come from ``torch.manual_seed(seed)``, the data from a generator
    seeded with ``1000 + seed``, and training runs on one thread (restored afterwards).
    ``steps=0`` returns the untrained model.
    """
    if not isinstance(steps, int) or steps < 0:
        raise fail("steps", steps, "非负整数")
    if not lr > 0:
        raise fail("lr", lr, "正数")
    with one_thread():
        torch.manual_seed(seed)
        model = AttnOnlyTransformer(vocab_size, d_model, num_heads, num_layers, max_len=seq_len)
        g = torch.Generator().manual_seed(1000 + seed)
        opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
        losses = []
        for _ in range(steps):
            data = induction_batch(batch, seq_len=seq_len, vocab_size=vocab_size, generator=g)
            logits, _ = model(data.tokens)
            loss = induction_loss(logits, data)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    config = dict(seed=seed, steps=steps, lr=lr, batch=batch, d_model=d_model, num_heads=num_heads,
                  num_layers=num_layers, seq_len=seq_len, vocab_size=vocab_size)
    return TrainResult(model=model, losses=losses, config=config)


def eval_batch(batch: int = 256, seed: int = 12345, **kwargs: Any) -> InductionBatch:
    """A fixed held-out batch (its own generator, never seen in training)."""
    return induction_batch(batch, generator=torch.Generator().manual_seed(seed), **kwargs)


@torch.no_grad()
def run(model: AttnOnlyTransformer, data: InductionBatch, head_mask: torch.Tensor | None = None):
    """(logits, attn_weights list) on ``data`` without gradients, on one thread."""
    with one_thread():
        return model(data.tokens, head_mask=head_mask)


def accuracy(model: AttnOnlyTransformer, data: InductionBatch, head_mask: torch.Tensor | None = None) -> float:
    """Fraction of copyable positions (``data.loss_mask``) whose next token is predicted right."""
    logits, _ = run(model, data, head_mask)
    right = logits[:, :-1].argmax(-1) == data.tokens[:, 1:]
    return right[data.loss_mask[:, :-1]].float().mean().item()


# ---------------------------------------------------------------------------------------------
# Scores of a head
# ---------------------------------------------------------------------------------------------
def _check_weights(attn_weights: torch.Tensor, name: str = "attn_weights") -> torch.Tensor:
    w = torch.as_tensor(attn_weights)
    if w.dim() < 2 or w.shape[-1] != w.shape[-2]:
        raise fail(name, w, "形状为 [..., seq_len, seq_len] 的注意力权重（最后两维相等）")
    return w


def previous_token_score(attn_weights: torch.Tensor) -> torch.Tensor:
    """Mean weight a query puts on the key just before it: mean over t ≥ 1 of ``w[..., t, t-1]``.

    attn_weights: ``[..., seq_len, seq_len]``; returns ``[...]`` (e.g. ``[batch, num_heads]``).
    1 = a perfect previous-token head.
    """
    w = _check_weights(attn_weights)
    return torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean(-1)


def induction_score(attn_weights: torch.Tensor, data: InductionBatch) -> torch.Tensor:
    """Mean weight a query in the second copy of A puts on the token *after* the earlier occurrence
    of its own token, i.e. on key ``t - L + 1``, over the positions of ``data.loss_mask``.

    attn_weights: ``[batch, num_heads, seq_len, seq_len]``; returns ``[num_heads]``.
    """
    w = _check_weights(attn_weights)
    if w.dim() != 4 or w.shape[0] != data.tokens.shape[0] or w.shape[-1] != data.tokens.shape[1]:
        raise fail("attn_weights", w, f"[batch={data.tokens.shape[0]}, num_heads, "
                   f"{data.tokens.shape[1]}, {data.tokens.shape[1]}]，与 data 的 batch 和 seq_len 一致")
    b, t = torch.nonzero(data.loss_mask, as_tuple=True)  # 所有可复制的位置
    key = t - data.seg_len[b] + 1  # 上一次出现之后的那个位置
    picked = w[b, :, t, key]  # [num_positions, num_heads]
    return picked.mean(0)


def head_scores(model: AttnOnlyTransformer, data: InductionBatch) -> dict[str, torch.Tensor]:
    """``{"prev": [num_layers, num_heads], "induction": [num_layers, num_heads]}`` on ``data``."""
    _, weights = run(model, data)
    prev = torch.stack([previous_token_score(w).mean(0) for w in weights])
    ind = torch.stack([induction_score(w, data) for w in weights])
    return {"prev": prev, "induction": ind}


def score_table(scores_by_run: dict[str, dict[str, torch.Tensor]], digits: int = 2):
    """A pandas DataFrame: one row per (run, layer, head), columns 前一词分数 and 归纳分数.

    Layers and heads are numbered from 1 in the table (第 1 层, 头 1) as in the figures.
    """
    import pandas as pd

    rows = []
    for name, s in scores_by_run.items():
        num_layers, num_heads = s["prev"].shape
        for layer, head in itertools.product(range(num_layers), range(num_heads)):
            rows.append({"运行": name, "层": layer + 1, "头": head + 1,
                         "前一词分数": round(float(s["prev"][layer, head]), digits),
                         "归纳分数": round(float(s["induction"][layer, head]), digits)})
    return pd.DataFrame(rows).set_index(["运行", "层", "头"])


# ---------------------------------------------------------------------------------------------
# Diversity of heads
# ---------------------------------------------------------------------------------------------
def js_divergence(p: torch.Tensor, q: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Jensen–Shannon divergence in bits (base 2), between 0 (same) and 1 (disjoint supports).

    JS(p, q) = ½ KL(p ‖ m) + ½ KL(q ‖ m), m = ½ (p + q); 0 · log 0 counts as 0.
    p, q: probability distributions along ``dim`` (broadcastable shapes).
    """
    p = torch.as_tensor(p, dtype=torch.float64)
    q = torch.as_tensor(q, dtype=torch.float64)
    m = 0.5 * (p + q)

    def kl(a, b):
        ratio = torch.where(a > 0, a / torch.where(b > 0, b, torch.ones_like(b)), torch.ones_like(a))
        return (a * torch.log2(ratio)).sum(dim)

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def head_diversity(weights: Sequence[torch.Tensor] | torch.Tensor, *, within_layer: bool = False) -> float:
    """Mean pairwise Jensen–Shannon divergence (bits) between heads' attention distributions.

    weights: a list with one ``[batch, num_heads, seq_len, seq_len]`` per layer (or one such tensor).
    For each pair of heads we compare the two rows of the same query in the same sequence, skip
    query 0 (it can only see itself, every head agrees), and average. ``within_layer=True`` only
    pairs heads of the same layer. 0 = all heads identical.
    """
    if isinstance(weights, torch.Tensor):
        weights = [weights]
    groups = [list(w.unbind(1)) for w in weights]  # 每层一组：[batch, seq_len, seq_len]
    if within_layer:
        pairs = [pair for g in groups for pair in itertools.combinations(g, 2)]
    else:
        pairs = list(itertools.combinations([h for g in groups for h in g], 2))
    if not pairs:
        raise fail("weights", [tuple(w.shape) for w in weights], "至少两个头")
    values = [js_divergence(a[:, 1:], b[:, 1:]).mean() for a, b in pairs]
    return float(torch.stack(values).mean())


def ablation_accuracy(model: AttnOnlyTransformer, data: InductionBatch) -> dict[str, float]:
    """Accuracy with nothing removed, with each head removed, and with each whole layer removed."""
    num_layers = len(model.layers)
    num_heads = model.layers[0].num_heads
    out = {"完整模型": accuracy(model, data)}
    for layer, head in itertools.product(range(num_layers), range(num_heads)):
        keep = torch.ones(num_layers, num_heads)
        keep[layer, head] = 0
        out[f"去掉 第{layer + 1}层·头{head + 1}"] = accuracy(model, data, keep)
    for layer in range(num_layers):
        keep = torch.ones(num_layers, num_heads)
        keep[layer] = 0
        out[f"去掉 第{layer + 1}层全部头"] = accuracy(model, data, keep)
    return out


# ---------------------------------------------------------------------------------------------
# Exercise data
# ---------------------------------------------------------------------------------------------
def exercise_attention() -> torch.Tensor:
    """A fixed causal 6×6 attention matrix for exercise 13-1 (rows sum to 1)."""
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
    fig, ax = plt.subplots(figsize=(5.6, 4.6), layout="constrained")
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
    ax.set_xlabel(f"键（被看的词）   本句：前一词分数 {prev:.2f}，归纳分数 {ind:.2f}")
    return fig


def plot_scores(table, *, ax=None):
    """Scatter of 前一词分数 vs 归纳分数, one point per (run, layer, head), coloured by layer."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 3.6), layout="constrained")
    colours = {1: "#4C78A8", 2: "#F58518", 3: "#54A24B", 4: "#B279A2"}
    markers = ["o", "s", "^", "D", "v"]
    runs = list(dict.fromkeys(table.index.get_level_values(0)))
    for (run_name, layer, head), row in table.iterrows():
        ax.scatter(row["前一词分数"], row["归纳分数"], color=colours.get(layer, "grey"),
                   marker=markers[runs.index(run_name) % len(markers)], s=40, alpha=0.8)
    for layer, colour in colours.items():
        if layer in table.index.get_level_values(1):
            ax.scatter([], [], color=colour, label=f"第 {layer} 层")
    for i, run_name in enumerate(runs):
        ax.scatter([], [], color="grey", marker=markers[i % len(markers)], label=str(run_name))
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("前一词分数")
    ax.set_ylabel("归纳分数")
    ax.legend(fontsize=7, loc="center right")
    return ax


def heads_grid(weights: Sequence[torch.Tensor], data: InductionBatch, *, row: int = 0, suptitle: str | None = None):
    """All heads of all layers on sequence ``row``: one heatmap per (layer, head). Returns a Figure."""
    import matplotlib.pyplot as plt

    from .plots import heatmap

    labels = data.labels(row)
    num_layers, num_heads = len(weights), weights[0].shape[1]
    fig, axes = plt.subplots(num_layers, num_heads, figsize=(3.1 * num_heads, 3.0 * num_layers),
                             layout="constrained", squeeze=False)
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
