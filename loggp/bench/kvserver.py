"""kvserver benchmark: replies/s and latency percentiles of loggp-kvserver per work queue ×
store lock at 1, 2 and 4 threads, under wrk at a fixed number of connections.

    loggp bench kvserver --build build [--wire]

With --wire (root): also across a 2-host namespace testbed, the server in host 1 and the
clients in host 0, every packet through loggp-wire (busy-polling, --idle-sleep 0ns) at
several latencies and a bandwidth limit: wrk's replies/s and percentiles, and the mean
request time with one request in flight (loggp-httperf --mode calls), which gains 2·ΔL.

Each point starts a fresh server on a free port of 127.0.0.1, fills 100 keys, and runs
`wrk --latency` for `--duration` seconds over `--connections` keep-alive connections with a
Lua mix of 90 % GET and 10 % PUT of 64-byte values.  Writes docs/benchmarks-kvserver.json
and replaces its own section of docs/benchmarks.md.  wrk and the server share the machine's
cores: on 2 cores shared with other work the numbers are noisy, and at 4 server threads
the server has fewer cores than threads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, parser, publish
from loggp.net import testbed, wirectl
from loggp.plan.knobs import KnobSet
from loggp.results.protocol import result_line

NAME = "kvserver"
SUMMARY = "loggp-kvserver replies/s and latency per queue x store at 1, 2, 4 threads (wrk)"
TOOL = "kvserver_bench"
BEGIN = "<!-- kvserver:begin (written by loggp bench kvserver) -->"
END = "<!-- kvserver:end -->"
QUEUES = ("mutex", "lockfree", "reuseport")
STORES = ("global", "rwlock", "sharded")
THREADS = (1, 2, 4)
KEYS = 100
VALUE = "v" * 64
MIX_LUA = f"""
counter = 0
request = function()
  counter = counter + 1
  local path = "/kv/k" .. (counter % {KEYS})
  if counter % 10 == 0 then
    return wrk.format("PUT", path, nil, "{VALUE}")
  end
  return wrk.format("GET", path)
end
"""
UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


def start(
    binary: Path,
    queue: str,
    store: str,
    threads: int,
    host: str = "127.0.0.1",
    prefix: list[str] | None = None,
    fill: bool = True,
) -> tuple[subprocess.Popen, int]:
    """A server started (in prefix's namespace) and, with fill, its keys put."""
    argv = [*(prefix or []), str(binary), "--port", "0", "--queue", queue, "--store", store,
            "--threads", str(threads), "--bind", host]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    m = re.match(r"loggp-kvserver: ready port=(\d+) ", proc.stdout.readline())
    if not m:
        proc.kill()
        sys.exit(f"{TOOL}: {' '.join(argv)} did not start")
    port = int(m.group(1))
    if not fill:
        return proc, port
    with socket.create_connection((host, port), timeout=10) as s:
        for k in range(KEYS):
            body = VALUE.encode()
            s.sendall(
                f"PUT /kv/k{k} HTTP/1.1\r\nHost: {host}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            s.sendall(body)
            reply = b""
            while b"\r\n\r\n" not in reply:
                reply += s.recv(4096)
    return proc, port


def stop(proc: subprocess.Popen) -> dict[str, Any]:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return json.loads(out.strip().splitlines()[-1])


def run_wrk(wrk: str, port: int, script: Path, connections: int, duration: int,
            host: str = "127.0.0.1", prefix: list[str] | None = None) -> dict:  # fmt: skip
    argv = [*(prefix or []), wrk, "-t", "1", "-c", str(connections), "-d", f"{duration}s",
            "--latency", "-s", str(script), f"http://{host}:{port}/"]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
    out = proc.stdout
    if proc.returncode or "Requests/sec" not in out:
        sys.exit(f"{TOOL}: wrk failed:\n{out}\n{proc.stderr}")
    if "Socket errors" in out or "Non-2xx" in out:
        sys.exit(f"{TOOL}: wrk saw errors, the point is invalid:\n{out}")
    row = {"replies_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}
    for pct, val, unit in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)$", out, re.M):
        row[f"p{pct}_us"] = float(val) * UNITS[unit]
    return row


def measure(build: Path, connections: int, duration: int) -> list[dict[str, Any]]:
    binary = build / "services" / "kvserver" / "loggp-kvserver"
    wrk = shutil.which("wrk")
    if not wrk:
        sys.exit(f"{TOOL}: wrk not found (Debian package wrk; make deps)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "mix.lua"
        script.write_text(MIX_LUA)
        for queue in QUEUES:
            for store in STORES:
                for threads in THREADS:
                    proc, port = start(binary, queue, store, threads)
                    try:
                        row = run_wrk(wrk, port, script, connections, duration)
                    finally:
                        summary = stop(proc)
                    row.update(queue=queue, store=store, threads=threads,
                               server_p99_us=summary["latency"]["p99_us"])  # fmt: skip
                    rows.append(row)
                    print(f"{TOOL}: {queue} {store} {threads}: "
                          f"{row['replies_per_s']:.0f} replies/s", flush=True)  # fmt: skip
    return rows


WIRE_PREFIX = "lgpkvb"
# (label, wire knobs) of the rows across the wire
WIRE_SETTINGS: tuple[tuple[str, dict[str, str]], ...] = (
    ("none", {}),
    ("ΔL 100 µs", {"latency": "100us"}),
    ("ΔL 1 ms", {"latency": "1ms"}),
    ("100 Mbit/s", {"bandwidth": "100Mbit/s"}),
)
WIRE_VARIANTS = (("mutex", 1), ("lockfree", 1), ("mutex", 4), ("lockfree", 4))


def in_host(i: int) -> list[str]:
    """The command prefix that runs a program in host i of the benchmark's testbed."""
    return ["ip", "netns", "exec", testbed.host_ns(WIRE_PREFIX, i)]


def one_in_flight_us(host: str, port: int, prefix: list[str]) -> float:
    """Mean request time with one request in flight (loggp-httperf --mode calls)."""
    argv = [*prefix, sys.executable, "-m", "loggp.drivers.httperf", "--server", host,
            "--port", str(port), "--mode", "calls", "--mix", "get", "--sessions", "4",
            "--calls", "500", "--keys", str(KEYS), "--value-size", str(len(VALUE))]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    res = result_line(proc.stdout)
    if proc.returncode or res is None or not res["valid"]:
        sys.exit(f"{TOOL}: loggp-httperf across the wire failed:\n{proc.stderr[-2000:]}")
    return float(res["metrics"]["request_us"])


def measure_wire(build: Path, connections: int, duration: int) -> list[dict[str, Any]]:
    """The rows across the testbed's wire (needs root)."""
    binary = build / "services" / "kvserver" / "loggp-kvserver"
    wrk = shutil.which("wrk")
    if not wrk:
        sys.exit(f"{TOOL}: wrk not found (Debian package wrk; make deps)")
    os.environ["LOGGP_BUILD"] = str(build)
    rows = []
    testbed.up(WIRE_PREFIX, 2, ["--idle-sleep", "0ns"], None)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "mix.lua"
            script.write_text(MIX_LUA)
            for label, knobs in WIRE_SETTINGS:
                req = wirectl.set_request(KnobSet.parse(knobs), full=True)
                testbed.set_knobs(WIRE_PREFIX, req)
                for queue, threads in WIRE_VARIANTS:
                    host = testbed.host_addr(1)
                    # Filled from host 0 by loggp-httperf: this process cannot reach host 1.
                    proc, port = start(binary, queue, "rwlock", threads, host, in_host(1), False)
                    try:
                        one = one_in_flight_us(host, port, in_host(0))
                        row = run_wrk(wrk, port, script, connections, duration, host, in_host(0))
                        row["one_in_flight_us"] = one
                    finally:
                        stop(proc)
                    row.update(wire=label, queue=queue, threads=threads)
                    rows.append(row)
                    print(f"{TOOL}: wire {label} {queue} {threads}: "
                          f"{row['replies_per_s']:.0f} replies/s, one in flight "
                          f"{row['one_in_flight_us']:.0f} us", flush=True)  # fmt: skip
    finally:
        testbed.down(WIRE_PREFIX)
    return rows


def wire_markdown(doc: dict[str, Any]) -> list[str]:
    if not doc.get("wire_rows"):
        return []
    m = doc.get("wire_machine", doc["machine"])
    out = [
        "",
        "Across the namespace testbed: server in host 1, wrk and httperf in host 0, every "
        "packet through loggp-wire (busy-polling); store rwlock; the wire's setting per "
        "row.  One in flight: loggp-httperf `--mode calls`, 2000 GETs one after the other "
        "(each crosses two egress ports, so ΔL adds 2·ΔL).  Run "
        f"{m['date']} (load average {m['loadavg_1min']:.2f} at start).",
        "",
        "| wire | queue | threads | replies/s | p50 µs | p99 µs | one in flight µs |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in doc["wire_rows"]:
        out.append(
            f"| {r['wire']} | {r['queue']} | {r['threads']} | {r['replies_per_s']:.0f} | "
            f"{r['p50_us']:.0f} | {r['p99_us']:.0f} | {r['one_in_flight_us']:.0f} |"
        )
    return out


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        BEGIN,
        "## HTTP key-value server (loggp-kvserver)",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores shared with other work (the numbers are "
        f"noisy), Linux {m['kernel']}, run {m['date']} (load average "
        f"{m['loadavg_1min']:.2f} at start).",
        f"Settings: wrk 1 thread, {doc['connections']} keep-alive connections, "
        f"{doc['duration']} s per point, 90 % GET / 10 % PUT of 64 B values over {KEYS} "
        "keys, server and wrk on the same cores over loopback.  p50/p90/p99 are wrk's; "
        "server p99 is the server's own histogram (bucket upper bound, read to reply).",
        "",
        "| queue | store | threads | replies/s | p50 µs | p90 µs | p99 µs | server p99 µs |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in doc["rows"]:
        out.append(
            f"| {r['queue']} | {r['store']} | {r['threads']} | {r['replies_per_s']:.0f} | "
            f"{r['p50_us']:.0f} | {r['p90_us']:.0f} | {r['p99_us']:.0f} | "
            f"{r['server_p99_us']:.0f} |"
        )
    out += [
        "",
        "wrk and the server share 2 cores with other work, so the differences between rows "
        "are mostly noise; the server's own p99 (read to reply) is far below wrk's, so the "
        "tail is time spent waiting for a core, not inside the server.  What the "
        "table shows is that every variant, the lock-free queue included, sustains tens of "
        "thousands of replies/s at one thread under concurrent load (the reference study's "
        "lock-free queue slept 250 ms when empty, and its httperf had one session at a "
        "time); a ranking of the variants needs more cores than this host has.",
        *wire_markdown(doc),
        END,
        "",
    ]
    return "\n".join(out)


def earlier_wire_rows(path: Path) -> dict[str, Any]:
    """The rows across the wire of the document at path, with the machine they ran on:
    a run without --wire keeps them rather than dropping them from the page."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not old.get("wire_rows"):
        return {}
    return {"wire_rows": old["wire_rows"],
            "wire_machine": old.get("wire_machine", old.get("machine"))}  # fmt: skip


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-kvserver.json")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--duration", type=int, default=4)
    ap.add_argument("--wire", action="store_true", help="also across the testbed's wire (root)")
    args = ap.parse_args(argv)
    build = args.build.resolve()
    if not (build / "services" / "kvserver" / "loggp-kvserver").is_file():
        sys.exit(f"{TOOL}: {build}/services/kvserver/loggp-kvserver not built")
    doc = {"tool": TOOL, "machine": machine(), "connections": args.connections,
           "duration": args.duration}  # fmt: skip
    doc["rows"] = measure(build, args.connections, args.duration)
    if args.wire:
        doc["wire_rows"] = measure_wire(build, args.connections, args.duration)
    else:
        doc.update(earlier_wire_rows(args.out))
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0
