from __future__ import annotations

import math

import torch

import attnbook
from attnbook.exercises import load_all


def test_every_exercise_has_a_computed_answer_that_passes():
    registry = load_all()
    assert registry, "no exercise registered"
    for key, ex in registry.items():
        expected = ex.make()
        assert attnbook.check(key, expected.value, quiet=True), key


def test_recognised_mistake_explains(capsys):
    d = attnbook.cat_eats_fish()
    unscaled = torch.softmax(d["Q"][1] @ d["K"].T, dim=-1)
    assert attnbook.check("04-1", unscaled) is False
    assert "√d_k" in capsys.readouterr().out


def test_unanswered_and_wrong_shape(capsys):
    assert attnbook.check("04-1", None) is False
    assert "还没有作答" in capsys.readouterr().out
    assert attnbook.check("04-1", [[0.3, 0.3, 0.4]]) is False
    assert "形状" in capsys.readouterr().out
    assert attnbook.check("04-1", [math.nan] * 3) is False
    assert "NaN" in capsys.readouterr().out


def test_right_answer(capsys):
    d = attnbook.cat_eats_fish()
    assert attnbook.check("04-1", torch.softmax(d["Q"][1] @ d["K"].T / math.sqrt(2), dim=-1))
    assert "✅" in capsys.readouterr().out
