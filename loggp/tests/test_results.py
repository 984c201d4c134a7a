"""The results schema's one owner: the writer and the reader agree on every column."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from loggp.results.protocol import (
    DELAY_BUCKETS,
    MAX_PAIR_RANKS,
    RESULT_KEY,
    shim_stats,
    stats_problem,
)
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
        "releases": 100,
        "late_p99_ns": 1000,
        "late_max_ns": 1500,
        "early_releases": 0,
        "host_other_cpu": 0.25,
        "host_floor_ns": 36_000,
        "degraded_reason": None,
        "wall_s": 2.0,
        "started": 100.0,
        "finished": 102.0,
        "stderr_tail": "",
        "backend": "emulator",
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
    assert p.shim_stats == [{"provider": "tcp", "msgs": 9}]


def test_the_reader_keeps_only_the_shims_counter_lines(tmp_path: Path) -> None:
    """A stored line that is not the shim's is left out as the runner leaves it out, and a
    cell that is no JSON list reads as none: counters never refuse a run's report."""
    with Store(tmp_path) as store:
        store.add(record(shim_stats=[{"provider": "tcp", "msgs": 9}, {"msgs": "nine"}]))
    p = read_points(tmp_path / STORE_FILE)[1][0]
    assert p.shim_stats == [{"provider": "tcp", "msgs": 9}]
    with sqlite3.connect(tmp_path / STORE_FILE) as db:
        db.execute('UPDATE points SET shim_stats = \'{"not": "a list"}\'')
    assert read_points(tmp_path / STORE_FILE)[1][0].shim_stats == []


def test_a_store_without_points_is_one_line(tmp_path: Path) -> None:
    Store(tmp_path).close()
    with pytest.raises(StoreError) as info:
        read_points(tmp_path / STORE_FILE)
    assert str(info.value) == f"{tmp_path / STORE_FILE}: no points recorded"


def _older_store(run_dir: Path) -> None:
    """results.sqlite as a loggp before the lateness columns wrote it, with one point."""
    Store(run_dir).close()
    db = sqlite3.connect(run_dir / STORE_FILE)
    for col in ("releases", "late_p99_ns", "late_max_ns", "early_releases", "host_other_cpu",
                "host_floor_ns", "degraded_reason", "backend"):  # fmt: skip
        db.execute(f"ALTER TABLE points DROP COLUMN {col}")
    old = [c for c in COLUMNS if c in {r[1] for r in db.execute("PRAGMA table_info(points)")}]
    db.execute(
        f"INSERT INTO points ({', '.join(old)}) VALUES ({', '.join('?' * len(old))})",
        ["w/latency=10us/r0", 1, "w", "latency", 10.0, '{"latency": "10us"}',
         '{"latency": 10.0}', 0, "ok", 0, "time_s", 1.5, 0, "{}", "[]", None, 2.0, 100.0,
         102.0, ""],
    )  # fmt: skip
    db.commit()
    db.close()


def test_an_older_store_is_read_without_the_new_columns(tmp_path: Path) -> None:
    _older_store(tmp_path)
    columns, points = read_points(tmp_path / STORE_FILE)
    assert "degraded_reason" not in columns and "status" in columns
    assert points[0].ok and points[0].measured and points[0].degraded_reason is None
    assert points[0].backend == "emulator"  # before simulated points were stored


def test_an_older_store_is_not_resumed(tmp_path: Path) -> None:
    _older_store(tmp_path)
    with pytest.raises(StoreError) as info:
        Store(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / STORE_FILE}: written by an older loggp, table 'points' lacks column(s) "
        "releases, late_p99_ns, late_max_ns, early_releases, host_other_cpu, host_floor_ns, "
        "degraded_reason, backend: "
        "it can be reported but not resumed; start a new run"
    )


def test_a_degraded_point_is_measured_and_keeps_its_reason(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.add(record(status="degraded", degraded_reason="p99 lateness up to 4 us ..."))
    p = read_points(tmp_path / STORE_FILE)[1][0]
    assert (p.ok, p.degraded, p.measured) == (False, True, True)
    assert p.value == 1.5 and p.result_metric("time_s") == 1.5
    assert p.degraded_reason == "p99 lateness up to 4 us ..."
    assert p.row["late_p99_ns"] == 1000 and p.row["host_other_cpu"] == 0.25
    assert (p.host_other_cpu, p.host_floor_ns) == (0.25, 36_000)


def test_a_counter_line_with_a_networks_pair_counters_is_the_shims(tmp_path: Path) -> None:
    """Beneath a network a rank's line carries one list per counter of its destinations
    (emulator/fabric/README.md, "Counters"), here as the shim wrote it for rank 1 of a
    ping-pong across racks; a list longer than the pair table's ranks is not the shim's."""
    line = {
        "pid": 6315, "provider": "tcp", "msgs": 221, "latency_ns": 11050000,
        "late_hist_us": [208, 0, 0, 1, 3, 4, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0], "rank": 1,
        "pair_unmatched": 0, "pair_msgs": [221, 0], "pair_latency_ns": [11050000, 0],
        "pair_bytes": [2028, 0], "pair_paced_ns": [0, 0],
    }  # fmt: skip
    bad = line | {"pair_paced_ns": [0] * (MAX_PAIR_RANKS + 1)}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(bad) + "\n")
    problems: list[str] = []
    assert shim_stats(path, problems=problems) == [line]
    assert len(problems) == 1 and "line 2: key 'pair_paced_ns'" in problems[0], problems


def test_a_counter_line_with_a_delay_histogram_is_the_shims(tmp_path: Path) -> None:
    """A shim drawing ΔL from a distribution adds its delay histogram to the line
    (emulator/core/include/lgp/stats.h); one of another length is not the shim's."""
    line = {"provider": "tcp", "msgs": 3, "late_hist_us": [0] * 16, "delay_bucket_ns": 1417}
    good = line | {"delay_hist": [1, 2] + [0] * (DELAY_BUCKETS - 2)}
    bad = line | {"delay_hist": [1, 2]}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    problems: list[str] = []
    assert shim_stats(path, problems=problems) == [good]
    assert problems == [
        f"{path}: not the shim's counters, left out: line 2: key 'delay_hist': "
        "expected a whole number from 0 to 2^64 - 1, got [1, 2]"
    ]


def test_the_wires_port_lines_are_a_shims_counters(tmp_path: Path) -> None:
    """The wire's line for a port over a point (loggp/run/wirerun.py) carries its name,
    loss probability and drops by cause beside the counters; the reader keeps it."""
    port = {
        "shim": "wire", "port": 0, "name": "net_af_packet0", "latency_ns": 100000,
        "loss": 0.01, "drops": {"queue": 0, "loss": 3}, "late_ns": 5000,
        "late_hist_us": [0] * 16, "delay_bucket_ns": 945,
        "delay_hist": [0] * (DELAY_BUCKETS - 1) + [7],
    }  # fmt: skip
    with Store(tmp_path) as store:
        store.add(record(shim_stats=[port, port | {"loss": 1.5}, port | {"drops": [1]}]))
    assert read_points(tmp_path / STORE_FILE)[1][0].shim_stats == [port]
    assert (
        stats_problem(port | {"loss": 1.5}) == "key 'loss': expected a number from 0 to 1, got 1.5"
    )
