"""Single-head self-attention (taught in chapter 07; the chapter's `#@save` cells equal this code).

Mask convention everywhere in attnbook: 1/True = keep, 0/False = block. A query whose keys are
all blocked gets a row of NaN (softmax over nothing but -inf), as in the source article.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn


def check_mask(mask: torch.Tensor, scores_shape: torch.Size) -> None:
    """mask 必须能广播到分数的形状 scores_shape，且不能把它撑大；否则抛出中文错误。

    原文的 scores = scores.masked_fill(...) 会按广播规则悄悄把分数“撑大”：[batch, 1, 1, seq_len]
    的 mask 配上单头的分数 [batch, seq_len, seq_len]，得到 [batch, batch, seq_len, seq_len]。
    """
    try:
        shape = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        shape = None
    if shape != scores_shape:
        raise ValueError(
            f"mask 的形状 {tuple(mask.shape)} 应能广播到注意力分数的形状 {tuple(scores_shape)}，"
            "而且不能让它变大。多头用 [batch, 1, 1, seq_len]（padding）或 [1, 1, seq_len, seq_len]"
            "（causal）；单头的分数少一维，要去掉 num_heads 那一维，例如 mask[:, 0]")


def scaled_dot_product_attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """缩放点积注意力 softmax(Q Kᵀ / √d_k) V，一步一步写出来。

    Q: [..., seq_len_q, d_k]；K: [..., seq_len_k, d_k]；V: [..., seq_len_k, d_v]
    （“...”是任意多个前导维，例如 [batch] 或 [batch, num_heads]）。
    mask: 能广播到 [..., seq_len_q, seq_len_k]；1/True = 保留，0/False = 屏蔽。
    返回 (out [..., seq_len_q, d_v], attn_weights [..., seq_len_q, seq_len_k])。
    某个查询的键全被屏蔽时，它那一行是 NaN（softmax 的输入全是 -inf）。
    """
    if Q.size(-1) != K.size(-1) or K.size(-2) != V.size(-2):
        raise ValueError(
            f"Q、K 的最后一维（d_k）必须相同，K、V 的倒数第二维（seq_len_k）必须相同；"
            f"收到 Q: {tuple(Q.shape)}，K: {tuple(K.shape)}，V: {tuple(V.shape)}")
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1)  # [..., seq_len_q, seq_len_k]
    scores /= math.sqrt(d_k)  # 原地缩放：不再分配一个 seq_len_q × seq_len_k 的新张量
    if mask is not None:
        check_mask(mask, scores.shape)
        scores.masked_fill_(mask == 0, float("-inf"))  # 0 = 屏蔽（同样原地修改）
    attn_weights = torch.softmax(scores, dim=-1)  # [..., seq_len_q, seq_len_k]，每行和为 1
    out = attn_weights @ V  # [..., seq_len_q, d_v]
    return out, attn_weights


class SelfAttention(nn.Module):
    """单头自注意力：Q、K、V 是同一个 x 的三个线性投影。

    SelfAttention(d_model, d_k=None, d_v=None)；d_k、d_v 不给时等于 d_model。
    forward(x [batch, seq_len, d_model], mask=None)
        -> (out [batch, seq_len, d_v], attn_weights [batch, seq_len, seq_len])；
    mask 能广播到 [batch, seq_len, seq_len]，1/True = 保留，0/False = 屏蔽。
    """

    def __init__(self, d_model: int, d_k: int | None = None, d_v: int | None = None) -> None:
        super().__init__()
        self.d_model = d_model
        self.d_k = d_k if d_k is not None else d_model
        self.d_v = d_v if d_v is not None else d_model
        self.W_q = nn.Linear(d_model, self.d_k)
        self.W_k = nn.Linear(d_model, self.d_k)
        self.W_v = nn.Linear(d_model, self.d_v)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(
                f"x 的形状应为 [batch, seq_len, {self.d_model}]，收到 {tuple(x.shape)}；"
                "只有一句话时用 x.unsqueeze(0) 补上 batch 维")
        Q = self.W_q(x)  # [batch, seq_len, d_k]
        K = self.W_k(x)  # [batch, seq_len, d_k]
        V = self.W_v(x)  # [batch, seq_len, d_v]
        return scaled_dot_product_attention(Q, K, V, mask)
