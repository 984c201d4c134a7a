"""Helpers of the loggp-kvserver tests (tests/test_kvserver*.py): the server started with
--port 0 and waited for through its ready line, a fixture that kills what it started, and an
HTTP/1.1 client over a raw socket (every socket has a timeout)."""

from __future__ import annotations

import json
import queue
import re
import resource
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import BUILD, _kill_group

KVSERVER = BUILD / "services" / "kvserver" / "loggp-kvserver"
READY_TIMEOUT = 30.0
SOCK_TIMEOUT = 10.0
QUEUES = ("mutex", "lockfree", "reuseport")
STORES = ("global", "rwlock", "sharded")


def sanitized() -> bool:
    """Whether the server is built with AddressSanitizer (make build-asan)."""
    return b"__asan_init" in kvserver_bin().read_bytes()


def kvserver_bin() -> Path:
    if not KVSERVER.is_file():
        pytest.fail(f"not built: {KVSERVER} (cmake --build {BUILD})")
    return KVSERVER


class Server:
    """loggp-kvserver --port 0 ARGS, up until stop() or kill()."""

    def __init__(self, *args: str, nofile: int = 0) -> None:
        def limit() -> None:
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen(
            [str(kvserver_bin()), "--port", "0", *args], preexec_fn=limit,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.put(line)
            self.lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        line = self._next_line(READY_TIMEOUT, "ready line")
        m = re.match(r"loggp-kvserver: ready port=(\d+) ", line)
        assert m, f"unexpected first line: {line!r}"
        self.port = int(m.group(1))

    def _next_line(self, timeout: float, what: str) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise AssertionError(f"no {what} within {timeout:.0f} s") from None
        if line is None:
            self.proc.wait(timeout=SOCK_TIMEOUT)
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(
                f"server exited ({self.proc.returncode}) before its {what}:\n{err}"
            )
        return line

    def connect(self, rcvbuf: int = 0) -> socket.socket:
        s = socket.socket()
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(SOCK_TIMEOUT)
        s.connect(("127.0.0.1", self.port))
        return s

    def stop(self) -> dict:
        """SIGTERM; the JSON line it prints at exit."""
        self.proc.send_signal(signal.SIGTERM)
        line = self._next_line(SOCK_TIMEOUT * 3, "JSON line at exit")
        assert self.proc.wait(timeout=SOCK_TIMEOUT) == 0
        return json.loads(line)

    def kill(self) -> None:
        _kill_group(self.proc)
        self.proc.wait()


def servers() -> Iterator:
    """The body of a test module's server_factory fixture: a function that starts a
    Server, every one killed at the end."""
    started: list[Server] = []

    def make(*args: str, nofile: int = 0) -> Server:
        s = Server(*args, nofile=nofile)
        started.append(s)
        return s

    yield make
    for s in started:
        s.kill()


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class Client:
    """One HTTP/1.1 connection: requests out, replies parsed in order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def send(self, method: str, path: str, body: bytes | None = None, *hdrs: str) -> None:
        self.sock.sendall(request(method, path, body, *hdrs))

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def reply(self) -> Reply:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        n = int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return Reply(status, headers, body)

    def call(self, method: str, path: str, body: bytes | None = None, *hdrs: str) -> Reply:
        self.send(method, path, body, *hdrs)
        return self.reply()

    def at_eof(self) -> bool:
        """Whether the server closed the connection (waits for it up to the timeout)."""
        return self.buf == b"" and self.sock.recv(1) == b""


def request(method: str, path: str, body: bytes | None = None, *hdrs: str) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: t\r\n"
    for h in hdrs:
        head += h + "\r\n"
    if body is not None:
        head += f"Content-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


def metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert m, f"no {name} in /metrics"
    return float(m.group(1))


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def wait_for(cond: Callable[[], object], what: str, timeout: float = SOCK_TIMEOUT) -> None:
    """Polls cond until it holds; fails naming what did not happen."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.02)


def metrics_of(srv: Server) -> str:
    """GET /metrics on a fresh connection."""
    c = Client(srv.connect())
    try:
        return c.call("GET", "/metrics").body.decode()
    finally:
        c.sock.close()
