"""What `attnbook.setup()` does inside a Jupyter kernel: the provenance line and short tracebacks.

- ``provenance()``: one line saying when, and with which Python, PyTorch and CPU kind, the page's
  outputs were computed. Training figures differ slightly between CPUs (PyTorch's kernels round
  differently on each instruction set), so the reader sees where the numbers come from.
- ``short_tracebacks()``: an error shows the reader's cell lines and the message, not the frames
  inside torch or attnbook (those carry the executing machine's paths and hide the message).
"""
from __future__ import annotations

import datetime
import platform
import sys
import traceback
from typing import Any

CELL_MARKERS = ("ipykernel_", "<ipython-input-")  # how IPython 8/9 and 7 name a cell's code


def cpu_kind() -> str:
    """The CPU's model name (Linux) or architecture, and the vector instructions torch uses."""
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    name = " ".join(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    name = name or platform.processor() or platform.machine() or "未知 CPU"
    try:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
    except (ImportError, AttributeError):
        capability = "?"
    return f"{name}，{platform.machine()}，PyTorch CPU 内核：{capability}"


def provenance(today: datetime.date | None = None) -> str:
    """'本页输出由 2026-11-30 的一次运行生成：Python 3.12.4 · PyTorch 2.13.0 · CPU …'."""
    today = today or datetime.date.today()
    try:
        import torch

        torch_version = torch.__version__.split("+")[0]
    except ImportError:
        torch_version = "未安装"
    python = ".".join(map(str, sys.version_info[:3]))
    return (f"本页输出由 {today.isoformat()} 的一次运行生成：Python {python} · PyTorch {torch_version}"
            f" · CPU：{cpu_kind()}")


def _is_cell(filename: str) -> bool:
    return any(marker in filename for marker in CELL_MARKERS)


def short_traceback_lines(etype: type, evalue: BaseException, tb: Any) -> list[str]:
    """The lines of the reader's cells in the traceback, then 'ExceptionType: message'."""
    lines = []
    for frame in traceback.extract_tb(tb):
        if _is_cell(frame.filename):
            code = (frame.line or "").strip()
            lines.append(f"  单元格第 {frame.lineno} 行：{code}")
    head = ["Traceback（只列出单元格里的代码行，库内部的调用从略）："] if lines else []
    message = str(evalue)
    return head + lines + [f"{etype.__name__}: {message}" if message else etype.__name__]


def short_tracebacks(shell: Any) -> None:
    """Show short tracebacks (see short_traceback_lines) in this IPython shell."""

    def handler(self: Any, etype: type, evalue: BaseException, tb: Any, tb_offset: Any = None) -> None:
        stb = short_traceback_lines(etype, evalue, tb)
        self._showtraceback(etype, evalue, stb)

    shell.set_custom_exc((Exception,), handler)


def activate() -> None:
    """Inside a Jupyter kernel: print the provenance line and shorten tracebacks; elsewhere nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    short_tracebacks(shell)
    print(provenance())


GLUE_PREFIX = "application/papermill.record/"  # myst-nb's prefix for glued values


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Store ``variable`` under ``name`` for the page's text: ``{glue:text}`name:.2f``` in Markdown.

    The same output as ``myst_nb.glue`` (which the site build reads; same arguments), without needing
    myst-nb in the kernel: Colab does not install it. ``display=False`` stores the value without showing it.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    if not isinstance(name, str) or not name:
        from .errors import fail

        raise fail("name", name, "非空字符串，例如 \"ratio\"")
    if hasattr(variable, "item") and getattr(variable, "shape", None) == ():
        variable = variable.item()  # numpy/torch scalars: NumPy 2 prints np.float64(…), which {glue:text}`x:.2f` cannot format
    mimebundle, metadata = format_display_data(variable)
    mime_prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = dict(name=name, mime_prefix=mime_prefix)
    ipy_display({mime_prefix + k: v for k, v in mimebundle.items()}, raw=True, metadata=metadata)
