"""The Berkeley study's findings next to what a run measured.

Martin, Vahdat, Culler and Anderson (ISCA'97; [LogGP] in docs/design.md) report, for Split-C
applications on a NOW, how run time grows with added overhead, gap, latency and bulk
gap.  Each finding below is assessed from this run's curves and model lines only, and
claims only what the spread of the repeats supports: `reproduced` when the finding's
ordering holds with non-overlapping spreads, `not reproduced` when the opposite does,
`inconclusive: intervals overlap` when the spreads leave it open, `inconclusive: too few
repeats` when a point it needs has fewer than MIN_REPEATS repeats, or `not measured` (the
run lacks the workloads or knobs it needs), with the numbers that decided it.  A point's
spread is its order-statistic interval, else the range of its repeats
(loggp/analysis/monotone.py's `spread`); a slope's is the slope of each end.

Workloads are recognised by name (case, '-' and '_' ignored): em3d_read / em3dread,
em3d_write, radix, radb, sample, connect, barnes, nowsort, as the sensitivity suite names
them; finding 1 uses every workload.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loggp.analysis.knobs import knob_info
from loggp.analysis.model import Models
from loggp.analysis.monotone import MIN_REPEATS, spread
from loggp.analysis.slowdown import Analysis, Curve, CurvePoint

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_MEASURED = "not measured"
INCONCLUSIVE = "inconclusive: intervals overlap"
TOO_FEW = f"inconclusive: too few repeats (a point with fewer than {MIN_REPEATS})"

READERS = ("em3dread", "barnes", "connect")  # blocking remote reads: round trips
FINE_GRAINED = ("radix", "em3dwrite")  # many small one-way messages
BULK = ("radb", "nowsort")
# The study saw Radb and NOW-sort unaffected down to about this bandwidth (MB/s).
BULK_KNEE_MBPS = 15.0
# Results stored before bandwidths were rounded to the precision of the shim's per-byte
# time hold them a few ppm off (15 MB/s as 14.999999925): points this close to the knee
# count as at it.
KNEE_REL = 1e-6
INSENSITIVE = 1.25  # a slowdown below this counts as "largely unaffected"
ACCURATE_R2 = 0.9


@dataclass(frozen=True)
class Finding:
    claim: str
    verdict: str
    evidence: str


def _key(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def _curve(analysis: Analysis, knob: str, workload_key: str) -> Curve | None:
    summary = analysis.knob(knob)
    if summary is None:
        return None
    return next((c for c in summary.curves if _key(c.workload) == workload_key), None)


def _base_x(curve: Curve) -> float:
    """The knob's value at the baseline: 0 unless the baseline set the knob."""
    return next((cp.x for cp in curve.points if cp.baseline), 0.0)


@dataclass(frozen=True)
class Slope:
    """Added slowdown per unit of Δ, with the slopes of its point's spread (None with fewer
    than MIN_REPEATS repeats)."""

    median: float
    low: float | None
    high: float | None

    def text(self) -> str:
        if self.low is None or self.high is None:
            return f"{self.median:.3g}"
        return f"{self.median:.3g} [{self.low:.3g}, {self.high:.3g}]"


def _spread(analysis: Analysis, cp: CurvePoint) -> tuple[float, float] | None:
    return spread(cp, analysis.slowdown) if cp.stat.n >= MIN_REPEATS else None


def _slope(analysis: Analysis, curve: Curve) -> Slope | None:
    """Added slowdown per unit of Δ at the largest Δ measured: (s - 1) / Δ, with Δ the
    swept value minus the baseline's (a baseline emulating the study's network sets it)."""
    far = max((cp for cp in curve.points if not cp.baseline), key=lambda cp: cp.x, default=None)
    if far is None or far.x <= _base_x(curve):
        return None
    dx = far.x - _base_x(curve)
    ends = _spread(analysis, far)
    if ends is None:
        return Slope((far.stat.median - 1.0) / dx, None, None)
    return Slope((far.stat.median - 1.0) / dx, (ends[0] - 1.0) / dx, (ends[1] - 1.0) / dx)


def _slopes(analysis: Analysis, knob: str, keys: Sequence[str] | None = None) -> dict[str, Slope]:
    summary = analysis.knob(knob)
    if summary is None:
        return {}
    out: dict[str, Slope] = {}
    for c in summary.curves:
        if keys is not None and _key(c.workload) not in keys:
            continue
        s = _slope(analysis, c)
        if s is not None:
            out[c.workload] = s
    return out


def _above(a: Slope, b: Slope) -> bool | None:
    """Whether a is above b beyond both spreads: True, False (b above a), None (they overlap
    or a spread is missing)."""
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return None
    if a.low > b.high:
        return True
    if a.high < b.low:
        return False
    return None


def _open(slopes: Sequence[Slope]) -> str:
    """The verdict of a finding the spreads leave open."""
    return TOO_FEW if any(s.low is None for s in slopes) else INCONCLUSIVE


def _all_above(high: dict[str, Slope], low: dict[str, Slope]) -> str:
    """Every slope of high above every slope of low: reproduced when each pair is beyond its
    spreads, not reproduced when one pair is the other way round beyond them."""
    pairs = [_above(h, lo) for h in high.values() for lo in low.values()]
    if all(pairs):
        return REPRODUCED
    if any(p is False for p in pairs):
        return NOT_REPRODUCED
    return _open([*high.values(), *low.values()])


def _steepest(
    analysis: Analysis, knob: str, keys: Sequence[str], claim: str, group: str
) -> Finding:
    """The claim that the workloads named by keys slow more per µs of the knob than every
    other workload, beyond the intervals."""
    slopes = _slopes(analysis, knob)
    mine = {w: s for w, s in slopes.items() if _key(w) in keys}
    others = {w: s for w, s in slopes.items() if _key(w) not in keys}
    if not mine or not others:
        return Finding(claim, NOT_MEASURED, f"needs {group} and other workloads on {knob}")
    symbol = knob_info(knob).symbol
    evidence = (
        f"slowdown per µs of {symbol} [interval]: {group} {_fmt(mine, '')}; "
        f"others {_fmt(others, '')}"
    )
    return Finding(claim, _all_above(mine, others), evidence)


def _fmt(slopes: dict[str, Slope], unit: str) -> str:
    return ", ".join(f"{w} {s.text()}{unit}" for w, s in slopes.items())


def overhead_dominates(analysis: Analysis, models: Models) -> Finding:
    claim = (
        "Applications are most sensitive to overhead: per µs added, Δo slows them more "
        "than ΔL (the study: up to ×50 at Δo ≈ 100 µs)"
    )
    o, lat = _slopes(analysis, "overhead"), _slopes(analysis, "latency")
    both = [w for w in o if w in lat]
    if not both:
        return Finding(claim, NOT_MEASURED, "needs workloads swept on both overhead and latency")
    more = [w for w in both if _above(o[w], lat[w])]
    less = [w for w in both if _above(o[w], lat[w]) is False]
    if len(more) * 2 > len(both):
        verdict = REPRODUCED
    elif (len(both) - len(less)) * 2 <= len(both):
        verdict = NOT_REPRODUCED
    else:
        verdict = _open([s for w in both for s in (o[w], lat[w])])
    worst = max(both, key=lambda w: o[w].median)
    evidence = (
        f"{len(more)} of {len(both)} workloads slow more per µs of Δo than of ΔL beyond "
        f"their intervals, {len(less)} less (slowdown per µs [interval]: overhead "
        f"{_fmt({w: o[w] for w in both}, '')}; latency {_fmt({w: lat[w] for w in both}, '')}); "
        f"steepest under overhead: {worst}"
    )
    return Finding(claim, verdict, evidence)


def readers_latency_bound(analysis: Analysis, models: Models) -> Finding:
    claim = (
        "Applications that do blocking remote reads (EM3D(read), Barnes, Connect) are the "
        "most latency-sensitive; the others largely ignore added latency"
    )
    return _steepest(analysis, "latency", READERS, claim, "readers")


def em3d_latency_model(analysis: Analysis, models: Models) -> Finding:
    claim = "The simple latency model T0 + m·ΔL is accurate for EM3D(read)"
    curve = _curve(analysis, "latency", "em3dread")
    model = models.get("latency", curve.workload) if curve else None
    if model is None or model.r2 is None:
        return Finding(claim, NOT_MEASURED, "needs em3d_read on latency with message counts")
    ok = model.r2 >= ACCURATE_R2
    return Finding(
        claim,
        REPRODUCED if ok else NOT_REPRODUCED,
        f"R² of the latency model for {curve.workload}: {model.r2:.3f} (accurate: ≥ {ACCURATE_R2})",
    )


def em3d_overhead_underpredicts(analysis: Analysis, models: Models) -> Finding:
    claim = "The simple overhead model under-predicts EM3D(read)'s run time"
    curve = _curve(analysis, "overhead", "em3dread")
    model = models.get("overhead", curve.workload) if curve else None
    if curve is None or model is None:
        return Finding(claim, NOT_MEASURED, "needs em3d_read on overhead with message counts")
    far = max(curve.points, key=lambda cp: cp.x)
    predicted = model.slowdown(far.x)
    ends = _spread(analysis, far)
    if ends is None:
        verdict, shown = TOO_FEW, ""
    else:
        verdict = (
            REPRODUCED
            if ends[0] > predicted
            else NOT_REPRODUCED
            if ends[1] <= predicted
            else INCONCLUSIVE
        )
        shown = f" [{ends[0]:.2f}, {ends[1]:.2f}]"
    return Finding(
        claim,
        verdict,
        f"at Δo = {far.x - _base_x(curve):g} µs measured ×{far.stat.median:.2f}{shown}, "
        f"model ×{predicted:.2f}",
    )


def bulk_insensitive(analysis: Analysis, models: Models) -> Finding:
    claim = (
        f"Bulk bandwidth matters little: Radb and NOW-sort are largely unaffected until "
        f"bandwidth falls to about {BULK_KNEE_MBPS:g} MB/s"
    )
    summary = analysis.knob("bandwidth")
    curves = [c for c in summary.curves if _key(c.workload) in BULK] if summary else []
    knee = BULK_KNEE_MBPS * (1 - KNEE_REL)
    above = {
        c.workload: [cp for cp in c.points if cp.x >= knee]
        for c in curves
        if any(cp.x >= knee for cp in c.points)
    }
    if not above:
        return Finding(claim, NOT_MEASURED, "needs radb or nowsort on bandwidth ≥ 15 MB/s")
    ends = [_spread(analysis, cp) for cps in above.values() for cp in cps]
    if any(e is not None and e[0] >= INSENSITIVE for e in ends):
        verdict = NOT_REPRODUCED
    elif any(e is None for e in ends):
        verdict = TOO_FEW
    else:
        verdict = REPRODUCED if all(e[1] < INSENSITIVE for e in ends if e) else INCONCLUSIVE
    worst = {w: max(cps, key=lambda cp: cp.stat.median) for w, cps in above.items()}
    evidence = "worst slowdown at bandwidth ≥ {:g} MB/s: {}".format(
        BULK_KNEE_MBPS,
        ", ".join(
            f"{w} ×{cp.stat.median:.2f}{_ends_text(analysis, cp)}" for w, cp in worst.items()
        ),
    )
    return Finding(claim, verdict, evidence)


def _ends_text(analysis: Analysis, cp: CurvePoint) -> str:
    ends = _spread(analysis, cp)
    return "" if ends is None else f" [{ends[0]:.2f}, {ends[1]:.2f}]"


def fine_grained_gap(analysis: Analysis, models: Models) -> Finding:
    claim = "Fine-grained one-way communication (Radix, EM3D(write)) is the most sensitive to gap"
    return _steepest(analysis, "gap", FINE_GRAINED, claim, "fine-grained")


ASSESSMENTS: tuple[Callable[[Analysis, Models], Finding], ...] = (
    overhead_dominates,
    readers_latency_bound,
    em3d_latency_model,
    em3d_overhead_underpredicts,
    fine_grained_gap,
    bulk_insensitive,
)


def judged_baseline(analysis: Analysis) -> str:
    """Which network the findings were judged from: the stack's own, or the knobs the
    experiment's baseline set on top of it (e.g. the study's NOW)."""
    settings = {k: v for base in analysis.baselines.values() for k, v in base.knob_values.items()}
    if not settings:
        return "the stack's own performance (no knobs at the baseline)"
    shown = ", ".join(f"{k} {v:g} {knob_info(k).unit}" for k, v in settings.items())
    return f"a baseline of {shown}, added on top of the stack's own costs"


def assess(analysis: Analysis, models: Models) -> list[Finding]:
    """Every finding of the study, each with its verdict from this run."""
    return [a(analysis, models) for a in ASSESSMENTS]
