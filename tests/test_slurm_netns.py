"""ansible/slurm.yml for real, against three namespace hosts (`loggp testbed up 3 --ssh`,
`loggp testbed inventory --slurm`): MUNGE's key on every host, slurmctld in host 0 and a
slurmd in each host.  A second run changes nothing; the cluster takes jobs.

One testbed and one pair of runs for the module (the `slurm` fixture), which every Slurm
test shares.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from cluster_util import changed_tasks, play, point_half_rtts, recap, ssh
from conftest import BUILD

import loggp as loggp_pkg
from loggp.net import sshhosts, testbed
from loggp.net.inventory import inventory_of

pytestmark = [pytest.mark.needs_root, pytest.mark.slow, pytest.mark.serial]

PREFIX = "lgpslurm"
HOSTS = 3
JOB_TIMEOUT_S = 60
# The loggp under test (a worktree's, given PYTHONPATH), for the hosts' shells too: the
# venv's editable install names one checkout.
LOGGP_SRC = Path(loggp_pkg.__file__).resolve().parent.parent


@dataclass
class SlurmCluster:
    state: testbed.State
    inventory: Path
    runs: list[str]  # each run's output
    returncodes: list[int]

    def on_controller(self, command: str, timeout: float = JOB_TIMEOUT_S) -> tuple[int, str]:
        """command in host 0 with its slurm.conf, exit status and output."""
        conf = f"{self.state.hosts_dir}/{testbed.host_ns(PREFIX, 0)}/slurm/slurm.conf"
        res = ssh(
            self.state,
            sshhosts.mgmt_addr(0),
            f"export SLURM_CONF={conf} LOGGP_BUILD={BUILD} PYTHONPATH={LOGGP_SRC}; {command}",
            timeout=timeout,
        )
        return res.returncode, res.stdout + res.stderr


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, sshd, Slurm's daemons)")
    for tool in ("ansible-playbook", "slurmctld", "slurmd", "munged", "mungekey"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            pytest.fail(f"{tool} not found: make deps installs it (DEB_PACKAGES)")
    testbed.down(PREFIX)  # what an interrupted earlier run left
    state = testbed.up(PREFIX, HOSTS, [], None, ssh=True)
    try:
        inventory = tmp_path_factory.mktemp("slurm") / "inventory.yml"
        inventory.write_text(yaml.safe_dump(inventory_of(state, slurm=True)))
        first = play(inventory, "slurm.yml")
        runs = [first] + ([play(inventory, "slurm.yml")] if first.returncode == 0 else [])
        yield SlurmCluster(
            state, inventory, [r.stdout + r.stderr for r in runs], [r.returncode for r in runs]
        )
    finally:
        testbed.down(PREFIX)


def test_the_role_applies_and_a_second_run_changes_nothing(slurm: SlurmCluster) -> None:
    assert slurm.returncodes[0] == 0, slurm.runs[0][-4000:]
    hosts = set(slurm.state.host_names())
    assert set(recap(slurm.runs[0])) == hosts
    assert slurm.returncodes[1] == 0, slurm.runs[1][-4000:]
    counts = recap(slurm.runs[1])
    assert {h: (c["changed"], c["failed"]) for h, c in counts.items()} == {
        h: (0, 0) for h in hosts
    }, changed_tasks(slurm.runs[1])


def test_every_node_is_idle_and_a_step_spans_two_nodes(slurm: SlurmCluster) -> None:
    assert slurm.returncodes == [0, 0], "the role did not apply"
    rc, out = slurm.on_controller("sinfo --noheader --Node --format='%N %t'")
    assert rc == 0, out
    assert sorted(out.split()) == sorted([*slurm.state.host_names(), *["idle"] * HOSTS]), out
    # Each task prints the host it ran on: the UTS name of its namespace host.
    rc, out = slurm.on_controller("srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --time=1 hostname")
    assert rc == 0, out
    names = out.split()
    assert len(names) == 2 and len(set(names)) == 2, out
    assert set(names) <= set(slurm.state.host_names()), out


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
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    """loggp run --slurm outside an allocation: one array task per point (baseline and
    five ΔL), each on a whole node, waited for; every point stored with the task, the
    node that ran it and that node's CPU during it."""
    assert slurm.returncodes == [0, 0], "the role did not apply"
    exp, run = tmp_path / "sweep.yaml", tmp_path / "run"
    exp.write_text(yaml.safe_dump(SWEEP))
    loggp = own_lock(tmp_path)
    rc, out = slurm.on_controller(f"{loggp} run --slurm {exp} --out {run} --no-report", timeout=300)
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
        assert points[point_id]["node"] in slurm.state.host_names(), points[point_id]
        assert points[point_id]["nodes"] == points[point_id]["node"]
        # the node's CPU during the point, from the node exporter the task started there
        assert set(points[point_id]["nodes_cpu"]) == {points[point_id]["node"]}, points[point_id]


def test_a_failed_point_fails_the_submission(slurm: SlurmCluster, tmp_path: Path) -> None:
    """A point whose program fails in its array task fails `loggp run --slurm` (exit
    status 1, the point named), as a failed point fails a run inside one allocation; it
    is stored as failed, so the run is complete and nothing is left to resume."""
    assert slurm.returncodes == [0, 0], "the role did not apply"
    exp, run = tmp_path / "fails.yaml", tmp_path / "run"
    doc = {**SWEEP, "name": "slurm-fails", "sweep": {"knobs": {"latency": ["10us"]}}}
    doc["workloads"] = [{"name": "fails", "program": "/bin/false", "ranks": 1}]
    exp.write_text(yaml.safe_dump(doc))
    cmd = f"{own_lock(tmp_path)} run --slurm {exp} --out {run} --no-report"
    rc, out = slurm.on_controller(cmd, timeout=300)
    assert rc == 1, out
    assert "2 point(s) failed" in out and "fails/baseline/r0" in out, out
    assert json.loads((run / "run.json").read_text())["state"] == "complete"


def _stored(run: Path) -> int:
    if not (run / "results.sqlite").exists():
        return 0
    with sqlite3.connect(run / "results.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM points").fetchone()[0])


def test_a_cancelled_array_leaves_its_points_unstored_and_resume_fills_them(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    """scancel of the submitted array once a point is stored: the run is interrupted with
    the rest unstored; `--resume --slurm` submits only what is missing and completes it."""
    assert slurm.returncodes == [0, 0], "the role did not apply"
    exp, run = tmp_path / "sweep.yaml", tmp_path / "run"
    exp.write_text(yaml.safe_dump(SWEEP))
    loggp = own_lock(tmp_path)
    rc, out = slurm.on_controller(f"{loggp} run --slurm {exp} --out {run} --no-wait --no-report")
    assert rc == 0, out
    job = (run / "slurm" / "job_id").read_text().strip()
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while _stored(run) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)  # the store has no event to wait on from here
    rc, out = slurm.on_controller(f"scancel {job}")
    assert rc == 0, out
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while time.monotonic() < deadline:
        rc, out = slurm.on_controller(f"squeue --noheader --array --jobs {job}")
        if rc != 0 or not out.strip():
            break
        time.sleep(0.5)
    before = _stored(run)
    assert 1 <= before < 6, f"{before} points stored before the cancel took"
    assert json.loads((run / "run.json").read_text())["state"] == "interrupted"
    rc, out = slurm.on_controller(f"{loggp} run --resume --slurm --out {run} --no-report", 300)
    assert rc == 0, out
    assert f"{6 - before} array tasks" in out, out
    assert _stored(run) == 6
    doc = json.loads((run / "run.json").read_text())
    assert doc["state"] == "complete"
    assert len(doc["provenance"]["slurm"]["points"]) == 6


DELTA_US = 500
ROUNDS = 200
REPEATS = 3  # the least time of each knob's: a baseline the load inflated would hide ΔL


def test_a_two_node_point_beneath_the_fabric_shim_carries_delta_l(
    slurm: SlurmCluster, tmp_path: Path
) -> None:
    """loggp run --slurm of a ping-pong with one rank on each of two nodes (launcher
    nodes 2, mpirun --map-by node) over interface eth1, the management network (the data
    network's eth0 leads to an emulator host with no wire), ΔL = 500 µs in the fabric
    shim: every message pays ΔL once, so the half round trip gains ΔL, which it does only
    if the shim's variables reached the rank on the other node (one side delaying alone
    adds ΔL/2).  Each knob's time is the least of its repeats; a point the machine's load
    degraded keeps only the lower bound."""
    assert slurm.returncodes == [0, 0], "the role did not apply"
    exp, run = tmp_path / "two.yaml", tmp_path / "run"
    two_nodes = {
        **SWEEP,
        "name": "slurm-two-nodes",
        "repeats": REPEATS,
        "launcher": {
            "kind": "slurm", "nodes": 2, "interface": "eth1",
            "mpirun_args": ["--map-by", "node"],
        },
        "sweep": {"knobs": {"latency": [f"{DELTA_US}us"]}},
        "workloads": [{**SWEEP["workloads"][0], "args": ["-n", str(ROUNDS)]}],
    }  # fmt: skip
    exp.write_text(yaml.safe_dump(two_nodes))
    loggp = own_lock(tmp_path)
    rc, out = slurm.on_controller(f"{loggp} run --slurm {exp} --out {run} --no-report", timeout=300)
    assert rc == 0, out
    records = json.loads((run / "run.json").read_text())["provenance"]["slurm"]["points"]
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT seq, point_id, result FROM points ORDER BY seq").fetchall()
    assert [seq for seq, _, _ in rows] == list(range(2 * REPEATS)), rows
    for seq, point_id, result in rows:
        hosts = json.loads(result)["hosts"]  # each rank's own host name
        assert len(set(hosts)) == 2 and set(hosts) <= set(slurm.state.host_names()), hosts
        assert records[point_id]["num_nodes"] == "2", records[point_id]
        assert records[point_id]["node"] in hosts, records[point_id]
        # both nodes' CPU during the point, each read from its own node exporter: the
        # ranks there spin on their completions, so each node was busy
        cpu = records[point_id]["nodes_cpu"]
        assert set(cpu) == set(hosts) and all(0 < v <= 1 for v in cpu.values()), cpu
        stats = (run / "points" / str(seq) / "stats.jsonl").read_text().splitlines()
        pids = {json.loads(line)["pid"] for line in stats}
        assert len(pids) == 2, f"point {seq}: the shim's lines of {pids}, not of both ranks"
    t, ok = point_half_rtts(run)
    added_us = t["latency"] - t["baseline"]
    assert added_us >= 0.8 * DELTA_US, t
    assert added_us <= 1.5 * DELTA_US or not ok, t
