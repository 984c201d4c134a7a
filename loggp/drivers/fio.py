"""`loggp-fio`: fio's jobs, reported as a workload result.

    loggp-fio FIO-OPTIONS...      e.g. loggp-fio --name=seq --rw=read --bs=1M --size=64M
                                          --directory=/mnt/pfs

Runs Debian's fio with the options given and `--output-format=json`, and prints the
result line of docs/results.md with the jobs' figures summed (rates) or combined (times):

    metrics  time_s                   the longest job's run time
             read_MBps, write_MBps    bytes moved per second (10^6 B/s), all jobs
             read_iops, write_iops
             read_lat_us, write_lat_us   mean completion latency per I/O
             read_p99_us, write_p99_us   the largest job's 99th percentile of it
    valid    false when fio failed or a job reported an error (a `--verify` mismatch is
             one); `reason` says which.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any

NAME = "fio"
DIRECTIONS = ("read", "write")


class FioError(Exception):
    """fio did not run, or printed no JSON report."""


def report(out: str) -> dict[str, Any]:
    """fio's JSON report (what precedes it on stdout, e.g. warnings, is skipped)."""
    start = out.find("{")
    try:
        doc = json.loads(out[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict) or not doc.get("jobs"):
        raise FioError("fio printed no JSON report with jobs")
    return doc


def summary(doc: dict[str, Any]) -> dict[str, float]:
    jobs = doc["jobs"]
    m: dict[str, float] = {"time_s": max(j["job_runtime"] for j in jobs) / 1e3}
    for d in DIRECTIONS:
        ios = sum(j[d]["total_ios"] for j in jobs)
        m[f"{d}_MBps"] = sum(j[d]["bw_bytes"] for j in jobs) / 1e6
        m[f"{d}_iops"] = sum(j[d]["iops"] for j in jobs)
        if ios:
            lat = sum(j[d]["clat_ns"]["mean"] * j[d]["total_ios"] for j in jobs) / ios
            p99 = max(j[d]["clat_ns"].get("percentile", {}).get("99.000000", 0) for j in jobs)
            m[f"{d}_lat_us"] = lat / 1e3
            m[f"{d}_p99_us"] = p99 / 1e3
    return m


def result(doc: dict[str, Any]) -> dict[str, Any]:
    failed = [f"{j['jobname']}: error {j['error']}" for j in doc["jobs"] if j.get("error")]
    out: dict[str, Any] = {
        "loggp_result": 1,
        "workload": NAME,
        "valid": not failed,
        "ranks": 1,
        "metrics": summary(doc),
    }
    if failed:
        out["reason"] = "; ".join(failed)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    fio = shutil.which("fio")
    if not fio:
        print("loggp-fio: fio not found: install Debian's fio", file=sys.stderr)
        return 2
    run = subprocess.run(
        [fio, "--output-format=json", *args], capture_output=True, text=True, check=False
    )
    sys.stderr.write(run.stderr)
    try:
        doc = report(run.stdout)
    except FioError as e:
        print(f"loggp-fio: {e} (fio exited with status {run.returncode})", file=sys.stderr)
        return 1
    res = result(doc)
    if run.returncode != 0 and res["valid"]:
        res["valid"], res["reason"] = False, f"fio exited with status {run.returncode}"
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
