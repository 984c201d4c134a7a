"""A network through the wire: per-pair latency from a two-rack topology.

Four MPI ranks over tcp;ofi_rxm on the four hosts of a namespace testbed (`loggp run`,
launcher netns, shim wire): node i of the network is host i, the wire's port i, and each
rank runs on its node's host.  Two racks of two nodes; leaving a rack adds 50 µs.  The
workload's ping-pong runs between ranks 0 and 1: placed on different racks every frame
between them gains 50 µs, on one rack nothing.  What the wire added is read from its own
counters, per egress port and source port (`pair_pkts`, `pair_latency_ns`, stored with the
point), exactly; the wall clock only bounds the fastest round trip, which a busy host can
raise but not lower below what the wire holds each frame.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import BUILD
from netns_util import loggp, running_testbed, skip_without_netns

from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE

pytestmark = [pytest.mark.integration, pytest.mark.needs_root, pytest.mark.serial]

RACK_US = 50
ROUNDS = 200
INTER = [0, 2, 1, 3]  # rank 0 on node 0 (rack 0), rank 1 on node 2 (rack 1)
INTRA = [0, 1, 2, 3]  # ranks 0 and 1 on nodes 0 and 1: rack 0
# Two runs of the point; the first measured one is judged.  In about 1 of 50 points the
# 4-host job never got past its start (once in CI, once here): one namespace host sent
# at most a frame and the point timed out.  Not understood; the counters this test reads
# are exact in any measured run.
REPEATS = 2


def _experiment(path: Path, prefix: str, placement: list[int]) -> Path:
    path.write_text(
        f"version: 1\nname: racks-wire\nrepeats: {REPEATS}\ntimeout: 45s\n"
        f"launcher: {{kind: netns, prefix: {prefix}}}\n"
        "emulator: {shim: wire, provider: tcp;ofi_rxm}\n"
        f"network:\n  nodes: 4\n  placement: {placement}\n  levels:\n"
        f"    - {{name: node}}\n    - {{name: rack, size: 2, latency: {RACK_US}us}}\n"
        "workloads:\n"
        f"  - {{name: pp, program: workloads/pingpong/pingpong, ranks: 4, "
        f"args: [-n, '{ROUNDS}']}}\n"
    )
    return path


def _run(tb: Any, tmp_path: Path, placement: list[int]) -> tuple[dict[str, Any], list[Any]]:
    """The first measured repeat of a run on placement: its row and the wire's port
    lines."""
    name = "-".join(map(str, placement))
    exp = _experiment(tmp_path / f"racks-{name}.yaml", tb.prefix, placement)
    out = tmp_path / f"run-{name}"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", timeout=400)
    assert res.returncode in (0, 1), res.stdout + res.stderr  # 1: a repeat failed
    points = read_points(out / STORE_FILE)[1]
    measured = [p for p in points if p.status in MEASURED]
    assert measured, [p.row["stderr_tail"] for p in points]
    point = measured[0]
    ports = {int(p["port"]): p for p in json.loads(point.row["shim_stats"])}
    assert sorted(ports) == [0, 1, 2, 3], ports
    rankfile = (out / "points" / str(point.row["seq"]) / "rankfile").read_text().splitlines()
    assert [r.split()[1] for r in rankfile] == [
        f"{r}=10.231.0.{n + 1}" for r, n in enumerate(placement)
    ], rankfile
    return point.row, ports


def _from(ports: dict[int, Any], egress: int, source: int) -> tuple[int, int]:
    """(frames from source that left egress, the latency the network added to them)."""
    return int(ports[egress]["pair_pkts"][source]), int(ports[egress]["pair_latency_ns"][source])


@pytest.fixture(scope="module")
def testbed() -> Any:
    skip_without_netns()
    assert (BUILD / "workloads" / "pingpong" / "pingpong").is_file(), "build wl_pingpong"
    with running_testbed(4) as tb:
        yield tb
        # the run took its pairs away again
        assert tb.status()["wire"]["pairs"] == 0


def test_ranks_on_two_racks_gain_the_rack_latency_each_way(testbed: Any, tmp_path: Path) -> None:
    row, ports = _run(testbed, tmp_path, INTER)
    for egress, source in ((2, 0), (0, 2)):  # rank 0 on host 0, rank 1 on host 2
        frames, added = _from(ports, egress, source)
        assert frames >= ROUNDS and added == frames * RACK_US * 1000, ports[egress]
    # host 1 and host 0 share a rack: whatever passed between them gained nothing
    assert _from(ports, 1, 0)[1] == 0 and _from(ports, 0, 1)[1] == 0, ports
    # never early: every round trip holds both frames' 50 µs
    metrics = json.loads(row["result"])["metrics"]
    assert metrics["half_rtt_min_us"] >= RACK_US, metrics


def test_ranks_in_one_rack_gain_nothing(testbed: Any, tmp_path: Path) -> None:
    _, ports = _run(testbed, tmp_path, INTRA)
    for egress, source in ((1, 0), (0, 1)):  # ranks 0 and 1 on hosts 0 and 1
        frames, added = _from(ports, egress, source)
        assert frames >= ROUNDS and added == 0, ports[egress]
    # the other rack is still 50 µs away: the job's start and end reach it
    frames, added = _from(ports, 2, 0)
    assert frames > 0 and added == frames * RACK_US * 1000, ports[2]
