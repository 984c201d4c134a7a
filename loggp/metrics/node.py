"""The host's CPU contention during a point, read from the run's own node exporter.

The runner reads `node_cpu_seconds_total` from the node exporter its Prometheus server scrapes
(loggp/metrics/prometheus.py) at a point's start and end, so the window is exactly the
point's, with no wait for a scrape.  The contention is the share of the host's CPU time in
that window that the point's own processes do not explain:

    other_cpu = (Δbusy − Δown) / (wall × CPUs), clamped to 0..1

busy: the seconds of every CPU in every mode but idle and iowait (steal counts: time the
hypervisor gave to someone else); own: the CPU time of the runner's children
(getrusage(RUSAGE_CHILDREN): the launched command and every descendant it waited for, which
is every rank under mpirun).  What is left is everyone else: other users' work, a busy loop
beside the ranks, the runner and Prometheus themselves (a few per cent).  The kernel counts
busy time in ticks (10 ms), so a point shorter than a second reads a few per cent either way;
`OtherWork` keeps the CPU seconds beside the share, so a judge can tell a share made of a
few ticks from one of real work (loggp/results/judge.py).
"""

from __future__ import annotations

import resource
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

CPU_METRIC = "node_cpu_seconds_total"
NOT_BUSY = ("idle", "iowait")

_HTTP_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class CpuSample:
    """The host's busy CPU seconds and the runner's children's CPU seconds at one time."""

    busy_s: float
    cpus: int
    own_s: float
    at: float  # time.monotonic()


def busy_seconds(text: str) -> tuple[float, int]:
    """(busy seconds over all CPUs, CPUs) from a node exporter's metrics text."""
    busy = 0.0
    cpus: set[str] = set()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name != CPU_METRIC:
                continue
            cpus.add(s.labels.get("cpu", ""))
            if s.labels.get("mode") not in NOT_BUSY:
                busy += s.value
    return busy, len(cpus)


def _own_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_sample(address: str | None) -> CpuSample | None:
    """A sample from the node exporter at host:port; None without one or when it does not
    answer with CPU counters (the point is then stored with its contention unknown)."""
    if address is None:
        return None
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=_HTTP_TIMEOUT_S) as r:
            text = r.read().decode("utf-8", errors="replace")
        busy, cpus = busy_seconds(text)
    except (urllib.error.URLError, OSError, ValueError):
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

