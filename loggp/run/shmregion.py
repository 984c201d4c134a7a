"""Region files of libfabric's shm provider that outlived their process.

Each shm endpoint is a file /dev/shm/<pid>:<uid>:<index>; a process killed with SIGKILL (a
timed-out point, a crashed rank) leaves its files behind.  libfabric overwrites such a file
when its recorded owner is dead, but pids are reused (pid_max is 32768 on small machines): a
new process that gets the dead one's pid finds "its" name taken by a live process (itself),
and fi_enable fails with -EBUSY.  So before ranks start, the files of our own user whose
owner is gone are removed.

A file is stale when no process has the pid in its name, or when that process started after
the file last changed (a process cannot own a region created before it existed).  A process
that is creating its region right now started before the file's change time, so it is never
taken for stale.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SHM_DIR = Path("/dev/shm")
_REGION = re.compile(r"^(\d+):(\d+):\d+$")


def _boot_time_s() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise OSError("no btime in /proc/stat")


def _start_time_s(pid: int, boot_s: float) -> float | None:
    """When pid started (seconds since the epoch), None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name may hold spaces and parentheses: fields follow the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return boot_s + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def stale_regions(shm_dir: Path = SHM_DIR, uid: int | None = None) -> list[Path]:
    """The region files of uid (default: ours) whose process is gone."""
    uid = os.geteuid() if uid is None else uid
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return []
    boot_s = _boot_time_s()
    stale = []
    for name in names:
        m = _REGION.match(name)
        if not m or int(m[2]) != uid:
            continue
        path = shm_dir / name
        try:
            changed = path.stat().st_ctime
        except FileNotFoundError:
            continue
        started = _start_time_s(int(m[1]), boot_s)
        if started is None or started > changed:
            stale.append(path)
    return stale


def remove_stale_regions(shm_dir: Path = SHM_DIR) -> int:
    """Removes our stale region files; returns how many went."""
    n = 0
    for path in stale_regions(shm_dir):
        try:
            path.unlink()
            n += 1
        except FileNotFoundError:
            pass
    return n
