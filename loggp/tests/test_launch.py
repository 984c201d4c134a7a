"""Launchers: inventory to hostfile, program lookup, the mpirun command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.errors import KnobError
from loggp.net.wirectl import WireControlError
from loggp.plan.experiment import Experiment, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.run.launch import LaunchError, find_program, inventory_hostfile, point_launch, preflight
from loggp.run.wirerun import emulator_control

pytestmark = pytest.mark.unit

INVENTORY = """\
# cluster
[compute]
node1 ansible_host=10.0.0.1 loggp_slots=4
node2
node1 ansible_host=10.0.0.1 loggp_slots=4

[compute:vars]
ansible_user=hpc

[login]
front ansible_host=10.0.0.9
"""


def test_inventory_group_to_hostfile(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(INVENTORY)
    out = inventory_hostfile(inv, "compute", tmp_path / "hostfile")
    assert out.read_text() == "10.0.0.1 slots=4\nnode2 slots=1\n"
    every = inventory_hostfile(inv, None, tmp_path / "all")
    assert every.read_text().splitlines() == [
        "10.0.0.1 slots=4",
        "node2 slots=1",
        "10.0.0.9 slots=1",
    ]


def test_inventory_errors(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(INVENTORY)
    with pytest.raises(LaunchError, match=r"no hosts in group \[gpu\]"):
        inventory_hostfile(inv, "gpu", tmp_path / "h")
    with pytest.raises(LaunchError, match="cannot read the inventory"):
        inventory_hostfile(tmp_path / "missing.ini", None, tmp_path / "h")


def test_find_program(tmp_path: Path, fake_build: Path) -> None:
    prog = fake_build / "workloads" / "x" / "x"
    prog.parent.mkdir(parents=True)
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    assert find_program("workloads/x/x", None) == prog.resolve()
    assert find_program("sh", None).name == "sh"  # from PATH
    with pytest.raises(LaunchError, match="program 'nope/x' not found"):
        find_program("nope/x", tmp_path)


def _exp(tmp_path: Path, launcher: str, shim: str = "fabric"):
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    return parse_experiment(
        f"version: 1\nname: t\nlauncher: {launcher}\nemulator: {{shim: {shim}}}\n"
        f"workloads: [{{name: a, program: {prog}, ranks: 3, args: [-n, '5']}}]\n",
        "t.yaml",
    )


def test_mpirun_command_beneath_the_shim(tmp_path: Path, fake_build: Path) -> None:
    exp = _exp(tmp_path, "{kind: mpirun, mpirun_args: [--tag-output]}")
    launch = point_launch(exp, exp.workloads[0], KnobSet.parse({"latency": "5us"}), tmp_path, None)
    argv = launch.argv
    assert Path(argv[0]).name == "mpirun" and argv[1:3] == ["-n", "3"]
    assert "mtl_ofi_provider_include" in argv and "tcp;ofi_rxm" in argv
    for var in ("FI_HOOK", "FI_PROVIDER_PATH", "LOGGP_LATENCY", "LOGGP_STATS_FILE"):
        assert argv[argv.index(var) - 1] == "-x"
    assert argv[-4:] == ["--tag-output", str(tmp_path / "prog"), "-n", "5"]
    assert launch.env["LOGGP_LATENCY"] == "5us" and launch.env["FI_HOOK"] == "loggp"
    # Programs that open libfabric themselves get the experiment's provider.
    assert launch.env["LOGGP_PROVIDER"] == "tcp;ofi_rxm"
    assert argv[argv.index("LOGGP_PROVIDER") - 1] == "-x"


def test_network_reaches_every_rank_as_a_pair_table(tmp_path: Path, fake_build: Path) -> None:
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    exp = parse_experiment(
        "version: 1\nname: t\nnetwork:\n  nodes: 3\n  placement: round-robin\n"
        "  levels: [{name: node, latency: 7us}]\n"
        f"workloads: [{{name: a, program: {prog}, ranks: 3}}]\n",
        "t.yaml",
    )
    point = tmp_path / "point"
    point.mkdir()
    launch = point_launch(exp, exp.workloads[0], KnobSet(), point, None)
    table = Path(launch.env["LOGGP_TOPOLOGY"])
    assert table == (point / "pairs.txt").resolve()
    assert launch.argv[launch.argv.index("LOGGP_TOPOLOGY") - 1] == "-x"
    lines = table.read_text().splitlines()
    assert lines[1] == "ranks 3" and len(lines) == 2 + 6 and "2 0 7000 0 0" in lines
    assert (point / "pairs.txt.names").is_dir()


@pytest.mark.parametrize(
    ("pin", "binding"),
    [("false", ["--bind-to", "none"]), ("true", ["--bind-to", "core:overload-allowed"])],
)
def test_ranks_bound_to_cores_only_when_pinned(
    tmp_path: Path, fake_build: Path, pin: str, binding: list[str]
) -> None:
    exp = _exp(tmp_path, f"{{kind: local, pin: {pin}}}")
    argv = point_launch(exp, exp.workloads[0], KnobSet(), tmp_path, None).argv
    i = argv.index("--bind-to")
    assert argv[i : i + 2] == binding and argv.count("--bind-to") == 1
    assert ("--map-by" in argv) == (pin == "true")


def test_ansible_launcher_writes_a_hostfile(tmp_path: Path, fake_build: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text(INVENTORY)
    exp = _exp(tmp_path, f"{{kind: ansible, inventory: {inv}, group: compute}}")
    argv = point_launch(exp, exp.workloads[0], KnobSet(), tmp_path, None).argv
    assert argv[argv.index("--hostfile") + 1] == str(tmp_path / "hostfile")
    assert (tmp_path / "hostfile").read_text().startswith("10.0.0.1 slots=4")


@pytest.mark.parametrize(
    ("launcher", "shim", "message"),
    [
        ("{kind: netns}", "fabric", "launcher 'netns' needs the namespace testbed"),
        ("{kind: local}", "wire", "shim 'wire' needs the DPDK wire emulator"),
        ("{kind: slurm}", "wire", "shim 'wire' needs the DPDK wire emulator"),
        ("{kind: mpirun, hostfile: /no/such/hostfile}", "fabric", "hostfile /no/such/hostfile"),
    ],
)
def test_preflight_refuses(
    tmp_path: Path, launcher: str, shim: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real testbed with the default prefix may be up on this machine: look elsewhere.
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path))
    with pytest.raises(LaunchError, match=message):
        preflight(_exp(tmp_path, launcher, shim), None)


def test_preflight_refuses_a_loggp_typo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every point would be refused by the shim: the run does not start."""
    monkeypatch.setenv("LOGGP_OVERHAED", "1us")
    with pytest.raises(KnobError, match="^unknown variable LOGGP_OVERHAED: did you mean "):
        preflight(_exp(tmp_path, "{kind: local}", "fabric"), None)


YAML_INVENTORY = """
all:
  vars: {ansible_user: root, ansible_ssh_private_key_file: /k/id, loggp_data_interface: eth0}
  children:
    compute:
      vars: {loggp_slots: 2}
      children:
        left:
          hosts:
            n1: {ansible_host: 192.168.0.1, loggp_data_address: 10.0.0.1}
        right:
          hosts:
            n2: {ansible_host: 192.168.0.2, loggp_slots: 4}
    monitor:
      hosts:
        mon: {ansible_host: 192.168.0.9}
"""


def test_yaml_inventory_groups_vars_and_ssh(tmp_path: Path, fake_build: Path) -> None:
    inv = tmp_path / "hosts.yml"
    inv.write_text(YAML_INVENTORY)
    out = inventory_hostfile(inv, "compute", tmp_path / "hostfile")
    assert out.read_text() == "10.0.0.1 slots=2\n192.168.0.2 slots=4\n"
    every = inventory_hostfile(inv, None, tmp_path / "all").read_text().splitlines()
    assert every == ["10.0.0.1 slots=2", "192.168.0.2 slots=4", "192.168.0.9 slots=1"]
    with pytest.raises(LaunchError, match=r"no hosts in group \[gpu\]"):
        inventory_hostfile(inv, "gpu", tmp_path / "h")
    exp = _exp(tmp_path, f"{{kind: ansible, inventory: {inv}, group: compute}}")
    launch = point_launch(exp, exp.workloads[0], KnobSet(), tmp_path, None)
    argv = launch.argv
    assert argv[argv.index("plm_rsh_args") + 1] == "-i /k/id -l root"
    assert argv[argv.index("btl_tcp_if_include") + 1] == "eth0"
    assert argv[argv.index("btl") + 1] == "self,tcp"
    assert launch.env["FI_TCP_IFACE"] == "eth0"
    assert argv[argv.index("FI_TCP_IFACE") - 1] == "-x"


def test_a_yaml_inventory_that_is_no_mapping_is_refused(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text("- n1\n- n2\n")
    with pytest.raises(LaunchError, match="a YAML inventory is a mapping of groups"):
        inventory_hostfile(inv, None, tmp_path / "h")


def test_the_emulator_node_of_an_inventory(tmp_path: Path) -> None:
    """shim wire under launcher ansible: the emulator group's wire, reached over ssh."""
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        YAML_INVENTORY
        + "    emulator:\n      hosts:\n        wire01:\n          ansible_host: 192.168.0.2\n"
        + "          loggp_wire_control: /run/loggp/wire.sock\n"
    )
    ctl = emulator_control(inv)
    assert ctl.argv[:-1] == [
        "ssh", "-o", "BatchMode=yes", "-i", "/k/id", "-l", "root", "192.168.0.2",
    ]  # fmt: skip
    assert ctl.argv[-1].startswith("python3 -c ") and ctl.argv[-1].endswith(" /run/loggp/wire.sock")
    (tmp_path / "compute.yml").write_text(YAML_INVENTORY)
    bare = tmp_path / "bare.yml"
    bare.write_text(YAML_INVENTORY + "    emulator:\n      hosts:\n        wire01: {}\n")
    with pytest.raises(WireControlError, match="emulator host wire01 has no loggp_wire_control"):
        emulator_control(bare)
    with pytest.raises(WireControlError, match=r"needs the wire's emulator node: .*\[emulator\]"):
        emulator_control(tmp_path / "compute.yml")


def test_launcher_slurm_refuses_a_point_outside_an_allocation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    exp = Experiment.model_validate(
        {
            "version": 1,
            "name": "s",
            "launcher": {"kind": "slurm"},
            "workloads": [{"name": "t", "program": "/bin/true"}],
        }
    )
    w = exp.workloads[0]
    with pytest.raises(LaunchError, match="inside a Slurm allocation .* loggp run --slurm"):
        point_launch(exp, w, KnobSet(), tmp_path, None)
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "1")
    launch = point_launch(exp, w, KnobSet(), tmp_path, None)
    assert launch.env["FI_TCP_IFACE"] == "lo"  # one node: every rank on this host


def test_launcher_slurm_on_two_nodes_keeps_every_tcp_on_its_interface(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranks on several nodes talk over launcher.interface (lo here: the one interface
    every machine has), libfabric's tcp and Open MPI's own alike; without one, or with
    one this node lacks, nothing runs: a submission is refused before sbatch, a point in
    the allocation before mpirun."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    bare = _exp(tmp_path, "{kind: slurm, nodes: 2}")
    with pytest.raises(LaunchError, match=r"^launcher 'slurm' on 2 nodes needs launcher\.inter"):
        preflight(bare, None)
    preflight(_exp(tmp_path, "{kind: slurm, nodes: 2, interface: ib7}"), None)  # not here
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    with pytest.raises(LaunchError, match="on 2 nodes needs launcher.interface"):
        point_launch(_exp(tmp_path, "{kind: slurm}"), bare.workloads[0], KnobSet(), tmp_path, None)
    missing = _exp(tmp_path, "{kind: slurm, nodes: 2, interface: lgpnone9}")
    with pytest.raises(LaunchError, match=r"'lgpnone9' is not an interface of \S+ \(it has .*lo"):
        preflight(missing, None)
    exp = _exp(tmp_path, "{kind: slurm, nodes: 2, interface: lo, mpirun_args: [--map-by, node]}")
    launch = point_launch(exp, exp.workloads[0], KnobSet.parse({"latency": "5us"}), tmp_path, None)
    argv = launch.argv
    assert launch.env["FI_TCP_IFACE"] == "lo"
    assert argv[argv.index("FI_TCP_IFACE") - 1] == "-x"
    assert argv[argv.index("oob_tcp_if_include") + 1] == "lo"
    assert argv[argv.index("btl_tcp_if_include") + 1] == "lo"
    assert argv[argv.index("btl") + 1] == "self,tcp"
