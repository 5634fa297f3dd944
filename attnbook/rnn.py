"""The slider figure of chapter 01's RNN gradient experiment.

The experiment itself (``tanh_rnn``, ``gradient_norms``, ``init_rnn``, ``measure_gradient_decay``,
``log10_mean``, ``factor_per_step``) is written in the chapter in ``#@save`` cells and imported here
from attnbook.book; this module only caches the measurements (every frame draws all scales) and draws.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

from ._errors import check_int, check_positive, fail
from .book import factor_per_step, measure_gradient_decay

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
    "WEIGHT_SCALES",
    "gradient_decay_figure",
)
