"""The LogGP model line against the standard run's hand-made counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.analysis.model import Model, Models, fit_models, metric_seconds, r_squared
from loggp.analysis.slowdown import analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import APP_MSGS, Row, app, make_run

pytestmark = pytest.mark.unit

M = 50000  # msgs.critical_path of app
B = 10_000_000  # msgs.critical_bytes of app


@pytest.fixture
def models(tmp_path: Path) -> Models:
    run = load_run(make_run(tmp_path))
    return fit_models(analyse(run.points), run.points)


def fit(models: Models, knob: str, workload: str = "app") -> Model:
    m = models.get(knob, workload)
    assert m is not None, models.skipped.get((knob, workload))
    return m


def test_latency_model_is_exact(models: Models) -> None:
    m = fit(models, "latency")
    assert m.t0_s == pytest.approx(1.0)
    assert m.count == M
    assert m.slowdown(0.0) == pytest.approx(1.0)
    assert m.slowdown(10.0) == pytest.approx(1.0 + M * 10e-6)  # 1.5
    assert m.slowdown(100.0) == pytest.approx(6.0)
    assert m.r2 == pytest.approx(1.0)
    assert not m.upper_bound


def test_overhead_counts_both_sides(models: Models) -> None:
    m = fit(models, "overhead")
    assert m.slowdown(5.0) == pytest.approx(1.0 + 2 * M * 5e-6)
    assert m.slowdown(10.0) == pytest.approx(2.0)
    assert m.r2 == pytest.approx(1.0)
    assert m.equation == "T = T0 + (S+R)·Δo"
    assert m.count == 2 * M  # S = R = m when the workload reports only critical_path


def test_sends_and_receives_counted_apart() -> None:
    """A workload that waits once per step for messages received in parallel reports
    critical_path = steps but S = R = 2 per step: Δo costs 4 per step, ΔL 1."""
    from loggp.results.protocol import MsgCounts

    c = MsgCounts(critical_path=100, critical_sends=200, critical_recvs=200)
    assert (c.send_count, c.recv_count, c.overhead_count) == (200, 200, 400)
    d = MsgCounts(critical_path=100)
    assert (d.send_count, d.recv_count, d.overhead_count) == (100, 100, 200)
    assert MsgCounts().overhead_count is None


def test_send_overhead_r2(models: Models) -> None:
    m = fit(models, "send_overhead")
    assert m.slowdown(10.0) == pytest.approx(1.5)
    assert m.slowdown(20.0) == pytest.approx(2.0)
    # measured 1, 2, 2 against predicted 1, 1.5, 2: 1 - 0.25 / (2/3)
    assert m.r2 == pytest.approx(1 - 0.25 / (2 / 3))


def test_bytes_models(models: Models) -> None:
    bw = fit(models, "bandwidth")
    assert bw.count_name == "critical_bytes" and bw.count == B
    assert bw.slowdown(100.0) == pytest.approx(1.0 + B / 100e6)  # 1.1
    assert bw.slowdown(10.0) == pytest.approx(2.0)
    assert bw.r2 == pytest.approx(1.0)
    bg = fit(models, "bulk_gap")
    assert bg.slowdown(100.0) == pytest.approx(1.0 + B * 100e-9)
    assert bg.r2 == pytest.approx(1.0)


def test_skipped_without_counts(models: Models) -> None:
    assert models.get("latency", "server") is None
    assert models.skipped[("latency", "server")] == "no msgs.critical_path reported"
    assert ("latency", "orphan") not in models.skipped  # no curve at all


def test_rate_model_uses_time_s_and_delta_from_baseline(tmp_path: Path) -> None:
    msgs = {"critical_path": 1000}
    rows = [
        Row("r", "baseline", None, 0, 100.0, metric="ops_per_s", higher_is_better=True,
            msgs=msgs, metrics={"time_s": 0.5}, knob_values={"latency": 5.0}),
        Row("r", "latency", 105, 0, 50.0, metric="ops_per_s", higher_is_better=True,
            msgs=msgs, metrics={"time_s": 1.0}),
        Row("q", "baseline", None, 0, 100.0, metric="ops_per_s", higher_is_better=True),
        Row("q", "latency", 10, 0, 50.0, metric="ops_per_s", higher_is_better=True,
            msgs=msgs),
    ]  # fmt: skip
    run = load_run(make_run(tmp_path, rows))
    models = fit_models(analyse(run.points), run.points)
    m = fit(models, "latency", "r")
    assert m.t0_s == pytest.approx(0.5)
    assert m.slowdown(5.0) == pytest.approx(1.0)  # the baseline's own setting is Δ = 0
    assert m.slowdown(105.0) == pytest.approx(1.0 + 1000 * 100e-6 / 0.5)  # 1.2
    assert "time_s" in models.skipped[("latency", "q")]


def test_counts_from_sweep_points_when_baseline_has_none(tmp_path: Path) -> None:
    rows = [Row("w", "baseline", None, 0, 1.0), app("latency", 10, 0, 1.5)]
    rows[1].workload = "w"
    run = load_run(make_run(tmp_path, rows))
    m = fit(fit_models(analyse(run.points), run.points), "latency", "w")
    assert m.count == APP_MSGS["critical_path"]


def test_metric_seconds() -> None:
    assert metric_seconds("time_s") == 1.0
    assert metric_seconds("half_rtt_us") == 1e-6
    assert metric_seconds("t_ms") == 1e-3
    assert metric_seconds("t_ns") == 1e-9
    assert metric_seconds("ops_per_s") is None
    assert metric_seconds("checksum") is None


def test_r_squared() -> None:
    assert r_squared([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0
    assert r_squared([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) == pytest.approx(0.0)
    assert r_squared([1.0, 3.0], [3.0, 1.0]) == pytest.approx(-3.0)
    assert r_squared([1.0], [1.0]) is None
    assert r_squared([2.0, 2.0], [1.0, 3.0]) is None
    with pytest.raises(ValueError):
        r_squared([1.0], [1.0, 2.0])


def test_flat_curve_has_no_r2(tmp_path: Path) -> None:
    """Mean slowdowns 1.00 and 1.05 against a model of 1.00 and 1.0001: R² would be
    about -1.5 from noise alone, so it is left blank."""
    msgs = {"critical_path": 10}
    rows = [
        Row("w", "baseline", None, 0, 1.0, msgs=msgs),
        Row("w", "latency", 10, 0, 1.05, msgs=msgs),
    ]
    run = load_run(make_run(tmp_path, rows))
    m = fit(fit_models(analyse(run.points), run.points), "latency", "w")
    assert m.slowdown(10.0) == pytest.approx(1.0001)
    assert m.r2 is None
