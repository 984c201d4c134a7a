"""Monotone slowdown: every service workload over libfabric, at 2 ranks, is never measured
faster under a larger ΔL than under a smaller one beyond the repeats' spread.

Runs workloads/suites/monotone.yaml (KAP, pfsio, combining BFS, CC and stack, rootio
beneath the prefetcher, coll_perf beneath collio; ΔL 0, 1, 10, 100 µs, 3 repeats) with
`loggp run` and judges it with the report's own check (loggp/analysis/monotone.py).  Without
FUSE the two workloads that use the store's mount are left out and the test says so.
An inversion against the baseline (ΔL = 0) is a warning naming its known cause
(BASELINE_INVERSION_CAUSE), not a failure; one between two points beneath active knobs fails
when a second measurement confirms it.

Why a second measurement: the check calls two points inverted when their spreads do not
overlap, and the ranges of 3 and 3 repeats drawn from one distribution fail to overlap one
way round with probability (3!)²/6! = 1/20.  Where two ΔL differ by less than the run's
noise (KAP's commits at ΔL 1 and 10 µs differ by ~9 ms in a ~80 ms run whose repeats span
±25 % on a 2-core VM, from scheduling tails), about 1 suite run in 20 flagged a pair no
workload's waiting caused.  So a flagged pair is measured again, that workload alone at its
two settings with CONFIRM_REPEATS repeats (a false alarm then again has probability
(7!)²/14! ≈ 1/3400), and only an inversion both measurements show fails; a service whose own
idle wait inverts its curve does so every time.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
import yaml
from conftest import BUILD

from loggp.analysis.monotone import Inversion, inversions
from loggp.analysis.slowdown import CurvePoint, analyse
from loggp.analysis.store import load_run
from loggp.tests.cli import loggp

# Serial: it compares times, and a neighbour's load that comes and goes between points
# would be compared with them.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.serial]

SUITE = Path(__file__).resolve().parent.parent / "workloads" / "suites" / "monotone.yaml"
RUN_TIMEOUT = 900.0
CONFIRM_REPEATS = 7
# Why a baseline can measure slower than a point beneath active knobs on a 2-core VM, not
# yet fixed: threads that block between messages (the prefetcher's advisor and a read
# waiting for its block, a combining rank or a KVS broker past its spin) pay a halted
# vCPU's wake-up at knobs 0, while beneath active knobs the shim's progress thread spins
# out every delay under 20 µs and keeps the vCPUs from halting.  Seen: rootio 5-10 %
# slower at the baseline than at ΔL 1-10 µs in every repeat; BFS up to 2x and KAP up to
# 1.9x in some runs.
BASELINE_INVERSION_CAUSE = (
    "known on 2-core VMs: at knobs 0 threads blocked between messages pay a halted vCPU's "
    "wake-up that the shim's spinning progress thread spares the points beneath active knobs"
)


def suite_here(tmp_path: Path) -> tuple[Path, list[str]]:
    """The suite, less the workloads that need the store's mount where FUSE is missing."""
    exp = yaml.safe_load(SUITE.read_text())
    left_out: list[str] = []
    if not (Path("/dev/fuse").exists() and shutil.which("fusermount3")):
        keep = [w for w in exp["workloads"] if "mnt" not in w.get("services", [])]
        left_out = [w["name"] for w in exp["workloads"] if w not in keep]
        exp["workloads"] = keep
    path = tmp_path / "monotone.yaml"
    path.write_text(yaml.safe_dump(exp, sort_keys=False))
    return path, left_out


def measure(exp: Path, out: Path, state: Path) -> list[Inversion]:
    """`loggp run` of the experiment; every inversion its report's check finds."""
    proc = loggp(
        "run", str(exp), "--out", str(out), "--no-prometheus",
        env_extra={"LOGGP_BUILD": str(BUILD), "LOGGP_RUN_DIR": str(state)},
        cwd=SUITE.parent.parent.parent,
        timeout=RUN_TIMEOUT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    points = load_run(out).points
    unmeasured = [p.point_id for p in points if not p.measured]
    assert not unmeasured, unmeasured
    return inversions(analyse(points))


def setting(cp: CurvePoint) -> str:
    """The sweep value a curve point was measured at ("10us" of "kap/latency=10us/r0")."""
    return cp.point_ids[0].split("/")[1].split("=", 1)[1]


def confirmed(tmp_path: Path, exp_path: Path, inv: Inversion) -> bool:
    """Whether the pair's workload, measured again alone at the pair's two settings with
    CONFIRM_REPEATS repeats, is again faster at the worse one."""
    exp = yaml.safe_load(exp_path.read_text())
    exp["workloads"] = [w for w in exp["workloads"] if w["name"] == inv.workload]
    exp["repeats"] = CONFIRM_REPEATS
    exp["sweep"]["knobs"] = {inv.knob: [setting(inv.better), setting(inv.worse)]}
    where = tmp_path / f"confirm-{inv.workload}-{setting(inv.better)}-{setting(inv.worse)}"
    where.mkdir()
    again = where / "experiment.yaml"
    again.write_text(yaml.safe_dump(exp, sort_keys=False))
    return any(
        (i.workload, i.knob, i.better.x, i.worse.x)
        == (inv.workload, inv.knob, inv.better.x, inv.worse.x)
        for i in measure(again, where / "run", where / "state")
    )


def test_no_service_workload_is_faster_under_added_latency(tmp_path: Path) -> None:
    exp, left_out = suite_here(tmp_path)
    found = measure(exp, tmp_path / "run", tmp_path / "state")
    known = [i for i in found if i.better.baseline]
    for inv in known:
        warnings.warn(f"{inv.text()}: {BASELINE_INVERSION_CAUSE}", stacklevel=1)
    failing = []
    for inv in found:
        if inv in known:
            continue
        if confirmed(tmp_path, exp, inv):
            failing.append(inv.text())
        else:
            again = f"not seen again in {CONFIRM_REPEATS} repeats"
            warnings.warn(f"{inv.text()}: {again}", stacklevel=1)
    assert not failing, "\n".join(failing)
    if left_out:
        pytest.skip(f"judged without {', '.join(left_out)}: FUSE is not available here")
