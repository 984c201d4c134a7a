"""The `loggp` command.

    loggp run [FILE] [--out DIR] [--resume] [--fail-fast] [--dry-run] [--no-prometheus]
    loggp show [FILE]
    loggp report DIR [--out DIR]
    loggp exec [knob options] [--stats FILE] [--timeout SEC] -- CMD...
    loggp calibrate [-p PROVIDER] [knob options] [--json FILE]
    loggp demo [-p PROVIDER] [--out DIR]
    loggp testbed up N | down | status | set   [--prefix P] [wire knob options]
    loggp bench NAME [OPTIONS] | --list
    loggp validate-sim FILE [--ranks N,N...] [--out DIR]

Every expected failure is a LoggpError: one line on stderr and a non-zero exit (2 for a bad
knob or bad usage, 1 otherwise), never a traceback.  Each verb's parser and handler live in
the module of its name (README.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from rich.console import Console

from loggp.cli import bench, calibrate, demo, report, run, show, testbed, validate
from loggp.cli import exec as exec_
from loggp.errors import LoggpError
from loggp.measure.tables import TABLE_WIDTH
from loggp.plan.knobs import Knob

USAGE_EXIT = 2

Handler = Callable[[argparse.Namespace, Console], int]
# verb -> (adds its subparser, runs it); in the order of `loggp --help`.
VERBS: dict[str, tuple[Callable[[argparse._SubParsersAction], None], Handler]] = {
    "run": (run.add_parser, run.cmd_run),
    "show": (show.add_parser, show.cmd_show),
    "report": (report.add_parser, report.cmd_report),
    "exec": (exec_.add_parser, exec_.cmd_exec),
    "calibrate": (calibrate.add_parser, calibrate.cmd_calibrate),
    "demo": (demo.add_parser, demo.cmd_demo),
    "testbed": (testbed.add_parser, testbed.cmd_testbed),
    "bench": (bench.add_parser, bench.cmd_bench),
    "validate-sim": (validate.add_parser, validate.cmd_validate),
}


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line, like every other error of loggp."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="loggp",
        description="LogGP network-emulation testbed: run software beneath a shim that adds "
        "overhead, gap, latency and bulk gap, sweep the knobs, and draw slowdown curves.",
        epilog="'loggp COMMAND --help' describes each command; experiment files: "
        "docs/experiments.md.",
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    for add_parser, _ in VERBS.values():
        add_parser(sub)
    return parser


def _join_negative_values(argv: Sequence[str]) -> list[str]:
    """Turn "--gap -5us" into "--gap=-5us": argparse would take -5us for an option and
    report a missing value, where the useful error is the knob parser's."""
    options = {k.option for k in Knob} | testbed.NEGATABLE_OPTIONS
    out: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--":
            out.append(arg)
            out.extend(it)
            break
        if arg in options:
            value = next(it, None)
            if value is not None and value.startswith("-") and not value.startswith("--"):
                out.append(f"{arg}={value}")
                continue
            out.append(arg)
            if value is not None:
                out.append(value)
            continue
        out.append(arg)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(_join_negative_values(argv))
    console = Console(width=None if sys.stdout.isatty() else TABLE_WIDTH)
    try:
        return VERBS[args.command][1](args, console)
    except LoggpError as e:
        print(f"loggp: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("loggp: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"loggp: {e.filename or ''}{': ' if e.filename else ''}{e.strerror}", file=sys.stderr)
        return 1
