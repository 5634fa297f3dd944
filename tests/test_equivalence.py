"""The book's attention equals PyTorch's: F.scaled_dot_product_attention and nn.MultiheadAttention.

Random shapes (batch, seq_len, d_model, num_heads), no mask / padding / causal / combined /
arbitrary per-sentence masks, float32 and float64. Masks follow the book's convention
(True = keep); nn.MultiheadAttention takes True = blocked, so every mask is inverted explicitly.

Fully masked rows are not equal across implementations, and the tests pin down what each does
(see chapter 07/09): ours gives NaN (-inf + softmax, as the article); SDPA gives a zero row;
nn.MultiheadAttention, outside its inference fast path (these tests run it in training mode with
autograd on), gives NaN when it returns weights and a zero attention output (so the layer's output
equals out_proj.bias) when need_weights=False; the fast path gives NaN whatever need_weights is
(tests/unit/test_reference_attention.py).
"""
from __future__ import annotations

import pytest
import torch

from attnbook.infra.runtime import torch_state
import torch.nn as nn
import torch.nn.functional as F

import attnbook
from attnbook import MultiHeadSelfAttention, SelfAttention, scaled_dot_product_attention

# (batch, seq_len, d_model, num_heads): tiny, odd, prime-length, many heads, d_k = 1 …
SHAPES = [
    (1, 1, 8, 1),
    (2, 5, 16, 4),
    (3, 7, 24, 3),
    (1, 13, 12, 6),
    (4, 16, 32, 8),
    (2, 31, 64, 16),
    (3, 9, 10, 10),
    (5, 24, 48, 2),
]
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12)}
MASKS = ["none", "padding", "causal", "padding+causal", "random"]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The tensors are tiny: one thread avoids waiting on a busy second core (the suite stays fast)."""
    with torch_state(threads=1):
        yield


def shape_id(shape):
    return "b{}-L{}-d{}-h{}".format(*shape)


def make_pair(d_model: int, num_heads: int, dtype: torch.dtype, seed: int = 0):
    """Our layer and nn.MultiheadAttention with the same weights (and biases)."""
    torch.manual_seed(seed)
    ours = MultiHeadSelfAttention(d_model, num_heads).to(dtype)
    ref = nn.MultiheadAttention(d_model, num_heads, batch_first=True, dtype=dtype)
    with torch.no_grad():
        for linear in (ours.W_q, ours.W_k, ours.W_v, ours.out_proj):  # non-zero biases: they must be copied too
            linear.bias.uniform_(-0.5, 0.5)
        ref.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    return ours, ref


def make_mask(kind: str, batch: int, seq_len: int, *, allow_empty: bool = False, seed: int = 1):
    """A mask in the book's convention (True = keep), broadcastable to [batch, num_heads, L, L].

    Unless allow_empty, every query keeps at least one key (no fully masked row).
    """
    g = torch.Generator().manual_seed(seed)
    low = 0 if allow_empty else 1
    lengths = torch.randint(low, seq_len + 1, (batch,), generator=g)
    lengths[0] = seq_len  # at least one full sentence
    if kind == "none":
        return None
    if kind == "padding":
        return attnbook.padding_mask(lengths, seq_len)  # [batch, 1, 1, L]
    if kind == "causal":
        return attnbook.causal_mask(seq_len)  # [1, 1, L, L]
    if kind == "padding+causal":
        return attnbook.padding_mask(lengths, seq_len) & attnbook.causal_mask(seq_len)  # [batch, 1, L, L]
    if kind == "random":
        keep = torch.rand(batch, 1, seq_len, seq_len, generator=g) < 0.6
        if not allow_empty:
            keep |= torch.eye(seq_len, dtype=torch.bool)  # everyone sees itself
        return keep  # [batch, 1, L, L]
    raise ValueError(kind)


def to_mha_kwargs(mask: torch.Tensor | None, batch: int, num_heads: int, seq_len: int) -> dict:
    """Book mask (True = keep) -> nn.MultiheadAttention's arguments (True = blocked)."""
    if mask is None:
        return {}
    if mask.shape == (batch, 1, 1, seq_len):  # padding only: the natural key_padding_mask
        return {"key_padding_mask": ~mask[:, 0, 0, :]}  # [batch, L]
    if mask.shape == (1, 1, seq_len, seq_len):  # the same for every sentence
        return {"attn_mask": ~mask[0, 0]}  # [L, L]
    full = mask.expand(batch, num_heads, seq_len, seq_len)  # per sentence: [batch * num_heads, L, L]
    return {"attn_mask": ~full.reshape(batch * num_heads, seq_len, seq_len)}


def heads_of(layer: MultiHeadSelfAttention, x: torch.Tensor):
    """Q, K, V of our layer, each [batch, num_heads, seq_len, d_k]."""
    return (layer.split_heads(layer.W_q(x)), layer.split_heads(layer.W_k(x)), layer.split_heads(layer.W_v(x)))


def fully_masked_rows(mask: torch.Tensor, batch: int, num_heads: int, seq_len: int) -> torch.Tensor:
    """bool [batch, num_heads, seq_len]: queries that may see no key at all."""
    return ~mask.expand(batch, num_heads, seq_len, seq_len).any(dim=-1)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_multihead_equals_nn_multiheadattention(shape, kind, dtype):
    batch, seq_len, d_model, num_heads = shape
    ours, ref = make_pair(d_model, num_heads, dtype)
    torch.manual_seed(2)
    x = torch.randn(batch, seq_len, d_model, dtype=dtype)
    mask = make_mask(kind, batch, seq_len)
    out, weights = ours(x, mask)
    assert out.shape == (batch, seq_len, d_model) and out.dtype == dtype
    assert weights.shape == (batch, num_heads, seq_len, seq_len)
    ref_out, ref_weights = ref(x, x, x, average_attn_weights=False, **to_mha_kwargs(mask, batch, num_heads, seq_len))
    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(weights, ref_weights, **TOL[dtype])
    torch.testing.assert_close(weights.sum(-1), torch.ones(batch, num_heads, seq_len, dtype=dtype), **TOL[dtype])
    if mask is not None:
        assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_attention_function_equals_sdpa(shape, kind, dtype):
    batch, seq_len, d_model, num_heads = shape
    ours, _ = make_pair(d_model, num_heads, dtype)
    torch.manual_seed(3)
    x = torch.randn(batch, seq_len, d_model, dtype=dtype)
    Q, K, V = heads_of(ours, x)
    mask = make_mask(kind, batch, seq_len, seed=4)
    out, _ = scaled_dot_product_attention(Q, K, V, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), **TOL[dtype])
    if mask is not None:  # the same mask as SDPA's additive float mask: 0 = keep, -inf = block
        additive = torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, float("-inf"))
        torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, attn_mask=additive), **TOL[dtype])
    if kind == "causal":
        torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, is_causal=True), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("d_k, d_v", [(None, None), (4, 8), (12, 3)])
def test_single_head_equals_sdpa(d_k, d_v, dtype):
    torch.manual_seed(5)
    layer = SelfAttention(16, d_k=d_k, d_v=d_v).to(dtype)
    x = torch.randn(3, 6, 16, dtype=dtype)
    keep = attnbook.padding_mask([6, 4, 1], 6)[:, 0]  # single head: [batch, 1, seq_len]
    for mask in (None, keep, attnbook.causal_mask(6)[0, 0], keep & attnbook.causal_mask(6)[0]):
        out, weights = layer(x, mask)
        assert out.shape == (3, 6, layer.d_v) and weights.shape == (3, 6, 6)
        Q, K, V = layer.W_q(x), layer.W_k(x), layer.W_v(x)
        torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(3, 6, 16, 4), (4, 9, 24, 3)], ids=shape_id)
def test_fully_masked_rows_documented_behaviour(shape, dtype):
    """Empty sentences (length 0) and a causal mask that also blocks the diagonal."""
    batch, seq_len, d_model, num_heads = shape
    ours, ref = make_pair(d_model, num_heads, dtype)
    torch.manual_seed(6)
    x = torch.randn(batch, seq_len, d_model, dtype=dtype)
    lengths = torch.tensor([seq_len, 0] + [seq_len // 2] * (batch - 2))  # sentence 1 is empty
    blind = ~torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=0)  # query 0 sees nothing
    mask = attnbook.padding_mask(lengths, seq_len) & blind[None, None]  # [batch, 1, L, L]
    dead = fully_masked_rows(mask, batch, num_heads, seq_len)  # [batch, num_heads, L]
    assert dead[1].all() and dead[:, :, 0].all() and not dead.all()

    # ours: NaN exactly on the fully masked rows, finite elsewhere (weights and per-head outputs)
    Q, K, V = heads_of(ours, x)
    heads_out, weights = scaled_dot_product_attention(Q, K, V, mask)
    assert torch.isnan(weights[dead]).all() and torch.isnan(heads_out[dead]).all()
    assert torch.isfinite(weights[~dead]).all() and torch.isfinite(heads_out[~dead]).all()
    out, layer_weights = ours(x, mask)
    assert torch.isnan(out[dead[:, 0]]).all() and torch.isfinite(out[~dead[:, 0]]).all()
    torch.testing.assert_close(layer_weights, weights, equal_nan=True)

    # SDPA (this torch): a zero row where every key is blocked, the same as ours elsewhere
    sdpa = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
    assert (sdpa[dead] == 0).all()
    torch.testing.assert_close(sdpa[~dead], heads_out[~dead], **TOL[dtype])

    # nn.MultiheadAttention (training mode, no fast path): NaN with need_weights=True; zero attention output
    # (= out_proj.bias) without
    kwargs = to_mha_kwargs(mask, batch, num_heads, seq_len)
    ref_out, ref_weights = ref(x, x, x, average_attn_weights=False, **kwargs)
    assert torch.isnan(ref_weights[dead]).all() and torch.isnan(ref_out[dead[:, 0]]).all()
    torch.testing.assert_close(ref_out[~dead[:, 0]], out[~dead[:, 0]], **TOL[dtype])
    torch.testing.assert_close(ref_weights[~dead], weights[~dead], **TOL[dtype])
    fast_out, _ = ref(x, x, x, need_weights=False, **kwargs)
    torch.testing.assert_close(fast_out[dead[:, 0]], ref.out_proj.bias.expand_as(fast_out[dead[:, 0]]), **TOL[dtype])
    torch.testing.assert_close(fast_out[~dead[:, 0]], out[~dead[:, 0]], **TOL[dtype])


def test_eval_fast_path_and_gradients_agree():
    """nn.MultiheadAttention's fused inference path (eval + no_grad) and the gradients match ours."""
    ours, ref = make_pair(32, 4, torch.float64, seed=7)
    torch.manual_seed(8)
    x = torch.randn(3, 10, 32, dtype=torch.float64)
    mask = attnbook.padding_mask([10, 7, 3], 10)
    with torch.no_grad():
        ours.eval()
        ref.eval()
        fast, _ = ref(x, x, x, key_padding_mask=~mask[:, 0, 0, :], need_weights=False)
        torch.testing.assert_close(ours(x, mask)[0], fast, **TOL[torch.float64])
    ours.train()
    ref.train()
    x1 = x.clone().requires_grad_(True)
    x2 = x.clone().requires_grad_(True)
    ours(x1, mask)[0].square().sum().backward()
    ref(x2, x2, x2, key_padding_mask=~mask[:, 0, 0, :])[0].square().sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, **TOL[torch.float64])
    torch.testing.assert_close(ours.W_q.weight.grad, ref.in_proj_weight.grad[:32], **TOL[torch.float64])
    torch.testing.assert_close(ours.out_proj.weight.grad, ref.out_proj.weight.grad, **TOL[torch.float64])


def test_forgetting_to_invert_the_mask_leaks_the_future():
    """Passing the book's causal mask (True = keep) to nn.MultiheadAttention unchanged lets it see only the future."""
    ours, ref = make_pair(16, 2, torch.float32)
    x = torch.randn(1, 5, 16)
    keep = attnbook.causal_mask(5)
    _, right = ours(x, keep)
    _, wrong = ref(x, x, x, attn_mask=keep[0, 0], average_attn_weights=False)
    assert (right[0, :, 0, 1:] == 0).all()  # query 0 sees only itself
    assert (wrong[0, :, 0, :1] == 0).all() and (wrong[0, :, 0, 1:].sum(-1) > 0.99).all()  # …or only the future
    assert torch.isnan(wrong[0, :, -1]).all()
