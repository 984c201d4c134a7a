"""How many times a message of each size crosses the network before its receiver has it, in
the experiment's stack: measured beneath the fabric shim, for the simulated platform's
latency factor (loggp/plan/platform.py, docs/simulator.md).

A provider may carry a large message by a protocol of several messages.  tcp;ofi_rxm sends
one above its eager limit (FI_OFI_RXM_EAGER_LIMIT, 16 KiB by default) by segments or by
rendezvous, whose handshake and data are messages of the tcp provider beneath rxm, and the
shim delays each of them by ΔL: measured here, 1 crossing up to 16 KiB and 3 from 16 KiB +
1 byte to 2 MiB.  SMPI carries every message in one crossing; its latency factor by size
(smpi/lat-factor) makes up the rest.  So the crossings are measured, not assumed from one
provider's defaults: the project's pingpong, 2 ranks beneath the fabric shim with the
experiment's provider, at ΔL 0 and a large ΔL (PROBE_LATENCY_US, more for a large
message) for each size of SIZES; a size makes (growth of the least half round trip)
/ ΔL crossings, rounded, at least 1.  The least of the rounds, not their median: the shim
never releases early but can release late on a busy host (a CI run's median grew by 5 ΔL
at 1 B), and one round on time is enough to count the crossings.

A message takes the crossings of the largest measured size not above it.  The sizes are a
power of two and one byte more, because providers switch protocol above a power of two (a
message of exactly the limit takes the smaller protocol): so a switch above 2^k is placed
exactly, and one elsewhere at the next measured size.  About 35 s on 2 cores.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Sequence
from pathlib import Path

from loggp.errors import LoggpError
from loggp.plan.experiment import Experiment, Launcher, Workload
from loggp.plan.knobs import KnobSet
from loggp.results.protocol import result_line, result_metric
from loggp.run.launch import point_launch

PINGPONG = "workloads/pingpong/pingpong"
SIZES = (1, *(2**k + 1 for k in range(10, 22)))  # 1 B, then 1 KiB + 1 .. 2 MiB + 1
# ΔL of a probe: at least this, and PROBE_OVER_BASE times the size's own half round trip,
# so the run-to-run spread of a large transfer (a millisecond at 2 MiB) stays a small part
# of one crossing.
PROBE_LATENCY_US = 2000
PROBE_OVER_BASE = 4
ROUNDS = 20
TIMEOUT_S = 60.0
METRIC = "half_rtt_min_us"


class TripsError(LoggpError):
    """A probe of the stack's crossings did not give a half round trip."""

    exit_code = 2


def probe_experiment(exp: Experiment) -> Experiment:
    """The experiment's stack beneath the fabric shim on this host, without its network,
    services or schedule: what the probes run on."""
    emulator = exp.emulator.model_copy(
        update={"shim": "fabric", "calibration": None, "schedule": None,
                "latency_dist": None, "latency_corr": None, "baseline": {}}
    )  # fmt: skip
    return exp.model_copy(
        update={
            "emulator": emulator,
            "launcher": Launcher(kind="local"),
            "network": None,
            "services": [],
        }
    )


def half_rtt_us(exp: Experiment, size: int, knobs: KnobSet, point_dir: Path) -> float:
    """The least half round trip of a pingpong of size bytes beneath the shim with knobs."""
    point_dir.mkdir(parents=True, exist_ok=True)
    w = Workload(name="trips", program=PINGPONG, args=["-n", str(ROUNDS), "-s", str(size)])
    launch = point_launch(exp, w, knobs, point_dir, None)
    what = f"pingpong of {size} B beneath the shim ({knobs.label()})"
    try:
        proc = subprocess.run(
            launch.argv, env=launch.env, cwd=point_dir, capture_output=True, text=True,
            timeout=TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise TripsError(f"{what} did not finish within {TIMEOUT_S:g} s") from None
    result = result_line(proc.stdout)
    value = result_metric(result, METRIC) if result is not None else None
    if proc.returncode != 0 or value is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise TripsError(f"{what} gave no {METRIC} (exit {proc.returncode}): {tail[0]}")
    return value


def measure_trips(
    exp: Experiment, work: Path, sizes: Sequence[int] = SIZES
) -> list[tuple[int, int]]:
    """[size, crossings] from size 0 on, an entry where the crossings change (module doc),
    measured at sizes (increasing; the first stands for every size below it)."""
    fexp = probe_experiment(exp)
    trips: list[tuple[int, int]] = []
    for size in sizes:
        base = half_rtt_us(fexp, size, KnobSet(), work / f"{size}-base")
        delta_us = max(PROBE_LATENCY_US, math.ceil(PROBE_OVER_BASE * base))
        delayed = KnobSet.parse({"latency": f"{delta_us}us"})
        slow = half_rtt_us(fexp, size, delayed, work / f"{size}-latency")
        n = max(1, round((slow - base) / delta_us))
        if not trips or trips[-1][1] != n:
            trips.append((0 if not trips else size, n))
    return trips
