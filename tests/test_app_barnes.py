"""barnes (workloads/barnes/): Barnes-Hut with remote reads of tree cells.

Every remote read is one request and one reply, so the counts must satisfy
msgs.total == 2 * remote_reads, with 8 request bytes and a 104-byte cell header
plus 40 bytes per body (0..8) of a leaf in each reply.  The cache changes only
how many of the same accesses go to the network: with -c off every access is a
read, so its reads equal the hits plus misses of the same run with the cache on,
and the forces are bit for bit the same.  Validity is the program's own check:
forces and positions against a direct O(n^2) computation on rank 0 (exact to
rounding at theta 0), energy and momentum.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import MPI_OWN_TRANSPORT, assert_refused, assert_usage, mpi_over_ofi, run_workload

pytestmark = pytest.mark.integration

PROVIDER = "tcp;ofi_rxm"
TIMEOUT = 120.0
REQ, HDR, BODY, LEAF = 8, 104, 40, 8


def mpirun_bh(mpirun_bin: str, np: int, args: list[str], mca=MPI_OWN_TRANSPORT, env=None):
    return run_workload(mpirun_bin, "barnes", np, args, mca, env, TIMEOUT)


def result_line(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if '"loggp_result"' in line]
    assert len(lines) == 1, f"expected exactly one result line:\n{stdout}"
    res = json.loads(lines[0])
    assert res["loggp_result"] == 1 and res["workload"] == "barnes", res
    assert sum(res["msgs"]["per_rank"]) == res["msgs"]["total"], res
    return res


def check_counts(res: dict[str, Any], np: int) -> None:
    """Counts that follow from the request/reply pattern."""
    m, msgs = res["metrics"], res["msgs"]
    reads = m["remote_reads"]
    assert m["cache_misses"] == reads, m
    assert msgs["total"] == 2 * reads, (m, msgs)
    assert reads * (REQ + HDR) <= msgs["bytes"] <= reads * (REQ + HDR + LEAF * BODY), msgs
    if np == 1:
        assert reads == 0 and m["cache_hits"] == 0, m
        assert msgs["critical_path"] == msgs["critical_bytes"] == 0, msgs
        return
    # the rank with the most reads: 2 messages, 2 sends, 2 receives per read
    path = msgs["critical_path"]
    assert path == msgs["critical_sends"] == msgs["critical_recvs"] and path % 2 == 0, msgs
    assert 2 * reads / np <= path <= 2 * reads, (reads, msgs)
    assert path // 2 * (REQ + HDR) <= msgs["critical_bytes"], msgs


def opts(**kw: Any) -> list[str]:
    return [a for k, v in kw.items() for a in (f"-{k}", str(v))]


# (ranks, options): odd sizes, a rank without bodies (N < ranks), theta 0 (exact)
CASES = [
    (1, {"N": 301, "s": 2}),
    (2, {"n": 200, "s": 3}),
    (3, {"N": 500, "s": 2, "d": "uniform", "t": 1.0}),
    (4, {"N": 3, "s": 2}),
    (4, {"N": 1001, "s": 2, "t": 0}),
]


@pytest.mark.parametrize(("np", "kw"), CASES, ids=[f"np{c[0]}-{c[1]}" for c in CASES])
def test_barnes_own_transport(mpirun_bin, np, kw) -> None:
    proc = mpirun_bh(mpirun_bin, np, opts(**kw))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    assert res["valid"] is True and res["ranks"] == np, res
    check_counts(res, np)
    p, m = res["params"], res["metrics"]
    assert p["bodies"] == kw.get("N", kw.get("n", 0) * np) and p["steps"] == kw["s"], p
    assert p["check"] == "direct" and "force_err" in m and "pos_err" in m, res
    if kw.get("t") == 0:  # the direct sum, in another order
        assert m["force_err"] < 1e-9 and m["pos_err"] < 1e-9, m
    if kw.get("N", np) < np:  # ranks without bodies neither ask nor are asked
        assert res["msgs"]["per_rank"][kw["N"] :] == [0] * (np - kw["N"]), res


def test_barnes_cache_only_saves_reads(mpirun_bin) -> None:
    args = opts(N=401, s=2, t=0.6)
    on = mpirun_bh(mpirun_bin, 3, args)
    off = mpirun_bh(mpirun_bin, 3, [*args, "-c", "off"])
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    r_on, r_off = result_line(on.stdout), result_line(off.stdout)
    assert r_on["valid"] and r_off["valid"], (r_on, r_off)
    check_counts(r_on, 3)
    check_counts(r_off, 3)
    m_on, m_off = r_on["metrics"], r_off["metrics"]
    assert m_off["cache_hits"] == 0, m_off
    assert m_off["remote_reads"] == m_on["cache_hits"] + m_on["cache_misses"], (m_on, m_off)
    assert m_on["cache_hits"] > m_on["cache_misses"] > 0, m_on
    for k in ("force_err", "pos_err", "energy_err"):
        assert m_on[k] == m_off[k], (k, m_on, m_off)


def test_barnes_sanity_check_large(mpirun_bin) -> None:
    """Beyond what rank 0 can recompute, energy and momentum still judge."""
    proc = mpirun_bh(mpirun_bin, 2, opts(n=12000, s=1))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    assert res["valid"] is True and res["params"]["check"] == "sanity", res
    assert "force_err" not in res["metrics"], res
    check_counts(res, 2)


@pytest.mark.parametrize("check", ["direct", "sanity"])
def test_barnes_catches_corruption(mpirun_bin, check) -> None:
    """-X adds a large mass to one received body: valid must be false."""
    proc = mpirun_bh(mpirun_bin, 2, [*opts(n=200, s=2, v=check), "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result_line(proc.stdout)["valid"] is False
    assert "barnes: " in proc.stderr, proc.stderr


def test_barnes_beneath_shim(mpirun_bin, shim) -> None:
    env = shim(latency="20us", overhead="2us")
    proc = mpirun_bh(mpirun_bin, 2, opts(n=300, s=2), mpi_over_ofi(PROVIDER), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    assert res["valid"] is True, res
    check_counts(res, 2)
    carried = env.provider_msgs("tcp")
    assert carried >= res["msgs"]["total"], (carried, res["msgs"], env.stats())
    # the busiest rank's reads are sequential round trips, each >= 2 latencies
    assert res["metrics"]["time_s"] >= res["msgs"]["critical_path"] * 20e-6, res


BAD = [
    (["-t", "abc"], "bad value 'abc' for -t: expected a number from 0 to 2"),
    (["-t", "3"], "bad value '3' for -t: expected a number from 0 to 2"),
    (["-c", "maybe"], "bad value 'maybe' for -c: expected on or off"),
    (["-d", "disc"], "bad value 'disc' for -d: expected plummer or uniform"),
    (["-s", "17", "-v", "direct"], "bad value direct for -v: the direct check takes at most"),
    (["-n", "0"], "bad value '0' for -n: expected an integer from 1"),
    (["-q"], "unknown option -q: accepted options are -n BODIES"),
    (["extra"], "unexpected argument 'extra'"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_barnes_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(mpirun_bh(mpirun_bin, 1, args), "barnes", msg)


def test_barnes_help(mpirun_bin) -> None:
    assert_usage(mpirun_bh(mpirun_bin, 1, ["-h"]), "barnes")
