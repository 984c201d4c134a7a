"""Inversions: a worse network measured faster, beyond the repeats' spread."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from loggp.analysis.html import Page, render
from loggp.analysis.model import fit_models
from loggp.analysis.monotone import WHAT, inversions
from loggp.analysis.slowdown import analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import app, make_run, server

pytestmark = pytest.mark.unit


def analysed(tmp_path: Path, rows):
    run = load_run(make_run(tmp_path, rows))
    return run, analyse(run.points)


def test_the_standard_run_has_no_inversion(tmp_path: Path) -> None:
    _, a = analysed(tmp_path, None)
    assert inversions(a) == []


def test_a_point_below_the_baseline_beyond_its_spread_is_an_inversion(tmp_path: Path) -> None:
    rows = [app("baseline", None, r, v) for r, v in enumerate((0.9, 1.0, 1.1))]
    rows += [app("latency", 10.0, r, v) for r, v in enumerate((0.5, 0.55, 0.6))]
    rows += [app("latency", 100.0, r, v) for r, v in enumerate((2.0, 2.1, 2.2))]
    run, a = analysed(tmp_path, rows)
    (inv,) = inversions(a)
    assert (inv.knob, inv.workload, inv.worse.x) == ("latency", "app", 10)
    assert inv.better.baseline
    assert inv.worse_spread == pytest.approx((0.5, 0.6))
    assert WHAT in inv.text() and "(the baseline)" in inv.text()
    page = render(Page(run, a, fit_models(a, run.points), ()))
    assert html.escape(WHAT) in page


def test_a_larger_delta_faster_than_a_smaller_one_is_an_inversion(tmp_path: Path) -> None:
    # Rates (higher is better): at ΔL 100 µs more ops/s than at 10 µs, both slower than
    # the baseline.
    rows = [server("baseline", None, r, 1000.0) for r in range(3)]
    rows += [server("latency", 10.0, r, v) for r, v in enumerate((200.0, 210.0, 220.0))]
    rows += [server("latency", 100.0, r, v) for r, v in enumerate((400.0, 410.0, 420.0))]
    _, a = analysed(tmp_path, rows)
    (inv,) = inversions(a)
    assert (inv.better.x, inv.worse.x) == (10.0, 100.0)


@pytest.mark.parametrize(
    "values",
    [
        (0.9, 0.95, 1.05),  # overlaps the baseline's spread
        (0.88, 0.89),  # two repeats: too few to judge
    ],
    ids=["overlapping", "too-few-repeats"],
)
def test_overlap_or_too_few_repeats_is_no_inversion(tmp_path: Path, values) -> None:
    rows = [app("baseline", None, r, v) for r, v in enumerate((0.9, 1.0, 1.1))]
    rows += [app("latency", 10.0, r, v) for r, v in enumerate(values)]
    _, a = analysed(tmp_path, rows)
    assert inversions(a) == []


def test_a_rate_knob_is_judged_from_the_larger_rate_down(tmp_path: Path) -> None:
    # Bandwidth: 10 MB/s is the worse network; faster there than at 100 MB/s inverts.
    rows = [app("baseline", None, r, 1.0) for r in range(3)]
    rows += [app("bandwidth", 100.0, r, v) for r, v in enumerate((2.0, 2.0, 2.1))]
    rows += [app("bandwidth", 10.0, r, v) for r, v in enumerate((1.2, 1.2, 1.3))]
    _, a = analysed(tmp_path, rows)
    (inv,) = inversions(a)
    assert (inv.better.x, inv.worse.x) == (100.0, 10.0)


def late(ns: int) -> list[dict[str, int]]:
    """Two processes' counters whose releases were late by ns in total."""
    return [
        {"pid": 1, "msgs": 10, "late_ns": ns // 2},
        {"pid": 2, "msgs": 10, "late_ns": ns - ns // 2},
    ]


@pytest.mark.parametrize(
    ("late_ns", "inverted"),
    [(0, True), (150_000_000, True), (400_000_000, False)],
    ids=["on-time", "late-but-not-enough", "late-enough"],
)
def test_what_the_shims_late_releases_added_is_no_inversion(
    tmp_path: Path, late_ns: int, inverted: bool
) -> None:
    # At ΔL 10 µs 1.5–1.6 s, at 100 µs 1.2–1.25 s: 22 % apart.  Releases late by 0.4 s
    # of the 10 µs point's ~1.5 s (25 %) can explain it; by 0.15 s (9 %) cannot.
    rows = [app("baseline", None, r, 1.0, metrics={"time_s": 1.0}) for r in range(3)]
    rows += [
        app("latency", 10.0, r, v, metrics={"time_s": v}, shim_stats=late(late_ns))
        for r, v in enumerate((1.5, 1.55, 1.6))
    ]
    rows += [
        app("latency", 100.0, r, v, metrics={"time_s": v}) for r, v in enumerate((1.2, 1.22, 1.25))
    ]
    _, a = analysed(tmp_path, rows)
    (ten,) = [cp for cp in a.knob("latency").curves[0].points if cp.x == 10.0]
    assert ten.late_share == pytest.approx(late_ns / 1e9 / 1.6)  # the least of its repeats
    found = inversions(a)
    assert bool(found) == inverted
    if found and late_ns:
        assert "the shim's late releases" in found[0].text()


def test_a_points_late_share_is_over_its_measured_time_else_its_wall_time(tmp_path: Path) -> None:
    rows = [
        app("latency", 10.0, 0, 0.5, shim_stats=late(100_000_000)),
        server("latency", 10.0, 1, 1.0, metrics={}, shim_stats=late(100_000_000)),  # wall 2.5 s
        app("latency", 10.0, 2, 0.05, shim_stats=late(100_000_000)),
        app("latency", 10.0, 3, 1.0, shim_stats=[{"pid": 1, "msgs": 10}]),
    ]
    run, _ = analysed(tmp_path, rows)
    shares = {p.repeat: p.late_share for p in run.points}  # app's value is its time_s
    assert shares == pytest.approx({0: 0.2, 1: 0.04, 2: 1.0, 3: 0.0})
