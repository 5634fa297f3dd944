"""Chapter 02 (注意力是一种查找): the library (借书单 / 标签 / 内容), the temperature slider, the
encoder–decoder bottleneck and the figure of the learned soft lookup.

The taught code (``soft_lookup``) is written in the chapter's ``#@save`` cell and imported from
attnbook.book. ``TEMPERATURES`` is also the grid of chapter 06's slider (it imports it from here).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from ..book import soft_lookup
from ..infra.errors import check_positive, fail


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
    ax1.legend(fontsize=10, frameon=False, loc="upper right")
    for i, w in enumerate(weights.tolist()):
        ax1.text(i, w + 0.02, f"{w:.2f}", ha="center", fontsize=10)
    # every other title one line lower: five book titles side by side at 10 pt
    ax1.set_xticks(range(len(weights)), labels=[("\n" if i % 2 else "") + t for i, t in enumerate(lib["titles"])],
                   fontsize=10)
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
    ax2.legend(fontsize=10, frameon=False, loc="upper right")
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
        ax.text(x, y, text, ha="center", va="center", fontsize=10, color=colour)

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
        ax.text((n - 1) / 2, -0.65, "编码器（读源句）", ha="center", fontsize=10)
        ax.text(dec_x0 + 1.6 + (m - 1) / 2, 2.65, "解码器（逐词生成）", ha="center", fontsize=10)
        ax.set_xlim(-0.7, dec_x0 + 1.6 + m)
        ax.set_ylim(-1.2, 3.9)
        ax.axis("off")
        if row == 0:
            box(ax, dec_x0, 1, "c", "#D55E00", w=0.6, colour="white")
            arrow(ax, (n - 0.6, 1), (dec_x0 - 0.3, 1), lw=1.6)
            arrow(ax, (dec_x0 + 0.3, 1), (dec_x0 + 1.2, 1), lw=1.6)
            ax.text(dec_x0, 1.6, "唯一的定长向量", ha="center", fontsize=10, color="#D55E00")
            ax.set_title("没有注意力：整句话被压进一个向量 c（瓶颈）", fontsize=10, loc="left")
        else:
            t = m - 2 if m >= 2 else 0
            x = dec_x0 + 1.6 + t
            box(ax, dec_x0, 1, f"c{t + 1}", "#D55E00", w=0.6, colour="white")
            for i, w in enumerate(weights):
                arrow(ax, (i + 0.05, 1.28), (dec_x0 - 0.1, 1.28), colour="#D55E00", lw=0.4 + 6 * w, rad=-0.3)
                ax.text(i - 0.1, 1.45, f"{w:.2f}", ha="right", fontsize=10, color="#D55E00")
            arrow(ax, (dec_x0 + 0.1, 0.72), (x - 0.1, 0.72), colour="#D55E00", lw=1.6, rad=0.35)
            ax.text((dec_x0 + x) / 2, -0.6, f"c{t + 1} = 各个 h 的加权和，每生成一个词重算一次", ha="center",
                    fontsize=10, color="#D55E00")
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
    ax.legend(frameon=False, fontsize=10, loc="upper left")
    return ax


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'TEMPERATURES',
    'bottleneck_figure',
    'learned_lookup_figure',
    'library',
    'temperature_figure',
)
