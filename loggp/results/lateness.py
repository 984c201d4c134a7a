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
from fractions import Fraction
from typing import Any

LATE_BUCKETS = 16
LATE_HIST_KEY = "late_hist_us"


class LatenessError(ValueError):
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
