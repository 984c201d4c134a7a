"""`loggp report DIR`: the report of a run directory (loggp/analysis/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from loggp.errors import LoggpError
from loggp.results.rundir import read_run


class ReportFailedError(LoggpError):
    """The report could not be written."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="draw slowdown curves of a run directory",
        description="Write the report of a run directory: figures per knob (PNG, SVG), "
        "index.html with tables and provenance, results.csv.",
    )
    p.add_argument("run_dir", type=Path, metavar="DIR", help="a run directory of loggp run")
    p.add_argument("--out", type=Path, metavar="DIR", help="report directory (default DIR/report)")


def report(run_dir: Path, out: Path | None, console: Console) -> Path:
    """Writes the report of a run directory."""
    # Imported here, not at the top: the report draws with matplotlib, which takes about a
    # second to import, and every other verb of the command would pay it at start.
    from loggp.analysis.report import ReportError, write_report

    read_run(run_dir)  # run.json through its one schema: a malformed one is refused here
    try:
        return write_report(run_dir, out)
    except ReportError as e:
        raise ReportFailedError(f"report of {run_dir}: {e}") from None


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    index = report(args.run_dir, args.out, console)
    console.print(f"report: {index}")
    return 0
