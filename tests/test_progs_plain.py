"""The test programs themselves, without the shim: they must pass on the bare
stacks, or a failure beneath the shim would prove nothing."""

from __future__ import annotations

import pytest
from conftest import (
    MPI_OWN_TRANSPORT,
    STRESS_OPS,
    base_env,
    json_line,
    mpi_over_ofi,
    mpirun_cmd,
    prog_path,
    run,
)

pytestmark = pytest.mark.integration

RDM_PROVIDERS = ["shm", "tcp;ofi_rxm", "udp;ofi_rxd"]
MPI_PROGS = [["mpi_pingpong", "-i", "20"], ["mpi_alltoallv"], ["mpi_onesided"]]


@pytest.mark.parametrize("argv", MPI_PROGS, ids=lambda a: a[0])
def test_mpi_prog_plain(mpirun_bin: str, argv: list[str]) -> None:
    env = base_env()
    cmd = mpirun_cmd(mpirun_bin, 2, [str(prog_path(argv[0])), *argv[1:]], MPI_OWN_TRANSPORT, env)
    res = run(cmd, env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json_line(res.stdout)["ok"] is True


@pytest.mark.parametrize("argv", MPI_PROGS, ids=lambda a: a[0])
def test_mpi_prog_over_ofi_plain(mpirun_bin: str, argv: list[str]) -> None:
    env = base_env()
    mca = mpi_over_ofi("tcp;ofi_rxm")
    if argv[0] == "mpi_onesided":
        mca += ["--mca", "osc", "pt2pt"]
    cmd = mpirun_cmd(mpirun_bin, 2, [str(prog_path(argv[0])), *argv[1:]], mca, env)
    res = run(cmd, env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json_line(res.stdout)["ok"] is True


@pytest.mark.parametrize(
    ("provider", "ep", "np"),
    [*((p, "rdm", 2) for p in RDM_PROVIDERS), ("tcp", "msg", 2), ("tcp;ofi_rxm", "rdm", 3)],
)
def test_fi_stress_plain(mpirun_bin: str, provider: str, ep: str, np: int) -> None:
    env = base_env()
    argv = [str(prog_path("fi_stress")), "-p", provider, "-e", ep, "-m", "3000", "-t", "60"]
    argv += ["-o", STRESS_OPS[provider]]
    res = run(mpirun_cmd(mpirun_bin, np, argv, MPI_OWN_TRANSPORT, env), env, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json_line(res.stdout)
    assert summary["ok"] is True
    assert summary["ranks"] == np
    assert all(v == 0 for v in dict(summary["errors"]).values())


@pytest.mark.parametrize("provider", ["shm", "tcp;ofi_rxm"])
def test_fi_sendtime_plain(provider: str) -> None:
    res = run([str(prog_path("fi_sendtime")), "-p", provider, "-n", "200"], base_env(), 60)
    assert res.returncode == 0, res.stdout + res.stderr
    out = json_line(res.stdout)
    assert out["ok"] is True
    assert 0 < float(dict(out["send_call_us"])["median"]) < 100


def test_fi_stress_detects_mismatch(mpirun_bin: str) -> None:
    """The checker is not vacuous: ranks with different seeds disagree on
    every message's size, which must be reported and fail the run."""
    env = base_env()
    prog = str(prog_path("fi_stress"))
    common = ["-p", "tcp;ofi_rxm", "-m", "200", "-t", "60"]
    cmd = mpirun_cmd(mpirun_bin, 1, [prog, *common, "-s", "1"], MPI_OWN_TRANSPORT, env)
    cmd += [":", "-np", "1", prog, *common, "-s", "2"]
    res = run(cmd, env, timeout=120)
    assert res.returncode != 0, res.stdout + res.stderr
    summary = json_line(res.stdout)
    assert summary["ok"] is False and int(dict(summary["errors"])["size"]) > 0, summary


def test_fi_stress_detects_window_mismatch(mpirun_bin: str) -> None:
    """The window checks are not vacuous: with different seeds no rank's window
    ever holds what it expects, which must be named and fail the run within
    the timeout (-t)."""
    env = base_env()
    prog = str(prog_path("fi_stress"))
    common = ["-p", "tcp;ofi_rxm", "-m", "20", "-k", "8", "-o", "send,write,atomic", "-t", "2"]
    cmd = mpirun_cmd(mpirun_bin, 1, [prog, *common, "-s", "1"], MPI_OWN_TRANSPORT, env)
    cmd += [":", "-np", "1", prog, *common, "-s", "2"]
    res = run(cmd, env, timeout=120)
    assert res.returncode != 0, res.stdout + res.stderr
    assert "written by rank" in res.stderr and "expected" in res.stderr, res.stderr
