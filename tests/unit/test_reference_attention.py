"""Quick checks of the reference code; chapter-level equivalence tests live in tests/test_equivalence.py."""
from __future__ import annotations

import math

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
