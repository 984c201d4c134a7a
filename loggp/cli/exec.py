"""`loggp exec [knob options] -- CMD...`: one command beneath the shim."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from loggp.cli import options
from loggp.errors import UsageError
from loggp.plan.knobs import inherited_knob_env
from loggp.results.lateness import Lateness, LatenessError
from loggp.results.protocol import StatsFileError, core_messages, open_stats_file, shim_stats
from loggp.run.ompi import shim_mca_env
from loggp.run.proc import run_foreground
from loggp.run.shim import process_env
from loggp.run.shmregion import remove_stale_regions


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "exec",
        help="run a command beneath the shim",
        description="Run CMD beneath the libfabric shim with the given knobs and "
        "return its exit status.  LOGGP_* knobs inherited from the environment "
        "are dropped (one line on stderr says which): only the options given here "
        "apply.  An unknown LOGGP_* variable is refused, as the shim refuses it.  An "
        "Open MPI launcher (mpirun, mpiexec) gets OMPI_MCA_pml=cm and OMPI_MCA_mtl=ofi, "
        "without which MPI bypasses libfabric, unless --mca or the environment set them.  "
        "A command whose processes sent nothing through the shim gets a warning at exit.",
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
    inherited = inherited_knob_env(os.environ)
    if inherited:
        print(
            f"loggp: exec: dropping inherited {', '.join(inherited)}: "
            "only the knob options given here apply",
            file=sys.stderr,
        )
    if args.stats:
        try:  # the shim writes at exit, when a failure could no longer stop the command
            os.close(open_stats_file(args.stats, write=True))
        except OSError as e:
            raise UsageError(f"exec: cannot write --stats {args.stats}: {e.strerror}") from None
        except StatsFileError as e:
            raise UsageError(f"exec: cannot write --stats: {e}") from None
    # Without --stats the counters still go somewhere: they tell whether the shim was used.
    with tempfile.TemporaryDirectory(prefix="loggp-exec-") as tmp:
        stats_path = args.stats or Path(tmp) / "stats.jsonl"
        env = process_env(knobs, stats_file=stats_path)
        mca = shim_mca_env(argv, env)
        if mca:
            env.update(mca)
            settings = " ".join(f"{k}={v}" for k, v in mca.items())
            print(
                f"loggp: exec: Open MPI sends through libfabric: {settings} "
                "(give --mca pml/mtl to choose otherwise)",
                file=sys.stderr,
            )
        remove_stale_regions()
        start = _size(stats_path)
        rc = run_foreground(argv, env, args.timeout, f"command '{argv[0]}'")
        problems: list[str] = []
        stats = shim_stats(stats_path, start, problems)
        for problem in problems:
            print(f"loggp: exec: warning: {problem}", file=sys.stderr)
        if args.stats and stats:
            print(f"loggp: exec: {stats_summary(args.stats, stats)}", file=sys.stderr)
        if not core_messages(stats):
            print(f"loggp: exec: warning: {no_messages(argv[0], bool(stats))}", file=sys.stderr)
    return rc


def no_messages(command: str, opened: bool) -> str:
    """Why a run beneath the shim was not delayed at all."""
    what = "opened a fabric but sent nothing through it" if opened else "never opened a fabric"
    return (
        f"the shim carried no messages: '{command}' {what}, so no delay applied "
        "(only libfabric traffic is delayed: MPI needs pml cm and mtl ofi; TCP/IP programs "
        "need the wire, docs/testbed.md)"
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def stats_summary(path: Path, stats: list[dict[str, Any]]) -> str:
    """One line on the shim's counter lines the command appended to path."""
    try:
        late = Lateness.of(stats).describe()
    except LatenessError as e:
        late = f"lateness unreadable: {e}"
    return f"{len(stats)} shim counter lines in {path}: {core_messages(stats)} messages, {late}"
