"""How faithfully both shims draw ΔL from a distribution: the KS distance of their own
histograms of the drawn delays to the configured shape.

For each shape (uniform, normal, pareto, paretonormal, each with a spread of 20 µs around
ΔL = 100 µs) one `loggp run` of a 2-rank ping-pong beneath the fabric shim (launcher
local) and, as root, one beneath the wire of a 2-host namespace testbed (launcher netns,
started here and removed after).  Each run's point at ΔL 100 µs stores the shims'
histograms (`delay_hist`); the distance is the report's (loggp/analysis/delays.py): the
measured CDF against the configured one at the histogram's bucket edges, the configured
one tabulated from the shims' own quantile functions (emulator/core/include/lgp/dist.h).
Beside it, 1.95/√n: the distance a true sample of n delays exceeds with probability 0.001,
so a distance below it is as good as the sample size can show.  The fabric shim draws one
delay a message; the wire one a packet (TCP's acknowledgements too).

    sudo .venv/bin/loggp bench dist [--rounds 2000] [--no-wire]

Exit status 0 when every run was measured and written, 1 on any error (one line).
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from loggp.analysis.delays import configured_delays, drawn, ks_distance
from loggp.analysis.store import load_run
from loggp.bench.doc import LoggpRunError, machine, machine_line, parser, publish, run_loggp
from loggp.errors import LoggpError
from loggp.net import testbed

NAME = "dist"
SUMMARY = "both shims' drawn delays against the configured shape (KS distance)"
TOOL = "loggp-bench-dist"
SECTION_BEGIN = "<!-- dist:begin (written by loggp bench dist) -->"
SECTION_END = "<!-- dist:end -->"
SHAPES = ("uniform:20us", "normal:20us", "pareto:20us", "paretonormal:20us")
LATENCY = "100us"
PREFIX = "lgpdist"  # the wire's testbed
KS_CRITICAL = 1.95  # × 1/√n: exceeded by a true sample with probability 0.001


class DistBenchError(LoggpError):
    """A run stored no drawn delays to judge."""


def experiment(shim: str, shape: str, rounds: int) -> dict[str, Any]:
    launcher = {"kind": "netns", "prefix": PREFIX} if shim == "wire" else {"kind": "local"}
    return {
        "version": 1,
        "name": f"dist-{shim}-{shape.split(':')[0]}",
        "timeout": "120s",
        "launcher": launcher,
        "emulator": {"shim": shim, "provider": "tcp;ofi_rxm", "latency_dist": shape},
        "sweep": {"knobs": {"latency": [LATENCY]}},
        "workloads": [
            {
                "name": "pingpong",
                "program": "workloads/pingpong/pingpong",
                "ranks": 2,
                "args": ["-n", str(rounds)],
            },
        ],  # fmt: skip
    }


def measure(build: Path, work: Path, shim: str, shape: str, rounds: int) -> dict[str, Any]:
    exp = work / f"{shim}-{shape.split(':')[0]}.yaml"
    exp.write_text(yaml.safe_dump(experiment(shim, shape, rounds)))
    out = work / exp.stem
    wall = run_loggp(build, "run", str(exp), "--out", str(out), "--no-prometheus", "--no-report")
    points = [p for p in load_run(out).points if p.sweep_knob == "latency" and p.measured]
    got = drawn(points[0]) if points else None
    configured = configured_delays(shape, got.latency_ns) if got else None
    if got is None or configured is None:
        raise DistBenchError(f"{out}: the point at ΔL {LATENCY} stored no drawn delays")
    n = int(got.counts.sum())
    return {
        "shim": shim,
        "shape": shape,
        "latency": LATENCY,
        "delays": n,
        "ks": ks_distance(got, configured),
        "ks_critical": KS_CRITICAL / math.sqrt(n),
        "bucket_ns": got.bucket_ns,
        "wall_s": round(wall, 1),
        "run_dir": str(out),
    }


def markdown(doc: dict[str, Any]) -> str:
    lines = [
        SECTION_BEGIN,
        "## Delay distributions: drawn against configured",
        "",
        machine_line(doc["machine"]),
        "",
        f"`loggp bench dist`: a 2-rank ping-pong of {doc['rounds']} rounds at ΔL "
        f"{LATENCY}, one `loggp run` a shape and shim; the KS distance of the delays the "
        "shim counted (`delay_hist`) to the configured shape at the histogram's bucket "
        "edges (`loggp/analysis/delays.py`), and 1.95/√n, the distance a true sample of n "
        "delays exceeds with probability 0.001.  The fabric shim draws a delay a message, "
        "the wire one a packet.",
        "",
        "| shim | shape | delays | KS distance | 1.95/√n | within |",
        "|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        within = "yes" if r["ks"] <= r["ks_critical"] else "no"
        lines.append(
            f"| {r['shim']} | {r['shape']} | {r['delays']} | {r['ks']:.4f} | "
            f"{r['ks_critical']:.4f} | {within} |"
        )
    if doc.get("wire_skipped"):
        lines += ["", f"The wire was not measured: {doc['wire_skipped']}."]
    return "\n".join([*lines, "", SECTION_END, ""])


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-dist.json")
    ap.add_argument("--rounds", type=int, default=2000, help="ping-pong rounds a run")
    ap.add_argument("--no-wire", action="store_true", help="the fabric shim only")
    a = ap.parse_args(argv)
    work = Path("results") / f"bench-dist-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        info = machine()
        work.mkdir(parents=True)
        runs = [measure(a.build, work, "fabric", s, a.rounds) for s in SHAPES]
        skipped = "--no-wire" if a.no_wire else None
        if not skipped and os.geteuid() != 0:
            skipped = "not root (the namespace testbed needs root)"
        if not skipped:
            testbed.down(PREFIX)
            testbed.up(PREFIX, 2, [], None)
            try:
                runs += [measure(a.build, work, "wire", s, a.rounds) for s in SHAPES]
            finally:
                testbed.down(PREFIX)
        doc = {
            "tool": TOOL,
            "version": 1,
            "machine": info,
            "rounds": a.rounds,
            "runs": runs,
            "wire_skipped": skipped,
        }
        publish(TOOL, doc, a, markdown(doc), SECTION_BEGIN, SECTION_END)
    except (LoggpError, LoggpRunError, OSError) as exc:
        print(f"{TOOL}: {exc}", file=sys.stderr)
        return 1
    return 0
