"""results.csv: every point with all its stored columns plus the computed slowdown, why it is
on no curve (`excluded`) and why it is left out of its point's slowdown (`outlier`)."""

from __future__ import annotations

import csv
from pathlib import Path

from loggp.analysis.errors import ReportError
from loggp.analysis.slowdown import Analysis
from loggp.analysis.store import Run

EXTRA_COLUMNS = ("slowdown", "baseline_median", "excluded", "outlier")


def write_csv(run: Run, analysis: Analysis, path: Path) -> Path:
    """One row per point, in plan order; empty cells where a value does not apply."""
    excluded = {e.point.point_id: e.reason for e in analysis.excluded}
    for wl, why in analysis.no_baseline.items():
        for p in run.points:
            if p.workload == wl and p.point_id not in excluded:
                excluded[p.point_id] = f"no baseline: {why}"
    cols = [*run.columns, *EXTRA_COLUMNS]
    try:
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for p in run.points:
                base = analysis.baselines.get(p.workload)
                row = dict(p.row)
                row["slowdown"] = _num(analysis.slowdown.get(p.point_id))
                row["baseline_median"] = _num(base.median if base is not None else None)
                row["excluded"] = excluded.get(p.point_id, "")
                outlier = analysis.outlier(p.point_id)
                row["outlier"] = "" if outlier is None else outlier.reason
                w.writerow({k: "" if v is None else v for k, v in row.items()})
    except OSError as e:
        raise ReportError(f"{path}: cannot write: {e.strerror or e}") from None
    return path


def _num(v: float | None) -> str:
    return "" if v is None else repr(float(v))
