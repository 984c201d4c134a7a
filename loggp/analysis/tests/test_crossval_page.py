"""validate-sim's page (loggp/analysis/crossval_page.py) from stored runs of known slowdowns:
both runs' curves on one figure per rank count and knob, the emulated interval drawn, the
simulated points that disagree crossed, the table and the links to the runs' reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.axes import Axes

from loggp.analysis.crossval import AGREE_REL, EMULATED, Section, compare_section, section_dir
from loggp.analysis.crossval_page import FIGURE_DIR, PAGE, write_page
from loggp.analysis.figures import DISAGREE_LABEL, SIMULATED_SUFFIX, colours, draw_overlay
from loggp.analysis.report import write_report
from loggp.analysis.tests.rundata import write_validation_runs

pytestmark = pytest.mark.unit

SLOWDOWN = {10: 1.5, 50: 3.0, 100: 4.0}
# The simulated slowdown's offset from the emulated median per ΔL and rank count: at 4
# ranks two points are far outside (one above, one below).
OFF = {2: {10: 0.0, 50: AGREE_REL / 2, 100: 0.0}, 4: {10: 0.0, 50: 3 * AGREE_REL, 100: -0.5}}


@pytest.fixture
def sections(tmp_path: Path) -> list[Section]:
    for n in OFF:
        write_validation_runs(tmp_path, n, SLOWDOWN, OFF[n])
    return [compare_section(tmp_path, n) for n in OFF]


def overlay(s: Section) -> Axes:
    disagree = {(a.workload, a.x) for a in s.points if not a.agrees}
    fig = draw_overlay(
        "latency", s.emulated.knob("latency"), s.simulated.knob("latency"), disagree,
        colours(s.emulated.workloads), "t",
    )  # fmt: skip
    (ax,) = fig.axes
    return ax


def test_both_curves_on_one_axes_with_the_emulated_interval(sections: list[Section]) -> None:
    ax = overlay(sections[0])
    bars = {c.get_label(): c for c in ax.containers}
    assert set(bars) == {"app", "app" + SIMULATED_SUFFIX}
    emulated, simulated = bars["app"], bars["app" + SIMULATED_SUFFIX]
    assert emulated.lines[0].get_color() == simulated.lines[0].get_color()
    assert emulated.lines[0].get_marker() == simulated.lines[0].get_marker()
    # each emulated point's error bar spans its interval
    (errs,) = emulated.lines[2]
    spans = {round(seg[0][0], 9): (seg[0][1], seg[1][1]) for seg in errs.get_segments()}
    for a in sections[0].points:
        assert spans[a.x] == pytest.approx((a.emulated.low, a.emulated.high))
    assert simulated.lines[0].get_ydata().tolist() == pytest.approx(
        [1.0] + [s * (1 + OFF[2][x]) for x, s in SLOWDOWN.items()]
    )
    assert DISAGREE_LABEL not in [t.get_text() for t in ax.get_legend().get_texts()]


def test_disagreeing_points_are_crossed(sections: list[Section]) -> None:
    s = sections[1]
    wrong = [a for a in s.points if not a.agrees]
    assert len(wrong) == 2
    ax = overlay(s)
    (cross,) = [c for c in ax.collections if c.get_label() == DISAGREE_LABEL]
    crossed = sorted(cross.get_offsets().tolist())
    expected = sorted([a.x, a.simulated.median] for a in wrong)
    assert [pytest.approx(xy) for xy in expected] == crossed
    assert DISAGREE_LABEL in [t.get_text() for t in ax.get_legend().get_texts()]
    _, top = ax.get_ylim()
    assert top > max(a.simulated.median for a in s.points)


def test_the_page(tmp_path: Path, sections: list[Section]) -> None:
    write_report(section_dir(tmp_path, 2) / EMULATED)
    html = write_page(tmp_path, "val", sections).read_text()
    assert (tmp_path / PAGE).is_file()
    assert html.count("<img ") == len(sections)  # one knob swept: one figure a rank count
    for s in sections:
        assert f'<h2 id="ranks-{s.ranks}">{s.ranks} ranks: {s.agree} of {len(s.points)}' in html
        stem = tmp_path / FIGURE_DIR / f"ranks-{s.ranks}_slowdown_latency"
        assert stem.with_suffix(".png").is_file() and stem.with_suffix(".svg").is_file()
    assert html.count('<span class="bad">no</span>') == sum(
        not a.agrees for s in sections for a in s.points
    )
    # the one report written is linked, relative to the page
    assert f'href="ranks-2/{EMULATED}/report/index.html"' in html
    assert html.count("/report/index.html") == 1
