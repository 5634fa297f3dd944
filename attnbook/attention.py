"""Single-head self-attention (taught in chapter 07; the chapter's `#@save` cells equal this code)."""
from __future__ import annotations

import math

import torch
import torch.nn as nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q Kᵀ / √d_k) V, written out step by step.

    Q: [..., seq_len_q, d_k]; K: [..., seq_len_k, d_k]; V: [..., seq_len_k, d_v]
    mask: broadcastable to [..., seq_len_q, seq_len_k]; 1/True = keep, 0/False = block.
    Returns (out [..., seq_len_q, d_v], attn_weights [..., seq_len_q, seq_len_k]).
    A query whose keys are all blocked gets a row of NaN (softmax over only -inf).
    """
    if Q.size(-1) != K.size(-1):
        raise ValueError(f"Q 与 K 的最后一维必须相同（都是 d_k），收到 Q: {tuple(Q.shape)}，K: {tuple(K.shape)}")
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # [..., seq_len_q, seq_len_k]
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    attn_weights = torch.softmax(scores, dim=-1)  # 每行和为 1
    out = attn_weights @ V  # [..., seq_len_q, d_v]
    return out, attn_weights


class SelfAttention(nn.Module):
    """Single-head self-attention: Q, K, V are three linear maps of the same x.

    SelfAttention(d_model, d_k=None, d_v=None); d_k and d_v default to d_model.
    forward(x [batch, seq_len, d_model], mask=None) -> (out [batch, seq_len, d_v],
    attn_weights [batch, seq_len, seq_len]).
    """

    def __init__(self, d_model, d_k=None, d_v=None):
        super().__init__()
        self.d_model = d_model
        self.d_k = d_k if d_k is not None else d_model
        self.d_v = d_v if d_v is not None else d_model
        self.W_q = nn.Linear(d_model, self.d_k)
        self.W_k = nn.Linear(d_model, self.d_k)
        self.W_v = nn.Linear(d_model, self.d_v)

    def forward(self, x, mask=None):
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x 的形状应为 [batch, seq_len, {self.d_model}]，收到 {tuple(x.shape)}")
        Q = self.W_q(x)  # [batch, seq_len, d_k]
        K = self.W_k(x)  # [batch, seq_len, d_k]
        V = self.W_v(x)  # [batch, seq_len, d_v]
        return scaled_dot_product_attention(Q, K, V, mask)
