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
    assert {"loggp/cli/main.py", "loggp/analysis/report.py", "tests/test_layout.py"} <= found


def test_no_module_edits_the_search_path() -> None:
    hits = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()}"
        for p in python_files(REPO)
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if SEARCH_PATH.search(line)
    ]
    assert not hits, "\n".join(hits)


FROM_LOGGP = re.compile(r"^\s*(?:from|import) loggp\.(\w+)", re.MULTILINE)
# Who may use the report, and what the report may use (docs/design.md, "Layout"): imports
# run one way, so the report never reaches back into the command that draws it.
USES_ANALYSIS = {"cli", "bench", "analysis", "tests"}
ANALYSIS_USES = {"analysis", "results", "plan", "metrics", "errors"}


def test_imports_between_the_command_and_its_report_run_one_way() -> None:
    wrong = []
    for p in python_files(REPO / "loggp"):
        rel = p.relative_to(REPO / "loggp")
        sub = rel.parts[0] if len(rel.parts) > 1 else ""
        if "tests" in rel.parts:
            continue
        used = set(FROM_LOGGP.findall(p.read_text(encoding="utf-8")))
        if "analysis" in used and sub not in USES_ANALYSIS:
            wrong.append(f"loggp/{rel} imports loggp.analysis")
        if sub == "analysis" and used - ANALYSIS_USES:
            wrong.append(
                f"loggp/{rel} imports loggp.{', loggp.'.join(sorted(used - ANALYSIS_USES))}"
            )
    assert not wrong, "\n".join(wrong)
    assert not (REPO / "analysis").exists(), "the report lives in loggp/analysis"
