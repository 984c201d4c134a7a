"""`loggp report`: turn a run directory into slowdown figures, tables and an HTML page.

    from loggp.analysis.report import write_report, ReportError
    index = write_report(run_dir, out_dir=None)

writes into out_dir (default run_dir/"report"): index.html, slowdown_<knob>.png/.svg per
swept knob that has curves, pairs_<workload>.png/.svg per workload whose points ran on a
network (loggp/analysis/pairs.py; shown in index.html's "Pairs of ranks"), and results.csv.
"""

from __future__ import annotations

from pathlib import Path

from loggp.analysis.errors import ReportError
from loggp.analysis.export import write_csv
from loggp.analysis.figures import figure_stem, write_figures
from loggp.analysis.html import Page, write_html
from loggp.analysis.model import fit_models
from loggp.analysis.netfig import STEM as NETWORK_STEM
from loggp.analysis.netfig import write_network_figure
from loggp.analysis.pairs import matrices, stems, write_pair_figures
from loggp.analysis.slowdown import analyse
from loggp.analysis.store import load_run

__all__ = ["ReportError", "write_report"]

INDEX = "index.html"
CSV = "results.csv"


def write_report(run_dir: Path, out_dir: Path | None = None) -> Path:
    """Write the report of a run directory; returns the path of index.html.

    Raises ReportError (one line naming the file) when the run directory, run.json or
    results.sqlite is missing or unreadable, when no point is recorded, or when the output
    cannot be written.
    """
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    out = Path(out_dir) if out_dir is not None else run_dir / "report"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"{out}: cannot create report directory: {e.strerror or e}") from None

    analysis = analyse(run.points)
    models = fit_models(analysis, run.points)
    pairs = matrices(run.points)
    keep = {figure_stem(s.knob) for s in analysis.knobs if s.curves} | set(stems(pairs))
    _remove_stale_figures(out, keep)
    figures = write_figures(
        analysis.knobs, models, analysis.workloads, out, run.info.name, run.simulated
    )
    network_png = write_network_figure(run.info.experiment, out)
    if network_png is None:  # an earlier report's, of a run with a network
        for suffix in (".png", ".svg"):
            (out / NETWORK_STEM).with_suffix(suffix).unlink(missing_ok=True)
    pair_pngs = ([network_png] if network_png else []) + write_pair_figures(pairs, out)
    write_csv(run, analysis, out / CSV)
    index = out / INDEX
    try:
        write_html(Page(run, analysis, models, figures, pair_pngs), index)
    except OSError as e:
        raise ReportError(f"{index}: cannot write: {e.strerror or e}") from None
    return index


def _remove_stale_figures(out: Path, keep: set[str]) -> None:
    """Delete figures of an earlier report (slowdown_*, pairs_*) whose stem is not kept."""
    for suffix in (".png", ".svg"):
        for f in [*out.glob(f"slowdown_*{suffix}"), *out.glob(f"pairs_*{suffix}")]:
            if f.stem not in keep:
                try:
                    f.unlink()
                except OSError as e:
                    raise ReportError(f"{f}: cannot remove stale figure: {e.strerror}") from None
