"""Running subprocesses with deadlines that name what did not answer.

Processes run in their own session so that a timeout kills the whole process group (a
wrapped command's children included), and output goes to files, not pipes, so a chatty
process can never block on a full pipe while we wait for its partner.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from loggp.errors import CommandNotFoundError, ToolFailedError, ToolTimeoutError

_TAIL_BYTES = 4096
_LOGFMT_ERROR = re.compile(r"\blevel=(error|fatal)\b")


def exit_status(returncode: int) -> int:
    """A shell-style exit status: 128+N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def failure_line(path: Path) -> str:
    """The line of a log file that says why its process failed, for one-line errors.

    That is the last logfmt line at level=error or level=fatal if there is one
    (Prometheus and node_exporter go on logging shut-down lines after the error, and
    their goroutines may log after it too), else the last non-empty line.
    """
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - _TAIL_BYTES))
            lines = f.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    lines = [ln.strip() for ln in lines if ln.strip()]
    errors = [ln for ln in lines if _LOGFMT_ERROR.search(ln)]
    return (errors or lines or [""])[-1]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_foreground(
    argv: Sequence[str], env: Mapping[str, str], timeout: float | None, what: str
) -> int:
    """Run argv attached to our terminal and return its exit status.

    SIGINT/SIGTERM reach the child (same process group for SIGINT from a terminal; SIGTERM
    is forwarded), and we keep waiting so its status is the one we return.  With a
    timeout, the child is killed and ToolTimeoutError names it.
    """
    try:
        proc = subprocess.Popen(list(argv), env=dict(env))
    except FileNotFoundError:
        raise CommandNotFoundError(f"command not found: {argv[0]}") from None
    except PermissionError:
        raise CommandNotFoundError(f"permission denied: {argv[0]}") from None

    def forward(signum: int, _frame: object) -> None:
        proc.send_signal(signum)

    old_term = signal.signal(signal.SIGTERM, forward)
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return exit_status(proc.wait(left))
            except KeyboardInterrupt:
                continue  # the child got the same SIGINT; its status decides
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise ToolTimeoutError(
                    f"{what} did not finish within {timeout:g} s and was killed"
                ) from None
    finally:
        signal.signal(signal.SIGTERM, old_term)


@dataclass
class Spawned:
    """A background process whose stdout and stderr go to one log file."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path


def spawn(argv: Sequence[str], env: Mapping[str, str], log: Path, name: str) -> Spawned:
    with log.open("wb") as out:
        try:
            proc = subprocess.Popen(
                list(argv),
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as e:
            raise ToolFailedError(f"{name}: cannot start {argv[0]}: {e.strerror}") from None
    return Spawned(name, proc, log)


def wait_all(procs: Sequence[Spawned], timeout: float) -> None:
    """Wait until every process has exited, within timeout seconds overall.

    The first process to fail makes the others pointless: they are killed and
    ToolFailedError carries the failed ones' names and last output lines.  If the deadline
    passes, everything is killed and ToolTimeoutError names who had not finished.
    """
    deadline = time.monotonic() + timeout
    pending = list(procs)
    try:
        while pending:
            failed: list[str] = []
            for p in list(pending):
                rc = p.proc.poll()
                if rc is None:
                    continue
                pending.remove(p)
                if rc != 0:
                    detail = failure_line(p.log) or "no output"
                    failed.append(
                        f"{p.name} exited with status {exit_status(rc)}: {detail} (log: {p.log})"
                    )
            # Both sides often fail together; name every one seen, the cause is among them.
            if failed:
                raise ToolFailedError("; ".join(failed))
            if not pending:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                names = " and ".join(p.name for p in pending)
                raise ToolTimeoutError(
                    f"{names} did not answer within {timeout:g} s (log: {pending[0].log})"
                )
            # Block on one process at a time, briefly, so a failure of another is seen soon.
            try:
                pending[0].proc.wait(min(left, 0.05))
            except subprocess.TimeoutExpired:
                pass
    finally:
        for p in procs:
            _kill_group(p.proc)


def run_capture(argv: Sequence[str], timeout: float) -> str | None:
    """Run a short query (git, fi_info) and return its stdout, or None if it failed."""
    try:
        res = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() if res.returncode == 0 else None
