"""The drawn figures: axes, units, legend, model line and the files written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import imread

from loggp.analysis.figures import colours, draw, write_figures
from loggp.analysis.model import Models, fit_models
from loggp.analysis.slowdown import Analysis, analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, make_run

pytestmark = pytest.mark.unit


@pytest.fixture
def fitted(tmp_path: Path) -> tuple[Analysis, Models]:
    run = load_run(make_run(tmp_path))
    a = analyse(run.points)
    return a, fit_models(a, run.points)


def figure_of(fitted: tuple[Analysis, Models], knob: str) -> Figure:
    a, models = fitted
    summary = a.knob(knob)
    assert summary is not None
    return draw(summary, models, colours(a.workloads), "unit-demo")


def test_latency_figure(fitted: tuple[Analysis, Models]) -> None:
    fig = figure_of(fitted, "latency")
    (ax,) = fig.axes
    assert ax.get_xlabel() == "ΔL: added latency (µs)"
    assert ax.get_ylabel() == "slowdown (× baseline)"
    assert "Sensitivity to latency" in ax.get_title()
    assert ax.get_xscale() == "linear"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["app", "app model, R² = 1.000", "server"]
    # the model line is dashed, in the workload's colour, and passes through 6.0 at 100 µs
    (model_line,) = [ln for ln in ax.get_lines() if ln.get_label() == "app model, R² = 1.000"]
    assert model_line.get_linestyle() == "--"
    x, y = model_line.get_data()
    assert x[0] == 0.0 and x[-1] == 100.0
    assert y[-1] == pytest.approx(6.0)
    assert model_line.get_color() == colours(fitted[0].workloads)["app"]
    bottom, top = ax.get_ylim()
    assert bottom == 0 and top > 6.0


def test_bandwidth_axis_is_log_and_decreasing(fitted: tuple[Analysis, Models]) -> None:
    (ax,) = figure_of(fitted, "bandwidth").axes
    assert ax.get_xscale() == "log"
    assert ax.xaxis_inverted()
    assert ax.get_xlabel() == "bandwidth (MB/s)"


def test_gap_model_is_labelled_upper_bound(tmp_path: Path) -> None:
    msgs = {"critical_path": 1000}
    rows = [
        Row("w", "baseline", None, 0, 1.0, msgs=msgs),
        Row("w", "gap", 100, 0, 1.05, msgs=msgs),
        Row("w", "gap", 200, 0, 1.1, msgs=msgs),
    ]
    run = load_run(make_run(tmp_path, rows))
    a = analyse(run.points)
    summary = a.knob("gap")
    assert summary is not None
    (ax,) = draw(summary, fit_models(a, run.points), colours(a.workloads)).axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0] == "w"
    assert legend[1].startswith("w model (upper bound), R² = ")


def test_write_figures(tmp_path: Path, fitted: tuple[Analysis, Models]) -> None:
    a, models = fitted
    out = tmp_path / "figs"
    out.mkdir()
    files = write_figures(a.knobs, models, a.workloads, out, "unit-demo")
    knobs = [f.knob for f in files]
    assert knobs == ["overhead", "send_overhead", "latency", "bulk_gap", "bandwidth"]  # no gap
    for f in files:
        img = imread(f.png)
        assert img.ndim == 3 and img.shape[2] in (3, 4)
        assert img.shape[0] >= 400 and img.shape[1] >= 700  # 8 x 4.8 in at dpi 120
        assert np.ptp(img) > 0  # something was drawn
        svg = f.svg.read_text()
        assert "<svg" in svg and "</svg>" in svg
    assert not (out / "slowdown_gap.png").exists()


def test_model_that_does_not_fit_is_not_drawn(tmp_path: Path) -> None:
    """A model far from the data (R² < 0.5) gets no line; six repeats get asymmetric
    error bars from the order statistics around the median."""
    msgs = {"critical_path": 100_000}  # predicts ×2 and ×11 at 10 and 100 µs
    rows = [Row("w", "baseline", None, r, v, msgs=msgs) for r, v in enumerate([1.0] * 6)]
    rows += [Row("w", "latency", 10, r, v, msgs=msgs)
             for r, v in enumerate([1.0, 1.1, 1.2, 1.3, 1.4, 1.5])]  # fmt: skip
    rows += [Row("w", "latency", 100, r, 1.4, msgs=msgs) for r in range(6)]
    run = load_run(make_run(tmp_path, rows))
    a = analyse(run.points)
    models = fit_models(a, run.points)
    model = models.get("latency", "w")
    assert model is not None and model.r2 is not None and model.r2 < 0.5
    assert not model.fits
    summary = a.knob("latency")
    assert summary is not None
    (ax,) = draw(summary, models, colours(a.workloads)).axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["w"]
    (ten,) = [cp for cp in summary.curves[0].points if cp.x == 10]
    assert (ten.stat.median, ten.stat.low, ten.stat.high) == (1.25, 1.0, 1.5)


def test_a_wide_interval_is_clipped_and_marked_not_stretching_the_axis(tmp_path: Path) -> None:
    """Six repeats spread from ×2 to ×130 (too spread for any to be an outlier) draw the
    curve on an axis set by the medians, the interval cut at the top and marked there."""
    rows = [Row("w", "baseline", None, r, 1.0) for r in range(6)]
    rows += [Row("w", "latency", 10, r, v) for r, v in enumerate((2, 3, 4, 100, 120, 130))]
    run = load_run(make_run(tmp_path, rows))
    a = analyse(run.points)
    summary = a.knob("latency")
    (cp,) = [cp for cp in summary.curves[0].points if not cp.baseline]
    assert (cp.stat.median, cp.stat.high) == (52.0, 130.0) and not a.outliers
    (ax,) = draw(summary, fit_models(a, run.points), colours(a.workloads)).axes
    bottom, top = ax.get_ylim()
    assert bottom == 0 and 52.0 < top < 60.0
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "interval clipped above" in legend
    (marks,) = [c for c in ax.collections if c.get_label() == "interval clipped above"]
    assert marks.get_offsets().tolist() == [[10.0, top]]
