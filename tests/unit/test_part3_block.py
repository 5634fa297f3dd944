"""Chapter 11 (组装 Transformer): LayerNorm, FeedForward, EncoderLayer, MultiHeadAttention,
DecoderLayer and KVCache in attnbook.book equal PyTorch's modules, the cache changes no output,
and readers' mistakes get Chinese errors that name the argument."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

import attnbook.book as book
from attnbook import MultiHeadSelfAttention, causal_mask, padding_mask
from attnbook.book import DecoderLayer, EncoderLayer, FeedForward, KVCache, LayerNorm, MultiHeadAttention
from attnbook.infra.runtime import torch_state

# (batch, seq_len, d_model, num_heads, d_ff): tiny, odd lengths, one head, d_k = 1, many heads …
SHAPES = [(1, 1, 8, 1, 16), (2, 5, 16, 4, 64), (3, 7, 24, 3, 40), (2, 9, 12, 12, 12), (4, 6, 32, 8, 128)]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors: one thread is the fastest on a busy machine, and restores the count afterwards."""
    with torch_state(threads=1):
        yield


def shape_id(shape):
    return "b{}-L{}-d{}-h{}-ff{}".format(*shape)


def lengths_for(batch: int, seq_len: int, seed: int) -> torch.Tensor:
    """Random real lengths in 1..seq_len (the first sentence full): no fully masked row."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, seq_len + 1, (batch,), generator=g)
    lengths[0] = seq_len
    return lengths


def copy_attention(ours, theirs: nn.MultiheadAttention) -> None:
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.out_proj.weight)
        theirs.out_proj.bias.copy_(ours.out_proj.bias)


def randomize(layer: nn.Module) -> None:
    """Non-trivial LayerNorm affine parameters and biases, so that a forgotten copy shows."""
    with torch.no_grad():
        for module in layer.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
            elif isinstance(module, nn.Linear):
                module.bias.uniform_(-0.3, 0.3)


def copy_by_pairs(pairs) -> None:
    for mine, theirs in pairs:
        theirs.load_state_dict(mine.state_dict())


def encoder_pair(d_model, num_heads, d_ff, norm, activation="relu", seed=0):
    torch.manual_seed(seed)
    ours = EncoderLayer(d_model, num_heads, d_ff, norm=norm, activation=activation)
    randomize(ours)
    theirs = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, activation=activation,
                                        batch_first=True, norm_first=(norm == "pre"))
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_by_pairs([(ours.ffn.linear1, theirs.linear1), (ours.ffn.linear2, theirs.linear2),
                   (ours.ln1, theirs.norm1), (ours.ln2, theirs.norm2)])
    return ours, theirs


def decoder_pair(d_model, num_heads, d_ff, norm, seed=0):
    torch.manual_seed(seed)
    ours = DecoderLayer(d_model, num_heads, d_ff, norm=norm)
    randomize(ours)
    theirs = nn.TransformerDecoderLayer(d_model, num_heads, d_ff, dropout=0.0, batch_first=True,
                                        norm_first=(norm == "pre"))
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_attention(ours.cross_attn, theirs.multihead_attn)
    copy_by_pairs([(ours.ffn.linear1, theirs.linear1), (ours.ffn.linear2, theirs.linear2),
                   (ours.ln1, theirs.norm1), (ours.ln2, theirs.norm2), (ours.ln3, theirs.norm3)])
    return ours, theirs


# -- LayerNorm ------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5,), (3, 8), (2, 4, 16), (2, 3, 4, 7)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layer_norm_equals_nn_layer_norm(shape, dtype):
    torch.manual_seed(0)
    d = shape[-1]
    ref = nn.LayerNorm(d, dtype=dtype)
    with torch.no_grad():
        ref.weight.uniform_(0.5, 1.5)
        ref.bias.uniform_(-1, 1)
    ours = LayerNorm(d).to(dtype)
    ours.load_state_dict(ref.state_dict())  # the same parameter names
    x = 4 * torch.randn(*shape, dtype=dtype) + 2
    torch.testing.assert_close(ours(x), ref(x))
    eps = LayerNorm(d, eps=1e-3).to(dtype)
    torch.testing.assert_close(eps(x), nn.functional.layer_norm(x, (d,), eps=1e-3))


def test_layer_norm_normalises_each_position_alone():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, dtype=torch.float64) * 5 + 3
    y = LayerNorm(8).double()(x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(2, 3, dtype=torch.float64))
    x2 = x.clone()
    x2[1] = 100 * torch.randn(3, 8, dtype=torch.float64)  # another sentence changes
    torch.testing.assert_close(LayerNorm(8).double()(x2)[0], y[0])  # sentence 0 does not


@pytest.mark.parametrize("call, arg", [
    (lambda: LayerNorm(0), "d_model"),
    (lambda: LayerNorm(8.0), "d_model"),
    (lambda: LayerNorm(True), "d_model"),
    (lambda: LayerNorm(8, eps=0), "eps"),
    (lambda: LayerNorm(8)(torch.zeros(2, 7)), "x"),
])
def test_layer_norm_errors(assert_reader_error, call, arg):
    assert_reader_error(call, arg)


# -- FeedForward ----------------------------------------------------------------------------------

@pytest.mark.parametrize("activation, fn", [("relu", torch.relu), ("gelu", nn.functional.gelu)])
def test_feed_forward_is_position_wise(activation, fn):
    torch.manual_seed(0)
    ffn = FeedForward(8, 32, activation)
    x = torch.randn(2, 5, 8)
    out = ffn(x)
    expected = fn(x @ ffn.linear1.weight.T + ffn.linear1.bias) @ ffn.linear2.weight.T + ffn.linear2.bias
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(out[:, 2], ffn(x[:, 2]))  # one position alone gives the same
    assert sum(p.numel() for p in ffn.parameters()) == 2 * 8 * 32 + 32 + 8


@pytest.mark.parametrize("call, arg", [
    (lambda: FeedForward(8, 32, "tanh"), "activation"),
    (lambda: FeedForward(0, 32), "d_model"),
    (lambda: FeedForward(8, 2.5), "d_ff"),
])
def test_feed_forward_errors(assert_reader_error, call, arg):
    assert_reader_error(call, arg)


# -- EncoderLayer ---------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_encoder_layer_equals_pytorch(shape, norm, activation):
    batch, seq_len, d_model, num_heads, d_ff = shape
    ours, theirs = encoder_pair(d_model, num_heads, d_ff, norm, activation)
    x = torch.randn(batch, seq_len, d_model, generator=torch.Generator().manual_seed(1))
    keep = padding_mask(lengths_for(batch, seq_len, seed=2), seq_len)  # [batch, 1, 1, seq_len]
    for mask, kwargs in ((None, {}), (keep, {"src_key_padding_mask": ~keep[:, 0, 0]})):
        out, weights = ours(x, mask)
        assert weights.shape == (batch, num_heads, seq_len, seq_len)
        torch.testing.assert_close(out, theirs.train()(x, **kwargs))
        with torch.no_grad():  # eval + no_grad: PyTorch's fast path
            torch.testing.assert_close(out, theirs.eval()(x, **kwargs))
    causal = causal_mask(seq_len)
    out, _ = ours(x, causal)
    torch.testing.assert_close(out, theirs.train()(x, src_mask=~causal[0, 0]))


def test_encoder_layer_creates_attention_before_feed_forward():
    """Random init is drawn in the order attention, then FFN (Part IV relies on it)."""
    torch.manual_seed(3)
    layer = EncoderLayer(16, 4, 64)
    torch.manual_seed(3)
    attn, ffn = MultiHeadSelfAttention(16, 4), FeedForward(16, 64)
    for mine, alone in ((layer.self_attn, attn), (layer.ffn, ffn)):
        for (name, p), (_, q) in zip(mine.named_parameters(), alone.named_parameters()):
            assert torch.equal(p, q), name


def test_encoder_layer_uses_a_given_attention():
    """self_attn=X: the layer uses X itself, and creates no attention of its own."""
    attn = MultiHeadSelfAttention(16, 4)
    layer = EncoderLayer(16, 4, 64, self_attn=attn)
    assert layer.self_attn is attn
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0))
    out, weights = layer(x)
    torch.testing.assert_close(weights, attn(x)[1])
    assert out.shape == (2, 5, 16)
    n_own = sum(p.numel() for p in layer.parameters())
    assert n_own == sum(p.numel() for p in EncoderLayer(16, 4, 64).parameters())


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_layer_with_given_attention_keeps_the_random_order(norm):
    """Building X = MultiHeadSelfAttention first, then EncoderLayer(..., self_attn=X), under one seed
    draws the same numbers as EncoderLayer(...) alone: attention, then FFN."""
    torch.manual_seed(7)
    alone = EncoderLayer(16, 4, 64, norm=norm)
    torch.manual_seed(7)
    attn = MultiHeadSelfAttention(16, 4)
    given = EncoderLayer(16, 4, 64, norm=norm, self_attn=attn)
    mine, theirs = dict(given.named_parameters()), dict(alone.named_parameters())
    assert mine.keys() == theirs.keys()
    for name, p in mine.items():
        assert torch.equal(p, theirs[name]), name
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(given(x, causal_mask(5))[0], alone(x, causal_mask(5))[0])


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_part_four_models_are_built_from_this_layer(norm):
    """Chapter 12's TinyTransformer and chapter 13's CharTransformer reuse EncoderLayer (issue 23):
    same seed, same parameters as the layer built by hand in the same random order."""
    torch.manual_seed(5)
    tiny = book.TinyTransformer(9, d_model=16, num_heads=4, num_layers=1, d_ff=64, norm=norm)
    torch.manual_seed(5)
    torch.nn.Embedding(9, 16)  # the model's embedding draws first
    layer = EncoderLayer(16, 4, 64, norm=norm, self_attn=book.ScalableMultiHeadSelfAttention(16, 4))
    block = tiny.blocks[0]
    assert isinstance(block, EncoderLayer) and block.norm == norm
    mine, theirs = dict(block.named_parameters()), dict(layer.named_parameters())
    assert mine.keys() == theirs.keys()
    for name, p in mine.items():
        assert torch.equal(p, theirs[name]), name
    char = book.CharTransformer(11, d_model=16, num_heads=2, num_layers=1, max_len=8)
    assert isinstance(char.blocks[0], EncoderLayer) and char.blocks[0].norm == "pre"
    assert isinstance(char.blocks[0].ffn.activation, torch.nn.GELU)
    assert char.blocks[0].ffn.linear1.out_features == 4 * 16


@pytest.mark.parametrize("call, arg", [
    (lambda: EncoderLayer(16, 4, 64, norm="middle"), "norm"),
    (lambda: EncoderLayer(16, 4, 64, activation="swish"), "activation"),
    (lambda: EncoderLayer(10, 3, 64), "num_heads"),
    (lambda: EncoderLayer(16, 4, 64, self_attn="attention"), "self_attn"),
    (lambda: EncoderLayer(16, 4, 64)(torch.zeros(2, 5, 8)), "x"),
    (lambda: EncoderLayer(16, 4, 64)(torch.zeros(1, 1, 16), causal_mask(1), cache=KVCache()), "mask"),
])
def test_encoder_layer_errors(assert_reader_error, call, arg):
    assert_reader_error(call, arg)


# -- MultiHeadAttention (cross-attention) ---------------------------------------------------------

@pytest.mark.parametrize("tgt_len, src_len", [(1, 1), (3, 7), (8, 2), (5, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cross_attention_equals_pytorch(tgt_len, src_len, dtype):
    batch, d_model, num_heads = 3, 16, 4
    torch.manual_seed(0)
    ours = MultiHeadAttention(d_model, num_heads).to(dtype)
    randomize(ours)
    theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True, dtype=dtype)
    copy_attention(ours, theirs)
    g = torch.Generator().manual_seed(1)
    query = torch.randn(batch, tgt_len, d_model, generator=g, dtype=dtype)
    memory = torch.randn(batch, src_len, d_model, generator=g, dtype=dtype)
    keep = padding_mask(lengths_for(batch, src_len, seed=2), src_len)  # [batch, 1, 1, src_len]
    out, weights = ours(query, memory, keep)
    ref_out, ref_weights = theirs(query, memory, memory, key_padding_mask=~keep[:, 0, 0],
                                  average_attn_weights=False)
    assert weights.shape == (batch, num_heads, tgt_len, src_len)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(weights, ref_weights)
    Q = ours.split_heads(ours.W_q(query))
    K, V = ours.split_heads(ours.W_k(memory)), ours.split_heads(ours.W_v(memory))
    sdpa = nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=keep)
    torch.testing.assert_close(out, ours.out_proj(ours.merge_heads(sdpa)))


def test_cross_attention_with_itself_is_self_attention():
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    mask = causal_mask(5)
    torch.testing.assert_close(layer(x, x, mask)[0], MultiHeadSelfAttention.forward(layer, x, mask)[0])


@pytest.mark.parametrize("call, arg", [
    (lambda layer: layer(torch.zeros(2, 5, 8), torch.zeros(2, 4, 16)), "query"),
    (lambda layer: layer(torch.zeros(2, 5, 16), torch.zeros(4, 16)), "key_value"),
    (lambda layer: layer(torch.zeros(2, 5, 16), torch.zeros(3, 4, 16)), "key_value"),
    (lambda layer: layer(torch.zeros(2, 5, 16), [[0.0] * 16]), "key_value"),
    (lambda layer: layer(torch.zeros(2, 5, 16), torch.zeros(2, 4, 16), causal_mask(5)), "mask"),
])
def test_cross_attention_errors(assert_reader_error, call, arg):
    layer = MultiHeadAttention(16, 4)
    assert_reader_error(lambda: call(layer), arg)


# -- DecoderLayer ---------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("tgt_len, src_len", [(1, 3), (4, 6), (7, 2)])
def test_decoder_layer_equals_pytorch(norm, tgt_len, src_len):
    batch, d_model, num_heads, d_ff = 3, 16, 4, 48
    ours, theirs = decoder_pair(d_model, num_heads, d_ff, norm)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch, tgt_len, d_model, generator=g)
    memory = torch.randn(batch, src_len, d_model, generator=g)
    tgt_keep = padding_mask(lengths_for(batch, tgt_len, seed=2), tgt_len)
    src_keep = padding_mask(lengths_for(batch, src_len, seed=3), src_len)
    kwargs = {"tgt_mask": ~causal_mask(tgt_len)[0, 0], "tgt_key_padding_mask": ~tgt_keep[:, 0, 0],
              "memory_key_padding_mask": ~src_keep[:, 0, 0]}
    out, self_weights, cross_weights = ours(x, memory, tgt_keep, src_keep)
    assert self_weights.shape == (batch, num_heads, tgt_len, tgt_len)
    assert cross_weights.shape == (batch, num_heads, tgt_len, src_len)
    torch.testing.assert_close(out, theirs.train()(x, memory, **kwargs))
    with torch.no_grad():
        torch.testing.assert_close(out, theirs.eval()(x, memory, **kwargs))
    plain, _, _ = ours(x, memory)  # no extra masks: still causal
    torch.testing.assert_close(plain, theirs.train()(x, memory, tgt_mask=kwargs["tgt_mask"]))


def test_decoder_layer_is_causal_in_the_target_only():
    torch.manual_seed(0)
    layer = DecoderLayer(16, 4, 32).double().eval()
    x, memory = torch.randn(2, 5, 16, dtype=torch.float64), torch.randn(2, 6, 16, dtype=torch.float64)
    with torch.no_grad():
        base = layer(x, memory)[0]
        x2 = x.clone()
        x2[:, 3] += 1.0
        changed = layer(x2, memory)[0]
        memory2 = memory.clone()
        memory2[:, -1] += 1.0
        other_source = layer(x, memory2)[0]
    torch.testing.assert_close(changed[:, :3], base[:, :3])  # the past does not see position 3
    assert not torch.allclose(changed[:, 3:], base[:, 3:])
    assert not torch.allclose(other_source[:, 0], base[:, 0])  # every position sees the whole source


@pytest.mark.parametrize("call, arg", [
    (lambda layer: layer(torch.zeros(2, 4, 16), torch.zeros(2, 6, 16),
                         tgt_mask=causal_mask(4, dtype=torch.float32)), "tgt_mask"),
    (lambda layer: layer(torch.zeros(2, 4, 16), torch.zeros(2, 6, 16),
                         memory_mask=padding_mask([5, 3], 5)), "memory_mask"),  # 5 ≠ src_len
    (lambda layer: layer(torch.zeros(2, 4, 16), torch.zeros(6, 16)), "memory"),
    (lambda layer: layer(torch.zeros(4, 16), torch.zeros(2, 6, 16)), "x"),
])
def test_decoder_layer_errors(assert_reader_error, call, arg):
    layer = DecoderLayer(16, 4, 32)
    assert_reader_error(lambda: call(layer), arg)
    with pytest.raises(ValueError, match="norm"):
        DecoderLayer(16, 4, 32, norm="both")


# -- KVCache --------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("chunks", [[1, 1, 1, 1, 1, 1], [4, 2], [3, 1, 2], [6]])
def test_cache_step_by_step_equals_the_whole_sequence(norm, chunks):
    torch.manual_seed(0)
    layers = nn.ModuleList(EncoderLayer(16, 4, 32, norm=norm) for _ in range(3)).double().eval()
    x = torch.randn(2, sum(chunks), 16, dtype=torch.float64)
    with torch.no_grad():
        full = x
        for layer in layers:
            full, _ = layer(full, causal_mask(x.size(1)))
        caches, pieces, start = [KVCache() for _ in layers], [], 0
        for n in chunks:
            h = x[:, start:start + n]
            for layer, cache in zip(layers, caches):
                h, weights = layer(h, cache=cache)
            assert weights.shape == (2, 4, n, start + n)
            pieces.append(h)
            start += n
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)
    assert [len(c) for c in caches] == [sum(chunks)] * 3
    assert caches[0].K.shape == (2, 4, sum(chunks), 4)


def greedy(layers, embed, head, prompt, n_new, use_cache):
    """Greedy decoding with a stack of EncoderLayers (causal), with or without a KV cache."""
    tokens, step = prompt, prompt
    caches = [KVCache() for _ in layers] if use_cache else None
    logits_seen = []
    with torch.no_grad():
        for _ in range(n_new):
            x = embed(step if use_cache else tokens)
            for i, layer in enumerate(layers):
                x, _ = layer(x, cache=caches[i]) if use_cache else layer(x, causal_mask(x.size(1)))
            logits = head(x[:, -1])
            nxt = logits.argmax(-1, keepdim=True)
            tokens, step = torch.cat([tokens, nxt], dim=1), nxt
            logits_seen.append(logits)
    return tokens, torch.stack(logits_seen, dim=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generation_with_cache_gives_the_same_tokens(seed):
    torch.manual_seed(seed)
    vocab, d_model = 20, 24
    layers = nn.ModuleList(EncoderLayer(d_model, 3, 48, norm="pre") for _ in range(2)).double().eval()
    embed, head = nn.Embedding(vocab, d_model).double(), nn.Linear(d_model, vocab).double()
    prompt = torch.randint(vocab, (2, 5), generator=torch.Generator().manual_seed(seed))
    a, logits_a = greedy(layers, embed, head, prompt, 12, use_cache=False)
    b, logits_b = greedy(layers, embed, head, prompt, 12, use_cache=True)
    assert torch.equal(a, b)
    torch.testing.assert_close(logits_a, logits_b)


def test_cache_copy_leaves_the_original_alone():
    torch.manual_seed(0)
    layer = EncoderLayer(8, 2, 16).eval()
    cache = KVCache()
    with torch.no_grad():
        layer(torch.randn(1, 3, 8), cache=cache)
        fork = copy.copy(cache)
        layer(torch.randn(1, 1, 8), cache=fork)
    assert (len(cache), len(fork)) == (3, 4)


@pytest.mark.parametrize("call, arg", [
    (lambda c: c.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 5)), "K_new"),
    (lambda c: c.append(torch.zeros(2, 3, 4), torch.zeros(2, 3, 4)), "K_new"),
    (lambda c: (c.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4)),
                c.append(torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))), "K_new"),
    (lambda c: c.attend(MultiHeadSelfAttention(8, 2), torch.zeros(1, 0, 8)), "x_new"),
])
def test_cache_errors(assert_reader_error, call, arg):
    assert_reader_error(lambda: call(KVCache()), arg)


def test_the_cache_refuses_an_attention_whose_forward_it_would_skip():
    """KVCache.attend uses MultiHeadSelfAttention's projections directly; another module (chapter
    12's scalable attention, or any module with forward(x, mask)) would be silently bypassed."""
    from attnbook.book import KVCache, MultiHeadSelfAttention, ScalableMultiHeadSelfAttention

    x = torch.randn(1, 3, 16)
    KVCache().attend(MultiHeadSelfAttention(16, 4), x)  # the book's own attention: fine
    with pytest.raises(ValueError, match="MultiHeadSelfAttention"):  # AttnBookError
        KVCache().attend(ScalableMultiHeadSelfAttention(16, 4, scale=False), x)


def test_kv_cache_refuses_another_dtype_instead_of_promoting():
    """Second Part III review m4: torch.cat would silently turn a float32 cache into float64."""
    from attnbook.book import KVCache
    from attnbook.infra.errors import AttnBookError

    cache = KVCache()
    cache.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    wide = torch.zeros(1, 2, 1, 4, dtype=torch.float64)
    with pytest.raises(AttnBookError, match="dtype"):
        cache.append(wide, wide)
    assert len(cache) == 3 and cache.K.dtype == torch.float32
