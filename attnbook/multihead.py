"""Multi-head self-attention (taught in chapter 08; the chapter's `#@save` cells equal this code)."""
from __future__ import annotations

import torch.nn as nn

from .attention import scaled_dot_product_attention


class MultiHeadSelfAttention(nn.Module):
    """num_heads heads of size d_k = d_model // num_heads, computed in one batched matmul.

    forward(x [batch, seq_len, d_model], mask=None) -> (out [batch, seq_len, d_model],
    attn_weights [batch, num_heads, seq_len, seq_len]).
    mask: 1/True = keep, 0/False = block, broadcastable to [batch, num_heads, seq_len, seq_len]
    (padding: [batch, 1, 1, seq_len]; causal: [1, 1, seq_len, seq_len]).
    """

    def __init__(self, d_model, num_heads=8):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model 必须能被 num_heads 整除：收到 d_model={d_model}，num_heads={num_heads}，"
                f"{d_model} % {num_heads} = {d_model % num_heads}")
        self.num_heads = num_heads
        self.d_model = d_model
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split_heads(self, t):
        """[batch, seq_len, d_model] -> [batch, num_heads, seq_len, d_k]"""
        batch, seq_len, _ = t.shape
        return t.view(batch, seq_len, self.num_heads, self.d_k).transpose(1, 2)

    def forward(self, x, mask=None):
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x 的形状应为 [batch, seq_len, {self.d_model}]，收到 {tuple(x.shape)}")
        batch, seq_len, _ = x.shape
        Q = self.split_heads(self.W_q(x))  # [batch, num_heads, seq_len, d_k]
        K = self.split_heads(self.W_k(x))  # [batch, num_heads, seq_len, d_k]
        V = self.split_heads(self.W_v(x))  # [batch, num_heads, seq_len, d_k]
        out, attn_weights = scaled_dot_product_attention(Q, K, V, mask)
        # 合并各头：[batch, num_heads, seq_len, d_k] -> [batch, seq_len, d_model]
        out = out.transpose(1, 2).contiguous().view(batch, seq_len, self.d_model)
        return self.out_proj(out), attn_weights
