"""Build recorded run directories (run.json + results.sqlite per docs/results.md) for tests.

The standard set has known values so every slowdown, interval and model line can be
checked by hand:

- app (time_s, msgs.critical_path m = 50000, msgs.critical_bytes B = 10^7):
  baseline 0.9, 1.0, 1.1 s; latency 10us -> 1.4, 1.5, 1.6 s; latency 100us -> 6.0 s
  (= 1 + m·ΔL exactly); latency 1000us failed; overhead 5us -> 1.5, 1.5 s and 10us -> 2.0 s
  (= 1 + 2·m·Δo); send_overhead 10us -> 2.0 s, 20us -> 2.0 s (model 1.5, 2.0);
  bandwidth 100 MB/s -> 1.1 s, 10 MB/s -> 2.0 s (= 1 + B/BW); bulk_gap 100 ns/B -> 2.0 s;
  gap 10us timed out (the only gap point).
- server (ops_per_s, higher is better, no msgs, metrics.time_s = 2.0):
  baseline 1000, 1000; latency 10us -> 500 (and one invalid repeat); 100us -> 250, 200.
- orphan: latency 10us -> 3.0 s, no baseline at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loggp.analysis.crossval import EMULATED, SIMULATED, section_dir
from loggp.results.protocol import RESULT_KEY
from loggp.results.rundir import RUN_FILE
from loggp.results.store import (
    BACKEND_EMULATOR,
    BACKEND_SMPI,
    MEASURED,
    STATUS_DEGRADED,
    SWEEP_BASELINE,
    SWEEP_GRID,
    PointRecord,
    Store,
)

UNITS = {"bulk_gap": "ns/B", "bandwidth": "MB/s"}

APP_MSGS = {
    "total": 100000,
    "bytes": 20000000,
    "per_rank": [50000, 50000],
    "critical_path": 50000,
    "critical_bytes": 10000000,
}

GIT_REVISION = "0123456789abcdef0123456789abcdef01234567"
CPU_MODEL = "Test CPU 3000 @ 2.0GHz"
RUN_NAME = "unit-demo"
DEGRADED_REASON = "p99 lateness up to 8 us exceeds 2 us; host CPU 50 % busy with other work"


@dataclass
class Row:
    workload: str
    knob: str  # a knob name, "baseline" or "grid"
    x: float | None  # sweep_value in report units
    repeat: int
    value: float | None
    status: str = "ok"
    metric: str = "time_s"
    higher_is_better: bool = False
    msgs: dict[str, Any] | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    msgs_check: str | None = None
    stderr_tail: str = ""
    knob_values: dict[str, float] | None = None  # default: {knob: x} for a swept knob
    other_cpu: float = 0.02  # other work on the host during the point: quiet by default
    floor_ns: int | None = None  # the host's lateness floor beside the point
    reason: str = DEGRADED_REASON  # stored when the status is degraded
    backend: str = BACKEND_EMULATOR  # BACKEND_SMPI: a simulated point
    shim_stats: list[dict[str, Any]] | None = None  # default: one process's line of 10 msgs

    def point_id(self) -> str:
        if self.knob in (SWEEP_BASELINE, SWEEP_GRID):
            return f"{self.workload}/{self.knob}/r{self.repeat}"
        return f"{self.workload}/{self.knob}={self.x:g}/r{self.repeat}"


def app(knob: str, x: float | None, repeat: int, value: float | None, **kw: Any) -> Row:
    kw.setdefault("msgs", APP_MSGS)
    kw.setdefault("msgs_check", "match")
    return Row("app", knob, x, repeat, value, **kw)


def server(knob: str, x: float | None, repeat: int, value: float | None, **kw: Any) -> Row:
    kw.setdefault("metrics", {"time_s": 2.0})
    return Row("server", knob, x, repeat, value, metric="ops_per_s", higher_is_better=True, **kw)


def standard_rows() -> list[Row]:
    return [
        app("baseline", None, 0, 0.9),
        app("baseline", None, 1, 1.0),
        app("baseline", None, 2, 1.1),
        app("latency", 10, 0, 1.4),
        app("latency", 10, 1, 1.5),
        app("latency", 10, 2, 1.6),
        app("latency", 100, 0, 6.0, msgs_check="mismatch: workload 50000 != shim 49990"),
        app("latency", 1000, 0, None, status="failed", stderr_tail="boom <script>x</script>"),
        app("overhead", 5, 0, 1.5),
        app("overhead", 5, 1, 1.5),
        app("overhead", 10, 0, 2.0),
        app("send_overhead", 10, 0, 2.0),
        app("send_overhead", 20, 0, 2.0),
        app("bandwidth", 100, 0, 1.1),
        app("bandwidth", 10, 0, 2.0),
        app("bulk_gap", 100, 0, 2.0),
        app("gap", 10, 0, None, status="timeout"),
        server("baseline", None, 0, 1000.0),
        server("baseline", None, 1, 1000.0),
        server("latency", 10, 0, 500.0),
        server("latency", 10, 1, None, status="invalid"),
        server("latency", 100, 0, 250.0),
        server("latency", 100, 1, 200.0),
        Row("orphan", "latency", 10, 0, 3.0),
    ]


def _unit(knob: str) -> str:
    return UNITS.get(knob, "us")


def write_points(run_dir: Path, rows: list[Row]) -> None:
    """The rows into the run's results.sqlite, through the runner's own writer."""
    with Store(run_dir) as store:
        for seq, r in enumerate(rows):
            swept = r.knob not in (SWEEP_BASELINE, SWEEP_GRID)
            kv = r.knob_values if r.knob_values is not None else ({r.knob: r.x} if swept else {})
            ok = r.status in MEASURED
            result: dict[str, Any] | None = None
            if ok or r.status == "invalid":
                result = {
                    RESULT_KEY: 1,
                    "workload": r.workload,
                    "valid": r.status != "invalid",
                    "ranks": 2,
                    "metrics": {r.metric: r.value, **r.metrics},
                }
                if r.msgs is not None:
                    result["msgs"] = r.msgs
            store.add(
                PointRecord(
                    point_id=r.point_id(),
                    seq=seq,
                    workload=r.workload,
                    sweep_knob=r.knob,
                    sweep_value=r.x if swept else None,
                    knobs={k: f"{v:g}{_unit(k)}" for k, v in kv.items()},
                    knob_values=kv,
                    repeat=r.repeat,
                    status=r.status,
                    exit_code={"ok": 0, "invalid": 0, "timeout": 124}.get(r.status, 1),
                    metric=r.metric,
                    value=r.value if ok else None,
                    higher_is_better=r.higher_is_better,
                    result=result,
                    shim_stats=[{"pid": 1, "msgs": 10}] if r.shim_stats is None else r.shim_stats,
                    msgs_check=r.msgs_check if ok else None,
                    releases=100 if ok else None,
                    late_p99_ns=(8000 if r.status == STATUS_DEGRADED else 1000) if ok else None,
                    late_max_ns=9000 if ok else None,
                    early_releases=0 if ok else None,
                    host_other_cpu=r.other_cpu if ok else None,
                    host_floor_ns=r.floor_ns if ok else None,
                    degraded_reason=r.reason if r.status == STATUS_DEGRADED else None,
                    wall_s=2.5,
                    started=1700000000.0 + seq,
                    finished=1700000002.5 + seq,
                    stderr_tail=r.stderr_tail,
                    backend=r.backend,
                )
            )


def run_json(name: str = RUN_NAME) -> dict[str, Any]:
    return {
        "loggp_run": 1,
        "name": name,
        "source": "suites/unit.yaml",
        "state": "complete",
        "provenance": {
            "time": "2024-05-01T12:00:00+00:00",
            "host": "node<1>",
            "platform": "Linux-6.1-x86_64",
            "cpu": CPU_MODEL,
            "cpus": 2,
            "python": "3.11.2",
            "loggp": "0.1.0",
            "libfabric": "fi_info: 1.17.0",
            "git_revision": GIT_REVISION,
            "git_dirty": False,
            "argv": ["loggp", "run", "suite.yaml"],
        },
        "experiment": {"name": name, "workloads": ["app", "server", "orphan"], "repeats": 3},
        "plan": [],
        "points": {},
    }


def make_run(root: Path, rows: list[Row] | None = None, name: str = RUN_NAME) -> Path:
    """A run directory below root with run.json and results.sqlite holding the rows."""
    return write_run(root / f"{name}-20240501-120000", rows, name)


def write_run(run: Path, rows: list[Row] | None = None, name: str = RUN_NAME) -> Path:
    """The run directory run, created with run.json and results.sqlite holding the rows."""
    run.mkdir(parents=True)
    (run / RUN_FILE).write_text(json.dumps(run_json(name), indent=2))
    write_points(run, standard_rows() if rows is None else rows)
    return run


VALIDATION_SPREAD = (-0.1, -0.05, 0.0, 0.0, 0.05, 0.1)  # six emulated repeats: an interval


def write_validation_runs(
    top: Path, ranks: int, slowdown: dict[float, float], off: dict[float, float]
) -> None:
    """validate-sim's two runs at ranks (loggp/analysis/crossval.py's layout), workload app
    swept on latency: emulated with six repeats a point spread around slowdown[x] (so with
    an interval), simulated (backend smpi) with one repeat at slowdown[x]·(1 + off[x])."""
    emulated = [Row("app", "baseline", None, r, 1.0) for r in range(len(VALIDATION_SPREAD))]
    simulated = [Row("app", "baseline", None, 0, 1.0, backend=BACKEND_SMPI)]
    for x, s in slowdown.items():
        emulated += [
            Row("app", "latency", x, r, s * (1 + f)) for r, f in enumerate(VALIDATION_SPREAD)
        ]
        simulated.append(Row("app", "latency", x, 0, s * (1 + off[x]), backend=BACKEND_SMPI))
    write_run(section_dir(top, ranks) / EMULATED, emulated, f"app-{EMULATED}-{ranks}")
    write_run(section_dir(top, ranks) / SIMULATED, simulated, f"app-{SIMULATED}-{ranks}")
