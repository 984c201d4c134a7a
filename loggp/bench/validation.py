"""The simulator against the emulator: every default-suite point at 2 and 4 ranks, both ways.

Runs `loggp validate-sim` of the built-in default suite (loggp/suites/default.yaml) at
--ranks (2 and 4 by default) into a directory, or reads one it wrote before (--run DIR),
and writes its section of docs/benchmarks.md: per rank count how many points agree, then
per point the emulated median slowdown with its interval, the simulated one, their relative
difference and whether they agree (loggp/analysis/crossval.py, the comparison validate-sim
prints).  The emulated half measures the host, so it is only meaningful on an idle machine.

    loggp bench validation [--ranks 2,4] [--run DIR]

Exit status 0 when every rank count was run and compared, 1 on any error, with one line on
stderr.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from loggp.analysis.crossval import AGREE_RULE, compare_section, section_dir
from loggp.analysis.errors import ReportError
from loggp.analysis.knobs import knob_info
from loggp.bench.doc import LoggpRunError, machine, machine_line, parser, publish, run_loggp
from loggp.cli.options import add_rank_counts
from loggp.cli.validate import DEFAULT_RANKS

NAME = "validation"
SUMMARY = "validate-sim of the default suite: emulated against simulated slowdown per point"
TOOL = "loggp-bench-validation"
SECTION_BEGIN = "<!-- validation:begin (written by loggp bench validation) -->"
SECTION_END = "<!-- validation:end -->"
SUITE = Path(__file__).resolve().parent.parent / "suites" / "default.yaml"


class ValidationBenchError(Exception):
    """A failure the CLI reports as one line."""


def interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def summarise(top: Path, ranks: tuple[int, ...]) -> list[dict[str, Any]]:
    """Each rank count's comparison, as validation.json holds it, with each point's Δ
    written in its knob's unit."""
    sections = []
    for n in ranks:
        if not section_dir(top, n).is_dir():
            raise ValidationBenchError(f"{section_dir(top, n)}: no runs at {n} ranks")
        doc = compare_section(top, n).as_dict()
        for p in doc["points"]:
            info = knob_info(p["knob"])
            p["delta"] = f"{info.symbol} = {p['x']:g} {info.unit}"
        sections.append(doc)
    return sections


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    wall = f"{doc['wall_s']:.0f} s" if doc["wall_s"] is not None else "not timed (--run)"
    totals = "; ".join(
        f"{s['ranks']} ranks: {s['agree']} of {s['compared']} agree" for s in doc["sections"]
    )
    lines = [
        SECTION_BEGIN,
        "## The simulator against the emulator (`loggp validate-sim`)",
        "",
        f"{machine_line(m)}  The default suite emulated (beneath the fabric shim) and "
        f"simulated (`shim: smpi`) at each rank count; wall time of both: {wall}.  {totals}.",
        "",
        f"Slowdowns are medians over the repeats; {AGREE_RULE}.  The interval is the emulated "
        "median's (none below six repeats).",
    ]
    for s in doc["sections"]:
        lines += [
            "",
            f"### {s['ranks']} ranks: {s['agree']} of {s['compared']} points agree",
            "",
            "| knob | workload | Δ | emulated [interval] | simulated | difference | agrees |",
            "|---|---|---|---:|---:|---:|---|",
        ]
        for p in s["points"]:
            lines.append(
                f"| {p['knob']} | {p['workload']} | {p['delta']} | {p['emulated']:.3f} "
                f"{interval(p['emulated_low'], p['emulated_high'])} | {p['simulated']:.3f} "
                f"| {p['rel_diff'] * 100:+.0f} % | {p['verdict']} |"
            )
    lines += ["", SECTION_END]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-validation.json")
    add_rank_counts(ap, DEFAULT_RANKS, "validate-sim runs the suite at every one")
    ap.add_argument("--run", type=Path, help="summarise this validate-sim directory instead")
    a = ap.parse_args(argv)
    try:
        info = machine()
        wall = None
        top = a.run
        if top is None:
            top = Path("results") / f"bench-validation-{time.strftime('%Y%m%d-%H%M%S')}"
            print(f"{TOOL}: validate-sim of the default suite into {top} ...", file=sys.stderr)
            ranks = ",".join(map(str, a.ranks))
            args = ("validate-sim", str(SUITE), "--out", str(top), "--ranks", ranks)
            wall = run_loggp(a.build, *args)
        doc = {
            "tool": TOOL,
            "version": 1,
            "machine": info,
            "run_dir": str(top),
            "wall_s": wall,
            "sections": summarise(top, a.ranks),
        }
        publish(TOOL, doc, a, markdown(doc), SECTION_BEGIN, SECTION_END)
    except (ValidationBenchError, LoggpRunError, ReportError, OSError) as exc:
        print(f"{TOOL}: {exc}", file=sys.stderr)
        return 1
    return 0
