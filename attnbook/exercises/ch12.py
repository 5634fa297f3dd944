"""Exercises of chapter 12 (训练不稳定的排查清单)."""
from __future__ import annotations

import math

from ..book import lr_at
from ._core import Expected, Mistake, exercise


@exercise("12-1", "预热第 9 步的学习率")
def _warmup_lr() -> Expected:
    peak, warmup, step = 1e-2, 30, 9
    return Expected(
        value=lr_at(step, peak, warmup),
        atol=5e-5,  # 1/300 写成 0.0033（本章打印 lr_at 时就保留 4 位）也对；9/30 的 0.003 仍不对
        mistakes=(
            Mistake(peak * step / warmup, "差了一步：step 从 0 数起，第 9 步是第 10 次更新，比例是 (9+1)/30。"),
            Mistake(peak, "这是峰值学习率：预热阶段（前 30 步）的学习率要按比例缩小。"),
            Mistake(peak / warmup, "这是第 0 步的学习率；第 9 步已经升到了 10/30。"),
        ),
        explain=f"预热阶段学习率线性上升：{step + 1}/{warmup} × {peak:g} ≈ {lr_at(step, peak, warmup):.3g}。",
    )


@exercise("12-2", "SublayerConnection 是 Pre-Norm 还是 Post-Norm")
def _which_norm() -> Expected:
    return Expected(
        value="pre",
        choices=("pre", "post"),
        aliases={"pre-norm": "pre", "prenorm": "pre", "pre norm": "pre", "pre-ln": "pre",
                 "post-norm": "post", "postnorm": "post", "post norm": "post", "post-ln": "post",
                 "pre_norm": "pre", "post_norm": "post",  # 本章的中文名也算
                 "前置": "pre", "前置归一化": "pre", "后置": "post", "后置归一化": "post"},
        mistakes=(
            Mistake("post", "看 norm 作用在哪里：它包住的是子层的输入 x，残差相加之后没有再归一化。"
                            "Post-Norm 应写成 norm(x + sublayer(x))。"),
        ),
        explain="norm 在子层之前、残差相加之后不再归一化，这就是 Pre-Norm；原论文是 Post-Norm。",
    )


@exercise("12-3", "d_k = 128 时不缩放的分数标准差")
def _score_std() -> Expected:
    d_k, var = 128, 1 / 3
    return Expected(
        value=math.sqrt(d_k) * var,
        atol=0.02,
        mistakes=(
            Mistake(d_k * var * var, "这是方差 d_k·σ⁴ = 128/9；题目问的是标准差，还要开平方。"),
            Mistake(var, "这是除以 √d_k 之后的标准差；题目问的是不缩放的分数。"),
            Mistake(math.sqrt(d_k * var), "每一项是两个随机数的乘积 q_t·k_t，方差是 σ²·σ² = 1/9，不是 1/3。"),
            Mistake(math.sqrt(d_k), "这是分量方差为 1 时的结果；这里每个分量的方差是 1/3。"),
        ),
        explain=f"方差 {d_k} × (1/3)² = {d_k}/9，标准差 √{d_k} / 3 ≈ {math.sqrt(d_k) * var:.2f}。",
    )
