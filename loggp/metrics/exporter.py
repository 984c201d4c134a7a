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

[1] `ok`, `degraded`, `failed`, `timeout`, `invalid`; all five exist from the start, at 0.
[2] The series disappears when the point finishes.
[3] The reported metric of the last measured (`ok` or `degraded`) point at that sweep
    value; `sweep_value` is the number as %g in the report's unit, or `none` for baseline
    and grid points.

A point that was not measured has no value: it counts in `points_finished_total` and in
the wall-time histogram but leaves `loggp_run_last_value` as it was.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from loggp.errors import LoggpError
from loggp.results.store import MEASURED, STATUSES

# Points last from well under a second (a ping-pong) to many minutes (an MPI suite).
WALL_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

_JOIN_TIMEOUT_S = 5.0


class MetricsError(LoggpError):
    """The runner's metrics exporter cannot serve (address in use, bad host)."""


def sweep_label(sweep_value: float | None) -> str:
    """The `sweep_value` label: the number as %g, or `none` for baseline and grid points."""
    return "none" if sweep_value is None else f"{sweep_value:g}"


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

    def _drop_current(self, point_id: str, workload: str, knob: str) -> None:
        try:
            self._current.remove(point_id, workload, knob)
        except KeyError:
            pass  # finished without a point_started (e.g. skipped on resume)
