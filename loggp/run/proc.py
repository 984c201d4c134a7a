"""Running subprocesses with deadlines that name what did not answer.

Background processes run beneath a keeper (loggp/run/keeper.py) in a session of their own:
the keeper ends their whole tree when they exit, when they are ended (a timeout) and when
this process dies, however.  Output goes to files, not pipes, so a chatty process can never
block on a full pipe while we wait for its partner.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from loggp.errors import CommandNotFoundError, ToolFailedError, ToolTimeoutError
from loggp.run.capture import tail_text
from loggp.run.proctree import end_tree

_TAIL_BYTES = 4096
_LOGFMT_ERROR = re.compile(r"\blevel=(error|fatal)\b")
_END_TIMEOUT_S = 10.0
_records: Path | None = None  # where keepers record their processes (recording())


def exit_status(returncode: int) -> int:
    """A shell-style exit status: 128+N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def failure_line(path: Path) -> str:
    """The line of a log file that says why its process failed, for one-line errors.

    That is the last logfmt line at level=error or level=fatal if there is one
    (Prometheus and node_exporter go on logging shut-down lines after the error, and
    their goroutines may log after it too), else the last non-empty line.
    """
    lines = [ln.strip() for ln in tail_text(path, _TAIL_BYTES).splitlines() if ln.strip()]
    errors = [ln for ln in lines if _LOGFMT_ERROR.search(ln)]
    return (errors or lines or [""])[-1]


@contextmanager
def recording(records: Path) -> Iterator[None]:
    """Keepers started within record their processes in records (loggp/run/proctree.py),
    so that a later command can end them if this one dies with them."""
    global _records
    old, _records = _records, records
    try:
        yield
    finally:
        _records = old


def kept(
    argv: Sequence[str],
    grace: float = 0.0,
    *,
    cgroups: Sequence[Path] = (),
    outputs: tuple[Path, Path] | None = None,
) -> list[str]:
    """argv beneath a keeper whose runner is this process; grace is the time argv gets
    between SIGTERM and SIGKILL when it is ended; the keeper joins cgroups (cgroup.py) and
    copies argv's stdout and stderr into outputs, their tails kept (capture.py).  Start it
    from the main thread: the keeper ends argv when the thread that started it exits."""
    keeper = [sys.executable, "-m", "loggp.run.keeper", "--parent", str(os.getpid())]
    keeper += ["--grace", f"{grace:g}"]
    if _records is not None:
        keeper += ["--record", str(_records)]
    for group in cgroups:
        keeper += ["--cgroup", str(group)]
    if outputs is not None:
        keeper += ["--stdout", str(outputs[0]), "--stderr", str(outputs[1])]
    return [*keeper, "--", *argv]


def end(proc: subprocess.Popen[bytes], timeout: float = _END_TIMEOUT_S) -> None:
    """Ends a kept process with its whole tree: SIGTERM to its keeper, which ends the tree;
    if the keeper has not exited within its grace and timeout, SIGKILL to the tree."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        end_tree(proc.pid)
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


def spawn(
    argv: Sequence[str], env: Mapping[str, str], log: Path, name: str, grace: float = 10.0
) -> Spawned:
    """argv beneath a keeper (kept()), in a session of its own, output to log."""
    exe = shutil.which(argv[0], path=env.get("PATH"))
    if exe is None:
        why = "Permission denied" if Path(argv[0]).exists() else "No such file or directory"
        raise ToolFailedError(f"{name}: cannot start {argv[0]}: {why}")
    with log.open("wb") as out:
        try:
            proc = subprocess.Popen(
                kept(argv, grace),
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
            end(p.proc)


def run_capture(argv: Sequence[str], timeout: float) -> str | None:
    """Run a short query (git, fi_info) and return its stdout, or None if it failed."""
    try:
        res = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() if res.returncode == 0 else None
