"""Exercises of chapter 08 (多头注意力)."""
from __future__ import annotations

import torch

from ..book import padding_mask
from ..book import MultiHeadSelfAttention
from ._core import Expected, Mistake, exercise


@exercise("08-1", "MultiHeadSelfAttention(512, 8) 的参数个数")
def _params() -> Expected:
    d_model, num_heads = 512, 8
    linear = d_model * d_model + d_model
    return Expected(
        value=sum(p.numel() for p in MultiHeadSelfAttention(d_model, num_heads).parameters()),
        atol=0.5,
        mistakes=(
            Mistake(3 * linear, "你数了 Q、K、V 三个投影，漏了输出投影 out_proj（W_o）。"),
            Mistake(4 * d_model * d_model, "你只算了权重，漏了四个 nn.Linear 的偏置（各 512 个）。"),
            Mistake(num_heads * 4 * linear,
                    "每个头并没有一套完整的 512×512 投影：所有头共用一个 nn.Linear(512, 512)，各取其中 64 列。"),
        ),
        explain="4 × (512² + 512)；头数不改变参数量。",
    )


@exercise("08-2", "split_heads 之后 Q 的形状")
def _split_shape() -> Expected:
    batch, seq_len, d_model, num_heads = 2, 10, 512, 8
    d_k = d_model // num_heads
    layer = MultiHeadSelfAttention(d_model, num_heads)
    return Expected(
        value=list(layer.split_heads(torch.zeros(batch, seq_len, d_model)).shape),
        atol=0,
        mistakes=(
            Mistake([batch, seq_len, num_heads, d_k], "这是只做了 view 的形状；transpose(1, 2) 把 num_heads 提到第 1 维。"),
            Mistake([batch, num_heads, seq_len, d_model], "每个头只分到 d_k = d_model / num_heads = 64 维，而不是整个 d_model。"),
        ),
        explain="[batch, num_heads, seq_len, d_k]，d_k = 64。",
    )


@exercise("08-3", "省掉 transpose 时“头 0”的第 1 行")
def _wrong_view() -> Expected:
    t = torch.arange(24).view(1, 3, 8)  # [batch, seq_len, d_model]
    right = t.view(1, 3, 2, 4).transpose(1, 2)
    return Expected(
        value=t.view(1, 2, 3, 4)[0, 0, 1].tolist(),
        atol=0,
        mistakes=(
            Mistake(right[0, 0, 1].tolist(), "这是正确写法（view 再 transpose）的结果；题目问的是一步 view(1, 2, 3, 4) 得到什么。"),
        ),
        explain="这 4 个数是“猫”的后 4 维：一步 view 把不同词的数据混进了同一个头。",
    )


@exercise("08-4", "把本书的 padding mask 换成 key_padding_mask")
def _key_padding() -> Expected:
    keep = padding_mask(torch.tensor([3, 5]), 5)  # [batch, 1, 1, seq_len]，True = 保留
    return Expected(
        value=(~keep[:, 0, 0, :]).float().tolist(),
        atol=0,
        mistakes=(
            Mistake(keep[:, 0, 0, :].float().tolist(),
                    "形状对了，但没有取反：nn.MultiheadAttention 的 key_padding_mask 里 True 表示“屏蔽”，与本书相反。"),
        ),
        explain="nn.MultiheadAttention 的布尔 mask：True = 屏蔽。",
    )
