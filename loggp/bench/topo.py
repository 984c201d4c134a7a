"""What the fabric shim's per-destination state costs: a 2-rank ping-pong with and without a
network's pair table.

Four settings of the same ping-pong beneath the fabric shim over tcp;ofi_rxm (launcher
local), each its own `loggp run` of one point, taken in turn so slow drift of the host
falls on all four alike:

  uniform 0      knobs at zero, no network
  table 0        knobs at zero, a network whose pairs add nothing (both ranks on one node:
                 the shim loads the table, and no send looks anything up)
  uniform 10us   ΔL 10 µs for every message, no network
  table 10us     knobs at zero, a network adding 10 µs between the two ranks (every send
                 resolves its destination's rank and adds its pair's latency)

"table 0 − uniform 0" is what a table costs when it adds nothing (the zero-knob overhead
must not change); "table 10us − uniform 10us" what resolving destinations costs a message,
the delays being equal.  The shims' counters confirm each setting did what it says
(pair_msgs, pair_unmatched).

    .venv/bin/loggp bench topo [--rounds 4000] [--repeats 7]

Exit status 0 when every run was measured and written, 1 on any error (one line).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from loggp.analysis.store import load_run
from loggp.bench.doc import LoggpRunError, machine, machine_line, parser, publish, run_loggp
from loggp.errors import LoggpError

NAME = "topo"
SUMMARY = "what the fabric shim's per-destination state costs a ping-pong (zero-knob and 10 µs)"
TOOL = "loggp-bench-topo"
SECTION_BEGIN = "<!-- topo:begin (written by loggp bench topo) -->"
SECTION_END = "<!-- topo:end -->"
DELTA = "10us"
SETTINGS = ("uniform 0", "table 0", f"uniform {DELTA}", f"table {DELTA}")


class TopoBenchError(LoggpError):
    """A run stored no measured point, or its counters contradict its setting."""


def experiment(setting: str, rounds: int) -> dict[str, Any]:
    kind, value = setting.split()
    exp: dict[str, Any] = {
        "version": 1,
        "name": f"topo-{kind}-{value}",
        "timeout": "120s",
        "launcher": {"kind": "local"},
        "emulator": {"shim": "fabric", "provider": "tcp;ofi_rxm"},
        "workloads": [
            {
                "name": "pingpong",
                "program": "workloads/pingpong/pingpong",
                "ranks": 2,
                "args": ["-n", str(rounds)],
            },
        ],  # fmt: skip
    }
    if kind == "uniform" and value != "0":
        exp["emulator"]["baseline"] = {"latency": value}
    if kind == "table":
        node = {"name": "node", "latency": value if value != "0" else "0us"}
        placement = [0, 1] if value != "0" else [0, 0]
        exp["network"] = {"nodes": 2, "placement": placement, "levels": [node]}
    return exp


def measure(build: Path, work: Path, setting: str, rounds: int, rep: int) -> dict[str, Any]:
    exp = work / f"{setting.replace(' ', '-')}-r{rep}.yaml"
    exp.write_text(yaml.safe_dump(experiment(setting, rounds)))
    out = work / exp.stem
    run_loggp(build, "run", str(exp), "--out", str(out), "--no-prometheus", "--no-report")
    points = [p for p in load_run(out).points if p.measured]
    if len(points) != 1:
        raise TopoBenchError(f"{out}: expected one measured point, found {len(points)}")
    p = points[0]
    metrics = json.loads(p.row["result"])["metrics"]
    lines = [s for s in json.loads(p.row["shim_stats"]) if s.get("provider") == "tcp"]
    paired = sum(sum(int(n) for n in s.get("pair_msgs", [])) for s in lines)
    unmatched = sum(int(s.get("pair_unmatched", 0)) for s in lines)
    if setting.startswith("table") and not setting.endswith(" 0") and paired < rounds:
        raise TopoBenchError(f"{out}: {paired} messages found their pair, expected {rounds}+")
    return {
        "setting": setting,
        "repeat": rep,
        "status": p.status,
        "half_rtt_median_us": float(metrics["half_rtt_median_us"]),
        "half_rtt_min_us": float(metrics["half_rtt_min_us"]),
        "pair_msgs": paired,
        "pair_unmatched": unmatched,
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per setting: the median over repeats of each run's median and least half round trip,
    and the spread (least, most) of the medians."""
    out: dict[str, dict[str, float]] = {}
    for s in SETTINGS:
        med = [r["half_rtt_median_us"] for r in runs if r["setting"] == s]
        low = [r["half_rtt_min_us"] for r in runs if r["setting"] == s]
        out[s] = {
            "median_us": statistics.median(med),
            "min_us": statistics.median(low),
            "lo_us": min(med),
            "hi_us": max(med),
        }
    return out


def markdown(doc: dict[str, Any]) -> str:
    s = doc["summary"]

    def diff(a: str, b: str, key: str) -> float:
        return s[a][key] - s[b][key]

    def spread(a: str) -> float:
        return s[a]["hi_us"] - s[a]["lo_us"]

    zero, fast0 = (diff("table 0", "uniform 0", k) for k in ("median_us", "min_us"))
    table, uniform = f"table {DELTA}", f"uniform {DELTA}"
    delta, fast = (diff(table, uniform, k) for k in ("median_us", "min_us"))
    lines = [
        SECTION_BEGIN,
        "## Per-destination state of the fabric shim: what a network's pair table costs",
        "",
        machine_line(doc["machine"]),
        "",
        f"`loggp bench topo`: a 2-rank ping-pong of {doc['rounds']} rounds over tcp;ofi_rxm "
        f"beneath the fabric shim, {doc['repeats']} runs of each setting taken in turn. "
        "`table 0`: a network whose pairs add nothing (both ranks on one node), so the "
        f"shim loads the table and no send looks anything up; `table {DELTA}`: a network "
        f"adding {DELTA} between the ranks, so every send resolves its destination's rank, "
        f"beside the same {DELTA} as a uniform ΔL. Half round trip in µs: the median over "
        "the runs of each run's median (the least and most run medians) and of its fastest "
        "round.",
        "",
        "| setting | half RTT median | runs' range | fastest | messages paired | unmatched |",
        "|---|---|---|---|---|---|",
    ]
    for name in SETTINGS:
        v = s[name]
        runs = [r for r in doc["runs"] if r["setting"] == name]
        lines.append(
            f"| {name} | {v['median_us']:.2f} | {v['lo_us']:.2f}–{v['hi_us']:.2f} | "
            f"{v['min_us']:.2f} | {max(r['pair_msgs'] for r in runs)} | "
            f"{max(r['pair_unmatched'] for r in runs)} |"
        )
    lines += [
        "",
        f"A table that adds nothing: {zero:+.2f} µs a half round trip against none "
        f"({fast0:+.2f} µs on the fastest rounds), where the run medians of one setting "
        f"span {max(spread('uniform 0'), spread('table 0')):.2f} µs; resolving "
        f"destinations at {DELTA}: {delta:+.2f} µs against the uniform ΔL ({fast:+.2f} µs "
        f"on the fastest rounds), where they span "
        f"{max(spread(uniform), spread(table)):.2f} µs.",
    ]
    return "\n".join([*lines, "", SECTION_END, ""])


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-topo.json")
    ap.add_argument("--rounds", type=int, default=4000, help="ping-pong rounds a run")
    ap.add_argument("--repeats", type=int, default=7, help="runs of each setting")
    a = ap.parse_args(argv)
    work = Path("results") / f"bench-topo-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        info = machine()
        work.mkdir(parents=True)
        runs = [
            measure(a.build, work, s, a.rounds, rep)
            for rep in range(a.repeats)
            for s in SETTINGS
        ]  # fmt: skip
        doc = {
            "tool": TOOL,
            "version": 1,
            "machine": info,
            "rounds": a.rounds,
            "repeats": a.repeats,
            "runs": runs,
            "summary": summary(runs),
        }
        publish(TOOL, doc, a, markdown(doc), SECTION_BEGIN, SECTION_END)
    except (LoggpError, LoggpRunError, OSError) as exc:
        print(f"{TOOL}: {exc}", file=sys.stderr)
        return 1
    return 0
