"""attnbook.pages.ch05 and ch06: the measurements and figures of chapters 05 (√d_k) and 06 (convex combinations)."""
from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import attnbook
from attnbook import book as B
from attnbook.pages import ch05 as S
from attnbook.pages import ch06 as H


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
    torch.testing.assert_close(B.entropy(uniform), torch.full((2,), math.log(5), dtype=torch.float64))
    assert B.entropy(torch.tensor([0.0, 1.0, 0.0])).item() == 0.0  # 0 log 0 = 0, no NaN
    assert B.entropy(torch.tensor([[0.5, 0.5]])).shape == (1,)


def test_softmax_jacobian_autograd_equals_formula():
    z = torch.randn(3, 4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    jac = B.softmax_jacobian(z)
    assert jac.shape == (3, 4, 6, 6)
    p = torch.softmax(z, dim=-1)
    torch.testing.assert_close(jac, torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2))
    torch.testing.assert_close(jac.sum(dim=-1), torch.zeros(3, 4, 6, dtype=torch.float64))  # rows of J sum to 0
    # uniform row: norm √(n-1)/n; a two-way tie: 0.5 (the largest for 4 keys); saturated row: ~0
    assert abs(B.softmax_jacobian(torch.zeros(4, dtype=torch.float64)).norm().item() - math.sqrt(3) / 4) < 1e-6
    tie = B.softmax_jacobian(torch.tensor([30.0, 30.0, -30.0, -30.0], dtype=torch.float64)).norm().item()
    assert abs(tie - 0.5) < 1e-9
    assert B.softmax_jacobian(torch.tensor([30.0, 0.0, 0.0], dtype=torch.float64)).norm().item() < 1e-12


def test_largest_jacobian_is_at_a_two_way_tie():
    """Random rows over the simplex never beat the two-way tie (exercise 05-4)."""
    z = 3 * torch.randn(20000, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    norms = B.softmax_jacobian(z).flatten(1).norm(dim=1)
    assert norms.max().item() <= 0.5 + 1e-12 and norms.max().item() > math.sqrt(3) / 4


def test_row_stats_and_table():
    s = S.row_stats(64, scaled=False, n_rows=50, seq_len=6)
    assert s.logits.shape == s.attn_weights.shape == (50, 6)
    assert s.max_weight.shape == s.entropy.shape == s.jacobian_norm.shape == (50,)
    assert ((s.max_weight >= 1 / 6 - 1e-12) & (s.max_weight <= 1)).all()
    assert S.row_stats(64, scaled=False, n_rows=50, seq_len=6) is s  # cached
    table = S.saturation_table([1, 16, 256], n_rows=200, seq_len=8)
    assert len(table) == 6 and {"d_k", "缩放方式", "分数标准差", "最大权重", "熵", "梯度中位数", "梯度 25% 分位",
                                "梯度 75% 分位", "梯度均值", "几乎无梯度的行"} <= set(table.columns)
    unscaled = table[table["缩放方式"] == "不缩放"].set_index("d_k")
    scaled = table[table["缩放方式"] == "除以 √d_k"].set_index("d_k")
    assert unscaled["最大权重"].is_monotonic_increasing and unscaled["熵"].is_monotonic_decreasing
    assert unscaled.loc[256, "梯度中位数"] < 0.1 * scaled.loc[256, "梯度中位数"]
    assert scaled["分数标准差"].between(0.9, 1.1).all()


def test_slider_table_equals_the_chapter_loop():
    """The slider's table (plumbing) is the chapter 05 loop, computed with the chapter's own functions."""
    table = S.saturation_table([4, 128], n_rows=100, seq_len=10).set_index(["d_k", "缩放方式"])
    for d_k in (4, 128):
        q, K = S.random_qk(d_k, n_rows=100, seq_len=10)
        for how in ("不缩放", "除以 √d_k"):
            logits = (K @ q.unsqueeze(-1)).squeeze(-1)
            if how == "除以 √d_k":
                logits = logits / math.sqrt(d_k)
            p = torch.softmax(logits, dim=-1)
            J_norm = B.softmax_jacobian(logits).flatten(1).norm(dim=1)
            line = table.loc[(d_k, how)]
            assert math.isclose(line["最大权重"], p.max(dim=-1).values.mean().item(), rel_tol=1e-12)
            assert math.isclose(line["熵"], B.entropy(p).mean().item(), rel_tol=1e-12)
            assert math.isclose(line["梯度中位数"], J_norm.quantile(0.5).item(), rel_tol=1e-12)


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
    # the chapter passes its own table and logits: the figure draws exactly those
    logits_by = {(d_k, how): torch.zeros(7, 5, dtype=torch.float64) for d_k in S.D_K_GRID for how in ("不缩放", "除以 √d_k")}
    fig = S.scaling_figure(8, True, table=S.saturation_table(n_rows=20, seq_len=5), logits_by=logits_by)
    assert "7 个随机查询，每个看 5 个键" in fig._suptitle.get_text()


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
    torch.testing.assert_close(B.barycentric(TRIANGLE, TRIANGLE), torch.eye(3, dtype=torch.float64))
    centre = B.barycentric(TRIANGLE.mean(dim=0), TRIANGLE)
    assert centre.shape == (3,)
    torch.testing.assert_close(centre, torch.full((3,), 1 / 3, dtype=torch.float64))
    points = torch.tensor([[0.2, 0.2], [1.0, 1.0], [-0.1, 0.5]], dtype=torch.float64)
    lam = B.barycentric(points, TRIANGLE)
    torch.testing.assert_close(lam.sum(dim=-1), torch.ones(3, dtype=torch.float64))
    torch.testing.assert_close(lam @ TRIANGLE, points)
    assert B.in_triangle(points, TRIANGLE).tolist() == [True, False, False]
    assert B.in_triangle([[0.5, 0.5]], TRIANGLE).tolist() == [True]  # on the edge counts


@pytest.mark.parametrize("tau", [1e-3, 0.02, 0.3, 1.0, 7.0, 1e3])
def test_hull_outputs_stay_inside_for_any_temperature(tau):
    d = attnbook.cat_eats_fish()
    attn_weights, out = H.hull_outputs(tau)
    assert (attn_weights >= 0).all()
    torch.testing.assert_close(attn_weights.sum(dim=-1), torch.ones(3, dtype=torch.float64))
    lam = B.barycentric(out, d["V"])
    assert (lam >= -1e-12).all() and B.in_triangle(out, d["V"]).all()


def test_hull_outputs_at_one_is_ordinary_attention():
    d = attnbook.cat_eats_fish()
    ref_out, ref_w = attnbook.scaled_dot_product_attention(d["Q"], d["K"], d["V"])
    w, out = H.hull_outputs(1.0)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(out, ref_out)


def test_concatenated_heads_stay_in_the_box_and_w_o_leaves_it():
    """Chapter 06: heads that each average one coordinate can leave the triangle but never V's
    per-coordinate box; W_O = [I; −I] mixing a "猫" head and a "鱼" head reaches v_猫 − v_鱼."""
    V = attnbook.cat_eats_fish()["V"]
    lo, hi = V.min(dim=0).values, V.max(dim=0).values
    logits = 3 * torch.randn(500, 2, 3, generator=torch.Generator().manual_seed(0), dtype=V.dtype)
    w = torch.softmax(logits, dim=-1)  # [500, heads=2, 3]
    concat = torch.stack([w[:, 0] @ V[:, 0], w[:, 1] @ V[:, 1]], dim=-1)  # [500, 2]
    assert ((concat >= lo) & (concat <= hi)).all()
    assert not B.in_triangle(concat, V).all()
    head1 = torch.softmax(torch.tensor([30.0, 0.0, 0.0], dtype=V.dtype), dim=-1) @ V
    head2 = torch.softmax(torch.tensor([0.0, 0.0, 30.0], dtype=V.dtype), dim=-1) @ V
    eye = torch.eye(2, dtype=V.dtype)
    out = torch.cat([head1, head2]) @ torch.cat([eye, -eye])
    torch.testing.assert_close(out, V[0] - V[2])
    assert not ((out >= lo) & (out <= hi)).all()
    # one head followed by any linear W_O keeps its barycentric coordinates (the weights)
    W_O = torch.randn(2, 2, generator=torch.Generator().manual_seed(1), dtype=V.dtype)
    torch.testing.assert_close(B.barycentric(w[:3, 0] @ V @ W_O, V @ W_O), w[:3, 0])


def test_hull_figures():
    d = attnbook.cat_eats_fish()
    ax = H.plot_hull(d["V"], d["V"].mean(dim=0, keepdim=True).expand(3, 2), labels="猫吃鱼", title="t")
    assert ax.get_aspect() == 1.0
    fig = H.hull_figure(0.5)
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == "温度 τ = 0.5"


# ---------------------------------------------------------------------------------------------
# readers' mistakes → Chinese errors naming the argument
# ---------------------------------------------------------------------------------------------
BAD = [
    ("d_k zero", lambda: S.random_qk(0), "d_k"),
    ("d_k negative", lambda: S.random_qk(-4), "d_k"),
    ("d_k float", lambda: S.random_qk(1.5), "d_k"),
    ("d_k bool", lambda: S.row_stats(True, scaled=True), "d_k"),
    ("d_k string", lambda: S.random_qk("64"), "d_k"),
    ("d_k huge", lambda: S.random_qk(10 ** 6), "d_k"),
    ("hull triangle degenerate", lambda: H.plot_hull([[0, 0], [1, 1], [2, 2]]), "triangle"),
    ("too many numbers", lambda: S.random_qk(1024, n_rows=5000, seq_len=10), "n_rows"),
    ("seq_len zero", lambda: S.random_qk(4, seq_len=0), "seq_len"),
    ("seed negative", lambda: S.random_qk(4, seed=-1), "seed"),
    ("scaled not bool", lambda: S.row_stats(4, scaled="yes"), "scaled"),
    ("logits q wrong rank", lambda: S.attention_logits(torch.zeros(3), torch.zeros(3, 2, 3)), "q"),
    ("logits K mismatch", lambda: S.attention_logits(torch.zeros(2, 4), torch.zeros(2, 3, 5)), "K"),
    ("d_k_values empty", lambda: S.saturation_table([]), "d_k_values"),
    ("d_k_values string", lambda: S.saturation_table("1,2,4"), "d_k_values"),
    ("d_k_values with zero", lambda: S.saturation_table([1, 0, 4]), "d_k_values"),
    ("variance lengths differ", lambda: S.plot_variance([1, 2, 4], [1.0, 2.0], [1.0, 1.0, 1.0]), "var_unscaled"),
    ("table is not a table", lambda: S.plot_gradients([1, 2, 3]), "table"),
    ("highlight not in table", lambda: S.plot_gradients(S.saturation_table([1, 2], n_rows=10, seq_len=3),
                                                        highlight=(64, True)), "highlight"),
    ("slider d_k off the grid", lambda: S.scaling_figure(3, True), "d_k"),
    ("temperature zero", lambda: H.hull_outputs(0.0), "temperature"),
    ("temperature negative", lambda: H.hull_outputs(-1.0), "temperature"),
    ("temperature nan", lambda: H.hull_outputs(float("nan")), "temperature"),
    ("temperature infinite", lambda: H.hull_outputs(math.inf), "temperature"),
    ("temperature bool", lambda: H.hull_outputs(True), "temperature"),
    ("hull labels wrong count", lambda: H.plot_hull(TRIANGLE, labels="猫吃"), "labels"),
    ("hull outputs wrong shape", lambda: H.plot_hull(TRIANGLE, np.zeros((2, 2))), "outputs"),
    ("hull trails wrong shape", lambda: H.plot_hull(TRIANGLE, trails=np.zeros((5, 2))), "trails"),
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
    assert attnbook.check("06-2", attnbook.cat_eats_fish()["V"].mean(dim=0)) is False
    assert "τ → ∞" in capsys.readouterr().out
    assert attnbook.check("05-4", "A") is False
    assert "权重最平" in capsys.readouterr().out
    assert attnbook.check("04-3", float(torch.softmax(attnbook.cat_eats_fish()["Q"][0] @ attnbook.cat_eats_fish()["K"].T
                                                      / math.sqrt(2), dim=-1)[2])) is False
    assert "√8" in capsys.readouterr().out


def test_exercise_answers(capsys):
    V = attnbook.cat_eats_fish()["V"]
    scores = torch.tensor([4.0, 0.0, 0.0, 0.0])
    assert attnbook.check("05-3", [torch.softmax(scores / 4, dim=-1)[0], torch.softmax(scores, dim=-1)[0]])
    assert attnbook.check("06-1", [1, 0, 0, 1])
    assert attnbook.check("06-3", V.sum(dim=-1).max())
    assert capsys.readouterr().out.count("✓") == 3
