"""A tiny Transformer (decoder-style language model) for the experiments of Part IV.

Built from the book's own pieces: :class:`attnbook.MultiHeadSelfAttention` (chapter 08),
:func:`attnbook.causal_mask` (chapter 09) and :func:`attnbook.sinusoidal_positional_encoding`
(chapter 10). Two switches matter for chapter 11:

- ``norm="pre"`` (default) or ``"post"``: where LayerNorm sits in each block.

  * Post-Norm (the original Transformer, Vaswani et al. 2017)::

        x = LayerNorm(x + Attention(x))
        x = LayerNorm(x + FFN(x))

  * Pre-Norm (GPT-2 and most modern models; our default)::

        x = x + Attention(LayerNorm(x))
        x = x + FFN(LayerNorm(x))
        ... and one final LayerNorm before the output layer.

- ``scale=True`` (default) or ``False``: divide the scores Q Kᵀ by √d_k or not.

Usage::

    model = TinyTransformer(vocab_size=12, d_model=32, num_heads=2, num_layers=2)
    logits = model(tokens)                              # tokens [batch, seq_len] -> [batch, seq_len, vocab_size]
    logits, attn = model(tokens, return_attn=True)      # attn: num_layers × [batch, num_heads, seq_len, seq_len]
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from ._errors import fail
from .book import scaled_dot_product_attention
from .book import causal_mask
from .book import MultiHeadSelfAttention
from .book import sinusoidal_positional_encoding

__all__ = ["ScalableMultiHeadSelfAttention", "TransformerBlock", "TinyTransformer"]


class ScalableMultiHeadSelfAttention(MultiHeadSelfAttention):
    """:class:`attnbook.MultiHeadSelfAttention` with a switch for the 1/√d_k scaling.

    ``scale=True``: softmax(Q Kᵀ / √d_k) V, as in the parent class.
    ``scale=False``: softmax(Q Kᵀ) V. Q is multiplied by the buffer ``q_gain`` = √d_k before the
    book's :func:`scaled_dot_product_attention`, which cancels the division inside it
    (``q_gain`` = 1 when scale=True, an exact no-op). Keeping the switch in a buffer, not in Python
    control flow, lets :func:`attnbook.train_exp.train_runs` train both variants side by side.

    forward(x [batch, seq_len, d_model], mask=None) -> (out [batch, seq_len, d_model],
    attn_weights [batch, num_heads, seq_len, seq_len]).
    """

    def __init__(self, d_model: int, num_heads: int = 8, scale: bool = True):
        super().__init__(d_model, num_heads)
        self.scale = bool(scale)
        gain = 1.0 if self.scale else math.sqrt(self.d_k)
        self.register_buffer("q_gain", torch.tensor(gain), persistent=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x 的形状应为 [batch, seq_len, {self.d_model}]，收到 {tuple(x.shape)}")
        batch, seq_len, _ = x.shape
        Q = self.split_heads(self.W_q(x)) * self.q_gain  # [batch, num_heads, seq_len, d_k]；不缩放时乘 √d_k 抵消
        K = self.split_heads(self.W_k(x))  # [batch, num_heads, seq_len, d_k]
        V = self.split_heads(self.W_v(x))  # [batch, num_heads, seq_len, d_k]
        out, attn_weights = scaled_dot_product_attention(Q, K, V, mask)
        # 合并各头：[batch, num_heads, seq_len, d_k] -> [batch, seq_len, d_model]
        out = out.transpose(1, 2).contiguous().view(batch, seq_len, self.d_model)
        return self.out_proj(out), attn_weights


class TransformerBlock(nn.Module):
    """One block: multi-head self-attention + a two-layer FFN, each with a residual connection.

    norm="post": x = LN(x + Attn(x)); x = LN(x + FFN(x))       (Vaswani et al. 2017)
    norm="pre":  x = x + Attn(LN(x)); x = x + FFN(LN(x))       (GPT-2 and later)

    forward(x [batch, seq_len, d_model], mask=None) -> (x [batch, seq_len, d_model],
    attn_weights [batch, num_heads, seq_len, seq_len]).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm: str = "pre", scale: bool = True):
        super().__init__()
        self.norm = norm
        self.attn = ScalableMultiHeadSelfAttention(d_model, num_heads, scale=scale)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        if self.norm == "pre":
            a, attn_weights = self.attn(self.ln1(x), mask)
            x = x + a
            x = x + self.ffn(self.ln2(x))
        else:  # "post"
            a, attn_weights = self.attn(x, mask)
            x = self.ln1(x + a)
            x = self.ln2(x + self.ffn(x))
        return x, attn_weights


class TinyTransformer(nn.Module):
    """Token embedding + sinusoidal positions, ``num_layers`` blocks, a linear output layer.

    Args:
        vocab_size: number of token ids (tokens are ints in [0, vocab_size)).
        d_model: width of every vector (the book keeps it ≤ 64 for speed; any multiple of num_heads works).
        num_heads: heads per block; d_k = d_model // num_heads.
        num_layers: number of blocks.
        max_len: longest sequence accepted (size of the positional table).
        norm: "pre" (default: LayerNorm before each sub-layer, plus a final LayerNorm) or
            "post" (the original paper: LayerNorm after each residual addition).
        scale: True (default) divides scores by √d_k; False does not.
        causal: True (default) lets position i see only positions 0..i.
        d_ff: hidden width of the FFN; default 4 * d_model.

    forward(tokens [batch, seq_len] (long), mask=None, return_attn=False)
        -> logits [batch, seq_len, vocab_size],
        or (logits, [attn_weights of each layer: [batch, num_heads, seq_len, seq_len]]) if return_attn.
        ``mask`` (optional, True/1 = keep, broadcastable to [batch, num_heads, seq_len, seq_len],
        e.g. a padding mask [batch, 1, 1, seq_len]) is combined (AND) with the causal mask.
    """

    def __init__(self, vocab_size: int, d_model: int = 32, num_heads: int = 2, num_layers: int = 2,
                 max_len: int = 64, norm: str = "pre", scale: bool = True, causal: bool = True,
                 d_ff: int | None = None):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_heads", num_heads),
                            ("num_layers", num_layers), ("max_len", max_len)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise fail(name, value, "正整数")
        if d_model % num_heads != 0:
            raise fail("num_heads", num_heads, f"能整除 d_model={d_model} 的正整数（d_k = d_model // num_heads）")
        if norm not in ("pre", "post"):
            raise fail("norm", norm, '"pre"（先归一化，本书默认）或 "post"（原论文的后归一化）')
        d_ff = 4 * d_model if d_ff is None else d_ff
        if not isinstance(d_ff, int) or isinstance(d_ff, bool) or d_ff < 1:
            raise fail("d_ff", d_ff, "正整数或 None（默认 4 * d_model）")
        self.vocab_size, self.d_model, self.num_heads = vocab_size, d_model, num_heads
        self.num_layers, self.max_len, self.d_ff = num_layers, max_len, d_ff
        self.norm, self.scale, self.causal = norm, bool(scale), bool(causal)

        self.embed = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pos", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, num_heads, d_ff, norm=norm, scale=scale) for _ in range(num_layers))
        self.final_ln = nn.LayerNorm(d_model) if norm == "pre" else nn.Identity()
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor | None = None, return_attn: bool = False):
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.dtype not in (
                torch.long, torch.int, torch.int16, torch.int8, torch.uint8):
            raise fail("tokens", tokens, "整数张量 [batch, seq_len]（词的编号）")
        batch, seq_len = tokens.shape
        if seq_len > self.max_len:
            raise fail("tokens", tokens, f"长度不超过 max_len={self.max_len} 的序列（收到 seq_len={seq_len}）")
        try:
            out_of_range = bool(tokens.numel()) and bool((tokens.min() < 0) | (tokens.max() >= self.vocab_size))
        except RuntimeError:  # under torch.func.vmap a data-dependent check is not allowed: skip it
            out_of_range = False
        if out_of_range:
            raise fail("tokens", tokens, f"0 到 vocab_size-1={self.vocab_size - 1} 之间的编号")
        x = self.embed(tokens) + self.pos[:seq_len]  # [batch, seq_len, d_model]
        keep = causal_mask(seq_len).to(tokens.device) if self.causal else None  # [1, 1, seq_len, seq_len]
        if mask is not None:
            mask = mask.bool()
            keep = mask if keep is None else keep & mask
        all_weights = []
        for block in self.blocks:
            x, attn_weights = block(x, keep)  # attn_weights: [batch, num_heads, seq_len, seq_len]
            all_weights.append(attn_weights)
        logits = self.head(self.final_ln(x))  # [batch, seq_len, vocab_size]
        return (logits, all_weights) if return_attn else logits
