"""`loggp bench NAME [OPTIONS]`: the benchmark programs of docs/benchmarks.md (loggp/bench/).

Each benchmark takes its own options (`loggp bench NAME --help`), writes a JSON document
and replaces its own section of docs/benchmarks.md; its exit status is the command's.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

from rich.console import Console

from loggp.errors import UsageError

# The modules of loggp/bench/, imported when asked for: they import the analysis (and so
# matplotlib), which every other verb of the command would otherwise pay for at start.
BENCHES = (
    "accuracy",
    "collio",
    "combining",
    "default",
    "dist",
    "kvs",
    "kvserver",
    "pfs",
    "prefetch",
    "sim-speed",
    "topo",
    "validation",
    "wire",
)


def bench_module(name: str) -> ModuleType:
    """The module of a benchmark: its name with '_' for '-' (sim-speed: sim_speed.py)."""
    return importlib.import_module(f"loggp.bench.{name.replace('-', '_')}")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark of docs/benchmarks.md",
        description="Run benchmark NAME with its own options ('loggp bench NAME --help'); "
        "it writes a JSON document and its section of docs/benchmarks.md.",
    )
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    p.add_argument("name", nargs="?", metavar="NAME", help=f"one of {', '.join(BENCHES)}")
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="OPTIONS", help="NAME's options")


def cmd_bench(args: argparse.Namespace, console: Console) -> int:
    if args.list:
        for name in BENCHES:
            print(f"{name:<9} {bench_module(name).SUMMARY}")
        return 0
    names = ", ".join(BENCHES)
    if args.name is None:
        raise UsageError(f"bench: no benchmark given: expected one of {names} (or --list)")
    if args.name not in BENCHES:
        raise UsageError(f"unknown benchmark '{args.name}': expected one of {names}")
    return int(bench_module(args.name).main(args.argv))
