"""Masks (taught in chapter 09). Convention everywhere in attnbook: True/1 = keep, False/0 = block."""
from __future__ import annotations

import torch


def padding_mask(lengths, seq_len):
    """Keep the first `lengths[b]` tokens of sentence b.

    lengths: [batch] ints; returns bool [batch, 1, 1, seq_len] (broadcasts over heads and queries).
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1:
        raise ValueError(f"lengths 应为一维 [batch]，收到形状 {tuple(lengths.shape)}")
    if (lengths < 0).any() or (lengths > seq_len).any():
        raise ValueError(f"lengths 的每个值应在 0 到 seq_len={seq_len} 之间，收到 {lengths.tolist()}")
    positions = torch.arange(seq_len)  # [seq_len]
    keep = positions[None, :] < lengths[:, None]  # [batch, seq_len]
    return keep[:, None, None, :]  # [batch, 1, 1, seq_len]


def causal_mask(seq_len):
    """Query i may see keys 0..i (the diagonal stays visible).

    Returns bool [1, 1, seq_len, seq_len]: no batch dimension is needed, it broadcasts.
    """
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
    return ~future[None, None, :, :]  # [1, 1, seq_len, seq_len]
