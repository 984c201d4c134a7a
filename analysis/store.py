"""Read a run directory (run.json and results.sqlite, docs/results.md) into typed records.

The database is opened read-only, so a report can be drawn while `loggp run` is still
adding points. Columns the report needs are checked up front; a column that is missing or a
JSON cell that does not parse is reported as a ReportError naming the file.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.errors import ReportError

RUN_JSON = "run.json"
RESULTS_DB = "results.sqlite"

# Every column of table `points`, in the order docs/results.md lists them.
COLUMNS = (
    "point_id",
    "seq",
    "workload",
    "sweep_knob",
    "sweep_value",
    "knobs",
    "knob_values",
    "repeat",
    "status",
    "exit_code",
    "metric",
    "value",
    "higher_is_better",
    "result",
    "shim_stats",
    "msgs_check",
    "wall_s",
    "started",
    "finished",
    "stderr_tail",
)
REQUIRED = (
    "point_id",
    "workload",
    "sweep_knob",
    "sweep_value",
    "repeat",
    "status",
    "metric",
    "value",
    "higher_is_better",
)

STATUS_OK = "ok"


@dataclass(frozen=True)
class MsgCounts:
    """The `msgs` object of a workload's result; None where the program did not report it."""

    total: int | None = None
    bytes: int | None = None
    critical_path: int | None = None
    critical_bytes: int | None = None
    critical_sends: int | None = None
    critical_recvs: int | None = None

    @property
    def send_count(self) -> int | None:
        """S: sends on the critical path, each paying o_s (default: critical_path)."""
        return self.critical_sends if self.critical_sends is not None else self.critical_path

    @property
    def recv_count(self) -> int | None:
        """R: receives on the critical path, each paying o_r (default: critical_path)."""
        return self.critical_recvs if self.critical_recvs is not None else self.critical_path

    @property
    def overhead_count(self) -> int | None:
        """S + R: the overheads on the critical path when Δo applies to both sides."""
        s, r = self.send_count, self.recv_count
        return None if s is None or r is None else s + r

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> MsgCounts:
        msgs = result.get("msgs")
        if not isinstance(msgs, dict):
            return cls()
        return cls(
            total=_count(msgs.get("total")),
            bytes=_count(msgs.get("bytes")),
            critical_path=_count(msgs.get("critical_path")),
            critical_bytes=_count(msgs.get("critical_bytes")),
            critical_sends=_count(msgs.get("critical_sends")),
            critical_recvs=_count(msgs.get("critical_recvs")),
        )


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return int(value)


@dataclass(frozen=True)
class Point:
    """One row of table `points`."""

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

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    @property
    def msgs(self) -> MsgCounts:
        return MsgCounts.from_result(self.result)

    def result_metric(self, name: str) -> float | None:
        """A number from the result's `metrics` object, if present."""
        metrics = self.result.get("metrics")
        if not isinstance(metrics, dict):
            return None
        v = metrics.get(name)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return None
        return float(v)


@dataclass(frozen=True)
class RunInfo:
    """What run.json says about the run."""

    path: Path
    name: str
    provenance: dict[str, Any]
    experiment: Any  # the resolved experiment, shown as YAML; None when absent


@dataclass(frozen=True)
class Run:
    info: RunInfo
    points: tuple[Point, ...]
    columns: tuple[str, ...]  # columns present in the database, in COLUMNS order


def load_run(run_dir: Path) -> Run:
    """Read run.json and results.sqlite of a run directory."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise ReportError(f"{run_dir}: run directory does not exist")
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a directory")
    info = load_run_info(run_dir)
    columns, points = load_points(run_dir / RESULTS_DB)
    return Run(info=info, points=points, columns=columns)


def load_run_info(run_dir: Path) -> RunInfo:
    path = run_dir / RUN_JSON
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{path}: not found (is {run_dir} a run directory?)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: cannot read: {_one_line(e)}") from None
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: expected a JSON object, found {type(doc).__name__}")

    # the top level's plain values (state, source, ...) and then the provenance object
    prov = {k: v for k, v in doc.items() if k != "name" and not isinstance(v, dict | list)}
    if isinstance(doc.get("provenance"), dict):
        prov.update(doc["provenance"])
    experiment = doc.get("experiment")
    name = doc.get("name")
    if not isinstance(name, str) and isinstance(experiment, dict):
        name = experiment.get("name")
    if not isinstance(name, str) or not name:
        name = run_dir.resolve().name
    return RunInfo(path=path, name=name, provenance=dict(prov), experiment=experiment)


def load_points(db: Path) -> tuple[tuple[str, ...], tuple[Point, ...]]:
    if not db.is_file():
        raise ReportError(f"{db}: not found (no point has finished yet?)")
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ReportError(f"{db}: cannot open: {_one_line(e)}") from None
    try:
        con.row_factory = sqlite3.Row
        present = {r["name"] for r in con.execute("PRAGMA table_info(points)")}
        if not present:
            raise ReportError(f"{db}: has no table 'points'")
        missing = [c for c in REQUIRED if c not in present]
        if missing:
            raise ReportError(f"{db}: table 'points' lacks column(s) {', '.join(missing)}")
        columns = tuple(c for c in COLUMNS if c in present)
        order = "seq, point_id" if "seq" in present else "point_id"
        rows = con.execute(f"SELECT {', '.join(columns)} FROM points ORDER BY {order}").fetchall()
    except sqlite3.Error as e:
        raise ReportError(f"{db}: cannot read: {_one_line(e)}") from None
    finally:
        con.close()
    if not rows:
        raise ReportError(f"{db}: no points recorded")
    return columns, tuple(_point(db, {c: r[c] for c in columns}) for r in rows)


def _point(db: Path, row: dict[str, Any]) -> Point:
    pid = str(row["point_id"])
    try:
        sweep_value = _opt_float(row["sweep_value"])
        value = _opt_float(row["value"])
        repeat = int(row["repeat"])
        seq = None if row.get("seq") is None else int(row["seq"])
        exit_code = None if row.get("exit_code") is None else int(row["exit_code"])
    except (TypeError, ValueError) as e:
        raise ReportError(f"{db}: point {pid}: bad number: {_one_line(e)}") from None
    strict = row["status"] == STATUS_OK  # a failed point's leftovers may be anything
    knob_values = _json_obj(db, pid, "knob_values", row.get("knob_values"), strict)
    return Point(
        point_id=pid,
        seq=seq,
        workload=str(row["workload"]),
        sweep_knob=str(row["sweep_knob"]),
        sweep_value=sweep_value,
        knob_values={k: float(v) for k, v in knob_values.items() if _is_number(v)},
        repeat=repeat,
        status=str(row["status"]),
        exit_code=exit_code,
        metric="" if row["metric"] is None else str(row["metric"]),
        value=value,
        higher_is_better=bool(row["higher_is_better"]),
        result=_json_obj(db, pid, "result", row.get("result"), strict),
        msgs_check=row.get("msgs_check"),
        stderr_tail=row.get("stderr_tail"),
        row=row,
    )


def _json_obj(db: Path, pid: str, column: str, text: Any, strict: bool) -> dict[str, Any]:
    if text is None or text == "":
        return {}
    try:
        obj = json.loads(text)
    except (TypeError, json.JSONDecodeError) as e:
        if not strict:
            return {}
        raise ReportError(f"{db}: point {pid}: column {column} is not JSON: {e}") from None
    return obj if isinstance(obj, dict) else {}


def _is_number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v)


def _opt_float(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
