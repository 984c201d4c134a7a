"""The namespace testbed without root: the state file, crash-safe down, pid identity,
the netns launcher's hostfile and rsh agent, and the CLI's refusals."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from loggp.cli.testbed import _ports_table
from loggp.errors import UsageError
from loggp.net import netns
from loggp.net.inventory import inventory_of
from loggp.net.testbed import (
    State,
    TestbedError,
    WireProc,
    check_prefix,
    down,
    own_files,
    require,
)
from loggp.run.launch import netns_agent, netns_hostfile
from loggp.run.proctree import Identity, proc_start_time, stop
from loggp.tests.cli import loggp

pytestmark = pytest.mark.unit


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "run"
    monkeypatch.setenv("LOGGP_RUN_DIR", str(d))
    return d


def test_state_round_trip_is_atomic(run_dir: Path) -> None:
    s = State(prefix="ut", hosts=3, control=str(run_dir / "testbed-ut.sock"))
    s.save()
    s.namespaces.append("ut-h0")
    s.wire = WireProc(pid=123, start_time=456, argv=["loggp-wire"])
    s.save()
    assert sorted(p.name for p in run_dir.iterdir()) == ["testbed-ut.json"]
    back = State.load("ut")
    assert back == s and isinstance(back.wire, WireProc)
    assert State.load("other") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "unreadable testbed state"),
        ('{"version": 99}', "not a version 1 testbed state file"),
        ('{"version": 1, "prefix": "ut", "hosts": 2, "bogus": 1}', "unexpected testbed state"),
    ],
)
def test_bad_state_file_is_named(run_dir: Path, text: str, message: str) -> None:
    run_dir.mkdir()
    (run_dir / "testbed-ut.json").write_text(text)
    with pytest.raises(TestbedError, match=message):
        State.load("ut")


def test_proc_identity_survives_pid_reuse() -> None:
    me = Identity.of(os.getpid())
    assert me is not None and me.running()
    other = Identity(me.pid, me.start_time + 1, me.argv)
    assert not other.running()  # same pid, another process: never ours
    assert stop(other, 1.0) == "not running"  # and never signalled
    # The child says when it runs its own command line: read before, its identity would be
    # the forked copy of ours, which exec then replaces.
    ready = "import sys, time; print('ready', flush=True); time.sleep(30)"
    with subprocess.Popen([sys.executable, "-c", ready], stdout=subprocess.PIPE) as child:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        ident = Identity.of(child.pid)
        assert ident is not None
        assert stop(ident, 5.0) == "stopped"  # SIGTERM was enough
        assert child.wait(5) == -15
    assert proc_start_time(child.pid) is None


def test_down_after_a_crash_touches_only_what_it_lists(run_dir: Path) -> None:
    """A state file naming things that no longer exist (and a dead wire) is cleaned up
    without error, and nothing else on the machine is looked at by name."""
    before_ns, before_links = netns.namespaces(), netns.links()
    s = State(prefix="ut", hosts=2, control=str(run_dir / "testbed-ut.sock"))
    s.namespaces = ["ut-h1"]
    s.interfaces = ["utw1"]
    assert "ut-h1" not in before_ns and "utw1" not in before_links
    with subprocess.Popen(["true"]) as dead:
        dead.wait(5)
    s.wire = WireProc(pid=dead.pid, start_time=1, argv=[])
    s.save()
    assert down("ut") == [f"loggp-wire pid {dead.pid} (not running)"]
    assert not s.path.exists()
    assert down("ut") == []  # idempotent
    assert netns.namespaces() == before_ns and netns.links() == before_links


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("namespaces", ["ut-h0", "notours"]),
        ("namespaces", ["ut-h2"]),  # past its 2 hosts
        ("interfaces", ["notours0"]),
        ("control", "precious"),
        ("log", "precious"),
        ("stats_json", "precious"),
        ("runtime_dir", "precious-dir"),
        ("prefix", "other"),
    ],
)
def test_state_naming_foreign_things_is_refused(
    run_dir: Path, tmp_path: Path, field: str, value: object
) -> None:
    """down removes what the file lists, so a file that lists anything up would not
    have created for this prefix is refused before anything is touched."""
    precious, precious_dir = tmp_path / "precious", tmp_path / "precious-dir"
    precious.write_text("keep")
    precious_dir.mkdir()
    if value in ("precious", "precious-dir"):
        value = str(tmp_path / str(value))
    State(prefix="ut", hosts=2).save()
    path = State.path_for("ut")
    doc = json.loads(path.read_text())
    doc[field] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(TestbedError, match=f"{field} .* is not something testbed 'ut' creates"):
        down("ut")
    assert path.exists() and precious.exists() and precious_dir.is_dir()


def test_require_names_the_missing_testbed(run_dir: Path) -> None:
    with pytest.raises(TestbedError, match="no testbed 'ut' is up .*loggp testbed up N"):
        require("ut")
    State(prefix="ut", hosts=2, ready=True).save()
    with pytest.raises(TestbedError, match="testbed 'ut' is not running"):
        require("ut")


@pytest.mark.parametrize("prefix", ["", "Lgp", "1x", "a-b", "abcdefghijk"])
def test_bad_prefix(prefix: str) -> None:
    with pytest.raises(UsageError, match="bad testbed prefix"):
        check_prefix(prefix)


def test_hostfile_and_agent(tmp_path: Path) -> None:
    hf = netns_hostfile("ut", 3, 2, tmp_path / "hostfile")
    assert hf.read_text() == "10.231.0.1 slots=2\n10.231.0.2 slots=2\n10.231.0.3 slots=2\n"
    agent = netns_agent("ut", 3, tmp_path / "rsh-agent")
    text = agent.read_text()
    assert os.access(agent, os.X_OK)
    assert "10.231.0.3) ns=ut-h2 ;;" in text
    # ip by its absolute path: mpirun's PATH may lack /usr/sbin
    assert text.rstrip().endswith(' netns exec "$ns" /bin/sh -c "$*"')
    assert text.rstrip().splitlines()[-1].split()[1].startswith("/")
    res = subprocess.run(
        [str(agent), "-x", "10.9.9.9", "echo", "hi"], capture_output=True, text=True, timeout=10
    )
    assert res.returncode == 255
    assert "unknown host '10.9.9.9' (testbed ut has 10.231.0.1..10.231.0.3)" in res.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["up", "1"], 2, "bad host count 1: a testbed has 2 to 64 hosts"),
        (["up", "two"], 2, "bad host count 'two'"),
        (["up", "2", "--latency", "-5us"], 2, "bad value '-5us' for --latency: expected"),
        (["up", "2", "--gap", "5"], 2, "bad value '5' for --gap: expected <number>{ns|us"),
        (["up", "2", "--bandwidth", "5Mbps"], 2, "bad value '5Mbps' for --bandwidth"),
        (["up", "2", "--loss", "1.5"], 2, "bad value '1.5' for --loss: expected a probability"),
        (["up", "2", "--bandwidth", "1Gbit/s", "--bulk-gap", "1ns/B"], 2, "not both"),
        (["up", "2", "--overhead", "1us"], 2, "unrecognized arguments: --overhead"),
        (["up", "2", "--prefix", "Bad-"], 2, "bad testbed prefix 'Bad-'"),
        (["set", "--latency", "1ms"], 1, "no testbed 'ut' is up"),
        (["set"], 2, "testbed set: no knob given"),
        (["up", "2", "--ssh", "--latency", "1ms"], 2, "testbed up --ssh starts no wire"),
        (["inventory"], 1, "no testbed 'ut' is up: loggp testbed up N --ssh"),
        (["status"], 1, "no testbed 'ut'"),
    ],
)
def test_cli_refusals(run_dir: Path, args: list[str], code: int, message: str) -> None:
    if "--prefix" not in args and args[0] != "up":
        args = [*args, "--prefix", "ut"]
    res = loggp("testbed", *args, env_extra={"LOGGP_RUN_DIR": str(run_dir)})
    assert res.returncode == code, res.stderr
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_cli_down_without_testbed(run_dir: Path) -> None:
    res = loggp("testbed", "down", "--prefix", "ut", env_extra={"LOGGP_RUN_DIR": str(run_dir)})
    assert res.returncode == 0 and "testbed ut: nothing to remove" in res.stdout


def test_up_refuses_an_existing_state(run_dir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("up checks root before the state file")
    State(prefix="ut", hosts=2).save()
    build = run_dir.parent / "build" / "emulator" / "wire"
    build.mkdir(parents=True)
    (build / "loggp-wire").write_text("#!/bin/sh\n")
    (build / "loggp-wire").chmod(0o755)
    res = loggp(
        "testbed", "up", "2", "--prefix", "ut",
        env_extra={"LOGGP_RUN_DIR": str(run_dir), "LOGGP_BUILD": str(build.parent.parent)},
    )  # fmt: skip
    assert res.returncode == 1
    assert "a testbed 'ut' exists" in res.stderr
    assert json.loads((run_dir / "testbed-ut.json").read_text())["hosts"] == 2


def test_an_ssh_testbed_lists_its_bridge_emulator_host_and_hosts_dir(run_dir: Path) -> None:
    """What up --ssh records is its own: down acts on such a state file."""
    s = State(prefix="ut", hosts=2, ssh=True, ready=True, **own_files("ut"))
    s.namespaces += ["ut-emu", "ut-h0", "ut-h1"]
    s.interfaces += ["utm", "utme", "utm0", "utm1"]
    s.save()
    assert State.load("ut") == s


def test_the_inventory_of_an_ssh_testbed(run_dir: Path) -> None:
    plain = State(prefix="ut", hosts=2, ready=True, **own_files("ut"))
    with pytest.raises(TestbedError, match="testbed 'ut' has no ssh hosts"):
        inventory_of(plain)
    doc = inventory_of(dataclasses.replace(plain, ssh=True))["all"]
    assert doc["children"]["compute"]["hosts"] == {
        "ut-h0": {"ansible_host": "10.232.0.1", "loggp_mgmt_address": "10.232.0.1",
                  "loggp_data_address": "10.231.0.1"},
        "ut-h1": {"ansible_host": "10.232.0.2", "loggp_mgmt_address": "10.232.0.2",
                  "loggp_data_address": "10.231.0.2"},
    }  # fmt: skip
    emu = doc["children"]["emulator"]["hosts"]["ut-emu"]
    assert emu["loggp_dpdk_af_packet_interfaces"] == ["utw0", "utw1"]
    assert list(doc["children"]["monitor"]["hosts"]) == ["ut-emu"]
    hosts_dir = str(run_dir / "testbed-ut-hosts")
    assert doc["vars"]["ansible_ssh_private_key_file"] == f"{hosts_dir}/ssh/id_ed25519"
    assert doc["vars"]["loggp_root"] == f"{hosts_dir}/loggp"
    # every role's files stay in the hosts directory, which down removes
    for key in ("loggp_dpdk_sysctl_file", "loggp_service_run_dir", "loggp_monitoring_data_dir"):
        assert doc["vars"][key].startswith(f"{hosts_dir}/{{{{ inventory_hostname }}}}")


def test_status_shows_knobs_in_report_units() -> None:
    ports = [
        {"port": 0, "latency_ns": 1500, "jitter_ns": 0, "gap_ns": 7, "bulk_gap_fs": 80000,
         "loss": 0.0, "queue_pkts": 1000},
        {"port": 1, "latency_ns": 0, "jitter_ns": 0, "gap_ns": 0, "bulk_gap_fs": 0,
         "loss": 0.0, "queue_pkts": 1000},
    ]  # fmt: skip
    console = Console(width=200, record=True)
    console.print(_ports_table(ports, "knobs"))
    text = console.export_text()
    assert "1.5 us" in text and "0.007 us" in text and "12500 MB/s" in text, text
    assert "unlimited" in text and "_fs" not in text and "_ns" not in text, text
