"""Slowdown figures: one per swept knob, one line per workload, the model dashed, points
with degraded repeats ringed in red, a simulated curve dash-dotted with hollow markers.

The y axis is set by the curves, not by their intervals: it reaches a little above the
largest median (and the model lines, and any interval end within CLIP_FACTOR of that
median).  An interval that reaches further is clipped at the top of the axis and marked
there with a triangle, so one spread-out repeat cannot squash every curve to the bottom
(an interval up to ×130 once did).

Drawn with matplotlib's Agg canvas directly (no pyplot, no global backend state), so the
report works on headless hosts and inside other programs. Each figure is written as PNG
(dpi 120) and SVG.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import Container
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from loggp.analysis.errors import ReportError
from loggp.analysis.knobs import knob_info
from loggp.analysis.model import Models
from loggp.analysis.slowdown import Curve, KnobSummary

DPI = 120
FIGSIZE = (8.0, 4.8)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
# Points with degraded repeats are ringed in red, with one legend entry.
DEGRADED_LABEL = "with degraded repeats"
CLIPPED_LABEL = "interval clipped above"
# Interval ends up to this multiple of the largest median stay on the axis.
CLIP_FACTOR = 1.5
HEADROOM = 1.08
BLACK = (0.0, 0.0, 0.0, 1.0)  # a workload without a colour of its own
# A simulated curve (shim smpi, docs/simulator.md): dash-dotted, hollow markers, and so named
# in the legend, beside or instead of an emulated one.
SIMULATED_STYLE = {"linestyle": "-.", "markerfacecolor": "white"}
SIMULATED_SUFFIX = " (simulated)"
# validate-sim's figures: a simulated point that does not agree with the emulated one.
DISAGREE_LABEL = "simulated, disagrees"
NO_MODELS = Models({}, {})  # the axes of curves drawn without model lines


@dataclass(frozen=True)
class FigureFiles:
    knob: str
    png: Path
    svg: Path


def colours(workloads: Sequence[str]) -> dict[str, tuple[float, float, float, float]]:
    """A fixed colour per workload, the same in every figure of the report."""
    cmap = colormaps["tab10" if len(workloads) <= 10 else "tab20"]
    return {wl: cmap(i % cmap.N) for i, wl in enumerate(workloads)}


def figure_stem(knob: str) -> str:
    return "slowdown_" + re.sub(r"[^A-Za-z0-9_-]", "_", knob)


def workload_stems(prefix: str, workloads: Sequence[str]) -> list[str]:
    """A figure's file stem for each workload: prefix and its name made a file name,
    numbered where two names become one."""
    out: list[str] = []
    for i, workload in enumerate(workloads):
        stem = prefix + re.sub(r"[^A-Za-z0-9_-]", "_", workload)
        out.append(f"{stem}_{i}" if stem in out else stem)
    return out


def draw(
    summary: KnobSummary,
    models: Models,
    colour: dict[str, tuple[float, float, float, float]],
    run_name: str = "",
    simulated: frozenset[str] = frozenset(),
) -> Figure:
    """The slowdown figure of one knob (which must have curves); a curve with points among
    the point ids in simulated is drawn as simulated (SIMULATED_STYLE)."""
    info = knob_info(summary.knob)
    fig, ax = new_axes()
    top = y_top(summary, models, info.log_x)
    handles: list[Artist | Container] = []  # legend order: each workload, then its model
    for i, curve in enumerate(summary.curves):
        sim = any(pid in simulated for cp in curve.points for pid in cp.point_ids)
        xs = draw_curve(ax, curve, i, colour, top, handles, simulated=sim)
        model = models.get(curve.knob, curve.workload)
        if model is None or not model.fits or len(xs) == 0:
            continue
        c = colour.get(curve.workload, BLACK)
        lo, hi = float(xs.min()), float(xs.max())
        grid = np.geomspace(lo, hi, 64) if info.log_x and lo > 0 else np.linspace(lo, hi, 64)
        ym = np.array([model.slowdown(float(x)) for x in grid])
        label = f"{curve.workload} model"
        if model.upper_bound:
            label += " (upper bound)"
        if model.r2 is not None:
            label += f", R² = {model.r2:.3f}"
        (line,) = ax.plot(grid, ym, linestyle="--", linewidth=1.2, color=c, label=label, zorder=3)
        handles.append(line)
    title = info.title if not run_name else f"{info.title} — {run_name}"
    finish_axes(ax, summary.knob, top, title, handles)
    return fig


def new_axes() -> tuple[Figure, Axes]:
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def draw_curve(
    ax: Axes,
    curve: Curve,
    index: int,
    colour: dict[str, tuple[float, float, float, float]],
    top: float,
    handles: list[Artist | Container],
    simulated: bool = False,
) -> np.ndarray:
    """One workload's curve with its intervals (clipped at top and marked) and its rings
    of degraded repeats, its legend entries added to handles; the x values drawn."""
    info = knob_info(curve.knob)
    c = colour.get(curve.workload, BLACK)
    pts = [cp for cp in curve.points if not info.log_x or cp.x > 0]
    xs = np.array([cp.x for cp in pts])
    ys = np.array([cp.stat.median for cp in pts])
    lows = [cp.stat.low if cp.stat.low is not None else cp.stat.median for cp in pts]
    highs = [cp.stat.high if cp.stat.high is not None else cp.stat.median for cp in pts]
    err = np.array(
        [
            [cp.stat.median - low for cp, low in zip(pts, lows, strict=True)],
            [min(high, top) - cp.stat.median for cp, high in zip(pts, highs, strict=True)],
        ]
    )
    style = SIMULATED_STYLE if simulated else {}
    data = ax.errorbar(
        xs,
        ys,
        yerr=err,
        color=c,
        marker=MARKERS[index % len(MARKERS)],
        markersize=5,
        linewidth=1.5,
        capsize=3,
        label=f"{curve.workload}{SIMULATED_SUFFIX if simulated else ''}",
        **style,
    )
    handles.append(data)
    clipped = [cp.x for cp, high in zip(pts, highs, strict=True) if high > top]
    if clipped:
        mark = ax.scatter(
            clipped,
            [top] * len(clipped),
            marker="^",
            s=60,
            color=c,
            clip_on=False,
            zorder=5,
            label=CLIPPED_LABEL,
        )
        if not any(h.get_label() == CLIPPED_LABEL for h in handles):
            handles.append(mark)
    bad = [cp for cp in pts if cp.n_degraded]
    if bad:
        ring = ax.scatter(
            [cp.x for cp in bad],
            [cp.stat.median for cp in bad],
            s=160,
            facecolors="none",
            edgecolors="red",
            linewidths=1.5,
            zorder=4,
            label=DEGRADED_LABEL,
        )
        if not any(h.get_label() == DEGRADED_LABEL for h in handles):
            handles.append(ring)
    return xs


def finish_axes(
    ax: Axes, knob: str, top: float, title: str, handles: Sequence[Artist | Container]
) -> None:
    """The knob's x axis (log and decreasing where its unit asks), y from 0 to top, the
    reference at slowdown 1, labels, grid and the legend of handles beside the axes."""
    info = knob_info(knob)
    ax.axhline(1.0, color="0.5", linewidth=0.8, linestyle=":")
    if info.log_x:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    if info.decreasing_x:
        ax.invert_xaxis()
    ax.set_ylim(0, top)
    ax.set_xlabel(info.axis_label)
    ax.set_ylabel("slowdown (× baseline)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.4)
    if info.log_x:
        ax.grid(True, which="minor", alpha=0.15)
    ax.legend(
        handles=list(handles),
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize="small",
        frameon=False,
    )


def draw_overlay(
    knob: str,
    emulated: KnobSummary | None,
    simulated: KnobSummary | None,
    disagree: Collection[tuple[str, float]],
    colour: dict[str, tuple[float, float, float, float]],
    title: str,
) -> Figure:
    """validate-sim's figure of one knob (loggp/analysis/crossval.py): both runs' curves on
    the same axes, the emulated with its intervals, the simulated drawn as simulated, and
    each simulated point of disagree ((workload, x)) crossed in red.  A workload keeps its
    colour and marker in both runs.  No model lines: the page compares the runs."""
    info = knob_info(knob)
    fig, ax = new_axes()
    runs = [(s, s is simulated) for s in (emulated, simulated) if s is not None]
    top = max(y_top(s, NO_MODELS, info.log_x) for s, _ in runs)
    marker = {wl: i for i, wl in enumerate(colour)}
    handles: list[Artist | Container] = []
    for summary, sim in runs:
        for curve in summary.curves:
            draw_curve(ax, curve, marker.get(curve.workload, 0), colour, top, handles, sim)
    flagged = [
        (cp.x, cp.stat.median)
        for c in (simulated.curves if simulated is not None else ())
        for cp in c.points
        if (c.workload, cp.x) in disagree and (not info.log_x or cp.x > 0)
    ]
    if flagged:
        xs, ys = zip(*flagged, strict=True)
        cross = ax.scatter(xs, ys, marker="x", s=90, color="red", linewidths=2, zorder=6)
        cross.set_label(DISAGREE_LABEL)
        handles.append(cross)
    finish_axes(ax, knob, top, title, handles)
    return fig


def y_top(summary: KnobSummary, models: Models, log_x: bool = False) -> float:
    """The top of the y axis: above every median, model value and interval end up to
    CLIP_FACTOR times the largest median (module docstring)."""
    medians = [cp.stat.median for c in summary.curves for cp in c.points if not log_x or cp.x > 0]
    largest = max([1.0, *medians])
    ends = [
        cp.stat.high
        for c in summary.curves
        for cp in c.points
        if cp.stat.high is not None and cp.stat.high <= CLIP_FACTOR * largest
    ]
    fitted = []
    for c in summary.curves:
        model = models.get(c.knob, c.workload)
        if model is not None and model.fits:
            fitted += [model.slowdown(cp.x) for cp in c.points if not log_x or cp.x > 0]
    return HEADROOM * max([largest, *ends, *fitted])


def write_figures(
    summaries: Sequence[KnobSummary],
    models: Models,
    workloads: Sequence[str],
    out_dir: Path,
    run_name: str = "",
    simulated: frozenset[str] = frozenset(),
) -> list[FigureFiles]:
    """PNG and SVG of every knob that has curves; knobs without curves are skipped; the
    curves of the point ids in simulated drawn as simulated."""
    colour = colours(workloads)
    written: list[FigureFiles] = []
    for summary in summaries:
        if not summary.curves:
            continue
        fig = draw(summary, models, colour, run_name, simulated)
        written.append(save(fig, summary.knob, out_dir / figure_stem(summary.knob)))
    return written


def save(fig: Figure, knob: str, stem: Path) -> FigureFiles:
    """The figure as stem.png (DPI) and stem.svg, without dates that change every run."""
    files = FigureFiles(knob, stem.with_suffix(".png"), stem.with_suffix(".svg"))
    try:
        fig.savefig(files.png, dpi=DPI, metadata={"Software": None})
        fig.savefig(files.svg, metadata={"Date": None})
    except OSError as e:
        raise ReportError(f"{stem}: cannot write figure: {e.strerror or e}") from None
    return files
