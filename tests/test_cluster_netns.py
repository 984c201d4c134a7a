"""site.yml for real, against hosts made of network namespaces (`loggp testbed up 2 --ssh`):
two compute hosts and an emulator host, each with its own sshd on the management network,
the data network through the loggp-wire the loggp_wire role starts.  Every role applies;
a second run changes nothing on any host; what the roles did is verified over ssh.

One testbed and one pair of runs for the module (each run takes about a minute on an idle
2-core machine: ansible's per-task round trips).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from cluster_util import changed_tasks, play, point_half_rtts, recap, ssh

from loggp.net import sshhosts, testbed
from loggp.net.inventory import inventory_of
from loggp.run.wirerun import emulator_control

pytestmark = [pytest.mark.needs_root, pytest.mark.slow, pytest.mark.serial]

REPO = Path(__file__).resolve().parent.parent
SUITE = Path(__file__).resolve().parent / "ansible" / "cluster-pingpong.yaml"
PREFIX = "lgpans"
LATENCY_MS = 2
PROMETHEUS_WAIT_S = 60.0


@dataclass
class Cluster:
    state: testbed.State
    inventory: Path
    fetched: Path
    runs: list[subprocess.CompletedProcess[str]]

    def ssh(self, address: str, command: str) -> subprocess.CompletedProcess[str]:
        return ssh(self.state, address, command)


def _play(inventory: Path, fetched: Path) -> subprocess.CompletedProcess[str]:
    extra = {
        "loggp_wire_knobs": {"latency": f"{LATENCY_MS}ms"},
        "loggp_monitoring_scrape_interval": "1s",
        "loggp_experiment_suite": str(SUITE),
        "loggp_experiment_fetch_dir": str(fetched),
        "loggp_experiment_args": ["--wait-lock", "300"],  # another engineer's run
    }
    return play(inventory, "site.yml", extra)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, sshd, mounts)")
    for tool in ("ansible-playbook", "sshd", "rsync"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            pytest.fail(f"{tool} not found: make deps installs it (DEB_PACKAGES)")
    testbed.down(PREFIX)  # what an interrupted earlier run left
    state = testbed.up(PREFIX, 2, [], None, ssh=True)
    try:
        tmp = tmp_path_factory.mktemp("cluster")
        inventory, fetched = tmp / "inventory.yml", tmp / "runs"
        inventory.write_text(yaml.safe_dump(inventory_of(state)))
        first = _play(inventory, fetched)
        runs = [first, _play(inventory, fetched)] if first.returncode == 0 else [first]
        yield Cluster(state, inventory, fetched, runs)
    finally:
        testbed.down(PREFIX)


def test_every_role_applies_and_a_second_run_changes_nothing(cluster: Cluster) -> None:
    first = cluster.runs[0]
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    hosts = {*cluster.state.host_names(), testbed.emu_ns(PREFIX)}
    assert set(recap(first.stdout)) == hosts
    for role in ("loggp_deps", "loggp_dpdk", "loggp_wire", "loggp_monitoring", "loggp_experiment"):
        assert f"TASK [{role} : " in first.stdout
    second = cluster.runs[1]
    assert second.returncode == 0, second.stdout[-4000:]
    counts = recap(second.stdout)
    assert {h: (c["changed"], c["failed"]) for h, c in counts.items()} == {
        h: (0, 0) for h in hosts
    }, changed_tasks(second.stdout)


def test_packages_build_sysctl_and_mount_over_ssh(cluster: Cluster) -> None:
    packages = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(REPO), "print-deb-packages"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    doc = yaml.safe_load(cluster.inventory.read_text())["all"]
    root, hugepages = doc["vars"]["loggp_root"], doc["vars"]["loggp_dpdk_hugepages"]
    for i, name in enumerate(cluster.state.host_names()):
        addr = sshhosts.mgmt_addr(i)
        res = cluster.ssh(addr, "dpkg-query -W -f '${Status}\\n' " + " ".join(packages))
        assert res.stdout.splitlines() == ["install ok installed"] * len(packages), res.stderr
        res = cluster.ssh(
            addr, f"hostname; test -x {root}/build/emulator/wire/loggp-wire && echo b"
        )
        assert res.stdout.split() == [name, "b"]
    emu = sshhosts.EMU_MGMT_ADDR
    host_dir = f"{cluster.state.hosts_dir}/{testbed.emu_ns(PREFIX)}"
    res = cluster.ssh(
        emu,
        f"cat {host_dir}/60-loggp-hugepages.conf; sysctl -n vm.nr_hugepages; "
        f"findmnt -n -o FSTYPE {host_dir}/hugepages",
    )
    assert res.stdout.splitlines()[-3:] == [
        f"vm.nr_hugepages = {hugepages}", str(hugepages), "hugetlbfs",
    ], res.stdout + res.stderr  # fmt: skip
    # The mount is the emulator host's own: not in the machine's mount namespace.
    assert subprocess.run(["findmnt", f"{host_dir}/hugepages"], check=False).returncode == 1


def test_the_data_network_goes_through_the_wire_with_its_knobs(cluster: Cluster) -> None:
    res = cluster.ssh(sshhosts.mgmt_addr(0), "ping -n -q -c 3 -i 0.2 -W 2 10.231.0.2")
    assert res.returncode == 0, res.stdout + res.stderr
    rtt_min_ms = float(re.search(r"= ([\d.]+)/", res.stdout).group(1))  # type: ignore[union-attr]
    assert rtt_min_ms >= 2 * LATENCY_MS, res.stdout  # ΔL each way


def test_prometheus_scrapes_every_node_exporter_and_the_wire(cluster: Cluster) -> None:
    url = f"http://{sshhosts.EMU_MGMT_ADDR}:9090/api/v1/targets"
    ask = f"python3 -c 'import urllib.request as u; print(u.urlopen(\"{url}\").read().decode())'"
    deadline = time.monotonic() + PROMETHEUS_WAIT_S
    while True:
        res = cluster.ssh(sshhosts.mgmt_addr(0), ask)
        targets = json.loads(res.stdout)["data"]["activeTargets"] if res.returncode == 0 else []
        health = {(t["labels"]["job"], t["labels"]["host"]): t["health"] for t in targets}
        if health and all(h == "up" for h in health.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # the next scrape, 1 s apart
    hosts = [*cluster.state.host_names(), testbed.emu_ns(PREFIX)]
    want = {("node", h): "up" for h in hosts} | {("loggp-wire", testbed.emu_ns(PREFIX)): "up"}
    assert health == want


def test_the_experiment_ran_across_two_hosts_and_came_back_complete(cluster: Cluster) -> None:
    run = cluster.fetched / "cluster-pingpong"
    for name in ("run.json", "results.sqlite", "report/index.html"):
        assert (run / name).is_file(), f"{name} missing from the fetched run {run}"
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT status, result FROM points ORDER BY seq").fetchall()
    # baseline, latency 0us and 200us; a point the machine's load degraded is measured too
    assert [status in ("ok", "degraded") for status, _ in rows] == [True] * 3, rows
    for _, result in rows:  # each rank reports the host it ran on
        assert json.loads(result)["hosts"] == cluster.state.host_names()


WIRE_DELTA_US = 500
ROUNDS = 200


def _pingpong_suite(name: str, shim: str, inventory: str, out: Path) -> Path:
    suite = out / f"{name}.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": name,
                "timeout": "60s",
                "launcher": {"kind": "ansible", "inventory": inventory, "group": "compute"},
                "emulator": {"shim": shim, "provider": "tcp;ofi_rxm"},
                "sweep": {"knobs": {"latency": [f"{WIRE_DELTA_US}us"]}},
                "workloads": [
                    {
                        "name": "pingpong",
                        "program": "workloads/pingpong/pingpong",
                        "args": ["-n", str(ROUNDS)],
                        "ranks": 2,
                    },
                ],  # fmt: skip
            }
        )
    )
    return suite


def test_the_wires_delta_l_slows_a_pingpong_as_the_fabric_shims_does(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The same ping-pong across the two hosts, once with ΔL on the emulator node's wire
    (set by the runner over ssh before each point) and once with ΔL in the fabric shim
    (the wire at zero): each message pays ΔL once either way, so both slowdowns agree.
    A point the machine's load degraded (a shim released late beyond its bound) keeps
    only the lower bound: it paid ΔL and more."""
    doc = yaml.safe_load(cluster.inventory.read_text())["all"]
    inventory = f"{doc['vars']['loggp_root']}/experiments/cluster-pingpong.inventory.yml"
    with emulator_control(Path(inventory)) as ctl:  # site.yml left the wire at 2 ms
        ctl.request({"cmd": "set", "latency": "0ns"})
    slowdown, exact = {}, True
    for shim in ("fabric", "wire"):
        suite = _pingpong_suite(f"cluster-{shim}", shim, inventory, tmp_path)
        res = cluster.ssh(
            sshhosts.mgmt_addr(0),
            f". {doc['vars']['loggp_root']}/env.sh && {doc['vars']['loggp_experiment_command']} "
            f"run {suite} --out {tmp_path / shim} --no-report --no-prometheus --wait-lock 300",
        )
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        t, ok = point_half_rtts(tmp_path / shim)
        added_us = t["latency"] - t["baseline"]
        assert added_us >= 0.8 * WIRE_DELTA_US, (shim, t)
        assert added_us <= 1.5 * WIRE_DELTA_US or not ok, (shim, t)
        slowdown[shim], exact = t["latency"] / t["baseline"], exact and ok
    assert abs(slowdown["wire"] / slowdown["fabric"] - 1) < 0.25 or not exact, slowdown
