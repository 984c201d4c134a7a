"""The drivers: loggp-httperf (the parse of httperf's report, its sessions file, what makes a
run invalid) and loggp-fio (fio's JSON report summed over jobs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loggp.drivers.fio import FioError
from loggp.drivers.fio import report as fio_report
from loggp.drivers.fio import result as fio_result
from loggp.drivers.httperf import HttperfError, judge, parse, parser, result, sessions_file

pytestmark = pytest.mark.unit

# httperf 0.9.0's report of 20 sessions of 2 requests against loggp-kvserver.
REPORT = """\
Maximum connect burst length: 1

Total: connections 20 requests 40 replies 40 test-duration 1.914 s

Connection rate: 10.5 conn/s (95.7 ms/conn, <=1 concurrent connections)
Request rate: 20.9 req/s (47.8 ms/req)

Reply rate [replies/s]: min 9.8 avg 10.1 max 10.4 stddev 0.4 (2 samples)
Reply time [ms]: response 1.2 transfer 0.0
Reply status: 1xx=0 2xx=30 3xx=0 4xx=10 5xx=0

Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0
Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0
"""


def test_parse_a_real_report() -> None:
    r = parse(REPORT)
    assert (r["connections"], r["requests"], r["replies"]) == (20, 40, 40)
    assert r["duration_s"] == 1.914 and r["response_ms"] == 1.2
    assert (r["rate_avg"], r["rate_samples"]) == (10.1, 2)
    assert r["status"] == {"1xx": 0, "2xx": 30, "3xx": 0, "4xx": 10, "5xx": 0}
    assert r["errors"]["fd-unavail"] == 0 and r["errors"]["connreset"] == 0
    assert len(r["errors"]) == 9


def test_a_truncated_report_is_refused() -> None:
    with pytest.raises(HttperfError, match="lacks"):
        parse(REPORT.split("Reply rate")[0])


def test_result_line() -> None:
    out = result(parse(REPORT), 40)
    assert out["loggp_result"] == 1 and out["valid"] is True and "reason" not in out
    m = out["metrics"]
    assert m["time_s"] == 1.914 and m["request_us"] == pytest.approx(47850.0)
    assert m["replies_per_s"] == pytest.approx(40 / 1.914)


@pytest.mark.parametrize(
    ("edit", "requests", "reason"),
    [
        (("fd-unavail 0", "fd-unavail 3"), 40, "httperf errors: fd-unavail 3"),
        (("client-timo 0", "client-timo 1"), 40, "httperf errors: client-timo 1"),
        (("5xx=0", "5xx=2"), 40, "2 replies were 5xx"),
        (("", ""), 41, "40 replies to 41 requests"),
    ],
)
def test_what_makes_a_run_invalid(edit: tuple[str, str], requests: int, reason: str) -> None:
    report = parse(REPORT.replace(*edit) if edit[0] else REPORT)
    assert judge(report, requests) == reason
    out = result(report, requests)
    assert out["valid"] is False and out["reason"] == reason


def test_sessions_file_bursts_and_mix(tmp_path: Path) -> None:
    args = parser().parse_args(
        ["--server", "h", "--port", "1", "--sessions", "3", "--calls", "4", "--burst", "2",
         "--mix", "get", "--keys", "5"]
    )  # fmt: skip
    path = tmp_path / "s"
    assert sessions_file(path, args) == 12
    sessions = path.read_text().split("\n\n")
    first = sessions[0].splitlines()
    assert len(first) == 4
    # requests 1 and 3 are sent in the burst of the one before them
    assert [line.startswith("\t") for line in first] == [False, True, False, True]
    assert all(line.strip().startswith("/kv/k") and "method" not in line for line in first)


def test_puts_carry_their_value(tmp_path: Path) -> None:
    opts = ["--mix", "put", "--value-size", "8", "--sessions", "1", "--calls", "2"]
    args = parser().parse_args(["--server", "h", "--port", "1", *opts])
    sessions_file(tmp_path / "s", args)
    assert tmp_path.joinpath("s").read_text().count("method=PUT contents='vvvvvvvv'") == 2


def test_bad_option_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(["--server", "h", "--port", "1", "--calls", "0"])
    assert exc.value.code == 2
    assert "expected a whole number of at least 1, got 0" in capsys.readouterr().err


def test_defaults_are_the_seeds_one_session_at_a_time() -> None:
    args = parser().parse_args(["--server", "h", "--port", "1"])
    assert (args.rate, args.burst, args.calls) == (0.0, 1, 5)


def test_fio_runs_and_sums_its_jobs(tmp_path: Path) -> None:
    if not shutil.which("fio"):
        pytest.skip("fio is not installed (Debian package fio; make deps)")
    argv = [sys.executable, "-m", "loggp.drivers.fio", "--name=w", "--rw=write", "--bs=64k",
            "--size=2M", "--numjobs=2", f"--directory={tmp_path}", "--verify=crc32c",
            "--verify_state_save=0"]  # fmt: skip
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    res = json.loads(run.stdout.splitlines()[-1])
    assert res["loggp_result"] == 1 and res["valid"] is True, res
    m = res["metrics"]
    assert m["write_MBps"] > 0 and m["write_iops"] > 0 and m["write_lat_us"] > 0
    assert m["read_MBps"] > 0  # the verify pass reads back what was written
    assert m["time_s"] >= 0


def test_fio_job_error_is_invalid() -> None:
    job = {"jobname": "r", "error": 5, "job_runtime": 10}
    for d in ("read", "write"):
        job[d] = {"total_ios": 0, "bw_bytes": 0, "iops": 0.0, "clat_ns": {"mean": 0.0}}
    res = fio_result(fio_report("fio: warning\n" + json.dumps({"jobs": [job]})))
    assert res["valid"] is False and res["reason"] == "r: error 5"
    assert res["metrics"] == {"time_s": 0.01, "read_MBps": 0.0, "read_iops": 0.0,
                              "write_MBps": 0.0, "write_iops": 0.0}  # fmt: skip


def test_fio_without_a_report_is_an_error() -> None:
    with pytest.raises(FioError, match="no JSON report"):
        fio_report("fio: invalid option --nope\n")
