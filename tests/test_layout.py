"""The repository's Python is imported as the installed packages, never by editing the
interpreter's module search path (pyproject.toml's packages; docs/design.md, "Layout")."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.unit

# Written so that this file does not match itself.
SEARCH_PATH = re.compile(r"\bsys[.]path\b")
# Beside these, the C build directories (build*): no code of the project's own.
NOT_OURS = {".git", ".venv", "__pycache__"}


def python_files(root: Path) -> list[Path]:
    out = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in NOT_OURS and not d.startswith("build")]
        out += [Path(top) / f for f in files if f.endswith(".py")]
    return out


def test_finds_the_repository_python() -> None:
    found = {p.relative_to(REPO).as_posix() for p in python_files(REPO)}
    assert {"loggp/cli/main.py", "analysis/report.py", "tests/test_layout.py"} <= found


def test_no_module_edits_the_search_path() -> None:
    hits = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()}"
        for p in python_files(REPO)
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if SEARCH_PATH.search(line)
    ]
    assert not hits, "\n".join(hits)
