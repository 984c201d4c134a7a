"""loggp-kvserver (services/kvserver/) over real sockets on 127.0.0.1.

- HTTP conformance of the subset: routes and status codes, keep-alive,
  pipelining, Connection: close and HTTP/1.0, bad and oversized requests, a
  client that stalls mid-request (dropped after --idle-timeout and counted),
  a client that disconnects mid-reply, a full queue answered with 503.
- A concurrency torture test per queue and store variant, checked against a
  model of what each client wrote.
- --fsync always: SIGKILL under load, restart, every acknowledged write is
  there.
- Idle workers of the lock-free queue use (almost) no CPU.
- httperf sessions of GET/PUT/DELETE at a fixed rate: no errors, no
  fd-unavail.

Every server is started with --port 0 and waited for through its ready
line; every socket has a timeout; nothing waits by sleeping.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import json_line, run
from kvserver_util import (
    QUEUES,
    SOCK_TIMEOUT,
    STORES,
    Client,
    Server,
    cpu_ticks,
    kvserver_bin,
    metric,
    request,
    servers,
    wait_for,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def server_factory() -> Iterator:
    yield from servers()


def fnv_rounds(value: bytes, rounds: int) -> str:
    h = 0xCBF29CE484222325
    for _ in range(rounds):
        for c in value:
            h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# --- command line ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--queue", "spin"], 2, "bad value 'spin' for --queue: expected one of mutex, lockfree"),
        (["--threads", "0"], 2, "bad value '0' for --threads: expected an integer from 1 to 256"),
        (["--fsync", "sometimes"], 2, "expected one of always, interval, none"),
        (["--bogus"], 2, "unknown option --bogus"),
        (["--log", "/nonexistent/dir/kv.log"], 1, "cannot open log /nonexistent/dir/kv.log"),
        (["--bind", "localhost"], 1, "--bind 'localhost' is not an IPv4 address"),
    ],
)
def test_bad_options_are_one_clear_line(args: list[str], code: int, message: str) -> None:
    proc = run([str(kvserver_bin()), "--port", "0", *args], os.environ, timeout=SOCK_TIMEOUT)
    lines = proc.stderr.splitlines()
    assert proc.returncode == code and len(lines) == 1, proc.stderr
    assert lines[0].startswith("loggp-kvserver: ") and message in lines[0]


# --- conformance ---------------------------------------------------------------


def test_routes_status_codes_and_keep_alive(server_factory) -> None:
    srv = server_factory("--hash-rounds", "3")
    c = Client(srv.connect())
    r = c.call("PUT", "/kv/alpha", b"one")
    assert r.status == 201 and r.headers["x-value-hash"] == fnv_rounds(b"one", 3)
    assert c.call("PUT", "/kv/alpha", b"two").status == 204
    r = c.call("GET", "/kv/alpha")
    assert (r.status, r.body, r.headers["x-value-hash"]) == (200, b"two", fnv_rounds(b"two", 3))
    assert c.call("POST", "/kv/beta", b"").status == 201
    assert c.call("GET", "/kv/beta").body == b""
    assert c.call("DELETE", "/kv/alpha").status == 204
    assert c.call("GET", "/kv/alpha").status == 404
    assert c.call("DELETE", "/kv/alpha").status == 404
    r = c.call("PATCH", "/kv/beta", b"x")
    assert r.status == 405 and r.headers["allow"] == "GET, HEAD, PUT, POST, DELETE"
    assert c.call("GET", "/elsewhere").status == 404
    assert c.call("GET", "/kv/").status == 400
    assert c.call("GET", "/kv/" + "k" * 257).status == 400
    assert c.call("DELETE", "/metrics").status == 405
    text = c.call("GET", "/metrics").body.decode()
    assert metric(text, 'kvserver_responses_total{code="404"}') == 3
    assert metric(text, "kvserver_keys") == 1
    assert metric(text, "kvserver_connections_open") == 1
    assert 'kvserver_request_seconds_bucket{le="+Inf"} 13' in text
    c.sock.close()
    summary = srv.stop()
    assert summary["requests"] == 14 and summary["accepted"] == 1
    assert summary["status"] == {"200": 3, "201": 2, "204": 2, "400": 2, "404": 3, "405": 2}


def test_pipelining_and_connection_close(server_factory) -> None:
    srv = server_factory("--threads", "1")
    c = Client(srv.connect())
    burst = b"".join(request("PUT", f"/kv/p{i}", str(i).encode()) for i in range(40))
    burst += b"".join(request("GET", f"/kv/p{i}") for i in range(40))
    burst += request("GET", "/kv/p7", None, "Connection: close")
    c.sock.sendall(burst)
    assert [c.reply().status for _ in range(40)] == [201] * 40
    assert [c.reply().body for _ in range(40)] == [str(i).encode() for i in range(40)]
    last = c.reply()
    assert last.body == b"7" and last.headers["connection"] == "close"
    assert c.at_eof()


def test_http10_closes_unless_keep_alive(server_factory) -> None:
    srv = server_factory()
    c = Client(srv.connect())
    c.sock.sendall(b"GET /kv/x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    r = c.reply()
    assert r.status == 404 and r.headers["connection"] == "keep-alive"
    c.sock.sendall(b"GET /kv/x HTTP/1.0\r\n\r\n")
    assert c.reply().status == 404
    assert c.at_eof()


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"NONSENSE\r\n\r\n", 400),
        (b"GET /kv/a HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        (b"GET /kv/a HTTP/1.1\r\nContent-Length: ten\r\n\r\n", 400),
        (b"PUT /kv/a HTTP/1.1\r\nHost: t\r\n\r\n", 411),
        (b"PUT /kv/a HTTP/1.1\r\nHost: t\r\nContent-Length: 1025\r\n\r\n" + b"v" * 1025, 413),
        (b"GET /kv/a HTTP/1.1\r\nX-Big: " + b"h" * 600 + b"\r\n\r\n", 431),
        (b"GET /kv/" + b"k" * 700, 431),
        (b"PUT /kv/a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        (b"GET /kv/a HTTP/3.0\r\n\r\n", 505),
    ],
)
def test_bad_requests_are_answered_and_closed(server_factory, raw: bytes, status: int) -> None:
    srv = server_factory("--max-body", "1024", "--max-header", "512")
    c = Client(srv.connect())
    c.sock.sendall(raw)
    r = c.reply()
    assert r.status == status and r.headers["connection"] == "close"
    assert c.at_eof()
    ok = Client(srv.connect())
    assert ok.call("PUT", "/kv/a", b"v" * 1024).status == 201


def test_stalled_and_idle_clients_are_dropped_and_counted(server_factory) -> None:
    srv = server_factory("--idle-timeout", "300")
    stalled = Client(srv.connect())
    stalled.sock.sendall(b"PUT /kv/s HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
    idle = Client(srv.connect())
    t0 = time.monotonic()  # before the idle client's last activity
    assert idle.call("GET", "/kv/s").status == 404
    assert stalled.at_eof() and idle.at_eof()
    assert 0.3 < time.monotonic() - t0 < SOCK_TIMEOUT
    text = Client(srv.connect()).call("GET", "/metrics").body.decode()
    assert metric(text, "kvserver_stalled_dropped_total") == 1
    assert metric(text, "kvserver_idle_closed_total") == 1
    assert Client(srv.connect()).call("GET", "/kv/s").status == 404  # never applied


def test_client_that_disconnects_mid_reply(server_factory) -> None:
    srv = server_factory("--max-body", str(2 << 20), "--threads", "1")
    big = os.urandom(2 << 20)
    assert Client(srv.connect()).call("PUT", "/kv/big", big).status == 201
    rude = Client(srv.connect(rcvbuf=4096))
    rude.sock.sendall(request("GET", "/kv/big") * 8)  # 16 MiB of replies
    assert rude.sock.recv(100).startswith(b"HTTP/1.1 200 OK")
    rude.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    rude.sock.close()  # a reset while replies wait to be written
    r = Client(srv.connect()).call("GET", "/kv/big")
    assert r.status == 200 and r.body == big
    summary = srv.stop()
    # Replies beyond --max-unsent were never made: the server stopped reading.
    assert summary["write_errors"] == 1 and 2 <= summary["status"]["200"] < 9


def test_out_of_descriptors_pauses_accepting_and_recovers(server_factory) -> None:
    srv = server_factory("--threads", "1", nofile=24)
    crowd = [Client(srv.connect()) for _ in range(40)]  # the kernel queues what is not accepted
    assert crowd[0].call("GET", "/kv/x").status == 404
    for c in crowd:
        c.sock.close()
    assert Client(srv.connect()).call("GET", "/kv/x").status == 404
    assert srv.stop()["accepted"] == 41  # the crowd waited in the backlog, then came in
    assert "pausing" in (srv.proc.stderr.read() if srv.proc.stderr else "")


@pytest.mark.parametrize("q", ["mutex", "lockfree"])
def test_full_queue_is_refused_with_503(server_factory, q: str) -> None:
    # The only worker is held by CPU work (hashing 64 KiB 10000 times, about 0.7 s),
    # never by a client: one waiting for a reply holds no thread.
    srv = server_factory("--queue", q, "--threads", "1", "--queue-capacity", "1",
                         "--hash-rounds", "10000")  # fmt: skip
    writer = Client(srv.connect())  # kept open: its close would be one more queued event
    assert writer.call("PUT", "/kv/big", os.urandom(64 << 10)).status == 201
    busy_from = cpu_ticks(srv.proc.pid)
    writer.send("GET", "/kv/big")
    tick = 1 / os.sysconf("SC_CLK_TCK")
    wait_for(lambda: (cpu_ticks(srv.proc.pid) - busy_from) * tick >= 0.1, "the worker hashing")
    queued = Client(srv.connect())
    queued.send("GET", "/kv/nothing")
    refused = Client(srv.connect())
    refused.send("GET", "/kv/nothing")
    r = refused.reply()
    assert r.status == 503 and refused.at_eof()
    assert writer.reply().status == 200
    assert queued.reply().status == 404  # served once the worker is free
    assert srv.stop()["queue_full"] == 1


# --- concurrency torture ------------------------------------------------------------


def torture(srv: Server, nthreads: int = 6, ops: int = 250) -> int:
    """Clients with private keys (checked against an exact model) and shared keys
    (a GET must return a value some client wrote); returns the requests sent."""
    written_shared: set[bytes] = set()
    lock = threading.Lock()
    errors: list[str] = []
    sent = [0] * nthreads

    def client(t: int) -> None:
        rnd = random.Random(t)
        model: dict[str, bytes] = {}
        c = Client(srv.connect())
        try:
            for i in range(ops):
                if rnd.random() < 0.05:  # a new connection now and then
                    c.sock.close()
                    c = Client(srv.connect())
                op = rnd.random()
                if op < 0.2:  # shared keys: any value written is acceptable
                    key, val = f"/kv/shared{rnd.randrange(4)}", f"{t}-{i}".encode()
                    with lock:
                        written_shared.add(val)
                    c.call("PUT", key, val)
                    r = c.call("GET", key)
                    sent[t] += 2
                    if r.body not in written_shared:
                        errors.append(f"shared {key}: {r.body!r} was never written")
                    continue
                key = f"t{t}-{rnd.randrange(12)}"
                path = "/kv/" + key
                if op < 0.5:
                    val = os.urandom(rnd.randrange(0, 3000))
                    want = 204 if key in model else 201
                    r = c.call(rnd.choice(["PUT", "POST"]), path, val)
                    model[key] = val
                elif op < 0.65:
                    want = 204 if key in model else 404
                    r = c.call("DELETE", path)
                    model.pop(key, None)
                elif op < 0.8:  # a pipelined burst of reads
                    keys = [f"t{t}-{k}" for k in range(12)]
                    c.sock.sendall(b"".join(request("GET", "/kv/" + k) for k in keys))
                    sent[t] += 12
                    for k in keys:
                        r = c.reply()
                        got = r.body if r.status == 200 else None
                        if got != model.get(k):
                            errors.append(f"{k}: {r.status} {got!r:.40} != {model.get(k)!r:.40}")
                    continue
                else:
                    r = c.call("GET", path)
                    want = 200 if key in model else 404
                    if want == 200 and r.body != model[key]:
                        errors.append(f"{key}: value differs from the last write")
                sent[t] += 1
                if r.status != want:
                    errors.append(f"{key}: {r.status} where {want} was due")
        except (OSError, ValueError) as e:
            errors.append(f"client {t}: {e!r}")
        finally:
            c.sock.close()

    threads = [threading.Thread(target=client, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "a client thread hung"
    assert not errors, errors[:5]
    return sum(sent)


@pytest.mark.parametrize("q", QUEUES)
@pytest.mark.parametrize("store", STORES)
def test_torture_every_variant_against_a_model(server_factory, q: str, store: str) -> None:
    srv = server_factory("--queue", q, "--store", store, "--threads", "3", "--shards", "4")
    sent = torture(srv)
    summary = srv.stop()
    assert summary["requests"] == sent
    assert set(summary["status"]) <= {"200", "201", "204", "404"}


# --- persistence ---------------------------------------------------------------


def test_fsync_always_survives_kill_under_load(server_factory, tmp_path: Path) -> None:
    log = tmp_path / "kv.log"
    args = ("--log", str(log), "--fsync", "always", "--threads", "4")
    srv = server_factory(*args)
    acked: dict[str, bytes | None] = {}  # key -> value (None: deleted)
    inflight: dict[int, tuple[str, bytes | None]] = {}  # may or may not have happened
    lock = threading.Lock()
    enough = threading.Event()

    def write(c: Client, t: int, key: str, val: bytes | None) -> bool:
        with lock:
            inflight[t] = (key, val)
        r = c.call("PUT", "/kv/" + key, val) if val is not None else c.call("DELETE", "/kv/" + key)
        if r.status not in (201, 204):
            return False
        with lock:
            acked[key] = val
            del inflight[t]
            if len(acked) >= 300:
                enough.set()
        return True

    def writer(t: int) -> None:
        try:
            c = Client(srv.connect())
            for i in range(100000):
                if not write(c, t, f"w{t}-{i}", f"{t}:{i}".encode() * 7):
                    return
                if i % 3 == 2 and not write(c, t, f"w{t}-{i - 1}", None):
                    return
        except (OSError, ValueError):
            pass  # the server died under us: this write was never acknowledged

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    assert enough.wait(timeout=60), f"only {len(acked)} writes acknowledged in 60 s"
    srv.kill()
    for th in threads:
        th.join(timeout=30)
    with lock:
        snapshot = dict(acked)
        maybe = dict(inflight.values())
    again = server_factory(*args)
    c = Client(again.connect())
    lost = []
    for key, val in snapshot.items():
        r = c.call("GET", "/kv/" + key)
        got = r.body if r.status == 200 else None
        if got != val and not (key in maybe and got == maybe[key]):
            lost.append(key)
    assert not lost, f"{len(lost)} acknowledged writes lost, e.g. {lost[:3]}"
    summary = again.stop()
    assert summary["log_replayed"] >= len(snapshot)


def test_clean_restart_replays_the_log(server_factory, tmp_path: Path) -> None:
    log = tmp_path / "kv.log"
    srv = server_factory("--log", str(log), "--fsync", "none")
    c = Client(srv.connect())
    for i in range(50):
        c.call("PUT", f"/kv/k{i}", b"x" * i)
    c.call("DELETE", "/kv/k3")
    assert srv.stop()["log_records"] == 51
    again = server_factory("--log", str(log), "--fsync", "interval", "--store", "sharded")
    c = Client(again.connect())
    assert c.call("GET", "/kv/k3").status == 404
    assert c.call("GET", "/kv/k49").body == b"x" * 49
    assert again.stop()["keys"] == 49


# --- idle CPU ------------------------------------------------------------------


def test_lockfree_idle_workers_use_no_cpu(server_factory) -> None:
    srv = server_factory("--queue", "lockfree", "--threads", "8")
    c = Client(srv.connect())
    for i in range(20):
        c.call("PUT", f"/kv/{i}", b"v")
    c.sock.close()
    window = 5.0
    before, t0 = cpu_ticks(srv.proc.pid), time.monotonic()
    time.sleep(window)  # the measurement window, not a synchronisation
    used = (cpu_ticks(srv.proc.pid) - before) / os.sysconf("SC_CLK_TCK")
    assert used < 0.01 * (time.monotonic() - t0), f"{used:.3f} s of CPU in {window} s idle"


# --- httperf -------------------------------------------------------------------

HTTPERF_KEYS = 50


def httperf(srv: Server, sessions: int, rate: int) -> dict[str, Any]:
    """loggp-httperf (httperf's --wsesslog mixes of GET/PUT/DELETE, loggp/drivers) against
    the server; its result line."""
    if not shutil.which("httperf"):
        pytest.skip("httperf is not installed (Debian package httperf; make deps)")
    cmd = [sys.executable, "-m", "loggp.drivers.httperf", "--server", "127.0.0.1",
           "--port", str(srv.port), "--sessions", str(sessions), "--rate", str(rate),
           "--keys", str(HTTPERF_KEYS)]  # fmt: skip
    proc = run(cmd, os.environ, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json_line(proc.stdout)


@pytest.mark.parametrize("q", ["lockfree", "reuseport"])
def test_httperf_sessions_at_a_fixed_rate(server_factory, q: str) -> None:
    srv = server_factory("--queue", q, "--threads", "2")
    res = httperf(srv, sessions=60, rate=40)
    assert res["valid"] is True, res
    h = res["httperf"]
    assert h["errors"]["total"] == 0 and h["errors"]["fd-unavail"] == 0, h
    assert h["replies"] == h["requests"] == 60 * 5 and h["status"]["5xx"] == 0, h
    summary = srv.stop()
    assert summary["requests"] == h["requests"] + HTTPERF_KEYS  # and the fill's PUTs
    assert {"200", "201", "204", "404"} <= set(summary["status"])  # the mix reached the store


@pytest.mark.slow
def test_httperf_heavier_rate(server_factory) -> None:
    srv = server_factory("--queue", "mutex", "--threads", "4", "--store", "sharded")
    res = httperf(srv, sessions=1000, rate=200)
    assert res["valid"] is True, res
