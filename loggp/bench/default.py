"""The default suite's report as numbers: what `make run` draws, in docs/benchmarks.md.

Runs the built-in default suite (`loggp run` without a file, loggp/suites/default.yaml)
into a run directory, or reads one that exists (--run DIR), and writes its section of
docs/benchmarks.md: the run's wall time and outcomes, then per knob and workload the median
slowdown over the repeats with the report's order-statistic interval, how many repeats were
stored degraded, and the model line's fit (loggp/analysis/, the same computation as the report).

    loggp bench default [--run DIR]

Exit status 0 when the run completed and was summarised, 1 on any error, with one line on
stderr.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from loggp.analysis.errors import ReportError
from loggp.analysis.knobs import knob_info
from loggp.analysis.model import fit_models
from loggp.analysis.slowdown import STAT_METHOD, Stat, analyse
from loggp.analysis.store import load_run
from loggp.bench.doc import LoggpRunError, machine, parser, publish, run_loggp
from loggp.metrics.hostnoise import describe

NAME = "default"
SUMMARY = "the default suite's slowdowns, intervals, degraded points and model fits"
TOOL = "loggp-bench-default"
SECTION_BEGIN = "<!-- default:begin (written by loggp bench default) -->"
SECTION_END = "<!-- default:end -->"


def stat_text(s: Stat) -> str:
    if s.low is None or s.high is None:
        return f"{s.median:.3f}"
    return f"{s.median:.3f} [{s.low:.3f}, {s.high:.3f}]"


def summarise(run_dir: Path) -> dict[str, Any]:
    run = load_run(run_dir)
    analysis = analyse(run.points)
    models = fit_models(analysis, run.points)
    outcomes = Counter(p.status for p in run.points)
    rows = []
    for summary in analysis.knobs:
        info = knob_info(summary.knob)
        for curve in summary.curves:
            model = models.get(curve.knob, curve.workload)
            fit = models.skipped.get((curve.knob, curve.workload), "no model")
            if model is not None:
                r2 = "-" if model.r2 is None else f"{model.r2:.2f}"
                fit = f"R² {r2}, {'drawn' if model.fits else 'does not fit, not drawn'}"
            for cp in curve.points:
                if cp.baseline:
                    continue
                rows.append(
                    {
                        "knob": curve.knob,
                        "workload": curve.workload,
                        "delta": f"{info.symbol} = {cp.x:g} {info.unit}",
                        "slowdown": stat_text(cp.stat),
                        "n": cp.stat.n,
                        "degraded": cp.n_degraded,
                        "outliers": len(cp.outliers),
                        "model": fit,
                    }
                )
    return {
        "points": len(run.points),
        "outcomes": dict(outcomes),
        "host_noise": [describe(d) for d in run.info.host_noise],
        "rows": rows,
    }


def markdown(doc: dict[str, Any]) -> str:
    m, s = doc["machine"], doc["summary"]
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(s["outcomes"].items()))
    wall = f"{doc['wall_s']:.0f} s" if doc["wall_s"] is not None else "not timed (--run)"
    lines = [
        SECTION_BEGIN,
        "## The default suite's report (`make run`)",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, run {m['date']} "
        f"(load average {m['loadavg_1min']:.2f} at start).  Wall time of `loggp run`: {wall}; "
        f"{s['points']} points: {outcomes}.",
        *(f"Host noise before the points (loggp-hostnoise): {t}." for t in s["host_noise"]),
        "",
        f"Slowdown: the median over the repeats, {STAT_METHOD}.  `degraded`: repeats their "
        "own evidence flags (other work on the host, or the shim's lateness above its bound "
        "and the host's floor; docs/results.md), kept on the curve; `outliers`: repeats left "
        "out of the median, n counts the rest.  Model: the LogGP line's fit to the curve "
        "(loggp/analysis/README.md); drawn only where it fits.",
        "",
        "| knob | workload | Δ | slowdown [interval] | n | degraded | outliers | model |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in s["rows"]:
        lines.append(
            f"| {r['knob']} | {r['workload']} | {r['delta']} | {r['slowdown']} | {r['n']} "
            f"| {r['degraded']} | {r['outliers']} | {r['model']} |"
        )
    lines += ["", SECTION_END]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-default.json")
    ap.add_argument(
        "--run", type=Path, help="summarise this run directory instead of running the suite"
    )
    a = ap.parse_args(argv)
    try:
        info = machine()
        wall = None
        run_dir = a.run
        if run_dir is None:
            run_dir = Path("results") / f"bench-default-{time.strftime('%Y%m%d-%H%M%S')}"
            print(f"{TOOL}: running the default suite into {run_dir} ...", file=sys.stderr)
            wall = run_loggp(a.build, "run", "--out", str(run_dir))
        doc = {
            "tool": TOOL,
            "version": 1,
            "machine": info,
            "run_dir": str(run_dir),
            "wall_s": wall,
            "summary": summarise(run_dir),
        }
        publish(TOOL, doc, a, markdown(doc), SECTION_BEGIN, SECTION_END)
    except (LoggpRunError, ReportError, OSError) as exc:
        print(f"{TOOL}: {exc}", file=sys.stderr)
        return 1
    return 0
