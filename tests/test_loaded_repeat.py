"""One repeat taken beside busy loops: the report gives the quiet repeat's slowdown and marks
the loaded one (loggp/analysis/outliers.py), rather than pooling them into a curve that says
nothing (a loaded baseline once turned slowdowns of ×2.3 to ×11.6 into ×0.55 to ×1.9).

Repeat 0 of a small ping-pong runs with a busy loop pinned to every CPU of the host, repeat
1 without: the loops stop while repeat 1 warms up (the experiment's warm-up run, which is
discarded).  The loaded points are stored degraded by the other work during them
(loggp/results/judge.py); the quiet ones are clean when the host was otherwise quiet, and
the test skips, saying why, when it was not (another program busy during repeat 1).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import BUILD, base_env

from loggp.analysis.report import write_report
from loggp.analysis.slowdown import analyse
from loggp.results.reader import StoredPoint, read_points
from loggp.results.store import STORE_FILE, StoreError

pytestmark = [pytest.mark.integration, pytest.mark.serial]

ROUNDS = 300
OVERHEAD_US = 20
POINTS_PER_REPEAT = 2  # the baseline and Δo
STORED_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 120.0
POLL_S = 0.02  # how often the store is read while repeat 0 runs
BASE, SWEPT = "pp/baseline", f"pp/overhead={OVERHEAD_US}us"


def experiment(tmp: Path) -> Path:
    exp = tmp / "loaded.yaml"
    exp.write_text(
        "version: 1\nname: loaded\nrepeats: 2\nwarmup: 1\ntimeout: 60s\n"
        "launcher: {kind: mpirun}\n"
        "emulator: {shim: fabric, provider: tcp;ofi_rxm}\n"
        f"sweep: {{knobs: {{overhead: [{OVERHEAD_US}us]}}}}\n"
        "workloads:\n"
        f"  - {{name: pp, program: workloads/pingpong/pingpong, args: [-n, '{ROUNDS}']}}\n"
    )
    return exp


@contextmanager
def busy_loops() -> Iterator[list[subprocess.Popen[bytes]]]:
    """A Python busy loop pinned to each CPU this process may run on."""
    spin = "while True: pass"
    hogs = [
        subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c", spin])
        for cpu in sorted(os.sched_getaffinity(0))
    ]
    try:
        yield hogs
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def stored(db: Path) -> tuple[StoredPoint, ...]:
    try:
        return read_points(db)[1]
    except StoreError:
        return ()  # not created yet, or no point yet


def wait_stored(db: Path, n: int, run: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + STORED_TIMEOUT_S
    while len(stored(db)) < n:
        assert run.poll() is None, f"loggp run ended (exit {run.returncode}) before repeat 1"
        assert time.monotonic() < deadline, f"repeat 0's {n} points not stored in time"
        time.sleep(POLL_S)


def test_a_loaded_repeat_is_marked_and_the_quiet_ones_slowdown_reported(
    mpirun_bin: str, tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    out = tmp_path / "run"
    env = {**base_env(), "LOGGP_BUILD": str(BUILD), **lock_dir}
    argv = [sys.executable, "-m", "loggp", "run", str(experiment(tmp_path)), "--out", str(out)]
    with busy_loops():
        run = subprocess.Popen(
            [*argv, "--no-prometheus", "--no-report"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_stored(out / STORE_FILE, POINTS_PER_REPEAT, run)
        except BaseException:
            run.kill()
            run.communicate()
            raise
    try:
        printed, _ = run.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        run.kill()
        printed, _ = run.communicate()
        pytest.fail(f"loggp run did not finish in {RUN_TIMEOUT_S:g} s:\n{printed}")
    assert run.returncode == 0, printed

    points = {p.point_id: p for p in read_points(out / STORE_FILE)[1]}
    for pid in (f"{BASE}/r0", f"{SWEPT}/r0"):
        p = points[pid]
        assert p.degraded and "busy with other work (above" in p.degraded_reason, (pid, p.row)
    quiet = [points[f"{BASE}/r1"], points[f"{SWEPT}/r1"]]
    if not all(p.ok for p in quiet):
        pytest.skip(
            "the host was busy during the quiet repeat too: "
            + "; ".join(f"{p.point_id}: {p.degraded_reason or p.status}" for p in quiet)
        )

    a = analyse(points.values())
    assert a.baselines["pp"].point_ids == (f"{BASE}/r1",)
    (cp,) = [cp for cp in a.knob("overhead").curves[0].points if not cp.baseline]
    assert cp.point_ids == (f"{SWEPT}/r1",) and cp.outliers == (f"{SWEPT}/r0",)
    base_v, swept_v = quiet[0].value, quiet[1].value
    assert cp.stat.median == pytest.approx(swept_v / base_v)
    assert cp.stat.median > 1.0  # Δo = 20 µs on every send and receive of the path
    assert {o.point.point_id for o in a.outliers} == {f"{BASE}/r0", f"{SWEPT}/r0"}

    html = write_report(out).read_text()
    section = html.split('<h2 id="outliers">')[1].split("<h2")[0]
    assert f"{BASE}/r0" in section and f"{SWEPT}/r0" in section
    assert f"{BASE}/r1" not in section and "busy with other work" in section
