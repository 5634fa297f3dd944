"""Pure plotting helpers: `f(data, *, ax=None) -> Axes`. They never call `plt.show()`."""
from __future__ import annotations

import contextlib
import struct
import zlib
from typing import Any, Sequence

import numpy as np

from .errors import as_matrix, check_labels, fail

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

    # big enough for 10 pt numbers in the cells, at most 6.9 in wide (the page shows it unscaled)
    ax = _axes(ax, figsize=(min(6.9, max(3.6, 1.6 + 0.6 * n_cols)), min(6.0, max(2.8, 1.0 + 0.5 * n_rows))))
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
                ax.text(j, i, text, ha="center", va="center", color=colour, fontsize=10)
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


#: One colour per attention head (colour-blind-friendly Tableau 10), used where heads are drawn apart.
HEAD_COLORS = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#9D755D", "#79706E")


def split_heads_diagram(projected: Any, viewed: Any, heads: Any, *, tokens: Sequence[str], ax=None):
    """Draw one sentence's ``view`` + ``transpose`` into heads: every cell shows the tensor's own number.

    Args:
        projected: ``[seq_len, d_model]``, the projection of one sentence (batch = 1 dropped).
        viewed: ``[seq_len, num_heads, d_k]``, ``projected.view(seq_len, num_heads, d_k)``.
        heads: ``[num_heads, seq_len, d_k]``, ``viewed.transpose(0, 1)``.
        tokens: ``seq_len`` row labels.
    Columns are coloured by the head they belong to (at most ``len(HEAD_COLORS)`` heads).
    Returns:
        The Axes (a diagram: no axis lines).
    """
    import math

    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    t, v, h = (np.asarray(a.detach().cpu() if hasattr(a, "detach") else a) for a in (projected, viewed, heads))
    if t.ndim != 2:
        raise fail("projected", projected, f"二维 [seq_len, d_model]，而它是 {t.ndim} 维")
    seq_len, d_model = t.shape
    if v.ndim != 3 or v.shape[0] != seq_len or v.shape[1] * v.shape[2] != d_model:
        raise fail("viewed", viewed, f"[seq_len={seq_len}, num_heads, d_k]，且 num_heads × d_k = {d_model}")
    num_heads, d_k = v.shape[1], v.shape[2]
    if not np.array_equal(v.reshape(seq_len, d_model), t):
        raise fail("viewed", viewed, "projected.view(seq_len, num_heads, d_k) 的结果（数值要与 projected 相同）")
    if h.shape != (num_heads, seq_len, d_k) or not np.array_equal(h, v.transpose(1, 0, 2)):
        raise fail("heads", heads, f"viewed.transpose(0, 1)，形状 [{num_heads}, {seq_len}, {d_k}]")
    if num_heads > len(HEAD_COLORS):
        raise fail("viewed", viewed, f"至多 {len(HEAD_COLORS)} 个头（每个头一种颜色），而它有 {num_heads} 个")
    tokens = check_labels(tokens, seq_len, "tokens", "行")
    if tokens is None:
        raise fail("tokens", tokens, f"{seq_len} 个词（每行一个）")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.6, 3.4), layout="constrained")

    def cell(x, y, value, head):
        ax.add_patch(Rectangle((x, -y - 1), 1, 1, facecolor=HEAD_COLORS[head], edgecolor="white", lw=1.2))
        ax.text(x + 0.5, -y - 0.5, f"{value:g}", ha="center", va="center", fontsize=10, color="white")

    def row_labels(x, y0):
        for i, token in enumerate(tokens):
            ax.text(x - 0.25, -(y0 + i) - 0.5, token, ha="right", va="center", fontsize=10)

    def caption(x, y, text):
        ax.text(x, y, text, ha="center", va="bottom", fontsize=10, linespacing=1.4)

    # 1. the projection [seq_len, d_model], each column coloured by its head
    for i in range(seq_len):
        for c in range(d_model):
            cell(c, i, t[i, c], c // d_k)
    row_labels(0, 0)
    caption(d_model / 2, 0.4, "W_q(x)\n[batch, seq_len, d_model]")

    # 2. view: the same memory, each row cut into num_heads pieces
    gap = 0.4
    x1 = d_model + 3.4
    width2 = num_heads * d_k + (num_heads - 1) * gap
    for i in range(seq_len):
        for k in range(num_heads):
            for c in range(d_k):
                cell(x1 + k * (d_k + gap) + c, i, v[i, k, c], k)
    caption(x1 + width2 / 2, 0.4, ".view(batch, seq_len, num_heads, d_k)\n[batch, seq_len, num_heads, d_k]")

    # 3. transpose: heads first, one [seq_len, d_k] table per head
    rows = min(num_heads, 2)
    cols = math.ceil(num_heads / rows)
    x2 = x1 + width2 + 5.2  # room for the arrow, its note and the row labels of the heads
    block_w, block_h = d_k + 1.4, seq_len + 1.2
    for k in range(num_heads):
        r, c0 = k // cols, k % cols
        bx, by = x2 + c0 * block_w, r * block_h
        for i in range(seq_len):
            for c in range(d_k):
                cell(bx + c, by + i, h[k, i, c], k)
        if c0 == 0:
            row_labels(bx, by)
        ax.text(bx + d_k / 2, -by + 0.15, f"头 {k + 1}", ha="center", va="bottom", fontsize=10, color=HEAD_COLORS[k])
    width3 = cols * block_w - 1.4
    caption(x2 + width3 / 2, 2.2, ".transpose(1, 2)\n[batch, num_heads, seq_len, d_k]")

    for xa, xb, note in ((d_model + 0.4, x1 - 0.5, "不搬数据"), (x1 + width2 + 0.4, x2 - 1.9, "交换两维")):
        ax.add_patch(FancyArrowPatch((xa, -seq_len / 2), (xb, -seq_len / 2), arrowstyle="-|>",
                                     mutation_scale=12, color="0.35"))
        ax.text((xa + xb) / 2, -seq_len / 2 - 0.35, note, ha="center", va="top", fontsize=10, color="0.35")
    ax.set_xlim(-1.2, x2 + width3 + 0.3)
    ax.set_ylim(-rows * block_h - 0.2, 4.4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"一句话（batch = 1）：d_model = {d_model}，num_heads = {num_heads}，d_k = {d_k}", fontsize=10)
    return ax


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


# -- the smallest text of a saved figure, recorded in its PNG ----------------------------------
#: The PNG tEXt key holding the smallest font size (pt) of any text drawn in the figure; read by
#: tests/site/test_layout.py, which checks that every figure's text is ≥ 10 pt as the page shows it.
MIN_FONT_KEY = "attnbook:min-font-pt"


@contextlib.contextmanager
def recording_font_sizes():
    """Collect the size (pt) of every non-empty text the Agg renderer draws inside the block: titles,
    labels, tick labels, legends, annotations, mathtext. Text that is never drawn (an Axes with
    ``axis("off")``, tick labels outside the view) is not counted."""
    from matplotlib.backends.backend_agg import RendererAgg

    sizes: list[float] = []
    original = RendererAgg.draw_text

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if str(s).strip():
            sizes.append(prop.get_size_in_points())
        return original(self, gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    RendererAgg.draw_text = draw_text
    try:
        yield sizes
    finally:
        RendererAgg.draw_text = original


def with_min_font(png: bytes, sizes: Sequence[float]) -> bytes:
    """``png`` with a tEXt chunk :data:`MIN_FONT_KEY` = ``min(sizes)`` right after IHDR (read before
    the pixels). Unchanged when the figure draws no text. Deterministic."""
    if not sizes:
        return png
    body = MIN_FONT_KEY.encode("latin-1") + b"\0" + f"{min(sizes):g}".encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    at = 8 + 25  # the 8-byte signature, then IHDR (4 length + 4 type + 13 data + 4 CRC)
    return png[:at] + chunk + png[at:]


def figure_png_with_alt(fig, **kwargs):
    """IPython's PNG formatter for a Figure, with :func:`figure_alt` and the figure's smallest font
    size (:data:`MIN_FONT_KEY`) in the PNG metadata."""
    import base64

    from IPython.core.pylabtools import print_figure

    if not fig.axes and not fig.lines:
        return None
    with recording_font_sizes() as sizes:
        png = print_figure(fig, fmt="png", base64=False,
                           metadata={"Description": figure_alt(fig), "Software": None}, **kwargs)
    return base64.b64encode(with_min_font(png, sizes)).decode("ascii")
