"""One CPU thread for the book's tiny training runs."""
from __future__ import annotations

import contextlib
from typing import Iterator

import torch


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread inside the block, then restore the previous count.

    Tiny models run faster on one thread, one thread gives bit-for-bit repeatable sums, and two
    notebooks can then run side by side on two cores.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
