"""Exercises of chapter 06 (加权求和：凸组合)."""
from __future__ import annotations

from typing import Any

import math

import numpy as np
import torch

from ..book import in_triangle
from ..toy import cat_eats_fish
from ._answers import Unreadable, as_array, lead, shape_words, show
from ._core import Expected, Mistake, exercise

#: The four points of exercise 06-1, as the chapter states them (cells "练习 06-1" and the one below it).
CANDIDATES = ((0.1, 0.3), (0.6, 0.6), (0.4, 0.5), (0.2, 0.0))

#: Feedback for a reader who tested the per-coordinate box instead of the triangle. The box is what
#: concatenating heads that each average one slice of coordinates can reach (the product of the
#: per-slice hulls); only W_O mixing the heads with signed weights leaves it (chapter 08).
BOX_HINT = ("你检查的像是“每一维都在 V 的最小值和最大值之间”（一个矩形）。这是必要条件，不是充分条件："
            "一个头的输出还得落在三个值向量围成的三角形里，要用重心坐标判断（三个坐标都 ≥ 0）。"
            "（这个矩形正是“几个头各管一段坐标、再拼接”所能到达的范围；W_O 会给它换坐标，"
            "而要走出换了坐标之后的范围，得让几个头各自挑不同的位置，再由 W_O 把它们的贡献加起来。）")
ALL_HINT = "不是所有点都行：注意力输出是 V 的凸组合，只能落在三个值向量围成的三角形里。"


def _points_judge(points: torch.Tensor, V: torch.Tensor):
    """judge(answer) for "which of these points can be an output": by category, never by index."""
    right = in_triangle(points, V)  # [n] bool
    lo, hi = V.min(dim=0).values, V.max(dim=0).values
    in_box = ((points >= lo) & (points <= hi)).all(dim=-1)  # [n] bool
    n = len(points)
    form = f"{n} 个 0/1（1 = 能），例如 {[1, 0] * (n // 2) + [1] * (n % 2)}"

    def judge(answer: Any) -> tuple[bool, str]:
        try:
            got = as_array(answer)
        except Unreadable as reason:
            return False, f"{reason}。答案应是{lead(form)}。"
        if np.squeeze(got).shape != (n,):
            return False, f"答案应是{lead(form)}，收到的是{lead(shape_words(got.shape))}。"
        got = got.reshape(n)
        if not np.isin(got, (0.0, 1.0)).all():
            return False, f"每个点写 1（能）或 0（不能），收到了 {show(answer)}。答案应是{lead(form)}。"
        said = torch.as_tensor(got == 1.0)
        if torch.equal(said, right):
            return True, "在三角形里（重心坐标全部 ≥ 0）的点才可能是输出。"
        if bool(said.all()):
            return False, ALL_HINT
        hints = []
        too_many = said & ~right
        if torch.equal(said, in_box):
            hints.append(BOX_HINT)
        elif (too_many & in_box).any():
            k = int((too_many & in_box).sum())
            hints.append(f"有 {k} 个你判成“能”的点，每一维都在 V 这一维的范围里，却在三角形外："
                         "每一维都在范围里只是必要条件；要用重心坐标判断（三个坐标都 ≥ 0）。")
        if (too_many & ~in_box).any():
            k = int((too_many & ~in_box).sum())
            hints.append(f"有 {k} 个你判成“能”的点，某一维已经超出了 V 在这一维的最小值到最大值："
                         "权重非负、和为 1 的加权平均，不会比最大的还大、比最小的还小。")
        missed = ~said & right
        if missed.any():
            hints.append(f"有 {int(missed.sum())} 个你判成“不能”的点其实在三角形里（三个重心坐标都 > 0）："
                         "取合适的 Q、K，softmax 能给出这组权重。")
        return False, "".join(hints)

    return judge


@exercise("06-1", "哪些点能成为“猫吃鱼”的注意力输出")
def _reachable() -> Expected:
    V = cat_eats_fish()["V"]
    points = torch.tensor(CANDIDATES, dtype=V.dtype)
    return Expected(value=in_triangle(points, V).int().tolist(), atol=0.0, integer=True,
                    judge=_points_judge(points, V))


def _fish_output(temperature: float) -> torch.Tensor:
    """“鱼”在温度 temperature 下的输出 [2]（与第 6 章的 outputs_at 相同）。"""
    d = cat_eats_fish()
    scores = d["Q"][2] @ d["K"].T / (temperature * math.sqrt(d["Q"].shape[-1]))
    return torch.softmax(scores, dim=-1) @ d["V"]


@exercise("06-2", "温度趋于 0 时“鱼”的输出趋向的点")
def _fish_cold_limit() -> Expected:
    d = cat_eats_fish()
    V = d["V"]
    top = int((d["Q"][2] @ d["K"].T).argmax())  # “鱼”这一行分数最高的键：吃
    return Expected(
        value=V[top].tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(V[2].tolist(), "“鱼”这一行里分数最高的不是它自己：比一比“鱼”对三个键的分数。"),
            Mistake(_fish_output(0.02).tolist(),
                    "这是 τ = 0.02 时的输出。τ 再小下去，权重会全部集中到分数最高的那个键上。"),
            Mistake(V.mean(dim=0).tolist(),
                    "这是 τ → ∞ 的极限（均匀权重，三角形的重心）；τ → 0 时权重集中到一个键上。"),
            Mistake(V.sum(dim=0).tolist(), "这是三个值向量的和；τ → 0 时权重集中到一个键上，输出是一个顶点。"),
            Mistake(_fish_output(1.0).tolist(), "这是 τ = 1（标准注意力）时的输出；题目问的是 τ → 0 的极限。"),
        ),
        explain="τ → 0 时全部权重给分数最高的键“吃”，输出趋向顶点 v_吃。",
    )


#: 06-3 asks for a supremum: answers above it are impossible, so only [bound − 2·HALF, bound] is
#: accepted (the checker compares |answer − value| <= atol; the interval's centre is the value).
_HALF = 0.0025


@exercise("06-3", "输出两维之和 o_0 + o_1 的上界")
def _upper_bound() -> Expected:
    V = cat_eats_fish()["V"]
    sums = V.sum(dim=-1)  # 每个值向量两维之和 [3]
    bound = sums.max().item()
    return Expected(
        value=bound - _HALF,
        atol=_HALF + 1e-9,
        mistakes=(
            Mistake(V.max(dim=0).values.sum().item(),
                    "你把两维各自的最大值加在了一起：那是 V 的矩形的一个角。这两个最大值属于不同的词，"
                    "一组权重不能把全部权重同时给两个词。"),
            Mistake(V.clamp_min(0).sum().item(),
                    "你把所有正的分量都加在了一起；权重和为 1，加权平均不会超过最大的那个值。"),
            Mistake(sums.mean().item(), "这是均匀权重（重心）时的值；把权重集中到一个词上，可以更大。"),
            Mistake(V.norm(dim=-1).max().item(), "这是最长值向量的长度；题目问的是两维之和 o_0 + o_1。"),
            Mistake(V[:, 0].max().item(), "这是第 0 维单独的上界；题目问的是两维之和 o_0 + o_1。"),
            Mistake(bound + _HALF + 1e-6, "你的数比上界还大：加权平均不会超过最大的那个数，输出只能从下方逼近上界。"),
        ),
        explain="o_0 + o_1 是三个值向量各自两维之和的加权平均，上界是其中最大的（v_吃 的 0.2 + 0.7 = 0.9），"
                "只能无限逼近，因为 softmax 的权重永远大于 0。",
    )
