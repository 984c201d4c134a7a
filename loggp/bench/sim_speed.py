"""How fast `shim: smpi` simulates: simulated seconds per wall second of the stencil.

At 32, 256 and 1024 ranks by default (docs/simulator.md).

Each rank count is one smpirun of the stencil's smpicc build (--iterations, at its default
8192 cells a rank, checked by its invariants at every count: by default rank 0 recomputes
the whole field serially up to 2^22 cells, workloads/stencil/stencil.c, and that real
compute would be most of the simulated time at 32 ranks but absent at 1024) on the platform
a baseline point gets (loggp/run/smpi.py, no knob added), on a stack from a calibration
file (--calibration) or measured by loggp-calibrate as `calibration: measure` does.
SMPI's own timing (smpi/display-timing) gives the simulated time, the simulation's wall
time after parsing and platform setup, and the part of it spent in the ranks' own
computation; the whole smpirun (setting up and copying the program once a rank as well) is
timed here too.  SMPI runs every rank in one process and executes each rank's computation
for real, one after another, so the wall time grows with the ranks' total compute even
where the simulated time does not.

    loggp bench sim-speed [--ranks 32,256,1024] [--iterations 100] [--calibration FILE]

Exit status 0 when every rank count ran and was written, 1 on any error (one line).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, machine_line, parser, publish
from loggp.cli.options import add_rank_counts
from loggp.errors import LoggpError
from loggp.measure.calibrate import run_calibrate
from loggp.plan.experiment import Workload
from loggp.plan.knobs import KnobSet
from loggp.plan.platform import Stack
from loggp.results.protocol import result_line
from loggp.run.smpi import read_calibration, smpi_argv, smpi_tmpdir

NAME = "sim-speed"
SUMMARY = "simulated seconds per wall second of the stencil in SMPI at 32 to 1024 ranks"
TOOL = "loggp-bench-sim-speed"
SECTION_BEGIN = "<!-- sim-speed:begin (written by loggp bench sim-speed) -->"
SECTION_END = "<!-- sim-speed:end -->"
PROGRAM = "workloads/stencil/stencil"
PROVIDER = "tcp;ofi_rxm"  # the stack the simulator docs' examples calibrate
# SMPI's own account of a run (smpi/display-timing, SimGrid 3.32), on stdout or stderr.
TIMING = {
    "simulated_s": re.compile(r"Simulated time: ([0-9.eE+-]+) seconds"),
    "simulation_wall_s": re.compile(r"The simulation took ([0-9.eE+-]+) seconds"),
    "compute_s": re.compile(r"([0-9.eE+-]+) seconds were actual computation"),
}


class SimSpeedError(LoggpError):
    """A failure the benchmark reports as one line."""


def measure(ranks: int, iterations: int, stack: Stack, work: Path, timeout: float) -> dict:
    """One smpirun of the stencil at ranks: SMPI's timing and the whole run's wall time."""
    point = work / f"ranks-{ranks}"
    point.mkdir(parents=True, exist_ok=True)
    w = Workload(name="stencil", program=PROGRAM, ranks=ranks)
    args = ["-i", str(iterations), "-c", "invariants", "--cfg=smpi/display-timing:yes"]
    argv = smpi_argv(w, KnobSet.parse({}), stack, point, args)
    tmp = smpi_tmpdir(point)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, env=dict(os.environ, TMPDIR=str(tmp)),
            timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise SimSpeedError(f"{ranks} ranks: smpirun did not finish in {timeout:g} s") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # a copy of the program a rank
    wall = time.monotonic() - t0
    found = {k: rx.search(proc.stdout + proc.stderr) for k, rx in TIMING.items()}
    result = result_line(proc.stdout)
    if proc.returncode or result is None or not all(found.values()):
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SimSpeedError(
            f"{ranks} ranks: smpirun exited {proc.returncode} without its result or SMPI's "
            f"timing: {last}"
        )
    timing = {k: float(m.group(1)) for k, m in found.items() if m}
    return {
        "ranks": ranks,
        **timing,
        "stencil_time_s": result["metrics"]["time_s"],
        "smpirun_wall_s": wall,
        "sim_s_per_wall_s": timing["simulated_s"] / wall,
    }


def markdown(doc: dict[str, Any]) -> str:
    st = doc["stack"]
    lines = [
        SECTION_BEGIN,
        "## Simulation speed of `shim: smpi`",
        "",
        machine_line(doc["machine"]),
        f"The stencil (`-i {doc['iterations']} -c invariants`, 8192 cells a rank) in SimGrid's "
        "SMPI on a "
        f"baseline point's platform, stack {st['provider']}: o_s {st['o_s_us']:.3g} µs, o_r "
        f"{st['o_r_us']:.3g} µs, L {st['L_us']:.3g} µs, G {st['G_ns_per_B']:.3g} ns/B "
        f"(calibration: {doc['calibration']}).  Simulated: SMPI's simulated time of the whole "
        "program; smpirun: the wall time of the whole command; simulation: SMPI's own wall "
        "time after setup, of which compute is the ranks' own computation, executed for real "
        "one rank after another.",
        "",
        "| ranks | simulated s | smpirun wall s | simulated s per wall s | simulation wall s "
        "| of it compute s | stencil time_s |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in doc["runs"]:
        lines.append(
            f"| {r['ranks']} | {r['simulated_s']:.4g} | {r['smpirun_wall_s']:.3g} "
            f"| {r['sim_s_per_wall_s']:.3g} | {r['simulation_wall_s']:.3g} "
            f"| {r['compute_s']:.3g} | {r['stencil_time_s']:.4g} |"
        )
    lines += ["", SECTION_END]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-sim-speed.json")
    add_rank_counts(ap, "32,256,1024", "each one smpirun")
    ap.add_argument("--iterations", type=int, default=100, help="the stencil's -i")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per rank count")
    ap.add_argument(
        "--calibration", type=Path, help="loggp-calibrate's JSON (default: measure it now)"
    )
    a = ap.parse_args(argv)
    os.environ["LOGGP_BUILD"] = str(a.build.resolve())  # where smpi_argv finds the builds
    work = Path("results") / f"bench-sim-speed-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        info = machine()
        work.mkdir(parents=True)
        stack_file = a.calibration
        if stack_file is None:
            raw = run_calibrate(PROVIDER, None, work / "calibration", build=a.build).raw
            stack_file = work / "calibration.json"
            stack_file.write_text(json.dumps(raw, indent=2) + "\n")
        stack, _ = read_calibration(stack_file)
        runs = []
        for n in a.ranks:
            print(f"{TOOL}: {n} ranks ...", file=sys.stderr)
            runs.append(measure(n, a.iterations, stack, work, a.timeout))
        doc = {
            "tool": TOOL,
            "version": 1,
            "machine": info,
            "calibration": str(a.calibration) if a.calibration else "measure",
            "stack": stack.as_dict(),
            "iterations": a.iterations,
            "runs": runs,
        }
        publish(TOOL, doc, a, markdown(doc), SECTION_BEGIN, SECTION_END)
    except (LoggpError, OSError) as exc:
        print(f"{TOOL}: {exc}", file=sys.stderr)
        return 1
    return 0
