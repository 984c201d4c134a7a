"""The LogGP model line: predicted slowdown from a workload's message counts.

With T0 the baseline run time, m = msgs.critical_path (messages whose latencies add up in
sequence on the critical path), S and R = msgs.critical_sends and msgs.critical_recvs (the
sends and receives on the critical path, each paying its overhead; both default to m) and
B = msgs.critical_bytes (bytes on that path), adding Δ to a knob predicts

    overhead        T = T0 + (S+R)·Δo      (= 2·m·Δo when S = R = m)
    send_overhead   T = T0 + S·Δo_s
    recv_overhead   T = T0 + R·Δo_r
    gap             T ≤ T0 + S·Δg          (the port spaces every send on the path by g;
                                            an upper bound: g overlaps with other work)
    latency         T = T0 + m·ΔL
    bulk_gap        T = T0 + B·ΔG
    bandwidth       T = T0 + B/BW

and slowdown(Δ) = T(Δ) / T0. Δ is measured from the baseline's own setting of the knob (0
when the baseline leaves it unset, unlimited bandwidth for `bandwidth`). For a rate metric
the slowdown is still T(Δ) / T0, with T0 the baseline's median `metrics.time_s`.

R² = 1 - Σ(s_i - ŝ_i)² / Σ(s_i - s̄)² over the curve's measured median slowdowns s_i and
the model's ŝ_i at the same Δ: 1 means the counts explain the curve exactly, 0 means the
model does no better than a flat line at the mean, and a negative value means it does worse.
A model *fits* (and the report draws its line) when R² ≥ MIN_R2, or, on a curve too flat
for R² to mean anything, when no measured slowdown is further than FLAT_SLOWDOWN from the
model's; an upper bound (gap) fits when no measured slowdown exceeds it by more than
FLAT_SLOWDOWN. The table shows R² and the largest error either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from loggp.analysis.slowdown import Analysis, Baseline, Curve, baseline_x, median_ci
from loggp.results.reader import StoredPoint

# A curve whose median slowdowns span less than this has no R² (it is "flat").
FLAT_SLOWDOWN = 0.1
# The least R² at which a model line is drawn.
MIN_R2 = 0.5
FIT_RULE = (
    f"R² ≥ {MIN_R2}, or on a flat curve every point within ×{FLAT_SLOWDOWN} of it; "
    f"an upper bound fits when no point is more than ×{FLAT_SLOWDOWN} above it"
)

US = 1e-6
NS = 1e-9
MB = 1e6


def _per_us(x: float) -> float:
    return x * US


def _per_ns(x: float) -> float:
    return x * NS


def _per_mb_s(x: float) -> float:
    return 1.0 / (x * MB) if x > 0 else math.inf


@dataclass(frozen=True)
class _Term:
    count: str  # a MsgCounts field or property: critical_path, critical_bytes, ..._count
    multiplier: int
    seconds: Callable[[float], float]  # knob value -> seconds per message or per byte
    equation: str
    upper_bound: bool = False


_TERMS: dict[str, _Term] = {
    "overhead": _Term("overhead_count", 1, _per_us, "T = T0 + (S+R)·Δo"),
    "send_overhead": _Term("send_count", 1, _per_us, "T = T0 + S·Δo_s"),
    "recv_overhead": _Term("recv_count", 1, _per_us, "T = T0 + R·Δo_r"),
    "gap": _Term("send_count", 1, _per_us, "T ≤ T0 + S·Δg", upper_bound=True),
    "latency": _Term("critical_path", 1, _per_us, "T = T0 + m·ΔL"),
    "bulk_gap": _Term("critical_bytes", 1, _per_ns, "T = T0 + B·ΔG"),
    "bandwidth": _Term("critical_bytes", 1, _per_mb_s, "T = T0 + B/BW"),
}

# What a workload must report for each count (the ..._count ones default to critical_path).
_COUNT_SOURCE = {
    "overhead_count": "critical_path",
    "send_count": "critical_path",
    "recv_count": "critical_path",
}

# metric name suffix -> seconds per unit; rates (_per_s) are not times
_TIME_SUFFIXES = (("_per_s", None), ("_ns", NS), ("_us", US), ("_ms", 1e-3), ("_s", 1.0))


def metric_seconds(metric: str) -> float | None:
    """Seconds per unit of a time metric (time_s -> 1, lat_us -> 1e-6), None otherwise."""
    for suffix, scale in _TIME_SUFFIXES:
        if metric.endswith(suffix):
            return scale
    return None


@dataclass(frozen=True)
class Model:
    """The model line of one workload on one knob."""

    knob: str
    workload: str
    t0_s: float  # baseline run time
    count: float  # m, S+R, S, R (messages) or B (bytes) on the critical path
    count_name: str  # the _Term's count
    base_cost_s: float  # seconds per message/byte at the baseline's setting of the knob
    r2: float | None  # against the measured curve; None when it has no spread
    max_error: float  # largest |measured - model| slowdown over the curve's points
    max_over: float  # largest measured - model (how far the data exceed the line)

    @property
    def equation(self) -> str:
        return _TERMS[self.knob].equation

    @property
    def upper_bound(self) -> bool:
        return _TERMS[self.knob].upper_bound

    @property
    def fits(self) -> bool:
        """Whether the line follows the measured curve (FIT_RULE)."""
        if self.upper_bound:
            return self.max_over <= FLAT_SLOWDOWN
        if self.r2 is not None:
            return self.r2 >= MIN_R2
        return self.max_error <= FLAT_SLOWDOWN

    def time_s(self, x: float) -> float:
        term = _TERMS[self.knob]
        return self.t0_s + term.multiplier * self.count * (term.seconds(x) - self.base_cost_s)

    def slowdown(self, x: float) -> float:
        return self.time_s(x) / self.t0_s


def r_squared(measured: Sequence[float], predicted: Sequence[float]) -> float | None:
    """Coefficient of determination; None with fewer than 2 points or no spread."""
    if len(measured) != len(predicted):
        raise ValueError("measured and predicted differ in length")
    if len(measured) < 2:
        return None
    mean = math.fsum(measured) / len(measured)
    ss_tot = math.fsum((m - mean) ** 2 for m in measured)
    if ss_tot == 0:
        return None
    ss_res = math.fsum((m - p) ** 2 for m, p in zip(measured, predicted, strict=True))
    return 1.0 - ss_res / ss_tot


@dataclass(frozen=True)
class Models:
    fits: dict[tuple[str, str], Model]  # (knob, workload) -> model
    skipped: dict[tuple[str, str], str]  # (knob, workload) -> why there is no model line

    def get(self, knob: str, workload: str) -> Model | None:
        return self.fits.get((knob, workload))


def fit_models(analysis: Analysis, points: Iterable[StoredPoint]) -> Models:
    """A model line for every curve whose workload reported the counts the knob needs."""
    by_id = {p.point_id: p for p in points}
    fits: dict[tuple[str, str], Model] = {}
    skipped: dict[tuple[str, str], str] = {}
    for summary in analysis.knobs:
        for curve in summary.curves:
            key = (curve.knob, curve.workload)
            base = analysis.baselines[curve.workload]
            result = _fit(curve, base, by_id)
            if isinstance(result, Model):
                fits[key] = result
            else:
                skipped[key] = result
    return Models(fits, skipped)


def _fit(curve: Curve, base: Baseline, by_id: Mapping[str, StoredPoint]) -> Model | str:
    term = _TERMS.get(curve.knob)
    if term is None:
        return f"no model for knob {curve.knob}"
    t0 = _baseline_seconds(base, by_id)
    if t0 is None:
        return f"metric {base.metric} is not a time and the result has no metrics.time_s"
    if t0 <= 0:
        return "baseline time is not positive"
    swept = [pid for cp in curve.points if not cp.baseline for pid in cp.point_ids]
    count = _mean_count(base.point_ids, term.count, by_id)
    if count is None:
        count = _mean_count(swept, term.count, by_id)
    if count is None:
        return f"no msgs.{_COUNT_SOURCE.get(term.count, term.count)} reported"
    bx = baseline_x(curve.knob, base)
    base_cost = 0.0 if bx is None else term.seconds(bx)
    model = Model(curve.knob, curve.workload, t0, count, term.count, base_cost, None, 0.0, 0.0)
    measured = [cp.stat.median for cp in curve.points]
    predicted = [model.slowdown(cp.x) for cp in curve.points]
    # R² divides by the curve's own spread: on a curve that hardly moves, noise alone
    # would make it hugely negative although the model predicts "no slowdown" well.
    flat = max(measured) - min(measured) < FLAT_SLOWDOWN
    finite = all(map(math.isfinite, predicted))
    r2 = r_squared(measured, predicted) if finite and not flat else None
    over = [m - p for m, p in zip(measured, predicted, strict=True)]
    max_error = max(map(abs, over)) if finite else math.inf
    max_over = max(over) if finite else -math.inf
    return Model(
        curve.knob, curve.workload, t0, count, term.count, base_cost, r2, max_error, max_over
    )


def _baseline_seconds(base: Baseline, by_id: Mapping[str, StoredPoint]) -> float | None:
    scale = metric_seconds(base.metric)
    if scale is not None and not base.higher_is_better:
        return base.median * scale
    times = [by_id[pid].result_metric("time_s") for pid in base.point_ids]
    known = [t for t in times if t is not None]
    return median_ci(known).median if known else None


def _mean_count(ids: Iterable[str], name: str, by_id: Mapping[str, StoredPoint]) -> float | None:
    counts = [getattr(by_id[pid].msgs, name) for pid in ids]
    known = [c for c in counts if c is not None]
    return math.fsum(known) / len(known) if known else None
