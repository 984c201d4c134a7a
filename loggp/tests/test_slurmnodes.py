"""A Slurm allocation's node exporters, the parts that need no cluster: a real node
exporter's CPU counters read and turned into a busy share, and scontrol's node lines.
(tests/test_cluster_netns.py starts them on a real allocation.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from loggp.metrics.prometheus import NODE_COLLECTORS, find_node_exporter, start_listening, terminate
from loggp.run.slurmnodes import NodeCpu, NodeExporters, busy_share, parse_cpu, parse_nodes, shares

pytestmark = pytest.mark.unit

METRICS = """\
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 100.5
node_cpu_seconds_total{cpu="0",mode="iowait"} 3
node_cpu_seconds_total{cpu="0",mode="user"} 10.25
node_cpu_seconds_total{cpu="0",mode="system"} 2
node_cpu_seconds_total{cpu="1",mode="idle"} 90
node_cpu_seconds_total{cpu="1",mode="steal"} 1.5
node_load1 0.5
"""


def test_busy_seconds_are_every_mode_but_idle_and_iowait() -> None:
    cpu = parse_cpu(METRICS, 7.0)
    assert cpu == NodeCpu(busy_s=13.75, cpus=2, at=7.0)
    later = NodeCpu(busy_s=14.75, cpus=2, at=8.0)
    assert busy_share(cpu, later) == 0.5
    assert busy_share(cpu, NodeCpu(99.0, 2, 8.0)) == 1.0  # clamped
    assert shares({"a": cpu, "b": cpu}, {"a": later}) == {"a": 0.5}


def test_scontrols_node_lines_give_names_and_addresses() -> None:
    text = (
        "NodeName=n0 Arch=x86_64 CoresPerSocket=1 NodeAddr=10.0.0.1 NodeHostName=n0 State=IDLE\n"
        "NodeName=n1 Arch=x86_64 NodeHostName=n1 State=ALLOCATED\n"
    )
    assert parse_nodes(text) == {"n0": "10.0.0.1", "n1": "n1"}


def test_a_real_node_exporters_cpu_counts_a_busy_loop(tmp_path: Path) -> None:
    binary = find_node_exporter()
    if binary is None:
        pytest.fail("prometheus-node-exporter not found: make deps installs it")
    collectors = [f"--collector.{c}" for c in NODE_COLLECTORS]
    sp, port = start_listening(
        lambda p: [str(binary), f"--web.listen-address=127.0.0.1:{p}",
                   "--collector.disable-defaults", *collectors],  # fmt: skip
        tmp_path / "node.log", "node exporter", "/metrics", 30.0,
    )  # fmt: skip
    try:
        nodes = NodeExporters(tmp_path)
        nodes.addresses = {"here": f"127.0.0.1:{port}"}
        before = nodes.sample()
        spin_until = time.process_time() + 0.5
        while time.process_time() < spin_until:
            pass  # CPU time the node's counters must show
        after = nodes.sample()
    finally:
        terminate(sp, 10.0)
    assert after["here"].cpus == os.cpu_count()
    busy = after["here"].busy_s - before["here"].busy_s
    assert busy >= 0.4, (before, after)  # the loop's 0.5 s, less a tick either side
