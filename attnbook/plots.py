"""Pure plotting helpers: `f(data, *, ax=None) -> Axes`. They never call `plt.show()`."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._errors import as_matrix, check_labels, fail

#: Colour-blind-safe sequential map used for every attention heatmap in the book.
HEATMAP_CMAP = "cividis"


def _axes(ax, figsize=None):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def heatmap(
    weights: Any,
    *,
    row_labels: Sequence[str] | str | None = None,
    col_labels: Sequence[str] | str | None = None,
    ax=None,
    annotate: bool | None = None,
    fmt: str = "{:.2f}",
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str = HEATMAP_CMAP,
    title: str | None = None,
    xlabel: str | None = "键 Key（被看的词）",
    ylabel: str | None = "查询 Query（看的词）",
    colorbar: bool = True,
):
    """Draw an attention-weight matrix with token labels.

    Args:
        weights: ``[seq_len_q, seq_len_k]`` tensor, array or nested list (row i = query i).
        row_labels, col_labels: one label per row / column; a string such as ``"猫吃鱼"``
            is split into characters.
        annotate: write each value in its cell (default: only when the matrix is at most 12×12).
        vmin, vmax: colour range; ``None`` uses the data's range (e.g. for raw scores).
    Returns:
        The matplotlib ``Axes``.
    """
    w = as_matrix(weights, "weights")
    n_rows, n_cols = w.shape
    rows = check_labels(row_labels, n_rows, "row_labels", "行")
    cols = check_labels(col_labels, n_cols, "col_labels", "列")
    if vmin is not None and vmax is not None and vmin >= vmax:
        raise fail("vmin", vmin, f"小于 vmax={vmax} 的数")
    if not isinstance(fmt, str) or "{" not in fmt:
        raise fail("fmt", fmt, "格式字符串，例如 \"{:.2f}\"")
    if annotate is None:
        annotate = max(n_rows, n_cols) <= 12

    ax = _axes(ax, figsize=(1.0 + 0.55 * n_cols, 0.8 + 0.5 * n_rows))
    finite = w[np.isfinite(w)]
    lo = vmin if vmin is not None else (finite.min() if finite.size else 0.0)
    hi = vmax if vmax is not None else (finite.max() if finite.size else 1.0)
    if hi <= lo:
        hi = lo + 1.0
    image = ax.imshow(w, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
    ax.set_xticks(range(n_cols), labels=cols if cols is not None else range(n_cols))
    ax.set_yticks(range(n_rows), labels=rows if rows is not None else range(n_rows))
    ax.tick_params(top=False, bottom=True, length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if annotate:
        import matplotlib

        colormap = matplotlib.colormaps[cmap]
        for i in range(n_rows):
            for j in range(n_cols):
                value = w[i, j]
                if not np.isfinite(value):
                    text, colour = ("NaN" if np.isnan(value) else ("-∞" if value < 0 else "∞")), "crimson"
                else:
                    shade = colormap((value - lo) / (hi - lo))
                    luminance = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2]
                    text, colour = fmt.format(value), ("black" if luminance > 0.5 else "white")
                ax.text(j, i, text, ha="center", va="center", color=colour, fontsize=8)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    return ax


def heatmap_grid(
    weights: Any,
    *,
    labels: Sequence[str] | str | None = None,
    titles: Sequence[str] | None = None,
    ncols: int = 4,
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    suptitle: str | None = None,
):
    """Several heatmaps side by side, e.g. one per head.

    Args:
        weights: ``[num_heads, seq_len, seq_len]`` (tensor, array or list of matrices).
        labels: token labels used for both axes.
        titles: one title per matrix (default ``头 0``, ``头 1`` …).
    Returns:
        The matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt

    if hasattr(weights, "detach"):
        weights = weights.detach().cpu().numpy()
    stack = np.asarray(weights, dtype=float)
    if stack.ndim != 3:
        raise fail("weights", weights, f"三维数组 [num_heads, seq_len, seq_len]，而它是 {stack.ndim} 维")
    if not isinstance(ncols, int) or ncols < 1:
        raise fail("ncols", ncols, "正整数")
    n = stack.shape[0]
    if titles is not None and len(titles) != n:
        raise fail("titles", titles, f"{n} 个标题（每个矩阵一个）")
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.3 * ncols, 2.2 * nrows + 0.4), squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.axis("off")
            continue
        heatmap(stack[k], row_labels=labels, col_labels=labels, ax=ax, annotate=False,
                vmin=vmin, vmax=vmax, colorbar=False, xlabel=None, ylabel=None,
                title=titles[k] if titles is not None else f"头 {k}")
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


# -- accessibility: Chinese alt text for every figure ------------------------------------------
def figure_alt(fig) -> str:
    """A short Chinese description of a matplotlib Figure, built from its titles and axis labels.

    Used as the alt text of notebook figures (stored in the PNG's ``Description`` metadata,
    which the site copies into ``<img alt>``) and of slider frames.
    """
    def clean(text: str) -> str:
        return " ".join(str(text).replace("$", "").split())

    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text().strip():
        parts.append(f"「{clean(suptitle.get_text())}」")
    panels = []
    for ax in fig.axes:
        # titles may sit left, centre or right; an axes drawn without axis lines (a diagram) counts if titled
        title = clean(" ".join(t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t))
        if not ax.get_visible() or not ax.axison and not ax.images and not title:
            continue
        if ax.get_label() == "<colorbar>":
            continue
        kind = "热力图" if ax.images else ("示意图" if not ax.axison else (
            "柱状图" if ax.patches and not ax.lines else ("曲线图" if ax.lines else ("散点图" if ax.collections else "图"))))
        desc = kind
        if title:
            desc = f"{kind}「{title}」"
        axes_text = []
        if clean(ax.get_xlabel()):
            axes_text.append(f"横轴：{clean(ax.get_xlabel())}")
        if clean(ax.get_ylabel()):
            axes_text.append(f"纵轴：{clean(ax.get_ylabel())}")
        if axes_text:
            desc += "（" + "，".join(axes_text) + "）"
        panels.append(desc)
    if len(panels) == 1:
        parts.append(panels[0])
    elif panels:
        shown = "；".join(panels[:4]) + ("；等" if len(panels) > 4 else "")
        parts.append(f"{len(panels)} 个子图：{shown}")
    return "图：" + ("，".join(parts) if parts else "代码单元画出的图")


def figure_png_with_alt(fig, **kwargs):
    """IPython's PNG formatter for a Figure, with :func:`figure_alt` in the PNG metadata."""
    from IPython.core.pylabtools import print_figure

    if not fig.axes and not fig.lines:
        return None
    return print_figure(fig, fmt="png", base64=True,
                        metadata={"Description": figure_alt(fig), "Software": None}, **kwargs)
