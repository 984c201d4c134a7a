"""The overlap bound of prefetch suites (loggp/analysis/overlap.py) from runs with known I/O."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.analysis.overlap import overlap
from loggp.analysis.report import write_report
from loggp.analysis.slowdown import analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, make_run

pytestmark = pytest.mark.unit

# off-1 waits 1 s in reads of a 2 s run (1 s of compute); hints hide half of that I/O.
OFF_IO = (0.98, 1.0, 1.02, 0.99, 1.01, 1.0)
HINTED_IO = (0.47, 0.49, 0.5, 0.5, 0.51, 0.53)
HINTED_TIME = 1.5


def rootio(name: str, knob: str, x: float | None, repeat: int, time_s: float, io_s: float) -> Row:
    metrics = {"io_s": io_s, "compute_s": 1.0, "MBps": 30.0}
    return Row(name, knob, x, repeat, time_s, metrics=metrics)


def prefetch_rows() -> list[Row]:
    rows = []
    for r, (off, hinted) in enumerate(zip(OFF_IO, HINTED_IO, strict=True)):
        rows.append(rootio("off-1", "baseline", None, r, 2.0 + 0.01 * r, off))
        rows.append(rootio("willneed-1", "baseline", None, r, HINTED_TIME, hinted))
    for r in range(3):
        rows.append(rootio("off-1", "latency", 100, r, 3.0, 2.0))
        rows.append(rootio("willneed-1", "latency", 100, r, 2.5, 1.5))
    for bw in (100, 1000):  # MB/s: listed from the better network to the worse
        rows.append(rootio("off-1", "bandwidth", bw, 0, 2.0, 1.0))
        rows.append(rootio("willneed-1", "bandwidth", bw, 0, 1.5, 0.5))
    # mercury-1 measured only where off-1 was not; mercury-2 has no unhinted partner
    rows.append(rootio("mercury-1", "latency", 10, 0, 1.8, 0.2))
    rows.append(rootio("mercury-2", "baseline", None, 0, 1.8, 0.2))
    # named like a pair but reporting no io_s: not a prefetch workload
    rows.append(Row("off-app", "baseline", None, 0, 1.0))
    rows.append(Row("fast-app", "baseline", None, 0, 0.5))
    return rows


def rows_of(run_dir: Path):
    run = load_run(run_dir)
    return overlap(run.points, analyse(run.points))


def test_hints_hiding_half_the_io_give_half_within_the_interval(tmp_path: Path) -> None:
    base, lat100, _, _, lat10 = rows_of(make_run(tmp_path, prefetch_rows()))
    assert (base.workload, base.unhinted, base.setting.label) == ("willneed-1", "off-1", "baseline")
    b = base.bound
    assert b is not None and b.n == 6
    assert b.median == pytest.approx(0.5)
    assert b.low == pytest.approx(0.47) and b.high == pytest.approx(0.53)  # n = 6: the extremes
    assert b.low <= 0.5 <= b.high
    assert base.io_off is not None and base.io_off.median == pytest.approx(1.0)
    # run-time gain against the unhinted median 2.025 s; the most an overlap can gain
    assert base.gain is not None and base.gain.median == pytest.approx(1 - HINTED_TIME / 2.025)
    assert base.best_gain == pytest.approx(1.0 / 2.025)
    # three repeats: the median, no interval
    assert lat100.setting.label == "latency 100 µs"
    assert lat100.bound is not None and lat100.bound.median == pytest.approx(0.25)
    assert lat100.bound.low is None and lat100.gain.median == pytest.approx(1 / 6)
    # a setting the unhinted workload did not measure says so
    assert (lat10.workload, lat10.bound, lat10.why) == (
        "mercury-1",
        None,
        "no measured off-1 point at this setting",
    )


def test_only_named_pairs_reporting_io_take_part_in_the_reports_order(tmp_path: Path) -> None:
    found = [(r.workload, r.setting.label) for r in rows_of(make_run(tmp_path, prefetch_rows()))]
    assert found == [
        ("willneed-1", "baseline"),
        ("willneed-1", "latency 100 µs"),
        ("willneed-1", "bandwidth 1000 MB/s"),
        ("willneed-1", "bandwidth 100 MB/s"),
        ("mercury-1", "latency 10 µs"),
    ]


def test_the_report_shows_the_table_for_a_prefetch_run(tmp_path: Path) -> None:
    html = write_report(make_run(tmp_path, prefetch_rows())).read_text()
    table = html.split('<table class="overlap">')[1].split("</table>")[0]
    assert "<th>willneed-1</th><td>off-1</td><td>baseline</td>" in table
    assert "0.500 [0.470, 0.530]" in table
    assert "no measured off-1 point at this setting" in table
    assert "fast-app" not in table and "mercury-2" not in table


def test_no_table_for_a_run_without_prefetch_pairs(tmp_path: Path) -> None:
    html = write_report(make_run(tmp_path)).read_text()
    assert 'id="overlap"' not in html and "overlap bound" not in html
