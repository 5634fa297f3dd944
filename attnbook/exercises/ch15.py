"""Exercises of chapter 15 (什么时候不值得用自注意力)."""
from __future__ import annotations

from ..book import attention_flops, score_matrix_bytes
from ._core import Expected, Mistake, exercise


@exercise("15-1", "n = 2048、d = 64 时全注意力的 FLOPs")
def _flops() -> Expected:
    n, d = 2048, 64
    return Expected(
        value=float(attention_flops(n, d)),
        atol=0.5,
        integer=True,
        form="一个整数（FLOPs，精确值）",
        mistakes=(
            Mistake(float(2 * n * n * d), "这只是 QKᵀ 的 FLOPs；权重乘 V 还要同样多。"),
            Mistake(float(2 * n * n * d // 2), "这是 QKᵀ 的乘加次数。一次乘加算 2 FLOPs，而且还要加上乘 V 的部分。"),
            Mistake(float(n * n), "这是词对数 n²；每一对还要做 d 次乘加。"),
        ),
        explain="约 1.07 × 10⁹ FLOPs，其中一半在 QKᵀ，一半在乘 V。",
    )


@exercise("15-2", "批 8、12 头、n = 4096 的注意力权重占多少 MiB")
def _memory() -> Expected:
    n = 4096
    mib = 2**20
    return Expected(
        value=score_matrix_bytes(n, batch=8, num_heads=12) / mib,
        atol=0.5,
        mistakes=(
            Mistake(score_matrix_bytes(n, batch=8) / mib, "忘了乘头数 12：每个头都有自己的 n × n 权重。"),
            Mistake(score_matrix_bytes(n, num_heads=12) / mib, "忘了乘批大小 8：每条序列都有自己的权重。"),
            Mistake(score_matrix_bytes(n, batch=8, num_heads=12, bytes_per_value=2) / mib, "float32 每个数 4 字节，不是 2 字节。"),
            Mistake(score_matrix_bytes(n, batch=8, num_heads=12) / 1e6, "这是以 10⁶ 字节（MB）为单位；题目要 MiB，即 2²⁰ 字节。"),
            Mistake(score_matrix_bytes(n, batch=8, num_heads=12, bytes_per_value=1) / mib, "忘了乘每个 float32 的 4 字节。"),
            Mistake(score_matrix_bytes(n, batch=8, num_heads=12) / 2**30, "单位不对：题目要 MiB（2²⁰ 字节），你给的像是 GiB（2³⁰ 字节）。"),
        ),
        explain="6144 MiB = 6 GiB，而且这只是一层。",
    )


@exercise("15-3", "d_model = 512 时注意力核心追上线性部分的 n")
def _crossover() -> Expected:
    d = 512
    return Expected(
        value=24 * d**2 / (4 * d),
        atol=0.5,
        integer=True,
        form="一个整数（序列长度 n）",
        mistakes=(
            Mistake(8 * d**2 / (4 * d), "这是只和 4 个投影（8nd²）比的交点；题目里线性部分还包括前馈层，共 24nd²。"),
            Mistake(24 * d**2 / (2 * d), "注意力核心是 4n²d（QKᵀ 和乘 V 各 2n²d），不是 2n²d。"),
            Mistake(float(d), "交点不是 d：令 4n²d = 24nd²，得 n = 6d。"),
        ),
        explain="n = 6d；更短的序列里，线性层比注意力核心更贵。",
    )
