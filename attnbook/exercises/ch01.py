"""Exercises of chapter 01 (N-gram windows, RNN gradients)."""
from __future__ import annotations

from ..intuition import SENTENCE, SEGMENTED, ngram_window, tokenize
from ..rnn import measure_gradient_decay
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
        mistakes=(
            Mistake(right - 1, f"N = {right - 1} 时窗口只有前 {right - 2} 个字“" + " ".join(_window("字", right - 1))
                    + "”，“小”还在窗口外。N-gram 的窗口是前 N − 1 个词元。"),
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
        mistakes=(
            Mistake(right - 1, f"0.8 的 {right - 1} 次方还略大于 0.01：要的是第一个严格小于 1% 的步数（向上取整）。"),
            Mistake(_steps_below(0.8, 0.1), "这是降到 10% 以下的步数，题目问的是 1%。"),
        ),
        explain="每步一个固定因子，梯度就按指数衰减：距离翻倍，衰减的数量级也翻倍。",
    )


@exercise("01-3", "scale = 0.75 时，距离 10 处的梯度比距离 0 处小多少（log10）")
def _ratio() -> Expected:
    norms = measure_gradient_decay(0.75)  # [seeds, seq_len]
    geo = norms.log10().mean(dim=0)
    arith = norms.mean(dim=0).log10()
    return Expected(
        value=float(geo[10] - geo[0]),
        atol=0.02,
        mistakes=(
            Mistake(float(arith[10] - arith[0]), "你先对 5 个种子取了算术平均再取对数。本章的平均是几何平均："
                                                 "先取 log10，再对种子求平均。"),
            Mistake(float(geo[0] - geo[10]), "符号反了：距离 10 处更小，log10 的差应是负数。"),
        ),
        explain="负得越多，远处的输入对 h_T 的影响越小。",
    )
