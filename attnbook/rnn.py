"""A tiny vanilla tanh RNN and the gradient experiment of chapter 01.

The chapter measures, with autograd, how much the last hidden state ``h_T`` still depends on an
input ``x_t`` that lies ``T - t`` steps back: the norm of the Jacobian ``∂h_T/∂x_t``. Nothing here is
a formula for that norm; every number comes from ``torch.autograd``.

``tanh_rnn`` and ``gradient_norms`` are shown in the chapter in ``#@save`` cells (the test suite
checks that both copies are identical); the other functions add input checks, seeds, caching and
plots.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import torch

from ._errors import fail
from .book import tanh_rnn, gradient_norms

#: Recurrent weight scales offered by the chapter's slider (spectral radius of W_hh ≈ scale).
WEIGHT_SCALES: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)


def _positive_int(value, arg: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise fail(arg, value, f"不小于 {minimum} 的整数")
    return int(value)


def _positive_float(value, arg: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise fail(arg, value, "正数，例如 1.0")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise fail(arg, value, "有限的正数，例如 1.0")
    return value


def init_rnn(d_in: int, d_h: int, weight_scale: float, seed: int, *, dtype: torch.dtype = torch.float64):
    """Random weights and inputs for one run of the experiment.

    W_hh has i.i.d. entries N(0, weight_scale² / d_h), so its spectral radius is close to
    ``weight_scale`` (circular law); W_xh has entries N(0, 1 / d_in).

    Returns ``(W_xh [d_in, d_h], W_hh [d_h, d_h], gen)`` where ``gen`` is the seeded generator
    (use it to draw the inputs, so that one seed fixes everything).
    """
    d_in = _positive_int(d_in, "d_in")
    d_h = _positive_int(d_h, "d_h")
    weight_scale = _positive_float(weight_scale, "weight_scale")
    seed = _positive_int(seed, "seed", minimum=0)
    gen = torch.Generator().manual_seed(seed)
    W_hh = torch.randn(d_h, d_h, generator=gen, dtype=dtype) * (weight_scale / math.sqrt(d_h))
    W_xh = torch.randn(d_in, d_h, generator=gen, dtype=dtype) / math.sqrt(d_in)
    return W_xh, W_hh, gen


@functools.lru_cache(maxsize=64)
def _measure(weight_scale: float, seeds: int, seq_len: int, d_in: int, d_h: int) -> torch.Tensor:
    rows = []
    for seed in range(seeds):
        W_xh, W_hh, gen = init_rnn(d_in, d_h, weight_scale, seed)
        X = torch.randn(seq_len, d_in, generator=gen, dtype=torch.float64)  # [seq_len, d_in]
        rows.append(gradient_norms(X, W_xh, W_hh).flip(0))  # 按距离 T - t 排列
    return torch.stack(rows)


def measure_gradient_decay(weight_scale: float, *, seeds: int = 5, seq_len: int = 60,
                           d_in: int = 8, d_h: int = 32) -> torch.Tensor:
    """‖∂h_T/∂x_t‖ for ``seeds`` random RNNs (seeds 0, 1, …), ordered by distance.

    Each seed draws its own W_xh, W_hh and inputs X ~ N(0, 1). Computed in float64 so that tiny
    gradients do not underflow to 0.

    Returns: [seeds, seq_len]; column k is the distance T - t = k (k = 0 is the last input).
    """
    weight_scale = _positive_float(weight_scale, "weight_scale")
    seeds = _positive_int(seeds, "seeds")
    seq_len = _positive_int(seq_len, "seq_len", minimum=2)
    d_in = _positive_int(d_in, "d_in")
    d_h = _positive_int(d_h, "d_h")
    return _measure(weight_scale, seeds, seq_len, d_in, d_h).clone()


def log10_mean(norms: torch.Tensor) -> torch.Tensor:
    """Average over seeds in log space (the geometric mean): [seeds, seq_len] -> [seq_len] of log10."""
    if not isinstance(norms, torch.Tensor) or norms.dim() != 2:
        raise fail("norms", norms, "二维张量 [seeds, seq_len]（measure_gradient_decay 的返回值）")
    if (norms <= 0).any():
        raise fail("norms", norms, "全为正数的梯度范数（出现了 0 或负数，无法取对数）")
    return norms.log10().mean(dim=0)


def factor_per_step(norms: torch.Tensor, *, start: int = 5) -> float:
    """How much the gradient norm is multiplied by per extra step of distance.

    A least-squares line through the seed-averaged log10 norm against the distance, from
    ``start`` on (the first few steps are transient). Returns 10 ** slope: < 1 vanishes, > 1 explodes.
    """
    y = log10_mean(norms)
    start = _positive_int(start, "start", minimum=0)
    if start > y.numel() - 2:
        raise fail("start", start, f"小于 {y.numel() - 1} 的整数（至少留两个点来拟合直线）")
    k = torch.arange(start, y.numel(), dtype=torch.float64)
    y = y[start:]
    slope = ((k - k.mean()) * (y - y.mean())).sum() / ((k - k.mean()) ** 2).sum()
    return float(10 ** slope)


def spectral_radius(weight_scale: float, *, seeds: int = 5, d_h: int = 32, d_in: int = 8) -> list[float]:
    """Largest |eigenvalue| of W_hh for each seed of the experiment (to check it is ≈ weight_scale)."""
    seeds = _positive_int(seeds, "seeds")
    out = []
    for seed in range(seeds):
        _, W_hh, _ = init_rnn(d_in, d_h, weight_scale, seed)
        out.append(float(torch.linalg.eigvals(W_hh).abs().max()))
    return out


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
    curves = {g: measure_gradient_decay(g, seeds=seeds, seq_len=seq_len).log10() for g in scales}
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
    "WEIGHT_SCALES",
    "gradient_decay_figure",
)
