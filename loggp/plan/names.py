"""The rule the experiment file's lists of named things share: no name twice."""

from __future__ import annotations

from collections.abc import Sequence


def require_unique(names: Sequence[str], what: str) -> None:
    """ValueError naming every repeated name (for a pydantic validator's one line)."""
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{what} names must be unique: {', '.join(dup)} repeated")
