"""Exercises of chapter 02 (hard and soft lookup in the library)."""
from __future__ import annotations

import torch

from ..book import soft_lookup
from ..pages.ch02 import library
from ._core import Expected, Mistake, exercise


@exercise("02-1", "温度从 1 降到 0.5，哪些书的权重变大")
def _which_grow() -> Expected:
    lib = library()
    _, before = soft_lookup(lib["q"], lib["K"], lib["V"], 1.0)
    _, after = soft_lookup(lib["q"], lib["K"], lib["V"], 0.5)
    grew = int((after > before).sum())
    return Expected(
        value={1: "A", 2: "B", 5: "C", 0: "D"}.get(grew, "?"),
        choices=("A", "B", "C", "D"),
        mistakes=(
            # 精确的判据（第 j 本书的权重变大 ⇔ s_j 高于门槛 log Z(2) − log Z(1)，Z(β) = Σ exp(β·s)）：
            # 门槛是降温途中加权平均分的平均，不是 τ = 1 时的加权平均分。
            Mistake("A", "常见的直觉是“降温只让第一名变大”。其实分数高于一个门槛的书都会变大："
                         "τ 从 1 降到 0.5 时，门槛是 log Z(2) − log Z(1)（Z(β) = Σ_j exp(β·s_j)），"
                         "也就是降温途中加权平均分的平均。把每本书的分数和这个门槛比一比。"),
            Mistake("C", "权重的和永远是 1：有书变大，就一定有书变小。分数被放大的同时，差距也被放大了。"),
            Mistake("D", "和为 1 并不意味着每一本都不变：权重会从低分的书流向高分的书。"),
        ),
        explain="分数高于门槛 log Z(2) − log Z(1)（约 1.13）的书（《深度学习》和《统计学习方法》）变大，其余变小。",
    )


@exercise("02-2", "把所有键乘以 2，权重会怎样")
def _double_keys() -> Expected:
    lib = library()
    _, doubled = soft_lookup(lib["q"], 2 * lib["K"], lib["V"], 1.0)
    _, half = soft_lookup(lib["q"], lib["K"], lib["V"], 0.5)
    return Expected(
        value="B" if torch.allclose(doubled, half) else "?",
        choices=("A", "B", "C"),
        mistakes=(
            Mistake("A", "softmax 只除以总和，抵消不了分数之间差距的放大：分数翻倍，exp 之后的比值是原来的平方。"),
            Mistake("C", "方向反了：分数乘以 2 等于除以多少？把它写成 softmax(s / τ) 的样子，看 τ 是变大还是变小。"),
        ),
        explain="q·(2k) = 2(q·k)，softmax(2s) = softmax(s / 0.5)：放大键或查询就是降温。",
    )


@exercise("02-3", "温度趋于无穷时的输出")
def _infinite() -> Expected:
    lib = library()
    best = int(torch.argmax(lib["K"] @ lib["q"]))
    return Expected(
        value=lib["V"].mean(dim=0).tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(lib["V"][best].tolist(), "这是 τ → 0 的极限（只剩最匹配的一本）；τ → ∞ 时权重趋于均匀。"),
            Mistake(lib["K"].mean(dim=0).tolist(), "你平均的是键（标签）；带回去的是值（内容）。"),
            Mistake([1 / len(lib["V"])] * len(lib["V"]),
                    "这是 5 本书的权重（各 1/5）；题目要的是输出：用这些权重对值（内容）加权求和，得到 3 个数。"),
        ),
        explain="τ 很大时所有分数除以 τ 后都接近 0，softmax 给每本书 1/5。",
    )
