"""The experiment subcommands of `loggp`: run, show and report."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from analysis.report import ReportError, write_report
from loggp.errors import LoggpError
from loggp.metrics.prometheus import host_cpu_per_point
from loggp.plan.experiment import Experiment, load_experiment
from loggp.plan.sweep import expand
from loggp.results.rundir import (
    RunRecord,
    latest_run_dir,
    new_run_dir,
    read_run,
    stored_experiment,
)
from loggp.run.launch import preflight
from loggp.run.runner import RunOptions, new_record, run_plan
from loggp.run.shim import shim_library


class ReportFailedError(LoggpError):
    """The report could not be written."""


def _plan_table(exp: Experiment) -> Table:
    plan = expand(exp)
    t = Table(title=f"{exp.name}: {len(plan)} points", title_justify="left")
    for col in ("#", "point", "workload", "knob", "setting", "repeat"):
        t.add_column(col)
    for p in plan:
        setting = p.knobs.label()
        t.add_row(str(p.seq), p.point_id, p.workload.name, p.sweep_knob, setting, str(p.repeat))
    return t


def _settings_table(exp: Experiment, source: str) -> Table:
    t = Table(title=f"experiment {exp.name} ({source})", title_justify="left", show_header=False)
    t.add_column("key")
    t.add_column("value")
    t.add_row("description", exp.description or "-")
    t.add_row("launcher", exp.launcher.model_dump_json(exclude_defaults=True) or exp.launcher.kind)
    t.add_row("emulator", exp.emulator.model_dump_json())
    t.add_row("sweep", exp.sweep.model_dump_json(by_alias=True))
    t.add_row("repeats / warm-up / seed", f"{exp.repeats} / {exp.warmup} / {exp.seed}")
    t.add_row("timeout", f"{exp.timeout:g} s per point")
    for w in exp.workloads:
        t.add_row(f"workload {w.name}", w.model_dump_json(exclude={"name"}))
    return t


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    exp, _, source = load_experiment(args.file)
    console.print(_settings_table(exp, source))
    console.print(_plan_table(exp))
    return 0


def report(run_dir: Path, out: Path | None, console: Console) -> Path:
    """Writes the report, with host CPU per point when the run kept Prometheus data."""
    rec = read_run(run_dir)
    windows = {k: (v[0], v[1]) for k, v in rec.windows.items()}
    cpu = host_cpu_per_point(run_dir, windows) if rec.prometheus else None
    try:
        return write_report(run_dir, out, host_cpu=cpu)
    except ReportError as e:
        raise ReportFailedError(f"report of {run_dir}: {e}") from None


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    index = report(args.run_dir, args.out, console)
    console.print(f"report: {index}")
    return 0


def _resume(args: argparse.Namespace) -> tuple[Experiment, RunRecord, Path, Path | None]:
    """The run to continue: --out DIR, or the newest run of FILE's (or the default)
    experiment; it goes on with the experiment it was started with."""
    run_dir = args.out if args.out is not None else latest_run_dir(load_experiment(args.file)[0])
    rec = read_run(run_dir)
    exp = stored_experiment(rec, run_dir)
    if args.file is not None:
        given, _, source = load_experiment(args.file)
        if given != exp:
            raise LoggpError(
                f"{run_dir} was started with a different experiment than {source}: "
                "resume it without FILE, or start a new run"
            )
    source = Path(rec.source)
    exp_dir = source.resolve().parent if source.is_file() else None
    rec.resumed.append(datetime.now(UTC).isoformat(timespec="seconds"))
    return exp, rec, run_dir, exp_dir


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    if args.resume:
        exp, rec, run_dir, exp_dir = _resume(args)
    else:
        exp, text, source = load_experiment(args.file)
        exp_dir = args.file.resolve().parent if args.file else None
        if args.dry_run:
            console.print(_settings_table(exp, source))
            console.print(_plan_table(exp))
            return 0
    preflight(exp, exp_dir)
    if exp.emulator.shim == "fabric":
        shim_library()
    if not args.resume:
        run_dir = new_run_dir(exp, args.out)
        rec = new_record(exp, text, source, expand(exp))
    console.print(f"run directory: {run_dir}")
    summary = run_plan(
        exp, rec, run_dir, RunOptions(args.fail_fast, args.prometheus, exp_dir), console
    )
    done = summary.ok + len(summary.failed) + summary.skipped
    console.print(
        f"{done}/{summary.planned} points stored ({summary.skipped} from before), "
        f"{summary.ok} ok, {len(summary.failed)} failed"
    )
    if summary.interrupted:
        console.print(f"interrupted: continue with  loggp run --resume --out {run_dir}")
        return 130
    if not args.no_report and summary.ok + summary.skipped:
        console.print(f"report: {report(run_dir, None, console)}")
    return 1 if summary.failed else 0
