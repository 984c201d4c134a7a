"""The other work on the host during a point, from the kernel's CPU counters.

The runner reads /proc/stat (the counters a node exporter serves as `node_cpu_seconds_total`)
at a point's start and end, so the window is exactly the point's, with or without
Prometheus.  The other work is the share of the host's CPU time in that window that the
point's own processes do not explain:

    other = (Δbusy − Δown) / (wall × CPUs), clamped to 0..1

busy: the seconds of every CPU in every mode but idle and iowait (steal counts: time the
hypervisor gave to someone else; guest time is already in user and nice); own: the CPU
time of the runner's descendants, those it has reaped (getrusage(RUSAGE_CHILDREN)) and
those alive, each with what it has reaped in turn (/proc/PID/stat's utime, stime, cutime
and cstime): the point's ranks, its services (started before the point and reaped after
it, so their time would otherwise count as someone else's), Prometheus.  What is left is
everyone else: other users' work, a busy loop beside the ranks, the runner itself (a few
per cent).  The kernel counts busy time in ticks (10 ms), so a point shorter than a
second reads a few per cent either way; `OtherWork` keeps the CPU seconds beside the share,
so a judge can tell a share made of a few ticks from one of real work
(loggp/results/judge.py).
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
PROC_STAT = PROC / "stat"
# /proc/stat's columns after "cpuN", in USER_HZ ticks: user nice system idle iowait irq
# softirq steal guest guest_nice.  Busy: all but idle (3) and iowait (4), and not guest
# and guest_nice (8, 9), which user and nice already hold.
BUSY_COLUMNS = (0, 1, 2, 5, 6, 7)


@dataclass(frozen=True)
class CpuSample:
    """The host's busy CPU seconds and the runner's children's CPU seconds at one time."""

    busy_s: float
    cpus: int
    own_s: float
    at: float  # time.monotonic()


def busy_seconds(text: str) -> tuple[float, int]:
    """(busy seconds over all CPUs, CPUs) from the text of /proc/stat."""
    tick = os.sysconf("SC_CLK_TCK")
    busy = 0
    cpus = 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        ticks = [int(v) for v in rest.split()]
        cpus += 1
        busy += sum(ticks[i] for i in BUSY_COLUMNS if i < len(ticks))
    return busy / tick, cpus


def _process_ticks() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, its CPU ticks and those of the children it has reaped) of every
    process alive now; one that ends while it is read is left out."""
    out: dict[int, tuple[int, int]] = {}
    for d in PROC.iterdir():
        if not d.name.isdigit():
            continue
        try:
            text = (d / "stat").read_text()
        except OSError:
            continue
        # after the command's ")": state ppid ... utime(11) stime(12) cutime(13) cstime(14)
        fields = text[text.rfind(")") + 2 :].split()
        try:
            out[int(d.name)] = (int(fields[1]), sum(int(f) for f in fields[11:15]))
        except (IndexError, ValueError):
            continue
    return out


def _own_seconds() -> float:
    """The CPU seconds of the runner's descendants, reaped and alive (module docstring)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = _process_ticks()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    ticks = 0
    todo = list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        ticks += procs[pid][1]
        todo.extend(children.get(pid, []))
    return ru.ru_utime + ru.ru_stime + ticks / os.sysconf("SC_CLK_TCK")


def cpu_sample(stat: Path = PROC_STAT) -> CpuSample | None:
    """A sample now; None where the counters cannot be read (the point is then stored with
    its other work unknown)."""
    try:
        busy, cpus = busy_seconds(stat.read_text())
    except (OSError, ValueError):
        return None
    if cpus == 0:
        return None
    return CpuSample(busy, cpus, _own_seconds(), time.monotonic())


@dataclass(frozen=True)
class OtherWork:
    """The host's CPU time between two samples that the runner's children did not spend."""

    share: float  # of the host's CPU time in the window, 0..1
    cpu_s: float  # the same in CPU seconds (>= 0)


def other_work(before: CpuSample | None, after: CpuSample | None) -> OtherWork | None:
    """Everyone else's CPU time between the samples; None when either sample is missing or
    no time passed."""
    if before is None or after is None or after.at <= before.at:
        return None
    other = (after.busy_s - before.busy_s) - (after.own_s - before.own_s)
    window = (after.at - before.at) * after.cpus
    seconds = min(window, max(0.0, other))
    return OtherWork(seconds / window, seconds)
