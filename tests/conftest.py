"""Shared fixtures for the cross-component tests: paths into the CMake build,
the shim's environment, and launchers (fi_pingpong pairs, mpirun) that never
wait without a timeout.

The build directory is $LOGGP_BUILD, default <repo>/build.  Binaries the
build makes (the shim, tests/progs) are a failure when missing, never a skip;
only things the build cannot make (mpirun, fi_pingpong from libfabric-bin)
skip with a reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from loggp.run.shmregion import remove_stale_regions

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("LOGGP_BUILD", REPO / "build")).resolve()
SHIM_DIR = BUILD / "emulator" / "fabric"
SHIM_SO = SHIM_DIR / "libloggp-fi.so"
PROGS = BUILD / "tests" / "progs"

# The operations fi_stress (-o) runs on each stack: every one the bare
# provider of libfabric 1.17 carries.  shm strands tagged messages that arrive
# before their receive (tests/README.md, "Finding about shm's tagged
# messages"); plain tcp's msg endpoints offer neither FI_TAGGED nor FI_ATOMIC
# (fi_info -p tcp -t FI_EP_MSG -c FI_ATOMIC finds none).
STRESS_OPS = {
    "shm": "send,inject,write,read,atomic",
    "tcp;ofi_rxm": "send,tsend,inject,tinject,write,read,atomic",
    "udp;ofi_rxd": "send,tsend,inject,tinject,write,read,atomic",
    "tcp": "send,inject,write,read",
}
# Non-zero knobs for correctness runs (fi_pingpong, Open MPI).
NONZERO_KNOBS = {"overhead": "2us", "gap": "2us", "latency": "10us", "bulk_gap": "0.1ns/B"}
ZERO_KNOBS = {"overhead": "0us", "gap": "0us", "latency": "0us", "bulk_gap": "0ns/B"}

# MPI on its own transports, so that the only libfabric user is the program
# (fi_stress).  Open MPI 4.1 accepts include lists for pml/btl together with
# an exclude list for mtl; "--mca btl self,vader,tcp" already keeps btl ofi
# out, and with pml ob1 the mtl framework is not used at all.
MPI_OWN_TRANSPORT = [
    "--mca",
    "pml",
    "ob1",
    "--mca",
    "btl",
    "self,vader,tcp",
    "--mca",
    "mtl",
    "^ofi",
]


def mpi_over_ofi(provider: str) -> list[str]:
    """MCA flags that put MPI point-to-point on libfabric (pml cm, mtl ofi).

    btl ofi is excluded so the only libfabric user inside MPI is the mtl,
    which keeps the shim's counters attributable to MPI messages.
    """
    return [
        "--mca",
        "pml",
        "cm",
        "--mca",
        "mtl",
        "ofi",
        "--mca",
        "mtl_ofi_provider_include",
        provider,
        "--mca",
        "btl",
        "^ofi",
    ]


def core_provider(provider: str) -> str:
    """The provider nearest the wire: "tcp;ofi_rxm" -> "tcp"."""
    return provider.split(";")[0]


def pytest_configure(config: pytest.Config) -> None:
    for marker in (
        "unit: fast tests of one module, no binaries needed",
        "integration: drives the built binaries (needs the CMake build)",
        "needs_root: needs root (network namespaces, DPDK); skipped otherwise",
        "slow: takes more than a few seconds",
        "serial: measures time against a bound or uses machine-wide state (namespaces, the "
        "wire): runs alone after the parallel part (make test)",
    ):
        config.addinivalue_line("markers", marker)


# The files that take minutes, first: make test hands a whole file to each pytest-xdist
# worker in collection order (--dist loadfile), and one of these started last runs alone
# while the other worker idles.
LONG_FILES = (
    "tests/test_collio_shim.py", "tests/test_conform.py", "tests/test_stress.py",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONG_FILES)))  # stable


class RunTimeout(AssertionError):
    """A subprocess outlived its timeout (it was killed)."""


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(
    cmd: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs cmd (in cwd) in its own process group; kills the group on timeout."""
    proc = subprocess.Popen(
        list(cmd),
        env=dict(env),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        raise RunTimeout(
            f"timed out after {timeout:.0f} s: {' '.join(cmd)}\nstdout:\n{out}\nstderr:\n{err}"
        ) from None
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)


def stop_process(pid: int, timeout: float = 5.0) -> None:
    """SIGSTOPs pid and returns once every thread of it is stopped: kill() only queues the
    signal, and a thread running on another core goes on until it next enters the kernel."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    tasks = Path(f"/proc/{pid}/task")
    while True:
        states = [(t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in tasks.iterdir()]
        if all(state in ("T", "t") for state in states):
            return
        assert time.monotonic() < deadline, f"process {pid} not stopped within {timeout} s"
        time.sleep(0.001)


def base_env() -> dict[str, str]:
    """The environment without any trace of the shim."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGGP_") or k == "LOGGP_BUILD"}
    env.pop("FI_HOOK", None)
    env.pop("FI_PROVIDER_PATH", None)
    # ofi_rxd sends up to 128 packets of up to 64 KiB unacknowledged, which overflows
    # loopback's default UDP receive buffer (212 KiB): rxd retransmits the data, but not
    # its acks, so an ack lost after the peer has exited leaves the sender waiting for
    # ever (a race of rxd's own, hit in ~10 % of runs beneath ΔL = 10 us; tests/README.md).
    env.setdefault("FI_OFI_RXD_MAX_UNACKED", "8")
    # These tests mean loopback: libfabric's tcp provider would otherwise bind to whichever
    # interface it finds first, one that another run (a testbed) may remove meanwhile.
    env["FI_TCP_IFACE"] = "lo"
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


@dataclass
class ShimEnv:
    """Environment that puts a process beneath the shim with given knobs."""

    env: dict[str, str]
    stats_file: Path
    knob_vars: dict[str, str] = field(default_factory=dict)

    def stats(self) -> list[dict[str, object]]:
        """One dict per process that closed a fabric beneath the shim."""
        if not self.stats_file.exists():
            return []
        lines = self.stats_file.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def provider_msgs(self, provider: str) -> int:
        return sum(int(s.get("msgs", 0)) for s in self.stats() if s.get("provider") == provider)


@pytest.fixture(autouse=True)
def _no_stale_shm_regions() -> None:
    """Tests kill processes (timeouts, crash cases) whose shm files would make a later
    process with a reused pid fail fi_enable (loggp/run/shmregion.py); loggp run and
    loggp exec clear them the same way."""
    remove_stale_regions()


@pytest.fixture
def lock_dir(tmp_path: Path) -> dict[str, str]:
    """LOGGP_RUN_DIR for a `loggp run` of the test: the machine's run lock in a directory of
    the test's own, never the user's."""
    return {"LOGGP_RUN_DIR": str(tmp_path / "lock")}


@pytest.fixture(scope="session")
def shim_so() -> Path:
    if not SHIM_SO.is_file():
        pytest.fail(f"shim not built: {SHIM_SO} missing (cmake --build {BUILD})")
    return SHIM_SO


@pytest.fixture
def shim(shim_so: Path, tmp_path: Path):
    """Factory: shim(latency="500us", ...) -> ShimEnv; knob names as in docs/design.md.

    Raw variables can be given with raw={"LOGGP_LATENCY": "10"} to test
    refusals of bad values.
    """
    count = 0

    def make(raw: Mapping[str, str] | None = None, **knobs: str) -> ShimEnv:
        nonlocal count
        count += 1
        stats = tmp_path / f"stats-{count}.jsonl"
        env = base_env()
        env["FI_PROVIDER_PATH"] = str(shim_so.parent)
        env["FI_HOOK"] = "loggp"
        env["LOGGP_STATS_FILE"] = str(stats)
        knob_vars = {f"LOGGP_{k.upper()}": v for k, v in knobs.items()}
        knob_vars.update(raw or {})
        env.update(knob_vars)
        return ShimEnv(env=env, stats_file=stats, knob_vars=knob_vars)

    return make


def prog_path(name: str) -> Path:
    path = PROGS / name
    if not path.is_file():
        pytest.fail(f"test program not built: {path} (cmake --build {BUILD})")
    return path


@pytest.fixture(scope="session")
def mpirun_bin() -> str:
    path = shutil.which("mpirun")
    if not path:
        pytest.skip("mpirun not installed (openmpi-bin)")
    return path


@pytest.fixture(scope="session")
def fi_pingpong_bin() -> str:
    path = shutil.which("fi_pingpong")
    if not path:
        pytest.skip("fi_pingpong not installed (libfabric-bin)")
    return path


def mpirun_cmd(
    mpirun: str, np: int, argv: Sequence[str], mca: Sequence[str], env: Mapping[str, str]
) -> list[str]:
    """mpirun command line that forwards the shim's variables explicitly."""
    cmd = [mpirun, "-np", str(np), "--oversubscribe", "--bind-to", "none", *mca]
    for var in sorted(env):
        if var.startswith(("LOGGP_", "FI_")):
            cmd += ["-x", var]
    return cmd + list(argv)


def free_port() -> int:
    """An unused TCP port on 127.0.0.1 for fi_pingpong's control channel."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CALIBRATE = BUILD / "emulator" / "calibrate" / "loggp-calibrate"


def calibrate_pair(
    args: Sequence[str], env: Mapping[str, str], out: Path, pin: bool = False
) -> dict[str, Any]:
    """One loggp-calibrate server and client on 127.0.0.1 with the same args; returns the
    client's JSON document (written to out).  pin: the server on CPU 0, the client on
    CPU 1 (where there are two), so that two busy pollers never share one core."""
    common = [str(CALIBRATE), "-P", str(free_port()), "-T", "30", "-q", *args]
    cpus = sorted(os.sched_getaffinity(0))
    taskset = pin and len(cpus) > 1 and shutil.which("taskset")
    server_pre = ["taskset", "-c", str(cpus[0])] if taskset else []
    client_pre = ["taskset", "-c", str(cpus[1])] if taskset else []
    server = subprocess.Popen(
        [*server_pre, *common, "-B", "127.0.0.1"],
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        client = run([*client_pre, *common, "-j", str(out), "127.0.0.1"], dict(env), timeout=120)
        _, server_err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert client.returncode == 0, client.stderr
    assert server.returncode == 0, server_err
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _listening(port: int) -> bool:
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


@dataclass
class PingResult:
    client: subprocess.CompletedProcess[str]
    server: subprocess.CompletedProcess[str]

    @property
    def ok(self) -> bool:
        return self.client.returncode == 0 and self.server.returncode == 0

    def describe(self) -> str:
        return (
            f"client rc={self.client.returncode}\n{self.client.stdout}{self.client.stderr}\n"
            f"server rc={self.server.returncode}\n{self.server.stdout}{self.server.stderr}"
        )


@dataclass
class PingPerf:
    """One row of fi_pingpong's table.

    usec_per_xfer is elapsed / (iterations * 2): fi_pingpong times all
    iterations of one size (no warm-up; the first iteration includes any
    connection set-up) and divides by the two transfers per iteration, so it
    is the mean half round trip, not a median.  mb_per_sec is
    bytes moved (both directions) / elapsed, in 10^6 B/s.
    """

    size: str
    usec_per_xfer: float
    mb_per_sec: float


def parse_pingpong(stdout: str) -> list[PingPerf]:
    """Rows of fi_pingpong's result table (header "bytes #sent #ack ...")."""
    rows: list[PingPerf] = []
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if not line.split()[:1] == ["bytes"]:
            continue
        for row in lines[i + 1 :]:
            cols = row.split()
            if len(cols) != 8 or not cols[4].endswith("s"):
                break
            rows.append(PingPerf(cols[0], float(cols[6]), float(cols[5])))
    return rows


def fi_pingpong(
    binary: str,
    provider: str,
    ep_type: str,
    args: Sequence[str],
    server_env: Mapping[str, str],
    client_env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> PingResult:
    """Runs an fi_pingpong server and client on 127.0.0.1 (own control port).

    The client starts once the server's control port is listening, or once
    the server has exited (a refused start); no sleeps.
    """
    port = free_port()
    common = [binary, "-p", provider, "-e", ep_type, *args]
    server = subprocess.Popen(
        [*common, "-B", str(port)],
        env=dict(server_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while not _listening(port) and server.poll() is None:
            if time.monotonic() > deadline:
                raise RunTimeout(f"fi_pingpong server never listened on {port}")
            time.sleep(0.01)  # polling a condition, bounded by deadline
        if server.poll() is not None:
            out, err = server.communicate()
            srv = subprocess.CompletedProcess(common, server.returncode, out, err)
            return PingResult(subprocess.CompletedProcess(common, -1, "", "not started"), srv)
        client = run([*common, "-P", str(port), "127.0.0.1"], client_env or server_env, timeout)
        try:
            out, err = server.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(server)
            out, err = server.communicate()
            err += f"\n[killed: server did not exit within {timeout:.0f} s]"
            return PingResult(client, subprocess.CompletedProcess(common, -9, out, err))
        return PingResult(client, subprocess.CompletedProcess(common, server.returncode, out, err))
    finally:
        if server.poll() is None:
            _kill_group(server)
            server.communicate()


def ping_perf(result: PingResult) -> PingPerf:
    assert result.ok, result.describe()
    rows = parse_pingpong(result.client.stdout)
    assert len(rows) == 1, f"expected one result row:\n{result.client.stdout}"
    return rows[0]


def json_line(stdout: str) -> dict[str, object]:
    """The last line of stdout that is a JSON object."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return dict(json.loads(line))
    raise AssertionError(f"no JSON line in output:\n{stdout}")


def cpu_ns(pid: int) -> int:
    """Time every thread of pid has spent on a CPU, in ns (/proc/PID/task/*/schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended meanwhile
    return total


# A service that finds a request after a quiet while may take this much longer than
# back to back, once the host's wake-ups are taken off (host_wakeup_us, or the
# service's own probe): cold caches and what the probe does not see.  What the probe
# missed reached 666 µs on one CI machine (a store read after 100 ms of quiet, the pipe
# probe beside it seeing no cost at all), so time alone cannot tell a host's wake-up
# from a service's own timed sleep; IDLE_WAKEUPS_PER_S tells that, by count.  This
# bound catches what is left: a wake-up the wait object missed (up to a whole
# Fabric::kTimerCheck, 50 ms).
IDLE_EXTRA_US = 1000.0


def host_wakeup_us(quiet_s: float, rounds: int) -> float:
    """The host's own cost, in µs, of one wake-up of a thread blocked on another CPU
    after quiet_s of quiet, over one back to back: half the difference of the median
    round trips of two processes through pipes, each pinned to its own CPU.  On a VM
    this is where an idle vCPU's halt is paid (0-40 µs idle, 100-900 µs beside other
    work on the Firecracker VMs), which a service that blocks cannot avoid."""
    cpus = sorted(os.sched_getaffinity(0))
    to_child, to_parent = os.pipe(), os.pipe()
    child = os.fork()
    if child == 0:
        os.sched_setaffinity(0, {cpus[-1]})
        while (b := os.read(to_child[0], 1)) not in (b"", b"q"):
            os.write(to_parent[1], b)
        os._exit(0)
    try:

        def median_rtt(quiet: float, n: int) -> float:
            times = []
            for _ in range(n):
                if quiet:
                    time.sleep(quiet)  # the quiet itself is what is measured
                t0 = time.perf_counter_ns()
                os.write(to_child[1], b"x")
                os.read(to_parent[0], 1)
                times.append((time.perf_counter_ns() - t0) / 1e3)
            return statistics.median(times)

        mask = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpus[0]})
        try:
            return max(0.0, (median_rtt(quiet_s, rounds) - median_rtt(0.0, 4 * rounds)) / 2)
        finally:
            os.sched_setaffinity(0, mask)
    finally:
        os.write(to_child[1], b"q")
        os.waitpid(child, 0)
        for fd in (*to_child, *to_parent):
            os.close(fd)


# An idle service's share of one CPU at most (it blocks on its fabric's wait object).
IDLE_CPU_SHARE = 0.01
# How often one thread of an idle service may wake by itself, a second.  A thread
# blocked on its fabric's wait object wakes only to look at its own deadlines, 20 times
# a second (services/common/fabric.hpp, Fabric::kTimerCheck); one that sleeps on a
# timer between polls wakes a thousand times or more, at next to no CPU, and makes
# each request that finds it asleep wait out the rest of its sleep.
IDLE_WAKEUPS_PER_S = 50.0


@dataclass(frozen=True)
class Idle:
    """What the busiest of a service's processes and threads did over a quiet while."""

    cpu_share: float  # the largest share of a CPU one process used
    wakeups_per_s: float  # the most times one thread went to sleep and woke, a second
    thread: str  # that thread: "PID/TID name"


def thread_sleeps(pid: int) -> dict[str, int]:
    """Each thread of pid ("PID/TID name") and how many times it gave up its CPU to wait
    (voluntary_ctxt_switches in /proc/PID/task/TID/status)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines())
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
        name = f"{pid}/{task.name} {fields['Name'].strip()}"
        out[name] = int(fields["voluntary_ctxt_switches"])
    return out


def idle_activity(pids: Sequence[int], seconds: float = 1.0) -> Idle:
    """What pids did over a quiet while of seconds: their busiest CPU share and wake-ups."""
    cpu = [cpu_ns(p) for p in pids]
    sleeps = [thread_sleeps(p) for p in pids]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(end - time.monotonic())  # the quiet itself is what is measured
    share = max(cpu_ns(p) - b for p, b in zip(pids, cpu, strict=True)) / (seconds * 1e9)
    woke = {
        name: n - before[name]
        for p, before in zip(pids, sleeps, strict=True)
        for name, n in thread_sleeps(p).items()
        if name in before
    }
    thread = max(woke, key=woke.__getitem__)
    return Idle(share, woke[thread] / seconds, thread)


@pytest.fixture
def env_plain() -> Iterator[dict[str, str]]:
    yield base_env()


def workload_bin(name: str) -> Path:
    """build/workloads/<name>/<name>; a failure, not a skip, when the build lacks it."""
    path = BUILD / "workloads" / name / name
    if not path.is_file():
        pytest.fail(f"workload not built: {path} (cmake --build {BUILD})")
    return path


def run_workload(
    mpirun: str,
    name: str,
    np: int,
    args: Sequence[str],
    mca: Sequence[str] = MPI_OWN_TRANSPORT,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    """A workload program under mpirun (MPI's own transports unless mca says otherwise)."""
    env = env if env is not None else base_env()
    argv = mpirun_cmd(mpirun, np, [str(workload_bin(name)), *args], list(mca), env)
    return run(argv, env, timeout=timeout)


def assert_refused(proc: subprocess.CompletedProcess[str], name: str, msg: str) -> None:
    """A workload refused its options: exit 2, one line of its own naming msg, no result."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    own = [line for line in proc.stderr.splitlines() if line.startswith(f"{name}: ")]
    assert len(own) == 1 and msg in own[0], proc.stderr
    assert '"loggp_result"' not in proc.stdout, proc.stdout


def assert_usage(proc: subprocess.CompletedProcess[str], name: str) -> None:
    """A workload's -h: its usage on stdout, exit 0."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"usage: mpirun -np N {name} "), proc.stdout


def workload_result(stdout: str) -> dict[str, Any]:
    """The one result line (docs/results.md), with its message totals checked."""
    lines = [line for line in stdout.splitlines() if '"loggp_result"' in line]
    assert len(lines) == 1, stdout
    res = json.loads(lines[0])
    msgs = res["msgs"]
    assert sum(msgs["per_rank"]) == msgs["total"] and len(msgs["per_rank"]) == res["ranks"], res
    assert res["metrics"]["time_s"] > 0, res
    return res


def opt_args(opts: Mapping[str, Any]) -> list[str]:
    """{"n": 5, "i": 2} -> ["-n", "5", "-i", "2"]."""
    return [a for k, v in opts.items() for a in (f"-{k}", str(v))]
