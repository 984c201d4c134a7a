"""Knobs over time named by the experiment file (emulator.schedule; docs/experiments.md):
steps or a trace file, checked with the shim's words and the file's line, written per point
as the shim's file with the launch as every rank's start, handed to every rank."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from loggp.errors import KnobError
from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.plan.schedule import SCHEDULE_ENV
from loggp.run.launch import point_launch, preflight

pytestmark = pytest.mark.unit

KNOBS = "overhead, send_overhead, recv_overhead, gap, latency, bulk_gap, bandwidth"
TIME_FORMS = "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms"


def _text(emulator: str, program: str = "prog") -> str:
    return (
        f"version: 1\nname: t\nemulator: {{{emulator}}}\n"
        f"workloads: [{{name: a, program: {program}, ranks: 2}}]\n"
    )


def _exp(tmp_path: Path, emulator: str):
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    return parse_experiment(_text(emulator, str(prog)), "t.yaml")


def test_steps_become_the_shims_file_with_the_launch_as_start(
    tmp_path: Path, fake_build: Path
) -> None:
    exp = _exp(
        tmp_path,
        "schedule: [{t: 0s, latency: 10us}, {t: 2s, latency: 200us, bandwidth: 1Gbit/s}]",
    )
    before = time.time_ns()
    launch = point_launch(exp, exp.workloads[0], KnobSet(), tmp_path, None)
    lines = Path(launch.env[SCHEDULE_ENV]).read_text().splitlines()
    start = int(lines[1].split()[1])
    assert lines[1] == f"start {start}" and before <= start <= time.time_ns()
    assert lines[2:] == ["0s latency 10us", "2s latency 200us", "2s bandwidth 1Gbit/s"]
    assert launch.argv[launch.argv.index(SCHEDULE_ENV) - 1] == "-x"  # to every rank


def test_a_trace_file_is_read_from_the_files_directory(tmp_path: Path, fake_build: Path) -> None:
    (tmp_path / "trace.txt").write_text("# degrade\n0s latency 5us\n\n1500ms gap 2us\n")
    exp = _exp(tmp_path, "schedule: trace.txt")
    preflight(exp, tmp_path)
    launch = point_launch(exp, exp.workloads[0], KnobSet(), tmp_path, tmp_path)
    lines = Path(launch.env[SCHEDULE_ENV]).read_text().splitlines()
    assert lines[2:] == ["0s latency 5us", "1500ms gap 2us"]


@pytest.mark.parametrize(
    ("emulator", "message"),
    [
        (
            "schedule: [{t: 2s, latency: 200us}, {t: 1s, latency: 10us}]",
            "t.yaml:3: key 'emulator.schedule': schedule[1]: time '1s' comes before the "
            "previous step's: expected times in order",
        ),
        (
            "schedule: [{t: 2s, latancy: 200us}]",
            "t.yaml:3: key 'emulator.schedule': schedule[0]: unknown knob 'latancy': "
            f"expected one of {KNOBS}",
        ),
        (
            "schedule: [{t: 2s, latency: 200}]",
            "t.yaml:3: key 'emulator.schedule': schedule[0]: bad value '200' for latency: "
            f"expected {TIME_FORMS}",
        ),
        (
            "schedule: [{t: 2, latency: 200us}]",
            f"t.yaml:3: key 'emulator.schedule': schedule[0]: bad time '2': expected {TIME_FORMS}",
        ),
        (
            "schedule: [{t: 1s, bandwidth: 1GB/s, bulk_gap: 1ns/B}]",
            "t.yaml:3: key 'emulator.schedule': schedule[0]: bulk_gap and bandwidth in one "
            "step: expected one of them",
        ),
        (
            "schedule: [{latency: 1us}]",
            "t.yaml:3: key 'emulator.schedule': schedule[0]: expected a mapping of t and the "
            f"knobs it sets, e.g. {{t: 2s, latency: 200us}} (knobs: {KNOBS})",
        ),
        (
            "shim: none, schedule: [{t: 1s, latency: 1us}]",
            "t.yaml:3: key 'emulator': schedule: applied by the fabric shim or the wire: "
            "expected shim fabric or wire, not none",
        ),
        (
            "shim: wire, schedule: [{t: 1s, latency: 1us}, {t: 2s, overhead: 1us}]",
            "t.yaml:3: key 'emulator': schedule: knob 'overhead' has no meaning on the wire "
            "(o is CPU time in the hosts): expected gap, latency, bulk_gap or bandwidth beneath "
            "shim wire",
        ),
    ],
    ids=["unordered", "knob", "unit", "time", "both", "no-time", "none", "wire-knob"],
)
def test_a_bad_schedule_is_one_line_with_its_line(emulator: str, message: str) -> None:
    with pytest.raises(ExperimentError) as e:
        parse_experiment(_text(emulator), "t.yaml")
    assert str(e.value) == message


def test_a_bad_trace_file_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "trace.txt").write_text("0s latency 5us\n1s latency five\n")
    exp = _exp(tmp_path, "schedule: trace.txt")
    with pytest.raises(KnobError) as e:
        preflight(exp, tmp_path)
    assert str(e.value) == (
        f"line 2 of the schedule '{tmp_path / 'trace.txt'}': bad value 'five' for latency: "
        f"expected {TIME_FORMS}"
    )
