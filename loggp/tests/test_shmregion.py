"""Which shm region files are stale: their process is gone or younger than the file."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from loggp.run import shmregion
from loggp.run.shmregion import remove_stale_regions, stale_regions

pytestmark = pytest.mark.unit


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_dead_owner_is_stale_live_owner_is_kept(tmp_path: Path) -> None:
    uid = os.geteuid()
    dead = tmp_path / f"{_dead_pid()}:{uid}:0"
    mine = tmp_path / f"{os.getpid()}:{uid}:0"
    for f in (dead, mine):
        f.write_bytes(b"region")
    assert stale_regions(tmp_path) == [dead]
    assert remove_stale_regions(tmp_path) == 1
    assert not dead.exists() and mine.exists()


def test_reused_pid_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live process that started after the file was written cannot own it."""
    region = tmp_path / f"{os.getpid()}:{os.geteuid()}:3"
    region.write_bytes(b"region")
    assert stale_regions(tmp_path) == []
    monkeypatch.setattr(shmregion, "_start_time_s", lambda pid, boot: time.time() + 60)
    assert stale_regions(tmp_path) == [region]


def test_other_files_and_users_are_never_touched(tmp_path: Path) -> None:
    dead = _dead_pid()
    others = [
        f"{dead}:{os.geteuid() + 1}:0",  # another user's
        "vader_segment.host.1.0",  # not libfabric's
        f"{dead}:{os.geteuid()}",  # not a region name
        f"x{dead}:{os.geteuid()}:0",
    ]
    for name in others:
        (tmp_path / name).write_bytes(b"")
    assert stale_regions(tmp_path) == []
    assert remove_stale_regions(tmp_path) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(others)


def test_missing_directory_is_no_error(tmp_path: Path) -> None:
    assert stale_regions(tmp_path / "none") == []
