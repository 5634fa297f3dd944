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
        mistakes=(
            Mistake(int(causal[0].sum()), "这只是因果掩码的 True 个数：别忘了句子 0 只有 2 个真实的词，还要与填充掩码取“与”。"),
            Mistake(int(pad[0].expand(1, seq_len, seq_len).sum()),
                    "这只是填充掩码（6 行 × 2 列）：还要加上因果掩码，第 0 行看不到第 1 个词。"),
            Mistake(int((pad & strict)[0].sum()), "对角线也被遮了：因果掩码只遮严格上三角（diagonal=1），每个词能看见自己。"),
        ),
        explain="11 = 1 + 2 + 4 × 2：第 0 行只看自己，其余各行都只看前 2 个真实的词。",
    )


@exercise("09-2", "四维 padding mask 用在三维（单头）分数上的形状")
def _single_head_shape() -> Expected:
    scores = torch.zeros(2, 5, 5)  # 单头的分数 [batch, seq_len, seq_len]
    filled = scores.masked_fill(padding_mask([3, 5], 5) == 0, float("-inf"))
    return Expected(
        value=list(filled.shape),
        atol=0.5,
        mistakes=(
            Mistake([2, 5, 5], "这是你“希望”的形状。分数是三维 [2, 5, 5]，mask 是四维 [2, 1, 1, 5]，广播从右对齐，结果多出一维。"),
            Mistake([2, 1, 5, 5], "广播时分数前面补出来的 1 对上 mask 的 batch = 2，逐维取大之后那一维是 2，不是 1。"),
        ),
        explain="广播悄悄把 batch 维“翻倍”了：单头时应使用 padding_mask(...)[:, 0]，形状 [batch, 1, seq_len]。",
    )


@exercise("09-3", "KV 缓存：2 个新查询各能看到几个键")
def _kv_cache() -> Expected:
    n_cached, n_new = 4, 2
    n_keys = n_cached + n_new
    right = causal_mask(n_keys)[0, 0, -n_new:]  # 右下对齐
    top_left = torch.ones(n_new, n_keys, dtype=torch.bool).tril()  # is_causal=True 的左上对齐
    return Expected(
        value=right.sum(dim=-1).tolist(),
        atol=0.5,
        mistakes=(
            Mistake(top_left.sum(dim=-1).tolist(),
                    "这是 is_causal=True 的左上对齐：第 i 个查询只看键 0..i。新词在整句中的位置是 4 和 5。"),
            Mistake([n_keys, n_keys], "两个新词之间也要讲因果：位置 4 不能看位置 5。"),
        ),
        explain="正确的 mask 是完整因果掩码的最后 2 行：causal_mask(6)[..., -2:, :]（右下对齐）。",
    )
