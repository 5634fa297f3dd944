"""Chapter 09's 找 bug exercises (09-3 … 09-7): five small attention functions with a masking bug.

Each bug has the shape of one that public code really shipped (the chapter cites the reports). The
reader's fix is judged by **behaviour**, never by its text. The task every function must solve:

    attention(Q, K, V, lengths) -> out
    Q, K, V: [batch, num_heads, seq_len, d_k]; lengths: [batch] (long). The batch is LEFT-padded:
    the last lengths[b] positions of sentence b are real tokens. Causal self-attention over the real
    tokens; a query with no visible key (a padding position in front) outputs 0, as
    F.scaled_dot_product_attention does (torch >= 2.5).

The judge runs four behavioural checks and reports every symptom it sees, in Chinese:
1. no future leakage: changing the token at position t leaves the outputs at positions < t unchanged;
2. padded keys get zero weight (weights are read by the V = identity trick of chapter 09);
3. every real query's weights sum to 1, and a fully masked query row outputs 0 (not NaN, not uniform);
4. the result equals F.scaled_dot_product_attention with the right boolean mask.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import torch
import torch.nn.functional as F

from ..book import causal_mask
from ._core import Expected, exercise

BATCH, NUM_HEADS, SEQ_LEN, D_K = 3, 2, 6, 4
LENGTHS = (6, 4, 1)
PROBE_T = 4  # the position whose token the leak test changes


def _real(lengths: torch.Tensor, seq_len: int) -> torch.Tensor:
    """Left padding: bool [batch, seq_len], True where the token is real."""
    return torch.arange(seq_len) >= seq_len - lengths[:, None]


def _keep(lengths: torch.Tensor, seq_len: int) -> torch.Tensor:
    """The intended mask, bool [batch, 1, seq_len, seq_len], True = may attend."""
    return _real(lengths, seq_len)[:, None, None, :] & causal_mask(seq_len)


def reference(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The behaviour every fix must have: SDPA with the intended boolean mask (fully masked rows -> 0)."""
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=_keep(lengths, Q.size(-2)))


def _inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    shape = (BATCH, NUM_HEADS, SEQ_LEN, D_K)
    Q, K, V = (torch.randn(shape, generator=g) for _ in range(3))
    return Q, K, V, torch.tensor(LENGTHS)


def _run(fn: Callable, *args: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        out = fn(*args)
    if isinstance(out, tuple):  # (out, attn_weights) is fine too
        out = out[0]
    return out


def judge(fn: Any) -> tuple[bool, str]:
    """Judge a fix by behaviour; return (ok, Chinese feedback naming every symptom)."""
    if not callable(fn):
        return False, f"答案应是一个函数 attention(Q, K, V, lengths)，收到的是 {type(fn).__name__}。"
    Q, K, V, lengths = _inputs()
    try:
        out = _run(fn, Q, K, V, lengths)
    except Exception as error:  # the reader's code may fail in any way
        return False, f"函数运行时报错 {type(error).__name__}：{str(error).splitlines()[0][:200]}"
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(V.shape):
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        return False, f"输出的形状应为 {tuple(V.shape)}（[batch, num_heads, seq_len, d_k]），收到 {got}。"

    real = _real(lengths, SEQ_LEN)  # [batch, seq_len]
    dead = ~_keep(lengths, SEQ_LEN).any(-1)[:, 0]  # [batch, seq_len]：一个键都不该看的查询（左侧填充位）
    symptoms = []

    # 1. 未来泄漏：改动位置 PROBE_T 的 Q、K、V，前面位置的输出不该变
    Q2, K2, V2 = Q.clone(), K.clone(), V.clone()
    g = torch.Generator().manual_seed(1)
    for t in (Q2, K2, V2):
        t[:, :, PROBE_T] = torch.randn(t[:, :, PROBE_T].shape, generator=g)
    out2 = _run(fn, Q2, K2, V2, lengths)
    diff = (out2 - out)[:, :, :PROBE_T].nan_to_num(0.0).abs()  # [batch, num_heads, PROBE_T, d_k]
    live_q = ~dead[:, None, :PROBE_T, None]  # 真实词作为查询
    change_live = (diff * live_q).max().item()
    change_dead = (diff * ~live_q).max().item()
    if change_live > 1e-5:
        symptoms.append(f"未来泄漏：改动第 {PROBE_T} 个位置的词，位置 0–{PROBE_T - 1} 的输出跟着变了（最多变了 {change_live:.2g}）；"
                        "因果掩码没起作用，或者极性反了。")
    elif change_dead > 1e-5:
        symptoms.append(f"未来泄漏只出现在整行被遮的查询（左侧填充位）上（最多变了 {change_dead:.2g}）：它们把权重平均分给了"
                        "所有键，包括未来的词；因果掩码本身没错，要把这些行置 0。")

    # 2–3. 用 V = 单位矩阵读出实际的权重（第 9 章真值表的窍门）
    eye = torch.eye(SEQ_LEN).expand(BATCH, NUM_HEADS, SEQ_LEN, SEQ_LEN)
    W = _run(fn, Q, K, eye, lengths)  # [batch, num_heads, seq_len_q, seq_len_k]
    live_rows = ~dead[:, None, :].expand(BATCH, NUM_HEADS, SEQ_LEN)
    nan_live = W.isnan().any(-1) & live_rows
    if nan_live.any():
        symptoms.append("有真实的词输出 NaN：它本该至少能看见自己，检查掩码是否把对角线也遮了。")
    W0 = W.nan_to_num(0.0)
    pad_weight = W0.masked_fill(real[:, None, None, :], 0.0).sum(-1)  # 每行落在填充键上的权重
    worst_pad = (pad_weight * live_rows).max().item()
    if worst_pad > 1e-5:
        symptoms.append(f"填充位（键）分到了权重（一行里最多 {worst_pad:.0%}）：填充掩码没有用上，或者用在了查询（行）上。")
    sums = W0.sum(-1)[live_rows]
    if not nan_live.any() and (sums - 1).abs().max().item() > 1e-4:
        symptoms.append(f"有的真实词权重之和不是 1（最小 {sums.min().item():.2g}）：它该看的键被多遮了"
                        "（例如对角线：每个词都应当看得见自己）。")
    dead_rows = dead[:, None, :].expand(BATCH, NUM_HEADS, SEQ_LEN)
    W_dead = W[dead_rows]  # [n_dead, seq_len]
    if W_dead.numel():
        if W_dead.isnan().any():
            symptoms.append("整行被遮的查询（左侧的填充位）输出了 NaN：softmax 面对一整行 −inf。"
                            "NaN 会传到下一层和梯度里；应把这些行置 0（torch.where），或者用 SDPA。")
        elif (W_dead - 1 / SEQ_LEN).abs().max().item() < 1e-5:
            symptoms.append("整行被遮的查询（左侧的填充位）把权重平均分给了所有键（−1e9 或有限大负数的后果），"
                            "于是它们看了本该屏蔽的位置；应把这些行置 0。")
        elif W_dead.abs().max().item() > 1e-6:
            symptoms.append("整行被遮的查询（左侧的填充位）应当输出 0（与 SDPA 相同），你的输出不是 0。")

    # 4. 与 SDPA 一致
    if not symptoms:
        ref = reference(Q, K, V, lengths)
        diff = (out - ref).abs().max().item()
        if diff > 1e-4:
            W_ref = reference(Q, K, eye, lengths)
            peak, peak_ref = W0[live_rows].max(-1).values.mean(), W_ref[live_rows].max(-1).values.mean()
            shape = "更平" if peak < peak_ref else "更尖"
            symptoms.append(f"掩码的行为都对，但输出与 F.scaled_dot_product_attention 相差 {diff:.2g}，"
                            f"权重比参考{shape}：检查缩放——应除以 √d_k，d_k 是每个头的维度 Q.size(-1)。")
    if symptoms:
        return False, "\n  - " + "\n  - ".join(symptoms)
    return True, "四项行为检查都通过：不看未来、不看填充位、每行和为 1（整行被遮的行为 0）、与 SDPA 一致。"


def fixed(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A correct function written out (the model answer of every bug)."""
    seq_len, d_k = Q.size(-2), Q.size(-1)
    keep = _keep(lengths, seq_len)  # [batch, 1, seq_len, seq_len]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    weights = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    weights = torch.where(keep.any(-1, keepdim=True), weights, 0.0)
    return weights @ V


TITLES = {
    "09-3": "找 bug ①：布尔掩码的极性",
    "09-4": "找 bug ②：造好了却没用上的填充掩码",
    "09-5": "找 bug ③：多头的缩放因子",
    "09-6": "找 bug ④：连对角线一起遮的因果掩码",
    "09-7": "找 bug ⑤：整行被遮的查询",
}


def _register(key: str, title: str) -> None:
    @exercise(key, title)
    def _make() -> Expected:
        return Expected(value=fixed, judge=judge)


for _key, _title in TITLES.items():
    _register(_key, _title)
