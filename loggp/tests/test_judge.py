"""The judging rule: a point's lateness summary, its bound, the host's floor beside it and
the other work on the host during it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from loggp.metrics.hostnoise import HostNoise
from loggp.metrics.node import CpuSample, OtherWork, busy_seconds, cpu_sample, other_work
from loggp.plan.knobs import KnobSet
from loggp.results.judge import (
    LateSummary,
    busy_host,
    crosses_bound,
    degraded_reason,
    injected_delay_ns,
    late_bound_ns,
    lateness,
)

pytestmark = pytest.mark.unit


def line(hist: dict[int, int], late_max_ns: int, early: int = 0, **kw: object) -> dict:
    counts = [hist.get(k, 0) for k in range(16)]
    return {"late_hist_us": counts, "late_max_ns": late_max_ns, "early_releases": early, **kw}


def test_lateness_merges_the_processes_histograms() -> None:
    stats = [
        line({0: 90, 3: 5}, 6000),
        line({0: 4, 4: 1}, 9000, early=2),
        {"provider": "ofi_rxm", "msgs": 3},  # a line without a histogram counts for nothing
    ]
    late = lateness(stats)
    assert late == LateSummary(releases=100, p99_ns=8000, max_ns=9000, early=2)


def test_p99_is_the_bucket_edge_or_the_max_when_smaller() -> None:
    assert lateness([line({3: 100}, 5000)]) == LateSummary(100, 5000, 5000, 0)
    assert lateness([line({15: 100}, 40_000_000)]) == LateSummary(100, 40_000_000, 40_000_000, 0)
    # 99 of 100 under 1 us: the p99 is in bucket 0, whatever the one slow release was
    assert lateness([line({0: 99, 12: 1}, 3_000_000)]) == LateSummary(100, 1000, 3_000_000, 0)


def test_no_histogram_or_a_bad_one_is_no_summary() -> None:
    assert lateness([]) is None
    assert lateness([{"provider": "tcp", "msgs": 4}]) is None
    assert lateness([{"late_hist_us": [1, 2]}]) is None
    assert lateness([line({}, 0)]) == LateSummary(0, None, 0, 0)


def test_the_injected_delay_is_the_largest_time_knob() -> None:
    assert injected_delay_ns(KnobSet.parse({})) == 0
    assert injected_delay_ns(KnobSet.parse({"latency": "50us", "gap": "2us"})) == 50_000
    assert injected_delay_ns(KnobSet.parse({"overhead": "3ms", "latency": "1us"})) == 3_000_000
    assert injected_delay_ns(KnobSet.parse({"overhead": "1us", "send_overhead": "7us"})) == 7000
    # per byte: without the stats lines no per-message delay
    assert injected_delay_ns(KnobSet.parse({"bandwidth": "1MB/s"})) == 0
    # ΔG's share: the bulk gap charged per message carried, over the processes.
    bw = KnobSet.parse({"bandwidth": "1MB/s", "latency": "10us"})
    lines = [{"msgs": 3, "bulk_gap_ns": 600_000}, {"msgs": 1, "bulk_gap_ns": 200_000}]
    assert injected_delay_ns(bw, lines) == 200_000
    assert injected_delay_ns(bw, [{"msgs": 0, "bulk_gap_ns": 0}, {"shim": "wire"}]) == 10_000
    assert injected_delay_ns(KnobSet.parse({"latency": "1ms"}), lines) == 1_000_000


def test_beneath_a_network_the_injected_delay_counts_its_latency() -> None:
    """A message to a destination gets ΔL plus its pair's latency, the same for each; the
    most any destination got is the point's (here rank 0's messages to rank 2: 100 µs)."""
    lines = [
        {"rank": 0, "pair_msgs": [0, 10, 4], "pair_latency_ns": [0, 0, 400_000]},
        {"rank": 1, "pair_msgs": [10, 0, 0], "pair_latency_ns": [0, 0, 0]},
        {"rank": 2, "pair_msgs": [4, 0, 0], "pair_latency_ns": [200_000, 0, 0]},
    ]
    assert injected_delay_ns(KnobSet.parse({}), lines) == 100_000
    assert injected_delay_ns(KnobSet.parse({"latency": "5us"}), lines) == 105_000
    assert injected_delay_ns(KnobSet.parse({"overhead": "1ms"}), lines) == 1_000_000
    # a destination nothing went to adds nothing
    assert injected_delay_ns(KnobSet.parse({}), [{"pair_msgs": [0], "pair_latency_ns": [0]}]) == 0


def test_beneath_a_network_the_injected_delay_counts_its_pacing() -> None:
    """A level's gap or bulk gap holds messages to a far destination back: the most it held
    one message back on average to a destination (rank 0 to rank 2: 300 µs) is a delay
    the shim injected, as its latency is; ΔL does not add to it (it is not a latency)."""
    lines = [
        {"rank": 0, "pair_msgs": [0, 10, 4], "pair_latency_ns": [0, 0, 0],
         "pair_paced_ns": [0, 0, 1_200_000]},
        {"rank": 2, "pair_msgs": [4, 0, 0], "pair_latency_ns": [0, 0, 0],
         "pair_paced_ns": [400_000, 0, 0]},
    ]  # fmt: skip
    assert injected_delay_ns(KnobSet.parse({}), lines) == 300_000
    assert injected_delay_ns(KnobSet.parse({"latency": "5us"}), lines) == 300_000
    assert injected_delay_ns(KnobSet.parse({"latency": "1ms"}), lines) == 1_000_000


def test_the_bound_is_2us_or_5_percent_of_the_delay() -> None:
    assert late_bound_ns(0) == 2000
    assert late_bound_ns(40_000) == 2000
    assert late_bound_ns(50_000) == 2500
    assert late_bound_ns(1_000_000) == 50_000


QUIET = OtherWork(share=0.0, cpu_s=0.0)


def busy(share: float, cpu_s: float = 1.0) -> OtherWork:
    return OtherWork(share, cpu_s)


def test_a_point_is_degraded_above_the_bound_and_says_why() -> None:
    assert degraded_reason(LateSummary(100, 2000, 2500, 0), 0, busy(0.1)) is None  # at the bound
    assert degraded_reason(LateSummary(100, 2000, 2500, 0), 50_000, None) is None
    assert degraded_reason(LateSummary(100, 4000, 4000, 0), 50_000, busy(0.2)) == (
        "p99 lateness up to 4 us exceeds 2.5 us = max(2 us, 5 % of the injected delay 50 us); "
        "host CPU 20 % busy with other work"
    )
    assert degraded_reason(LateSummary(100, 16_384_000, 90_000_000, 0), 1_000_000, None) == (
        "p99 lateness up to 16.4 ms exceeds 50 us = max(2 us, 5 % of the injected delay 1 ms); "
        "host CPU not measured"
    )


def test_an_early_release_degrades_whatever_the_lateness() -> None:
    assert degraded_reason(LateSummary(100, 1000, 1000, 1), 50_000, QUIET) == (
        "1 early release(s); host CPU 0 % busy with other work"
    )


NOISY = HostNoise(
    floor_ns=64_000, stalls_per_s=1100.4, stalled_share=0.012, max_stall_ns=12_000_000
)
QUIET_HOST = HostNoise(floor_ns=0, stalls_per_s=250, stalled_share=0.0005, max_stall_ns=9000)


def test_a_quiet_point_on_a_host_whose_own_stops_explain_it_is_clean() -> None:
    # p99 32 us above the 2.5 us bound of ΔL = 50 us, but within the 64 us the host's own
    # stops set beside the point, with no other work: as accurate as this host allows
    late = LateSummary(100, 32_000, 40_000, 0)
    assert crosses_bound(late, 50_000)
    assert degraded_reason(late, 50_000, QUIET, NOISY) is None
    assert degraded_reason(late, 50_000, QUIET, QUIET_HOST) is not None


def test_lateness_beyond_the_hosts_floor_degrades_and_names_both() -> None:
    assert degraded_reason(LateSummary(100, 128_000, 200_000, 0), 50_000, QUIET, NOISY) == (
        "p99 lateness up to 128 us exceeds the host's own floor 64 us beside the point (the "
        "bound 2.5 us = max(2 us, 5 % of the injected delay 50 us) is below it); host CPU 0 % "
        "busy with other work; host stops a busy thread 1100 times/s, 1.2 % of its time "
        "(longest 12 ms): p99 lateness floor 64 us"
    )
    late = LateSummary(100, 32_000, 40_000, 0)
    assert degraded_reason(late, 50_000, QUIET, QUIET_HOST).endswith(
        "host stops a busy thread 250 times/s, 0.05 % of its time (longest 9 us): "
        "p99 lateness floor 0 ns"
    )
    # a clean point stays clean whatever the host's floor
    assert degraded_reason(LateSummary(100, 2000, 2500, 0), 50_000, QUIET, NOISY) is None
    assert not crosses_bound(LateSummary(100, 2000, 2500, 0), 50_000)


def test_other_work_degrades_every_point_baselines_included() -> None:
    # a baseline: no delayed item, judged by the host alone
    assert degraded_reason(None, 0, busy(0.72, 2.9)) == (
        "host CPU 72 % busy with other work (above 25 %)"
    )
    assert degraded_reason(LateSummary(0, None, 0, 0), 50_000, busy(0.9)) is not None
    # with lateness: both named, the host's stops too
    reason = degraded_reason(LateSummary(100, 4000, 4000, 0), 50_000, busy(0.5), QUIET_HOST)
    assert reason is not None and reason.startswith(
        "p99 lateness up to 4 us exceeds 2.5 us = max(2 us, 5 % of the injected delay 50 us); "
        "host CPU 50 % busy with other work (above 25 %); host stops a busy thread"
    )


def test_a_quiet_baseline_is_not_degraded() -> None:
    assert degraded_reason(None, 0, QUIET) is None
    assert degraded_reason(None, 0, busy(0.25)) is None  # at the limit
    assert degraded_reason(None, 0, None) is None  # not measured: nothing says otherwise
    # a short point's few ticks of rounding are no evidence of other work
    assert not busy_host(busy(0.6, 0.03)) and busy_host(busy(0.6, 0.05))


def test_no_releases_and_a_quiet_host_is_not_judged_by_lateness() -> None:
    assert degraded_reason(None, 50_000, QUIET) is None
    assert degraded_reason(LateSummary(0, None, 0, 0), 50_000, busy(0.1)) is None


# /proc/stat with USER_HZ = 100: cpu0 busy 20+3 = 23 s, cpu1 30+1.5 steal = 31.5 s, guest
# time (already in user) not counted twice.
PROC_STAT = """\
cpu  5000 0 300 19000 500 0 0 150 0 0
cpu0 2000 0 300 10000 500 0 0 0 0 0
cpu1 3000 0 0 9000 0 0 0 150 700 0
intr 12345 0 0
ctxt 999
"""


def test_busy_seconds_count_every_mode_but_idle_and_iowait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sysconf", lambda name: 100)
    assert busy_seconds(PROC_STAT) == (pytest.approx(54.5), 2)
    assert busy_seconds("intr 3\n") == (0.0, 0)
    stat = tmp_path / "stat"
    stat.write_text(PROC_STAT)
    sample = cpu_sample(stat)
    assert sample is not None and (sample.busy_s, sample.cpus) == (pytest.approx(54.5), 2)
    assert cpu_sample(tmp_path / "missing") is None


def test_other_work_is_the_busy_time_the_points_processes_do_not_explain() -> None:
    before = CpuSample(busy_s=100.0, cpus=2, own_s=10.0, at=50.0)
    # 2 s on 2 CPUs = 4 CPU-s; 3 busy, of which the point's own processes used 1
    after = CpuSample(busy_s=103.0, cpus=2, own_s=11.0, at=52.0)
    assert other_work(before, after) == OtherWork(pytest.approx(0.5), pytest.approx(2.0))
    # tick rounding can make the own time exceed the busy time: clamped
    assert other_work(before, CpuSample(100.5, 2, 12.0, 52.0)) == OtherWork(0.0, 0.0)
    assert other_work(before, None) is None and other_work(None, after) is None


def test_own_time_counts_the_runners_descendants_alive_or_reaped() -> None:
    """A service started before a point and reaped after it is the point's own work, not
    other work: its CPU time counts while it runs."""
    burn = (
        "import sys, time\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.3: pass\n"
        "sys.stdout.write('x'); sys.stdout.flush(); sys.stdin.read()"
    )
    before = cpu_sample()
    child = subprocess.Popen(
        [sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None and child.stdout.read(1) == b"x"  # 0.3 s burnt
        alive = cpu_sample()
    finally:
        child.kill()
        child.wait(timeout=10)
    reaped = cpu_sample()
    assert before is not None and alive is not None and reaped is not None
    assert alive.own_s - before.own_s >= 0.25
    assert reaped.own_s - before.own_s >= 0.25
