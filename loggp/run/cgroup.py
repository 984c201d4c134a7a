"""A kernel-enforced group per point: nothing a point starts can leave it.

The keeper (loggp/run/keeper.py) ends its tree, but a process can leave a tree: it can kill
its keeper (`kill -9 $PPID`, or `kill -9 0` of a shell in the keeper's process group) and
live on under init.  No process can leave its cgroup, so each point's keepers (its command's
and its services') join a cgroup of the point's own, and when the point is over the runner
kills whatever is left in it:

- cgroup v2 (the unified hierarchy, mounted alone at /sys/fs/cgroup or beside v1 at
  /sys/fs/cgroup/unified): `cgroup.kill`, one write that kills every member at once;
- else the v1 freezer: the group frozen (no member can fork), every member SIGKILLed, thawed;
- else (no cgroup file system, or none this user may write): the keeper alone, as before.

Which one a run had is in run.json's provenance (`containment`).  Groups are made under
`<hierarchy>/loggp/` as `<runner pid>-<point seq>`, and recorded in the run's process records
(DIR/pids/) so that `--resume` kills what a dead run's groups still hold.  On a host with
systemd, the hierarchy systemd manages is written to directly as well; a systemd-run scope is
not used.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

BASE = "loggp"
_MOUNTS = Path("/proc/self/mounts")
_POLL_S = 0.01
_KILL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Containment:
    """How this host contains a point: kind cgroup2, freezer or keeper; base holds the
    groups (None for the keeper); why says what was found."""

    kind: str
    base: Path | None
    why: str

    def describe(self) -> str:
        where = f" ({self.base})" if self.base else ""
        return f"{self.kind}{where}: {self.why}"


def _mounts() -> list[tuple[Path, str, str]]:
    """(mount point, file system type, options) of every mount."""
    try:
        lines = _MOUNTS.read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            out.append((Path(parts[1].replace("\\040", " ")), parts[2], parts[3]))
    return out


def _usable(base: Path, needs: str) -> str | None:
    """None if a group made under base has the file needs, else why not."""
    probe = base / f"probe-{os.getpid()}"
    try:
        base.mkdir(exist_ok=True)
        probe.mkdir(exist_ok=True)
    except OSError as e:
        return f"cannot make a group in {base}: {e.strerror}"
    try:
        return None if (probe / needs).exists() else f"{base} has no {needs}"
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


def detect() -> Containment:
    """The best containment this host allows (module docstring)."""
    mounts = _mounts()
    tried = []
    for point, fstype, _ in mounts:
        if fstype == "cgroup2":
            why = _usable(point / BASE, "cgroup.kill")
            if why is None:
                return Containment("cgroup2", point / BASE, "cgroup.kill of a group per point")
            tried.append(why)
    for point, fstype, opts in mounts:
        if fstype == "cgroup" and "freezer" in opts.split(","):
            why = _usable(point / BASE, "freezer.state")
            if why is None:
                return Containment("freezer", point / BASE, "v1 freezer group per point")
            tried.append(why)
    why = "; ".join(tried) or "no cgroup file system mounted"
    return Containment("keeper", None, f"the keeper alone ends each tree ({why})")


def record_group(records: Path, group: Path) -> None:
    """Names group in the run's process records (end_recorded_groups)."""
    records.mkdir(parents=True, exist_ok=True)
    (records / f"{group.name}.cgroup").write_text(f"{group}\n")


def end_recorded_groups(records: Path) -> int:
    """Kills what every group the records name still holds and removes it; how many
    processes were killed."""
    killed = 0
    for rec in sorted(records.glob("*.cgroup")) if records.is_dir() else []:
        try:
            group = Path(rec.read_text().strip())
        except OSError:
            group = None
        if group is not None and group.parent.name == BASE and group.is_dir():
            killed += kill_group(group)
        rec.unlink(missing_ok=True)
    return killed


def make_group(c: Containment, name: str, records: Path | None) -> Path | None:
    """A new group for a point (None under the keeper alone, or if it cannot be made)."""
    if c.base is None:
        return None
    group = c.base / name
    try:
        group.mkdir(exist_ok=True)
        if records is not None:
            record_group(records, group)
    except OSError:
        return None
    return group


def _members(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _until(cond: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(_POLL_S)


def kill_group(group: Path, timeout: float = _KILL_TIMEOUT_S) -> int:
    """SIGKILL to every member of group (none can fork meanwhile), then the group removed;
    how many members it had."""
    members = _members(group)
    if members:
        if (group / "cgroup.kill").exists():
            (group / "cgroup.kill").write_text("1\n")
        else:
            state = group / "freezer.state"
            state.write_text("FROZEN\n")
            _until(lambda: state.read_text().strip() == "FROZEN", timeout)
            for pid in _members(group):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            state.write_text("THAWED\n")
        _until(lambda: not _members(group), timeout)
    try:
        group.rmdir()
    except OSError:
        pass
    return len(members)
