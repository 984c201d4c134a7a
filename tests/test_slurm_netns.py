"""ansible/slurm.yml for real, against three namespace hosts (`loggp testbed up 3 --ssh`,
`loggp testbed inventory --slurm`): MUNGE's key on every host, slurmctld in host 0 and a
slurmd in each host.  A second run changes nothing; the cluster takes jobs.

One testbed and one pair of runs for the module (the `slurm` fixture), which every Slurm
test shares.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from cluster_util import changed_tasks, play, recap, ssh

from loggp.net import sshhosts, testbed
from loggp.net.inventory import inventory_of

pytestmark = [pytest.mark.needs_root, pytest.mark.slow, pytest.mark.serial]

PREFIX = "lgpslurm"
HOSTS = 3
JOB_TIMEOUT_S = 60


@dataclass
class SlurmCluster:
    state: testbed.State
    inventory: Path
    runs: list[str]  # each run's output
    returncodes: list[int]

    def on_controller(self, command: str) -> tuple[int, str]:
        """command in host 0 with its slurm.conf, exit status and output."""
        conf = f"{self.state.hosts_dir}/{testbed.host_ns(PREFIX, 0)}/slurm/slurm.conf"
        res = ssh(
            self.state,
            sshhosts.mgmt_addr(0),
            f"export SLURM_CONF={conf}; {command}",
            timeout=JOB_TIMEOUT_S,
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
