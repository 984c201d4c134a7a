"""loggp-kvserver (services/kvserver/) against clients that do not play along, over real
sockets on 127.0.0.1 (README.md there, "Limits and deadlines", "Persistence", "Protocol
subset"):

- Clients that pipeline GETs of a 1 MiB value and never read: the server's memory stays
  bounded (--max-unsent per connection, --max-buffered for all, 503 beyond it), and a
  fresh GET is answered at once meanwhile and after they reset.
- Clients that do not read, that were rejected and hold the connection, and slowloris
  clients, four per worker thread: no thread waits on them, a fresh GET is answered at once.
- Slowloris heads and slow bodies are dropped by whole-phase deadlines and counted.
- A log with one flipped bit before its tail: the server refuses to start, naming the
  record's offset, unless --recover says what to do; a torn tail still recovers.
- HTTP/1.1 as RFC 9110/9112 say: Host, HEAD, absolute-form targets, HTTP/1.2, chunked
  request bodies, Expect: 100-continue, control characters; with curl where it applies.

Every wait is on an event (a reply, a counter, a closed socket) with a timeout that names
it; the only sleeps pace a slow client's bytes.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import run
from kvserver_util import (
    QUEUES,
    SOCK_TIMEOUT,
    Client,
    Server,
    kvserver_bin,
    metric,
    metrics_of,
    request,
    sanitized,
    servers,
    wait_for,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def server_factory() -> Iterator:
    yield from servers()


MIB = 1 << 20
PROBE_S = 0.1  # a fresh GET, median of several: the bound of the acceptance
PROBES = 5
RESET = b"\x01\0\0\0\0\0\0\0"  # SO_LINGER on, 0 s: close() sends a reset


def probe_seconds(srv: Server) -> list[float]:
    """Times of PROBES GETs of /kv/small, each on a fresh connection."""
    times = []
    for _ in range(PROBES):
        t0 = time.monotonic()
        c = Client(srv.connect())
        r = c.call("GET", "/kv/small")
        times.append(time.monotonic() - t0)
        c.sock.close()
        assert r.status == 200 and r.body == b"small"
    return times


def assert_prompt(times: list[float]) -> None:
    assert statistics.median(times) < PROBE_S and max(times) < 10 * PROBE_S, times


def rss_peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/PID/status")


def non_reader(srv: Server, gets: int, path: str = "/kv/big") -> socket.socket:
    """A connection that pipelines gets GETs and never reads a reply."""
    s = srv.connect(rcvbuf=64 << 10)
    s.sendall(request("GET", path) * gets)
    return s


def reset(socks: list[socket.socket]) -> None:
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
        s.close()


def fill(srv: Server, big: int = MIB) -> None:
    c = Client(srv.connect())
    assert c.call("PUT", "/kv/big", os.urandom(big)).status == 201
    assert c.call("PUT", "/kv/small", b"small").status == 201
    c.sock.close()


# --- bounded memory ----------------------------------------------------------------

HOGS = 20
# 20 x (--max-unsent 1 MiB + one 1 MiB reply) + the rest; 34 MiB measured.  Before
# back-pressure one such client took 262 MiB with 256 GETs, and 1200 aborted the server.
RSS_CAP_MIB = 96


def test_non_reading_clients_hold_bounded_memory(server_factory) -> None:
    srv = server_factory("--threads", "2")
    fill(srv)
    hogs = [non_reader(srv, 1200) for _ in range(HOGS)]
    # Each holds at least --max-unsent of replies once the kernel's buffers are full.
    wait_for(lambda: metric(metrics_of(srv), "kvserver_buffered_bytes") >= HOGS * MIB,
             "every non-reading client holding --max-unsent")  # fmt: skip
    assert_prompt(probe_seconds(srv))
    held = metric(metrics_of(srv), "kvserver_buffered_bytes_max") / MIB
    assert held < HOGS * 3, f"{held:.0f} MiB in connection buffers"
    if not sanitized():  # AddressSanitizer keeps freed memory in quarantine
        peak = rss_peak_mib(srv.proc.pid)
        assert peak < RSS_CAP_MIB, f"peak RSS {peak:.0f} MiB"
    reset(hogs)
    assert_prompt(probe_seconds(srv))
    wait_for(lambda: metric(metrics_of(srv), "kvserver_connections_open") == 1,
             "the reset connections closed")  # fmt: skip
    assert metric(metrics_of(srv), "kvserver_buffered_bytes") < MIB
    summary = srv.stop()
    assert summary["write_errors"] == HOGS
    # Only the GETs whose replies fitted in the buffers were answered, not all 24000.
    assert summary["status"]["200"] < HOGS * 1200 // 10


def test_memory_budget_answers_503(server_factory) -> None:
    srv = server_factory("--max-buffered", str(4 * MIB), "--max-unsent", str(MIB))
    fill(srv)
    hogs = [non_reader(srv, 50) for _ in range(6)]

    def refused() -> bool:
        c = Client(srv.connect())
        r = c.call("GET", "/kv/small")
        ok = r.status == 503 and r.headers["retry-after"] == "1" and c.at_eof()
        c.sock.close()
        return ok

    wait_for(refused, "a GET refused for --max-buffered")
    reset(hogs)
    wait_for(lambda: Client(srv.connect()).call("GET", "/kv/small").status == 200,
             "GET answered once the non-reading clients are gone")  # fmt: skip
    assert metric(metrics_of(srv), "kvserver_over_budget_total") >= 2  # a hog's and ours


# --- no thread waits on a client ---------------------------------------------------


def slowloris(srv: Server) -> socket.socket:
    s = srv.connect()
    s.sendall(b"GET /kv/small HTTP/1.1\r\nHost: t\r\nX-A: ")
    return s


def rejected(srv: Server) -> socket.socket:
    s = srv.connect()
    s.sendall(b"BAD\r\n\r\n")
    return s


@pytest.mark.parametrize("q", QUEUES)
def test_hostile_clients_hold_no_thread(server_factory, q: str) -> None:
    threads = 2
    srv = server_factory("--queue", q, "--threads", str(threads))
    fill(srv)
    n = 4 * threads
    held = [non_reader(srv, 16) for _ in range(n)]
    held += [rejected(srv) for _ in range(n)]
    held += [slowloris(srv) for _ in range(n)]
    wait_for(lambda: metric(metrics_of(srv), 'kvserver_responses_total{code="400"}') == n,
             "every rejected client answered")  # fmt: skip
    assert_prompt(probe_seconds(srv))
    for s in held[n : 2 * n]:
        assert s.recv(100).startswith(b"HTTP/1.1 400 Bad Request")
    reset(held)


# --- deadlines on whole phases -----------------------------------------------------


def drip(socks: list[socket.socket], data: bytes, period: float, timeout: float) -> float:
    """Sends data one byte per socket every period until the server closes every socket;
    the seconds that took."""
    t0 = time.monotonic()
    live = list(socks)
    for s in live:
        s.setblocking(False)
    i = 0
    while live:
        assert time.monotonic() - t0 < timeout, f"{len(live)} slow clients never dropped"
        for s in list(live):
            try:
                if s.recv(4096) == b"":
                    live.remove(s)
                    continue
            except BlockingIOError:
                pass
            except ConnectionError:
                live.remove(s)
                continue
            try:
                s.send(data[i % len(data) : i % len(data) + 1])
            except ConnectionError:
                live.remove(s)
        i += 1
        time.sleep(period)  # the attack's pace, not a synchronisation
    return time.monotonic() - t0


def test_slowloris_head_is_dropped_at_the_header_deadline(server_factory) -> None:
    srv = server_factory("--header-timeout", "500", "--idle-timeout", "10000")
    socks = [srv.connect() for _ in range(8)]
    took = drip(socks, b"GET /kv/x HTTP/1.1\r\nX-Long: " + b"a" * 1000, 0.05, 8)
    assert 0.45 < took < 5, took  # each byte within --idle-timeout: only the phase ends it
    text = metrics_of(srv)
    assert metric(text, "kvserver_header_timeouts_total") == 8
    assert metric(text, "kvserver_stalled_dropped_total") == 0


def test_slow_body_is_dropped_below_the_minimum_rate(server_factory) -> None:
    srv = server_factory("--header-timeout", "300", "--min-body-rate", "1000")
    socks = [srv.connect() for _ in range(4)]
    for s in socks:
        s.sendall(b"PUT /kv/slow HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
    took = drip(socks, b"b", 0.05, 8)  # 20 bytes/s, well below 1000
    assert 0.25 < took < 5, took
    text = metrics_of(srv)
    assert metric(text, "kvserver_body_too_slow_total") == 4
    assert Client(srv.connect()).call("GET", "/kv/slow").status == 404  # never applied


# --- the log -----------------------------------------------------------------------

KEYS = 1000
VALUE_LEN = 103  # with the 20-byte head and a 5-byte key: 128-byte records
RECORD = 128


def write_log(server_factory: Callable[..., Server], log: Path) -> None:
    srv = server_factory("--log", str(log), "--fsync", "none")
    c = Client(srv.connect())
    c.sock.sendall(b"".join(request("PUT", f"/kv/k{i:04}", b"%03d" % (i % 1000) + b"v" * 100)
                            for i in range(KEYS)))  # fmt: skip
    assert all(c.reply().status == 201 for _ in range(KEYS))
    assert srv.stop()["log_records"] == KEYS  # the last fdatasync at exit
    assert log.stat().st_size == KEYS * RECORD


def flip_bit(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x04
    path.write_bytes(bytes(data))


def test_corrupt_log_middle_refuses_to_start(server_factory, tmp_path: Path) -> None:
    log = tmp_path / "kv.log"
    write_log(server_factory, log)
    flip_bit(log, 500)  # in the fourth record, which starts at 384
    size = log.stat().st_size
    proc = run([str(kvserver_bin()), "--port", "0", "--log", str(log)], os.environ,
               timeout=SOCK_TIMEOUT)  # fmt: skip
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert "record at offset 384 is corrupt" in lines[0] and "--recover=" in lines[0], lines[0]
    assert log.stat().st_size == size  # nothing was cut

    srv = server_factory("--log", str(log), "--recover", "skip")
    c = Client(srv.connect())
    assert c.call("GET", "/kv/k0003").status == 404
    assert c.call("GET", "/kv/k0999").body == b"999" + b"v" * 100
    summary = srv.stop()
    assert summary["keys"] == KEYS - 1 and summary["log_skipped_bytes"] == RECORD
    assert "skipped" in srv.proc.stderr.read()
    again = server_factory("--log", str(log))  # the padding stays: no flag needed now
    assert again.stop()["keys"] == KEYS - 1


def test_corrupt_log_recover_truncate_cuts_there(server_factory, tmp_path: Path) -> None:
    log = tmp_path / "kv.log"
    write_log(server_factory, log)
    flip_bit(log, 500)
    srv = server_factory("--log", str(log), "--recover", "truncate")
    summary = srv.stop()
    assert summary["keys"] == 3 and summary["log_truncated_bytes"] == (KEYS - 3) * RECORD
    assert "cut there" in srv.proc.stderr.read()
    assert log.stat().st_size == 3 * RECORD


def test_torn_tail_still_recovers(server_factory, tmp_path: Path) -> None:
    log = tmp_path / "kv.log"
    write_log(server_factory, log)
    os.truncate(log, KEYS * RECORD - 50)  # the last record half-written
    srv = server_factory("--log", str(log))
    summary = srv.stop()
    assert summary["keys"] == KEYS - 1 and summary["log_torn_bytes"] == RECORD - 50
    assert "torn tail" in srv.proc.stderr.read()


# --- HTTP/1.1 as the RFCs say ------------------------------------------------------


def raw(srv: Server, data: bytes) -> bytes:
    """Sends data on a fresh connection; everything the server sends until it closes."""
    s = srv.connect()
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while chunk := s.recv(65536):
        got += chunk
    s.close()
    return got


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET /kv/small HTTP/1.1\r\n\r\n", 400),  # no Host
        (b"GET /kv/small HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET /kv/small HTTP/1.1\r\nHost: t\r\nX: a\0b\r\n\r\n", 400),
        (b"GET /kv/small HTTP/1.1\r\nHost: t\r\nX: a\rb\r\n\r\n", 400),
        (b"GET /kv/sm\x01all HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET /kv/small HTTP/2.0\r\nHost: t\r\n\r\n", 505),
        (b"GET http://example.org/kv/small HTTP/1.1\r\nHost: t\r\n\r\n", 200),
        (b"GET /kv/small HTTP/1.2\r\nHost: t\r\n\r\n", 200),
        (b"HEAD /kv/small HTTP/1.1\r\nHost: t\r\n\r\n", 200),
    ],
)
def test_request_lines_and_fields(server_factory, data: bytes, status: int) -> None:
    srv = server_factory()
    fill(srv, 16)
    got = raw(srv, data)
    assert got.startswith(b"HTTP/1.1 %d " % status), got
    if status == 200 and data.startswith(b"HEAD"):
        assert b"Content-Length: 5\r\n" in got and got.endswith(b"\r\n\r\n")  # no body


def test_head_keeps_the_connection_in_step(server_factory) -> None:
    srv = server_factory()
    fill(srv, 16)
    c = Client(srv.connect())
    c.sock.sendall(request("HEAD", "/kv/big") + request("GET", "/kv/small"))
    while c.buf.count(b"\r\n\r\n") < 2:
        c._fill()
    head, c.buf = c.buf.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK") and head.endswith(b"Content-Length: 16")
    assert c.reply().body == b"small"  # no body came between the two
    c.sock.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
    while b"\r\n\r\n" not in c.buf:
        c._fill()
    assert c.buf.startswith(b"HTTP/1.1 200 OK") and c.buf.endswith(b"\r\n\r\n")
    allow = Client(srv.connect()).call("PATCH", "/kv/x").headers["allow"]
    assert allow == "GET, HEAD, PUT, POST, DELETE"


def test_chunked_request_bodies(server_factory) -> None:
    srv = server_factory("--max-body", "1000")
    c = Client(srv.connect())
    c.sock.sendall(b"PUT /kv/c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")  # fmt: skip
    assert c.reply().status == 201
    assert c.call("GET", "/kv/c").body == b"hello world"
    big = b"PUT /kv/c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
    big += b"200\r\n" + b"x" * 512 + b"\r\n"
    big += b"200\r\n" + b"x" * 512 + b"\r\n0\r\n\r\n"
    assert raw(srv, big).startswith(b"HTTP/1.1 413 ")
    assert raw(srv, big.replace(b"\r\n\r\n200", b"\r\nContent-Length: 5\r\n\r\n200", 1)
               ).startswith(b"HTTP/1.1 400 ")  # fmt: skip


def test_expect_continue_is_answered_before_the_body(server_factory) -> None:
    srv = server_factory("--max-body", "4096")
    c = Client(srv.connect())
    c.sock.sendall(b"PUT /kv/e HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
                   b"Content-Length: 5\r\n\r\n")  # fmt: skip
    assert c.reply().status == 100  # before any byte of the body
    c.sock.sendall(b"hello")
    assert c.reply().status == 201
    c.sock.sendall(b"PUT /kv/e HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
                   b"Content-Length: 5000\r\n\r\n")  # fmt: skip
    r = c.reply()  # the final status, without waiting for the body
    assert r.status == 413 and c.at_eof()


def curl(*args: str) -> subprocess.CompletedProcess:
    if not shutil.which("curl"):
        pytest.skip("curl is not installed")
    return subprocess.run(["curl", "-sS", "--max-time", "10", *args], capture_output=True,
                          text=True, timeout=SOCK_TIMEOUT * 2)  # fmt: skip


def test_curl_upload_head_and_chunked(server_factory, tmp_path: Path) -> None:
    srv = server_factory()
    url = f"http://127.0.0.1:{srv.port}/kv/"
    up = tmp_path / "up"
    up.write_bytes(b"u" * 2048)
    t0 = time.monotonic()
    for i in range(3):  # curl waits up to 1 s for a 100 Continue it asked for
        res = curl("-T", str(up), "-H", "Expect: 100-continue", "-w", "%{http_code}",
                   url + f"up{i}")  # fmt: skip
        assert res.stdout == "201", res.stderr
    assert time.monotonic() - t0 < 1.5
    res = curl("-I", url + "up0")
    assert res.stdout.startswith("HTTP/1.1 200") and "Content-Length: 2048" in res.stdout
    res = curl("-H", "Transfer-Encoding: chunked", "--data-binary", f"@{up}", "-w",
               "%{http_code}", url + "chunked")  # fmt: skip
    assert res.stdout == "201", res.stderr
    assert curl(url + "chunked").stdout == "u" * 2048
