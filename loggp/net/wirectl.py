"""Client of loggp-wire's control socket (the wire contract, "Control protocol").

Newline-delimited JSON over a Unix stream socket: one request line, one response line.
Every failure is a WireControlError naming the socket and what did not answer, so a
caller (the testbed CLI, the runner before a point) can report it as one line.
"""

from __future__ import annotations

import json
import select
import shlex
import socket
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.plan.knobs import Knob, KnobSet

DEFAULT_TIMEOUT_S = 5.0
_MAX_RESPONSE = 1 << 20

# Knobs the wire emulates (o has no meaning on the wire); jitter and loss are wire-only.
WIRE_KNOBS = tuple(k for k in Knob if k.applies_on("wire"))


class WireControlError(LoggpError):
    """The wire's control socket is missing, silent, or refused a request."""


class WireControl:
    """One connection to the control socket; use as a context manager."""

    def __init__(self, path: Path, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.path = path
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buf = b""

    def __enter__(self) -> WireControl:
        if not self.path.exists():
            raise WireControlError(
                f"wire control socket {self.path} does not exist: is the testbed up? "
                "(loggp testbed up N; loggp testbed status)"
            )
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self.path))
        except OSError as e:
            sock.close()
            raise WireControlError(
                f"cannot connect to the wire control socket {self.path}: {e.strerror or e} "
                "(is loggp-wire running? loggp testbed status)"
            ) from None
        self._sock = sock
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        """Sends one request; the decoded response, WireControlError unless ok is true."""
        assert self._sock is not None, "use WireControl as a context manager"
        what = f"loggp-wire (control socket {self.path})"
        try:
            try:
                self._sock.sendall(json.dumps(req).encode() + b"\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # a wire that turned us away wrote why before closing: read it
            while b"\n" not in self._buf:
                chunk = self._sock.recv(65536)
                if not chunk:
                    raise WireControlError(f"{what} closed the connection without answering")
                self._buf += chunk
                if len(self._buf) > _MAX_RESPONSE:
                    raise WireControlError(f"{what} sent a response line over 1 MiB")
        except TimeoutError:
            raise WireControlError(
                f"{what} did not answer '{req.get('cmd')}' within {self.timeout:g} s"
            ) from None
        except OSError as e:
            raise WireControlError(f"{what}: {e.strerror or e}") from None
        line, self._buf = self._buf.split(b"\n", 1)
        return _response(line, req, what, f"control socket {self.path}")


def _response(line: bytes, req: dict[str, Any], what: str, where: str) -> dict[str, Any]:
    """The decoded response line; WireControlError unless it is a JSON object with ok."""
    try:
        resp = json.loads(line)
    except ValueError:
        raise WireControlError(f"{what} sent a line that is not JSON: {line[:80]!r}") from None
    if not isinstance(resp, dict):
        raise WireControlError(f"{what} sent a response that is not a JSON object")
    if resp.get("ok") is not True:
        raise WireControlError(
            f"loggp-wire refused '{req.get('cmd')}': {resp.get('error')} ({where})"
        )
    return resp


# Run by python3 on the emulator node: one request line from stdin to the control socket,
# its response line back to stdout, until stdin ends.
_RELAY = (
    "import socket,sys\n"
    "s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);f=s.makefile('rwb')\n"
    "for line in sys.stdin.buffer:\n"
    " f.write(line);f.flush();sys.stdout.buffer.write(f.readline());sys.stdout.buffer.flush()\n"
)


class SshWireControl:
    """The control socket of a wire on another host (the emulator node), reached through
    ssh and a relay run there by python3; the same interface as WireControl."""

    def __init__(
        self, ssh: list[str], host: str, path: str, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.argv = [*ssh, host, f"python3 -c {shlex.quote(_RELAY)} {shlex.quote(path)}"]
        self.where = f"control socket {path} on {host} over ssh"
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> SshWireControl:
        self._proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        return self

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.communicate(timeout=self.timeout)  # the relay ends with its stdin
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin and self._proc.stdout
        what = f"loggp-wire ({self.where})"
        try:
            self._proc.stdin.write(json.dumps(req).encode() + b"\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass  # the reason is on stderr
        ready, _, _ = select.select([self._proc.stdout], [], [], self.timeout)
        line = self._proc.stdout.readline() if ready else b""
        if not line:
            self._proc.kill()
            _, err = self._proc.communicate()
            last = (err.decode(errors="replace").strip().splitlines() or ["no answer"])[-1]
            raise WireControlError(f"{what} did not answer '{req.get('cmd')}': {last}")
        return _response(line, req, what, self.where)


def wire_request(path: Path, req: dict[str, Any], timeout: float = DEFAULT_TIMEOUT_S) -> dict:
    """One request on a fresh connection."""
    with WireControl(path, timeout) as ctl:
        return ctl.request(req)


def set_request(knobs: KnobSet, *, full: bool, port: int | None = None) -> dict[str, Any]:
    """The `set` request for knobs.  full: every wire knob not in knobs is set to zero
    (a point's setting replaces the previous one); otherwise only the given ones change.
    KnobError-like WireControlError for a knob the wire does not have (o)."""
    given = knobs.as_dict()
    bad = [k for k in given if Knob(k) not in WIRE_KNOBS]
    if bad:
        raise WireControlError(
            f"knob '{bad[0]}' has no meaning on the wire: the wire emulates "
            "latency, gap and bulk_gap/bandwidth (and jitter, loss)"
        )
    req: dict[str, Any] = {"cmd": "set"}
    if port is not None:
        req["port"] = port
    if full:
        req.update({"latency": "0ns", "gap": "0ns", "bulk_gap": "0ns/B"})
    for name, text in given.items():
        for other in Knob(name).excludes:
            req.pop(other.value, None)
        req[name] = text
    return req


def restore_request(port_config: dict[str, Any]) -> dict[str, Any]:
    """The `set` request that puts one port back to a configuration `get` returned."""
    fs = Decimal(int(port_config["bulk_gap_fs"])) / 1000
    bulk = f"{fs:f}".rstrip("0").rstrip(".") if "." in f"{fs:f}" else f"{fs:f}"
    req: dict[str, Any] = {
        "cmd": "set",
        "port": int(port_config["port"]),
        "latency": f"{int(port_config['latency_ns'])}ns",
        "jitter": f"{int(port_config['jitter_ns'])}ns",
        "gap": f"{int(port_config['gap_ns'])}ns",
        "bulk_gap": f"{bulk}ps/B",
        "loss": float(port_config["loss"]),
    }
    for key in ("burst_bytes", "queue_pkts", "queue_bytes"):
        if key in port_config:
            req[key.removesuffix("_bytes") if key == "burst_bytes" else key] = int(port_config[key])
    return req
