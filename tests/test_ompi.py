"""Open MPI 4.1 on libfabric (pml cm, mtl ofi) beneath the shim.

Finding (Debian 12: Open MPI 4.1.4, libfabric 1.17): shm cannot serve the
ofi mtl.  With --mca mtl_ofi_provider_include shm, mtl ofi's fi_getinfo
returns no shm entry (shm 1.17 does not match the mtl's hints; e.g.
`fi_info -p shm -c "FI_TAGGED|FI_LOCAL_COMM"` already fails with -61), the mtl
reports "init returned failure" and MPI_Init aborts with "PML cm cannot be
selected".  tcp;ofi_rxm works; it is the provider these tests use.
test_ompi_shm_refused_or_correct pins that finding down: shm must either be
refused at selection exactly like that, or (on a newer stack) run correctly.

One-sided: with pml cm Open MPI 4.1 selects osc rdma by default, which goes
through a BTL (vader on one host), not through the mtl, so libfabric never
sees the window traffic.  The tests force --mca osc pt2pt, which implements
RMA over the PML (cm -> mtl ofi -> libfabric), and prove it via the shim's
message count: 12 iterations must carry many more libfabric messages than 2.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import (
    NONZERO_KNOBS,
    base_env,
    json_line,
    mpi_over_ofi,
    mpirun_cmd,
    prog_path,
    run,
)

pytestmark = pytest.mark.integration

PROVIDER = "tcp;ofi_rxm"
OSC_OVER_PML = ["--mca", "osc", "pt2pt"]


def mpirun_shimmed(mpirun_bin, env, argv, np=2, extra_mca=()):
    cmd = mpirun_cmd(
        mpirun_bin,
        np,
        [str(prog_path(argv[0])), *argv[1:]],
        [*mpi_over_ofi(PROVIDER), *extra_mca],
        env.env,
    )
    res = run(cmd, env.env, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    out = json_line(res.stdout)
    assert out["ok"] is True, out
    return out


def tcp_stats(env) -> list[dict[str, object]]:
    return [s for s in env.stats() if s.get("provider") == "tcp"]


@pytest.mark.parametrize("np", [2, 3])
@pytest.mark.parametrize(
    "argv",
    [["mpi_pingpong", "-i", "50"], ["mpi_alltoallv", "-n", "20"]],
    ids=["pingpong", "alltoallv"],
)
def test_ompi_p2p_beneath_shim(mpirun_bin, shim, argv, np) -> None:
    if argv[0] == "mpi_pingpong" and np != 2:
        pytest.skip("ping-pong is a two-rank test")
    env = shim(**NONZERO_KNOBS)
    mpirun_shimmed(mpirun_bin, env, argv, np=np)
    stats = tcp_stats(env)
    assert len({s["pid"] for s in stats}) >= np, f"not every rank used the shim: {env.stats()}"
    assert sum(int(s["msgs"]) for s in stats) >= 100, env.stats()
    assert all(int(s["latency_ns"]) > 0 for s in stats if int(s["msgs"]) > 0), stats


def test_ompi_onesided_beneath_shim(mpirun_bin, shim) -> None:
    short, long = shim(**NONZERO_KNOBS), shim(**NONZERO_KNOBS)
    mpirun_shimmed(mpirun_bin, short, ["mpi_onesided", "-n", "2"], extra_mca=OSC_OVER_PML)
    mpirun_shimmed(mpirun_bin, long, ["mpi_onesided", "-n", "12"], extra_mca=OSC_OVER_PML)
    n_short = sum(int(s["msgs"]) for s in tcp_stats(short))
    n_long = sum(int(s["msgs"]) for s in tcp_stats(long))
    # each iteration does 64 exclusive lock/get/flush/put/unlock rounds per
    # rank plus fences and accumulates: far more than 10 * 64 messages
    assert n_long - n_short >= 10 * 64, f"window traffic bypassed libfabric: {n_short} -> {n_long}"


def test_ompi_shm_refused_or_correct(mpirun_bin) -> None:
    env = base_env()
    cmd = mpirun_cmd(
        mpirun_bin, 2, [str(prog_path("mpi_alltoallv")), "-n", "5"], mpi_over_ofi("shm"), env
    )
    res = run(cmd, env, timeout=120)
    if res.returncode == 0:
        assert json_line(res.stdout)["ok"] is True
    else:
        assert "PML cm cannot be selected" in res.stdout + res.stderr, res.stdout + res.stderr


def test_exec_mpirun_without_mca_flags_is_delayed(mpirun_bin, tmp_path) -> None:
    """`loggp exec -- mpirun` with no MCA flags: Open MPI's default path and Debian's
    `mtl = ^ofi` would bypass libfabric; exec sets pml cm and mtl ofi, so each leg of the
    ping-pong carries ΔL = 100 us."""
    stats = tmp_path / "stats.jsonl"
    mpi = [mpirun_bin, "-np", "2", "--oversubscribe", str(prog_path("mpi_pingpong")), "-i", "50"]
    cmd = [sys.executable, "-m", "loggp", "exec", "--latency", "100us", "--stats", str(stats)]
    res = run([*cmd, "--", *mpi], base_env(), timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "OMPI_MCA_pml=cm OMPI_MCA_mtl=ofi" in res.stderr, res.stderr
    half_rtt = json_line(res.stdout)["results"][0]["half_rtt_us"]
    assert half_rtt >= 90, f"half round trip {half_rtt} us: the shim's 100 us are missing"
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert sum(int(s["msgs"]) for s in lines) >= 100, lines
