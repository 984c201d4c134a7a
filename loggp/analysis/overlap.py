"""The overlap bound of a prefetch suite: how much of the unhinted run's I/O a prefetcher hid.

A prefetcher can only win by overlapping a reader's I/O with its compute (or by moving
fewer, larger requests), so beside the run-time gain the report shows the share of the
unhinted run's I/O time the prefetching run no longer waits for.

Which points pair up (documented in docs/results.md): a workload takes part when its
results report `metrics.io_s` (time spent waiting in reads) and `metrics.time_s` (run
time), as workloads/rootio does, and its name is `<mode>-<configuration>`; the one named
`off-<configuration>` is the unhinted run, every other mode of the same configuration a
prefetching one (workloads/suites/prefetch.yaml: off-1 against willneed-1 and mercury-1,
off-nocompute against mercury-nocompute).  They are compared at each knob setting both
measured (the baseline, each swept value, each grid cell).

Per repeat i of the prefetching workload, against the medians of the unhinted workload's
repeats at the same setting:

    overlap bound_i = (median io_off - io_i) / median io_off    (I/O hidden ÷ I/O)
    gain_i          = 1 - time_i / median time_off               (run time saved)

each summarised by the median over the repeats and its order-statistic interval
(loggp/analysis/slowdown.py: median_ci), as a slowdown is: the reference's own spread is
shown beside it, not propagated.  Alongside, the most any overlap can gain,
min(median compute_off, median io_off) / median time_off, when the results report
`metrics.compute_s`: a reader that computes c and waits io takes at least max(c, io).
The points are those the slowdown uses: measured (ok or degraded), outlier repeats left out.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from loggp.analysis.knobs import knob_info, knob_sort_key
from loggp.analysis.slowdown import Analysis, Stat, median_ci
from loggp.results.reader import StoredPoint
from loggp.results.store import SWEEP_BASELINE, SWEEP_GRID

IO_METRIC = "io_s"
TIME_METRIC = "time_s"
COMPUTE_METRIC = "compute_s"
UNHINTED = "off"  # the mode (workload name prefix) of the run without prefetching


@dataclass(frozen=True)
class Setting:
    """Where on the sweep two workloads are compared: the point's knob and its values."""

    knob: str  # "baseline", a knob name or "grid"
    value: float | None  # the swept knob's value (sweep_value), None for baseline and grid
    knob_values: tuple[tuple[str, float], ...]  # every knob set, in report units

    @property
    def label(self) -> str:
        if self.knob == SWEEP_BASELINE:
            return "baseline"
        if self.value is not None:
            return f"{self.knob} {self.value:g} {knob_info(self.knob).unit}"
        return ", ".join(f"{k} {v:g} {knob_info(k).unit}" for k, v in self.knob_values)

    def sort_key(self) -> tuple:
        """Baseline first, then the knobs in the report's order, each from the better
        network to the worse (bandwidth decreasing, as on its axis)."""
        order = (0, "") if self.knob == SWEEP_BASELINE else (1, *knob_sort_key(self.knob))
        x = self.value or 0.0
        return (*order, -x if knob_info(self.knob).decreasing_x else x, self.knob_values)


@dataclass(frozen=True)
class OverlapRow:
    """One prefetching configuration against its unhinted run at one setting."""

    workload: str  # the prefetching workload, e.g. mercury-1
    unhinted: str  # its unhinted partner, e.g. off-1
    setting: Setting
    io_off: Stat | None  # io_s of the unhinted repeats
    io: Stat  # io_s of the prefetching repeats
    bound: Stat | None  # I/O hidden ÷ I/O, None with `why`
    gain: Stat | None  # 1 - time / median time_off
    best_gain: float | None  # min(compute, io) / time of the unhinted run
    n_degraded: int  # of the repeats used, both workloads'
    why: str | None = None  # why there is no bound


def _split_name(workload: str) -> tuple[str, str] | None:
    """(mode, configuration) of a name `<mode>-<configuration>`, else None."""
    mode, sep, config = workload.partition("-")
    return (mode, config) if sep and mode and config else None


def _metric(p: StoredPoint, name: str) -> float | None:
    v = p.result_metric(name)
    return v if v is not None and v >= 0 else None


def _usable(points: Sequence[StoredPoint], analysis: Analysis) -> list[StoredPoint]:
    return [
        p
        for p in points
        if p.measured
        and analysis.outlier(p.point_id) is None
        and _metric(p, IO_METRIC) is not None
        and (_metric(p, TIME_METRIC) or 0) > 0
    ]


def _setting(p: StoredPoint) -> Setting:
    value = None if p.sweep_knob in (SWEEP_BASELINE, SWEEP_GRID) else p.sweep_value
    return Setting(p.sweep_knob, value, tuple(sorted(p.knob_values.items())))


def _values(ps: Sequence[StoredPoint], name: str) -> list[float]:
    return [v for p in ps if (v := _metric(p, name)) is not None]


def _row(
    wl: str, off: str, s: Setting, mine: list[StoredPoint], ref: list[StoredPoint]
) -> OverlapRow:
    io = median_ci(_values(mine, IO_METRIC))
    degraded = sum(p.degraded for p in (*mine, *ref))
    if not ref:
        why = f"no measured {off} point at this setting"
        return OverlapRow(wl, off, s, None, io, None, None, None, degraded, why)
    io_off = median_ci(_values(ref, IO_METRIC))
    time_off = statistics.median(_values(ref, TIME_METRIC))
    compute = _values(ref, COMPUTE_METRIC)
    best = min(statistics.median(compute), io_off.median) / time_off if compute else None
    gain = median_ci([1.0 - t / time_off for t in _values(mine, TIME_METRIC)])
    if io_off.median <= 0:
        why = f"{off} spent no time in I/O"
        return OverlapRow(wl, off, s, io_off, io, None, gain, best, degraded, why)
    bound = median_ci([(io_off.median - v) / io_off.median for v in _values(mine, IO_METRIC)])
    return OverlapRow(wl, off, s, io_off, io, bound, gain, best, degraded)


def overlap(points: Sequence[StoredPoint], analysis: Analysis) -> tuple[OverlapRow, ...]:
    """Every prefetching configuration against its unhinted run, per setting; () when the
    run has no such pair."""
    usable = _usable(points, analysis)
    by_wl: dict[str, list[StoredPoint]] = {}
    for p in usable:
        by_wl.setdefault(p.workload, []).append(p)
    rows = []
    for wl, mine in by_wl.items():
        parts = _split_name(wl)
        if parts is None or parts[0] == UNHINTED:
            continue
        off = f"{UNHINTED}-{parts[1]}"
        if off not in by_wl:
            continue
        settings: dict[Setting, list[StoredPoint]] = {}
        for p in mine:
            settings.setdefault(_setting(p), []).append(p)
        for s in sorted(settings, key=Setting.sort_key):
            ref = [p for p in by_wl[off] if _setting(p) == s]
            rows.append(_row(wl, off, s, settings[s], ref))
    return tuple(rows)
