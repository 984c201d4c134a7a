"""`loggp run` with a scripted workload: stored results, failures, interruption and resume."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from loggp.results.reader import read_points
from loggp.results.store import STORE_FILE
from loggp.run.runlock import RunLock
from loggp.tests.cli import judged_ok, loggp

pytestmark = pytest.mark.unit

FAKE = Path(__file__).with_name("fake_workload.py")


def write_experiment(tmp: Path, repeats: int = 2, extra: str = "") -> Path:
    prog = tmp / "fake-workload"
    cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))}"
    prog.write_text(f'#!/bin/sh\nexec {cmd} "$@"\n')
    prog.chmod(0o755)
    path = tmp / "exp.yaml"
    path.write_text(
        "version: 1\nname: fake\n"
        f"output: {tmp / 'results'}\nrepeats: {repeats}\ntimeout: 20s\n{extra}"
        "launcher: {kind: local}\n"
        "sweep:\n  knobs:\n    latency: [10us, 20us, 30us]\n    overhead: [5us]\n"
        "workloads:\n"
        f"  - {{name: w, kind: process, ranks: 1, program: {prog}}}\n"
    )
    return path


def rows(run_dir: Path) -> list[dict]:
    return [p.row for p in read_points(run_dir / STORE_FILE)[1]]


def comparable(run_dir: Path) -> list[tuple]:
    return [
        (r["point_id"], r["status"], r["value"], r["knobs"], r["sweep_value"])
        for r in rows(run_dir)
    ]


def test_run_stores_every_point(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path)
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report")
    assert res.returncode == 0, res.stderr + res.stdout
    stored = rows(out)
    assert len(stored) == 2 * 5
    by_id = {r["point_id"]: r for r in stored}
    assert by_id["w/baseline/r0"]["value"] == pytest.approx(1.0)
    assert by_id["w/latency=20us/r1"]["value"] == pytest.approx(1.2)
    assert by_id["w/overhead=5us/r0"]["value"] == pytest.approx(1.1)
    assert json.loads(by_id["w/latency=20us/r1"]["knobs"]) == {"latency": "20us"}
    assert by_id["w/latency=20us/r1"]["sweep_value"] == 20.0
    assert all(judged_ok(r) and r["metric"] == "time_s" for r in stored)
    # The fake shim library carries nothing, so the message check must flag it.
    assert by_id["w/baseline/r0"]["msgs_check"].startswith("mismatch: the shim carried 0")
    run = json.loads((out / "run.json").read_text())
    assert run["state"] == "complete" and len(run["plan"]) == 10
    assert set(run["windows"]) == set(by_id)
    start, end = run["windows"]["w/baseline/r0"]
    assert start <= end
    assert run["provenance"]["git_revision"] and run["experiment"]["name"] == "fake"
    assert "exp.yaml" in run["source"]


def test_failed_points_recorded_and_run_goes_on(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, repeats=1, extra="")
    out = tmp_path / "run"
    res = loggp(
        "run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
        env_extra={"FAKE_WORKLOAD": "fail:20"},
    )  # fmt: skip
    assert res.returncode == 1
    by_id = {r["point_id"]: r for r in rows(out)}
    assert len(by_id) == 5
    bad = by_id["w/latency=20us/r0"]
    assert (bad["status"], bad["exit_code"], bad["value"]) == ("failed", 3, None)
    assert "failing as asked" in bad["stderr_tail"]
    assert judged_ok(by_id["w/latency=30us/r0"])
    assert "point w/latency=20us/r0: failed" in res.stdout
    assert json.loads((out / "run.json").read_text())["state"] == "failed"


@pytest.mark.parametrize(
    ("mode", "status", "detail"),
    [
        ("invalid:10", "invalid", ""),
        ("silent:10", "failed", "printed no result line"),
        ("hang:10", "timeout", ""),
    ],
)
def test_point_outcomes(fake_build: Path, tmp_path: Path, mode: str, status: str, detail: str):
    exp = write_experiment(tmp_path, repeats=1, extra="")
    if mode.startswith("hang"):
        exp.write_text(exp.read_text().replace("timeout: 20s", "timeout: 1s"))
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
                env_extra={"FAKE_WORKLOAD": mode})  # fmt: skip
    assert res.returncode == 1
    bad = {r["point_id"]: r for r in rows(out)}["w/latency=10us/r0"]
    assert bad["status"] == status and bad["value"] is None
    assert detail in bad["stderr_tail"]


def test_a_late_shim_makes_a_degraded_point_kept_with_its_reason(
    fake_build: Path, tmp_path: Path
) -> None:
    exp = write_experiment(tmp_path, repeats=1)
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
                env_extra={"FAKE_WORKLOAD": "late:20"})  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    by_id = {r["point_id"]: r for r in rows(out)}
    bad = by_id["w/latency=20us/r0"]
    assert bad["status"] == "degraded" and bad["value"] == pytest.approx(1.2)
    assert (bad["releases"], bad["late_p99_ns"], bad["late_max_ns"]) == (100, 12000, 12000)
    assert bad["early_releases"] == 0 and 0 <= bad["host_other_cpu"] <= 1  # from /proc/stat
    assert re.fullmatch(
        r"p99 lateness up to 12 us exceeds 2 us = max\(2 us, 5 % of the injected delay 20 us\); "
        r"host CPU \d+ % busy with other work( \(above 25 %\))?",
        bad["degraded_reason"],
    ), bad["degraded_reason"]
    clean = by_id["w/latency=30us/r0"]
    assert judged_ok(clean) and clean["releases"] is None
    assert f"point w/latency=20us/r0: degraded ({bad['degraded_reason']})" in res.stdout
    ok = sum(r["status"] == "ok" for r in by_id.values())
    assert f"{ok} ok, {5 - ok} degraded, 0 failed" in res.stdout


def test_strict_makes_a_degraded_point_a_failure(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, repeats=1)
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
                "--strict", env_extra={"FAKE_WORKLOAD": "late:20"})  # fmt: skip
    assert res.returncode == 1
    assert len(rows(out)) == 5  # the run went on
    strict = res.stdout.split("--strict: ")[1]
    assert " point(s) degraded (reasons above): " in strict and "w/latency=20us/r0" in strict
    assert json.loads((out / "run.json").read_text())["state"] == "failed"


def test_fail_fast_stops(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, repeats=1)
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
                "--fail-fast", env_extra={"FAKE_WORKLOAD": "fail:10"})  # fmt: skip
    assert res.returncode == 1
    assert [r["point_id"] for r in rows(out)] == ["w/baseline/r0", "w/latency=10us/r0"]
    assert json.loads((out / "run.json").read_text())["state"] == "stopped"


@pytest.mark.serial  # compares point statuses, which a busy host can turn degraded
@pytest.mark.parametrize("mode", ["interrupt", "terminate"])  # Ctrl-C, or kill
def test_interrupted_run_resumes_to_the_same_results(
    fake_build: Path, tmp_path: Path, mode: str
) -> None:
    exp = write_experiment(tmp_path)
    whole = tmp_path / "whole"
    assert loggp("run", str(exp), "--out", str(whole), "--no-prometheus",
                 "--no-report").returncode == 0  # fmt: skip

    parts = tmp_path / "parts"
    env = {"FAKE_WORKLOAD": f"{mode}:30", "FAKE_MARKER": str(tmp_path / "marker")}
    first = loggp("run", str(exp), "--out", str(parts), "--no-prometheus", "--no-report",
                  env_extra=env)  # fmt: skip
    assert first.returncode == 130, first.stderr + first.stdout
    assert "loggp run --resume --out" in first.stdout
    assert json.loads((parts / "run.json").read_text())["state"] == "interrupted"
    before = rows(parts)
    assert 0 < len(before) < 10
    assert "w/latency=30us/r0" not in {r["point_id"] for r in before}

    second = loggp("run", "--resume", "--out", str(parts), "--no-prometheus", "--no-report",
                   env_extra=env)  # fmt: skip
    assert second.returncode == 0, second.stderr + second.stdout
    assert f"{len(before)} from before" in second.stdout
    assert comparable(parts) == comparable(whole)
    run = json.loads((parts / "run.json").read_text())
    assert run["state"] == "complete" and len(run["resumed"]) == 1


def test_warmup_runs_each_workload_before_its_first_point(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, extra="warmup: 1\n")
    log = tmp_path / "runs"
    env = {"FAKE_RUNS": str(log), "FAKE_WORKLOAD": "interrupt:20",
           "FAKE_MARKER": str(tmp_path / "marker")}  # fmt: skip
    out = tmp_path / "run"
    first = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report",
                  env_extra=env)  # fmt: skip
    assert first.returncode == 130, first.stderr + first.stdout
    second = loggp("run", "--resume", "--out", str(out), "--no-prometheus", "--no-report",
                   env_extra=env)  # fmt: skip
    assert second.returncode == 0, second.stderr + second.stdout
    # Each repeat starts with an unrecorded run at the baseline's knobs, and the resumed
    # run warms up at the point it continues with.
    assert log.read_text().split("\n")[:-1] == [
        "0 0", "0 0", "10 0", "20 0",
        "20 0", "20 0", "30 0", "0 5",
        "0 0", "0 0", "10 0", "20 0", "30 0", "0 5",
    ]  # fmt: skip
    assert len(rows(out)) == 10 and all(judged_ok(r) for r in rows(out))


def test_resume_refuses_another_experiment(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, repeats=1)
    out = tmp_path / "run"
    assert loggp("run", str(exp), "--out", str(out), "--no-prometheus",
                 "--no-report").returncode == 0  # fmt: skip
    exp.write_text(exp.read_text().replace("repeats: 1", "repeats: 2"))
    res = loggp("run", str(exp), "--resume", "--out", str(out), "--no-prometheus")
    assert res.returncode == 1
    assert "different experiment" in res.stderr and len(res.stderr.splitlines()) == 1


def test_new_run_refuses_an_existing_run_dir(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, repeats=1)
    out = tmp_path / "run"
    assert loggp("run", str(exp), "--out", str(out), "--no-prometheus",
                 "--no-report").returncode == 0  # fmt: skip
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus")
    assert res.returncode == 2 and "already holds a run: use --resume" in res.stderr


def test_dry_run_and_show_print_the_plan(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path)
    for args in (["run", "--dry-run", str(exp)], ["show", str(exp)]):
        res = loggp(*args)
        assert res.returncode == 0, res.stderr
        assert "fake: 10 points" in res.stdout and "w/latency=30us/r1" in res.stdout
    assert not (tmp_path / "results").exists()


def test_bad_experiment_file_is_one_line(tmp_path: Path, monkeypatch) -> None:
    """...at once, though another run holds the machine: a file that cannot run neither
    waits for the run lock nor is told another run is there."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: x\nworkloads:\n  - {name: a, program: p, rankz: 2}\n")
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path / "state"))
    held = RunLock(None)
    try:
        res = loggp("run", str(bad), "--wait-lock", "60", timeout=30)
    finally:
        held.release()
    assert res.returncode == 2
    assert res.stderr.startswith(f"loggp: {bad}:4: unknown key 'workloads[0].rankz'")
    assert len(res.stderr.splitlines()) == 1


def test_missing_program_is_a_clear_error(fake_build: Path, tmp_path: Path) -> None:
    exp = write_experiment(tmp_path, repeats=1)
    exp.write_text(exp.read_text().replace(str(tmp_path / "fake-workload"), "no-such-prog"))
    res = loggp("run", str(exp), "--out", str(tmp_path / "run"), "--no-prometheus")
    assert res.returncode == 2
    assert "program 'no-such-prog' not found" in res.stderr


@pytest.mark.integration
def test_run_metrics_reach_a_real_prometheus(fake_build: Path, tmp_path: Path) -> None:
    """loggp run --prometheus: the runner's own metrics are found through Prometheus' query
    API in the TSDB the run kept, and the report is written."""
    from loggp.metrics.prometheus import PrometheusServer, find_prometheus

    try:
        find_prometheus()
    except Exception as e:  # noqa: BLE001 - any reason to skip is worth showing
        pytest.skip(str(e))
    exp = write_experiment(tmp_path, repeats=1)
    out = tmp_path / "run"
    res = loggp("run", str(exp), "--out", str(out), "--prometheus")
    assert res.returncode == 0, res.stderr + res.stdout
    assert "Prometheus: http://127.0.0.1:" in res.stdout
    assert (out / "report" / "index.html").is_file()
    run = json.loads((out / "run.json").read_text())
    end = max(w[1] for w in run["windows"].values())
    reader = PrometheusServer(
        out, node_exporter=False, config_name="readback.yml", log_name="readback.log"
    )
    with reader:
        # ok, or degraded by the other work of a busy host (loggp/results/judge.py)
        found = reader.query(
            'sum(loggp_run_points_finished_total{status=~"ok|degraded"})', time=end + 15
        )
        planned = reader.query("loggp_run_points_planned", time=end + 15)
    assert [s.value for s in found] == [5.0]
    assert [s.value for s in planned] == [5.0]
