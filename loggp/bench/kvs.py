"""KAP benchmark: phase maxima of the KVS at 2, 4 and 8 processes, 8 B and 2 KiB values,
beneath the shim at ΔL = 0 (knobs at 0, the baseline), 10 µs and 100 µs.

    loggp bench kvs --build build

Each configuration runs `repeats` times (default 3) under mpirun with MPI on its own
transports, so the brokers are the only libfabric users (provider tcp;ofi_rxm); every
phase's maximum over the processes is reported as the median over the repeats.  Writes
docs/benchmarks-kvs.json and replaces its own section of docs/benchmarks.md.  Run it on
an otherwise idle machine: with 8 processes on 2 cores, other work shows in every number.

Idle wait: 3 brokers (loggp-kvs-broker) at each ΔL; a put and commit from a leaf broker's
socket (to the root and back over the fabric), back to back and each after 100 ms of
quiet, less the host's own cost of waking the threads a quiet commit finds blocked
(COLD_THREADS times the same difference for a put alone, which never leaves the socket's
thread): what an idle KVS adds to a request.
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, machine_line, parser, publish
from loggp.bench.mpi import mpi_command, run_mpi

NAME = "kvs"
SUMMARY = "KVS phase maxima (KAP) at 2, 4, 8 processes, beneath the shim at ΔL 0, 10, 100 µs"
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
QUIET_S = 0.1
BUSY_COMMITS = 60
IDLE_COMMITS = 15
READY_S = 60.0
# Threads a commit after quiet finds blocked, each a wake-up the host charges: the leaf
# broker's socket thread, the leaf broker and the root broker.  Back to back none is
# blocked (each keeps looking for svc::kSpin after its work, services/common/spin.hpp),
# and a put alone wakes only the socket thread.
COLD_THREADS = 3


def run_kap(build: Path, np: int, vsize: int, latency_us: int) -> dict[str, Any]:
    argv = [str(build / "workloads" / "kap" / "kap"), "-p", str(vsize), *KAP_ARGS]
    what = f"kap -np {np} -p {vsize}"
    res, stderr = run_mpi(TOOL, what, build, np, argv, latency_us, PROVIDER, 300)
    if not res["valid"]:
        sys.exit(f"{TOOL}: {what} at ΔL={latency_us}us read wrong values:\n{stderr}")
    return res


def commit_us(sock: str, n: int, quiet: float, commit: bool = True) -> float:
    """The median time in µs of a put (and a commit) on one connection of a broker's socket
    (services/kvs/sockserver.hpp), each after `quiet` seconds without requests.  A put alone
    is buffered by the socket's own thread: the client, socket and thread wake-up without
    the brokers."""
    value = base64.b64encode(b"v").decode()
    took = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(sock)
        f = s.makefile("rw")
        for i in range(n):
            if quiet:
                time.sleep(quiet)  # the client's own think time, outside the timing
            t0 = time.perf_counter()
            f.write(json.dumps({"op": "put", "key": f"idle.k{i}", "value": value}) + "\n")
            if commit:
                f.write(json.dumps({"op": "commit"}) + "\n")
            f.flush()
            replies = [json.loads(f.readline()) for _ in range(1 + commit)]
            took.append((time.perf_counter() - t0) * 1e6)
            bad = [r for r in replies if not r.get("ok")]
            if bad:
                raise RuntimeError(f"kvs broker at {sock}: {bad[0].get('error')}")
    return statistics.median(took)


@contextmanager
def brokers(build: Path, np: int, latency_us: int) -> Iterator[Path]:
    """np loggp-kvs-brokers under mpirun (root in memory); yields their socket directory."""
    with tempfile.TemporaryDirectory(prefix="loggp-kvs-bench-") as d:
        argv = [str(build / "services" / "kvs" / "loggp-kvs-broker"), "--socket-dir", d]
        cmd, env = mpi_command(TOOL, build, np, argv, latency_us, PROVIDER)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)  # fmt: skip
        try:
            assert proc.stdout is not None
            deadline = time.monotonic() + READY_S
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                    sys.exit(f"{TOOL}: kvs brokers not ready within {READY_S:.0f} s")
                line = proc.stdout.readline()
                if not line:
                    sys.exit(f"{TOOL}: kvs brokers exited before ready: {proc.stderr.read()}")
                if line.startswith("loggp-kvs-broker: ready"):
                    break
            yield Path(d)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def idle_wait(build: Path) -> list[dict[str, Any]]:
    rows = []
    for lat in LATENCIES_US:
        with brokers(build, 3, lat) as d:
            sock = str(d / "kvs-2.sock")
            host = commit_us(sock, IDLE_COMMITS, QUIET_S, False)
            host -= commit_us(sock, BUSY_COMMITS, 0.0, False)
            busy = commit_us(sock, BUSY_COMMITS, 0.0)
            idle = commit_us(sock, IDLE_COMMITS, QUIET_S)
        rows.append({"latency_us": lat, "busy_us": busy, "idle_us": idle, "host_us": host})
        print(f"{TOOL}: idle wait ΔL {lat} us: commit {busy:.0f} us back to back, "
              f"{idle:.0f} us after quiet, host {host:+.0f} us", flush=True)  # fmt: skip
    return rows


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
                row["broker_waits"] = statistics.median(r["metrics"]["broker_waits"] for r in runs)
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
        machine_line(m),
        f"Settings: provider {PROVIDER}, MPI on its own transports and yielding when idle, kap "
        f"`{' '.join(KAP_ARGS)}` (16 puts per producer, 16 gets per consumer, one "
        f"directory, fence sync), producers = consumers = processes, median of "
        f"{doc['repeats']} runs of each phase's maximum over the processes.  Every row runs "
        "beneath the shim; at ΔL 0 its knobs are 0, the baseline the runner uses too.",
        "",
        "| processes | value | ΔL | setup ms | producer ms | sync (fence) ms | consumer ms "
        "| get p50 µs | broker msgs | broker blocks |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in doc["rows"]:
        lat = f"{r['latency_us']} µs"
        out.append(
            f"| {r['np']} | {r['value_bytes']} B | {lat} | {r['setup_max_ms']:.1f} | "
            f"{r['producer_max_ms']:.3f} | {r['sync_max_ms']:.3f} | "
            f"{r['consumer_max_ms']:.3f} | {r['get_p50_us']:.1f} | {r['msgs']:.0f} | "
            f"{r['broker_waits']:.0f} |"
        )
    out += [
        "",
        "Setup includes opening the fabric and the first connections.  A fence crosses the "
        "tree twice (batches up, the new root down), so beneath ΔL its maximum grows by at "
        "least 2·depth·ΔL; a consumer's first get faults its objects from the root, one "
        "round trip per tree level.  Broker blocks: how often the brokers blocked on their "
        "fabric's wait object during the phases (KAP's broker_waits), each after its spin "
        'of svc::kSpin (services/common/README.md, "Waiting"): a get its own broker '
        "answers back to back needs none.",
        "",
        f"Idle wait: 3 brokers, a put and commit from broker 2's socket (to the root and "
        f"back over the fabric), median of {BUSY_COMMITS} back to back and of {IDLE_COMMITS} "
        f"each after {QUIET_S * 1e3:.0f} ms of quiet; the host's wake-up is the same "
        "difference for a put alone (it never leaves the socket's thread), and a quiet "
        f"commit pays it {COLD_THREADS} times (the socket thread, the leaf and the root "
        "broker are blocked; back to back each keeps looking for svc::kSpin).  The brokers "
        "block on their fabric's wait object, so what is left is not a sleep of the KVS's "
        "(docs/design.md).",
        "",
        "| ΔL | back to back µs | after quiet µs | host's wake-up µs | idle adds µs |",
        "|---:|---:|---:|---:|---:|",
        *(
            f"| {r['latency_us']} µs | {r['busy_us']:.0f} | {r['idle_us']:.0f} | "
            f"{r['host_us']:+.0f} | "
            f"{r['idle_us'] - r['busy_us'] - COLD_THREADS * r['host_us']:+.0f} |"
            for r in doc["idle"]
        ),
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
    doc["idle"] = idle_wait(build)
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0
