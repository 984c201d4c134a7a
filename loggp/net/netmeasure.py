"""Measurements between the testbed's hosts: ping RTTs and iperf3 TCP throughput.

Used by the integration tests and the wire benchmark (emulator/wire/bench).  Every
process runs inside a host namespace with a deadline, and a failure names what did not
answer.  Root is needed (ip netns exec; ping intervals below 0.2 s).
"""

from __future__ import annotations

import json
import os
import re
import select
import statistics
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from loggp.errors import LoggpError

_RTT_RE = re.compile(r"icmp_seq=(\d+) .*time=([0-9.]+) ms")
# Bytes on the wire per TCP payload byte: each MSS-sized segment carries 40 bytes of IPv4
# and TCP headers, 12 of TCP timestamps and 14 of Ethernet header (what af_packet sees).
FRAME_OVERHEAD = 40 + 12 + 14


class MeasureError(LoggpError):
    """A measurement tool failed or did not answer in time."""


@dataclass
class Ping:
    sent: int
    rtts_ms: dict[int, float]  # icmp_seq -> RTT

    @property
    def lost(self) -> int:
        return self.sent - len(self.rtts_ms)

    def median_us(self) -> float:
        return statistics.median(self.rtts_ms.values()) * 1000.0

    def percentile_us(self, q: float) -> float:
        values = sorted(self.rtts_ms.values())
        return values[min(len(values) - 1, int(q * len(values)))] * 1000.0


def ns_argv(ns: str, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def parse_ping(output: str, sent: int) -> Ping:
    return Ping(sent, {int(m.group(1)): float(m.group(2)) for m in _RTT_RE.finditer(output)})


def ping(ns: str, addr: str, count: int, interval: float, deadline_s: float = 0.0) -> Ping:
    """count pings from namespace ns to addr, interval seconds apart."""
    timeout = deadline_s or count * interval + 15
    argv = ns_argv(ns, ["ping", "-n", "-c", str(count), "-i", f"{interval:g}", "-W", "2", addr])
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise MeasureError(f"ping {addr} from {ns} did not finish in {timeout:g} s") from None
    p = parse_ping(res.stdout, count)
    if not p.rtts_ms:
        raise MeasureError(f"ping {addr} from {ns}: no reply ({res.stderr.strip() or 'no error'})")
    return p


def _read_some(proc: subprocess.Popen[bytes], timeout: float) -> str | None:
    """What proc has written to its stdout pipe within timeout: "" if nothing yet, None
    at end of file.  Reads the pipe unbuffered, so select() sees every byte."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    if not select.select([fd], [], [], max(0.0, timeout))[0]:
        return ""
    data = os.read(fd, 65536)
    return data.decode(errors="replace") if data else None


class PingStream:
    """A ping running in the background whose replies can be awaited one by one."""

    def __init__(self, ns: str, addr: str, count: int, interval: float) -> None:
        self.count = count
        self.what = f"ping {addr} from {ns}"
        self.proc = subprocess.Popen(
            ns_argv(ns, ["ping", "-n", "-c", str(count), "-i", f"{interval:g}", "-W", "2", addr]),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.output = ""

    def wait_seq(self, seq: int, timeout: float) -> None:
        """Returns once the reply to icmp_seq seq (or a later one) has been printed."""
        deadline = time.monotonic() + timeout
        while True:
            seen = [int(m.group(1)) for m in _RTT_RE.finditer(self.output)]
            if seen and max(seen) >= seq:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise MeasureError(f"{self.what}: no reply to icmp_seq {seq} in {timeout:g} s")
            got = _read_some(self.proc, left)
            if got is None:
                raise MeasureError(f"{self.what} ended before icmp_seq {seq}")
            self.output += got

    def finish(self, timeout: float) -> Ping:
        try:
            rest, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise MeasureError(f"{self.what} did not finish in {timeout:g} s") from None
        self.output += (rest or b"").decode(errors="replace")
        return parse_ping(self.output, self.count)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def iperf3(
    server_ns: str, server_addr: str, client_ns: str, seconds: float, port: int = 5201
) -> dict[str, Any]:
    """One iperf3 TCP run client_ns -> server_addr; its JSON report (the server is
    started first and awaited until it listens)."""
    server = subprocess.Popen(
        ns_argv(server_ns, ["iperf3", "-s", "-1", "-B", server_addr, "-p", str(port),
                            "--forceflush"]),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        seen = ""
        while "listening" not in seen:
            left = deadline - time.monotonic()
            got = _read_some(server, left) if left > 0 else ""
            if got is None:
                raise MeasureError(f"iperf3 server in {server_ns} exited: {seen.strip()}")
            if not got and time.monotonic() >= deadline:
                raise MeasureError(f"iperf3 server in {server_ns} did not listen within 10 s")
            seen += got
        argv = ns_argv(
            client_ns,
            ["iperf3", "-c", server_addr, "-p", str(port), "-t", f"{seconds:g}", "-J"],
        )
        try:
            res = subprocess.run(
                argv, capture_output=True, text=True, timeout=seconds + 30, check=False
            )
        except subprocess.TimeoutExpired:
            raise MeasureError(f"iperf3 client in {client_ns} did not finish") from None
        try:
            doc = json.loads(res.stdout)
        except ValueError:
            raise MeasureError(f"iperf3 client in {client_ns}: {res.stderr.strip()}") from None
        if "error" in doc:
            raise MeasureError(f"iperf3 client in {client_ns}: {doc['error']}")
        return doc
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


def goodput_bps(doc: dict[str, Any]) -> float:
    """Payload bits per second the receiver got."""
    return float(doc["end"]["sum_received"]["bits_per_second"])


def mss(doc: dict[str, Any]) -> int:
    """The connection's TCP maximum segment size (1448 on a 1500-byte MTU with timestamps)."""
    return int(doc["start"].get("tcp_mss_default") or 1448)


def wire_bps(doc: dict[str, Any]) -> float:
    """Ethernet frame bits per second the wire carried for that goodput (MSS-sized
    segments; ACKs go the other way, through the other port)."""
    m = mss(doc)
    return goodput_bps(doc) * (m + FRAME_OVERHEAD) / m
