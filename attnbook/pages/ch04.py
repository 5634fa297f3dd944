"""Chapter 04 (手算“猫吃鱼”): the slider that moves the first entry of q_猫.

The data is attnbook.toy's ``cat_eats_fish``; the chapter computes the table by hand and in code.
"""
from __future__ import annotations

import math

import torch

from ..infra.errors import check_bool, check_finite
from ..infra.plots import heatmap
from ..toy import cat_eats_fish


def cat_fish_figure(q_cat_0: float, scaled: bool):
    """Slider frame of chapter 04: 猫吃鱼 with the first entry of q_猫 replaced by ``q_cat_0``.

    Left: the 3×3 weights (colour range 0–1, so frames compare); right: the 猫 row as bars.
    ``scaled``: divide the scores by √d_k. Returns a matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    check_finite(q_cat_0, "q_cat_0")
    check_bool(scaled, "scaled")
    d = cat_eats_fish()
    tokens, Q, K = d["tokens"], d["Q"].clone(), d["K"]
    Q[0, 0] = q_cat_0
    s = Q @ K.T  # [3, 3]
    if scaled:
        s = s / math.sqrt(Q.shape[-1])
    w = torch.softmax(s, dim=-1)
    fig, (ax_left, ax_right) = plt.subplots(1, 2, figsize=(6.9, 2.9), layout="constrained")
    heatmap(w, row_labels=tokens, col_labels=tokens, ax=ax_left, colorbar=False,
            title=f"q_猫 = [{q_cat_0:g}, 0.2]", xlabel=None, ylabel=None)
    ax_right.bar(tokens, w[0].numpy(), color=["#4C78A8", "#72B7B2", "#F58518"])
    ax_right.set_ylim(0, 1)
    ax_right.set_title("“猫”这一行的权重" + ("（÷√2）" if scaled else "（不缩放）"))
    for j, value in enumerate(w[0].tolist()):
        ax_right.text(j, value + 0.03, f"{value:.2f}", ha="center")
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'cat_fish_figure',
)
