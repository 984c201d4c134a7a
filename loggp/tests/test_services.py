"""An experiment's services: started before each point beneath its knobs, ready values in
the workload's arguments, stopped after it; failures named (loggp/run/services.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.results.reader import read_points
from loggp.results.store import STORE_FILE
from loggp.tests.cli import judged_ok, loggp

pytestmark = pytest.mark.unit

SERVICE = Path(__file__).with_name("fake_service.py")

# A workload that reports its arguments as its result's extra field.
WORKLOAD = """import json, sys
result = {"loggp_result": 1, "workload": "args", "valid": True, "ranks": 1,
          "metrics": {"time_s": 1.0}}
print(json.dumps({**result, "args": sys.argv[1:]}))
"""


def script(tmp: Path, name: str, argv: str) -> Path:
    prog = tmp / name
    prog.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
    prog.chmod(0o755)
    return prog


def experiment(tmp: Path, mode: str = "", count: int = 2, ready_timeout: str = "20s") -> Path:
    svc = script(tmp, "svc", f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVICE))}")
    (tmp / "wl.py").write_text(WORKLOAD)
    wl = script(tmp, "wl", f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp / 'wl.py'))}")
    extra = f", {mode}" if mode else ""
    path = tmp / "exp.yaml"
    path.write_text(
        "version: 1\nname: svc\n"
        f"output: {tmp / 'results'}\ntimeout: 20s\n"
        "launcher: {kind: local}\n"
        "sweep: {knobs: {latency: [10us]}}\n"
        "services:\n"
        f"  - {{name: srv, program: {svc}, count: {count}, ready_timeout: {ready_timeout},\n"
        "     mkdir: ['${point_dir}/inst-${index}'],\n"
        f"     args: ['{tmp}', '${{index}}'{extra}],\n"
        "     ready: 'serving port=(?P<port>\\d+)'}\n"
        "workloads:\n"
        f"  - {{name: w, kind: process, ranks: 1, program: {wl},\n"
        "     args: ['${service.srv.port}', '${service.srv[1].host}', '${point_dir}', '$$x']}\n"
    )
    return path


def rows(run_dir: Path) -> list[dict]:
    return [p.row for p in read_points(run_dir / STORE_FILE)[1]]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_services_around_every_point(fake_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = loggp("run", str(experiment(tmp_path)), "--out", str(out), "--no-prometheus",
                "--no-report")  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    by_id = {r["point_id"]: r for r in rows(out)}
    assert all(judged_ok(r) for r in by_id.values()), by_id
    point = by_id["w/latency=10us/r0"]
    seq = point["seq"]
    args = json.loads(point["result"])["args"]
    assert args == ["4000", "127.0.0.1", str((out / "points" / str(seq)).resolve()), "$x"]
    # each instance ran beneath the last point's knobs, got SIGTERM and has exited
    for i in range(2):
        assert (tmp_path / f"svc-{i}.env").read_text() == "10us\nstopped\n"
        assert not alive(int((tmp_path / f"svc-{i}.pid").read_text()))
        log = out / "points" / str(seq) / f"service-srv-{i}.log"
        assert log.read_text() == f'serving port={4000 + i}\n{{"served": {i}}}\n'
        assert (out / "points" / str(seq) / f"inst-{i}").is_dir()
    counters = (out / "points" / str(seq) / "services.jsonl").read_text().splitlines()
    assert [json.loads(c) for c in counters] == [
        {"service": "srv", "instance": i, "counters": {"served": i}} for i in (0, 1)
    ]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("early", r"service srv\[0\] exited with status 2: cannot open the store .*before it "
                  "was ready"),
        ("silent", r"service srv\[0\] printed no line matching 'serving port=\(\?P<port>\\\\d\+\)'"
                   " within 1 s"),
        ("dies", r"service srv\[0\] exited with status 3: serving port=4000 .*while the point "
                 "ran"),
    ],
)  # fmt: skip
def test_service_failures_fail_the_point(
    fake_build: Path, tmp_path: Path, mode: str, message: str
) -> None:
    out = tmp_path / "run"
    exp = experiment(tmp_path, mode, ready_timeout="1s")
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", "--no-report")
    assert res.returncode != 0
    stored = rows(out)
    assert stored and {r["status"] for r in stored} == {"failed"}
    assert re.search(message, stored[0]["stderr_tail"]), stored[0]["stderr_tail"]
    for i in range(2):
        pid = tmp_path / f"svc-{i}.pid"
        assert not pid.exists() or not alive(int(pid.read_text()))


@pytest.mark.parametrize(
    ("services", "args", "message"),
    [
        ("[]", "['${service.kv.port}']",
         r"workloads\[0\].args: \$\{service.kv.port\} names no service started before"),
        ("[{name: kv, program: x, ready: 'port=(?P<port>\\d+)'}]", "['${service.kv.addr}']",
         r"service kv gives host, port"),
        ("[{name: kv, program: x, ready: 'p'}]", "['${service.kv[1].host}']",
         r"service kv has 1 instance"),
        ("[{name: kv, program: x, ready: 'p'}]", "['${pointdir}']",
         r"unknown placeholder \$\{pointdir\} \(accepted: point_dir, service.NAME\[I\].FIELD\)"),
        ("[{name: kv, program: x, ready: '(p'}]", "[]", r"bad pattern '\(p'"),
        ("[{name: kv, program: x, ready: p, hosts: [1]}]", "[]",
         r"testbed hosts need launcher: \{kind: netns\}"),
        ("[{name: kv, program: x, ready: p, args: ['${service.kv.host}']}]", "[]",
         r"services\[0\].args: \$\{service.kv.host\} names no service started before"),
        ("[{name: kv, program: x, ready: 'port=(?P<port>\\d+)', metrics: '${host}:${prt}'}]",
         "[]", r"services\[0\].metrics: unknown placeholder \$\{prt\} \(accepted: count, host, "
         r"index, point_dir, port, service"),
        ("[{name: kv, program: x, ready: p}]", "[], services: [nope]",
         r"workloads\[0\].services: no service nope \(those declared: kv\)"),
        ("[{name: kv, program: x, ready: p}]", "['${service.kv.host}'], services: []",
         r"names no service started before \(those: none\)"),
    ],
)  # fmt: skip
def test_placeholders_checked_at_load(services: str, args: str, message: str) -> None:
    text = (
        "version: 1\nname: x\nlauncher: {kind: local}\n"
        f"services: {services}\n"
        f"workloads:\n  - {{name: w, program: p, args: {args}}}\n"
    )
    with pytest.raises(ExperimentError, match=message):
        parse_experiment(text, "exp.yaml")


def test_each_workload_gets_the_services_it_names() -> None:
    exp = parse_experiment(
        "version: 1\nname: x\n"
        "services: [{name: a, program: x, ready: p}, {name: b, program: x, ready: p}]\n"
        "workloads:\n  - {name: all, program: p}\n  - {name: none, program: p, services: []}\n"
        "  - {name: b, program: p, services: [b]}\n",
        "exp.yaml",
    )
    assert [[s.name for s in exp.services_of(w)] for w in exp.workloads] == [["a", "b"], [], ["b"]]
