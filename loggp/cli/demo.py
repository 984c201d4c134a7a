"""`loggp demo`: the quick ΔL and Δo sweep with loggp-calibrate (loggp/measure/demo.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from loggp.cli import options
from loggp.measure.demo import POINT_TIMEOUT_S, run_demo
from loggp.run.provider import check_provider


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="configured vs measured ΔL and Δo over shm (loggp-calibrate sweep)",
        description="Sweep ΔL and Δo in {0, 10, 100} us with loggp-calibrate and "
        "print configured Δ vs measured increase; results go to "
        "results/demo-<timestamp>/.",
    )
    options.add_provider_option(p)
    p.add_argument("--out", type=Path, metavar="DIR", help="parent of the results directory")
    options.add_sampling_options(p, POINT_TIMEOUT_S, "point")


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    check_provider(args.provider, "--provider")
    run_demo(
        console,
        provider=args.provider,
        out_root=args.out,
        iterations=args.iterations,
        timeout=args.timeout,
    )
    return 0
