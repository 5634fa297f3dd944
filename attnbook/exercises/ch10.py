"""Exercises of chapter 10 (positional encoding). Expected values are computed, never typed in."""
from __future__ import annotations

import math

from ..book import MultiHeadSelfAttention
from ..book import sinusoidal_positional_encoding
from ._core import Expected, Mistake, exercise


@exercise("10-1", "d_model = 8 时 PE(3, 2) 的值")
def _pe_value() -> Expected:
    pos, dim, d_model = 3, 2, 8
    two_i = dim  # 第 2 维是偶数维：2i = 2
    return Expected(
        value=float(sinusoidal_positional_encoding(pos + 1, d_model)[pos, dim]),
        atol=1e-3,  # 题目要 4 位小数；两位小数的 0.30 恰好也是忘了取 sin 的角度 0.3，不能算对
        mistakes=(
            Mistake(pos / 10000 ** (two_i / d_model),
                    "0.3 是角度 pos / 10000^(2i/d_model) 本身，还没有取 sin。"
                    "若你已经取了 sin、只是四舍五入到了两位，请按题目保留 4 位小数。"),
            Mistake(math.sin(pos / 10000 ** (2 * dim / d_model)),
                    "把维度编号 2 当成了 i：公式里的指数是 2i/d_model，第 2 维对应 2i = 2，即 i = 1。"),
            Mistake(math.cos(pos / 10000 ** (two_i / d_model)), "偶数维用 sin，奇数维才用 cos。"),
            Mistake(math.sin(pos * 10000 ** (two_i / d_model)), "是除以 10000^(2i/d_model)，不是乘。"),
        ),
        explain="sin(3 / 10000^(2/8)) = sin(0.3)。",
    )


@exercise("10-2", "d_model = 2 时把 PE(pos) 变成 PE(pos + 1) 的 2×2 矩阵")
def _rotation() -> Expected:
    c, s = math.cos(1.0), math.sin(1.0)  # d_model = 2：只有一个频率 ω = 1
    return Expected(
        value=[[c, s], [-s, c]],
        atol=5e-3,  # 两位小数的手算答案（0.54、0.84）也算对
        mistakes=(
            Mistake([[c, -s], [s, c]], "矩阵的方向不对。两种情况都会得到它：按常见的 [cos, sin] 顺序写了旋转矩阵"
                                       "（PE 的顺序是 [sin, cos]），或者写的是行向量形式 PE(pos+1) = PE(pos)·M′"
                                       "（本章代码就是这样右乘的）。题目要的是 M·PE(pos)：用 "
                                       "sin(a+b) = sin a cos b + cos a sin b 逐行推一遍。"),
            Mistake([[1.0, 0.0], [0.0, 1.0]], "单位矩阵只对 k = 0 成立：位置移动 1 步，角度要加 ω·1 = 1 弧度。"),
        ),
        explain="M = [[cos 1, sin 1], [−sin 1, cos 1]]，与 pos 无关：相对位移是一个固定的旋转。",
    )


@exercise("10-3", "把位置向量拼接而不是相加：一层多头注意力的参数变成几倍")
def _concat_cost() -> Expected:
    def n_params(d: int) -> int:
        return sum(p.numel() for p in MultiHeadSelfAttention(d, num_heads=8).parameters())

    d_model = 64
    return Expected(
        value=n_params(2 * d_model) / n_params(d_model),
        # 3 位小数的答案（3.969）和两位的（3.97）都算对；容差小于 3.996 与 4 之差的一半，
        # 所以下面两个常见错误（d_model = 512 时的比值、整 4）各自得到自己的提示。
        atol=8e-4,  # 3.969 和两位小数的 3.97 都对；3.968、3.971 不对
        mistakes=(
            Mistake(2.0, "维度翻倍，但每个 d_model × d_model 的权重矩阵是平方增长的。"),
            Mistake(n_params(2 * 512) / n_params(512),
                    "这是 d_model = 512 时的比值（选读里数过的那个）。本题 d_model = 64：偏置所占的比例更大，"
                    "比值离 4 更远一些。"),
            Mistake(4.0, "很接近了：偏置只随 d_model 线性增长，所以比 4 略小一点。请算出精确的比值。"),
        ),
        explain="4 个 d×d 权重矩阵随 d 平方增长，偏置线性增长，比值略小于 4。",
    )
