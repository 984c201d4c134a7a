"""`loggp validate-sim FILE`: the experiment emulated and simulated at the rank counts this
machine can emulate, and their slowdowns compared point by point (docs/simulator.md,
"Cross-validation").

Per rank count N of --ranks both runs are ordinary runs of variants of the file (the same
sweep and workloads, every workload at N ranks; one beneath its own shim, `fabric` where the
file says `smpi`, the other beneath `smpi`), in DIR/ranks-N/emulated and
DIR/ranks-N/simulated with their reports, every simulated run on the first one's stack
(its calibration.json); the comparison (loggp/analysis/crossval.py) is
printed, one table per rank count, and written to DIR/validation.json, one section each;
DIR/validation.html draws both runs' curves on the same axes (loggp/analysis/crossval_page.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from loggp.analysis.crossval import (
    AGREE_RULE,
    EMULATED,
    SIMULATED,
    Section,
    compare_section,
    section_dir,
)
from loggp.analysis.errors import ReportError
from loggp.cli.options import add_rank_counts, positive
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
from loggp.run.smpi import CALIBRATION_FILE

VALIDATION_FILE = "validation.json"
DEFAULT_RANKS = "2,4"  # what a 2-core machine emulates: one or two ranks a core


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate-sim",
        help="run an experiment emulated and simulated (shim smpi) and compare slowdowns",
        description="Run the experiment twice at each rank count of --ranks, emulated and "
        "simulated by SimGrid's SMPI, and report per point the emulated and simulated "
        f"slowdown ({AGREE_RULE}); one page draws both runs' curves on the same axes.",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="an experiment file")
    add_rank_counts(p, DEFAULT_RANKS, "each workload run at every one")
    p.add_argument("--out", type=Path, metavar="DIR", help="directory of all runs")
    p.add_argument("--wait-lock", type=positive, metavar="SEC", help="wait for another run")


@dataclass(frozen=True)
class Variant:
    """One of validate-sim's runs: the file's experiment at one rank count, emulated or
    simulated."""

    ranks: int
    kind: str  # EMULATED or SIMULATED
    exp: Experiment
    text: str  # its YAML, stored with the run

    def run_dir(self, top: Path) -> Path:
        return section_dir(top, self.ranks) / self.kind


def variant(
    text: str, source: str, shim: str, ranks: int, calibration: Path | None = None
) -> tuple[Experiment, str]:
    """The file's experiment beneath shim with every workload at ranks: (experiment, its
    YAML), checked like a file of its own (a knob the backend cannot apply is one line).
    calibration, if given, is the simulated stack's file in place of the file's own."""
    doc: dict[str, Any] = yaml.safe_load(text)
    emulator = dict(doc.get("emulator") or {})
    emulator["shim"] = shim
    if shim != "smpi":
        emulator.pop("calibration", None)
    elif calibration is not None:
        emulator["calibration"] = str(calibration)
    doc["emulator"] = emulator
    doc["workloads"] = [{**w, "ranks": ranks} for w in doc["workloads"]]
    kind = SIMULATED if shim == "smpi" else EMULATED
    doc["name"] = f"{doc['name']}-{kind}-{ranks}ranks"
    out = yaml.safe_dump(doc, sort_keys=False)
    return parse_experiment(out, f"{source} ({shim}, {ranks} ranks)"), out


def variants(exp: Experiment, text: str, source: str, ranks: Sequence[int]) -> list[Variant]:
    """Every run of validate-sim, in the order they run: per rank count, emulated beneath
    the file's own shim (`fabric` where it says `smpi`), then simulated."""
    own = "fabric" if exp.emulator.shim == "smpi" else exp.emulator.shim
    out = []
    for n in ranks:
        for kind, shim in ((EMULATED, own), (SIMULATED, "smpi")):
            out.append(Variant(n, kind, *variant(text, source, shim, n)))
    return out


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    exp, text, source = load_experiment(args.file)
    exp_dir = args.file.resolve().parent
    runs = variants(exp, text, source, args.ranks)
    for v in runs:  # every variant checked before the first point runs
        check_plan_size(v.exp)
        preflight(v.exp, exp_dir)
        if v.exp.emulator.shim == "fabric":
            shim_library()
    top = args.out or Path(exp.output) / (
        f"{exp.name}-validate-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    lock = RunLock(args.wait_lock)
    try:
        lock.describe(top)
        containment = detect()
        # One stack for every rank count: the first simulated run's, measured or read once
        # (a calibration's G alone varied 0.37-0.69 ns/B between runs here).
        stack_file: Path | None = None
        for v in runs:
            if v.kind == SIMULATED and stack_file is not None:
                v = Variant(v.ranks, v.kind, *variant(text, source, "smpi", v.ranks, stack_file))
            run_dir = new_run_dir(v.exp, v.run_dir(top))
            console.print(f"{v.kind} at {v.ranks} ranks: {run_dir}")
            rec = new_record(v.exp, v.text, source, expand(v.exp))
            opts = RunOptions(prometheus=False, exp_dir=exp_dir, containment=containment)
            summary = run_plan(v.exp, rec, run_dir, opts, console)
            if summary.interrupted:
                return 130
            if v.kind == SIMULATED and stack_file is None:
                stack_file = (run_dir / CALIBRATION_FILE).resolve()
            if summary.ok + len(summary.degraded):
                console.print(f"report: {report(run_dir, None, console)}")
    finally:
        lock.release()
    # Imported here: the page draws with matplotlib, which every other verb would pay for
    # at start (loggp/cli/report.py).
    from loggp.analysis.crossval_page import write_page

    try:  # a run that cannot be read (ReportError) is one line, as every failure
        found = [compare_section(top, n) for n in args.ranks]
        print_sections(exp.name, found, console)
        console.print(f"comparison: {write_validation(top, found)}")
        console.print(f"figures: {write_page(top, exp.name, found)}")
    except ReportError as e:
        raise LoggpError(f"validate-sim: {e}") from None
    return 0


def print_sections(name: str, sections: Sequence[Section], console: Console) -> None:
    """One table per rank count, and how many of its points agree."""
    for s in sections:
        table = Table(title=f"{name}: emulated vs simulated slowdown at {s.ranks} ranks")
        for col in ("workload", "knob", "Δ", "emulated [interval]", "simulated", "diff", "agrees"):
            table.add_column(col)
        for a in s.points:
            e = a.emulated
            interval = f" [{e.low:.3g}, {e.high:.3g}]" if e.low is not None else ""
            table.add_row(
                a.workload, a.knob, f"{a.x:g}", f"{e.median:.3g}{interval}",
                f"{a.simulated.median:.3g}", f"{a.rel_diff:+.0%}", a.verdict,
            )  # fmt: skip
        console.print(table)
        console.print(f"{s.agree} of {len(s.points)} points agree at {s.ranks} ranks")


def write_validation(top: Path, sections: Sequence[Section]) -> Path:
    path = top / VALIDATION_FILE
    doc = {"sections": [s.as_dict() for s in sections]}
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path
