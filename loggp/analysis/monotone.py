"""Curves that a worse network cannot explain: a workload faster under more added delay.

A network that only gets worse along a knob's axis cannot make a workload faster, so a
curve point measured faster than a point of a better network (a smaller Δ, the baseline
at Δ = 0 among them) says the workload's own timing is suspect: a service that sleeps
while idle and is kept awake by a slower network, a baseline taken while the host was
busy.  Such a pair is an *inversion* when the two points' spreads do not overlap:

    high(worse) · (1 + MARGIN) < low(better)

where a point's spread is its order-statistic interval of the median (loggp/analysis/slowdown.py)
when it has one, else the range of its repeats.  Points with fewer than MIN_REPEATS
repeats are not judged: a single repeat has no spread to be beyond.

The better point's low end is first lowered by what the shim's own late releases can have
added to it (CurvePoint.late_share, from the counters the shim recorded): a release due
while the host ran other threads on both cores goes out when a core frees, milliseconds
late on an oversubscribed 2-core host, and such a point is slower than its knobs ask for
(the runner marks it degraded for it).  What that cannot explain is the workload's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from loggp.analysis.knobs import knob_info
from loggp.analysis.slowdown import Analysis, CurvePoint

# Spreads must clear each other by this much (relative), so rounding and the last
# percent of noise never make an inversion.
MARGIN = 0.05
# The fewest repeats on each side of a pair for it to be judged.
MIN_REPEATS = 3
WHAT = "faster under added delay: the workload's own timing is suspect"


@dataclass(frozen=True)
class Inversion:
    """A point of a worse network measured faster than one of a better network."""

    knob: str
    workload: str
    better: CurvePoint  # the smaller Δ (or larger rate)
    worse: CurvePoint
    better_spread: tuple[float, float]  # its slowdowns' (low, high)
    worse_spread: tuple[float, float]

    def text(self) -> str:
        info = knob_info(self.knob)

        def at(cp: CurvePoint) -> str:
            return f"{cp.x:g} {info.unit}" + (" (the baseline)" if cp.baseline else "")

        (bl, bh), (wl, wh) = self.better_spread, self.worse_spread
        late = self.better.late_share
        return (
            f"{self.workload}: {WHAT}; at {info.symbol} {at(self.worse)} slowdown "
            f"{wl:.3g}–{wh:.3g}, below {bl:.3g}–{bh:.3g} at {at(self.better)}"
            + (
                f", beyond the {100 * late:.2g} % at most that the shim's late releases added there"
                if late
                else ""
            )
        )


def spread(cp: CurvePoint, slowdown: dict[str, float]) -> tuple[float, float]:
    """The point's interval when it has one, else the range of its repeats' slowdowns."""
    if cp.stat.low is not None and cp.stat.high is not None:
        return cp.stat.low, cp.stat.high
    values = [slowdown[pid] for pid in cp.point_ids if pid in slowdown]
    return min(values), max(values)


def inversions(analysis: Analysis) -> list[Inversion]:
    """Every pair of points on a curve where the worse network was measured faster."""
    found: list[Inversion] = []
    for summary in analysis.knobs:
        info = knob_info(summary.knob)
        for curve in summary.curves:
            # Better network first: increasing Δ, or decreasing rate.
            pts = sorted(
                (cp for cp in curve.points if cp.stat.n >= MIN_REPEATS),
                key=lambda cp: cp.x,
                reverse=info.decreasing_x,
            )
            spreads = [spread(cp, analysis.slowdown) for cp in pts]
            for i, better in enumerate(pts):
                for j in range(i + 1, len(pts)):
                    if spreads[j][1] * (1 + MARGIN) < spreads[i][0] * (1 - better.late_share):
                        found.append(
                            Inversion(
                                summary.knob, curve.workload, better, pts[j], spreads[i], spreads[j]
                            )
                        )
    return found
