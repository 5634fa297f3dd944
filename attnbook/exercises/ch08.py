"""Exercises of chapter 08 (多头注意力)."""
from __future__ import annotations

import torch

from ..book import padding_mask
from ..book import MultiHeadSelfAttention
from ._core import Expected, Mistake, exercise


@exercise("08-1", "多头注意力权重的元素个数")
def _weights_numel() -> Expected:
    batch, seq_len, d_model, num_heads = 2, 10, 512, 8
    d_k = d_model // num_heads
    _, weights = MultiHeadSelfAttention(d_model, num_heads)(torch.zeros(batch, seq_len, d_model))
    return Expected(
        value=weights.numel(),
        atol=0.5,
        integer=True,
        form="一个整数（元素个数）",
        mistakes=(
            Mistake(batch * seq_len * seq_len, "漏了 num_heads 那一维：每个头各有一张 seq_len × seq_len 的权重表。"),
            # Q 的各头 [batch, num_heads, seq_len, d_k] 与输出 out [batch, seq_len, d_model] 元素一样多（num_heads·d_k = d_model）
            Mistake(batch * num_heads * seq_len * d_k,
                    "这是 Q（各头 [batch, num_heads, seq_len, d_k]）或输出 out [batch, seq_len, d_model] 的大小；"
                    "权重的最后两维都是 seq_len：[batch, num_heads, seq_len, seq_len]。"),
        ),
        explain="[batch, num_heads, seq_len, seq_len] = 2 × 8 × 10 × 10；与 d_model、d_k 无关。",
    )


@exercise("08-2", "split_heads 之后 Q 的形状")
def _split_shape() -> Expected:
    batch, seq_len, d_model, num_heads = 2, 10, 512, 8
    d_k = d_model // num_heads
    layer = MultiHeadSelfAttention(d_model, num_heads)
    return Expected(
        value=list(layer.split_heads(torch.zeros(batch, seq_len, d_model)).shape),
        atol=0,
        integer=True,
        form="一个形状（4 个整数的列表，例如 [1, 2, 3, 4]）",
        mistakes=(
            Mistake([batch, seq_len, num_heads, d_k], "这是只做了 view 的形状；transpose(1, 2) 把 num_heads 提到第 1 维。"),
            Mistake([batch, num_heads, seq_len, d_model], "每个头只分到 d_k = d_model / num_heads = 64 维，而不是整个 d_model。"),
        ),
        explain="[batch, num_heads, seq_len, d_k]，d_k = 64。",
    )


@exercise("08-3", "省掉 transpose 时头 1 的第 2 行")
def _wrong_view() -> Expected:
    t = torch.arange(24).view(1, 3, 8)  # [batch, seq_len, d_model]
    right = t.view(1, 3, 2, 4).transpose(1, 2)
    return Expected(
        value=t.view(1, 2, 3, 4)[0, 0, 1].tolist(),
        atol=0,
        integer=True,
        form="4 个整数",
        mistakes=(
            Mistake(right[0, 0, 1].tolist(), "这是正确写法（view 再 transpose）的结果；题目问的是一步 view(1, 2, 3, 4) 得到什么。"),
            Mistake(t.view(1, 2, 3, 4)[0, 1, 0].tolist(),
                    "这是头 2 的数据（一步 view 后的下标 [0, 1, 0]，也可能是正确写法里头 2 的一行）。"
                    "题目要的是一步 view 后头 1 的第 2 行，下标 [0, 0, 1]（代码里的下标从 0 开始）。"),
        ),
        explain="这 4 个数是“猫”的后 4 维：一步 view 把不同词的数据混进了同一个头。",
    )


@exercise("08-4", "把本书的填充掩码换成 key_padding_mask")
def _key_padding() -> Expected:
    keep = padding_mask(torch.tensor([3, 5]), 5)  # [batch, 1, 1, seq_len]，True = 保留
    return Expected(
        value=(~keep[:, 0, 0, :]).tolist(),  # 布尔；错误也登记成布尔，提示才针对取反和形状
        atol=0,
        integer=True,
        squeeze=False,  # 去掉两个长度为 1 的维度正是这道题的一半
        boolean=True,  # 0/1 浮点掩码在 nn.MultiheadAttention 里是加性的，整数掩码会报错
        form="一个 [2, 5] 的布尔张量（2 行、每行 5 个 True/False）",
        mistakes=(
            Mistake(keep[:, 0, 0, :].tolist(),
                    "形状对了，但没有取反：nn.MultiheadAttention 的 key_padding_mask 里 True 表示“屏蔽”，与本书相反。"),
            Mistake((~keep).tolist(),
                    "取反对了，但形状还是 [2, 1, 1, 5]：key_padding_mask 要 [batch, seq_len]，"
                    "去掉中间两个长度为 1 的维度（keep[:, 0, 0, :]）。"),
            Mistake(keep.tolist(),
                    "还差两件事：去掉中间两个长度为 1 的维度（要 [batch, seq_len]），"
                    "再取反（key_padding_mask 里 True 表示“屏蔽”，与本书相反）。"),
        ),
        explain="nn.MultiheadAttention 的布尔掩码：True = 屏蔽。",
    )
