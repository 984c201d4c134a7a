"""Judging a point by the shim's own error: `ok` or `degraded`, and why.

A point whose workload finished ok is stored `degraded` (docs/results.md) when the shim may
not have applied the delays it was asked for:

- its p99 lateness bound exceeds LATE_FLOOR_NS or LATE_SHARE of the point's injected delay,
  whichever is larger, or
- the shim released an item early (`early_releases` > 0, a bug).

The p99 lateness bound is taken from the histogram merged over the point's processes: the
upper edge of the bucket that holds the 99th percentile (loggp/results/lateness.py), or the
largest lateness if that is smaller; both bound the true p99, so a point is judged clean only
when its p99 is known to be within the bound.

The injected delay of a point is the largest per-message delay its knobs set: the resolved
Δo_s, Δo_r, Δg and ΔL (baseline and swept knobs together), or ΔG's share of a message, the
bulk gap the shim charged over the messages it carried (its `bulk_gap_ns` over its `msgs`,
summed over the point's processes), whichever is larger.  A point without delayed items (no
release) is never judged by lateness.

The reason names what crossed the bound and what the host did meanwhile: its CPU contention
(loggp/metrics/node.py) and, when the run measured it, the floor its own stalls set under any
point's p99 lateness (loggp/metrics/hostnoise.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loggp.plan.knobs import REGISTRY, KnobSet
from loggp.results.lateness import Lateness, LatenessError, time_text

if TYPE_CHECKING:
    from loggp.metrics.hostnoise import HostNoise

LATE_QUANTILE = 0.99
LATE_FLOOR_NS = 2000
LATE_SHARE = 0.05


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
    carried = [s for s in stats or [] if isinstance(s.get("msgs"), int) and s["msgs"] > 0]
    msgs = sum(s["msgs"] for s in carried)
    bulk = sum(s.get("bulk_gap_ns", 0) for s in carried if isinstance(s.get("bulk_gap_ns"), int))
    return max(timed, bulk // msgs if msgs else 0)


def late_bound_ns(delay_ns: int) -> int:
    """The largest p99 lateness of a clean point with this injected delay."""
    return max(LATE_FLOOR_NS, round(LATE_SHARE * delay_ns))


def bound_rule(delay: str) -> str:
    """The bound in words, with the injected delay described by delay."""
    return f"max({time_text(LATE_FLOOR_NS)}, {100 * LATE_SHARE:g} % of the injected delay {delay})"


def degraded_reason(
    late: LateSummary | None,
    delay_ns: int,
    other_cpu: float | None,
    noise: HostNoise | None = None,
) -> str | None:
    """Why the point is degraded, or None when it is not; the host's contention and, when
    measured, its own stalls are given (a floor above the bound: the host alone degrades)."""
    if late is None:
        return None
    why = []
    if late.early:
        why.append(f"{late.early} early release(s)")
    bound = late_bound_ns(delay_ns)
    if late.p99_ns is not None and late.p99_ns > bound:
        rule = bound_rule(time_text(delay_ns))
        why.append(f"p99 lateness up to {time_text(late.p99_ns)} exceeds {time_text(bound)} = {rule}")
    if not why:
        return None
    host = "not measured" if other_cpu is None else f"{100 * other_cpu:.0f} % busy with other work"
    why.append(f"host CPU {host}")
    if noise is not None:
        above = " (above the bound: the host alone degrades it)" if noise.floor_ns > bound else ""
        why.append(noise.text() + above)
    return "; ".join(why)
