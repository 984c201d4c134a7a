"""The runner's Prometheus exporter: what `loggp run` is doing, scraped while it runs.

RunMetrics owns its own CollectorRegistry (never prometheus_client's global one, so two
runners in one process, or a test beside a run, never see each other's samples) and serves
it over HTTP on loopback from a daemon thread.

| metric (type) | labels | meaning |
|---|---|---|
| `loggp_run_info` (gauge) | `run` | 1, labelled with the run's name |
| `loggp_run_start_time_seconds` (gauge) | | Unix time the plan was set |
| `loggp_run_points_planned` (gauge) | | points in the plan |
| `loggp_run_points_finished_total` (counter) | `status` | points finished, by status [1] |
| `loggp_run_current_point` (gauge) | `point_id`, `workload`, `knob` | 1 while it runs [2] |
| `loggp_run_last_value` (gauge) | `workload`, `knob`, `sweep_value` | last measured value [3] |
| `loggp_run_point_wall_seconds` (histogram) | `workload` | wall time of each point |
| `loggp_run_shim_release_late_seconds` (histogram) | `workload` | the shim's lateness [4] |
| `loggp_run_shim_release_late_over_10us_total` (counter) | `workload` | releases > 10 us late |
| `loggp_run_shim_early_releases_total` (counter) | `workload` | releases before their time |

[1] `ok`, `degraded`, `failed`, `timeout`, `invalid`; all five exist from the start, at 0.
[2] The series disappears when the point finishes.
[3] The reported metric of the last measured (`ok` or `degraded`) point at that sweep
    value; `sweep_value` is the number as %g in the report's unit, or `none` for baseline
    and grid points.
[4] How late the shim released the delayed items of the workload's points after their
    release time, summed over the points' processes (the fabric shim's `late_hist_us`, or
    the wire ports' change over the point): its 16 buckets as they are, le = 1 us, 2 us,
    ... 16.384 ms (exclusive bounds, loggp/results/lateness.py) and +Inf; `_sum` the total
    lateness.  A series appears with the workload's first point that has counters.

A point that was not measured has no value: it counts in `points_finished_total` and in
the wall-time histogram but leaves `loggp_run_last_value` as it was.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from types import TracebackType
from typing import Any
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from loggp.errors import LoggpError
from loggp.results.lateness import LATE_BUCKETS, Lateness, LatenessError, late_bucket_upper_ns
from loggp.results.store import MEASURED, STATUSES

# Points last from well under a second (a ping-pong) to many minutes (an MPI suite).
WALL_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

_JOIN_TIMEOUT_S = 5.0


class MetricsError(LoggpError):
    """The runner's metrics exporter cannot serve (address in use, bad host)."""


def sweep_label(sweep_value: float | None) -> str:
    """The `sweep_value` label: the number as %g, or `none` for baseline and grid points."""
    return "none" if sweep_value is None else f"{sweep_value:g}"


class _ShimLateness(Collector):
    """The shim's lateness per workload, added up point by point.  prometheus_client's
    Histogram only observes single values; these arrive as bucket counts, so they are
    served as they are, through a collector of their own."""

    _LE = [floatToGoString(late_bucket_upper_ns(k) / 1e9) for k in range(LATE_BUCKETS)]

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_workload: dict[str, Lateness] = {}

    def add(self, workload: str, late: Lateness) -> None:
        with self._lock:
            old = self._by_workload.get(workload)
            if old is not None:
                late = old + late
            self._by_workload[workload] = late

    def collect(self) -> Iterator[Metric]:
        hist = HistogramMetricFamily(
            "loggp_run_shim_release_late_seconds",
            "How late the shim released delayed items after their release time",
            labels=["workload"],
        )
        over = CounterMetricFamily(
            "loggp_run_shim_release_late_over_10us",
            "Delayed items the shim released more than 10 us late",
            labels=["workload"],
        )
        early = CounterMetricFamily(
            "loggp_run_shim_early_releases",
            "Delayed items the shim released before their release time (a bug if not 0)",
            labels=["workload"],
        )
        with self._lock:
            items = sorted(self._by_workload.items())
        for workload, late in items:
            # the last bound is inf: its bucket is +Inf
            buckets = list(zip(self._LE, itertools.accumulate(late.hist), strict=True))
            hist.add_metric([workload], buckets, late.late_ns / 1e9)
            over.add_metric([workload], late.over_10us)
            early.add_metric([workload], late.early)
        yield from (hist, over, early)


class RunMetrics:
    """The runner's metrics and the HTTP server that exposes them."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._info = Gauge("loggp_run_info", "The run being executed", ["run"], registry=r)
        self._start_time = Gauge(
            "loggp_run_start_time_seconds", "Unix time the run's plan was set", registry=r
        )
        self._planned = Gauge("loggp_run_points_planned", "Points in the run's plan", registry=r)
        self._finished = Counter(
            "loggp_run_points_finished", "Points finished, by status", ["status"], registry=r
        )
        self._current = Gauge(
            "loggp_run_current_point",
            "1 while this point runs",
            ["point_id", "workload", "knob"],
            registry=r,
        )
        self._last_value = Gauge(
            "loggp_run_last_value",
            "Reported metric of the last ok point at this sweep value",
            ["workload", "knob", "sweep_value"],
            registry=r,
        )
        self._wall = Histogram(
            "loggp_run_point_wall_seconds",
            "Wall time of a point's launch",
            ["workload"],
            buckets=WALL_BUCKETS,
            registry=r,
        )
        self._lateness = _ShimLateness()
        r.register(self._lateness)
        for status in STATUSES:
            self._finished.labels(status=status)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    # -- the HTTP server -------------------------------------------------------------------

    def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Serve /metrics on host:port (0: a free port) and return the port it listens on.

        Calling it again while serving returns the same port.
        """
        if self._server is not None:
            return self.port
        try:
            server, thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as e:
            raise MetricsError(
                f"metrics exporter cannot listen on {host}:{port}: {e.strerror or e}"
            ) from None
        self._server, self._thread = server, thread
        return self.port

    @property
    def port(self) -> int:
        """The port being served on; MetricsError before start()."""
        if self._server is None:
            raise MetricsError("metrics exporter is not started")
        return int(self._server.server_port)

    @property
    def address(self) -> str:
        """host:port of the exporter, as a Prometheus scrape target."""
        if self._server is None:
            raise MetricsError("metrics exporter is not started")
        host = str(self._server.server_address[0])
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    def close(self) -> None:
        """Stop serving and free the port; safe to call more than once."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()  # returns once serve_forever has left its loop
        server.server_close()
        if thread is not None:
            thread.join(_JOIN_TIMEOUT_S)

    def __enter__(self) -> RunMetrics:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- what the runner reports -----------------------------------------------------------

    def plan(self, run_name: str, total_points: int) -> None:
        """A run of total_points points named run_name begins (or resumes) now."""
        self._info.clear()
        self._info.labels(run=run_name).set(1)
        self._start_time.set(time.time())
        self._planned.set(total_points)

    def point_started(self, point_id: str, workload: str, knob: str) -> None:
        self._current.labels(point_id=point_id, workload=workload, knob=knob).set(1)

    def point_finished(
        self,
        point_id: str,
        workload: str,
        knob: str,
        sweep_value: float | None,
        status: str,
        value: float | None,
        wall_s: float,
    ) -> None:
        self._drop_current(point_id, workload, knob)
        self._finished.labels(status=status).inc()
        self._wall.labels(workload=workload).observe(wall_s)
        if status in MEASURED and value is not None:
            sweep = sweep_label(sweep_value)
            self._last_value.labels(workload=workload, knob=knob, sweep_value=sweep).set(value)

    def shim_lateness(self, workload: str, stats: list[dict[str, Any]]) -> None:
        """A point of workload ended with these shim counter lines (or wire ports)."""
        if not stats:
            return
        try:
            late = Lateness.of(stats)
        except LatenessError:
            return  # stored with the point as it is; only the metric goes without it
        self._lateness.add(workload, late)

    def _drop_current(self, point_id: str, workload: str, knob: str) -> None:
        try:
            self._current.remove(point_id, workload, knob)
        except KeyError:
            pass  # finished without a point_started (e.g. skipped on resume)
