"""The checker behind ``attnbook.check``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._errors import AttnBookError


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


@dataclass(frozen=True)
class Exercise:
    key: str
    title: str
    chapter: str
    make: Callable[[], Expected]


EXERCISES: dict[str, Exercise] = {}


def exercise(key: str, title: str) -> Callable[[Callable[[], Expected]], Callable[[], Expected]]:
    """Register ``make() -> Expected`` under ``key`` such as ``"04-1"``."""

    def decorate(make: Callable[[], Expected]) -> Callable[[], Expected]:
        if key in EXERCISES:
            raise AttnBookError(f"练习编号 {key!r} 重复注册。")
        EXERCISES[key] = Exercise(key=key, title=title, chapter=key.split("-")[0], make=make)
        return make

    return decorate


def _to_array(value: Any) -> np.ndarray | None:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=0, equal_nan=False))


def check(key: str, answer: Any, *, quiet: bool = False) -> bool:
    """Check a reader's answer to exercise ``key``; print feedback in Chinese; return True if right."""
    from . import load_all

    load_all()
    if key not in EXERCISES:
        raise AttnBookError(f"参数 `key` 收到了 {key!r}，但应为已登记的练习编号之一，例如 {sorted(EXERCISES)[:5]}。")
    ex = EXERCISES[key]
    expected = ex.make()

    def say(text: str) -> None:
        if not quiet:
            print(text)

    if answer is None or answer is Ellipsis:
        say(f"练习 {key}（{ex.title}）：还没有作答。把 answer 改成你的结果，再运行这个单元格。")
        return False
    if expected.judge is not None:
        ok, feedback = expected.judge(answer)
        say(f"✓ 练习 {key} 正确！{feedback}" if ok else f"✗ 练习 {key} 还不对：{feedback}")
        return ok
    if isinstance(expected.value, str):
        ok = str(answer).strip() == expected.value
        if ok:
            say(f"✓ 练习 {key} 正确！{expected.explain}".rstrip())
            return True
        for m in expected.mistakes:
            if str(answer).strip() == str(m.value):
                say(f"✗ 练习 {key} 还不对：{m.hint}")
                return False
        say(f"✗ 练习 {key} 还不对：收到 {answer!r}。再读一遍题目中的提示。")
        return False

    got = _to_array(answer)
    want = np.asarray(expected.value, dtype=float)
    if got is None:
        say(f"✗ 练习 {key}：答案应是数值（或数值数组），收到的是 {type(answer).__name__}：{answer!r}。")
        return False
    if got.shape != want.shape:
        if got.size == want.size:
            say(f"✗ 练习 {key}：数值个数对了，但形状是 {got.shape}，应为 {want.shape}。检查是否需要转置或 reshape。")
        else:
            say(f"✗ 练习 {key}：答案的形状是 {got.shape}，应为 {want.shape}。")
        return False
    if np.isnan(got).any():
        say(f"✗ 练习 {key}：答案里有 NaN。常见原因：某一行被 mask 全部遮住，softmax 之后就成了 NaN。")
        return False
    if _close(got, want, expected.atol):
        say(f"✓ 练习 {key} 正确！{expected.explain}".rstrip())
        return True
    for m in expected.mistakes:
        mv = np.asarray(m.value, dtype=float)
        if _close(got, mv, expected.atol):
            say(f"✗ 练习 {key} 还不对：{m.hint}")
            return False
    err = float(np.max(np.abs(got - want)))
    say(f"✗ 练习 {key} 还不对：与正确答案最大相差 {err:.3g}（允许误差 {expected.atol:g}）。"
        "逐步打印中间结果，和正文的表格对照。")
    return False
