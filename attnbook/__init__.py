"""attnbook: the helper package of 《自注意力机制详解》.

Importing it changes nothing (no seeds, no styles, no fonts); call ``attnbook.setup()``.
"""
from __future__ import annotations

import importlib.metadata as _metadata

# The taught code (generated from the chapters' #@save cells), the data, the checker and the
# infrastructure; the chapters' pages (attnbook/pages/chNN.py) are imported by the chapters themselves.
from .book import (MultiHeadSelfAttention, SelfAttention, causal_mask, padding_mask,
                   scaled_dot_product_attention, sinusoidal_positional_encoding)
from .exercises import check, report
from .infra.errors import AttnBookError
from .infra.fonts import FONT_FAMILY, font_path, register_font
from .infra.notebook import glue
from .infra.plots import heatmap, heatmap_grid, split_heads_diagram
from .infra.runtime import setup, torch_state
from .infra.sliders import Slider, slider, static_mode
from .toy import cat_eats_fish

try:  # the version lives in pyproject.toml only
    __version__ = _metadata.version("attnbook")
except _metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
    __version__ = "0+unknown"

__all__ = [
    "AttnBookError", "FONT_FAMILY", "MultiHeadSelfAttention", "SelfAttention", "Slider",
    "cat_eats_fish", "causal_mask", "check", "font_path", "glue", "heatmap", "heatmap_grid",
    "padding_mask", "register_font", "report", "scaled_dot_product_attention", "setup",
    "sinusoidal_positional_encoding", "slider", "split_heads_diagram", "static_mode", "torch_state",
]
