"""KAP benchmark: phase maxima of the KVS at 2, 4 and 8 processes, 8 B and 2 KiB values,
without the shim and beneath it at ΔL = 10 µs and 100 µs.

    loggp bench kvs --build build

Each configuration runs `repeats` times (default 3) under mpirun with MPI on its own
transports, so the brokers are the only libfabric users (provider tcp;ofi_rxm); every
phase's maximum over the processes is reported as the median over the repeats.  Writes
docs/benchmarks-kvs.json and replaces its own section of docs/benchmarks.md.  Run it on
an otherwise idle machine: with 8 processes on 2 cores, other work shows in every number.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, parser, publish
from loggp.bench.mpi import run_mpi

NAME = "kvs"
SUMMARY = "KVS phase maxima (KAP) at 2, 4, 8 processes, without the shim and at ΔL 10, 100 µs"
TOOL = "kap_bench"
BEGIN = "<!-- kvs:begin (written by loggp bench kvs) -->"
END = "<!-- kvs:end -->"
PROVIDER = "tcp;ofi_rxm"
PHASES = ("setup", "producer", "sync", "consumer")
NPS = (2, 4, 8)
VALUES = (8, 2048)
LATENCIES_US = (0, 10, 100)
# Each producer puts 16 objects, each consumer gets 16: every phase has work to time.
KAP_ARGS = ["-i", "16", "-c", "16", "-W", "60"]


def run_kap(build: Path, np: int, vsize: int, latency_us: int) -> dict[str, Any]:
    argv = [str(build / "workloads" / "kap" / "kap"), "-p", str(vsize), *KAP_ARGS]
    what = f"kap -np {np} -p {vsize}"
    res, stderr = run_mpi(TOOL, what, build, np, argv, latency_us, PROVIDER, 300)
    if not res["valid"]:
        sys.exit(f"{TOOL}: {what} at ΔL={latency_us}us read wrong values:\n{stderr}")
    return res


def measure(build: Path, repeats: int) -> list[dict[str, Any]]:
    rows = []
    for lat in LATENCIES_US:
        for vsize in VALUES:
            for np in NPS:
                runs = [run_kap(build, np, vsize, lat) for _ in range(repeats)]
                row: dict[str, Any] = {"np": np, "value_bytes": vsize, "latency_us": lat}
                for ph in PHASES:
                    row[f"{ph}_max_ms"] = statistics.median(
                        r["metrics"][f"{ph}_max_s"] * 1e3 for r in runs
                    )
                row["get_p50_us"] = statistics.median(r["metrics"]["get_us_p50"] for r in runs)
                row["msgs"] = statistics.median(r["msgs"]["total"] for r in runs)
                rows.append(row)
                print(f"{TOOL}: np {np} value {vsize} B ΔL {lat} us: sync "
                      f"{row['sync_max_ms']:.3f} ms, consumer {row['consumer_max_ms']:.3f} ms",
                      flush=True)  # fmt: skip
    return rows


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        BEGIN,
        "## KVS phase maxima (KAP)",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, libfabric "
        f"{m['libfabric']}, run {m['date']} (load average {m['loadavg_1min']:.2f} at start).",
        f"Settings: provider {PROVIDER}, MPI on its own transports and yielding when idle, kap "
        f"`{' '.join(KAP_ARGS)}` (16 puts per producer, 16 gets per consumer, one "
        f"directory, fence sync), producers = consumers = processes, median of "
        f"{doc['repeats']} runs of each phase's maximum over the processes.",
        "",
        "| processes | value | ΔL | setup ms | producer ms | sync (fence) ms | consumer ms "
        "| get p50 µs | broker msgs |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in doc["rows"]:
        lat = f"{r['latency_us']} µs" if r["latency_us"] else "no shim"
        out.append(
            f"| {r['np']} | {r['value_bytes']} B | {lat} | {r['setup_max_ms']:.1f} | "
            f"{r['producer_max_ms']:.3f} | {r['sync_max_ms']:.3f} | "
            f"{r['consumer_max_ms']:.3f} | {r['get_p50_us']:.1f} | {r['msgs']:.0f} |"
        )
    out += [
        "",
        "Setup includes opening the fabric and the first connections.  A fence crosses the "
        "tree twice (batches up, the new root down), so beneath ΔL its maximum grows by at "
        "least 2·depth·ΔL; a consumer's first get faults its objects from the root, one "
        "round trip per tree level.",
        END,
        "",
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-kvs.json")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    build = args.build.resolve()
    if not (build / "workloads" / "kap" / "kap").is_file():
        sys.exit(f"{TOOL}: {build}/workloads/kap/kap not built (cmake --build {build})")
    doc = {"tool": TOOL, "machine": machine(), "repeats": args.repeats}
    doc["rows"] = measure(build, args.repeats)
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0
