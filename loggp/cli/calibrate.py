"""`loggp calibrate`: loggp-calibrate without the shim and beneath it, compared."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from rich.console import Console

from loggp.cli import options
from loggp.measure.calibrate import DEFAULT_TIMEOUT_S, compare, run_calibrate
from loggp.measure.explain import explanations
from loggp.measure.tables import comparison_table
from loggp.metrics.node import OtherWork, cpu_sample, other_work
from loggp.run.provenance import provenance
from loggp.run.provider import check_provider
from loggp.run.shim import calibrate_binary, shim_library


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="measure o, g, L, G with and without the shim",
        description="Run loggp-calibrate (server and client on 127.0.0.1) "
        "without the shim and beneath it, and print configured vs measured.",
    )
    options.add_provider_option(p)
    options.add_knob_options(p)
    p.add_argument("--json", type=Path, metavar="FILE", help="write both runs and the comparison")
    options.add_sampling_options(p, DEFAULT_TIMEOUT_S, "run")


def cmd_calibrate(args: argparse.Namespace, console: Console) -> int:
    knobs = options.knobs(args)
    calibrate_binary()  # fail before the first run if the build is missing
    shim_library()
    check_provider(args.provider, "--provider")
    err = Console(stderr=True)
    work = Path(tempfile.mkdtemp(prefix="loggp-calibrate-"))
    runs = {}
    busiest: OtherWork | None = None  # the other work on the host during the busier run
    for name, k in (("unshimmed", None), ("shimmed", knobs)):
        label = "without the shim" if k is None else f"beneath the shim, {k.label()}"
        err.print(f"loggp calibrate: {args.provider} {label} ...")
        before = cpu_sample()
        runs[name] = run_calibrate(
            args.provider, k, work / name, iterations=args.iterations, timeout=args.timeout
        )
        other = other_work(before, cpu_sample())
        if other is not None and (busiest is None or other.share > busiest.share):
            busiest = other
    comparisons = compare(knobs, runs["unshimmed"].report.results, runs["shimmed"].report.results)
    console.print(
        comparison_table(
            [(knobs.label(), c) for c in comparisons],
            f"loggp calibrate over {args.provider}: configured Δ vs measured increase over no shim",
        )
    )
    why = explanations(comparisons, knobs.params(), args.provider, busiest)
    if why:
        console.print("why the rows marked no:")
        for line in why.values():
            console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
    if args.json is not None:
        doc = {
            "kind": "loggp-calibrate-comparison",
            "version": 1,
            "provider": args.provider,
            "knobs": knobs.as_dict(),
            "unshimmed": runs["unshimmed"].raw,
            "shimmed": runs["shimmed"].raw,
            "shim_stats": runs["shimmed"].stats,
            "comparison": [{**c.as_dict(), "why": why.get(c.metric.key)} for c in comparisons],
            "provenance": provenance(),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
        console.print(f"results: {args.json}")
    # Logs are kept when a run fails (errors name them); after success they are noise.
    shutil.rmtree(work, ignore_errors=True)
    return 0
