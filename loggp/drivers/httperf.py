"""`loggp-httperf`: httperf against a key-value HTTP server, reported as a workload result.

    loggp-httperf --server HOST --port P [--mode sessions|calls] [--rate R] [--sessions N]
                  [--calls C] [--burst B] [--mix get|put|mixed] [--keys K] [--value-size B]
                  [--timeout S] [--seed S]

It fills the keys with PUTs (not measured), then runs Debian's httperf at R sessions per
second (`--rate 0`: one session at a time, as the seed's set-up did), each session one
persistent connection of C requests, B of them sent back to back without waiting for a
reply (pipelined):
  sessions  a `--wsesslog` file of N sessions of the mix (GET/PUT/DELETE);
  calls     `--num-conns N --num-calls C --burst-length B` of GET /kv/k0 (`--mix get`).
httperf starts each burst of a session log on its next timer tick (about 1 ms), so request
times are only meaningful in `calls` mode.  It prints the result line of docs/results.md:

    metrics  time_s          httperf's test duration
             replies_per_s   replies / time_s
             request_us      time_s / requests: with one request in flight (rate 0, burst
                             1), the mean time a request takes from send to reply
             response_ms     httperf's mean reply time (0.1 ms resolution)
             rate_samples    httperf's 5-second reply-rate samples
    valid    false when httperf had any error (fd-unavail: its descriptors ran out, timeouts,
             resets), when a reply is missing, or when a reply was 5xx; `reason` says which.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NAME = "httperf"
_TOTAL = re.compile(
    r"Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+) s"
)
_RATE = re.compile(r"Reply rate \[replies/s\]: min [\d.]+ avg ([\d.]+) .*\((\d+) samples\)")
_RESPONSE = re.compile(r"Reply time \[ms\]: response ([\d.]+)")
_STATUS = re.compile(r"\b(\dxx)=(\d+)")
_COUNTER = re.compile(r"\b([a-z][a-z-]*) (\d+)\b")


class HttperfError(Exception):
    """httperf did not run, or printed what this parser does not know."""


def parse(out: str) -> dict[str, Any]:
    """The figures of httperf's report: totals, duration, reply rate, reply time, reply
    status classes and every error counter (`errors` holds them, `total` among them)."""
    total, rate, response = _TOTAL.search(out), _RATE.search(out), _RESPONSE.search(out)
    if not (total and rate and response and "Errors:" in out):
        raise HttperfError("httperf's report lacks its Total/Reply/Errors lines")
    errors: dict[str, int] = {}
    for line in out.splitlines():
        if line.startswith("Errors:"):
            errors.update((k, int(v)) for k, v in _COUNTER.findall(line))
    return {
        "connections": int(total.group(1)),
        "requests": int(total.group(2)),
        "replies": int(total.group(3)),
        "duration_s": float(total.group(4)),
        "rate_avg": float(rate.group(1)),
        "rate_samples": int(rate.group(2)),
        "response_ms": float(response.group(1)),
        "status": {k: int(v) for k, v in _STATUS.findall(out)},
        "errors": errors,
    }


def sessions_file(path: Path, args: argparse.Namespace) -> int:
    """Writes the --wsesslog file; returns the requests of one pass over it."""
    rnd = random.Random(args.seed)
    value = "v" * args.value_size
    lines = []
    for _ in range(args.sessions):
        for c in range(args.calls):
            key = f"/kv/k{rnd.randrange(args.keys)}"
            op = rnd.random() if args.mix == "mixed" else 1.0
            if args.mix == "put" or op < 0.2:
                req = f"{key} method=PUT contents='{value}'"
            elif op < 0.3:
                req = f"{key} method=DELETE"
            else:
                req = key
            # httperf sends an indented request in the burst of the one before it.
            lines.append(("\t" if c % args.burst else "") + req)
        lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return args.sessions * args.calls


def fill(host: str, port: int, keys: int, size: int, timeout: float) -> None:
    """PUTs every key once, so GETs find values."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        for k in range(keys):
            conn.request("PUT", f"/kv/k{k}", body=b"v" * size)
            reply = conn.getresponse()
            reply.read()
            if reply.status >= 300:
                raise HttperfError(f"PUT /kv/k{k} answered {reply.status} {reply.reason}")
    finally:
        conn.close()


def judge(report: dict[str, Any], requests: int) -> str | None:
    """Why the run cannot be trusted, or None."""
    errors = {k: v for k, v in report["errors"].items() if v and k != "total"}
    if errors:
        return "httperf errors: " + ", ".join(f"{k} {v}" for k, v in sorted(errors.items()))
    if report["replies"] != requests:
        return f"{report['replies']} replies to {requests} requests"
    if report["status"].get("5xx"):
        return f"{report['status']['5xx']} replies were 5xx"
    return None


def result(report: dict[str, Any], requests: int) -> dict[str, Any]:
    duration = report["duration_s"]
    reason = judge(report, requests)
    out: dict[str, Any] = {
        "loggp_result": 1,
        "workload": NAME,
        "valid": reason is None,
        "ranks": 1,
        "metrics": {
            "time_s": duration,
            "replies_per_s": report["replies"] / duration if duration > 0 else 0.0,
            "request_us": 1e6 * duration / requests,
            "response_ms": report["response_ms"],
            "rate_samples": report["rate_samples"],
        },
        "httperf": report,
    }
    if reason:
        out["reason"] = reason
    return out


def positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text}")
    return n


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="loggp-httperf", description=__doc__.split("\n\n")[0])
    p.add_argument("--server", required=True, help="the server's address")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--mode", choices=("sessions", "calls"), default="sessions")
    p.add_argument("--rate", type=float, default=0.0, help="sessions/s; 0: one at a time")
    p.add_argument("--sessions", type=positive, default=200)
    p.add_argument("--calls", type=positive, default=5, help="requests per session")
    p.add_argument("--burst", type=positive, default=1, help="requests sent back to back")
    p.add_argument("--mix", choices=("get", "put", "mixed"), default="mixed")
    p.add_argument("--keys", type=positive, default=100)
    p.add_argument("--value-size", type=positive, default=64, help="bytes of a PUT's value")
    p.add_argument("--timeout", type=float, default=5.0, help="httperf's --timeout, seconds")
    p.add_argument("--seed", type=int, default=1)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.mode == "calls" and args.mix != "get":
        p.error(f"--mode calls sends GETs only: give --mix get (not {args.mix})")
    httperf = shutil.which("httperf")
    if not httperf:
        print("loggp-httperf: httperf not found: install Debian's httperf", file=sys.stderr)
        return 2
    try:
        fill(args.server, args.port, args.keys, args.value_size, args.timeout)
        with tempfile.TemporaryDirectory(prefix="loggp-httperf-") as tmp:
            log = Path(tmp) / "sessions"
            cmd = [httperf, "--server", args.server, "--port", str(args.port),
                   "--rate", f"{args.rate:g}", "--timeout", f"{args.timeout:g}"]  # fmt: skip
            if args.mode == "calls":
                requests = args.sessions * args.calls
                cmd += ["--uri", "/kv/k0", "--num-conns", str(args.sessions), "--num-calls",
                        str(args.calls), "--burst-length", str(args.burst)]  # fmt: skip
            else:
                requests = sessions_file(log, args)
                cmd += ["--wsesslog", f"{args.sessions},0,{log}"]
            run = subprocess.run(cmd, capture_output=True, text=True, check=False)
        sys.stderr.write(run.stderr)
        print(run.stdout, file=sys.stderr)
        if run.returncode != 0:
            raise HttperfError(f"httperf exited with status {run.returncode}")
        print(json.dumps(result(parse(run.stdout), requests)))
    except (HttperfError, OSError) as e:
        print(f"loggp-httperf: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
