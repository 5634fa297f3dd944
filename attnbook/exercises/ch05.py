"""Exercises of chapter 05 (为什么要除以 √d_k)."""
from __future__ import annotations

import math

import torch

from ._core import Expected, Mistake, exercise


@exercise("05-1", "d_k = 256 时不缩放的点积标准差")
def _std_256() -> Expected:
    d_k = 256
    return Expected(
        value=math.sqrt(d_k),
        atol=0.05,
        mistakes=(
            Mistake(float(d_k), "256 是方差；题目问的是标准差，要开平方。"),
            Mistake(1.0, "1 是除以 √d_k 之后的方差（或标准差）；题目问的是不缩放的情况。"),
        ),
        explain="方差 = d_k，标准差 = √d_k，维度翻 4 倍，典型分数大小翻 2 倍。",
    )


@exercise("05-2", "BERT-base（d_model=768，12 个头）的缩放因子")
def _bert_scale() -> Expected:
    d_model, num_heads = 768, 12
    d_k = d_model // num_heads
    return Expected(
        value=1 / math.sqrt(d_k),
        atol=6e-3,  # 两位小数的 0.12 / 0.13 也对；最近的错误答案（1/√768 ≈ 0.036）远在外面
        mistakes=(
            Mistake(1 / math.sqrt(d_model), "你用了 1/√d_model。每个头只在自己的 d_k 维上求点积：先算出每个头的 d_k。"),
            Mistake(1 / d_k, "你用了 1/d_k。标准缩放是 1/√d_k（方差是 d_k，标准差才是 √d_k）。"),
            Mistake(1 / d_model, "你用了 1/d_model：既没有按头拆分，也没有开平方。"),
            Mistake(math.sqrt(d_k), "方向反了：√d_k 是分数要除以的数，题目问的是乘在分数上的因子。"),
        ),
        explain="d_k = 64，因子 1/√64 = 0.125。",
    )


def _first_weight(scale: float) -> float:
    return torch.softmax(torch.tensor([4.0, 0.0, 0.0, 0.0], dtype=torch.float64) * scale, dim=-1)[0].item()


@exercise("05-3", "d_k = 16、分数 [4, 0, 0, 0] 时第一个键的权重")
def _first_key() -> Expected:
    d_k = 16
    scaled, unscaled, by_d_k = _first_weight(1 / math.sqrt(d_k)), _first_weight(1.0), _first_weight(1 / d_k)
    ask_both = "题目问了两件事，请交两个数：[缩放后的权重, 不缩放时的权重]。"
    return Expected(
        value=[scaled, unscaled],
        atol=5e-3,
        form="两个数：[缩放后的权重, 不缩放时的权重]",
        mistakes=(
            Mistake([unscaled, scaled], "两个数的顺序反了：先写缩放后的权重，再写不缩放时的。"),
            Mistake([by_d_k, unscaled], "第一个数除以的是 d_k = 16；缩放因子是 1/√d_k = 1/4。"),
            Mistake([unscaled, unscaled], "第一个数也没有缩放：先把分数除以 √16 = 4，再做 softmax。"),
            Mistake(scaled, "缩放后的权重对了。" + ask_both),
            Mistake(unscaled, "这是不缩放的结果，先把分数除以 √16 = 4。" + ask_both),
            Mistake(by_d_k, "你除以的是 d_k = 16；缩放因子是 1/√d_k = 1/4。" + ask_both),
        ),
        explain="缩放后分数是 [1, 0, 0, 0]，权重 e/(e+3)；不缩放时约 0.95，几乎是独热。",
    )


@exercise("05-4", "哪一行 softmax 的雅可比矩阵范数最大：均匀、两键并列还是独热")
def _largest_jacobian() -> Expected:
    rows = torch.tensor([[0.0, 0.0, 0.0, 0.0], [10.0, 10.0, -10.0, -10.0], [20.0, 0.0, 0.0, 0.0]],
                        dtype=torch.float64)
    p = torch.softmax(rows, dim=-1)
    norms = (torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)).flatten(1).norm(dim=1)  # [3]
    a, b, c = norms.tolist()
    return Expected(
        value="ABC"[int(norms.argmax())],
        choices=("A", "B", "C"),
        mistakes=(
            Mistake("A", f"很多人以为“权重最平 = 梯度最大”，其实不然：均匀的 4 个键 ‖J‖ = √3/4 ≈ {a:.3f}，"
                         "权重摊得越平，每个键分到的梯度越小。"
                         "用 ‖J‖² = S₂ − 2S₃ + S₂² 把其余几行也算一算再比。"),
            Mistake("C", f"独热正是饱和：J = diag(p) − p pᵀ 几乎是零矩阵（‖J‖ ≈ {c:.1e}），梯度传不回去。"),
        ),
        explain=f"两个键并列时 ‖J‖ = {b:.2f}，比均匀分布的 {a:.3f} 还大；独热时为 0。",
    )
