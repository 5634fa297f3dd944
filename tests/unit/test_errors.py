"""Readers' mistakes get a Chinese error naming the argument, the value received and what was expected."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import attnbook
from attnbook import AttnBookError


def fig_fn(a):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, a])
    return fig


CASES = [
    ("labels do not match rows", lambda: attnbook.heatmap(np.eye(3), row_labels=["猫", "吃"]), "row_labels"),
    ("labels do not match columns", lambda: attnbook.heatmap(np.eye(3), col_labels="猫吃鱼鸟"), "col_labels"),
    ("3-D array where 2-D is needed", lambda: attnbook.heatmap(torch.zeros(2, 3, 3)), "weights"),
    ("1-D array", lambda: attnbook.heatmap([0.1, 0.9]), "weights"),
    ("empty matrix", lambda: attnbook.heatmap(np.zeros((0, 0))), "weights"),
    ("not numbers", lambda: attnbook.heatmap([["a", "b"], ["c", "d"]]), "weights"),
    ("vmin above vmax", lambda: attnbook.heatmap(np.eye(2), vmin=1.0, vmax=0.0), "vmin"),
    ("bad format string", lambda: attnbook.heatmap(np.eye(2), fmt="%.2f"), "fmt"),
    ("heatmap_grid given 2-D", lambda: attnbook.heatmap_grid(np.eye(3)), "weights"),
    ("heatmap_grid wrong titles", lambda: attnbook.heatmap_grid(np.zeros((2, 3, 3)), titles=["a"]), "titles"),
    ("empty grid", lambda: attnbook.slider(fig_fn, {"a": []}), "controls['a']"),
    ("grid not a dict", lambda: attnbook.slider(fig_fn, [1, 2, 3]), "controls"),
    ("grid is a string", lambda: attnbook.slider(fig_fn, {"a": "123"}), "controls['a']"),
    ("figure function not callable", lambda: attnbook.slider(None, {"a": [1]}), "fig_fn"),
    ("initial not in grid", lambda: attnbook.slider(fig_fn, {"a": [1, 2]}, initial={"a": 3}), "initial['a']"),
    ("initial names unknown parameter", lambda: attnbook.slider(fig_fn, {"a": [1]}, initial={"b": 1}), "initial"),
    ("label for unknown parameter", lambda: attnbook.slider(fig_fn, {"a": [1]}, labels={"b": "x"}), "labels"),
    ("too many frames", lambda: attnbook.slider(fig_fn, {"a": list(range(20)), "b": list(range(20))}), "controls"),
    ("dpi out of range", lambda: attnbook.slider(fig_fn, {"a": [1]}, dpi=5), "dpi"),
    ("negative seed", lambda: attnbook.setup(seed=-1), "seed"),
]


@pytest.mark.parametrize("name, call, arg", CASES, ids=[c[0] for c in CASES])
def test_reader_mistakes_get_chinese_errors(name, call, arg, assert_reader_error):
    assert_reader_error(call, arg)


def test_an_unknown_exercise_is_one_chinese_line_not_a_traceback(capsys):
    """A mistyped exercise number in a student's cell: the checker says which exercises exist."""
    assert attnbook.check("99-9", 1.0, record=False) is False
    out = capsys.readouterr().out
    assert "99-9" in out and "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_figure_function_returning_nothing():
    slider = attnbook.slider(lambda a: None, {"a": [1, 2]})
    with pytest.raises(AttnBookError, match="fig_fn 应返回 matplotlib 的 Figure"):
        slider.render()


def test_error_is_a_value_error():
    assert issubclass(AttnBookError, ValueError)


def test_heatmap_error_names_sizes():
    with pytest.raises(AttnBookError, match="3 个标签"):
        attnbook.heatmap(np.eye(3), row_labels=["猫", "吃"])


# -- the shared validators (attnbook/infra/errors.py), used by every helper module ---------------
from attnbook.infra.errors import check_bool, check_choice, check_finite, check_int, check_positive  # noqa: E402


@pytest.mark.parametrize("call, arg, expected", [
    (lambda: check_int(0, "n"), "n", "正整数"),
    (lambda: check_int(True, "n"), "n", "正整数"),
    (lambda: check_int(2.0, "n"), "n", "正整数"),
    (lambda: check_int(-1, "seed", minimum=0), "seed", "非负整数"),
    (lambda: check_int(5, "i", minimum=0, maximum=4), "i", "0 到 4 之间的整数"),
    (lambda: check_positive(0.0, "lr"), "lr", "有限的正数"),
    (lambda: check_positive(float("inf"), "lr"), "lr", "有限的正数"),
    (lambda: check_finite(float("nan"), "x"), "x", "有限实数"),
    (lambda: check_bool(1, "scaled"), "scaled", "True 或 False"),
    (lambda: check_choice("z", "kind", ["a", "b"]), "kind", "['a', 'b'] 之一"),
])
def test_validators_name_the_argument_and_the_expectation(call, arg, expected, assert_reader_error):
    assert_reader_error(call, arg)
    with pytest.raises(ValueError, match=re.escape(expected)):  # AttnBookError is a ValueError: old `except ValueError` still works
        call()


def test_validators_return_plain_python_values():
    assert check_int(np.int64(3), "n") == 3 and type(check_int(np.int64(3), "n")) is int
    assert check_positive(np.float32(0.5), "lr") == 0.5
    assert check_bool(np.bool_(True), "b") is True
