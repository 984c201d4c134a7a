"""`loggp demo`: the quick ΔL and Δo sweep with loggp-calibrate (loggp/measure/demo.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from loggp.cli import options
from loggp.measure.demo import DEFAULT_PROVIDER, POINT_TIMEOUT_S, run_demo


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("-n", "--iterations", type=options.count, help="samples per measured point")
    p.add_argument(
        "--timeout",
        type=options.positive,
        default=POINT_TIMEOUT_S,
        metavar="SEC",
        help=f"per point (default: {POINT_TIMEOUT_S:g})",
    )


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    run_demo(
        console,
        provider=args.provider,
        out_root=args.out,
        iterations=args.iterations,
        timeout=args.timeout,
    )
    return 0
