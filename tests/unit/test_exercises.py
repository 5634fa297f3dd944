from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import attention_zoo as zoo
import attnbook
from attnbook.exercises import load_all


def _numeric(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=float)


def _within(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=0))


# Known clashes, for the exercise's owner to fix (strict: the entry must go once fixed).
# 08-1: batch·num_heads·seq_len·d_k = batch·seq_len·d_model (d_model = num_heads·d_k), so the hint
# for "out" can never show; merge the two Mistakes into one hint ("Q 的各头或输出 out 的大小").
CLASHES: set[str] = set()  # exercises whose recognised mistakes coincide (none today)


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason="两个 Mistake 相同"))
                                 if k in CLASHES else k for k in sorted(load_all())])
def test_recognised_mistakes_are_told_apart_from_the_answer_and_each_other(key):
    """No recognised Mistake lies within the tolerance of the answer (the checker would call it right),
    and no two Mistakes lie within the tolerance of each other (the second hint could never show)."""
    expected = load_all()[key].make()
    if expected.judge is not None:
        return  # judged by behaviour, no values to compare
    values = [m.value for m in expected.mistakes]
    if isinstance(expected.value, str):
        texts = [str(v).strip() for v in values]
        assert expected.value not in texts, key
        assert len(set(texts)) == len(texts), key
        return
    answer = _numeric(expected.value)
    assert np.isfinite(answer).all(), f"{key}: the answer itself contains NaN/inf"
    mistakes = [_numeric(v) for v in values]
    for i, m in enumerate(mistakes):
        assert not _within(m, answer, expected.atol), f"{key}: mistake {i} is within atol of the answer"
        for j in range(i):
            assert not _within(m, mistakes[j], expected.atol), f"{key}: mistakes {j} and {i} are within atol"


def test_recognised_mistake_explains(capsys):
    d = attnbook.cat_eats_fish()
    unscaled = torch.softmax(d["Q"][1] @ d["K"].T, dim=-1)
    assert attnbook.check("04-1", unscaled) is False
    assert "√d_k" in capsys.readouterr().out


def test_unanswered_and_wrong_shape(capsys):
    assert attnbook.check("04-1", None) is False
    assert "还没有作答" in capsys.readouterr().out
    assert attnbook.check("04-1", [0.3, 0.3, 0.2, 0.2]) is False
    assert "答案应是 3 个数，收到的是 4 个数" in capsys.readouterr().out
    assert attnbook.check("04-1", [math.nan] * 3) is False
    assert "NaN" in capsys.readouterr().out


def test_right_answer(capsys):
    d = attnbook.cat_eats_fish()
    assert attnbook.check("04-1", torch.softmax(d["Q"][1] @ d["K"].T / math.sqrt(2), dim=-1))
    assert "✓" in capsys.readouterr().out


# ---- what the cold reviews found (reviews/part3.md, teacher-2x45.md §10, student-ch01-10.md) ------------

def _said(capsys, key, answer) -> tuple[bool, str]:
    ok = attnbook.check(key, answer)
    return ok, capsys.readouterr().out


@pytest.mark.parametrize("answer", ["B", "b", "Ｂ", "B。", " b. ", ["B"], ("b",), np.array(["B"]), "（B）"])
def test_letter_answers_are_normalised(capsys, answer):
    """teacher §10: "b", full-width "Ｂ" from a Chinese IME, "B。" and ["B"] were rejected."""
    ok, out = _said(capsys, "02-1", answer)
    assert ok, out


def test_a_letter_that_is_no_option_is_told_the_format(capsys):
    ok, out = _said(capsys, "02-1", "E")
    assert not ok and "不是选项之一" in out and '"A"、"B"、"C"、"D"' in out
    ok, out = _said(capsys, "02-1", 2)
    assert not ok and "选一个选项" in out and "int" in out


def test_pre_or_post_accepts_its_usual_spellings(capsys):
    for answer in ("pre", "Pre-Norm", "PRE", "pre-norm。"):
        assert _said(capsys, "12-2", answer)[0], answer


def test_singleton_dimensions_are_squeezed(capsys):
    """teacher §10: a [1, 3] row from Q[1:2] @ K.T was rejected for 04-1."""
    d = attnbook.cat_eats_fish()
    row = torch.softmax(d["Q"][1:2] @ d["K"].T / math.sqrt(2), dim=-1)  # [1, 3]
    assert _said(capsys, "04-1", row)[0]
    assert _said(capsys, "04-1", [[0.2994, 0.333, 0.3676]])[0]


@pytest.mark.parametrize(("key", "answer"), [("01-1", 6.95), ("01-2", 21.09), ("03-1", [7.05, 12.05]),
                                             ("07-1", 98496.5), ("14-3", 6.2)])
def test_counts_and_shapes_must_be_integers(capsys, key, answer):
    """teacher §10: 01-1 accepted 6.95, 01-2 21.09 and 03-1 [7.05, 12.05]."""
    ok, out = _said(capsys, key, answer)
    assert not ok and "只能是整数" in out


@pytest.mark.parametrize(("key", "answer", "secret"), [("01-2", 0.0092, "21"), ("01-2", 5, "21"), ("03-3", 0, "2"),
                                                      ("09-2", 3, "4"), ("06-1", [1, 1, 0, 1], "[1, 0, 0, 1]")])
def test_the_fallback_does_not_give_the_answer_away(capsys, key, answer, secret):
    """student: 「与正确答案最大相差 21」 gave the answer of 01-2 away (also 03-3, 09-2)."""
    ok, out = _said(capsys, key, answer)
    assert not ok
    assert "相差" not in out and secret not in out and "表格" not in out, out


def test_05_3_checks_both_numbers(capsys):
    """student: 05-3 asks for the scaled and the unscaled weight but checked one number ("应为 ()")."""
    scaled, unscaled = math.e / (math.e + 3), math.e ** 4 / (math.e ** 4 + 3)
    assert _said(capsys, "05-3", [scaled, unscaled])[0]
    assert _said(capsys, "05-3", [0.475, 0.948])[0]
    ok, out = _said(capsys, "05-3", scaled)
    assert not ok and "两个数" in out and "()" not in out
    ok, out = _said(capsys, "05-3", [scaled, 0.9])
    assert not ok


def test_06_1_feedback_names_the_kind_of_mistake(capsys):
    ok, out = _said(capsys, "06-1", [True, False, False, True])
    assert ok
    ok, out = _said(capsys, "06-1", [1, 1, 0, 1])  # (0.6, 0.6) 超出了 V 的范围
    assert not ok and "最小值到最大值" in out and "表格" not in out
    ok, out = _said(capsys, "06-1", [0, 0, 0, 1])
    assert not ok and "在三角形里" in out


def test_06_1_can_catch_the_per_coordinate_box_test(capsys):
    """reviews/part1-2.md D11: (0.4, 0.5) lies in V's box but outside the triangle."""
    from attnbook.exercises.ch06 import BOX_HINT, CANDIDATES

    V = attnbook.cat_eats_fish()["V"]
    points = torch.tensor(CANDIDATES, dtype=V.dtype)
    box = ((points >= V.min(0).values) & (points <= V.max(0).values)).all(-1)
    ok, out = _said(capsys, "06-1", box.int().tolist())
    assert not ok and BOX_HINT in out


def test_06_1_messages_say_that_w_o_mixing_heads_leaves_the_box():
    """reviews/part1-2.md D2 and the cold review: concatenating heads reaches the box; heads that pick
    different positions, summed through W_O, leave it."""
    from attnbook.exercises.ch06 import BOX_HINT

    assert "W_O" in BOX_HINT and "各自挑不同的位置" in BOX_HINT and "拼接" in BOX_HINT


def test_10_2_accepts_a_two_decimal_hand_answer(capsys):
    """part3 B3-13."""
    assert _said(capsys, "10-2", [[0.54, 0.84], [-0.84, 0.54]])[0]


def test_targeted_hints_the_student_asked_for(capsys):
    d = attnbook.cat_eats_fish()
    column = torch.softmax(d["Q"] @ d["K"].T / math.sqrt(2), dim=-1)[:, 1]
    assert "那一列" in _said(capsys, "04-1", column)[1]
    assert "W_O" in _said(capsys, "07-1", 3 * (512 * 64 + 64) + 64 * 512 + 512)[1]
    assert "头 2 的数据" in _said(capsys, "08-3", [12, 13, 14, 15])[1]
    out = _said(capsys, "07-2", [[3, 7, 12], [3, 7, 7, 7]])[1]
    assert "长短不一" in out and "收到的是 list" not in out
    assert "5 本书的权重" in _said(capsys, "02-3", [0.2] * 5)[1]
    assert "(5,)" not in _said(capsys, "02-3", [0.1] * 5)[1]


def test_02_1_hint_states_the_exact_criterion(capsys):
    """reviews/part1-2.md D4: the threshold of a finite cooling is log Z(2) − log Z(1), not s̄(τ = 1)."""
    out = _said(capsys, "02-1", "A")[1]
    assert "log Z(2) − log Z(1)" in out and "1.05" not in out


def test_unanswered_bug_exercises_name_their_variable(capsys):
    """student c41: the cell holds fix_1 … fix_5, the feedback said "answer"."""
    for n, key in enumerate(["09-3", "09-4", "09-5", "09-6", "09-7"], start=1):
        out = _said(capsys, key, None)[1]
        assert f"把 fix_{n} 换成你修好的函数" in out


# ---- the 找 bug judges ----------------------------------------------------------------------------------

BUG_KEYS = ["09-3", "09-4", "09-5", "09-6", "09-7"]


@pytest.mark.parametrize("fix", zoo.RIGHT, ids=lambda f: f.__name__)
def test_every_right_fix_passes_every_judge(capsys, fix):
    """part3 §3b: the correct variants (incl. B3-02's zeros_like(Q), which crashed the old judge)."""
    for key in BUG_KEYS:
        ok, out = _said(capsys, key, fix)
        assert ok, (key, out)
        assert f"bug {'①②③④⑤'[BUG_KEYS.index(key)]} 修好了" in out


@pytest.mark.parametrize("key", BUG_KEYS)
def test_each_bug_fails_its_own_property(capsys, key):
    ok, out = _said(capsys, key, zoo.BUGS[key])
    number = "①②③④⑤"[BUG_KEYS.index(key)]
    assert not ok and f"bug {number}（" in out and "还没修好" in out


def test_a_fix_of_one_bug_is_reported_as_that_bug_fixed(capsys):
    """One judge per bug: bug ③ submitted to 09-3 has ① right and says so; the judge of ③ says ③ is not fixed."""
    ok, out = _said(capsys, "09-3", zoo.bug_3)
    assert not ok and "bug ①（布尔掩码的极性）修好了" in out and "缩放不对" in out
    ok, out = _said(capsys, "09-5", zoo.bug_3)
    assert not ok and "bug ③（多头的缩放因子）还没修好" in out and "√d_model" in out


@pytest.mark.parametrize("wrong", [zoo.additive_then_where, zoo.nan_to_num_output])
def test_a_fix_with_nan_gradients_fails_09_7(capsys, wrong):
    """part3 B3-01, teacher §10, student 09-7: forward fine, NaN gradients (the lesson of chapter 09)."""
    ok, out = _said(capsys, "09-7", wrong)
    assert not ok and "bug ⑤（整行被遮的查询）还没修好" in out and "梯度里有 NaN" in out


def test_uniform_dead_rows_are_a_convention_not_a_leak(capsys):
    """part3 B3-03: −1e9 gives uniform dead rows; harmless to real tokens, only against this exercise's rule."""
    ok, out = _said(capsys, "09-7", zoo.tempting_5)
    assert not ok and "不符合本题的约定" in out and "泄漏" not in out
    ok, out = _said(capsys, "09-7", zoo.bug_5)  # the chapter's bug: −∞ alone, NaN rows
    assert not ok and "bug ⑤" in out
    ok, out = _said(capsys, "09-7", zoo.sees_itself)
    assert not ok and "补救 1" in out


@pytest.mark.parametrize(("wrong", "key", "words"), [
    (zoo.leaks_last_pair, "09-3", "未来泄漏"),          # B3-04: was blamed on scaling
    (zoo.sliding_window, "09-3", "没看到它该看的键"),   # B3-04: was blamed on scaling
    (zoo.scales_q_in_place, "09-5", "原地改动了传入的 Q"),  # B3-04: was called a future leak
    (zoo.float_mask, "09-3", "未来泄漏"),
    (zoo.pad_on_queries, "09-4", "填充位（键）分到了权重"),
    (zoo.divide_by_d_k, "09-5", "没开平方"),
    (zoo.divide_by_sqrt_seq_len, "09-5", "√seq_len"),
    (zoo.constant_scale, "09-5", "缩放不对"),
    (zoo.first_diagonal_only, "09-6", "看不见自己"),
    (zoo.neg_inf_no_zeroing, "09-7", "NaN"),
    (zoo.detached, "09-7", "没有梯度"),
], ids=lambda v: getattr(v, "__name__", None))
def test_wrong_fixes_are_told_what_is_wrong(capsys, wrong, key, words):
    ok, out = _said(capsys, key, wrong)
    assert not ok and words in out, out
    assert "检查缩放" not in out or key == "09-5"


def test_the_judge_never_probes_outside_the_contract():
    """part3 B3-02: V = I with d_k ≠ seq_len broke the contract; now V always has Q's shape."""
    from attnbook.exercises.bugs import PROBES

    seen = []

    def spy(Q, K, V, lengths):
        seen.append((Q.shape, K.shape, V.shape, lengths.dtype, lengths.shape, V.is_contiguous()))
        return zoo.fix_sdpa(Q, K, V, lengths)

    assert attnbook.check("09-3", spy, quiet=True)
    for q, k, v, dtype, lengths_shape, contiguous in seen:
        assert q == k == v and dtype == torch.long and lengths_shape == (q[0],) and contiguous
    assert {tuple(q) for q, *_ in seen} == {(p.batch, p.num_heads, p.seq_len, p.d_k) for p in PROBES}


def test_the_checker_leaves_the_readers_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    for key in ("07-1", "08-1", "10-3", "09-3"):
        attnbook.check(key, None, quiet=True)
    attnbook.check("09-7", lambda Q, K, V, lengths: zoo.fix_sdpa(Q, K, V, lengths) + 0 * torch.rand(1), quiet=True)
    assert torch.equal(torch.rand(3), expected)


def offset_from_longest(Q, K, V, lengths):
    """part3 review W1: left padding measured from the longest sentence, not from seq_len (wrong
    whenever max(lengths) < seq_len, e.g. fixed-length buckets)."""
    seq_len = Q.size(-2)
    start = lengths.max() - lengths
    real = torch.arange(seq_len)[None, :] >= start[:, None]
    keep = real[:, None, None, :] & attnbook.causal_mask(seq_len)
    return torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=keep)


def test_a_probe_pads_every_sentence(capsys):
    """part3 review W1: every probe had max(lengths) == seq_len, so offset_from_longest passed 09-3, 09-4, 09-7."""
    from attnbook.exercises.bugs import PROBES

    assert any(max(p.lengths) < p.seq_len and p.d_k >= p.seq_len for p in PROBES)
    for key in ("09-3", "09-4", "09-7"):
        ok, out = _said(capsys, key, offset_from_longest)
        assert not ok and "填充位（键）分到了权重" in out, (key, out)
    for fix in zoo.RIGHT:  # the right fixes still pass with the new probe
        assert _said(capsys, "09-4", fix)[0], fix.__name__


def test_a_stale_where_condition_is_pointed_at(capsys):
    """part3 review C1: ② fixed in masked_fill, but torch.where still tests the causal mask alone."""
    def stale_where(Q, K, V, lengths):
        keep = attnbook.causal_mask(Q.size(-2))
        both = keep & zoo.real_tokens(lengths, Q.size(-2))[:, None, None, :]
        weights = zoo.softmax_rows(Q, K, both)
        return torch.where(keep.any(-1, keepdim=True), weights, 0.0) @ V

    ok, out = _said(capsys, "09-4", stale_where)
    assert not ok and "检查它的条件" in out and "any(-1)" in out, out


def test_a_finite_fill_value_is_named_not_called_a_leak(capsys):
    """part3 review m2: −12 instead of −inf leaks ~1e-6 weight; the feedback names the fill value, and
    the share is not printed as 0%."""
    def fill_minus_12(Q, K, V, lengths):
        keep = zoo.keep_of(Q, lengths)
        return torch.where(keep.any(-1, keepdim=True), zoo.softmax_rows(Q, K, keep, fill=-12.0), 0.0) @ V

    ok, out = _said(capsys, "09-7", fill_minus_12)
    assert not ok and "分数不够小" in out and "最多 0%" not in out and "极性反了" not in out, out


def test_sdpa_users_are_not_told_to_edit_a_softmax_they_do_not_have(capsys):
    """part3 review m3: SDPA with a −1e9 additive mask gives uniform dead rows."""
    def sdpa_minus_1e9(Q, K, V, lengths):
        keep = zoo.keep_of(Q, lengths)
        return torch.nn.functional.scaled_dot_product_attention(
            Q, K, V, attn_mask=torch.zeros(keep.shape).masked_fill(~keep, -1e9))

    ok, out = _said(capsys, "09-3", sdpa_minus_1e9)
    assert not ok and "用 SDPA 时" in out and "布尔掩码" in out, out


@pytest.mark.parametrize("answer", ["98,496", "98，496", " 98,496。"])
def test_thousands_separators_are_read(capsys, answer):
    """part3 review m4: the book prints counts as "787,968"; "98,496" was rejected as text."""
    assert _said(capsys, "07-1", answer)[0]


@pytest.mark.parametrize("answer", ["0.57, 0.43, 0", "0.57，0.43，0", "0.57, 0.43, 0。"])
def test_a_list_typed_without_brackets_is_read(capsys, answer):
    """Second Part III review m3: "0.57, 0.43, 0" was rejected as text while "[0.57, 0.43, 0]" passed."""
    assert _said(capsys, "07-3", answer)[0]


def test_text_that_is_no_list_says_so_in_its_own_words(capsys):
    ok, out = _said(capsys, "07-3", "a, b")
    assert not ok and "'a, b'" in out and "[" not in out.split("文字")[1].split("，")[0]


def test_07_2_swapped_shapes_are_recognised(capsys):
    """part3 review m6."""
    ok, out = _said(capsys, "07-2", [[3, 7, 7], [3, 7, 12]])
    assert not ok and "顺序反了" in out


# ---- third Part III review (session 9) ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [[[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], ((0, 0, 0, 1, 1), (0, 0, 0, 0, 0)),
                                    [[False, False, False, True, True], [0, 0, 0, 0, 0]]])
def test_08_4_a_list_of_integers_is_no_boolean_mask(capsys, answer):
    """W1: the same 0/1 numbers were refused in a tensor but accepted in a list."""
    ok, out = _said(capsys, "08-4", answer)
    assert not ok and "布尔掩码" in out and "int" in out, out


def test_08_4_an_additive_mask_is_not_said_to_leak(capsys):
    """m4: a 0/−inf key_padding_mask works in MHA; the feedback says so and asks for the boolean form."""
    keep = attnbook.padding_mask(torch.tensor([3, 5]), 5)[:, 0, 0, :]
    additive = torch.zeros(2, 5).masked_fill(~keep, float("-inf"))
    ok, out = _said(capsys, "08-4", additive)
    assert not ok and "−inf" in out and "也有效" in out and "挡不住" not in out, out


@pytest.mark.parametrize(("key", "answer", "rounded"), [
    ("07-1", 98432, False),     # one bias of 64 left out
    ("11-3", 3151872, False),   # one LayerNorm β left out
    ("11-3", 3149824, False),   # linear2's bias left out
    ("07-1", 98000, True),      # a rounded count
])
def test_a_near_count_is_blamed_on_rounding_only_when_it_looks_rounded(capsys, key, answer, rounded):
    """M3: a whole number within 1 % was always told "不要用四舍五入后的近似值"."""
    ok, out = _said(capsys, key, answer)
    assert not ok
    assert ("四舍五入" in out) == rounded, out
    assert ("漏算或多算" in out) == (not rounded), out


def test_07_3_a_mask_that_misses_the_cat_row_is_named(capsys):
    """m7: a transposed mask leaves row 0 unmasked; the answer equals the unmasked weights."""
    d = attnbook.cat_eats_fish()
    _, plain = attnbook.scaled_dot_product_attention(d["Q"], d["K"], d["V"])
    ok, out = _said(capsys, "07-3", plain[0])
    assert not ok and "没有遮住" in out, out


def right_padded(Q, K, V, lengths):
    """M4: chapter 09's padding_mask (right padding) on the exercise's left-padded batch."""
    seq_len = Q.size(-2)
    keep = attnbook.padding_mask(lengths, seq_len) & attnbook.causal_mask(seq_len)
    return torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=keep)


@pytest.mark.parametrize("key", ["09-3", "09-4"])
def test_a_right_padding_mask_is_told_the_batch_is_left_padded(capsys, key):
    """M4: the feedback named the diagonal and missing keys, never left versus right padding."""
    ok, out = _said(capsys, key, right_padded)
    assert not ok and "左侧填充" in out and "padding_mask" in out, out
    assert "看不见自己" not in out and "没看到它该看的键" not in out, out


#: Remedy clauses the 找 bug feedback must not contain (M5: it names the property, not the fix;
#: the fixes are in the exercise's dropdown).
REMEDIES = ("diagonal=1", "应除以", "√d_k = √", "应在 softmax 之后", "改用 torch.where", "把这些行置 0",
            "float(\"-inf\")", "torch.finfo(scores.dtype).min")


@pytest.mark.parametrize("key", BUG_KEYS)
def test_bug_feedback_names_the_property_not_the_fix(capsys, key):
    """M5: the chapter prints this feedback in the main line before the reader tries the exercise."""
    for fn in (zoo.BUGS[key], zoo.neg_inf_no_zeroing, zoo.sees_itself, zoo.additive_then_where):
        ok, out = _said(capsys, key, fn)
        assert not ok, out
        for remedy in REMEDIES:
            assert remedy not in out, (key, fn.__name__, remedy, out)


def test_a_row_sum_is_printed_with_the_digits_that_show_it_is_not_1(capsys):
    """m5: a float16 softmax was told "权重之和不是 1（…和为 1）"."""
    def fp16(Q, K, V, lengths):
        keep = zoo.keep_of(Q, lengths)
        weights = torch.where(keep.any(-1, keepdim=True), zoo.softmax_rows(Q.half(), K.half(), keep), 0.0)
        return weights.float() @ V

    ok, out = _said(capsys, "09-7", fp16)
    assert not ok and "之和不是 1" in out, out
    shown = out.split("和为 ")[1].split("）")[0]
    assert float(shown) != 1.0, out


@pytest.mark.parametrize("key,answer,said", [
    ("09-1", "1 1", "收到的是 2 个数"),      # was read as 11 and passed
    ("09-2", "4 0", "收到的是 2 个数"),      # was read as 40
])
def test_numbers_separated_by_spaces_are_not_joined(capsys, key, answer, said):
    """Fourth Part III review W1: only spaces between groups of three digits ("98 496") are dropped."""
    ok, out = _said(capsys, key, answer)
    assert not ok and said in out, out


@pytest.mark.parametrize("key,answer", [("08-3", "4 5 6 7"), ("08-3", "[4 5 6 7]"), ("07-1", "98 496"),
                                        ("07-3", "[0.57 0.43 0]")])
def test_a_list_typed_with_spaces_is_read_as_a_list(capsys, key, answer):
    """W1: "4 5 6 7" and NumPy's print style "[4 5 6 7]" are four numbers, "98 496" is one."""
    assert _said(capsys, key, answer)[0]


def test_10_3_the_ratio_for_d_model_512_is_named(capsys):
    """Fourth Part III review M1: 3.996 (the 选读's d_model = 512) matched the "exactly 4" mistake."""
    ok, out = _said(capsys, "10-3", 3.996)
    assert not ok and "d_model = 512" in out and "略小一点" not in out, out
    ok, out = _said(capsys, "10-3", 4)
    assert not ok and "略小一点" in out and "512" not in out, out


def test_08_4_a_list_of_ints_is_called_a_list(capsys):
    """Fourth Part III review N4: a 2×5 list of 0/1 was described as "一个 int 类型的数（0）"."""
    ok, out = _said(capsys, "08-4", [[0, 1, 1, 0, 0], [0, 0, 0, 1, 1]])
    assert not ok and "由 int 类型的数（例如 0）组成的列表" in out, out


def test_a_judged_function_cannot_change_the_global_modes(capsys):
    """N7: a reader's function that changes the default dtype or the grad mode leaves them unchanged."""
    def changes_modes(Q, K, V, lengths):
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        return zoo.fix_written_out(Q, K, V, lengths)

    _said(capsys, "09-3", changes_modes)
    assert torch.get_default_dtype() == torch.float32 and torch.is_grad_enabled()


def test_a_16_bit_output_is_told_its_dtype(capsys):
    """N8: a correct function in float16 was told its rows do not sum to 1 (a mask bug)."""
    def half(Q, K, V, lengths):
        keep = zoo.keep_of(Q, lengths)
        out = torch.nn.functional.scaled_dot_product_attention(Q.half(), K.half(), V.half(), attn_mask=keep)
        return out.nan_to_num(0.0)

    ok, out = _said(capsys, "09-7", half)
    assert not ok and "float16" in out and "应是 float32" in out and "之和不是 1" not in out, out


def test_bug_success_says_on_how_many_inputs_gradients_were_compared(capsys):
    """N3: the success message said gradients were compared on four inputs; they are on three."""
    ok, out = _said(capsys, "09-3", zoo.fix_written_out)
    assert ok and "梯度在其中三组上" in out, out


# The taught code's own checks (fourth Part III review N1, N2, N6; kept here with this round's checker tests).
def test_check_mask_names_a_transposed_mask():
    with pytest.raises(attnbook.AttnBookError, match="像是转置了"):
        attnbook.book.check_mask(torch.ones(5, 3, dtype=torch.bool), torch.Size([2, 3, 5]))


def test_multi_head_layer_refuses_another_dtype_in_chinese():
    with pytest.raises(attnbook.AttnBookError, match="相同 dtype"):
        attnbook.MultiHeadSelfAttention(8, num_heads=2)(torch.randn(1, 3, 8, dtype=torch.float64))


def test_kv_cache_first_append_refuses_k_and_v_of_different_dtypes():
    cache = attnbook.book.KVCache()
    with pytest.raises(attnbook.AttnBookError, match="V_new"):
        cache.append(torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4, dtype=torch.float64))


# ---- fifth cold reviews (reviews/part3-fifth.md W1, W2, M2, U1, U2, m1, m4, m6; part1-2-fifth.md W1) ------------

def test_a_mask_typed_as_text_is_judged_like_the_value_it_stands_for(capsys):
    """Part III W1: "[[0,0,0,1,1],[0,0,0,0,0]]" in quotes passed 08-4 while the same list was refused."""
    ok, out = _said(capsys, "08-4", "[[0,0,0,1,1],[0,0,0,0,0]]")
    assert not ok and "布尔掩码" in out and "里面是数而不是 True/False" in out, out
    for text in ("[[False, False, False, True, True], [False, False, False, False, False]]",
                 "[[False False False  True  True]\n [False False False False False]]"):  # NumPy's print
        ok, out = _said(capsys, "08-4", text)
        assert ok, (text, out)


@pytest.mark.parametrize("key, text", [("08-3", "4、5、6、7"), ("07-3", "0.568、0.432、0"), ("11-1", "[2、8、7、10]")])
def test_lists_typed_with_the_enumeration_comma_are_read(capsys, key, text):
    """Part III W2: "4、5、6、7" (the Chinese enumeration comma) was told it is no number."""
    ok, out = _said(capsys, key, text)
    assert ok, out


def test_01_3_hint_for_b_agrees_with_the_chapter_measurement(capsys):
    """Part I–II W1: the hint said small inputs keep h near 0 so tanh′ ≈ 1; the chapter measures 1 − h² ≈ 0.61."""
    ok, out = _said(capsys, "01-3", "B")
    assert not ok and "平均更大" in out and "远不到 1" in out and "接近 1" not in out, out


def test_09_4_a_mask_measured_from_the_longest_sentence_is_told_the_input(capsys):
    """Part III M2: the feedback blamed an unused mask or one on the queries, and named no input."""
    ok, out = _said(capsys, "09-4", offset_from_longest)
    assert not ok and "lengths = [4, 2]" in out and "seq_len = 6" in out, out
    assert "没有用上" not in out and "当成了真实的词" in out and "每一句都有填充" in out, out
    ok, out = _said(capsys, "09-4", zoo.pad_on_queries)  # the first input still gets the usual cause
    assert not ok and "没有用上，或者用在了查询" in out, out


@pytest.mark.parametrize("key, answer, right, said", [
    ("08-2", "2×8×10×64", True, ""), ("08-2", "2x8x10x64", True, ""), ("08-2", "2 * 8 * 10 * 64", True, ""),
    ("08-1", "2×8×10×10", False, "是一个乘式"),
    ("07-1", "98496个", True, ""), ("07-1", "约98496", True, ""), ("10-3", "3.969倍", True, ""),
    ("10-3", "≈3.969", True, ""), ("07-1", "1万", False, "去掉单位或“约”字"),
    ("07-1", "", False, "还没有写出答案"), ("08-2", "  ", False, "还没有写出答案"),
    ("10-2", "0.5403 0.8415\n-0.8415 0.5403", True, ""), ("10-2", "1 2\n3", False, "看不出是几行几列"),
])
def test_unclear_typings_are_read_or_told_what_to_change(capsys, key, answer, right, said):
    """Part III U1, U2, m1, m4: shapes with ×, a unit or 约, an empty string, rows on separate lines."""
    ok, out = _said(capsys, key, answer)
    assert ok == right and said in out and "去掉外面的引号" not in out, out


@pytest.mark.parametrize("key, said", [("07-9", "第 07 章的练习是 07-1、07-2、07-3"), (7.3, "写成字符串"),
                                       ("99-1", "练习编号写成“章-题”")])
def test_a_mistyped_exercise_number_gets_one_line_not_a_traceback(capsys, key, said):
    """Part III m6: check raised AttnBookError (a traceback in Jupyter)."""
    ok, out = _said(capsys, key, 1)
    assert not ok and said in out and out.count("\n") == 1, out


@pytest.mark.parametrize("key, answer", [("10-1", ".2955"), ("07-3", ".57, .43, 0"), ("07-3", "[.57, .43, 0]"),
                                         ("07-2", "3×7×12, 3×7×7"), ("07-2", "[3×7×12, 3×7×7]"),
                                         ("07-2", "3 x 7 x 12，3 x 7 x 7")])
def test_a_leading_dot_and_shapes_as_products_in_a_list_are_read(capsys, key, answer):
    """Sixth Part III review W1 (".2955" was read as 2955) and W2 (two shapes in the book's × notation
    were refused as text)."""
    assert _said(capsys, key, answer)[0]


# ---- sixth Part III review, the minor items (reviews/part3-sixth.md m2, m3, m4) ------------------------

def scores_equal_before_softmax(Q, K, V, lengths):  # m2: a whole row of equal scores, no −1e9 anywhere
    keep = zoo.keep_of(Q, lengths)
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~keep, float("-inf"))
    return torch.softmax(torch.where(keep.any(-1, keepdim=True), scores, 0.0), dim=-1) @ V


def test_uniform_dead_rows_name_both_ways_to_get_them(capsys):
    """m2: the message blamed −1e9/finfo.min for a fix that set the whole row's scores to 0 before softmax."""
    ok, out = _said(capsys, "09-7", scores_equal_before_softmax)
    assert not ok and "平均分给了所有键" in out and "在 softmax 之前把整行分数换成同一个数" in out, out


@pytest.mark.parametrize("key, text", [
    ("08-3", "tensor([4, 5, 6, 7])"), ("08-2", "torch.Size([2, 8, 10, 64])"),
    ("07-3", "tensor([0.5700, 0.4300, 0.0000])"), ("07-2", "torch.Size([3, 7, 12]), torch.Size([3, 7, 7])"),
    ("07-3", "array([0.57, 0.43, 0.  ], dtype=float32)"),
    ("07-3", "tensor([0.5700, 0.4300, 0.0000], grad_fn=<SoftmaxBackward0>)"),
    ("10-1", "tensor(0.2955, dtype=torch.float64)"),
    ("10-2", "tensor([[ 0.5403,  0.8415],\n        [-0.8415,  0.5403]])"),
    ("07-2", "(3,7,12) (3,7,7)"), ("07-2", "[3,7,12];[3,7,7]"),
    ("07-3", "57%, 43%, 0%"), ("10-1", "29.55%"), ("08-1", "2×8×10×10=1600"),
])
def test_printed_tensors_percentages_and_worked_answers_are_read(capsys, key, text):
    """m3, m4: what print shows (tensor(…), torch.Size(…), array(…, dtype=…)), two tuples side by side,
    lists separated by ";", percentages and "a=b" were refused as text."""
    ok, out = _said(capsys, key, text)
    assert ok, out


@pytest.mark.parametrize("key, text", [("08-3", "tensor([4, 5, 6, 8])"), ("10-1", "31%"), ("08-1", "1600=2×8×10×10")])
def test_the_readings_still_judge_the_value(capsys, key, text):
    """The same forms with a wrong value are judged wrong (the wrapper and the % do not make anything right)."""
    assert not _said(capsys, key, text)[0]


# ---- seventh Part III review (W1: 10-1 accepted the angle 0.3 itself) -----------------------------------

@pytest.mark.parametrize("answer", [0.3, "0.30", "0.3"])
def test_10_1_the_angle_without_sin_is_a_named_mistake(capsys, answer):
    """W1: with atol 5e-3 the angle 0.3 (sin forgotten) passed; now the question asks for 4 decimals."""
    ok, out = _said(capsys, "10-1", answer)
    assert not ok and "还没有取 sin" in out and "保留 4 位小数" in out, out


@pytest.mark.parametrize("answer", ["0.2955", "0.296", 0.29552])
def test_10_1_four_or_three_decimals_are_right(capsys, answer):
    assert _said(capsys, "10-1", answer)[0]


@pytest.mark.parametrize("key, text", [("07-2", "[3,7,12] 和 [3,7,7]"), ("10-1", "sin0.3≈0.2955"), ("10-1", "≈0.2955")])
def test_lists_joined_by_and_and_worked_answers_with_approx_are_read(capsys, key, text):
    """Seventh Part III review m4: "和" between two lists and "≈" in a worked answer got a misleading hint."""
    assert _said(capsys, key, text)[0]


def test_11_2_two_sentences_is_a_named_mistake(capsys):
    """Seventh Part III review C2: the exercise now says batch = 1; twice the count gets its own hint."""
    ok, out = _said(capsys, "11-2", 19200)
    assert not ok and "batch = 1" in out and "9600" not in out, out


# ---- eighth Part III review (reviews/r14p3: M1, m1–m4, m6) -----------------------------------------------

def off_by_one_padding(Q, K, V, lengths):  # M1: ">" where ">=" belongs: the first real word counts as padding
    L = Q.size(-2)
    keep = (torch.arange(L) > L - lengths[:, None])[:, None, None, :] & attnbook.causal_mask(L)
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~keep, float("-inf"))
    return torch.where(keep.any(-1, keepdim=True), torch.softmax(scores, -1), 0.0) @ V


def transposed_scores(Q, K, V, lengths):  # m2: K @ Qᵀ, scaling and masks right
    keep = zoo.keep_of(Q, lengths)
    scores = (K @ Q.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~keep, float("-inf"))
    return torch.where(keep.any(-1, keepdim=True), torch.softmax(scores, -1), 0.0) @ V


@pytest.mark.parametrize("key, headline", [("09-4", "bug ②（填充掩码）还没修好"), ("09-6", "bug ④（对角线）修好了")])
def test_an_off_by_one_left_padding_mask_is_named_as_padding_not_as_the_diagonal(capsys, key, headline):
    ok, out = _said(capsys, key, off_by_one_padding)
    assert not ok and headline in out and "每句第一个真实的词也被当成了填充位" in out, out
    assert "对角线被遮了" not in out and "权重之和不是 1" not in out and "填充掩码用上了" not in out, out


def test_09_3_says_a_float_mask_is_added_to_the_scores(capsys):
    ok, out = _said(capsys, "09-3", zoo.float_mask)
    assert not ok and "浮点掩码是加到分数上的" in out and "检查缩放" not in out, out


def test_09_5_transposed_scores_get_one_story(capsys):
    ok, out = _said(capsys, "09-5", transposed_scores)
    assert not ok and "没法检查缩放" in out and "掩码和缩放都对" not in out, out


@pytest.mark.parametrize("key, answer, said", [("11-2", 9696, "多算了一个位置"), ("10-3", 3.968, ""), ("10-3", 3.971, ""),
                                               ("08-3", [12, 13, 14, 15], "也可能是正确写法里头 2 的一行")])
def test_slips_of_the_eighth_review_are_told_apart(capsys, key, answer, said):
    ok, out = _said(capsys, key, answer)
    assert not ok and said in out, out


@pytest.mark.parametrize("answer", [3.969, "3.97"])
def test_10_3_three_or_two_decimals_pass(capsys, answer):
    assert _said(capsys, "10-3", answer)[0]


# ---- fresh Part IV review (r15p4: M2 and minors 1–3) ----------------------------------------------------

@pytest.mark.parametrize("key, answer", [("12-1", 0.0033), ("12-1", "1/300"), ("12-2", "前置归一化"), ("12-2", "前置"),
                                         ("12-2", "pre_norm"), ("12-3", 3.77), ("15-2", 6144)])
def test_part4_right_answers_in_the_chapters_own_words_pass(capsys, key, answer):
    assert _said(capsys, key, answer)[0]


@pytest.mark.parametrize("key, answer, said", [("12-1", 0.003, "差了一步"), ("12-3", math.sqrt(128), "方差是 1/3"),
                                               ("15-2", 6, "GiB"), ("12-2", "后置归一化", "看 norm 作用在哪里")])
def test_part4_slips_get_their_own_hint(capsys, key, answer, said):
    ok, out = _said(capsys, key, answer)
    assert not ok and said in out, out


# ---- fresh Part I–II review (r15p12: W1, M1–M5, m3, m1) ------------------------------------------------

def _cat_eats_fish_rows(scale, dim=-1):
    d = attnbook.cat_eats_fish()
    return torch.softmax(d["Q"] @ d["K"].T * scale, dim=dim)


def test_choice_hints_do_not_name_the_right_option(capsys):
    """M4: the hints for 01-3 C, 02-2 C and 05-4 A stated the right option outright."""
    for key, option, banned in [("01-3", "C", "更小的 s"), ("02-2", "C", "相当于降温"), ("05-4", "A", "势均力敌")]:
        ok, out = _said(capsys, key, option)
        assert not ok and banned not in out, out


def test_04_slips_are_named_for_what_they_are(capsys):
    """M1: the 鱼→猫 entry was called a rounding problem; M2: K[1] against all queries was called dim=0."""
    ok, out = _said(capsys, "04-3", float(_cat_eats_fish_rows(1 / math.sqrt(8))[2, 0]))
    assert not ok and "分数矩阵不对称" in out and "多保留几位小数" not in out, out
    ok, out = _said(capsys, "04-1", _cat_eats_fish_rows(1 / math.sqrt(2), dim=0)[:, 1].tolist())
    assert not ok and "K[1]" in out and "dim=0" not in out, out
    ok, out = _said(capsys, "04-1", _cat_eats_fish_rows(1 / math.sqrt(2), dim=0)[1].tolist())
    assert not ok and "dim=0" in out, out


@pytest.mark.parametrize("key, answer", [("05-2", 0.12), ("05-2", 0.13), ("05-2", "1/√64"), ("05-1", "√256")])
def test_two_decimals_and_the_radical_sign_are_read(capsys, key, answer):
    """M3 (0.12/0.13 for 1/8 were sent to print every step) and m3 (√ was refused as text)."""
    assert _said(capsys, key, answer)[0]


def test_a_percentage_typed_as_numbers_is_told_the_unit(capsys):
    ok, out = _said(capsys, "04-1", [100 * w for w in _cat_eats_fish_rows(1 / math.sqrt(2))[1].tolist()])
    assert not ok and "百分数" in out, out


def test_the_01_3_hint_states_only_what_the_chapter_measured(capsys):
    """W1: 'for s > 1, however small the input, 1 − h² stays far from 1' is false near s = 1."""
    ok, out = _said(capsys, "01-3", "B")
    assert not ok and "s = 1.5" in out and "s > 1" not in out, out


# ---- second fresh Part I–II review (r16p12: W1–W3, M1, M2, minor 4–5) -----------------------------------

@pytest.mark.parametrize("key, answer", [("05-2", "8分之一"), ("05-2", "８分之一"), ("05-2", "八分之一"), ("05-1", "4²"),
                                         ("02-3", "27/50, 8/25, 11/50"), ("05-2", "1/sqrt(64)"), ("05-1", "sqrt(256)"),
                                         ("03-3", "第2行"), ("03-3", "第 2 行")])
def test_chinese_fractions_superscripts_fraction_lists_and_ordinals_are_read(capsys, key, answer):
    """W1 ("8分之一" was read as 8), W2 (lists of fractions refused), W3 ("4²" read as 42), m4/m5."""
    assert _said(capsys, key, answer)[0]


@pytest.mark.parametrize("key, answer", [("05-1", "4³"), ("05-2", "4分之一"), ("02-3", "1/2, 1/4, 1/4")])
def test_those_readings_still_judge_the_value(capsys, key, answer):
    assert not _said(capsys, key, answer)[0]


def test_04_column_and_axis_slips_are_named(capsys):
    """M1: the 吃 column in 04-2 was called 'not scaled'; M2: the wrong axis in 04-3 was called rounding."""
    d = attnbook.cat_eats_fish()
    ok, out = _said(capsys, "04-2", (_cat_eats_fish_rows(1 / math.sqrt(2))[:, 1] @ d["V"]).tolist())
    assert not ok and "那一列" in out and "没有除以" not in out, out
    ok, out = _said(capsys, "04-3", float(_cat_eats_fish_rows(1 / math.sqrt(8), dim=0)[0, 2]))
    assert not ok and "dim=0" in out and "多保留几位小数" not in out, out


# ---- third fresh Part I–II review (r17p12: W1, M1, M2) ---------------------------------------------------

@pytest.mark.parametrize("key, answer", [("05-2", "1/√(768/12)"), ("05-2", "1/sqrt(768/12)"), ("05-2", "√(1/64)"),
                                         ("05-1", "√(16*16)"), ("05-1", "√(2^8)")])
def test_a_root_of_plain_arithmetic_is_read(capsys, key, answer):
    """W1: "1/√(768/12)" was read as 0.003 and told it used 1/d_model."""
    assert _said(capsys, key, answer)[0]


@pytest.mark.parametrize("answer", ["√(9**9**9**9)", '√(__import__("os"))', "√(-4)"])
def test_a_root_of_anything_else_is_refused_quickly_and_safely(capsys, answer):
    ok, out = _said(capsys, "05-1", answer)
    assert not ok and "这题要的是数值" in out, out


@pytest.mark.parametrize("answer", [8, 1 / math.sqrt(768)])
def test_05_2_hints_do_not_state_the_factor(capsys, answer):
    """M2: the hints for 8 and 1/√768 said '因子是 1/8' and '应除以 √64'."""
    ok, out = _said(capsys, "05-2", answer)
    assert not ok and "1/8" not in out and "√64" not in out and "64" not in out, out


def test_04_3_a_value_near_one_third_names_both_causes(capsys):
    """M1: at d_k = 8 the 'divided by d_k' value is also the value of two other cells of the right matrix."""
    ok, out = _said(capsys, "04-3", float(_cat_eats_fish_rows(1 / math.sqrt(8))[0, 0]))
    assert not ok and "第 0 行第 0 列" in out, out
    ok, out = _said(capsys, "04-3", float(_cat_eats_fish_rows(1 / 8)[0, 2]))
    assert not ok and "除以了 d_k" in out and "读错了格" in out, out
    ok, out = _said(capsys, "04-3", 0.36)  # two decimals where three are asked
    assert not ok and "多保留几位小数" in out, out


# ---- fourth fresh Part I–II review (r18p12: W1, M1, M2) --------------------------------------------------

@pytest.mark.parametrize("row, col, scale, said", [(0, 2, 1 / math.sqrt(6), "不是补了几个 0"), (1, 2, 1 / math.sqrt(8), "“吃”这一行"),
                                                   (1, 0, 1 / math.sqrt(8), "第 1 行第 0 列"),
                                                   (2, 0, 1 / math.sqrt(8), "第 2 行第 0 列")])
def test_04_3_neighbouring_cells_and_scales_are_told_apart(capsys, row, col, scale, said):
    """W1: dividing by √6 passed at atol 5e-3; M2: the 吃 row was called rounding, 吃→猫 was called 鱼→猫."""
    ok, out = _said(capsys, "04-3", float(_cat_eats_fish_rows(scale)[row, col]))
    assert not ok and said in out, out


def test_04_1_a_wrong_divisor_is_not_pinned_on_d_k(capsys):
    """M1: dividing by √3 (the number of words) was told 'you divided by d_k = 2'."""
    ok, out = _said(capsys, "04-1", _cat_eats_fish_rows(1 / math.sqrt(3))[1].tolist())
    assert not ok and "词数 3 的平方根" in out, out


@pytest.mark.parametrize("answer", ["9⁹⁹⁹⁹⁹⁹", "0⁻¹", "1" * 400 + "/" + "1" * 400 + ", 1", "√(" + "9" * 70 + ")"])
def test_numbers_too_large_or_undefined_get_a_chinese_reason_not_a_traceback(capsys, answer):
    ok, out = _said(capsys, "05-1", answer)
    assert not ok and out.startswith("✗ 练习 05-1 还不对") and "判题程序" not in out, out
