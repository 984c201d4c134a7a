"""Launchers: the command line and environment that start one point's workload.

- local:   on this machine; an `mpi` workload through mpirun on localhost, a `process`
           workload directly.
- mpirun:  Open MPI's mpirun, optionally across the hosts of a hostfile.
- ansible: mpirun across the hosts of an Ansible inventory (INI or YAML), turned into a
           hostfile in the point directory (data addresses), with ssh as Ansible reaches
           the hosts and MPI and libfabric kept on the inventory's data interface.
- slurm:   inside a Slurm allocation (SLURM_JOB_ID set): mpirun takes the allocation's
           nodes and starts its daemons through Slurm (loggp/run/slurm.py), MPI and
           libfabric kept on launcher.interface across nodes; `loggp run --slurm`
           submits a run as a job array of its points.
- netns:   mpirun inside host 0 of the namespace testbed (`loggp testbed up N`), reaching
           the other hosts through loggp-wire; an rsh agent in the point directory
           enters their namespaces (ip netns exec) where mpirun would use ssh.

Beneath shim `fabric` (and `none`, its undelayed control) MPI runs Open MPI's cm PML over
the libfabric mtl with the experiment's provider, so every message crosses libfabric; the
shim's variables travel to every rank with mpirun -x.  Beneath shim `wire` the stack is
the same without the libfabric shim: the delays are added by loggp-wire to every packet.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from loggp.errors import LoggpError
from loggp.net.netns import tool
from loggp.net.testbed import State, TestbedError, host_addr, host_ns, require, workload_cpus
from loggp.plan.dist import run_dist_env
from loggp.plan.experiment import Experiment, Launcher, Workload
from loggp.plan.knobs import KnobSet, check_env
from loggp.plan.placeholders import substitute
from loggp.plan.platform import Stack
from loggp.plan.schedule import SCHEDULE_ENV, write_schedule
from loggp.plan.topology import TOPOLOGY_ENV, Network, pair_table, write_pair_table
from loggp.run.inventory import Host, InventoryError, read_inventory
from loggp.run.ompi import shim_mca_args
from loggp.run.provider import check_provider
from loggp.run.shim import REPO_ROOT, build_dir, process_env
from loggp.run.slurm import in_allocation, point_nodes
from loggp.run.smpi import (
    calibration_source,
    read_calibration,
    simulated_program,
    smpi_argv,
    smpi_tmpdir,
    smpirun,
)
from loggp.run.wirerun import WireSchedule


class LaunchError(LoggpError):
    """A point cannot be launched as configured (missing program, launcher, inventory)."""

    exit_code = 2


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


def find_program(program: str, exp_dir: Path | None) -> Path:
    """A workload program: absolute, or relative to the build directory, the experiment
    file's directory or the repository, or a command on PATH or installed with loggp
    (beside its Python: the venv's drivers such as loggp-httperf)."""
    p = Path(program)
    if p.is_absolute():
        candidates = [p]
    else:
        candidates = [build_dir() / p, REPO_ROOT / p]
        if exp_dir is not None:
            candidates.insert(1, exp_dir / p)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c.resolve()
    venv_bin = str(Path(sys.executable).parent)
    if "/" not in program:
        found = shutil.which(program) or shutil.which(program, path=venv_bin)
        if found:
            return Path(found)
    tried = ", ".join(str(c) for c in candidates)
    raise LaunchError(f"program '{program}' not found (tried {tried}, PATH and {venv_bin})")


def _mpirun() -> str:
    path = shutil.which("mpirun")
    if not path:
        raise LaunchError("mpirun not found: install Debian's openmpi-bin (make deps does)")
    return path


def inventory_hostfile(inventory: Path, group: str | None, out: Path) -> Path:
    """Writes an Open MPI hostfile from an Ansible inventory (INI or YAML,
    loggp/run/inventory.py): the hosts of group (or of every group), each once."""
    return _write_hostfile(_inventory_hosts(inventory, group), out)


def _inventory_hosts(inventory: Path, group: str | None) -> list[Host]:
    try:
        return read_inventory(inventory, group)
    except InventoryError as e:
        raise LaunchError(str(e)) from None


def _write_hostfile(hosts: list[Host], out: Path) -> Path:
    out.write_text("".join(f"{h.address} slots={h.slots}\n" for h in hosts))
    return out


def _ansible_argv(
    launcher: Launcher, env: dict[str, str], point_dir: Path
) -> tuple[list[str], bool]:
    """The hostfile, and ssh and the interfaces as the inventory says (its first host's
    settings: one ssh for the job); whether MPI is kept on a data interface."""
    hosts = _inventory_hosts(Path(str(launcher.inventory)), launcher.group)
    argv = ["--hostfile", str(_write_hostfile(hosts, point_dir / "hostfile"))]
    ssh = hosts[0].ssh_args()
    if ssh:
        argv += ["--mca", "plm_rsh_args", shlex.join(ssh)]
    iface = hosts[0].vars.get("loggp_data_interface")
    if iface:
        env["FI_TCP_IFACE"] = str(iface)
        argv += _mpi_iface_args(str(iface))
    return argv, bool(iface)


def _mpi_iface_args(iface: str) -> list[str]:
    """Open MPI's own TCP (its daemons' out-of-band channel and btl tcp) on iface."""
    return ["--mca", "oob_tcp_if_include", iface, "--mca", "btl_tcp_if_include", iface]


def netns_hostfile(prefix: str, hosts: int, slots: int, out: Path) -> Path:
    """An Open MPI hostfile of the testbed's host addresses, slots each."""
    out.write_text("".join(f"{host_addr(i)} slots={slots}\n" for i in range(hosts)))
    return out


def netns_agent(prefix: str, hosts: int, out: Path) -> Path:
    """The rsh agent mpirun calls as `AGENT [options] HOST COMMAND...`: it runs COMMAND
    with sh in the namespace of HOST (a testbed address), as ssh would on a real host."""
    cases = "".join(f"\t{host_addr(i)}) ns={host_ns(prefix, i)} ;;\n" for i in range(hosts))
    out.write_text(
        "#!/bin/sh\n"
        f"# rsh agent of loggp's netns launcher for testbed '{prefix}' (loggp/run/launch.py)\n"
        'while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done\n'
        'host=$1\nshift\ncase "$host" in\n'
        f"{cases}"
        f"\t*) echo \"loggp netns agent: unknown host '$host' (testbed {prefix} has "
        f'{host_addr(0)}..{host_addr(hosts - 1)})" >&2\n\t\texit 255 ;;\n'
        "esac\n"
        f'exec {tool("ip", "iproute2")} netns exec "$ns" /bin/sh -c "$*"\n'
    )
    out.chmod(0o755)
    return out


def check_nodes(net: Network, hosts: int) -> None:
    """LaunchError if the network has more nodes than the testbed hosts: beneath shim
    wire node i is host i, the wire's port i."""
    if net.nodes > hosts:
        raise LaunchError(
            f"network: {net.nodes} nodes on a testbed of {hosts} hosts: beneath shim wire "
            f"node i is host i, so expected at most {hosts} nodes (loggp testbed up "
            f"{net.nodes})"
        )


def netns_rankfile(net: Network, ranks: int, hosts: int, out: Path) -> Path:
    """An Open MPI rankfile: rank r on the testbed's host i for the network's node i
    (check_nodes), bound to the CPUs the workload may use (a rankfile binds every rank to
    its slot; without one, to CPU 0: the wire's)."""
    check_nodes(net, hosts)
    cpus = workload_cpus() or f"0-{max(1, len(os.sched_getaffinity(0))) - 1}"
    out.write_text(
        "".join(f"rank {r}={host_addr(net.node_of(r, ranks))} slot={cpus}\n" for r in range(ranks))
    )
    return out


def _netns_argv(exp: Experiment, ranks: int, point_dir: Path, network: Network | None) -> list[str]:
    """mpirun runs inside host 0 (its daemons connect back to it over the wire); every
    TCP path of Open MPI and libfabric is kept on eth0, the testbed's interface.  The
    ranks keep off the wire's CPU (pinned).  On a network each rank runs on its node's
    host (a rankfile); otherwise the ranks go round the hosts."""
    prefix = exp.launcher.netns_prefix
    state = _testbed(prefix)
    hostfile = netns_hostfile(prefix, state.hosts, exp.launcher.slots, point_dir / "hostfile")
    mapping = ["--map-by", "node"]
    if network is not None:
        rankfile = netns_rankfile(network, ranks, state.hosts, point_dir / "rankfile")
        mapping = ["--rankfile", str(rankfile)]
    agent = netns_agent(prefix, state.hosts, point_dir / "rsh-agent")
    return [
        *pinned(), tool("ip", "iproute2"), "netns", "exec", host_ns(prefix, 0), _mpirun(),
        "--hostfile", str(hostfile), *mapping,
        "--mca", "plm_rsh_agent", str(agent), "--mca", "plm_rsh_no_tree_spawn", "1",
        "--mca", "oob_tcp_if_include", "eth0", "--mca", "btl_tcp_if_include", "eth0",
        # More ranks than CPUs left to them: busy-polling ranks would take turns by
        # whole timeslices.  Open MPI cannot see it (each host has its own slots).
        "--mca", "mpi_yield_when_idle", "1" if ranks > _cpu_count() else "0",
    ]  # fmt: skip


def _cpu_count() -> int:
    cpus = workload_cpus()
    return len(cpus.split(",")) if cpus else 1


def pinned() -> list[str]:
    """taskset for a workload in the testbed: its processes (descendants inherit the
    affinity) keep off the wire's busy-polling CPU, so no rank ever stalls the wire."""
    cpus = workload_cpus()
    return ["taskset", "-c", cpus] if cpus else []


def _testbed(prefix: str) -> State:
    try:
        return require(prefix)
    except TestbedError as e:
        raise LaunchError(
            f"launcher 'netns' needs the namespace testbed '{prefix}' up: {e}"
        ) from None


def _mpi_argv(
    exp: Experiment, w: Workload, env: dict[str, str], point_dir: Path, net: Network | None
) -> list[str]:
    launcher = exp.launcher
    if launcher.kind == "netns":
        argv = [*_netns_argv(exp, w.ranks, point_dir, net), "-n", str(w.ranks)]
    else:
        argv = [_mpirun(), "-n", str(w.ranks)]
    # Pinned ranks are not moved between cores in the middle of a delay; more ranks than
    # cores still run (overload-allowed), sharing cores round-robin.
    bind = (
        ["--map-by", "core", "--bind-to", "core:overload-allowed"]
        if launcher.pin
        else ["--bind-to", "none"]
    )
    argv += ["--oversubscribe", *bind]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    if launcher.kind == "mpirun" and launcher.hostfile:
        argv += ["--hostfile", launcher.hostfile]
    on_iface = launcher.kind == "netns"
    if launcher.kind == "ansible" and launcher.inventory:
        more, on_iface = _ansible_argv(launcher, env, point_dir)
        argv += more
    if launcher.kind == "slurm" and launcher.interface:
        argv += _mpi_iface_args(launcher.interface)
        on_iface = True
    # Under netns the ranks share /dev/shm, and the interface an inventory or a slurm
    # launcher names is the one to use: only btl tcp keeps them on it.
    btl = "self,tcp" if on_iface else "^ofi"
    argv += [
        *shim_mca_args(),
        "--mca", "mtl_ofi_provider_include", exp.emulator.provider, "--mca", "btl", btl,
    ]  # fmt: skip
    for name in sorted(env):
        if name.startswith(("LOGGP_", "FI_")):
            argv += ["-x", name]
    argv += list(launcher.mpirun_args)
    return argv


def preflight(exp: Experiment, exp_dir: Path | None) -> None:
    """Fails before anything runs if a point could not be launched here."""
    run_dist_env(exp.dist_env(exp_dir), os.environ)  # the file's beside the environment's
    lines = exp.emulator.schedule_lines(exp_dir)  # a trace file's bad line would fail every point
    if lines and exp.emulator.shim == "wire":
        WireSchedule(KnobSet(), lines)  # a knob the wire does not apply, likewise
    check_env(os.environ)  # a LOGGP_* typo would make every point refuse to run
    _check_supported(exp)
    if exp.launcher.kind == "slurm":
        tcp_iface(exp.launcher)  # named where ranks span nodes; on this node inside a job
    simulated = exp.emulator.shim == "smpi"
    source = calibration_source(exp, exp_dir) if simulated else None
    if source is not None:
        read_calibration(source)
    elif any(w.kind == "mpi" for w in exp.workloads):  # MPI's mtl ofi opens the provider
        check_provider(exp.emulator.provider, "emulator.provider")
    for w in exp.workloads:
        if simulated:
            simulated_program(w.program)
            smpirun()
        else:
            find_program(w.program, exp_dir)
    for svc in exp.services:
        find_program(svc.program, exp_dir)
        if w.kind == "mpi":
            _mpirun()
    if exp.launcher.kind == "mpirun" and exp.launcher.hostfile:
        if not Path(exp.launcher.hostfile).is_file():
            raise LaunchError(f"hostfile {exp.launcher.hostfile} not found")


def _check_supported(exp: Experiment) -> None:
    if exp.emulator.shim == "smpi" and exp.launcher.kind not in ("local", "mpirun"):
        raise LaunchError(
            f"shim 'smpi' simulates every rank on this machine: expected launcher local "
            f"or mpirun, not {exp.launcher.kind}"
        )
    if exp.emulator.shim == "smpi" and exp.launcher.hostfile:
        raise LaunchError(
            "shim 'smpi' simulates every rank on this machine: remove launcher.hostfile"
        )
    wire_from = ("netns", "ansible") + (("slurm",) if exp.launcher.inventory else ())
    if exp.emulator.shim == "wire" and exp.launcher.kind not in wire_from:
        raise LaunchError(
            "shim 'wire' needs the DPDK wire emulator between hosts: use "
            "launcher: {kind: netns} with a testbed up (loggp testbed up N), or "
            "launcher: {kind: ansible} or {kind: slurm} with an inventory whose emulator "
            "group runs it"
        )
    if exp.launcher.kind == "netns":
        if "shm" in exp.emulator.provider.split(";"):
            raise LaunchError(
                f"provider '{exp.emulator.provider}' cannot cross network namespaces "
                "(shm is memory on one host): use an IP provider such as tcp;ofi_rxm "
                "under launcher netns"
            )
        hosts = _testbed(exp.launcher.netns_prefix).hosts
        if exp.emulator.shim == "wire" and exp.network is not None:
            check_nodes(exp.network, hosts)


LOOPBACK_IFACE = "lo"


def tcp_iface(launcher: Launcher) -> str | None:
    """The interface libfabric's tcp provider must use (FI_TCP_IFACE): the testbed's eth0
    under netns; lo where every process runs on this machine (launcher local, or mpirun
    without a hostfile), never whichever interface the provider finds first (one another
    run may remove meanwhile); launcher slurm's own (_slurm_iface); None where the hosts
    decide (a hostfile, an inventory)."""
    if launcher.kind == "netns":
        return "eth0"
    if launcher.kind == "local" or (launcher.kind == "mpirun" and not launcher.hostfile):
        return LOOPBACK_IFACE
    if launcher.kind == "slurm":
        return _slurm_iface(launcher)
    return None


def _slurm_iface(launcher: Launcher) -> str:
    """launcher.interface, which must exist on the node that runs the points (inside the
    allocation; a login node may name its own differently); without it lo on one node.
    Ranks on several nodes need it named: the provider would take the first interface it
    finds, which on a node with more than one network may be one the others cannot
    reach."""
    nodes = point_nodes(launcher.nodes)
    if launcher.interface is None:
        if nodes == 1:
            return LOOPBACK_IFACE
        raise LaunchError(
            f"launcher 'slurm' on {nodes} nodes needs launcher.interface: the interface "
            "the nodes reach each other on (e.g. eth0, ib0)"
        )
    if in_allocation():
        try:
            socket.if_nametoindex(launcher.interface)
        except OSError:
            names = ", ".join(sorted(name for _, name in socket.if_nameindex()))
            raise LaunchError(
                f"launcher.interface '{launcher.interface}' is not an interface of "
                f"{socket.gethostname()} (it has {names})"
            ) from None
    return launcher.interface


def point_launch(
    exp: Experiment,
    w: Workload,
    knobs: KnobSet,
    point_dir: Path,
    exp_dir: Path | None,
    values: Mapping[str, str] | None = None,
    stack: Stack | None = None,
    network: Network | None = None,
) -> Launch:
    """argv and environment of one point; LaunchError when it cannot run here.  values
    fill the placeholders of the workload's args (default: the point's own, no services);
    stack is the simulated stack of shim smpi (loggp/run/smpi.py); network the point's
    (default: the file's; a swept level's delay changes it, loggp/plan/netknobs.py)."""
    _check_supported(exp)
    if exp.launcher.kind == "slurm" and not in_allocation():
        raise LaunchError(
            "launcher 'slurm' runs points inside a Slurm allocation (SLURM_JOB_ID is unset): "
            "run loggp run inside salloc or sbatch, or submit the run with loggp run --slurm"
        )
    args = [substitute(a, values or {"point_dir": str(point_dir.resolve())}) for a in w.args]
    if exp.emulator.shim == "smpi":
        if stack is None:
            raise LaunchError("shim 'smpi' needs the run's calibrated stack")
        env = process_env(None)
        env["TMPDIR"] = str(smpi_tmpdir(point_dir))
        net = network if network is not None else exp.network
        return Launch(smpi_argv(w, knobs, stack, point_dir, args, net), env)
    program = find_program(w.program, exp_dir)
    net = network if network is not None else exp.network
    if exp.emulator.shim == "fabric":
        env = process_env(
            knobs, stats_file=point_dir / "stats.jsonl", settings=exp.dist_env(exp_dir)
        )
        if net is not None:
            # Every point runs on the network; its knobs add to it (docs/experiments.md).
            table = pair_table(net, w.ranks if w.kind == "mpi" else 1)
            env[TOPOLOGY_ENV] = str(write_pair_table(point_dir / "pairs.txt", table).resolve())
        lines = exp.emulator.schedule_lines(exp_dir)
        if lines is not None:
            # The point's launch is every rank's time 0 (docs/experiments.md, "schedule").
            file = write_schedule(point_dir / "schedule.txt", lines, time.time_ns())
            env[SCHEDULE_ENV] = str(file.resolve())
    else:
        env = process_env(None)
    # Programs that open libfabric themselves (the KVS brokers of kap) use the
    # experiment's provider, as MPI's mtl does; mpirun forwards LOGGP_* with -x.
    env["LOGGP_PROVIDER"] = exp.emulator.provider
    iface = tcp_iface(exp.launcher)
    if iface is not None:
        env["FI_TCP_IFACE"] = iface
    if w.kind == "process":
        if exp.launcher.kind == "netns":
            _testbed(exp.launcher.netns_prefix)
            ns0 = host_ns(exp.launcher.netns_prefix, 0)
            ip = tool("ip", "iproute2")
            return Launch([*pinned(), ip, "netns", "exec", ns0, str(program), *args], env)
        return Launch([str(program), *args], env)
    # Beneath the wire the ranks of node i run on host i; the fabric shim keys by rank.
    placed = net if exp.emulator.shim == "wire" else None
    return Launch([*_mpi_argv(exp, w, env, point_dir, placed), str(program), *args], env)
