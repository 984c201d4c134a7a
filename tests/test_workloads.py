"""The workload programs (workloads/) on MPI's own transports and beneath the shim.

Each program must print exactly one result line of docs/results.md whose
message counts follow from its options (the programs count what they send;
the expected values here are computed independently from the pattern), must
check its own data (-X corrupts one byte or halo and must give valid: false),
and must refuse bad options with one line naming the option and exit 2.

Beneath the shim (Open MPI over mtl ofi, tcp;ofi_rxm, ΔL = 20 µs) the core
provider must have carried at least the messages the program counted: MPI adds
its own (connection set-up, rendezvous, the collectives that gather the
result), so the bound is >=, never ==.  The only timing assertions are lower
bounds the shim guarantees: every message arrives >= ΔL after it left, so a
round trip or a halo-exchange iteration cannot take less than ΔL.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from conftest import assert_refused, assert_usage, mpi_over_ofi, run_workload

pytestmark = pytest.mark.integration

PROVIDER = "tcp;ofi_rxm"
LATENCY_US = 20.0


def result_line(stdout: str) -> dict[str, Any]:
    """The one result line of docs/results.md, with its schema checked."""
    lines = [line for line in stdout.splitlines() if '"loggp_result"' in line]
    assert len(lines) == 1, f"expected exactly one result line:\n{stdout}"
    res = json.loads(lines[0])
    assert isinstance(res, dict)
    assert res["loggp_result"] == 1
    assert isinstance(res["valid"], bool)
    assert isinstance(res["ranks"], int)
    # every rank's host, here all this machine's
    assert res["hosts"] == [socket.gethostname()] * res["ranks"], res["hosts"]
    metrics = res["metrics"]
    assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in metrics.values()), (
        metrics
    )
    assert metrics["time_s"] > 0, metrics
    msgs = res["msgs"]
    for key in (
        "total",
        "bytes",
        "critical_path",
        "critical_sends",
        "critical_recvs",
        "critical_bytes",
    ):
        assert isinstance(msgs[key], int) and msgs[key] >= 0, msgs
    assert len(msgs["per_rank"]) == res["ranks"], msgs
    assert sum(msgs["per_rank"]) == msgs["total"], msgs
    return res


def expected_msgs(name: str, np: int, opts: dict[str, Any]) -> dict[str, Any]:
    """Messages each pattern sends, from the options alone."""
    if name == "pingpong":
        n, size = opts["n"], opts["s"]
        per_rank = [n, n] + [0] * (np - 2)
        path = sends = 2 * n  # every leg of every round trip waits for the one before
    elif name == "exchange":
        i, size = opts["i"], opts["s"]
        per_rank = [i * (np - 1)] * np
        path = i if np > 1 else 0  # all np - 1 blocks of an iteration travel at once
        sends = i * (np - 1)
    else:
        i, size = opts["i"], 8 * opts.get("w", 2)
        per_rank = [2 * i if np > 1 else 0] * np  # a halo to the left and to the right
        path = i if np > 1 else 0  # both halos travel at once
        sends = 2 * path
    total = sum(per_rank)
    return {
        "total": total,
        "bytes": total * size,
        "per_rank": per_rank,
        "critical_path": path,
        "critical_sends": sends,
        "critical_recvs": sends,
        "critical_bytes": sends * size,
    }


def argv(opts: dict[str, Any]) -> list[str]:
    return [a for k, v in opts.items() for a in (f"-{k}", str(v))]


def check_result(name: str, np: int, opts: dict[str, Any], res: dict[str, Any]) -> None:
    assert res["workload"] == name, res
    assert res["valid"] is True, res
    assert res["ranks"] == np, res
    assert res["msgs"] == expected_msgs(name, np, opts), res
    m, msgs = res["metrics"], res["msgs"]
    if name == "pingpong":
        assert m["half_rtt_us"] == pytest.approx(m["time_s"] * 1e6 / (2 * opts["n"]), rel=1e-6)
        assert 0 < m["half_rtt_median_us"], m
    elif name == "exchange":
        assert m["bandwidth_MBps"] == pytest.approx(msgs["bytes"] / m["time_s"] / 1e6, rel=1e-6)
    else:
        assert m["iter_us"] == pytest.approx(m["time_s"] * 1e6 / opts["i"], rel=1e-6)
        assert res["params"]["check"] == opts.get("c", "serial"), res


# odd sizes (tails shorter than a word), uneven splits (-N 1001 on 3 ranks)
CASES = [
    ("pingpong", 2, {"n": 500, "s": 8}),
    ("pingpong", 3, {"n": 300, "s": 1001}),
    ("exchange", 1, {"i": 20, "s": 65536}),
    ("exchange", 2, {"i": 40, "s": 65539}),
    ("exchange", 3, {"i": 20, "s": 32771}),
    ("stencil", 1, {"N": 1001, "i": 200}),
    ("stencil", 2, {"n": 500, "i": 300}),
    ("stencil", 3, {"N": 1001, "i": 300, "w": 3}),
    ("stencil", 3, {"N": 1001, "i": 300, "c": "invariants"}),
]
CASE_IDS = [f"{n}-np{np}" + ("-invariants" if "c" in o else "") for n, np, o in CASES]


@pytest.mark.parametrize(("name", "np", "opts"), CASES, ids=CASE_IDS)
def test_workload_own_transport(mpirun_bin, name, np, opts) -> None:
    proc = run_workload(mpirun_bin, name, np, argv(opts))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_result(name, np, opts, result_line(proc.stdout))


SHIM_CASES = [
    ("pingpong", {"n": 300, "s": 8}),
    ("exchange", {"i": 20, "s": 65536}),
    ("stencil", {"n": 1000, "i": 200}),
]


@pytest.mark.parametrize(("name", "opts"), SHIM_CASES, ids=[c[0] for c in SHIM_CASES])
def test_workload_beneath_shim(mpirun_bin, shim, name, opts) -> None:
    env = shim(latency=f"{LATENCY_US:g}us")
    proc = run_workload(mpirun_bin, name, 2, argv(opts), mpi_over_ofi(PROVIDER), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_result(name, 2, opts, res)
    tcp = [s for s in env.stats() if s.get("provider") == "tcp"]
    assert len({s["pid"] for s in tcp if int(s["msgs"]) > 0}) >= 2, env.stats()
    carried = sum(int(s["msgs"]) for s in tcp)
    assert carried >= res["msgs"]["total"], (carried, res["msgs"], env.stats())
    # each round trip / iteration waits for at least one message delayed by ΔL
    m = res["metrics"]
    if name == "pingpong":
        assert m["half_rtt_us"] >= LATENCY_US, m
        assert m["half_rtt_median_us"] >= LATENCY_US, m
    elif name == "stencil":
        assert m["iter_us"] >= LATENCY_US, m
    else:
        assert m["time_s"] >= opts["i"] * LATENCY_US * 1e-6, m


CORRUPT = [
    ("pingpong", ["-n", "50"]),
    ("exchange", ["-i", "5", "-s", "4099"]),
    ("stencil", ["-n", "100", "-i", "20"]),
    ("stencil", ["-n", "100", "-i", "20", "-c", "invariants"]),
]


@pytest.mark.parametrize(
    ("name", "args"), CORRUPT, ids=["pingpong", "exchange", "stencil", "stencil-invariants"]
)
def test_workload_checker_catches_corruption(mpirun_bin, name, args) -> None:
    """-X damages one byte (one halo value) after it arrived: valid must be false."""
    proc = run_workload(mpirun_bin, name, 2, [*args, "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    assert res["valid"] is False, res
    assert f"{name}:" in proc.stderr, proc.stderr


def test_pingpong_needs_two_ranks(mpirun_bin) -> None:
    proc = run_workload(mpirun_bin, "pingpong", 1, ["-n", "10"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "pingpong: needs at least 2 ranks" in proc.stderr, proc.stderr
    assert '"loggp_result"' not in proc.stdout, proc.stdout


BAD = [
    ("pingpong", ["-n", "abc"], "bad value 'abc' for -n: expected an integer from 1"),
    ("pingpong", ["-s", "-5"], "bad value '-5' for -s: expected a size in bytes"),
    ("exchange", ["-s", "12Q"], "bad value '12Q' for -s: expected a size in bytes"),
    ("exchange", ["-i"], "option -i needs a value: expected an integer from 1"),
    ("stencil", ["-q"], "unknown option -q: accepted options are -n CELLS"),
    ("stencil", ["-w", "9"], "bad value '9' for -w: expected an integer from 1 to 8"),
    ("stencil", ["-c", "bogus"], "bad value 'bogus' for -c: expected auto, serial or invariants"),
    ("stencil", ["-N", "3", "-w", "4"], "bad value 3 for -N: every rank needs at least -w 4"),
    ("stencil", ["extra"], "unexpected argument 'extra'"),
]


@pytest.mark.parametrize(("name", "args", "msg"), BAD, ids=[" ".join([b[0], *b[1]]) for b in BAD])
def test_workload_bad_option(mpirun_bin, name, args, msg) -> None:
    assert_refused(run_workload(mpirun_bin, name, 1, args), name, msg)


@pytest.mark.parametrize("name", ["pingpong", "exchange", "stencil"])
def test_workload_help(mpirun_bin, name) -> None:
    assert_usage(run_workload(mpirun_bin, name, 1, ["-h"]), name)
