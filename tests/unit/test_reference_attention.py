"""Quick checks of the reference code; chapter-level equivalence tests live in tests/test_equivalence.py."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attnbook


def test_cat_eats_fish_matches_article_and_sdpa():
    d = attnbook.cat_eats_fish()
    out, w = attnbook.scaled_dot_product_attention(d["Q"], d["K"], d["V"])
    assert [round(x, 2) for x in (d["Q"][0] @ d["K"].T).tolist()] == [0.82, 0.42, 0.98]
    assert [round(x, 2) for x in w[0].tolist()] == [0.35, 0.26, 0.39]
    torch.testing.assert_close(out, F.scaled_dot_product_attention(d["Q"], d["K"], d["V"]))


def test_masks_shapes_and_diagonal():
    causal = attnbook.causal_mask(4)
    assert causal.shape == (1, 1, 4, 4) and causal[0, 0].diagonal().all()
    assert not causal[0, 0, 0, 1]
    pad = attnbook.padding_mask([2, 4], 4)
    assert pad.shape == (2, 1, 1, 4) and pad[0, 0, 0].tolist() == [True, True, False, False]


def test_multihead_rejects_indivisible():
    try:
        attnbook.MultiHeadSelfAttention(10, num_heads=3)
    except ValueError as err:
        assert "整除" in str(err) and "10" in str(err)
    else:
        raise AssertionError("expected ValueError")


def test_positional_encoding_values():
    pe = attnbook.sinusoidal_positional_encoding(5, 6)
    assert pe.shape == (5, 6)
    assert math.isclose(pe[1, 0].item(), math.sin(1.0), rel_tol=1e-6)
    assert math.isclose(pe[1, 1].item(), math.cos(1.0), rel_tol=1e-6)
    assert math.isclose(pe[2, 2].item(), math.sin(2 / 10000 ** (2 / 6)), rel_tol=1e-5)


def test_attention_rejects_mismatched_shapes_in_chinese():
    Q, K, V = torch.randn(2, 5, 4), torch.randn(2, 5, 3), torch.randn(2, 5, 6)
    with pytest.raises(ValueError, match="d_k"):
        attnbook.scaled_dot_product_attention(Q, K, V)
    with pytest.raises(ValueError, match="seq_len_k"):
        attnbook.scaled_dot_product_attention(Q, torch.randn(2, 5, 4), torch.randn(2, 4, 6))


def test_mask_may_not_enlarge_the_scores():
    """masked_fill would silently broadcast [batch, 1, 1, L] single-head scores up to [batch, batch, L, L]."""
    layer = attnbook.SelfAttention(8)
    x = torch.randn(2, 5, 8)
    four_d = attnbook.padding_mask([5, 3], 5)
    with pytest.raises(ValueError, match=r"mask\[:, 0\]"):
        layer(x, four_d)
    with pytest.raises(ValueError, match="广播"):
        layer(x, torch.ones(3, 5, dtype=torch.bool))
    out, weights = layer(x, four_d[:, 0])  # [batch, 1, L] is right for a single head
    assert out.shape == (2, 5, 8) and (weights[1, :, 3:] == 0).all()


def test_mask_may_not_lack_a_dimension():
    """part3 B3-09: a single-head [batch, 1, L] mask on multi-head scores right-aligns to [1, batch, 1, L];
    with batch == num_heads it was applied per head, silently. Masks of 1 or 2 dims stay allowed."""
    layer = attnbook.MultiHeadSelfAttention(8, num_heads=2)
    x = torch.randn(2, 5, 8)
    pad = attnbook.padding_mask([3, 5], 5)  # [2, 1, 1, 5]
    with pytest.raises(attnbook.AttnBookError, match=r"mask\[:, None\]") as info:
        layer(x, pad[:, 0])  # [batch, 1, L] with batch == num_heads
    assert "num_heads" in str(info.value) and "参数 `mask`" in str(info.value)
    with pytest.raises(attnbook.AttnBookError, match="一样多维"):
        attnbook.MultiHeadSelfAttention(8, num_heads=4)(x, pad[:, 0])  # batch ≠ num_heads: same advice
    torch.testing.assert_close(layer(x, pad[:, 0][:, None])[0], layer(x, pad)[0])  # the advice works
    causal = attnbook.causal_mask(5)
    torch.testing.assert_close(layer(x, causal[0, 0])[0], layer(x, causal)[0])  # [L, L] is still fine
    torch.testing.assert_close(layer(x, pad[0, 0, 0])[0][:1], layer(x, pad)[0][:1])  # so is [L]


def test_self_attention_shapes_defaults_and_bad_input():
    layer = attnbook.SelfAttention(16, d_k=4, d_v=8)
    assert (layer.d_k, layer.d_v) == (4, 8)
    assert attnbook.SelfAttention(16).d_k == attnbook.SelfAttention(16).d_v == 16
    out, weights = layer(torch.randn(2, 5, 16))
    assert out.shape == (2, 5, 8) and weights.shape == (2, 5, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 5))
    with pytest.raises(ValueError, match="unsqueeze"):
        layer(torch.randn(5, 16))
    with pytest.raises(ValueError, match=r"\[batch, seq_len, 16\]"):
        layer(torch.randn(2, 5, 15))


def test_fully_masked_row_is_nan():
    out, weights = attnbook.scaled_dot_product_attention(
        torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[0, 0, 0], [1, 0, 0], [1, 1, 1]]))
    assert torch.isnan(weights[0]).all() and torch.isnan(out[0]).all()
    assert torch.isfinite(weights[1:]).all() and weights[1].tolist() == [1.0, 0.0, 0.0]


def test_multihead_split_merge_roundtrip_and_validation():
    layer = attnbook.MultiHeadSelfAttention(12, num_heads=3)
    t = torch.arange(2 * 5 * 12, dtype=torch.float32).view(2, 5, 12)
    heads = layer.split_heads(t)
    assert heads.shape == (2, 3, 5, 4)
    assert heads[0, 1, 0].tolist() == [4.0, 5.0, 6.0, 7.0]  # head 1 = columns 4..7 of every token
    assert torch.equal(layer.merge_heads(heads.contiguous()), t)
    with pytest.raises(ValueError, match=r"\[1, 2, 3, 4, 6, 12\]"):
        attnbook.MultiHeadSelfAttention(12, num_heads=5)
    for bad in (0, -2, 2.0):
        with pytest.raises(ValueError, match="num_heads"):
            attnbook.MultiHeadSelfAttention(12, num_heads=bad)
    with pytest.raises(ValueError, match="unsqueeze"):
        layer(torch.randn(5, 12))


def test_chapter_07_08_exercises_recognise_typical_mistakes(capsys):
    d = attnbook.cat_eats_fish()
    _, plain = attnbook.scaled_dot_product_attention(d["Q"], d["K"], d["V"])
    dropped = plain[0].clone()
    dropped[2] = 0
    assert attnbook.check("07-3", dropped) is False and "重新归一化" in capsys.readouterr().out
    assert attnbook.check("07-2", [[3, 7, 32], [3, 7, 7]]) is False and "d_v" in capsys.readouterr().out
    assert attnbook.check("08-1", 2 * 10 * 10) is False and "num_heads" in capsys.readouterr().out
    assert attnbook.check("08-1", 2 * 8 * 10 * 10) is True
    assert attnbook.check("08-2", [2, 10, 8, 64]) is False and "transpose" in capsys.readouterr().out
    keep = attnbook.padding_mask(torch.tensor([3, 5]), 5)[:, 0, 0, :]
    assert attnbook.check("08-4", keep) is False and "取反" in capsys.readouterr().out
    assert attnbook.check("08-4", ~keep) is True


# -- issue 14: hardened reference code -------------------------------------------------------------

def test_errors_are_attnbook_errors_and_value_errors():
    assert issubclass(attnbook.AttnBookError, ValueError)
    with pytest.raises(attnbook.AttnBookError, match="参数 `x` 收到了"):
        attnbook.SelfAttention(8)(torch.randn(5, 8))
    with pytest.raises(attnbook.AttnBookError, match="参数 `K` 收到了"):
        attnbook.scaled_dot_product_attention(torch.randn(2, 4), torch.randn(2, 3), torch.randn(2, 3))


def test_float_masks_zero_one_accepted_additive_rejected_in_chinese():
    torch.manual_seed(0)
    Q, K, V = torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 2)
    keep = torch.ones(4, 4, dtype=torch.bool).tril()
    ref, _ = attnbook.scaled_dot_product_attention(Q, K, V, keep)
    for same in (keep.float(), keep.int(), keep.double()):  # 0/1 in any dtype means keep/block
        torch.testing.assert_close(attnbook.scaled_dot_product_attention(Q, K, V, same)[0], ref)
    additive = torch.zeros(4, 4).masked_fill(~keep, float("-inf"))
    with pytest.raises(attnbook.AttnBookError, match="加性") as info:
        attnbook.scaled_dot_product_attention(Q, K, V, additive)
    assert "additive_mask == 0" in str(info.value) and "参数 `mask`" in str(info.value)
    torch.testing.assert_close(attnbook.scaled_dot_product_attention(Q, K, V, additive == 0)[0], ref)  # the advice works
    for bad in (torch.zeros(4, 4), torch.full((4, 4), 0.5), torch.tensor([[2] * 4] * 4)):
        with pytest.raises(attnbook.AttnBookError, match="mask"):
            attnbook.scaled_dot_product_attention(Q, K, V, bad)
    finite = torch.zeros(4, 4).masked_fill(~keep, torch.finfo(torch.float32).min)  # additive with finfo.min
    with pytest.raises(attnbook.AttnBookError, match="additive_mask == 0"):
        attnbook.scaled_dot_product_attention(Q, K, V, finite)
    with pytest.raises(attnbook.AttnBookError, match="张量"):
        attnbook.scaled_dot_product_attention(Q, K, V, [[1, 0], [1, 1]])


@pytest.mark.parametrize("bad", [torch.tensor([2, 1, 1, 0]), torch.tensor([0.5, 1.0, 1.0, 0.0])])
def test_non_binary_masks_are_not_called_additive(bad):
    """part3 B3-12: `additive_mask == 0` would invert an integer mask such as [2, 1, 1, 0]."""
    Q = torch.randn(4, 3)
    with pytest.raises(attnbook.AttnBookError) as info:
        attnbook.scaled_dot_product_attention(Q, Q, Q, bad)
    message = str(info.value)
    assert "mask != 0" in message and "additive_mask == 0" not in message and "加性" not in message
    assert ("例如 2" in message) if bad.dtype == torch.int64 else ("例如 0.5" in message)


def test_an_empty_mask_on_an_empty_sequence_is_fine():
    Q = torch.randn(0, 3)
    out, _ = attnbook.scaled_dot_product_attention(Q, Q, Q, torch.zeros(0))
    assert out.shape == (0, 3)


def test_mask_on_another_device_is_a_chinese_error():
    Q = torch.randn(3, 4)
    with pytest.raises(attnbook.AttnBookError, match="device"):
        attnbook.scaled_dot_product_attention(Q, Q, Q, torch.ones(3, 3, dtype=torch.bool, device="meta"))


def test_num_heads_accepts_numpy_ints_and_rejects_bools():
    import numpy as np

    assert attnbook.MultiHeadSelfAttention(12, num_heads=np.int64(4)).d_k == 3
    for bad in (True, 2.0, "4", 0):
        with pytest.raises(attnbook.AttnBookError, match="num_heads"):
            attnbook.MultiHeadSelfAttention(12, num_heads=bad)
    with pytest.raises(attnbook.AttnBookError, match="d_model"):
        attnbook.SelfAttention(0)


def test_nn_multihead_attention_accepts_2d_and_3d_masks_not_4d():
    torch.manual_seed(0)
    mine = attnbook.MultiHeadSelfAttention(8, num_heads=2)
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mine.W_q.weight, mine.W_k.weight, mine.W_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([mine.W_q.bias, mine.W_k.bias, mine.W_v.bias]))
        ref.out_proj.weight.copy_(mine.out_proj.weight)
        ref.out_proj.bias.copy_(mine.out_proj.bias)
    x = torch.randn(3, 5, 8)
    keep = attnbook.padding_mask([5, 3, 2], 5) & attnbook.causal_mask(5)  # [3, 1, 5, 5]
    want, _ = mine(x, keep)
    got_2d, _ = ref(x, x, x, attn_mask=~attnbook.causal_mask(5)[0, 0])  # [L, S]
    torch.testing.assert_close(got_2d, mine(x, attnbook.causal_mask(5))[0])
    got_3d, _ = ref(x, x, x, attn_mask=(~keep).expand(3, 2, 5, 5).reshape(6, 5, 5))  # [batch·num_heads, L, S]
    torch.testing.assert_close(got_3d, want)
    with pytest.raises((AssertionError, RuntimeError)):
        ref(x, x, x, attn_mask=~keep)  # [batch, 1, L, S]: rejected


def test_minus_1e9_overflows_in_half_precision_finfo_min_does_not():
    scores = torch.randn(2, 3).half()
    blocked = torch.tensor([[False, True, True], [False, False, True]])
    with pytest.raises(RuntimeError, match="overflow"):
        scores.masked_fill(blocked, -1e9)
    safe = torch.softmax(scores.masked_fill(blocked, torch.finfo(scores.dtype).min).float(), -1)
    assert safe[0].tolist() == [1.0, 0.0, 0.0] and safe[1, 2] == 0


def test_sdpa_zeroes_a_fully_masked_row_only_for_bool_and_minus_inf_masks():
    """part3 B3-05: SDPA (torch >= 2.5) outputs 0 for a row that is all False / all −inf; with an additive mask of
    finite values (finfo.min, −1e9) the row's scores are all equal and it outputs the mean of V."""
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 3, 4).unbind(0)
    keep = torch.tensor([[False, False, False], [True, True, False], [True, True, True]])
    rows = {}
    for name, fill in [("-inf", float("-inf")), ("finfo.min", torch.finfo(torch.float32).min), ("-1e9", -1e9)]:
        rows[name] = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(3, 3).masked_fill(~keep, fill))
    rows["bool"] = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    assert (rows["bool"][:, 0] == 0).all() and (rows["-inf"][:, 0] == 0).all()
    for name in ("finfo.min", "-1e9"):
        torch.testing.assert_close(rows[name][:, 0], v.mean(-2))
    for out in rows.values():
        torch.testing.assert_close(out[:, 1:], rows["bool"][:, 1:])


def _left_padded_layer():
    torch.manual_seed(0)
    layer = attnbook.MultiHeadSelfAttention(16, num_heads=2)
    real = torch.arange(5)[None, :] >= 5 - torch.tensor([3, 5])[:, None]  # left padding
    keep = real[:, None, None, :] & attnbook.causal_mask(5)
    return layer, real, keep, torch.randn(2, 5, 16)


def test_fully_masked_rows_poison_gradients_even_outside_the_loss():
    layer, real, keep, x = _left_padded_layer()
    x = x.requires_grad_()
    out, _ = layer(x, keep)
    out[real].pow(2).mean().backward()  # padded rows are not in the loss
    assert layer.W_v.weight.grad.isnan().any() and layer.out_proj.weight.grad.isnan().any()
    assert x.grad.isnan().any()
    with torch.no_grad():  # left padding + causal: NaN reaches the whole sentence in layer 2
        l2, _ = layer(layer(x, keep)[0], keep)
    assert l2[0].isnan().all(-1).all() and not l2[1].isnan().any()


@pytest.mark.parametrize("remedy", ["see_self", "where", "sdpa", "finfo_min"])
def test_remedies_keep_gradients_finite(remedy):
    layer, real, keep, x = _left_padded_layer()
    x = x.requires_grad_()
    Q, K, V = (layer.split_heads(p(x)) for p in (layer.W_q, layer.W_k, layer.W_v))
    if remedy == "see_self":
        heads, _ = attnbook.scaled_dot_product_attention(Q, K, V, keep | torch.eye(5, dtype=torch.bool))
    elif remedy == "where":
        w = torch.softmax((Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~keep, float("-inf")), -1)
        heads = torch.where(keep.any(-1, keepdim=True), w, 0.0) @ V
    elif remedy == "finfo_min":  # uniform dead rows: harmless to the real tokens (part3 B3-03)
        s = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~keep, torch.finfo(Q.dtype).min)
        heads = torch.softmax(s, -1) @ V
    else:
        heads = F.scaled_dot_product_attention(Q, K, V, attn_mask=keep)
    out = layer.out_proj(layer.merge_heads(heads))
    out[real].pow(2).mean().backward()
    assert all(torch.isfinite(p.grad).all() for p in layer.parameters()) and torch.isfinite(x.grad).all()
    with torch.no_grad():
        torch.testing.assert_close(out[real], layer(x, keep)[0][real])  # real tokens unchanged


def test_nn_multihead_attention_paths_for_a_fully_masked_row():
    """part3 B3-06: the path is chosen by the fast-path conditions (eval, no autograd, self-attention, even heads,
    batch_first, a non-float mask …), not by need_weights: the fast path gives NaN whatever need_weights is."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(4, num_heads=2, batch_first=True)
    x = torch.randn(1, 4, 4)
    blocked = ~(torch.ones(4, 4, dtype=torch.bool).tril() & ~torch.eye(4, dtype=torch.bool))  # row 0: all blocked
    additive = torch.zeros(4, 4).masked_fill(blocked, float("-inf"))

    def row0(training, need_weights, grad, mask=blocked, fastpath=True):
        mha.train(training)
        before = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(fastpath)
        try:
            with torch.set_grad_enabled(grad):
                return mha(x, x, x, attn_mask=mask, need_weights=need_weights)[0][0, 0].detach()
        finally:
            torch.backends.mha.set_fastpath_enabled(before)

    assert row0(True, True, True).isnan().all()  # explicit softmax
    assert (row0(True, False, True) == 0).all()  # SDPA (torch >= 2.5); out_proj.bias is 0
    assert row0(False, False, False).isnan().all() and row0(False, True, False).isnan().all()  # fast path
    assert (row0(False, False, True) == 0).all()  # eval, but the weights require grad: no fast path
    assert (row0(False, False, False, fastpath=False) == 0).all()
    assert row0(False, True, False, fastpath=False).isnan().all()
    assert (row0(False, False, False, mask=additive) == 0).all()  # float masks never take the fast path


def test_zeroing_after_softmax_needs_masked_fill_not_an_added_mask():
    keep = torch.tensor([[False, False, False], [True, False, False], [True, True, False]])

    def finite(how):
        torch.manual_seed(0)
        s = torch.randn(3, 3, requires_grad=True)
        masked = s.masked_fill(~keep, float("-inf")) if how == "masked_fill" else \
            s + torch.zeros(3, 3).masked_fill(~keep, float("-inf"))
        w = torch.where(keep.any(-1, keepdim=True), torch.softmax(masked, -1), 0.0)
        (w[1:] * torch.randn(2, 3)).sum().backward()
        return bool(torch.isfinite(s.grad).all())

    assert finite("masked_fill") and not finite("added")
