"""Nothing escapes a run, second round (docs/reliability.md): a workload that kills its
keeper, a ready pattern that backtracks for ever, output without end, a full disk, and the
interface libfabric's tcp provider binds to.  Every wait is on an event (a file, a process'
end), never a sleep; every process a test starts is gone when it ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_util import (
    RESULT,
    experiment_file,
    kill_all,
    live,
    one_line_error,
    run,
    sh_workload,
    start_run,
    stored,
    wait_until,
)

from loggp.results.reader import read_points
from loggp.results.store import STORE_FILE
from loggp.run import cgroup
from loggp.run.capture import MAX_STREAM_BYTES

pytestmark = pytest.mark.integration


def daemon(pid_file: Path) -> str:
    """Shell that starts `sleep 600` in a session of its own, its pid in pid_file (for
    the placeholder syntax, $$ is written $$$$)."""
    tmp = f"{pid_file}.tmp"
    return f"setsid sh -c 'echo $$$$ > {tmp}; mv {tmp} {pid_file}; exec sleep 600' & "


def pids_in(*files: Path) -> list[int]:
    return [int(f.read_text()) for f in files if f.exists()]


# --- 5. a workload that kills its keeper ----------------------------------------------------


def test_a_workload_that_kills_its_keeper_leaves_nothing(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """`kill -9 0` (the workload's process group) and `kill -9 $PPID` (its keeper): the
    daemon each started in a session of its own does not outlive its point."""
    files = [tmp_path / "pid.group", tmp_path / "pid.parent"]
    wait = "while [ ! -e {f} ]; do sleep 0.01; done; "
    exp = experiment_file(
        tmp_path,
        "workloads:\n"
        + sh_workload("group", daemon(files[0]) + wait.format(f=files[0]) + "kill -9 0")
        + sh_workload("parent", daemon(files[1]) + wait.format(f=files[1]) + "kill -9 $$PPID"),
    )
    out = tmp_path / "run"
    try:
        got = stored(run(exp, out, lock_dir), out, 1)
        pids = pids_in(*files)
        assert len(pids) == 2, got
        assert live(pids) == [], f"still running: {live(pids)}"
    finally:
        kill_all(pids_in(*files))
    containment = json.loads((out / "run.json").read_text())["provenance"]["containment"]
    if cgroup.detect().kind == "keeper":
        assert containment.startswith("keeper"), containment
    else:
        assert containment.startswith(("cgroup2", "freezer")), containment
        assert "outlived the point's keepers" in got["parent"].stderr_tail


@pytest.mark.unit
def test_without_a_cgroup_file_system_the_keeper_is_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("proc /proc proc rw 0 0\n")
    monkeypatch.setattr(cgroup, "_MOUNTS", mounts)
    c = cgroup.detect()
    assert (c.kind, c.base) == ("keeper", None)
    assert c.describe() == "keeper: the keeper alone ends each tree (no cgroup file system mounted)"


# --- 4. a ready pattern that backtracks -----------------------------------------------------


def ready_experiment(tmp: Path, pattern: str, ready_timeout: str = "2s") -> Path:
    svc = "printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\\n'; exec sleep 600"
    return experiment_file(
        tmp,
        f"services:\n  - {{name: s, program: /bin/sh, args: [-c, {json.dumps(svc)}], "
        f"ready: '{pattern}', ready_timeout: {ready_timeout}}}\n"
        "workloads:\n" + sh_workload("w", f"echo '{RESULT}'"),
    )


@pytest.mark.serial
@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("^(a+)+$", "printed no line matching '^(a+)+$' within 2 s"),
        ("^(a|aa)+$", "took more than 1 s (READY_BUDGET_S) on a line of 41 bytes"),
    ],
    ids=["nested", "alternation"],
)
def test_a_backtracking_ready_pattern_fails_its_point_in_time(
    tmp_path: Path, lock_dir: dict[str, str], pattern: str, reason: str
) -> None:
    out = tmp_path / "run"
    res = run(ready_experiment(tmp_path, pattern), out, lock_dir, timeout=30)
    (point,) = stored(res, out, 1).values()
    assert point.status == "failed" and reason in point.stderr_tail, point.stderr_tail


def test_sigterm_stops_a_run_while_a_ready_pattern_backtracks(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """A pattern whose backtracking search of 41 bytes takes 2^40 steps (Python's re held the
    GIL through them, deaf to SIGTERM): the run stops on SIGTERM at once."""
    exp = ready_experiment(tmp_path, "^(a+)+$", ready_timeout="60s")
    out = tmp_path / "run"
    runner = start_run(exp, out, lock_dir, "--no-prometheus")
    log = out / "points" / "0" / "service-s-0.log"
    try:
        wait_until(lambda: runner.poll() is not None or b"b\n" in _read(log), "the service's line")
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(20) == 130, runner.communicate()
    finally:
        if runner.poll() is None:
            runner.kill()
        runner.communicate()
    assert json.loads((out / "run.json").read_text())["state"] == "interrupted"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


# --- 9. output without end ------------------------------------------------------------------


def test_endless_output_is_capped_and_never_held_in_memory(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """`exec cat /dev/zero` for 3 s, and a service that writes 300 MB without a newline
    before its ready line: the files keep their last bytes, at most MAX_STREAM_BYTES, and
    the runner's memory stays small."""
    svc = "head -c 300000000 /dev/zero; printf '\\nready\\n'; exec sleep 600"
    exp = experiment_file(
        tmp_path,
        f"services:\n  - {{name: s, program: /bin/sh, args: [-c, {json.dumps(svc)}], "
        "ready: '^ready', ready_timeout: 60s}\n"
        "workloads:\n" + sh_workload("w", "exec cat /dev/zero"),
        timeout="3s",
    )
    out = tmp_path / "run"
    # The runner's peak memory, as the peak of the children of a process that runs only it
    # (within 4 GiB of address space: a runner that reads it all fails, not the machine).
    code = (
        "import resource, subprocess, sys; "
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
        "subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    argv = [sys.executable, "-c", code, sys.executable, "-m", "loggp", "run", str(exp),
            "--out", str(out), "--no-prometheus", "--no-report"]  # fmt: skip
    res = subprocess.run(argv, env={**os.environ, **lock_dir}, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert "Traceback" not in res.stderr, res.stderr
    peak_kib = int(res.stdout.split()[-1])
    assert peak_kib < 300 * 1024, f"runner's peak RSS {peak_kib} KiB"
    point_dir = out / "points" / "0"
    for name in ("stdout", "service-s-0.log"):
        size = (point_dir / name).stat().st_size
        assert MAX_STREAM_BYTES // 2 <= size <= MAX_STREAM_BYTES + 200, (name, size)
        assert (point_dir / name).read_bytes().startswith(b"[loggp: the first "), name
    (point,) = read_points(out / STORE_FILE)[1]
    assert point.status == "timeout"
    assert "stdout cut to its tail" in point.stderr_tail and "MAX_STREAM_BYTES" in point.stderr_tail


# --- 6. a full disk -------------------------------------------------------------------------


@pytest.fixture
def tiny_fs(tmp_path: Path):
    """A tmpfs of 24 KiB, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k,nr_inodes=32", "tmpfs",
                          str(mnt)], capture_output=True, text=True)  # fmt: skip
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.needs_root
def test_a_keeper_on_a_full_disk_still_ends_its_tree(tiny_fs: Path, tmp_path: Path) -> None:
    """The keeper's records cannot be written: it says so in one line, runs the command,
    exits with its status and ends what it left."""
    fill = tiny_fs / "fill"
    with fill.open("wb") as f:
        try:
            f.write(b"\0" * (64 << 10))
        except OSError:
            pass  # full
    pid_file = tmp_path / "pid"
    keeper = [sys.executable, "-m", "loggp.run.keeper", "--parent", str(os.getpid()),
              "--record", str(tiny_fs / "pids"), "--", "/bin/sh", "-c",
              daemon(pid_file).replace("$$$$", "$$") + f"while [ ! -e {pid_file} ]; do sleep "
              "0.01; done; exit 3"]  # fmt: skip
    try:
        res = subprocess.run(keeper, capture_output=True, text=True, timeout=30)
        assert res.returncode == 3, res.stderr
        assert "cannot record pid" in res.stderr and "No space left on device" in res.stderr
        assert "Traceback" not in res.stderr, res.stderr
        wait_until(lambda: not live(pids_in(pid_file)), "the daemon gone", timeout=10)
    finally:
        kill_all(pids_in(pid_file))


@pytest.mark.needs_root
def test_a_run_on_a_full_disk_names_the_file_and_leaves_nothing(
    tiny_fs: Path, tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    pid_file = tmp_path / "pid"
    exp = experiment_file(
        tmp_path,
        "workloads:\n"
        + sh_workload(
            "w",
            daemon(pid_file) + f"while [ ! -e {pid_file} ]; do sleep 0.01; done; "
            f"head -c 100000 /dev/zero; echo; echo '{RESULT}'",
        ),
    )
    try:
        res = run(exp, tiny_fs / "run", lock_dir)
        assert "Traceback" not in res.stderr, res.stderr
        lines = res.stderr.strip().splitlines()
        assert res.returncode != 0 and len(lines) == 1, res.stdout + res.stderr
        assert lines[0].startswith(f"loggp: {tiny_fs / 'run'}/"), lines
        assert "No space left on device" in lines[0] or "full" in lines[0], lines
        assert live(pids_in(pid_file)) == []
        run_json = tiny_fs / "run" / "run.json"
        if run_json.exists():
            assert json.loads(run_json.read_text())["state"] == "failed"
    finally:
        kill_all(pids_in(pid_file))


# --- the interface libfabric's tcp provider binds to ---------------------------------------


def test_local_points_and_services_are_pinned_to_loopback(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """Under launcher local, the point's command and its services get FI_TCP_IFACE=lo,
    whatever the environment says: libfabric's tcp provider would bind to the first
    interface it finds, one a testbed of another run may remove meanwhile."""
    svc = 'echo "$FI_TCP_IFACE" > ${point_dir}/svc-iface; echo up; exec sleep 600'
    exp = experiment_file(
        tmp_path,
        f"services:\n  - {{name: s, program: /bin/sh, args: [-c, {json.dumps(svc)}], "
        "ready: up}\n"
        "workloads:\n"
        + sh_workload("w", 'echo "$FI_TCP_IFACE" > ${point_dir}/wl-iface; ' + f"echo '{RESULT}'"),
    )
    out = tmp_path / "run"
    res = run(exp, out, {**lock_dir, "FI_TCP_IFACE": "eth7"})
    assert res.returncode == 0, res.stdout + res.stderr
    point_dir = out / "points" / "0"
    assert (point_dir / "svc-iface").read_text() == "lo\n"
    assert (point_dir / "wl-iface").read_text() == "lo\n"


# --- limits per point -----------------------------------------------------------------------


def test_a_pids_limit_holds_for_the_whole_point(tmp_path: Path, lock_dir: dict[str, str]) -> None:
    """--point-pids 16 and a workload that forks 40 sleepers: its shell cannot fork past 16
    processes (itself and its keeper count), fails, and every one is gone after; run.json
    names the limit."""
    try:
        cgroup.detect().with_limits(cgroup.Limits(pids=16))
    except cgroup.CgroupError as e:
        pytest.skip(str(e))
    pids = tmp_path / "pids"
    fork = f"for i in $(seq 40); do sleep 600 & echo $$! >> {pids}; done; echo '{RESULT}'"
    exp = experiment_file(tmp_path, "workloads:\n" + sh_workload("w", fork))
    out = tmp_path / "run"
    started: list[int] = []
    try:
        (point,) = stored(run(exp, out, lock_dir, "--point-pids", "16"), out, 1).values()
        started = sorted({int(p) for p in pids.read_text().split()})
        assert 0 < len(started) < 16, started
        assert live(started) == []
        assert point.status == "failed" and "Cannot fork" in point.stderr_tail, point
    finally:
        kill_all(started)
    provenance = json.loads((out / "run.json").read_text())["provenance"]
    assert "limits per point: pids 16" in provenance["containment"]


def test_a_limit_the_host_cannot_enforce_is_refused_before_anything(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    try:
        cgroup.detect().with_limits(cgroup.Limits(memory=64 << 20))
    except cgroup.CgroupError:
        pass
    else:
        pytest.skip("this host enforces a memory limit per point")
    exp = experiment_file(tmp_path, "workloads:\n" + sh_workload("w", f"echo '{RESULT}'"))
    res = run(exp, tmp_path / "run", lock_dir, "--point-memory", "64M")
    one_line_error(res, "cannot limit each point's memory", "memory.max")
    assert not (tmp_path / "run").exists()


def test_a_run_ends_what_the_groups_of_dead_runners_hold(tmp_path: Path) -> None:
    """A runner killed with its keepers, and never resumed: the next run kills what its
    point's group still held and removes the group."""
    c = cgroup.detect()
    if c.base is None:
        pytest.skip(c.describe())
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that runs no more
    (group,) = cgroup.make_group(c, f"{dead.pid}-0", None)
    join = f"echo 0 > {group}/cgroup.procs; exec sleep 600"
    orphan = subprocess.Popen(["sh", "-c", join], start_new_session=True)
    try:
        wait_until(lambda: str(orphan.pid) in (group / "cgroup.procs").read_text(), "the join")
        assert cgroup.end_dead_runs(c) == 1
        assert orphan.wait(10) == -signal.SIGKILL
        assert not group.exists()
    finally:
        orphan.kill()
        orphan.wait()
        cgroup.kill_group(group)
