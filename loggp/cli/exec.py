"""`loggp exec [knob options] -- CMD...`: one command beneath the shim."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console

from loggp.cli import options
from loggp.errors import UsageError
from loggp.plan.knobs import inherited_knob_env
from loggp.results.lateness import Lateness, LatenessError
from loggp.results.protocol import core_messages, shim_stats
from loggp.run.proc import run_foreground
from loggp.run.shim import process_env


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "exec",
        help="run a command beneath the shim",
        description="Run CMD beneath the libfabric shim with the given knobs and "
        "return its exit status.  LOGGP_* knobs inherited from the environment "
        "are dropped (one line on stderr says which): only the options given here "
        "apply.  An unknown LOGGP_* variable is refused, as the shim refuses it.",
    )
    options.add_knob_options(p)
    p.add_argument(
        "--stats",
        type=Path,
        metavar="FILE",
        help="the shim appends one JSON line of counters per process to FILE; at exit "
        "a summary of those lines goes to stderr (messages, delayed releases and how late "
        "they were: p50 and p99 as histogram bucket bounds, max, late by > 10 us, early)",
    )
    p.add_argument(
        "--timeout",
        type=options.positive,
        metavar="SEC",
        help="kill CMD after SEC seconds (default: no limit)",
    )
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD...")


def cmd_exec(args: argparse.Namespace, console: Console) -> int:
    knobs = options.knobs(args)
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("exec: no command given (usage: loggp exec [knob options] -- CMD...)")
    env = process_env(knobs, stats_file=args.stats)
    inherited = inherited_knob_env(os.environ)
    if inherited:
        print(
            f"loggp: exec: dropping inherited {', '.join(inherited)}: "
            "only the knob options given here apply",
            file=sys.stderr,
        )
    start = _size(args.stats) if args.stats else 0
    rc = run_foreground(argv, env, args.timeout, f"command '{argv[0]}'")
    if args.stats:
        print(f"loggp: exec: {stats_summary(args.stats, start)}", file=sys.stderr)
    return rc


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def stats_summary(path: Path, start: int) -> str:
    """One line on the shim's counter lines appended to path after byte start."""
    stats = shim_stats(path, start)
    if not stats:
        return f"the shim wrote no counters to {path} (did the command open a fabric?)"
    try:
        late = Lateness.of(stats).describe()
    except LatenessError as e:
        late = f"lateness unreadable: {e}"
    return f"{len(stats)} shim counter lines in {path}: {core_messages(stats)} messages, {late}"
