"""The hierarchical KVS (services/kvs/) across processes.

- kvs_mpi_check (services/kvs/tests/) at 1-4 ranks: concurrent fences of
  different names, read-your-writes, causal gets that wait for a version,
  errors that come back instead of hanging.
- loggp-kvs-broker with the loggp-kvs CLI: put/get/ls/dump through sockets
  on different ranks, clear errors and exit codes, a root that stops
  answering (its children's clients fail within the timeout naming it; a
  commit sent through them has an unknown outcome), oversized request lines, a
  broker that dies, a restart from the root's SQLite file, and caches that
  drop unused objects and fault them in again.
- A commit after 100 ms of quiet takes about as long as one back to back, and idle
  brokers use under 1 % of a CPU.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import (
    BUILD,
    IDLE_CPU_SHARE,
    IDLE_EXTRA_US,
    IDLE_WAKEUPS_PER_S,
    MPI_OWN_TRANSPORT,
    base_env,
    idle_activity,
    mpirun_cmd,
    run,
    stop_process,
)

from loggp.bench.kvs import COLD_THREADS, commit_us

pytestmark = pytest.mark.integration

KVS = BUILD / "services" / "kvs"
READY_TIMEOUT = 60.0
CLI_TIMEOUT = 30.0
EXPIRE_WAIT = 15.0  # --cache-expire 1 empties an idle cache within about 2 s


def kvs_bin(name: str) -> Path:
    path = KVS / name
    if not path.is_file():
        pytest.fail(f"not built: {path} (cmake --build {BUILD})")
    return path


@pytest.mark.parametrize(("np", "provider"), [(1, "shm"), (2, "shm"), (3, "tcp;ofi_rxm"),
                                              (4, "shm")])  # fmt: skip
def test_protocol_checks(mpirun_bin: str, np: int, provider: str) -> None:
    env = base_env()
    env["LOGGP_PROVIDER"] = provider
    argv = mpirun_cmd(mpirun_bin, np, [str(kvs_bin("kvs_mpi_check"))], MPI_OWN_TRANSPORT, env)
    proc = run(argv, env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"kvs_mpi_check: {np} ranks, 0 failures" in proc.stdout


class Brokers:
    """mpirun -np N loggp-kvs-broker, up until stop(); sockets in sock_dir."""

    def __init__(
        self, mpirun: str, np: int, sock_dir: Path, *extra: str, env: dict[str, str] | None = None
    ) -> None:
        self.np = np
        self.sock_dir = sock_dir
        env = dict(env) if env is not None else base_env()
        env["LOGGP_PROVIDER"] = "tcp;ofi_rxm"
        argv = mpirun_cmd(
            mpirun,
            np,
            [str(kvs_bin("loggp-kvs-broker")), "--socket-dir", str(sock_dir), *extra],
            MPI_OWN_TRANSPORT,
            env,
        )
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise AssertionError(f"brokers not ready within {READY_TIMEOUT:.0f} s") from None
            if line is None:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"brokers exited before ready:\n{err}")
            if line.startswith("loggp-kvs-broker: ready"):
                break

    def sock(self, rank: int) -> str:
        return str(self.sock_dir / f"kvs-{rank}.sock")

    def pid(self, rank: int) -> int:
        """The broker process of a rank (Open MPI puts the rank in its environment)."""
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if (
                cmd
                and cmd[0].endswith(b"loggp-kvs-broker")
                and str(self.sock_dir).encode() in cmd
                and f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ
            ):
                return int(entry.name)
        raise AssertionError(f"no broker process of rank {rank}")

    def stop(self) -> int:
        """SIGTERM to mpirun, which forwards it; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("brokers did not stop within 30 s of SIGTERM") from None

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


@pytest.fixture
def brokers(mpirun_bin: str, tmp_path: Path) -> Iterator[Brokers]:
    b = Brokers(mpirun_bin, 3, tmp_path, "--sqlite", str(tmp_path / "root.db"),
                "--timeout", "3")  # fmt: skip
    try:
        yield b
    finally:
        b.kill()


def cli(sock: str, *args: str, timeout: float = CLI_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return run([str(kvs_bin("loggp-kvs")), "-S", sock, *args], base_env(), timeout=timeout)


def test_put_get_ls_dump_across_ranks(brokers: Brokers) -> None:
    long = "v" * 100  # over the 42-byte inline limit: stored by reference
    put = cli(brokers.sock(0), "put", "job.a=1", "job.b.c=two", f"big={long}")
    assert put.returncode == 0, put.stderr
    assert int(put.stdout) == 1
    for rank in (1, 2):
        got = cli(brokers.sock(rank), "get", "job.b.c")
        assert (got.returncode, got.stdout) == (0, "two\n"), got.stderr
    assert cli(brokers.sock(2), "get", "big").stdout == long + "\n"
    ls = cli(brokers.sock(1), "ls")
    assert ls.stdout.split() == ["big", "job."]
    dump = cli(brokers.sock(2), "dump", "job")
    assert dump.stdout.splitlines() == ["job.a = 1", "job.b.c = two"]
    assert cli(brokers.sock(1), "unlink", "job.a").returncode == 0
    assert cli(brokers.sock(2), "get", "job.a").returncode == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["get", "no.such"], 1, "not found"),
        (["get", "a..b"], 1, "bad key 'a..b'"),
        (["put", "novalue"], 2, "not KEY=VALUE"),
        (["frobnicate"], 2, "unknown command 'frobnicate'"),
        ([], 2, "no command"),
    ],
)
def test_cli_errors_are_one_clear_line(
    brokers: Brokers, args: list[str], code: int, message: str
) -> None:
    proc = cli(brokers.sock(1), *args)
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loggp-kvs: ") and message in lines[0]


def test_no_broker_is_exit_3(tmp_path: Path) -> None:
    proc = cli(str(tmp_path / "none.sock"), "get", "a")
    assert proc.returncode == 3 and "is loggp-kvs-broker running?" in proc.stderr


def test_silent_root_fails_clients_within_the_timeout(brokers: Brokers) -> None:
    assert cli(brokers.sock(0), "put", "deep.key=1").returncode == 0
    root = brokers.pid(0)
    stop_process(root)
    try:
        t0 = time.monotonic()
        proc = cli(brokers.sock(2), "get", "deep.key")
        took = time.monotonic() - t0
    finally:
        os.kill(root, signal.SIGCONT)
    assert proc.returncode == 1
    assert "no answer from broker 0 (parent of broker 2)" in proc.stderr
    assert 2.5 < took < 20, took  # the broker's --timeout is 3 s


def test_commit_beneath_a_silent_root_has_an_unknown_outcome(brokers: Brokers) -> None:
    """A put whose commit left broker 2 but got no new root in time is neither refused nor
    done: exit 4, one line saying so; once the root answers again it does apply it."""
    before = int(cli(brokers.sock(0), "put", "seen.before=1").stdout)
    root = brokers.pid(0)
    stop_process(root)
    try:
        proc = cli(brokers.sock(2), "put", "late.key=applied")
    finally:
        os.kill(root, signal.SIGCONT)
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "outcome is unknown" in lines[0], proc.stderr
    sock_call(brokers.sock(2), {"op": "version", "wait": before + 1})
    assert cli(brokers.sock(2), "get", "late.key").stdout == "applied\n"


def test_oversized_request_line_is_refused_and_closed(brokers: Brokers) -> None:
    """No line longer than a put of the largest value is buffered: the broker answers
    EMSGSIZE naming the limit and closes the connection; the broker serves on."""
    chunk = b"x" * (1 << 20)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(CLI_TIMEOUT)
        s.connect(brokers.sock(1))
        try:
            for _ in range(128):  # well past the limit (a 64 MiB value in base64)
                s.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        reply = s.makefile("rb").readline()
    rep = json.loads(reply)
    assert rep["ok"] is False and rep["errnum"] == errno.EMSGSIZE, rep
    assert "request line longer than" in rep["error"], rep
    assert cli(brokers.sock(1), "version").returncode == 0


def test_long_bad_line_costs_linear_time(brokers: Brokers) -> None:
    """An 80 MiB line (under the limit) that is not JSON is answered as such, and the
    connection serves the next request.  The newline search restarted at every 4 KiB chunk
    once, which made this quadratic: 32 MiB cost 4 s of CPU, 80 MiB about 25 s."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(CLI_TIMEOUT)
        s.connect(brokers.sock(1))
        t0 = time.monotonic()
        s.sendall(b"y" * (80 << 20) + b"\n" + json.dumps({"op": "version"}).encode() + b"\n")
        f = s.makefile("rb")
        bad, good = json.loads(f.readline()), json.loads(f.readline())
        took = time.monotonic() - t0
    assert bad["ok"] is False and bad["errnum"] == errno.EINVAL, bad
    assert good["ok"] is True, good
    assert took < 10, took


def test_dead_broker_is_a_clear_error(brokers: Brokers) -> None:
    os.kill(brokers.pid(2), signal.SIGKILL)
    proc = cli(brokers.sock(2), "get", "x")
    assert proc.returncode == 3
    assert "cannot connect" in proc.stderr or "closed the connection" in proc.stderr


def test_root_restart_keeps_committed_data(mpirun_bin: str, tmp_path: Path) -> None:
    db = tmp_path / "root.db"
    first = Brokers(mpirun_bin, 2, tmp_path, "--sqlite", str(db))
    try:
        assert cli(first.sock(0), "put", "kept.a=alpha", "kept.b=beta").returncode == 0
        assert cli(first.sock(1), "put", "kept.c=gamma").returncode == 0
    finally:
        first.stop()
    second = Brokers(mpirun_bin, 2, tmp_path, "--sqlite", str(db))
    try:
        assert cli(second.sock(1), "version").stdout == "2\n"
        dump = cli(second.sock(1), "dump")
        assert dump.stdout.splitlines() == ["kept.a = alpha", "kept.b = beta", "kept.c = gamma"]
    finally:
        second.stop()


def stats(sock: str) -> dict[str, int]:
    proc = cli(sock, "stats")
    assert proc.returncode == 0, proc.stderr
    counters: dict[str, int] = json.loads(proc.stdout)["stats"]
    return counters


def wait_stats(sock: str, done: Callable[[dict[str, int]], bool], what: str) -> dict[str, int]:
    """Polls a broker's counters until done(counters) holds."""
    deadline = time.monotonic() + EXPIRE_WAIT
    while True:
        s = stats(sock)
        if done(s):
            return s
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen within {EXPIRE_WAIT:.0f} s: {s}")
        time.sleep(0.1)


@pytest.mark.parametrize("file_root", [False, True], ids=["memory-root", "sqlite-root"])
def test_unused_objects_expire_and_fault_in_again(
    mpirun_bin: str, tmp_path: Path, file_root: bool
) -> None:
    """--cache-expire 1: a child's cache empties once its objects go unused, the next get
    faults them in from the parent again; the root drops only what its file holds."""
    extra = ["--sqlite", str(tmp_path / "root.db")] if file_root else []
    b = Brokers(mpirun_bin, 3, tmp_path, "--cache-expire", "1", *extra)
    try:
        big = "w" * 100  # stored by reference: an object of its own
        put = cli(b.sock(0), "put", f"deep.er.big={big}")
        assert put.returncode == 0, put.stderr
        sock_call(b.sock(2), {"op": "version", "wait": int(put.stdout)})
        assert cli(b.sock(2), "get", "deep.er.big").stdout == big + "\n"
        loads = stats(b.sock(2))["loads_sent"]
        assert loads >= 3, loads  # two directories and the value, at least
        wait_stats(b.sock(2), lambda s: s["cache_objects"] == 0, "broker 2's cache empty")
        assert cli(b.sock(2), "get", "deep.er.big").stdout == big + "\n"
        assert stats(b.sock(2))["loads_sent"] >= loads + 3
        if file_root:
            wait_stats(b.sock(0), lambda s: s["cache_expired"] >= 3, "root expiry")
        else:
            assert stats(b.sock(0))["cache_expired"] == 0
        assert cli(b.sock(0), "get", "deep.er.big").stdout == big + "\n"
    finally:
        b.kill()


def sock_call(sock: str, *reqs: dict[str, object], timeout: float = CLI_TIMEOUT) -> list[dict]:
    """Requests on one connection of a broker's socket (services/kvs/sockserver.hpp)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock)
        f = s.makefile("rw")
        out = []
        for req in reqs:
            f.write(json.dumps(req) + "\n")
            f.flush()
            out.append(json.loads(f.readline()))
        return out


def test_abandoned_fence_fails_and_leaves_nothing_behind(brokers: Brokers) -> None:
    """A fence whose participants never all come times out everywhere; its ops are not
    applied by a later fence of the same name (which starts afresh and times out too)."""
    value = base64.b64encode(b"1").decode()
    first = sock_call(brokers.sock(1), {"op": "put", "key": "lone.a", "value": value},
                      {"op": "fence", "name": "pair", "nprocs": 2})  # fmt: skip
    assert first[1]["ok"] is False and first[1]["errnum"] == errno.ETIMEDOUT
    second = sock_call(brokers.sock(2), {"op": "put", "key": "lone.b", "value": value},
                       {"op": "fence", "name": "pair", "nprocs": 2})  # fmt: skip
    assert second[1]["ok"] is False, second
    assert cli(brokers.sock(0), "get", "lone.a").returncode == 1
    assert cli(brokers.sock(0), "get", "lone.b").returncode == 1


# Serial: a neighbour's load that changes between the busy and the quiet brokers is no
# part of the service's.
@pytest.mark.serial
@pytest.mark.parametrize("latency", ["0us", "100us"])
def test_an_idle_kvs_answers_as_fast_as_a_busy_one(
    mpirun_bin: str, tmp_path: Path, shim, latency: str
) -> None:
    """A commit from a leaf broker (to the root and back over the fabric) after 100 ms of
    quiet is about as fast as one back to back, beneath the shim too, once the host's own
    cost of waking the threads it finds blocked is taken off (measured by puts, which
    never leave the socket's thread: COLD_THREADS of those); idle brokers block on their
    fabric's wait object instead of polling, so they use next to no CPU and wake no more
    than their deadlines ask.
    Beneath ΔL the bound grows by the lateness the shim recorded in the quiet commits'
    releases (a busy host's cost), never by more.  The root keeps its namespace in memory:
    a file's fsync after a quiet while is the disk's cost."""
    for d in ("busy", "quiet"):
        (tmp_path / d).mkdir()
    b = Brokers(mpirun_bin, 3, tmp_path / "busy", "--timeout", "3", env=shim(latency=latency).env)
    try:
        sock = b.sock(2)
        host = commit_us(sock, 15, 0.1, False) - commit_us(sock, 60, 0.0, False)
        busy = commit_us(sock, 60, 0.0)
    finally:
        b.kill()
    quiet_env = shim(latency=latency)
    b = Brokers(mpirun_bin, 3, tmp_path / "quiet", "--timeout", "3", env=quiet_env.env)
    try:
        commits = 15
        idle = commit_us(b.sock(2), commits, 0.1)
        quiet = idle_activity([b.pid(r) for r in range(b.np)])
        b.stop()  # the brokers close their fabrics: the shim writes its counters
    finally:
        b.kill()
    late_us = sum(int(s["late_ns"]) for s in quiet_env.stats()) / 1e3 / commits
    extra = idle - busy - COLD_THREADS * host
    assert extra < IDLE_EXTRA_US + late_us, (busy, idle, host, late_us)
    assert quiet.cpu_share < IDLE_CPU_SHARE, quiet
    assert quiet.wakeups_per_s < IDLE_WAKEUPS_PER_S, quiet
