"""The host's own stalls of a busy thread, and the lateness floor they set (loggp-hostnoise).

A thread that spins reading the clock is stopped now and then by the host itself: timer
ticks, interrupts, on a virtual machine the hypervisor.  A release due at such a moment is
late by the rest of the stall however well the shim does, so the stalls set a floor under
the p99 lateness any point can show here (emulator/calibrate/README.md, "Host noise").  The
runner measures it with every CPU spinning as ranks that fill the cores do: once before its
points (PROBE_S, kept in run.json), and right after each point whose lateness crossed its
bound (BESIDE_S, stored with the point), since the host's stops change with what else runs
on it; a point whose p99 the floor beside it explains is clean (loggp/results/judge.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.results.lateness import time_text
from loggp.run.proc import run_capture
from loggp.run.shim import hostnoise_binary

PROBE_S = 0.3  # long enough for a few hundred ticks per CPU, short beside a run
BESIDE_S = 0.2  # beside one point: a hundred ticks or more per CPU, short beside a point
QUANTILE = 0.99  # the judge's (loggp/results/judge.py)


@dataclass(frozen=True)
class HostNoise:
    """One measurement: the worst CPU's figures."""

    floor_ns: int  # the QUANTILE of a perfect release's lateness on this host
    stalls_per_s: float  # stops of over 1 us per second
    stalled_share: float  # share of the time stopped
    max_stall_ns: int

    def text(self) -> str:
        return (
            f"host stops a busy thread {self.stalls_per_s:.0f} times/s, "
            f"{100 * self.stalled_share:.2g} % of its time (longest "
            f"{time_text(self.max_stall_ns)}): p99 lateness floor {time_text(self.floor_ns)}"
        )

    @classmethod
    def of(cls, d: dict[str, Any]) -> HostNoise | None:
        """From run.json's form (as_dict's), None for one that was not measured or is
        malformed."""
        try:
            return cls(
                floor_ns=int(d["floor_ns"]),
                stalls_per_s=float(d["stalls_per_s"]),
                stalled_share=float(d["stalled_share"]),
                max_stall_ns=int(d["max_stall_ns"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "floor_ns": self.floor_ns,
            "stalls_per_s": self.stalls_per_s,
            "stalled_share": self.stalled_share,
            "max_stall_ns": self.max_stall_ns,
        }


def parse(line: str) -> HostNoise:
    """HostNoise from loggp-hostnoise's JSON line; ValueError if it is not one."""
    doc = json.loads(line)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    cpus = doc.get("cpus")
    if doc.get("tool") != "loggp-hostnoise" or not isinstance(cpus, list) or not cpus:
        raise ValueError("not a loggp-hostnoise line with CPUs")
    worst = {k: max(c[k] for c in cpus) for k in ("stalls_per_s", "stalled_share", "max_stall_ns")}
    noise = HostNoise.of({"floor_ns": doc.get("floor_ns"), **worst})
    if noise is None:
        raise ValueError("a loggp-hostnoise line without its figures")
    return noise


def describe(d: dict[str, Any]) -> str:
    """One of run.json's `host_noise` entries in words."""
    noise = HostNoise.of(d)
    return "not measured" if noise is None else noise.text()


def measure_host_noise(build: Path | None = None, seconds: float = PROBE_S) -> HostNoise | None:
    """The host's noise now, with every CPU spinning for seconds; None when the probe is not
    built or fails (the run then says the floor was not measured)."""
    try:
        exe = hostnoise_binary(build)
    except LoggpError:
        return None
    out = run_capture([str(exe), "-t", f"{seconds:g}", "-q", f"{QUANTILE:g}"], seconds + 10)
    if not out:
        return None
    try:
        return parse(out.splitlines()[-1])
    except (ValueError, KeyError, TypeError):
        return None
