"""The sample workload (workloads/sample/): sample sort with one bulk message
per destination rank.

The splitters are chosen here as the program chooses them (evenly spaced
samples of each rank's sorted keys, sorted, N - 1 evenly spaced of those), so
the bucket sizes, hence the bytes and the imbalance, are predicted exactly;
every rank sends every other rank one bucket, empty ones too.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import assert_refused, assert_usage, mpi_over_ofi, run_workload
from test_app_radix import (
    LATENCY_US,
    argv,
    check_sort_result,
    crit_phases,
    result_line,
    sample_buckets,
    total_keys,
)

pytestmark = pytest.mark.integration


def expected_sample(np: int, opts: dict[str, Any]) -> dict[str, Any]:
    c = sample_buckets(np, opts)
    sbytes = [4 * sum(c[s][d] for d in range(np) if d != s) for s in range(np)]
    per_rank = [np - 1] * np
    return {"total": sum(per_rank), "bytes": sum(sbytes), "per_rank": per_rank} | crit_phases(
        [(per_rank, per_rank, sbytes)]
    )


def imbalance(np: int, opts: dict[str, Any]) -> float:
    c, total = sample_buckets(np, opts), total_keys(np, opts)
    most = max(sum(c[s][d] for s in range(np)) for d in range(np))
    return most * np / total if total else 0.0


# odd totals, ranks without keys (-N 3, -N 0 on 4 ranks), one sample per rank,
# more samples than keys
CASES = [
    (1, {"N": 1001}),
    (2, {"n": 3000}),
    (2, {"N": 1}),
    (4, {"N": 10001, "s": 9}),
    (4, {"N": 3}),
    (4, {"N": 0}),
    (4, {"N": 4001, "o": 1}),
    (4, {"N": 41, "o": 100}),
]


@pytest.mark.parametrize(("np", "opts"), CASES, ids=[f"np{np}-{argv(o)}" for np, o in CASES])
def test_sample_own_transport(mpirun_bin, np, opts) -> None:
    proc = run_workload(mpirun_bin, "sample", np, argv(opts))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_sort_result("sample", np, opts, res)
    assert res["params"]["samples"] == opts.get("o", 64), res
    assert res["msgs"] == expected_sample(np, opts), res
    assert res["metrics"]["imbalance"] == pytest.approx(imbalance(np, opts), rel=1e-6), res


def test_sample_beneath_shim(mpirun_bin, shim) -> None:
    opts = {"n": 20000}
    env = shim(latency=f"{LATENCY_US:g}us", overhead="2us")
    proc = run_workload(mpirun_bin, "sample", 2, argv(opts), mpi_over_ofi("tcp;ofi_rxm"), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_sort_result("sample", 2, opts, res)
    assert res["msgs"] == expected_sample(2, opts), res
    assert env.provider_msgs("tcp") >= res["msgs"]["total"], (res["msgs"], env.stats())
    # the buckets leave after the sort began and arrive ΔL later
    assert res["metrics"]["time_s"] >= res["msgs"]["critical_path"] * LATENCY_US * 1e-6, res


@pytest.mark.parametrize(("np", "args"), [(2, ["-n", "500"]), (4, ["-N", "9"])])
def test_sample_checker_catches_corruption(mpirun_bin, np, args) -> None:
    proc = run_workload(mpirun_bin, "sample", np, [*args, "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result_line(proc.stdout)["valid"] is False
    assert "sample: " in proc.stderr, proc.stderr


BAD = [
    (["-o", "0"], "bad value '0' for -o: expected an integer from 1 to 4096"),
    (["-b", "8"], "unknown option -b: accepted options are -n KEYS"),
    (["-N", "3000000000"], "bad value '3000000000' for -N: expected an integer from 0"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_sample_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(run_workload(mpirun_bin, "sample", 1, args), "sample", msg)


def test_sample_help(mpirun_bin) -> None:
    assert_usage(run_workload(mpirun_bin, "sample", 1, ["-h"]), "sample")
