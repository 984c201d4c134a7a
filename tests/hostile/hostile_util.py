"""Helpers of the hostile tests (tests/hostile/): one-line errors, waits on events, experiment
files and runs of `loggp run` started in the background."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from loggp.results.reader import StoredPoint, read_points
from loggp.results.store import STORE_FILE
from loggp.run.proctree import Identity
from loggp.tests.cli import loggp

# A result line of the protocol (docs/results.md) for workloads that are shell commands.
RESULT = json.dumps(
    {"loggp_result": 1, "workload": "w", "valid": True, "ranks": 1, "metrics": {"time_s": 1.0}}
)


def one_line_error(res: subprocess.CompletedProcess, *parts: str) -> str:
    """The command failed with one line on stderr that holds every part, and no
    traceback."""
    assert res.returncode != 0, res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("loggp: "), res.stderr
    for part in parts:
        assert part in lines[0], res.stderr
    return lines[0]


def wait_until(cond: Callable[[], object], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what} within {timeout:g} s"
        time.sleep(0.02)


def start_run(exp: Path, out: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "loggp", "run", str(exp), "--out", str(out), "--no-report",
         *extra],
        env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def run(
    exp: Path, out: Path, env: dict[str, str], *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess:
    """`loggp run EXP --out OUT` without Prometheus and report, env added."""
    return loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report", *extra,
                 env_extra=env, timeout=timeout)  # fmt: skip


def stored(res: subprocess.CompletedProcess, out: Path, status: int) -> dict[str, StoredPoint]:
    """The points of run directory out by workload, once the run ended with status and
    printed no traceback."""
    assert res.returncode == status and "Traceback" not in res.stderr, res.stdout + res.stderr
    return {p.workload: p for p in read_points(out / STORE_FILE)[1]}


def experiment_file(tmp: Path, body: str, timeout: str = "20s", name: str = "exp.yaml") -> Path:
    """An experiment of local processes without the shim; body holds its workloads (and
    services)."""
    path = tmp / name
    path.write_text(
        f"version: 1\nname: t\noutput: {tmp / 'results'}\ntimeout: {timeout}\n"
        "launcher: {kind: local}\nemulator: {shim: none}\n" + body
    )
    return path


def sh_workload(name: str, script: str) -> str:
    """A workload entry that runs script with sh (placeholders: write $$ for $)."""
    args = json.dumps(["-c", script])
    return f"  - {{name: {name}, kind: process, ranks: 1, program: /bin/sh, args: {args}}}\n"


def live(pids: list[int]) -> list[int]:
    """Those of pids that are processes still running (not zombies)."""
    return [p for p in pids if Identity.of(p) is not None]


def kill_all(pids: list[int]) -> None:
    for p in live(pids):
        try:
            os.kill(p, 9)
        except ProcessLookupError:
            pass


@contextmanager
def within(seconds: int, what: str) -> Iterator[None]:
    """Fails (AssertionError) if the block, run in this process, takes longer: a hang
    becomes a failure."""

    def expired(signum: int, frame: object) -> None:
        raise AssertionError(f"{what} did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
