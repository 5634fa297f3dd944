"""The old path of the error helpers; they now live in attnbook.infra.errors."""
# TEMPORARY (issue 26): removed once chapters import attnbook.infra.errors
from __future__ import annotations

from .infra.errors import (  # noqa: F401
    AttnBookError,
    as_matrix,
    check_bool,
    check_choice,
    check_finite,
    check_int,
    check_labels,
    check_positive,
    fail,
)
