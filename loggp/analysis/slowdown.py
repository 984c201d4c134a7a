"""Slowdown per workload, knob and Δ: the median over repeats with an order-statistic interval.

For a workload with baseline values b_1..b_k (its `baseline` points) and a point with
value v_i:

    slowdown_i = v_i / median(b)      for times (higher_is_better = 0)
    slowdown_i = median(b) / v_i      for rates (higher_is_better = 1)

The curve at Δ is the median of slowdown_i over the repeats at Δ, and the baseline's median
is over its repeats, both without their outlier repeats (loggp/analysis/outliers.py: kept in the
tables, marked, and left out of the statistics with the reason shown). Its interval is the
distribution-free one for a median: of the n sorted values s_(1) ≤ … ≤ s_(n), the pair
[s_(j), s_(n+1-j)] with the largest j whose coverage 1 - 2·P(Bin(n, ½) ≤ j-1) is still at
least 95 %; the exact coverage is kept beside it. No pair reaches 95 % with fewer than six
repeats, so those have no interval. The baseline itself is drawn at Δ = 0 with
slowdown_i = b_i / median(b) (median 1). The interval describes the spread of the repeats at
Δ; the baseline's own spread is not propagated into it.

Why medians: run times on a shared host are skewed by the occasional descheduled rank
(milliseconds on a microsecond path), so a mean and a Student-t interval from a few repeats
are dominated by one outlier; the median and its order-statistic interval assume nothing
about the distribution.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from loggp.analysis.knobs import knob_info, knob_sort_key
from loggp.analysis.outliers import Outlier, split
from loggp.results.reader import StoredPoint
from loggp.results.store import SWEEP_BASELINE, SWEEP_GRID

# The least coverage an interval must have.
COVERAGE = 0.95
# How the report states the statistics.
STAT_METHOD = (
    "interval: the order statistics [s_(j), s_(n+1-j)] that cover the median with at least "
    "95 % probability, distribution-free; none with fewer than 6 repeats"
)


@dataclass(frozen=True)
class Stat:
    """Median of n values and its order-statistic interval (None below six values)."""

    median: float
    low: float | None
    high: float | None
    n: int
    coverage: float | None  # the interval's exact coverage, >= COVERAGE


def order_ranks(n: int) -> tuple[int, float] | None:
    """(j, coverage) of the interval [x_(j), x_(n+1-j)] for n values; None if none has 95 %."""
    below = 0.0  # P(Bin(n, 1/2) <= j - 1), accumulated as j grows
    best = None
    for j in range(1, n // 2 + 1):
        below += math.comb(n, j - 1) / 2.0**n
        coverage = 1.0 - 2.0 * below
        if coverage < COVERAGE:
            break
        best = (j, coverage)
    return best


def median_ci(values: Sequence[float]) -> Stat:
    """Median and order-statistic interval of the values."""
    n = len(values)
    if n == 0:
        raise ValueError("median of no values")
    xs = sorted(values)
    mid = n // 2
    median = xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2.0
    ranks = order_ranks(n)
    if ranks is None:
        return Stat(median, None, None, n, None)
    j, coverage = ranks
    return Stat(median, xs[j - 1], xs[n - j], n, coverage)


def slowdown_of(value: float, baseline: float, higher_is_better: bool) -> float:
    """Slowdown of one measured value against the baseline's median."""
    return baseline / value if higher_is_better else value / baseline


@dataclass(frozen=True)
class Baseline:
    """A workload's baseline: its measured (ok or degraded) `baseline` points but the
    outliers."""

    workload: str
    metric: str
    higher_is_better: bool
    values: tuple[float, ...]
    point_ids: tuple[str, ...]
    knob_values: dict[str, float]  # the baseline's knobs in report units
    n_degraded: int = 0
    outliers: tuple[Outlier, ...] = ()  # left out of values
    late_share: float = 0.0  # as CurvePoint.late_share, over point_ids

    @property
    def stat(self) -> Stat:
        return median_ci(self.values)

    @property
    def median(self) -> float:
        return self.stat.median


@dataclass(frozen=True)
class CurvePoint:
    x: float  # the knob's value (Δ) in the knob's unit
    stat: Stat  # slowdown over repeats
    point_ids: tuple[str, ...]
    baseline: bool = False  # the baseline drawn at Δ = 0
    n_degraded: int = 0  # of the repeats, those stored degraded (marked, not dropped)
    outliers: tuple[str, ...] = ()  # point_ids of the repeats left out of stat
    # The least share of a repeat's time its shim's late releases can have added
    # (StoredPoint.late_share over point_ids): 0 where the shim was on time.
    late_share: float = 0.0


@dataclass(frozen=True)
class Curve:
    """One workload's slowdown against one knob, by increasing x."""

    knob: str
    workload: str
    metric: str
    higher_is_better: bool
    points: tuple[CurvePoint, ...]


@dataclass(frozen=True)
class KnobSummary:
    """Everything measured for one swept knob."""

    knob: str
    curves: tuple[Curve, ...]
    n_points: int
    n_ok: int
    n_degraded: int
    no_baseline: tuple[str, ...]  # workloads swept on this knob that have no baseline

    @property
    def why_no_figure(self) -> str | None:
        """None when the knob gets a figure, else the reason it does not."""
        if self.curves:
            return None
        if self.n_ok + self.n_degraded == 0:
            return f"all {self.n_points} point(s) failed"
        if self.no_baseline:
            return "no swept workload has a baseline"
        return "no usable points"


@dataclass(frozen=True)
class GridCell:
    """Repeats of one grid point (several knobs set at once)."""

    workload: str
    knob_values: dict[str, float]
    stat: Stat
    point_ids: tuple[str, ...]
    n_degraded: int = 0
    outliers: tuple[str, ...] = ()  # point_ids of the repeats left out of stat


@dataclass(frozen=True)
class Excluded:
    """A point that is on no curve, and why."""

    point: StoredPoint
    reason: str


@dataclass(frozen=True)
class Analysis:
    workloads: tuple[str, ...]  # in order of first appearance
    baselines: dict[str, Baseline]
    no_baseline: dict[str, str]  # workload -> why it has no usable baseline
    slowdown: dict[str, float]  # point_id -> slowdown, for every usable point
    knobs: tuple[KnobSummary, ...]
    grid: tuple[GridCell, ...]
    excluded: tuple[Excluded, ...]  # failed, invalid or unusable points
    outliers: tuple[Outlier, ...] = ()  # measured repeats left out of their point's slowdown

    def outlier(self, point_id: str) -> Outlier | None:
        return next((o for o in self.outliers if o.point.point_id == point_id), None)

    def knob(self, name: str) -> KnobSummary | None:
        return next((k for k in self.knobs if k.knob == name), None)


def analyse(points: Iterable[StoredPoint]) -> Analysis:
    """Baselines, per-point slowdowns, curves per knob and the excluded points."""
    points = tuple(points)
    workloads = tuple(dict.fromkeys(p.workload for p in points))
    excluded: list[Excluded] = []
    usable: list[StoredPoint] = []
    for p in points:
        reason = _unusable(p)
        if reason is None:
            usable.append(p)
        else:
            excluded.append(Excluded(p, reason))

    baselines, no_baseline = _baselines(points, usable)
    slowdown: dict[str, float] = {}
    on_curves: list[StoredPoint] = []
    for p in usable:
        base = baselines.get(p.workload)
        if base is None:
            continue  # the workload is listed under no_baseline
        if (p.metric, p.higher_is_better) != (base.metric, base.higher_is_better):
            why = f"metric {p.metric} differs from the baseline's {base.metric}"
            excluded.append(Excluded(p, why))
            continue
        assert p.value is not None  # checked by _unusable
        slowdown[p.point_id] = slowdown_of(p.value, base.median, base.higher_is_better)
        on_curves.append(p)

    knob_names = sorted(
        {p.sweep_knob for p in points} - {SWEEP_BASELINE, SWEEP_GRID},
        key=knob_sort_key,
    )
    outliers = [o for base in baselines.values() for o in base.outliers]
    knobs = tuple(
        _knob_summary(k, points, on_curves, baselines, slowdown, workloads, outliers)
        for k in knob_names
    )
    grid = _grid(on_curves, slowdown, outliers)
    excluded.sort(key=lambda e: (e.point.seq is None, e.point.seq or 0, e.point.point_id))
    outliers.sort(key=lambda o: (o.point.seq is None, o.point.seq or 0, o.point.point_id))
    return Analysis(
        workloads=workloads,
        baselines=baselines,
        no_baseline=no_baseline,
        slowdown=slowdown,
        knobs=knobs,
        grid=grid,
        excluded=tuple(excluded),
        outliers=tuple(outliers),
    )


def _unusable(p: StoredPoint) -> str | None:
    if not p.measured:
        if p.status == "invalid":
            return "invalid: the workload's own check of its output failed"
        code = "" if not p.exit_code else f" (exit {p.exit_code})"
        return f"{p.status}{code}"
    if p.value is None:
        return f"{p.status} but no value recorded"
    if p.value <= 0:
        return f"{p.status} but value {p.value:g} is not positive"
    if p.sweep_knob not in (SWEEP_BASELINE, SWEEP_GRID) and p.sweep_value is None:
        return f"sweep_value missing for knob {p.sweep_knob}"
    return None


def _baselines(
    points: Sequence[StoredPoint], usable: Sequence[StoredPoint]
) -> tuple[dict[str, Baseline], dict[str, str]]:
    baselines: dict[str, Baseline] = {}
    no_baseline: dict[str, str] = {}
    for wl in dict.fromkeys(p.workload for p in points):
        recorded = [p for p in points if p.workload == wl and p.sweep_knob == SWEEP_BASELINE]
        good = [p for p in usable if p.workload == wl and p.sweep_knob == SWEEP_BASELINE]
        if not recorded:
            no_baseline[wl] = "no baseline points recorded"
            continue
        if not good:
            no_baseline[wl] = f"all {len(recorded)} baseline point(s) failed"
            continue
        # the metric most baseline repeats report; others are excluded as mismatches
        metric, hib = Counter((p.metric, p.higher_is_better) for p in good).most_common(1)[0][0]
        chosen, outliers = split(
            [p for p in good if (p.metric, p.higher_is_better) == (metric, hib)]
        )
        baselines[wl] = Baseline(
            workload=wl,
            metric=metric,
            higher_is_better=hib,
            values=tuple(p.value for p in chosen if p.value is not None),
            point_ids=tuple(p.point_id for p in chosen),
            knob_values=dict(chosen[0].knob_values),
            n_degraded=sum(p.degraded for p in chosen),
            outliers=tuple(outliers),
            late_share=min(p.late_share for p in chosen),
        )
    return baselines, no_baseline


def baseline_x(knob: str, base: Baseline) -> float | None:
    """Where the baseline sits on the knob's axis; None when it has no position there."""
    if knob in base.knob_values:
        return base.knob_values[knob]
    return 0.0 if knob_info(knob).baseline_at_zero else None


def _knob_summary(
    knob: str,
    points: Sequence[StoredPoint],
    on_curves: Sequence[StoredPoint],
    baselines: dict[str, Baseline],
    slowdown: dict[str, float],
    workloads: Sequence[str],
    outliers: list[Outlier],
) -> KnobSummary:
    mine = [p for p in points if p.sweep_knob == knob]
    swept = [p for p in on_curves if p.sweep_knob == knob]
    curves: list[Curve] = []
    for wl in workloads:
        wl_points = [p for p in swept if p.workload == wl]
        if not wl_points:
            continue
        base = baselines[wl]
        by_x: dict[float, list[StoredPoint]] = {}
        for p in wl_points:
            assert p.sweep_value is not None
            by_x.setdefault(p.sweep_value, []).append(p)
        cps = []
        for x, group in by_x.items():
            ps, left_out = split(group)
            outliers.extend(left_out)
            cps.append(
                CurvePoint(
                    x=x,
                    stat=median_ci([slowdown[p.point_id] for p in ps]),
                    point_ids=tuple(p.point_id for p in ps),
                    n_degraded=sum(p.degraded for p in ps),
                    outliers=tuple(o.point.point_id for o in left_out),
                    late_share=min(p.late_share for p in ps),
                )
            )
        bx = baseline_x(knob, base)
        if bx is not None and bx not in by_x:
            cps.append(
                CurvePoint(
                    x=bx,
                    stat=median_ci([slowdown[pid] for pid in base.point_ids]),
                    point_ids=base.point_ids,
                    baseline=True,
                    n_degraded=base.n_degraded,
                    outliers=tuple(o.point.point_id for o in base.outliers),
                    late_share=base.late_share,
                )
            )
        cps.sort(key=lambda c: c.x)
        curves.append(Curve(knob, wl, base.metric, base.higher_is_better, tuple(cps)))
    no_base = tuple(dict.fromkeys(p.workload for p in mine if p.workload not in baselines))
    return KnobSummary(
        knob=knob,
        curves=tuple(curves),
        n_points=len(mine),
        n_ok=sum(p.ok for p in mine),
        n_degraded=sum(p.degraded for p in mine),
        no_baseline=no_base,
    )


def _grid(
    on_curves: Sequence[StoredPoint], slowdown: dict[str, float], outliers: list[Outlier]
) -> tuple[GridCell, ...]:
    cells: dict[tuple[str, str], list[StoredPoint]] = {}
    for p in on_curves:
        if p.sweep_knob == SWEEP_GRID:
            key = (p.workload, json.dumps(p.knob_values, sort_keys=True))
            cells.setdefault(key, []).append(p)
    out = []
    for group in cells.values():
        ps, left_out = split(group)
        outliers.extend(left_out)
        out.append(
            GridCell(
                workload=ps[0].workload,
                knob_values=dict(ps[0].knob_values),
                stat=median_ci([slowdown[p.point_id] for p in ps]),
                point_ids=tuple(p.point_id for p in ps),
                n_degraded=sum(p.degraded for p in ps),
                outliers=tuple(o.point.point_id for o in left_out),
            )
        )
    return tuple(out)
