"""A tiny Transformer (decoder-style language model) for the experiments of Part IV.

The classes are taught in chapter 12 (训练不稳定的排查清单) and generated into :mod:`attnbook.book`
from its ``#@save`` cells; this module only keeps the old import path working.
"""
from __future__ import annotations

from .book import ScalableMultiHeadSelfAttention, TinyTransformer, TransformerBlock

__all__ = ["ScalableMultiHeadSelfAttention", "TransformerBlock", "TinyTransformer"]
