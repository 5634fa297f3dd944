"""Part II, the computation: why divide by √d_k (chapter 05) and the convex hull of V (chapter 06).

Measurements are deterministic: every random draw uses its own ``torch.Generator`` seeded from
``seed`` and ``d_k``, so a function called twice with the same arguments returns the same numbers
and does not disturb the global random state. Figure functions are pure: parameters in, a
matplotlib ``Figure`` (or ``Axes``) out; they never call ``plt.show()``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ._errors import check_bool, check_int, check_positive, fail
from .book import barycentric, entropy, softmax_jacobian
from .toy import cat_eats_fish

#: The d_k values of chapter 05's sweeps and slider: 1, 2, 4, …, 1024.
D_K_GRID: tuple[int, ...] = tuple(2 ** i for i in range(11))
#: Colours (tab10, colour-blind-safe pair) and markers: scaled vs. unscaled.
COLOR_SCALED, COLOR_UNSCALED = "#1f77b4", "#ff7f0e"
MARKER_SCALED, MARKER_UNSCALED = "o", "s"
#: A row whose softmax Jacobian has a norm below this is counted as "almost no gradient".
TINY_GRADIENT = 1e-2
#: How chapter 05's tables name the two settings (scaled = False / True).
SCALE_NAMES = {False: "不缩放", True: "除以 √d_k"}
_MAX_D_K = 65_536


# ----------------------------------------------------------------------------------------------
# argument checks (Chinese messages: argument, value received, what was expected)
# ----------------------------------------------------------------------------------------------
def _positive_int(value: Any, arg: str, *, upper: int | None = None) -> int:
    value = check_int(value, arg, hint="，例如 64")
    if upper is not None:
        check_int(value, arg, maximum=upper, hint="（太大会耗尽内存）")
    return value


_check_bool = check_bool


def _check_seed(seed: Any) -> int:
    return check_int(seed, "seed", minimum=0, hint="，例如 0")


def _check_d_k_values(d_k_values: Any) -> list[int]:
    if isinstance(d_k_values, (str, bytes)) or not hasattr(d_k_values, "__iter__"):
        raise fail("d_k_values", d_k_values, "一串正整数，例如 [1, 2, 4, 8]")
    values = list(d_k_values)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= _MAX_D_K:
            raise fail("d_k_values", d_k_values, f"一串 1 到 {_MAX_D_K} 之间的整数（其中 {v!r} 不符合）")
    values = [int(v) for v in values]
    if not values:
        raise fail("d_k_values", d_k_values, "至少包含一个 d_k 的列表")
    return values


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


# ----------------------------------------------------------------------------------------------
# chapter 05: measurements
# ----------------------------------------------------------------------------------------------
def _generator(seed: int, d_k: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 100_003 + d_k)


def random_qk(d_k: int, *, n_rows: int = 400, seq_len: int = 10, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random queries and keys whose entries are independent N(0, 1), float64.

    Returns ``(q, K)``: ``q`` is ``[n_rows, d_k]`` (one query per row) and ``K`` is
    ``[n_rows, seq_len, d_k]`` (the keys that query looks at). Same arguments, same numbers.
    """
    d_k = _positive_int(d_k, "d_k", upper=_MAX_D_K)
    n_rows = _positive_int(n_rows, "n_rows", upper=100_000)
    seq_len = _positive_int(seq_len, "seq_len", upper=4096)
    seed = _check_seed(seed)
    if n_rows * seq_len * d_k > 20_000_000:
        raise fail("n_rows", n_rows, f"更小的数：n_rows × seq_len × d_k 不应超过 2×10⁷（现在 d_k={d_k}，seq_len={seq_len}）")
    g = _generator(seed, d_k)
    q = torch.randn(n_rows, d_k, generator=g, dtype=torch.float64)
    K = torch.randn(n_rows, seq_len, d_k, generator=g, dtype=torch.float64)
    return q, K


def attention_logits(q: torch.Tensor, K: torch.Tensor, *, scaled: bool = True) -> torch.Tensor:
    """What softmax receives: ``K q`` (unscaled) or ``K q / √d_k`` (scaled).

    q: ``[n_rows, d_k]``; K: ``[n_rows, seq_len, d_k]``. Returns ``[n_rows, seq_len]``.
    """
    scaled = _check_bool(scaled, "scaled")
    if not isinstance(q, torch.Tensor) or q.dim() != 2:
        raise fail("q", q, "二维张量 [n_rows, d_k]")
    if not isinstance(K, torch.Tensor) or K.dim() != 3 or K.shape[0] != q.shape[0] or K.shape[2] != q.shape[1]:
        raise fail("K", K, f"三维张量 [n_rows={q.shape[0]}, seq_len, d_k={q.shape[1]}]，与 q 的形状对应")
    scores = (K @ q.unsqueeze(-1)).squeeze(-1)  # [n_rows, seq_len]
    return scores / math.sqrt(q.shape[-1]) if scaled else scores


@dataclass(frozen=True)
class RowStats:
    """Random attention rows at one ``d_k``, scaled or not (all tensors float64).

    logits, attn_weights: ``[n_rows, seq_len]``; max_weight, entropy, jacobian_norm: ``[n_rows]``
    (``jacobian_norm`` = Frobenius norm of ∂softmax/∂logits of that row, from autograd).
    """

    d_k: int
    scaled: bool
    logits: torch.Tensor
    attn_weights: torch.Tensor
    max_weight: torch.Tensor
    entropy: torch.Tensor
    jacobian_norm: torch.Tensor


@functools.lru_cache(maxsize=64)
def _row_stats(d_k: int, scaled: bool, n_rows: int, seq_len: int, seed: int) -> RowStats:
    q, K = random_qk(d_k, n_rows=n_rows, seq_len=seq_len, seed=seed)
    logits = attention_logits(q, K, scaled=scaled)
    attn_weights = torch.softmax(logits, dim=-1)
    jac = softmax_jacobian(logits)
    return RowStats(d_k=d_k, scaled=scaled, logits=logits, attn_weights=attn_weights,
                    max_weight=attn_weights.max(dim=-1).values, entropy=entropy(attn_weights),
                    jacobian_norm=jac.flatten(1).norm(dim=1))


def row_stats(d_k: int, *, scaled: bool, n_rows: int = 400, seq_len: int = 10, seed: int = 0) -> RowStats:
    """Draw :func:`random_qk`, form the logits, the softmax rows and their Jacobians. Cached."""
    return _row_stats(_positive_int(d_k, "d_k", upper=_MAX_D_K), _check_bool(scaled, "scaled"),
                      _positive_int(n_rows, "n_rows", upper=100_000),
                      _positive_int(seq_len, "seq_len", upper=4096), _check_seed(seed))


def saturation_table(d_k_values: Sequence[int] = D_K_GRID, *, n_rows: int = 400, seq_len: int = 10,
                     seed: int = 0):
    """The slider's copy of chapter 05's table, built from the chapter's ``entropy`` and
    ``softmax_jacobian`` (attnbook.book); one line per (d_k, 缩放方式), the same columns as the chapter:

    ``d_k``, ``缩放方式`` ("不缩放" / "除以 √d_k"), ``分数标准差``, ``最大权重`` (mean over rows), ``熵``
    (mean, nats), ``梯度中位数``, ``梯度 25% 分位``, ``梯度 75% 分位`` (quantiles of the per-row Jacobian
    norm), ``梯度均值``, ``几乎无梯度的行`` (share of rows with norm < ``TINY_GRADIENT``).
    Returns a pandas DataFrame (tests/unit/test_part2.py checks it against the chapter's loop).
    """
    import pandas as pd

    values = _check_d_k_values(d_k_values)
    lines = []
    for d_k in values:
        for scaled in (False, True):
            s = row_stats(d_k, scaled=scaled, n_rows=n_rows, seq_len=seq_len, seed=seed)
            q25, q50, q75 = torch.quantile(s.jacobian_norm, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
            lines.append({
                "d_k": d_k, "缩放方式": SCALE_NAMES[scaled], "分数标准差": s.logits.std().item(),
                "最大权重": s.max_weight.mean().item(), "熵": s.entropy.mean().item(),
                "梯度中位数": q50.item(), "梯度 25% 分位": q25.item(), "梯度 75% 分位": q75.item(),
                "梯度均值": s.jacobian_norm.mean().item(),
                "几乎无梯度的行": (s.jacobian_norm < TINY_GRADIENT).double().mean().item(),
            })
    return pd.DataFrame(lines)


# ----------------------------------------------------------------------------------------------
# chapter 05: figures
# ----------------------------------------------------------------------------------------------
def _axes(ax, figsize):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _log2_axis(ax, d_k_values: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(d_k_values), labels=[str(v) for v in d_k_values])
    ax.minorticks_off()
    ax.set_xlabel("d_k")


def _plain_log_y(ax) -> None:
    """Log y axis with plain tick labels ("0.01", "1e-5"): no mathtext, so no "−" glyph and faster drawing."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    ax.set_yscale("log")
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _pos: f"{v:g}" if v >= 1e-3 else f"1e{math.log10(v):.0f}"))


def plot_variance(d_k_values: Sequence[int], var_unscaled: Sequence[float], var_scaled: Sequence[float], *, ax=None):
    """Measured Var(q·k) against d_k (points) with the theory line ``d_k``; scaled points near 1.

    All three sequences have one value per d_k. Returns the ``Axes``.
    """
    values = _check_d_k_values(d_k_values)
    for arg, seq in (("var_unscaled", var_unscaled), ("var_scaled", var_scaled)):
        if len(seq) != len(values):
            raise fail(arg, seq, f"{len(values)} 个数（每个 d_k 一个）")
    ax = _axes(ax, (5.2, 3.4))
    ax.plot(values, values, color="0.4", lw=1, ls="--", label="理论：方差 = d_k")
    ax.plot(values, [1.0] * len(values), color="0.4", lw=1, ls=":", label="理论：方差 = 1")
    ax.plot(values, var_unscaled, MARKER_UNSCALED, color=COLOR_UNSCALED, label="实测：q·k")
    ax.plot(values, var_scaled, MARKER_SCALED, color=COLOR_SCALED, label="实测：q·k / √d_k")
    ax.set_yscale("log", base=2)
    y_ticks = [2 ** e for e in range(0, int(math.log2(max(values))) + 1, 2)]
    ax.set_yticks(y_ticks, labels=[str(v) for v in y_ticks])
    _log2_axis(ax, values)
    ax.set_ylabel("点积的方差")
    ax.set_title("点积的方差随 d_k 线性增长；缩放后保持在 1 附近")
    ax.legend(loc="upper left", frameon=False)
    return ax


def _check_table(table: Any) -> None:
    needed = {"d_k", "缩放方式", "最大权重", "熵"}
    columns = set(getattr(table, "columns", []))
    if not needed <= columns:
        raise fail("table", type(table).__name__, f"第 5 章的饱和表格（需要列 {sorted(needed)}）")


def plot_saturation(table: Any, *, seq_len: int = 10):
    """Two panels against d_k: the mean largest weight and the mean row entropy, scaled vs. unscaled.

    table: the DataFrame of :func:`saturation_table`. Returns the ``Figure``.
    """
    import matplotlib.pyplot as plt

    _check_table(table)
    seq_len = _positive_int(seq_len, "seq_len")
    fig, (ax_max, ax_ent) = plt.subplots(1, 2, figsize=(8.4, 3.2), layout="constrained")
    for scaled, colour, marker, label in ((False, COLOR_UNSCALED, MARKER_UNSCALED, "不缩放"),
                                          (True, COLOR_SCALED, MARKER_SCALED, "除以 √d_k")):
        part = table[table["缩放方式"] == SCALE_NAMES[scaled]]
        ax_max.plot(part["d_k"], part["最大权重"], marker=marker, color=colour, label=label)
        ax_ent.plot(part["d_k"], part["熵"], marker=marker, color=colour, label=label)
    values = sorted(set(int(v) for v in table["d_k"]))
    ax_max.axhline(1.0, color="0.4", lw=1, ls="--")
    ax_max.axhline(1 / seq_len, color="0.4", lw=1, ls=":")
    ax_max.text(values[0], 1.0, " one-hot", va="bottom", fontsize=8, color="0.3")
    ax_max.text(values[0], 1 / seq_len, f" 均匀 1/{seq_len}", va="bottom", fontsize=8, color="0.3")
    ax_max.set_ylim(0, 1.1)
    ax_max.set_ylabel("一行中最大的权重（平均）")
    ax_max.set_title("最大权重：越接近 1 越像 one-hot")
    ax_ent.axhline(math.log(seq_len), color="0.4", lw=1, ls=":")
    ax_ent.text(values[0], math.log(seq_len), f" 均匀 log {seq_len}", va="bottom", fontsize=8, color="0.3")
    ax_ent.set_ylim(0, math.log(seq_len) * 1.15)
    ax_ent.set_ylabel("一行的熵（nats，平均）")
    ax_ent.set_title("熵：越接近 0 越像 one-hot")
    for ax in (ax_max, ax_ent):
        _log2_axis(ax, values)
        ax.legend(loc="center right", frameon=False)
    return fig


def plot_gradients(table: Any, *, ax=None, highlight: tuple[int, bool] | None = None):
    """Median (line) and quartiles (band) of ‖∂softmax/∂logits‖ per row against d_k, log scale.

    table: the DataFrame of :func:`saturation_table`. highlight: ``(d_k, scaled)`` to mark
    with a large dot (the slider uses it). Returns the ``Axes``.
    """
    _check_table(table)
    if not {"梯度中位数", "梯度 25% 分位", "梯度 75% 分位"} <= set(table.columns):
        raise fail("table", type(table).__name__, "带梯度列（梯度中位数、梯度 25% 分位、梯度 75% 分位）的饱和表格")
    ax = _axes(ax, (5.2, 3.4))
    for scaled, colour, marker, label in ((False, COLOR_UNSCALED, MARKER_UNSCALED, "不缩放"),
                                          (True, COLOR_SCALED, MARKER_SCALED, "除以 √d_k")):
        part = table[table["缩放方式"] == SCALE_NAMES[scaled]]
        ax.fill_between(part["d_k"], part["梯度 25% 分位"], part["梯度 75% 分位"], color=colour, alpha=0.2, lw=0)
        ax.plot(part["d_k"], part["梯度中位数"], marker=marker, color=colour, label=f"{label}（中位数）",
                ms=4 if highlight else 6)
    if highlight is not None:
        d_k, scaled = highlight
        row = table[(table["d_k"] == d_k) & (table["缩放方式"] == SCALE_NAMES.get(scaled))]
        if len(row) != 1:
            raise fail("highlight", highlight, "表格中存在的 (d_k, scaled) 组合")
        ax.plot(row["d_k"], row["梯度中位数"], "o", ms=11, mfc="none", mec="black", mew=2)
    _plain_log_y(ax)
    ax.set_ylim(1e-7, 1.5)
    _log2_axis(ax, sorted(set(int(v) for v in table["d_k"])))
    ax.set_ylabel("softmax 雅可比矩阵的范数")
    ax.set_title("梯度大小（阴影：25%–75% 的行）")
    ax.legend(loc="lower left", frameon=False)
    return ax


@functools.lru_cache(maxsize=4)
def _slider_table(n_rows: int, seq_len: int, seed: int):
    return saturation_table(D_K_GRID, n_rows=n_rows, seq_len=seq_len, seed=seed)


def scaling_figure(d_k: int, scaled: bool, *, table: Any = None, logits_by: dict | None = None,
                   n_rows: int = 400, seq_len: int = 10, seed: int = 0):
    """The chapter-05 slider: for one d_k, scaled or not, three panels.

    table, logits_by: the chapter's saturation table (with the gradient columns) and its
    ``{(d_k, "不缩放" | "除以 √d_k"): logits [n_rows, seq_len]}``; the chapter passes both (with
    functools.partial) so the slider draws exactly what the chapter computed. Without them the
    figure computes the same numbers itself (:func:`saturation_table`, :func:`row_stats`).

    Left: the distribution of the logits fed to softmax (fixed axis, so the width is comparable
    across frames). Middle: one softmax row (``seq_len`` bars). Right: the gradient size against
    d_k (all of :data:`D_K_GRID`) with the current setting circled. Returns the ``Figure``.
    (Fixed margins instead of constrained layout: this figure is drawn 22 times per page.)
    """
    import matplotlib.pyplot as plt

    d_k = _positive_int(d_k, "d_k", upper=_MAX_D_K)
    if d_k not in D_K_GRID:
        raise fail("d_k", d_k, f"D_K_GRID 中的值之一：{list(D_K_GRID)}")
    scaled = _check_bool(scaled, "scaled")
    if logits_by is not None:
        logits_all = logits_by[d_k, SCALE_NAMES[scaled]]
    else:
        logits_all = row_stats(d_k, scaled=scaled, n_rows=n_rows, seq_len=seq_len, seed=seed).logits
    if table is None:
        table = _slider_table(n_rows, seq_len, seed)
    _check_table(table)
    seq_len = logits_all.shape[-1]
    line = table[(table["d_k"] == d_k) & (table["缩放方式"] == SCALE_NAMES[scaled])]
    colour = COLOR_SCALED if scaled else COLOR_UNSCALED
    fig, (ax_hist, ax_row, ax_grad) = plt.subplots(1, 3, figsize=(9.6, 3.0),
                                                   gridspec_kw={"width_ratios": [1.1, 1.0, 1.2]})
    fig.subplots_adjust(left=0.065, right=0.99, bottom=0.17, top=0.8, wspace=0.34)

    limit = 100.0
    logits = logits_all.flatten().clamp(-limit, limit).numpy()
    ax_hist.hist(logits, bins=np.linspace(-limit, limit, 51), color=colour, histtype="stepfilled",
                 weights=np.full(logits.shape, 1 / logits.size))
    ax_hist.set_xlim(-limit, limit)
    _plain_log_y(ax_hist)
    ax_hist.set_ylim(1e-4, 1.5)
    ax_hist.set_xlabel("送进 softmax 的分数")
    ax_hist.set_ylabel("所占比例")
    ax_hist.set_title(f"分数分布：标准差 {logits_all.std().item():.1f}")

    row = torch.softmax(logits_all[0], dim=-1).numpy()
    ax_row.bar(range(seq_len), row, color=colour)
    ax_row.axhline(1 / seq_len, color="0.4", lw=1, ls=":")
    ax_row.set_ylim(0, 1.05)
    ax_row.set_xticks(range(seq_len))
    ax_row.set_xlabel("键的位置")
    ax_row.set_ylabel("权重")
    ax_row.set_title(f"一行 softmax：最大权重 {row.max():.2f}")

    plot_gradients(table, ax=ax_grad, highlight=(d_k, scaled))
    ax_grad.set_xticks([1, 4, 16, 64, 256, 1024], labels=["1", "4", "16", "64", "256", "1024"])
    ax_grad.set_title(f"梯度：中位数 {line['梯度中位数'].item():.1e}")
    ax_grad.legend(loc="lower left", frameon=False, fontsize=7)
    fig.suptitle(f"d_k = {d_k}，{'除以 √d_k' if scaled else '不缩放'}"
                 f"（{logits_all.shape[0]} 个随机查询，每个看 {seq_len} 个键）", fontsize=11)
    return fig


# ----------------------------------------------------------------------------------------------
# chapter 06: convex combinations
# ----------------------------------------------------------------------------------------------
def _check_triangle(triangle: Any) -> torch.Tensor:
    t = _as_tensor(triangle, "triangle", "三个二维顶点 [3, 2]")
    if t.shape != (3, 2):
        raise fail("triangle", triangle, "形状为 [3, 2] 的张量（三个顶点，每个是二维向量）")
    edges = t[1:] - t[0]
    area2 = (edges[0, 0] * edges[1, 1] - edges[0, 1] * edges[1, 0]).abs().item()
    if area2 < 1e-12:
        raise fail("triangle", triangle, "三个不共线的顶点（现在三点几乎在一条直线上，三角形面积为 0）")
    return t.to(torch.float64)


def _check_points(points: Any, arg: str = "points") -> tuple[torch.Tensor, bool]:
    p = _as_tensor(points, arg, "二维点 [2] 或一组二维点 [n, 2]")
    if p.dim() == 1 and p.shape[0] == 2:
        return p.unsqueeze(0).to(torch.float64), True
    if p.dim() == 2 and p.shape[1] == 2:
        return p.to(torch.float64), False
    raise fail(arg, points, "形状为 [2] 或 [n, 2] 的张量（二维平面上的点）")


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
        ax.legend(loc="lower left", frameon=False, fontsize=9, handletextpad=0.2, borderaxespad=0.2)
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
    fig, (ax_tri, ax_bar) = plt.subplots(1, 2, figsize=(7.6, 3.4), gridspec_kw={"width_ratios": [1.1, 1.0]})
    fig.subplots_adjust(left=0.09, right=0.99, bottom=0.14, top=0.91, wspace=0.3)  # fixed margins: faster than constrained
    plot_hull(d["V"], out, labels=tokens, ax=ax_tri, trails=_hull_trails(), title=f"温度 τ = {temperature:g}")
    lam = barycentric(out, d["V"]).numpy()  # [3, 3]
    width = 0.26
    for j in range(3):
        ax_bar.bar(np.arange(3) + (j - 1) * width, lam[:, j], width, color=_TOKEN_COLOURS[j], label=f"v_{tokens[j]} 的系数")
    ax_bar.set_xticks(range(3), labels=[f"o_{t}" for t in tokens])
    ax_bar.set_ylim(0, 1.22)
    ax_bar.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax_bar.set_ylabel("重心坐标（= 注意力权重）")
    ax_bar.set_title(f"最小的系数：{lam.min():.2g}（≥ 0）")
    ax_bar.legend(loc="upper center", ncol=3, frameon=False, fontsize=8, columnspacing=0.8, handlelength=1.2)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "D_K_GRID",
    "plot_gradients",
    "plot_saturation",
    "plot_variance",
    "random_qk",
    "scaling_figure",
    "hull_figure",
    "plot_hull",
)
