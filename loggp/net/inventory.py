"""The Ansible inventory of a testbed brought up with --ssh (`loggp testbed inventory`).

Groups as in ansible/inventories/cluster.yml: `compute` (the hosts <prefix>-h<i>),
`emulator` and `monitor` (both the emulator host <prefix>-emu, which holds the wire's
ports).  The hosts are namespaces of one machine, so they share its file system and
kernel; the group variables keep every role's files in the testbed's hosts directory
(which `loggp testbed down` removes), the hugepage reservation as it is, and the copies
one at a time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from loggp.net import sshhosts
from loggp.net.testbed import State, TestbedError, emu_ns, host_addr, host_ns, wire_if
from loggp.run.shim import build_dir

SSH_ARGS = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"


def _nr_hugepages() -> int:
    return int(Path("/proc/sys/vm/nr_hugepages").read_text())


def inventory_of(state: State, slurm: bool = False) -> dict[str, Any]:
    """The inventory, as the YAML document's data; with slurm also the groups of
    ansible/slurm.yml (slurm_inventory)."""
    if not state.ssh:
        raise TestbedError(
            f"testbed '{state.prefix}' has no ssh hosts: an inventory needs one brought up "
            f"with loggp testbed up N --ssh --prefix {state.prefix}"
        )
    hosts_dir = Path(state.hosts_dir)
    per_host = f"{hosts_dir}/{{{{ inventory_hostname }}}}"
    emu = emu_ns(state.prefix)
    doc: dict[str, Any] = {
        "all": {
            "vars": {
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(
                    sshhosts.client_key(sshhosts.ssh_dir(hosts_dir))
                ),
                "ansible_ssh_common_args": SSH_ARGS,
                "ansible_python_interpreter": "/usr/bin/python3",
                "loggp_root": f"{hosts_dir}/loggp",
                "loggp_deps_build_dir": str(build_dir()),
                "loggp_deps_sync_serial": True,
                "loggp_data_interface": "eth0",
                "loggp_deps_update_cache": False,  # namespaces have no route out
                "loggp_deps_python": "none",
                "loggp_experiment_command": str(Path(sys.executable).parent / "loggp"),
                "loggp_dpdk_hugepages": _nr_hugepages(),
                "loggp_dpdk_sysctl_file": f"{per_host}/60-loggp-hugepages.conf",
                "loggp_dpdk_hugepage_mount": f"{per_host}/hugepages",
                "loggp_dpdk_persist_mount": False,
                "loggp_service_run_dir": per_host,
                "loggp_wire_run_dir": per_host,
                "loggp_monitoring_config_dir": f"{per_host}/prometheus",
                "loggp_monitoring_data_dir": f"{per_host}/prometheus/data",
            },
            "children": {
                "compute": {
                    "hosts": {
                        host_ns(state.prefix, i): {
                            "ansible_host": sshhosts.mgmt_addr(i),
                            "loggp_mgmt_address": sshhosts.mgmt_addr(i),
                            "loggp_data_address": host_addr(i),
                        }
                        for i in range(state.hosts)
                    }
                },
                "emulator": {
                    "hosts": {
                        emu: {
                            "ansible_host": sshhosts.EMU_MGMT_ADDR,
                            "loggp_mgmt_address": sshhosts.EMU_MGMT_ADDR,
                            "loggp_dpdk_mode": "af_packet",
                            "loggp_dpdk_af_packet_interfaces": [
                                wire_if(state.prefix, i) for i in range(state.hosts)
                            ],
                            "loggp_wire_lcore": 0,
                            "loggp_wire_control": f"{hosts_dir}/{emu}/wire.sock",
                        }
                    }
                },
                "monitor": {"hosts": {emu: {}}},
            },
        }
    }
    if slurm:
        doc["all"]["vars"].update(slurm_vars(hosts_dir))
        doc["all"]["children"].update(slurm_groups(state))
    return doc


def slurm_groups(state: State) -> dict[str, Any]:
    """Host 0 is the controller; every host, host 0 too, a compute node."""
    return {
        "slurm_controller": {"hosts": {host_ns(state.prefix, 0): {}}},
        "slurm_compute": {"hosts": {host_ns(state.prefix, i): {} for i in range(state.hosts)}},
    }


def slurm_vars(hosts_dir: Path) -> dict[str, str]:
    """The hosts share the machine's file system: each keeps its Slurm and MUNGE files
    (configuration, spool, state, logs, key, socket) in its own directory, and reaches
    the others on the management network, where the sshds are."""
    per_host = f"{hosts_dir}/{{{{ inventory_hostname }}}}"
    return {
        "loggp_slurm_install_packages": False,  # the machine's are theirs (make deps)
        "loggp_slurm_conf_dir": f"{per_host}/slurm",
        "loggp_slurm_state_dir": f"{per_host}/slurm/state",
        "loggp_slurm_spool_dir": f"{per_host}/slurm/spool",
        "loggp_slurm_log_dir": f"{per_host}/slurm/log",
        "loggp_slurm_munge_key": f"{per_host}/munge-key/munge.key",
        "loggp_slurm_munge_dir": f"{per_host}/munge-run",
        "loggp_slurm_munge_state_dir": f"{per_host}/munge-lib",
        "loggp_slurm_munge_log_dir": f"{per_host}/munge-log",
        "loggp_slurm_cgroup_plugin": "cgroup/v1",  # a namespace's /sys has no cgroups
    }
