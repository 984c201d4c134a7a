"""Knobs over time through the fabric shim: a schedule's step shows in a ping-pong.

Two MPI ranks over tcp;ofi_rxm (pml cm, mtl ofi) ping-pong 8 bytes for 2 s beneath a
schedule (LOGGP_SCHEDULE, docs/design.md "Knobs over time") that raises ΔL from 100 µs to
300 µs 2 s after each process loaded the shim (the schedule has no start line: each
process's own origin).  The shim counts the messages it delayed under each step and the ΔL
they got (`step_msgs`, `step_latency_ns`) and says where its time 0 was (`step_origin_ns`);
the workload writes when each round started and its round trip (-T).  The counters say
exactly what each step added; the origins place the step among the rounds, whatever
MPI_Init took (0.5 to 1.5 s from loading the shim to the first round beside other builds,
the ranks' origins up to 170 ms apart).  The wall clock gets bounds a busy host cannot
break by stalling rounds: at a load of 11 on 2 cores most rounds stalled for 4 to 40 ms, so
that even a side's median or its fastest round was a stall.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import fi_pingpong, mpi_over_ofi, run_workload, workload_result

pytestmark = pytest.mark.integration

PROVIDER = "tcp;ofi_rxm"
BEFORE_US, AFTER_US = 100, 300
STEP_S = 2


def write_schedule(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def steps(env) -> list[dict]:
    """The counter lines of the processes that sent over tcp."""
    lines = [s for s in env.stats() if s.get("provider") == "tcp" and int(s["msgs"]) > 0]
    assert len(lines) == 2, lines
    return lines


@pytest.mark.serial
def test_step_in_latency_shows_in_the_round_trips(mpirun_bin: str, shim, tmp_path: Path) -> None:
    sched = write_schedule(
        tmp_path / "schedule.txt",
        f"0s latency {BEFORE_US}us\n{STEP_S}s latency {AFTER_US}us\n",
    )
    env = shim(raw={"LOGGP_SCHEDULE": str(sched)})
    trace = tmp_path / "rounds.txt"
    res = run_workload(
        mpirun_bin, "pingpong", 2, ["-n", "100000", "-t", "2", "-T", str(trace)],
        mpi_over_ofi(PROVIDER), env.env, 120,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    result = workload_result(res.stdout)
    assert result["valid"] is True, res.stdout
    rounds = [(int(w), float(rtt)) for w, rtt in map(str.split, trace.read_text().splitlines())]
    assert len(rounds) == result["params"]["rounds"]

    lines = steps(env)
    for s in lines:
        msgs, latency = s["step_msgs"], s["step_latency_ns"]
        # every message got its step's ΔL, exactly, and none left early
        assert latency == [msgs[0] * BEFORE_US * 1000, msgs[1] * AFTER_US * 1000], s
        assert msgs[0] > 0 and msgs[1] > 0 and s["early_releases"] == 0, s
    # a round is before the step if it ended before either rank's step, after if it
    # started after both
    at = [int(s["step_origin_ns"]) + int(STEP_S * 1e9) for s in lines]
    before = [rtt for w, rtt in rounds if w + rtt * 1000 < min(at)]
    after = [rtt for w, rtt in rounds if w > max(at)]
    assert before and len(after) >= 20, (at, rounds[0], rounds[-1])

    # Never early: no round after the step is faster than both legs' new ΔL, none before
    # faster than the old.  The fastest round before the step, within half the step of the
    # old ΔL, makes the rise at least half of 2 × 200 µs: where the host let any round run
    # unstalled the fastest rose by 400-402 µs, but at a load of 10 the fastest of a few
    # hundred rounds before the step was once 151 µs late.  The ΔL each message got is the
    # counters' (above), exactly.
    step = 2 * (AFTER_US - BEFORE_US)
    assert min(before) >= 2 * BEFORE_US and min(after) >= 2 * AFTER_US, (min(before), min(after))
    assert min(before) <= 2 * BEFORE_US + step / 2, (min(before), len(before))


@pytest.mark.parametrize(("start", "expect"), [(1, [0, 1]), (None, [1, 0])], ids=["past", "future"])
def test_start_line_is_the_common_origin(fi_pingpong_bin, shim, tmp_path, start, expect) -> None:
    """A start long past puts every message under the last step, one ahead under the first."""
    origin = start if start is not None else time.time_ns() + 3600 * 10**9
    sched = write_schedule(tmp_path / "s.txt", f"start {origin}\n1s latency 20us\n")
    env = shim(raw={"LOGGP_SCHEDULE": str(sched)})
    res = fi_pingpong(fi_pingpong_bin, PROVIDER, "rdm", ["-S", "64", "-I", "50"], env.env)
    assert res.ok, res.describe()
    for s in steps(env):
        msgs = [int(n) for n in s["step_msgs"]]
        assert [bool(n) for n in msgs] == [bool(e) for e in expect], s
        assert s["step_latency_ns"] == [0, msgs[1] * 20000], s


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (
            "0s latency 10us\n2s latency 200us\n1s latency 50us\n",
            r"line 3 of LOGGP_SCHEDULE '.*': time '1s' comes before the previous step's: "
            r"expected times in order",
        ),
        (
            "2s latancy 200us\n",
            r"line 1 of LOGGP_SCHEDULE '.*': unknown knob 'latancy': expected one of overhead, "
            r"send_overhead, recv_overhead, gap, latency, bulk_gap, bandwidth",
        ),
        (
            "2s latency 200\n",
            r"line 1 of LOGGP_SCHEDULE '.*': bad value '200' for latency: expected "
            r"<number>\{ns\|us\|ms\|s\}",
        ),
        (
            "2 latency 200us\n",
            r"line 1 of LOGGP_SCHEDULE '.*': bad time '2': expected <number>\{ns\|us\|ms\|s\}",
        ),
        (
            "1s bandwidth 1GB/s\n1s bulk_gap 1ns/B\n",
            r"line 2 of LOGGP_SCHEDULE '.*': bulk_gap and bandwidth in one step: "
            r"expected one of them",
        ),
        (
            "1s latency\n",
            r"line 1 of LOGGP_SCHEDULE '.*': expected 'TIME KNOB VALUE' \(e.g. '2s latency "
            r"200us'\) or 'start UNIX_NS' before them",
        ),
    ],
    ids=["unordered", "knob", "unit", "time", "both", "shape"],
)
def test_bad_schedule_refused(fi_pingpong_bin, shim, tmp_path, text, pattern) -> None:
    """The shim refuses a schedule it cannot apply before any fabric runs, in one line."""
    env = shim(raw={"LOGGP_SCHEDULE": str(write_schedule(tmp_path / "s.txt", text))})
    res = fi_pingpong(
        fi_pingpong_bin, PROVIDER, "rdm", ["-S", "64", "-I", "10"], env.env, timeout=60
    )
    assert res.client.returncode != 0 and res.server.returncode != 0, res.describe()
    lines = (res.client.stderr + res.server.stderr).splitlines()
    assert any(re.search("^loggp: " + pattern, ln) for ln in lines), res.describe()
