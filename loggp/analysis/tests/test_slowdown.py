"""Slowdowns, intervals, baselines and exclusions computed from the standard run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from loggp.analysis.slowdown import Analysis, Curve, analyse, median_ci, order_ranks, slowdown_of
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, app, make_run

pytestmark = pytest.mark.unit


@pytest.fixture
def analysis(tmp_path: Path) -> Analysis:
    return analyse(load_run(make_run(tmp_path)).points)


def curve(a: Analysis, knob: str, workload: str) -> Curve:
    summary = a.knob(knob)
    assert summary is not None
    return next(c for c in summary.curves if c.workload == workload)


def test_order_ranks() -> None:
    assert [order_ranks(n) for n in range(1, 6)] == [None] * 5  # no pair reaches 95 %
    assert order_ranks(6) == (1, pytest.approx(1 - 2 / 64))
    assert order_ranks(9) == (2, pytest.approx(1 - 2 * 10 / 512))
    assert order_ranks(17)[0] == 5  # the textbook table: [x_(5), x_(13)], 95.1 %
    for n in range(6, 60):
        j, coverage = order_ranks(n)
        below = sum(math.comb(n, i) for i in range(j + 1)) / 2**n  # one rank further
        assert coverage >= 0.95 and 1 - 2 * below < 0.95, n


def test_median_ci() -> None:
    s = median_ci([7.0, 1.0, 4.0, 3.0, 6.0, 2.0, 5.0])
    assert (s.median, s.low, s.high, s.n) == (4.0, 1.0, 7.0, 7)
    assert s.coverage == pytest.approx(1 - 2 / 128)
    nine = median_ci([float(v) for v in range(9, 0, -1)])
    assert (nine.median, nine.low, nine.high) == (5.0, 2.0, 8.0)
    outlier = median_ci([1.0, 1.1, 0.9, 1.0, 1.05, 137.0])  # one descheduled repeat
    assert outlier.median == pytest.approx(1.025) and outlier.high == 137.0
    few = median_ci([4.0, 5.0])
    assert (few.median, few.low, few.high, few.coverage) == (4.5, None, None, None)
    with pytest.raises(ValueError):
        median_ci([])


def test_slowdown_of() -> None:
    assert slowdown_of(1.5, 1.0, higher_is_better=False) == 1.5
    assert slowdown_of(500.0, 1000.0, higher_is_better=True) == 2.0


def test_time_curve(analysis: Analysis) -> None:
    base = analysis.baselines["app"]
    assert base.values == (0.9, 1.0, 1.1)
    assert base.median == pytest.approx(1.0)
    c = curve(analysis, "latency", "app")
    assert [cp.x for cp in c.points] == [0.0, 10.0, 100.0]
    assert [cp.baseline for cp in c.points] == [True, False, False]
    b, ten, hundred = (cp.stat for cp in c.points)
    assert b.median == pytest.approx(1.0) and b.n == 3
    assert ten.median == pytest.approx(1.5) and ten.n == 3
    assert hundred.median == pytest.approx(6.0) and hundred.n == 1
    assert (b.low, ten.low, hundred.low) == (None, None, None)  # under six repeats
    assert analysis.slowdown["app/latency=10/r0"] == pytest.approx(1.4)


def test_rate_curve(analysis: Analysis) -> None:
    c = curve(analysis, "latency", "server")
    assert c.higher_is_better and c.metric == "ops_per_s"
    assert [cp.x for cp in c.points] == [0.0, 10.0, 100.0]
    b, ten, hundred = (cp.stat for cp in c.points)
    assert b.median == pytest.approx(1.0)
    assert ten.median == pytest.approx(2.0) and ten.n == 1  # the invalid repeat is left out
    assert hundred.median == pytest.approx(4.5)  # 1000/250 = 4 and 1000/200 = 5


def test_bandwidth_has_no_baseline_point(analysis: Analysis) -> None:
    c = curve(analysis, "bandwidth", "app")
    assert [cp.x for cp in c.points] == [10.0, 100.0]
    assert [cp.stat.median for cp in c.points] == [pytest.approx(2.0), pytest.approx(1.1)]


def test_excluded_and_no_baseline(analysis: Analysis) -> None:
    reasons = {x.point.point_id: x.reason for x in analysis.excluded}
    assert reasons == {
        "app/latency=1000/r0": "failed (exit 1)",
        "app/gap=10/r0": "timeout (exit 124)",
        "server/latency=10/r1": "invalid: the workload's own check of its output failed",
    }
    assert analysis.no_baseline == {"orphan": "no baseline points recorded"}
    assert "orphan/latency=10/r0" not in analysis.slowdown
    latency = analysis.knob("latency")
    assert latency is not None
    assert latency.no_baseline == ("orphan",)
    assert [c.workload for c in latency.curves] == ["app", "server"]
    assert latency.why_no_figure is None
    assert (latency.n_points, latency.n_ok) == (10, 8)


def test_all_failed_knob_has_no_curves(analysis: Analysis) -> None:
    gap = analysis.knob("gap")
    assert gap is not None
    assert gap.curves == ()
    assert gap.why_no_figure == "all 1 point(s) failed"
    order = [k.knob for k in analysis.knobs]
    assert order == ["overhead", "send_overhead", "gap", "latency", "bulk_gap", "bandwidth"]


def test_failed_baseline_and_mismatched_metric(tmp_path: Path) -> None:
    rows = [
        app("baseline", None, 0, None, status="failed"),
        app("latency", 10, 0, 2.0),
        Row("w", "baseline", None, 0, 2.0),
        Row("w", "latency", 10, 0, 4.0),
        Row("w", "latency", 10, 1, 4.0, metric="lat_us"),
        Row("w", "latency", 20, 0, 0.0),
    ]
    a = analyse(load_run(make_run(tmp_path, rows)).points)
    assert a.no_baseline == {"app": "all 1 baseline point(s) failed"}
    latency = a.knob("latency")
    assert latency is not None and latency.no_baseline == ("app",)
    reasons = {x.point.point_id: x.reason for x in a.excluded}
    assert reasons["w/latency=10/r1"] == "metric lat_us differs from the baseline's time_s"
    assert reasons["w/latency=20/r0"] == "ok but value 0 is not positive"
    assert a.slowdown["w/latency=10/r0"] == pytest.approx(2.0)


def test_sweep_through_zero_keeps_its_own_point(tmp_path: Path) -> None:
    rows = [
        Row("w", "baseline", None, 0, 2.0),
        Row("w", "latency", 0, 0, 2.2),
        Row("w", "latency", 5, 0, 3.0),
    ]
    a = analyse(load_run(make_run(tmp_path, rows)).points)
    summary = a.knob("latency")
    assert summary is not None
    (c,) = summary.curves
    assert [(cp.x, cp.baseline) for cp in c.points] == [(0.0, False), (5.0, False)]
    assert c.points[0].stat.median == pytest.approx(1.1)


def test_grid_cells(tmp_path: Path) -> None:
    kv = {"latency": 10.0, "gap": 5.0}
    rows = [
        Row("w", "baseline", None, 0, 2.0),
        Row("w", "grid", None, 0, 3.0, knob_values=kv),
        Row("w", "grid", None, 1, 5.0, knob_values=kv),
    ]
    a = analyse(load_run(make_run(tmp_path, rows)).points)
    (cell,) = a.grid
    assert cell.knob_values == kv
    assert cell.stat.median == pytest.approx(2.0)
    assert cell.stat.n == 2
    assert a.knobs == ()
