"""em3d (workloads/em3d/): the EM3D kernel in write and read mode.

Every run is checked against the serial reference on rank 0 (valid: true) and
its message counts against the pattern: in write mode (one store per value,
-g 1) every ghost value travels once per half iteration, so msgs.total =
iters * ghost_values; in read mode every remote edge is a request and a reply
per iteration plus the barriers' ceil(log2 N) messages per rank per half
iteration.  remote_edges is pinned independently where the options fix it
(-r 0, -r 100, one rank) and bounded statistically elsewhere.  Beneath the
shim the only timing assertion is the lower bound it guarantees: the
critical path's messages each arrive >= ΔL after they left, in sequence.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from conftest import (
    MPI_OWN_TRANSPORT,
    assert_refused,
    assert_usage,
    mpi_over_ofi,
    opt_args,
    run_workload,
    workload_result,
)

pytestmark = pytest.mark.integration

TIMEOUT = 120.0
LATENCY_US = 20.0


def launch(mpirun: str, np: int, args: list[str], mca=MPI_OWN_TRANSPORT, env=None):
    return run_workload(mpirun, "em3d", np, args, mca, env, TIMEOUT)


def check_counts(np: int, opts: dict[str, Any], res: dict[str, Any]) -> None:
    """Messages, bytes and critical path from the pattern and the graph's size."""
    m, msgs, par = res["metrics"], res["msgs"], res["params"]
    iters, gran = opts["i"], opts.get("g", 1)
    remote, ghosts = int(m["remote_edges"]), int(m["ghost_values"])
    nodes = opts["N"] if "N" in opts else opts["n"] * np
    degree = opts.get("d", 8)
    assert par["nodes"] == nodes and par["iters"] == iters and par["check"] == "serial", par
    assert ghosts <= remote <= 2 * nodes * degree, m
    pct = opts.get("r", 20)
    if np == 1 or pct == 0 or nodes == 1:
        assert remote == 0, m
    elif pct == 100:
        assert remote == 2 * nodes * degree, m
    elif 2 * nodes * degree >= 1000:
        assert 0.5 * pct / 100 < remote / (2 * nodes * degree) < 1.5 * pct / 100, m
    b = math.ceil(math.log2(np)) if np > 1 else 0
    if opts.get("m", "write") == "write":
        assert msgs["bytes"] == 8 * iters * ghosts, msgs
        if gran == 1:
            assert msgs["total"] == iters * ghosts, msgs
        else:
            assert iters * math.ceil(ghosts / gran) <= msgs["total"] <= iters * ghosts, msgs
        # one latency per half iteration that stores anything
        assert msgs["critical_path"] <= 2 * iters, msgs
        assert (msgs["critical_path"] > 0) == (ghosts > 0), msgs
        assert msgs["critical_sends"] * np >= msgs["total"], msgs
        assert msgs["critical_sends"] <= msgs["total"], msgs
    else:
        assert msgs["total"] == iters * (2 * remote + 2 * np * b), msgs
        assert msgs["bytes"] == iters * (16 * remote + 8 * np * b), msgs
        # every read a round trip; the busiest rank reads at least the mean
        path = msgs["critical_path"]
        assert msgs["critical_sends"] == path and msgs["critical_recvs"] == path, msgs
        assert iters * (2 * remote / max(1, min(np, nodes)) + 2 * b) <= path, msgs
        assert path <= iters * (2 * remote + 2 * b), msgs


CASES = [
    (1, {"m": "write", "n": 40, "i": 10}),
    (1, {"m": "read", "n": 40, "i": 10}),
    (2, {"m": "write", "n": 60, "i": 20}),
    (2, {"m": "read", "n": 60, "i": 10}),
    (2, {"m": "write", "n": 50, "i": 10, "r": 100, "d": 5}),
    (2, {"m": "read", "n": 50, "i": 5, "r": 100, "d": 5}),
    (3, {"m": "write", "N": 101, "i": 15, "g": 3}),
    (3, {"m": "read", "N": 101, "i": 5, "d": 3}),
    (4, {"m": "write", "n": 70, "i": 10, "r": 40}),
    (4, {"m": "read", "n": 40, "i": 4}),
    (4, {"m": "write", "N": 3, "i": 10}),  # rank 3 owns nothing
    (4, {"m": "read", "N": 2, "i": 10}),  # ranks 2 and 3 own nothing
    (4, {"m": "write", "N": 9, "i": 10, "r": 0}),
]


@pytest.mark.parametrize(
    ("np", "opts"), CASES, ids=[f"np{c[0]}-" + "".join(opt_args(c[1])) for c in CASES]
)
def test_em3d_own_transport(mpirun_bin, np, opts) -> None:
    proc = launch(mpirun_bin, np, opt_args(opts))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = workload_result(proc.stdout)
    assert res["workload"] == "em3d" and res["ranks"] == np, res
    assert res["valid"] is True, (res, proc.stderr)
    assert res["params"]["mode"] == opts["m"], res
    check_counts(np, opts, res)


def test_em3d_empty_rank_sends_nothing_in_write_mode(mpirun_bin) -> None:
    proc = launch(mpirun_bin, 4, ["-N", "3", "-i", "10"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = workload_result(proc.stdout)
    assert res["valid"] is True and res["msgs"]["per_rank"][3] == 0, res


@pytest.mark.parametrize(
    ("np", "args"),
    [
        (2, ["-m", "write", "-n", "50", "-i", "30"]),
        (2, ["--mode", "read", "-n", "50", "-i", "5"]),
        (4, ["-m", "write", "-N", "7", "-i", "20", "-g", "2"]),
        (4, ["-m", "read", "-N", "3", "-i", "5"]),
    ],
    ids=["write", "read", "write-np4-empty", "read-np4-empty"],
)
def test_em3d_checker_catches_corruption(mpirun_bin, np, args) -> None:
    proc = launch(mpirun_bin, np, [*args, "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert workload_result(proc.stdout)["valid"] is False, proc.stdout
    assert "em3d: fields differ from the serial recomputation" in proc.stderr, proc.stderr


BAD = [
    (["-m", "bogus"], "bad value 'bogus' for -m: expected write or read"),
    (["--mode"], "option -m needs a value: expected write or read"),
    (["-d", "0"], "bad value '0' for -d: expected an integer from 1 to 64"),
    (["-r", "101"], "bad value '101' for -r: expected an integer from 0 to 100"),
    (["-q"], "unknown option -q: accepted options are -m MODE"),
    (["--bogus"], "unknown option '--bogus'"),
    (["stray"], "unexpected argument 'stray'"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_em3d_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(launch(mpirun_bin, 2, args), "em3d", msg)


def test_em3d_help(mpirun_bin) -> None:
    assert_usage(launch(mpirun_bin, 1, ["-h"]), "em3d")


@pytest.mark.parametrize(
    "opts",
    [{"m": "write", "n": 100, "i": 50}, {"m": "read", "n": 60, "i": 5}],
    ids=["write", "read"],
)
def test_em3d_beneath_shim(mpirun_bin, shim, opts) -> None:
    env = shim(latency=f"{LATENCY_US:g}us", overhead="2us")
    proc = launch(mpirun_bin, 2, opt_args(opts), mpi_over_ofi("tcp;ofi_rxm"), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = workload_result(proc.stdout)
    assert res["valid"] is True, (res, proc.stderr)
    check_counts(2, opts, res)
    tcp = [s for s in env.stats() if s.get("provider") == "tcp"]
    carried = sum(int(s["msgs"]) for s in tcp)
    assert carried >= res["msgs"]["total"], (carried, res["msgs"], env.stats())
    # the critical path's messages are in sequence, each delayed >= ΔL
    path = res["msgs"]["critical_path"]
    assert path > 0, res
    assert res["metrics"]["time_s"] >= path * LATENCY_US * 1e-6, res
