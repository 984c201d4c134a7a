"""Launchers: the command line and environment that start one point's workload.

- local:   on this machine; an `mpi` workload through mpirun on localhost, a `process`
           workload directly.
- mpirun:  Open MPI's mpirun, optionally across the hosts of a hostfile.
- ansible: mpirun across the hosts of an Ansible inventory (INI form), turned into a
           hostfile in the run directory.
- netns:   the network-namespace testbed (`loggp testbed`), which this version lacks.

Beneath shim `fabric` (and `none`, its undelayed control) MPI runs Open MPI's cm PML over
the libfabric mtl with the experiment's provider, so every message crosses libfabric; the
shim's variables travel to every rank with mpirun -x.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from loggp.errors import LoggpError
from loggp.experiment import Experiment, Workload
from loggp.knobs import KnobSet
from loggp.shim import REPO_ROOT, build_dir, process_env


class LaunchError(LoggpError):
    """A point cannot be launched as configured (missing program, launcher, inventory)."""

    exit_code = 2


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


def find_program(program: str, exp_dir: Path | None) -> Path:
    """A workload program: absolute, or relative to the build directory, the experiment
    file's directory or the repository, or a command on PATH."""
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
    found = shutil.which(program) if "/" not in program else None
    if found:
        return Path(found)
    tried = ", ".join(str(c) for c in candidates)
    raise LaunchError(f"workload program '{program}' not found (tried {tried} and PATH)")


def _mpirun() -> str:
    path = shutil.which("mpirun")
    if not path:
        raise LaunchError("mpirun not found: install Debian's openmpi-bin (make deps does)")
    return path


def inventory_hostfile(inventory: Path, group: str | None, out: Path) -> Path:
    """Writes an Open MPI hostfile from an INI Ansible inventory: the hosts of group (or
    of every group), with ansible_host= as the address and loggp_slots= as slots."""
    try:
        lines = inventory.read_text().splitlines()
    except OSError as e:
        raise LaunchError(f"{inventory}: cannot read the inventory: {e.strerror}") from None
    hosts: list[str] = []
    current: str | None = None
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            continue
        if current is not None and ":" in current:
            continue  # [group:vars] and [group:children] hold no hosts
        if group is not None and current != group:
            continue
        name, *vars_ = shlex.split(line)
        opts = dict(v.split("=", 1) for v in vars_ if "=" in v)
        entry = f"{opts.get('ansible_host', name)} slots={opts.get('loggp_slots', '1')}"
        if entry not in hosts:
            hosts.append(entry)
    if not hosts:
        which = f"group [{group}]" if group else "any group"
        raise LaunchError(f"{inventory}: no hosts in {which} of the inventory")
    out.write_text("\n".join(hosts) + "\n")
    return out


def _mpi_argv(exp: Experiment, w: Workload, env: dict[str, str], point_dir: Path) -> list[str]:
    argv = [_mpirun(), "-n", str(w.ranks), "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    launcher = exp.launcher
    if launcher.kind == "mpirun" and launcher.hostfile:
        argv += ["--hostfile", launcher.hostfile]
    if launcher.kind == "ansible" and launcher.inventory:
        hostfile = inventory_hostfile(
            Path(launcher.inventory), launcher.group, point_dir / "hostfile"
        )
        argv += ["--hostfile", str(hostfile)]
    argv += [
        "--mca", "pml", "cm", "--mca", "mtl", "ofi",
        "--mca", "mtl_ofi_provider_include", exp.emulator.provider, "--mca", "btl", "^ofi",
    ]  # fmt: skip
    for name in sorted(env):
        if name.startswith(("LOGGP_", "FI_")):
            argv += ["-x", name]
    argv += list(launcher.mpirun_args)
    return argv


def preflight(exp: Experiment, exp_dir: Path | None) -> None:
    """Fails before anything runs if a point could not be launched here."""
    _check_supported(exp)
    for w in exp.workloads:
        find_program(w.program, exp_dir)
        if w.kind == "mpi":
            _mpirun()
    if exp.launcher.kind == "mpirun" and exp.launcher.hostfile:
        if not Path(exp.launcher.hostfile).is_file():
            raise LaunchError(f"hostfile {exp.launcher.hostfile} not found")


def _check_supported(exp: Experiment) -> None:
    if exp.launcher.kind == "netns":
        raise LaunchError(
            "launcher 'netns' needs the namespace testbed (loggp testbed up N), "
            "which this version of loggp does not have yet: use local or mpirun"
        )
    if exp.emulator.shim == "wire":
        raise LaunchError(
            "shim 'wire' needs the DPDK wire emulator, which this version of loggp "
            "does not have yet: use shim: fabric"
        )


def point_launch(
    exp: Experiment,
    w: Workload,
    knobs: KnobSet,
    point_dir: Path,
    exp_dir: Path | None,
) -> Launch:
    """argv and environment of one point; LaunchError when it cannot run here."""
    _check_supported(exp)
    program = find_program(w.program, exp_dir)
    if exp.emulator.shim == "fabric":
        env = process_env(knobs, stats_file=point_dir / "stats.jsonl")
    else:
        env = process_env(None)
    if w.kind == "process":
        return Launch([str(program), *w.args], env)
    return Launch([*_mpi_argv(exp, w, env, point_dir), str(program), *w.args], env)
