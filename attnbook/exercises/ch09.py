"""Exercises of chapter 09 (masks). Every expected value is computed with attnbook's own masks."""
from __future__ import annotations

import torch

from ..book import causal_mask, padding_mask
from ._core import Expected, Mistake, exercise


@exercise("09-1", "填充 + 因果：句子 0 可见的 (查询, 键) 对数")
def _visible_pairs() -> Expected:
    lengths, seq_len = [2, 6], 6
    pad, causal = padding_mask(lengths, seq_len), causal_mask(seq_len)
    strict = causal & ~torch.eye(seq_len, dtype=torch.bool)
    return Expected(
        value=int((pad & causal)[0].sum()),
        atol=0.5,
        integer=True,
        form="一个整数（可见的对数）",
        mistakes=(
            Mistake(int(causal[0].sum()), "这只是因果掩码的 True 个数：别忘了句子 0 只有 2 个真实的词，还要与填充掩码取“与”。"),
            Mistake(int(pad[0].expand(1, seq_len, seq_len).sum()),
                    "这只是填充掩码（6 行 × 2 列）：还要加上因果掩码，第 0 行看不到第 1 个词。"),
            Mistake(int((pad & strict)[0].sum()), "对角线也被遮了：因果掩码只遮严格上三角（diagonal=1），每个词能看见自己。"),
        ),
        explain="11 = 1 + 2 + 4 × 2：第 0 行只看自己，其余各行都只看前 2 个真实的词。",
    )


@exercise("09-2", "左侧填充 + 因果：几个查询整行被遮")
def _left_padding_dead_rows() -> Expected:
    seq_len, length = 6, 2
    real = torch.arange(seq_len) >= seq_len - length  # 左侧填充：真实的词在最后 length 个位置
    keep = real[None, None, None, :] & causal_mask(seq_len)  # [1, 1, seq_len, seq_len]
    right = padding_mask([length], seq_len) & causal_mask(seq_len)  # 右侧填充作对照
    return Expected(
        value=int((~keep[0, 0].any(dim=-1)).sum()),
        atol=0.5,
        integer=True,
        form="一个整数（整行被遮的查询个数）",
        mistakes=(
            Mistake(int((~right[0, 0].any(dim=-1)).sum()),
                    "这是右侧填充的答案：填充位在后面，总能看到前面的真实词。左侧填充时填充位在前面。"),
            Mistake(1, "不止一行：对每个查询 i，检查它能看的键（j ≤ i）里有没有真实的词。"),
            Mistake(seq_len - length + 1, "多数了一行：第一个真实的词自己能看见谁？（因果掩码保留对角线）"),
        ),
        explain=(f"位置 0–{seq_len - length - 1} 一个键都看不到，共 {seq_len - length} 行。右侧填充时没有这样的行"
                 f"（对照：{int((~right[0, 0].any(-1)).sum())} 行）；左侧填充 + 因果时要用补救办法，见“整行被遮”一节。"),
    )
