"""Node exporters on a Slurm allocation's nodes: the hosts' CPU beside each point.

On one machine the runner reads /proc/stat around each point (loggp/metrics/node.py).  A
point whose ranks run on other nodes of an allocation needs those nodes' counters: inside
an allocation the run starts one prometheus-node-exporter on every node of it, as a job
step of its own (`srun --overlap`, one task a node, sharing the nodes' CPUs with the
points' steps) on a port made of the job id, for as long as the run lasts.  The runner
reads each node's `node_cpu_seconds_total` at a point's start and end; the share of the
node's CPUs busy in between goes into the point's Slurm record (`nodes_cpu`, beside its
node list), and the run's Prometheus, when one runs, scrapes the exporters too (job
`slurm_nodes`).

Where the cluster does not allow it (no `--overlap`, the exporter missing on a node, the
port taken, the node unreachable from the batch node) the node is left out and run.json
says why; the run goes on without its CPU.  A node's CPU here is all of its busy time, the
point's own ranks included: another machine's processes cannot be told apart from here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from loggp.metrics.prometheus import (
    NODE_COLLECTORS,
    ScrapeTarget,
    find_node_exporter,
    terminate,
)
from loggp.run.proc import Spawned, spawn

PORT_BASE = 20000  # the exporters' port: PORT_BASE + the job id modulo PORT_SPAN
PORT_SPAN = 10000
READY_TIMEOUT_S = 15.0
SCONTROL_TIMEOUT_S = 30.0
_HTTP_TIMEOUT_S = 2.0
_POLL_S = 0.2
_STOP_TIMEOUT_S = 10.0
# node_cpu_seconds_total's modes that are not busy (as BUSY_COLUMNS in loggp/metrics/node.py)
_IDLE_MODES = frozenset({"idle", "iowait"})
_CPU_LINE = re.compile(r"^node_cpu_seconds_total\{([^}]*)\}\s+(\S+)", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')
_FIELD = re.compile(r"(\w+)=(\S+)")  # scontrol --oneliner's Name=value


@dataclass(frozen=True)
class NodeCpu:
    """One node's busy CPU seconds (all CPUs) and its CPUs, at one time."""

    busy_s: float
    cpus: int
    at: float  # time.monotonic()


def busy_share(before: NodeCpu, after: NodeCpu) -> float:
    """The share of the node's CPUs busy between two readings, 0..1."""
    wall = after.at - before.at
    if wall <= 0 or after.cpus == 0:
        return 0.0
    return min(1.0, max(0.0, (after.busy_s - before.busy_s) / (wall * after.cpus)))


def parse_cpu(text: str, at: float) -> NodeCpu:
    """The busy seconds and CPUs in a node exporter's /metrics text."""
    busy = 0.0
    cpus: set[str] = set()
    for labels, value in _CPU_LINE.findall(text):
        found = dict(_LABEL.findall(labels))
        cpus.add(found.get("cpu", ""))
        if found.get("mode") not in _IDLE_MODES:
            busy += float(value)
    return NodeCpu(busy, len(cpus), at)


def node_addresses(nodelist: str) -> dict[str, str]:
    """Each node of a Slurm node list and the address its slurmd answers on (NodeAddr)."""
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        raise OSError("scontrol not found: install Debian's slurm-client")
    res = subprocess.run(
        [scontrol, "--oneliner", "show", "node", nodelist],
        capture_output=True, text=True, timeout=SCONTROL_TIMEOUT_S, check=False,
    )  # fmt: skip
    if res.returncode != 0:
        said = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise OSError(f"scontrol show node {nodelist} failed (exit {res.returncode}): {said}")
    return parse_nodes(res.stdout)


def parse_nodes(text: str) -> dict[str, str]:
    """Each node's NodeName and NodeAddr in `scontrol --oneliner show node`'s text."""
    found = {}
    for line in text.splitlines():
        fields = dict(_FIELD.findall(line))
        if "NodeName" in fields:
            found[fields["NodeName"]] = fields.get("NodeAddr", fields["NodeName"])
    return found


class NodeExporters:
    """prometheus-node-exporter on each node of the allocation this process runs in."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.port = PORT_BASE + int(os.environ.get("SLURM_JOB_ID", "0")) % PORT_SPAN
        self.addresses: dict[str, str] = {}  # node -> host:port, of those that answered
        self.missing: dict[str, str] = {}  # node -> why it is not read
        self._step: Spawned | None = None

    def start(self) -> NodeExporters:
        """Starts the step and waits until each node's exporter answers (READY_TIMEOUT_S);
        a node that does not is named in missing, with why."""
        nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
        binary, srun = find_node_exporter(), shutil.which("srun")
        try:
            nodes = node_addresses(nodelist)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.missing["*"] = f"the allocation's nodes not known: {e}"
            return self
        if binary is None or srun is None:
            tool = "prometheus-node-exporter" if binary is None else "srun"
            self.missing = {n: f"{tool} not found on the batch node" for n in nodes}
            return self
        self.log_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            srun, "--overlap", f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}",
            "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--quiet",
            f"--output={self.log_dir}/node-exporter-%N.log",
            str(binary), f"--web.listen-address=:{self.port}", "--web.disable-exporter-metrics",
            "--collector.disable-defaults", *[f"--collector.{c}" for c in NODE_COLLECTORS],
        ]  # fmt: skip
        self._step = spawn(argv, os.environ, self.log_dir / "node-exporters.log", "srun")
        waiting = {n: f"{a}:{self.port}" for n, a in nodes.items()}
        deadline = time.monotonic() + READY_TIMEOUT_S
        while waiting and time.monotonic() < deadline and self._step.proc.poll() is None:
            for node, address in list(waiting.items()):
                if self._read(address) is not None:
                    self.addresses[node] = waiting.pop(node)
            if waiting:
                time.sleep(_POLL_S)  # an exporter that has not bound yet sends no event
        for node, address in waiting.items():
            log = self.log_dir / f"node-exporter-{node}.log"
            self.missing[node] = f"no answer at {address} within {READY_TIMEOUT_S:g} s ({log})"
        return self

    def stop(self) -> None:
        step, self._step = self._step, None
        if step is not None:
            terminate(step, _STOP_TIMEOUT_S)

    def targets(self) -> list[ScrapeTarget]:
        return [ScrapeTarget("slurm_nodes", a) for a in self.addresses.values()]

    def sample(self) -> dict[str, NodeCpu]:
        """Each answering node's CPU now; a node that does not answer is left out."""
        found = {}
        for node, address in self.addresses.items():
            cpu = self._read(address)
            if cpu is not None:
                found[node] = cpu
        return found

    @staticmethod
    def _read(address: str) -> NodeCpu | None:
        try:
            url = f"http://{address}/metrics"
            with urllib.request.urlopen(url, timeout=_HTTP_TIMEOUT_S) as resp:
                text = resp.read().decode("utf-8", "replace")
        except (urllib.error.URLError, OSError, ValueError):
            return None
        cpu = parse_cpu(text, time.monotonic())
        return cpu if cpu.cpus else None


def shares(before: dict[str, NodeCpu], after: dict[str, NodeCpu]) -> dict[str, float]:
    """Each node's busy share between two samples, of the nodes read both times."""
    return {n: round(busy_share(before[n], after[n]), 3) for n in after if n in before}
