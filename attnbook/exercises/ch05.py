"""Exercises of chapter 05 (为什么要除以 √d_k)."""
from __future__ import annotations

import math

import torch

from ..scaling import softmax_jacobian
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
        atol=1e-3,
        mistakes=(
            Mistake(1 / math.sqrt(d_model), "你用了 1/√d_model。每个头只在自己的 d_k = 768/12 = 64 维上求点积，应除以 √64。"),
            Mistake(1 / d_k, "你用了 1/d_k。标准缩放是 1/√d_k（方差是 d_k，标准差才是 √d_k）。"),
            Mistake(1 / d_model, "你用了 1/d_model：既没有按头拆分，也没有开平方。"),
            Mistake(math.sqrt(d_k), "方向反了：√d_k = 8 是除数，乘在分数上的因子是 1/8。"),
        ),
        explain="d_k = 64，因子 1/√64 = 0.125。",
    )


def _first_weight(scale: float) -> float:
    return torch.softmax(torch.tensor([4.0, 0.0, 0.0, 0.0], dtype=torch.float64) * scale, dim=-1)[0].item()


@exercise("05-3", "d_k = 16、分数 [4, 0, 0, 0] 时第一个键的权重")
def _first_key() -> Expected:
    d_k = 16
    return Expected(
        value=_first_weight(1 / math.sqrt(d_k)),
        atol=5e-3,
        mistakes=(
            Mistake(_first_weight(1.0), "这是不缩放的结果：先把分数除以 √16 = 4。"),
            Mistake(_first_weight(1 / d_k), "你除以的是 d_k = 16；缩放因子是 1/√d_k = 1/4。"),
        ),
        explain="缩放后分数是 [1, 0, 0, 0]，权重 e/(e+3)；不缩放时约 0.95，几乎 one-hot。",
    )


@exercise("05-4", "均匀分布时 softmax 雅可比矩阵的范数")
def _uniform_jacobian() -> Expected:
    jac = softmax_jacobian(torch.zeros(4, dtype=torch.float64))  # [4, 4]
    p = torch.full((4,), 0.25, dtype=torch.float64)
    return Expected(
        value=jac.norm().item(),
        atol=2e-3,
        mistakes=(
            Mistake(torch.diag(p).norm().item(), "这是 diag(p) 的范数：别忘了减去 p pᵀ。"),
            Mistake(0.0, "0 是 one-hot（饱和）时的值；均匀分布时梯度最大。"),
            Mistake((p.unsqueeze(-1) * p).norm().item(), "这是 p pᵀ 的范数：雅可比矩阵是 diag(p) − p pᵀ。"),
        ),
        explain="√3/4 ≈ 0.433。",
    )
