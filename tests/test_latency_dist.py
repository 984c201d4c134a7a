"""Delays drawn from a distribution beneath the shim (LOGGP_LATENCY_DIST), checked by what
the shim itself recorded: each process's histogram of the ΔL its messages got
(`delay_hist`, buckets of `delay_bucket_ns`; emulator/core/include/lgp/stats.h).

fi_pingpong over tcp;ofi_rxm on loopback with LOGGP_LATENCY=100us and
LOGGP_LATENCY_DIST=normal:20us: the recorded delays must follow normal(100 µs, 20 µs)
within a Kolmogorov-Smirnov distance of KS_BOUND, taken at the histogram's bucket edges
(the empirical CDF is exact there).  For the ~4000 delays of a run, 0.031 is the distance a
true sample exceeds with probability 0.001; the bound leaves room for that, and a shape
that is wrong (a constant 100 µs, or σ halved) is far above it.  The bounds use what the
shim recorded, never wall time, so a busy host cannot fail them; that the delays were
really applied shows in the shim's release account (every release on or after its time).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest
from conftest import BUILD, base_env, fi_pingpong

from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE
from loggp.tests.cli import loggp

pytestmark = pytest.mark.integration

MEAN_US, SIGMA_US = 100.0, 20.0
KS_BOUND = 0.05
ITERATIONS = 2000
ARGS = ["-S", "64", "-I", str(ITERATIONS)]


def normal_cdf(x_us: float, mean_us: float, sigma_us: float) -> float:
    return 0.5 * math.erfc(-(x_us - mean_us) / (sigma_us * math.sqrt(2)))


def delay_hist(stats: list[dict[str, object]]) -> tuple[float, list[int]]:
    """The processes' delay histograms summed: (bucket width in µs, counts)."""
    lines = [s for s in stats if "delay_hist" in s]
    assert lines, f"no process recorded a delay histogram: {stats}"
    widths = {int(s["delay_bucket_ns"]) for s in lines}  # type: ignore[call-overload]
    assert len(widths) == 1, widths
    counts = [sum(c) for c in zip(*(s["delay_hist"] for s in lines), strict=True)]  # type: ignore[misc]
    return widths.pop() / 1000, counts


def ks_at_edges(width_us: float, counts: list[int], cdf) -> float:
    """sup |F_n - F| over the bucket edges below the last (overflow) bucket."""
    n, below, d = sum(counts), 0, 0.0
    for k, c in enumerate(counts[:-1]):
        below += c
        d = max(d, abs(below / n - cdf((k + 1) * width_us)))
    return d


def normal_run(fi_pingpong_bin, shim) -> list[dict[str, object]]:
    """The counter lines of one fi_pingpong beneath normal(MEAN_US, SIGMA_US)."""
    env = shim(latency=f"{MEAN_US:g}us", latency_dist=f"normal:{SIGMA_US:g}us")
    # the two sides draw apart: a seed of their own each (neither is an MPI rank)
    res = fi_pingpong(
        fi_pingpong_bin,
        "tcp;ofi_rxm",
        "rdm",
        ARGS,
        env.env | {"LOGGP_SEED": "1"},
        env.env | {"LOGGP_SEED": "2"},
        timeout=120,
    )
    assert res.ok, res.describe()
    return env.stats()


def test_normal_delays_follow_their_shape(fi_pingpong_bin, shim) -> None:
    stats = normal_run(fi_pingpong_bin, shim)
    width_us, counts = delay_hist(stats)
    n = sum(counts)
    assert n >= 2 * ITERATIONS, f"{n} delays recorded for {2 * ITERATIONS} messages"
    assert counts[-1] == 0, f"{counts[-1]} delays above the shape's largest (order kept?)"
    mean = sum((k + 0.5) * width_us * c for k, c in enumerate(counts)) / n
    assert abs(mean - MEAN_US) < 2.0, f"mean recorded delay {mean:.2f} us"

    d = ks_at_edges(width_us, counts, lambda x: normal_cdf(x, MEAN_US, SIGMA_US))
    assert d < KS_BOUND, f"KS distance {d:.4f} to normal({MEAN_US}, {SIGMA_US}) us, n={n}"
    # the bound tells shapes apart: the constant delay and half the spread are far off
    assert ks_at_edges(width_us, counts, lambda x: float(x >= MEAN_US)) > 4 * KS_BOUND
    half = ks_at_edges(width_us, counts, lambda x: normal_cdf(x, MEAN_US, SIGMA_US / 2))
    assert half > 2 * KS_BOUND, half

    # applied, not only drawn: the deferred sends were released, none before its time
    core = [s for s in stats if s.get("provider") == "tcp"]
    assert core and all(int(s["releases"]) > 0 for s in core), stats  # type: ignore[call-overload]
    assert all(int(s["early_releases"]) == 0 for s in stats), stats  # type: ignore[call-overload]

    # the seeds draw the same delays again: a ping-pong keeps one message in flight, so
    # none is raised for order and the histogram repeats exactly
    assert delay_hist(normal_run(fi_pingpong_bin, shim)) == (width_us, counts)


def test_mpi_ranks_draw_apart(fi_pingpong_bin, shim) -> None:
    """One seed: two processes draw the same delays, two ranks of an MPI job (the rank the
    launcher gives, here OMPI_COMM_WORLD_RANK) draw their own."""
    env = shim(latency="100us", latency_dist="normal:20us")
    args = ["-S", "64", "-I", "200"]

    def hists(server: dict[str, str], client: dict[str, str]) -> list[list[int]]:
        res = fi_pingpong(fi_pingpong_bin, "tcp;ofi_rxm", "rdm", args, server, client)
        assert res.ok, res.describe()
        lines = [s for s in env.stats() if s.get("provider") == "tcp"]
        env.stats_file.unlink()
        assert len(lines) == 2, lines
        return [s["delay_hist"] for s in lines]  # type: ignore[misc]

    same = hists(env.env, env.env)
    assert same[0] == same[1]
    ranks = hists(env.env | {"OMPI_COMM_WORLD_RANK": "0"}, env.env | {"OMPI_COMM_WORLD_RANK": "1"})
    assert ranks[0] != ranks[1]


def test_constant_latency_records_no_histogram(fi_pingpong_bin, shim) -> None:
    """Without a distribution nothing is drawn and the counter line is as before."""
    env = shim(latency="100us")
    res = fi_pingpong(fi_pingpong_bin, "tcp;ofi_rxm", "rdm", ["-S", "64", "-I", "10"], env.env)
    assert res.ok, res.describe()
    stats = env.stats()
    assert stats and not any("delay_hist" in s for s in stats), stats


@pytest.mark.parametrize(
    ("raw", "pattern"),
    [
        (
            {"LOGGP_LATENCY_DIST": "gauss:20us"},
            r"^loggp: bad value 'gauss:20us' for LOGGP_LATENCY_DIST: expected constant, "
            r"uniform:TIME, normal:TIME, pareto:TIME, paretonormal:TIME or empirical:FILE",
        ),
        (
            {"LOGGP_LATENCY_DIST": "normal:20us", "LOGGP_LATENCY_CORR": "25%"},
            r"^loggp: bad value '25%' for LOGGP_LATENCY_CORR: expected a number from 0 to 1",
        ),
        (
            {"LOGGP_LATENCY_DIST": "empirical:/nonexistent/delays"},
            r"^loggp: cannot read the delays of LOGGP_LATENCY_DIST '/nonexistent/delays': No such",
        ),
    ],
    ids=["shape", "corr", "file"],
)
def test_bad_distribution_refused(fi_pingpong_bin, shim, raw, pattern) -> None:
    env = shim(raw=raw)
    res = fi_pingpong(
        fi_pingpong_bin, "tcp;ofi_rxm", "rdm", ["-S", "64", "-I", "10"], env.env, timeout=60
    )
    assert res.client.returncode != 0 and res.server.returncode != 0, res.describe()
    lines = [ln for ln in (res.client.stderr + res.server.stderr).splitlines()]
    assert any(re.search(pattern, ln) for ln in lines), res.describe()


def test_the_experiment_files_distribution_reaches_every_rank(
    mpirun_bin: str, tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """emulator.latency_dist in the file (docs/experiments.md), through loggp run: both ranks
    of the point drew from normal(MEAN_US, SIGMA_US) with the file's seed (a constant ΔL
    records no histogram), and run.json and the report name the distribution."""
    rounds = 500
    exp = tmp_path / "dist.yaml"
    exp.write_text(
        "version: 1\nname: dist\nseed: 5\ntimeout: 60s\nlauncher: {kind: mpirun}\n"
        f"emulator: {{shim: fabric, baseline: {{latency: {MEAN_US:g}us}}, "
        f"latency_dist: 'normal:{SIGMA_US:g}us'}}\n"
        "workloads:\n"
        f"  - {{name: pp, program: workloads/pingpong/pingpong, args: [-n, '{rounds}']}}\n"
    )
    out = tmp_path / "run"
    shimless = base_env()  # no LOGGP_* variable: the file names the distribution
    res = loggp(
        "run", str(exp), "--out", str(out), "--no-prometheus",
        env_extra=shimless | lock_dir | {"LOGGP_BUILD": str(BUILD)},
        unset=[name for name in os.environ if name not in shimless],
        timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr

    (row,) = (p.row for p in read_points(out / STORE_FILE)[1])
    assert row["status"] in MEASURED, row["stderr_tail"]
    stats = json.loads(row["shim_stats"])
    ranks = [s["delay_hist"] for s in stats if s.get("provider") == "tcp" and "delay_hist" in s]
    assert len(ranks) == 2 and ranks[0] != ranks[1], stats  # each rank its own stream
    width_us, counts = delay_hist(stats)
    assert sum(counts) >= 2 * rounds, counts
    # a spread, not a constant: the normal's KS bound as above, loosened for fewer delays
    d = ks_at_edges(width_us, counts, lambda x: normal_cdf(x, MEAN_US, SIGMA_US))
    assert d < 2 * KS_BOUND, f"KS distance {d:.4f} to normal({MEAN_US}, {SIGMA_US}) us"

    prov = json.loads((out / "run.json").read_text())["provenance"]["delay_distribution"]
    want = {"latency_dist": f"normal:{SIGMA_US:g}us", "seed": "5", "from": "experiment file"}
    assert prov == want
    assert "delay_distribution" in (out / "report" / "index.html").read_text()
