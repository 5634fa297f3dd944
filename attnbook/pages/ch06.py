"""Chapter 06 (加权求和：凸组合): the convex hull of V — 猫吃鱼's outputs inside the triangle of its
values, and the temperature slider.

The taught code (``barycentric``) is written in the chapter's ``#@save`` cell and imported from
attnbook.book; the slider's temperatures are chapter 02's ``TEMPERATURES``.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np
import torch

from ..book import barycentric
from ..infra.errors import check_positive, fail
from ..toy import cat_eats_fish
from .ch05 import _axes  # the same small-figure helper as chapter 05's plots


def _as_tensor(value: Any, arg: str, expected: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
    else:
        try:
            tensor = torch.as_tensor(np.asarray(value, dtype=float))
        except (TypeError, ValueError):
            raise fail(arg, value, expected) from None
    if not torch.is_floating_point(tensor):
        tensor = tensor.to(torch.float64)
    return tensor


def _check_triangle(triangle: Any) -> torch.Tensor:
    t = _as_tensor(triangle, "triangle", "三个二维顶点 [3, 2]")
    if t.shape != (3, 2):
        raise fail("triangle", triangle, "形状为 [3, 2] 的张量（三个顶点，每个是二维向量）")
    edges = t[1:] - t[0]
    area2 = (edges[0, 0] * edges[1, 1] - edges[0, 1] * edges[1, 0]).abs().item()
    if area2 < 1e-12:
        raise fail("triangle", triangle, "三个不共线的顶点（现在三点几乎在一条直线上，三角形面积为 0）")
    return t.to(torch.float64)


def hull_outputs(temperature: float, *, data: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """猫吃鱼 with temperature τ: ``attn_weights = softmax(QKᵀ / (τ√d_k))``, ``out = attn_weights V``.

    τ = 1 is ordinary scaled attention; τ → 0 approaches the largest score (one-hot), τ → ∞
    the uniform average. Returns ``(attn_weights [3, 3], out [3, 2])``.
    """
    check_positive(temperature, "temperature", hint="，例如 1.0（标准缩放）")
    d = cat_eats_fish() if data is None else data
    Q, K, V = d["Q"], d["K"], d["V"]
    d_k = Q.shape[-1]
    attn_weights = torch.softmax(Q @ K.T / (float(temperature) * math.sqrt(d_k)), dim=-1)  # [3, 3]
    return attn_weights, attn_weights @ V  # [3, 2]


_TOKEN_COLOURS = ("#4C78A8", "#72B7B2", "#F58518")


def plot_hull(V: Any, outputs: Any = None, *, labels: Sequence[str] | str = "猫吃鱼", ax=None,
              trails: Any = None, title: str | None = None):
    """The triangle spanned by three value vectors, and attention outputs inside it.

    V: ``[3, 2]`` (the corners, labelled ``v_猫`` …); outputs: ``[3, 2]`` or None (drawn as
    ``o_猫`` …); trails: ``[steps, 3, 2]`` paths of the outputs (faint lines), or None.
    Returns the ``Axes``.
    """
    import matplotlib.patches as mpatches

    t = _check_triangle(V).numpy()
    names = list(labels) if isinstance(labels, str) else [str(x) for x in labels]
    if len(names) != 3:
        raise fail("labels", labels, "3 个词（每个顶点一个）")
    ax = _axes(ax, (4.2, 3.6))
    ax.add_patch(mpatches.Polygon(t, closed=True, facecolor="#dddddd", edgecolor="0.3", lw=1.2, zorder=1))
    centre = t.mean(axis=0)
    for j, (x, y) in enumerate(t):
        away = (t[j] - centre) / (np.linalg.norm(t[j] - centre) + 1e-12)
        ax.plot(x, y, "^", color=_TOKEN_COLOURS[j], ms=9, zorder=3)
        ax.annotate(f"v_{names[j]}", (x, y), xytext=tuple(14 * away), textcoords="offset points",
                    ha="center", va="center", color=_TOKEN_COLOURS[j], fontsize=10)
    if trails is not None:
        path = _as_tensor(trails, "trails", "轨迹 [steps, 3, 2]").numpy()
        if path.ndim != 3 or path.shape[1:] != (3, 2):
            raise fail("trails", trails, "形状为 [steps, 3, 2] 的轨迹")
        for i in range(3):
            ax.plot(path[:, i, 0], path[:, i, 1], "-", color=_TOKEN_COLOURS[i], lw=1, alpha=0.45, zorder=2)
    if outputs is not None:
        o = _as_tensor(outputs, "outputs", "输出 [3, 2]").numpy()
        if o.shape != (3, 2):
            raise fail("outputs", outputs, "形状为 [3, 2] 的输出（每个词一个二维向量）")
        for i, (x, y) in enumerate(o):
            ax.plot(x, y, "o", color=_TOKEN_COLOURS[i], mec="black", ms=8, zorder=4, label=f"o_{names[i]}")
        ax.legend(loc="lower left", frameon=False, fontsize=10, handletextpad=0.2, borderaxespad=0.2)
    pad = 0.25
    ax.set_xlim(t[:, 0].min() - pad, t[:, 0].max() + pad)
    ax.set_ylim(t[:, 1].min() - pad, t[:, 1].max() + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("维度 0")
    ax.set_ylabel("维度 1")
    if title:
        ax.set_title(title)
    return ax


@functools.lru_cache(maxsize=1)
def _hull_trails() -> torch.Tensor:
    """Outputs of 猫吃鱼 for 160 temperatures from 0.01 to 300: ``[160, 3, 2]`` (one batched softmax)."""
    d = cat_eats_fish()
    taus = torch.logspace(math.log10(0.01), math.log10(300.0), 160, dtype=torch.float64)
    scores = d["Q"] @ d["K"].T / math.sqrt(d["Q"].shape[-1])  # [3, 3]
    attn_weights = torch.softmax(scores / taus[:, None, None], dim=-1)  # [160, 3, 3]
    return attn_weights @ d["V"]  # [160, 3, 2]


def hull_figure(temperature: float):
    """The chapter-06 slider: outputs of 猫吃鱼 at temperature τ, inside the triangle of V.

    Left: the triangle, the three outputs, and (faint) their paths for τ from 0.01 to 300.
    Right: each output's barycentric coordinates (= its attention weights). Returns the ``Figure``.
    """
    import matplotlib.pyplot as plt

    attn_weights, out = hull_outputs(temperature)
    d = cat_eats_fish()
    tokens = d["tokens"]
    fig, (ax_tri, ax_bar) = plt.subplots(1, 2, figsize=(6.9, 3.6), gridspec_kw={"width_ratios": [1.1, 1.0]})
    fig.subplots_adjust(left=0.1, right=0.99, bottom=0.13, top=0.91, wspace=0.32)  # fixed margins: faster than constrained
    plot_hull(d["V"], out, labels=tokens, ax=ax_tri, trails=_hull_trails(), title=f"温度 τ = {temperature:g}")
    lam = barycentric(out, d["V"]).numpy()  # [3, 3]
    width = 0.26
    for j in range(3):
        ax_bar.bar(np.arange(3) + (j - 1) * width, lam[:, j], width, color=_TOKEN_COLOURS[j], label=f"v_{tokens[j]}")
    ax_bar.set_xticks(range(3), labels=[f"o_{t}" for t in tokens])
    ax_bar.set_ylim(0, 1.22)
    ax_bar.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax_bar.set_ylabel("重心坐标（= 注意力权重）")
    ax_bar.set_title(f"最小的系数：{lam.min():.2g}（≥ 0）")
    ax_bar.legend(loc="upper center", ncol=3, frameon=False, fontsize=10, columnspacing=0.8, handlelength=1.2)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'hull_figure',
    'plot_hull',
)
