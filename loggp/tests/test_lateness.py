"""Quantiles of the shims' release-lateness histogram are bucket bounds."""

from __future__ import annotations

import math

import pytest

from loggp.results.lateness import (
    LATE_BUCKETS,
    Lateness,
    LatenessError,
    late_bucket_upper_ns,
    late_quantile_ns,
    merged_hist,
)

pytestmark = pytest.mark.unit


def hist(**counts: int) -> list[int]:
    """A histogram from b<k>=count keywords."""
    h = [0] * LATE_BUCKETS
    for key, n in counts.items():
        h[int(key[1:])] = n
    return h


def test_bucket_bounds_follow_the_core_histogram() -> None:
    # bucket 0 < 1 us, bucket k < 2^k us, the last one open
    assert late_bucket_upper_ns(0) == 1000
    assert late_bucket_upper_ns(1) == 2000
    assert late_bucket_upper_ns(4) == 16000
    assert late_bucket_upper_ns(14) == 16_384_000
    assert late_bucket_upper_ns(15) == math.inf
    with pytest.raises(LatenessError, match="bucket 16 out of range: expected 0 to 15"):
        late_bucket_upper_ns(16)


def test_quantile_is_the_upper_bound_of_the_bucket_holding_it() -> None:
    h = hist(b0=90, b4=9, b15=1)  # 90 under 1 us, 9 in [8, 16) us, 1 beyond 16 ms
    assert late_quantile_ns(h, 0.5) == 1000
    assert late_quantile_ns(h, 0.9) == 1000  # rank 90 is the last of bucket 0
    assert late_quantile_ns(h, 0.91) == 16000
    assert late_quantile_ns(h, 0.99) == 16000  # rank 99 is the last of bucket 4
    assert late_quantile_ns(h, 1.0) == math.inf


def test_rank_is_exact_for_decimal_quantiles() -> None:
    # 0.07 * 100 is 7.000000000000001 in floating point: rank 7 all the same
    h = hist(b0=7, b3=93)
    assert late_quantile_ns(h, 0.07) == 1000
    assert late_quantile_ns(h, 0.08) == 8000


def test_a_single_release() -> None:
    assert late_quantile_ns(hist(b2=1), 0.01) == 4000
    assert late_quantile_ns(hist(b2=1), 1) == 4000


def test_no_release_has_no_quantile() -> None:
    assert late_quantile_ns([0] * LATE_BUCKETS, 0.99) is None


@pytest.mark.parametrize("q", [0, -0.5, 1.5, math.nan, True, "0.5"])
def test_bad_quantile(q: object) -> None:
    with pytest.raises(LatenessError, match=r"expected a number in \(0, 1\]"):
        late_quantile_ns(hist(b0=1), q)  # type: ignore[arg-type]


@pytest.mark.parametrize("h", [[1] * 15, [1] * 17, [1, -1] + [0] * 14, [0.5] + [0] * 15])
def test_bad_histogram(h: list[int]) -> None:
    with pytest.raises(LatenessError, match="expected 16 counts >= 0"):
        late_quantile_ns(h, 0.5)


def test_merged_hist_sums_processes_and_skips_those_without_one() -> None:
    stats = [{"late_hist_us": hist(b0=2, b1=1)}, {"msgs": 3}, {"late_hist_us": hist(b1=4)}]
    assert merged_hist(stats) == hist(b0=2, b1=5)
    assert merged_hist([]) == [0] * LATE_BUCKETS
    with pytest.raises(LatenessError):
        merged_hist([{"late_hist_us": [1, 2]}])


def test_lateness_of_processes_and_its_summary() -> None:
    stats = [
        {"releases": 99, "late_ns": 60_000, "late_max_ns": 12_000, "late_over_10us": 1,
         "early_releases": 0, "late_hist_us": hist(b0=97, b4=2)},
        {"releases": 1, "late_ns": 20_000_000, "late_max_ns": 20_000_000, "late_over_10us": 1,
         "early_releases": 0, "late_hist_us": hist(b15=1)},
        {"provider": "ofi_rxm", "msgs": 0},  # a utility layer's line: no lateness fields
    ]  # fmt: skip
    late = Lateness.of(stats)
    assert late == Lateness(100, hist(b0=97, b4=2, b15=1), 20_060_000, 20_000_000, 2, 0)
    assert late.quantile_ns(0.99) == 16000
    assert late.describe() == (
        "100 delayed releases, lateness p50 < 1 us, p99 < 16 us (bounds: histogram buckets), "
        "max 20 ms, 2 late by > 10 us, 0 early"
    )
    assert Lateness.of(stats[:1]) + Lateness.of(stats[1:]) == late
    tail = Lateness(1, hist(b15=1), 0, 17_000_000, 1, 0)
    assert "p50 >= 16384 us, p99 >= 16384 us" in tail.describe()


def test_no_release_is_said_plainly() -> None:
    assert Lateness.of([{"provider": "tcp", "msgs": 4}]).describe() == "0 delayed releases"
    assert Lateness.of([]).releases == 0
