"""The loggp command as a user runs it: exit codes and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loggp.tests.cli import loggp

pytestmark = pytest.mark.unit


def one_line(text: str) -> str:
    lines = text.splitlines()
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--latency", "10"], "loggp: bad value '10' for LOGGP_LATENCY: expected <number>"),
        (["--gap=-5us"], "loggp: bad value '-5us' for LOGGP_GAP: expected"),
        (["--gap", "-5us"], "loggp: bad value '-5us' for LOGGP_GAP: expected"),
        (["--bandwidth", "0MB/s"], "loggp: bad value '0MB/s' for LOGGP_BANDWIDTH: expected"),
        (
            ["--bulk-gap", "1ns/B", "--bandwidth", "1MB/s"],
            "loggp: bad value '1MB/s' for LOGGP_BANDWIDTH: expected LOGGP_BANDWIDTH or",
        ),
    ],
)
def test_bad_knob_exits_2_with_one_line(fake_build: Path, args: list[str], start: str) -> None:
    for cmd in (["exec", *args, "--", "true"], ["calibrate", *args]):
        res = loggp(*cmd)
        assert res.returncode == 2
        assert one_line(res.stderr).startswith(start)
        assert res.stdout == ""


@pytest.mark.parametrize(("cmd", "status"), [("true", 0), ("false", 1), ("exit 7", 7)])
def test_exec_propagates_exit_status(fake_build: Path, cmd: str, status: int) -> None:
    assert loggp("exec", "--", "sh", "-c", cmd).returncode == status


def test_exec_signal_status(fake_build: Path) -> None:
    assert loggp("exec", "--", "sh", "-c", "kill -TERM $$").returncode == 128 + 15


def test_exec_env(fake_build: Path, tmp_path: Path) -> None:
    res = loggp(
        "exec",
        "--latency",
        "10us",
        "--stats",
        str(tmp_path / "s.jsonl"),
        "--",
        "env",
        env_extra={"LOGGP_GAP": "3us"},
    )
    assert res.returncode == 0, res.stderr
    env = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
    assert env["LOGGP_LATENCY"] == "10us"
    assert env["FI_HOOK"] == "loggp"
    assert env["FI_PROVIDER_PATH"] == str(fake_build / "emulator" / "fabric")
    assert env["LOGGP_STATS_FILE"] == str(tmp_path / "s.jsonl")
    assert "LOGGP_GAP" not in env
    assert res.stderr.splitlines() == [
        "loggp: exec: dropping inherited LOGGP_GAP: only the knob options given here apply",
        "loggp: exec: warning: the shim carried no messages: 'env' never opened a fabric, so "
        "no delay applied (only libfabric traffic is delayed: MPI needs pml cm and mtl ofi; "
        "TCP/IP programs need the wire, docs/testbed.md)",
    ]


def test_exec_stats_summary_counts_only_this_commands_lines(
    fake_build: Path, tmp_path: Path
) -> None:
    """The summary at exit covers the lines the command appended, not older ones."""
    stats = tmp_path / "s.jsonl"
    old = {"provider": "tcp", "msgs": 1000, "releases": 1000, "late_hist_us": [0] * 15 + [1000]}
    stats.write_text(json.dumps(old) + "\n")
    line = {
        "provider": "tcp", "msgs": 12, "releases": 10, "late_ns": 40_000,
        "late_max_ns": 30_000, "late_over_10us": 1, "early_releases": 0,
        "late_hist_us": [8, 1] + [0] * 3 + [1] + [0] * 10,
    }  # fmt: skip
    rxm = {"provider": "ofi_rxm", "msgs": 0, "releases": 0, "late_hist_us": [0] * 16}
    script = "; ".join(f"echo '{json.dumps(s)}' >> \"$LOGGP_STATS_FILE\"" for s in (line, rxm))
    res = loggp("exec", "--latency", "10us", "--stats", str(stats), "--", "sh", "-c", script)
    assert res.returncode == 0, res.stderr
    assert one_line(res.stderr) == (
        f"loggp: exec: 2 shim counter lines in {stats}: 12 messages, 10 delayed releases, "
        "lateness p50 < 1 us, p99 < 32 us (bounds: histogram buckets), max 30 us, "
        "1 late by > 10 us, 0 early"
    )
    broken = json.dumps({"provider": "tcp", "msgs": 1, "late_hist_us": [1]})
    res = loggp("exec", "--stats", str(stats), "--", "sh", "-c", f"echo '{broken}' >> {stats}")
    assert res.returncode == 0, res.stderr
    # Not the shim's line (its histogram is short): left out and named (docs/reliability.md).
    assert res.stderr.splitlines()[0] == (
        f"loggp: exec: warning: {stats}: not the shim's counters, left out: line 1: key "
        "'late_hist_us': expected a whole number from 0 to 2^64 - 1, got [1]"
    )


def test_exec_refuses_an_unwritable_stats_file_before_it_starts(
    fake_build: Path, tmp_path: Path
) -> None:
    ran = tmp_path / "ran"
    res = loggp("exec", "--stats", "/nonexistent/dir/s.jsonl", "--", "touch", str(ran))
    assert res.returncode == 2 and not ran.exists()
    assert one_line(res.stderr) == (
        "loggp: exec: cannot write --stats /nonexistent/dir/s.jsonl: No such file or directory"
    )


def test_exec_warns_when_the_shim_carried_nothing(fake_build: Path) -> None:
    """A command that never sends through libfabric ran undelayed: one line says so (and
    nothing else is said without inherited knobs)."""
    res = loggp("exec", "--gap", "1us", "--", "true")
    assert res.returncode == 0
    assert one_line(res.stderr).startswith(
        "loggp: exec: warning: the shim carried no messages: 'true' never opened a fabric"
    )
    line = json.dumps({"provider": "tcp", "msgs": 0, "late_hist_us": [0] * 16})
    res = loggp("exec", "--", "sh", "-c", f"echo '{line}' >> \"$LOGGP_STATS_FILE\"")
    assert one_line(res.stderr).endswith(
        "'sh' opened a fabric but sent nothing through it, so no delay applied (only "
        "libfabric traffic is delayed: MPI needs pml cm and mtl ofi; TCP/IP programs need "
        "the wire, docs/testbed.md)"
    )


@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        ("LOGGP_LATENCCY", "10us", "unknown variable LOGGP_LATENCCY: did you mean LOGGP_LATENCY?"),
        ("LOGGP_CLOCK", "hpet", "bad value 'hpet' for LOGGP_CLOCK: expected tsc or monotonic"),
        (
            "LOGGP_LATENCY_DIST",
            "gauss:20us",
            "bad value 'gauss:20us' for LOGGP_LATENCY_DIST: expected constant, uniform:TIME, "
            "normal:TIME, pareto:TIME, paretonormal:TIME or empirical:FILE, TIME as "
            "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms",
        ),
    ],
)
def test_exec_refuses_what_the_shim_refuses(
    fake_build: Path, tmp_path: Path, var: str, value: str, message: str
) -> None:
    """An unknown LOGGP_* name or a bad setting stops loggp exec before the command starts."""
    marker = tmp_path / "ran"
    res = loggp("exec", "--", "touch", str(marker), env_extra={var: value})
    assert res.returncode == 2
    assert one_line(res.stderr) == f"loggp: {message}"
    assert not marker.exists()


def test_exec_passes_options_to_command(fake_build: Path) -> None:
    res = loggp("exec", "--", "sh", "-c", "echo $0 $1", "--latency", "x")
    assert res.returncode == 0
    assert res.stdout.strip() == "--latency x"


def test_exec_missing_shim(tmp_path: Path, fake_build: Path) -> None:
    res = loggp("exec", "--", "true", env_extra={"LOGGP_BUILD": str(tmp_path / "nowhere")})
    assert res.returncode == 1
    line = one_line(res.stderr)
    assert line.startswith("loggp: shim library not found: ")
    assert str(tmp_path / "nowhere" / "emulator" / "fabric" / "libloggp-fi.so") in line


def test_exec_command_not_found(fake_build: Path) -> None:
    res = loggp("exec", "--", "no-such-command-loggp")
    assert res.returncode == 127
    assert one_line(res.stderr) == "loggp: command not found: no-such-command-loggp"


def test_exec_timeout(fake_build: Path) -> None:
    res = loggp("exec", "--timeout", "0.5", "--", "sleep", "30")
    assert res.returncode == 124
    assert "did not finish within 0.5 s" in one_line(res.stderr)


@pytest.mark.parametrize(
    "args", [["exec"], ["exec", "--"], ["nonsense"], [], ["exec", "--timeout", "x", "--", "true"]]
)
def test_usage_errors_are_one_line(fake_build: Path, args: list[str]) -> None:
    res = loggp(*args)
    assert res.returncode == 2
    assert one_line(res.stderr).startswith("loggp")


def test_calibrate_missing_binary(tmp_path: Path, fake_build: Path) -> None:
    res = loggp("calibrate", env_extra={"LOGGP_BUILD": str(tmp_path / "nowhere")})
    assert res.returncode == 1
    assert "calibrate/loggp-calibrate" in one_line(res.stderr)


def test_calibrate_with_fake_tool(fake_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "cal.json"
    res = loggp("calibrate", "-p", "tcp", "--latency", "50us", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert "latency=50us" in res.stdout and "results:" in res.stdout
    doc = json.loads(out.read_text())
    assert doc["knobs"] == {"latency": "50us"}
    rows = {c["metric"]: c for c in doc["comparison"]}
    assert rows["L_us"]["increase"] == pytest.approx(50.0)


def test_calibrate_tool_failure(fake_build: Path) -> None:
    res = loggp("calibrate", "--latency", "1us", env_extra={"FAKE_CALIBRATE": "fail"})
    assert res.returncode == 1
    assert "exited with status 1: loggp: bad value" in res.stderr.splitlines()[-1]
    assert "Traceback" not in res.stderr


@pytest.mark.slow
def test_demo_with_fake_tool(fake_build: Path, tmp_path: Path) -> None:
    res = loggp("demo", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    summary = Path(res.stdout.strip().splitlines()[-1].removeprefix("results: "))
    assert summary.is_file() and summary.parent.parent == tmp_path


BENCH_NAMES = (
    "accuracy, collio, combining, default, dist, kvs, kvserver, pfs, prefetch, sim-speed, "
    "topo, validation, wire"
)


def test_bench_list_names_every_benchmark() -> None:
    res = loggp("bench", "--list")
    assert res.returncode == 0, res.stderr
    assert [line.split()[0] for line in res.stdout.splitlines()] == BENCH_NAMES.split(", ")
    assert res.stderr == ""


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["nope", "--quick"], "loggp: unknown benchmark 'nope': expected one of " + BENCH_NAMES),
        ([], "loggp: bench: no benchmark given: expected one of " + BENCH_NAMES + " (or --list)"),
    ],
)
def test_bench_without_a_known_name_is_one_line(args: list[str], line: str) -> None:
    res = loggp("bench", *args)
    assert res.returncode == 2
    assert one_line(res.stderr) == line
    assert res.stdout == ""


@pytest.mark.parametrize(
    "name",
    ["accuracy", "collio", "dist", "kvs", "prefetch", "sim-speed", "topo", "validation", "wire"],
)
def test_bench_hands_its_options_to_the_benchmark(name: str) -> None:
    res = loggp("bench", name, "--help")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"usage: loggp bench {name} [-h] [--build BUILD]")
