"""Reading table `points` of results.sqlite: the one way to read a run's stored points.

Contract: `read_points(db)` opens the database read-only (so a run can be read while
`loggp run` is still adding points) and returns the columns present, in store.COLUMNS
order, and every point as a StoredPoint, in plan order.  A StoredPoint keeps every column as
stored in `row` and gives the columns a reader computes with as typed fields: numbers as
float or int (None where NULL or not finite), `knob_values` and `result` decoded from JSON
(`{}` where empty), `metric` as text ("" where NULL), `shim_stats` as the lines that are the
shim's counters (protocol.stats_problem; `[]` where the cell is not a JSON list: counters
are evidence beside the value, never a reason to refuse the run).

Everything that makes a database unusable is a StoreError whose message is one line naming
the file: missing, not SQLite, without table `points`, lacking a REQUIRED column, holding
no points, a number column that is not a number, or a JSON cell of an ok point that does not
parse (a point that was not measured may hold anything; its cells read as `{}`).  A database
written before a column existed reads with that column absent (None in the typed fields).
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loggp.errors import one_line
from loggp.results.protocol import MsgCounts, is_number, result_metric, stats_problem
from loggp.results.store import (
    BACKEND_EMULATOR,
    COLUMNS,
    MEASURED,
    REQUIRED,
    STATUS_DEGRADED,
    STATUS_OK,
    StoreError,
)


@dataclass(frozen=True)
class StoredPoint:
    """One row of table `points` as a reader sees it (module docstring)."""

    point_id: str
    seq: int | None
    workload: str
    sweep_knob: str
    sweep_value: float | None
    knob_values: dict[str, float]
    repeat: int
    status: str
    exit_code: int | None
    metric: str
    value: float | None
    higher_is_better: bool
    result: dict[str, Any]
    msgs_check: str | None
    stderr_tail: str | None
    row: dict[str, Any] = field(repr=False)  # every column as stored, for the CSV
    degraded_reason: str | None = None  # None unless degraded (and before the column existed)
    host_other_cpu: float | None = None  # other work on the host during the point, 0..1
    host_floor_ns: int | None = None  # the host's lateness floor beside it, if measured
    backend: str = BACKEND_EMULATOR  # BACKEND_SMPI: simulated; emulator before the column
    shim_stats: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    @property
    def degraded(self) -> bool:
        return self.status == STATUS_DEGRADED

    @property
    def measured(self) -> bool:
        """ok or degraded: the point has a measurement (a degraded one is marked, not
        dropped)."""
        return self.status in MEASURED

    @property
    def msgs(self) -> MsgCounts:
        return MsgCounts.from_result(self.result)

    def result_metric(self, name: str) -> float | None:
        """A number from the result's `metrics` object, if present."""
        return result_metric(self.result, name)

    @property
    def late_share(self) -> float:
        """The most the shim's late releases can have added to the point's time, as a share
        of it (0 to 1): their lateness summed over the point's processes (`late_ns`) over the
        time the workload measured (`metrics.time_s`), else the point's wall time.  A bound,
        not an estimate: processes late at the same moment are counted twice, and a release
        delays what follows it by at most its own lateness."""
        late_ns = sum(s["late_ns"] for s in self.shim_stats if isinstance(s.get("late_ns"), int))
        span_s = self.result_metric("time_s") or self.row.get("wall_s")
        if not late_ns or not is_number(span_s) or span_s <= 0:
            return 0.0
        return min(1.0, late_ns / 1e9 / span_s)


def read_points(db: Path) -> tuple[tuple[str, ...], tuple[StoredPoint, ...]]:
    """The columns present and every stored point, read-only (module docstring)."""
    if not db.is_file():
        raise StoreError(f"{db}: not found (no point has finished yet?)")
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise StoreError(f"{db}: cannot open: {one_line(e)}") from None
    try:
        con.row_factory = sqlite3.Row
        present = {r["name"] for r in con.execute("PRAGMA table_info(points)")}
        if not present:
            raise StoreError(f"{db}: has no table 'points'")
        missing = [c for c in REQUIRED if c not in present]
        if missing:
            raise StoreError(f"{db}: table 'points' lacks column(s) {', '.join(missing)}")
        columns = tuple(c for c in COLUMNS if c in present)
        order = "seq, point_id" if "seq" in present else "point_id"
        rows = con.execute(f"SELECT {', '.join(columns)} FROM points ORDER BY {order}").fetchall()
    except sqlite3.Error as e:
        raise StoreError(f"{db}: cannot read: {one_line(e)}") from None
    finally:
        con.close()
    if not rows:
        raise StoreError(f"{db}: no points recorded")
    return columns, tuple(_point(db, {c: r[c] for c in columns}) for r in rows)


def _point(db: Path, row: dict[str, Any]) -> StoredPoint:
    pid = str(row["point_id"])
    try:
        sweep_value = _opt_float(row["sweep_value"])
        value = _opt_float(row["value"])
        repeat = int(row["repeat"])
        seq = None if row.get("seq") is None else int(row["seq"])
        exit_code = None if row.get("exit_code") is None else int(row["exit_code"])
        other_cpu = _opt_float(row.get("host_other_cpu"))
        floor = None if row.get("host_floor_ns") is None else int(row["host_floor_ns"])
    except (TypeError, ValueError) as e:
        raise StoreError(f"{db}: point {pid}: bad number: {one_line(e)}") from None
    strict = row["status"] in MEASURED  # a failed point's leftovers may be anything
    knob_values = _json_obj(db, pid, "knob_values", row.get("knob_values"), strict)
    return StoredPoint(
        point_id=pid,
        seq=seq,
        workload=str(row["workload"]),
        sweep_knob=str(row["sweep_knob"]),
        sweep_value=sweep_value,
        knob_values={k: float(v) for k, v in knob_values.items() if is_number(v)},
        repeat=repeat,
        status=str(row["status"]),
        exit_code=exit_code,
        metric="" if row["metric"] is None else str(row["metric"]),
        value=value,
        higher_is_better=bool(row["higher_is_better"]),
        result=_json_obj(db, pid, "result", row.get("result"), strict),
        msgs_check=row.get("msgs_check"),
        stderr_tail=row.get("stderr_tail"),
        degraded_reason=row.get("degraded_reason"),
        host_other_cpu=other_cpu,
        host_floor_ns=floor,
        backend=str(row.get("backend") or BACKEND_EMULATOR),
        shim_stats=_counter_lines(row.get("shim_stats")),
        row=row,
    )


def _counter_lines(text: Any) -> list[dict[str, Any]]:
    """The shim's counter lines of a shim_stats cell (module docstring)."""
    try:
        lines = json.loads(text) if isinstance(text, str) else None
    except (json.JSONDecodeError, RecursionError):
        return []
    if not isinstance(lines, list):
        return []
    return [s for s in lines if isinstance(s, dict) and stats_problem(s) is None]


def _json_obj(db: Path, pid: str, column: str, text: Any, strict: bool) -> dict[str, Any]:
    if text is None or text == "":
        return {}
    try:
        obj = json.loads(text)
    except (TypeError, json.JSONDecodeError) as e:
        if not strict:
            return {}
        raise StoreError(f"{db}: point {pid}: column {column} is not JSON: {e}") from None
    return obj if isinstance(obj, dict) else {}


def _opt_float(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None
