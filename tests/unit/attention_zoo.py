"""Attention functions for the 找 bug judge (exercises 09-3 … 09-7): right fixes, the chapter's five bugs,
and the wrong fixes the cold reviews sent in (part3.md §3b, teacher-2x45.md §10, student-ch01-10.md).

Every function follows the exercise's contract: attention(Q, K, V, lengths), Q, K, V
[batch, num_heads, seq_len, d_k], left padding.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attnbook.book import causal_mask


def real_tokens(lengths, seq_len):  # 与第 9 章相同：左侧填充，真实的词靠右
    return torch.arange(seq_len) >= seq_len - lengths[:, None]


def keep_of(Q, lengths):
    seq_len = Q.size(-2)
    return real_tokens(lengths, seq_len)[:, None, None, :] & causal_mask(seq_len)


def softmax_rows(Q, K, keep, scale=None, fill=float("-inf")):
    scale = 1 / math.sqrt(Q.size(-1)) if scale is None else scale
    return torch.softmax((Q @ K.transpose(-2, -1) * scale).masked_fill(~keep, fill), dim=-1)


# ---- the chapter's five functions, as printed in chapters/09_masks.ipynb ------------------------------

def bug_1(Q, K, V, lengths):
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=~keep_of(Q, lengths))


def bug_2(Q, K, V, lengths):
    keep = causal_mask(Q.size(-2))
    weights = torch.where(keep.any(-1, keepdim=True), softmax_rows(Q, K, keep), 0.0)
    return weights @ V


def bug_3(Q, K, V, lengths):
    keep = keep_of(Q, lengths)
    weights = softmax_rows(Q, K, keep, scale=1 / math.sqrt(Q.size(1) * Q.size(-1)))
    return torch.where(keep.any(-1, keepdim=True), weights, 0.0) @ V


def bug_4(Q, K, V, lengths):
    seq_len = Q.size(-2)
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool))
    keep = real_tokens(lengths, seq_len)[:, None, None, :] & ~future
    return torch.where(keep.any(-1, keepdim=True), softmax_rows(Q, K, keep), 0.0) @ V


def bug_5(Q, K, V, lengths):
    return softmax_rows(Q, K, keep_of(Q, lengths)) @ V  # −∞ and nothing else: NaN rows


def tempting_5(Q, K, V, lengths):  # the chapter's tempting fix: −1e9, so dead rows are uniform
    return softmax_rows(Q, K, keep_of(Q, lengths), fill=-1e9) @ V


BUGS = {"09-3": bug_1, "09-4": bug_2, "09-5": bug_3, "09-6": bug_4, "09-7": bug_5}


# ---- right fixes (each of them must pass all five judges) -------------------------------------------

def fix_sdpa(Q, K, V, lengths):
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_of(Q, lengths))


def fix_written_out(Q, K, V, lengths):
    keep = keep_of(Q, lengths)
    return torch.where(keep.any(-1, keepdim=True), softmax_rows(Q, K, keep), 0.0) @ V


def fix_zeros_like(Q, K, V, lengths):  # part3 B3-02: crashed the old judge
    keep = keep_of(Q, lengths)
    weights = softmax_rows(Q, K, keep, fill=-1e9)
    return torch.where(keep.any(-1, keepdim=True), weights @ V, torch.zeros_like(Q))


def fix_finfo_times_any(Q, K, V, lengths):
    keep = keep_of(Q, lengths)
    return (softmax_rows(Q, K, keep, fill=torch.finfo(Q.dtype).min) * keep.any(-1, keepdim=True)) @ V


def fix_times_keep(Q, K, V, lengths):
    keep = keep_of(Q, lengths)
    return (softmax_rows(Q, K, keep, fill=-1e9) * keep) @ V


def fix_with_weights_float64(Q, K, V, lengths):
    keep = keep_of(Q, lengths)
    weights = torch.where(keep.any(-1, keepdim=True), softmax_rows(Q.double(), K.double(), keep), 0.0)
    return weights @ V.double(), weights


def fix_per_sentence(Q, K, V, lengths):
    out = torch.zeros_like(Q)
    for b, n in enumerate(lengths.tolist()):
        part = (x[b:b + 1, :, -n:] for x in (Q, K, V))
        out[b, :, -n:] = F.scaled_dot_product_attention(*part, is_causal=True)[0]
    return out


def fix_additive_sdpa(Q, K, V, lengths):
    keep = keep_of(Q, lengths)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=torch.zeros(keep.shape).masked_fill(~keep, float("-inf")))


RIGHT = (fix_sdpa, fix_written_out, fix_zeros_like, fix_finfo_times_any, fix_times_keep, fix_with_weights_float64,
         fix_per_sentence, fix_additive_sdpa)


# ---- wrong fixes the reviewers tried ------------------------------------------------------------------

def additive_then_where(Q, K, V, lengths):  # B3-01：加性 −∞（scores + M）再 torch.where 置 0：Q、K 的梯度是 NaN
    keep = keep_of(Q, lengths)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    M = torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
    return torch.where(keep.any(-1, keepdim=True), torch.softmax(scores + M, -1), 0.0) @ V


def nan_to_num_output(Q, K, V, lengths):  # teacher §10, student 09-7：输出上 nan_to_num，V 的梯度是 NaN
    return (softmax_rows(Q, K, keep_of(Q, lengths)) @ V).nan_to_num(0.0)


def neg_inf_no_zeroing(Q, K, V, lengths):
    return softmax_rows(Q, K, keep_of(Q, lengths)) @ V


def sees_itself(Q, K, V, lengths):  # 补救 1（keep | eye）：训练里可以，但不合本题约定
    keep = keep_of(Q, lengths) | torch.eye(Q.size(-2), dtype=torch.bool)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep)


def float_mask(Q, K, V, lengths):  # ① 的“看似合理的修法”：keep.float()
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_of(Q, lengths).float())


def scales_q_in_place(Q, K, V, lengths):  # B3-04：Q.mul_
    Q.mul_(1 / math.sqrt(Q.size(-1)))
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_of(Q, lengths), scale=1.0)


def leaks_last_pair(Q, K, V, lengths):  # B3-04：句子 0 的倒数第二个查询看得见最后一个键
    seq_len = Q.size(-2)
    keep = keep_of(Q, lengths).expand(Q.size(0), 1, seq_len, seq_len).clone()
    keep[0, :, seq_len - 2, seq_len - 1] = True
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep)


def sliding_window(Q, K, V, lengths):  # B3-04：窗口 3，遮多了，缩放没错
    seq_len = Q.size(-2)
    keep = keep_of(Q, lengths) & torch.ones(seq_len, seq_len, dtype=torch.bool).triu(-2)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep)


def pad_on_queries(Q, K, V, lengths):  # ② 放错了轴
    seq_len = Q.size(-2)
    keep = real_tokens(lengths, seq_len)[:, None, :, None] & causal_mask(seq_len)
    return torch.where(keep.any(-1, keepdim=True), softmax_rows(Q, K, keep), 0.0) @ V


def divide_by_d_k(Q, K, V, lengths):  # ③ 没开平方
    keep = keep_of(Q, lengths)
    return torch.where(keep.any(-1, keepdim=True), softmax_rows(Q, K, keep, scale=1 / Q.size(-1)), 0.0) @ V


def divide_by_sqrt_seq_len(Q, K, V, lengths):  # ③ 用错了维度：Q.size(-2)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_of(Q, lengths), scale=Q.size(-2) ** -0.5)


def constant_scale(Q, K, V, lengths):  # ③ 把 √d_k 写死成 2（只在 d_k = 4 时对）
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_of(Q, lengths), scale=0.5)


def first_diagonal_only(Q, K, V, lengths):  # ④ 只放开 mask[0, 0]
    seq_len = Q.size(-2)
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool))
    future[0, 0] = False
    keep = real_tokens(lengths, seq_len)[:, None, None, :] & ~future
    return torch.where(keep.any(-1, keepdim=True), softmax_rows(Q, K, keep), 0.0) @ V


def detached(Q, K, V, lengths):
    return fix_sdpa(Q, K, V, lengths).detach()
