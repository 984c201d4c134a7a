"""loggp-wire, the DPDK wire emulator: command-line errors and one end-to-end run.

The end-to-end test builds its own two-host testbed (two network namespaces,
each joined to the root namespace by a veth pair whose root ends the wire
opens with net_af_packet), pings across the wire, raises the latency live
through the control socket, reads /metrics and stops the wire with SIGINT.
Everything it creates is named after the test process id and removed in a
finalizer, also when a step fails.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import BUILD, free_port

WIRE = BUILD / "emulator" / "wire" / "loggp-wire"
READY_TIMEOUT = 60.0
EAL_BASE = ["-l", "0", "--no-huge", "--no-pci", "-m", "256"]
DPDK_RUNTIME = Path("/var/run/dpdk")  # DPDK leaves <file-prefix>/ here after exit

pytestmark = [pytest.mark.integration, pytest.mark.serial]


def dpdk_installed() -> bool:
    if not shutil.which("pkg-config"):
        return False
    probe = subprocess.run(
        ["pkg-config", "--exists", "libdpdk"], capture_output=True, timeout=30, check=False
    )
    return probe.returncode == 0


@pytest.fixture(scope="module")
def wire() -> Path:
    """The built binary: a failure when DPDK is there but the program is not."""
    if not WIRE.is_file():
        if not dpdk_installed():
            pytest.skip("DPDK (libdpdk-dev) is not installed, so loggp-wire is not built")
        pytest.fail(f"{WIRE} missing: build target loggp-wire (LOGGP_BUILD={BUILD})")
    return WIRE


def run_wire(wire: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(wire), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def wire_lines(stderr: str) -> list[str]:
    """The program's own stderr lines (the EAL logs lines of its own)."""
    return [ln for ln in stderr.splitlines() if ln.startswith("loggp-wire: ")]


@pytest.mark.parametrize(
    ("app_args", "message"),
    [
        (["--frobnicate", "1"], "loggp-wire: unknown option '--frobnicate': expected one of"),
        (
            ["--latency", "-5us"],
            "loggp-wire: bad value '-5us' for --latency: expected <number>{ns|us|ms|s}",
        ),
        (["--latency", "5parsecs"], "loggp-wire: bad value '5parsecs' for --latency: expected"),
        (["--bandwidth", "100Mbit"], "loggp-wire: bad value '100Mbit' for --bandwidth: expected"),
        (["--loss", "2"], "loggp-wire: bad value '2' for --loss: expected a probability"),
        (["--mode", "hub"], "loggp-wire: bad value 'hub' for --mode: expected switch or pair"),
        (["--latency"], "loggp-wire: missing value for --latency"),
    ],
)
def test_bad_app_option(wire: Path, app_args: list[str], message: str) -> None:
    """App options are checked before the EAL starts: exactly one line, status 1."""
    res = run_wire(wire, *EAL_BASE, "--", *app_args)
    assert res.returncode == 1, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(message), lines[0]
    assert "ready" not in res.stdout


def test_missing_interface(wire: Path) -> None:
    res = run_wire(wire, *EAL_BASE, "--vdev=net_af_packet0,iface=lgpnosuch0", "--")
    assert res.returncode == 1, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("loggp-wire: no such interface 'lgpnosuch0'"), lines[0]


def test_help(wire: Path) -> None:
    res = run_wire(wire, "--", "--help")
    assert res.returncode == 0, res
    assert "--latency" in res.stdout and "--idle-sleep" in res.stdout


def needs_netns() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces and af_packet need root")
    for tool in ("ip", "ethtool", "ping", "sysctl"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")


@pytest.mark.needs_root
def test_no_ports(wire: Path, tmp_path: Path) -> None:
    needs_netns()
    prefix = f"wtnp{os.getpid()}"
    try:
        res = run_wire(wire, *EAL_BASE, f"--file-prefix={prefix}", "--")
    finally:
        shutil.rmtree(DPDK_RUNTIME / prefix, ignore_errors=True)
    assert res.returncode == 1, res
    assert wire_lines(res.stderr) == [
        "loggp-wire: no ports: pass --vdev=net_af_packet0,iface=IFACE per port"
    ], res.stderr


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30)


@dataclass
class Bed:
    """Two hosts <prefix>-h0/-h1 (10.231.0.1/.2) behind root ends <prefix>w0/w1."""

    prefix: str
    hosts: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def up(self, n: int) -> None:
        for i in range(n):
            ns, root = f"{self.prefix}-h{i}", f"{self.prefix}w{i}"
            sh("ip", "netns", "add", ns)
            self.hosts.append(ns)
            sh("ip", "link", "add", root, "type", "veth", "peer", "name", "eth0", "netns", ns)
            self.links.append(root)
            sh("sysctl", "-qw", f"net.ipv6.conf.{root}.disable_ipv6=1")
            sh("ip", "link", "set", root, "mtu", "1500", "up")
            sh("ethtool", "-K", root, "tx", "off", "rx", "off", "tso", "off", "gso", "off",
               "gro", "off")  # fmt: skip
            inside = ["ip", "netns", "exec", ns]
            sh(*inside, "ethtool", "-K", "eth0", "tx", "off", "rx", "off", "tso", "off",
               "gso", "off", "gro", "off")  # fmt: skip
            sh(*inside, "ip", "addr", "add", f"10.231.0.{i + 1}/24", "dev", "eth0")
            sh(*inside, "ip", "link", "set", "eth0", "up")
            sh(*inside, "ip", "link", "set", "lo", "up")

    def down(self) -> None:
        for link in self.links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=30)
        for ns in self.hosts:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


class Wire:
    """A running loggp-wire whose stdout lines are collected by a thread."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.out: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_ready(self) -> str:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"loggp-wire printed no ready line in {READY_TIMEOUT}s")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"loggp-wire exited before ready: {err}")
            self.out.append(line)
            if line.startswith("loggp-wire: ready"):
                return line

    def stop(self, timeout: float = 30) -> tuple[int, list[str]]:
        """SIGINT, then the exit status and the rest of stdout."""
        self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"loggp-wire did not exit {timeout}s after SIGINT") from exc
        rest: list[str] = []
        while (line := self.lines.get(timeout=timeout)) is not None:
            rest.append(line)
        return rc, rest

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


class Control:
    """One connection to the control socket; one JSON line per request."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rw")

    def request(self, req: dict[str, object]) -> dict[str, object]:
        self.file.write(json.dumps(req) + "\n")
        self.file.flush()
        line = self.file.readline()
        assert line.endswith("\n"), f"no answer to {req}"
        answer: dict[str, object] = json.loads(line)
        return answer

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@dataclass
class Running:
    wire: Wire
    control: Path
    metrics_port: int
    stats_json: Path
    hosts: list[str]


@pytest.fixture
def testbed(wire: Path, tmp_path: Path) -> Iterator[Running]:
    needs_netns()
    prefix = f"wt{os.getpid() % 100000}"
    bed = Bed(prefix)
    proc: Wire | None = None
    try:
        bed.up(2)
        control = tmp_path / "wire.sock"
        stats_json = tmp_path / "stats.json"
        port = free_port()
        vdevs = [f"--vdev=net_af_packet{i},iface={link}" for i, link in enumerate(bed.links)]
        cmd = [str(wire), *EAL_BASE, f"--file-prefix={prefix}", *vdevs, "--"]
        cmd += ["--mode", "switch", "--control", str(control)]
        cmd += ["--metrics", f"127.0.0.1:{port}", "--stats-json", str(stats_json)]
        proc = Wire(cmd)
        assert proc.wait_ready() == "loggp-wire: ready ports=2"
        yield Running(proc, control, port, stats_json, bed.hosts)
    finally:
        if proc is not None:
            proc.kill()
        bed.down()
        shutil.rmtree(DPDK_RUNTIME / prefix, ignore_errors=True)


def ping_rtts(host: str, count: int) -> list[float]:
    """RTTs in ms of count pings from host to 10.231.0.2; all must answer."""
    res = subprocess.run(
        ["ip", "netns", "exec", host, "ping", "-n", "-c", str(count), "-i", "0.05", "-W", "5",
         "10.231.0.2"],
        capture_output=True, text=True, timeout=60 + count, check=False,
    )  # fmt: skip
    rtts = [float(tok.split("=")[1]) for tok in res.stdout.split() if tok.startswith("time=")]
    assert res.returncode == 0 and len(rtts) == count, res.stdout + res.stderr
    return rtts


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.status == 200
        assert "version=0.0.4" in resp.headers["Content-Type"]
        body = resp.read().decode()
    values: dict[str, float] = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


@pytest.mark.needs_root
@pytest.mark.slow
def test_forward_latency_metrics(testbed: Running) -> None:
    h0 = testbed.hosts[0]
    ping_rtts(h0, 3)  # ARP and MAC learning
    base = statistics.median(ping_rtts(h0, 20))

    ctl = Control(testbed.control)
    try:
        # Errors name what is wrong and leave the connection usable.
        bad = ctl.request({"cmd": "set", "port": 5, "latency": "1ms"})
        assert bad["ok"] is False and "port 5 out of range" in str(bad["error"]), bad
        bad = ctl.request({"cmd": "set", "latency": "-5us"})
        assert bad["ok"] is False and "bad value '-5us' for latency" in str(bad["error"]), bad
        bad = ctl.request({"cmd": "set", "colour": "red"})
        assert bad["ok"] is False and "unknown key 'colour'" in str(bad["error"]), bad

        ok = ctl.request({"cmd": "set", "latency": "2ms"})
        assert ok["ok"] is True, ok
        got = ctl.request({"cmd": "get"})
        assert got["mode"] == "switch"
        ports = got["ports"]
        assert isinstance(ports, list) and len(ports) == 2
        assert all(p["latency_ns"] == 2_000_000 for p in ports), ports
        assert ports[0]["name"] == "net_af_packet0"
        # The set returns once the loop runs with 2 ms: every packet sent from now on is
        # delayed.  Before it none was (knobs at zero), so none counts in the lateness.
        before = ctl.request({"cmd": "stats"})["ports"]
        assert isinstance(before, list)
        assert all(p["releases"] == 0 and sum(p["late_hist_us"]) == 0 for p in before), before
    finally:
        ctl.close()

    shaped = statistics.median(ping_rtts(h0, 20))
    # Each direction crosses one egress with 2 ms: RTT grows by about 4 ms.
    assert 3.0 < shaped - base < 20.0, (base, shaped)

    m = metrics(testbed.metrics_port)
    for p in ("0", "1"):
        assert m[f'loggp_wire_rx_packets_total{{port="{p}"}}'] >= 43
        assert m[f'loggp_wire_tx_packets_total{{port="{p}"}}'] >= 43
        assert m[f'loggp_wire_drops_total{{port="{p}",cause="queue"}}'] == 0
        assert m[f'loggp_wire_latency_seconds{{port="{p}"}}'] == pytest.approx(0.002)
        # The 20 shaped echoes (or replies) waited more than 1 ms in the wire.
        le_1ms = m[f'loggp_wire_added_delay_seconds_bucket{{port="{p}",le="0.001"}}']
        total = m[f'loggp_wire_added_delay_seconds_count{{port="{p}"}}']
        assert total - le_1ms >= 20
        # The wire's own error: those delayed packets in its lateness histogram, none early.
        late = m[f'loggp_wire_release_late_seconds_count{{port="{p}"}}']
        assert late >= 20
        assert m[f'loggp_wire_release_late_seconds_bucket{{port="{p}",le="+Inf"}}'] == late
        assert m[f'loggp_wire_release_late_seconds_bucket{{port="{p}",le="1e-06"}}'] <= late
        assert m[f'loggp_wire_release_late_seconds_sum{{port="{p}"}}'] >= 0
        assert m[f'loggp_wire_early_releases_total{{port="{p}"}}'] == 0
        assert f'loggp_wire_release_late_over_10us_total{{port="{p}"}}' in m

    rc, rest = testbed.wire.stop()
    assert rc == 0
    totals = json.loads(rest[-1])
    assert totals == json.loads(testbed.stats_json.read_text())
    assert [p["port"] for p in totals["ports"]] == [0, 1]
    for port, old in zip(totals["ports"], before, strict=True):
        assert {"queue", "loss", "tx"} <= port["drops"].keys(), port
        assert not any(port["drops"].values()), port
        # Each packet sent since the set counted once in the lateness, none early.
        assert port["releases"] - old["releases"] == port["tx_pkts"] - old["tx_pkts"], port
        assert sum(port["late_hist_us"]) == port["releases"], port
        assert port["early_releases"] == 0, port
        assert port["late_max_ns"] * port["releases"] >= port["late_ns"], port
    assert not testbed.control.exists()


def read_to_eof(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


@pytest.mark.needs_root
@pytest.mark.slow
def test_idle_scrapers_cannot_lock_out_control(testbed: Running) -> None:
    """Metrics and control connections have 32 slots each: a client past the limit is told
    why, scrapers that send nothing are closed after 5 s idle, and control still works."""
    opened = time.monotonic()
    idle = [
        socket.create_connection(("127.0.0.1", testbed.metrics_port), timeout=30) for _ in range(32)
    ]
    controls: list[Control] = []
    try:
        # The server accepts in arrival order, so the 33rd is the one turned away.
        with socket.create_connection(("127.0.0.1", testbed.metrics_port), timeout=30) as extra:
            refused = read_to_eof(extra)
        assert refused.startswith(b"HTTP/1.0 503 "), refused
        assert b"too many metrics connections (32 open)" in refused

        controls = [Control(testbed.control) for _ in range(32)]
        assert all(c.request({"cmd": "get"})["ok"] is True for c in controls)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as extra:
            extra.settimeout(30)
            extra.connect(str(testbed.control))
            turned_away = json.loads(read_to_eof(extra))
        assert turned_away["ok"] is False
        assert "too many control connections (32 open)" in turned_away["error"]

        assert idle[0].recv(1) == b""  # closed by the wire, not by our timeout
        assert time.monotonic() - opened >= 4.5
        assert all(s.recv(1) == b"" for s in idle[1:])
        assert metrics(testbed.metrics_port)['loggp_wire_latency_seconds{port="0"}'] == 0
    finally:
        for s in idle:
            s.close()
        for c in controls:
            c.close()
