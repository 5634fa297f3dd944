"""Exercises of chapter 13 (Mask 写错会怎样)."""
from __future__ import annotations

import functools

import torch

from ..book import CharTransformer, future_influence, make_mask
from ..infra.runtime import torch_state
from ._core import Expected, Mistake, exercise


def _extra_keys(kind: str, seq_len: int) -> int:
    """How many (query, key) pairs the mask ``kind`` keeps although the correct mask blocks them."""
    wrong = make_mask(seq_len, kind)
    right = make_mask(seq_len, "correct")
    return int((wrong & ~right).sum())


@exercise("13-1", "错位一格的掩码多放进了几对（查询, 键）")
def _offset_extra() -> Expected:
    seq_len = 8
    return Expected(
        value=_extra_keys("offset", seq_len),
        atol=0,
        integer=True,
        mistakes=(
            Mistake(seq_len, "最后一个位置没有“下一格”可看：多出来的只有对角线上方那一条斜线。"),
            Mistake(_extra_keys("transposed", seq_len),
                    "这是严格上三角的全部格子，是“转置”或“没有掩码”才会放进来的数量；错位一格只多一条斜线。"),
            Mistake(int(make_mask(seq_len, "offset").sum()), "这是错位掩码保留的全部格子；题目问的是比正确掩码多出的格子。"),
        ),
        explain="多出的是紧贴对角线上方的一条斜线：(0,1), (1,2), …, (6,7)。",
    )


@exercise("13-2", "转置后的掩码有几个 True")
def _transposed_count() -> Expected:
    seq_len = 6
    mask = make_mask(seq_len, "transposed")
    return Expected(
        value=int(mask.sum()),
        atol=0,
        integer=True,
        mistakes=(
            Mistake(int(torch.triu(torch.ones(seq_len, seq_len), diagonal=1).sum()),
                    "对角线也是 True（每个位置都能看自己），别忘了把它算进去。"),
            Mistake(seq_len * seq_len, "转置后仍有一半被屏蔽，不是全部 True。"),
        ),
        explain="和正确的因果掩码一样多——所以只数 True 的个数、只看形状，都查不出转置这个错误。",
    )


@functools.lru_cache(maxsize=4)  # a model and its influence matrix: computed once per process
def _reach(num_layers: int, seq_len: int = 8) -> int:
    with torch_state(seed=0, threads=None):  # 不改动读者的全局随机状态
        model = CharTransformer(vocab_size=11, d_model=16, num_heads=2, num_layers=num_layers, max_len=seq_len,
                                mask_kind="offset")
    influence = future_influence(model, seq_len)
    i, j = torch.nonzero(influence > 1e-6, as_tuple=True)
    return int((j - i).max())


@exercise("13-3", "两层“错位一格”的模型能看到多远的未来")
def _reach_two_layers() -> Expected:
    return Expected(
        value=_reach(2),
        atol=0,
        integer=True,
        mistakes=(Mistake(_reach(1), "只有一层时是这样。第二层读到的第 i+1 个位置，自己在第一层已经看过第 i+2 个字了。"),),
        explain="每多一层，泄漏就再往前传一格：L 层错位一格的模型能看到 i+L。",
    )
