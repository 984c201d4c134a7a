"""Provenance stored with every result: what ran, where, from which revision."""

from __future__ import annotations

import os
import platform
import socket
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from loggp.plan.dist import dist_provenance, run_dist_env
from loggp.plan.experiment import Experiment
from loggp.run.proc import run_capture
from loggp.run.shim import REPO_ROOT, build_dir


def _package_version() -> str:
    try:
        return metadata.version("loggp")
    except metadata.PackageNotFoundError:
        return "unknown"


def _libfabric_version() -> str | None:
    out = run_capture(["fi_info", "--version"], timeout=10)
    return out.splitlines()[0] if out else None


def _openmpi_version() -> str | None:
    out = run_capture(["mpirun", "--version"], timeout=10)
    return out.splitlines()[0] if out else None


def _dpdk_version() -> str | None:
    return run_capture(["pkg-config", "--modversion", "libdpdk"], timeout=10)


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def provenance() -> dict[str, Any]:
    """Host, versions and git revision (with a dirty flag) of this run."""
    git = ["git", "-C", str(REPO_ROOT)]
    revision = run_capture([*git, "rev-parse", "HEAD"], timeout=10)
    status = run_capture([*git, "status", "--porcelain", "--untracked-files=no"], timeout=10)
    return {
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": len(os.sched_getaffinity(0)),
        "python": sys.version.split()[0],
        "loggp": _package_version(),
        "libfabric": _libfabric_version(),
        "openmpi": _openmpi_version(),
        "dpdk": _dpdk_version(),
        "git_revision": revision,
        "git_dirty": bool(status) if status is not None else None,
        "build_dir": str(build_dir()),
        "argv": sys.argv,
    }


def delay_distribution(exp: Experiment, exp_dir: Path | None) -> dict[str, str] | None:
    """The delay distribution every point draws from, and whether the experiment file or
    the environment named it (loggp/plan/dist.py); None where no shim draws delays.  The
    wire takes no LOGGP_* variables: its distribution is the file's (the runner checks
    that the wire was started with it, loggp/run/wirerun.py)."""
    from_file = exp.dist_env(exp_dir)
    if exp.emulator.shim == "wire":
        return dist_provenance(from_file, bool(from_file))
    if exp.emulator.shim != "fabric":
        return None
    return dist_provenance(run_dist_env(from_file, os.environ), bool(from_file))
