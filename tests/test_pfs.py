"""The striped parallel file store (services/pfs/) across processes.

- pfs_check fsx: random writes, reads, truncates, sizes, fsyncs and batches
  of asynchronous requests at random offsets and sizes by several clients,
  checked against a model of the file, beneath non-zero shim knobs.
- kill -9 of a server during writes: the writer gets EIO naming the server
  within its timeout; after a restart every fsync-acknowledged byte reads
  back.
- One-line errors: a second server on the same directory, a missing
  server, bad layouts, a full target; bad requests are refused and counted
  while the server goes on.
- Under ΔL = 100 µs a 4 KiB read takes 2·ΔL longer (less 5 µs of jitter), and a 1 MiB
  read too: one RMA write of the data and the reply behind it, as the shim counted, not
  64 pieces.
- A read after 100 ms of quiet is about as fast as one back to back (at ΔL 0 and
  100 µs), and idle servers use under 1 % of a CPU.
- The command line: namespace operations, counters, a restart of every
  server that keeps the namespace and the data.
- The FUSE mount, in page-cache and direct-I/O modes: the same random
  operations through the kernel beneath the shim, cp and md5sum, fio
  --verify, and a second mount on the same directory refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    BUILD,
    IDLE_CPU_SHARE,
    IDLE_EXTRA_US,
    IDLE_WAKEUPS_PER_S,
    NONZERO_KNOBS,
    ZERO_KNOBS,
    ShimEnv,
    base_env,
    host_wakeup_us,
    idle_activity,
    json_line,
    run,
)

from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE
from loggp.tests.cli import loggp

pytestmark = pytest.mark.integration

PFS = BUILD / "services" / "pfs"
READY_TIMEOUT = 30.0
RUN_TIMEOUT = 120.0
PROVIDER = "tcp;ofi_rxm"


def pfs_bin(name: str) -> Path:
    path = PFS / name
    if not path.is_file():
        pytest.fail(f"not built: {path} (cmake --build {BUILD})")
    return path


class Lines:
    """A process's stdout lines, read by a thread, awaited with a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.q: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.q.put(line.rstrip("\n"))
            self.q.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def wait_for(self, prefix: str, timeout: float) -> str | None:
        """The first line starting with prefix; None at the end of output."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line '{prefix}...' within {timeout:.0f} s") from None
            if line is None or line.startswith(prefix):
                return line


class Instance:
    """N loggp-pfs-server processes sharing one instance directory."""

    def __init__(self, root: Path, n: int, env: Mapping[str, str], *extra: str) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.dir = root / "inst"
        self.n = n
        self.env = dict(env)
        self.env["LOGGP_PROVIDER"] = PROVIDER
        self.cwd = root
        self.extra = list(extra)
        self.procs: dict[int, subprocess.Popen[str]] = {}
        self.stats: dict[int, dict[str, object]] = {}
        self.ready: dict[int, str] = {}
        for i in range(n):
            self.start(i)

    def spawn(self, i: int, *extra: str) -> subprocess.Popen[str]:
        argv = [
            str(pfs_bin("loggp-pfs-server")),
            "--instance",
            str(self.dir),
            "--index",
            str(i),
            "--servers",
            str(self.n),
            *self.extra,
            *extra,
        ]
        return subprocess.Popen(
            argv,
            env=self.env,
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def start(self, i: int, *extra: str) -> None:
        proc = self.spawn(i, *extra)
        line = Lines(proc).wait_for("loggp-pfs-server: ready", READY_TIMEOUT)
        self.ready[i] = line or ""
        if line is None:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"server {i} exited before ready:\n{err}")
        self.procs[i] = proc

    def kill9(self, i: int) -> None:
        os.killpg(self.procs[i].pid, signal.SIGKILL)
        self.procs.pop(i).wait()

    def stop(self) -> None:
        """SIGTERM to every server; their counters from the JSON line on stderr."""
        for proc in self.procs.values():
            proc.send_signal(signal.SIGTERM)
        for i, proc in list(self.procs.items()):
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill_all()
                raise AssertionError(f"server {i} did not stop within 30 s") from None
            assert proc.returncode == 0, err
            self.stats[i] = json.loads(err.strip().splitlines()[-1])
        self.procs.clear()

    def kill_all(self) -> None:
        for proc in self.procs.values():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        self.procs.clear()


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[Instance]:
    inst = Instance(tmp_path, 3, base_env())
    try:
        yield inst
    finally:
        inst.kill_all()


def check(
    inst: Instance,
    mode: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    env = dict(env or inst.env)
    env["LOGGP_PROVIDER"] = PROVIDER
    argv = [str(pfs_bin("tests/pfs_check")), mode, "-i", str(inst.dir), *args]
    return run(argv, env, timeout=timeout, cwd=inst.cwd)


def cli(inst: Instance, *args: str, timeout_ms: int = 3000) -> subprocess.CompletedProcess[str]:
    env = dict(inst.env)
    argv = [str(pfs_bin("loggp-pfs")), "-i", str(inst.dir), "-t", str(timeout_ms), *args]
    return run(argv, env, timeout=RUN_TIMEOUT, cwd=inst.cwd)


def one_line(proc: subprocess.CompletedProcess[str], code: int, *parts: str) -> str:
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def test_fsx_beneath_the_shim(tmp_path: Path, shim) -> None:
    shimmed: ShimEnv = shim(**NONZERO_KNOBS)
    inst = Instance(tmp_path, 3, shimmed.env)
    try:
        proc = check(inst, "fsx", "-c", "3", "-n", "250", "-s", "7", "-S", "16384")
        res = json_line(proc.stdout)
        assert proc.returncode == 0 and res["ok"], proc.stdout + proc.stderr
        assert res["writes"] and res["truncates"] and res["aio_batches"], res
        inst.stop()
    finally:
        inst.kill_all()
    assert all(inst.stats[i]["bad_requests"] == 0 for i in range(3)), inst.stats
    assert shimmed.provider_msgs("tcp") > 1000, shimmed.stats()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "stripe", "count"), [(1, 4096, 3), (2, 65536, 2), (3, 1048576, 1)]
)
def test_fsx_seeds_and_layouts(instance: Instance, seed: int, stripe: int, count: int) -> None:
    proc = check(
        instance,
        "fsx",
        "-c",
        "4",
        "-n",
        "1000",
        "-s",
        str(seed),
        "-S",
        str(stripe),
        "-C",
        str(count),
    )
    assert proc.returncode == 0 and json_line(proc.stdout)["ok"], proc.stdout + proc.stderr


def test_kill9_gives_eio_naming_the_server_and_fsynced_data_survive(instance: Instance) -> None:
    env = dict(instance.env)
    env["LOGGP_PROVIDER"] = PROVIDER
    argv = [str(pfs_bin("tests/pfs_check")), "writer", "-i", str(instance.dir), "-t", "2000"]
    writer = subprocess.Popen(
        argv,
        env=env,
        cwd=instance.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        lines = Lines(writer)
        acked = 0
        for _ in range(3):
            line = lines.wait_for("acked ", RUN_TIMEOUT)
            assert line is not None, writer.stderr.read() if writer.stderr else ""
            acked = int(line.split()[1])
        instance.kill9(1)
        t0 = time.monotonic()
        err = lines.wait_for("error ", 10.0)
        waited = time.monotonic() - t0
        assert err is not None
        assert err.startswith("error 5 ") and "pfs server 1" in err, err
        assert waited < 2.0 + 3.0, waited  # the timeout, and a margin for 2 busy cores
        writer.wait(timeout=30)
        assert writer.returncode == 1
    finally:
        if writer.poll() is None:
            os.killpg(writer.pid, signal.SIGKILL)
            writer.wait()
    # Every "acked" line was printed after its fsync returned: the last one
    # read before the kill is a lower bound of what must survive.
    instance.start(1)
    proc = check(instance, "verify", "-b", str(acked))
    res = json_line(proc.stdout)
    assert proc.returncode == 0 and res["ok"], proc.stdout + proc.stderr


def test_second_server_on_a_directory_is_refused(instance: Instance) -> None:
    proc = instance.spawn(1)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and not out
    assert err.count("\n") == 1 and "server-1 is in use by another server (pid" in err, err


def test_metrics_endpoint_serves_the_counters(tmp_path: Path) -> None:
    """--metrics: the server names its Prometheus endpoint in its ready line and serves the
    counters there from its loop; they move with the requests it serves."""
    inst = Instance(tmp_path, 1, base_env(), "--metrics", "127.0.0.1")
    try:
        proc = inst.procs[0]
        (tmp_path / "f").write_bytes(b"x" * 5000)
        assert cli(inst, "put", str(tmp_path / "f"), "/f").returncode == 0
        port = int(inst.ready[0].split("metrics=127.0.0.1:")[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = b""
            while chunk := s.recv(65536):
                reply += chunk
        head, body = reply.decode().split("\r\n\r\n", 1)
        assert head.startswith("HTTP/1.1 200 OK") and "version=0.0.4" in head
        assert "# TYPE pfs_server_writes_total counter" in body
        assert 'pfs_server_bytes_written_total{server="0"} 5000' in body
        assert 'pfs_server_objects{server="0"} 1' in body
        assert proc.poll() is None
    finally:
        inst.kill_all()
    argv = [str(pfs_bin("loggp-pfs-server")), "--instance", str(tmp_path / "i2"),
            "--index", "0", "--servers", "1", "--metrics", "nowhere:1"]  # fmt: skip
    bad = run(argv, base_env(), timeout=30)
    assert bad.returncode != 0
    assert "bad metrics address 'nowhere': expected an IPv4 address" in bad.stderr


def test_missing_server_is_one_line_naming_it(tmp_path: Path) -> None:
    inst = Instance(tmp_path, 3, base_env())
    try:
        inst.kill9(2)  # its .addr file stays behind: the server is silent
        line = one_line(cli(inst, "ls", "/", timeout_ms=1000), 3, "pfs server 2")
        assert line.startswith("loggp-pfs: connect: ")
        os.unlink(inst.dir / "server-2.addr")  # never started: no address at all
        one_line(cli(inst, "ls", "/"), 3, "pfs server 2: no address in", "is it running?")
    finally:
        inst.kill_all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["setstripe", "/", "0", "1"], "stripe size 0: expected a positive multiple of 4096"),
        (["setstripe", "/", "5000", "1"], "stripe size 5000"),
        (["setstripe", "/", "65536", "4"], "stripe count 4: expected 1 to 3"),
        (["put", "/dev/null", "/f", "65536", "0"], "stripe count 0: expected 1 to 3"),
    ],
)
def test_bad_layouts_are_one_line(instance: Instance, args: list[str], message: str) -> None:
    one_line(cli(instance, *args), 1, message)


def test_full_target_is_enospc_and_the_server_goes_on(tmp_path: Path) -> None:
    inst = Instance(tmp_path, 2, base_env(), "--capacity", str(1 << 20))
    try:
        big = tmp_path / "big"
        big.write_bytes(os.urandom(3 << 20))
        one_line(cli(inst, "put", str(big), "/big", "65536", "-1"), 1, "target full")
        # Removing the file gives its space back.
        assert cli(inst, "rm", "/big").returncode == 0
        small = tmp_path / "small"
        small.write_bytes(b"still here\n")
        assert cli(inst, "put", str(small), "/small").returncode == 0
        got = cli(inst, "get", "/small", "-")
        assert got.stdout == "still here\n", got.stderr
        inst.stop()
    finally:
        inst.kill_all()
    assert sum(int(str(inst.stats[i]["errors"])) for i in range(2)) >= 1, inst.stats


def test_bad_requests_are_refused_and_counted(instance: Instance) -> None:
    env = dict(instance.env)
    env["LOGGP_PROVIDER"] = PROVIDER
    proc = run(
        [str(pfs_bin("tests/pfs_badreq")), str(instance.dir)], env, timeout=60, cwd=instance.cwd
    )
    res = json_line(proc.stdout)
    assert proc.returncode == 0 and res["ok"], proc.stdout + proc.stderr
    assert "unknown op 99" in str(res["unknown_op_error"]), res
    assert "read of 67108865 bytes" in str(res["long_read_error"]), res
    # A hello a server cannot accept is answered with why (not left to time out).
    assert "pfs server 1 refused hello: hello without a client id" in str(
        res["anonymous_hello_error"]
    ), res
    # The server goes on: a real client is served.
    assert cli(instance, "ls", "/").returncode == 0


def readlat(inst: Instance, *args: str) -> dict[str, Any]:
    """pfs_check readlat's JSON line: min_us, median_us, mean_us, max_us of its reads."""
    proc = check(inst, "readlat", *args)
    res = json_line(proc.stdout)
    assert proc.returncode == 0 and res["ok"], proc.stdout + proc.stderr
    return res


def readlat_min(tmp_path: Path, shimmed: ShimEnv) -> float:
    inst = Instance(tmp_path, 1, shimmed.env)
    try:
        res = readlat(inst, "-n", "200")
        inst.stop()
        return float(res["min_us"])
    finally:
        inst.kill_all()


def test_latency_adds_to_a_4k_read(tmp_path: Path, shim) -> None:
    # Rounds interleaved, so a neighbour's load on the 2 cores inflates
    # neither side's minimum alone.
    base, slow = [], []
    for k in range(3):
        base.append(readlat_min(tmp_path / f"b{k}", shim(**ZERO_KNOBS)))
        slow.append(readlat_min(tmp_path / f"s{k}", shim(latency="100us")))
    # A request and its reply each wait ΔL, so no read beneath the shim can
    # finish under 2·ΔL (1 µs of clock granularity allowed).  The rise over the
    # baseline is smaller than 2·ΔL when the baseline's own costs (waking a
    # blocked thread on this VM) overlap the shim's wait, but never below ΔL.
    assert min(slow) >= 2 * 100.0 - 1.0, (base, slow)
    assert min(slow) - min(base) >= 100.0, (base, slow)


def read_1mib(tmp_path: Path, shimmed: ShimEnv, reads: int) -> tuple[dict[str, Any], dict]:
    """readlat of 1 MiB reads at one server; its JSON line and the server's shim counters.
    The server's own counters say each read's data went in one RMA op of 1 MiB."""
    inst = Instance(tmp_path, 1, shimmed.env)
    try:
        res = readlat(inst, "-n", str(reads), "-l", str(1 << 20))
        pid = inst.procs[0].pid
        inst.stop()
    finally:
        inst.kill_all()
    own = inst.stats[0]
    # readlat writes the file once first (one RMA read of the client's buffer).
    assert own["rma_ops"] == reads + 1 and own["rma_bytes"] == (reads + 1) << 20, own
    (server,) = [s for s in shimmed.stats() if s["pid"] == pid]
    return res, server


@pytest.mark.serial
def test_a_1mib_read_pays_one_round_trip(tmp_path: Path, shim) -> None:
    """Beneath ΔL = 100 µs a 1 MiB read pays 2·ΔL (+ n·ΔG, 0 here), not 64 pieces' worth:
    the server writes the data into the client's buffer by RMA and replies behind it, so
    the shim counts two sends per read at the server, one of them the 1 MiB.  Its time
    rises over the same read beneath ΔL = 1 µs (the shim's own path, the same at every
    knob above 0: its copy of a deferred op, its release) by 2·ΔL, plus what the shim
    recorded as late in its releases (a busy host's cost) and the host's noise."""
    reads, lat_us, near_us = 30, 100.0, 1.0
    near, slow, late_us = [], [], []
    for k in range(2):  # interleaved rounds: a neighbour's load hits both sides
        for lat, times in ((near_us, near), (lat_us, slow)):
            shimmed = shim(latency=f"{lat:.0f}us")
            res, server = read_1mib(tmp_path / f"{lat:.0f}-{k}", shimmed, reads)
            times.append(float(res["min_us"]))
            # Setup (hello, create, the file's first write) sends a few more.
            assert 2 * reads <= int(server["msgs"]) <= 2 * reads + 8, server
            assert int(server["bytes"]) >= (reads + 1) << 20, server
            if lat == lat_us:
                late_us.append(sum(int(s["late_ns"]) for s in shimmed.stats()) / 1e3 / reads)
    added = min(slow) - min(near)
    assert min(slow) >= 2 * lat_us - 1.0, (near, slow)
    assert added < 2 * (lat_us - near_us) + IDLE_EXTRA_US + max(late_us), (near, slow, late_us)


# The thread wake-ups in a read that finds the store idle: the client's progress thread
# (handed the request), a server's, the progress thread again (the answer), the caller.
STORE_READ_HOPS = 4


# A message the wait fd missed waits for the servers' next look at their deadlines
# (Fabric::kTimerCheck, 50 ms, services/common/fabric.hpp).  The servers' missed wake-up
# count also takes a message that came in the microseconds between a timed-out poll's
# last look and the read after it, which cost nothing (one counted so in CI, with every
# read fast): a count is a lost wake-up when a read took half that period.  The 100 ms
# quiet puts each request about 1 ms before a server's second 50 ms look, which is why
# such coincidences happen (2 runs in 10 here); with 75 ms of quiet, 25 ms from any look,
# none was counted in 24 runs, so the provider's wait fd missed nothing.
LOST_WAKEUP_US = 25_000.0


@pytest.mark.serial
@pytest.mark.parametrize("latency", ["0us", "100us"])
def test_an_idle_store_answers_as_fast_as_a_busy_one(tmp_path: Path, shim, latency: str) -> None:
    """A read after 100 ms of quiet (client and servers idle) takes about as long as one
    back to back, beneath the shim too, and idle servers use next to no CPU and wake no
    more than their deadlines ask: they block on their fabric's wait object rather than
    sleep between polls, and no read waited for a message the wait fd missed
    (LOST_WAKEUP_US).  The host's own cost
    of waking a blocked thread, measured beside the reads with the same quiet, is taken
    off for each of a read's STORE_READ_HOPS (on these VMs it grows from 0-40 µs to
    hundreds beside other work, and cost one CI run the bound).  Beneath ΔL the bound
    grows by the lateness the shim recorded in the quiet reads' releases (a busy host's
    cost, which the run's degraded mark reports), never by more.
    Serial: it bounds time, and a neighbour's load is no part of the service's."""
    busy_env = shim(latency=latency)
    inst = Instance(tmp_path / "busy", 3, busy_env.env)
    try:
        busy = float(readlat(inst, "-n", "100")["median_us"])
    finally:
        inst.kill_all()
    quiet_env = shim(latency=latency)
    inst = Instance(tmp_path / "quiet", 3, quiet_env.env)
    try:
        reads = 15
        quiet_reads = readlat(inst, "-n", str(reads), "-q", "100")
        host = host_wakeup_us(0.1, reads)
        quiet = idle_activity([p.pid for p in inst.procs.values()])
        inst.stop()  # the servers' counters, lateness included, reach the stats file
    finally:
        inst.kill_all()
    late_us = sum(int(s["late_ns"]) for s in quiet_env.stats()) / 1e3 / reads
    idle, slowest = float(quiet_reads["median_us"]), float(quiet_reads["max_us"])
    extra = idle - busy - STORE_READ_HOPS * host
    missed = {i: s["fabric_missed_wakeups"] for i, s in inst.stats.items()}
    assert extra < IDLE_EXTRA_US + late_us, (busy, idle, host, late_us, missed)
    assert quiet.cpu_share < IDLE_CPU_SHARE, quiet
    assert quiet.wakeups_per_s < IDLE_WAKEUPS_PER_S, quiet
    assert not any(missed.values()) or slowest < LOST_WAKEUP_US, (missed, slowest)


def test_cli_namespace_counters_and_restart(instance: Instance, tmp_path: Path) -> None:
    data = os.urandom(300_000)
    src = tmp_path / "src"
    src.write_bytes(data)
    assert cli(instance, "mkdir", "/d").returncode == 0
    assert cli(instance, "setstripe", "/d", "65536", "2").returncode == 0
    assert cli(instance, "put", str(src), "/d/a").returncode == 0
    st = json.loads(cli(instance, "stat", "/d/a").stdout)
    assert (st["size"], st["stripe_size"], st["stripe_count"]) == (300_000, 65536, 2), st
    assert cli(instance, "mv", "/d/a", "/d/b").returncode == 0
    assert cli(instance, "ls", "/d").stdout == "b\n"
    one_line(cli(instance, "rmdir", "/d"), 1, "directory not empty")
    one_line(cli(instance, "get", "/d/a", "-"), 1, "'/d/a': no such file")
    assert cli(instance, "truncate", "/d/b", "1000").returncode == 0
    stats = [json.loads(x) for x in cli(instance, "stats").stdout.splitlines()]
    assert [s["pfs_server"] for s in stats] == [0, 1, 2]
    assert stats[0]["meta_ops"] > 0 and sum(s["writes"] for s in stats) > 0
    instance.stop()
    assert all(instance.stats[i]["requests"] > 0 for i in range(3)), instance.stats
    for i in range(3):
        instance.start(i)
    got = cli(instance, "get", "/d/b", str(tmp_path / "back"))
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "back").read_bytes() == data[:1000]


class Mount:
    """loggp-pfs mount of an instance at a directory, until unmount()."""

    def __init__(
        self, inst: Instance, mnt: Path, direct_io: bool, env: Mapping[str, str], *extra: str
    ) -> None:
        mnt.mkdir(parents=True, exist_ok=True)
        self.mnt = mnt
        argv = [str(pfs_bin("loggp-pfs")), "-i", str(inst.dir), "-t", "5000", "mount"]
        argv += ["--direct-io"] if direct_io else []
        argv += list(extra)
        self.proc = subprocess.Popen(
            [*argv, str(mnt)],
            env={**env, "LOGGP_PROVIDER": PROVIDER},
            cwd=inst.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        if Lines(self.proc).wait_for("loggp-pfs: mounted", READY_TIMEOUT) is None:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"mount exited before it was mounted:\n{err}")

    def unmount(self) -> None:
        """fusermount3 -u, then the mount process ends by itself."""
        if self.proc.poll() is None:
            run(["fusermount3", "-u", str(self.mnt)], base_env(), timeout=30)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            run(["fusermount3", "-uz", str(self.mnt)], base_env(), timeout=30)
            raise AssertionError("the mount did not end within 30 s of its unmount") from None


@pytest.fixture(scope="module")
def fuse_ok() -> None:
    if not Path("/dev/fuse").exists():
        pytest.skip("/dev/fuse is missing: FUSE is not available on this machine")
    if not shutil.which("fusermount3"):
        pytest.skip("fusermount3 not installed (fuse3)")


def fsx_through(path: Path, ops: int, seed: int) -> dict[str, int]:
    """Random writes, reads, truncates, sizes and fsyncs on one file, checked
    against a model; returns how many of each ran."""
    rng = random.Random(seed)
    model = bytearray()
    counts = {"write": 0, "read": 0, "truncate": 0, "size": 0, "fsync": 0}
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for op in range(ops):
            kind = rng.randrange(100)
            off, length = rng.randrange(600_000), 1 + rng.randrange(100_000)
            if kind < 35:
                counts["write"] += 1
                data = rng.randbytes(length)
                assert os.pwrite(fd, data, off) == length
                if off > len(model):
                    model.extend(bytes(off - len(model)))
                model[off : off + length] = data
            elif kind < 65:
                counts["read"] += 1
                if kind < 50 and model:
                    off = max(0, len(model) - rng.randrange(min(len(model), length) + 1))
                got = os.pread(fd, length, off)
                assert got == bytes(model[off : off + length]), f"op {op}: read {off}+{length}"
            elif kind < 80:
                counts["truncate"] += 1
                size = rng.randrange(600_000)
                os.ftruncate(fd, size)
                del model[size:]
                model.extend(bytes(size - len(model)))
            elif kind < 95:
                counts["size"] += 1
                assert os.fstat(fd).st_size == len(model), f"op {op}"
            else:
                counts["fsync"] += 1
                os.fsync(fd)
    finally:
        os.close(fd)
    assert path.read_bytes() == bytes(model)
    return counts


@pytest.mark.parametrize("direct_io", [False, True], ids=["page_cache", "direct_io"])
def test_fsx_through_the_mount_beneath_the_shim(
    fuse_ok: None, tmp_path: Path, shim, direct_io: bool
) -> None:
    shimmed: ShimEnv = shim(**NONZERO_KNOBS)
    inst = Instance(tmp_path, 3, shimmed.env)
    try:
        assert cli(inst, "setstripe", "/", "16384", "-1").returncode == 0
        m = Mount(inst, tmp_path / "mnt", direct_io, shimmed.env)
        try:
            counts = fsx_through(m.mnt / "fsx", 200, seed=11 + direct_io)
        finally:
            m.unmount()
        assert all(counts.values()), counts
        assert m.proc.returncode == 0, m.proc.stderr.read() if m.proc.stderr else ""
    finally:
        inst.kill_all()
    assert shimmed.provider_msgs("tcp") > 500, shimmed.stats()


@pytest.mark.parametrize("direct_io", [False, True], ids=["page_cache", "direct_io"])
def test_cp_md5sum_and_fio_verify_through_the_mount(
    fuse_ok: None, instance: Instance, tmp_path: Path, direct_io: bool
) -> None:
    fio = shutil.which("fio")
    if not fio:
        pytest.skip("fio not installed")
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(3_000_001))
    m = Mount(instance, tmp_path / "mnt", direct_io, instance.env)
    try:
        assert run(["cp", str(src), str(m.mnt / "copy.bin")], base_env(), 60).returncode == 0
        md5 = run(["md5sum", str(m.mnt / "copy.bin")], base_env(), 60)
        assert md5.stdout.split()[0] == hashlib.md5(src.read_bytes()).hexdigest()
        job = [fio, "--name=verify", f"--filename={m.mnt / 'fio.dat'}", "--size=4M",
               "--bs=16k", "--rw=randwrite", "--ioengine=psync", "--verify=crc32c",
               "--do_verify=1", "--verify_state_save=0", "--output-format=json"]  # fmt: skip
        proc = run(job, base_env(), timeout=RUN_TIMEOUT, cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
        res = json.loads(proc.stdout[proc.stdout.index("{") :])
        jobs = res["jobs"][0]
        assert jobs["error"] == 0 and jobs["write"]["io_bytes"] == 4 << 20, jobs["error"]
        assert jobs["read"]["io_bytes"] == 4 << 20  # the verify pass read it all back
    finally:
        m.unmount()


def test_second_mount_on_a_directory_is_one_line(
    fuse_ok: None, instance: Instance, tmp_path: Path
) -> None:
    m = Mount(instance, tmp_path / "mnt", False, instance.env)
    try:
        line = one_line(cli(instance, "mount", str(m.mnt)), 1, "is already a mount point")
        assert line.startswith("loggp-pfs: mount: ")
    finally:
        m.unmount()


# --- as an experiment's services ---------------------------------------------

PFS_SERVICES = """\
services:
  - {name: pfs, program: services/pfs/loggp-pfs-server, count: 2, mkdir: ['${point_dir}/pfs'],
     args: [--instance, '${point_dir}/pfs', --index, '${index}', --servers, '${count}'],
     ready: 'loggp-pfs-server: ready'}
  - {name: mnt, program: services/pfs/loggp-pfs, mkdir: ['${point_dir}/mnt'],
     args: [-i, '${point_dir}/pfs', mount, '${point_dir}/mnt'],
     ready: 'loggp-pfs: mounted'}
"""


def test_loggp_run_with_the_store_as_services(fuse_ok: None, tmp_path: Path) -> None:
    """Servers and mount started per point beneath the point's knobs: pfsio through the
    library pays at least 2·ΔL per request (one round trip to a server), fio --verify through the
    mount passes, and every service is gone after the run."""
    exp = tmp_path / "pfs.yaml"
    exp.write_text(
        "version: 1\nname: pfs-services\ntimeout: 120s\nlauncher: {kind: mpirun}\n"
        "emulator: {shim: fabric, provider: 'tcp;ofi_rxm'}\n"
        "sweep: {knobs: {latency: [100us]}}\n" + PFS_SERVICES + "workloads:\n"
        "  - {name: lib, program: workloads/pfsio/pfsio, ranks: 2, metric: lat_us,\n"
        "     services: [pfs], args: [-i, '${point_dir}/pfs', -o, read, -b, 64K, -s, 1M,\n"
        "                             -q, '1']}\n"
        "  - {name: fio, kind: process, ranks: 1, program: loggp-fio, metric: write_MBps,\n"
        "     higher_is_better: true,\n"
        "     args: [--name=w, --rw=write, --bs=64k, --size=1M, '--directory=${point_dir}/mnt',\n"
        "            --verify=crc32c, --verify_state_save=0]}\n"
    )
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
                timeout=400)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    rows = {p.row["point_id"]: p.row for p in read_points(out / STORE_FILE)[1]}
    assert {r["status"] for r in rows.values()} <= set(MEASURED), rows
    base, slow = rows["lib/baseline/r0"], rows["lib/latency=100us/r0"]
    # the servers ran beneath the shim too: their messages are in the point's counters
    pids = {s["pid"] for s in json.loads(slow["shim_stats"]) if int(s["msgs"]) > 0}
    assert len(pids) >= 4, slow["shim_stats"]  # 2 ranks and 2 servers
    # No request beneath ΔL = 100 µs can come back in less than its round trip's 2·ΔL; how
    # much more than the baseline it took is the host's to decide (a test neighbour's load
    # can make the baseline slower than that), so only this bound is asserted.
    assert slow["value"] >= 2 * 100 - 5, (base["value"], slow["value"])
    fio = json.loads(rows["fio/latency=100us/r0"]["result"])
    assert fio["valid"] is True and fio["metrics"]["read_MBps"] > 0, fio
    with open("/proc/mounts") as f:
        assert str(out) not in f.read()  # every mount was undone
    assert not subprocess.run(["pgrep", "-f", str(out)], capture_output=True).stdout
