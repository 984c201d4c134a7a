"""The MCA settings `loggp exec` gives an Open MPI launcher so MPI sends through libfabric."""

from __future__ import annotations

import pytest

from loggp.run.ompi import is_mpi_launcher, shim_mca_args, shim_mca_env

pytestmark = pytest.mark.unit

BOTH = {"OMPI_MCA_pml": "cm", "OMPI_MCA_mtl": "ofi"}


@pytest.mark.parametrize("argv0", ["mpirun", "/usr/bin/mpiexec", "orterun", "oshrun"])
def test_launchers_get_both(argv0: str) -> None:
    assert is_mpi_launcher([argv0, "-np", "2", "app"])
    assert shim_mca_env([argv0, "-np", "2", "app"], {}) == BOTH


@pytest.mark.parametrize("argv", [["./app"], ["mpirun_wrapper.sh"], ["python3", "mpirun"], []])
def test_other_commands_get_none(argv: list[str]) -> None:
    assert not is_mpi_launcher(argv)
    assert shim_mca_env(argv, {}) == {}


@pytest.mark.parametrize("opt", ["--mca", "-mca", "--gmca", "-gmca"])
def test_a_choice_on_the_command_line_is_kept(opt: str) -> None:
    argv = ["mpirun", opt, "pml", "ob1", "-np", "2", "app"]
    assert shim_mca_env(argv, {}) == {"OMPI_MCA_mtl": "ofi"}


def test_a_choice_in_the_environment_is_kept() -> None:
    assert shim_mca_env(["mpirun", "app"], {"OMPI_MCA_mtl": "psm2"}) == {"OMPI_MCA_pml": "cm"}
    assert shim_mca_env(["mpirun", "--mca", "mtl", "ofi", "app"], {"OMPI_MCA_pml": "cm"}) == {}


def test_args_form() -> None:
    assert shim_mca_args() == ["--mca", "pml", "cm", "--mca", "mtl", "ofi"]
