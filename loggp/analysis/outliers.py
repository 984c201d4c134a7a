"""Outlier repeats: a repeat far from its siblings is kept, marked and left out of the slowdown.

The repeats of one point (a workload's baseline, its repeats at one value of a knob, one
grid cell) measure the same thing, so one that lies far from the others measured something
else: a repeat taken while the host was busy, a rank descheduled for milliseconds.  Pooled
with the others it moves the baseline's median and every slowdown drawn from it, silently
(a loaded baseline of 14.8 s beside quiet ones of 1.3 s turned slowdowns of 2.3 to 11.6
into 0.55 to 1.9).  Per group of repeats, with values v:

    centre = median of the group's clean (ok) repeats, or of all of them when none is clean
    scale  = max(MAD_SCALE · median |v − centre| over those repeats, REL_FLOOR · centre)
    a repeat is an outlier when |v − centre| > CUTOFF · scale

MAD_SCALE · MAD estimates a normal spread's standard deviation without being moved by the
outliers themselves, and CUTOFF = 3.5 of them is Iglewicz and Hoaglin's rule.  REL_FLOOR
keeps repeats that agree to a few per cent (a MAD of nearly 0) from making every small
difference an outlier.  The value alone decides only in groups of at least VALUE_ONLY
repeats; in a smaller group (two repeats cannot say which of them is off) a repeat is an
outlier only when its own evidence says the host disturbed it too: it is stored
`degraded` (loggp/results/judge.py), and its clean siblings set the centre.  At most half
of a group's repeats are outliers: when more would be, the group is just spread, and
nothing is left out.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from loggp.results.reader import StoredPoint

MAD_SCALE = 1.4826
CUTOFF = 3.5
REL_FLOOR = 0.05
VALUE_ONLY = 3


@dataclass(frozen=True)
class Outlier:
    """A repeat left out of its point's slowdown, and why."""

    point: StoredPoint
    reason: str


def _value(p: StoredPoint) -> float:
    assert p.value is not None  # only measured points with values are grouped
    return p.value


def split(group: Sequence[StoredPoint]) -> tuple[list[StoredPoint], list[Outlier]]:
    """The repeats of one point: (those kept, the outliers with their reasons)."""
    clean = [p for p in group if p.ok]
    ref = clean or list(group)
    if len(ref) == 0:
        return list(group), []
    centre = statistics.median(_value(p) for p in ref)
    mad = statistics.median(abs(_value(p) - centre) for p in ref)
    scale = max(MAD_SCALE * mad, REL_FLOOR * abs(centre))
    if scale <= 0:
        return list(group), []
    far = [
        p
        for p in group
        if abs(_value(p) - centre) > CUTOFF * scale and (p.degraded or len(group) >= VALUE_ONLY)
    ]
    if not far or len(far) > len(group) // 2:
        return list(group), []
    kind = f"{len(ref)} clean repeat(s)" if clean else f"{len(ref)} repeat(s)"
    out = []
    for p in far:
        why = (
            f"outlier: {_value(p):.4g} is {abs(_value(p) - centre) / scale:.3g} robust deviations "
            f"({scale:.3g}) from the median {centre:.4g} of its point's {kind} "
            f"(limit {CUTOFF:g})"
        )
        if p.degraded and p.degraded_reason:
            why += f"; degraded: {p.degraded_reason}"
        out.append(Outlier(p, why))
    ids = {o.point.point_id for o in out}
    return [p for p in group if p.point_id not in ids], out
