"""A swept network level's delay in the report: its curve starts at the level's own value."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.analysis.knobs import knob_info
from loggp.analysis.report import write_report
from loggp.analysis.slowdown import analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, make_run

pytestmark = pytest.mark.unit

KNOB = "network.rack.latency"
FILE_US = 50.0  # the rack's latency in the experiment file: where the baseline ran


def rows() -> list[Row]:
    at = {KNOB: FILE_US}
    return [
        Row("w", "baseline", None, 0, 2.0, knob_values=at),
        Row("w", "baseline", None, 1, 2.0, knob_values=at),
        Row("w", "latency", 5, 0, 2.5, knob_values={"latency": 5.0, **at}),
        Row("w", KNOB, 20, 0, 1.6),
        Row("w", KNOB, 100, 0, 3.0),
    ]


def test_the_curve_puts_the_baseline_at_the_files_value(tmp_path: Path) -> None:
    a = analyse(load_run(make_run(tmp_path, rows())).points)
    summary = a.knob(KNOB)
    assert summary is not None
    (c,) = summary.curves
    assert [(cp.x, cp.baseline) for cp in c.points] == [
        (20.0, False), (FILE_US, True), (100.0, False),
    ]  # fmt: skip
    assert [cp.stat.median for cp in c.points] == pytest.approx([0.8, 1.0, 1.5])
    # the registry knob swept beside it keeps its own axis from 0
    latency = a.knob("latency")
    assert latency is not None and [cp.x for cp in latency.curves[0].points] == [0.0, 5.0]


def test_presentation_is_the_delays(tmp_path: Path) -> None:
    info = knob_info(KNOB)
    assert (info.symbol, info.unit, info.title) == ("L(rack)", "µs", "Sensitivity to rack latency")
    assert info.axis_label == f"{KNOB} (µs)"
    assert knob_info("network.pod.bulk_gap").unit == knob_info("bulk_gap").unit
    index = write_report(make_run(tmp_path, rows()))
    assert (index.parent / "slowdown_network_rack_latency.png").is_file()
    html = index.read_text()
    assert "Sensitivity to rack latency" in html and f"<code>{KNOB}</code>" in html
