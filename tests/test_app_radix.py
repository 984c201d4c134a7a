"""The radix workload (workloads/radix/): fine-grained parallel radix sort.

The message counts are predicted independently of the program: the keys are
regenerated here from the same seeded generator, the sort is simulated as one
global stable sort per digit over the fixed blocks of the ranks, and every key
whose position moves to another rank's block is one (offset, key) pair of 8
bytes, grouped -g at a time per destination.  The simulation helpers are also
used by tests/test_app_radb.py and tests/test_app_sample.py.

Beneath the shim (tcp;ofi_rxm, ΔL = 20 µs, Δo = 2 µs) the sort must still
validate, the core provider must carry at least the counted messages, and each
pass, which waits for messages delayed by ΔL, takes at least ΔL.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from typing import Any

import pytest
from conftest import assert_refused, assert_usage, mpi_over_ofi, run_workload

pytestmark = pytest.mark.integration

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
LATENCY_US = 20.0


# --- the key generator and the sorts, as workloads/radix/sortcheck.c defines them ---


def mix(x: int) -> int:
    """splitmix64's finaliser."""
    x &= M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def gen_keys(total: int, seed: int) -> list[int]:
    s = mix(seed + GOLDEN)
    return [mix(s + g * GOLDEN) >> 32 for g in range(total)]


def part(total: int, np: int, rank: int) -> tuple[int, int]:
    base, extra = divmod(total, np)
    return rank * base + min(rank, extra), base + (rank < extra)


def owners(total: int, np: int) -> list[int]:
    """The rank owning each global position."""
    own = []
    for r in range(np):
        own += [r] * part(total, np, r)[1]
    return own


def total_keys(np: int, opts: dict[str, Any]) -> int:
    return int(opts["N"]) if "N" in opts else int(opts.get("n", 0)) * np


def radix_moves(np: int, opts: dict[str, Any]) -> list[list[list[int]]]:
    """Per pass, c[s][d]: keys rank s sends rank d (the diagonal stays put)."""
    total, seed, bits = total_keys(np, opts), int(opts.get("s", 1)), int(opts.get("b", 8))
    keys, own = gen_keys(total, seed), owners(total, np)
    mask = (1 << bits) - 1
    moves = []
    for shift in range(0, 32, bits):
        order = sorted(range(total), key=lambda i: (keys[i] >> shift) & mask)  # stable
        c = [[0] * np for _ in range(np)]
        for new, old in enumerate(order):
            c[own[old]][own[new]] += 1
        moves.append(c)
        keys = [keys[i] for i in order]
    return moves


def crit_phases(phases: list[tuple[list[int], list[int], list[int]]]) -> dict[str, int]:
    """sortcheck.c's rule: per phase one latency if anything moved; the sends and
    receives of the rank with the most of both (the first on a tie); the most bytes
    any rank sent."""
    crit = {"critical_path": 0, "critical_sends": 0, "critical_recvs": 0, "critical_bytes": 0}
    for sent, recvd, sbytes in phases:
        busy = max(range(len(sent)), key=lambda r: (sent[r] + recvd[r], -r))
        crit["critical_path"] += sum(sent) > 0
        crit["critical_sends"] += sent[busy]
        crit["critical_recvs"] += recvd[busy]
        crit["critical_bytes"] += max(sbytes)
    return crit


def expected_radix(np: int, opts: dict[str, Any]) -> dict[str, Any]:
    group = int(opts.get("g", 1))
    per_rank, total_bytes, phases = [0] * np, 0, []
    for c in radix_moves(np, opts):
        msgs = [[-(-c[s][d] // group) if s != d else 0 for d in range(np)] for s in range(np)]
        sent = [sum(row) for row in msgs]
        recvd = [sum(msgs[s][d] for s in range(np)) for d in range(np)]
        sbytes = [8 * sum(c[s][d] for d in range(np) if d != s) for s in range(np)]
        phases.append((sent, recvd, sbytes))
        per_rank = [a + b for a, b in zip(per_rank, sent, strict=True)]
        total_bytes += sum(sbytes)
    return {"total": sum(per_rank), "bytes": total_bytes, "per_rank": per_rank} | crit_phases(
        phases
    )


def sample_buckets(np: int, opts: dict[str, Any]) -> list[list[int]]:
    """c[s][d]: keys rank s sends rank d in the sample sort."""
    total, seed, nsamp = total_keys(np, opts), int(opts.get("s", 1)), int(opts.get("o", 64))
    keys = gen_keys(total, seed)
    local = []
    for r in range(np):
        lo, n = part(total, np, r)
        local.append(sorted(keys[lo : lo + n]))
    samples = sorted(
        run_keys[(i + 1) * len(run_keys) // (nsamp + 1)]
        for run_keys in local
        if run_keys
        for i in range(nsamp)
    )
    v = len(samples)
    split = [samples[(j + 1) * v // np] if v else 0xFFFFFFFF for j in range(np - 1)]
    c = []
    for run_keys in local:
        bounds = [0] + [bisect_right(run_keys, sp) for sp in split] + [len(run_keys)]
        c.append([bounds[j + 1] - bounds[j] for j in range(np)])
    return c


# --- running the programs ---


def argv(opts: dict[str, Any]) -> list[str]:
    return [a for k, v in opts.items() for a in (f"-{k}", str(v))]


def result_line(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if '"loggp_result"' in line]
    assert len(lines) == 1, f"expected exactly one result line:\n{stdout}"
    res = json.loads(lines[0])
    assert res["loggp_result"] == 1
    assert res["metrics"]["time_s"] > 0, res
    assert sum(res["msgs"]["per_rank"]) == res["msgs"]["total"], res
    return res


def check_sort_result(name: str, np: int, opts: dict[str, Any], res: dict[str, Any]) -> None:
    total = total_keys(np, opts)
    assert res["workload"] == name, res
    assert res["valid"] is True, res
    assert res["ranks"] == np, res
    assert res["params"]["keys"] == total, res
    m = res["metrics"]
    want_ns = m["time_s"] * 1e9 / total if total else 0
    assert m["ns_per_key"] == pytest.approx(want_ns, rel=1e-6), m


# --- radix ---

# odd totals (-N 1001 on 4 ranks: 251, 250, 250, 250), ranks without keys
# (-N 3 on 4 ranks, -N 0), groups that do not divide the counts, 7 passes of
# 5 bits (the last of 2 bits), a digit of 16 bits
CASES = [
    (1, {"N": 1001}),
    (2, {"n": 1500}),
    (2, {"N": 999, "b": 5}),
    (4, {"N": 1001}),
    (4, {"N": 3}),
    (4, {"N": 0}),
    (4, {"N": 2001, "g": 7, "s": 42}),
    (4, {"n": 300, "b": 16, "g": 3}),
]


@pytest.mark.parametrize(("np", "opts"), CASES, ids=[f"np{np}-{argv(o)}" for np, o in CASES])
def test_radix_own_transport(mpirun_bin, np, opts) -> None:
    proc = run_workload(mpirun_bin, "radix", np, argv(opts))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_sort_result("radix", np, opts, res)
    assert res["params"]["group"] == opts.get("g", 1), res
    assert res["params"]["passes"] == -(-32 // opts.get("b", 8)), res
    assert res["msgs"] == expected_radix(np, opts), res


def test_radix_beneath_shim(mpirun_bin, shim) -> None:
    opts = {"n": 1000}
    env = shim(latency=f"{LATENCY_US:g}us", overhead="2us")
    proc = run_workload(mpirun_bin, "radix", 2, argv(opts), mpi_over_ofi("tcp;ofi_rxm"), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_sort_result("radix", 2, opts, res)
    assert res["msgs"] == expected_radix(2, opts), res
    assert env.provider_msgs("tcp") >= res["msgs"]["total"], (res["msgs"], env.stats())
    # every pass waits for keys that left after it began, each delayed by ΔL
    assert res["metrics"]["time_s"] >= res["msgs"]["critical_path"] * LATENCY_US * 1e-6, res


@pytest.mark.parametrize(("np", "args"), [(2, ["-n", "500"]), (4, ["-N", "7", "-g", "2"])])
def test_radix_checker_catches_corruption(mpirun_bin, np, args) -> None:
    proc = run_workload(mpirun_bin, "radix", np, [*args, "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result_line(proc.stdout)["valid"] is False
    # a key damaged before its last pass is sorted by its new value: the checksum
    # catches it; one damaged in the last pass may break the order first
    assert "radix: " in proc.stderr, proc.stderr


BAD = [
    (["-g", "0"], "bad value '0' for -g: expected an integer from 1 to 16384"),
    (["-b", "17"], "bad value '17' for -b: expected an integer from 1 to 16"),
    (["-N", "-1"], "bad value '-1' for -N: expected an integer from 0"),
    (["-n"], "option -n needs a value"),
    (["-q"], "unknown option -q: accepted options are -n KEYS"),
    (["x"], "unexpected argument 'x'"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_radix_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(run_workload(mpirun_bin, "radix", 1, args), "radix", msg)


def test_radix_help(mpirun_bin) -> None:
    assert_usage(run_workload(mpirun_bin, "radix", 1, ["-h"]), "radix")
