"""Auto-checked exercises. ``attnbook.check("04-1", answer)`` prints Chinese feedback.

Each chapter registers its exercises in its own module (``ch04.py`` …). The expected value is
*computed* there, never typed in, and each known mistake carries the hint it deserves.
"""
from __future__ import annotations

import importlib
import pkgutil

from ._core import EXERCISES, Expected, Mistake, check, exercise
from ._record import report

__all__ = ["EXERCISES", "Expected", "Mistake", "check", "exercise", "load_all", "report"]


def load_all() -> dict:
    """Import every chapter module so that all exercises are registered; return the registry."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return EXERCISES
