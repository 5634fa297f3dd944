"""Chapter 05 (为什么除以 √d_k): the measurements behind the slider and the chapter's figures.

Measurements are deterministic: every random draw uses its own ``torch.Generator`` seeded from
``seed`` and ``d_k``, so a function called twice with the same arguments returns the same numbers
and does not disturb the global random state. The taught code (``entropy``, ``softmax_jacobian``)
is written in the chapter's ``#@save`` cells and imported from attnbook.book. Figure functions are
pure: parameters in, a matplotlib ``Figure`` (or ``Axes``) out; they never call ``plt.show()``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ..book import entropy, softmax_jacobian
from ..infra.errors import check_bool, check_int, fail


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


# ---------------------------------------------------------------------------------------------
# argument checks (Chinese messages: argument, value received, what was expected)
# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# measurements
# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------------------------
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
    fig, (ax_max, ax_ent) = plt.subplots(1, 2, figsize=(6.9, 3.4), layout="constrained")
    for scaled, colour, marker, label in ((False, COLOR_UNSCALED, MARKER_UNSCALED, "不缩放"),
                                          (True, COLOR_SCALED, MARKER_SCALED, "除以 √d_k")):
        part = table[table["缩放方式"] == SCALE_NAMES[scaled]]
        ax_max.plot(part["d_k"], part["最大权重"], marker=marker, color=colour, label=label)
        ax_ent.plot(part["d_k"], part["熵"], marker=marker, color=colour, label=label)
    values = sorted(set(int(v) for v in table["d_k"]))
    ax_max.axhline(1.0, color="0.4", lw=1, ls="--")
    ax_max.axhline(1 / seq_len, color="0.4", lw=1, ls=":")
    ax_max.text(values[0], 1.0, " 独热", va="bottom", fontsize=10, color="0.3")
    ax_max.text(values[0], 1 / seq_len, f" 均匀 1/{seq_len}", va="bottom", fontsize=10, color="0.3")
    ax_max.set_ylim(0, 1.1)
    ax_max.set_ylabel("一行中最大的权重（平均）")
    ax_max.set_title("最大权重：越接近 1 越像独热")
    ax_ent.axhline(math.log(seq_len), color="0.4", lw=1, ls=":")
    ax_ent.text(values[0], math.log(seq_len), f" 均匀 log {seq_len}", va="bottom", fontsize=10, color="0.3")
    ax_ent.set_ylim(0, math.log(seq_len) * 1.15)
    ax_ent.set_ylabel("一行的熵（nats，平均）")
    ax_ent.set_title("熵：越接近 0 越像独热")
    for ax in (ax_max, ax_ent):
        _log2_axis(ax, values[::2] if len(values) > 6 else values)  # every other d_k: 10 pt labels fit
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
    ax.set_title("softmax 对分数的梯度 ‖J‖（阴影：25%–75% 的行）")
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

    Top left: the distribution of the logits fed to softmax (fixed axis, so the width is comparable
    across frames). Top right: one softmax row (``seq_len`` bars). Bottom: the gradient size against
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
    # Two rows, 6.9 in wide: shown at its natural size in the page's column, so its 10 pt text
    # stays 10 pt (tests/site/test_layout.py).
    fig = plt.figure(figsize=(6.9, 5.6))
    grid = fig.add_gridspec(2, 2, left=0.1, right=0.98, bottom=0.09, top=0.88, wspace=0.42, hspace=0.62)
    ax_hist, ax_row, ax_grad = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])

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
    ax_grad.set_title(f"对分数的梯度 ‖J‖：中位数 {line['梯度中位数'].item():.1e}")
    ax_grad.legend(loc="lower left", frameon=False, fontsize=10)
    fig.suptitle(f"d_k = {d_k}，{'除以 √d_k' if scaled else '不缩放'}"
                 f"（{logits_all.shape[0]} 个随机查询，每个看 {seq_len} 个键）", fontsize=11)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'D_K_GRID',
    'plot_gradients',
    'plot_saturation',
    'plot_variance',
    'random_qk',
    'scaling_figure',
)
