"""The shim's conformance suite: fi_conform's cases beneath the shim.

Each case (tests/progs/conform) is one libfabric API path in a process of
its own.  The bare provider's results are the reference: a case the bare
provider passes must pass beneath the shim, one it skips (the provider
lacks the feature) must be skipped beneath it too.  A case the bare
provider itself fails (a crash inside the provider) is not held against
the shim and is not run in the sanitizer build.

The sanitizer build ($LOGGP_ASAN_BUILD, default <repo>/build-asan, made by
`make test`) runs the same cases at knobs zero and non-zero with
AddressSanitizer, LeakSanitizer and UBSan; any report fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import BUILD, REPO, base_env, json_line, run

pytestmark = pytest.mark.integration

PROVIDERS = ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "tcp"]
ASAN_BUILD = Path(os.environ.get("LOGGP_ASAN_BUILD", REPO / "build-asan")).resolve()

# ΔL large enough that sends are still held when a case removes their
# address or closes their endpoint right after they completed locally.
ACTIVE = {
    "LOGGP_LATENCY": "300us",
    "LOGGP_OVERHEAD": "1us",
    "LOGGP_GAP": "2us",
    "LOGGP_BULK_GAP": "0.01ns/B",
}
KNOBS = {"zero": {}, "active": ACTIVE}
# Sends paced 20 ms apart whose real completions come 1.5 s late: a program
# asleep on a CQ's wait fd is woken for each by the shim's own signal or,
# without it, not before the real completion (a 1 s sleep the case fails).
WAKE = {"LOGGP_LATENCY": "1500ms", "LOGGP_GAP": "20ms"}
WAKE_CASES = ["wait_fd_epoll", "wait_fd_epoll_msg"]

SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
# A case bounds its own waits to 10 s; the runner kills a case at 60 s.
RUN_TIMEOUT = 900


def conform_bin(build: Path) -> Path:
    path = build / "tests" / "progs" / "conform" / "fi_conform"
    if not path.is_file():
        hint = "make build-asan" if build == ASAN_BUILD else f"cmake --build {build}"
        pytest.fail(f"fi_conform not built: {path} ({hint})")
    return path


def run_conform(
    build: Path,
    provider: str,
    env: dict[str, str],
    cwd: Path,
    cases: list[str] | None = None,
) -> tuple[dict[str, dict[str, str]], str]:
    """Runs fi_conform in cwd (where a crash leaves its files); returns its
    cases' results and its stderr."""
    cmd = [str(conform_bin(build)), "-p", provider]
    for case in cases or []:
        cmd += ["-c", case]
    proc = run(cmd, env, timeout=RUN_TIMEOUT, cwd=cwd)
    assert proc.returncode in (0, 1), f"fi_conform exit {proc.returncode}:\n{proc.stderr}"
    result = json_line(proc.stdout)
    assert result["provider"] == provider
    cases_out = result["cases"]
    assert isinstance(cases_out, dict)
    return cases_out, proc.stderr


_bare: dict[str, dict[str, dict[str, str]]] = {}


def bare_results(provider: str, cwd: Path) -> dict[str, dict[str, str]]:
    """The bare provider's results, once per session."""
    if provider not in _bare:
        _bare[provider], _ = run_conform(BUILD, provider, base_env(), cwd)
    return _bare[provider]


def shim_env(build: Path, knobs: dict[str, str], stats: Path) -> dict[str, str]:
    env = base_env()
    env["FI_PROVIDER_PATH"] = str(build / "emulator" / "fabric")
    env["FI_HOOK"] = "loggp"
    env["LOGGP_STATS_FILE"] = str(stats)
    env.update(knobs)
    return env


def assert_delayed(stats: Path) -> None:
    """The cases really ran beneath the shim, which delayed their messages."""
    assert stats.is_file(), "the shim wrote no statistics: was it loaded?"
    lines = [json.loads(line) for line in stats.read_text().splitlines() if line]
    assert any(int(s["latency_ns"]) > 0 for s in lines), lines
    # The shim's account of its own schedule: every release in the histogram,
    # none before its time, some of the sends deferred and released.
    for s in lines:
        assert sum(s["late_hist_us"]) == s["releases"], s
        assert s["early_releases"] == 0, s
    assert any(int(s["releases"]) > 0 for s in lines), lines


def compare(bare: dict[str, dict[str, str]], shimmed: dict[str, dict[str, str]]) -> list[str]:
    """Every case the bare provider passed or skipped, judged beneath the shim."""
    wrong = []
    for name, ref in bare.items():
        if ref["result"] == "fail":
            continue
        got = shimmed.get(name)
        if got is None:
            wrong.append(f"{name}: not run beneath the shim")
        elif got["result"] != ref["result"]:
            wrong.append(
                f"{name}: {got['result']} beneath the shim ({got['why']}), "
                f"{ref['result']} bare ({ref['why'] or 'ok'})"
            )
    return wrong


def test_knob_help_names_the_variables() -> None:
    """fi_info -e shows each knob's parameter with the variable that sets it."""
    fi_info = shutil.which("fi_info")
    if not fi_info:
        pytest.skip("fi_info not installed (libfabric-bin)")
    env = base_env()
    env["FI_PROVIDER_PATH"] = str(BUILD / "emulator" / "fabric")
    proc = run([fi_info, "-e"], env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    params = re.findall(r"FI_OFI_HOOK_LOGGP_([A-Z_]+): String\n# ([^\n]*)", text)
    assert len(params) >= 7, text[-2000:]
    for knob, help_text in params:
        assert f"LOGGP_{knob} " in help_text or f"LOGGP_{knob}," in help_text, help_text
    # Every variable named is one the shim reads: upper case.
    assert all(v.isupper() for v in re.findall(r"LOGGP_[A-Za-z_]+", text))


def assert_same(
    bare: dict[str, dict[str, str]], shimmed: dict[str, dict[str, str]], stderr: str
) -> None:
    wrong = compare(bare, shimmed)
    assert not wrong, "\n".join(wrong) + "\n" + stderr[-4000:]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bare_provider_runs_the_suite(provider: str, tmp_path: Path) -> None:
    """The reference is not vacuous: the bare provider passes most cases."""
    bare = bare_results(provider, tmp_path)
    passed = [n for n, r in bare.items() if r["result"] == "pass"]
    assert len(bare) >= 30, sorted(bare)
    assert len(passed) >= 10, bare


@pytest.mark.parametrize("provider", PROVIDERS)
def test_conform_beneath_active_shim(provider: str, tmp_path: Path) -> None:
    bare = bare_results(provider, tmp_path)
    stats = tmp_path / "stats.jsonl"
    shimmed, stderr = run_conform(BUILD, provider, shim_env(BUILD, ACTIVE, stats), tmp_path)
    assert_same(bare, shimmed, stderr)
    assert_delayed(stats)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_wait_fd_wakes_for_synthesised_completions(provider: str, tmp_path: Path) -> None:
    bare = {n: r for n, r in bare_results(provider, tmp_path).items() if n in WAKE_CASES}
    stats = tmp_path / "stats.jsonl"
    shimmed, stderr = run_conform(
        BUILD, provider, shim_env(BUILD, WAKE, stats), tmp_path, WAKE_CASES
    )
    assert_same(bare, shimmed, stderr)


@pytest.mark.slow
@pytest.mark.parametrize("knobs", sorted(KNOBS))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_conform_sanitized(provider: str, knobs: str, tmp_path: Path) -> None:
    bare = bare_results(provider, tmp_path)
    cases = [n for n, r in bare.items() if r["result"] != "fail"]
    env = shim_env(ASAN_BUILD, KNOBS[knobs], tmp_path / "stats.jsonl")
    env["ASAN_OPTIONS"] = "detect_leaks=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    shimmed, stderr = run_conform(ASAN_BUILD, provider, env, tmp_path, cases)
    reports = [line for line in stderr.splitlines() if any(r in line for r in SANITIZER_REPORTS)]
    assert not reports, stderr[-8000:]
    assert_same(bare, shimmed, stderr)
    if knobs == "active":
        assert_delayed(tmp_path / "stats.jsonl")
