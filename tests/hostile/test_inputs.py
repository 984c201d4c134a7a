"""Hostile input: experiment files, result lines, providers, the wire's control socket and
Ctrl-C, each answered with one line naming what is wrong and what is accepted, never a
traceback, a hang or a point stored as ok that is not (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import BUILD, REPO, run_workload
from hostile_util import one_line_error
from netns_util import loggp as loggp_root
from netns_util import running_testbed, skip_without_netns, snapshot, unique_prefix

from loggp.results.protocol import result_line, result_problem
from loggp.results.reader import read_points
from loggp.results.store import STORE_FILE
from loggp.tests.cli import judged_ok, loggp

WORKLOAD = "workloads:\n  - {name: w, kind: process, ranks: 1, program: /bin/true}\n"


# --- experiment files -------------------------------------------------------------------


@pytest.mark.unit
def test_non_utf8_experiment_names_file_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"version: 1\nname: t\n# caf\xe9 au lait\n" + WORKLOAD.encode())
    line = one_line_error(loggp("show", str(path), timeout=30), f"{path}:3:", "byte 0xe9")
    assert "offset 24" in line and "UTF-8" in line


@pytest.mark.unit
def test_alias_bomb_is_capped(tmp_path: Path) -> None:
    """Nine levels of nine aliases: 9^9 strings if expanded; refused at the cap."""
    rows = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("version: 1\nname: t\n" + "\n".join(rows) + "\n" + WORKLOAD)
    one_line_error(loggp("show", str(path), timeout=30), str(path), "10000", "alias")


@pytest.mark.unit
def test_recursive_alias_and_deep_nesting_are_refused(tmp_path: Path) -> None:
    rec = tmp_path / "rec.yaml"
    rec.write_text("version: 1\nname: t\na: &a [1, *a]\n" + WORKLOAD)
    one_line_error(loggp("show", str(rec), timeout=30), f"{rec}:3:", "alias")
    deep = tmp_path / "deep.yaml"
    deep.write_text("version: 1\nname: t\na: " + "[" * 1000 + "]" * 1000 + "\n" + WORKLOAD)
    one_line_error(loggp("show", str(deep), timeout=30), f"{deep}", "nested")


@pytest.mark.unit
def test_endless_file_is_refused(tmp_path: Path) -> None:
    one_line_error(loggp("show", "/dev/zero", timeout=30), "/dev/zero", "MiB")


@pytest.mark.unit
def test_huge_grid_is_refused_before_expanding(tmp_path: Path) -> None:
    values = ", ".join(f"{i}ns" for i in range(10_000))
    path = tmp_path / "grid.yaml"
    path.write_text(
        "version: 1\nname: t\nsweep:\n  mode: grid\n  knobs:\n"
        f"    latency: [{values}]\n    gap: [{values}]\n" + WORKLOAD
    )
    res = loggp("show", str(path), timeout=30)
    one_line_error(res, "100000000 points", "10000 × 10000", "cap of 100000")
    assert res.stdout == ""


@pytest.mark.unit
def test_huge_grid_of_ranges_makes_no_run_directory(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    steps = "{from: 1us, to: 1ms, steps: 1000}"
    path.write_text(
        f"version: 1\nname: t\noutput: {tmp_path}\nsweep:\n  mode: grid\n  knobs:\n"
        f"    latency: {steps}\n    gap: {steps}\n" + WORKLOAD
    )
    res = loggp("run", str(path), "--out", str(tmp_path / "run"), timeout=30)
    one_line_error(res, "1000000 points", "cap of 100000")
    assert not (tmp_path / "run").exists()


# --- result lines -----------------------------------------------------------------------

GOOD = {
    "loggp_result": 1,
    "workload": "w",
    "valid": True,
    "ranks": 1,
    "metrics": {"time_s": 0.5, "rate_per_s": 2.0},
    "msgs": {"total": 4, "bytes": 32, "per_rank": [4], "critical_path": 4},
}
# name -> (what the result line changes, what the reason names)
BAD_LINES: dict[str, tuple[dict, str]] = {
    "valid_text": ({"valid": "no"}, "'valid': expected true or false, got \"no\""),
    "valid_zero": ({"valid": 0}, "'valid': expected true or false, got 0"),
    "valid_null": ({"valid": None}, "'valid': expected true or false, got null"),
    "valid_missing": ({"valid": ...}, "'valid': missing"),
    "version": ({"loggp_result": 2}, "'loggp_result': expected 1"),
    "workload": ({"workload": 7}, "'workload': expected a string"),
    "ranks": ({"ranks": 0}, "'ranks': expected a whole number above 0"),
    "metrics": ({"metrics": [1]}, "'metrics': expected an object"),
    "nan": ({"metrics": {"time_s": float("nan")}}, "'metrics.time_s': expected a finite"),
    "inf": ({"metrics": {"time_s": float("inf")}}, "'metrics.time_s': expected a finite"),
    "negative_time": ({"metrics": {"time_s": -1.0}}, "'metrics.time_s': expected a time"),
    "negative_rate": (
        {"metrics": {"time_s": 1.0, "rate_per_s": -3}},
        "'metrics.rate_per_s': expected a",
    ),
    "bool_metric": ({"metrics": {"time_s": True}}, "'metrics.time_s': expected a finite"),
    "huge_int": ({"metrics": {"time_s": 10**400}}, "'metrics.time_s': expected a finite"),
    "msgs_float": ({"msgs": {"total": 1.5}}, "'msgs.total': expected a whole number"),
    "msgs_negative": ({"msgs": {"bytes": -1}}, "'msgs.bytes': expected a whole number"),
    "per_rank": ({"msgs": {"per_rank": [1, "x"]}}, "'msgs.per_rank[1]': expected a whole"),
}


def _line(change: dict) -> str:
    obj = {**GOOD, **{k: v for k, v in change.items() if v is not ...}}
    for k in [k for k, v in change.items() if v is ...]:
        del obj[k]
    return json.dumps(obj)


@pytest.mark.unit
def test_bad_result_lines_make_invalid_points_with_the_reason(tmp_path: Path) -> None:
    """One run, one workload per bad line (echo prints it), plus one good line."""
    lines = {"good": json.dumps(GOOD)} | {n: _line(c) for n, (c, _) in BAD_LINES.items()}
    lines["huge_digits"] = '{"loggp_result": 1, "metrics": {"time_s": ' + "9" * 5000 + "}}"
    lines["deep"] = '{"loggp_result": 1, "x": ' + "[" * 20_000 + "]" * 20_000 + "}"
    workloads = "".join(
        f"  - {{name: {n}, kind: process, ranks: 1, program: {sys.executable}, args: "
        f"[-c, {json.dumps('print(' + repr(text) + ')')}]}}\n"
        for n, text in lines.items()
    )
    path = tmp_path / "lines.yaml"
    path.write_text(
        f"version: 1\nname: lines\noutput: {shlex.quote(str(tmp_path))}\ntimeout: 20s\n"
        "launcher: {kind: local}\nemulator: {shim: none}\nworkloads:\n" + workloads
    )
    out = tmp_path / "run"
    res = loggp("run", str(path), "--out", str(out), "--no-prometheus", "--no-report", timeout=60)
    assert "Traceback" not in res.stderr, res.stderr
    got = {p.workload: p for p in read_points(out / STORE_FILE)[1]}
    assert set(got) == set(lines), res.stderr + res.stdout
    assert judged_ok(got["good"]) and got["good"].value == 0.5, got["good"]
    for name, (_, reason) in BAD_LINES.items():
        p = got[name]
        assert (p.status, p.value) == ("invalid", None), (name, p.stderr_tail)
        assert f"invalid result line: key {reason}" in p.stderr_tail, (name, p.stderr_tail)
    # A line JSON cannot hold in memory as numbers or nesting is no result line at all.
    for name in ("huge_digits", "deep"):
        assert got[name].status == "failed", (name, got[name].stderr_tail)
        assert "printed no result line" in got[name].stderr_tail


@pytest.mark.integration
@pytest.mark.parametrize(
    ("name", "args"),
    [("pingpong", ["-n", "10"]), ("kap", ["-W", "20"])],  # wl_result.c; kap's own JSON
)
def test_real_workloads_keep_the_protocol(mpirun_bin: str, name: str, args: list[str]) -> None:
    proc = run_workload(mpirun_bin, name, 2, args, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = result_line(proc.stdout)
    assert result is not None and result_problem(result) is None, (proc.stdout, result)


# --- providers --------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize(
    "verb", [("calibrate", "--provider", "nosuch"), ("demo", "-p", "nosuch", "--out", "OUT")]
)
def test_unknown_provider_option_is_refused_before_anything(
    tmp_path: Path, verb: tuple[str, ...]
) -> None:
    if not shutil.which("fi_info"):
        pytest.skip("fi_info not installed (libfabric-bin)")
    args = [str(tmp_path / "out") if a == "OUT" else a for a in verb]
    res = loggp(*args, env_extra={"LOGGP_BUILD": str(BUILD)}, timeout=60)
    one_line_error(res, "provider 'nosuch'", "fi_info", "tcp;ofi_rxm", "shm")
    assert not (tmp_path / "out").exists()


@pytest.mark.integration
def test_unknown_provider_in_experiment_is_refused_before_the_first_point(
    tmp_path: Path,
) -> None:
    if not shutil.which("fi_info"):
        pytest.skip("fi_info not installed (libfabric-bin)")
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nname: p\nlauncher: {kind: local}\n"
        'emulator: {shim: none, provider: "nosuch;ofi_rxm"}\n'
        "workloads:\n  - {name: w, program: /bin/true}\n"
    )
    out = tmp_path / "run"
    res = loggp("run", str(path), "--out", str(out), "--no-prometheus", timeout=60)
    one_line_error(res, "emulator.provider", "'nosuch;ofi_rxm'", "tcp;ofi_rxm")
    assert not out.exists()


# --- the wire's control socket ----------------------------------------------------------


class _BusyFlood:
    """32 control connections (every slot) kept active with requests by a thread."""

    def __init__(self, path: Path) -> None:
        self.socks = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(32)]
        for s in self.socks:
            s.settimeout(10)
            s.connect(str(path))
            assert self._get(s), "the wire refused one of the first 32 connections"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    @staticmethod
    def _get(s: socket.socket) -> bool:
        s.sendall(b'{"cmd":"get"}\n')
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                return False
            data += chunk
        return b'"ok":true' in data

    def _loop(self) -> None:
        # Every connection active every few tenths of a second: well inside the wire's
        # 2 s, without taking the CPU the command under test needs.
        while not self.stop.wait(0.2):
            for s in self.socks:
                self._get(s)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)
        for s in self.socks:
            s.close()


@pytest.mark.serial
@pytest.mark.integration
@pytest.mark.needs_root
def test_control_flood_is_named_and_idle_connections_give_way() -> None:
    """Every control slot taken: `testbed set` says so in one line naming the socket (not
    "Broken pipe"); once the flood goes idle for 2 s, set gets a slot again."""
    skip_without_netns()
    with running_testbed(2) as tb:
        control = Path(f"/run/loggp/testbed-{tb.prefix}.sock")
        flood = _BusyFlood(control)
        try:
            flood.thread.start()
            res = tb.set("--latency", "1ms")
            one_line_error(res, str(control), "too many control connections (32 open)")
            flood.stop.set()
            flood.thread.join(30)
            time.sleep(2.2)  # the stimulus: the flood idle past the wire's 2 s
            res = tb.set("--latency", "1ms")
            assert res.returncode == 0, res.stderr
        finally:
            flood.close()


# --- Ctrl-C during `loggp testbed up` ---------------------------------------------------


def _up(prefix: str, *python: str) -> subprocess.Popen[str]:
    """`loggp testbed up 3` in a process group of its own, as a terminal runs it, so
    that SIGINT reaches it and its children as Ctrl-C does."""
    return subprocess.Popen(
        [sys.executable, *python, "-m", "loggp", "testbed", "up", "3", "--prefix", prefix],
        env=dict(os.environ, LOGGP_BUILD=str(BUILD)), cwd=REPO, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip


def _state(prefix: str) -> dict:
    path = Path(f"/run/loggp/testbed-{prefix}.json")
    try:
        return json.loads(path.read_text() or "{}")
    except (FileNotFoundError, ValueError):  # not yet written, or being replaced
        return {}


def _leftovers(prefix: str) -> set[str]:
    """Namespaces and interfaces of testbed prefix that exist (other testbeds may come
    and go meanwhile: other tests, other users)."""
    ns, links = snapshot()
    return {n for n in ns | links if n.startswith((f"{prefix}-", f"{prefix}w"))}


def _until(what: str, done, up: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert up.poll() is None, f"up ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        time.sleep(0.005)


@pytest.mark.serial
@pytest.mark.integration
@pytest.mark.needs_root
def test_repeated_ctrl_c_during_up_removes_everything() -> None:
    """Ctrl-C once the wire runs, and again while up is undoing what it made: everything
    is removed and one line says so."""
    skip_without_netns()
    prefix = unique_prefix()
    up = _up(prefix)
    try:
        _until("the wire in the state file", lambda: _state(prefix).get("wire"), up)
        os.killpg(up.pid, signal.SIGINT)
        _until("undoing", lambda: not _state(prefix).get("wire"), up)
        os.killpg(up.pid, signal.SIGINT)
        os.killpg(up.pid, signal.SIGINT)
        out, err = up.communicate(timeout=60)
        assert up.returncode == 130 and "Traceback" not in err, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("loggp: interrupted"), err
        assert f"testbed '{prefix}'" in lines[0] and "removed" in lines[0], err
        assert _leftovers(prefix) == set()
        assert not list(Path("/run/loggp").glob(f"testbed-{prefix}[.-]*"))  # state, log
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait(10)
        loggp_root("testbed", "down", "--prefix", prefix)


@pytest.mark.serial
@pytest.mark.integration
@pytest.mark.needs_root
def test_early_ctrl_c_is_one_line() -> None:
    """Ctrl-C while Python is still importing loggp's modules (seen in -X importtime's
    output): one line, no traceback, nothing made."""
    skip_without_netns()
    prefix = unique_prefix()
    up = _up(prefix, "-X", "importtime")
    try:
        assert up.stderr is not None
        for line in up.stderr:
            if "rich.console" in line:  # the tables, imported by loggp.cli.main
                break
        else:
            pytest.fail("no import of rich.console seen")
        os.killpg(up.pid, signal.SIGINT)
        _, err = up.communicate(timeout=60)
        own = [ln for ln in err.splitlines() if not ln.startswith("import time:")]
        assert own == ["loggp: interrupted"], err[-3000:]
        assert up.returncode in (130, -signal.SIGINT)
        assert _leftovers(prefix) == set() and _state(prefix) == {}
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait(10)
        loggp_root("testbed", "down", "--prefix", prefix)
