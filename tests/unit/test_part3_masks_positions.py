"""Chapters 09 (masks) and 10 (positional encoding): the #@save code in attnbook.book, the plumbing in
attnbook.pages.ch10, and the chapters' exercises (including the 找 bug set of chapter 09)."""
from __future__ import annotations

import math
import re
import warnings

import matplotlib
import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

import attnbook
from attnbook import causal_mask, padding_mask, sinusoidal_positional_encoding
from attnbook.book import (
    SinusoidalPositionalEncoding,
    TinyPositionModel,
    accuracy_by_position,
    previous_token_loss,
    train_model,
)
from attnbook.pages.ch10 import pe_heatmap, pe_wave_figure, plot_extrapolation, random_tokens

matplotlib.use("Agg")


# -- padding_mask ------------------------------------------------------------------------------

def test_padding_mask_shape_and_values():
    mask = padding_mask([3, 5, 0], 5)
    assert mask.dtype == torch.bool and mask.shape == (3, 1, 1, 5)
    assert mask[:, 0, 0].int().tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]]
    assert padding_mask(torch.tensor([2]), 4)[0, 0, 0].tolist() == [True, True, False, False]


def test_padding_mask_blocks_keys_not_queries():
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 5, 5)  # [batch, num_heads, seq_len, seq_len]
    weights = torch.softmax(scores.masked_fill(padding_mask([3, 5], 5) == 0, float("-inf")), dim=-1)
    assert weights.shape == scores.shape
    assert (weights[0, :, :, 3:] == 0).all()  # pad columns get nothing
    assert not weights.isnan().any()  # pad rows still see the real tokens
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5))


@pytest.mark.parametrize("lengths, seq_len, words", [
    ([[3, 5]], 5, ["lengths", "一维"]),
    ([3.0, 5.0], 5, ["lengths", "整数"]),
    ([-1, 2], 5, ["lengths", "0 到 seq_len=5", "-1"]),
    ([3, 6], 5, ["lengths", "6"]),
    ([3], 0, ["seq_len", "正整数", "0"]),
    ([3], 5.0, ["seq_len", "5.0"]),
    ([1], True, ["seq_len"]),
])
def test_padding_mask_errors_are_chinese_and_name_the_argument(lengths, seq_len, words):
    with pytest.raises(ValueError) as info:
        padding_mask(lengths, seq_len)
    for word in words:
        assert word in str(info.value)


# -- causal_mask -------------------------------------------------------------------------------

def test_causal_mask_strict_upper_triangle_only():
    mask = causal_mask(5)
    assert mask.dtype == torch.bool and mask.shape == (1, 1, 5, 5)
    m = mask[0, 0]
    assert m.diagonal().all()  # each token sees itself
    assert not m.triu(diagonal=1).any()  # never the future
    assert torch.equal(m, torch.ones(5, 5, dtype=torch.bool).tril())
    assert causal_mask(1).tolist() == [[[[True]]]]


def test_causal_mask_matches_sdpa_is_causal():
    torch.manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 6, 4) for _ in range(3))
    out, weights = attnbook.scaled_dot_product_attention(Q, K, V, mask=causal_mask(6))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, is_causal=True))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, attn_mask=causal_mask(6)))
    assert not weights.isnan().any()


def test_causal_mask_needs_no_batch_dimension():
    torch.manual_seed(0)
    scores = torch.randn(3, 2, 5, 5)
    fill = float("-inf")
    a = scores.masked_fill(causal_mask(5) == 0, fill)
    b = scores.masked_fill(causal_mask(5)[0, 0] == 0, fill)
    c = scores.masked_fill(causal_mask(5).expand(3, 1, 5, 5) == 0, fill)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a, c)


def test_blocking_the_diagonal_too_gives_a_nan_first_row():
    torch.manual_seed(0)
    Q, K, V = (torch.randn(4, 3) for _ in range(3))
    diag_too = ~torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=0)
    _, weights = attnbook.scaled_dot_product_attention(Q, K, V, mask=diag_too)
    assert weights[0].isnan().all() and not weights[1:].isnan().any()


def test_combined_mask_is_per_sentence_and_has_no_empty_row():
    combined = padding_mask([2, 4], 4) & causal_mask(4)
    assert combined.shape == (2, 1, 4, 4)
    assert not torch.equal(combined[0], combined[1])
    assert combined.any(dim=-1).all()
    assert int(combined[0].sum()) == 1 + 2 + 2 + 2


def test_kv_cache_mask_is_the_last_rows_of_the_causal_mask():
    torch.manual_seed(0)
    Q, K, V = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6, 4)
    full, _ = attnbook.scaled_dot_product_attention(Q, K, V, causal_mask(6)[0, 0])
    last2, _ = attnbook.scaled_dot_product_attention(Q[-2:], K, V, causal_mask(6)[0, 0, -2:])
    torch.testing.assert_close(last2, full[-2:])
    top_left = F.scaled_dot_product_attention(Q[-2:], K, V, is_causal=True)
    assert not torch.allclose(top_left, full[-2:])  # is_causal aligns top-left


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "4"])
def test_causal_mask_errors(bad):
    with pytest.raises(ValueError, match="seq_len"):
        causal_mask(bad)


# -- sinusoidal_positional_encoding ---------------------------------------------------------------

def test_sinusoidal_formula_and_constant_norm():
    pe = sinusoidal_positional_encoding(20, 8)
    assert pe.dtype == torch.float32 and pe.shape == (20, 8)
    for pos in (0, 3, 19):
        for i in range(4):
            angle = pos / 10000 ** (2 * i / 8)
            assert math.isclose(pe[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(pe[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)
    torch.testing.assert_close(pe.norm(dim=-1), torch.full((20,), 2.0))  # sqrt(d_model / 2)


def test_sinusoidal_odd_d_model():
    pe = sinusoidal_positional_encoding(4, 5)
    assert pe.shape == (4, 5)
    assert math.isclose(pe[2, 4].item(), math.sin(2 / 10000 ** (4 / 5)), rel_tol=1e-5)


def test_shift_by_k_is_a_fixed_rotation_and_dot_depends_on_distance():
    d_model, seq_len, k = 16, 40, 3
    pe = sinusoidal_positional_encoding(seq_len, d_model)
    M = torch.zeros(d_model, d_model)
    for i in range(d_model // 2):
        a = k / 10000 ** (2 * i / d_model)
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = torch.tensor([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
    torch.testing.assert_close(pe[k:], pe[:-k] @ M.T, atol=1e-4, rtol=0)
    G = pe @ pe.T
    torch.testing.assert_close(G, G.T)
    for offset in range(seq_len):
        diag = G.diagonal(offset)
        assert (diag.max() - diag.min()).item() < 1e-3


@pytest.mark.parametrize("seq_len, d_model, name", [(0, 4, "seq_len"), (4, 0, "d_model"), (2.5, 4, "seq_len")])
def test_sinusoidal_errors(seq_len, d_model, name):
    with pytest.raises(ValueError, match=name):
        sinusoidal_positional_encoding(seq_len, d_model)


# -- positions_exp ----------------------------------------------------------------------------------

def test_tiny_model_shapes_and_past_end_options():
    torch.manual_seed(0)
    tokens = random_tokens(3, 8, vocab=16, seed=0)
    assert tokens.shape == (3, 8) and tokens.max() < 16
    for kind in ("sinusoidal", "learned"):
        model = TinyPositionModel(kind, vocab=16, d_model=8, max_len=8)
        assert model(tokens).shape == (3, 8, 16)
    learned = TinyPositionModel("learned", vocab=16, d_model=8, max_len=8)
    long_tokens = random_tokens(2, 16, vocab=16, seed=1)
    with pytest.raises(IndexError):
        learned(long_tokens)  # the table has no row past max_len
    clamped = learned.positions(16, "clamp")
    torch.testing.assert_close(clamped[8:], learned.pos.weight[-1].expand(8, 8))
    untrained = learned.positions(16, "untrained")
    torch.testing.assert_close(untrained[:8], learned.pos.weight)
    torch.testing.assert_close(untrained, learned.positions(16, "untrained"))  # seeded
    assert learned(long_tokens, past_end="clamp").shape == (2, 16, 16)
    sinus = TinyPositionModel("sinusoidal", vocab=16, d_model=8, max_len=8)
    assert sinus(long_tokens).shape == (2, 16, 16)


def test_tiny_model_rejects_bad_arguments():
    with pytest.raises(attnbook.AttnBookError, match="kind"):
        TinyPositionModel("rope")
    model = TinyPositionModel("learned", max_len=4)
    with pytest.raises(attnbook.AttnBookError, match="past_end"):
        model.positions(8, "wrap")
    with pytest.raises(attnbook.AttnBookError, match="tokens"):
        model(torch.zeros(4, dtype=torch.long))


def test_training_is_seeded_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    model_a = train_model("sinusoidal", seed=3, train_len=6, steps=5, d_model=8)
    model_b = train_model("sinusoidal", seed=3, train_len=6, steps=5, d_model=8)
    assert torch.equal(torch.random.get_rng_state(), before)  # fork_rng: the global state is untouched
    for a, b in zip(model_a.parameters(), model_b.parameters()):
        assert torch.equal(a, b)
    assert not model_a.training  # returned in eval mode
    model = train_model("learned", seed=0, train_len=6, steps=5, d_model=8)
    acc = accuracy_by_position(model, 12, past_end="clamp", n=16)
    assert acc.shape == (11,) and ((acc >= 0) & (acc <= 1)).all()
    for bad in (1, 2.0, True):
        with pytest.raises(attnbook.AttnBookError, match="train_len"):
            train_model("learned", seed=0, train_len=bad, steps=1)


def test_previous_token_loss_is_cross_entropy_of_the_shifted_tokens():
    tokens = torch.tensor([[3, 1, 2]])
    perfect = torch.full((1, 3, 4), -1e4)
    perfect[0, 1, 3] = perfect[0, 2, 1] = 0.0  # position t predicts token t-1
    assert previous_token_loss(perfect, tokens).item() < 1e-3
    uniform = torch.zeros(1, 3, 4)
    assert math.isclose(previous_token_loss(uniform, tokens).item(), math.log(4), rel_tol=1e-6)


def test_extrapolation_figure_and_pe_figures():
    attnbook.setup()
    import pandas as pd

    rows = [{"方案": name, "种子": seed, "位置": t, "准确率": 0.5, "测试长度": length}
            for name in ("甲", "乙") for seed in (0, 1) for length in (4, 8) for t in range(1, length)]
    results = pd.DataFrame(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # includes matplotlib's missing-glyph warning
        ax = plot_extrapolation(results, train_len=4)
        ax.figure.canvas.draw()
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["甲", "乙"]
        fig = pe_wave_figure(3, seq_len=16, d_model=16)
        fig.canvas.draw()
        ax2 = pe_heatmap(sinusoidal_positional_encoding(8, 8), title="位置编码")
        ax2.figure.canvas.draw()
    plt.close("all")
    with pytest.raises(attnbook.AttnBookError, match="i"):
        pe_wave_figure(40, d_model=64)
    with pytest.raises(attnbook.AttnBookError, match="pe"):
        pe_heatmap(torch.zeros(2, 2, 2))


# -- exercises -----------------------------------------------------------------------------------------

def test_chapter_09_exercises_recognise_mistakes(capsys):
    assert attnbook.check("09-1", 11)
    assert not attnbook.check("09-1", 21)
    assert "填充掩码" in capsys.readouterr().out
    assert not attnbook.check("09-1", 9)
    assert "对角线" in capsys.readouterr().out
    assert attnbook.check("09-2", 4)
    assert not attnbook.check("09-2", 0)
    assert "右侧填充" in capsys.readouterr().out
    assert not attnbook.check("09-2", 5)
    assert "对角线" in capsys.readouterr().out


def test_chapter_10_exercises_recognise_mistakes(capsys):
    assert attnbook.check("10-1", math.sin(0.3))
    assert not attnbook.check("10-1", math.cos(0.3))
    assert "sin" in capsys.readouterr().out
    c, s = math.cos(1), math.sin(1)
    assert attnbook.check("10-2", [[c, s], [-s, c]])
    assert not attnbook.check("10-2", [[c, -s], [s, c]])
    assert "顺序" in capsys.readouterr().out
    assert not attnbook.check("10-3", 2)
    assert "平方" in capsys.readouterr().out
    assert not attnbook.check("10-3", 4)
    assert "略小" in capsys.readouterr().out


# -- issue 14: device / dtype, buffers, the 找 bug set -----------------------------------------------

def test_causal_mask_device_and_dtype():
    assert causal_mask(3, device="meta").device.type == "meta"
    additive = causal_mask(4, dtype=torch.float16)
    assert additive.dtype == torch.float16 and additive.shape == (1, 1, 4, 4)
    assert (additive[0, 0][causal_mask(4)[0, 0]] == 0).all() and additive[0, 0, 0, 1] == float("-inf")
    torch.manual_seed(0)
    Q, K, V = (torch.randn(1, 2, 4, 3) for _ in range(3))
    torch.testing.assert_close(F.scaled_dot_product_attention(Q, K, V, attn_mask=causal_mask(4, dtype=torch.float32)),
                               F.scaled_dot_product_attention(Q, K, V, is_causal=True))
    for bad in (torch.int64, "bool", None):
        with pytest.raises(attnbook.AttnBookError, match="dtype"):
            causal_mask(4, dtype=bad)


def test_padding_mask_device():
    assert padding_mask([1, 2], 3, device="meta").device.type == "meta"
    assert padding_mask(torch.tensor([1, 2]), 3).device.type == "cpu"


def test_sinusoidal_device_dtype_and_bf16_promotion():
    pe = sinusoidal_positional_encoding(10, 8, dtype=torch.bfloat16)
    assert pe.dtype == torch.bfloat16
    torch.testing.assert_close(pe.float(), sinusoidal_positional_encoding(10, 8), atol=1e-2, rtol=0)
    emb = torch.randn(10, 8, dtype=torch.bfloat16)
    assert (emb + sinusoidal_positional_encoding(10, 8)).dtype == torch.float32  # the trap
    assert (emb + pe).dtype == torch.bfloat16
    assert sinusoidal_positional_encoding(4, 4, device="meta").device.type == "meta"
    for bad in (torch.int64, "float16"):
        with pytest.raises(attnbook.AttnBookError, match="dtype"):
            sinusoidal_positional_encoding(4, 4, dtype=bad)


def test_sinusoidal_module_uses_a_non_persistent_buffer():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    assert list(module.parameters()) == [] and [n for n, _ in module.named_buffers()] == ["pe"]
    assert module.state_dict() == {}
    x = torch.zeros(2, 5, 8, dtype=torch.bfloat16)
    assert module(x).dtype == torch.bfloat16
    module.to(torch.float64)
    assert module.pe.dtype == torch.float64
    torch.testing.assert_close(module(torch.zeros(1, 5, 8, dtype=torch.float64))[0],
                               sinusoidal_positional_encoding(5, 8, dtype=torch.float64))
    for bad in (torch.zeros(5, 8), torch.zeros(1, 5, 7), torch.zeros(1, 17, 8)):
        with pytest.raises(attnbook.AttnBookError, match="x"):
            module(bad)


def _real(lengths, seq_len):
    return torch.arange(seq_len) >= seq_len - lengths[:, None]


def _keep(lengths, seq_len):
    return _real(lengths, seq_len)[:, None, None, :] & causal_mask(seq_len)


def _written(Q, K, V, keep, scale, fill=float("-inf"), zero_rows=True):
    w = torch.softmax((Q @ K.transpose(-2, -1) * scale).masked_fill(~keep, fill), dim=-1)
    return (torch.where(keep.any(-1, keepdim=True), w, 0.0) if zero_rows else w) @ V


BUGS = {  # key: (buggy function, [recognisable wrong fixes], symptom words)
    "09-3": (lambda Q, K, V, n: F.scaled_dot_product_attention(Q, K, V, attn_mask=~_keep(n, Q.size(-2))),
              [lambda Q, K, V, n: F.scaled_dot_product_attention(Q, K, V, attn_mask=_keep(n, Q.size(-2)).float()),
               lambda Q, K, V, n: F.scaled_dot_product_attention(Q, K, V, is_causal=True)],
              ["泄漏"]),
    "09-4": (lambda Q, K, V, n: _written(Q, K, V, causal_mask(Q.size(-2)), Q.size(-1) ** -0.5),
              [lambda Q, K, V, n: _written(Q, K, V, _real(n, Q.size(-2))[:, None, :, None] & causal_mask(Q.size(-2)),
                                           Q.size(-1) ** -0.5)],
              ["填充位"]),
    "09-5": (lambda Q, K, V, n: _written(Q, K, V, _keep(n, Q.size(-2)), (Q.size(1) * Q.size(-1)) ** -0.5),
              [lambda Q, K, V, n: _written(Q, K, V, _keep(n, Q.size(-2)), 1 / Q.size(-1))],
              ["缩放", "√d_k"]),
    "09-6": (lambda Q, K, V, n: _written(Q, K, V, _real(n, Q.size(-2))[:, None, None, :]
                                          & ~torch.ones(Q.size(-2), Q.size(-2), dtype=torch.bool).triu(), Q.size(-1) ** -0.5),
              [lambda Q, K, V, n: _written(Q, K, V, _real(n, Q.size(-2))[:, None, None, :]
                                           & (~torch.ones(6, 6, dtype=torch.bool).triu() | (torch.arange(6)[:, None] + torch.arange(6) == 0)),
                                           Q.size(-1) ** -0.5)],
              ["对角线"]),
    # bug ⑤ as the chapter prints it since part3 B3-03: −∞ and no zeroing, as the cited reports (NaN rows and
    # gradients); −1e9 (uniform rows) is the tempting fix, rejected as a convention of this exercise, not a leak
    "09-7": (lambda Q, K, V, n: _written(Q, K, V, _keep(n, Q.size(-2)), Q.size(-1) ** -0.5, zero_rows=False),
              [lambda Q, K, V, n: _written(Q, K, V, _keep(n, Q.size(-2)), Q.size(-1) ** -0.5, fill=-1e9, zero_rows=False)],
              ["整行被遮", "NaN", "梯度"]),
}


@pytest.mark.parametrize("key", list(BUGS))
def test_bug_set_recognises_the_bug_and_a_wrong_fix(key, capsys):
    buggy, wrong_fixes, words = BUGS[key]
    assert attnbook.check(key, buggy) is False
    out = capsys.readouterr().out
    assert all(w in out for w in words), out
    for wrong in wrong_fixes:
        assert attnbook.check(key, wrong) is False
        assert "✗" in capsys.readouterr().out
    good = lambda Q, K, V, n: _written(Q, K, V, _keep(n, Q.size(-2)), Q.size(-1) ** -0.5)
    assert attnbook.check(key, good) is True
    assert attnbook.check(key, lambda Q, K, V, n: F.scaled_dot_product_attention(Q, K, V, attn_mask=_keep(n, Q.size(-2))))
    assert "✓" in capsys.readouterr().out


def test_bug_set_bad_answers(capsys):
    assert attnbook.check("09-3", 3) is False and "函数" in capsys.readouterr().out
    assert attnbook.check("09-3", lambda Q, K, V, n: 1 / 0) is False and "ZeroDivisionError" in capsys.readouterr().out
    assert attnbook.check("09-3", lambda Q, K, V, n: Q[..., :2]) is False and "形状" in capsys.readouterr().out
    assert attnbook.check("09-3", None) is False and "还没有作答" in capsys.readouterr().out
    nan_rows = lambda Q, K, V, n: _written(Q, K, V, _keep(n, Q.size(-2)), Q.size(-1) ** -0.5, zero_rows=False)
    assert attnbook.check("09-7", nan_rows) is False and "NaN" in capsys.readouterr().out


def test_sinusoidal_encoding_in_float64_is_float64_accurate():
    """Asked for float64, the angles are computed in float64 (the review found 5e-4 errors at
    position 10 000 when they were computed in float32 and only cast)."""
    import math

    from attnbook.book import sinusoidal_positional_encoding

    pe = sinusoidal_positional_encoding(10_001, 8, dtype=torch.float64)
    for pos in (1, 777, 10_000):
        for i in range(4):
            angle = pos / 10000 ** (2 * i / 8)
            assert abs(pe[pos, 2 * i].item() - math.sin(angle)) < 1e-9
            assert abs(pe[pos, 2 * i + 1].item() - math.cos(angle)) < 1e-9


def test_an_empty_batch_of_lengths_is_named_as_such():
    """Second Part III review m6: padding_mask([]) blamed the dtype of an empty list."""
    from attnbook.book import padding_mask
    from attnbook.infra.errors import AttnBookError

    with pytest.raises(AttnBookError, match="batch ≥ 1"):
        padding_mask([], 5)


@pytest.mark.parametrize("lead", [(2, 3), (2,)])
def test_a_per_sentence_padding_mask_gets_the_index_it_needs(lead):
    """Second Part III review m5: a [batch, seq_len_k] mask was told to drop a dimension."""
    from attnbook.book import scaled_dot_product_attention
    from attnbook.infra.errors import AttnBookError

    Q, K = torch.zeros(*lead, 5, 4), torch.zeros(*lead, 6, 4)
    index = "mask[:, None, None, :]" if len(lead) == 2 else "mask[:, None, :]"
    with pytest.raises(AttnBookError, match=re.escape(index)):
        scaled_dot_product_attention(Q, K, K, torch.ones(2, 6, dtype=torch.bool))
    mask = torch.ones(2, 6, dtype=torch.bool)
    fixed = mask[:, None, None, :] if len(lead) == 2 else mask[:, None, :]
    assert scaled_dot_product_attention(Q, K, K, fixed)[0].shape == (*lead, 5, 4)
