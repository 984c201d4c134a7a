"""A real Prometheus server for a run, and reading a run's TSDB back afterwards.

During `loggp run`, PrometheusServer runs Debian's `prometheus` on a free loopback port
with its config, TSDB and log in `<run_dir>/prometheus/`:

    prometheus/prometheus.yml   scrape config: the runner's exporter, node exporter, extras
    prometheus/prometheus.log   the server's log
    prometheus/data/            the TSDB
    prometheus/node-exporter.log  our own node exporter's log, when one ran

If `prometheus-node-exporter` is installed, the server starts its own node exporter on a
free loopback port with only the cpu, meminfo and loadavg collectors, and stops it again;
the system services Debian's packages install (on :9090 and :9100) are never used.

Afterwards a run's TSDB can be opened by a second, scrape-less PrometheusServer (give it
its own config_name and log_name) to query what was kept.  TSDB retention is set to 100
years, so reopening an old run's TSDB never deletes its data.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from loggp.errors import LoggpError, ToolFailedError, ToolTimeoutError
from loggp.run.proc import Spawned, exit_status, failure_line, spawn

PROMETHEUS = "prometheus"  # binary and Debian package
NODE_EXPORTER = "prometheus-node-exporter"  # binary and Debian package
NODE_COLLECTORS = ("cpu", "meminfo", "loadavg")
RETENTION = "100y"
LOOPBACK = "127.0.0.1"

_POLL_S = 0.1
_PORT_ATTEMPTS = 3
_HTTP_TIMEOUT_S = 30.0
_KILL_TIMEOUT_S = 10.0


class PrometheusNotFoundError(LoggpError):
    """The prometheus binary is not installed."""


class PrometheusError(LoggpError):
    """Prometheus answered with an error, or is not running."""


@dataclass(frozen=True)
class ScrapeTarget:
    """One more thing for Prometheus to scrape (e.g. the wire emulator)."""

    job: str
    address: str  # host:port
    metrics_path: str = "/metrics"


@dataclass(frozen=True)
class Series:
    """One series of a query result: its labels and (Unix time, value) samples."""

    metric: dict[str, str]
    values: list[tuple[float, float]]

    @property
    def value(self) -> float:
        """The last sample's value (the only one for an instant query)."""
        return self.values[-1][1]


# -- finding binaries and ports -------------------------------------------------------------


def find_prometheus() -> Path:
    found = shutil.which(PROMETHEUS)
    if found is None:
        raise PrometheusNotFoundError(
            f"{PROMETHEUS} not found: install Debian's '{PROMETHEUS}' package"
        )
    return Path(found)


def find_node_exporter() -> Path | None:
    found = shutil.which(NODE_EXPORTER)
    return None if found is None else Path(found)


def free_port(host: str = LOOPBACK) -> int:
    """A port on host that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


# -- the scrape config ----------------------------------------------------------------------


def _duration(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def scrape_config(
    targets: Sequence[ScrapeTarget], interval_s: float, services_file: Path | None = None
) -> dict[str, Any]:
    """Prometheus' config as a dict; without targets it has no scrape_configs at all.
    services_file: a file of targets (Prometheus' file_sd JSON) that comes and goes with
    the points, scraped as job `services` (write_service_targets)."""
    jobs = [t.job for t in targets] + (["services"] if services_file else [])
    if len(set(jobs)) != len(jobs):
        raise PrometheusError(f"duplicate scrape job names in {jobs}")
    interval = _duration(interval_s)
    config: dict[str, Any] = {
        "global": {
            "scrape_interval": interval,
            "scrape_timeout": interval,
            "evaluation_interval": interval,
        }
    }
    if targets:
        config["scrape_configs"] = [
            {
                "job_name": t.job,
                "metrics_path": t.metrics_path,
                "static_configs": [{"targets": [t.address]}],
            }
            for t in targets
        ]
    if services_file is not None:
        config.setdefault("scrape_configs", []).append(
            {
                "job_name": "services",
                "file_sd_configs": [{"files": [str(services_file)], "refresh_interval": interval}],
            }
        )
    return config


def write_config(
    path: Path,
    targets: Sequence[ScrapeTarget],
    interval_s: float,
    services_file: Path | None = None,
) -> None:
    text = yaml.safe_dump(scrape_config(targets, interval_s, services_file), sort_keys=False)
    path.write_text("# written by loggp for this run\n" + text)


def write_service_targets(path: Path, targets: Sequence[tuple[str, Mapping[str, str]]]) -> None:
    """The services' (host:port, labels) as Prometheus' file_sd JSON, replaced in one
    rename so Prometheus never reads half a file."""
    doc = [{"targets": [address], "labels": dict(labels)} for address, labels in targets]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc))
    tmp.replace(path)


# -- processes ------------------------------------------------------------------------------


def _answers_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False  # not listening yet, or 503 while starting


def wait_ready(sp: Spawned, url: str, timeout: float) -> None:
    """Poll url until it answers 200; the process exiting or the deadline passing raises."""
    deadline = time.monotonic() + timeout
    while not _answers_ok(url):
        rc = sp.proc.poll()
        if rc is not None:
            detail = failure_line(sp.log) or "no output"
            raise ToolFailedError(
                f"{sp.name} exited with status {exit_status(rc)} while starting: "
                f"{detail} (log: {sp.log})"
            )
        if time.monotonic() > deadline:
            raise ToolTimeoutError(
                f"{sp.name} did not become ready at {url} within {timeout:g} s (log: {sp.log})"
            )
        time.sleep(_POLL_S)


def terminate(sp: Spawned, timeout: float) -> None:
    """SIGTERM the process group, then SIGKILL it if it has not exited within timeout."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if sp.proc.poll() is not None:
            return
        try:
            os.killpg(sp.proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            sp.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            continue


def start_listening(
    argv: Callable[[int], list[str]], log: Path, name: str, ready_path: str, timeout: float
) -> tuple[Spawned, int]:
    """Start argv(port) on a free loopback port and wait until ready_path answers.

    A port taken between choosing and binding it is retried with another one.
    """
    for attempt in range(_PORT_ATTEMPTS):
        port = free_port()
        sp = spawn(argv(port), os.environ, log, name)
        try:
            wait_ready(sp, f"http://{LOOPBACK}:{port}{ready_path}", timeout)
        except BaseException as e:  # Ctrl-C included: never leave it running
            terminate(sp, _KILL_TIMEOUT_S)
            clash = isinstance(e, LoggpError) and "address already in use" in failure_line(log)
            if clash and attempt + 1 < _PORT_ATTEMPTS:
                continue
            raise
        return sp, port
    raise AssertionError("unreachable")


# -- the server -----------------------------------------------------------------------------


class PrometheusServer:
    """Debian's prometheus scraping a run, with its files in <run_dir>/prometheus/.

    exporter is the runner's exporter as host:port (None: not scraped); extra_targets are
    more scrape targets.  With node_exporter and `prometheus-node-exporter` installed, our
    own node exporter runs on loopback for as long as the server does.  With
    scrape_services, job `services` scrapes the targets of services_file, which the runner
    rewrites as each point's services start and stop.  Use as a context manager, or call
    start() and stop().
    """

    def __init__(
        self,
        run_dir: Path,
        exporter: str | None = None,
        extra_targets: Sequence[ScrapeTarget] = (),
        *,
        node_exporter: bool = True,
        scrape_services: bool = False,
        scrape_interval: float = 1.0,
        ready_timeout: float = 30.0,
        stop_timeout: float = 10.0,
        config_name: str = "prometheus.yml",
        log_name: str = "prometheus.log",
    ) -> None:
        self.dir = run_dir / "prometheus"
        self.config_path = self.dir / config_name
        self.log_path = self.dir / log_name
        self.data_path = self.dir / "data"
        self.node_log_path = self.dir / "node-exporter.log"
        # The experiment's services' /metrics, rewritten as points start and stop.
        self.services_file = self.dir / "services.json" if scrape_services else None
        self._exporter = exporter
        self._extra = tuple(extra_targets)
        self._want_node = node_exporter
        self._interval = scrape_interval
        self._ready_timeout = ready_timeout
        self._stop_timeout = stop_timeout
        self._prom: Spawned | None = None
        self._port: int | None = None
        self._node: Spawned | None = None
        self._node_port: int | None = None

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> PrometheusServer:
        """Write the config, start node exporter and prometheus, and wait until ready."""
        if self._prom is not None:
            return self
        binary = find_prometheus()
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            self._start_node_exporter()
            if self.services_file is not None:
                write_service_targets(self.services_file, [])
            write_config(self.config_path, self._targets(), self._interval, self.services_file)
            self._prom, self._port = start_listening(
                lambda port: self._prometheus_argv(binary, port),
                self.log_path,
                PROMETHEUS,
                "/-/ready",
                self._ready_timeout,
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _targets(self) -> list[ScrapeTarget]:
        targets = []
        if self._exporter is not None:
            targets.append(ScrapeTarget("loggp_run", self._exporter))
        if self.node_exporter_address is not None:
            targets.append(ScrapeTarget("node", self.node_exporter_address))
        return targets + list(self._extra)

    def _prometheus_argv(self, binary: Path, port: int) -> list[str]:
        return [
            str(binary),
            f"--config.file={self.config_path}",
            f"--storage.tsdb.path={self.data_path}",
            f"--storage.tsdb.retention.time={RETENTION}",
            "--storage.tsdb.use-lockfile",  # Debian's default is none: two servers, one TSDB
            f"--web.listen-address={LOOPBACK}:{port}",
        ]

    def _start_node_exporter(self) -> None:
        binary = find_node_exporter() if self._want_node else None
        if binary is None:
            return

        def argv(port: int) -> list[str]:
            collectors = [f"--collector.{c}" for c in NODE_COLLECTORS]
            return [
                str(binary),
                f"--web.listen-address={LOOPBACK}:{port}",
                "--web.disable-exporter-metrics",
                "--collector.disable-defaults",
                *collectors,
            ]

        self._node, self._node_port = start_listening(
            argv, self.node_log_path, NODE_EXPORTER, "/metrics", self._ready_timeout
        )

    def stop(self) -> None:
        """Stop prometheus (SIGTERM, then SIGKILL after stop_timeout) and our node exporter.

        Safe to call more than once.
        """
        prom, node = self._prom, self._node
        self._prom = self._node = None
        self._port = self._node_port = None
        for sp in (prom, node):
            if sp is not None:
                terminate(sp, self._stop_timeout)

    @property
    def running(self) -> bool:
        return self._prom is not None and self._prom.proc.poll() is None

    @property
    def port(self) -> int:
        if self._port is None:
            raise PrometheusError("prometheus is not running")
        return self._port

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def pids(self) -> list[int]:
        """Process ids of prometheus and our node exporter, while they run."""
        return [sp.proc.pid for sp in (self._prom, self._node) if sp is not None]

    @property
    def node_exporter_address(self) -> str | None:
        """host:port of our node exporter, or None when none runs."""
        return None if self._node_port is None else f"{LOOPBACK}:{self._node_port}"

    # -- the HTTP API ---------------------------------------------------------------------

    def query(self, promql: str, time: float | None = None) -> list[Series]:
        """An instant query (at Unix time, default now): one sample per series."""
        params: dict[str, str] = {"query": promql}
        if time is not None:
            params["time"] = f"{time:.3f}"
        return parse_result(self._api("query", params), promql)

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[Series]:
        """A range query from start to end (Unix times), one sample every step seconds."""
        params = {
            "query": promql,
            "start": f"{start:.3f}",
            "end": f"{end:.3f}",
            "step": f"{step:g}",
        }
        return parse_result(self._api("query_range", params), promql)

    def wait_for_series(self, promql: str, timeout: float) -> list[Series]:
        """Poll query(promql) until it returns a series; ToolTimeoutError after timeout s."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.query(promql)
            if found:
                return found
            if time.monotonic() > deadline:
                raise ToolTimeoutError(
                    f"prometheus at {self.url} had no series for {promql} "
                    f"within {timeout:g} s (log: {self.log_path})"
                )
            time.sleep(4 * _POLL_S)

    def _api(self, endpoint: str, params: Mapping[str, str]) -> dict[str, Any]:
        url = f"{self.url}/api/v1/{endpoint}?{urllib.parse.urlencode(params)}"
        query = params["query"]
        try:
            with urllib.request.urlopen(url, timeout=_HTTP_TIMEOUT_S) as resp:
                body = json.load(resp)
        except urllib.error.HTTPError as e:
            raise PrometheusError(f"prometheus rejected {query}: {_error_text(e)}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise PrometheusError(
                f"prometheus at {self.url} did not answer {endpoint} for {query}: {reason} "
                f"(log: {self.log_path})"
            ) from None
        if body.get("status") != "success":
            raise PrometheusError(f"prometheus rejected {query}: {body.get('error', body)}")
        data: dict[str, Any] = body["data"]
        return data


def _error_text(e: urllib.error.HTTPError) -> str:
    try:
        return str(json.load(e)["error"])
    except (ValueError, KeyError, TypeError, OSError):
        return f"HTTP {e.code} {e.reason}"


def _sample(pair: Sequence[Any]) -> tuple[float, float]:
    return float(pair[0]), float(pair[1])


def parse_result(data: Mapping[str, Any], promql: str) -> list[Series]:
    """The `data` of a query answer as Series (vector, matrix and scalar results)."""
    kind, result = data.get("resultType"), data.get("result")
    if kind == "vector":
        return [Series(dict(r["metric"]), [_sample(r["value"])]) for r in result or []]
    if kind == "matrix":
        return [Series(dict(r["metric"]), [_sample(v) for v in r["values"]]) for r in result or []]
    if kind == "scalar" and result:
        return [Series({}, [_sample(result)])]
    raise PrometheusError(f"prometheus answered {promql} with a {kind} result, not numbers")
