"""The `loggp` command.

    loggp run [FILE] [--out DIR] [--resume] [--fail-fast] [--dry-run] [--no-prometheus]
    loggp show [FILE]
    loggp report DIR [--out DIR]
    loggp exec [knob options] [--stats FILE] [--timeout SEC] -- CMD...
    loggp calibrate [-p PROVIDER] [knob options] [--json FILE]
    loggp demo [-p PROVIDER] [--out DIR]
    loggp testbed up N | down | status | set   [--prefix P] [wire knob options]

Every expected failure is a LoggpError: one line on stderr and a non-zero exit (2 for a bad
knob or bad usage, 1 otherwise), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from rich.console import Console

from loggp.cli.run import cmd_report, cmd_run, cmd_show
from loggp.cli.testbed import NEGATABLE_OPTIONS, cmd_testbed
from loggp.cli.testbed import add_parser as add_testbed_parser
from loggp.errors import LoggpError, UsageError
from loggp.measure.calibrate import DEFAULT_TIMEOUT_S, compare, run_calibrate
from loggp.measure.demo import DEFAULT_PROVIDER, POINT_TIMEOUT_S, run_demo
from loggp.measure.tables import TABLE_WIDTH, comparison_table
from loggp.plan.knobs import Knob, KnobSet
from loggp.run.proc import run_foreground
from loggp.run.provenance import provenance
from loggp.run.shim import calibrate_binary, process_env, shim_library

USAGE_EXIT = 2


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line, like every other error of loggp."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_knob_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("LogGP knobs (values need units; unset knobs are zero)")
    for knob in Knob:
        metavar = {Knob.BULK_GAP: "TIME/B", Knob.BANDWIDTH: "RATE"}.get(knob, "TIME")
        group.add_argument(
            knob.option, dest=knob.value, metavar=metavar, help=f"sets {knob.env}; {knob.forms}"
        )


def _knobs(args: argparse.Namespace) -> KnobSet:
    return KnobSet.parse({k.value: getattr(args, k.value) for k in Knob})


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than zero: '{text}'")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"not a positive whole number: '{text}'")
    return int(text)


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

    p = sub.add_parser(
        "run",
        help="run an experiment (the built-in default suite without FILE)",
        description="Run every point of an experiment file's plan with a progress bar, store "
        "the results in a run directory (results.sqlite, run.json) and write its report. "
        "Without FILE the built-in default suite runs.  A failed point is recorded and the "
        "run goes on; Ctrl-C leaves every finished point stored for --resume.",
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
    p.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    p.add_argument(
        "--prometheus",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="start a Prometheus server that scrapes the run "
        "(default: on when the prometheus binary is installed)",
    )
    p.add_argument("--no-report", action="store_true", help="do not write the report")

    p = sub.add_parser(
        "show",
        help="print an experiment's resolved plan",
        description="Validate an experiment file (default: the built-in suite) and print "
        "its resolved settings and every point of its plan.",
    )
    p.add_argument("file", nargs="?", type=Path, metavar="FILE", help="experiment YAML")

    p = sub.add_parser(
        "report",
        help="draw slowdown curves of a run directory",
        description="Write the report of a run directory: figures per knob (PNG, SVG), "
        "index.html with tables and provenance, results.csv.",
    )
    p.add_argument("run_dir", type=Path, metavar="DIR", help="a run directory of loggp run")
    p.add_argument("--out", type=Path, metavar="DIR", help="report directory (default DIR/report)")

    p = sub.add_parser(
        "exec",
        help="run a command beneath the shim",
        description="Run CMD beneath the libfabric shim with the given knobs and "
        "return its exit status.  LOGGP_* knobs inherited from the environment "
        "are dropped: only the options given here apply.",
    )
    _add_knob_options(p)
    p.add_argument(
        "--stats",
        type=Path,
        metavar="FILE",
        help="the shim appends one JSON line of counters per process to FILE",
    )
    p.add_argument(
        "--timeout",
        type=_positive,
        metavar="SEC",
        help="kill CMD after SEC seconds (default: no limit)",
    )
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD...")

    p = sub.add_parser(
        "calibrate",
        help="measure o, g, L, G with and without the shim",
        description="Run loggp-calibrate (server and client on 127.0.0.1) "
        "without the shim and beneath it, and print configured vs measured.",
    )
    p.add_argument(
        "-p",
        "--provider",
        default=DEFAULT_PROVIDER,
        help=f"libfabric provider (default: {DEFAULT_PROVIDER})",
    )
    _add_knob_options(p)
    p.add_argument("--json", type=Path, metavar="FILE", help="write both runs and the comparison")
    p.add_argument("-n", "--iterations", type=_count, help="samples per measured point")
    p.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT_S,
        metavar="SEC",
        help=f"per run (default: {DEFAULT_TIMEOUT_S:g})",
    )

    p = sub.add_parser(
        "demo",
        help="configured vs measured ΔL and Δo over shm (loggp-calibrate sweep)",
        description="Sweep ΔL and Δo in {0, 10, 100} us with loggp-calibrate and "
        "print configured Δ vs measured increase; results go to "
        "results/demo-<timestamp>/.",
    )
    p.add_argument(
        "-p",
        "--provider",
        default=DEFAULT_PROVIDER,
        help=f"libfabric provider (default: {DEFAULT_PROVIDER})",
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="parent of the results directory")
    p.add_argument("-n", "--iterations", type=_count, help="samples per measured point")
    p.add_argument(
        "--timeout",
        type=_positive,
        default=POINT_TIMEOUT_S,
        metavar="SEC",
        help=f"per point (default: {POINT_TIMEOUT_S:g})",
    )
    add_testbed_parser(sub)
    return parser


def cmd_exec(args: argparse.Namespace) -> int:
    knobs = _knobs(args)
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("exec: no command given (usage: loggp exec [knob options] -- CMD...)")
    env = process_env(knobs, stats_file=args.stats)
    return run_foreground(argv, env, args.timeout, f"command '{argv[0]}'")


def cmd_calibrate(args: argparse.Namespace, console: Console) -> int:
    knobs = _knobs(args)
    calibrate_binary()  # fail before the first run if the build is missing
    shim_library()
    err = Console(stderr=True)
    work = Path(tempfile.mkdtemp(prefix="loggp-calibrate-"))
    runs = {}
    for name, k in (("unshimmed", None), ("shimmed", knobs)):
        label = "without the shim" if k is None else f"beneath the shim, {k.label()}"
        err.print(f"loggp calibrate: {args.provider} {label} ...")
        runs[name] = run_calibrate(
            args.provider, k, work / name, iterations=args.iterations, timeout=args.timeout
        )
    comparisons = compare(knobs, runs["unshimmed"].report.results, runs["shimmed"].report.results)
    console.print(
        comparison_table(
            [(knobs.label(), c) for c in comparisons],
            f"loggp calibrate over {args.provider}: configured Δ vs measured increase over no shim",
        )
    )
    if args.json is not None:
        doc = {
            "kind": "loggp-calibrate-comparison",
            "version": 1,
            "provider": args.provider,
            "knobs": knobs.as_dict(),
            "unshimmed": runs["unshimmed"].raw,
            "shimmed": runs["shimmed"].raw,
            "shim_stats": runs["shimmed"].stats,
            "comparison": [c.as_dict() for c in comparisons],
            "provenance": provenance(),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
        console.print(f"results: {args.json}")
    # Logs are kept when a run fails (errors name them); after success they are noise.
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _join_negative_values(argv: Sequence[str]) -> list[str]:
    """Turn "--gap -5us" into "--gap=-5us": argparse would take -5us for an option and
    report a missing value, where the useful error is the knob parser's."""
    options = {k.option for k in Knob} | NEGATABLE_OPTIONS
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
        if args.command == "exec":
            return cmd_exec(args)
        if args.command == "calibrate":
            return cmd_calibrate(args, console)
        if args.command == "run":
            return cmd_run(args, console)
        if args.command == "show":
            return cmd_show(args, console)
        if args.command == "report":
            return cmd_report(args, console)
        if args.command == "testbed":
            return cmd_testbed(args, console)
        run_demo(
            console,
            provider=args.provider,
            out_root=args.out,
            iterations=args.iterations,
            timeout=args.timeout,
        )
        return 0
    except LoggpError as e:
        print(f"loggp: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("loggp: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"loggp: {e.filename or ''}{': ' if e.filename else ''}{e.strerror}", file=sys.stderr)
        return 1
