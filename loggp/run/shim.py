"""Where the C build lives, and the environment that puts a process beneath the shim.

The build directory is $LOGGP_BUILD, or <repo>/build (the Makefile's default).  The shim is
the libfabric hooking provider <build>/emulator/fabric/libloggp-fi.so: libfabric loads it
from FI_PROVIDER_PATH and switches it on for FI_HOOK=loggp.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from loggp.errors import ShimNotFoundError
from loggp.plan.knobs import KnobSet, check_env, without_knob_env

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIM_LIB = "libloggp-fi.so"
HOOK_NAME = "loggp"


def build_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CMake build directory: $LOGGP_BUILD or <repo>/build."""
    env = os.environ if env is None else env
    configured = env.get("LOGGP_BUILD")
    return Path(configured).resolve() if configured else REPO_ROOT / "build"


def shim_library(build: Path | None = None) -> Path:
    """Path of libloggp-fi.so; ShimNotFoundError naming that path if it is missing."""
    lib = (build or build_dir()) / "emulator" / "fabric" / SHIM_LIB
    if not lib.is_file():
        raise ShimNotFoundError(
            f"shim library not found: {lib} (run 'make build', or set LOGGP_BUILD)"
        )
    return lib


def _measuring_tool(name: str, what: str, build: Path | None) -> Path:
    """Path of a program of emulator/calibrate; ShimNotFoundError naming it if missing."""
    exe = (build or build_dir()) / "emulator" / "calibrate" / name
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        raise ShimNotFoundError(f"{what} not found: {exe} (run 'make build', or set LOGGP_BUILD)")
    return exe


def calibrate_binary(build: Path | None = None) -> Path:
    """Path of loggp-calibrate; ShimNotFoundError naming that path if it is missing."""
    return _measuring_tool("loggp-calibrate", "calibration tool", build)


def hostnoise_binary(build: Path | None = None) -> Path:
    """Path of loggp-hostnoise; ShimNotFoundError naming that path if it is missing."""
    return _measuring_tool("loggp-hostnoise", "host noise probe", build)


def shim_env(build: Path | None = None) -> dict[str, str]:
    """FI_PROVIDER_PATH and FI_HOOK that load and switch on the shim."""
    lib = shim_library(build)
    return {"FI_PROVIDER_PATH": str(lib.parent), "FI_HOOK": HOOK_NAME}


def process_env(
    knobs: KnobSet | None,
    *,
    base: Mapping[str, str] | None = None,
    build: Path | None = None,
    stats_file: Path | None = None,
    settings: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of a process: base (default os.environ) without inherited
    LOGGP_* knobs, plus the shim, knobs and settings (an experiment file's delay
    distribution, Experiment.dist_env), or, with knobs None, no shim at all (the
    unshimmed baseline; FI_HOOK is removed too).  KnobError for a LOGGP_* variable of base
    that the shim would refuse (an unknown name, a bad setting)."""
    base = os.environ if base is None else base
    check_env(base)
    env = without_knob_env(base)
    if knobs is None:
        env.pop("FI_HOOK", None)
        return env
    env.update(shim_env(build))
    env.update(knobs.env())
    env.update(settings or {})
    if stats_file is not None:
        env["LOGGP_STATS_FILE"] = str(stats_file.resolve())
    return env
