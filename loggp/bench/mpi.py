"""What the benchmarks that start MPI programs share (kvs, combining): mpirun with MPI on
its own transports, the program's libfabric traffic beneath the fabric shim at a given
ΔL, and its result line (docs/results.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from loggp.plan.knobs import KnobSet
from loggp.results.protocol import result_line
from loggp.run.shim import process_env

# MPI on its own transports, so the program is the only libfabric user; and yielding
# while it waits, or a rank spinning in a barrier starves the processes that share its
# core (ms-long stalls on 2 cores).
MPI_ARGS = ["--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp", "--mca", "mtl", "^ofi",
            "--mca", "mpi_yield_when_idle", "1"]  # fmt: skip


def mpi_command(tool: str, build: Path, np: int, argv: list[str], latency_us: int,
                provider: str) -> tuple[list[str], dict[str, str]]:  # fmt: skip
    """The mpirun command line and environment that run argv on np processes with
    LOGGP_PROVIDER=provider, beneath the shim at ΔL = latency_us.  ΔL 0 is the shim with
    its knobs at 0, as the runner's baselines are: a baseline without the shim would
    compare two stacks (the shim's progress thread changes when a blocked process wakes)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LOGGP_", "FI_"))}
    base["OMPI_ALLOW_RUN_AS_ROOT"] = base["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    knobs = KnobSet.parse({"latency": f"{latency_us}us"})
    env = process_env(knobs, base=base, build=build)
    env["LOGGP_PROVIDER"] = provider
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit(f"{tool}: mpirun not found (install openmpi-bin)")
    cmd = [mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", *MPI_ARGS]
    cmd += [a for v in sorted(env) if v.startswith(("LOGGP_", "FI_")) for a in ("-x", v)]
    return cmd + argv, env


def run_mpi(tool: str, what: str, build: Path, np: int, argv: list[str], latency_us: int,
            provider: str, timeout: float) -> tuple[dict[str, Any], str]:  # fmt: skip
    """Runs argv on np processes (mpi_command); returns its result line and stderr.  Exits
    naming `what` when it fails or prints no result line."""
    cmd, env = mpi_command(tool, build, np, argv, latency_us, provider)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    res = result_line(proc.stdout)
    if proc.returncode or res is None:
        sys.exit(f"{tool}: {what} at ΔL={latency_us}us failed:\n{proc.stderr}")
    return res, proc.stderr
