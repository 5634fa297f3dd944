"""Exercises of chapter 04 (猫吃鱼)."""
from __future__ import annotations

import math

import torch

from ..toy import cat_eats_fish
from ._core import Expected, Mistake, exercise


def _rows(scale: float, dim: int = -1) -> torch.Tensor:
    d = cat_eats_fish()
    return torch.softmax(d["Q"] @ d["K"].T * scale, dim=dim)


@exercise("04-1", "“吃”这一行的三个注意力权重")
def _eat_row() -> Expected:
    d_k = 2
    return Expected(
        value=_rows(1 / math.sqrt(d_k))[1].tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(_rows(1.0)[1].tolist(), "看起来没有除以 √d_k = √2：先缩放分数，再做 softmax。"),
            Mistake(_rows(1 / d_k)[1].tolist(), "缩放的除数不对：像是除以了 d_k = 2，或者别的数（例如词数 3 的平方根，两者算出来几乎一样）。"
                                                "除数是 √d_k，d_k 是 q、k 的维数。"),
            Mistake(_rows(1 / math.sqrt(d_k), dim=0)[1].tolist(),
                    "softmax 做在了列上（dim=0）。每个查询的权重是一行，应沿最后一维归一化（dim=-1）。"),
            Mistake(_rows(1 / math.sqrt(d_k), dim=0)[:, 1].tolist(),
                    "你用的是“吃”的键 K[1] 去和所有查询打分；题目要“吃”作为查询：用它的 Q[1] 和所有的键打分。"),
            Mistake(_rows(1 / math.sqrt(d_k))[:, 1].tolist(),
                    "这是权重矩阵里“吃”那一列：三个查询各自分给“吃”的权重。题目要的是“吃”作为查询的那一行"
                    "（它分给猫、吃、鱼的权重），和为 1。"),
            Mistake(_rows(1 / math.sqrt(d_k))[0].tolist(),
                    "这是正文算过的“猫”那一行。“吃”是第二个词：用它的查询 Q[1]（下标从 0 数）。"),
        ),
        explain="三个权重都为正且和为 1。",
    )


@exercise("04-2", "“吃”的输出向量")
def _eat_out() -> Expected:
    d = cat_eats_fish()
    right = _rows(1 / math.sqrt(2))[1] @ d["V"]
    return Expected(
        value=right.tolist(),
        atol=1.5e-3,  # 3 位小数；“吃”那一列与不缩放的结果相差不到 0.004，容差要小于它的一半
        mistakes=(
            Mistake((_rows(1 / math.sqrt(2))[:, 1] @ d["V"]).tolist(),
                    "你用的是权重矩阵里“吃”那一列（三个查询各自分给“吃”的权重）；要用“吃”作为查询的那一行。"),
            Mistake((_rows(1.0)[1] @ d["V"]).tolist(), "权重没有除以 √2，回到上一题检查缩放。"),
            Mistake((_rows(1 / math.sqrt(2))[1] @ d["K"]).tolist(), "你加权求和的是 K；输出是 V 的加权和。"),
            Mistake((_rows(1 / math.sqrt(2))[0] @ d["V"]).tolist(),
                    "这是正文算过的“猫”的输出。换成“吃”那一行的权重（练习 04-1 的答案）。"),
        ),
        explain="输出是 V 的加权平均。",
    )


@exercise("04-3", "q、k 补 6 个 0、按 d_k = 8 缩放后“猫”对“鱼”的权重")
def _cat_fish_dk8() -> Expected:
    return Expected(
        value=float(_rows(1 / math.sqrt(8))[0, 2]),
        atol=1e-3,  # 题目要 3 位小数；d_k = 8 时各个权重挤在 0.30–0.37 之间：容差要小于相邻两种错误之差的一半
        mistakes=(
            Mistake(float(_rows(1 / math.sqrt(2))[0, 2]),
                    "补 0 确实不改变点积，可缩放因子跟着 d_k 变了：现在要除以 √8，而不是 √2。"),
            Mistake(float(_rows(1.0)[0, 2]), "你没有缩放。补 0 之后分数不变，但仍要除以 √d_k = √8。"),
            Mistake(float(_rows(1 / 8)[0, 2]), "这个数像是除以了 d_k = 8（缩放因子是 1/√d_k）；d_k = 8 时各个权重都接近 1/3，"
                                               "也可能是读错了格：题目要“猫”这一行（查询是猫）里“鱼”那一列。"),
            Mistake(float(_rows(1 / math.sqrt(8), dim=0)[0, 2]),
                    "softmax 做在了列上（dim=0）。每个查询的权重是一行，应沿最后一维归一化（dim=-1）。"),
            Mistake(float(_rows(1 / math.sqrt(8))[2, 0]),
                    "这是“鱼”对“猫”的权重（第 2 行第 0 列）：分数矩阵不对称。题目要“猫”这一行（查询是猫）里“鱼”那一列。"),
            Mistake(float(_rows(1 / math.sqrt(8))[1, 0]),
                    "这是“吃”对“猫”的权重（第 1 行第 0 列）。题目要“猫”这一行（查询是猫）里“鱼”那一列。"),
            Mistake(float(_rows(1 / math.sqrt(8))[0, 0]),
                    "这是“猫”对自己的权重（第 0 行第 0 列）；题目要这一行里“鱼”那一列。"),
            Mistake(float(_rows(1 / math.sqrt(8))[1, 2]),
                    "这是“吃”这一行（查询是吃）里的权重；题目要“猫”这一行。"),
            Mistake(float(_rows(1 / math.sqrt(6))[0, 2]),
                    "缩放的除数不对：d_k 是补 0 之后 q、k 的总维数，不是补了几个 0。"),
        ),
        explain="补 0 不改变分数，只让缩放因子变小：分布更平，最大的权重变小。",
    )
