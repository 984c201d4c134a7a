"""The shims' own schedule error: quantiles of the release-lateness histogram.

Both shims count how late each delayed item was released against its release time in a
16-bucket log2 histogram (`emulator/core/include/lgp/stats.h`; the fabric shim's stats line
`late_hist_us`, the wire's per-port `late_hist_us`): bucket 0 holds releases less than 1 us
late, bucket k (1..14) those [2^(k-1), 2^k) us late, bucket 15 the rest (16.384 ms and more).
A histogram keeps no values, so a quantile is known only to its bucket: `late_quantile_ns`
returns the upper bound of the bucket that holds it, a bound on the true quantile, never an
estimate of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from loggp.errors import LoggpError

LATE_BUCKETS = 16
LATE_HIST_KEY = "late_hist_us"


class LatenessError(LoggpError, ValueError):
    """A lateness histogram or quantile that cannot be used."""


def late_bucket_upper_ns(k: int) -> float:
    """The exclusive upper bound of bucket k in ns: 2^k us, and inf for the last bucket."""
    if not 0 <= k < LATE_BUCKETS:
        raise LatenessError(f"lateness bucket {k} out of range: expected 0 to {LATE_BUCKETS - 1}")
    return math.inf if k == LATE_BUCKETS - 1 else (1 << k) * 1000


def _check_hist(hist: Sequence[int]) -> None:
    if len(hist) != LATE_BUCKETS or not all(
        isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in hist
    ):
        raise LatenessError(
            f"bad lateness histogram {list(hist)!r}: expected {LATE_BUCKETS} counts >= 0"
        )


def late_quantile_ns(hist: Sequence[int], q: float) -> float | None:
    """The upper bound in ns of the bucket holding the q-quantile of the releases' lateness.

    q is in (0, 1]: 0.5 for the median, 0.99 for p99.  The q-quantile is the release of rank
    ceil(q * releases) in order of lateness; the answer is a bound on it (1000 means "under
    1 us", inf "16.384 ms or more").  None when the histogram counts no release.
    """
    _check_hist(hist)
    if isinstance(q, bool) or not isinstance(q, int | float) or not 0 < q <= 1:
        raise LatenessError(f"bad quantile {q!r}: expected a number in (0, 1]")
    total = sum(hist)
    if total == 0:
        return None
    rank = math.ceil(Fraction(str(q)) * total)
    seen = 0
    for k, count in enumerate(hist):
        seen += count
        if seen >= rank:
            return late_bucket_upper_ns(k)
    raise AssertionError("unreachable: rank <= total")


def merged_hist(stats: Iterable[dict[str, Any]]) -> list[int]:
    """The sum of the histograms of several stats objects (processes or ports)."""
    out = [0] * LATE_BUCKETS
    for s in stats:
        hist = s.get(LATE_HIST_KEY)
        if hist is None:
            continue
        _check_hist(hist)
        out = [a + b for a, b in zip(out, hist, strict=True)]
    return out


def _bound_text(bound_ns: float) -> str:
    if math.isinf(bound_ns):
        return f">= {late_bucket_upper_ns(LATE_BUCKETS - 2) / 1000:g} us"
    return f"< {bound_ns / 1000:g} us"


def time_text(ns: float) -> str:
    """A duration for a line of text: ns below 1 us, else us or ms with 3 digits."""
    if ns < 1000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1000:.3g} us"
    return f"{ns / 1e6:.3g} ms"


@dataclass(frozen=True)
class Lateness:
    """The schedule error of several stats objects (processes or ports) taken together."""

    releases: int
    hist: list[int]
    late_ns: int
    max_ns: int
    over_10us: int
    early: int

    @classmethod
    def of(cls, stats: Sequence[dict[str, Any]]) -> Lateness:
        def total(key: str) -> int:
            return sum(int(s.get(key) or 0) for s in stats)

        return cls(
            releases=total("releases"),
            hist=merged_hist(stats),
            late_ns=total("late_ns"),
            max_ns=max((int(s.get("late_max_ns") or 0) for s in stats), default=0),
            over_10us=total("late_over_10us"),
            early=total("early_releases"),
        )

    def __add__(self, other: Lateness) -> Lateness:
        return Lateness(
            releases=self.releases + other.releases,
            hist=[a + b for a, b in zip(self.hist, other.hist, strict=True)],
            late_ns=self.late_ns + other.late_ns,
            max_ns=max(self.max_ns, other.max_ns),
            over_10us=self.over_10us + other.over_10us,
            early=self.early + other.early,
        )

    def quantile_ns(self, q: float) -> float | None:
        return late_quantile_ns(self.hist, q)

    def describe(self) -> str:
        """One line: releases, p50 and p99 as bucket bounds, max, late by > 10 us, early."""
        if not self.releases:
            return "0 delayed releases"
        p50, p99 = self.quantile_ns(0.5), self.quantile_ns(0.99)
        quantiles = (
            f"p50 {_bound_text(p50)}, p99 {_bound_text(p99)} (bounds: histogram buckets), "
            if p50 is not None and p99 is not None
            else ""
        )
        return (
            f"{self.releases} delayed releases, lateness {quantiles}"
            f"max {time_text(self.max_ns)}, {self.over_10us} late by > 10 us, "
            f"{self.early} early"
        )
