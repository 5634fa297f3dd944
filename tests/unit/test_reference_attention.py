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
    assert attnbook.check("08-1", 3 * (512 * 512 + 512)) is False and "out_proj" in capsys.readouterr().out
    assert attnbook.check("08-2", [2, 10, 8, 64]) is False and "transpose" in capsys.readouterr().out
    keep = attnbook.padding_mask(torch.tensor([3, 5]), 5)[:, 0, 0, :]
    assert attnbook.check("08-4", keep) is False and "取反" in capsys.readouterr().out
    assert attnbook.check("08-4", ~keep) is True
