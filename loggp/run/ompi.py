"""Open MPI beneath the shim: the MCA settings that make MPI send through libfabric.

Open MPI's default path (pml ob1 over its own BTLs, shared memory on one host) never calls
libfabric, and Debian's /etc/openmpi/openmpi-mca-params.conf disables the ofi MTL
(`mtl = ^ofi`): without `pml cm` and `mtl ofi` an MPI program runs beneath the shim with no
delay at all.  The runner's mpirun launcher passes them on its command line; `loggp exec`
sets them in the environment (OMPI_MCA_*) of an mpirun it starts, unless the user chose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

# Open MPI's launchers, by the name they are run as.
MPI_LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "oshrun"})

# Each MCA parameter that must have this value for messages to reach libfabric.
SHIM_MCA: tuple[tuple[str, str], ...] = (("pml", "cm"), ("mtl", "ofi"))

# The options of mpirun that set one MCA parameter: NAME VALUE follow.
_MCA_OPTIONS = frozenset({"--mca", "-mca", "--gmca", "-gmca"})


def is_mpi_launcher(argv: Sequence[str]) -> bool:
    return bool(argv) and Path(argv[0]).name in MPI_LAUNCHERS


def _set_on_command_line(argv: Sequence[str]) -> set[str]:
    named = set()
    for i, arg in enumerate(argv[:-1]):
        if arg in _MCA_OPTIONS:
            named.add(argv[i + 1])
    return named


def shim_mca_env(argv: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    """The OMPI_MCA_* variables to add to env so that the MPI launcher argv sends through
    libfabric: each of SHIM_MCA the user set neither on the command line nor in env.  Empty
    for a command that is not an Open MPI launcher."""
    if not is_mpi_launcher(argv):
        return {}
    named = _set_on_command_line(argv)
    return {
        f"OMPI_MCA_{name}": value
        for name, value in SHIM_MCA
        if name not in named and f"OMPI_MCA_{name}" not in env
    }


def shim_mca_args() -> list[str]:
    """SHIM_MCA as mpirun options."""
    return [arg for name, value in SHIM_MCA for arg in ("--mca", name, value)]
