"""Driving loggp-calibrate (a scripted stand-in) and comparing configured vs measured."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from loggp.errors import ToolFailedError, ToolTimeoutError
from loggp.measure.calibrate import CalibrateReport, compare, relevant_metrics, run_calibrate
from loggp.measure.demo import default_points, run_demo
from loggp.plan.knobs import KnobSet

pytestmark = pytest.mark.unit


def _argv(log: Path) -> list[str]:
    return json.loads(log.read_text().splitlines()[0])["argv"]


def test_unshimmed_run(fake_build: Path, tmp_path: Path) -> None:
    run = run_calibrate("shm", None, tmp_path / "w", iterations=50, timeout=30)
    assert run.report.provider == "shm"
    assert run.report.results.L_us.median == pytest.approx(0.4)
    assert run.stats == []
    server, client = _argv(run.workdir / "server.log"), _argv(run.workdir / "client.log")
    assert client[-1] == "127.0.0.1"
    assert server[server.index("-B") + 1] == "127.0.0.1"
    assert server[server.index("-P") + 1] == client[client.index("-P") + 1]
    assert server[server.index("-n") + 1] == "50"
    assert server[server.index("-p") + 1] == "shm"


def test_shimmed_run_and_comparison(fake_build: Path, tmp_path: Path) -> None:
    knobs = KnobSet.parse({"latency": "10us", "overhead": "2us"})
    base = run_calibrate("tcp", None, tmp_path / "b", timeout=30)
    shim = run_calibrate("tcp", knobs, tmp_path / "s", timeout=30)
    assert len(shim.stats) == 1  # only the client of the fake writes counters
    rows = {c.metric.key: c for c in compare(knobs, base.report.results, shim.report.results)}
    assert rows["L_us"].configured == pytest.approx(10.0)
    assert rows["L_us"].increase == pytest.approx(10.0)
    assert rows["half_rtt_us"].configured == pytest.approx(14.0)
    assert rows["o_s_us"].error == pytest.approx(0.0)
    assert all(c.ok for c in rows.values())
    assert relevant_metrics(knobs) == ("half_rtt_us", "o_s_us", "o_r_us", "L_us")


def test_tool_failure_is_one_line(fake_build: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CALIBRATE", "fail")
    with pytest.raises(ToolFailedError) as exc:
        run_calibrate("shm", KnobSet(), tmp_path / "w", timeout=30)
    msg = str(exc.value)
    assert "client exited with status 1: loggp: bad value 'x' for LOGGP_LATENCY" in msg
    assert "\n" not in msg


def test_unreadable_json(fake_build: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CALIBRATE", "badjson")
    with pytest.raises(ToolFailedError, match="unreadable JSON"):
        run_calibrate("shm", None, tmp_path / "w", timeout=30)


def test_timeout_names_who_did_not_answer(fake_build: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CALIBRATE", "hang")
    with pytest.raises(ToolTimeoutError) as exc:
        run_calibrate("shm", None, tmp_path / "w", timeout=1)
    assert "loggp-calibrate (shm, unshimmed) server and" in str(exc.value)
    assert "did not answer within 1 s" in str(exc.value)


def test_report_model_rejects_other_tools() -> None:
    with pytest.raises(ValueError):
        CalibrateReport.model_validate({"tool": "fi_pingpong", "version": 1})


def test_default_points() -> None:
    names = [p.name for p in default_points()]
    assert names == [
        "baseline",
        "zero",
        "latency-10us",
        "latency-100us",
        "overhead-10us",
        "overhead-100us",
    ]
    assert default_points()[0].knobs is None


def test_demo_writes_summary(fake_build: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    path = run_demo(Console(file=out, width=200), out_root=tmp_path / "results", timeout=30)
    assert path.parent == tmp_path / "results" and path.name.startswith("demo-")
    summary = json.loads((path / "summary.json").read_text())
    assert summary["kind"] == "loggp-demo" and summary["provider"] == "shm"
    assert len(summary["points"]) == 6
    assert all(c["ok"] for p in summary["points"] for c in p["comparison"])
    latency = summary["points"][3]
    assert latency["knobs"] == {"latency": "100us"}
    assert {c["metric"] for c in latency["comparison"]} == {"half_rtt_us", "L_us"}
    text = out.getvalue()
    assert "overhead=100us" in text and "results:" in text
