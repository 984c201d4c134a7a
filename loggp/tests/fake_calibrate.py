"""A stand-in for loggp-calibrate, so the Python side is tested without the C build.

Same command line as the real tool (server without a host argument, client with one).  The
client writes the real tool's JSON shape with the knobs of its environment added to a fixed
baseline, exactly as a perfect shim would.  FAKE_CALIBRATE=hang|fail|badjson misbehaves.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from loggp.plan.knobs import Knob, KnobSet

BASE = {"half_rtt_us": 1.0, "o_s_us": 0.3, "o_r_us": 0.1, "g_us": 0.5, "L_us": 0.4}


def main() -> int:
    p = argparse.ArgumentParser()
    for opt in ("-p", "-P", "-B", "-T", "-n", "-j"):
        p.add_argument(opt)
    p.add_argument("host", nargs="?")
    args = p.parse_args()
    role = "client" if args.host else "server"
    print(json.dumps({"role": role, "argv": sys.argv[1:]}), flush=True)

    mode = os.environ.get("FAKE_CALIBRATE", "ok")
    if mode == "hang":
        time.sleep(3600)
    if mode == "fail" and role == "client":
        print("loggp: bad value 'x' for LOGGP_LATENCY: expected <number>", file=sys.stderr)
        return 1
    if role == "server":
        return 0

    knobs = KnobSet.parse({k.value: os.environ.get(k.env) for k in Knob})
    prm = knobs.params()
    us = {
        "o_s_us": prm.send_overhead_ns / 1000,
        "o_r_us": prm.recv_overhead_ns / 1000,
        "g_us": prm.gap_ns / 1000,
        "L_us": prm.latency_ns / 1000,
    }
    us["half_rtt_us"] = us["o_s_us"] + us["L_us"] + us["o_r_us"]
    results = {
        k: {"p10": v + us[k], "median": v + us[k], "p99": 2 * (v + us[k])} for k, v in BASE.items()
    }
    results["G_ns_per_B"] = {"value": 0.3 + prm.bulk_gap_fs / 1e6, "r2": 0.99}
    doc = {"tool": "loggp-calibrate", "version": 1, "provider": args.p, "results": results}
    with open(args.j, "w") as f:
        f.write("{not json" if mode == "badjson" else json.dumps(doc))

    stats = os.environ.get("LOGGP_STATS_FILE")
    if stats:
        with open(stats, "a") as f:
            f.write(json.dumps({"pid": os.getpid(), "provider": args.p, "msgs": 1}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
