"""The runner's side of `shim: wire`: knobs on the wire before each point: the testbed's
(launcher netns), or the emulator node's of an Ansible inventory (launcher ansible), whose
control socket is reached over ssh.

Before a point every port gets the point's whole setting (wire knobs it does not name go
to zero, so nothing of the previous point remains); what the wire then reports, and its
counters' change over the point, are stored with the point (column shim_stats).  After
the run the ports get back the settings they had before it.

The wire's delay distribution (one for all its ports, emulator/wire/README.md "Delay
distributions") is the experiment file's (emulator.latency_dist, latency_corr, seed; none:
constant): the runner sets it with the control socket's `dist` request before the first
point, and puts back the wire's own after the run, as it does the knobs.  Each port's
drawn delays over a point (delay_hist) are stored with the point like its other counters.

A point with a schedule (docs/experiments.md, "Schedule") gets its steps live: the knobs in
effect at time 0 before the launch, each later step as a `set` of every port at its time
since the launch (WireSchedule, a thread of the runner's); when each step was applied is
stored with the port lines (step_origin_ns, step_at_ns, step_applied_ns).

A point on a network (docs/experiments.md, "Network") gives the wire its delays between
nodes, node i on port i, with the `pairs` request; what they added to each port's packets
(pair_pkts, pair_latency_ns) is stored with the other counters.  The run takes the pairs
away after its last point.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.net.testbed import require
from loggp.net.wirectl import (
    SshWireControl,
    WireControl,
    WireControlError,
    restore_request,
    set_request,
)
from loggp.plan.dist import CORR_ENV, DIST_ENV, SEED_ENV
from loggp.plan.knobs import Knob, KnobSet, parse_knob
from loggp.plan.schedule import Line
from loggp.plan.topology import Network, node_table, table_text
from loggp.results.lateness import LATE_BUCKETS, LATE_HIST_KEY
from loggp.run.inventory import InventoryError, read_inventory

_COUNTERS = (
    "rx_pkts",
    "rx_bytes",
    "tx_pkts",
    "tx_bytes",
    "releases",
    "late_ns",
    "late_over_10us",
    "early_releases",
)
# Per source port, while the wire has a network's pairs (emulator/wire/README.md).
_PAIR_COUNTERS = ("pair_pkts", "pair_latency_ns")


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in _COUNTERS}
    drops_a, drops_b = after.get("drops", {}), before.get("drops", {})
    out["drops"] = {k: int(v) - int(drops_b.get(k, 0)) for k, v in drops_a.items()}
    hist_a = after.get(LATE_HIST_KEY, [0] * LATE_BUCKETS)
    hist_b = before.get(LATE_HIST_KEY, [0] * LATE_BUCKETS)
    out[LATE_HIST_KEY] = [int(a) - int(b) for a, b in zip(hist_a, hist_b, strict=True)]
    # maxima since the wire started, not over the point
    for k in _PAIR_COUNTERS:
        if k in after:
            was = before.get(k) or [0] * len(after[k])
            out[k] = [int(a) - int(b) for a, b in zip(after[k], was, strict=True)]
    out["queue_depth_max"] = after.get("queue_depth_max")
    out["late_max_ns"] = after.get("late_max_ns")
    out.update(_delay_delta(after, before))
    return out


_DELAY_KEYS = ("delay_latency_ns", "delay_bucket_ns", "delay_starts")


def _delay_delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """The drawn delays of a port over the point: its histogram's growth, or the whole of
    it where the port started it again during the point (for another latency or
    distribution: delay_starts grew; emulator/wire/README.md, "Delay distributions")."""
    if "delay_hist" not in after:
        return {}
    out = {k: after[k] for k in _DELAY_KEYS}
    hist = [int(c) for c in after["delay_hist"]]
    if before.get("delay_starts") == after["delay_starts"]:
        hist = [a - int(b) for a, b in zip(hist, before["delay_hist"], strict=True)]
    out["delay_hist"] = hist
    return out


def wire_dist(doc: dict[str, Any]) -> dict[str, str]:
    """The distribution a wire's get reports, as the settings file_dist_env() gives."""
    dist = doc.get("latency_dist", "constant")
    if dist == "constant":
        return {}
    out = {DIST_ENV: str(dist), SEED_ENV: str(doc.get("seed"))}
    if doc.get("latency_corr") is not None:
        out[CORR_ENV] = str(doc["latency_corr"])
    return out


def dist_request(settings: dict[str, str]) -> dict[str, Any]:
    """The control request that makes a wire draw from settings (wire_dist's form)."""
    keys = {DIST_ENV: "latency_dist", CORR_ENV: "latency_corr", SEED_ENV: "seed"}
    return {"cmd": "dist", **{keys[name]: value for name, value in settings.items()}}


class WireSession:
    """The wire of testbed prefix (or, given inventory, of the inventory's emulator node)
    for one run; TestbedError/WireControlError (one line, naming the testbed or host and
    what did not answer) when it is down."""

    def __init__(
        self, prefix: str, inventory: Path | None = None, dist: dict[str, str] | None = None
    ) -> None:
        self.prefix = prefix
        self.inventory = inventory
        self.dist = dist or {}  # the experiment file's distribution (Experiment.dist_env)
        self._saved: list[dict[str, Any]] | None = None
        self._saved_dist: dict[str, str] | None = None
        self._paired = False  # the wire holds a point's network

    def _control(self) -> WireControl | SshWireControl:
        if self.inventory is None:
            return WireControl(Path(require(self.prefix).control))
        return emulator_control(self.inventory)

    def save(self) -> None:
        """Remembers the ports' settings and the wire's distribution before the run, for
        restore(), and sets the experiment file's distribution on the wire."""
        with self._control() as ctl:
            doc = ctl.request({"cmd": "get"})
            self._saved = list(doc["ports"])
            self._saved_dist = wire_dist(doc)
            if self._saved_dist != self.dist:
                ctl.request(dist_request(self.dist))

    def apply(
        self, knobs: KnobSet, network: Network | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Sets knobs on every port and the network's delays between them (node i on port
        i; none without a network); (the ports' settings now, their counters now)."""
        with self._control() as ctl:
            ports = list(ctl.request(set_request(knobs, full=True))["ports"])
            if network is not None or self._paired:
                table = table_text(node_table(network)) if network is not None else ""
                ctl.request({"cmd": "pairs", "table": table})
                self._paired = network is not None
            return ports, list(ctl.request({"cmd": "stats"})["ports"])

    def set_knobs(self, knobs: KnobSet) -> None:
        """Sets knobs on every port (unnamed wire knobs to zero), at once."""
        with self._control() as ctl:
            ctl.request(set_request(knobs, full=True))

    def record(
        self, ports: list[dict[str, Any]], before: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Per port: the settings the point ran with and its counters' change over it."""
        with self._control() as ctl:
            after = list(ctl.request({"cmd": "stats"})["ports"])
        by_port = {int(s["port"]): s for s in before}
        return [
            {"shim": "wire", **cfg, **_delta(a, by_port.get(int(a["port"]), {}))}
            for cfg, a in zip(ports, after, strict=False)
        ]

    def restore(self) -> None:
        if self._saved is None:
            return
        # Every port is tried, so one refused set does not leave the rest shaped.
        errors: list[str] = []
        with self._control() as ctl:
            for port in self._saved:
                try:
                    ctl.request(restore_request(port))
                except LoggpError as e:
                    errors.append(str(e))
            if self._paired:
                try:
                    ctl.request({"cmd": "pairs", "table": ""})
                    self._paired = False
                except LoggpError as e:
                    errors.append(f"pairs: {e}")
            if self._saved_dist is not None and self._saved_dist != self.dist:
                try:
                    ctl.request(dist_request(self._saved_dist))
                except LoggpError as e:
                    errors.append(f"distribution: {e}")
        if errors:
            raise WireControlError(f"{len(errors)} port(s) not restored: {'; '.join(errors)}")


class WireSchedule:
    """A point's schedule on the wire (module doc): its steps as whole knob settings, the
    point's knobs changed by each step's lines in turn.  WireControlError for a knob the
    wire does not apply."""

    def __init__(self, base: KnobSet, lines: list[Line]) -> None:
        current = base.as_dict()
        self.steps: list[tuple[int, KnobSet]] = []
        for at, knob, value in lines:
            at_ns = parse_knob("latency", at)
            k = Knob.lookup(knob)
            set_request(KnobSet.parse({k.value: value}), full=False)  # a wire knob?
            for other in k.excludes:
                current.pop(other.value, None)
            current[k.value] = value
            if self.steps and self.steps[-1][0] == at_ns:
                self.steps[-1] = (at_ns, KnobSet.parse(dict(current)))
            else:
                self.steps.append((at_ns, KnobSet.parse(dict(current))))
        if not self.steps or self.steps[0][0] != 0:
            self.steps.insert(0, (0, base))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.origin_ns = 0
        self.applied_ns: list[int] = [0]
        self.errors: list[str] = []

    def first(self) -> KnobSet:
        """The knobs in effect from time 0: set before the launch."""
        return self.steps[0][1]

    def start(self, wire: WireSession) -> None:
        """Time 0 is now; every later step is set at its time by a thread of its own."""
        self.origin_ns = time.time_ns()
        t0 = time.monotonic_ns()

        def run() -> None:
            for at_ns, knobs in self.steps[1:]:
                left = (t0 + at_ns - time.monotonic_ns()) / 1e9
                if left > 0 and self._stop.wait(left):
                    return
                try:
                    wire.set_knobs(knobs)
                except LoggpError as e:
                    self.errors.append(f"step at {at_ns / 1e9:g} s: {e}")
                    return
                self.applied_ns.append(time.monotonic_ns() - t0)

        self._thread = threading.Thread(target=run, name="wire-schedule", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        """Ends the steps not yet due; when time 0 was (CLOCK_REALTIME ns), when each step
        was due and when it was applied (ns since time 0; steps never reached are left
        out)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return {
            "step_origin_ns": self.origin_ns,
            "step_at_ns": [at for at, _ in self.steps],
            "step_applied_ns": list(self.applied_ns),
        }


EMULATOR_GROUP = "emulator"


def emulator_control(inventory: Path) -> SshWireControl:
    """The wire of the inventory's emulator node: its first host in group emulator, at
    its loggp_mgmt_address (else ansible_host), socket loggp_wire_control."""
    try:
        host = read_inventory(inventory, EMULATOR_GROUP)[0]
    except InventoryError as e:
        raise WireControlError(f"shim 'wire' needs the wire's emulator node: {e}") from None
    path = host.vars.get("loggp_wire_control")
    if not path:
        raise WireControlError(
            f"{inventory}: emulator host {host.name} has no loggp_wire_control (the wire's "
            "control socket, as the loggp_wire role runs it)"
        )
    address = str(host.vars.get("loggp_mgmt_address") or host.vars.get("ansible_host") or host.name)
    return SshWireControl(["ssh", "-o", "BatchMode=yes", *host.ssh_args()], address, str(path))
