"""Locating the build and composing the environment beneath the shim."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.errors import ShimNotFoundError
from loggp.plan.knobs import KnobSet
from loggp.run.shim import REPO_ROOT, build_dir, calibrate_binary, process_env, shim_env

pytestmark = pytest.mark.unit


def test_build_dir_default_and_override(tmp_path: Path) -> None:
    assert build_dir({}) == REPO_ROOT / "build"
    assert build_dir({"LOGGP_BUILD": str(tmp_path)}) == tmp_path.resolve()


def test_missing_shim_names_path(tmp_path: Path) -> None:
    with pytest.raises(ShimNotFoundError) as exc:
        shim_env(tmp_path)
    assert str(tmp_path / "emulator" / "fabric" / "libloggp-fi.so") in str(exc.value)
    with pytest.raises(ShimNotFoundError, match="loggp-calibrate"):
        calibrate_binary(tmp_path)


def test_shim_env(fake_build: Path) -> None:
    assert shim_env() == {
        "FI_PROVIDER_PATH": str(fake_build / "emulator" / "fabric"),
        "FI_HOOK": "loggp",
    }


def test_process_env_shimmed(fake_build: Path, tmp_path: Path) -> None:
    base = {"PATH": "/bin", "LOGGP_GAP": "5us", "LOGGP_STATS_FILE": "/old"}
    env = process_env(
        KnobSet.parse({"latency": "10us"}), base=base, stats_file=tmp_path / "s.jsonl"
    )
    assert env["LOGGP_LATENCY"] == "10us"
    assert "LOGGP_GAP" not in env  # only the knobs asked for apply
    assert env["LOGGP_STATS_FILE"] == str((tmp_path / "s.jsonl").resolve())
    assert env["FI_HOOK"] == "loggp"
    assert env["PATH"] == "/bin"


def test_process_env_unshimmed_has_no_hook(tmp_path: Path) -> None:
    base = {"PATH": "/bin", "FI_HOOK": "loggp", "LOGGP_LATENCY": "1us"}
    # No shim is needed (or looked for) without knobs.
    env = process_env(None, base=base, build=tmp_path)
    assert env == {"PATH": "/bin"}
