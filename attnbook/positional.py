"""Sinusoidal positional encoding (taught in chapter 10; the chapter's `#@save` cell equals this code)."""
from __future__ import annotations

import torch


def sinusoidal_positional_encoding(seq_len: int, d_model: int) -> torch.Tensor:
    """正弦位置编码：PE[pos, 2i] = sin(pos / 10000^(2i/d_model))，PE[pos, 2i+1] = cos(同一角度)。

    返回 float32 [seq_len, d_model]；没有可学习参数，任意 seq_len 都能算。
    """
    for name, value in (("seq_len", seq_len), ("d_model", d_model)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"参数 {name} 应为正整数，收到 {value!r}")
    pos = torch.arange(seq_len, dtype=torch.float32)[:, None]  # [seq_len, 1]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # [ceil(d_model / 2)]：2i = 0, 2, 4, …
    angle = pos / torch.pow(10000.0, two_i / d_model)  # [seq_len, ceil(d_model / 2)]
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(angle)  # 偶数维
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])  # 奇数维（d_model 为奇数时少一列）
    return pe
