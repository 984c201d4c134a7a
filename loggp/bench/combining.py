"""Flat-combining benchmark: global stack and queue throughput per mode and mix at 2 and 4
processes, and TEPS per BFS variant, without added latency and at ΔL = 10 and 100 µs.

    loggp bench combining --build build

Each configuration runs `repeats` times (default 1) under mpirun with MPI on its own
transports, so loggp-combining's runtime is the only libfabric user (provider
tcp;ofi_rxm); the median over the repeats is reported.  Writes
docs/benchmarks-combining.json and replaces its own section of docs/benchmarks.md.  Run it
on an otherwise idle machine: the uncombined modes serialise at the master, and every
other process on the cores shows in them.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, parser, publish
from loggp.bench.mpi import run_mpi

NAME = "combining"
SUMMARY = "global stack/queue ops/s per combining mode and BFS TEPS per variant, ΔL 0/10/100 µs"
TOOL = "combining_bench"
BEGIN = "<!-- combining:begin (written by loggp bench combining) -->"
END = "<!-- combining:end -->"
PROVIDER = "tcp;ofi_rxm"
PROGRAM = Path("services") / "combining" / "loggp-combining"
MODES = ("none", "centralized", "local", "full")
MIXES = {"push": "100", "50/50": "50"}
NPS = (2, 4)
LATENCIES_US = (0, 10, 100)
# Operations per process: the uncombined modes cross to the master for every one.
OPS = {"none": 1000, "centralized": 5000, "local": 100000, "full": 100000}
BFS = {"combined queue": "full", "uncombined queue": "none", "direction-optimizing": "tuned"}
BFS_ARGS = ["-G", "10", "-r", "8"]


def run_one(build: Path, np: int, args: list[str], latency_us: int) -> dict[str, Any]:
    what = f"loggp-combining {' '.join(args)} at -np {np}"
    res, stderr = run_mpi(TOOL, what, build, np, [str(build / PROGRAM), *args], latency_us,
                          PROVIDER, 600)  # fmt: skip
    if not res["valid"]:
        sys.exit(f"{TOOL}: {what} at ΔL={latency_us}us found wrong results:\n{stderr}")
    return res


VECTOR_METRICS = ("ops_per_s", "ops_per_msg", "matched", "master_combined")


def summary(runs: list[dict[str, Any]], metrics: tuple[str, ...]) -> dict[str, float]:
    """The median over the repeats of each metric and of the libfabric messages."""
    out = {k: statistics.median(r["metrics"][k] for r in runs) for k in metrics}
    out["msgs"] = statistics.median(r["msgs"]["total"] for r in runs)
    return out


def measure(build: Path, repeats: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, bfs = [], []
    for lat in LATENCIES_US:
        for structure in ("stack", "queue"):
            for mix, pct in MIXES.items():
                for np in NPS:
                    for mode in MODES:
                        args = ["-s", structure, "-m", mode, "-n", str(OPS[mode]), "-p", pct]
                        runs = [run_one(build, np, args, lat) for _ in range(repeats)]
                        row = {"structure": structure, "mix": mix, "np": np, "mode": mode,
                               "latency_us": lat, **summary(runs, VECTOR_METRICS)}  # fmt: skip
                        rows.append(row)
                        print(f"{TOOL}: {structure} {mix} np {np} {mode} ΔL {lat} us: "
                              f"{row['ops_per_s']:.0f} ops/s", flush=True)  # fmt: skip
        for variant, mode in BFS.items():
            args = ["-s", "bfs", "-m", mode, *BFS_ARGS]
            runs = [run_one(build, 2, args, lat) for _ in range(repeats)]
            bfs.append({"variant": variant, "np": 2, "latency_us": lat,
                        **summary(runs, ("harmonic_mean_teps",))})  # fmt: skip
            print(
                f"{TOOL}: bfs {variant} ΔL {lat} us: {bfs[-1]['harmonic_mean_teps']:.0f} TEPS",
                flush=True,
            )
    return rows, bfs


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        BEGIN,
        "## Flat-combining global structures (loggp-combining)",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, libfabric "
        f"{m['libfabric']}, run {m['date']} (load average {m['loadavg_1min']:.2f} at start).",
        f"Settings: provider {PROVIDER}, MPI on its own transports, 2048 workers per process, "
        "combining buffer 1024, aggregation on; operations per process "
        + ", ".join(f"{mode} {n}" for mode, n in OPS.items())
        + f"; median of "
        f"{doc['repeats']} run(s).  ops/msg is operations per batch sent to the master "
        "(services/combining/README.md).",
        "",
        "| structure | mix | processes | ΔL | none ops/s | centralized ops/s | local ops/s "
        "| full ops/s | local ÷ none | local ops/msg |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by = {(r["structure"], r["mix"], r["np"], r["latency_us"], r["mode"]): r for r in doc["rows"]}
    for lat in LATENCIES_US:
        for structure in ("stack", "queue"):
            for mix in MIXES:
                for np in NPS:
                    cell = [by[(structure, mix, np, lat, mode)] for mode in MODES]
                    ratio = cell[2]["ops_per_s"] / max(cell[0]["ops_per_s"], 1e-9)
                    out.append(
                        f"| {structure} | {mix} | {np} | {lat} µs | "
                        + " | ".join(f"{c['ops_per_s']:.0f}" for c in cell)
                        + f" | {ratio:.0f}× | {cell[2]['ops_per_msg']:.0f} |"
                    )
    out += [
        "",
        f"BFS at 2 processes, scale {BFS_ARGS[1]}, {BFS_ARGS[3]} roots (harmonic-mean TEPS):",
        "",
        "| variant | ΔL | TEPS | libfabric msgs |",
        "|---|---:|---:|---:|",
    ]
    for r in doc["bfs"]:
        out.append(
            f"| {r['variant']} | {r['latency_us']} µs | {r['harmonic_mean_teps']:.0f} "
            f"| {r['msgs']:.0f} |"
        )
    out += [
        "",
        "Without local combining every operation crosses to the master and back and then to "
        "the element's owner, one at a time, so ΔL divides its throughput; combined batches "
        "carry up to the buffer (more for the matched stack mix) per crossing.",
        END,
        "",
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-combining.json")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args(argv)
    build = args.build.resolve()
    if not (build / PROGRAM).is_file():
        sys.exit(f"{TOOL}: {build / PROGRAM} not built (cmake --build {build})")
    doc: dict[str, Any] = {"tool": TOOL, "machine": machine(), "repeats": args.repeats}
    doc["rows"], doc["bfs"] = measure(build, args.repeats)
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0
