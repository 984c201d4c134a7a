"""The runner's side of `shim: wire`: knobs on the testbed's wire before each point.

Before a point every port gets the point's whole setting (wire knobs it does not name go
to zero, so nothing of the previous point remains); what the wire then reports, and its
counters' change over the point, are stored with the point (column shim_stats).  After
the run the ports get back the settings they had before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.net.testbed import require
from loggp.net.wirectl import WireControl, WireControlError, restore_request, set_request
from loggp.plan.knobs import KnobSet
from loggp.results.lateness import LATE_BUCKETS, LATE_HIST_KEY

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


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in _COUNTERS}
    drops_a, drops_b = after.get("drops", {}), before.get("drops", {})
    out["drops"] = {k: int(v) - int(drops_b.get(k, 0)) for k, v in drops_a.items()}
    hist_a = after.get(LATE_HIST_KEY, [0] * LATE_BUCKETS)
    hist_b = before.get(LATE_HIST_KEY, [0] * LATE_BUCKETS)
    out[LATE_HIST_KEY] = [int(a) - int(b) for a, b in zip(hist_a, hist_b, strict=True)]
    # maxima since the wire started, not over the point
    out["queue_depth_max"] = after.get("queue_depth_max")
    out["late_max_ns"] = after.get("late_max_ns")
    return out


class WireSession:
    """The wire of testbed prefix for one run; TestbedError/WireControlError (one line,
    naming the testbed and what did not answer) when it is down."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._saved: list[dict[str, Any]] | None = None

    def _control(self) -> WireControl:
        return WireControl(Path(require(self.prefix).control))

    def save(self) -> None:
        """Remembers the ports' settings before the run, for restore()."""
        with self._control() as ctl:
            self._saved = list(ctl.request({"cmd": "get"})["ports"])

    def apply(self, knobs: KnobSet) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Sets knobs on every port; (the ports' settings now, their counters now)."""
        with self._control() as ctl:
            ports = list(ctl.request(set_request(knobs, full=True))["ports"])
            return ports, list(ctl.request({"cmd": "stats"})["ports"])

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
        if errors:
            raise WireControlError(f"{len(errors)} port(s) not restored: {'; '.join(errors)}")
