"""pfs benchmark: the striped file store's per-request time against the LogGP model, and its
throughput at 1, 2 and 4 servers against the local disk.

    loggp bench pfs --build build

Request time: one client (pfsio, 1 rank, one request in flight) reads 4 KiB, 64 KiB and
1 MiB blocks from 4 servers with 1 MiB stripes, without the shim and beneath ΔL = 100 µs,
Δo = 20 µs and a 100 MB/s bandwidth (each knob alone; the servers beneath the same
knobs).  A request is a small message to a server and a reply; up to 16 KiB the data is
in the reply, beyond it the server writes it into the client's buffer by RMA first
(services/pfs/README.md), so the model's added time is
    Δ = 2·ΔL + 2·(Δo_s + Δo_r) + n·ΔG                n ≤ 16 KiB
    Δ = 2·ΔL + 2·(Δo_s + Δo_r) + Δo_s + n·ΔG         n > 16 KiB
(each message pays o_s where it is sent and o_r where it is received, the RMA write o_s
only: nothing is received; its ΔL overlaps the reply's, which leaves behind it; ΔG only
where bytes are).  Idle wait: the 4 KiB read again, each after 100 ms of quiet
(pfsio -w), against the same read back to back: the services block on their fabric's
wait object, so what an idle store adds is the host's own cost of waking idle threads
(docs/design.md).  Throughput:
2 ranks each writing then reading 32 MiB sequentially, 4 requests in flight, at 1, 2 and
4 servers; the local disk by fio on a directory of the same file system (page cache, as the
servers use it).  Writes docs/benchmarks-pfs.json and replaces
its own section of docs/benchmarks.md; the median of `--repeats` runs.
"""

from __future__ import annotations

import math
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, machine_line, parser, publish
from loggp.bench.store import PROVIDER, Store, environment
from loggp.drivers.fio import report, summary
from loggp.plan.knobs import KnobSet
from loggp.results.protocol import result_line
from loggp.run.ompi import shim_mca_args

NAME = "pfs"
SUMMARY = "file store request time vs the LogGP model, throughput at 1-4 servers vs disk"
TOOL = "pfs_bench"
BEGIN = "<!-- pfs:begin (written by loggp bench pfs) -->"
END = "<!-- pfs:end -->"
EAGER = 16 * 1024  # larger reads move by RMA (services/common, services/pfs)
BLOCKS = (4096, 65536, 1 << 20)
KNOBS: tuple[tuple[str, dict[str, str]], ...] = (
    ("none", {}),
    ("ΔL 100 µs", {"latency": "100us"}),
    ("Δo 20 µs", {"overhead": "20us"}),
    ("100 MB/s", {"bandwidth": "100MB/s"}),
)
SERVERS = (1, 2, 4)
STREAM_MB = 32
IDLE_BLOCK = 4096
QUIET_MS = 100
IDLE_READS = 16


def model_added_us(knobs: dict[str, str], n: int) -> float:
    """The LogGP model's added time of one read of n bytes (the docstring's formula)."""
    ks = KnobSet.parse(knobs)
    p = ks.params()
    o = 2 * (p.send_overhead_ns + p.recv_overhead_ns) / 1e3
    if n > EAGER:
        o += p.send_overhead_ns / 1e3
    return 2 * p.latency_ns / 1e3 + o + n * p.bulk_gap_fs / 1e9


def pfsio(build: Path, env: dict[str, str], ranks: int, args: list[str]) -> dict[str, Any]:
    mpirun = shutil.which("mpirun")
    if not mpirun:
        sys.exit(f"{TOOL}: mpirun not found (install openmpi-bin)")
    argv = [mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none",
            *shim_mca_args(), "--mca", "mtl_ofi_provider_include", PROVIDER]  # fmt: skip
    argv += [a for v in sorted(env) if v.startswith(("LOGGP_", "FI_")) for a in ("-x", v)]
    argv += [str(build / "workloads" / "pfsio" / "pfsio"), *args]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    res = result_line(proc.stdout)
    if proc.returncode or res is None or not res["valid"]:
        sys.exit(f"{TOOL}: pfsio {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return res


def request_times(build: Path, root: Path, repeats: int) -> list[dict[str, Any]]:
    rows = []
    for label, knobs in KNOBS:
        env = environment(build, knobs)
        store = Store(build, root, 4, env, TOOL)
        try:
            inst = str(store.dir)
            pfsio(build, env, 1, ["-i", inst, "-o", "write", "-b", "1M", "-s", "8M"])
            for n in BLOCKS:
                args = ["-i", inst, "-o", "read", "-b", str(n), "-s", str(max(n * 64, 1 << 20)),
                        "-q", "1"]  # fmt: skip
                lat = statistics.median(
                    pfsio(build, env, 1, args)["metrics"]["lat_us"] for _ in range(repeats)
                )
                row = {"knobs": label, "block": n, "lat_us": lat,
                       "model_added_us": model_added_us(knobs, n)}  # fmt: skip
                if n == IDLE_BLOCK:
                    quiet = ["-i", inst, "-o", "read", "-b", str(n), "-s", str(n * IDLE_READS),
                             "-q", "1", "-w", str(QUIET_MS)]  # fmt: skip
                    row["idle_lat_us"] = statistics.median(
                        pfsio(build, env, 1, quiet)["metrics"]["lat_us"] for _ in range(repeats)
                    )
                rows.append(row)
                print(f"{TOOL}: {label} {n} B: {lat:.1f} us", flush=True)
        finally:
            store.stop()
    base = {r["block"]: r["lat_us"] for r in rows if r["knobs"] == "none"}
    for r in rows:
        r["added_us"] = r["lat_us"] - base[r["block"]]
    return rows


def fio_local(root: Path, rw: str) -> float:
    fio = shutil.which("fio")
    if not fio:
        return math.nan
    argv = [fio, "--output-format=json", "--name=disk", f"--rw={rw}", "--bs=1M",
            f"--size={2 * STREAM_MB}M", f"--directory={root}", "--end_fsync=1"]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True).stdout
    return summary(report(out))[f"{rw}_MBps"]


def throughput(build: Path, root: Path, repeats: int) -> list[dict[str, Any]]:
    env = environment(build, {})
    rows = []
    for n in SERVERS:
        row: dict[str, Any] = {"servers": n}
        for op in ("write", "read"):
            runs = []
            for _ in range(repeats):
                store = Store(build, root, n, env, TOOL)
                try:
                    args = ["-i", str(store.dir), "-o", op, "-s", f"{STREAM_MB}M", "-q", "4"]
                    runs.append(pfsio(build, env, 2, args)["metrics"]["MBps"])
                finally:
                    store.stop()
            row[f"{op}_MBps"] = statistics.median(runs)
        rows.append(row)
        print(f"{TOOL}: {n} servers: write {row['write_MBps']:.0f} MB/s, "
              f"read {row['read_MBps']:.0f} MB/s", flush=True)  # fmt: skip
    return rows


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        BEGIN,
        "## Parallel file store: request time against the model, throughput",
        "",
        machine_line(m),
        f"Provider {PROVIDER}; servers and clients on this machine, the servers' objects in "
        f"a temporary directory; median of {doc['repeats']} runs.",
        "",
        "One client, one request in flight, 4 servers, 1 MiB stripes: mean time per read and "
        "what the knob added, against the model "
        "(2·ΔL + 2·(Δo_s + Δo_r) + n·ΔG, and Δo_s more for the RMA write beyond 16 KiB).",
        "",
        "| knob | block | µs per read | added µs | model µs | added / model |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in doc["requests"]:
        ratio = f"{r['added_us'] / r['model_added_us']:.2f}" if r["model_added_us"] else "-"
        out.append(
            f"| {r['knobs']} | {r['block'] // 1024} KiB | {r['lat_us']:.1f} | "
            f"{r['added_us']:+.1f} | {r['model_added_us']:.1f} | {ratio} |"
        )
    out += [
        "",
        f"Idle wait: one 4 KiB read after {QUIET_MS} ms of quiet (client and servers idle; "
        f"mean of {IDLE_READS}) against back to back.  The services block on their fabric's "
        "wait object, so the difference is the host's own cost of waking idle threads with "
        "cold caches, not a sleep of the store's (docs/design.md).",
        "",
        "| knob | back to back µs | after quiet µs | idle adds µs |",
        "|---|---:|---:|---:|",
    ]
    for r in doc["requests"]:
        if "idle_lat_us" in r:
            out.append(
                f"| {r['knobs']} | {r['lat_us']:.1f} | {r['idle_lat_us']:.1f} | "
                f"{r['idle_lat_us'] - r['lat_us']:+.1f} |"
            )
    out += [
        "",
        f"Throughput without the shim: 2 ranks, each {STREAM_MB} MiB sequentially in 1 MiB "
        "blocks, 4 requests in flight; the local disk by fio (1 MiB blocks, page cache).",
        "",
        "| servers | write MB/s | read MB/s |",
        "|---:|---:|---:|",
    ]
    for r in doc["throughput"]:
        out.append(f"| {r['servers']} | {r['write_MBps']:.0f} | {r['read_MBps']:.0f} |")
    d = doc["disk"]
    out += [
        f"| local disk (fio) | {d['write_MBps']:.0f} | {d['read_MBps']:.0f} |",
        "",
        "Servers, clients and the shim's progress share the machine's cores, so the store "
        "is CPU-bound here long before a disk or a network would be.",
        END,
        "",
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-pfs.json")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    build = args.build.resolve()
    for prog in ("workloads/pfsio/pfsio", "services/pfs/loggp-pfs-server"):
        if not (build / prog).is_file():
            sys.exit(f"{TOOL}: {build / prog} not built (cmake --build {build})")
    doc: dict[str, Any] = {"tool": TOOL, "machine": machine(), "repeats": args.repeats}
    with tempfile.TemporaryDirectory(prefix="loggp-pfs-bench-", dir=Path.cwd()) as tmp:
        root = Path(tmp)
        doc["requests"] = request_times(build, root, args.repeats)
        doc["throughput"] = throughput(build, root, args.repeats)
        doc["disk"] = {"write_MBps": fio_local(root, "write"), "read_MBps": fio_local(root, "read")}
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0
