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
        "without which MPI bypasses libfabric, unless --mca or the environment set them.",
    )
    options.add_knob_options(p)
    p.add_argument(
        "--stats",
        type=Path,
        metavar="FILE",
        help="the shim appends one JSON line of counters per process to FILE",
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
    return run_foreground(argv, env, args.timeout, f"command '{argv[0]}'")
