"""Flat-combining benchmark: global stack and queue throughput per mode and mix at 2 and 4
processes at ΔL = 0 (the shim's knobs at 0), 10 and 100 µs, and TEPS per BFS variant and of
CC at 2 processes at ΔL = 0, 1, 10 and 100 µs.

    loggp bench combining --build build

Each configuration runs `repeats` times (default 1; the graph kernels at least 3) under
mpirun with MPI on its own transports, so loggp-combining's runtime is the only libfabric
user (provider tcp;ofi_rxm); the median over the repeats is reported, with the time the
processes spent blocked on the fabric's wait object (idle_wait_s).  A graph kernel faster
at a larger ΔL than at a smaller one is marked: the runtime's own waiting would be
shaping its timing.  Writes docs/benchmarks-combining.json and replaces its own section of
docs/benchmarks.md.  Run it on an otherwise idle machine: the uncombined modes serialise at
the master, and every other process on the cores shows in them.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, machine_line, parser, publish
from loggp.bench.mpi import run_mpi

NAME = "combining"
SUMMARY = "stack/queue ops/s per combining mode (ΔL 0/10/100 µs), BFS and CC TEPS (ΔL 0-100 µs)"
TOOL = "combining_bench"
BEGIN = "<!-- combining:begin (written by loggp bench combining) -->"
END = "<!-- combining:end -->"
PROVIDER = "tcp;ofi_rxm"
PROGRAM = Path("services") / "combining" / "loggp-combining"
MODES = ("none", "centralized", "local", "full")
MIXES = {"push": "100", "50/50": "50"}
NPS = (2, 4)
LATENCIES_US = (0, 10, 100)
KERNEL_LATENCIES_US = (0, 1, 10, 100)
KERNEL_REPEATS = 3
# Operations per process: the uncombined modes cross to the master for every one.
OPS = {"none": 1000, "centralized": 5000, "local": 100000, "full": 100000}
# Graph kernels at 2 processes: (label, args, metric).
GRAPH_ARGS = ["-G", "10"]
KERNELS = (
    ("BFS combined queue", ["-s", "bfs", "-m", "full", "-r", "8"], "harmonic_mean_teps"),
    ("BFS uncombined queue", ["-s", "bfs", "-m", "none", "-r", "8"], "harmonic_mean_teps"),
    ("BFS direction-optimizing", ["-s", "bfs", "-m", "tuned", "-r", "8"], "harmonic_mean_teps"),
    ("CC", ["-s", "cc", "-m", "tuned"], "teps"),
)


def run_one(build: Path, np: int, args: list[str], latency_us: int) -> dict[str, Any]:
    what = f"loggp-combining {' '.join(args)} at -np {np}"
    res, stderr = run_mpi(TOOL, what, build, np, [str(build / PROGRAM), *args], latency_us,
                          PROVIDER, 600)  # fmt: skip
    if not res["valid"]:
        sys.exit(f"{TOOL}: {what} at ΔL={latency_us}us found wrong results:\n{stderr}")
    return res


VECTOR_METRICS = ("ops_per_s", "ops_per_msg", "ops_per_fabric_msg", "matched", "master_combined")


def summary(runs: list[dict[str, Any]], metrics: tuple[str, ...]) -> dict[str, float]:
    """The median over the repeats of each metric and of the libfabric messages."""
    out = {k: statistics.median(r["metrics"][k] for r in runs) for k in metrics}
    out["msgs"] = statistics.median(r["msgs"]["total"] for r in runs)
    return out


def measure(build: Path, repeats: int) -> list[dict[str, Any]]:
    rows = []
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
    return rows


def measure_kernels(build: Path, repeats: int) -> list[dict[str, Any]]:
    rows = []
    for label, args, metric in KERNELS:
        for lat in KERNEL_LATENCIES_US:
            runs = [run_one(build, 2, [*args, *GRAPH_ARGS], lat) for _ in range(repeats)]
            s = summary(runs, (metric, "idle_wait_s"))
            rows.append({"kernel": label, "latency_us": lat, "teps": s[metric],
                         "idle_wait_s": s["idle_wait_s"], "msgs": s["msgs"]})  # fmt: skip
            print(f"{TOOL}: {label} ΔL {lat} us: {s[metric]:.0f} TEPS", flush=True)
    return rows


def faster_later(rows: list[dict[str, Any]]) -> set[tuple[str, int]]:
    """(kernel, ΔL) of each row with more TEPS than a row of the same kernel at smaller ΔL."""
    out = set()
    for r in rows:
        if any(q["kernel"] == r["kernel"] and q["latency_us"] < r["latency_us"]
               and q["teps"] < r["teps"] for q in rows):  # fmt: skip
            out.add((r["kernel"], r["latency_us"]))
    return out


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        BEGIN,
        "## Flat-combining global structures (loggp-combining)",
        "",
        machine_line(m),
        f"Settings: provider {PROVIDER}, MPI on its own transports, 2048 workers per process, "
        "combining buffer 1024, aggregation on; operations per process "
        + ", ".join(f"{mode} {n}" for mode, n in OPS.items())
        + f"; median of "
        f"{doc['repeats']} run(s).  ops/msg is operations per batch sent to the master, "
        "ops/fabric msg per libfabric message of any kind (services/combining/README.md).",
        "",
        "| structure | mix | processes | ΔL | none ops/s | centralized ops/s | local ops/s "
        "| full ops/s | local ÷ none | local ops/msg | local ops/fabric msg |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
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
                        + f" | {ratio:.0f}× | {cell[2]['ops_per_msg']:.0f} "
                        f"| {cell[2]['ops_per_fabric_msg']:.0f} |"
                    )
    inverted = faster_later(doc["kernels"])
    out += [
        "",
        f"Graph kernels at 2 processes, scale {GRAPH_ARGS[1]} (BFS: harmonic-mean TEPS over 8 "
        f"roots), median of {max(doc['repeats'], KERNEL_REPEATS)} runs; idle wait is the time "
        "the processes spent blocked on the fabric's wait object with nothing to do (summed). "
        "A row marked ⚠ has more TEPS than the same kernel at a smaller ΔL.",
        "",
        "| kernel | ΔL | TEPS | idle wait s | libfabric msgs |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in doc["kernels"]:
        mark = " ⚠" if (r["kernel"], r["latency_us"]) in inverted else ""
        out.append(
            f"| {r['kernel']} | {r['latency_us']} µs | {r['teps']:.0f}{mark} "
            f"| {r['idle_wait_s']:.3f} | {r['msgs']:.0f} |"
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
    doc["rows"] = measure(build, args.repeats)
    doc["kernels"] = measure_kernels(build, max(args.repeats, KERNEL_REPEATS))
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0
