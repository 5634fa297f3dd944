"""torch's global state in one place: ``setup()`` for a chapter, ``torch_state()`` for a helper.

* ``setup()`` runs once at the top of a chapter: it seeds ``random``, numpy and torch, sets torch's
  thread count, asks for deterministic algorithms, and applies the fonts and plot style.
* ``torch_state(seed=…, threads=…)`` is the only way a helper changes torch's state: inside the
  block torch's generator is reseeded and the thread count set; on leaving, both are as they were.
  So a helper call never moves the reader's random stream and never leaves the thread count changed.
"""
from __future__ import annotations

import contextlib
import random
from typing import Iterator

import numpy as np
import torch

from .errors import check_int

__all__ = ["setup", "torch_state"]


@contextlib.contextmanager
def torch_state(*, seed: int | None = None, threads: int | None = 1) -> Iterator[None]:
    """Run a block with its own torch seed and thread count; restore both afterwards.

    Built on ``torch.random.fork_rng``: inside, ``seed`` (if given) seeds torch's global
    generator, so the block draws exactly what it would draw after ``torch.manual_seed(seed)``;
    on leaving, the generator state (CPU and, if present, CUDA) is restored, and so is
    ``torch.get_num_threads()``.

    Args:
        seed: non-negative int, or None to keep drawing from the current state (still restored).
        threads: torch's intra-op threads inside the block; None leaves the count unchanged.
            One thread is the fastest for the book's tiny models and keeps sums in a fixed order.
    """
    if seed is not None:
        check_int(seed, "seed", minimum=0)
    if threads is not None:
        check_int(threads, "threads", minimum=1, hint="或 None")
    before = torch.get_num_threads()
    with torch.random.fork_rng():
        if seed is not None:
            torch.manual_seed(seed)
        if threads is not None:
            torch.set_num_threads(threads)
        try:
            yield
        finally:
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)


def setup(seed: int = 0, *, deterministic: bool = True, threads: int | None = 1) -> None:
    """Seed every generator, make torch deterministic, and set fonts and plot style.

    Call it once at the top of a chapter. Importing attnbook does none of this.

    Args:
        seed: seed for ``random``, ``numpy`` and ``torch``.
        threads: torch's intra-op threads. One thread is faster for the book's small tensors,
            keeps reductions in a fixed order, and lets two notebooks run side by side on two
            cores; ``None`` leaves torch's default (chapter 15 times larger work with it).
        deterministic: ask torch for deterministic algorithms
            (results are then reproducible run after run on one machine).
    """
    check_int(seed, "seed", minimum=0)
    if threads is not None:
        check_int(threads, "threads", minimum=1, hint="或 None")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if threads is not None:
        torch.set_num_threads(threads)
    if deterministic:
        _deterministic_algorithms()

    from .style import apply_style

    apply_style()


def _deterministic_algorithms() -> None:
    """``torch.use_deterministic_algorithms(True, warn_only=True)`` for eager code.

    The public function also sets a flag for ``torch.compile`` and to do so imports torch's
    compiler (``torch._inductor``): 1.8 s at the top of every notebook, for a flag the book never
    reads. The switch eager operators consult is the same; the public call is used when the
    compiler is already loaded or this torch lacks the switch.
    """
    import sys

    switch = getattr(torch._C, "_set_deterministic_algorithms", None)
    if switch is None or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        switch(True, warn_only=True)
