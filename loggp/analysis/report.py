"""`loggp report`: turn a run directory into slowdown figures, tables and an HTML page.

    from loggp.analysis.report import write_report, ReportError
    index = write_report(run_dir, out_dir=None)

writes into out_dir (default run_dir/"report"): index.html, slowdown_<knob>.png/.svg per
swept knob that has curves, pairs_<workload>.png/.svg per workload whose points ran on a
network (loggp/analysis/pairs.py; shown in index.html's "Pairs of ranks"), and results.csv.
"""

from __future__ import annotations

from pathlib import Path

from loggp.analysis.delays import distribution, most_drawn, write_delay_figures
from loggp.analysis.delays import stems as delay_stems
from loggp.analysis.errors import ReportError
from loggp.analysis.export import write_csv
from loggp.analysis.figures import figure_stem, write_figures
from loggp.analysis.html import Page, write_html
from loggp.analysis.model import fit_models
from loggp.analysis.netfig import STEM as NETWORK_STEM
from loggp.analysis.netfig import network_of, write_network_figure
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
    dist = distribution(run.info.provenance)
    drawn = most_drawn(run.points) if dist else []
    keep = {figure_stem(s.knob) for s in analysis.knobs if s.curves} | set(stems(pairs))
    net = network_of(run.info.experiment)
    keep |= set(delay_stems(drawn)) | ({NETWORK_STEM} if net else set())
    _remove_stale_figures(out, keep)
    figures = write_figures(
        analysis.knobs, models, analysis.workloads, out, run.info.name, run.simulated
    )
    network_pngs = [write_network_figure(net, run.info.experiment, out)] if net else []
    pair_pngs = network_pngs + write_pair_figures(pairs, out)
    delay_pngs = write_delay_figures(drawn, dist, out) if dist else []
    write_csv(run, analysis, out / CSV)
    index = out / INDEX
    try:
        write_html(Page(run, analysis, models, figures, pair_pngs, delay_pngs), index)
    except OSError as e:
        raise ReportError(f"{index}: cannot write: {e.strerror or e}") from None
    return index


def _remove_stale_figures(out: Path, keep: set[str]) -> None:
    """Delete figures of an earlier report (slowdown_*, pairs_*, delays_*, network) whose
    stem is not kept."""
    for suffix in (".png", ".svg"):
        families = ("slowdown_*", "pairs_*", "delays_*", NETWORK_STEM)
        for f in [g for family in families for g in out.glob(family + suffix)]:
            if f.stem not in keep:
                try:
                    f.unlink()
                except OSError as e:
                    raise ReportError(f"{f}: cannot remove stale figure: {e.strerror}") from None
