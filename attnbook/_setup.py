"""`attnbook.setup()`: the one call at the top of every chapter."""
from __future__ import annotations

import random

import numpy as np

from ._fonts import register_font

#: The book's plot style. Colours: the colour-blind-safe "tab10" cycle; heatmaps use cividis.
STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.figsize": (6.0, 3.6),
    "axes.grid": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "image.cmap": "cividis",
    "axes.unicode_minus": False,
    "svg.hashsalt": "attnbook",  # stable ids if a figure is saved as SVG
}


def setup(seed: int = 0, *, deterministic: bool = True, threads: int | None = 1) -> None:
    """Seed every generator, make torch deterministic, and set fonts and plot style.

    Call it once at the top of a chapter. Importing attnbook does none of this.

    Args:
        seed: seed for ``random``, ``numpy`` and ``torch``.
        threads: torch's intra-op threads. One thread is faster for the book's small tensors,
            keeps reductions in a fixed order, and lets two notebooks run side by side on two
            cores; ``None`` leaves torch's default (chapter 14 times larger work with it).
        deterministic: ask torch for deterministic algorithms
            (results are then reproducible run after run on one machine).
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        from ._errors import fail
        raise fail("seed", seed, "非负整数，例如 0")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        from ._errors import fail
        raise fail("threads", threads, "正整数或 None")
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch
    except ImportError:  # the plotting helpers work without torch
        torch = None
    if torch is not None:
        torch.manual_seed(seed)
        if threads is not None:
            torch.set_num_threads(threads)
        if deterministic:
            torch.use_deterministic_algorithms(True, warn_only=True)

    import matplotlib

    family = register_font()
    matplotlib.rcParams.update(STYLE)
    # Our CJK font first; DejaVu Sans (matplotlib's own) covers what the subset lacks.
    # A list of families (not the generic "sans-serif"): matplotlib then falls back per glyph.
    matplotlib.rcParams["font.family"] = [family, "DejaVu Sans"]
    matplotlib.rcParams["font.sans-serif"] = [family, "DejaVu Sans"]
    try:  # a crisp inline backend in Jupyter; harmless elsewhere
        from IPython import get_ipython

        ip = get_ipython()
        if ip is not None and getattr(ip, "kernel", None) is not None:
            from matplotlib_inline.backend_inline import set_matplotlib_formats

            set_matplotlib_formats("png")
    except ImportError:
        pass
    from ._notebook import activate

    activate()  # in a Jupyter kernel: the provenance line, and tracebacks without library frames
