"""One rule for environment variable names (docs/design.md, "Environment variable names"):
every LOGGP_* variable the project reads, or hands to a program it starts, is a row of the
registry (emulator/core/include/lgp/knobs.def), so the shim's check of the environment never
refuses a variable of the project's own services.
"""

from __future__ import annotations

import re
from pathlib import Path

from loggp.plan.knobs import KNOWN_ENV_VARS, REGISTRY, check_env

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {".c", ".h", ".cpp", ".hpp", ".py", ".sh", ".md", ".yaml", ".yml", ".j2", ".txt"}

# Where a program reads a variable, or a caller sets one for a program it starts.
READS = [
    re.compile(r'\b(?:secure_)?getenv\(\s*"(LOGGP_\w+)"'),
    re.compile(r'\bsetenv\(\s*"(LOGGP_\w+)"'),
    re.compile(r"""environ(?:\.get)?\s*[(\[]\s*["'](LOGGP_\w+)["']"""),
    re.compile(r"\$\{?(LOGGP_[A-Z0-9_]+)"),
    re.compile(r"\bexport\s+(LOGGP_[A-Z0-9_]+)="),
    re.compile(r"-x\s+(LOGGP_[A-Z0-9_]+)\b"),
]

# Names that are meant to be refused or are a test's own registry row.
NOT_THE_PROJECTS = {
    "LOGGP_OVERHAED": "loggp/tests/test_launch.py: the typo the check must refuse",
    "LOGGP_RECV_GAP": "emulator/core/tests/extra_knob.def: the test's extra registry row",
}


def source_files() -> list[Path]:
    """The repository's text sources (not build trees, virtual environments or .git)."""
    files = []
    for top in ROOT.iterdir():
        if top.name.startswith((".", "build")):
            continue
        paths = [top] if top.is_file() else top.rglob("*")
        files += [p for p in paths if p.suffix in SOURCES and p.is_file()]
    return files


def names_read() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in source_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in READS:
            for m in pattern.finditer(text):
                found.setdefault(m.group(1), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_loggp_variable_the_project_reads_is_in_the_registry() -> None:
    found = names_read()
    # the scan sees each kind of reader: the shim, services, loggp, scripts and docs
    for name in ("LOGGP_CLOCK", "LOGGP_PFS_INSTANCE", "LOGGP_PREFETCH_CONFIG", "LOGGP_RUN_DIR"):
        assert name in found, sorted(found)
    unknown = {
        name: sorted(where)
        for name, where in found.items()
        if name not in KNOWN_ENV_VARS and name not in NOT_THE_PROJECTS
    }
    assert not unknown, f"read but not in knobs.def (add an LGP_SETTING row): {unknown}"
    # and the check the shim runs (the same registry) lets the free-text ones through
    free_text = {s.env for s in REGISTRY.settings if not s.choices}
    check_env({name: "x" for name in found if name in free_text})


def test_the_services_variables_are_settings_the_shim_accepts() -> None:
    # the store's README exports LOGGP_PFS_INSTANCE; collio reads its hints and stats files
    env = {
        "LOGGP_PFS_INSTANCE": "/tmp/pfs",
        "LOGGP_COLLIO_HINTS": "/tmp/h.json",
        "LOGGP_COLLIO_STATS": "/tmp/s.jsonl",
        "LOGGP_PREFETCH_CONFIG": "/tmp/p.json",
    }
    check_env(env)
