"""`loggp demo`: a quick sweep of the shim over shm with loggp-calibrate.

Runs loggp-calibrate over shm without the shim (the baseline), beneath the shim with every
knob at zero (ΔL = Δo = 0, the shim's own cost), then for ΔL and Δo of 10 and 100 us one
knob at a time, and prints the configured Δ against the measured increase.  Everything a
run produced (logs, the tool's JSON, the shim's counters, a summary.json with provenance)
is kept under results/demo-<timestamp>/.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from loggp.measure.calibrate import (
    CalibrateRun,
    Comparison,
    compare,
    relevant_metrics,
    run_calibrate,
)
from loggp.measure.tables import comparison_table
from loggp.plan.knobs import KnobSet
from loggp.run.provenance import provenance
from loggp.run.shim import REPO_ROOT, calibrate_binary, shim_library

DEFAULT_PROVIDER = "shm"
DEFAULT_LATENCIES_US = (10, 100)
DEFAULT_OVERHEADS_US = (10, 100)
# The binary's default iteration count keeps a point to a few seconds; a point that takes
# a minute has hung, and the whole demo must stay well under three minutes.
POINT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class DemoPoint:
    name: str
    knobs: KnobSet | None  # None: without the shim


def default_points() -> list[DemoPoint]:
    """Baseline, the zero shim (ΔL = Δo = 0), then ΔL and Δo one at a time."""
    points = [DemoPoint("baseline", None), DemoPoint("zero", KnobSet())]
    points += [
        DemoPoint(f"latency-{v}us", KnobSet.parse({"latency": f"{v}us"}))
        for v in DEFAULT_LATENCIES_US
    ]
    points += [
        DemoPoint(f"overhead-{v}us", KnobSet.parse({"overhead": f"{v}us"}))
        for v in DEFAULT_OVERHEADS_US
    ]
    return points


def results_dir(root: Path | None) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = (root or REPO_ROOT / "results") / f"demo-{stamp}"
    out, n = base, 1
    while out.exists():  # two demos started in the same second
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    out.mkdir(parents=True)
    return out


def _point_summary(
    point: DemoPoint, run: CalibrateRun, seconds: float, comparisons: list[Comparison]
) -> dict[str, Any]:
    return {
        "name": point.name,
        "shim": point.knobs is not None,
        "knobs": point.knobs.as_dict() if point.knobs is not None else None,
        "seconds": round(seconds, 3),
        "dir": str(run.workdir),
        "calibrate": run.raw,
        "shim_stats": run.stats,
        "comparison": [c.as_dict() for c in comparisons],
    }


def run_demo(
    console: Console,
    *,
    provider: str = DEFAULT_PROVIDER,
    out_root: Path | None = None,
    iterations: int | None = None,
    timeout: float = POINT_TIMEOUT_S,
) -> Path:
    """Run the sweep, print the table on console, return the results directory."""
    calibrate_binary()  # fail before creating anything if the build is missing
    shim_library()
    points = default_points()
    out = results_dir(out_root)
    progress_console = Console(stderr=True, soft_wrap=True)
    progress_console.print(f"loggp demo: {len(points)} points over {provider}, results in {out}")

    summary: dict[str, Any] = {
        "kind": "loggp-demo",
        "version": 1,
        "provider": provider,
        "iterations": iterations,
        "provenance": provenance(),
        "points": [],
    }
    summary_path = out / "summary.json"
    rows: list[tuple[str, Comparison]] = []
    baseline: CalibrateRun | None = None
    started = time.monotonic()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=progress_console,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=len(points))
        for i, point in enumerate(points, 1):
            label = "no shim" if point.knobs is None else f"shim, {point.knobs.label()}"
            bar.update(task, description=f"[{i}/{len(points)}] {label}")
            t0 = time.monotonic()
            run = run_calibrate(
                provider,
                point.knobs,
                out / f"{i:02d}-{point.name}",
                iterations=iterations,
                timeout=timeout,
            )
            seconds = time.monotonic() - t0
            comparisons: list[Comparison] = []
            if baseline is None:
                baseline = run
            else:
                assert point.knobs is not None
                comparisons = compare(
                    point.knobs,
                    baseline.report.results,
                    run.report.results,
                    relevant_metrics(point.knobs),
                )
                rows += [(point.knobs.label(), c) for c in comparisons]
            summary["points"].append(_point_summary(point, run, seconds, comparisons))
            summary_path.write_text(json.dumps(summary, indent=2) + "\n")
            half = run.report.results.half_rtt_us.median
            bar.console.print(f"  done {label:<28} half RTT {half:9.2f} us  ({seconds:.1f} s)")
            bar.advance(task)

    summary["seconds"] = round(time.monotonic() - started, 3)
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    console.print(
        comparison_table(
            rows, f"loggp demo over {provider}: configured Δ vs measured increase over no shim"
        )
    )
    console.print(f"results: {summary_path}")
    return out
