"""The run's result store: results.sqlite, one committed row per finished point.

This module owns table `points` (docs/results.md): its columns and their types, the status
and sweep_knob values a row may hold, and the writer (`Store`, for `loggp run`); its reader
is loggp/results/reader.py.  Nothing else names the columns or writes the database.

Each point is written in one transaction, so an interrupted run keeps every finished point
and no half-written one; --resume skips the point_ids found here.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError

STORE_FILE = "results.sqlite"

# Every column of table `points` with its SQL type, in the order docs/results.md lists them.
COLUMN_TYPES = {
    "point_id": "TEXT PRIMARY KEY",
    "seq": "INTEGER NOT NULL",
    "workload": "TEXT NOT NULL",
    "sweep_knob": "TEXT NOT NULL",
    "sweep_value": "REAL",
    "knobs": "TEXT NOT NULL",
    "knob_values": "TEXT NOT NULL",
    "repeat": "INTEGER NOT NULL",
    "status": "TEXT NOT NULL",
    "exit_code": "INTEGER",
    "metric": "TEXT",
    "value": "REAL",
    "higher_is_better": "INTEGER NOT NULL DEFAULT 0",
    "result": "TEXT",
    "shim_stats": "TEXT",
    "msgs_check": "TEXT",
    "releases": "INTEGER",
    "late_p99_ns": "INTEGER",
    "late_max_ns": "INTEGER",
    "early_releases": "INTEGER",
    "host_other_cpu": "REAL",
    "host_floor_ns": "INTEGER",
    "degraded_reason": "TEXT",
    "wall_s": "REAL",
    "started": "REAL",
    "finished": "REAL",
    "stderr_tail": "TEXT",
    "backend": "TEXT",
}
COLUMNS = tuple(COLUMN_TYPES)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS points (\n"
    + ",\n".join(f"    {name} {sql}" for name, sql in COLUMN_TYPES.items())
    + "\n)"
)
# The columns a reader cannot do without: which point, what was swept, what it measured.
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

# Column status: a measured point (ok, or degraded: measured while the shim's own error was
# above its bound, loggp/results/judge.py) has a value, the others have none.
STATUS_OK = "ok"
STATUS_DEGRADED = "degraded"
MEASURED = (STATUS_OK, STATUS_DEGRADED)
STATUSES = (STATUS_OK, STATUS_DEGRADED, "failed", "timeout", "invalid")
# Column backend: how the point was measured.
BACKEND_EMULATOR = "emulator"  # beneath a shim (or none) on real processes
BACKEND_SMPI = "smpi"  # simulated by SimGrid's SMPI (docs/simulator.md)
# Column sweep_knob holds a knob name, or one of these.
SWEEP_BASELINE = "baseline"
SWEEP_GRID = "grid"


class StoreError(LoggpError):
    """The result store cannot be opened, written or read; one line naming the file."""


@dataclass(frozen=True)
class PointRecord:
    """What one finished point stores (the columns of table points)."""

    point_id: str
    seq: int
    workload: str
    sweep_knob: str
    sweep_value: float | None
    knobs: dict[str, str]
    knob_values: dict[str, float]
    repeat: int
    status: str
    exit_code: int | None
    metric: str
    value: float | None
    higher_is_better: bool
    result: dict[str, Any] | None
    shim_stats: list[dict[str, Any]]
    msgs_check: str | None
    releases: int | None  # the shim's lateness over the point's processes; None without
    late_p99_ns: int | None
    late_max_ns: int | None
    early_releases: int | None
    host_other_cpu: float | None  # the host's CPU contention (loggp/metrics/node.py)
    host_floor_ns: int | None  # the host's lateness floor beside the point (judge.py)
    degraded_reason: str | None
    wall_s: float
    started: float
    finished: float
    stderr_tail: str
    backend: str  # BACKEND_EMULATOR or BACKEND_SMPI


class Store:
    """results.sqlite of one run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / STORE_FILE
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute(SCHEMA)
            self._db.commit()
            present = {r[1] for r in self._db.execute("PRAGMA table_info(points)")}
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot open the result store: {e}") from None
        missing = [c for c in COLUMNS if c not in present]
        if missing:
            self._db.close()
            raise StoreError(
                f"{self.path}: written by an older loggp, table 'points' lacks column(s) "
                f"{', '.join(missing)}: it can be reported but not resumed; start a new run"
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def finished_ids(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT point_id FROM points")}

    def statuses(self) -> dict[str, str]:
        """Each stored point's status, by its id."""
        return dict(self._db.execute("SELECT point_id, status FROM points").fetchall())

    def add(self, rec: PointRecord) -> None:
        """Store one point in its own transaction (replacing an earlier try of it)."""
        row = (
            rec.point_id, rec.seq, rec.workload, rec.sweep_knob, rec.sweep_value,
            json.dumps(rec.knobs), json.dumps(rec.knob_values), rec.repeat, rec.status,
            rec.exit_code, rec.metric, rec.value, int(rec.higher_is_better),
            json.dumps(rec.result) if rec.result is not None else None,
            json.dumps(rec.shim_stats), rec.msgs_check, rec.releases, rec.late_p99_ns,
            rec.late_max_ns, rec.early_releases, rec.host_other_cpu, rec.host_floor_ns,
            rec.degraded_reason,
            rec.wall_s, rec.started, rec.finished, rec.stderr_tail, rec.backend,
        )  # fmt: skip
        try:
            with self._db:
                self._db.execute(
                    f"INSERT OR REPLACE INTO points VALUES ({','.join('?' * len(row))})", row
                )
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot store point {rec.point_id}: {e}") from None

