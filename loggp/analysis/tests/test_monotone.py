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
