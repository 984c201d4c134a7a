"""Nothing the runner starts outlives it: a killed runner, a timed-out point, `loggp testbed
down`, and two runs at once.  Every wait is on an event (a pid file, /proc), never a sleep."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_util import start_run, wait_until
from netns_util import loggp as loggp_root
from netns_util import running_testbed, skip_without_netns

from loggp.net.testbed import State, WireProc, down, own_files
from loggp.run.proctree import Identity, descendants, end_recorded, record
from loggp.tests.cli import loggp

pytestmark = pytest.mark.integration

# A workload (or MPI rank) for these tests: `wl.sh DIR MODE`.  hang: forks a child in its
# process group and one in a session of its own, writes "$$ child child" to DIR/pids.$$,
# waits for ever; once: hangs on the first run only, later runs print a result; gate: the
# first run waits for a line through the fifo DIR/gate; every other run prints its result.
WORKLOAD = """#!/bin/sh
d=$1
if [ "$2" = hang ] || { [ "$2" = once ] && mkdir "$d/first" 2>/dev/null; }; then
    sleep 600 &
    a=$!
    setsid sleep 600 &
    echo "$$ $a $!" > "$d/tmp.$$" && mv "$d/tmp.$$" "$d/pids.$$"
    wait
fi
if [ "$2" = gate ] && mkdir "$d/first" 2>/dev/null; then read line < "$d/gate"; fi
echo '{"loggp_result": 1, "workload": "t", "valid": true, "ranks": 1, "metrics": {"time_s": 1.0}}'
"""


def experiment(
    tmp: Path, mode: str, kind: str = "process", launcher: str = "", timeout: str = "60s"
) -> Path:
    wl = tmp / "wl.sh"
    wl.write_text(WORKLOAD)
    wl.chmod(0o755)
    path = tmp / "exp.yaml"
    path.write_text(
        f"version: 1\nname: t\noutput: {tmp / 'results'}\ntimeout: {timeout}\n"
        "emulator: {shim: none}\n"
        f"{launcher or 'launcher: {kind: local}'}\n"
        f"workloads:\n  - {{name: w, kind: {kind}, ranks: 1, program: {wl}, "
        f"args: [{tmp}, {mode}]}}\n"
    )
    return path


def pid_files(d: Path) -> list[int]:
    return [int(p) for f in sorted(d.glob("pids.*")) for p in f.read_text().split()]


def tree(pid: int) -> list[Identity]:
    """pid's descendants, by a walk of /proc's parent pids."""
    found = [Identity.of(p) for p in descendants(pid)]
    return [i for i in found if i is not None]


def alive(idents: list[Identity]) -> list[Identity]:
    return [i for i in idents if i.running()]


def test_a_killed_runner_takes_every_process_with_it(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """kill -9 of `loggp run` ends the point's whole tree and Prometheus, so --resume
    (with Prometheus, on the same TSDB) runs to the end."""
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus not installed")
    exp, out = experiment(tmp_path, "once"), tmp_path / "run"
    runner = start_run(exp, out, lock_dir, "--prometheus")
    try:
        wait_until(lambda: pid_files(tmp_path) or runner.poll() is not None, "a pid file")
        left = tree(runner.pid)
        assert any("prometheus" in " ".join(i.argv) for i in left), left
        runner.kill()
        runner.communicate()
        # Prometheus and node_exporter get SIGTERM and up to 10 s before SIGKILL.
        try:
            wait_until(lambda: not alive(left), "every process of the run gone", timeout=30)
        except AssertionError as e:
            raise AssertionError(f"{e}; still running: {alive(left)}") from None
    finally:
        for i in alive(tree(runner.pid)) + alive(left):
            os.kill(i.pid, signal.SIGKILL)
    res = loggp("run", "--resume", "--out", str(out), "--prometheus", "--no-report",
                env_extra=lock_dir)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.serial
def test_resume_ends_what_a_dead_run_left(tmp_path: Path, lock_dir: dict[str, str]) -> None:
    """The run's processes frozen (they cannot end themselves) when the runner is killed:
    --resume finds them by the records in the run directory and ends them."""
    exp, out = experiment(tmp_path, "once"), tmp_path / "run"
    runner = start_run(exp, out, lock_dir, "--no-prometheus")
    wait_until(lambda: pid_files(tmp_path) or runner.poll() is not None, "a pid file")
    left = tree(runner.pid)
    try:
        for i in left:
            os.kill(i.pid, signal.SIGSTOP)
        runner.kill()
        runner.communicate()
        res = loggp("run", "--resume", "--out", str(out), "--no-prometheus", "--no-report",
                    env_extra=lock_dir)  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
        assert "ended 4 processes left by a dead run" in res.stdout
        assert not alive(left)
    finally:
        for i in alive(left):
            os.kill(i.pid, signal.SIGKILL)


def sleeper(seconds: int) -> subprocess.Popen[bytes]:
    """A process that has said it runs its own command line: read before that, its identity
    would be the forked copy of ours, which exec replaces."""
    code = f"import time; print('ready', flush=True); time.sleep({seconds})"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


def test_records_end_only_the_processes_they_name(tmp_path: Path) -> None:
    with sleeper(600) as ours, sleeper(601) as other_argv, sleeper(602) as other_start:
        try:
            for proc, change in ((ours, {}), (other_argv, {"argv": ["sleep", "6"]}),
                                 (other_start, {"start_time": -1})):  # fmt: skip
                ident = Identity.of(proc.pid)
                assert ident is not None
                record(tmp_path, Identity(**{**ident.__dict__, **change}))
            assert end_recorded(tmp_path) == 1
            assert ours.wait(10) == -signal.SIGKILL
            assert other_argv.poll() is None and other_start.poll() is None
            assert not list(tmp_path.iterdir())
        finally:
            other_argv.kill()
            other_start.kill()


@pytest.mark.parametrize("kind", ["process", "mpi"])
def test_a_timed_out_point_leaves_nothing(tmp_path: Path, kind: str) -> None:
    if kind == "mpi" and shutil.which("mpirun") is None:
        pytest.skip("mpirun not installed")
    exp = experiment(tmp_path, "hang", kind, timeout="3s" if kind == "process" else "6s")
    res = loggp("run", str(exp), "--out", str(tmp_path / "run"), "--no-prometheus",
                "--no-report", env_extra={"LOGGP_RUN_DIR": str(tmp_path / "lock")})  # fmt: skip
    assert res.returncode == 1 and "timeout" in res.stdout, res.stdout + res.stderr
    pids = pid_files(tmp_path)
    assert len(pids) == 3
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == []


@pytest.mark.serial
@pytest.mark.needs_root
def test_netns_timeout_and_down_end_every_process_in_the_hosts(tmp_path: Path) -> None:
    """Beneath the netns launcher a timed-out point ends the remote host's orted and rank
    too; down ends whatever else runs in the namespaces it removes."""
    skip_without_netns()
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not installed")
    with running_testbed(2) as tb:
        launcher = f"launcher: {{kind: netns, prefix: {tb.prefix}}}"
        exp = experiment(tmp_path, "hang", "mpi", launcher, timeout="8s")
        exp.write_text(exp.read_text().replace("ranks: 1", "ranks: 2"))
        res = loggp_root("run", str(exp), "--out", str(tmp_path / "run"), "--no-prometheus",
                         "--no-report")  # fmt: skip
        assert res.returncode == 1 and "timeout" in res.stdout, res.stdout + res.stderr
        assert len(pid_files(tmp_path)) == 6
        for i in range(2):
            assert ns_pids(tb.ns(i)) == [], tb.ns(i)
        stray = subprocess.Popen(["ip", "netns", "exec", tb.ns(1), "sleep", "600"],
                                 start_new_session=True)  # fmt: skip
        wait_until(lambda: ns_pids(tb.ns(1)) == [stray.pid], "the stray process in h1")
    assert stray.poll() == -signal.SIGKILL


def ns_pids(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=True)
    return [int(p) for p in out.stdout.split()]


def test_down_signals_no_process_but_the_wire_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path))
    with subprocess.Popen(["sleep", "600"]) as other:
        try:
            ident = Identity.of(other.pid)
            assert ident is not None
            state = State(prefix="tp", hosts=2, **own_files("tp"))
            state.wire = WireProc(other.pid, ident.start_time, ["/x/loggp-wire", "-l", "0"])
            state.save()
            assert down("tp") == [f"loggp-wire pid {other.pid} (not running)"]
            assert other.poll() is None
        finally:
            other.kill()


def point_started(run: subprocess.Popen[str], tmp: Path) -> bool:
    """The run's gated point has begun (it made DIR/first), or the run has ended."""
    return run.poll() is not None or (tmp / "first").is_dir()


def open_gate(fifo: Path) -> None:
    """Writes a line to the fifo once its reader has it open (fails after 60 s)."""
    fds: list[int] = []

    def opened() -> bool:
        try:
            fds.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: no reader yet
            return False
        return True

    wait_until(opened, f"a reader of {fifo}")
    os.write(fds[0], b"go\n")
    os.close(fds[0])


def test_two_runs_at_once(tmp_path: Path, lock_dir: dict[str, str]) -> None:
    """A second run is refused with the first one's pid and directory, waits for it with
    --wait-lock, and the lock of a killed run is free at once."""
    exp = experiment(tmp_path, "gate")
    os.mkfifo(tmp_path / "gate")
    first = start_run(exp, tmp_path / "a", lock_dir, "--no-prometheus")
    second: subprocess.Popen[str] | None = None
    try:
        wait_until(lambda: point_started(first, tmp_path), "the first run's point")
        res = loggp("run", str(exp), "--out", str(tmp_path / "b"), "--no-prometheus",
                    env_extra=lock_dir)  # fmt: skip
        assert res.returncode == 1, res.stdout + res.stderr
        assert res.stderr == (
            f"loggp: another loggp run (pid {first.pid}, out {tmp_path / 'a'}) is running on "
            "this machine: wait for it to end, or pass --wait-lock SECONDS\n"
        )
        assert not (tmp_path / "b").exists()
        res = loggp("run", str(exp), "--out", str(tmp_path / "b"), "--no-prometheus",
                    "--wait-lock", "0.5", env_extra=lock_dir)  # fmt: skip
        assert res.returncode == 1 and "still running after 0.5 s" in res.stderr, res.stderr
        assert f"waiting up to 0.5 s for another loggp run (pid {first.pid}" in res.stderr
        second = start_run(exp, tmp_path / "c", lock_dir, "--no-prometheus", "--wait-lock", "60")
        open_gate(tmp_path / "gate")
        assert first.wait(60) == 0, first.communicate()
        assert second.wait(60) == 0, second.communicate()
    finally:
        for run in (first, second):
            if run is not None and run.poll() is None:
                run.kill()
    (tmp_path / "first").rmdir()  # the next run's first point blocks on the gate again
    third = start_run(exp, tmp_path / "d", lock_dir, "--no-prometheus")
    wait_until(lambda: point_started(third, tmp_path), "the third run's point")
    third.kill()
    third.communicate()
    res = loggp("run", str(exp), "--out", str(tmp_path / "e"), "--no-prometheus",
                "--no-report", env_extra=lock_dir)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
