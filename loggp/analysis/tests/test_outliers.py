"""Outlier repeats: kept, marked, left out of the slowdown with the reason shown."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from loggp.analysis.report import write_report
from loggp.analysis.slowdown import Analysis, analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, app, make_run

pytestmark = pytest.mark.unit

LOADED = "host CPU 72 % busy with other work (above 25 %)"


def analysed(tmp_path: Path, rows: list[Row]) -> Analysis:
    return analyse(load_run(make_run(tmp_path, rows)).points)


def loaded(knob: str, x: float | None, value: float) -> Row:
    """Repeat 0, taken while other work loaded the host: stored degraded."""
    return app(knob, x, 0, value, status="degraded", other_cpu=0.72, reason=LOADED)


def two_repeats_one_loaded() -> list[Row]:
    """The issue's run: r0 beside a busy loop, r1 quiet; pooled, the loaded baseline made
    every slowdown look like a speed-up."""
    return [
        loaded("baseline", None, 14.8),
        app("baseline", None, 1, 1.3),
        loaded("latency", 100, 45.0),
        app("latency", 100, 1, 15.08),
    ]


def test_a_loaded_repeat_is_left_out_and_the_quiet_ones_slowdown_reported(
    tmp_path: Path,
) -> None:
    a = analysed(tmp_path, two_repeats_one_loaded())
    base = a.baselines["app"]
    assert base.values == (1.3,) and base.point_ids == ("app/baseline/r1",)
    (cp,) = [cp for cp in a.knob("latency").curves[0].points if not cp.baseline]
    assert cp.stat.median == pytest.approx(15.08 / 1.3)  # 11.6, the quiet repeat's
    assert cp.point_ids == ("app/latency=100/r1",) and cp.outliers == ("app/latency=100/r0",)
    assert [o.point.point_id for o in a.outliers] == ["app/baseline/r0", "app/latency=100/r0"]
    why = a.outlier("app/baseline/r0").reason
    assert why.startswith("outlier: 14.8 is ") and "of its point's 1 clean repeat(s)" in why
    assert why.endswith(f"; degraded: {LOADED}")
    # kept: its slowdown is still computed, against the quiet baseline
    assert a.slowdown["app/latency=100/r0"] == pytest.approx(45.0 / 1.3)


def test_the_report_marks_the_outliers_and_gives_their_reasons(tmp_path: Path) -> None:
    run = make_run(tmp_path, two_repeats_one_loaded())
    html = write_report(run).read_text()
    assert "2 outlier repeat(s) ⊘ left out of their point's slowdown" in html
    section = html.split('<h2 id="outliers">')[1].split("<h2")[0]
    assert "app/baseline/r0" in section and "app/latency=100/r0" in section
    assert "app/latency=100/r1" not in section and "busy with other work (above 25 %)" in section
    assert "11.6 <span" in html and "⊘ 1 outlier(s) left out" in html
    with (run / "report" / "results.csv").open(newline="") as f:
        rows = {r["point_id"]: r for r in csv.DictReader(f)}
    assert rows["app/latency=100/r0"]["outlier"].startswith("outlier: 45 is ")
    assert rows["app/latency=100/r1"]["outlier"] == ""


def test_two_clean_repeats_cannot_say_which_is_off(tmp_path: Path) -> None:
    a = analysed(tmp_path, [app("baseline", None, 0, 1.0), app("baseline", None, 1, 5.0)])
    assert a.baselines["app"].values == (1.0, 5.0) and not a.outliers


def test_with_enough_repeats_the_value_alone_decides(tmp_path: Path) -> None:
    rows = [app("baseline", None, r, v) for r, v in enumerate((1.0, 1.1, 0.9, 1.0, 1.05, 13.7))]
    a = analysed(tmp_path, rows)
    assert [o.point.point_id for o in a.outliers] == ["app/baseline/r5"]
    assert a.baselines["app"].stat.median == 1.0
    # a degraded repeat that agrees with its clean siblings stays
    near = [app("baseline", None, 0, 1.0), app("baseline", None, 1, 1.1, status="degraded")]
    assert not analysed(tmp_path / "near", near).outliers


def test_a_spread_group_loses_nothing(tmp_path: Path) -> None:
    """When more than half the repeats would be outliers, the group is just spread."""
    rows = [
        app("baseline", None, 0, 1.0),
        app("baseline", None, 1, 9.0, status="degraded"),
        app("baseline", None, 2, 8.0, status="degraded"),
    ]
    a = analysed(tmp_path, rows)
    assert not a.outliers and a.baselines["app"].values == (1.0, 9.0, 8.0)
