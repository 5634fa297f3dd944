"""Chapter 01 (为什么需要注意力): the example sentence, the N-gram window and path-length figures,
and the slider of the RNN gradient experiment.

The taught code these figures draw (``ngram_window``, ``path_lengths`` and the RNN experiment
``tanh_rnn``, ``gradient_norms``, ``init_rnn``, ``measure_gradient_decay``, ``factor_per_step``) is
written in the chapter's ``#@save`` cells and imported from attnbook.book. Plot functions are pure:
parameters in, a matplotlib Figure out; nothing is shown.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

from ..book import factor_per_step, measure_gradient_decay, ngram_window, path_lengths
from ..infra.errors import check_int, check_positive, fail


# ---------------------------------------------------------------------------------------------
# N-gram windows and path lengths
# ---------------------------------------------------------------------------------------------

#: The article's sentence (§1.1).
SENTENCE = "我昨天带着小狗去公园，它玩得很开心"
#: Our hand segmentation of it into words, "/" between words.
SEGMENTED = "我/昨天/带着/小狗/去/公园/，/它/玩/得/很/开心"


def tokenize(sentence: str, how: str) -> list[str]:
    """Split ``sentence`` into tokens.

    how: ``"字"`` — one token per character; ``"词"`` — split at ``/`` (write the words with
    ``/`` between them, e.g. ``"我/昨天/带着"``).
    """
    if not isinstance(sentence, str) or not sentence:
        raise fail("sentence", sentence, "非空字符串")
    if how == "字":
        return list(sentence.replace("/", ""))
    if how == "词":
        words = sentence.split("/")
        if any(not w for w in words):
            raise fail("sentence", sentence, "用 / 分隔的词，且相邻两个 / 之间不能为空")
        return words
    raise fail("how", how, '"字"（按字切分）或 "词"（按 / 切分）')


def ngram_window_figure(n: int, how: str, *, sentence: str = SEGMENTED, target: str = "它",
                        antecedent: str = "小狗"):
    """Slider frame: the sentence as a row of boxes; the N − 1 tokens the N-gram model sees
    before ``target`` are shaded, ``target`` is dark, the tokens of ``antecedent`` are outlined.
    Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    tokens = tokenize(sentence, how)
    if target not in tokens:
        raise fail("target", target, f"句中的一个词元，例如 {tokens[:4]}")
    position = tokens.index(target)
    window = ngram_window(tokens, position, n)
    start = position - len(window)
    # 先行词（antecedent）占据的词元下标
    text = "".join(tokens)
    a0 = text.find(antecedent)
    if a0 < 0:
        raise fail("antecedent", antecedent, "句中出现的一段文字")
    offsets = np.cumsum([0] + [len(t) for t in tokens])
    ante = [i for i in range(len(tokens)) if offsets[i] < a0 + len(antecedent) and offsets[i + 1] > a0]
    sees = all(start <= i < position for i in ante)

    widths = [0.55 + 0.42 * len(t) for t in tokens]
    xs = np.cumsum([0.0] + [w + 0.12 for w in widths])
    fig, ax = plt.subplots(figsize=(7.4, 1.7), layout="constrained")
    for i, (tok, x, w) in enumerate(zip(tokens, xs, widths)):
        if i == position:
            face, colour = "#0072B2", "white"
        elif start <= i < position:
            face, colour = "#F0C808", "black"
        else:
            face, colour = "#EEEEEE", "0.45"
        edge = "#D55E00" if i in ante else "0.6"
        ax.add_patch(FancyBboxPatch((x, 0), w, 1, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    fc=face, ec=edge, lw=2.2 if i in ante else 0.8))
        ax.text(x + w / 2, 0.5, tok, ha="center", va="center", fontsize=12, color=colour)
        ax.text(x + w / 2, -0.35, str(i), ha="center", va="center", fontsize=10, color="0.5")
    ax.set_xlim(-0.1, xs[-1])
    ax.set_ylim(-0.6, 1.25)
    ax.axis("off")
    seen = " ".join(window) if window else "（什么也看不到）"
    verdict = f"看得到“{antecedent}”" if sees else f"看不到“{antecedent}”"
    ax.set_title(f"按{how}切分，N = {n}：预测“{target}”时只看前 {n - 1} 个词元：{seen}  →  {verdict}",
                 fontsize=10)
    return fig


def path_length_figure(tokens: Sequence[str], source: int, target: int, *, max_distance: int = 50):
    """Left: how a message travels from ``tokens[source]`` to ``tokens[target]`` in an RNN
    (one hop per step) and in self-attention (one hop). Right: path length against distance.
    Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    tokens = list(tokens)
    n = len(tokens)
    for arg, value in (("source", source), ("target", target)):
        check_int(value, arg, minimum=0, maximum=n - 1, hint="（词的下标）")
    rnn = path_lengths(n, "rnn")
    attn = path_lengths(n, "attention")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.0), width_ratios=[1.7, 1], layout="constrained")
    lo, hi = sorted((source, target))
    for row, (name, y, colour) in enumerate((("RNN", 1.0, "#0072B2"), ("自注意力", 0.0, "#D55E00"))):
        for i, tok in enumerate(tokens):
            strong = i in (source, target)
            ax.text(i, y, tok, ha="center", va="center", fontsize=10,
                    color="black" if strong else "0.55",
                    bbox=dict(boxstyle="round,pad=0.25", fc="#FFF3C4" if strong else "white",
                              ec=colour if strong else "0.8", lw=1.2))
        ax.text(-1.0, y, name, ha="right", va="center", fontsize=10, color=colour)
    for i in range(lo, hi):  # RNN: one hop per step
        ax.add_patch(FancyArrowPatch((i + 0.05, 1.3), (i + 0.95, 1.3), connectionstyle="arc3,rad=-0.5",
                                     arrowstyle="-|>", mutation_scale=9, color="#0072B2", lw=1.3))
    ax.add_patch(FancyArrowPatch((lo, -0.3), (hi, -0.3), connectionstyle="arc3,rad=0.35",
                                 arrowstyle="-|>", mutation_scale=10, color="#D55E00", lw=1.6))
    ax.text((lo + hi) / 2, 1.75, f"{int(rnn[source, target])} 步", ha="center", color="#0072B2")
    ax.text((lo + hi) / 2, -1.05, f"{int(attn[source, target])} 步", ha="center", color="#D55E00")
    ax.set_xlim(-2.6, n - 0.4)
    ax.set_ylim(-1.3, 2.0)
    ax.axis("off")
    ax.set_title(f"从“{tokens[source]}”到“{tokens[target]}”要走几步")

    big_rnn = path_lengths(max_distance + 1, "rnn")[0]
    big_attn = path_lengths(max_distance + 1, "attention")[0]
    d = np.arange(1, max_distance + 1)
    ax2.plot(d, big_rnn[1:].numpy(), color="#0072B2", label="RNN：与距离成正比")
    ax2.plot(d, big_attn[1:].numpy(), color="#D55E00", label="自注意力：恒为 1")
    ax2.set_xlabel("两个词相隔的距离")
    ax2.set_ylabel("最短路径（步）")
    ax2.legend(frameon=False, loc="upper left")
    ax2.set_title("路径长度")
    return fig


# ---------------------------------------------------------------------------------------------
# The RNN gradient experiment: its slider (every frame draws all scales, so the measurements are cached)
# ---------------------------------------------------------------------------------------------

#: Recurrent weight scales offered by the chapter's slider (spectral radius of W_hh ≈ scale).
WEIGHT_SCALES: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)


def _positive_int(value, arg: str, minimum: int = 1) -> int:
    return check_int(value, arg, minimum=minimum)


_positive_float = check_positive


@functools.lru_cache(maxsize=64)
def _measure(weight_scale: float, seeds: int = 5, seq_len: int = 60, input_scale: float = 1.0) -> torch.Tensor:
    """Cached measure_gradient_decay: each of the slider's frames draws every scale (exercise 01-3 reuses it)."""
    return measure_gradient_decay(weight_scale, seeds=seeds, seq_len=seq_len, input_scale=input_scale)


def gradient_decay_figure(weight_scale: float, *, scales: Sequence[float] = WEIGHT_SCALES,
                          seeds: int = 5, seq_len: int = 60):
    """Slider frame: ‖∂h_T/∂x_t‖ against T - t (log scale) for one recurrent weight scale.

    Every scale of ``scales`` is drawn as a thin grey line so each frame shows the whole family;
    the chosen one is drawn bold, with the band between the smallest and largest seed.
    Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    weight_scale = _positive_float(weight_scale, "weight_scale")
    if weight_scale not in scales:
        raise fail("weight_scale", weight_scale, f"scales 中的取值之一：{list(scales)}")
    curves = {g: _measure(g, seeds, seq_len).log10() for g in scales}
    distance = np.arange(seq_len)
    lo = min(float(c.min()) for c in curves.values())
    hi = max(float(c.max()) for c in curves.values())
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    for g, c in curves.items():
        if g != weight_scale:
            ax.plot(distance, c.mean(dim=0).numpy(), color="0.8", lw=0.9)
    chosen = curves[weight_scale]
    factor = factor_per_step(10 ** chosen)
    colour = "#D55E00" if factor > 1.05 else ("#0072B2" if factor < 0.95 else "#009E73")
    ax.fill_between(distance, chosen.min(dim=0).values.numpy(), chosen.max(dim=0).values.numpy(),
                    color=colour, alpha=0.2, lw=0)
    ax.plot(distance, chosen.mean(dim=0).numpy(), color=colour, lw=2.2,
            label=f"s = {weight_scale:g}（{seeds} 个种子的几何平均）")
    ax.set_ylim(lo - 1, hi + 1)
    ax.set_xlim(0, seq_len - 1)
    ax.axhline(0.0, color="0.5", lw=0.6, ls="--")
    ax.set_xlabel("距离 $T-t$（相隔多少步）")
    ax.set_ylabel(r"$\log_{10}\,\Vert\partial h_T / \partial x_t\Vert$")
    verdict = "梯度爆炸" if factor > 1.05 else ("梯度消失" if factor < 0.95 else "大致不增不减")
    ax.set_title(f"循环权重尺度 {weight_scale:g}：每多隔一步，梯度约乘以 {factor:.2f}（{verdict}）")
    ax.legend(loc="lower left", frameon=False)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'SEGMENTED',
    'SENTENCE',
    'tokenize',
    'ngram_window_figure',
    'path_length_figure',
    'WEIGHT_SCALES',
    'gradient_decay_figure',
)
