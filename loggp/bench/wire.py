"""Accuracy and speed benchmark of loggp-wire on a 2-host namespace testbed.

    sudo .venv/bin/loggp bench wire --build build

(a) ping RTT h0 -> h1 for ΔL in {0, 50, 100, 500, 1000, 5000} us on every port: the
    median RTT increase over ΔL=0 must be 2·ΔL within max(10 us, 5 %); p99 reported.
(b) iperf3 TCP h0 -> h1 unshaped and limited to 10, 100, 500 Mbit/s: the Ethernet frame
    rate the wire carried (goodput · (MSS + 66) / MSS, loggp/net/netmeasure.py) must
    be within 5 % of the limit.
(c) the wire's queue drops in those runs (expected 0 where the queue limit allows).
(d) the same limits set by the kernel's own token bucket instead (tc tbf on h0's eth0,
    the wire unshaped), in the same run: rate error, the spread of the per-second rates
    (burst behaviour), retransmits and the host's busy CPU beside the wire's.
(e) the unshaped rate of loggp-wire against dpdk-testpmd io-forwarding the same vdevs.

Writes a JSON document and replaces its own section of docs/benchmarks.md.  Run it as
root on an otherwise idle machine (the load average is recorded); about 2 minutes.
Exit status 0 when every measurement ran (pass or not), 1 with one line on error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, write_section
from loggp.errors import LoggpError
from loggp.net import netmeasure, netns, testbed
from loggp.net.wirectl import wire_request
from loggp.run.proctree import stop

NAME = "wire"
SUMMARY = "loggp-wire's latency and bandwidth accuracy, forwarding rate (root, 2-host testbed)"
TOOL = "loggp-wire-bench"
SECTION_BEGIN = "<!-- wire:begin (written by loggp bench wire) -->"
SECTION_END = "<!-- wire:end -->"
LATENCIES_US = [0, 50, 100, 500, 1000, 5000]
LIMITS_MBIT = [10, 100, 500]
TESTPMD_READY_S = 30.0
# tbf beside the wire: the wire's default burst (65536 B) and queue bytes (16 MiB).
TBF_BURST_B = 65536
TBF_LIMIT_B = 16 * 1024 * 1024


def ping_cases(st: testbed.State, count: int, interval: float) -> list[dict[str, Any]]:
    ctl = Path(st.control)
    out: list[dict[str, Any]] = []
    base_us = 0.0
    for lat in LATENCIES_US:
        wire_request(ctl, {"cmd": "set", "latency": f"{lat}us"})
        p = netmeasure.ping(testbed.host_ns(st.prefix, 0), testbed.host_addr(1), count, interval)
        med = p.median_us()
        if lat == 0:
            base_us = med
        expected = 2.0 * lat
        increase = med - base_us
        tol = max(10.0, 0.05 * expected)
        out.append({
            "latency_us": lat, "pings": count, "lost": p.lost, "median_rtt_us": med,
            "p99_rtt_us": p.percentile_us(0.99), "increase_us": increase,
            "expected_us": expected, "tolerance_us": tol,
            "pass": abs(increase - expected) <= tol and p.lost == 0,
        })  # fmt: skip
        print(f"{TOOL}: ΔL={lat}us RTT median {med:.1f} us (+{increase:.1f})", file=sys.stderr)
    wire_request(ctl, {"cmd": "set", "latency": "0ns"})
    return out


def _queue_drops(ctl: Path) -> int:
    ports = wire_request(ctl, {"cmd": "stats"})["ports"]
    return sum(int(p["drops"]["queue"]) for p in ports)


def _cpu_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole host, from /proc/stat's first line."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def _iperf(st: testbed.State, seconds: float) -> tuple[dict[str, Any], float]:
    """iperf3 h0 -> h1, and the host's busy cores over it (of os.cpu_count())."""
    busy0, total0 = _cpu_busy()
    doc = netmeasure.iperf3(
        testbed.host_ns(st.prefix, 1), testbed.host_addr(1), testbed.host_ns(st.prefix, 0), seconds
    )
    busy1, total1 = _cpu_busy()
    cores = (busy1 - busy0) / max(1, total1 - total0) * (os.cpu_count() or 1)
    return doc, cores


def _interval_mbit(doc: dict[str, Any]) -> list[float]:
    """The frame rate of each of the run's one-second intervals, the first (slow start)
    left out."""
    m = netmeasure.mss(doc)
    rates = [float(i["sum"]["bits_per_second"]) for i in doc.get("intervals", [])[1:]]
    return [r * (m + netmeasure.FRAME_OVERHEAD) / m / 1e6 for r in rates]


def iperf_case(
    st: testbed.State, limit: int | None, seconds: float, shaper: str = "loggp-wire"
) -> dict[str, Any]:
    """One limit set by the wire, or (shaper tbf) by tc tbf on h0's eth0 with the same
    burst and queue bytes as the wire's defaults, the wire unshaped."""
    ctl = Path(st.control)
    wire_limit = limit if shaper == "loggp-wire" else None
    shape = {"bandwidth": f"{wire_limit}Mbit/s"} if wire_limit else {"bulk_gap": "0ns/B"}
    wire_request(ctl, {"cmd": "set", **shape})
    drops0 = _queue_drops(ctl)
    if shaper == "tbf":
        _tbf(st, f"replace dev eth0 root tbf rate {limit}mbit burst {TBF_BURST_B} "
             f"limit {TBF_LIMIT_B}")  # fmt: skip
    try:
        doc, cores = _iperf(st, seconds)
    finally:
        if shaper == "tbf":
            _tbf(st, "del dev eth0 root")
    wire_mbit = netmeasure.wire_bps(doc) / 1e6
    per_s = _interval_mbit(doc)
    case = {
        "shaper": shaper, "limit_mbit": limit, "seconds": seconds, "mss": netmeasure.mss(doc),
        "goodput_mbit": netmeasure.goodput_bps(doc) / 1e6, "wire_mbit": wire_mbit,
        "retransmits": doc["end"].get("sum_sent", {}).get("retransmits"),
        "queue_drops": _queue_drops(ctl) - drops0, "busy_cores": cores,
        "per_second_min_mbit": min(per_s, default=None),
        "per_second_max_mbit": max(per_s, default=None),
    }  # fmt: skip
    if limit:
        case["error_pct"] = 100.0 * (wire_mbit - limit) / limit
        case["pass"] = abs(wire_mbit - limit) <= 0.05 * limit
    print(f"{TOOL}: {shaper} limit {limit or 'none'} Mbit/s: {wire_mbit:.1f} Mbit/s",
          file=sys.stderr)  # fmt: skip
    return case


def _tbf(st: testbed.State, args: str) -> None:
    argv = [netns.tool("tc", "iproute2"), "qdisc", *args.split()]
    res = subprocess.run(
        netmeasure.ns_argv(testbed.host_ns(st.prefix, 0), argv),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if res.returncode != 0:
        raise LoggpError(f"tc qdisc {args}: {res.stderr.strip()} (the kernel's tbf qdisc)")


def testpmd_rate(st: testbed.State, seconds: float) -> dict[str, Any]:
    """Stops the testbed's wire and forwards the same two veths with dpdk-testpmd."""
    exe = netns.tool("dpdk-testpmd", "dpdk-dev")
    assert st.wire is not None
    stop(st.wire, testbed.STOP_TIMEOUT_S)
    log = Path(st.log).with_name(f"testbed-{st.prefix}-testpmd.log")
    argv = [
        exe, "-l", "0,1", "--no-huge", "--no-pci", "-m", "512", f"--file-prefix=bench-{st.prefix}",
        *[f"--vdev=net_af_packet{i},iface={n}" for i, n in enumerate(st.interfaces)],
        "--", "--forward-mode=io", "--auto-start", "--total-num-mbufs=16384",
    ]  # fmt: skip
    with log.open("wb") as out:
        # testpmd without -i forwards until a line arrives on stdin, or SIGINT/SIGTERM.
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
    try:
        # Its stdout is a file, so fully buffered: forwarding shows as pings answered.
        deadline = time.monotonic() + TESTPMD_READY_S
        while not testbed.ping(st, 0, 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise LoggpError(f"dpdk-testpmd did not start forwarding (log: {log})")
        p = netmeasure.ping(testbed.host_ns(st.prefix, 0), testbed.host_addr(1), 50, 0.01)
        doc = netmeasure.iperf3(
            testbed.host_ns(st.prefix, 1), testbed.host_addr(1), testbed.host_ns(st.prefix, 0),
            seconds,
        )  # fmt: skip
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(f"/var/run/dpdk/bench-{st.prefix}", ignore_errors=True)
    log.unlink()
    mbit = netmeasure.wire_bps(doc) / 1e6
    print(f"{TOOL}: dpdk-testpmd io: {mbit:.1f} Mbit/s", file=sys.stderr)
    return {"wire_mbit": mbit, "goodput_mbit": netmeasure.goodput_bps(doc) / 1e6,
            "median_rtt_us": p.median_us()}  # fmt: skip


def fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "pass" if v else "**FAIL**"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    lines = [
        SECTION_BEGIN,
        "## loggp-wire: latency and bandwidth accuracy, forwarding rate",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, DPDK {m['dpdk']}, "
        f"{m['date']}, load average {m['loadavg_1min']:.2f} at the start. 2 hosts "
        "(network namespaces, veth, MTU 1500) through one loggp-wire in switch mode, "
        f"`--no-huge --no-pci`, net_af_packet, 1 lcore, `--idle-sleep "
        f"{doc['config']['idle_sleep']}`. Written by "
        "`loggp bench wire` (JSON: `docs/benchmarks-wire.json`).",
        "",
        f"Ping h0 → h1, {doc['config']['pings']} pings {doc['config']['ping_interval_s']} s "
        "apart per point, ΔL on every port: the RTT grows by 2·ΔL (one egress each way); "
        "pass within max(10 µs, 5 %).",
        "",
        "| ΔL (µs) | median RTT (µs) | p99 RTT (µs) | increase (µs) | expected (µs) "
        "| tolerance (µs) | lost | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in doc["ping"]:
        lines.append(
            f"| {c['latency_us']} | {fmt(c['median_rtt_us'])} | {fmt(c['p99_rtt_us'])} | "
            f"{fmt(c['increase_us'])} | {fmt(c['expected_us'])} | {fmt(c['tolerance_us'])} | "
            f"{c['lost']} | {fmt(c['pass'])} |"
        )
    lines += [
        "",
        f"iperf3 TCP h0 → h1, {doc['config']['iperf_s']} s per point. The wire limits "
        "Ethernet frame bytes, so goodput is converted: wire rate = goodput · (MSS + 66) / MSS "
        "(66 = 20 IPv4 + 20 TCP + 12 TCP timestamps + 14 Ethernet). Pass within 5 % of the "
        "limit. Queue drops: the wire's `drops.queue` over the run.",
        "",
        "| limit (Mbit/s) | goodput (Mbit/s) | wire rate (Mbit/s) | error | TCP retransmits "
        "| queue drops | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in doc["iperf3"]:
        err = f"{c['error_pct']:+.1f} %" if "error_pct" in c else "-"
        lines.append(
            f"| {c['limit_mbit'] or 'none'} | {fmt(c['goodput_mbit'])} | {fmt(c['wire_mbit'])} | "
            f"{err} | {fmt(c['retransmits'])} | {c['queue_drops']} | "
            f"{fmt(c.get('pass')) if c['limit_mbit'] else 'info'} |"
        )
    if doc.get("tbf"):
        lines += [
            "",
            "The same limits beside the kernel's own token bucket, in the same run: `tc qdisc "
            f"replace dev eth0 root tbf rate R burst {TBF_BURST_B} limit {TBF_LIMIT_B}` on "
            "h0 (the wire's default burst and queue bytes), the wire unshaped. tbf counts the "
            "same frame bytes (header and payload). Per second: the least and most of the "
            "run's one-second frame rates after the first (slow start). Busy cores: the "
            "host's non-idle CPU over the run, iperf3 included; the wire polls a core of its "
            "own with `--idle-sleep 0ns` (the forwarding lcore), shaped or not.",
            "",
            "| limit (Mbit/s) | shaper | wire rate (Mbit/s) | error | per second (Mbit/s) "
            "| TCP retransmits | busy cores |",
            "|---|---|---|---|---|---|---|",
        ]
        wire = {c["limit_mbit"]: c for c in doc["iperf3"] if c["limit_mbit"]}
        for t in doc["tbf"]:
            for c in (wire[t["limit_mbit"]], t):
                lines.append(
                    f"| {c['limit_mbit']} | {c.get('shaper', 'loggp-wire')} | "
                    f"{fmt(c['wire_mbit'])} | {c['error_pct']:+.1f} % | "
                    f"{fmt(c.get('per_second_min_mbit'))}–{fmt(c.get('per_second_max_mbit'))} | "
                    f"{fmt(c['retransmits'])} | {fmt(c.get('busy_cores'), 2)} |"
                )
    t = doc.get("testpmd")
    if t:
        lines += [
            "",
            "Unshaped forwarding against `dpdk-testpmd --forward-mode=io` on the same vdevs "
            f"(iperf3 {doc['config']['iperf_s']} s): loggp-wire {fmt(t['loggp_wire_mbit'])} "
            f"Mbit/s, testpmd {fmt(t['wire_mbit'])} Mbit/s, ratio {t['ratio']:.2f} "
            f"(aim ≥ 0.8: {fmt(t['ratio'] >= 0.8)}); ping RTT median through testpmd "
            f"{fmt(t['median_rtt_us'])} µs vs {fmt(doc['ping'][0]['median_rtt_us'])} µs through "
            "loggp-wire.",
        ]
    lines += ["", SECTION_END]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog=f"loggp bench {NAME}", description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, default=Path("build"), help="CMake build directory")
    ap.add_argument("--out", type=Path, default=Path("docs/benchmarks-wire.json"))
    ap.add_argument("--markdown", type=Path, default=Path("docs/benchmarks.md"))
    ap.add_argument("--prefix", default="lgpbench", help="testbed prefix (default lgpbench)")
    ap.add_argument(
        "--idle-sleep",
        default="0ns",
        help="loggp-wire's --idle-sleep (default 0ns: it polls a core of its own, as on an "
        "emulator node; the testbed's default 20us trades pick-up latency for CPU)",
    )
    ap.add_argument("--pings", type=int, default=200, help="pings per latency point")
    ap.add_argument("--iperf-seconds", type=float, default=8.0, help="seconds per iperf3 run")
    ap.add_argument("--no-testpmd", action="store_true", help="skip the testpmd comparison")
    a = ap.parse_args(argv)
    os.environ["LOGGP_BUILD"] = str(a.build.resolve())
    doc: dict[str, Any] = {
        "tool": TOOL, "version": 1, "machine": machine(),
        "config": {"pings": a.pings, "ping_interval_s": 0.01, "iperf_s": a.iperf_seconds,
                   "latencies_us": LATENCIES_US, "limits_mbit": LIMITS_MBIT,
                   "idle_sleep": a.idle_sleep},
    }  # fmt: skip
    if doc["machine"]["loadavg_1min"] > 0.5:
        print(f"{TOOL}: warning: load average {doc['machine']['loadavg_1min']:.2f}; "
              "other work on this host skews the results", file=sys.stderr)  # fmt: skip
    try:
        st = testbed.up(a.prefix, 2, ["--idle-sleep", a.idle_sleep], None)
        try:
            doc["ping"] = ping_cases(st, a.pings, 0.01)
            doc["iperf3"] = [iperf_case(st, lim, a.iperf_seconds) for lim in [None, *LIMITS_MBIT]]
            doc["tbf"] = [iperf_case(st, lim, a.iperf_seconds, "tbf") for lim in LIMITS_MBIT]
            if not a.no_testpmd:
                t = testpmd_rate(st, a.iperf_seconds)
                t["loggp_wire_mbit"] = doc["iperf3"][0]["wire_mbit"]
                t["ratio"] = t["loggp_wire_mbit"] / t["wire_mbit"]
                doc["testpmd"] = t
        finally:
            testbed.down(a.prefix)
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(doc, indent=1) + "\n")
        write_section(a.markdown, markdown(doc), SECTION_BEGIN, SECTION_END)
    except (LoggpError, OSError) as e:
        print(f"{TOOL}: {e}", file=sys.stderr)
        return 1
    verdicts = [c["pass"] for c in doc["ping"]] + [c["pass"] for c in doc["iperf3"] if "pass" in c]
    # tbf is the reference beside the wire, not judged
    print(f"{TOOL}: {sum(verdicts)}/{len(verdicts)} checks passed; {a.out}, {a.markdown}")
    return 0
