"""Judging a point by the run's own evidence: `ok` or `degraded`, and why.

A point whose workload finished ok is stored `degraded` (docs/results.md) when it may not
measure what its knobs ask for, whatever they are (a baseline and an overhead point
included):

- other work took more than OTHER_CPU_LIMIT of the host's CPU time during the point (and at
  least OTHER_CPU_MIN_S CPU seconds, so a short point's few ticks of rounding never count):
  the ranks shared their cores with it, so its time is the host's, not the network's;
- the shim's p99 lateness bound exceeds LATE_FLOOR_NS or LATE_SHARE of the point's injected
  delay, whichever is larger, and the host's own floor measured beside the point (below);
- or the shim released an item early (`early_releases` > 0, a bug).

The p99 lateness bound is taken from the histogram merged over the point's processes: the
upper edge of the bucket that holds the 99th percentile (loggp/results/lateness.py), or the
largest lateness if that is smaller; both bound the true p99, so a point is judged clean only
when its p99 is known to be within the bound.

The injected delay of a point is the largest per-message delay its knobs set: the resolved
Δo_s, Δo_r, Δg and ΔL (baseline and swept knobs together; beneath a network ΔL plus the most
latency the network added to one message, its `pair_latency_ns` over its `pair_msgs` for a
destination, the same for every message there), the most the network's gap and bulk gap
held one message back on average to a destination (`pair_paced_ns` over `pair_msgs`), or
ΔG's share of a message, the bulk gap the shim charged over the messages it carried (its
`bulk_gap_ns` over its `msgs`, summed over the point's processes), whichever is larger.  A point without delayed items (no
release) is not judged by lateness.

The host's floor: a release due while the host itself stops a busy thread (timer ticks,
interrupts, the hypervisor) is late by the rest of the stop however well the shim does
(loggp/metrics/hostnoise.py).  When a point's lateness crosses the bound of its delay, the
runner measures that floor right after the point, and the point is degraded only when its
p99 is also above the floor: on a quiet host whose stops alone explain the lateness, the
point is as accurate as the host allows and is clean (the report says which points were
held to the floor rather than to the bound).  A floor measured while other work ran is not
the host's own and is not used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loggp.plan.knobs import REGISTRY, KnobSet
from loggp.results.lateness import Lateness, LatenessError, time_text

if TYPE_CHECKING:
    from loggp.metrics.hostnoise import HostNoise
    from loggp.metrics.node import OtherWork

LATE_QUANTILE = 0.99
LATE_FLOOR_NS = 2000
LATE_SHARE = 0.05
# Other work beyond this share of the host's CPU time degrades a point (the runner and its
# Prometheus take a few per cent; one busy loop on a 2-core host takes 50 %).
OTHER_CPU_LIMIT = 0.25
# ... and it must amount to this many CPU seconds: 5 of the kernel's 10 ms ticks.
OTHER_CPU_MIN_S = 0.05


@dataclass(frozen=True)
class LateSummary:
    """The shim's release lateness over one point's processes."""

    releases: int
    p99_ns: int | None  # None without releases
    max_ns: int
    early: int


def lateness(stats: list[dict[str, Any]]) -> LateSummary | None:
    """The merged lateness of a point's stats lines (lateness.Lateness); None when no line
    carries a histogram (no shim ran, or a shim that does not count lateness) or a line's
    counters are malformed."""
    stats = [s for s in stats if "late_hist_us" in s]
    if not stats:
        return None
    try:
        late = Lateness.of(stats)
    except (LatenessError, TypeError, ValueError):
        return None
    bound = late.quantile_ns(LATE_QUANTILE)
    p99 = None if bound is None else int(min(bound, late.max_ns))
    return LateSummary(sum(late.hist), p99, late.max_ns, late.early)


def injected_delay_ns(knobs: KnobSet, stats: list[dict[str, Any]] | None = None) -> int:
    """The largest per-message delay the knobs set, ΔG's mean share of a message in the
    point's stats lines included (module docstring)."""
    params = knobs.params()
    timed = max((getattr(params, p.field) for p in REGISTRY.params if p.unit == "ns"), default=0)
    timed = max(timed, params.latency_ns + _per_message_ns(stats or [], "pair_latency_ns"))
    timed = max(timed, _per_message_ns(stats or [], "pair_paced_ns"))
    carried = [s for s in stats or [] if isinstance(s.get("msgs"), int) and s["msgs"] > 0]
    msgs = sum(s["msgs"] for s in carried)
    bulk = sum(s.get("bulk_gap_ns", 0) for s in carried if isinstance(s.get("bulk_gap_ns"), int))
    return max(timed, bulk // msgs if msgs else 0)


def _per_message_ns(stats: list[dict[str, Any]], key: str) -> int:
    """The most a network added to one message of the point, on average to a destination:
    key (pair_latency_ns, pair_paced_ns) over pair_msgs (module docstring)."""
    most = 0
    for s in stats:
        msgs, added = s.get("pair_msgs"), s.get(key)
        if isinstance(msgs, list) and isinstance(added, list):
            for m, ns in zip(msgs, added, strict=False):
                if isinstance(m, int) and isinstance(ns, int) and m > 0:
                    most = max(most, ns // m)
    return most


def late_bound_ns(delay_ns: int) -> int:
    """The largest p99 lateness of a clean point with this injected delay."""
    return max(LATE_FLOOR_NS, round(LATE_SHARE * delay_ns))


def bound_rule(delay: str) -> str:
    """The bound in words, with the injected delay described by delay."""
    return f"max({time_text(LATE_FLOOR_NS)}, {100 * LATE_SHARE:g} % of the injected delay {delay})"


def busy_host(other: OtherWork | None) -> bool:
    """Whether other work took enough of the host's CPU to degrade a point (module doc)."""
    return other is not None and other.share > OTHER_CPU_LIMIT and other.cpu_s >= OTHER_CPU_MIN_S


def other_work_text(other: OtherWork | None) -> str:
    """The host's contention in words, as the reasons and the report say it."""
    if other is None:
        return "host CPU not measured"
    return f"host CPU {100 * other.share:.0f} % busy with other work"


def crosses_bound(late: LateSummary | None, delay_ns: int) -> bool:
    """Whether the point's p99 lateness is above the bound of its delay: only then does the
    host's floor beside the point matter (the runner measures it then)."""
    return (
        late is not None and late.p99_ns is not None and late.p99_ns > late_bound_ns(delay_ns)
    )


def degraded_reason(
    late: LateSummary | None,
    delay_ns: int,
    other: OtherWork | None,
    noise: HostNoise | None = None,
) -> str | None:
    """Why the point is degraded, or None when it is not (module docstring); noise is the
    host's own stalls measured beside the point, None when not measured."""
    why = []
    if late is not None and late.early:
        why.append(f"{late.early} early release(s)")
    bound = late_bound_ns(delay_ns)
    floor = 0 if noise is None else noise.floor_ns
    if crosses_bound(late, delay_ns) and late is not None and late.p99_ns is not None:
        rule = f"{time_text(bound)} = {bound_rule(time_text(delay_ns))}"
        if late.p99_ns <= floor:
            pass  # the host's own stops explain it: as accurate as this host allows
        elif floor > bound:
            why.append(
                f"p99 lateness up to {time_text(late.p99_ns)} exceeds the host's own floor "
                f"{time_text(floor)} beside the point (the bound {rule} is below it)"
            )
        else:
            why.append(f"p99 lateness up to {time_text(late.p99_ns)} exceeds {rule}")
    busy = busy_host(other)
    if busy:
        why.append(f"{other_work_text(other)} (above {100 * OTHER_CPU_LIMIT:.0f} %)")
    if not why:
        return None
    if not busy:
        why.append(other_work_text(other))
    if noise is not None:
        why.append(noise.text())
    return "; ".join(why)
