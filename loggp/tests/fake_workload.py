"""A scripted workload for the runner's tests: it follows the result protocol
(docs/results.md) with a time that is a known function of the knobs it was given.

    time_s = 1 + 0.01 * latency_us + 0.02 * overhead_us

Knob values in microseconds are read from the LOGGP_* variables the runner sets.  The
environment variable FAKE_WORKLOAD picks a misbehaviour for one latency value:
  fail:<lat>       exit 3 at that latency
  invalid:<lat>    print valid: false at that latency
  silent:<lat>     print no result line at that latency
  hang:<lat>       block until killed at that latency
  interrupt:<lat>  send SIGINT to the runner (the keeper's parent) once, at that latency, then
                   exit 0
                   (a marker file next to the point's logs makes "once")
  terminate:<lat>  the same with SIGTERM
  late:<lat>       write a shim stats line (LOGGP_STATS_FILE) whose releases were 8-16 us late
FAKE_RUNS, if set, names a file that every run appends its latency and overhead to.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path


def knob_us(name: str) -> float:
    text = os.environ.get(f"LOGGP_{name.upper()}", "0us")
    return float(text.removesuffix("us")) if text.endswith("us") else 0.0


def runner() -> int:
    """The runner's pid: the parent of our parent, the keeper (loggp/run/keeper.py)."""
    stat = Path(f"/proc/{os.getppid()}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def main() -> int:
    latency, overhead = knob_us("latency"), knob_us("overhead")
    if "FAKE_RUNS" in os.environ:
        with open(os.environ["FAKE_RUNS"], "a") as f:
            f.write(f"{latency:g} {overhead:g}\n")
    mode, _, at = os.environ.get("FAKE_WORKLOAD", "").partition(":")
    hit = bool(mode) and float(at or "-1") == latency
    if hit and mode == "fail":
        print("fake workload: failing as asked", file=sys.stderr)
        return 3
    if hit and mode == "hang":
        threading.Event().wait()
    if hit and mode in ("interrupt", "terminate"):
        marker = Path(os.environ["FAKE_MARKER"])
        if not marker.exists():
            marker.write_text("interrupted once\n")
            os.kill(runner(), signal.SIGINT if mode == "interrupt" else signal.SIGTERM)
            threading.Event().wait()  # the runner kills us when it handles the signal
    if hit and mode == "late":
        hist = [0] * 16
        hist[4] = 100  # [8, 16) us
        stats = {"provider": "tcp", "msgs": 10, "releases": 100, "late_max_ns": 12000,
                 "early_releases": 0, "late_hist_us": hist}  # fmt: skip
        with open(os.environ["LOGGP_STATS_FILE"], "a") as f:
            f.write(json.dumps(stats) + "\n")
    if hit and mode == "silent":
        print("no result here")
        return 0
    result = {
        "loggp_result": 1,
        "workload": "fake",
        "valid": not (hit and mode == "invalid"),
        "ranks": 1,
        "metrics": {"time_s": 1 + 0.01 * latency + 0.02 * overhead},
        "msgs": {"total": 10, "bytes": 80, "per_rank": [10], "critical_path": 10,
                 "critical_bytes": 80},
    }  # fmt: skip
    print("some other output")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
