"""The checker behind ``attnbook.check``.

Every answer is normalised before it is judged (see ``_answers.py``): letters are read through NFKC,
case and trailing punctuation; numbers may be ints, floats, strings, lists, tuples, arrays or
tensors, and singleton dimensions are dropped where the shape is not the lesson. Feedback never
gives the answer away: a wrong number is told "偏大/偏小" or "很接近了", never by how much.
"""
from __future__ import annotations

import contextlib
import importlib
import pathlib
import pkgutil
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from ..infra.errors import AttnBookError
from ..infra.runtime import torch_state
from . import _record
from ._answers import Unreadable, as_array, as_text, lead, parse_text, show, shape_words, written_as_product


@dataclass(frozen=True)
class Mistake:
    """A wrong answer we can recognise, and what it tells the reader."""

    value: Any
    hint: str


@dataclass(frozen=True)
class Expected:
    """The right answer (computed), its tolerance, and known mistakes."""

    value: Any
    atol: float = 1e-2
    mistakes: tuple[Mistake, ...] = field(default_factory=tuple)
    explain: str = ""
    #: For answers judged by behaviour (e.g. a function): judge(answer) -> (ok, Chinese feedback).
    judge: Callable[[Any], tuple[bool, str]] | None = None
    #: A count, an index or a shape: only whole numbers are accepted (6.95 is not "almost 7").
    integer: bool = False
    #: Text answers: the options the exercise offers, e.g. ("A", "B", "C"); case and width do not matter.
    choices: tuple[str, ...] = ()
    #: Other spellings of an option, e.g. {"pre-norm": "pre"} (compared after normalisation, casefolded).
    aliases: dict[str, str] = field(default_factory=dict)
    #: Drop singleton dimensions before comparing shapes ([[0.3, 0.3, 0.4]] counts as three numbers).
    #: False where the shape itself is what the exercise teaches.
    squeeze: bool = True
    #: What the answer looks like, in words (default: from the expected shape), e.g. "两个数 [a, b]".
    form: str = ""
    #: What to do when there is no answer yet (default: change `answer`).
    unanswered: str = "把 answer 改成你的结果，再运行这个单元格。"
    #: The answer is a boolean mask: a tensor or array must have a bool dtype (0/1 numbers, or an
    #: additive 0/−inf mask, mean something else to PyTorch), checked before the numbers.
    boolean: bool = False


@dataclass(frozen=True)
class Exercise:
    key: str
    title: str
    chapter: str
    make: Callable[[], Expected]


EXERCISES: dict[str, Exercise] = {}

#: Printed (with the error) if the checker itself fails: never the reader's fault, never a traceback.
INTERNAL_ERROR = "判题程序自己出错了（这是本书的问题，不是你的答案的问题）"


def exercise(key: str, title: str) -> Callable[[Callable[[], Expected]], Callable[[], Expected]]:
    """Register ``make() -> Expected`` under ``key`` such as ``"04-1"``."""

    def decorate(make: Callable[[], Expected]) -> Callable[[], Expected]:
        if key in EXERCISES:
            raise AttnBookError(f"练习编号 {key!r} 重复注册。")
        EXERCISES[key] = Exercise(key=key, title=title, chapter=key.split("-")[0], make=make)
        return make

    return decorate


def _normalise_key(key: Any) -> Any:
    """"4-1", "04–1", "０４-１" → "04-1"; anything else is returned unchanged (and then rejected)."""
    if not isinstance(key, str):
        return key
    text = unicodedata.normalize("NFKC", key).strip()
    match = re.fullmatch(r"(\d{1,2})\s*[-‐‑‒–—_.]\s*(\d{1,2})", text)
    return f"{int(match[1]):02d}-{int(match[2])}" if match else text


_CACHE: dict[str, Expected] = {}


def _expected(key: str) -> Expected:
    """The Expected of exercise ``key``, computed once (make() is deterministic and, inside
    torch_state, leaves no trace)."""
    if key not in _CACHE:
        _CACHE[key] = EXERCISES[key].make()
    return _CACHE[key]


# ---- judging one kind of answer; each returns (ok, feedback) ------------------------------------------


def _judge_choice(expected: Expected, answer: Any) -> tuple[bool, str]:
    choices = expected.choices or tuple(dict.fromkeys([expected.value, *(m.value for m in expected.mistakes)]))
    listed = "、".join(f'"{c}"' for c in choices)
    if isinstance(answer, (list, tuple, set)) and len(answer) > 1:
        return False, f"这题只选一个选项（{listed} 之一），收到了 {len(answer)} 个：{show(answer)}。"
    text = as_text(answer)
    if text is None:
        return False, (f"这题要选一个选项（{listed} 之一，写成字符串，例如 answer = \"{choices[0]}\"），"
                       f"收到的是 {type(answer).__name__}：{show(answer)}。")
    table = {c.casefold(): c for c in choices}
    table.update({k.casefold(): v for k, v in expected.aliases.items()})
    chosen = table.get(text.casefold()) or table.get(text.casefold().replace(" ", ""))
    if chosen is None:
        return False, (f"收到 {show(answer)}，它不是选项之一：请只写一个选项 {listed}"
                       "（大小写、全角半角都可以）。")
    if chosen == expected.value:
        return True, expected.explain
    for m in expected.mistakes:
        if chosen == m.value:
            return False, m.hint
    return False, f"选 {chosen} 不对。再读一遍题目和各个选项，想一想每个选项在什么情况下成立。"


def _fit_shape(got: np.ndarray, want: np.ndarray, squeeze: bool) -> np.ndarray | None:
    """``got`` in the shape of ``want`` (dropping singleton dimensions if allowed), or None."""
    if got.shape == want.shape:
        return got
    if squeeze and np.squeeze(got).shape == np.squeeze(want).shape:
        return got.reshape(want.shape)
    return None


def _is_whole(values: np.ndarray) -> bool:
    return bool(np.all(np.abs(values - np.round(values)) <= 1e-6))


def _same(got: np.ndarray, want: np.ndarray, expected: Expected) -> bool:
    if expected.integer:
        return bool(np.array_equal(np.round(got), np.round(want)))
    return bool(np.allclose(got, want, atol=expected.atol, rtol=0, equal_nan=False))


def _miss(got: np.ndarray, want: np.ndarray, expected: Expected) -> str:
    """Feedback for an unrecognised wrong number: which way it is off, never by how much.

    A whole number within 1 % of a large count is blamed on rounding only when it looks rounded
    (ends in three zeros); otherwise the usual cause is a small term left out or counted twice
    (part3 third review M3: 98432 for 98496 is a missing bias, not a rounded count).
    """
    diff = got - want
    outside = np.abs(diff) > (0.5 if expected.integer else expected.atol)
    close = not expected.integer and bool(np.all(np.abs(diff) <= 3 * expected.atol))
    if want.ndim == 0:
        text = "你的数偏大。" if diff > 0 else "你的数偏小。"
    else:
        text = f"{want.size} 个数里有 {int(outside.sum())} 个不对。"
    if close:
        return text + f"已经很接近了，但超出了允许误差 {expected.atol:g}：计算时多保留几位小数，最后再四舍五入。"
    if not expected.integer and np.all(np.abs(got / 100 - want) <= expected.atol):
        return text + "看起来写成了百分数：请写成小数（例如 30% 写成 0.3）。"
    if expected.integer and want.ndim == 0 and abs(want) >= 1000 and abs(diff) <= 0.01 * abs(want):
        if float(got) % 1000 == 0:
            return text + "已经很接近了，但这题要精确的整数，不要用四舍五入后的近似值。"
        return text + ("差得不多：多半是漏算或多算了一小项（例如某一组偏置）；"
                       "把每个部件的参数逐项列出来，再加一遍。")
    return text + "逐步打印中间结果，对照题目的每一步，看是从哪一步开始不对的。"


def _recognised(got: np.ndarray, expected: Expected, *, other_shapes: bool = False) -> str:
    """The hint of the first known mistake ``got`` matches ('' if none).

    other_shapes: look only at mistakes whose shape differs from the answer's (``got`` has not the
    answer's shape, e.g. five weights where three outputs are asked for).
    """
    want_shape = np.asarray(expected.value, dtype=float).shape
    for m in expected.mistakes:
        try:
            mistake = as_array(m.value)
        except Unreadable:
            continue
        if other_shapes and _fit_shape(mistake, np.zeros(want_shape), expected.squeeze) is not None:
            continue  # same shape as the answer: judged after the answer's own checks
        fitted = _fit_shape(got, mistake, expected.squeeze)
        if fitted is not None and np.isfinite(fitted).all() and _same(fitted, mistake, expected):
            return m.hint
    return ""


@contextlib.contextmanager
def _global_modes() -> Iterator[None]:
    """Restore torch's default dtype and grad mode on exit, whatever the code inside changed."""
    import torch

    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)


def _not_boolean(answer: Any, _depth: int = 0) -> str:
    """'' if every entry of ``answer`` is a bool (bool, np.bool_, or a bool tensor/array, in any nesting);
    otherwise what was received instead, in words (part3 third review W1: [[0, 1], …] of ints
    passed as a mask while the same numbers in a tensor were refused)."""
    if isinstance(answer, (bool, np.bool_)):
        return ""
    if isinstance(answer, str):  # text is judged like the value it stands for (fifth Part III review W1)
        try:
            value = parse_text(answer)
        except Unreadable:
            return ""  # refused by as_array before this check
        return f"文字 {show(answer)}，里面是数而不是 True/False" if _not_boolean(value, _depth + 1) else ""
    dtype = getattr(answer, "dtype", None)
    if dtype is not None:
        return "" if str(dtype) in ("torch.bool", "bool") else f" {dtype} 类型的张量"
    if isinstance(answer, (list, tuple)) and _depth < 8:
        for item in answer:
            kind = _not_boolean(item, _depth + 1)
            if kind:
                if _depth == 0 and kind.startswith("一个 "):  # a list of numbers, not one number (fourth review N4)
                    kind = kind.replace("一个 ", "由 ", 1).replace("类型的数（", "类型的数（例如 ", 1) + "组成的列表"
                return kind
        return ""
    return f"一个 {type(answer).__name__} 类型的数（{show(answer)}）"


def _judge_number(expected: Expected, answer: Any) -> tuple[bool, str]:
    want = np.asarray(expected.value, dtype=float)
    form = expected.form or shape_words(want.shape)
    if want.ndim == 0 and written_as_product(answer):  # "2×8×10×10" for a count: a shape, or a product left to do
        return False, f"收到的 {show(answer)} 是一个乘式：这题只要一个数，把它乘出来，只写结果。"
    try:
        got = as_array(answer)
    except Unreadable as reason:
        return False, f"{reason}。答案应是{lead(form)}。"
    fitted = _fit_shape(got, want, expected.squeeze)
    if fitted is None:
        hint = _recognised(got, expected, other_shapes=True)  # a known mistake of another shape
        if hint:
            return False, hint
        if got.size == want.size and want.size > 1:
            extra = "数的个数对了，但排列不对：检查是否多了或少了一层方括号、需要转置，或者多余的维度没有去掉。"
        elif want.ndim == 0:
            extra = "这题只要一个数。" if got.size != 1 else ""
        else:
            extra = ""
        return False, f"答案应是{lead(form)}，收到的是{lead(shape_words(got.shape))}。{extra}".rstrip()
    got = fitted
    if expected.boolean:
        kind = _not_boolean(answer)
        fraction = np.isfinite(got).all() and not _is_whole(got)  # 0.5 这样的数：先说“只能是整数”
        if kind and not fraction:
            if np.isneginf(got).any():
                return False, (f"这题要的是布尔掩码（True/False），收到的是{kind}，里面有 −inf：这是加性的 0/−inf 掩码。"
                               "它对 nn.MultiheadAttention 也有效（加到分数上，−inf 的位置被挡住），"
                               "但本题要的是布尔掩码（True = 屏蔽）。")
            return False, (f"这题要的是布尔掩码（True/False），收到的是{kind}。"
                           "PyTorch 把 0/1 浮点掩码加到分数上（0 照样保留、1 也挡不住），整数掩码直接报错；"
                           "用 ~keep 或比较运算得到布尔张量。")
    if np.isnan(got).any():
        return False, "答案里有 NaN。常见原因：某一行被掩码全部遮住，softmax 之后就成了 NaN；或者 0 除以 0。"
    if np.isinf(got).any():
        return False, "答案里有无穷大（inf）。检查是否除以了 0，或 exp 溢出。"
    if expected.integer and not _is_whole(got):
        return False, (f"这题的答案只能是整数，收到了 {show(answer)}。答案应是{lead(form)}；"
                       "不要写成小数或近似值，把它算准。")
    if _same(got, want, expected):
        return True, expected.explain
    return False, _recognised(got, expected) or _miss(got, want, expected)


def _judge(expected: Expected, answer: Any) -> tuple[bool, str]:
    if expected.judge is not None:
        return expected.judge(answer)
    if isinstance(expected.value, str):
        return _judge_choice(expected, answer)
    return _judge_number(expected, answer)


def load_all() -> dict:
    """Import every chapter module of this package (``ch01.py`` …, ``bugs.py``) so that all exercises
    are registered; return the registry. (A registry: the checker names no chapter module.)"""
    for info in pkgutil.iter_modules([str(pathlib.Path(__file__).parent)]):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__package__}.{info.name}")
    return EXERCISES


def _unknown_key(key: Any) -> str:
    """Why ``key`` names no exercise, and which ones exist (of its chapter when it names one)."""
    if not isinstance(key, str):
        return (f"练习编号应写成字符串，例如 attnbook.check(\"07-3\", answer)，收到的是 {type(key).__name__}：{show(key)}。")
    chapter = key.split("-")[0]
    same = [k for k in sorted(EXERCISES) if k.split("-")[0] == chapter]
    if same:
        return f"没有练习 {show(key)}：第 {chapter} 章的练习是 {'、'.join(same)}。"
    return (f"没有练习 {show(key)}：练习编号写成“章-题”，例如 \"07-3\"（第 7 章第 3 题），"
            f"本书的练习从 {min(EXERCISES)} 到 {max(EXERCISES)}。")


def check(key: str, answer: Any, *, quiet: bool = False, record: bool = True) -> bool:
    """Check a reader's answer to exercise ``key``; print feedback in Chinese; return True if right.

    Each call is also written to ``attnbook_results.jsonl`` next to the notebook (``_record.py``;
    ``record=False`` or ``ATTNBOOK_RECORD=0`` turns that off), which ``attnbook.report()`` and
    ``python -m attnbook.collect`` read.
    """
    load_all()
    key = _normalise_key(key)

    def say(text: str) -> None:
        if not quiet:
            print(text)

    if not isinstance(key, str) or key not in EXERCISES:  # a mistyped number: one line in Chinese, no traceback (fifth Part III review m6)
        say(f"✗ {_unknown_key(key)}")
        return False
    ex = EXERCISES[key]

    try:
        # The reader's random state stays as it was: building an answer may create a layer, and a
        # reader's function under judgement may draw random numbers. One thread is the fastest for
        # these tiny tensors (and the thread count is restored afterwards).
        # The default dtype and the grad mode are restored too: a reader's function under judgement may
        # change them (fourth Part III review N7).
        with torch_state(threads=1), _global_modes():
            expected = _expected(key)
            if answer is None or answer is Ellipsis:
                say(f"练习 {key}（{ex.title}）：还没有作答。{expected.unanswered}")
                if record:
                    _record.record(key, answered=False, ok=False)
                return False
            ok, feedback = _judge(expected, answer)
    except Exception as error:  # the checker's own bug: say so in Chinese, never a traceback
        say(f"✗ 练习 {key}：{INTERNAL_ERROR}：{type(error).__name__}: {show(error, 200)}")
        return False
    if record:
        hints = {m.hint for m in expected.mistakes}
        _record.record(key, answered=True, ok=ok, mistake=None if ok else _record.mistake_label(feedback, hints))
    if ok:
        say(f"✓ 练习 {key} 正确！{feedback}".rstrip())
    else:
        say(f"✗ 练习 {key} 还不对：{feedback}")
    return ok
