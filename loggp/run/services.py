"""An experiment's services: servers started before each point and stopped after it.

Each instance runs beneath a keeper (loggp/run/keeper.py: stopping it, or the runner's
death, ends everything it started) beneath the point's knobs when the shim is the fabric
shim (and the service's `shim` is true), on this machine or, under the netns launcher,
inside a testbed host.  A service is ready when a line of its output matches its `ready`
pattern; the pattern's named groups, and the host's address, become
`${service.NAME[I].FIELD}` values for the services after it and for the workload
(loggp/plan/placeholders.py).  Instances start in the order of the file, each ready before
the next starts, and stop in the reverse order: SIGTERM, then SIGKILL to the whole tree
after stop_timeout.  Output goes to `<point dir>/service-NAME-I.log`.  An instance with
`metrics` (host:port of its Prometheus endpoint) is scraped by the run's Prometheus server
while it runs, labelled with its service, instance and point (targets_file).  The last line
of an instance's output that is a JSON object (the counters the PFS and KV servers print
when they stop) goes to `<point dir>/services.jsonl`.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import regex

from loggp.errors import LoggpError, one_line
from loggp.metrics.prometheus import write_service_targets
from loggp.net.netns import tool
from loggp.net.testbed import host_addr, host_ns
from loggp.plan.experiment import Experiment, Service, Workload, ready_pattern
from loggp.plan.knobs import KnobSet
from loggp.plan.placeholders import service_key, substitute
from loggp.run.capture import CHUNK, TailFile, tail_text
from loggp.run.launch import find_program, pinned, tcp_iface
from loggp.run.proc import end, exit_status, failure_line, kept
from loggp.run.shim import process_env

LOCAL_HOST = "127.0.0.1"
# What a keeper may take beyond its service's stop_timeout to end the tree and exit.
_KEEPER_SLACK_S = 5.0
SERVICE_COUNTERS = "services.jsonl"
MAX_READY_LINE = 64 << 10  # bytes of a line searched for the ready pattern
READY_BUDGET_S = 1.0  # time one search of a line may take


class ServiceError(LoggpError):
    """A service did not start, did not become ready, or died during its point."""


@dataclass
class _Instance:
    service: Service
    index: int
    host: str
    log: Path
    proc: subprocess.Popen[bytes]
    ready: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)
    settled: threading.Event = field(default_factory=threading.Event)  # ready or ended
    groups: dict[str, str] = field(default_factory=dict)
    problem: str = ""  # why it can never be ready (a search past its budget)

    @property
    def label(self) -> str:
        return f"service {self.service.name}[{self.index}]"

    def follow(self) -> None:
        """Copies the output to the log (its tail kept: capture.py) until it ends, and
        notes the ready line: each line up to MAX_READY_LINE bytes is searched with a budget
        of READY_BUDGET_S, off the GIL, so no pattern can hold the runner."""
        pattern = ready_pattern(self.service.ready)
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        log = TailFile(self.log)
        line = b""
        skip = False  # in the rest of a line longer than MAX_READY_LINE, already searched
        try:
            while data := os.read(fd, CHUNK):
                log.write(data)
                if self.ready.is_set() or self.problem:
                    continue
                if skip:
                    _, newline, data = data.partition(b"\n")
                    if not newline:
                        continue
                    skip = False
                *whole, line = (line + data).split(b"\n")
                if len(line) > MAX_READY_LINE:  # a line without end: search its start
                    whole.append(line)
                    line, skip = b"", True
                for raw in whole:
                    if self._ready_in(pattern, raw[:MAX_READY_LINE]):
                        break
        finally:
            log.close()
            self.ended.set()
            self.settled.set()

    def _ready_in(self, pattern: regex.Pattern[str], raw: bytes) -> bool:
        """Whether raw is the ready line (its groups noted); a search past its budget
        settles the instance with the reason."""
        try:
            m = pattern.search(
                raw.decode("utf-8", errors="replace"), timeout=READY_BUDGET_S, concurrent=True
            )
        except TimeoutError:
            self.problem = (
                f"{self.label}: its ready pattern {self.service.ready!r} took more than "
                f"{READY_BUDGET_S:g} s (READY_BUDGET_S) on a line of {len(raw)} bytes: "
                "write one that cannot backtrack so much"
            )
            self.settled.set()
            return True
        if m is None:
            return False
        self.groups = {k: v for k, v in m.groupdict().items() if v is not None}
        self.ready.set()
        self.settled.set()
        return True

    def died(self) -> str:
        rc = self.proc.wait()
        detail = failure_line(self.log) or "no output"
        return f"{self.label} exited with status {exit_status(rc)}: {detail} (log: {self.log})"


class Services:
    """The running services of one point; a context manager that stops them."""

    def __init__(
        self,
        exp: Experiment,
        workload: Workload,
        knobs: KnobSet,
        point_dir: Path,
        exp_dir: Path | None,
        *,
        targets_file: Path | None = None,
        point_id: str = "",
        cgroups: list[Path] | None = None,
    ):
        self.cgroups = cgroups or []
        self.exp = exp
        self.services = exp.services_of(workload)
        self.targets_file = targets_file
        self.point_id = point_id
        self._targets: list[tuple[str, dict[str, str]]] = []
        self.knobs = knobs
        self.point_dir = point_dir
        self.exp_dir = exp_dir
        self.values: dict[str, str] = {"point_dir": str(point_dir.resolve())}
        self._running: list[_Instance] = []
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Services:
        try:
            for svc in self.services:
                for i in range(svc.count):
                    self._start(svc, i)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _host(self, svc: Service, i: int) -> tuple[str, list[str]]:
        """The instance's address and the command prefix that runs it there."""
        if self.exp.launcher.kind != "netns":
            return LOCAL_HOST, []
        n = svc.hosts[i % len(svc.hosts)] if svc.hosts else 0
        ns = host_ns(self.exp.launcher.netns_prefix, n)
        return host_addr(n), [*pinned(), tool("ip", "iproute2"), "netns", "exec", ns]

    def _env(self, svc: Service) -> dict[str, str]:
        if self.exp.emulator.shim == "fabric" and svc.shim:
            env = process_env(
                self.knobs,
                stats_file=self.point_dir / "stats.jsonl",
                settings=self.exp.dist_env(self.exp_dir),
            )
        else:
            env = process_env(None)
        env["LOGGP_PROVIDER"] = self.exp.emulator.provider
        iface = tcp_iface(self.exp.launcher)
        if iface is not None:
            env["FI_TCP_IFACE"] = iface
        return env

    def _start(self, svc: Service, i: int) -> None:
        host, prefix = self._host(svc, i)
        local = {**self.values, "index": str(i), "count": str(svc.count), "host": host}
        for d in svc.mkdir:
            path = Path(substitute(d, local))
            try:
                path.mkdir(parents=True, exist_ok=True)
            except (OSError, ValueError) as e:  # ValueError: a NUL byte from a ready group
                why = e.strerror if isinstance(e, OSError) else one_line(e)
                raise ServiceError(f"service {svc.name}[{i}]: cannot mkdir {path}: {why}") from None
        argv = [
            *prefix,
            str(find_program(svc.program, self.exp_dir)),
            *(substitute(a, local) for a in svc.args),
        ]
        log = self.point_dir / f"service-{svc.name}-{i}.log"
        try:
            proc = subprocess.Popen(
                kept(argv, svc.stop_timeout, cgroups=self.cgroups),
                env=self._env(svc),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except (OSError, ValueError) as e:
            raise ServiceError(
                f"service {svc.name}[{i}]: cannot start {argv[0]}: {one_line(e)}"
            ) from None
        inst = _Instance(svc, i, host, log, proc)
        self._running.append(inst)
        follower = threading.Thread(target=inst.follow, name=inst.label, daemon=True)
        follower.start()
        self._threads.append(follower)
        self._wait_ready(inst)
        for name, value in {"host": host, **inst.groups}.items():
            self.values[service_key(svc.name, i, name)] = value
        if svc.metrics is not None and self.targets_file is not None:
            address = substitute(svc.metrics, {**local, **inst.groups})
            labels = {"service": svc.name, "instance": str(i), "point": self.point_id}
            self._targets.append((address, labels))
            write_service_targets(self.targets_file, self._targets)

    def _wait_ready(self, inst: _Instance) -> None:
        inst.settled.wait(inst.service.ready_timeout)
        if inst.ready.is_set():
            return
        if inst.problem:
            raise ServiceError(inst.problem)
        if inst.ended.is_set():
            raise ServiceError(f"{inst.died()} before it was ready")
        raise ServiceError(
            f"{inst.label} printed no line matching {inst.service.ready!r} within "
            f"{inst.service.ready_timeout:g} s (log: {inst.log})"
        )

    def failure(self) -> str | None:
        """Why the point cannot be trusted: an instance that exited while it ran."""
        for inst in self._running:
            if inst.proc.poll() is not None:
                return inst.died()
        return None

    def _save_counters(self) -> None:
        """Each stopped instance's last JSON line (its counters, as the PFS and KV servers
        print them at exit) into <point dir>/services.jsonl."""
        found = [
            {"service": i.service.name, "instance": i.index, "counters": c}
            for i in self._running
            if (c := _last_json(i.log)) is not None
        ]
        if found:
            with (self.point_dir / SERVICE_COUNTERS).open("w") as f:
                f.writelines(json.dumps(r) + "\n" for r in found)

    def stop(self) -> None:
        """SIGTERM to every instance's session in reverse order, SIGKILL after its
        stop_timeout; waits for each."""
        for inst in reversed(self._running):
            end(inst.proc, inst.service.stop_timeout + _KEEPER_SLACK_S)
        for t in self._threads:
            t.join()
        self._save_counters()
        self._running.clear()
        self._threads.clear()
        if self._targets and self.targets_file is not None:
            self._targets.clear()
            write_service_targets(self.targets_file, [])


def _last_json(log: Path) -> dict[str, Any] | None:
    """The last line of log that is a JSON object: a server's counters at exit."""
    for line in reversed(tail_text(log).splitlines()):
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(found, dict):
                return found
    return None
