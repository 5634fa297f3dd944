"""Exercises of chapter 07 (从零实现单头自注意力)."""
from __future__ import annotations

import torch

from ..book import SelfAttention, scaled_dot_product_attention
from ..toy import cat_eats_fish
from ._core import Expected, Mistake, exercise


def _count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@exercise("07-1", "SelfAttention(512, d_k=64, d_v=64) 的参数个数")
def _params() -> Expected:
    d_model, d_k, d_v = 512, 64, 64
    return Expected(
        value=_count(SelfAttention(d_model, d_k=d_k, d_v=d_v)),
        atol=0.5,
        integer=True,
        form="一个整数（参数个数）",
        mistakes=(
            Mistake(2 * d_model * d_k + d_model * d_v, "你只算了权重，漏了三个 nn.Linear 各自的偏置（d_k、d_k、d_v 个）。"),
            Mistake(3 * (d_model * d_model + d_model),
                    "这是 d_k = d_v = d_model 时的个数；本题的投影只投到 64 维：nn.Linear(512, 64)。"),
            Mistake(d_model * d_k + d_k, "这只是一个投影；Q、K、V 各有一个 nn.Linear。"),
            Mistake(3 * (d_model * d_k + d_k) + (d_v * d_model + d_model),
                    "你多算了一个输出投影 W_O（nn.Linear(64, 512)）：单头的 SelfAttention 只有 W_q、W_k、W_v "
                    "三个 nn.Linear，输出投影是第 8 章多头注意力才有的。"),
        ),
        explain="三个 nn.Linear(512, 64)：3 × (512 × 64 + 64)。",
    )


@exercise("07-2", "d_k ≠ d_v 时输出与权重的形状")
def _shapes() -> Expected:
    batch, seq_len, d_model, d_k, d_v = 3, 7, 32, 8, 12
    with torch.no_grad():
        out, weights = SelfAttention(d_model, d_k=d_k, d_v=d_v)(torch.zeros(batch, seq_len, d_model))
    return Expected(
        value=[list(out.shape), list(weights.shape)],
        atol=0,
        integer=True,
        form="两个形状：[out 的形状, attn_weights 的形状]，每个形状是 3 个整数，例如 [[1, 2, 3], [1, 2, 3]]",
        mistakes=(
            Mistake([[batch, seq_len, d_model], [batch, seq_len, seq_len]],
                    "输出的最后一维不是 d_model，而是 d_v：输出是 V 的加权和。"),
            Mistake([[batch, seq_len, d_k], [batch, seq_len, seq_len]],
                    "d_k 只参与打分（Q·K），输出的最后一维由 V 决定，是 d_v。"),
            Mistake([[batch, seq_len, d_v], [batch, seq_len, d_k]],
                    "权重矩阵是“每个词对每个词”，形状是 [batch, seq_len, seq_len]，与 d_k 无关。"),
            Mistake([[batch, seq_len, seq_len], [batch, seq_len, d_v]],
                    "两个形状都对，但顺序反了：先写 out 的形状，再写 attn_weights 的形状。"),
        ),
        explain="out: [batch, seq_len, d_v]，attn_weights: [batch, seq_len, seq_len]。",
    )


@exercise("07-3", "禁止“猫”看“鱼”后“猫”的三个权重")
def _cat_no_fish() -> Expected:
    d = cat_eats_fish()
    mask = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 1, 1]])
    _, weights = scaled_dot_product_attention(d["Q"], d["K"], d["V"], mask)
    _, plain = scaled_dot_product_attention(d["Q"], d["K"], d["V"])
    dropped = plain[0].clone()
    dropped[2] = 0
    return Expected(
        value=weights[0].tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(dropped.tolist(), "你把“鱼”的权重直接删成 0，但没有重新归一化：被遮住的分数先变成 -∞，再做 softmax，剩下两个权重之和仍为 1。"),
            Mistake([0.0, 0.0, 1.0], "掩码的方向反了：本书约定 1 = 保留、0 = 屏蔽，你让“猫”只看“鱼”。"),
            Mistake(plain[0].tolist(),
                    "这就是不加掩码的权重：你的掩码没有遮住“猫”这一行（第 0 行）的“鱼”（第 2 列）。"
                    "检查掩码是不是转置了，或者 0 放错了位置。"),
        ),
        explain="被遮住的位置权重为 0，其余两个重新归一化。",
    )
