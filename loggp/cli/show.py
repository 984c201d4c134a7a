"""`loggp show [FILE]`: an experiment's resolved settings and its plan."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from loggp.plan.experiment import Experiment, load_experiment
from loggp.plan.sweep import Point, expand


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="print an experiment's resolved plan",
        description="Validate an experiment file (default: the built-in suite) and print "
        "its resolved settings and every point of its plan.",
    )
    p.add_argument("file", nargs="?", type=Path, metavar="FILE", help="experiment YAML")


def print_plan(exp: Experiment, source: str, console: Console) -> None:
    """The resolved settings and every point; a plan too large is refused before either
    is printed."""
    plan = expand(exp)
    console.print(settings_table(exp, source))
    console.print(plan_table(exp, plan))


def plan_table(exp: Experiment, plan: list[Point]) -> Table:
    t = Table(title=f"{exp.name}: {len(plan)} points", title_justify="left")
    for col in ("#", "point", "workload", "knob", "setting", "repeat"):
        t.add_column(col)
    for p in plan:
        setting = p.label()
        t.add_row(str(p.seq), p.point_id, p.workload.name, p.sweep_knob, setting, str(p.repeat))
    return t


def settings_table(exp: Experiment, source: str) -> Table:
    t = Table(title=f"experiment {exp.name} ({source})", title_justify="left", show_header=False)
    t.add_column("key")
    t.add_column("value")
    t.add_row("description", exp.description or "-")
    t.add_row("launcher", exp.launcher.model_dump_json(exclude_defaults=True) or exp.launcher.kind)
    t.add_row("emulator", exp.emulator.model_dump_json())
    if exp.network is not None:
        t.add_row("network", exp.network.model_dump_json(exclude_defaults=True))
    t.add_row("sweep", exp.sweep.model_dump_json(by_alias=True))
    t.add_row("repeats / warm-up / seed", f"{exp.repeats} / {exp.warmup} / {exp.seed}")
    t.add_row("timeout", f"{exp.timeout:g} s per point")
    for w in exp.workloads:
        t.add_row(f"workload {w.name}", w.model_dump_json(exclude={"name"}))
    return t


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    exp, _, source = load_experiment(args.file)
    print_plan(exp, source, console)
    return 0
