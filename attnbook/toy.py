"""Small data sets the chapters share, generated in code (nothing to download)."""
from __future__ import annotations

import torch

#: 猫吃鱼: the article's hand-calculation example (§2.3). d_k = d_v = 2.
CAT_EATS_FISH_TOKENS = ["猫", "吃", "鱼"]


def cat_eats_fish(dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor | list[str]]:
    """The article's Q, K, V table for 猫 / 吃 / 鱼, each ``[3, 2]``.

    Returns ``{"tokens": ["猫", "吃", "鱼"], "Q": ..., "K": ..., "V": ...}``; float64 by default so
    hand calculation and code agree to many digits.
    """
    Q = torch.tensor([[1.0, 0.2], [0.5, 0.8], [0.1, 0.5]], dtype=dtype)
    K = torch.tensor([[0.8, 0.1], [0.3, 0.6], [0.9, 0.4]], dtype=dtype)
    V = torch.tensor([[0.5, -0.2], [0.2, 0.7], [-0.4, 0.3]], dtype=dtype)
    return {"tokens": list(CAT_EATS_FISH_TOKENS), "Q": Q, "K": K, "V": V}
