"""A real Prometheus (Debian's package) scraping the runner's exporter during a tiny run.

Skips when prometheus is not installed; runs in well under a minute (Prometheus 2.42 first
scrapes new targets about 5 s after start).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import BUILD

from loggp.errors import ToolFailedError, ToolTimeoutError
from loggp.metrics.exporter import RunMetrics
from loggp.metrics.prometheus import (
    PrometheusError,
    PrometheusNotFoundError,
    PrometheusServer,
    ScrapeTarget,
    free_port,
    scrape_config,
    terminate,
    wait_ready,
)
from loggp.plan.experiment import parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.run.proc import spawn
from loggp.run.services import Services

HAVE_PROMETHEUS = shutil.which("prometheus") is not None
needs_prometheus = pytest.mark.skipif(
    not HAVE_PROMETHEUS, reason="prometheus not installed (Debian package 'prometheus')"
)


def port_closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def processes_mentioning(*markers: str) -> list[int]:
    """Pids whose command line contains any of markers."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # exited while we looked
        if any(m in text for m in markers):
            found.append(int(cmdline.parent.name))
    return found


def record_tiny_run(metrics: RunMetrics) -> None:
    metrics.plan("tiny", 2)
    for i, (knob, sweep) in enumerate([("baseline", None), ("latency", 10.0)]):
        point = f"pingpong/{knob}/r0"
        metrics.point_started(point, "pingpong", knob)
        metrics.point_finished(point, "pingpong", knob, sweep, "ok", 1.0 + i, 0.1)
    # the latency point's shim: 99 releases under 1 us late, one in [8, 16) us
    hist = [99, 0, 0, 0, 1] + [0] * 11
    metrics.shim_lateness("pingpong", [{"releases": 100, "late_ns": 9000, "late_hist_us": hist}])


@pytest.mark.integration
@needs_prometheus
def test_prometheus_scrapes_the_runner(tmp_path: Path) -> None:
    t0 = time.time()
    with RunMetrics() as metrics:
        metrics.start()
        server = PrometheusServer(tmp_path, metrics.address)
        with server:
            port = server.port
            node = server.node_exporter_address
            markers = [str(tmp_path), *([node] if node else [])]
            assert processes_mentioning(*markers)
            assert (tmp_path / "prometheus" / "prometheus.yml").is_file()

            record_tiny_run(metrics)
            found = server.wait_for_series(
                'loggp_run_points_finished_total{status="ok"} == 2', timeout=30
            )
            assert [s.value for s in found] == [2.0]
            assert found[0].metric["job"] == "loggp_run"
            assert found[0].metric["instance"] == metrics.address
            planned = server.query("loggp_run_points_planned")
            # the shim's lateness is a histogram Prometheus computes quantiles of
            p99 = server.query(
                "histogram_quantile(0.99, loggp_run_shim_release_late_seconds_bucket)"
            )
            assert [s.metric["workload"] for s in p99] == ["pingpong"]
            assert 0 < p99[0].value <= 1e-6
            assert [s.value for s in planned] == [2.0]
            last = server.query('loggp_run_last_value{knob="latency"}')
            assert [(s.metric["sweep_value"], s.value) for s in last] == [("10", 2.0)]
            with pytest.raises(PrometheusError, match="parse error"):
                server.query("loggp_run_points_planned{")
            if node:  # two node scrapes, so rate() over the run has data
                server.wait_for_series('rate(node_cpu_seconds_total{mode="idle"}[10s])', 20)
            t1 = time.time()
            # Evaluated at t0 + k s: the grid must reach past the newest scrape,
            # which can be less than a step before t1.
            span = server.query_range("loggp_run_points_planned", t0, t1 + 1.0, 1.0)
            assert span and all(v == 2.0 for _, v in span[0].values)

        assert not server.running
        assert port_closed(port)
        assert processes_mentioning(*markers) == []
        server.stop()  # idempotent

    assert (tmp_path / "prometheus" / "data").is_dir()
    # The kept TSDB reopened by a scrape-less server answers for the run's window.
    with reader(tmp_path) as prom:
        planned = prom.query("loggp_run_points_planned", time=t1)
        cpu = prom.query('1 - avg(rate(node_cpu_seconds_total{mode="idle"}[10s]))', time=t1)
    assert [s.value for s in planned] == [2.0]
    assert len(cpu) == (1 if node else 0) and all(0.0 <= s.value <= 1.0 for s in cpu), cpu
    assert processes_mentioning(str(tmp_path)) == []


def reader(run_dir: Path) -> PrometheusServer:
    return PrometheusServer(
        run_dir, node_exporter=False, config_name="readback.yml", log_name="readback.log"
    )


@pytest.mark.unit
def test_missing_prometheus_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PrometheusNotFoundError, match="Debian's 'prometheus' package"):
        PrometheusServer(tmp_path, "127.0.0.1:1").start()


@pytest.mark.unit
def test_scrape_config() -> None:
    assert "scrape_configs" not in scrape_config([], 1.0)
    config = scrape_config([ScrapeTarget("wire", "127.0.0.1:9999")], 1.0)
    assert config["global"]["scrape_interval"] == "1000ms"
    assert config["scrape_configs"][0]["static_configs"] == [{"targets": ["127.0.0.1:9999"]}]
    with pytest.raises(PrometheusError, match="duplicate"):
        scrape_config([ScrapeTarget("a", "h:1"), ScrapeTarget("a", "h:2")], 1.0)


@pytest.mark.integration
@needs_prometheus
def test_a_second_server_on_a_held_tsdb_fails_with_its_log(tmp_path: Path) -> None:
    with PrometheusServer(tmp_path, node_exporter=False):
        with pytest.raises(ToolFailedError, match="lock DB directory.*readback.log"):
            reader(tmp_path).start()
    assert processes_mentioning(str(tmp_path)) == []


@pytest.mark.unit
def test_wait_ready_names_what_did_not_answer(tmp_path: Path) -> None:
    log = tmp_path / "silent.log"
    silent = spawn([sys.executable, "-c", "import time; time.sleep(60)"], os.environ, log, "silent")
    try:
        url = f"http://127.0.0.1:{free_port()}/-/ready"
        with pytest.raises(ToolTimeoutError, match=f"silent did not become ready at {url}.*{log}"):
            wait_ready(silent, url, timeout=0.5)
    finally:
        terminate(silent, 5.0)
    assert silent.proc.poll() is not None


@pytest.mark.unit
def test_wait_ready_reports_an_early_exit(tmp_path: Path) -> None:
    log = tmp_path / "broken.log"
    code = "import sys; print('bad flag'); sys.exit(3)"
    broken = spawn([sys.executable, "-c", code], os.environ, log, "broken")
    url = f"http://127.0.0.1:{free_port()}/-/ready"
    with pytest.raises(
        ToolFailedError, match="broken exited with status 3 while starting: bad flag"
    ):
        wait_ready(broken, url, timeout=30)


@pytest.mark.unit
def test_wait_ready_reports_the_error_line_not_later_chatter(tmp_path: Path) -> None:
    """Prometheus may log "Listening on" after the error that made it exit."""
    log = tmp_path / "chatty.log"
    code = (
        "import sys; print('level=info msg=\"Starting\"');"
        " print('level=error err=\"opening storage failed: lock DB directory\"');"
        " print('level=info msg=\"Listening on\"'); sys.exit(1)"
    )
    chatty = spawn([sys.executable, "-c", code], os.environ, log, "chatty")
    url = f"http://127.0.0.1:{free_port()}/-/ready"
    with pytest.raises(ToolFailedError, match="while starting: level=error .*lock DB directory"):
        wait_ready(chatty, url, timeout=30)


@pytest.mark.integration
@needs_prometheus
def test_a_service_is_scraped_while_its_point_runs(tmp_path: Path) -> None:
    """An experiment's service with `metrics` (loggp-kvserver's /metrics) is a target of the
    run's Prometheus server while its point runs, labelled with service, instance and
    point, and is no target once the point's services have stopped."""
    kv = BUILD / "services" / "kvserver" / "loggp-kvserver"
    assert kv.is_file(), f"{kv} missing"
    exp = parse_experiment(
        "version: 1\nname: s\nlauncher: {kind: local}\nemulator: {shim: none}\n"
        "services:\n"
        f"  - {{name: kv, program: {kv}, args: [--port, '0'], metrics: '${{host}}:${{port}}',\n"
        "     ready: 'ready port=(?P<port>\\d+)'}\n"
        "workloads: [{name: w, kind: process, ranks: 1, program: 'true'}]\n",
        "exp.yaml",
    )
    with PrometheusServer(tmp_path, node_exporter=False, scrape_services=True) as server:
        assert server.services_file is not None
        assert json.loads(server.services_file.read_text()) == []
        with Services(exp, exp.workloads[0], KnobSet.parse({}), tmp_path, None,
                      targets_file=server.services_file, point_id="w/baseline/r0"):  # fmt: skip
            found = server.wait_for_series('kvserver_keys{service="kv"} == 0', timeout=30)
            assert found[0].metric["point"] == "w/baseline/r0"
            assert found[0].metric["instance"] == "0" and found[0].metric["job"] == "services"
        assert json.loads(server.services_file.read_text()) == []
