"""The Berkeley study's findings next to what a run measured.

Martin, Vahdat, Culler and Anderson (ISCA'97; [LogGP] in docs/design.md) report, for Split-C
applications on a NOW, how run time grows with added overhead, gap, latency and bulk
gap.  Each finding below is assessed from this run's curves and model lines only: a
verdict is `reproduced`, `not reproduced` or `not measured` (the run lacks the workloads
or knobs it needs), with the numbers that decided it.

Workloads are recognised by name (case, '-' and '_' ignored): em3d_read / em3dread,
em3d_write, radix, radb, sample, connect, barnes, nowsort, as the sensitivity suite names
them; finding 1 uses every workload.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from analysis.knobs import knob_info
from analysis.model import Models
from analysis.slowdown import Analysis, Curve

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_MEASURED = "not measured"

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


def _slope(curve: Curve) -> float | None:
    """Added slowdown per unit of Δ at the largest Δ measured: (s - 1) / Δ, with Δ the
    swept value minus the baseline's (a baseline emulating the study's network sets it)."""
    far = max((cp for cp in curve.points if not cp.baseline), key=lambda cp: cp.x, default=None)
    if far is None or far.x <= _base_x(curve):
        return None
    return (far.stat.median - 1.0) / (far.x - _base_x(curve))


def _slopes(analysis: Analysis, knob: str, keys: Sequence[str] | None = None) -> dict[str, float]:
    summary = analysis.knob(knob)
    if summary is None:
        return {}
    out: dict[str, float] = {}
    for c in summary.curves:
        if keys is not None and _key(c.workload) not in keys:
            continue
        s = _slope(c)
        if s is not None:
            out[c.workload] = s
    return out


def _fmt(slopes: dict[str, float], unit: str) -> str:
    return ", ".join(f"{w} {s:.3g}{unit}" for w, s in slopes.items())


def overhead_dominates(analysis: Analysis, models: Models) -> Finding:
    claim = (
        "Applications are most sensitive to overhead: per µs added, Δo slows them more "
        "than ΔL (the study: up to ×50 at Δo ≈ 100 µs)"
    )
    o, lat = _slopes(analysis, "overhead"), _slopes(analysis, "latency")
    both = [w for w in o if w in lat]
    if not both:
        return Finding(claim, NOT_MEASURED, "needs workloads swept on both overhead and latency")
    more = [w for w in both if o[w] >= lat[w]]
    verdict = REPRODUCED if len(more) * 2 > len(both) else NOT_REPRODUCED
    worst = max(both, key=lambda w: o[w])
    evidence = (
        f"{len(more)} of {len(both)} workloads slow more per µs of Δo than of ΔL "
        f"(slowdown per µs: overhead {_fmt({w: o[w] for w in both}, '')}; "
        f"latency {_fmt({w: lat[w] for w in both}, '')}); steepest under overhead: {worst}"
    )
    return Finding(claim, verdict, evidence)


def readers_latency_bound(analysis: Analysis, models: Models) -> Finding:
    claim = (
        "Applications that do blocking remote reads (EM3D(read), Barnes, Connect) are the "
        "most latency-sensitive; the others largely ignore added latency"
    )
    slopes = _slopes(analysis, "latency")
    readers = {w: s for w, s in slopes.items() if _key(w) in READERS}
    others = {w: s for w, s in slopes.items() if _key(w) not in READERS}
    if not readers or not others:
        return Finding(claim, NOT_MEASURED, "needs reading and non-reading workloads on latency")
    ok = min(readers.values()) > max(others.values())
    evidence = f"slowdown per µs of ΔL: readers {_fmt(readers, '')}; others {_fmt(others, '')}"
    return Finding(claim, REPRODUCED if ok else NOT_REPRODUCED, evidence)


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
    ok = far.stat.median > predicted
    return Finding(
        claim,
        REPRODUCED if ok else NOT_REPRODUCED,
        f"at Δo = {far.x - _base_x(curve):g} µs measured ×{far.stat.median:.2f}, "
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
        c.workload: max(cp.stat.median for cp in c.points if cp.x >= knee)
        for c in curves
        if any(cp.x >= knee for cp in c.points)
    }
    if not above:
        return Finding(claim, NOT_MEASURED, "needs radb or nowsort on bandwidth ≥ 15 MB/s")
    ok = all(s < INSENSITIVE for s in above.values())
    evidence = "worst slowdown at bandwidth ≥ {:g} MB/s: {}".format(
        BULK_KNEE_MBPS, ", ".join(f"{w} ×{s:.2f}" for w, s in above.items())
    )
    return Finding(claim, REPRODUCED if ok else NOT_REPRODUCED, evidence)


def fine_grained_gap(analysis: Analysis, models: Models) -> Finding:
    claim = "Fine-grained one-way communication (Radix, EM3D(write)) is the most sensitive to gap"
    slopes = _slopes(analysis, "gap")
    fine = {w: s for w, s in slopes.items() if _key(w) in FINE_GRAINED}
    others = {w: s for w, s in slopes.items() if _key(w) not in FINE_GRAINED}
    if not fine or not others:
        return Finding(claim, NOT_MEASURED, "needs radix or em3d_write and others on gap")
    ok = min(fine.values()) > max(others.values())
    evidence = f"slowdown per µs of Δg: fine-grained {_fmt(fine, '')}; others {_fmt(others, '')}"
    return Finding(claim, REPRODUCED if ok else NOT_REPRODUCED, evidence)


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
