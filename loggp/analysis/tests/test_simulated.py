"""A simulated run's report (points stored with backend smpi, docs/simulator.md): the page
says so first, with the stack from run.json's provenance.smpi, and its figures draw the
simulated curves distinctly; an emulated run's report has none of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.lines import Line2D

from loggp.analysis.figures import SIMULATED_STYLE, SIMULATED_SUFFIX, colours, draw
from loggp.analysis.html import fmt
from loggp.analysis.model import fit_models
from loggp.analysis.report import write_report
from loggp.analysis.slowdown import analyse
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import RUN_NAME, standard_rows, write_run
from loggp.plan.platform import Stack
from loggp.results.rundir import RUN_FILE
from loggp.results.store import BACKEND_SMPI
from loggp.run.smpi import CALIBRATION_FILE, MEASURE

pytestmark = pytest.mark.unit

STACK = Stack(o_s_ns=2000, o_r_ns=3000, latency_ns=0, bulk_gap_ns_per_byte=0.5, provider="tcp")
MEASURED_L_US = -1.3  # loggp-calibrate's L below 0, the platform's at 0


def simulated_run(tmp_path: Path) -> Path:
    """The standard run, every point simulated, with the stack in its provenance as the
    runner stores it (loggp/run/smpi.py)."""
    rows = standard_rows()
    for r in rows:
        r.backend = BACKEND_SMPI
    run = write_run(tmp_path / "sim", rows)
    doc = json.loads((run / RUN_FILE).read_text())
    doc["provenance"]["smpi"] = {
        "calibration": MEASURE,
        "file": CALIBRATION_FILE,
        "stack": STACK.as_dict(),
        "measured_L_us": MEASURED_L_US,
    }
    (run / RUN_FILE).write_text(json.dumps(doc))
    return run


def test_the_page_says_simulated_first_with_the_stack(tmp_path: Path) -> None:
    html = write_report(simulated_run(tmp_path)).read_text()
    assert f"<h1>loggp report: {RUN_NAME} (simulated)</h1>" in html
    box = html[html.index('id="simulated"') : html.index("</div>", html.index('id="simulated"'))]
    assert html.index('id="simulated"') < html.index('id="headline"')
    n = len(standard_rows())
    assert f"{n} of {n} point(s) ran in SimGrid's SMPI" in box
    st = STACK.as_dict()
    for key in ("o_s_us", "o_r_us", "L_us", "G_ns_per_B"):
        assert f" {fmt(float(st[key]))} " in box, key
    assert f"measured {fmt(MEASURED_L_US)} µs" in box
    assert f"calibration {MEASURE} (kept as {CALIBRATION_FILE})" in box


def test_an_emulated_page_says_nothing_of_it(tmp_path: Path) -> None:
    html = write_report(write_run(tmp_path / "emu")).read_text()
    assert 'id="simulated"' not in html and "(simulated)" not in html


def curve_lines(run_dir: Path, knob: str) -> dict[str, Line2D]:
    """The knob figure's line of each curve (its errorbar's data line), by its label."""
    run = load_run(run_dir)
    a = analyse(run.points)
    summary = a.knob(knob)
    assert summary is not None
    (ax,) = draw(summary, fit_models(a, run.points), colours(a.workloads), "", run.simulated).axes
    names = {c.workload for c in summary.curves}
    lines = {
        bars.get_label(): bars.lines[0]
        for bars in ax.containers
        if bars.get_label().removesuffix(SIMULATED_SUFFIX) in names
    }
    assert len(lines) == len(names)
    return lines


def test_simulated_curves_are_drawn_distinctly(tmp_path: Path) -> None:
    emulated = curve_lines(write_run(tmp_path / "emu"), "latency")
    simulated = curve_lines(simulated_run(tmp_path), "latency")
    assert emulated and set(simulated) == {wl + SIMULATED_SUFFIX for wl in emulated}
    for wl, line in emulated.items():
        sim = simulated[wl + SIMULATED_SUFFIX]
        assert line.get_linestyle() == "-" and sim.get_linestyle() == SIMULATED_STYLE["linestyle"]
        assert sim.get_markerfacecolor() == SIMULATED_STYLE["markerfacecolor"]
        assert line.get_markerfacecolor() != sim.get_markerfacecolor()
        assert sim.get_ydata().tolist() == line.get_ydata().tolist()  # the same points
