"""Exercises of chapter 06 (加权求和：凸组合)."""
from __future__ import annotations

import torch

from ..book import in_triangle
from ..toy import cat_eats_fish
from ._core import Expected, Mistake, exercise

#: The four points of exercise 06-1.
CANDIDATES = ((0.1, 0.3), (0.6, 0.6), (0.0, -0.5), (0.2, 0.0))


@exercise("06-1", "哪些点能成为“猫吃鱼”的注意力输出")
def _reachable() -> Expected:
    V = cat_eats_fish()["V"]
    points = torch.tensor(CANDIDATES, dtype=V.dtype)
    right = in_triangle(points, V).int().tolist()
    lo, hi = V.min(dim=0).values, V.max(dim=0).values
    in_box = ((points >= lo) & (points <= hi)).all(dim=-1).int().tolist()
    mistakes = [Mistake([1, 1, 1, 1], "不是所有点都行：注意力输出是 V 的凸组合，只能落在三个值向量围成的三角形里。")]
    if in_box != right:
        mistakes.append(Mistake(in_box, "你检查的是“每一维都在 V 的最小值和最大值之间”（一个矩形）。"
                                        "这是必要条件，不是充分条件：还要在三角形里，用重心坐标判断。"))
    return Expected(
        value=right,
        atol=0.0,
        mistakes=tuple(mistakes),
        explain="在三角形里（重心坐标全部 ≥ 0）的点才可能是输出。",
    )


@exercise("06-2", "温度趋于无穷时输出趋向的点")
def _centroid() -> Expected:
    V = cat_eats_fish()["V"]
    return Expected(
        value=V.mean(dim=0).tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(V.sum(dim=0).tolist(), "这是三个值向量的和；权重是 1/3，要除以 3。"),
            Mistake([0.0, 0.0], "分数趋于 0 时，权重趋于均匀（1/3），而不是输出趋于 0。"),
        ),
        explain="均匀权重下，输出是 V 的平均，也就是三角形的重心。",
    )


@exercise("06-3", "输出第 0 维的上界")
def _upper_bound() -> Expected:
    V = cat_eats_fish()["V"]
    first = V[:, 0]
    return Expected(
        value=first.max().item(),
        atol=5e-3,
        mistakes=(
            Mistake(first.clamp_min(0).sum().item(), "你把正的分量加在了一起；权重和为 1，加权平均不会超过最大的那个值。"),
            Mistake(first.mean().item(), "这是均匀权重时的值；把权重集中到第 0 维最大的那个词上，可以更大。"),
            Mistake(V.norm(dim=-1).max().item(), "这是最长值向量的长度；题目问的是第 0 维。"),
        ),
        explain="上界是 V 第 0 维的最大值（v_猫 的 0.5），只能无限逼近，因为 softmax 的权重永远大于 0。",
    )
