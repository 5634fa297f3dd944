"""Chapter 15 (什么时候不该用自注意力): measuring run time and peak memory on the CPU, and the
chapter's figures.

The sliding-window attention, the 1-D CNN layer (``ConvMixer``), the FLOP formulas and
``fit_slope`` are taught in the chapter (its ``#@save`` cells) and live in attnbook.book. Full
attention is the book's own :func:`attnbook.scaled_dot_product_attention`.
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..book import ConvMixer, band_mask, scaled_dot_product_attention, sliding_window_attention
from ..infra.errors import check_int
from ..infra.runtime import torch_state


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------
def median_time(fn: Callable[[], Any], repeats: int = 3, warmup: int = 1, min_total: float = 0.05,
                max_repeats: int = 30, clock: Callable[[], float] = time.thread_time) -> float:
    """Median seconds of ``fn()`` (after ``warmup`` runs) on ``clock``.

    The default clock is the CPU time of the calling thread (``time.thread_time``): with torch on
    one thread the work runs in this thread, and time spent waiting while other programs use
    the CPU is not counted. Pass ``clock=time.perf_counter`` for wall-clock time.

    At least ``repeats`` runs; a fast ``fn`` is repeated until the runs add up to ``min_total``
    seconds (at most ``max_repeats`` runs), so that short calls are not one noisy sample.
    """
    check_int(repeats, "repeats")
    with torch.inference_mode():
        for _ in range(warmup):
            fn()
        times: list[float] = []
        while len(times) < repeats or (sum(times) < min_total and len(times) < max_repeats):
            start = clock()
            fn()
            times.append(clock() - start)
    return statistics.median(times)


def _status() -> dict[str, int]:
    out = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) * 1024
    return out


def peak_memory_supported() -> bool:
    """True on Linux when the peak resident memory can be reset (``/proc/self/clear_refs``)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        _status()
        return True
    except OSError:
        return False


def peak_memory(fn: Callable[[], Any], *, warmup: bool = True) -> float:
    """Extra resident memory (bytes) at the peak of ``fn()``: VmHWM after − VmRSS before.

    Linux only (it resets the high-water mark via ``/proc/self/clear_refs``); returns NaN elsewhere.
    ``fn`` runs once unmeasured first (``warmup``: one-time allocations of libraries do not count).
    Before measuring, free heap memory is handed back to the operating system (``malloc_trim``)
    and glibc is asked to serve every allocation ≥ 64 KiB with mmap, so that every page the call
    touches is counted, even if an earlier call had left freed memory behind. Afterwards the
    threshold is set back to glibc's default starting value (128 KiB).
    """
    if not peak_memory_supported():
        return float("nan")
    libc = None
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        libc = None
    try:
        with torch.inference_mode():
            if warmup:
                fn()
            if libc is not None:
                libc.mallopt(-3, 64 * 1024)  # M_MMAP_THRESHOLD
                libc.malloc_trim(0)
            with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
                f.write("5")  # VmHWM := VmRSS
            before = _status()["VmRSS"]
            result = fn()
            peak = _status()["VmHWM"]
            del result
    finally:
        if libc is not None:
            libc.mallopt(-3, 128 * 1024)
    return float(max(peak - before, 0))


def make_inputs(seq_len: int, d_model: int = 64, *, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random Q, K, V ``[1, 1, seq_len, d_model]`` (batch 1, one head) and X ``[1, seq_len, d_model]``."""
    g = torch.Generator().manual_seed(seed)
    Q, K, V = (torch.randn(1, 1, seq_len, d_model, generator=g) for _ in range(3))
    return {"Q": Q, "K": K, "V": V, "X": torch.randn(1, seq_len, d_model, generator=g)}


def methods(d_model: int = 64, window: int = 64, kernel_size: int = 5) -> dict[str, Callable[[dict], Any]]:
    """The four token mixers compared in chapter 15, each ``f(inputs) -> output``."""
    with torch_state(seed=0, threads=None):  # the convolution's own weights; the reader's generator is untouched
        conv = ConvMixer(d_model, kernel_size).eval()
    return {
        "全注意力（本书实现）": lambda x: scaled_dot_product_attention(x["Q"], x["K"], x["V"])[0],
        "PyTorch SDPA": lambda x: F.scaled_dot_product_attention(x["Q"], x["K"], x["V"]),
        f"滑动窗口（每边 {window}）": lambda x: sliding_window_attention(x["Q"], x["K"], x["V"], window),
        f"一维卷积（k={kernel_size}）": lambda x: conv(x["X"]),
    }


def benchmark(
    ns: Sequence[int],
    *,
    d_model: int = 64,
    window: int = 64,
    kernel_size: int = 5,
    repeats: int = 3,
    threads: int | None = 1,
):
    """Median time (see :func:`median_time`) of each method of :func:`methods` for each n.

    Returns a pandas DataFrame with columns ``方法, n, 秒`` (long format). Runs on ``threads``
    threads (1 by default: steadier numbers on a shared machine), restored afterwards.
    """
    import pandas as pd

    rows = []
    with torch_state(threads=threads):
        fns = methods(d_model, window, kernel_size)
        for n in ns:
            x = make_inputs(n, d_model)
            for name, fn in fns.items():
                seconds = median_time(lambda: fn(x), repeats=repeats, warmup=1 if n <= 2048 else 0)
                rows.append({"方法": name, "n": n, "秒": seconds})
    return pd.DataFrame(rows)


def memory_table(
    ns: Sequence[int],
    *,
    d_model: int = 64,
    window: int = 64,
    kernel_size: int = 5,
    threads: int | None = 1,
):
    """Peak extra memory in bytes (see :func:`peak_memory`) of each method for each n.

    The inputs are made before measuring, so they are not counted. Returns a pandas DataFrame
    indexed by n with one column per method (NaN where the system cannot measure it).
    """
    import pandas as pd

    with torch_state(threads=threads):
        fns = methods(d_model, window, kernel_size)
        peaks: dict[str, list[float]] = {name: [] for name in fns}
        for n in ns:
            x = make_inputs(n, d_model)
            for name, fn in fns.items():
                peaks[name].append(peak_memory(lambda: fn(x)))
    return pd.DataFrame(peaks, index=pd.Index(list(ns), name="n"))


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

_COLOURS = ["#4C78A8", "#E45756", "#54A24B", "#F58518", "#B279A2"]


def plot_loglog(table, value: str = "秒", *, slopes: Mapping[str, float] | None = None,
                ylabel: str = "时间（秒）", ax=None, min_n: float | None = None):
    """Log-log lines of ``value`` against n, one per 方法; slopes (if given) go in the legend."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
    for i, (name, part) in enumerate(table.groupby("方法", sort=False)):
        label = name if not slopes or name not in slopes else f"{name}：斜率 {slopes[name]:.1f}"
        ax.loglog(part["n"], part[value], "o-", color=_COLOURS[i % len(_COLOURS)], label=label, lw=1.5, ms=4)
    if min_n is not None:
        ax.axvspan(min_n, table["n"].max() * 1.15, color="grey", alpha=0.08, lw=0)
        ax.text(min_n, ax.get_ylim()[1], " 拟合区间", va="top", fontsize=10, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("序列长度 n")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=10)
    return ax


def flops_figure(d_model: int, window: int, kernel_size: int = 5):
    """Analytic FLOPs of full attention, sliding window (2·window+1 keys) and conv against n,
    with the crossovers marked. Returns a Figure (used by the chapter's slider)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    n = np.logspace(np.log10(64), np.log10(65536), 60)
    w = 2 * window + 1
    fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
    ax.loglog(n, 4 * n**2 * d_model, color=_COLOURS[0], label="全注意力 4n²d")
    ax.loglog(n, 4 * n * w * d_model, color=_COLOURS[2], label=f"滑动窗口 4nwd（w={w}）")
    ax.loglog(n, 2 * n * kernel_size * d_model**2, color=_COLOURS[3], label=f"卷积 2nkd²（k={kernel_size}）")
    crosses = sorted(((w, _COLOURS[2]), (kernel_size * d_model / 2, _COLOURS[3])))
    for k, (cross, colour) in enumerate(crosses):
        ax.axvline(cross, color=colour, ls=":", lw=1)
        # the left line's label on its left, the right one's on its right: they never overlap
        ax.text(cross, 0.03, f" n={cross:g}", color=colour, fontsize=10, rotation=90, va="bottom",
                ha="right" if k == 0 else "left", transform=ax.get_xaxis_transform())
    ax.set_xscale("log", base=2)
    ax.yaxis.set_minor_locator(NullLocator())  # 十几个数量级的次刻度：画一帧的时间多一倍，却看不出来
    ax.set_xlabel("序列长度 n")
    ax.set_ylabel("浮点运算次数（FLOPs）")
    ax.set_title(f"d_model = {d_model}：虚线右边，全注意力更贵")
    ax.legend(fontsize=10, loc="upper left")
    return fig


def window_blocks_figure(seq_len: int = 24, window: int = 3, block: int = 6, causal: bool = False):
    """Which (query, key) pairs each method touches, for a small seq_len. Returns a Figure.

    Left: full attention with a band mask computes all seq_len² scores and throws most away.
    Right: the blocked code computes only the rectangles (block × (block + 2·window)); inside
    them, the band keeps what is needed.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    keep = band_mask(seq_len, window, causal).float().numpy()
    cmap = ListedColormap(["#FFFFFF", "#C9D6E8", "#4C78A8"])
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.3), layout="constrained")
    full = 1 + keep  # 全部算出来（1），留下的（2）
    blocked = np.zeros_like(keep)
    left, right = window, 0 if causal else window
    for start in range(0, seq_len, block):
        rows = slice(start, min(start + block, seq_len))
        cols = slice(max(start - left, 0), min(start + block + right, seq_len))
        blocked[rows, cols] = 1
        axes[1].add_patch(Rectangle((start - left - 0.5, start - 0.5), block + left + right, block,
                                    fill=False, edgecolor="#E45756", lw=1.2, clip_on=True))
    blocked = np.where(keep > 0, 2, blocked)
    titles = (f"全注意力 + 带状掩码：算 {seq_len * seq_len} 个分数",
              f"分块：算 {int((blocked > 0).sum())} 个（红框）")
    for ax, data, title in zip(axes, (full, blocked), titles):
        ax.imshow(data, cmap=cmap, vmin=0, vmax=2, aspect="equal")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("键 j")
        ax.set_ylabel("查询 i")
        ax.set_xlim(-0.5, seq_len - 0.5)
        ax.set_ylim(seq_len - 0.5, -0.5)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'benchmark',
    'flops_figure',
    'make_inputs',
    'median_time',
    'memory_table',
    'peak_memory',
    'peak_memory_supported',
    'plot_loglog',
    'window_blocks_figure',
)
