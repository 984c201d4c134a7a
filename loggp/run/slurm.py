"""Runs on a Slurm cluster (launcher `slurm`, docs/cluster.md "Slurm").

Inside an allocation (SLURM_JOB_ID set, from salloc or sbatch) a point's MPI workload
starts with mpirun, which takes its hosts from the allocation and its daemons through
Slurm (Open MPI's ras and plm slurm components), so the shim's variables travel with -x
as under every other launcher, and ranks on several nodes talk over launcher.interface
(loggp/run/launch.py); it needs nothing of the site but srun, where `srun --mpi=pmix`
needs Slurm's PMIx plugin and an Open MPI built against the same PMIx.

Outside an allocation `loggp run --slurm` submits the run: a generated batch script whose
job array has one task per point not yet stored (the task id is the point's seq), each
task `loggp run --resume --slurm-task` of that one point into the same run directory,
on whole nodes (--exclusive: points never measure each other) unless launcher.share_nodes
asks otherwise.  A task that fails or is
cancelled leaves its point unstored; `--resume --slurm` submits what is missing.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.plan.experiment import Experiment

POLL_S = 1.0
SBATCH_TIMEOUT_S = 60
POINT_FILE = "slurm.json"


class SlurmError(LoggpError):
    """Slurm refused or is missing; the message names the command and what it said."""

    exit_code = 2


def in_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID"))


def allocation() -> dict[str, Any]:
    """The job this process runs in: job id, partition, nodes, and its array task."""
    env = os.environ
    found = {
        "job_id": env.get("SLURM_JOB_ID"),
        "array_job_id": env.get("SLURM_ARRAY_JOB_ID"),
        "array_task_id": env.get("SLURM_ARRAY_TASK_ID"),
        "partition": env.get("SLURM_JOB_PARTITION"),
        "nodes": env.get("SLURM_JOB_NODELIST"),
        "num_nodes": env.get("SLURM_JOB_NUM_NODES"),
        "node": socket.gethostname(),
    }
    return {k: v for k, v in found.items() if v is not None}


def point_nodes(asked: int) -> int:
    """How many nodes a point's ranks may span: the allocation's inside one, else asked
    (launcher.nodes, what `loggp run --slurm` asks each task's allocation for)."""
    if not in_allocation():
        return asked
    count = os.environ.get("SLURM_JOB_NUM_NODES", "1")
    return int(count) if count.isdigit() else asked


def record_point(point_dir: Path, **measured: Any) -> None:
    """Which job, array task and nodes ran the point, beside its logs, with what was
    measured of the nodes during it (nodes_cpu: loggp/run/slurmnodes.py)."""
    (point_dir / POINT_FILE).write_text(json.dumps({**allocation(), **measured}) + "\n")


def point_records(run_dir: Path, plan: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each point's Slurm record by point id, of the points that have one."""
    found = {}
    for entry in plan:
        path = run_dir / "points" / str(entry["seq"]) / POINT_FILE
        try:
            found[entry["point_id"]] = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    return found


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SlurmError(f"{name} not found: install Debian's slurm-client (make deps does)")
    return path


def batch_script(exp: Experiment, run_dir: Path, seqs: list[int], wait_lock_s: float) -> Path:
    """The batch script of the run's array: one task per point seq, on whole nodes unless
    the experiment lets points share them (launcher.share_nodes)."""
    slurm_dir = run_dir / "slurm"
    slurm_dir.mkdir(parents=True, exist_ok=True)
    loggp = [sys.executable, "-m", "loggp"]
    task = [
        *loggp, "run", "--resume", "--out", str(run_dir.resolve()), "--slurm-task",
        "--no-report", "--no-prometheus", "--wait-lock", f"{wait_lock_s:g}",
    ]  # fmt: skip
    # One wire for every node: its points set its knobs one task at a time.
    throttle = "%1" if exp.emulator.shim == "wire" else ""
    opts = [
        f"--job-name=loggp-{exp.name}",
        f"--array={','.join(str(s) for s in seqs)}{throttle}",
        f"--nodes={exp.launcher.nodes}",
        *([] if exp.launcher.share_nodes else ["--exclusive"]),
        f"--output={slurm_dir.resolve()}/%A_%a.out",
        *exp.launcher.sbatch_args,
    ]
    script = slurm_dir / "job.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"# loggp run {exp.name}: one array task per point (loggp/run/slurm.py)\n"
        + "".join(f"#SBATCH {shlex.quote(o)}\n" for o in opts)
        + f"exec {shlex.join(task)}\n"
    )
    script.chmod(0o755)
    return script


def submit(script: Path) -> str:
    """sbatch's job id of the script."""
    try:
        res = subprocess.run(
            [_tool("sbatch"), "--parsable", str(script)],
            capture_output=True, text=True, timeout=SBATCH_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise SlurmError(f"sbatch {script}: no answer within {SBATCH_TIMEOUT_S} s") from None
    if res.returncode != 0:
        said = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise SlurmError(f"sbatch {script} failed (exit {res.returncode}): {said}")
    return res.stdout.strip().split(";")[0]


def pending(job_id: str) -> int:
    """How many of the job's array tasks are still queued or running."""
    res = subprocess.run(
        [_tool("squeue"), "--noheader", "--array", "--jobs", job_id, "--format=%i"],
        capture_output=True, text=True, timeout=SBATCH_TIMEOUT_S, check=False,
    )  # fmt: skip
    if res.returncode != 0:
        # A job that has left the controller's memory is unknown: nothing of it remains.
        return 0
    return len(res.stdout.split())


def wait(job_id: str, deadline_s: float) -> bool:
    """Polls until no task of the job is left; False when the deadline came first."""
    end = time.monotonic() + deadline_s
    while pending(job_id):
        if time.monotonic() > end:
            return False
        time.sleep(POLL_S)  # squeue's state: Slurm has no event to wait on from here
    return True
