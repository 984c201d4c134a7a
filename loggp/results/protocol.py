"""Reading a point's outcome: the workload's result line and the shim's counters.

This module owns the result protocol (docs/results.md): the last stdout line that is a JSON
object with the key "loggp_result".  The runner finds it with `result_line` and stores it
(column `result`); readers of a stored result take its numbers through `result_metric` and
`MsgCounts`, which keep only finite numbers (non-negative whole counts for `msgs`) and read
anything else as absent.  `result_problem` holds a line to the protocol's types before the
runner believes it: the first key that breaks them, named with what is expected.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.results.lateness import LATE_BUCKETS, LATE_HIST_KEY

PROTOCOL_VERSION = 1
MAX_STATS_BYTES = 64 << 20  # a point's counter lines: ~300 bytes per process
# The histogram of delays drawn from a distribution (LOGGP_LATENCY_DIST), in buckets of
# delay_bucket_ns (emulator/core/include/lgp/stats.h).
DELAY_HIST_KEY = "delay_hist"
DELAY_BUCKETS = 128
# With a network (LOGGP_TOPOLOGY): per destination rank, messages, the latency the network
# added to them, their bytes and how much later their path let them leave
# (emulator/fabric/README.md, "Counters").
PAIR_KEYS = ("pair_msgs", "pair_latency_ns", "pair_bytes", "pair_paced_ns")
MAX_PAIR_RANKS = 1024  # LGP_TOPO_MAX_RANKS
RESULT_KEY = "loggp_result"
# The counts of `msgs` besides per_rank (docs/results.md), each a MsgCounts field.
MSG_COUNTS = (
    "total", "bytes", "critical_path", "critical_bytes", "critical_sends", "critical_recvs",
)  # fmt: skip


def result_line(stdout: str) -> dict[str, Any] | None:
    """The workload's result object, or None if it printed none."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        obj = _json(line)
        if isinstance(obj, dict) and RESULT_KEY in obj:
            return obj
    return None


def _json(line: str) -> Any:
    """A line's JSON value, or None where Python cannot hold it (not JSON, an integer of
    thousands of digits, nesting past the interpreter's recursion limit)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None


def is_number(v: Any) -> bool:
    """A finite int or float (a JSON true/false is not a number)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too large for a float
        return False


def _shown(v: Any) -> str:
    """A value as JSON for a message, cut short."""
    text = json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_time_or_rate(name: str) -> bool:
    """Metrics named as times (_s, _us) or rates (_per_s): none can be negative."""
    return name.endswith(("_s", "_us"))


def result_problem(result: dict[str, Any]) -> str | None:
    """What breaks the protocol (docs/results.md) in a result object, or None: every key
    without "(optional)" present, booleans JSON true/false, metrics finite numbers (times
    and rates not negative), counts non-negative whole numbers."""

    def wrong(key: str, expected: str) -> str:
        if key not in result:
            return f"key '{key}': missing (expected {expected})"
        return f"key '{key}': expected {expected}, got {_shown(result[key])}"

    version = result.get(RESULT_KEY)
    if type(version) is not int or version != PROTOCOL_VERSION:  # not true, not 1.0
        return wrong(RESULT_KEY, f"{PROTOCOL_VERSION} (the protocol version)")
    if not isinstance(result.get("workload"), str):
        return wrong("workload", "a string (the program's name)")
    if not isinstance(result.get("valid"), bool):
        return wrong("valid", "true or false")
    ranks = result.get("ranks")
    if not _is_count(ranks) or ranks == 0:
        return wrong("ranks", "a whole number above 0")
    metrics = result.get("metrics")
    if not isinstance(metrics, dict):
        return wrong("metrics", "an object of numbers")
    for name, v in metrics.items():
        if not is_number(v):
            return f"key 'metrics.{name}': expected a finite number, got {_shown(v)}"
        if v < 0 and _is_time_or_rate(name):
            return f"key 'metrics.{name}': expected a time or rate of 0 or more, got {_shown(v)}"
    return _msgs_problem(result.get("msgs", {}))


def _msgs_problem(msgs: Any) -> str | None:
    if not isinstance(msgs, dict):
        return f"key 'msgs': expected an object of counts, got {_shown(msgs)}"
    for name, v in msgs.items():
        if name == "per_rank":
            if not isinstance(v, list):
                return f"key 'msgs.per_rank': expected a list of whole numbers, got {_shown(v)}"
            for i, n in enumerate(v):
                if not _is_count(n):
                    return (
                        f"key 'msgs.per_rank[{i}]': expected a whole number of 0 or more, "
                        f"got {_shown(n)}"
                    )
        elif name in MSG_COUNTS and not _is_count(v):
            return f"key 'msgs.{name}': expected a whole number of 0 or more, got {_shown(v)}"
    return None


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
        return cls(**{name: _count(msgs.get(name)) for name in MSG_COUNTS})


class StatsFileError(LoggpError):
    """A statistics file that is not a regular file (a FIFO, a device)."""

    exit_code = 2


def open_stats_file(path: Path, write: bool = False) -> int:
    """path opened without blocking (a FIFO cannot hang it), to append (created) or read;
    StatsFileError naming it if it is not a regular file, OSError if it cannot be opened."""
    mode = os.O_WRONLY | os.O_APPEND | os.O_CREAT if write else os.O_RDONLY
    try:
        fd = os.open(path, mode | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as e:
        if e.errno != errno.ENXIO:  # ENXIO: a FIFO that nobody reads
            raise
        fd = -1
    if fd < 0 or not stat.S_ISREG(os.fstat(fd).st_mode):
        if fd >= 0:
            os.close(fd)
        raise StatsFileError(
            f"{path} is not a regular file (the shim appends its counters to a regular file)"
        )
    return fd


# Text in a counter line: the fabric shim's provider, the wire's `shim` and port `name`.
STATS_TEXT_KEYS = ("provider", "shim", "name")


def stats_problem(obj: dict[str, Any]) -> str | None:
    """What makes a line other than a shim's counters: the fabric shim's per process
    (emulator/core/src/stats.c) or the wire's per port for a point (loggp/run/wirerun.py):
    every value a whole number from 0 to 2^64 - 1, the STATS_TEXT_KEYS text or null, the
    wire's `loss` a probability and `drops` an object of whole numbers, `late_hist_us` a
    list of LATE_BUCKETS such numbers, `delay_hist` (if any) of DELAY_BUCKETS, the
    PAIR_KEYS (if any) of at most MAX_PAIR_RANKS."""
    for key, v in obj.items():
        want = "a whole number from 0 to 2^64 - 1"
        if key in STATS_TEXT_KEYS:
            ok, want = v is None or isinstance(v, str), "text or null"
        elif key == "loss":
            ok, want = is_number(v) and 0 <= v <= 1, "a number from 0 to 1"
        elif key == "drops":
            ok = isinstance(v, dict) and all(_is_u64(n) for n in v.values())
            want = "an object of whole numbers"
        elif key == LATE_HIST_KEY:
            ok = isinstance(v, list) and len(v) == LATE_BUCKETS and all(_is_u64(n) for n in v)
        elif key == DELAY_HIST_KEY:
            ok = isinstance(v, list) and len(v) == DELAY_BUCKETS and all(_is_u64(n) for n in v)
        elif key in PAIR_KEYS:
            ok = isinstance(v, list) and len(v) <= MAX_PAIR_RANKS and all(_is_u64(n) for n in v)
        else:
            ok = _is_u64(v)
        if not ok:
            return f"key '{key}': expected {want}, got {_shown(v)}"
    return None


def _is_u64(v: Any) -> bool:
    return _is_count(v) and v < 1 << 64


def shim_stats(
    path: Path, offset: int = 0, problems: list[str] | None = None
) -> list[dict[str, Any]]:
    """The shim's per-process counter lines (LOGGP_STATS_FILE) from byte offset on (the
    lines appended since the file had that size); [] when there are none.  At most
    MAX_STATS_BYTES are read; a line that is not the shim's (stats_problem), a file that is
    not a regular file or too large are said in problems and left out."""
    problems = [] if problems is None else problems
    try:
        fd = open_stats_file(path)
    except FileNotFoundError:
        return []
    except (OSError, StatsFileError) as e:
        problems.append(str(e) if isinstance(e, StatsFileError) else f"{path}: {e.strerror}")
        return []
    with os.fdopen(fd, "rb") as f:
        f.seek(offset)
        data = f.read(MAX_STATS_BYTES + 1)
    if len(data) > MAX_STATS_BYTES:
        problems.append(f"{path}: only its first {MAX_STATS_BYTES >> 20} MiB read")
    out: list[dict[str, Any]] = []
    bad: list[str] = []
    for n, line in enumerate(data[:MAX_STATS_BYTES].decode(errors="replace").splitlines(), 1):
        obj = _json(line)
        why = "not a JSON object" if not isinstance(obj, dict) else stats_problem(obj)
        if why is None:
            out.append(obj)
        elif line.strip():
            bad.append(f"line {n}: {why}")
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        problems.append(f"{path}: not the shim's counters, left out: {bad[0]}{more}")
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
