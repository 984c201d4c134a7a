"""validate-sim's page, DIR/validation.html: per rank count and knob one figure with both
runs' slowdown curves on the same axes (the emulated with its interval, the simulated
dash-dotted, each simulated point that disagrees crossed in red; figures.draw_overlay),
then the comparison's table and links to both runs' own reports.  The figures are also
written as PNG and SVG into DIR/validation/.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loggp.analysis.crossval import AGREE_RULE, EMULATED, SIMULATED, Agreement, Section
from loggp.analysis.errors import ReportError
from loggp.analysis.figures import (
    DISAGREE_LABEL,
    SIMULATED_SUFFIX,
    colours,
    draw_overlay,
    figure_stem,
    save,
)
from loggp.analysis.html import CSS, e, figure_tag, fmt, fmt_stat
from loggp.analysis.knobs import knob_info, knob_sort_key
from loggp.analysis.report import INDEX
from loggp.analysis.slowdown import STAT_METHOD

PAGE = "validation.html"
FIGURE_DIR = "validation"


def write_page(top: Path, name: str, sections: Sequence[Section]) -> Path:
    """DIR/validation.html (and its figures) of validate-sim's sections."""
    figure_dir = top / FIGURE_DIR
    try:
        figure_dir.mkdir(exist_ok=True)
    except OSError as err:
        raise ReportError(f"{figure_dir}: cannot create: {err.strerror or err}") from None
    workloads: list[str] = []
    for s in sections:
        for wl in (*s.emulated.workloads, *s.simulated.workloads):
            if wl not in workloads:
                workloads.append(wl)
    colour = colours(workloads)
    body = [_section(top, name, s, colour) for s in sections]
    page = top / PAGE
    text = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>loggp validate-sim: {e(name)}</title><style>{CSS}</style></head><body>"
        f"<h1>loggp validate-sim: {e(name)}, emulated against simulated</h1>"
        f'<p class="note">Emulated curves solid, with the median\'s interval ({e(STAT_METHOD)}); '
        f"simulated ones dash-dotted with hollow markers, named “{e(SIMULATED_SUFFIX.strip())}”; "
        f"“{e(DISAGREE_LABEL)}”: a red cross. Agreement: {e(AGREE_RULE)}.</p>"
        + "".join(body)
        + "</body></html>\n"
    )
    try:
        page.write_text(text, encoding="utf-8")
    except OSError as err:
        raise ReportError(f"{page}: cannot write: {err.strerror or err}") from None
    return page


def _section(
    top: Path, name: str, s: Section, colour: dict[str, tuple[float, float, float, float]]
) -> str:
    anchor = f"ranks-{s.ranks}"
    disagree = {(a.knob, a.workload, a.x) for a in s.points if not a.agrees}
    knobs = sorted(
        {k.knob for a in (s.emulated, s.simulated) for k in a.knobs if k.curves},
        key=knob_sort_key,
    )
    figures = []
    for knob in knobs:
        fig = draw_overlay(
            knob,
            s.emulated.knob(knob),
            s.simulated.knob(knob),
            {(wl, x) for k, wl, x in disagree if k == knob},
            colour,
            f"{knob_info(knob).title} — {name}, {s.ranks} ranks",
        )
        files = save(fig, knob, top / FIGURE_DIR / f"{anchor}_{figure_stem(knob)}")
        figures.append(figure_tag(files, anchor, f"{FIGURE_DIR}/"))
    reports = ", ".join(
        f'<a href="{e(rel)}">{kind}</a>'
        for kind in (EMULATED, SIMULATED)
        if (top / (rel := f"{anchor}/{kind}/report/{INDEX}")).is_file()
    )
    return (
        f'<h2 id="{anchor}">{s.ranks} ranks: {s.agree} of {len(s.points)} point(s) agree</h2>'
        f'<p class="note">Reports of the runs: {reports or "none written"}.</p>'
        f'<div class="figures">{"".join(figures)}</div>'
        '<table class="crossval"><tr><th>workload</th><th>knob</th><th>Δ</th>'
        "<th>emulated [interval]</th><th>simulated</th><th>diff</th><th>agrees</th></tr>"
        + "".join(_row(a) for a in s.points)
        + "</table>"
    )


def _row(a: Agreement) -> str:
    unit = knob_info(a.knob).unit
    agrees = "yes" if a.agrees else f'<span class="bad">{e(a.verdict)}</span>'
    return (
        f"<tr><th>{e(a.workload)}</th><td>{e(a.knob)}</td>"
        f'<td class="num">{e(f"{a.x:g}")} {e(unit)}</td>'
        f'<td class="num">{e(fmt_stat(a.emulated))} <span class="n">n={a.emulated.n}</span></td>'
        f'<td class="num">{e(fmt(a.simulated.median))} <span class="n">n={a.simulated.n}</span>'
        f'</td><td class="num">{a.rel_diff:+.0%}</td><td>{agrees}</td></tr>'
    )
