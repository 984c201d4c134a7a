"""loggp run end to end: a tiny suite through the real shim with mpirun, then its report."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUILD, base_env

from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE

pytestmark = [pytest.mark.integration, pytest.mark.serial]

ROUNDS = 200
LATENCY_US = 200


def test_tiny_suite_through_the_shim(mpirun_bin: str, tmp_path: Path) -> None:
    exp = tmp_path / "tiny.yaml"
    exp.write_text(
        "version: 1\nname: tiny\nrepeats: 1\ntimeout: 60s\n"
        "launcher: {kind: mpirun}\n"
        "emulator: {shim: fabric, provider: tcp;ofi_rxm}\n"
        f"sweep: {{knobs: {{latency: [{LATENCY_US}us]}}}}\n"
        "workloads:\n"
        f"  - {{name: pp, program: workloads/pingpong/pingpong, args: [-n, '{ROUNDS}']}}\n"
    )
    out = tmp_path / "run"
    env = base_env()
    env["LOGGP_BUILD"] = str(BUILD)
    res = subprocess.run(
        [sys.executable, "-m", "loggp", "run", str(exp), "--out", str(out), "--no-prometheus"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr

    rows = {p.point_id: p.row for p in read_points(out / STORE_FILE)[1]}
    base, slow = rows["pp/baseline/r0"], rows[f"pp/latency={LATENCY_US}us/r0"]
    # nothing delayed: judged by the other work on the host alone
    assert base["status"] == "ok" or "busy with other work (above" in base["degraded_reason"], base
    # measured; degraded when the shim released late on a busy machine (tests/test_degraded.py)
    assert slow["status"] in MEASURED, slow["stderr_tail"]
    for r in (base, slow):
        assert r["msgs_check"] == "match", r
        stats = json.loads(r["shim_stats"])
        assert any(s.get("provider") == "tcp" and int(s["msgs"]) >= ROUNDS for s in stats)
    # Every one of the 2·ROUNDS legs waits ΔL: at least half of that must show.
    added = slow["value"] - base["value"]
    assert added >= 0.5 * 2 * ROUNDS * LATENCY_US * 1e-6, (base["value"], slow["value"])
    latency_ns = sum(int(s["latency_ns"]) for s in json.loads(slow["shim_stats"]))
    assert latency_ns >= 2 * ROUNDS * LATENCY_US * 1000

    report = out / "report"
    assert (report / "slowdown_latency.png").stat().st_size > 0
    html = (report / "index.html").read_text()
    assert "pp" in html and "tiny" in html
    with (report / "results.csv").open() as f:
        by_id = {r["point_id"]: r for r in csv.DictReader(f)}
    assert float(by_id[f"pp/latency={LATENCY_US}us/r0"]["slowdown"]) > 1.0
