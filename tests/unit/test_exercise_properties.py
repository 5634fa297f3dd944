"""Property-based tests of every auto-checked exercise (Hypothesis), so that the checker cannot be fooled.

For each exercise registered in ``attnbook.exercises``:

* three (or more) equivalent right forms are accepted (list / tuple / tensor / NumPy / text / letter variants);
* each recognised mistake is rejected with its own hint;
* answers near the right one but outside its tolerance are rejected, and the feedback does not give the
  answer away (no right value, no "off by" distance);
* nothing the reader can pass in makes the checker raise or print a traceback (junk: text, None in lists,
  nested lists, NaN, huge tensors of the wrong shape, functions that raise, objects that fail to convert).

``test_every_exercise_has_property_tests`` fails when an exercise is registered without an entry in CASES.
Hypothesis runs are bounded (few examples, derandomised), so the file runs in seconds.
"""
from __future__ import annotations

import contextlib
import io
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import attention_zoo as zoo
import attnbook
from attnbook.exercises import load_all
from attnbook.exercises._core import INTERNAL_ERROR, _expected

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FEW = settings(SETTINGS, max_examples=5)


@dataclass(frozen=True)
class Kind:
    """How an exercise is answered: "number", "choice", "points" (06-1) or "function" (找 bug)."""

    name: str


NUMBER, CHOICE, POINTS, FUNCTION = Kind("number"), Kind("choice"), Kind("points"), Kind("function")

#: Every registered exercise, with the kind of property tests it gets. A new exercise needs a line here.
CASES: dict[str, Kind] = {
    "01-1": NUMBER, "01-2": NUMBER, "01-3": CHOICE,
    "02-1": CHOICE, "02-2": CHOICE, "02-3": NUMBER,
    "03-1": NUMBER, "03-2": NUMBER, "03-3": NUMBER,
    "04-1": NUMBER, "04-2": NUMBER, "04-3": NUMBER,
    "05-1": NUMBER, "05-2": NUMBER, "05-3": NUMBER, "05-4": CHOICE,
    "06-1": POINTS, "06-2": NUMBER, "06-3": NUMBER,
    "07-1": NUMBER, "07-2": NUMBER, "07-3": NUMBER,
    "08-1": NUMBER, "08-2": NUMBER, "08-3": NUMBER, "08-4": NUMBER,
    "09-1": NUMBER, "09-2": NUMBER,
    "09-3": FUNCTION, "09-4": FUNCTION, "09-5": FUNCTION, "09-6": FUNCTION, "09-7": FUNCTION,
    "10-1": NUMBER, "10-2": NUMBER, "10-3": NUMBER,
    "11-1": NUMBER, "11-2": NUMBER, "11-3": NUMBER,
    "12-1": NUMBER, "12-2": CHOICE, "12-3": NUMBER,
    "13-1": NUMBER, "13-2": NUMBER, "13-3": NUMBER,
    "14-1": NUMBER, "14-2": NUMBER, "14-3": NUMBER,
    "15-1": NUMBER, "15-2": NUMBER, "15-3": NUMBER,
}


#: The exercises whose answer is a count, an index or a shape (whole numbers only).
INTEGERS = {"01-1", "01-2", "03-1", "03-2", "03-3", "07-1", "07-2", "08-1", "08-2", "08-3", "08-4", "09-1", "09-2",
            "11-1", "11-2", "11-3", "13-1", "13-2", "13-3", "14-3", "15-1", "15-3"}


def keys(kind: Kind) -> list[str]:
    return [key for key, k in CASES.items() if k is kind]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def run(key: str, answer: Any) -> tuple[bool, str]:
    """attnbook.check, its printed feedback, and the promises every call keeps (no raise, no traceback)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        ok = attnbook.check(key, answer)
    out = buffer.getvalue()
    assert isinstance(ok, bool)
    assert INTERNAL_ERROR not in out, out
    assert "Traceback" not in out and out.strip(), out
    assert out.startswith(("✓", "✗", "练习")), out
    assert ok == out.startswith("✓"), out
    return ok, out


def test_every_exercise_has_property_tests():
    registered = set(load_all())
    assert not registered - set(CASES), f"这些练习没有性质测试：{sorted(registered - set(CASES))}，在 CASES 里加上"
    assert not set(CASES) - registered, f"CASES 里有未登记的练习：{sorted(set(CASES) - registered)}"


@pytest.mark.parametrize("key", sorted(CASES))
def test_the_kind_matches_the_exercise(key):
    expected = _expected(key)
    kind = CASES[key]
    if kind is FUNCTION:
        assert expected.judge is not None and callable(expected.value)
    elif kind is POINTS:
        assert expected.judge is not None and expected.integer
    elif kind is CHOICE:
        assert isinstance(expected.value, str) and expected.value in expected.choices
    else:
        assert expected.judge is None and np.isfinite(np.asarray(expected.value, dtype=float)).all()
        assert expected.integer == (key in INTEGERS), f"{key}：INTEGERS 与 Expected.integer 不一致"


# ---- numbers -----------------------------------------------------------------------------------------------

def right_forms(key: str) -> list[Any]:
    """Equivalent ways of writing the right answer of a numeric exercise."""
    expected = _expected(key)
    v = np.asarray(expected.value, dtype=float)
    if expected.boolean:  # a mask: True/False in any container, never 0/1 numbers in a tensor
        b = v.astype(bool)
        return [b.tolist(), np.array(b), torch.tensor(b), _tuples(b.tolist())]
    forms: list[Any] = [v.tolist(), np.array(v), torch.tensor(v, dtype=torch.float64)]
    if v.ndim:
        forms.append(_tuples(v.tolist()))
        if expected.squeeze:
            forms.append(v[None].tolist())  # [[…]]：多一个长度为 1 的维度
    if expected.integer:
        ints = np.round(v).astype(np.int64)
        forms += [ints.tolist(), torch.tensor(ints), np.array(ints, dtype=np.int32)]
        if v.ndim == 0:
            forms += [int(ints), str(int(ints)), _full_width(str(int(ints))), float(ints), [int(ints)]]
    else:
        forms.append(torch.tensor(v, dtype=torch.float32, requires_grad=True))
        if v.ndim == 0:
            forms += [float(v), np.float64(v), repr(float(v)), [float(v)], torch.tensor([float(v)])]
    return forms


def _tuples(value: Any) -> Any:
    return tuple(_tuples(x) for x in value) if isinstance(value, list) else value


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize("key", keys(NUMBER))
def test_right_answers_in_every_form_are_accepted(key):
    forms = right_forms(key)
    assert len({type(f) for f in forms}) >= 3
    for form in forms:
        ok, out = run(key, form)
        assert ok, (type(form).__name__, out)


@pytest.mark.parametrize("key", keys(NUMBER) + keys(CHOICE))
def test_each_recognised_mistake_gets_its_own_hint(key):
    expected = _expected(key)
    assert expected.mistakes, f"{key} 没有登记任何常见错误"
    hints = [m.hint for m in expected.mistakes]
    assert len(set(hints)) == len(hints), f"{key}：两个错误用了同一句提示"
    for mistake in expected.mistakes:
        ok, out = run(key, mistake.value)
        assert not ok and mistake.hint in out, (mistake.value, out)
        if not isinstance(mistake.value, str):
            dtype = torch.bool if expected.boolean else torch.float64
            ok, out = run(key, torch.tensor(mistake.value, dtype=dtype))
            assert not ok and mistake.hint in out, (mistake.value, out)


@pytest.mark.parametrize("key", ["08-4"])
def test_a_mask_exercise_rejects_number_tensors_saying_a_boolean_is_expected(key):
    assert _expected(key).boolean
    v = np.asarray(_expected(key).value, dtype=float)
    for tensor in (torch.tensor(v, dtype=torch.float32), torch.tensor(v).long()):
        ok, out = run(key, tensor)
        assert not ok and "布尔" in out, (tensor.dtype, out)


NUMBER_PATTERN = re.compile(r"[-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def numbers_in(text: str) -> list[float]:
    return [float(x.replace("−", "-")) for x in NUMBER_PATTERN.findall(text)]


def assert_gives_nothing_away(key: str, answer: np.ndarray, out: str) -> None:
    """The feedback on a wrong answer shows no right value and no distance to it.

    Numbers the feedback may show: the reader's own numbers, the tolerance, and small counts
    ("3 个数里有 2 个不对"). Feedback that is a recognised mistake's hint is written by hand and exempt.
    """
    expected = _expected(key)
    if any(m.hint in out for m in expected.mistakes):
        return
    want = np.asarray(expected.value, dtype=float).ravel()
    got = np.asarray(answer, dtype=float).ravel()
    tolerance = 0.5 if expected.integer else max(expected.atol, 1e-12)
    distance = float(np.max(np.abs(got - want))) if got.size == want.size else None
    for number in numbers_in(out.split("：", 1)[-1]):
        if number in (expected.atol,) or np.any(np.isclose(got, number, rtol=1e-3, atol=1e-12)):
            continue
        if number.is_integer() and 0 <= number <= max(want.size, 1) and want.size > 1:
            continue
        assert not np.any(np.abs(want - number) <= tolerance), f"{key}：反馈说出了答案 {number}：{out}"
        if distance is not None and distance > 0:
            assert abs(number - distance) > 0.01 * distance, f"{key}：反馈说出了与答案的差 {number}：{out}"


@st.composite
def off_by_more_than_the_tolerance(draw, key: str) -> np.ndarray:
    expected = _expected(key)
    v = np.asarray(expected.value, dtype=float)
    flat = v.ravel().copy()
    chosen = draw(st.lists(st.integers(0, flat.size - 1), min_size=1, max_size=flat.size, unique=True))
    for index in chosen:
        sign = draw(st.sampled_from([-1.0, 1.0]))
        if expected.integer:
            flat[index] += sign * draw(st.integers(1, 60))
        else:
            flat[index] += sign * expected.atol * draw(st.floats(1.5, 60.0))
    return flat.reshape(v.shape)


@pytest.mark.parametrize("key", keys(NUMBER))
@SETTINGS
@given(data=st.data())
def test_answers_outside_the_tolerance_are_rejected_without_the_answer(key, data):
    answer = data.draw(off_by_more_than_the_tolerance(key))
    ok, out = run(key, answer.tolist())
    assert not ok
    assert_gives_nothing_away(key, answer, out)


@pytest.mark.parametrize("key", sorted(INTEGERS))
@FEW
@given(fraction=st.floats(0.05, 0.95))
def test_counts_and_shapes_reject_fractions_saying_an_integer_is_expected(key, fraction):
    v = np.asarray(_expected(key).value, dtype=float).copy()
    v.ravel()[0] += fraction
    ok, out = run(key, v.tolist())
    assert not ok and "只能是整数" in out, out


# ---- letters ----------------------------------------------------------------------------------------------

def letter_forms(value: str) -> list[Any]:
    return [value, value.lower(), value.upper(), _full_width(value), f" {value}。", f"{value}.", [value],
            (value.lower(),), np.str_(value), np.array([value]), f"“{value}”", f"（{_full_width(value)}）"]


@pytest.mark.parametrize("key", keys(CHOICE))
def test_right_letters_in_every_form_are_accepted(key):
    for form in letter_forms(_expected(key).value):
        ok, out = run(key, form)
        assert ok, (form, out)


@pytest.mark.parametrize("key", keys(CHOICE))
@SETTINGS
@given(text=st.text(max_size=12))
def test_text_that_is_no_option_is_told_the_format(key, text):
    expected = _expected(key)
    normalised = unicodedata.normalize("NFKC", text).strip(" \t\r\n\u3000'\"`“”‘’「」『』()[]{}【】《》<>.,;:!?。，、；：！？…~～")
    options = {c.casefold() for c in expected.choices} | {a.casefold() for a in expected.aliases}
    assume(normalised.casefold() not in options and normalised.casefold().replace(" ", "") not in options)
    ok, out = run(key, text)
    assert not ok and "不是选项之一" in out and all(f'"{c}"' in out for c in expected.choices), out


@pytest.mark.parametrize("key", keys(CHOICE))
def test_every_other_option_is_rejected(key):
    expected = _expected(key)
    for option in expected.choices:
        if option != expected.value:
            ok, out = run(key, option)
            assert not ok and "不是选项之一" not in out


# ---- 06-1: which points can be an output ----------------------------------------------------------------

def test_06_1_right_forms():
    right = _expected("06-1").value
    for form in (right, tuple(right), torch.tensor(right, dtype=torch.bool), np.array(right, dtype=np.int8),
                 str(right), [right], torch.tensor(right, dtype=torch.float32)):
        ok, out = run("06-1", form)
        assert ok, (form, out)


def test_06_1_every_wrong_choice_is_rejected_by_kind_never_by_index():
    right = _expected("06-1").value
    for bits in range(16):
        answer = [(bits >> i) & 1 for i in range(4)]
        ok, out = run("06-1", answer)
        assert ok == (answer == right)
        if not ok:
            assert not re.search(r"第 ?\d ?个点|\(\d\.\d+, ?-?\d\.\d+\)", out), out  # 不点名是哪一个点


@FEW
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x not in (0.0, 1.0)),
                min_size=1, max_size=4))
def test_06_1_asks_for_zeros_and_ones(values):
    answer = [1, 0, 0, 1][: 4 - len(values)] + values
    ok, out = run("06-1", answer)
    assert not ok and "1（能）或 0（不能）" in out


# ---- 找 bug: functions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("key", keys(FUNCTION))
def test_right_fixes_in_several_styles_are_accepted(key):
    in_a_list = lambda Q, K, V, lengths: [zoo.fix_sdpa(Q, K, V, lengths)]  # noqa: E731
    for fix in (zoo.fix_sdpa, zoo.fix_written_out, zoo.fix_with_weights_float64, zoo.fix_per_sentence, in_a_list):
        ok, out = run(key, fix)
        assert ok, (fix.__name__, out)


@pytest.mark.parametrize("key", keys(FUNCTION))
def test_each_bug_is_rejected_and_its_own_judge_names_it(key):
    number = "①②③④⑤"[keys(FUNCTION).index(key)]
    for other, bug in zoo.BUGS.items():
        ok, out = run(key, bug)
        assert not ok, out
        if other == key:
            assert f"bug {number}（" in out and "还没修好" in out, out


@pytest.mark.parametrize("key", keys(FUNCTION))
@FEW
@given(factor=st.one_of(st.floats(0.5, 0.98), st.floats(1.02, 2.0)))
def test_a_scale_off_by_a_factor_is_rejected(key, factor):
    def scaled(Q, K, V, lengths):
        return torch.nn.functional.scaled_dot_product_attention(
            Q, K, V, attn_mask=zoo.keep_of(Q, lengths), scale=factor / math.sqrt(Q.size(-1)))

    ok, out = run(key, scaled)
    assert not ok and "缩放不对" in out, out


@pytest.mark.parametrize("key", keys(FUNCTION))
@FEW
@given(noise=st.floats(1e-3, 1e-1), seed=st.integers(0, 2**16))
def test_outputs_off_by_more_than_the_tolerance_are_rejected(key, noise, seed):
    def noisy(Q, K, V, lengths):
        g = torch.Generator().manual_seed(seed)
        out = zoo.fix_sdpa(Q, K, V, lengths)
        return out + noise * torch.randn(out.shape, generator=g)

    assert not run(key, noisy)[0]


@pytest.mark.parametrize("key", keys(FUNCTION))
@FEW
@given(query=st.integers(0, 4), key_=st.integers(0, 4))
def test_one_flipped_mask_entry_is_rejected(key, query, key_):
    def flipped(Q, K, V, lengths):
        keep = zoo.keep_of(Q, lengths).expand(Q.size(0), 1, Q.size(-2), Q.size(-2)).clone()
        keep[0, 0, query, key_] = ~keep[0, 0, query, key_]  # 第 0 句是完整的句子：每个查询都是真实的词
        weights = torch.where(keep.any(-1, keepdim=True), zoo.softmax_rows(Q, K, keep), 0.0)
        return weights @ V

    assert not run(key, flipped)[0]


# ---- junk: nothing the reader passes in may crash the checker --------------------------------------------

class BadRepr:
    def __repr__(self):
        raise RuntimeError("repr fails")


class BadNumber:
    def __float__(self):
        raise ValueError("no float")

    def __array__(self, *args, **kwargs):
        raise TypeError("no array")


class BadMessage(Exception):
    def __str__(self):
        raise RuntimeError("str fails")


def raises(exception: Exception):
    def fn(*args, **kwargs):
        raise exception

    fn.__name__ = f"raises_{type(exception).__name__}"
    return fn


def returns(value: Any):
    def fn(Q, K, V, lengths):
        return value() if callable(value) else value

    return fn


ODD_VALUES = [
    Ellipsis, BadRepr(), BadNumber(), raises(ValueError("boom")), raises(BadMessage()), lambda: 1, int, object(),
    torch.zeros(1).expand(10_000, 10_000), torch.full((3,), math.nan), torch.full((2, 5), math.inf),
    torch.zeros(3, dtype=torch.complex64), torch.empty(3, device="meta"), torch.eye(3).to_sparse(),
    torch.ones(3, dtype=torch.bfloat16), torch.zeros(4, requires_grad=True), np.array([math.nan]), np.zeros((0,)),
    np.array([object(), None], dtype=object), np.datetime64("2026-01-01"), range(3), {1, 2}, frozenset(), b"\xff\xfe",
    "[1, 2", "[[1], [2, 3]]", "1/0", "nan", "inf", "１e400", "()", "[]", [[]], [[], []], (), [None], [[None, 1]],
    [1, [2, 3]], {"answer": 1}, 1 + 2j, True, 10 ** 400, -0.0, float("nan"),
    # functions for the 找 bug judges
    returns(None), returns("out"), returns(torch.zeros(1)), returns(lambda: torch.zeros(1).expand(10**4, 10**4)),
    returns(()), returns([]), returns(lambda: torch.zeros(3, 2, 6, 8, dtype=torch.long)),
    returns(lambda: torch.zeros(3, 2, 6, 8, dtype=torch.complex64)), raises(RuntimeError("x")), len,
    lambda Q, K, V: V, lambda *args: args[2] * math.nan, lambda Q, K, V, lengths: V.resize_(0),
    lambda Q, K, V, lengths: (V, V, V), lambda Q, K, V, lengths: V.to_sparse(), lambda Q, K, V, lengths: V.to("meta"),
    lambda Q, K, V, lengths: V.half(), lambda Q, K, V, lengths: V.expand(2, *V.shape)[0],
    lambda Q, K, V, lengths: zoo.fix_sdpa(Q, K, V, lengths.clamp_(max=1)),
    lambda Q, K, V, lengths: zoo.fix_sdpa(Q, K, V, lengths).requires_grad_(False) * 1,
]

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.complex_numbers(),
    st.text(max_size=16), st.binary(max_size=8),
    st.lists(st.one_of(st.none(), st.floats(), st.integers(-10**6, 10**6), st.text(max_size=3)), max_size=6),
    st.recursive(st.one_of(st.floats(), st.none(), st.text(max_size=2), st.integers(-9, 9)),
                 lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner), max_leaves=12),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=3),
    st.sampled_from(ODD_VALUES),
)


@pytest.mark.parametrize("key", [k for k in CASES if CASES[k] is not FUNCTION])
@SETTINGS
@given(junk=JUNK)
def test_junk_never_crashes_the_checker(key, junk):
    run(key, junk)  # run() asserts: no exception, no traceback, a verdict in Chinese


@pytest.mark.parametrize("key", keys(FUNCTION))
def test_junk_functions_never_crash_the_judge(key):
    for junk in ODD_VALUES:
        ok, out = run(key, junk)
        assert not ok


def test_odd_values_never_crash_any_number_checker():
    for key in keys(NUMBER) + keys(CHOICE) + keys(POINTS):
        for junk in ODD_VALUES:
            run(key, junk)
