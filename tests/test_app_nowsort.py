"""nowsort (workloads/nowsort/): a one-pass disk-to-disk sort, checked end to end.

The message counts are computed here independently: the input's keys are a
function of (seed, record index), so the test recomputes which rank owns every
record and from that how many bulk messages of -c bytes each rank sends (a full
buffer goes when the next record for it comes, the last one, maybe empty, with
its own tag: max(1, ceil(records / per)) per ordered pair).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from conftest import MPI_OWN_TRANSPORT, assert_refused, assert_usage, mpi_over_ofi, run_workload

pytestmark = pytest.mark.integration

PROVIDER = "tcp;ofi_rxm"
TIMEOUT = 120.0
REC = 100
M64 = (1 << 64) - 1


def mpirun_ns(mpirun_bin: str, np: int, args: list[str], mca=MPI_OWN_TRANSPORT, env=None):
    return run_workload(mpirun_bin, "nowsort", np, args, mca, env, TIMEOUT)


def result_line(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if '"loggp_result"' in line]
    assert len(lines) == 1, f"expected exactly one result line:\n{stdout}"
    res = json.loads(lines[0])
    assert res["loggp_result"] == 1 and res["workload"] == "nowsort", res
    assert sum(res["msgs"]["per_rank"]) == res["msgs"]["total"], res
    return res


def mix(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def expected_msgs(np: int, total: int, chunk: int, seed: int = 1) -> dict[str, Any]:
    """Messages and bytes of the distribution, from the keys the program makes."""
    per = chunk // REC
    base, extra = divmod(total, np)
    sent = [0] * np
    recvd = [0] * np
    sent_bytes = [0] * np
    for r in range(np):
        lo = r * base + min(r, extra)
        n = base + (r < extra)
        to = [0] * np
        for g in range(lo, lo + n):
            key = mix((seed * 0x9E3779B97F4A7C15 + g) & M64)
            to[((key >> 48) * np) >> 16] += 1
        for d in range(np):
            if d == r:
                continue
            msgs = max(1, math.ceil(to[d] / per))
            sent[r] += msgs
            recvd[d] += msgs
            sent_bytes[r] += to[d] * REC
    return {
        "total": sum(sent),
        "bytes": sum(sent_bytes),
        "per_rank": sent,
        "critical_path": 1 if np > 1 else 0,
        "critical_sends": max(sent) if np > 1 else 0,
        "critical_recvs": max(recvd) if np > 1 else 0,
        "critical_bytes": max(sent_bytes) if np > 1 else 0,
    }


# (ranks, total records, -c): odd sizes, chunks of one record, ranks without input
CASES = [
    (1, 1000, "64K"),
    (2, 5000, "4K"),
    (3, 10001, "1000"),
    (4, 3, "300"),
    (4, 2001, "10K"),
]


def chunk_bytes(c: str) -> int:
    n = int(c.rstrip("KM")) * {"K": 1024, "M": 1 << 20}.get(c[-1], 1)
    return n - n % REC


@pytest.mark.parametrize(("np", "total", "chunk"), CASES, ids=[f"np{c[0]}-N{c[1]}" for c in CASES])
def test_nowsort_own_transport(mpirun_bin, tmp_path, np, total, chunk) -> None:
    args = ["-N", str(total), "-c", chunk, "-d", str(tmp_path)]
    if np == 4 and total > 1000:
        args += ["-s", "off"]
    proc = mpirun_ns(mpirun_bin, np, args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    assert res["valid"] is True and res["ranks"] == np, res
    assert res["msgs"] == expected_msgs(np, total, chunk_bytes(chunk)), res
    m = res["metrics"]
    for k in ("read_s", "comm_s", "sort_s", "write_s"):
        assert 0 <= m[k] <= m["time_s"], m
    assert res["params"]["records"] == total and res["params"]["chunk"] == chunk_bytes(chunk)
    assert list(tmp_path.iterdir()) == [], "the run directory must be removed"


def test_nowsort_keep(mpirun_bin, tmp_path) -> None:
    """-k leaves the run directory: inputs and globally sorted outputs, same records."""
    proc = mpirun_ns(mpirun_bin, 3, ["-N", "999", "-c", "1K", "-d", str(tmp_path), "-k"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result_line(proc.stdout)["valid"] is True
    (run_dir,) = list(tmp_path.iterdir())
    assert str(run_dir) in proc.stderr, proc.stderr
    ins = b"".join((run_dir / f"in-{r}").read_bytes() for r in range(3))
    outs = b"".join((run_dir / f"out-{r}").read_bytes() for r in range(3))
    recs_in = [ins[i : i + REC] for i in range(0, len(ins), REC)]
    recs_out = [outs[i : i + REC] for i in range(0, len(outs), REC)]
    assert len(recs_in) == 999
    assert sorted(recs_in) == recs_out


def test_nowsort_catches_corruption(mpirun_bin, tmp_path) -> None:
    proc = mpirun_ns(mpirun_bin, 2, ["-n", "1000", "-d", str(tmp_path), "-X"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result_line(proc.stdout)["valid"] is False
    assert "nowsort: the output is not a permutation of the input" in proc.stderr, proc.stderr


def test_nowsort_beneath_shim(mpirun_bin, shim, tmp_path) -> None:
    env = shim(latency="20us", overhead="2us")
    data = tmp_path / "data"  # the shim's stats file is in tmp_path
    data.mkdir()
    args = ["-n", "20000", "-c", "64K", "-d", str(data)]
    proc = mpirun_ns(mpirun_bin, 2, args, mpi_over_ofi(PROVIDER), env.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = result_line(proc.stdout)
    assert res["valid"] is True, res
    assert res["msgs"] == expected_msgs(2, 40000, chunk_bytes("64K")), res
    carried = env.provider_msgs("tcp")
    assert carried >= res["msgs"]["total"], (carried, res["msgs"], env.stats())
    assert list(data.iterdir()) == []


def test_nowsort_io_error_names_path(mpirun_bin, tmp_path) -> None:
    """A directory that cannot be made: one line naming it, exit status non-zero."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = mpirun_ns(mpirun_bin, 2, ["-n", "10", "-d", str(blocker)])
    assert proc.returncode != 0, proc.stdout + proc.stderr
    own = [line for line in proc.stderr.splitlines() if line.startswith("nowsort: ")]
    assert len(own) == 1 and str(blocker) in own[0] and "Not a directory" in own[0], proc.stderr
    assert '"loggp_result"' not in proc.stdout


BAD = [
    (["-c", "50"], "bad value '50' for -c: expected a size in bytes from 100"),
    (["-n", "abc"], "bad value 'abc' for -n: expected an integer from 1"),
    (["-s", "maybe"], "bad value 'maybe' for -s: expected on or off"),
    (["-d"], "option -d needs a value"),
    (["-q"], "unknown option -q: accepted options are -n RECORDS"),
    (["stray"], "unexpected argument 'stray'"),
]


@pytest.mark.parametrize(("args", "msg"), BAD, ids=[" ".join(b[0]) for b in BAD])
def test_nowsort_bad_option(mpirun_bin, args, msg) -> None:
    assert_refused(mpirun_ns(mpirun_bin, 1, args), "nowsort", msg)


def test_nowsort_help(mpirun_bin) -> None:
    assert_usage(mpirun_ns(mpirun_bin, 1, ["-h"]), "nowsort")
