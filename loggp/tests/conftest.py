"""Fixtures: a fake build directory holding a stand-in shim and loggp-calibrate."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

FAKE_CALIBRATE = Path(__file__).with_name("fake_calibrate.py")


@pytest.fixture
def fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build dir with an empty libloggp-fi.so and a scripted loggp-calibrate; LOGGP_BUILD
    points at it, inherited knobs are cleared, and LOGGP_RUN_DIR is the test's own."""
    build = tmp_path / "build"
    fabric = build / "emulator" / "fabric"
    calibrate = build / "emulator" / "calibrate"
    fabric.mkdir(parents=True)
    calibrate.mkdir(parents=True)
    (fabric / "libloggp-fi.so").write_bytes(b"")
    exe = calibrate / "loggp-calibrate"
    cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_CALIBRATE))}"
    exe.write_text(f'#!/bin/sh\nexec {cmd} "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("LOGGP_BUILD", str(build))
    for name in list(os.environ):
        if name.startswith("LOGGP_") and name != "LOGGP_BUILD":
            monkeypatch.delenv(name)
    # The machine's run lock of this test's own: runs of other test sessions never refuse it.
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("FAKE_CALIBRATE", raising=False)
    return build
