"""The README says what the set-up does: its package list is the Makefile's
(`make print-deb-packages`, the one source of truth the Ansible role reads too)."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import REPO

pytestmark = pytest.mark.unit

LIST = re.compile(r"Debian packages installed by the set-up[^:]*: `([^`]+)`")


def test_readme_lists_the_packages_the_setup_installs() -> None:
    found = LIST.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert found, "README.md: no 'Debian packages installed by the set-up: `...`' line"
    res = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(REPO), "print-deb-packages"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    readme, make = set(found.group(1).split()), set(res.stdout.split())
    assert readme == make, f"README lacks {sorted(make - readme)}; extra: {sorted(readme - make)}"
