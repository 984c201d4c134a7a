"""connect (workloads/connect/): connected components by remote label reads.

Every run is checked by the program against a serial union-find on rank 0
(valid: true: every label is its component's smallest vertex and the component
counts agree) or, with -c edges, by re-reading every remote neighbour.  Its
message counts follow from the pattern: every round reads the label of every
remote neighbour (a request and a reply) and ends with a barrier of
ceil(log2 N) messages per rank, so msgs.total = rounds * (2 * remote_edges +
N * ceil(log2 N)).  Graph sizes are pinned independently where the options fix
them (-e 0, -r 100, one rank).  Beneath the shim the only timing assertion is
the lower bound it guarantees: the critical path's messages are in sequence
and each arrives >= ΔL after it left.
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
    return run_workload(mpirun, "connect", np, args, mca, env, TIMEOUT)


def check_counts(np: int, opts: dict[str, Any], res: dict[str, Any]) -> None:
    m, msgs, par = res["metrics"], res["msgs"], res["params"]
    rounds, remote, comps = int(m["rounds"]), int(m["remote_edges"]), int(m["components"])
    total = opts["N"] if "N" in opts else opts["n"] * np
    edges, pct = opts.get("e", 80), opts.get("r", 20)
    assert par["vertices"] == total and par["check"] == opts.get("c", "serial"), par
    assert rounds >= 1 and 1 <= comps <= total, m
    # an edge is a remote neighbour at both ends; a vertex draws at most ceil(e/100)
    assert remote % 2 == 0 and remote <= 2 * total * math.ceil(edges / 100), m
    if np == 1 or pct == 0 or edges == 0 or total == 1:
        assert remote == 0 and rounds == 1, m
    if edges == 0:
        assert comps == total, m
    if pct == 100 and edges % 100 == 0 and min(np, total) > 1:
        assert remote == 2 * total * edges // 100, m
    b = math.ceil(math.log2(np)) if np > 1 else 0
    assert msgs["total"] == rounds * (2 * remote + np * b), msgs
    assert msgs["bytes"] == rounds * (16 * remote + 4 * np * b), msgs
    path = msgs["critical_path"]
    assert msgs["critical_sends"] == path and msgs["critical_recvs"] == path, msgs
    # the rank with the most remote neighbours reads at least the mean
    assert rounds * (2 * remote / max(1, min(np, total)) + b) <= path, msgs
    assert path <= rounds * (2 * remote + b), msgs
    assert msgs["critical_bytes"] == 8 * (path - rounds * b) + 4 * rounds * b, msgs


CASES = [
    (1, {"n": 500}),
    (2, {"n": 500}),
    (2, {"n": 300, "r": 100, "e": 100}),
    (2, {"n": 300, "e": 0}),
    (2, {"n": 400, "r": 0}),
    (3, {"N": 1001, "e": 120}),
    (3, {"N": 1001, "c": "edges"}),
    (4, {"n": 300}),
    (4, {"n": 200, "e": 250, "r": 50}),
    (4, {"N": 3, "e": 300}),  # rank 3 owns nothing
    (4, {"N": 1, "e": 200}),  # ranks 1.. own nothing
]


@pytest.mark.parametrize(
    ("np", "opts"), CASES, ids=[f"np{c[0]}-" + "".join(opt_args(c[1])) for c in CASES]
)
def test_connect_own_transport(mpirun_bin, np, opts) -> None:
    proc = launch(mpirun_bin, np, opt_args(opts))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = workload_result(proc.stdout)
    assert res["workload"] == "connect" and res["ranks"] == np, res
    assert res["valid"] is True, (res, proc.stderr)
    check_counts(np, opts, res)


@pytest.mark.parametrize(
    ("np", "args", "msg"),
    [
        (2, ["-n", "300"], "labels differ from the serial union-find"),
        (3, ["-N", "1001", "-c", "edges"], "labels exceed their vertex or differ across an edge"),
        (4, ["-N", "3", "-e", "300"], "labels differ from the serial union-find"),
    ],
    ids=["serial", "edges", "np4-empty"],
)
def test_connect_checker_catches_corruption(mpirun_bin, np, args, msg) -> None:
    proc = launch(mpirun_bin, np, [*args, "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert workload_result(proc.stdout)["valid"] is False, proc.stdout
    assert "connect: " in proc.stderr and msg in proc.stderr, proc.stderr


BAD = [
    (["-n", "0"], "bad value '0' for -n: expected an integer from 1"),
    (["-e", "x"], "bad value 'x' for -e: expected an integer from 0 to 1500"),
    (["-c", "bogus"], "bad value 'bogus' for -c: expected auto, serial or edges"),
    (["-N"], "option -N needs a value: expected an integer from 1"),
    (["-q"], "unknown option -q: accepted options are -n VERTICES"),
    (["stray"], "unexpected argument 'stray'"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_connect_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(launch(mpirun_bin, 2, args), "connect", msg)


def test_connect_help(mpirun_bin) -> None:
    assert_usage(launch(mpirun_bin, 1, ["-h"]), "connect")


def test_connect_beneath_shim(mpirun_bin, shim) -> None:
    opts = {"n": 1500}
    env = shim(latency=f"{LATENCY_US:g}us", overhead="2us")
    proc = launch(mpirun_bin, 2, opt_args(opts), mpi_over_ofi("tcp;ofi_rxm"), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = workload_result(proc.stdout)
    assert res["valid"] is True, (res, proc.stderr)
    check_counts(2, opts, res)
    tcp = [s for s in env.stats() if s.get("provider") == "tcp"]
    carried = sum(int(s["msgs"]) for s in tcp)
    assert carried >= res["msgs"]["total"], (carried, res["msgs"], env.stats())
    path = res["msgs"]["critical_path"]
    assert path > 0, res
    assert res["metrics"]["time_s"] >= path * LATENCY_US * 1e-6, res
