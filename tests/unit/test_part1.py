"""Unit tests for Part I helpers: attnbook.pages.ch01–ch04 and exercises 01–03."""
from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import pytest
import torch

import attnbook
from attnbook.book import (factor_per_step, gradient_norms, init_rnn, log10_mean, measure_gradient_decay,
                           ngram_window, path_lengths, random_scores, self_match_rate, soft_lookup, tanh_rnn)
from attnbook.pages.ch01 import (SEGMENTED, SENTENCE, WEIGHT_SCALES, gradient_decay_figure, ngram_window_figure,
                                 path_length_figure, tokenize)
from attnbook.pages.ch02 import (TEMPERATURES, bottleneck_figure, learned_lookup_figure, library,
                                 temperature_figure)
from attnbook.pages.ch03 import D_MODELS, self_match_rates, xx_vs_qk_figure
from attnbook.pages.ch04 import cat_fish_figure


@pytest.fixture(autouse=True)
def _setup_and_close():
    attnbook.setup()
    yield
    plt.close("all")


# -- chapter 01: tokens and N-gram windows ------------------------------------------------------

def test_two_tokenizations_of_the_sentence():
    words, chars = tokenize(SEGMENTED, "词"), tokenize(SENTENCE, "字")
    assert "".join(words) == "".join(chars) == SENTENCE
    assert len(words) == 12 and len(chars) == 17
    assert tokenize("我/昨天", "字") == ["我", "昨", "天"]  # the "/" marks are not characters


def test_ngram_window_sees_n_minus_one_tokens():
    words = tokenize(SEGMENTED, "词")
    position = words.index("它")
    assert ngram_window(words, position, 1) == []
    assert ngram_window(words, position, 3) == ["公园", "，"]
    assert ngram_window(words, position, 5) == ["小狗", "去", "公园", "，"]
    assert ngram_window(words, 1, 10) == ["我"]  # fewer at the start


def test_ngram_figure_marks_the_antecedent():
    fig = ngram_window_figure(5, "词")
    assert "看得到“小狗”" in fig.axes[0].get_title()
    fig = ngram_window_figure(6, "字")
    assert "看不到“小狗”" in fig.axes[0].get_title()


# -- chapter 01: path lengths --------------------------------------------------------------------

def test_path_lengths_rnn_and_attention():
    rnn, attn = path_lengths(7, "rnn"), path_lengths(7, "attention")
    i, j = torch.meshgrid(torch.arange(7), torch.arange(7), indexing="ij")
    assert torch.equal(rnn, (i - j).abs())
    assert torch.equal(attn, (i != j).long())
    assert path_lengths(1, "rnn").tolist() == [[0]]
    cnn = path_lengths(7, "cnn", kernel_size=5)  # two neighbours on each side per layer
    assert torch.equal(cnn, ((i - j).abs() + 1) // 2)
    assert torch.equal(path_lengths(7, "cnn", kernel_size=3), rnn)


def test_path_length_figure_has_two_panels():
    words = tokenize(SEGMENTED, "词")
    fig = path_length_figure(words, words.index("小狗"), words.index("它"))
    assert len(fig.axes) == 2
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "4 步" in texts and "1 步" in texts


# -- chapter 01: the RNN experiment ---------------------------------------------------------------

def test_tanh_rnn_and_autograd_norms_match_the_chain_rule():
    W_xh, W_hh, gen = init_rnn(3, 5, 1.0, seed=0)
    X = torch.randn(6, 3, generator=gen, dtype=torch.float64)
    h_T = tanh_rnn(X, W_xh, W_hh)
    assert h_T.shape == (5,)
    norms = gradient_norms(X, W_xh, W_hh)
    assert norms.shape == (6,)
    h_prev = tanh_rnn(X[:-1], W_xh, W_hh)
    J1 = torch.diag(1 - h_T**2) @ W_hh.T @ torch.diag(1 - h_prev**2) @ W_xh.T
    torch.testing.assert_close(norms[-2], J1.norm())


def test_gradient_norms_against_finite_differences():
    W_xh, W_hh, gen = init_rnn(2, 4, 1.5, seed=1)
    X = torch.randn(5, 2, generator=gen, dtype=torch.float64)
    eps, t = 1e-6, 1
    cols = []
    for k in range(2):
        dX = torch.zeros_like(X)
        dX[t, k] = eps
        cols.append((tanh_rnn(X + dX, W_xh, W_hh) - tanh_rnn(X - dX, W_xh, W_hh)) / (2 * eps))
    fd = torch.stack(cols, dim=1).norm()
    torch.testing.assert_close(gradient_norms(X, W_xh, W_hh)[t], fd, rtol=1e-6, atol=1e-9)


def test_measure_shapes_and_input_scale():
    a = measure_gradient_decay(1.0)
    assert a.shape == (5, 60) and (a > 0).all() and a.dtype == torch.float64
    # smaller inputs keep tanh out of saturation: the gradient decays more slowly
    assert factor_per_step(measure_gradient_decay(1.0, input_scale=0.3)) > factor_per_step(a)


def test_small_scales_vanish_large_scales_explode():
    assert factor_per_step(measure_gradient_decay(0.5)) < 0.5
    assert factor_per_step(measure_gradient_decay(4.0)) > 1.2
    radii = [torch.linalg.eigvals(init_rnn(8, 32, 2.0, seed)[1]).abs().max().item() for seed in range(5)]
    assert all(1.8 < r < 2.4 for r in radii)


def test_factor_per_step_recovers_a_known_rate():
    k = torch.arange(30, dtype=torch.float64)
    norms = (0.8 ** k).repeat(3, 1)  # [seeds=3, seq_len=30]
    assert math.isclose(factor_per_step(norms), 0.8, rel_tol=1e-9)
    assert torch.allclose(log10_mean(norms), k * math.log10(0.8))


def test_gradient_decay_figure_names_the_regime():
    assert "梯度消失" in gradient_decay_figure(0.5).axes[0].get_title()
    assert "梯度爆炸" in gradient_decay_figure(4.0).axes[0].get_title()


# -- chapter 02: the library ------------------------------------------------------------------------

def test_library_shapes():
    lib = library()
    assert lib["K"].shape == (5, 4) and lib["V"].shape == (5, 3) and lib["q"].shape == (4,)
    assert len(lib["titles"]) == len(lib["tags"]) == 5
    assert lib["query_tag"] not in lib["tags"]  # the hard lookup must miss


def test_soft_lookup_limits_and_sdpa():
    lib = library()
    q, K, V = lib["q"], lib["K"], lib["V"]
    out, w = soft_lookup(q, K, V, 1.0)
    assert torch.isclose(w.sum(), torch.tensor(1.0, dtype=w.dtype))
    torch.testing.assert_close(out, w @ V)
    _, cold = soft_lookup(q, K, V, 1e-3)
    assert cold.argmax() == (K @ q).argmax() and cold.max() > 0.999
    hot_out, hot = soft_lookup(q, K, V, 1e4)
    torch.testing.assert_close(hot, torch.full((5,), 0.2, dtype=hot.dtype), atol=1e-3, rtol=0)
    sdpa_out, sdpa_w = attnbook.scaled_dot_product_attention(q[None], K, V)
    torch.testing.assert_close(sdpa_out[0], soft_lookup(q, K, V, 2.0)[0])


def test_cooling_criterion_is_the_log_z_threshold():
    """Exercise 02-1: from β1 to β2 (β = 1/τ), a_j grows iff (β2 − β1)(s_j − c) > 0, where
    c = (log Z(β2) − log Z(β1)) / (β2 − β1): cooling raises the books above c,
    heating those below it."""
    lib = library()
    q, K, V = lib["q"], lib["K"], lib["V"]
    s = K @ q
    for t1, t2 in [(1.0, 0.5), (2.0, 0.3), (1.0, 0.9), (0.5, 1.0)]:
        (_, a1), (_, a2) = soft_lookup(q, K, V, t1), soft_lookup(q, K, V, t2)
        b1, b2 = 1 / t1, 1 / t2
        threshold = (torch.logsumexp(b2 * s, 0) - torch.logsumexp(b1 * s, 0)) / (b2 - b1)
        assert torch.equal(a2 > a1, (b2 - b1) * (s - threshold) > 0)
    # the weighted mean at τ = 1 decides only an infinitesimal step: a score above it can still fall
    s2 = s.clone()
    s2[4] = 1.10
    w1, w2 = torch.softmax(s2, -1), torch.softmax(2 * s2, -1)
    assert s2[4] > w1 @ s2 and w2[4] < w1[4]


def test_library_figures():
    assert len(temperature_figure(1.0).axes) == 2
    assert len(bottleneck_figure().axes) == 2
    x = torch.linspace(0, 5, 10, dtype=torch.float64)
    ax = learned_lookup_figure(x, x.sin(), x, {"a": x, "b": x.cos()})
    assert len(ax.lines) == 3 and ax.get_xlabel() == "查询 x"


def test_cat_fish_figure():
    fig = cat_fish_figure(1.0, True)
    assert len(fig.axes) == 2 and "÷√2" in fig.axes[1].get_title()


# -- chapter 03: X·Xᵀ -------------------------------------------------------------------------------

def test_unit_length_rows_always_pick_themselves():
    assert self_match_rate(random_scores(3, 8, 50, how="unit")) == 1.0
    S = random_scores(4, 5, 10, "XXT")
    assert torch.allclose(S, S.transpose(-2, -1))
    S = random_scores(4, 5, 10, how="QKT", d_k=2)
    assert S.shape == (10, 5, 5) and not torch.allclose(S, S.transpose(-2, -1))


def test_self_match_rates_grow_with_d_model():
    low, high = self_match_rates(2, trials=200), self_match_rates(64, trials=200)
    assert low["XXT"] < 0.7 < high["XXT"] == 1.0
    assert abs(high["QKT"] - 1 / 6) < 0.05
    assert self_match_rate(torch.eye(4)) == 1.0


def test_longest_token_picks_itself_in_any_dimension():
    """Chapter 03: 2 s_ij <= s_ii + s_jj for a Gram matrix, so in every pair one token prefers itself
    and the longest token always does, even at d_model = 2 where most tokens do not."""
    for d in (2, 3, 8):
        S = random_scores(d, 6, 300, "XXT", seed=4)
        diag = S.diagonal(dim1=-2, dim2=-1)  # [300, 6]
        assert ((diag[:, :, None] >= S) | (diag[:, None, :] >= S)).all()
        longest = diag.argmax(dim=-1)
        assert torch.equal(S.argmax(dim=-1).gather(-1, longest[:, None]).squeeze(-1), longest)
    assert self_match_rate(random_scores(2, 6, 300, "XXT", seed=4)) < 0.7


def test_xx_vs_qk_figure():
    fig = xx_vs_qk_figure(8, trials=50)
    assert len(fig.axes) == 2 and "%" in fig.axes[0].get_title()


# -- sliders: static frames and live widgets -------------------------------------------------------

SLIDERS = {
    "ngram": lambda: attnbook.slider(ngram_window_figure, {"n": list(range(1, 9)), "how": ["词", "字"]},
                                     initial={"n": 3, "how": "词"}),
    "rnn": lambda: attnbook.slider(gradient_decay_figure, {"weight_scale": list(WEIGHT_SCALES)},
                                   initial={"weight_scale": 1.0}),
    "temperature": lambda: attnbook.slider(temperature_figure, {"temperature": list(TEMPERATURES)},
                                           initial={"temperature": 1.0}),
    "d_model": lambda: attnbook.slider(xx_vs_qk_figure, {"d_model": list(D_MODELS)}, initial={"d_model": 8}),
}


@pytest.mark.parametrize("name", list(SLIDERS))
def test_slider_grids_stay_small(name):
    """Every frame is embedded in the page: keep each slider at most 40 frames."""
    s = SLIDERS[name]()
    n = 1
    for values in s.controls.values():
        n *= len(values)
    assert n <= 40


def test_static_slider_html_shows_the_initial_frame(monkeypatch):
    s = attnbook.slider(temperature_figure, {"temperature": [0.1, 1.0, 10.0]}, initial={"temperature": 1.0})
    html = s.html()
    assert len(re.findall(r"data-frame=", html)) == 3 and html.count("display:block") == 1
    assert re.search(r'data-frame="1"[^>]*display:block', html)


@pytest.mark.parametrize("name", list(SLIDERS))
def test_live_widget_redraws(name):
    pytest.importorskip("ipywidgets")
    s = SLIDERS[name]()
    box = s.widget()
    key, control = next(iter(box.attnbook_controls.items()))
    first = box.attnbook_image.value
    control.value = 0 if control.value != 0 else 1
    assert box.attnbook_image.value != first
    assert box.attnbook_image.value == s.render({key: s.controls[key][control.value]}, compact=False)


# -- readers' mistakes get Chinese errors ----------------------------------------------------------

words = tokenize(SEGMENTED, "词")
CASES = [
    ("tokenize: unknown mode", lambda: tokenize(SENTENCE, "句"), "how"),
    ("tokenize: empty sentence", lambda: tokenize("", "字"), "sentence"),
    ("tokenize: empty word", lambda: tokenize("我//你", "词"), "sentence"),
    ("ngram figure: target missing", lambda: ngram_window_figure(3, "词", target="猫"), "target"),
    ("ngram figure: antecedent missing", lambda: ngram_window_figure(3, "词", antecedent="小猫"), "antecedent"),
    ("path figure: bad source", lambda: path_length_figure(words, 20, 3), "source"),
    ("rnn figure: scale not offered", lambda: gradient_decay_figure(1.1), "weight_scale"),
    ("temperature: zero", lambda: temperature_figure(0.0), "temperature"),
    ("bottleneck: weights length", lambda: bottleneck_figure(weights=[0.5, 0.5]), "weights"),
    ("cat fish: q not a number", lambda: cat_fish_figure("1", True), "q_cat_0"),
    ("cat fish: scaled not bool", lambda: cat_fish_figure(1.0, "yes"), "scaled"),
    ("learned lookup: lengths differ", lambda: learned_lookup_figure([0.0, 1.0], [0.0], [0.0], {}), "y_train"),
]


@pytest.mark.parametrize("name, call, arg", CASES, ids=[c[0] for c in CASES])
def test_reader_mistakes_get_chinese_errors(name, call, arg, assert_reader_error):
    assert_reader_error(call, arg)


# -- exercises 01–03 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key, wrong, hint", [
    ("01-1", 6, "N − 1"),
    ("01-1", 5, "按词切分"),
    ("01-2", 20, "向上取整"),
    ("01-3", "B", "W_hh"),
    ("01-3", "C", "方向反了"),
    ("02-1", "A", "第一名"),
    ("02-1", "D", "和为 1"),
    ("02-2", "A", "差距"),
    ("02-3", library()["V"][0], "τ → 0"),
    ("03-1", [7, 8], "d_v"),
    ("03-2", 768, "d_k = d_v = d_model"),
    ("03-3", 1, "perm"),
])
def test_typical_mistakes_are_explained(capsys, key, wrong, hint):
    assert attnbook.check(key, wrong) is False
    assert hint in capsys.readouterr().out
