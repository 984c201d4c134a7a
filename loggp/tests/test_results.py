"""The results schema's one owner: the writer and the reader agree on every column."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from loggp.results.protocol import RESULT_KEY
from loggp.results.reader import read_points
from loggp.results.store import COLUMNS, STORE_FILE, PointRecord, Store, StoreError

pytestmark = pytest.mark.unit


def record(**kw: object) -> PointRecord:
    fields = {
        "point_id": "w/latency=10us/r0",
        "seq": 1,
        "workload": "w",
        "sweep_knob": "latency",
        "sweep_value": 10.0,
        "knobs": {"latency": "10us"},
        "knob_values": {"latency": 10.0},
        "repeat": 0,
        "status": "ok",
        "exit_code": 0,
        "metric": "time_s",
        "value": 1.5,
        "higher_is_better": False,
        "result": {RESULT_KEY: 1, "metrics": {"time_s": 1.5}, "msgs": {"critical_path": 8}},
        "shim_stats": [{"provider": "tcp", "msgs": 9}],
        "msgs_check": "match",
        "wall_s": 2.0,
        "started": 100.0,
        "finished": 102.0,
        "stderr_tail": "",
    }
    fields.update(kw)
    return PointRecord(**fields)  # type: ignore[arg-type]


def test_point_record_is_the_columns_in_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(PointRecord)) == COLUMNS


def test_what_the_store_writes_the_reader_reads(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.add(record())
        store.add(record(point_id="w/baseline/r0", seq=0, sweep_knob="baseline",
                         sweep_value=None, knobs={}, knob_values={}, value=1.0))  # fmt: skip
    columns, points = read_points(tmp_path / STORE_FILE)
    assert columns == COLUMNS
    assert [p.point_id for p in points] == ["w/baseline/r0", "w/latency=10us/r0"]
    p = points[1]
    assert (p.sweep_knob, p.sweep_value, p.knob_values) == ("latency", 10.0, {"latency": 10.0})
    assert p.ok and p.value == 1.5 and p.result_metric("time_s") == 1.5
    assert p.msgs.critical_path == 8 and p.msgs.send_count == 8
    assert p.row["knobs"] == '{"latency": "10us"}'


def test_a_store_without_points_is_one_line(tmp_path: Path) -> None:
    Store(tmp_path).close()
    with pytest.raises(StoreError) as info:
        read_points(tmp_path / STORE_FILE)
    assert str(info.value) == f"{tmp_path / STORE_FILE}: no points recorded"
