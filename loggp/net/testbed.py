"""The namespace testbed: N hosts wired through one loggp-wire (docs/testbed.md).

    host i = network namespace <prefix>-h<i>, interface eth0 = 10.231.0.<i+1>/24
    its veth peer <prefix>w<i> stays in the root namespace = port i of loggp-wire

With --ssh (loggp/net/sshhosts.py) the hosts are machines as Ansible sees them: each has
an sshd on a management network (bridge <prefix>m), and the wire's ports <prefix>w<i>
live in an emulator host <prefix>-emu instead, where no wire is started: Ansible's
loggp_wire role starts it there (ansible/, docs/cluster.md).

Crash safety: the state file /run/loggp/testbed-<prefix>.json is written before anything
is created and rewritten after each namespace, interface and process is made, so `down`
removes exactly what was created, even after `up` died halfway, and never anything else.
The wire is identified by its pid, start time and command line, so a recycled pid is never
signalled.  Every process still inside a host's namespace (a rank, an orted, anything
started there) is ended before the namespace is removed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError, UsageError, one_line
from loggp.net import netns, sshhosts
from loggp.net.wirectl import WireControl, WireControlError, wire_request
from loggp.plan.experiment import MAX_HOSTS
from loggp.run.proc import failure_line
from loggp.run.proctree import Identity, end_tree, proc_start_time, stop, wait_gone
from loggp.run.shim import build_dir

STATE_VERSION = 1
DEFAULT_PREFIX = "lgp"
SUBNET = "10.231.0"
MTU = 1500
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
PING_TRIES = 5
WIRE_CPU = 0  # the wire's one lcore (EAL pins it to this CPU); workloads keep off it
_WIRE_QUEUE_PKTS = 8192  # loggp-wire's --queue-pkts default (WIRE_DEF_QUEUE_PKTS)
_PREFIX_RE = re.compile(r"[a-z][a-z0-9]{0,9}")
_READY_RE = re.compile(r"^loggp-wire: ready ports=(\d+)$", re.MULTILINE)


class TestbedError(LoggpError):
    """The testbed cannot be brought up, used or removed; the message says why."""

    __test__ = False  # not a pytest test class


class TestbedInterrupted(TestbedError):
    """Ctrl-C during up, after up had removed what it had made."""

    exit_code = 130  # as the shell's 128 + SIGINT


def state_dir() -> Path:
    """Where state files, sockets and logs live: $LOGGP_RUN_DIR or /run/loggp."""
    return Path(os.environ.get("LOGGP_RUN_DIR", "/run/loggp"))


def check_prefix(prefix: str) -> str:
    if not _PREFIX_RE.fullmatch(prefix):
        raise UsageError(
            f"bad testbed prefix '{prefix}': expected a lower-case letter then up to 9 "
            "lower-case letters or digits (interface names <prefix>w<i> must fit 15 chars)"
        )
    return prefix


def host_ns(prefix: str, i: int) -> str:
    return f"{prefix}-h{i}"


def wire_if(prefix: str, i: int) -> str:
    return f"{prefix}w{i}"


def emu_ns(prefix: str) -> str:
    """The emulator host of an --ssh testbed."""
    return f"{prefix}-emu"


def mgmt_bridge(prefix: str) -> str:
    return f"{prefix}m"


def mgmt_if(prefix: str, i: int | None) -> str:
    """The root end of host i's management veth (None: the emulator host's)."""
    return f"{prefix}me" if i is None else f"{prefix}m{i}"


def own_files(prefix: str) -> dict[str, str]:
    """The files a testbed's state names, by State field: the wire's control socket, log
    and exit totals, and DPDK's runtime directory (--file-prefix)."""
    d = state_dir()
    return {
        "control": str(d / f"testbed-{prefix}.sock"),
        "log": str(d / f"testbed-{prefix}.log"),
        "stats_json": str(d / f"testbed-{prefix}-stats.json"),
        "runtime_dir": f"/var/run/dpdk/loggp-{prefix}",
        "hosts_dir": str(d / f"testbed-{prefix}-hosts"),
    }


def host_addr(i: int) -> str:
    return f"{SUBNET}.{i + 1}"


def workload_cpus() -> str | None:
    """The CPUs (taskset list) workloads in the hosts may use: all but the wire's busy-
    polling one, so the wire is never descheduled by a rank; None on a 1-CPU machine."""
    cpus = sorted(os.sched_getaffinity(0) - {WIRE_CPU})
    return ",".join(str(c) for c in cpus) if cpus else None


def wire_binary() -> Path:
    exe = build_dir() / "emulator" / "wire" / "loggp-wire"
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        raise TestbedError(
            f"loggp-wire not found: {exe} (build it: cmake --build <build> --target "
            "loggp-wire, or set LOGGP_BUILD)"
        )
    return exe


WireProc = Identity  # the wire's process, as up started it


@dataclass
class State:
    """What one testbed consists of: only what was actually created is listed."""

    prefix: str
    hosts: int
    namespaces: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    wire: WireProc | None = None
    control: str = ""
    metrics: str = ""
    log: str = ""
    stats_json: str = ""
    runtime_dir: str = ""  # DPDK's files of the wire (--file-prefix), removed by down
    ssh: bool = False  # --ssh: sshd hosts on a management network, no wire started
    hosts_dir: str = ""  # --ssh: keys, sshds' files, what Ansible writes per host; down removes
    ready: bool = False
    version: int = STATE_VERSION

    @staticmethod
    def path_for(prefix: str) -> Path:
        return state_dir() / f"testbed-{prefix}.json"

    @property
    def path(self) -> Path:
        return State.path_for(self.prefix)

    def save(self) -> None:
        """Atomic: a crash leaves the old or the new state, never half a file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, prefix: str) -> State | None:
        path = cls.path_for(prefix)
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise TestbedError(f"{path}: unreadable testbed state: {e}") from None
        if not isinstance(doc, dict) or doc.get("version") != STATE_VERSION:
            raise TestbedError(f"{path}: not a version {STATE_VERSION} testbed state file")
        wire = doc.pop("wire", None)
        try:
            state = cls(**doc)
            state.wire = WireProc(**wire) if wire else None
        except TypeError as e:
            raise TestbedError(f"{path}: unexpected testbed state: {e}") from None
        state._refuse_foreign(prefix, path)
        return state

    def _refuse_foreign(self, prefix: str, path: Path) -> None:
        """down deletes what the file lists, so it may list only what up creates for
        this prefix: its hosts' namespaces and wire interfaces, its files."""
        hosts = range(min(self.hosts, MAX_HOSTS)) if isinstance(self.hosts, int) else ()
        allowed: dict[str, set[str]] = {
            "prefix": {prefix},
            "namespaces": {host_ns(prefix, i) for i in hosts} | {emu_ns(prefix)},
            "interfaces": {wire_if(prefix, i) for i in hosts}
            | {mgmt_if(prefix, i) for i in [*hosts, None]}
            | {mgmt_bridge(prefix)},
        }
        allowed |= {name: {"", path} for name, path in own_files(prefix).items()}
        for name, ok in allowed.items():
            value = getattr(self, name)
            for item in value if isinstance(value, list) else [value]:
                if item not in ok:
                    raise TestbedError(
                        f"{path}: {name} {item!r} is not something testbed '{prefix}' "
                        "creates: refusing to act on this file (remove it by hand)"
                    )

    def host_names(self) -> list[str]:
        return [host_ns(self.prefix, i) for i in range(self.hosts)]

    def wire_alive(self) -> bool:
        return self.wire is not None and self.wire.running()


def require(prefix: str) -> State:
    """The state of a testbed that is up (its wire running), TestbedError otherwise."""
    state = State.load(check_prefix(prefix))
    if state is None:
        raise TestbedError(
            f"no testbed '{prefix}' is up (no {State.path_for(prefix)}): "
            f"start one with loggp testbed up N --prefix {prefix}"
        )
    if not state.ready or not state.wire_alive():
        raise TestbedError(
            f"testbed '{prefix}' is not running (its loggp-wire is not alive; log: "
            f"{state.log}): remove it with loggp testbed down --prefix {prefix}"
        )
    return state


def _check_up_allowed(prefix: str, n: int, ssh: bool) -> None:
    if not 2 <= n <= MAX_HOSTS:
        raise UsageError(f"bad host count {n}: a testbed has 2 to {MAX_HOSTS} hosts")
    if os.geteuid() != 0:
        raise TestbedError("loggp testbed up needs root (network namespaces, veth, DPDK)")
    netns.tool("ip", "iproute2")
    netns.tool("ethtool", "ethtool")
    netns.tool("ping", "iputils-ping")
    wire_binary()
    if State.path_for(prefix).exists():
        raise TestbedError(
            f"a testbed '{prefix}' exists ({State.path_for(prefix)}): "
            f"remove it with loggp testbed down --prefix {prefix}, or use another --prefix"
        )
    names, links = {host_ns(prefix, i) for i in range(n)}, {wire_if(prefix, i) for i in range(n)}
    if ssh:
        netns.tool("sshd", "openssh-server")
        netns.tool("ssh-keygen", "openssh-client")
        names.add(emu_ns(prefix))
        links |= {mgmt_bridge(prefix)} | {mgmt_if(prefix, i) for i in [*range(n), None]}
        if sshhosts.MGMT_ROOT_ADDR in netns.run(["ip", "-o", "addr", "show"], "listing addresses"):
            raise TestbedError(
                f"{sshhosts.MGMT_ROOT_ADDR} (the management network's root end) is taken: "
                "another testbed up with --ssh? one at a time"
            )
    taken = sorted((names & netns.namespaces()) | (links & netns.links()))
    if taken:
        raise TestbedError(
            f"{', '.join(taken)} already exist(s) and loggp did not create them: "
            "choose another --prefix"
        )


def _queue_pkts(knob_args: list[str]) -> int:
    """The delay line's length the wire will size its pool for (never below its default)."""
    for flag, value in zip(knob_args, knob_args[1:], strict=False):
        if flag == "--queue-pkts" and value.isdigit():
            return max(int(value), _WIRE_QUEUE_PKTS)
    return _WIRE_QUEUE_PKTS


def _wire_argv(state: State, knob_args: list[str]) -> list[str]:
    # af_packet's default ring overflows silently under a 1 Gbit/s TCP stream; 4096
    # frames per ring do not (emulator/wire/README.md).  Memory: the mbuf pool holds
    # each port's delay line (--queue-pkts, at least its default) at about 2.4 KiB a packet.
    mem_mb = max(256, 128 + len(state.interfaces) * (_queue_pkts(knob_args) + 64) * 5 // 2048)
    argv = [
        str(wire_binary()), "-l", str(WIRE_CPU), "--no-huge", "--no-pci", "-m", str(mem_mb),
        f"--file-prefix={Path(state.runtime_dir).name}",
    ]  # fmt: skip
    argv += [
        f"--vdev=net_af_packet{i},iface={name},framecnt=4096"
        for i, name in enumerate(state.interfaces)
    ]
    argv += ["--", "--mode", "switch", "--control", state.control]
    argv += ["--stats-json", state.stats_json, *knob_args]
    if state.metrics:
        argv += ["--metrics", state.metrics]
    return argv


def _wait_ready(proc: subprocess.Popen[bytes], log: Path, ports: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        m = _READY_RE.search(text)
        if m:
            if int(m.group(1)) != ports:
                raise TestbedError(f"loggp-wire is ready with {m.group(1)} ports, not {ports}")
            return
        if proc.poll() is not None:
            raise TestbedError(
                f"loggp-wire exited with status {proc.returncode} before it was ready: "
                f"{failure_line(log) or 'no output'} (log: {log})"
            )
        time.sleep(0.05)
    raise TestbedError(
        f"loggp-wire did not print 'loggp-wire: ready ports={ports}' within "
        f"{READY_TIMEOUT_S:g} s (log: {log})"
    )


def ping(state: State, src: int, dst: int, count: int = 1, timeout_s: int = 2) -> bool:
    res = subprocess.run(
        ["ip", "netns", "exec", host_ns(state.prefix, src), "ping", "-n", "-q",
         "-c", str(count), "-W", str(timeout_s), host_addr(dst)],
        capture_output=True, timeout=count * timeout_s + 10, check=False,
    )  # fmt: skip
    return res.returncode == 0


def _check_connectivity(state: State) -> None:
    """Every host answers h0 (and h0 answers h1) through the wire; ARP is learnt on the
    first try, so a few tries are allowed before it counts as broken."""
    for src, dst in [(0, i) for i in range(1, state.hosts)] + [(1, 0)]:
        if not any(ping(state, src, dst) for _ in range(PING_TRIES)):
            raise TestbedError(
                f"{host_ns(state.prefix, src)} cannot ping {host_addr(dst)} "
                f"({host_ns(state.prefix, dst)}) through loggp-wire (log: {state.log})"
            )


def up(prefix: str, n: int, knob_args: list[str], metrics: str | None, ssh: bool = False) -> State:
    """Creates the testbed; on any failure removes what it created and re-raises.  With
    ssh the hosts get sshds on a management network and the wire's ports go to the
    emulator host, where no wire is started (module docstring)."""
    check_prefix(prefix)
    _check_up_allowed(prefix, n, ssh)
    state = State(prefix=prefix, hosts=n, metrics=metrics or "", ssh=ssh, **own_files(prefix))
    proc: subprocess.Popen[bytes] | None = None
    try:
        state.save()
        if ssh:
            _add_mgmt(state)
        for i in range(n):
            ns, root_if = host_ns(prefix, i), wire_if(prefix, i)
            # Recorded before it is made: _check_up_allowed has just seen the names
            # free, and down removes only names that exist, so a command interrupted
            # half-way leaves nothing unrecorded.
            state.namespaces.append(ns)
            state.save()
            netns.ns_add(ns)
            if ssh:  # inside the emulator host: removed with its namespace
                netns.veth_add_between(root_if, emu_ns(prefix), "eth0", ns)
                netns.ns_port_setup(emu_ns(prefix), root_if, MTU)
            else:
                state.interfaces.append(root_if)
                state.save()
                netns.veth_add(root_if, ns, "eth0")
                netns.root_if_setup(root_if, MTU)
            netns.ns_if_setup(ns, "eth0", f"{host_addr(i)}/24", MTU)
            if ssh:
                _add_mgmt_port(state, i, ns)
        if ssh:
            _start_sshds(state)
        else:
            Path(state.control).unlink(missing_ok=True)
            argv = _wire_argv(state, knob_args)
            log = Path(state.log)
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            start = proc_start_time(proc.pid)
            state.wire = WireProc(proc.pid, start if start is not None else -1, argv)
            state.save()
            _wait_ready(proc, log, n)
            wire_request(Path(state.control), {"cmd": "get"})
            _check_connectivity(state)
        state.ready = True
        state.save()
    except BaseException as e:
        _undo_up(prefix, proc if state.wire is None else None, e)
        if isinstance(e, KeyboardInterrupt):
            raise TestbedInterrupted(
                f"interrupted: testbed '{prefix}' was not brought up; removed what up had made"
            ) from None
        raise
    return state


def _add_mgmt(state: State) -> None:
    """The management bridge and the emulator host, each recorded before it is made."""
    bridge, emu = mgmt_bridge(state.prefix), emu_ns(state.prefix)
    state.interfaces.append(bridge)
    state.save()
    netns.bridge_add(bridge, f"{sshhosts.MGMT_ROOT_ADDR}/24")
    state.namespaces.append(emu)
    state.save()
    netns.ns_add(emu)
    _add_mgmt_port(state, None, emu)


def _add_mgmt_port(state: State, i: int | None, ns: str) -> None:
    """Host i's (None: the emulator host's) eth1 on the management bridge."""
    root = mgmt_if(state.prefix, i)
    state.interfaces.append(root)
    state.save()
    netns.veth_add(root, ns, "eth1")
    netns.bridge_port_add(mgmt_bridge(state.prefix), root)
    addr = sshhosts.EMU_MGMT_ADDR if i is None else sshhosts.mgmt_addr(i)
    netns.ns_addr_add(ns, "eth1", f"{addr}/24")


def _start_sshds(state: State) -> None:
    ssh_dir = sshhosts.ssh_dir(Path(state.hosts_dir))
    sshhosts.make_keys(ssh_dir)
    emu = emu_ns(state.prefix)
    sshhosts.start_sshd(ssh_dir, emu, emu, [sshhosts.EMU_MGMT_ADDR])
    for i in range(state.hosts):
        ns = host_ns(state.prefix, i)
        sshhosts.start_sshd(ssh_dir, ns, ns, [sshhosts.mgmt_addr(i), host_addr(i)])


def _undo_up(prefix: str, unrecorded: subprocess.Popen[bytes] | None, why: BaseException) -> None:
    """Removes what a failed or interrupted up made, with Ctrl-C ignored meanwhile (by
    the `ip` commands too, which inherit that), so a second Ctrl-C cannot leave half a
    testbed; if removing fails, the error says what to run.  The wire's log is kept for
    a failure, whose error names it, not after Ctrl-C."""
    with _sigint_ignored():
        if unrecorded is not None:
            unrecorded.kill()  # started, not yet recorded: down would not know it
            unrecorded.wait()
        try:
            down(prefix, keep_log=not isinstance(why, KeyboardInterrupt))
        except Exception as e:
            raise TestbedError(
                f"testbed up failed ({one_line(why)}) and removing what it made failed too "
                f"({one_line(e)}): remove the rest with loggp testbed down --prefix {prefix}"
            ) from None


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored inside (only the main thread can change it; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def down(prefix: str, keep_log: bool = False) -> list[str]:
    """Removes what the state file lists (only that), then the state file; what was
    removed, as lines for the user.  Nothing to remove is not an error.  keep_log keeps
    the wire's log (and totals) for a failed up whose error names it."""
    state = State.load(check_prefix(prefix))
    if state is None:
        return []
    done: list[str] = []
    if state.wire is not None:
        how = stop(state.wire, STOP_TIMEOUT_S)
        done.append(f"loggp-wire pid {state.wire.pid} ({how})")
        state.wire = None
        state.save()
    present = netns.namespaces()
    for ns in state.namespaces:
        if ns in present:
            done += _end_processes(ns)
    present = netns.links()
    for name in list(state.interfaces):
        if name in present:
            netns.link_del(name)  # removes the peer inside the namespace too
            done.append(f"interface {name}")
        state.interfaces.remove(name)
        state.save()
    present = netns.namespaces()
    for ns in list(state.namespaces):
        if ns in present:
            netns.ns_del(ns)
            done.append(f"namespace {ns}")
        state.namespaces.remove(ns)
        state.save()
    Path(state.control).unlink(missing_ok=True)
    if not keep_log:
        for f in (state.log, state.stats_json):
            if f:
                Path(f).unlink(missing_ok=True)
    if state.runtime_dir and Path(state.runtime_dir).is_dir():
        shutil.rmtree(state.runtime_dir)
        done.append(f"DPDK runtime files {state.runtime_dir}")
    if state.hosts_dir and Path(state.hosts_dir).is_dir():
        shutil.rmtree(state.hosts_dir)
        done.append(f"the hosts' keys and files {state.hosts_dir}")
    state.path.unlink()
    return done


def _end_processes(ns: str) -> list[str]:
    """Ends every process in namespace ns with its tree (a host's orted and ranks, or
    anything else started there), and waits until they are gone."""
    ended: set[int] = set()
    for pid in netns.ns_pids(ns):
        ended |= end_tree(pid)
    wait_gone(ended, STOP_TIMEOUT_S)
    left = netns.ns_pids(ns)
    if left:
        raise TestbedError(
            f"processes {', '.join(map(str, left))} in {ns} did not end within "
            f"{STOP_TIMEOUT_S:g} s after SIGKILL"
        )
    return [f"{len(ended)} processes in {ns}"] if ended else []


def status(prefix: str) -> dict[str, Any]:
    """Hosts, the wire, and (if it answers) its knobs and counters per port."""
    state = State.load(check_prefix(prefix))
    if state is None:
        raise TestbedError(
            f"no testbed '{prefix}' (no {State.path_for(prefix)}): "
            f"start one with loggp testbed up N --prefix {prefix}"
        )
    present = netns.namespaces()
    doc: dict[str, Any] = {
        "prefix": prefix,
        "state_file": str(state.path),
        "ready": state.ready,
        "hosts": [
            {
                "host": i,
                "namespace": host_ns(prefix, i),
                "address": host_addr(i),
                "port": i,
                "interface": wire_if(prefix, i),
                "present": host_ns(prefix, i) in present,
            }
            for i in range(state.hosts)
        ],  # fmt: skip
        "wire": {
            "pid": state.wire.pid if state.wire else None,
            "alive": state.wire_alive(),
            "control": state.control,
            "metrics": state.metrics or None,
            "log": state.log,
        },
    }
    if state.wire_alive():
        try:
            with WireControl(Path(state.control)) as ctl:
                got = ctl.request({"cmd": "get"})
                doc["wire"]["mode"] = got.get("mode")
                for key in ("latency_dist", "latency_corr", "seed", "pairs"):
                    doc["wire"][key] = got.get(key)
                doc["ports"] = got["ports"]
                doc["stats"] = ctl.request({"cmd": "stats"})["ports"]
        except WireControlError as e:
            doc["wire"]["error"] = str(e)
    return doc


def set_knobs(prefix: str, req: dict[str, Any]) -> list[dict[str, Any]]:
    """Sends one `set` to the running testbed's wire; the resulting port configs."""
    state = require(prefix)
    return list(wire_request(Path(state.control), req)["ports"])
