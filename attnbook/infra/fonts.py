"""The CJK font shipped with attnbook, so that Chinese in plots renders on any machine (Colab too)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

FONT_FAMILY = "AttnBook Sans SC"
_FONT_FILE = "AttnBookSansSC-Regular.otf"


def font_path() -> Path:
    """Path of the bundled OFL font file (a subset of Noto Sans CJK SC)."""
    return Path(str(resources.files("attnbook") / "fonts" / _FONT_FILE))


def register_font() -> str:
    """Add the bundled font to matplotlib's font manager and return its family name.

    Safe to call more than once. It does not change rcParams; `attnbook.setup()` does that.
    """
    from matplotlib import font_manager

    path = str(font_path())
    known = {f.fname for f in font_manager.fontManager.ttflist}
    if path not in known:
        font_manager.fontManager.addfont(path)
    return FONT_FAMILY
