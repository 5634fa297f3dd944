"""Sinusoidal positional encoding (taught in chapter 10)."""
from __future__ import annotations


import torch


def sinusoidal_positional_encoding(seq_len, d_model):
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(same angle).

    Returns float32 [seq_len, d_model].
    """
    if seq_len < 1 or d_model < 1:
        raise ValueError(f"seq_len 与 d_model 都应为正整数，收到 seq_len={seq_len}，d_model={d_model}")
    pos = torch.arange(seq_len, dtype=torch.float32)[:, None]  # [seq_len, 1]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # [ceil(d_model/2)]
    angle = pos / torch.pow(10000.0, two_i / d_model)  # [seq_len, ceil(d_model/2)]
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe
