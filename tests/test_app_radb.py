"""The radb workload (workloads/radb/): radix sort with one bulk message per
destination rank per pass.

Every pass every rank sends each other rank one bucket (empty ones too), so
the message counts follow from the rank count and the digit width alone; the
bytes are 4 per key that moves to another rank's block, predicted by the
simulation of tests/test_app_radix.py.
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
    radix_moves,
    result_line,
)

pytestmark = pytest.mark.integration


def expected_radb(np: int, opts: dict[str, Any]) -> dict[str, Any]:
    phases, total_bytes = [], 0
    for c in radix_moves(np, opts):
        sbytes = [4 * sum(c[s][d] for d in range(np) if d != s) for s in range(np)]
        phases.append(([np - 1] * np, [np - 1] * np, sbytes))
        total_bytes += sum(sbytes)
    per_rank = [len(phases) * (np - 1)] * np
    return {"total": sum(per_rank), "bytes": total_bytes, "per_rank": per_rank} | crit_phases(
        phases
    )


# odd totals, ranks without keys (-N 3 and -N 0 on 4 ranks: empty buckets
# still travel), 3 passes of 11 bits, 32 passes of 1 bit
CASES = [
    (1, {"N": 1001}),
    (2, {"n": 3000}),
    (2, {"N": 2999, "b": 11}),
    (4, {"N": 10001, "s": 7}),
    (4, {"N": 3}),
    (4, {"N": 0}),
    (4, {"N": 501, "b": 1}),
]


@pytest.mark.parametrize(("np", "opts"), CASES, ids=[f"np{np}-{argv(o)}" for np, o in CASES])
def test_radb_own_transport(mpirun_bin, np, opts) -> None:
    proc = run_workload(mpirun_bin, "radb", np, argv(opts))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_sort_result("radb", np, opts, res)
    assert res["params"]["passes"] == -(-32 // opts.get("b", 8)), res
    assert res["msgs"] == expected_radb(np, opts), res


def test_radb_beneath_shim(mpirun_bin, shim) -> None:
    opts = {"n": 20000}
    env = shim(latency=f"{LATENCY_US:g}us", overhead="2us")
    proc = run_workload(mpirun_bin, "radb", 2, argv(opts), mpi_over_ofi("tcp;ofi_rxm"), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    check_sort_result("radb", 2, opts, res)
    assert res["msgs"] == expected_radb(2, opts), res
    assert env.provider_msgs("tcp") >= res["msgs"]["total"], (res["msgs"], env.stats())
    # every pass waits for buckets that left after it began, each delayed by ΔL
    assert res["metrics"]["time_s"] >= res["msgs"]["critical_path"] * LATENCY_US * 1e-6, res


@pytest.mark.parametrize(("np", "args"), [(2, ["-n", "500"]), (4, ["-N", "9"])])
def test_radb_checker_catches_corruption(mpirun_bin, np, args) -> None:
    proc = run_workload(mpirun_bin, "radb", np, [*args, "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result_line(proc.stdout)["valid"] is False
    assert "radb: " in proc.stderr, proc.stderr


BAD = [
    (["-b", "0"], "bad value '0' for -b: expected an integer from 1 to 16"),
    (["-g", "4"], "unknown option -g: accepted options are -n KEYS"),
    (["-n", "1K"], "bad value '1K' for -n: expected an integer from 0"),
    (["-s"], "option -s needs a value"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_radb_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(run_workload(mpirun_bin, "radb", 1, args), "radb", msg)


def test_radb_help(mpirun_bin) -> None:
    assert_usage(run_workload(mpirun_bin, "radb", 1, ["-h"]), "radb")
