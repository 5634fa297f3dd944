"""Multi-head self-attention (taught in chapter 08; the chapter's `#@save` cells equal this code)."""
from __future__ import annotations

import torch
import torch.nn as nn

from .attention import scaled_dot_product_attention


class MultiHeadSelfAttention(nn.Module):
    """多头自注意力：num_heads 个头，每个头 d_k = d_model // num_heads 维，所有头一次批量算完。

    forward(x [batch, seq_len, d_model], mask=None)
        -> (out [batch, seq_len, d_model], attn_weights [batch, num_heads, seq_len, seq_len])；
    mask 能广播到 [batch, num_heads, seq_len, seq_len]，1/True = 保留，0/False = 屏蔽
    （padding mask: [batch, 1, 1, seq_len]；causal mask: [1, 1, seq_len, seq_len]）。
    """

    def __init__(self, d_model: int, num_heads: int = 8) -> None:
        super().__init__()
        if not isinstance(num_heads, int) or num_heads < 1:
            raise ValueError(f"num_heads 应为正整数，收到 {num_heads!r}")
        if d_model % num_heads != 0:
            divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
            raise ValueError(
                f"d_model 必须能被 num_heads 整除：收到 d_model={d_model}，num_heads={num_heads}，"
                f"{d_model} % {num_heads} = {d_model % num_heads}。num_heads 可取 {d_model} 的因数：{divisors}")
        self.num_heads = num_heads
        self.d_model = d_model
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split_heads(self, t: torch.Tensor) -> torch.Tensor:
        """[batch, seq_len, d_model] -> [batch, num_heads, seq_len, d_k]"""
        batch, seq_len, _ = t.shape
        t = t.view(batch, seq_len, self.num_heads, self.d_k)  # 把最后一维切成 num_heads 段
        return t.transpose(1, 2)  # 头提到前面：每个头各自一张 [seq_len, d_k] 的表

    def merge_heads(self, t: torch.Tensor) -> torch.Tensor:
        """[batch, num_heads, seq_len, d_k] -> [batch, seq_len, d_model]（split_heads 的逆）"""
        batch, _, seq_len, _ = t.shape
        return t.transpose(1, 2).reshape(batch, seq_len, self.d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(
                f"x 的形状应为 [batch, seq_len, {self.d_model}]，收到 {tuple(x.shape)}；"
                "只有一句话时用 x.unsqueeze(0) 补上 batch 维")
        Q = self.split_heads(self.W_q(x))  # [batch, num_heads, seq_len, d_k]
        K = self.split_heads(self.W_k(x))  # [batch, num_heads, seq_len, d_k]
        V = self.split_heads(self.W_v(x))  # [batch, num_heads, seq_len, d_k]
        out, attn_weights = scaled_dot_product_attention(Q, K, V, mask)  # 所有头一起算
        out = self.merge_heads(out)  # [batch, seq_len, d_model]
        return self.out_proj(out), attn_weights

