"""RunMetrics: its own registry, served on a free loopback port, scraped over HTTP."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from loggp.errors import LoggpError
from loggp.metrics.exporter import RunMetrics, sweep_label

pytestmark = pytest.mark.unit

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def key(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return name, frozenset(labels.items())


def refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture
def metrics() -> Iterator[RunMetrics]:
    m = RunMetrics()
    yield m
    m.close()


def test_start_on_port_zero_serves_metrics(metrics: RunMetrics) -> None:
    port = metrics.start()
    assert port > 0
    assert metrics.port == port
    assert metrics.address == f"127.0.0.1:{port}"
    assert metrics.start() == port  # already serving: same port
    samples = scrape(port)
    for status in ("ok", "degraded", "failed", "timeout", "invalid"):
        assert samples[key("loggp_run_points_finished_total", status=status)] == 0
    # Its own registry: nothing of prometheus_client's global one (process_*, python_*).
    assert not any(name.startswith(("process_", "python_")) for name, _ in samples)


def test_counters_and_labels_follow_the_run(metrics: RunMetrics) -> None:
    port = metrics.start()
    metrics.plan("demo", 3)
    samples = scrape(port)
    assert samples[key("loggp_run_points_planned")] == 3
    assert samples[key("loggp_run_info", run="demo")] == 1
    assert samples[key("loggp_run_start_time_seconds")] > 0

    point = "pp/latency=10us/r0"
    current = key("loggp_run_current_point", point_id=point, workload="pp", knob="latency")
    metrics.point_started(point, "pp", "latency")
    assert scrape(port)[current] == 1

    metrics.point_finished(point, "pp", "latency", 10.0, "ok", 0.5, 1.25)
    samples = scrape(port)
    assert current not in samples
    assert samples[key("loggp_run_points_finished_total", status="ok")] == 1
    last = key("loggp_run_last_value", workload="pp", knob="latency", sweep_value="10")
    assert samples[last] == 0.5
    assert samples[key("loggp_run_point_wall_seconds_count", workload="pp")] == 1
    assert samples[key("loggp_run_point_wall_seconds_sum", workload="pp")] == 1.25

    metrics.point_started("pp/baseline/r0", "pp", "baseline")
    metrics.point_finished("pp/baseline/r0", "pp", "baseline", None, "failed", None, 2.0)
    samples = scrape(port)
    assert samples[key("loggp_run_points_finished_total", status="failed")] == 1
    assert samples[key("loggp_run_points_finished_total", status="ok")] == 1
    assert samples[key("loggp_run_point_wall_seconds_count", workload="pp")] == 2
    # A failed point has no value: no series for its sweep value.
    values = [labels for name, labels in samples if name == "loggp_run_last_value"]
    assert values == [last[1]]
    assert not any(name == "loggp_run_current_point" for name, _ in samples)

    # A degraded point was measured: it counts apart and its value is the last one.
    metrics.point_finished(point, "pp", "latency", 10.0, "degraded", 0.75, 1.0)
    samples = scrape(port)
    assert samples[key("loggp_run_points_finished_total", status="degraded")] == 1
    assert samples[last] == 0.75


def _stats(hist: dict[int, int], early: int = 0, over: int = 0) -> dict[str, object]:
    """A shim counter line with lateness histogram hist (bucket: count)."""
    counts = [hist.get(k, 0) for k in range(16)]
    return {
        "provider": "tcp",
        "releases": sum(counts) + early,
        "late_ns": sum(n * 500 * 2**k for k, n in hist.items()),
        "late_max_ns": 0,
        "late_over_10us": over,
        "early_releases": early,
        "late_hist_us": counts,
    }


def test_shim_lateness_is_a_histogram_per_workload(metrics: RunMetrics) -> None:
    port = metrics.start()
    metrics.shim_lateness("pp", [])  # a point without counters adds no series
    metrics.shim_lateness("pp", [{"late_hist_us": [1]}])  # nor one whose lines are unreadable
    assert not any(name.startswith("loggp_run_shim_") for name, _ in scrape(port))

    # two processes of one point, then a second point
    metrics.shim_lateness("pp", [_stats({0: 5, 3: 1}), _stats({3: 2})])
    metrics.shim_lateness("pp", [_stats({15: 1}, early=1, over=1)])
    metrics.shim_lateness("kap", [_stats({1: 4})])
    samples = scrape(port)

    def bucket(le: str, workload: str = "pp") -> float:
        return samples[key("loggp_run_shim_release_late_seconds_bucket", workload=workload, le=le)]

    # cumulative counts at the exclusive bounds 2^k us, the last bucket +Inf
    assert bucket("1e-06") == 5
    assert bucket("4e-06") == 5
    assert bucket("8e-06") == 8  # bucket 3 is [4, 8) us
    assert bucket("1.6e-05") == 8
    assert bucket("0.016384") == 8
    assert bucket("+Inf") == 9
    assert samples[key("loggp_run_shim_release_late_seconds_count", workload="pp")] == 9
    late_ns = 5 * 500 + 3 * 500 * 8 + 500 * 2**15
    assert samples[key("loggp_run_shim_release_late_seconds_sum", workload="pp")] == pytest.approx(
        late_ns * 1e-9
    )
    assert samples[key("loggp_run_shim_early_releases_total", workload="pp")] == 1
    assert samples[key("loggp_run_shim_release_late_over_10us_total", workload="pp")] == 1
    assert bucket("2e-06", "kap") == 4
    assert samples[key("loggp_run_shim_early_releases_total", workload="kap")] == 0
    kap = [
        labels
        for name, labels in samples
        if name == "loggp_run_shim_release_late_seconds_bucket" and ("workload", "kap") in labels
    ]
    assert len(kap) == 16


def test_finishing_an_unstarted_point_is_fine(metrics: RunMetrics) -> None:
    port = metrics.start()
    metrics.point_finished("x/baseline/r0", "x", "baseline", None, "ok", 3.0, 0.1)
    samples = scrape(port)
    last = key("loggp_run_last_value", workload="x", knob="baseline", sweep_value="none")
    assert samples[last] == 3.0


def test_close_is_idempotent_and_frees_the_port() -> None:
    m = RunMetrics()
    port = m.start()
    m.close()
    m.close()
    assert refused(port)
    with pytest.raises(LoggpError, match="not started"):
        _ = m.port


def test_two_exporters_do_not_share_a_registry() -> None:
    with RunMetrics() as a, RunMetrics() as b:
        a.plan("a", 1)
        b.plan("b", 7)
        assert scrape(a.start())[key("loggp_run_points_planned")] == 1
        assert scrape(b.start())[key("loggp_run_points_planned")] == 7


def test_a_taken_port_is_a_loggp_error(metrics: RunMetrics) -> None:
    port = metrics.start()
    with RunMetrics() as other, pytest.raises(LoggpError, match=f"127.0.0.1:{port}"):
        other.start(port=port)


def test_sweep_label() -> None:
    assert sweep_label(None) == "none"
    assert sweep_label(10.0) == "10"
    assert sweep_label(0.5) == "0.5"
