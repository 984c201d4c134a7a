"""Helpers of the namespace testbed tests: a testbed per test with a unique prefix, brought
up and removed through the `loggp testbed` command, and a snapshot of what exists."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import BUILD, REPO

from loggp.tests.cli import loggp as run_loggp

WIRE = BUILD / "emulator" / "wire" / "loggp-wire"
_COUNTER = itertools.count()


def skip_without_netns() -> None:
    """Skips where namespaces cannot be made (not root, no iproute2)."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    for tool in ("ip", "ethtool", "ping"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed")
    if not Path("/run").is_dir():
        pytest.skip("no /run")
    assert WIRE.is_file(), f"{WIRE} missing: build target loggp-wire (LOGGP_BUILD={BUILD})"


def unique_prefix() -> str:
    """t<pid><n>: unique per test run; <prefix>w<i> stays within 15 characters."""
    return f"t{os.getpid() % 100000}{next(_COUNTER)}"


def loggp(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The command on this build, with the testbed's state where root keeps it."""
    return run_loggp(
        *args,
        env_extra={"LOGGP_BUILD": str(BUILD)},
        unset=("LOGGP_RUN_DIR",),
        cwd=REPO,
        timeout=timeout,
    )


def snapshot() -> tuple[set[str], set[str]]:
    """(namespaces, root interfaces) that exist now."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, timeout=30)
    names = {ln.split(":", 2)[1].strip().split("@")[0] for ln in links.stdout.splitlines()}
    return {ln.split()[0] for ln in ns.stdout.splitlines() if ln.strip()}, names


class Testbed:
    __test__ = False

    def __init__(self, prefix: str, hosts: int) -> None:
        self.prefix = prefix
        self.hosts = hosts

    def ns(self, i: int) -> str:
        return f"{self.prefix}-h{i}"

    @staticmethod
    def addr(i: int) -> str:
        return f"10.231.0.{i + 1}"

    def set(self, *args: str) -> subprocess.CompletedProcess[str]:
        return loggp("testbed", "set", "--prefix", self.prefix, *args)

    def status(self) -> dict[str, Any]:
        res = loggp("testbed", "status", "--prefix", self.prefix, "--json")
        assert res.returncode == 0, res.stdout + res.stderr
        return json.loads(res.stdout)


@contextmanager
def running_testbed(hosts: int = 2, *knobs: str) -> Iterator[Testbed]:
    """A testbed that is removed afterwards, also when the test fails."""
    tb = Testbed(unique_prefix(), hosts)
    try:
        res = loggp("testbed", "up", str(hosts), "--prefix", tb.prefix, *knobs, timeout=180)
        assert res.returncode == 0, res.stdout + res.stderr
        yield tb
    finally:
        res = loggp("testbed", "down", "--prefix", tb.prefix)
        assert res.returncode == 0, res.stdout + res.stderr
