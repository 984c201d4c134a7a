"""The host noise probe's line read back, and the runner's view of a missing or failing probe
(the probe itself: emulator/calibrate/tests, and test_degraded.py beneath a real run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loggp.metrics.hostnoise import HostNoise, measure_host_noise, parse

pytestmark = pytest.mark.unit


def probe_line(floors: list[int]) -> str:
    cpus = [
        {
            "cpu": i,
            "span_ns": 300_000_000,
            "stalls": 300,
            "stalls_per_s": 1000.0 + i,
            "stalled_share": 0.01 * (i + 1),
            "max_stall_ns": 5000 * (i + 1),
            "floor_ns": f,
        }
        for i, f in enumerate(floors)
    ]
    return json.dumps(
        {"tool": "loggp-hostnoise", "version": 1, "cpus": cpus, "floor_ns": max(floors)}
    )


def test_the_worst_cpu_speaks_for_the_host() -> None:
    noise = parse(probe_line([800, 3200]))
    assert noise == HostNoise(
        floor_ns=3200, stalls_per_s=1001.0, stalled_share=0.02, max_stall_ns=10_000
    )
    assert noise.text() == (
        "host stops a busy thread 1001 times/s, 2 % of its time (longest 10 us): "
        "p99 lateness floor 3.2 us"
    )
    assert noise.as_dict()["floor_ns"] == 3200


@pytest.mark.parametrize(
    "line",
    ['{"tool": "other", "cpus": [{}]}', '{"tool": "loggp-hostnoise", "cpus": []}', "[1]", "x"],
)
def test_anything_else_is_refused(line: str) -> None:
    with pytest.raises(ValueError):
        parse(line)


def fake_probe(build: Path, script: str) -> None:
    exe = build / "emulator" / "calibrate" / "loggp-hostnoise"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(0o755)


def test_measure_runs_the_built_probe(tmp_path: Path) -> None:
    fake_probe(tmp_path, f"echo '{probe_line([1500])}'")
    noise = measure_host_noise(tmp_path, seconds=0.01)
    assert noise is not None and noise.floor_ns == 1500


@pytest.mark.parametrize("script", [None, "exit 1", "echo not-json"])
def test_a_missing_or_failing_probe_is_not_measured(tmp_path: Path, script: str | None) -> None:
    if script is not None:
        fake_probe(tmp_path, script)
    assert measure_host_noise(tmp_path, seconds=0.01) is None
