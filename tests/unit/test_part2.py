"""attnbook.scaling: the measurements and figures of chapters 05 (√d_k) and 06 (convex combinations)."""
from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import attnbook
from attnbook import scaling as S


@pytest.fixture(autouse=True)
def _setup_and_close():
    attnbook.setup()
    yield
    plt.close("all")


# ---------------------------------------------------------------------------------------------
# chapter 05: measurements
# ---------------------------------------------------------------------------------------------
def test_random_qk_shapes_determinism_and_no_global_side_effect():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    q, K = S.random_qk(8, n_rows=5, seq_len=3, seed=2)
    assert torch.equal(torch.get_rng_state(), before)
    assert q.shape == (5, 8) and K.shape == (5, 3, 8) and q.dtype == torch.float64
    q2, K2 = S.random_qk(8, n_rows=5, seq_len=3, seed=2)
    assert torch.equal(q, q2) and torch.equal(K, K2)
    q3, _ = S.random_qk(8, n_rows=5, seq_len=3, seed=3)
    assert not torch.equal(q, q3)


@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_dot_product_variance_is_d_k_and_one_after_scaling(d_k):
    q, K = S.random_qk(d_k, n_rows=2000, seq_len=4)
    unscaled = S.attention_logits(q, K, scaled=False)
    scaled = S.attention_logits(q, K, scaled=True)
    assert unscaled.shape == (2000, 4)
    torch.testing.assert_close(scaled, unscaled / math.sqrt(d_k))
    assert abs(unscaled.var().item() / d_k - 1) < 0.1
    assert abs(scaled.var().item() - 1) < 0.1


def test_entropy_extremes():
    uniform = torch.full((2, 5), 0.2, dtype=torch.float64)
    torch.testing.assert_close(S.entropy(uniform), torch.full((2,), math.log(5), dtype=torch.float64))
    assert S.entropy([0.0, 1.0, 0.0]).item() == 0.0  # 0 log 0 = 0, no NaN
    assert S.entropy([[0.5, 0.5]]).shape == (1,)


def test_softmax_jacobian_autograd_equals_formula():
    z = torch.randn(3, 4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    jac = S.softmax_jacobian(z)
    assert jac.shape == (3, 4, 6, 6)
    torch.testing.assert_close(jac, S.softmax_jacobian_formula(z))
    torch.testing.assert_close(jac.sum(dim=-1), torch.zeros(3, 4, 6, dtype=torch.float64))  # rows of J sum to 0
    # uniform row: norm √(n-1)/n; saturated row: ~0
    assert abs(S.softmax_jacobian(torch.zeros(4)).norm().item() - math.sqrt(3) / 4) < 1e-6
    assert S.softmax_jacobian(torch.tensor([30.0, 0.0, 0.0], dtype=torch.float64)).norm().item() < 1e-12


def test_row_stats_and_table():
    s = S.row_stats(64, scaled=False, n_rows=50, seq_len=6)
    assert s.logits.shape == s.attn_weights.shape == (50, 6)
    assert s.max_weight.shape == s.entropy.shape == s.jacobian_norm.shape == (50,)
    assert ((s.max_weight >= 1 / 6 - 1e-12) & (s.max_weight <= 1)).all()
    assert S.row_stats(64, scaled=False, n_rows=50, seq_len=6) is s  # cached
    table = S.saturation_table([1, 16, 256], n_rows=200, seq_len=8)
    assert len(table) == 6 and {"d_k", "scaled", "logit_std", "max_weight", "entropy", "grad_median",
                                "grad_q25", "grad_q75", "grad_mean", "tiny_grad_share"} <= set(table.columns)
    unscaled = table[~table["scaled"]].set_index("d_k")
    scaled = table[table["scaled"]].set_index("d_k")
    assert unscaled["max_weight"].is_monotonic_increasing and unscaled["entropy"].is_monotonic_decreasing
    assert unscaled.loc[256, "grad_median"] < 0.1 * scaled.loc[256, "grad_median"]
    assert scaled["logit_std"].between(0.9, 1.1).all()
    assert (unscaled["grad_q25"] <= unscaled["grad_median"]).all() and (unscaled["grad_median"] <= unscaled["grad_q75"]).all()


def test_query_gradient_stays_put_when_scaled():
    small = S.query_gradient_norm(4, scaled=True, n_rows=100).median().item()
    large = S.query_gradient_norm(512, scaled=True, n_rows=100).median().item()
    assert abs(large / small - 1) < 0.15
    assert S.query_gradient_norm(1024, scaled=False, n_rows=100).median().item() < 0.2 * large


def test_multihead_scale_table():
    table = S.multihead_scale_table(d_model=128, num_heads=4, seq_len=8, n_rows=50)
    assert list(table.index) == ["1/√d_k（正确）", "1/√d_model", "1/d_k", "1/√seq_len", "不缩放"]
    assert abs(table.loc["1/√d_k（正确）", "分数标准差"] - 1) < 0.1
    assert abs(table.loc["1/√d_model", "分数标准差"] - 1 / math.sqrt(4)) < 0.05
    assert table.loc["1/√d_model", "熵 / log(seq_len)"] > table.loc["1/√d_k（正确）", "熵 / log(seq_len)"]


# ---------------------------------------------------------------------------------------------
# chapter 05: figures
# ---------------------------------------------------------------------------------------------
def test_figures_are_pure_and_labelled():
    table = S.saturation_table([1, 8, 64], n_rows=40, seq_len=5)
    ax = S.plot_variance([1, 8, 64], [1.0, 8.0, 64.0], [1.0, 1.0, 1.0])
    assert ax.get_xlabel() == "d_k" and ax.get_ylabel()
    fig = S.plot_saturation(table, seq_len=5)
    assert len(fig.axes) == 2
    ax = S.plot_gradients(table, highlight=(8, False))
    assert ax.get_yscale() == "log"
    fig = S.scaling_figure(128, False)
    assert len(fig.axes) == 3 and "d_k = 128" in fig._suptitle.get_text()


def test_scaling_slider_static_html():
    slider = attnbook.slider(S.scaling_figure, {"d_k": [1, 128], "scaled": [False, True]},
                             initial={"d_k": 128}, labels={"scaled": "除以 √d_k"})
    html = slider.html()
    assert sorted(re.findall(r'data-frame="([0-9,]+)"', html)) == ["0,0", "0,1", "1,0", "1,1"]
    assert html.count("display:block") == 1


# ---------------------------------------------------------------------------------------------
# chapter 06: convex combinations
# ---------------------------------------------------------------------------------------------
TRIANGLE = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)


def test_barycentric_basics():
    torch.testing.assert_close(S.barycentric(TRIANGLE, TRIANGLE), torch.eye(3, dtype=torch.float64))
    centre = S.barycentric(TRIANGLE.mean(dim=0), TRIANGLE)
    assert centre.shape == (3,)
    torch.testing.assert_close(centre, torch.full((3,), 1 / 3, dtype=torch.float64))
    points = torch.tensor([[0.2, 0.2], [1.0, 1.0], [-0.1, 0.5]], dtype=torch.float64)
    lam = S.barycentric(points, TRIANGLE)
    torch.testing.assert_close(lam.sum(dim=-1), torch.ones(3, dtype=torch.float64))
    torch.testing.assert_close(lam @ TRIANGLE, points)
    assert S.in_triangle(points, TRIANGLE).tolist() == [True, False, False]
    assert S.in_triangle([[0.5, 0.5]], TRIANGLE).tolist() == [True]  # on the edge counts


def test_closest_point_in_triangle():
    torch.testing.assert_close(S.closest_point_in_triangle([0.2, 0.2], TRIANGLE),
                               torch.tensor([0.2, 0.2], dtype=torch.float64))
    torch.testing.assert_close(S.closest_point_in_triangle([1.0, 1.0], TRIANGLE),
                               torch.tensor([0.5, 0.5], dtype=torch.float64))  # nearest on an edge
    torch.testing.assert_close(S.closest_point_in_triangle([-1.0, -2.0], TRIANGLE),
                               torch.tensor([0.0, 0.0], dtype=torch.float64))  # nearest is a vertex


@pytest.mark.parametrize("tau", [1e-3, 0.02, 0.3, 1.0, 7.0, 1e3])
def test_hull_outputs_stay_inside_for_any_temperature(tau):
    d = attnbook.cat_eats_fish()
    attn_weights, out = S.hull_outputs(tau)
    assert (attn_weights >= 0).all()
    torch.testing.assert_close(attn_weights.sum(dim=-1), torch.ones(3, dtype=torch.float64))
    lam = S.barycentric(out, d["V"])
    assert (lam >= -1e-12).all() and S.in_triangle(out, d["V"]).all()


def test_hull_outputs_at_one_is_ordinary_attention():
    d = attnbook.cat_eats_fish()
    ref_out, ref_w = attnbook.scaled_dot_product_attention(d["Q"], d["K"], d["V"])
    w, out = S.hull_outputs(1.0)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(out, ref_out)


def test_hull_figures():
    d = attnbook.cat_eats_fish()
    ax = S.plot_hull(d["V"], d["V"].mean(dim=0, keepdim=True).expand(3, 2), labels="猫吃鱼", title="t")
    assert ax.get_aspect() == 1.0
    fig = S.hull_figure(0.5)
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == "温度 τ = 0.5"


# ---------------------------------------------------------------------------------------------
# readers' mistakes → Chinese errors naming the argument
# ---------------------------------------------------------------------------------------------
BAD = [
    ("d_k zero", lambda: S.random_qk(0), "d_k"),
    ("d_k negative", lambda: S.random_qk(-4), "d_k"),
    ("d_k float", lambda: S.random_qk(1.5), "d_k"),
    ("d_k bool", lambda: S.row_stats(True, scaled=True), "d_k"),
    ("d_k string", lambda: S.query_gradient_norm("64", scaled=True), "d_k"),
    ("d_k huge", lambda: S.random_qk(10 ** 6), "d_k"),
    ("too many numbers", lambda: S.random_qk(1024, n_rows=5000, seq_len=10), "n_rows"),
    ("seq_len zero", lambda: S.random_qk(4, seq_len=0), "seq_len"),
    ("seed negative", lambda: S.random_qk(4, seed=-1), "seed"),
    ("scaled not bool", lambda: S.row_stats(4, scaled="yes"), "scaled"),
    ("logits q wrong rank", lambda: S.attention_logits(torch.zeros(3), torch.zeros(3, 2, 3)), "q"),
    ("logits K mismatch", lambda: S.attention_logits(torch.zeros(2, 4), torch.zeros(2, 3, 5)), "K"),
    ("entropy negative weights", lambda: S.entropy([0.5, -0.1, 0.6]), "attn_weights"),
    ("entropy scalar", lambda: S.entropy(0.5), "attn_weights"),
    ("entropy not numbers", lambda: S.entropy(["a", "b"]), "attn_weights"),
    ("jacobian of a scalar", lambda: S.softmax_jacobian(torch.tensor(1.0)), "logits"),
    ("jacobian not numbers", lambda: S.softmax_jacobian([["x"]]), "logits"),
    ("d_k_values empty", lambda: S.saturation_table([]), "d_k_values"),
    ("d_k_values string", lambda: S.saturation_table("1,2,4"), "d_k_values"),
    ("d_k_values with zero", lambda: S.saturation_table([1, 0, 4]), "d_k_values"),
    ("heads do not divide", lambda: S.multihead_scale_table(d_model=100, num_heads=8), "num_heads"),
    ("one key only", lambda: S.multihead_scale_table(seq_len=1), "seq_len"),
    ("variance lengths differ", lambda: S.plot_variance([1, 2, 4], [1.0, 2.0], [1.0, 1.0, 1.0]), "var_unscaled"),
    ("table is not a table", lambda: S.plot_gradients([1, 2, 3]), "table"),
    ("highlight not in table", lambda: S.plot_gradients(S.saturation_table([1, 2], n_rows=10, seq_len=3),
                                                        highlight=(64, True)), "highlight"),
    ("slider d_k off the grid", lambda: S.scaling_figure(3, True), "d_k"),
    ("triangle wrong shape", lambda: S.barycentric([0.1, 0.1], torch.zeros(4, 2)), "triangle"),
    ("degenerate triangle", lambda: S.barycentric([0.1, 0.1], [[0, 0], [1, 1], [2, 2]]), "triangle"),
    ("points 3-D", lambda: S.barycentric([0.1, 0.1, 0.1], TRIANGLE), "points"),
    ("closest point given many", lambda: S.closest_point_in_triangle([[0, 0], [1, 1]], TRIANGLE), "point"),
    ("temperature zero", lambda: S.hull_outputs(0.0), "temperature"),
    ("temperature negative", lambda: S.hull_outputs(-1.0), "temperature"),
    ("temperature nan", lambda: S.hull_outputs(float("nan")), "temperature"),
    ("temperature infinite", lambda: S.hull_outputs(math.inf), "temperature"),
    ("temperature bool", lambda: S.hull_outputs(True), "temperature"),
    ("hull labels wrong count", lambda: S.plot_hull(TRIANGLE, labels="猫吃"), "labels"),
    ("hull outputs wrong shape", lambda: S.plot_hull(TRIANGLE, np.zeros((2, 2))), "outputs"),
    ("hull trails wrong shape", lambda: S.plot_hull(TRIANGLE, trails=np.zeros((5, 2))), "trails"),
]


@pytest.mark.parametrize("name, call, arg", BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_get_chinese_errors(name, call, arg, assert_reader_error):
    assert_reader_error(call, arg)


# ---------------------------------------------------------------------------------------------
# exercises 05-*, 06-*
# ---------------------------------------------------------------------------------------------
def test_exercise_mistakes_are_recognised(capsys):
    assert attnbook.check("05-2", 1 / math.sqrt(768)) is False
    assert "d_model" in capsys.readouterr().out
    assert attnbook.check("05-1", 256) is False
    assert "方差" in capsys.readouterr().out
    assert attnbook.check("06-1", [1, 1, 1, 1]) is False
    assert "三角形" in capsys.readouterr().out
    assert attnbook.check("06-2", attnbook.cat_eats_fish()["V"].sum(dim=0)) is False
    assert "除以 3" in capsys.readouterr().out


def test_exercise_answers(capsys):
    V = attnbook.cat_eats_fish()["V"]
    assert attnbook.check("05-3", torch.softmax(torch.tensor([1.0, 0.0, 0.0, 0.0]), dim=-1)[0])
    assert attnbook.check("06-1", [1, 0, 0, 1])
    assert attnbook.check("06-3", V[:, 0].max())
    assert capsys.readouterr().out.count("✅") == 3
