"""Drawn delays against the configured distribution: the shims' own histograms of the ΔL
each message got, beside the distribution the run named, and how far apart they are.

A run with a delay distribution (`emulator.latency_dist` or LOGGP_LATENCY_DIST; run.json's
`provenance.delay_distribution`) stores with each point the shims' histograms of the
delays they drew (`delay_hist`, buckets of `delay_bucket_ns`: the fabric shim's per
process, the wire's per port; emulator/core/include/lgp/stats.h).  For each workload this
draws the measured point with the most drawn delays: the measured CDF at the buckets'
edges (exact there) over the configured one, and their Kolmogorov-Smirnov distance at
those edges, the shims' own error.

The configured CDF is the one the shims draw from (emulator/core/include/lgp/dist.h): ΔL =
latency + spread · Q(u), Q the shape's quantile function in units of the spread, clipped to
[-4, 32767/8192] as netem's tables are, a delay below zero drawn as 0; an empirical file's
delays each equally likely, plus latency.  It is tabulated at TABLE steps of u (the shims
tabulate 4096 and interpolate).  A correlation above 0 narrows the spread of the drawn
delays (netem's correlation does); the curve drawn is then still the uncorrelated
shape's, and the figure says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from loggp.analysis.figures import save, workload_stems
from loggp.analysis.pairs import FIGSIZE
from loggp.errors import KnobError
from loggp.plan.knobs import parse_knob
from loggp.results.protocol import DELAY_BUCKETS
from loggp.results.reader import StoredPoint

STEM_PREFIX = "delays_"
TABLE = 16384  # steps of u the configured CDF is tabulated at
Z_LOW, Z_HIGH = -4.0, 32767 / 8192  # netem's 16-bit tables' range, in spreads
_NORMAL = NormalDist()


def quantile(shape: str, u: np.ndarray) -> np.ndarray:
    """Q(u) of a parametric shape, in units of its spread, clipped as the shims clip it."""
    if shape == "uniform":
        z = 2 * u - 1
    elif shape == "normal":
        z = _normal_q(u)
    elif shape == "pareto":
        z = _pareto_q(u)
    elif shape == "paretonormal":
        z = (_normal_q(u) + 3 * _pareto_q(u)) / 4
    else:
        raise ValueError(f"no quantile function for shape {shape!r}")
    return np.clip(z, Z_LOW, Z_HIGH)


def _normal_q(u: np.ndarray) -> np.ndarray:
    return np.array([_NORMAL.inv_cdf(float(x)) for x in u])


def _pareto_q(u: np.ndarray) -> np.ndarray:
    """Pareto of shape 3 and scale 1 around its mean 1.5, scaled by 4/3."""
    return ((1 - u) ** (-1 / 3) - 1.5) * 4 / 3


def configured_delays(spec: str, latency_ns: float) -> np.ndarray | None:
    """The configured distribution as TABLE equally likely delays in ns, sorted (its
    quantiles), or None for constant ones and an empirical file that cannot be read."""
    shape, _, arg = spec.partition(":")
    if shape == "empirical":
        try:
            lines = Path(arg).read_text().splitlines()
            drawn = [parse_knob("latency", ln.strip()) for ln in lines if _is_delay(ln)]
        except (OSError, KnobError):
            return None
        values = np.array(drawn, dtype=float) + latency_ns
    elif shape in ("uniform", "normal", "pareto", "paretonormal"):
        u = (np.arange(TABLE) + 0.5) / TABLE
        values = latency_ns + parse_knob("latency", arg) * quantile(shape, u)
    else:
        return None
    return np.sort(np.maximum(values, 0.0))


def _is_delay(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")


@dataclass(frozen=True)
class Drawn:
    """One point's drawn delays: the histogram summed over its lines, and what they were
    drawn around."""

    workload: str
    point_id: str
    bucket_ns: int
    counts: np.ndarray  # DELAY_BUCKETS; the last counts delays raised to keep order
    latency_ns: float

    @property
    def edges_ns(self) -> np.ndarray:
        """The right edge of every bucket but the last."""
        return self.bucket_ns * np.arange(1, DELAY_BUCKETS)

    @property
    def cdf(self) -> np.ndarray:
        """The measured CDF at edges_ns (exact: a bucket holds [kW, (k+1)W))."""
        return np.cumsum(self.counts)[:-1] / self.counts.sum()


def _latency_ns(p: StoredPoint, line: dict[str, Any]) -> float:
    if "delay_latency_ns" in line:  # the wire's port says what it drew around
        return float(line["delay_latency_ns"])
    return p.knob_values.get("latency", 0.0) * 1000  # the point's ΔL, in µs


def drawn(p: StoredPoint) -> Drawn | None:
    """p's drawn delays, summed over its lines of one bucket width (the first line's)."""
    lines = [ln for ln in p.shim_stats if "delay_hist" in ln and ln.get("delay_bucket_ns")]
    if not lines:
        return None
    width = int(lines[0]["delay_bucket_ns"])
    same = [ln for ln in lines if int(ln["delay_bucket_ns"]) == width]
    counts = np.sum([np.array(ln["delay_hist"], dtype=float) for ln in same], axis=0)
    if counts.sum() == 0:
        return None
    return Drawn(p.workload, p.point_id, width, counts, _latency_ns(p, same[0]))


def ks_distance(d: Drawn, configured: np.ndarray) -> float:
    """The largest gap between the measured and the configured CDF at d's bucket edges."""
    want = np.searchsorted(configured, d.edges_ns, side="left") / len(configured)
    return float(np.max(np.abs(d.cdf - want)))


def most_drawn(points: Sequence[StoredPoint]) -> list[Drawn]:
    """Per workload, the measured point with the most drawn delays (the first of equals)."""
    best: dict[str, Drawn] = {}
    for p in points:
        if not p.measured:
            continue
        d = drawn(p)
        if d is None:
            continue
        held = best.get(p.workload)
        if held is None or d.counts.sum() > held.counts.sum():
            best[p.workload] = d
    return list(best.values())


def draw(d: Drawn, spec: str, corr: str | None) -> Figure:
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    x_us = np.concatenate([[0.0], d.edges_ns / 1000])
    ax.step(x_us, np.concatenate([[0.0], d.cdf]), where="post", label="drawn (the shims' count)")
    configured = configured_delays(spec, d.latency_ns)
    title = f"{d.workload}: {d.point_id}, {int(d.counts.sum())} delays of {spec}"
    if configured is not None:
        ax.plot(configured / 1000, (np.arange(len(configured)) + 1) / len(configured),
                label="configured", color="C1")  # fmt: skip
        title += f"; KS distance {ks_distance(d, configured):.3f}"
    if corr and float(corr) > 0:
        title += f"\n(correlation {corr} narrows the drawn spread; the curve is uncorrelated)"
    top = d.edges_ns[np.searchsorted(d.cdf, 0.999)] if d.cdf[-1] >= 0.999 else d.edges_ns[-1]
    ax.set_xlim(0, top / 1000 * 1.05)
    ax.set_xlabel("ΔL drawn (µs)")
    ax.set_ylabel("share of messages at or below")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title(title, fontsize=9)
    return fig


def distribution(provenance: dict[str, Any]) -> dict[str, Any] | None:
    """The run's delay distribution (provenance.delay_distribution), None for constant."""
    dist = provenance.get("delay_distribution")
    if not isinstance(dist, dict) or dist.get("latency_dist", "constant") == "constant":
        return None
    return dist


def stems(found: Sequence[Drawn]) -> list[str]:
    return workload_stems(STEM_PREFIX, [d.workload for d in found])


def write_delay_figures(found: Sequence[Drawn], dist: dict[str, Any], out_dir: Path) -> list[Path]:
    """PNG and SVG of each workload's drawn delays (most_drawn) beneath the run's
    distribution (distribution()); returns the PNGs."""
    spec, corr = str(dist["latency_dist"]), dist.get("latency_corr")
    named = zip(found, stems(found), strict=True)
    return [save(draw(d, spec, corr), "", out_dir / name).png for d, name in named]
