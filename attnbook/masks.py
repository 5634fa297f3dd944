"""Masks (taught in chapter 09; the chapter's `#@save` cells equal this code).

Convention everywhere in attnbook: True/1 = keep (may be attended to), False/0 = block.
PyTorch itself is not consistent: ``F.scaled_dot_product_attention`` takes True = attend,
``nn.MultiheadAttention`` / ``nn.Transformer*`` take True = blocked (chapter 09 has the table).
"""
from __future__ import annotations

from typing import Sequence

import torch


def padding_mask(lengths: Sequence[int] | torch.Tensor, seq_len: int) -> torch.Tensor:
    """填充掩码：第 b 句只保留前 lengths[b] 个位置（True = 保留）。

    lengths: [batch]，每句的真实长度（整数，0 ≤ lengths[b] ≤ seq_len）。
    返回 bool [batch, 1, 1, seq_len]：遮的是键（最后一维），可广播到分数
    [batch, num_heads, seq_len_q, seq_len]。
    """
    if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len < 1:
        raise ValueError(f"参数 seq_len 应为正整数，收到 {seq_len!r}")
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise ValueError(f"参数 lengths 应为一维整数序列 [batch]，收到 dtype={lengths.dtype}、形状 {tuple(lengths.shape)}")
    if (lengths < 0).any() or (lengths > seq_len).any():
        raise ValueError(f"参数 lengths 的每个值应在 0 到 seq_len={seq_len} 之间，收到 {lengths.tolist()}")
    positions = torch.arange(seq_len, device=lengths.device)  # [seq_len]
    keep = positions[None, :] < lengths[:, None]  # [batch, seq_len]
    return keep[:, None, None, :]  # [batch, 1, 1, seq_len]


def causal_mask(seq_len: int) -> torch.Tensor:
    """因果掩码：查询 i 只能看键 0..i，对角线（自己）保留（True = 保留）。

    返回 bool [1, 1, seq_len, seq_len]。所有句子、所有头的因果掩码都一样，
    所以不需要 batch 维：靠广播用到 [batch, num_heads, seq_len, seq_len] 上。
    """
    if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len < 1:
        raise ValueError(f"参数 seq_len 应为正整数，收到 {seq_len!r}")
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    future = torch.triu(ones, diagonal=1)  # 严格上三角 = 未来，对角线不在其中
    return ~future[None, None, :, :]  # [1, 1, seq_len, seq_len]
