"""Fonts and plot style, applied by ``attnbook.setup()`` (attnbook/infra/runtime.py holds setup itself)."""
from __future__ import annotations

from .fonts import register_font

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
    # Nothing smaller than 10 pt: figures are shown at (or near) their natural size on the site and
    # in the PDF, and tests/site/test_layout.py checks every figure's smallest text as shown.
    "legend.fontsize": 10,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "image.cmap": "cividis",
    "axes.unicode_minus": False,
    "svg.hashsalt": "attnbook",  # stable ids if a figure is saved as SVG
    # Transparent backgrounds: the site's dark mode shows figures on the page's own background
    # (its CSS turns dark text light there); Jupyter's dark themes add a light backdrop themselves.
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
}


def apply_style() -> None:
    """The bundled CJK font and the book's plot style (``setup()`` in attnbook/infra/runtime.py calls it)."""
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
            from matplotlib.figure import Figure

            from .plots import figure_png_with_alt  # PNGs carry a Chinese description (alt text)

            ip.display_formatter.formatters["image/png"].for_type(Figure, figure_png_with_alt)
    except ImportError:
        pass
    from .notebook import activate

    activate()  # in a Jupyter kernel: the provenance line, and tracebacks without library frames
