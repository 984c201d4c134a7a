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
(DIR/pids/) so that `--resume` kills what a dead run's groups still hold; every run also
removes the groups of runners no longer running (end_dead_runs).  On a host with
systemd, the hierarchy systemd manages is written to directly as well; a systemd-run scope is
not used.

Limits per point (`loggp run --point-pids N --point-memory SIZE`) are written into the
point's group where cgroup v2 has the controller (`pids.max`, `memory.max`); a pids limit
falls back to a group of the v1 pids hierarchy, beneath the runner's own.  A limit the host
cannot enforce is refused before the run starts (CgroupError), never silently dropped.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from loggp.errors import LoggpError
from loggp.run.proctree import Identity

BASE = "loggp"
_MOUNTS = Path("/proc/self/mounts")
_POLL_S = 0.01
_KILL_TIMEOUT_S = 10.0


class CgroupError(LoggpError):
    """A limit per point that this host's cgroups cannot enforce."""

    exit_code = 2


@dataclass(frozen=True)
class Limits:
    """What each point's processes may use together; None: no limit."""

    pids: int | None = None
    memory: int | None = None  # bytes

    def describe(self) -> str:
        parts = [f"pids {self.pids}"] if self.pids else []
        parts += [f"memory {self.memory} bytes"] if self.memory else []
        return ", ".join(parts) or "none"


@dataclass(frozen=True)
class Containment:
    """How this host contains a point: kind cgroup2, freezer or keeper; base holds the
    groups (None for the keeper); why says what was found; limits and the bases of the v1
    groups that enforce some of them (controller file -> base)."""

    kind: str
    base: Path | None
    why: str
    limits: Limits = Limits()
    v1_bases: dict[str, Path] = field(default_factory=dict)

    def describe(self) -> str:
        where = f" ({self.base})" if self.base else ""
        limits = f"; limits per point: {self.limits.describe()}" if self.limits.pids or \
            self.limits.memory else ""  # fmt: skip
        return f"{self.kind}{where}: {self.why}{limits}"

    def with_limits(self, limits: Limits) -> Containment:
        """This containment enforcing limits; CgroupError naming what the host lacks."""
        wanted = {"pids.max": limits.pids, "memory.max": limits.memory}
        v1: dict[str, Path] = {}
        for control, value in wanted.items():
            if value is None or self._v2_has(control):
                continue
            base = _v1_base(control.split(".")[0]) if control == "pids.max" else None
            if base is None:
                raise CgroupError(
                    f"cannot limit each point's {control.split('.')[0]}: this host's cgroups "
                    f"offer no {control} (containment {self.kind}; a memory limit needs "
                    "cgroup v2's memory controller, a pids limit v2's or v1's pids controller)"
                )
            v1[control] = base
        return Containment(self.kind, self.base, self.why, limits, v1)

    def _v2_has(self, control: str) -> bool:
        """Whether groups under the v2 base get control (the controller enabled for them)."""
        if self.kind != "cgroup2" or self.base is None:
            return False
        name = control.split(".")[0]
        try:
            (self.base / "cgroup.subtree_control").write_text(f"+{name}\n")
        except OSError:
            return False
        return name in (self.base / "cgroup.subtree_control").read_text().split()


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
        if group is not None and group.parent.name == BASE and group.is_dir():  # only ours
            killed += kill_group(group)
        rec.unlink(missing_ok=True)
    return killed


def end_dead_runs(c: Containment) -> int:
    """Kills and removes the groups of runners that are gone (named `<pid>-<seq>` with no
    such pid running: a runner killed before its point's group was), so that not even a run
    never resumed leaves anything; how many processes were killed."""
    killed = 0
    for base in ([c.base] if c.base else []) + list(c.v1_bases.values()):
        for group in base.iterdir() if base.is_dir() else []:
            pid, _, seq = group.name.partition("-")
            if group.is_dir() and pid.isdigit() and seq.isdigit() and not _running(int(pid)):
                killed += kill_group(group)
    return killed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _v1_base(controller: str) -> Path | None:
    """A writable base for groups of the v1 hierarchy of controller, beneath the runner's
    own group there, or None."""
    own = ""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                own = path.strip("/")
    except (OSError, ValueError):
        return None
    for point, fstype, opts in _mounts():
        if fstype == "cgroup" and controller in opts.split(","):
            base = point / own / BASE
            if _usable(base, f"{controller}.max") is None:
                return base
    return None


def make_group(c: Containment, name: str, records: Path | None) -> list[Path]:
    """The groups a point's keepers join: first the one that kills (none under the keeper
    alone, or if it cannot be made), then v1 groups of its limits; each limit written."""
    if c.base is None:
        return []
    groups = [c.base / name, *(base / name for base in c.v1_bases.values())]
    values = {"pids.max": c.limits.pids, "memory.max": c.limits.memory}
    try:
        for group in groups:
            group.mkdir(exist_ok=True)
            if records is not None:
                record_group(records, group)
        for control, value in values.items():
            if value is not None:
                where = c.v1_bases.get(control)
                ((where / name) if where else groups[0]).joinpath(control).write_text(f"{value}\n")
    except OSError:
        for group in groups:
            kill_group(group)
        return []
    return groups


def _members(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _live(pids: list[int]) -> int:
    """How many of pids are running processes (a zombie is listed until it is reaped)."""
    return sum(Identity.of(p) is not None for p in pids)


def _until(cond: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(_POLL_S)


def kill_groups(groups: list[Path]) -> int:
    """kill_group of each of a point's groups; how many processes the first had."""
    if not groups:
        return 0
    left = kill_group(groups[0])
    for group in groups[1:]:  # the limits' v1 groups: emptied by the first's kill
        kill_group(group)
    return left


def kill_group(group: Path, timeout: float = _KILL_TIMEOUT_S) -> int:
    """SIGKILL to every member of group (none can fork meanwhile), then the group removed;
    how many running members it had."""
    members = _members(group)
    running = _live(members)
    state = group / "freezer.state"
    if members:
        if (group / "cgroup.kill").exists():
            (group / "cgroup.kill").write_text("1\n")
        else:  # frozen first where it can be, so that none forks meanwhile
            if state.exists():
                state.write_text("FROZEN\n")
                _until(lambda: state.read_text().strip() == "FROZEN", timeout)
            for pid in _members(group):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if state.exists():
                state.write_text("THAWED\n")
        _until(lambda: not _members(group), timeout)
    try:
        group.rmdir()
    except OSError:
        pass
    return running
