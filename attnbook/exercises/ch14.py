"""Exercises of chapter 14 (注意力可视化)."""
from __future__ import annotations

import torch

from ..book import js_divergence, previous_token_score
from ..pages.ch14 import exercise_attention
from ._core import Expected, Mistake, exercise


@exercise("14-1", "一个 6×6 注意力矩阵的前一词得分")
def _previous_token() -> Expected:
    A = exercise_attention()
    below = torch.diagonal(A, offset=-1)
    return Expected(
        value=float(previous_token_score(A)),
        atol=5e-3,
        mistakes=(
            Mistake(float(below.sum() / A.shape[0]), "分母应是 5 而不是 6：第 0 个查询前面没有词，不参与平均。"),
            Mistake(float(torch.diagonal(A).mean()), "你取的是主对角线（每个词看自己）；前一个词在主对角线正下方，offset=-1。"),
            Mistake(float(torch.diagonal(A, offset=1).mean()), "offset=+1 是主对角线上方，那是“未来”，因果矩阵里全是 0。"),
        ),
        explain="这个矩阵的大部分权重确实落在前一个词上。",
    )


@exercise("14-2", "两个注意力分布的 JS 散度（比特）")
def _js() -> Expected:
    p = torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64)
    q = torch.tensor([0.1, 0.2, 0.7], dtype=torch.float64)
    bits = float(js_divergence(p, q))
    return Expected(
        value=bits,
        atol=5e-3,
        mistakes=(
            Mistake(bits * float(torch.log(torch.tensor(2.0))), "这是用自然对数算的结果；题目要以 2 为底（torch.log2）。"),
            Mistake(float((p * torch.log2(p / q)).sum()), "这是 KL(p‖q)。JS 要先求平均分布 m = (p+q)/2，再对 m 算两次 KL。"),
            Mistake(2 * bits, "少乘了 ½：JS = ½ KL(p‖m) + ½ KL(q‖m)。"),
        ),
        explain="以 2 为底时 JS 在 0 到 1 之间。",
    )


@exercise("14-3", "完美归纳头看哪个位置")
def _induction_target() -> Expected:
    P, L, t = 3, 5, 10
    return Expected(
        value=t - L + 1,
        atol=0.0,
        integer=True,
        form="一个整数（位置，从 0 数起）",
        mistakes=(
            Mistake(t - L, "位置 5 是同一个字母上一次出现的地方；归纳头要的是它后面那个字母。"),
            Mistake(t - 1, "看前一个位置是前一词头的行为，不是归纳头。"),
            Mistake(P + 1, "不是固定看片段开头：目标随查询位置一起移动，是 t - L + 1。"),
        ),
        explain="那个位置上的字母，正是第二遍里的下一个字母。",
    )
