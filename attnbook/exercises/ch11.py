"""Exercises of chapter 11 (组装 Transformer). Expected values are computed, never typed in."""
from __future__ import annotations

import torch

from ..book import EncoderLayer, KVCache, MultiHeadAttention
from ._core import Expected, Mistake, exercise


@exercise("11-1", "交叉注意力权重的形状")
def _cross_shape() -> Expected:
    batch, num_heads, d_model, src_len, tgt_len = 2, 8, 512, 10, 7
    layer = MultiHeadAttention(d_model, num_heads)
    _, weights = layer(torch.zeros(batch, tgt_len, d_model), torch.zeros(batch, src_len, d_model))
    return Expected(
        value=list(weights.shape),
        atol=0,
        integer=True,
        form="一个形状（4 个整数的列表，例如 [1, 2, 3, 4]）",
        mistakes=(
            Mistake([batch, num_heads, src_len, tgt_len],
                    "行和列反了：查询来自解码器，每个目标位置占一行；键来自编码器的输出，每个源句位置占一列。"),
            Mistake([batch, num_heads, tgt_len, tgt_len],
                    "这是解码器自注意力的权重。交叉注意力的键来自编码器的输出，一共 src_len 个。"),
            Mistake([batch, num_heads, src_len, src_len],
                    "这是编码器自注意力的权重。交叉注意力的查询来自解码器，一共 tgt_len 个。"),
            Mistake([batch, tgt_len, src_len], "漏了 num_heads 那一维：每个头各有一张权重表。"),
            Mistake([batch, num_heads, tgt_len, d_model // num_heads],
                    "这是切头之后查询 Q 的形状 [batch, num_heads, tgt_len, d_k]；权重的最后一维是键的个数。"),
        ),
        explain="[batch, num_heads, tgt_len, src_len]：每个目标位置一行，每个源句位置一列，与 d_model 无关。",
    )


@exercise("11-2", "KV 缓存里存了多少个向量")
def _cache_vectors() -> Expected:
    num_layers, num_heads, d_model, n = 6, 8, 512, 100
    d_k = d_model // num_heads
    caches = [KVCache() for _ in range(num_layers)]
    for cache in caches:
        cache.append(torch.zeros(1, num_heads, n, d_k), torch.zeros(1, num_heads, n, d_k))
    vectors = sum(2 * cache.K.size(1) * cache.K.size(2) for cache in caches)  # K 和 V：头数 × 位置数
    return Expected(
        value=vectors,
        atol=0.5,
        integer=True,
        form="一个整数（向量的个数）",
        mistakes=(
            Mistake(num_layers * num_heads * n, "只数了键：每个位置还存一个值向量，K 和 V 都要缓存。"),
            Mistake(2 * num_layers * n, "漏了头数：每个头有自己的 K、V（各 d_k 维），一个位置在一层里存 2 × num_heads 个向量。"),
            Mistake(2 * num_heads * n, "只数了一层：每一层都有自己的缓存。"),
            Mistake(vectors * d_k, "这是数（标量）的个数，题目问的是 d_k 维向量的个数。"),
            Mistake(2 * num_layers * num_heads * (n + 1), "多算了一个位置：题目说每层缓存里已有 100 个位置，就数这 100 个。"),
            Mistake(2 * vectors, "多算了一倍：题目一次只生成一句话（batch = 1）；若只算了一句，检查 K、V 是不是各数了两次。"),
        ),
        explain="2 × 6 层 × 8 个头 × 100 个位置 = 9600 个 d_k = 64 维的向量（614,400 个数）。",
    )


@exercise("11-3", "一个编码器层的参数个数")
def _encoder_params() -> Expected:
    d_model, num_heads, d_ff = 512, 8, 2048
    total = sum(p.numel() for p in EncoderLayer(d_model, num_heads, d_ff).parameters())
    attention = 4 * (d_model**2 + d_model)
    ffn = 2 * d_model * d_ff + d_ff + d_model
    norms = 2 * 2 * d_model
    return Expected(
        value=total,
        atol=0.5,
        integer=True,
        form="一个整数（参数个数）",
        mistakes=(
            Mistake(attention + ffn, "漏了两个 LayerNorm：每个都有 d_model 个 γ 和 d_model 个 β。"),
            Mistake(attention + ffn + norms // 2, "编码器层有两个 LayerNorm（注意力之后一个、前馈网络之后一个），各有 γ 和 β。"),
            Mistake(4 * d_model**2 + 2 * d_model * d_ff, "漏了偏置和 LayerNorm：每个 nn.Linear 都带一组偏置。"),
            Mistake(attention, "只数了自注意力。前馈网络的两个线性层参数更多（约为注意力的两倍）。"),
            Mistake(ffn, "只数了前馈网络，别忘了自注意力的 4 个投影。"),
        ),
        explain="自注意力 1,050,624 + 前馈网络 2,099,712 + 两个 LayerNorm 2,048；头数不影响参数量。",
    )
