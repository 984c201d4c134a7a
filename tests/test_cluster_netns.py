"""site.yml for real, against hosts made of network namespaces (`loggp testbed up 2 --ssh`,
`loggp testbed inventory --slurm`): two compute hosts and an emulator host, each with its
own sshd on the management network, the data network through the loggp-wire the loggp_wire
role starts, and a Slurm cluster (slurm.yml, site.yml's last play: MUNGE's key on every
host, slurmctld in host 0 and a slurmd in each host).  Every role applies; a second run
changes nothing on any host; what the roles did is verified over ssh; the cluster takes
experiments over ssh (launcher ansible) and through Slurm (launcher slurm: job steps,
arrays, points across two nodes beneath the fabric shim and on the wire).

One testbed and one pair of runs for the module, which every test shares (each run takes
one to two minutes on an idle 2-core machine: ansible's per-task round trips).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_util import changed_tasks, play, point_half_rtts, recap, ssh
from conftest import BUILD

import loggp as loggp_pkg
from loggp.net import sshhosts, testbed
from loggp.net.inventory import inventory_of
from loggp.run.wirerun import emulator_control

pytestmark = [pytest.mark.needs_root, pytest.mark.slow, pytest.mark.serial]

REPO = Path(__file__).resolve().parent.parent
SUITE = Path(__file__).resolve().parent / "ansible" / "cluster-pingpong.yaml"
PREFIX = "lgpans"
HOSTS = 2
LATENCY_MS = 2
PROMETHEUS_WAIT_S = 60.0
JOB_TIMEOUT_S = 60
# The loggp under test (a worktree's, given PYTHONPATH), for the hosts' shells too: the
# venv's editable install names one checkout.
LOGGP_SRC = Path(loggp_pkg.__file__).resolve().parent.parent


@dataclass
class Cluster:
    state: testbed.State
    inventory: Path
    fetched: Path
    runs: list[subprocess.CompletedProcess[str]]

    def ssh(self, address: str, command: str) -> subprocess.CompletedProcess[str]:
        return ssh(self.state, address, command)

    @property
    def applied(self) -> bool:
        return [r.returncode for r in self.runs] == [0, 0]

    def on_controller(self, command: str, timeout: float = JOB_TIMEOUT_S) -> tuple[int, str]:
        """command in host 0 (Slurm's controller) with its slurm.conf, exit status and
        output."""
        conf = f"{self.state.hosts_dir}/{testbed.host_ns(PREFIX, 0)}/slurm/slurm.conf"
        res = ssh(
            self.state,
            sshhosts.mgmt_addr(0),
            f"export SLURM_CONF={conf} LOGGP_BUILD={BUILD} PYTHONPATH={LOGGP_SRC}; {command}",
            timeout=timeout,
        )
        return res.returncode, res.stdout + res.stderr

    def experiment_inventory(self) -> str:
        """The inventory the loggp_experiment role wrote on the controller node (its
        emulator group names the wire's control socket)."""
        doc = yaml.safe_load(self.inventory.read_text())["all"]
        return f"{doc['vars']['loggp_root']}/experiments/cluster-pingpong.inventory.yml"


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
        pytest.skip("needs root (network namespaces, sshd, mounts, Slurm's daemons)")
    for tool in ("ansible-playbook", "sshd", "rsync", "slurmctld", "slurmd", "munged"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            pytest.fail(f"{tool} not found: make deps installs it (DEB_PACKAGES)")
    testbed.down(PREFIX)  # what an interrupted earlier run left
    state = testbed.up(PREFIX, HOSTS, [], None, ssh=True)
    try:
        tmp = tmp_path_factory.mktemp("cluster")
        inventory, fetched = tmp / "inventory.yml", tmp / "runs"
        inventory.write_text(yaml.safe_dump(inventory_of(state, slurm=True)))
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
    roles = ("loggp_deps", "loggp_dpdk", "loggp_wire", "loggp_monitoring", "loggp_experiment")
    for role in (*roles, "loggp_slurm"):
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
    """Its two ranks on the first two compute hosts (a slot each)."""
    run = cluster.fetched / "cluster-pingpong"
    for name in ("run.json", "results.sqlite", "report/index.html"):
        assert (run / name).is_file(), f"{name} missing from the fetched run {run}"
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT status, result FROM points ORDER BY seq").fetchall()
    # baseline, latency 0us and 200us; a point the machine's load degraded is measured too
    assert [status in ("ok", "degraded") for status, _ in rows] == [True] * 3, rows
    for _, result in rows:  # each rank reports the host it ran on
        assert json.loads(result)["hosts"] == cluster.state.host_names()[:2]


DELTA_US = 500  # ΔL of the ping-pongs that check it: far above the VM's noise
ROUNDS = 200
REPEATS = 3  # the least time of each knob's: a baseline the load inflated would hide ΔL
# Every message is held ΔL, so no half round trip at ΔL is shorter (one side delaying alone
# gives ΔL/2 and the base path).  Not a gain over the baseline's: a baseline round trip
# may pay a halted vCPU's wake-up that a point beneath ΔL escapes (baseline medians of 24
# and 130 µs in one run, minima at ΔL 18 µs above it), and a gain measured 0.8·ΔL once.
# The 2 %: the clocks' conversions, never a real early release.
HELD = 0.98


def _pingpong_suite(name: str, shim: str, inventory: str, out: Path) -> Path:
    suite = out / f"{name}.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": name,
                "timeout": "60s",
                "repeats": REPEATS,
                # The wire's lcore polls one of the 2 cores, so both ranks share the other:
                # polling without yielding, each waited for the other's 4 ms slice (a CI
                # run's baseline half round trip was 4.0 ms, its ΔL point's 0.66 ms).
                "launcher": {
                    "kind": "ansible",
                    "inventory": inventory,
                    "group": "compute",
                    "mpirun_args": ["--mca", "mpi_yield_when_idle", "1"],
                },
                "emulator": {"shim": shim, "provider": "tcp;ofi_rxm"},
                "sweep": {"knobs": {"latency": [f"{DELTA_US}us"]}},
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
    """The same ping-pong across two hosts, once with ΔL on the emulator node's wire
    (set by the runner over ssh before each point) and once with ΔL in the fabric shim
    (the wire at zero): each message pays ΔL once either way, so both slowdowns agree.
    A point the machine's load degraded (a shim released late beyond its bound) keeps
    only the lower bound: it paid ΔL and more."""
    doc = yaml.safe_load(cluster.inventory.read_text())["all"]
    inventory = cluster.experiment_inventory()
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
        t, least, ok = point_half_rtts(tmp_path / shim)
        assert least["latency"] >= HELD * DELTA_US, (shim, least)
        added_us = t["latency"] - t["baseline"]
        assert added_us <= 1.5 * DELTA_US or not ok, (shim, t)
        slowdown[shim], exact = t["latency"] / t["baseline"], exact and ok
    assert abs(slowdown["wire"] / slowdown["fabric"] - 1) < 0.25 or not exact, slowdown


# -- Slurm (launcher slurm) ----------------------------------------------------------------


def test_every_node_is_idle_and_a_step_spans_two_nodes(cluster: Cluster) -> None:
    assert cluster.applied, "site.yml did not apply"
    rc, out = cluster.on_controller("sinfo --noheader --Node --format='%N %t'")
    assert rc == 0, out
    assert sorted(out.split()) == sorted([*cluster.state.host_names(), *["idle"] * HOSTS]), out
    # Each task prints the host it ran on: the UTS name of its namespace host.
    rc, out = cluster.on_controller(
        "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --time=1 hostname"
    )
    assert rc == 0, out
    names = out.split()
    assert len(names) == 2 and len(set(names)) == 2, out
    assert set(names) <= set(cluster.state.host_names()), out


def own_lock(tmp_path: Path) -> str:
    """The loggp command with a run lock of the test's own, never the machine's (sbatch
    exports the environment to every array task)."""
    return f"LOGGP_RUN_DIR={tmp_path / 'lock'} {Path(sys.executable).parent / 'loggp'}"


SWEEP = {
    "version": 1,
    "name": "slurm-pingpong",
    "timeout": "60s",
    "launcher": {"kind": "slurm"},
    "emulator": {"shim": "fabric", "provider": "tcp;ofi_rxm"},
    "sweep": {"knobs": {"latency": ["10us", "20us", "40us", "80us", "160us"]}},
    "workloads": [
        {
            "name": "pingpong",
            "program": "workloads/pingpong/pingpong",
            "args": ["-n", "50"],
            "ranks": 2,
        },
    ],  # fmt: skip
}


def test_a_sweep_submitted_as_a_job_array_stores_every_point_with_its_task(
    cluster: Cluster, tmp_path: Path
) -> None:
    """loggp run --slurm outside an allocation: one array task per point (baseline and
    five ΔL), each on a whole node, waited for; every point stored with the task, the
    node that ran it and that node's CPU during it."""
    assert cluster.applied, "site.yml did not apply"
    exp, run = tmp_path / "sweep.yaml", tmp_path / "run"
    exp.write_text(yaml.safe_dump(SWEEP))
    loggp = own_lock(tmp_path)
    rc, out = cluster.on_controller(
        f"{loggp} run --slurm {exp} --out {run} --no-report", timeout=300
    )
    assert rc == 0, out
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT seq, point_id, status FROM points ORDER BY seq").fetchall()
    # A point the machine's load degraded is measured too.
    assert [(seq, status in ("ok", "degraded")) for seq, _, status in rows] == [
        (i, True) for i in range(6)
    ], rows
    doc = json.loads((run / "run.json").read_text())
    assert doc["state"] == "complete"
    job = doc["provenance"]["slurm"]
    assert job["partition"] == "loggp"
    points = job["points"]
    assert set(points) == {point_id for _, point_id, _ in rows}
    for seq, point_id, _ in rows:
        assert points[point_id]["array_job_id"] == job["job_id"], points[point_id]
        assert points[point_id]["array_task_id"] == str(seq), points[point_id]
        assert points[point_id]["node"] in cluster.state.host_names(), points[point_id]
        assert points[point_id]["nodes"] == points[point_id]["node"]
        # the node's CPU during the point, from the node exporter the task started there
        assert set(points[point_id]["nodes_cpu"]) == {points[point_id]["node"]}, points[point_id]


def test_a_failed_point_fails_the_submission(cluster: Cluster, tmp_path: Path) -> None:
    """A point whose program fails in its array task fails `loggp run --slurm` (exit
    status 1, the point named), as a failed point fails a run inside one allocation; it
    is stored as failed, so the run is complete and nothing is left to resume."""
    assert cluster.applied, "site.yml did not apply"
    exp, run = tmp_path / "fails.yaml", tmp_path / "run"
    doc = {**SWEEP, "name": "slurm-fails", "sweep": {"knobs": {"latency": ["10us"]}}}
    doc["workloads"] = [{"name": "fails", "program": "/bin/false", "ranks": 1}]
    exp.write_text(yaml.safe_dump(doc))
    cmd = f"{own_lock(tmp_path)} run --slurm {exp} --out {run} --no-report"
    rc, out = cluster.on_controller(cmd, timeout=300)
    assert rc == 1, out
    assert "2 point(s) failed" in out and "fails/baseline/r0" in out, out
    assert json.loads((run / "run.json").read_text())["state"] == "complete"


def _stored(run: Path) -> int:
    if not (run / "results.sqlite").exists():
        return 0
    with sqlite3.connect(run / "results.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM points").fetchone()[0])


def test_a_cancelled_array_leaves_its_points_unstored_and_resume_fills_them(
    cluster: Cluster, tmp_path: Path
) -> None:
    """scancel of the submitted array once a point is stored: the run is interrupted with
    the rest unstored; `--resume --slurm` submits only what is missing and completes it."""
    assert cluster.applied, "site.yml did not apply"
    exp, run = tmp_path / "sweep.yaml", tmp_path / "run"
    exp.write_text(yaml.safe_dump(SWEEP))
    loggp = own_lock(tmp_path)
    rc, out = cluster.on_controller(f"{loggp} run --slurm {exp} --out {run} --no-wait --no-report")
    assert rc == 0, out
    job = (run / "slurm" / "job_id").read_text().strip()
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while _stored(run) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)  # the store has no event to wait on from here
    rc, out = cluster.on_controller(f"scancel {job}")
    assert rc == 0, out
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while time.monotonic() < deadline:
        rc, out = cluster.on_controller(f"squeue --noheader --array --jobs {job}")
        if rc != 0 or not out.strip():
            break
        time.sleep(0.5)
    before = _stored(run)
    assert 1 <= before < 6, f"{before} points stored before the cancel took"
    assert json.loads((run / "run.json").read_text())["state"] == "interrupted"
    rc, out = cluster.on_controller(f"{loggp} run --resume --slurm --out {run} --no-report", 300)
    assert rc == 0, out
    assert f"{6 - before} array tasks" in out, out
    assert _stored(run) == 6
    doc = json.loads((run / "run.json").read_text())
    assert doc["state"] == "complete"
    assert len(doc["provenance"]["slurm"]["points"]) == 6


def _two_node_pingpong(cluster: Cluster, tmp_path: Path, name: str, **setting: Any) -> Path:
    """loggp run --slurm of a ping-pong with one rank on each of two nodes (launcher
    nodes 2, mpirun --map-by node) at ΔL = DELTA_US, REPEATS times; setting: the
    launcher's interface and more of it (launcher), the emulator; the run directory."""
    assert cluster.applied, "site.yml did not apply"
    exp, run = tmp_path / f"{name}.yaml", tmp_path / "run"
    launcher = {"kind": "slurm", "nodes": 2, "mpirun_args": ["--map-by", "node"]}
    doc = {
        **SWEEP,
        "name": name,
        "repeats": REPEATS,
        "launcher": {**launcher, **setting.get("launcher", {})},
        "emulator": setting.get("emulator", SWEEP["emulator"]),
        "sweep": {"knobs": {"latency": [f"{DELTA_US}us"]}},
        "workloads": [{**SWEEP["workloads"][0], "args": ["-n", str(ROUNDS)]}],
    }
    exp.write_text(yaml.safe_dump(doc))
    loggp = own_lock(tmp_path)
    rc, out = cluster.on_controller(f"{loggp} run --slurm {exp} --out {run} --no-report", 600)
    assert rc == 0, out
    return run


def _carries_delta_l(run: Path) -> None:
    """Each message paid ΔL once: no half round trip was shorter than ΔL, and, when no
    point was degraded by the machine's load, the median gained at most 1.5·ΔL."""
    t, least, ok = point_half_rtts(run)
    assert least["latency"] >= HELD * DELTA_US, least
    added_us = t["latency"] - t["baseline"]
    assert added_us <= 1.5 * DELTA_US or not ok, t


def test_a_two_node_point_beneath_the_fabric_shim_carries_delta_l(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A ping-pong rank on each of two nodes over interface eth1, the management network
    (no wire on it), ΔL = 500 µs in the fabric shim: every message pays ΔL once, so the
    half round trip gains ΔL, which it does only if the shim's variables reached the rank
    on the other node (one side delaying alone adds ΔL/2).  Each knob's time is the least
    of its repeats; a point the machine's load degraded keeps only the lower bound."""
    run = _two_node_pingpong(cluster, tmp_path, "slurm-two-nodes", launcher={"interface": "eth1"})
    records = json.loads((run / "run.json").read_text())["provenance"]["slurm"]["points"]
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT seq, point_id, result FROM points ORDER BY seq").fetchall()
    assert [seq for seq, _, _ in rows] == list(range(2 * REPEATS)), rows
    for seq, point_id, result in rows:
        hosts = json.loads(result)["hosts"]  # each rank's own host name
        assert len(set(hosts)) == 2 and set(hosts) <= set(cluster.state.host_names()), hosts
        assert records[point_id]["num_nodes"] == "2", records[point_id]
        assert records[point_id]["node"] in hosts, records[point_id]
        # both nodes' CPU during the point, each read from its own node exporter: the
        # ranks there spin on their completions, so each node was busy
        cpu = records[point_id]["nodes_cpu"]
        assert set(cpu) == set(hosts) and all(0 < v <= 1 for v in cpu.values()), cpu
        stats = (run / "points" / str(seq) / "stats.jsonl").read_text().splitlines()
        pids = {json.loads(line)["pid"] for line in stats}
        assert len(pids) == 2, f"point {seq}: the shim's lines of {pids}, not of both ranks"
    _carries_delta_l(run)


def test_a_two_node_point_on_the_wire_carries_delta_l(cluster: Cluster, tmp_path: Path) -> None:
    """launcher slurm with shim wire: the same ping-pong over the data network (interface
    eth0, through the emulator node's wire), ΔL = 500 µs set on the wire by each array
    task over ssh to the emulator node the inventory names (the tasks take turns, `%1`:
    one wire for every node); the half round trip gains ΔL, and the wire's counters are
    stored with each point."""
    run = _two_node_pingpong(
        cluster, tmp_path, "slurm-wire",
        launcher={"interface": "eth0", "inventory": cluster.experiment_inventory()},
        emulator={"shim": "wire", "provider": "tcp;ofi_rxm"},
    )  # fmt: skip
    assert "#SBATCH --array=0,1,2,3,4,5%1" in (run / "slurm" / "job.sh").read_text()
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT seq, sweep_knob, result, shim_stats FROM points").fetchall()
    assert sorted(seq for seq, _, _, _ in rows) == list(range(2 * REPEATS)), rows
    for seq, knob, result, stats in rows:
        assert len(set(json.loads(result)["hosts"])) == 2, result
        ports = json.loads(stats)
        assert all(p["shim"] == "wire" for p in ports), (seq, ports)
        assert sum(p["rx_pkts"] > 0 for p in ports) >= 2, (seq, ports)  # the two nodes' ports
        want = DELTA_US * 1000 if knob == "latency" else 0
        assert {p["latency_ns"] for p in ports} == {want}, (seq, ports)
    _carries_delta_l(run)
