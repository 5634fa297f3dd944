"""Readers' mistakes become clear Chinese errors: the argument, the value received, what was expected."""
from __future__ import annotations

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
