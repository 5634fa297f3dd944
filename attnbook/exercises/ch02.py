"""Exercises of chapter 02 (hard and soft lookup in the library)."""
from __future__ import annotations

import torch

from ..intuition import library, soft_lookup
from ._core import Expected, Mistake, exercise


@exercise("02-1", "温度 0.5 时五本书的权重")
def _weights() -> Expected:
    lib = library()
    _, right = soft_lookup(lib["q"], lib["K"], lib["V"], 0.5)
    scores = lib["K"] @ lib["q"]
    return Expected(
        value=right.tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(torch.softmax(scores * 0.5, dim=-1).tolist(), "你把分数乘以了 τ；应当除以 τ：s / 0.5 = 2s。"),
            Mistake(torch.softmax(scores, dim=-1).tolist(), "这是 τ = 1 的权重：先把分数除以 0.5 再做 softmax。"),
            Mistake((scores / scores.sum()).tolist(), "你直接按分数的比例归一化了；软查找用的是 softmax（先取指数）。"),
        ),
        explain="温度降低，最匹配的《深度学习》分到的权重变大。",
    )


@exercise("02-2", "温度 0.5 时带回去的笔记")
def _output() -> Expected:
    lib = library()
    right, weights = soft_lookup(lib["q"], lib["K"], lib["V"], 0.5)
    unnormalised = torch.exp(lib["K"] @ lib["q"] / 0.5) @ lib["V"]
    return Expected(
        value=right.tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(unnormalised.tolist(), "权重没有归一化：exp 之后要除以它们的和，让权重加起来等于 1。"),
            Mistake(lib["V"][0].tolist(), "这是硬查找（只拿最匹配的一本）的结果；软查找要对五本书的内容加权平均。"),
        ),
        explain="输出的每一维都落在五本书对应内容的最小值与最大值之间。",
    )


@exercise("02-3", "温度趋于无穷时的输出")
def _infinite() -> Expected:
    lib = library()
    best = int(torch.argmax(lib["K"] @ lib["q"]))
    return Expected(
        value=lib["V"].mean(dim=0).tolist(),
        atol=5e-3,
        mistakes=(
            Mistake(lib["V"][best].tolist(), "这是 τ → 0 的极限（只剩最匹配的一本）；τ → ∞ 时权重趋于均匀。"),
            Mistake(lib["K"].mean(dim=0).tolist(), "你平均的是键（标签）；带回去的是值（内容）。"),
        ),
        explain="τ 很大时所有分数除以 τ 后都接近 0，softmax 给每本书 1/5。",
    )
