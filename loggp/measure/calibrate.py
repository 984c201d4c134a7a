"""Driving loggp-calibrate and comparing what it measures with what was configured.

One calibration run is a server and a client process of loggp-calibrate on 127.0.0.1, both
with or both without the shim.  The client retries its control connection until the server
listens, so both are started at once.  The increase a knob should cause over the unshimmed
stack, per LogGP metric (docs/design.md, "LogGP semantics"):

    o_s += send_overhead    o_r += recv_overhead    g += gap    L += latency
    G   += bulk_gap         half round trip += send_overhead + latency + recv_overhead
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from loggp.errors import ToolFailedError
from loggp.plan.knobs import FS_PER_NS, KnobSet, Params
from loggp.run.proc import spawn, wait_all
from loggp.run.shim import calibrate_binary, process_env

DEFAULT_TIMEOUT_S = 60.0


class Stat(BaseModel):
    model_config = ConfigDict(extra="allow")
    median: float
    p99: float | None = None


class Fit(BaseModel):
    model_config = ConfigDict(extra="allow")
    value: float
    r2: float | None = None


class Measured(BaseModel):
    model_config = ConfigDict(extra="allow")
    half_rtt_us: Stat
    o_s_us: Stat
    o_r_us: Stat
    g_us: Stat
    L_us: Stat
    G_ns_per_B: Fit


class CalibrateReport(BaseModel):
    """The JSON loggp-calibrate writes with -j (version 1)."""

    model_config = ConfigDict(extra="allow")
    tool: Literal["loggp-calibrate"]
    version: Literal[1]
    provider: str
    results: Measured
    # Not the tool's: [size, trips] pairs a run of shim smpi measures beside it and stores
    # with it (loggp/run/trips.py); absent, a message makes one trip at every size.
    trips: list[tuple[int, int]] | None = None


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    unit: str
    expected: Callable[[Params], float]
    floor: float  # absolute part of the tolerance, in unit

    def value(self, m: Measured) -> float:
        v = getattr(m, self.key)
        return v.value if isinstance(v, Fit) else v.median

    def p99(self, m: Measured) -> float | None:
        v = getattr(m, self.key)
        return None if isinstance(v, Fit) else v.p99


def _us(ns: int) -> float:
    return ns / 1000.0


METRICS: tuple[Metric, ...] = (
    Metric(
        "half_rtt_us",
        "half RTT",
        "us",
        lambda p: _us(p.send_overhead_ns + p.latency_ns + p.recv_overhead_ns),
        1.0,
    ),
    Metric("o_s_us", "o_s", "us", lambda p: _us(p.send_overhead_ns), 1.0),
    Metric("o_r_us", "o_r", "us", lambda p: _us(p.recv_overhead_ns), 1.0),
    Metric("g_us", "g", "us", lambda p: _us(p.gap_ns), 1.0),
    Metric("L_us", "L", "us", lambda p: _us(p.latency_ns), 1.0),
    Metric("G_ns_per_B", "G", "ns/B", lambda p: p.bulk_gap_fs / FS_PER_NS, 0.05),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}
REL_TOLERANCE = 0.03  # the accuracy bound: max(floor, 3 %) of the configured delta


@dataclass(frozen=True)
class Comparison:
    """One metric: configured delta vs the measured increase over the unshimmed stack."""

    metric: Metric
    configured: float
    baseline: float
    measured: float
    measured_p99: float | None

    @property
    def increase(self) -> float:
        return self.measured - self.baseline

    @property
    def error(self) -> float:
        return self.increase - self.configured

    @property
    def tolerance(self) -> float:
        return max(self.metric.floor, REL_TOLERANCE * self.configured)

    @property
    def ok(self) -> bool:
        return abs(self.error) <= self.tolerance

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.key,
            "unit": self.metric.unit,
            "configured": self.configured,
            "baseline": self.baseline,
            "measured": self.measured,
            "measured_p99": self.measured_p99,
            "increase": self.increase,
            "error": self.error,
            "tolerance": self.tolerance,
            "ok": self.ok,
        }


def compare(
    knobs: KnobSet, baseline: Measured, shimmed: Measured, keys: tuple[str, ...] | None = None
) -> list[Comparison]:
    params = knobs.params()
    metrics = METRICS if keys is None else tuple(METRIC_BY_KEY[k] for k in keys)
    return [
        Comparison(m, m.expected(params), m.value(baseline), m.value(shimmed), m.p99(shimmed))
        for m in metrics
    ]


def relevant_metrics(knobs: KnobSet) -> tuple[str, ...]:
    """The metrics a knob set should move, half round trip always first."""
    p = knobs.params()
    keys = ["half_rtt_us"]
    for key, delta in (
        ("o_s_us", p.send_overhead_ns),
        ("o_r_us", p.recv_overhead_ns),
        ("g_us", p.gap_ns),
        ("L_us", p.latency_ns),
        ("G_ns_per_B", p.bulk_gap_fs),
    ):
        if delta:
            keys.append(key)
    return tuple(keys)


@dataclass(frozen=True)
class CalibrateRun:
    """The outcome of one server/client run, with where its files are."""

    report: CalibrateReport
    raw: dict[str, Any]
    workdir: Path
    stats: list[dict[str, Any]]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _read_report(paths: list[Path], what: str) -> tuple[CalibrateReport, dict[str, Any]]:
    for path in paths:
        if not path.is_file():
            continue
        try:
            raw = json.loads(path.read_text())
            return CalibrateReport.model_validate(raw), raw
        except (json.JSONDecodeError, ValidationError) as e:
            first = str(e).splitlines()[0]
            raise ToolFailedError(f"{what} wrote unreadable JSON to {path}: {first}") from None
    raise ToolFailedError(f"{what} wrote no JSON (expected {paths[0]})")


def _read_stats(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a process killed mid-write leaves a partial line
    return out


def run_calibrate(
    provider: str,
    knobs: KnobSet | None,
    workdir: Path,
    *,
    iterations: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    build: Path | None = None,
) -> CalibrateRun:
    """Run loggp-calibrate server and client on 127.0.0.1, beneath the shim with these knobs,
    or without the shim for knobs None.  Logs and JSON stay in workdir."""
    exe = calibrate_binary(build)
    workdir.mkdir(parents=True, exist_ok=True)
    stats_file = workdir / "stats.jsonl"
    stats_file.unlink(missing_ok=True)
    env = process_env(knobs, build=build, stats_file=stats_file if knobs is not None else None)
    label = "unshimmed" if knobs is None else f"shim {knobs.label()}"
    port = str(_free_port())

    server_json, client_json = workdir / "server.json", workdir / "client.json"
    for stale in (server_json, client_json):
        stale.unlink(missing_ok=True)
    # The tool's own per-wait timeout is shorter than ours, so a hang is usually reported
    # by the tool itself, naming the wait that failed.
    common = ["-p", provider, "-P", port, "-T", str(max(5, int(timeout / 2)))]
    if iterations is not None:
        common += ["-n", str(iterations)]
    server = [str(exe), *common, "-j", str(server_json), "-B", "127.0.0.1"]
    client = [str(exe), *common, "-j", str(client_json), "127.0.0.1"]

    what = f"loggp-calibrate ({provider}, {label})"
    procs = [spawn(server, env, workdir / "server.log", f"{what} server")]
    procs.append(spawn(client, env, workdir / "client.log", f"{what} client"))
    wait_all(procs, timeout)

    report, raw = _read_report([client_json, server_json], what)
    return CalibrateRun(report, raw, workdir, _read_stats(stats_file))
