"""`loggp run [FILE]`: run an experiment's plan into a run directory, then report it."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from loggp.cli.options import memory_size, pids, positive
from loggp.cli.report import report
from loggp.cli.show import print_plan
from loggp.errors import LoggpError, UsageError
from loggp.plan.experiment import Experiment, load_experiment
from loggp.plan.sweep import check_plan_size, expand
from loggp.results.judge import OTHER_CPU_LIMIT, bound_rule
from loggp.results.rundir import (
    RunRecord,
    latest_run_dir,
    new_run_dir,
    read_run,
    stored_experiment,
    write_run,
)
from loggp.results.store import MEASURED, STATUS_DEGRADED, Store
from loggp.run import slurm
from loggp.run.cgroup import Limits, detect
from loggp.run.launch import preflight
from loggp.run.runlock import RunLock
from loggp.run.runner import RunOptions, new_record, run_plan
from loggp.run.shim import shim_library


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run an experiment (the built-in default suite without FILE)",
        description="Run every point of an experiment file's plan with a progress bar, store "
        "the results in a run directory (results.sqlite, run.json) and write its report. "
        "Without FILE the built-in default suite runs.  A failed point is recorded and the "
        "run goes on; Ctrl-C leaves every finished point stored for --resume.  A point that "
        "finished ok is stored 'degraded', with its value and the reason, when its own "
        "evidence says it may not measure its knobs: other work took more than "
        f"{100 * OTHER_CPU_LIMIT:.0f} % of the host's CPU during it, or its p99 release "
        f"lateness was above {bound_rule('(its largest Δo_s, Δo_r, Δg or ΔL)')} and the "
        "host's own floor beside it, or any early release (docs/results.md).",
    )
    p.add_argument("file", nargs="?", type=Path, metavar="FILE", help="experiment YAML")
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run directory (default: <output>/<name>-<timestamp>)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out DIR (default: the newest run of this experiment), "
        "skipping finished points",
    )
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed point")
    p.add_argument(
        "--strict",
        action="store_true",
        help="a degraded point is a failure: exit status 1 at the end "
        "(with --fail-fast, stop at the first)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    p.add_argument(
        "--prometheus",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="start a Prometheus server that scrapes the run "
        "(default: on when the prometheus binary is installed)",
    )
    p.add_argument("--no-report", action="store_true", help="do not write the report")
    p.add_argument(
        "--point-pids",
        type=pids,
        metavar="N",
        help="at most N processes and threads per point, its services' included (a cgroup "
        "limit: refused where the host's cgroups cannot enforce it)",
    )
    p.add_argument(
        "--point-memory",
        type=memory_size,
        metavar="SIZE",
        help="at most SIZE of memory per point, e.g. 512M or 2G (cgroup v2's memory.max: "
        "refused where the host lacks it)",
    )
    p.add_argument(
        "--slurm",
        action="store_true",
        help="submit the run to Slurm (launcher: slurm; from outside an allocation): a job "
        "array of one task per point not yet stored, on whole nodes; wait for it and report "
        "(docs/cluster.md)",
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="with --slurm: return once the job is submitted (loggp report DIR later)",
    )
    p.add_argument("--slurm-task", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--wait-lock",
        type=positive,
        metavar="SECONDS",
        help="if another loggp run is running on this machine, wait up to SECONDS for it to "
        "end (default: refuse at once; runs at once would measure each other)",
    )


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
    if args.dry_run and not args.resume:
        exp, _, source = load_experiment(args.file)
        print_plan(exp, source, console)  # a plan too large is refused first
        return 0
    if args.no_wait and not args.slurm:
        raise UsageError("--no-wait is read with --slurm only (it returns once submitted)")
    if args.slurm:
        return _submit(args, console)  # the array's tasks take the run lock, each its own
    # A file that cannot run is refused before the lock (and the run directory) is taken.
    new = None if args.resume else load_experiment(args.file)
    if new is not None:
        check_plan_size(new[0])
    lock = RunLock(args.wait_lock)
    try:
        return _run(args, console, lock, new)
    finally:
        lock.release()


def _run(
    args: argparse.Namespace,
    console: Console,
    lock: RunLock,
    new: tuple[Experiment, str, str] | None,
) -> int:
    """The run: new (the file's experiment, its text and source, checked), or with --resume
    the run it names."""
    if new is None:
        exp, rec, run_dir, exp_dir = _resume(args)
    else:
        exp, text, source = new
        exp_dir = args.file.resolve().parent if args.file else None
    preflight(exp, exp_dir)
    containment = detect().with_limits(Limits(args.point_pids, args.point_memory))
    if exp.emulator.shim == "fabric":
        shim_library()
    if new is not None:
        run_dir = new_run_dir(exp, args.out)
        rec = new_record(exp, text, source, expand(exp))
    lock.describe(run_dir)
    console.print(f"run directory: {run_dir}")
    summary = run_plan(
        exp,
        rec,
        run_dir,
        RunOptions(
            fail_fast=args.fail_fast,
            strict=args.strict,
            prometheus=args.prometheus,
            exp_dir=exp_dir,
            containment=containment,
            only=_array_task() if args.slurm_task else None,
        ),
        console,
    )
    console.print(
        f"{summary.stored + summary.skipped}/{summary.planned} points stored "
        f"({summary.skipped} from before), {summary.ok} ok, {len(summary.degraded)} degraded, "
        f"{len(summary.failed)} failed"
    )
    if summary.interrupted:
        console.print(f"interrupted: continue with  loggp run --resume --out {run_dir}")
        return 130
    if not args.no_report and summary.ok + len(summary.degraded) + summary.skipped:
        console.print(f"report: {report(run_dir, None, console)}")
    if args.strict and summary.degraded:
        console.print(
            f"--strict: {len(summary.degraded)} point(s) degraded (reasons above): "
            f"{', '.join(summary.degraded)}"
        )
        return 1
    return 1 if summary.failed else 0


def _array_task() -> int:
    """The point (its seq) of this Slurm array task."""
    task = os.environ.get("SLURM_ARRAY_TASK_ID", "")
    if not task.isdigit():
        raise UsageError("--slurm-task runs inside a job array task (SLURM_ARRAY_TASK_ID unset)")
    return int(task)


def _submit(args: argparse.Namespace, console: Console) -> int:
    """loggp run --slurm: the run's points not yet stored as a job array; waits for it
    and reports unless --no-wait."""
    if slurm.in_allocation():
        raise UsageError(
            "--slurm submits a run from outside an allocation; inside one (SLURM_JOB_ID is "
            "set) run it without --slurm"
        )
    if args.resume:
        exp, rec, run_dir, exp_dir = _resume(args)
    else:
        exp, text, source = load_experiment(args.file)
        check_plan_size(exp)
        exp_dir = args.file.resolve().parent if args.file else None
    if exp.launcher.kind != "slurm":
        raise UsageError(
            f"--slurm needs launcher: {{kind: slurm}} in the experiment (it has "
            f"'{exp.launcher.kind}')"
        )
    preflight(exp, exp_dir)
    plan = expand(exp)
    if not args.resume:
        run_dir = new_run_dir(exp, args.out)
        rec = new_record(exp, text, source, plan)
    with Store(run_dir) as store:
        done = store.finished_ids()
    todo = [p for p in plan if p.point_id not in done]
    if not todo:
        console.print(f"every point of {run_dir} is stored: nothing to submit")
        return 0
    rec.state = "submitted"
    write_run(run_dir, rec)  # before any task reads it
    # The tasks may share a machine (and its run lock): each waits for all the others.
    budget = sum(exp.workload_timeout(p.workload) for p in todo) + 60 * len(todo)
    job = slurm.submit(slurm.batch_script(exp, run_dir, [p.seq for p in todo], budget))
    (run_dir / "slurm" / "job_id").write_text(job + "\n")
    console.print(f"run directory: {run_dir}\nsubmitted job {job}: {len(todo)} array tasks")
    if args.no_wait:
        console.print(f"when it ends: loggp report {run_dir}")
        return 0
    if not slurm.wait(job, budget):
        console.print(f"job {job} still runs after {budget:g} s: loggp report {run_dir} later")
        return 1
    rec = read_run(run_dir)  # with what the tasks wrote
    with Store(run_dir) as store:
        stored = store.statuses()
    missing = [p.point_id for p in plan if p.point_id not in stored]
    rec.state = "interrupted" if missing else "complete"
    rec.provenance.setdefault("slurm", {})["job_id"] = job
    rec.provenance["slurm"]["points"] = slurm.point_records(run_dir, rec.plan)
    write_run(run_dir, rec)
    console.print(f"{len(stored)}/{len(plan)} points stored by job {job}")
    if missing:
        console.print(
            f"{len(missing)} point(s) not stored (a task failed or was cancelled; its log: "
            f"{run_dir / 'slurm'}): loggp run --resume --slurm --out {run_dir}"
        )
        return 1
    failed = sorted(pid for pid, status in stored.items() if status not in MEASURED)
    degraded = sorted(pid for pid, status in stored.items() if status == STATUS_DEGRADED)
    if not args.no_report and len(failed) < len(stored):
        console.print(f"report: {report(run_dir, None, console)}")
    if failed:  # as a run inside one allocation ends: a failed point fails the run
        console.print(
            f"{len(failed)} point(s) failed (logs in {run_dir / 'points'}): {', '.join(failed)}"
        )
        return 1
    if args.strict and degraded:
        console.print(f"--strict: {len(degraded)} point(s) degraded: {', '.join(degraded)}")
        return 1
    return 0
