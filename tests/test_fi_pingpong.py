"""fi_pingpong from libfabric-bin, a client not written here, beneath the shim.

fi_pingpong's usec/xfer is elapsed / (2 * iterations) over all iterations of
one size (no warm-up; see conftest.PingPerf): the mean half round trip.  An
added ΔL delays each of the two legs of a round trip once, so usec/xfer
grows by ΔL.  Baselines and shimmed runs take the minimum of a few runs so a
noisy neighbour on this 2-core host inflates neither.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest
from conftest import (
    BUILD,
    NONZERO_KNOBS,
    ZERO_KNOBS,
    base_env,
    core_provider,
    fi_pingpong,
    ping_perf,
)

from loggp.results.lateness import late_quantile_ns
from loggp.results.protocol import shim_stats

pytestmark = pytest.mark.integration

# (provider, endpoint type): plain tcp has only FI_EP_MSG in libfabric 1.17.
PROVIDERS = [("shm", "rdm"), ("tcp;ofi_rxm", "rdm"), ("udp;ofi_rxd", "rdm"), ("tcp", "msg")]
IDS = ["shm", "tcp_rxm", "udp_rxd", "tcp_msg"]


def min_usec(binary: str, provider: str, ep: str, args: list[str], env, runs: int) -> float:
    return min(
        ping_perf(fi_pingpong(binary, provider, ep, args, env)).usec_per_xfer for _ in range(runs)
    )


@pytest.mark.parametrize(("provider", "ep"), PROVIDERS, ids=IDS)
@pytest.mark.parametrize("knobs", [ZERO_KNOBS, NONZERO_KNOBS], ids=["zero", "nonzero"])
def test_pingpong_correct_beneath_shim(fi_pingpong_bin, shim, provider, ep, knobs) -> None:
    """All sizes, data checked by fi_pingpong itself (-c), both sides exit 0.  Three
    iterations of each size: udp;ofi_rxd's ten took 50-75 s on a busy host."""
    env = shim(**knobs)
    res = fi_pingpong(
        fi_pingpong_bin, provider, ep, ["-S", "all", "-I", "3", "-c"], env.env, timeout=120
    )
    assert res.ok, res.describe()
    if knobs is NONZERO_KNOBS:
        msgs = env.provider_msgs(core_provider(provider))
        assert msgs > 0, f"shim carried no {core_provider(provider)} messages: {env.stats()}"


@pytest.mark.serial
@pytest.mark.parametrize(("provider", "ep"), PROVIDERS, ids=IDS)
def test_latency_500us_adds_to_half_rtt(fi_pingpong_bin, shim, provider, ep) -> None:
    """ΔL once per leg; on the layered providers (ofi_rxm, ofi_rxd) at the core
    provider only: a second application at the utility would add 2·ΔL, above the bound."""
    args = ["-S", "64", "-I", "200"]
    base = min_usec(fi_pingpong_bin, provider, ep, args, base_env(), runs=3)
    env = shim(latency="500us")
    delayed = min_usec(fi_pingpong_bin, provider, ep, args, env.env, runs=2)
    increase = delayed - base
    assert 400 <= increase <= 800, f"half-RTT {base:.1f} -> {delayed:.1f} us (+{increase:.1f})"
    stats = env.stats()
    core = [s for s in stats if s.get("provider") == core_provider(provider)]
    others = [s for s in stats if s.get("provider") != core_provider(provider)]
    assert core and all(int(s["msgs"]) > 0 and int(s["latency_ns"]) > 0 for s in core), stats
    assert all(int(s.get("msgs", 0)) == 0 and int(s.get("latency_ns", 0)) == 0 for s in others), (
        f"a utility layer delayed messages: {others}"
    )


@pytest.mark.serial
@pytest.mark.slow
@pytest.mark.parametrize(
    ("provider", "ep"),
    [("shm", "rdm"), ("tcp;ofi_rxm", "rdm"), ("tcp", "msg")],
    ids=["shm", "tcp_rxm", "tcp_msg"],
)
def test_bandwidth_50MBps_caps_64MiB(fi_pingpong_bin, shim, provider, ep) -> None:
    """64 MiB ping-pong at LOGGP_BANDWIDTH=50MB/s: each leg needs ~1.34 s.

    fi_pingpong's MB/sec is (2 * iterations * size) / elapsed in 10^6 B/s,
    the effective one-way rate; it must land near 50, below the cap plus
    slack and well above half of it.
    """
    env = shim(bandwidth="50MB/s")
    res = fi_pingpong(
        fi_pingpong_bin, provider, ep, ["-S", "67108864", "-I", "2"], env.env, timeout=120
    )
    rate = ping_perf(res).mb_per_sec
    assert 30 <= rate <= 55, f"effective rate {rate:.1f} MB/s under a 50 MB/s cap"


SUMMARY = re.compile(
    r"^loggp: exec: (?P<lines>\d+) shim counter lines in (?P<file>\S+): (?P<msgs>\d+) messages, "
    r"(?P<releases>\d+) delayed releases, lateness p50 (?P<p50>[<>=]+ \S+ us), "
    r"p99 (?P<p99>[<>=]+ \S+ us) \(bounds: histogram buckets\), max (?P<max>[\d.]+ [nmu]?s), "
    r"(?P<over>\d+) late by > 10 us, (?P<early>\d+) early$",
    re.M,
)


def bound_text(bound_ns: float | None) -> str:
    assert bound_ns is not None
    return f">= {16384:g} us" if math.isinf(bound_ns) else f"< {bound_ns / 1000:g} us"


def test_exec_stats_summary_reports_the_lateness(fi_pingpong_bin, shim_so, tmp_path) -> None:
    """loggp exec --stats on each side of a ping-pong: at exit one line on stderr that
    agrees with the counters the shim wrote, lateness quantiles as bucket bounds."""
    wrapper = tmp_path / "exec-pingpong"
    wrapper.write_text(
        f"#!/bin/sh\nexec {sys.executable} -m loggp exec --latency 20us "
        f'--stats "{tmp_path}/stats-$$.jsonl" -- {fi_pingpong_bin} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {**base_env(), "LOGGP_BUILD": str(BUILD)}
    res = fi_pingpong(str(wrapper), "shm", "rdm", ["-S", "64", "-I", "200"], env, timeout=120)
    assert res.ok, res.describe()
    for side in (res.client, res.server):
        m = SUMMARY.search(side.stderr)
        assert m, side.stderr
        stats = shim_stats(Path(m["file"]))
        assert int(m["lines"]) == len(stats) == 1, stats
        (line,) = stats
        # every one of the 200 pings (or pongs) was delayed by ΔL and released
        assert int(m["msgs"]) == line["msgs"] >= 200
        assert int(m["releases"]) == line["releases"] >= 200
        assert sum(line["late_hist_us"]) == line["releases"]
        assert m["p50"] == bound_text(late_quantile_ns(line["late_hist_us"], 0.5))
        assert m["p99"] == bound_text(late_quantile_ns(line["late_hist_us"], 0.99))
        assert int(m["over"]) == line["late_over_10us"]
        assert int(m["early"]) == line["early_releases"] == 0


# Each entry: raw variables, and a regex one "loggp: " stderr line must match.
BAD_KNOBS = [
    ({"LOGGP_LATENCY": "10"}, r"bad value '10' for LOGGP_LATENCY: expected "),
    ({"LOGGP_LATENCY": "-5us"}, r"bad value '-5us' for LOGGP_LATENCY: expected "),
    ({"LOGGP_LATENCY": "10uss"}, r"bad value '10uss' for LOGGP_LATENCY: expected "),
    ({"LOGGP_BANDWIDTH": "0MB/s"}, r"bad value '0MB/s' for LOGGP_BANDWIDTH: expected "),
    (
        {"LOGGP_BULK_GAP": "1ns/B", "LOGGP_BANDWIDTH": "1GB/s"},
        r"LOGGP_(BULK_GAP|BANDWIDTH).*LOGGP_(BULK_GAP|BANDWIDTH)",
    ),
    (
        {"LOGGP_LATENCCY": "10us"},
        r"^loggp: unknown variable LOGGP_LATENCCY: did you mean LOGGP_LATENCY\?$",
    ),
    ({"LOGGP_CLOCK": "hpet"}, r"^loggp: bad value 'hpet' for LOGGP_CLOCK: expected tsc or"),
    (
        {"LOGGP_LATENCY": "10us", "LOGGP_STATS_FILE": "/nonexistent/dir/stats.jsonl"},
        r"^loggp: cannot write LOGGP_STATS_FILE '/nonexistent/dir/stats.jsonl': No such file",
    ),
]


@pytest.mark.parametrize(
    ("raw", "pattern"),
    BAD_KNOBS,
    ids=[
        "no_unit",
        "negative",
        "unit_typo",
        "zero_bw",
        "bulk_and_bw",
        "name_typo",
        "clock",
        "stats_file",
    ],  # fmt: skip
)
def test_bad_knob_refused(fi_pingpong_bin, shim, raw, pattern) -> None:
    """Both sides exit non-zero; the side that reaches fi_domain first names
    the knob (the other may instead see its peer hang up on the control
    channel, which is still a refusal to run)."""
    env = shim(raw=raw)
    res = fi_pingpong(
        fi_pingpong_bin, "tcp;ofi_rxm", "rdm", ["-S", "64", "-I", "10"], env.env, timeout=60
    )
    assert res.client.returncode != 0 and res.server.returncode != 0, res.describe()
    stderr = res.client.stderr + res.server.stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("loggp: ")]
    assert any(re.search(pattern, ln) for ln in lines), res.describe()
    assert "fi_domain" in stderr, res.describe()
