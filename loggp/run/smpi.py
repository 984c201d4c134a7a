"""The runner's side of `emulator: {shim: smpi}`: the MPI workloads simulated by SimGrid's
SMPI on a platform made of the stack's own LogGP parameters plus the point's knobs
(loggp/plan/platform.py, docs/simulator.md).

The stack's parameters come from loggp-calibrate of the experiment's provider without the
shim, measured once when the run starts (`calibration: measure`, the default, with the
trips a message of each size makes, loggp/run/trips.py) or read from a previous
calibration's file (its trips if it gives them, else one trip at every size): the tool's
own JSON (`loggp-calibrate -j`) or `loggp calibrate --json`'s comparison, whose unshimmed
run is taken.  Either is stored with the run (CALIBRATION_FILE, and run.json's
provenance.smpi), and --resume reads it back, so every point of a run is simulated on one
stack.

Each point runs `smpirun -np N` of the workload's smpicc build (build/smpi/<the program's
path in the build>) with a hostfile of N hosts, the platform file and the SMPI settings in
the point's directory, and TMPDIR there too (SMPI copies the program per rank into it;
smpirun's own -tmpdir is broken in SimGrid 3.32).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loggp.errors import LoggpError
from loggp.measure.calibrate import CalibrateReport, run_calibrate
from loggp.plan.experiment import Experiment, Workload
from loggp.plan.knobs import KnobSet
from loggp.plan.platform import Platform, PlatformError, Stack, hostfile
from loggp.plan.topology import Network
from loggp.run.shim import build_dir

CALIBRATION_FILE = "calibration.json"  # in the run directory: the stack every point used
MEASURE = "measure"
SMPI_DIR = "smpi"  # in the build directory: the smpicc builds (workloads/CMakeLists.txt)
# SimGrid's notices of each setting it took; its warnings and errors stay.
_QUIET = "--log=xbt_cfg.thres:warning"


class SmpiError(LoggpError):
    """A simulated point cannot run here (no smpirun, no smpicc build, no calibration)."""

    exit_code = 2


def smpirun() -> str:
    path = shutil.which("smpirun")
    if not path:
        raise SmpiError("smpirun not found: install Debian's libsimgrid-dev (make deps does)")
    return path


def simulated_program(program: str) -> Path:
    """The smpicc build of a workload program: build/smpi/PROGRAM for a program named
    relative to the build directory (workloads/pingpong/pingpong), or the same path below
    build/smpi for one named by its absolute path in the build."""
    build = build_dir()
    given = Path(program)
    rel = given if not given.is_absolute() else None
    if rel is None and given.resolve().is_relative_to(build):
        rel = given.resolve().relative_to(build)
    built = build / SMPI_DIR / rel if rel is not None else None
    if built is None or not built.is_file():
        missing = f" ({built} missing)" if built is not None else ""
        raise SmpiError(
            f"program {program} has no SMPI build{missing}: shim smpi runs the MPI "
            "workloads that cmake -DLOGGP_SMPI=ON builds with smpicc into build/smpi/ "
            "(docs/simulator.md)"
        )
    return built


def read_calibration(path: Path) -> tuple[Stack, dict[str, Any]]:
    """The stack of a calibration file: loggp-calibrate's JSON, or `loggp calibrate
    --json`'s (its unshimmed run); (stack, the tool's report as stored)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SmpiError(f"calibration file {path}: cannot read: {e}") from None
    if isinstance(doc, dict) and doc.get("kind") == "loggp-calibrate-comparison":
        doc = doc.get("unshimmed")
    try:
        return stack_of(CalibrateReport.model_validate(doc)), doc
    except ValidationError as e:
        first = str(e).splitlines()[0]
        raise SmpiError(
            f"calibration file {path}: not loggp-calibrate's JSON ({first}): expected the "
            "file of loggp-calibrate -j or of loggp calibrate --json"
        ) from None


def stack_of(report: CalibrateReport) -> Stack:
    """The stack of a calibration: its medians, with o_s + L + o_r its half round trip.
    loggp-calibrate's L is the half round trip less both overheads, below 0 where the
    overheads overlap the wire's time (on loopback tcp −1 to −5 µs).  A simulated link
    cannot be faster than instant, so there L is 0 and both overheads shrink by one factor
    until their sum is the half round trip: taking L as 0 and the overheads whole made a
    simulated ping-pong's baseline 17 % slower than the emulated one's, and every slowdown
    of a latency-bound program too small by as much (docs/simulator.md)."""
    r = report.results
    o_s, o_r, latency = r.o_s_us.median * 1000, r.o_r_us.median * 1000, r.L_us.median * 1000
    if latency < 0:
        half_rtt = o_s + o_r + latency
        if half_rtt <= 0:
            raise SmpiError(
                f"calibration of {report.provider}: o_s {o_s / 1000:g} µs + o_r "
                f"{o_r / 1000:g} µs + L {latency / 1000:g} µs is no half round trip: "
                "expected a sum above 0 (measure again on a quiet host)"
            )
        shrink = half_rtt / (o_s + o_r)
        o_s, o_r, latency = o_s * shrink, o_r * shrink, 0.0
    try:
        return Stack(
            o_s_ns=o_s,
            o_r_ns=o_r,
            latency_ns=latency,
            bulk_gap_ns_per_byte=r.G_ns_per_B.value,
            provider=report.provider,
            trips=tuple((size, t) for size, t in report.trips or ()),
        )
    except PlatformError as e:
        raise SmpiError(f"calibration of {report.provider}: {e}") from None


def calibration_source(exp: Experiment, exp_dir: Path | None) -> Path | None:
    """The file emulator.calibration names, or None to measure."""
    given = exp.emulator.calibration or MEASURE
    if given == MEASURE:
        return None
    path = Path(given)
    return path if path.is_absolute() else (exp_dir or Path.cwd()) / path


def run_stack(
    exp: Experiment,
    run_dir: Path,
    exp_dir: Path | None,
    measure_trips: Callable[[Path], list[tuple[int, int]]] | None = None,
) -> tuple[Stack, dict]:
    """The stack the run's points are simulated on: the one stored with the run, else
    measured or read now and stored; (stack, provenance entry).  A measured stack gets
    its trips by size from measure_trips (loggp/run/trips.py) given a scratch directory."""
    stored = run_dir / CALIBRATION_FILE
    source = calibration_source(exp, exp_dir)
    if stored.is_file():
        stack, _ = read_calibration(stored)
    elif source is None:
        work = run_dir / "calibration"
        report = run_calibrate(exp.emulator.provider, None, work).raw
        if measure_trips is not None:
            report["trips"] = measure_trips(work / "trips")
        stored.write_text(json.dumps(report, indent=2) + "\n")
        shutil.rmtree(work, ignore_errors=True)
        stack, _ = read_calibration(stored)
    else:
        stack, report = read_calibration(source)
        stored.write_text(json.dumps(report, indent=2) + "\n")
    origin = MEASURE if source is None else str(source)
    measured = json.loads(stored.read_text())["results"]
    return stack, {
        "calibration": origin,
        "file": CALIBRATION_FILE,
        "stack": stack.as_dict(),
        "measured_L_us": measured["L_us"]["median"],
    }


def smpi_argv(
    w: Workload,
    knobs: KnobSet,
    stack: Stack,
    point_dir: Path,
    args: list[str],
    network: Network | None = None,
) -> list[str]:
    """smpirun's command line for one point, on the point's network if any; the platform,
    hostfile and SMPI settings are written into point_dir (platform.xml, hostfile,
    platform.json)."""
    try:
        platform = Platform.of(stack, knobs)
    except PlatformError as e:
        raise SmpiError(str(e)) from None
    xml = point_dir / "platform.xml"
    xml.write_text(platform.xml(w.ranks, network))
    hosts = point_dir / "hostfile"
    hosts.write_text(hostfile(w.ranks))
    (point_dir / "platform.json").write_text(json.dumps(platform.as_dict(), indent=2) + "\n")
    return [
        smpirun(), "-np", str(w.ranks), "-platform", str(xml.resolve()),
        "-hostfile", str(hosts.resolve()), str(simulated_program(w.program)),
        *platform.config(), _QUIET, *args,
    ]  # fmt: skip


def smpi_tmpdir(point_dir: Path) -> Path:
    tmp = point_dir / "smpi-tmp"
    tmp.mkdir(exist_ok=True)
    return tmp.resolve()
