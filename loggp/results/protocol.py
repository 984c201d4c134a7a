"""Reading a point's outcome: the workload's result line and the shim's counters.

This module owns the result protocol (docs/results.md): the last stdout line that is a JSON
object with the key "loggp_result".  The runner finds it with `result_line` and stores it
(column `result`); readers of a stored result take its numbers through `result_metric` and
`MsgCounts`, which keep only finite numbers (non-negative whole counts for `msgs`) and read
anything else as absent.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = 1
RESULT_KEY = "loggp_result"


def result_line(stdout: str) -> dict[str, Any] | None:
    """The workload's result object, or None if it printed none."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and RESULT_KEY in obj:
            return obj
    return None


def is_number(v: Any) -> bool:
    """A finite int or float (a JSON true/false is not a number)."""
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v)


def result_metric(result: dict[str, Any], name: str) -> float | None:
    """A number from the result's `metrics` object, if present."""
    metrics = result.get("metrics")
    if not isinstance(metrics, dict):
        return None
    v = metrics.get(name)
    return float(v) if is_number(v) else None


def _count(value: Any) -> int | None:
    return int(value) if is_number(value) and value >= 0 else None


@dataclass(frozen=True)
class MsgCounts:
    """The `msgs` object of a workload's result; None where the program did not report it."""

    total: int | None = None
    bytes: int | None = None
    critical_path: int | None = None
    critical_bytes: int | None = None
    critical_sends: int | None = None
    critical_recvs: int | None = None

    @property
    def send_count(self) -> int | None:
        """S: sends on the critical path, each paying o_s (default: critical_path)."""
        return self.critical_sends if self.critical_sends is not None else self.critical_path

    @property
    def recv_count(self) -> int | None:
        """R: receives on the critical path, each paying o_r (default: critical_path)."""
        return self.critical_recvs if self.critical_recvs is not None else self.critical_path

    @property
    def overhead_count(self) -> int | None:
        """S + R: the overheads on the critical path when Δo applies to both sides."""
        s, r = self.send_count, self.recv_count
        return None if s is None or r is None else s + r

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> MsgCounts:
        msgs = result.get("msgs")
        if not isinstance(msgs, dict):
            return cls()
        return cls(
            total=_count(msgs.get("total")),
            bytes=_count(msgs.get("bytes")),
            critical_path=_count(msgs.get("critical_path")),
            critical_bytes=_count(msgs.get("critical_bytes")),
            critical_sends=_count(msgs.get("critical_sends")),
            critical_recvs=_count(msgs.get("critical_recvs")),
        )


def shim_stats(path: Path, offset: int = 0) -> list[dict[str, Any]]:
    """The shim's per-process counter lines (LOGGP_STATS_FILE) from byte offset on (the
    lines appended since the file had that size); [] when there are none."""
    try:
        text = path.read_bytes()[offset:].decode(errors="replace")
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def core_messages(stats: list[dict[str, Any]]) -> int:
    """Messages the core providers carried (utility layers ofi_* pass through uncounted)."""
    return sum(
        int(s.get("msgs", 0)) for s in stats if not str(s.get("provider", "")).startswith("ofi_")
    )


def messages_check(result: dict[str, Any], stats: list[dict[str, Any]], shim: bool) -> str | None:
    """Whether the shim carried at least the messages the workload says it sent.

    MPI and the utility providers add messages of their own (rendezvous, acks, wire-up), so
    the shim's count may exceed the workload's, never fall short of it: a shortfall means
    traffic bypassed the shim (another transport), and is flagged.
    """
    msgs = result.get("msgs")
    if not shim or not isinstance(msgs, dict) or not isinstance(msgs.get("total"), int):
        return None
    carried = core_messages(stats)
    if carried >= msgs["total"]:
        return "match"
    return f"mismatch: the shim carried {carried} messages, the workload sent {msgs['total']}"
