"""`loggp validate-sim FILE`: the experiment emulated and simulated at the rank counts this
machine can emulate, and their slowdowns compared point by point (docs/simulator.md,
"Cross-validation").

Both runs are ordinary runs of variants of the file (the same sweep and workloads, every
workload at --ranks; one beneath its own shim, `fabric` where the file says `smpi`, the
other beneath `smpi`), in DIR/emulated and DIR/simulated with their reports; the
comparison (loggp/analysis/crossval.py) is printed and written to DIR/validation.json.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from loggp.cli.options import positive
from loggp.cli.report import report
from loggp.errors import LoggpError
from loggp.plan.experiment import Experiment, load_experiment, parse_experiment
from loggp.plan.sweep import check_plan_size, expand
from loggp.results.rundir import new_run_dir
from loggp.run.cgroup import detect
from loggp.run.launch import preflight
from loggp.run.runlock import RunLock
from loggp.run.runner import RunOptions, new_record, run_plan
from loggp.run.shim import shim_library

VALIDATION_FILE = "validation.json"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate-sim",
        help="run an experiment emulated and simulated (shim smpi) and compare slowdowns",
        description="Run the experiment twice at --ranks ranks, emulated and simulated by "
        "SimGrid's SMPI, and report per point the emulated and simulated slowdown; a "
        "point agrees when the simulated one is inside the emulated interval or within 15 %%.",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="an experiment file")
    p.add_argument(
        "--ranks", type=int, default=2, metavar="N", help="ranks of every workload (default 2)"
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="directory of both runs")
    p.add_argument("--wait-lock", type=positive, metavar="SEC", help="wait for another run")


def variant(text: str, source: str, shim: str, ranks: int) -> tuple[Experiment, str]:
    """The file's experiment beneath shim with every workload at ranks: (experiment, its
    YAML), checked like a file of its own (a knob the backend cannot apply is one line)."""
    doc: dict[str, Any] = yaml.safe_load(text)
    emulator = dict(doc.get("emulator") or {})
    emulator["shim"] = shim
    if shim != "smpi":
        emulator.pop("calibration", None)
    doc["emulator"] = emulator
    doc["workloads"] = [{**w, "ranks": ranks} for w in doc["workloads"]]
    doc["name"] = f"{doc['name']}-{'simulated' if shim == 'smpi' else 'emulated'}"
    out = yaml.safe_dump(doc, sort_keys=False)
    return parse_experiment(out, f"{source} ({shim}, {ranks} ranks)"), out


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from loggp.analysis.crossval import compare
    from loggp.analysis.slowdown import analyse
    from loggp.analysis.store import load_run

    if args.ranks < 1:
        raise LoggpError(f"--ranks {args.ranks}: expected a whole number of at least 1")
    exp, text, source = load_experiment(args.file)
    exp_dir = args.file.resolve().parent
    own = "fabric" if exp.emulator.shim == "smpi" else exp.emulator.shim
    runs = {name: variant(text, source, shim, args.ranks) for name, shim in
            (("emulated", own), ("simulated", "smpi"))}  # fmt: skip
    for sub, _ in runs.values():
        check_plan_size(sub)
        preflight(sub, exp_dir)
        if sub.emulator.shim == "fabric":
            shim_library()
    top = args.out or Path(exp.output) / (
        f"{exp.name}-validate-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    lock = RunLock(args.wait_lock)
    try:
        lock.describe(top)
        containment = detect()
        for name, (sub, sub_text) in runs.items():
            run_dir = new_run_dir(sub, top / name)
            console.print(f"{name}: {run_dir}")
            rec = new_record(sub, sub_text, source, expand(sub))
            opts = RunOptions(prometheus=False, exp_dir=exp_dir, containment=containment)
            summary = run_plan(sub, rec, run_dir, opts, console)
            if summary.interrupted:
                return 130
            if summary.ok + len(summary.degraded):
                console.print(f"report: {report(run_dir, None, console)}")
    finally:
        lock.release()
    found = compare(*(analyse(load_run(top / name).points) for name in runs))
    table = Table(title=f"{exp.name}: emulated vs simulated slowdown at {args.ranks} ranks")
    for col in ("workload", "knob", "Δ", "emulated [interval]", "simulated", "diff", "agrees"):
        table.add_column(col)
    for a in found:
        interval = (
            f" [{a.emulated.low:.3g}, {a.emulated.high:.3g}]" if a.emulated.low is not None else ""
        )
        table.add_row(
            a.workload, a.knob, f"{a.x:g}", f"{a.emulated.median:.3g}{interval}",
            f"{a.simulated.median:.3g}", f"{a.rel_diff:+.0%}", "yes" if a.agrees else "no",
        )  # fmt: skip
    console.print(table)
    agree = sum(a.agrees for a in found)
    console.print(f"{agree} of {len(found)} points agree")
    (top / VALIDATION_FILE).write_text(
        json.dumps(
            {"ranks": args.ranks, "agree": agree, "points": [a.as_dict() for a in found]},
            indent=2,
        )
        + "\n"
    )
    console.print(f"comparison: {top / VALIDATION_FILE}")
    return 0
