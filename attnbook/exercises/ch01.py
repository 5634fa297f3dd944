"""Exercises of chapter 01 (N-gram windows, RNN gradients)."""
from __future__ import annotations

import functools

from ..book import factor_per_step, ngram_window
from ..infra.runtime import torch_state
from ..pages.ch01 import SEGMENTED, SENTENCE, _measure, tokenize
from ._core import Expected, Mistake, exercise


def _first_n(how: str, antecedent: str = "小狗", target: str = "它") -> int:
    tokens = tokenize(SEGMENTED if how == "词" else SENTENCE, how)
    position = tokens.index(target)
    return next(n for n in range(1, position + 2) if antecedent in "".join(ngram_window(tokens, position, n)))


def _window(how: str, n: int, target: str = "它") -> list[str]:
    tokens = tokenize(SEGMENTED if how == "词" else SENTENCE, how)
    return ngram_window(tokens, tokens.index(target), n)


@exercise("01-1", "按字切分时，N 至少多大才能看到“小狗”")
def _first_n_chars() -> Expected:
    right = _first_n("字")
    return Expected(
        value=right,
        atol=0.1,
        integer=True,
        form="一个整数（N）",
        mistakes=(
            Mistake(right - 1, f"N = {right - 1} 时窗口只有前 {right - 2} 个字“" + " ".join(_window("字", right - 1))
                    + "”，“小”还在窗口外。N 元语法的窗口是前 N − 1 个词元。"),
            Mistake(_first_n("词"), "这是按词切分的答案；按字切分时，“它”和“小狗”之间隔了更多词元。"),
        ),
        explain="切分方式变了，同样的距离对应的 N 也变了。",
    )


def _steps_below(factor: float, level: float) -> int:
    k, value = 0, 1.0
    while value >= level:
        k += 1
        value *= factor
    return k


@exercise("01-2", "每步乘以 0.8，几步后梯度不到 1%")
def _steps() -> Expected:
    right = _steps_below(0.8, 0.01)
    return Expected(
        value=right,
        atol=0.1,
        integer=True,
        form="一个整数（步数）",
        mistakes=(
            Mistake(right - 1, f"0.8 的 {right - 1} 次方还略大于 0.01：要的是第一个严格小于 1% 的步数（向上取整）。"),
            Mistake(_steps_below(0.8, 0.1), "这是降到 10% 以下的步数，题目问的是 1%。"),
        ),
        explain="每步一个固定因子，梯度就按指数衰减：距离翻倍，衰减的数量级也翻倍。",
    )


#: Exercise 01-3 looks for the neutral scale among these (the chapter's table has it at s = 2).
NEAR_NEUTRAL = (1.0, 1.25, 1.5, 2.0, 2.5)


@functools.lru_cache(maxsize=4)
def _neutral_scale(input_scale: float) -> float:
    """The recurrent weight scale (of NEAR_NEUTRAL) whose per-step factor is closest to 1, inputs N(0, input_scale²)."""
    with torch_state(threads=1):  # 与 attnbook.setup() 相同：一个线程（这些小矩阵最快）
        factors = {s: factor_per_step(_measure(s, input_scale=input_scale)) for s in NEAR_NEUTRAL}
    return min(factors, key=lambda s: abs(factors[s] - 1))


@exercise("01-3", "输入缩小到 0.3 倍，梯度不增不减的尺度 s 怎样变")
def _neutral_point() -> Expected:
    before, after = _neutral_scale(1.0), _neutral_scale(0.3)
    right = "A" if after < before else ("B" if after == before else "C")
    return Expected(
        value=right,
        choices=("A", "B", "C"),
        mistakes=(
            # 与本章参考解答的测量一致（fifth Part I–II review W1）：输入小时 1 − h² 平均更大；
            # s = 1.5、输入 × 0.3 时仍远不到 1（只说量过的这一点：s 接近 1 时它会接近 1）
            Mistake("B", "输入多大同样要紧：每一步的雅可比矩阵是 diag(1 − h²) W_hhᵀ，里面有 tanh 的导数 1 − h²。"
                         "输入小，h 离 ±1 远一些，1 − h² 平均更大（本章在 s = 1.5、输入 × 0.3 时量过：仍远不到 1），"
                         "每步打的折就少一些。只看 W_hh 的大小会漏掉这一项。"),
            Mistake("C", "方向反了：输入越小，tanh 越不饱和，1 − h² 平均越大，梯度衰减得越慢。"),
        ),
        explain=f"输入 × 0.3 时，每步因子最接近 1 的尺度从 s = {before:g} 变成 s = {after:g}："
                "tanh 越不饱和，梯度越不容易消失。",
    )
