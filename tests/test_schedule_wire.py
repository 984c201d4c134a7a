"""Knobs over time on the wire: a schedule's step shows in a ping-pong's round trips.

Two MPI ranks over tcp;ofi_rxm on the two hosts of a namespace testbed (`loggp run`,
launcher netns, shim wire) ping-pong 8 bytes for 3 s beneath a schedule that raises the
wire's ΔL from 100 µs to 300 µs 2 s after the launch.  The runner sets each step live on
every port (the wire's control socket) and stores when it was due and when it was applied
(`step_origin_ns`, `step_at_ns`, `step_applied_ns`); the workload writes when each round
started and its round trip (-T).  A round trip crosses two egress ports, so it gains 2·ΔL;
the wall clock only bounds the fastest rounds before and after the step, which a busy host
can raise but not lower below what the wire held.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BUILD
from netns_util import loggp, running_testbed, skip_without_netns

from loggp.results.reader import read_points
from loggp.results.store import MEASURED, STORE_FILE

pytestmark = [pytest.mark.integration, pytest.mark.needs_root, pytest.mark.serial]

BEFORE_US, AFTER_US = 100, 300
STEP_S = 2
# The runner's thread sets the step; it may be late by a busy host's scheduling, not more.
APPLIED_WITHIN_S = 0.5


def test_step_in_latency_shows_in_the_round_trips(tmp_path: Path) -> None:
    skip_without_netns()
    assert (BUILD / "workloads" / "pingpong" / "pingpong").is_file(), "build wl_pingpong"
    with running_testbed(2) as tb:
        exp = tmp_path / "sched.yaml"
        exp.write_text(
            f"version: 1\nname: sched-wire\ntimeout: 60s\n"
            f"launcher: {{kind: netns, prefix: {tb.prefix}}}\n"
            "emulator:\n  shim: wire\n  provider: tcp;ofi_rxm\n  schedule:\n"
            f"    - {{t: 0s, latency: {BEFORE_US}us}}\n"
            f"    - {{t: {STEP_S}s, latency: {AFTER_US}us}}\n"
            "workloads:\n  - {name: pp, program: workloads/pingpong/pingpong, "
            "args: [-n, '100000', -t, '3', -T, '${point_dir}/rounds.txt']}\n"
        )
        out = tmp_path / "run"
        res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        # the run gave the ports back the testbed's own setting
        assert [p["latency_ns"] for p in tb.status()["ports"]] == [0, 0]
    (point,) = read_points(out / STORE_FILE)[1]
    assert point.status in MEASURED, point.row["stderr_tail"]
    ports = json.loads(point.row["shim_stats"])
    timing = {k: ports[0][k] for k in ("step_origin_ns", "step_at_ns", "step_applied_ns")}
    assert all({k: p[k] for k in timing} == timing for p in ports), ports
    assert timing["step_at_ns"] == [0, STEP_S * 10**9], timing
    applied = timing["step_applied_ns"][1]
    assert 0 <= applied - STEP_S * 10**9 < APPLIED_WITHIN_S * 1e9, timing

    trace = (out / "points" / "0" / "rounds.txt").read_text().splitlines()
    rounds = [(int(w), float(rtt)) for w, rtt in map(str.split, trace)]
    at = timing["step_origin_ns"] + applied
    before = [rtt for w, rtt in rounds if w + rtt * 1000 < at]
    after = [rtt for w, rtt in rounds if w > at]
    assert len(before) >= 20 and len(after) >= 20, (at, rounds[0], rounds[-1])
    # Never early: no round before the step is faster than the old 2·ΔL, none after faster
    # than the new; the fastest before, within half the step of the old, makes the rise at
    # least half of 2 × 200 µs.
    step = 2 * (AFTER_US - BEFORE_US)
    assert min(before) >= 2 * BEFORE_US and min(after) >= 2 * AFTER_US, (min(before), min(after))
    assert min(before) <= 2 * BEFORE_US + step / 2, (min(before), len(before))
