"""Reading a point's outcome: the workload's result line and the shim's counters.

The result protocol is documented in docs/results.md: the last stdout line that is a JSON
object with the key "loggp_result".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = 1


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
        if isinstance(obj, dict) and "loggp_result" in obj:
            return obj
    return None


def shim_stats(path: Path) -> list[dict[str, Any]]:
    """The shim's per-process counter lines (LOGGP_STATS_FILE); [] when there are none."""
    try:
        text = path.read_text()
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
