"""A network level's latency swept through `loggp run`: each point's own pair table.

Two ranks on two racks (nodes 0 and 2 of two racks of two nodes) ping-pong beneath the
fabric shim over tcp;ofi_rxm; the file gives the rack 50 µs and the sweep 20 µs and 100 µs.
What each point's messages got is read from the shim's counters stored with the point
(`pair_msgs`, `pair_latency_ns`), exactly, not from the wall clock; the report draws the
knob's curve.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BUILD, base_env

from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE
from loggp.tests.cli import loggp

pytestmark = [pytest.mark.integration, pytest.mark.serial]

ROUNDS = 200
FILE_US = 50
SWEPT_US = (20, 100)
KNOB = "network.rack.latency"


def test_each_point_gets_its_own_rack_latency(
    mpirun_bin: str, tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    exp = tmp_path / "racks.yaml"
    exp.write_text(
        "version: 1\nname: racks\ntimeout: 60s\n"
        "launcher: {kind: mpirun}\n"
        "emulator: {shim: fabric, provider: tcp;ofi_rxm}\n"
        "network:\n  nodes: 4\n  placement: [0, 2]\n  levels:\n"
        f"    - {{name: node}}\n    - {{name: rack, size: 2, latency: {FILE_US}us}}\n"
        f"sweep: {{knobs: {{{KNOB}: [{', '.join(f'{v}us' for v in SWEPT_US)}]}}}}\n"
        "workloads:\n"
        f"  - {{name: pp, program: workloads/pingpong/pingpong, args: [-n, '{ROUNDS}']}}\n"
    )
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus",
                env_extra={**base_env(), **lock_dir, "LOGGP_BUILD": str(BUILD)},
                timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr

    points = {p.point_id: p for p in read_points(out / STORE_FILE)[1]}
    want = {"pp/baseline/r0": FILE_US} | {f"pp/{KNOB}={v}us/r0": v for v in SWEPT_US}
    assert sorted(points) == sorted(want)
    for pid, us in want.items():
        p = points[pid]
        assert p.status in MEASURED, p.row["stderr_tail"]
        assert p.knob_values == {KNOB: float(us)}, p.knob_values
        if p.sweep_knob == KNOB:
            assert p.sweep_value == float(us)
        stats = json.loads(p.row["shim_stats"])
        ranks = {int(s["rank"]): s for s in stats if s.get("provider") == "tcp"}
        assert sorted(ranks) == [0, 1], stats
        for src, dst in ((0, 1), (1, 0)):
            line = ranks[src]
            msgs, added = int(line["pair_msgs"][dst]), int(line["pair_latency_ns"][dst])
            # every message across the racks, the ping-pong's and MPI's own, got the
            # point's latency and nothing else
            assert msgs >= ROUNDS and added == msgs * us * 1000, (pid, line)
            assert int(line["pair_unmatched"]) == 0, (pid, line)

    report = out / "report"
    assert (report / "slowdown_network_rack_latency.png").stat().st_size > 0
    assert f"<code>{KNOB}</code>" in (report / "index.html").read_text()
    assert (report / "pairs_pp.png").stat().st_size > 0  # the pairs' heatmap, from the counters
