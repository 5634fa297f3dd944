"""Exercises of chapter 03 (Q, K, V projections, shapes, permutation)."""
from __future__ import annotations

import torch

from ..book import SelfAttention
from ..infra.runtime import torch_state
from ._core import Expected, Mistake, exercise


def _layer(d_model: int = 16, d_k: int = 8, d_v: int = 12) -> SelfAttention:
    with torch_state(seed=0, threads=None):  # 不改动读者的全局随机状态
        return SelfAttention(d_model, d_k=d_k, d_v=d_v)


@exercise("03-1", "输出的形状")
def _shape() -> Expected:
    seq_len, d_model, d_k, d_v = 7, 16, 8, 12
    out, attn_weights = _layer(d_model, d_k, d_v)(torch.zeros(1, seq_len, d_model))
    return Expected(
        value=list(out.shape[1:]),
        atol=0.1,
        integer=True,
        form="一个形状（2 个整数的列表，例如 [3, 4]）",
        mistakes=(
            Mistake([seq_len, d_k], "输出是 V 的加权和，最后一维是 d_v，不是 d_k。"),
            Mistake(list(attn_weights.shape[1:]), "这是注意力权重 attn_weights 的形状 [seq_len, seq_len]；输出还要再乘 V。"),
            Mistake([seq_len, d_model], "这一层的输出维度由 W_v 决定，是 d_v，不一定等于 d_model。"),
            Mistake([1, seq_len, d_v], "题目不算批量（batch）那一维：只写 [seq_len, d_v] 这两个数。"),
        ),
        explain="形状 [seq_len, d_v]：每个词一行，每行 d_v 个数。",
    )


@exercise("03-2", "三个投影矩阵的参数个数（不含偏置）")
def _params() -> Expected:
    layer = _layer()
    weights = sum(p.numel() for name, p in layer.named_parameters() if name.endswith("weight"))
    everything = sum(p.numel() for p in layer.parameters())
    return Expected(
        value=weights,
        atol=0.1,
        integer=True,
        form="一个整数（权重的个数）",
        mistakes=(
            Mistake(3 * 16 * 16, "你假设了 d_k = d_v = d_model = 16；这里 W_q、W_k 是 16×8，W_v 是 16×12。"),
            Mistake(everything, "你把偏置也算进去了；题目只数三个权重矩阵。"),
            Mistake(3 * 16 * 8, "W_v 的形状是 [d_model, d_v] = 16×12，不是 16×8。"),
        ),
        explain="d_model × (2·d_k + d_v)。",
    )


@exercise("03-3", "打乱词序后“我”的输出去了哪一行")
def _where() -> Expected:
    perm = torch.tensor([1, 2, 0])  # 新位置 k 放原来的第 perm[k] 个词：我打你 -> 打你我
    return Expected(
        value=int((perm == 0).nonzero()[0, 0]),
        atol=0.1,
        integer=True,
        form="一个整数（行号，从 0 数起）",
        mistakes=(Mistake(int(perm[0]), "perm[0] 是新位置 0 上放的原词下标；要找原来第 0 个词（我）去了哪个新位置，"
                                         "应在 perm 里找值为 0 的位置。"),
                  Mistake(0, "0 是“我”在原句里的行号。打乱之后，每个词的输出跟着这个词一起搬家："
                             "先写出“打你我”每个新位置上是哪个词，再找“我”。"),),
        explain="输出跟着输入一起重排：谁搬到哪里，它的输出就出现在哪里。",
    )
