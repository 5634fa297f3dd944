"""Plumbing for Part I (chapters 01–04): the example sentence, the library data, and the figures
and sliders (N-gram window, path lengths, temperature, bottleneck, learned lookup, X·Xᵀ, 猫吃鱼).

The taught code these figures draw (``ngram_window``, ``path_lengths``, ``soft_lookup``,
``random_scores``, ``self_match_rate``) is written in the chapters' ``#@save`` cells and imported
from attnbook.book. Plot functions are pure: parameters in, matplotlib Figure/Axes out; nothing is shown.
"""
from __future__ import annotations

import collections
import functools
import math
from typing import Sequence

import numpy as np
import torch

from ._errors import check_bool, check_finite, check_int, check_positive, fail
from .book import ngram_window, path_lengths, random_scores, self_match_rate, soft_lookup

# ---------------------------------------------------------------------------------------------
# Chapter 01: N-gram windows and path lengths
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
        ax.text(x + w / 2, -0.35, str(i), ha="center", va="center", fontsize=7, color="0.5")
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
            ax.text(i, y, tok, ha="center", va="center", fontsize=10 if strong else 9,
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
# Chapter 02: the library (借书单 / 标签 / 内容) and the encoder–decoder bottleneck
# ---------------------------------------------------------------------------------------------

#: Features that describe a book's tag (the key) and its content (the value).
TAG_FEATURES = ["机器学习", "编程", "数学", "烹饪"]
CONTENT_FEATURES = ["理论", "代码", "生活"]
_BOOKS = [
    # 书名, 标签（字典里的键）, 标签向量 k, 内容向量 v
    ("《深度学习》", "深度学习", [1.0, 0.5, 0.6, 0.0], [0.7, 0.5, 0.0]),
    ("《Python 编程》", "编程", [0.2, 1.0, 0.1, 0.0], [0.1, 0.9, 0.1]),
    ("《线性代数》", "线性代数", [0.3, 0.1, 1.0, 0.0], [1.0, 0.0, 0.0]),
    ("《家常菜谱》", "烹饪", [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
    ("《统计学习方法》", "统计学习", [0.8, 0.2, 0.9, 0.0], [0.9, 0.2, 0.0]),
]
#: The reader's request slip: "想入门神经网络", as a vector over TAG_FEATURES.
QUERY = ("神经网络", [1.0, 0.6, 0.3, 0.0])


def library(dtype: torch.dtype = torch.float64) -> dict:
    """The library example of chapter 02.

    Returns ``{"titles": [5 书名], "tags": [5 个标签字符串], "K": [5, 4], "V": [5, 3],
    "query_tag": "神经网络", "q": [4], "tag_features": [...], "content_features": [...]}``.
    K's columns are TAG_FEATURES, V's columns CONTENT_FEATURES. The numbers are made up to be
    readable, not learned.
    """
    return {
        "titles": [b[0] for b in _BOOKS],
        "tags": [b[1] for b in _BOOKS],
        "K": torch.tensor([b[2] for b in _BOOKS], dtype=dtype),
        "V": torch.tensor([b[3] for b in _BOOKS], dtype=dtype),
        "query_tag": QUERY[0],
        "q": torch.tensor(QUERY[1], dtype=dtype),
        "tag_features": list(TAG_FEATURES),
        "content_features": list(CONTENT_FEATURES),
    }


#: Temperatures offered by the sliders of chapter 02 (the library) and chapter 06 (the hull).
TEMPERATURES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0)


def temperature_figure(temperature: float):
    """Slider frame: weights over the five books and the weighted mean of their contents.

    Right panel: the output (bars) against the content of the best-matching book (◆, what a
    hard lookup would return) and the plain mean of all contents (○, infinite temperature).
    Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    check_positive(temperature, "temperature")
    lib = library()
    out, weights = soft_lookup(lib["q"], lib["K"], lib["V"], temperature)
    best = int(torch.argmax(lib["K"] @ lib["q"]))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.0, 2.9), width_ratios=[1.5, 1], layout="constrained")
    colours = ["#D55E00" if i == best else "#0072B2" for i in range(len(weights))]
    ax1.bar(range(len(weights)), weights.numpy(), color=colours)
    ax1.axhline(1 / len(weights), color="0.5", lw=0.8, ls="--", label=f"均匀分布 1/{len(weights)}")
    ax1.legend(fontsize=8, frameon=False, loc="upper right")
    for i, w in enumerate(weights.tolist()):
        ax1.text(i, w + 0.02, f"{w:.2f}", ha="center", fontsize=8)
    ax1.set_xticks(range(len(weights)), labels=lib["titles"], fontsize=8)
    ax1.set_ylim(0, 1.1)
    ax1.set_ylabel("权重")
    ax1.set_title(f"温度 $\\tau$ = {temperature:g}：借书单“{lib['query_tag']}”分给每本书的权重", fontsize=10)

    x = np.arange(len(lib["content_features"]))
    ax2.bar(x, out.numpy(), color="#009E73", width=0.6, label="输出（加权平均）")
    ax2.scatter(x, lib["V"][best].numpy(), marker="D", color="#D55E00", zorder=3, label="最匹配那本的内容")
    ax2.scatter(x, lib["V"].mean(dim=0).numpy(), marker="o", facecolor="none", edgecolor="0.2", zorder=3,
                label="所有内容的平均")
    ax2.set_xticks(x, labels=lib["content_features"])
    ax2.set_ylim(0, 1.05)
    ax2.set_title("带回去的笔记", fontsize=10)
    ax2.legend(fontsize=7, frameon=False, loc="upper right")
    return fig


def bottleneck_figure(source: Sequence[str] = ("我", "爱", "机器", "学习"),
                      target: Sequence[str] = ("I", "love", "machine", "learning"),
                      weights: Sequence[float] | None = None):
    """The encoder–decoder bottleneck. Top: the encoder squeezes the source into one vector c
    that the decoder must live on. Bottom: with attention, the decoder state that produces
    ``target[-2]`` reads every encoder state, with line widths proportional to ``weights``
    (illustrative numbers, default 0.05 / 0.05 / 0.8 / 0.1). Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    source, target = list(source), list(target)
    if not source or not target:
        raise fail("source", (source, target), "非空的源句与目标句")
    if weights is None:
        weights = [0.05] * len(source)
        weights[min(2, len(source) - 1)] = 0.8
        rest = 1 - sum(weights)
        weights[-1] += rest
    weights = [float(w) for w in weights]
    if len(weights) != len(source):
        raise fail("weights", weights, f"{len(source)} 个权重（源句每个词一个）")

    fig, axes = plt.subplots(2, 1, figsize=(7.6, 4.6), layout="constrained")

    def box(ax, x, y, text, fc, w=0.8, h=0.5, colour="black"):
        ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                    fc=fc, ec="0.4", lw=0.8))
        ax.text(x, y, text, ha="center", va="center", fontsize=9, color=colour)

    def arrow(ax, a, b, colour="0.4", lw=1.0, rad=0.0):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=8, color=colour, lw=lw,
                                     connectionstyle=f"arc3,rad={rad}", shrinkA=2, shrinkB=2))

    n, m = len(source), len(target)
    dec_x0 = n + 1.6
    for row, ax in enumerate(axes):
        for i, tok in enumerate(source):
            box(ax, i, 0, tok, "#FFF3C4")
            box(ax, i, 1, f"h{i + 1}", "#CFE3F3")
            arrow(ax, (i, 0.25), (i, 0.75))
            if i:
                arrow(ax, (i - 0.6, 1), (i - 0.4, 1))
        for t, tok in enumerate(target):
            x = dec_x0 + 1.6 + t
            box(ax, x, 1, f"s{t + 1}", "#F8D5C2")
            box(ax, x, 2, tok, "#E6E6E6")
            arrow(ax, (x, 1.25), (x, 1.75))
            if t:
                arrow(ax, (x - 0.6, 1), (x - 0.4, 1))
        ax.text((n - 1) / 2, -0.65, "编码器（读源句）", ha="center", fontsize=9)
        ax.text(dec_x0 + 1.6 + (m - 1) / 2, 2.65, "解码器（逐词生成）", ha="center", fontsize=9)
        ax.set_xlim(-0.7, dec_x0 + 1.6 + m)
        ax.set_ylim(-1.2, 3.9)
        ax.axis("off")
        if row == 0:
            box(ax, dec_x0, 1, "c", "#D55E00", w=0.6, colour="white")
            arrow(ax, (n - 0.6, 1), (dec_x0 - 0.3, 1), lw=1.6)
            arrow(ax, (dec_x0 + 0.3, 1), (dec_x0 + 1.2, 1), lw=1.6)
            ax.text(dec_x0, 1.6, "唯一的定长向量", ha="center", fontsize=8, color="#D55E00")
            ax.set_title("没有注意力：整句话被压进一个向量 c（瓶颈）", fontsize=10, loc="left")
        else:
            t = m - 2 if m >= 2 else 0
            x = dec_x0 + 1.6 + t
            box(ax, dec_x0, 1, f"c{t + 1}", "#D55E00", w=0.6, colour="white")
            for i, w in enumerate(weights):
                arrow(ax, (i + 0.05, 1.28), (dec_x0 - 0.1, 1.28), colour="#D55E00", lw=0.4 + 6 * w, rad=-0.3)
                ax.text(i - 0.1, 1.45, f"{w:.2f}", ha="right", fontsize=7, color="#D55E00")
            arrow(ax, (dec_x0 + 0.1, 0.72), (x - 0.1, 0.72), colour="#D55E00", lw=1.6, rad=0.35)
            ax.text((dec_x0 + x) / 2, -0.6, f"c{t + 1} = 各个 h 的加权和，每生成一个词重算一次", ha="center",
                    fontsize=8, color="#D55E00")
            ax.set_title(f"有注意力：生成“{target[t]}”时回头看每个 h，线越粗权重越大（权重为示意）",
                         fontsize=10, loc="left")
    return fig


def learned_lookup_figure(x_train, y_train, x_grid, curves: dict, *, ax=None):
    """Chapter 02's learned soft lookup: training points (dots) and one line per entry of ``curves``
    ({label: predictions on x_grid}). x_train, y_train: [n]; x_grid: [m]; each curve: [m].
    Returns the matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    x_train, y_train, x_grid = (np.asarray(torch.as_tensor(a).detach(), dtype=float) for a in (x_train, y_train, x_grid))
    if x_train.shape != y_train.shape or x_train.ndim != 1:
        raise fail("y_train", y_train, f"与 x_train 形状相同的一维数组 {x_train.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    ax.plot(x_train, y_train, "o", color="0.6", ms=3.5, label="训练数据（键 = x，值 = y）")
    styles = ["-", "--", "-.", ":"]
    colours = ["0.2", "#0072B2", "#D55E00", "#009E73"]
    for i, (label, values) in enumerate(curves.items()):
        values = np.asarray(torch.as_tensor(values).detach(), dtype=float)
        if values.shape != x_grid.shape:
            raise fail("curves", label, f"每条曲线的形状应与 x_grid 相同 {x_grid.shape}")
        ax.plot(x_grid, values, styles[i % 4], color=colours[i % 4], lw=2, label=label)
    ax.set_xlabel("查询 x")
    ax.set_ylabel("输出")
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    return ax


# ---------------------------------------------------------------------------------------------
# Chapter 03: why not score with X·Xᵀ
# ---------------------------------------------------------------------------------------------


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

    from .plots import heatmap

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


# ---------------------------------------------------------------------------------------------
# Chapter 04: 猫吃鱼 slider
# ---------------------------------------------------------------------------------------------


def cat_fish_figure(q_cat_0: float, scaled: bool):
    """Slider frame of chapter 04: 猫吃鱼 with the first entry of q_猫 replaced by ``q_cat_0``.

    Left: the 3×3 weights (colour range 0–1, so frames compare); right: the 猫 row as bars.
    ``scaled``: divide the scores by √d_k. Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    from .plots import heatmap
    from .toy import cat_eats_fish

    check_finite(q_cat_0, "q_cat_0")
    check_bool(scaled, "scaled")
    d = cat_eats_fish()
    tokens, Q, K = d["tokens"], d["Q"].clone(), d["K"]
    Q[0, 0] = q_cat_0
    s = Q @ K.T  # [3, 3]
    if scaled:
        s = s / math.sqrt(Q.shape[-1])
    w = torch.softmax(s, dim=-1)
    fig, (ax_left, ax_right) = plt.subplots(1, 2, figsize=(7.2, 2.8), layout="constrained")
    heatmap(w, row_labels=tokens, col_labels=tokens, ax=ax_left, colorbar=False,
            title=f"q_猫 = [{q_cat_0:g}, 0.2]", xlabel=None, ylabel=None)
    ax_right.bar(tokens, w[0].numpy(), color=["#4C78A8", "#72B7B2", "#F58518"])
    ax_right.set_ylim(0, 1)
    ax_right.set_title("“猫”这一行的权重" + ("（÷√2）" if scaled else "（不缩放）"))
    for j, value in enumerate(w[0].tolist()):
        ax_right.text(j, value + 0.03, f"{value:.2f}", ha="center")
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "SEGMENTED",
    "SENTENCE",
    "tokenize",
    "ngram_window_figure",
    "path_length_figure",
    "TEMPERATURES",
    "bottleneck_figure",
    "learned_lookup_figure",
    "library",
    "temperature_figure",
    "D_MODELS",
    "xx_vs_qk_figure",
    "cat_fish_figure",
)
