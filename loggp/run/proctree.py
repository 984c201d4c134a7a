"""Processes by identity, process trees, and records that outlive the command that wrote them.

A pid alone can name another process once its own has exited (pid_max is 32768 here), so a
process is named by its Identity: pid, start time (clock ticks since boot, field 22 of
/proc/PID/stat) and command line.  Nothing is signalled unless all three still match.

A tree is a process and its descendants, found by walking /proc's parent pids.  It is ended
by freezing (SIGSTOP) every member, walking again until no new member appears (a frozen
process cannot fork, and its children keep it as their parent), then SIGKILL to all: no
child escapes to init between the walk and the kill.

Records: each process the runner starts (through loggp/run/keeper.py) is written to a
directory of its run as <pid>.json while it runs; a later command ends those that still
match (end_recorded), so a run killed with everything it started can be resumed.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

_POLL_S = 0.02


def _stat(pid: int) -> list[str] | None:
    """Fields 3.. of /proc/PID/stat (after the command name), or None if there is no pid."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def proc_start_time(pid: int) -> int | None:
    """The start time of pid in clock ticks since boot, or None if there is no such process."""
    fields = _stat(pid)
    return None if fields is None else int(fields[19])


@dataclass
class Identity:
    """One process for good: its pid, start time and command line."""

    pid: int
    start_time: int
    argv: list[str]

    @classmethod
    def of(cls, pid: int) -> Identity | None:
        """The process pid is now, or None if there is none (or only its zombie)."""
        fields = _stat(pid)
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        if fields is None or fields[0] == "Z":
            return None
        return cls(
            pid, int(fields[19]), [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]]
        )

    def running(self) -> bool:
        """This very process still runs (not a recycled pid, not a zombie)."""
        return Identity.of(self.pid) == self


def stop(ident: Identity, timeout: float) -> str:
    """SIGTERM, then SIGKILL after timeout, to ident if it still runs; what happened:
    "not running", "stopped" or "killed"."""
    if not ident.running():
        return "not running"
    for sig, how in ((signal.SIGTERM, "stopped"), (signal.SIGKILL, "killed")):
        try:
            os.kill(ident.pid, sig)
        except ProcessLookupError:
            return how
        deadline = time.monotonic() + timeout
        while ident.running() and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        if not ident.running():
            return how
    return "killed"


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                kids.setdefault(int(fields[1]), []).append(int(entry.name))
    return kids


def descendants(pid: int) -> set[int]:
    kids = _children()
    found: set[int] = set()
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo += kids.get(p, [])
    return found


def _signal(pids: set[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def end_tree(pid: int, *, root: bool = True) -> set[int]:
    """SIGKILL to pid's descendants (and pid itself with root), frozen first so that none
    escapes; the pids signalled."""
    frozen: set[int] = set()
    while True:
        members = descendants(pid) | ({pid} if root else set())
        if members <= frozen:
            break
        _signal(members - frozen, signal.SIGSTOP)
        frozen |= members
    _signal(frozen, signal.SIGKILL)
    return frozen


# -- records of started processes -----------------------------------------------------------


def record(records: Path, ident: Identity) -> None:
    """Writes ident to records/<pid>.json (atomically: a crash leaves it whole or absent)."""
    records.mkdir(parents=True, exist_ok=True)
    path = records / f"{ident.pid}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(ident)) + "\n")
    os.replace(tmp, path)


def forget(records: Path, pid: int) -> None:
    (records / f"{pid}.json").unlink(missing_ok=True)


def end_recorded(records: Path) -> int:
    """Ends the tree of every recorded process that still matches its record (pid, start
    time and command line) and removes the records; how many processes were ended."""
    ended: set[int] = set()
    for path in sorted(records.glob("*.json")) if records.is_dir() else []:
        try:
            ident = Identity(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            ident = None  # half a record cannot name a process
        if ident is not None and ident.pid not in ended and ident.running():
            ended |= end_tree(ident.pid)
        path.unlink(missing_ok=True)
    for tmp in records.glob("*.tmp") if records.is_dir() else []:
        tmp.unlink(missing_ok=True)
    wait_gone(ended)
    return len(ended)


def wait_gone(pids: set[int], timeout: float = 10.0) -> None:
    """Until none of pids is still the live process it was when called (SIGKILL takes a
    moment: the kernel frees a process' resources, such as its file locks, first)."""
    starts = {p: proc_start_time(p) for p in pids}

    def live(p: int) -> bool:
        fields = _stat(p)
        return fields is not None and fields[0] != "Z" and int(fields[19]) == starts[p]

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(live(p) for p in pids):
        time.sleep(_POLL_S)
