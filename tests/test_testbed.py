"""The namespace testbed end to end: hosts wired through loggp-wire, traffic with and
without knobs, live reconfiguration, and an MPI ping-pong run by `loggp run` with
shim: wire and launcher: netns.  Needs root; every testbed is removed in a finalizer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BUILD
from netns_util import loggp, running_testbed, skip_without_netns, snapshot, unique_prefix

from loggp.net import netmeasure
from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE
from loggp.run.proctree import Identity

pytestmark = [pytest.mark.integration, pytest.mark.needs_root, pytest.mark.serial]


@pytest.fixture(autouse=True)
def _netns() -> None:
    skip_without_netns()


def test_up_down_leaves_nothing_behind() -> None:
    before = snapshot()
    with running_testbed(3) as tb:
        state = Path(f"/run/loggp/testbed-{tb.prefix}.json")
        assert state.is_file()
        ns, links = snapshot()
        assert {tb.ns(i) for i in range(3)} <= ns
        assert {f"{tb.prefix}w{i}" for i in range(3)} <= links
        st = tb.status()
        assert st["wire"]["alive"] and st["wire"]["mode"] == "switch"
        assert [h["address"] for h in st["hosts"]] == ["10.231.0.1", "10.231.0.2", "10.231.0.3"]
        assert len(st["ports"]) == 3 and len(st["stats"]) == 3
        pid = st["wire"]["pid"]
        wire = Identity.of(pid)
        assert wire is not None
        again = loggp("testbed", "up", "2", "--prefix", tb.prefix)
        assert again.returncode == 1 and f"a testbed '{tb.prefix}' exists" in again.stderr
        assert netmeasure.ping(tb.ns(2), tb.addr(1), 3, 0.05).lost == 0
    assert snapshot() == before
    assert not list(state.parent.glob(f"testbed-{tb.prefix}[.-]*"))  # state, socket, log
    assert not Path(f"/var/run/dpdk/loggp-{tb.prefix}").exists()
    assert not wire.running()
    res = loggp("testbed", "down", "--prefix", tb.prefix)
    assert res.returncode == 0 and "nothing to remove" in res.stdout


def test_down_after_the_wire_died() -> None:
    """Crash safety: with the wire killed, status says so, a run refuses, and down
    still removes everything."""
    before = snapshot()
    with running_testbed(2) as tb:
        pid = tb.status()["wire"]["pid"]
        os.kill(pid, signal.SIGKILL)
        res = loggp("testbed", "status", "--prefix", tb.prefix)
        assert res.returncode == 1 and "NOT running" in res.stdout
        res = tb.set("--latency", "1ms")
        assert res.returncode == 1 and "is not running" in res.stderr
    assert snapshot() == before


def test_down_after_up_was_killed_halfway() -> None:
    """up is SIGKILLed as soon as its first namespace exists (its state file lists a
    namespace before making it, so the list alone may name one not made yet): down removes
    exactly what it had created."""
    before = snapshot()
    prefix = unique_prefix()
    state = Path(f"/run/loggp/testbed-{prefix}.json")
    env = dict(os.environ, LOGGP_BUILD=str(BUILD))
    up = subprocess.Popen(
        [sys.executable, "-m", "loggp", "testbed", "up", "4", "--prefix", prefix],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        first = Path("/run/netns") / f"{prefix}-h0"  # where ip netns add makes it
        while not first.exists():
            assert up.poll() is None, "up ended before it created a namespace"
            assert time.monotonic() < deadline, f"{first} not made within 60 s"
            time.sleep(0.01)
        up.kill()
        up.wait(10)
        assert json.loads(state.read_text())["namespaces"]
        res = loggp("testbed", "down", "--prefix", prefix)
        assert res.returncode == 0, res.stderr
        assert f"namespace {prefix}-h0" in res.stdout
    finally:
        if up.poll() is None:
            up.kill()
            up.wait(10)
        loggp("testbed", "down", "--prefix", prefix)
    assert snapshot() == before
    assert not state.exists()


def test_ping_and_iperf3_with_and_without_knobs() -> None:
    with running_testbed(2) as tb:
        base = netmeasure.ping(tb.ns(0), tb.addr(1), 50, 0.01)
        assert base.lost == 0
        free = netmeasure.iperf3(tb.ns(1), tb.addr(1), tb.ns(0), 3)
        assert netmeasure.goodput_bps(free) > 20e6, free["end"]["sum_received"]

        res = tb.set("--latency", "2ms", "--bandwidth", "50Mbit/s")
        assert res.returncode == 0, res.stderr
        slow = netmeasure.ping(tb.ns(0), tb.addr(1), 50, 0.01)
        assert slow.lost == 0
        added = slow.median_us() - base.median_us()
        assert 3500 <= added <= 4000 + 5000, (base.median_us(), slow.median_us())
        limited = netmeasure.iperf3(tb.ns(1), tb.addr(1), tb.ns(0), 4)
        wire_mbit = netmeasure.wire_bps(limited) / 1e6
        assert 25 <= wire_mbit <= 53, wire_mbit
        stats = tb.status()["stats"]
        assert stats[1]["tx_pkts"] > 1000 and stats[0]["tx_pkts"] > 100


def test_live_reconfiguration_changes_rtt_without_loss() -> None:
    with running_testbed(2) as tb:
        stream = netmeasure.PingStream(tb.ns(0), tb.addr(1), 300, 0.01)
        try:
            stream.wait_seq(100, 30)
            res = tb.set("--latency", "1ms")
            assert res.returncode == 0, res.stderr
            done = stream.finish(60)
        finally:
            stream.kill()
        assert done.lost == 0, f"{done.lost} of 300 pings lost"
        early = sorted(done.rtts_ms[s] for s in range(1, 80) if s in done.rtts_ms)
        late = sorted(done.rtts_ms[s] for s in range(220, 301) if s in done.rtts_ms)
        gained_ms = late[len(late) // 2] - early[len(early) // 2]
        assert 1.7 <= gained_ms <= 2.0 + 5.0, (early[:5], late[:5])


def test_set_refusals_come_from_the_wire() -> None:
    with running_testbed(2) as tb:
        res = tb.set("--port", "7", "--latency", "1ms")
        assert res.returncode == 1
        assert "loggp-wire refused 'set'" in res.stderr and "port" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
        res = tb.set("--latency", "-1us")
        assert res.returncode == 2 and "bad value '-1us' for --latency" in res.stderr
        ok = tb.set("--port", "1", "--latency", "250us")
        assert ok.returncode == 0, ok.stderr
        ports = tb.status()["ports"]
        assert [p["latency_ns"] for p in ports] == [0, 250000]


ROUNDS = 200
LATENCY_US = 500


def _experiment(path: Path, prefix: str) -> Path:
    path.write_text(
        "version: 1\nname: wire-tiny\nrepeats: 1\ntimeout: 90s\n"
        f"launcher: {{kind: netns, prefix: {prefix}}}\n"
        "emulator: {shim: wire, provider: tcp;ofi_rxm}\n"
        f"sweep: {{knobs: {{latency: [{LATENCY_US}us]}}}}\n"
        "workloads:\n"
        f"  - {{name: pp, program: workloads/pingpong/pingpong, args: [-n, '{ROUNDS}']}}\n"
    )
    return path


def test_mpi_pingpong_across_namespaces_through_the_wire(tmp_path: Path) -> None:
    assert (BUILD / "workloads" / "pingpong" / "pingpong").is_file(), "build wl_pingpong"
    with running_testbed(2, "--latency", "20us") as tb:
        exp = _experiment(tmp_path / "wire.yaml", tb.prefix)
        out = tmp_path / "run"
        res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", timeout=400)
        assert res.returncode == 0, res.stdout + res.stderr
        # the run gave the ports back the testbed's own setting
        assert [p["latency_ns"] for p in tb.status()["ports"]] == [20000, 20000]
    rows = {p.point_id: p.row for p in read_points(out / STORE_FILE)[1]}
    base, slow = rows["pp/baseline/r0"], rows[f"pp/latency={LATENCY_US}us/r0"]
    for r, lat in ((base, 0), (slow, LATENCY_US * 1000)):
        assert r["status"] in MEASURED, r["stderr_tail"]  # degraded: the wire released late
        ports = json.loads(r["shim_stats"])
        assert [p["latency_ns"] for p in ports] == [lat, lat]
        assert all(p["shim"] == "wire" and p["tx_pkts"] >= ROUNDS for p in ports), ports
    # each round trip crosses both egress ports once: 2·ΔL per round, at least half shows
    added = slow["value"] - base["value"]
    assert added >= 0.5 * ROUNDS * 2 * LATENCY_US * 1e-6, (base["value"], slow["value"])
    hostfile = (out / "points" / "0" / "hostfile").read_text()
    assert hostfile == "10.231.0.1 slots=1\n10.231.0.2 slots=1\n"


def test_run_refuses_when_the_testbed_is_down(tmp_path: Path) -> None:
    exp = _experiment(tmp_path / "wire.yaml", "tnone")
    res = loggp("run", str(exp), "--out", str(tmp_path / "run"), "--no-prometheus")
    assert res.returncode == 2
    assert "launcher 'netns' needs the namespace testbed 'tnone' up" in res.stderr
