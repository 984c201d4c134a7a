"""One `loggp run` per machine: two at once share its CPUs and measure each other.

A run holds flock(LOCK_EX) on run.lock in the state directory ($LOGGP_RUN_DIR or /run/loggp;
without root, where that cannot be made, $XDG_RUNTIME_DIR/loggp or /tmp/loggp-<uid>, so
there runs are seen per user only).  The kernel releases the lock when the holder exits,
however it dies, so a killed run never leaves a stale lock.  The holder writes its pid and run
directory into the file for the message of the run it refuses.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

from loggp.errors import LoggpError
from loggp.net.testbed import state_dir

LOCK_FILE = "run.lock"
_POLL_S = 0.1


class RunLockedError(LoggpError):
    """Another run holds the machine."""


def lock_path() -> Path:
    candidates = [state_dir()]
    if "LOGGP_RUN_DIR" not in os.environ:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        candidates += [Path(runtime) / "loggp"] if runtime else []
        candidates.append(Path(f"/tmp/loggp-{os.getuid()}"))
    for d in candidates:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK):
            return d / LOCK_FILE
    raise RunLockedError(f"no writable directory for the run lock ({candidates[-1]})")


class RunLock:
    """The machine's run lock, taken waiting up to wait seconds for it (None: not at all),
    held until release() or this process' end."""

    def __init__(self, wait: float | None) -> None:
        self.path = lock_path()
        self._wait = wait
        self._fd: int | None = None
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + (self._wait or 0.0)
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self._holder()
                    os.close(fd)
                    raise RunLockedError(self._refusal(holder)) from None
                if not told:
                    print(f"loggp: waiting up to {self._wait:g} s for another loggp run "
                          f"({self._who(self._holder())})", file=sys.stderr)  # fmt: skip
                    told = True
                time.sleep(_POLL_S)
        self._fd = fd
        self.describe(None)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None

    def describe(self, run_dir: Path | None) -> None:
        """Names this run (its pid and directory) to the runs it refuses."""
        assert self._fd is not None
        doc = {"pid": os.getpid(), "out": str(run_dir) if run_dir else None}
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, (json.dumps(doc) + "\n").encode(), 0)

    def _holder(self) -> dict[str, object]:
        try:
            doc = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}  # being rewritten by its holder
        return doc if isinstance(doc, dict) else {}

    @staticmethod
    def _who(holder: dict[str, object]) -> str:
        return f"pid {holder.get('pid', 'unknown')}, out {holder.get('out') or 'not chosen yet'}"

    def _refusal(self, holder: dict[str, object]) -> str:
        who = self._who(holder)
        if self._wait:
            return (
                f"another loggp run ({who}) is still running after {self._wait:g} s "
                f"(lock: {self.path})"
            )
        return (
            f"another loggp run ({who}) is running on this machine: wait for it to end, "
            "or pass --wait-lock SECONDS"
        )
