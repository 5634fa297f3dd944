"""Auto-checked exercises. ``attnbook.check("04-1", answer)`` prints Chinese feedback.

Each chapter registers its exercises in its own module (``ch04.py`` …). The expected value is
*computed* there, never typed in, and each known mistake carries the hint it deserves.
"""
from __future__ import annotations

from ._core import EXERCISES, Expected, Mistake, check, exercise, load_all
from ._record import report

__all__ = ["EXERCISES", "Expected", "Mistake", "check", "exercise", "load_all", "report"]
