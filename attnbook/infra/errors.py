"""Readers' mistakes become clear Chinese errors: the argument, the value received, what was expected."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np


class AttnBookError(ValueError):
    """An argument a reader passed does not fit. The message is in Chinese."""


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{type(value).__name__}，形状 {tuple(shape)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fail(arg: str, value: Any, expected: str) -> AttnBookError:
    """Build the standard error: 参数 `arg` 收到了 …，但应为 …。"""
    return AttnBookError(f"参数 `{arg}` 收到了 {_describe(value)}，但应为{expected}。")


def _is_int(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def check_int(value: Any, arg: str, *, minimum: int | None = 1, maximum: int | None = None,
              hint: str = "") -> int:
    """``value`` as an int in [minimum, maximum] (either bound may be None), or a Chinese error.

    ``hint`` is appended to the expectation, e.g. "或 None", "，例如 64".
    """
    if minimum is None and maximum is None:
        expected = "整数"
    elif maximum is None:
        expected = {0: "非负整数", 1: "正整数"}.get(minimum, f"不小于 {minimum} 的整数")
    elif minimum is None:
        expected = f"不超过 {maximum} 的整数"
    else:
        expected = f"{minimum} 到 {maximum} 之间的整数"
    if not _is_int(value) or (minimum is not None and value < minimum) \
            or (maximum is not None and value > maximum):
        raise fail(arg, value, expected + hint)
    return int(value)


def check_positive(value: Any, arg: str, *, hint: str = "，例如 1.0") -> float:
    """``value`` as a finite float > 0, or a Chinese error."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value <= 0:
        raise fail(arg, value, "有限的正数" + hint)
    return float(value)


def check_finite(value: Any, arg: str, *, hint: str = "，例如 1.0") -> float:
    """``value`` as a finite float, or a Chinese error."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise fail(arg, value, "有限实数" + hint)
    return float(value)


def check_bool(value: Any, arg: str, *, hint: str = "") -> bool:
    """``value`` as a bool (Python or numpy), or a Chinese error."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(arg, value, "True 或 False" + hint)
    return bool(value)


def check_choice(value: Any, arg: str, choices: Sequence[Any]) -> Any:
    """``value`` if it is one of ``choices``, or a Chinese error listing them."""
    if value not in choices:
        raise fail(arg, value, f"{list(choices)} 之一")
    return value


def as_matrix(value: Any, arg: str) -> np.ndarray:
    """Turn a 2-D tensor/array/list into a float numpy array, or raise a Chinese error."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise fail(arg, value, "一个二维数值矩阵（张量、数组或嵌套列表）") from None
    if array.ndim != 2:
        hint = "；若是 [batch, seq_len, seq_len] 或更多维，请先取出一个切片，例如 weights[0]" if array.ndim > 2 else ""
        raise fail(arg, value, f"二维矩阵 [行, 列]，而它是 {array.ndim} 维{hint}")
    if array.size == 0:
        raise fail(arg, value, "非空矩阵")
    return array


def check_labels(labels: Sequence[str] | None, n: int, arg: str, axis: str) -> list[str] | None:
    if labels is None:
        return None
    if isinstance(labels, str):
        labels = list(labels)  # "猫吃鱼" -> ["猫", "吃", "鱼"]
    labels = [str(x) for x in labels]
    if len(labels) != n:
        raise fail(arg, labels, f"{n} 个标签（矩阵有 {n} {axis}），实际给了 {len(labels)} 个")
    return labels
