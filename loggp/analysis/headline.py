"""The answer first: per workload the knob it is most sensitive to, and whether the host
could emulate reliably at all.

Headline: for each workload, every knob it was swept on gives the slowdown at its worst
setting (the largest Δ, or the smallest bandwidth) with that point's interval; the knob
whose worst slowdown is largest is the one the workload is most sensitive to over the
ranges this run swept.

Host trouble: the run's own evidence (loggp/results/judge.py, docs/results.md) that the
host, not the network, shaped some points — points degraded by other work, points whose
lateness only the host's own floor excused (their delays are only as accurate as that
floor), points the shim released late beyond that floor — each with what to do about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loggp.analysis.knobs import knob_info
from loggp.analysis.slowdown import Analysis, CurvePoint
from loggp.results.judge import OTHER_CPU_LIMIT
from loggp.results.lateness import time_text
from loggp.results.reader import StoredPoint


@dataclass(frozen=True)
class Worst:
    """A knob's worst setting measured for one workload."""

    knob: str
    point: CurvePoint

    def at(self) -> str:
        info = knob_info(self.knob)
        return f"{info.symbol} = {self.point.x:g} {info.unit}"


@dataclass(frozen=True)
class Headline:
    workload: str
    knobs: tuple[Worst, ...]  # most sensitive first; empty when nothing was swept alone
    why_none: str = ""

    @property
    def top(self) -> Worst | None:
        return self.knobs[0] if self.knobs else None


def headlines(analysis: Analysis) -> list[Headline]:
    out = []
    for wl in analysis.workloads:
        worst = []
        for summary in analysis.knobs:
            curve = next((c for c in summary.curves if c.workload == wl), None)
            swept = [cp for cp in curve.points if not cp.baseline] if curve else []
            if not swept:
                continue
            sign = -1 if knob_info(summary.knob).decreasing_x else 1
            worst.append(Worst(summary.knob, max(swept, key=lambda cp: sign * cp.x)))
        worst.sort(key=lambda w: -w.point.stat.median)
        why = ""
        if not worst:
            why = analysis.no_baseline.get(wl) or "no knob swept alone was measured"
        out.append(Headline(wl, tuple(worst), why))
    return out


@dataclass(frozen=True)
class Trouble:
    """One way the host shaped points, and the remedy."""

    what: str
    remedy: str


def host_trouble(points: Sequence[StoredPoint]) -> list[Trouble]:
    busy = [
        p
        for p in points
        if p.degraded and p.host_other_cpu is not None and p.host_other_cpu > OTHER_CPU_LIMIT
    ]
    floored = [p for p in points if p.ok and p.host_floor_ns is not None]
    late = [p for p in points if p.degraded and p not in busy]
    out = []
    if busy:
        top = max(p.host_other_cpu or 0.0 for p in busy)
        out.append(
            Trouble(
                f"{len(busy)} point(s) ran beside other work, up to {100 * top:.0f} % of the "
                "host's CPU: their times are the host's as much as the network's",
                "run again while nothing else runs on the host (stop builds, tests, other "
                "runs); repeats loaded this way are marked, and left out of the slowdown "
                "where they are outliers",
            )
        )
    if floored:
        top_floor = max(p.host_floor_ns or 0 for p in floored)
        out.append(
            Trouble(
                f"{len(floored)} point(s) were released later than their bound, within the "
                f"host's own stops (floor up to {time_text(top_floor)}): their delays are "
                "only as accurate as that floor",
                "a quieter host: bare metal rather than a virtual machine, fewer ranks than "
                "cores, ranks pinned (launcher: {pin: true})",
            )
        )
    if late:
        out.append(
            Trouble(
                f"{len(late)} point(s) were released late beyond the host's own floor or "
                "early: the shim did not keep their delays",
                "leave a core free for the shim's progress thread (fewer ranks than cores) "
                "and pin the ranks (launcher: {pin: true}); see each point's reason below",
            )
        )
    return out
