"""Hostile values, second round (docs/reliability.md): YAML tags, NUL bytes, durations past
their cap, unterminated placeholders, malformed run.json files, junk in the shim's counter
files, statistics files that are FIFOs or devices, `--wait-lock nan`.  Each gets one line
naming what is wrong and what is accepted, no traceback, no hang, no lost point, and no
run.json left `running`."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUILD, PROGS, base_env
from hostile_util import (
    RESULT,
    experiment_file,
    one_line_error,
    run,
    sh_workload,
    stored,
    within,
)

from loggp.cli.main import main
from loggp.errors import LoggpError
from loggp.plan.experiment import parse_experiment
from loggp.results.judge import lateness
from loggp.results.protocol import shim_stats, stats_problem
from loggp.results.rundir import RunDirError, read_run
from loggp.tests.cli import judged_ok, loggp

WORKLOAD = "workloads:\n  - {name: w, kind: process, ranks: 1, program: /bin/true}\n"
SERVICE = "services:\n  - {name: s, program: /bin/true, ready: p%s}\n"


def refused(text: str, *parts: str) -> str:
    """parse_experiment refuses text with one line naming file:line and every part."""
    with pytest.raises(LoggpError) as info:
        parse_experiment(text, "exp.yaml")
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("exp.yaml:"), msg
    for part in parts:
        assert part in msg, msg
    return msg


# --- 1. YAML tags and values their tags cannot hold ----------------------------------------

TAGS = {
    "int_text": ("seed: !!int abc", "'abc' is not a valid !!int"),
    "unknown_tag": ("description: !foo bar", "tag !foo is not accepted"),
    "bad_date": ("description: !!timestamp 2001-13-45", "is not a valid !!timestamp"),
    "float_text": ("timeout: !!float abc", "'abc' is not a valid !!float"),
    "digits_5000": ("seed: " + "9" * 5000, "is not a valid !!int"),
    "binary": ("description: !!binary aGk=", "tag !!binary is not accepted"),
    "set": ("description: !!set {a, b}", "tag !!set is not accepted"),
    "python": ("description: !!python/object:os.system x", "!!python/object:os.system"),
    "tagged_list": ("description: !foo [1]", "tag !foo is not accepted"),
}


@pytest.mark.unit
@pytest.mark.parametrize("case", TAGS.values(), ids=TAGS.keys())
def test_yaml_tags_and_values_their_tag_cannot_hold(case: tuple[str, str]) -> None:
    line, fragment = case
    refused(f"version: 1\nname: t\n{line}\n{WORKLOAD}", "exp.yaml:3:", fragment)


@pytest.mark.unit
def test_a_tag_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text(f"version: 1\nname: t\nseed: !!int abc\n{WORKLOAD}")
    one_line_error(loggp("show", str(path), timeout=30), f"{path}:3:", "!!int")


# --- 2. NUL bytes -------------------------------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize(
    ("body", "line"),
    [
        ('workloads:\n  - {name: w, kind: process, program: /bin/true, args: ["a\\0b"]}', 4),
        ('output: "res\\0ults"\n' + WORKLOAD, 3),
        ('services:\n  - {name: s, program: x, ready: p, mkdir: ["/a\\0b"]}\n' + WORKLOAD, 4),
    ],
    ids=["args", "output", "mkdir"],
)
def test_nul_bytes_are_refused_at_load(body: str, line: int) -> None:
    refused(f"version: 1\nname: t\n{body}\n", f"exp.yaml:{line}:", "NUL byte")


@pytest.mark.unit
def test_a_nul_byte_from_a_ready_line_fails_its_point_only(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """A service's ready group holds a NUL byte, which reaches the workload's arguments at
    run time: that point fails naming it, the next one runs, run.json is not `running`."""
    svc = "printf 'ready p=a\\000b\\n'; exec sleep 60"
    exp = experiment_file(
        tmp_path,
        "services:\n"
        f"  - {{name: s, program: /bin/sh, args: [-c, {json.dumps(svc)}], "
        "ready: 'ready p=(?P<p>\\S+)'}\n"
        "workloads:\n"
        "  - {name: a, kind: process, ranks: 1, program: /bin/echo, args: ['${service.s.p}']}\n"
        + sh_workload("b", f"echo '{RESULT}'").replace("b,", "b, services: [],"),
    )
    out = tmp_path / "run"
    got = stored(run(exp, out, lock_dir), out, 1)
    assert got["a"].status == "failed" and "null byte" in (got["a"].stderr_tail or "")
    assert judged_ok(got["b"]), got["b"]
    assert json.loads((out / "run.json").read_text())["state"] == "failed"


# --- 7. durations past their cap ----------------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("timeout: 3000000h\n" + WORKLOAD, "'timeout'"),
        (SERVICE % ", ready_timeout: 3000000h" + WORKLOAD, "'services[0].ready_timeout'"),
        (SERVICE % ", stop_timeout: 3000000h" + WORKLOAD, "'services[0].stop_timeout'"),
        (WORKLOAD.replace("}", ", timeout: 99999999min}"), "'workloads[0].timeout'"),
    ],
    ids=["timeout", "ready_timeout", "stop_timeout", "workload_timeout"],
)
def test_durations_past_a_day_are_refused(body: str, key: str) -> None:
    refused(f"version: 1\nname: t\n{body}", key, "at most 24h", "MAX_DURATION_S")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("seed: 18446744073709551616\n" + WORKLOAD, "'seed'"),
        ("launcher: {kind: netns}\n" + SERVICE % ", hosts: [64]" + WORKLOAD, "hosts[0]"),
    ],
    ids=["seed", "hosts"],
)
def test_counts_past_their_cap_are_refused(body: str, fragment: str) -> None:
    refused(f"version: 1\nname: t\n{body}", fragment, "less than")


# --- 11. --wait-lock and --timeout values ---------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize("value", ["nan", "inf", "1e300"])
def test_wait_lock_and_timeout_refuse_nan_and_infinity(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = experiment_file(tmp_path, WORKLOAD)
    for argv in (["run", str(exp), f"--wait-lock={value}"], ["exec", f"--timeout={value}", "true"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and value in err, err
        assert "above 0" in err or "greater than zero" in err, err


# --- 12. placeholders and services' mkdir ---------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize("arg", ["${service.s", "x${point_dir", "${"])
def test_an_unterminated_placeholder_is_refused(arg: str) -> None:
    body = SERVICE % "" + WORKLOAD.replace("}", f", args: ['{arg}']}}")
    refused(f"version: 1\nname: t\n{body}", "exp.yaml:6:", "unterminated placeholder", "$$")


@pytest.mark.unit
def test_a_failed_mkdir_fails_its_point_and_the_run_goes_on(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    exp = experiment_file(
        tmp_path,
        "services:\n  - {name: s, program: /bin/sh, args: [-c, 'echo up; exec sleep 60'], "
        "ready: up, mkdir: ['/dev/null/sub']}\n"
        "workloads:\n"
        + sh_workload("a", f"echo '{RESULT}'")
        + sh_workload("b", f"echo '{RESULT}'").replace("b,", "b, services: [],"),
    )
    out = tmp_path / "run"
    got = stored(run(exp, out, lock_dir), out, 1)
    assert got["a"].status == "failed", got["a"]
    assert "cannot mkdir /dev/null/sub: Not a directory" in (got["a"].stderr_tail or "")
    assert judged_ok(got["b"]), got["b"]
    assert json.loads((out / "run.json").read_text())["state"] == "failed"


# --- 3. run.json ----------------------------------------------------------------------------

BAD_RUN_FILES = {
    "list": (b"[]", "expected a JSON object, found list"),
    "only_version": (b'{"loggp_run": 1}', "key 'name': Field required"),
    "newer_version": (b'{"loggp_run": 2}', "this loggp reads run files of version 1"),
    "not_utf8": (b'{"name": "caf\xe9"}', "not UTF-8 text: byte 0xe9 at offset 13"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
    "huge_int": (b'{"loggp_run": ' + b"9" * 5000 + b"}", "not valid JSON"),
}


@pytest.fixture
def good_run(tmp_path: Path, lock_dir: dict[str, str]) -> Path:
    """A finished run of one ok point."""
    exp = experiment_file(tmp_path, "workloads:\n" + sh_workload("w", f"echo '{RESULT}'"))
    out = tmp_path / "run"
    res = run(exp, out, lock_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    return out


@pytest.mark.unit
def test_report_of_a_malformed_run_json_is_one_line(
    good_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((good_run / "run.json").read_text())
    cases = dict(BAD_RUN_FILES)
    for name, windows in {"short_window": [1.0], "text_window": ["a", "b"]}.items():
        bad = {**doc, "windows": {"p": windows}}
        cases[name] = (json.dumps(bad).encode(), "key 'windows.p")
    for name, (data, fragment) in cases.items():
        (good_run / "run.json").write_bytes(data)
        assert main(["report", str(good_run)]) != 0, name
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("loggp: "), (name, err)
        assert str(good_run / "run.json") in err and fragment in err, (name, err)


@pytest.mark.unit
def test_unknown_run_json_keys_are_named_and_kept(good_run: Path, lock_dir: dict[str, str]) -> None:
    """A run.json of a newer loggp, with a key this one does not know: the report is
    drawn, the key named; --resume keeps it."""
    doc = json.loads((good_run / "run.json").read_text())
    (good_run / "run.json").write_text(json.dumps({**doc, "cgroup_limits": {"pids": 64}}))
    res = loggp("report", str(good_run), timeout=60)
    assert res.returncode == 0, res.stderr
    assert "ignoring key(s) this loggp does not know: cgroup_limits" in res.stderr
    res = loggp("run", "--resume", "--out", str(good_run), "--no-prometheus", "--no-report",
                env_extra=lock_dir)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert json.loads((good_run / "run.json").read_text())["cgroup_limits"] == {"pids": 64}


# --- 8. junk in the shim's counter file -----------------------------------------------------


@pytest.mark.integration
def test_junk_in_the_stats_file_is_named_and_the_point_kept(
    tmp_path: Path, lock_dir: dict[str, str]
) -> None:
    """Workloads that append junk to $LOGGP_STATS_FILE, or make it a FIFO: each point is
    stored with its value, the junk named in its stderr tail."""
    junk = {
        "text": ('{"msgs": "lots"}', "key 'msgs': expected a whole number"),
        "inf": ('{"late_max_ns": 1e999}', "key 'late_max_ns': expected a whole number"),
        "hist": ('{"late_hist_us": [1, 2]}', "key 'late_hist_us'"),
    }
    workloads = "".join(
        sh_workload(n, f"echo '{line}' >> \"$LOGGP_STATS_FILE\"; echo '{RESULT}'")
        for n, (line, _) in junk.items()
    )
    workloads += sh_workload(
        "fifo", f'rm -f "$LOGGP_STATS_FILE"; mkfifo "$LOGGP_STATS_FILE"; echo \'{RESULT}\''
    )
    exp = experiment_file(tmp_path, "workloads:\n" + workloads)
    exp.write_text(exp.read_text().replace("{shim: none}", "{shim: fabric}"))
    out = tmp_path / "run"
    got = stored(run(exp, out, {**lock_dir, "LOGGP_BUILD": str(BUILD)}, timeout=90), out, 0)
    for name, (_, reason) in junk.items():
        assert judged_ok(got[name]) and got[name].value == 1.0, got[name]
        assert "not the shim's counters" in got[name].stderr_tail, got[name].stderr_tail
        assert reason in got[name].stderr_tail, got[name].stderr_tail
    assert judged_ok(got["fifo"]), got["fifo"]
    assert "is not a regular file" in got["fifo"].stderr_tail


# --- 10. statistics files that are not regular files ---------------------------------------


def _capped_memory() -> None:
    """A loggp that reads /dev/full without end fails within 4 GiB, not the machine's."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.unit
@pytest.mark.parametrize("kind", ["fifo", "/dev/full", "/dev/null"])
def test_exec_refuses_a_stats_file_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """A FIFO nobody reads would block the check's open for ever; /dev/full would be read
    without end."""
    path = tmp_path / "fifo" if kind == "fifo" else Path(kind)
    if kind == "fifo":
        os.mkfifo(path)
    ran = tmp_path / "ran"
    argv = [sys.executable, "-m", "loggp", "exec", "--stats", str(path), "--", "touch", str(ran)]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                         preexec_fn=_capped_memory)  # fmt: skip
    assert res.returncode == 2 and res.stderr == (
        f"loggp: exec: cannot write --stats: {path} is not a regular file (the shim appends "
        "its counters to a regular file)\n"
    ), res.stderr[-2000:]
    assert not ran.exists()


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["fifo", "/dev/full"])
def test_the_shim_refuses_a_stats_file_that_is_not_a_regular_file(
    shim_so: Path, tmp_path: Path, kind: str
) -> None:
    """LOGGP_STATS_FILE a FIFO nobody reads (would block fi_domain for ever) or /dev/full
    (would lose the counters with exit 0): fi_domain fails, naming it."""
    path = tmp_path / "fifo" if kind == "fifo" else Path(kind)
    if kind == "fifo":
        os.mkfifo(path)
    env = {**base_env(), "FI_PROVIDER_PATH": str(shim_so.parent), "FI_HOOK": "loggp",
           "LOGGP_STATS_FILE": str(path)}  # fmt: skip
    prog = [str(PROGS / "fi_sendtime"), "-p", "tcp;ofi_rxm", "-n", "10"]
    res = subprocess.run(prog, env=env, capture_output=True, text=True, timeout=30)
    assert res.returncode != 0, res.stdout
    assert f"cannot write LOGGP_STATS_FILE '{path}': not a regular file" in res.stderr
    assert "fi_domain" in res.stderr


@pytest.mark.unit
def test_the_python_side_reads_no_fifo(tmp_path: Path) -> None:
    """loggp exec's summary and the runner read counters through shim_stats: a FIFO in
    their place is named, never opened blocking."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    problems: list[str] = []
    with within(10, "shim_stats"):
        assert shim_stats(fifo, 0, problems) == []
    assert problems == [f"{fifo} is not a regular file (the shim appends its counters to a "
                        "regular file)"]  # fmt: skip


# --- every entry point against a corpus of malformed inputs ----------------------------------

_NOISE = list(":{}[],&*!|>'\"%@`#-? \t\n\0\\$") + ["!!int ", "<<: ", "\xe9", "\u2028", "9" * 5000]


def _mutants(text: str, seed: int, count: int) -> list[str]:
    """text cut at every 17th character, and count copies with one to three random
    insertions, deletions or replacements of YAML's and JSON's significant characters."""
    rnd = random.Random(seed)
    out = [text[:n] for n in range(0, len(text), 17)]
    for _ in range(count):
        t = text
        for _ in range(rnd.randint(1, 3)):
            at = rnd.randrange(len(t))
            noise = rnd.choice(_NOISE)
            t = rnd.choice(
                [t[:at] + noise + t[at:], t[:at] + t[at + 1 :], t[:at] + noise + t[at + 1 :]]
            )
        out.append(t)
    return out


@pytest.mark.unit
def test_the_loader_answers_every_malformed_file_with_one_line() -> None:
    """The built-in suite and an experiment with services, mutated: each is an experiment
    or a LoggpError of one line, never another exception."""
    services = (
        "version: 1\nname: t\nservices:\n"
        "  - {name: s, program: x, count: 2, ready: 'p=(?P<p>\\d+)',"
        " mkdir: ['${point_dir}/d${index}'], ready_timeout: 5s}\nworkloads:\n"
        "  - {name: w, program: y, args: ['${service.s[1].p}', '$$x'], timeout: 1min}\n"
    )
    suite = (Path(__file__).parents[2] / "loggp" / "suites" / "default.yaml").read_text()
    for source in (services, suite):
        for text in _mutants(source, seed=32, count=300):
            try:
                parse_experiment(text, "exp.yaml")
            except LoggpError as e:
                assert "\n" not in str(e) and str(e).startswith("exp.yaml"), (text, e)


@pytest.mark.unit
def test_run_json_and_stats_readers_answer_every_malformed_file(
    good_run: Path, tmp_path: Path
) -> None:
    """A real run.json and a real counter line, mutated: read_run gives a RunRecord or a
    RunDirError; shim_stats keeps only lines of the shim's types, never raises."""
    path = good_run / "run.json"
    text = path.read_text()
    for mutant in _mutants(text, seed=32, count=200):
        path.write_text(mutant)
        try:
            read_run(good_run)
        except RunDirError as e:
            assert "\n" not in str(e), e
    line = json.dumps({"pid": 7, "provider": "tcp", "msgs": 3, "late_max_ns": 12,
                       "late_hist_us": [1] + [0] * 15})  # fmt: skip
    stats = tmp_path / "stats.jsonl"
    stats.write_text("\n".join(_mutants(line, seed=32, count=300)) + "\n")
    problems: list[str] = []
    for obj in shim_stats(stats, 0, problems):
        assert stats_problem(obj) is None
        assert lateness([obj]) is None or lateness([obj]).releases >= 0
