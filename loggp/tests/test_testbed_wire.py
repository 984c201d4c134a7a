"""shim: wire without a testbed: experiment validation, launcher refusals, and the control
protocol requests the runner and `loggp testbed set` send."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from loggp.net.testbed import State
from loggp.net.wirectl import (
    WireControl,
    WireControlError,
    restore_request,
    set_request,
    wire_request,
)
from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.plan.sweep import expand
from loggp.run.launch import LaunchError, point_launch, preflight
from loggp.run.proctree import Identity
from loggp.run.runner import RunOptions, run_point
from loggp.run.wirerun import WireSchedule, WireSession

pytestmark = pytest.mark.unit


def _exp(launcher: str, emulator: str, sweep: str = "") -> str:
    return (
        f"version: 1\nname: t\nlauncher: {launcher}\nemulator: {emulator}\n{sweep}"
        "workloads: [{name: a, program: sh, ranks: 2}]\n"
    )


def test_wire_experiment_loads() -> None:
    exp = parse_experiment(
        _exp(
            "{kind: netns, prefix: tb1, slots: 2}",
            "{shim: wire, baseline: {latency: 10us}}",
            "sweep: {knobs: {latency: [100us], bandwidth: [100Mbit/s], gap: [1us]}}\n",
        ),
        "w.yaml",
    )
    assert exp.launcher.netns_prefix == "tb1" and exp.launcher.slots == 2


@pytest.mark.parametrize(
    ("launcher", "emulator", "sweep", "message"),
    [
        ("{kind: netns}", "{shim: wire}", "sweep: {knobs: {overhead: [1us]}}\n",
         "w.yaml:5: key 'sweep.knobs.overhead': knob 'overhead' has no meaning on the wire"),
        ("{kind: netns}", "{shim: wire, baseline: {send_overhead: 1us}}", "",
         "w.yaml:4: key 'emulator.baseline.send_overhead': knob 'send_overhead' has no"),
        ("{kind: mpirun, prefix: x}", "{shim: fabric}", "",
         "key 'launcher': prefix is only read by launcher 'netns'"),
        ("{kind: netns, prefix: Bad}", "{shim: wire}", "", "bad testbed prefix 'Bad'"),
        ("{kind: netns, slots: 0}", "{shim: wire}", "", "key 'launcher.slots'"),
    ],
)  # fmt: skip
def test_wire_experiment_refusals(launcher: str, emulator: str, sweep: str, message: str) -> None:
    with pytest.raises(ExperimentError, match=message.replace("(", r"\(")):
        parse_experiment(_exp(launcher, emulator, sweep), "w.yaml")


@pytest.mark.parametrize(
    ("launcher", "emulator", "message"),
    [
        ("{kind: local}", "{shim: wire}", "use launcher: {kind: netns}"),
        ("{kind: mpirun}", "{shim: wire}",
         "or launcher: {kind: ansible} or {kind: slurm} with an inventory"),
        ("{kind: netns}", "{shim: wire, provider: shm}", "cannot cross network namespaces"),
        ("{kind: netns, prefix: nosuch}", "{shim: wire}",
         "launcher 'netns' needs the namespace testbed 'nosuch' up: no testbed 'nosuch' is up"),
    ],
)  # fmt: skip
def test_launch_refusals(
    launcher: str, emulator: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path))
    exp = parse_experiment(_exp(launcher, emulator), "w.yaml")
    with pytest.raises(LaunchError, match=message.replace("{", r"\{").replace("}", r"\}")):
        preflight(exp, None)


def test_set_request_full_and_partial() -> None:
    full = set_request(KnobSet.parse({"latency": "1ms"}), full=True)
    assert full == {"cmd": "set", "latency": "1ms", "gap": "0ns", "bulk_gap": "0ns/B"}
    bw = set_request(KnobSet.parse({"bandwidth": "100Mbit/s"}), full=True, port=1)
    assert bw == {"cmd": "set", "port": 1, "latency": "0ns", "gap": "0ns", "bandwidth": "100Mbit/s"}
    assert set_request(KnobSet.parse({"gap": "2us"}), full=False) == {"cmd": "set", "gap": "2us"}
    with pytest.raises(WireControlError, match="knob 'overhead' has no meaning on the wire"):
        set_request(KnobSet.parse({"overhead": "1us"}), full=True)


def test_restore_request_reproduces_a_port() -> None:
    cfg = {
        "port": 1, "name": "net_af_packet1", "latency_ns": 1500, "jitter_ns": 0, "gap_ns": 7,
        "bulk_gap_fs": 80000, "burst_bytes": 65536, "queue_pkts": 1000,
        "queue_bytes": 4194304, "loss": 0.25,
    }  # fmt: skip
    assert restore_request(cfg) == {
        "cmd": "set", "port": 1, "latency": "1500ns", "jitter": "0ns", "gap": "7ns",
        "bulk_gap": "80ps/B", "loss": 0.25, "burst": 65536, "queue_pkts": 1000,
        "queue_bytes": 4194304,
    }  # fmt: skip
    assert restore_request({**cfg, "bulk_gap_fs": 1})["bulk_gap"] == "0.001ps/B"


def test_control_socket_missing_or_silent(tmp_path: Path) -> None:
    with pytest.raises(WireControlError, match="does not exist: is the testbed up"):
        wire_request(tmp_path / "none.sock", {"cmd": "get"})
    path = tmp_path / "silent.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)
    try:
        with pytest.raises(WireControlError, match=r"did not answer 'get' within 0\.2 s"):
            wire_request(path, {"cmd": "get"}, timeout=0.2)
    finally:
        srv.close()
    with pytest.raises(WireControlError, match="cannot connect to the wire control socket"):
        wire_request(path, {"cmd": "get"})


def test_control_errors_are_passed_on(tmp_path: Path) -> None:
    """A peer speaking the protocol: a refusal becomes one line, the connection goes on."""
    path = tmp_path / "ctl.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)
    answers = [b'{"ok":false,"error":"unknown key \'lat\'"}\n', b'{"ok":true,"ports":[]}\n']

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            f = conn.makefile("rb")
            for answer in answers:
                f.readline()
                conn.sendall(answer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        with WireControl(path, timeout=5) as ctl:
            with pytest.raises(WireControlError, match="loggp-wire refused 'set': unknown key"):
                ctl.request({"cmd": "set", "lat": "1us"})
            assert ctl.request({"cmd": "get"}) == {"ok": True, "ports": []}
    finally:
        t.join(5)
        srv.close()


def test_netns_launch_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against a testbed state whose 'wire' is this process (so it counts as running)."""
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path / "run"))
    me = os.getpid()
    st = State(prefix="ut", hosts=3, ready=True)
    st.wire = Identity.of(me)
    st.save()
    text = _exp("{kind: netns, prefix: ut, slots: 2}", "{shim: wire}")
    exp = parse_experiment(text.replace("ranks: 2", "ranks: 4"), "w.yaml")
    point = tmp_path / "p"
    point.mkdir()
    launch = point_launch(exp, exp.workloads[0], KnobSet.parse({"latency": "5us"}), point, None)
    argv = launch.argv
    if len(os.sched_getaffinity(0) - {0}) > 0:
        assert argv[:2] == ["taskset", "-c"] and "0" not in argv[2].split(",")
        argv = argv[3:]
    assert Path(argv[0]).name == "ip" and argv[1:4] == ["netns", "exec", "ut-h0"]
    assert Path(argv[4]).name == "mpirun"
    assert argv[argv.index("--hostfile") + 1] == str(point / "hostfile")
    assert argv[argv.index("plm_rsh_agent") + 1] == str(point / "rsh-agent")
    assert argv[argv.index("-n") + 1] == "4" and argv[argv.index("--map-by") + 1] == "node"
    assert argv[argv.index("btl") + 1] == "self,tcp"
    assert argv[argv.index("oob_tcp_if_include") + 1] == "eth0"
    assert launch.env["FI_TCP_IFACE"] == "eth0" and "FI_HOOK" not in launch.env
    assert "LOGGP_LATENCY" not in launch.env  # the wire, not the shim, adds the delay
    assert (point / "hostfile").read_text().count("slots=2") == 3


def test_point_fails_clearly_when_the_testbed_went_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path / "run"))
    exp = parse_experiment(_exp("{kind: netns, prefix: gone}", "{shim: wire}"), "w.yaml")
    p = expand(exp)[0]
    opts = RunOptions(wire=WireSession("gone"))
    rec = run_point(exp, p, tmp_path, opts)
    assert rec.status == "failed" and rec.exit_code is None
    assert "cannot set the point's knobs on the wire: no testbed 'gone' is up" in rec.stderr_tail
    assert (tmp_path / "points" / "0" / "stderr").read_text().startswith("loggp: cannot set")
    assert not (tmp_path / "points" / "0" / "command").exists()  # nothing was launched


class _StatsControl:
    """A stand-in for the wire's control connection that answers every request with ports."""

    def __init__(self, ports: list[dict[str, object]]) -> None:
        self.ports = ports

    def __enter__(self) -> _StatsControl:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def request(self, req: dict[str, object]) -> dict[str, object]:
        return {"ok": True, "ports": self.ports}


def test_record_stores_the_change_of_the_ports_lateness(monkeypatch: pytest.MonkeyPatch) -> None:
    def port(releases: int, hist0: int, max_ns: int) -> dict[str, object]:
        return {
            "port": 0, "tx_pkts": releases + 1, "drops": {"queue": 0}, "queue_depth_max": 3,
            "releases": releases, "late_ns": 10 * releases, "late_max_ns": max_ns,
            "late_over_10us": 0, "early_releases": 0,
            "late_hist_us": [hist0, releases - hist0] + [0] * 14,
        }  # fmt: skip

    before, after = port(10, 10, 500), port(25, 12, 9000)
    session = WireSession("ut")
    monkeypatch.setattr(session, "_control", lambda: _StatsControl([after]))
    (got,) = session.record([{"port": 0, "latency_ns": 1000}], [before])
    assert got["shim"] == "wire" and got["latency_ns"] == 1000
    assert (got["tx_pkts"], got["releases"], got["late_ns"]) == (15, 15, 150)
    assert got["late_hist_us"] == [2, 13] + [0] * 14
    assert got["late_max_ns"] == 9000  # a maximum since the wire started, as queue_depth_max
    assert got["early_releases"] == 0


class _PairsControl(_StatsControl):
    """Records the requests; answers stats with ports counting pairs per source."""

    def __init__(self, ports: list[dict[str, object]]) -> None:
        super().__init__(ports)
        self.requests: list[dict[str, object]] = []

    def request(self, req: dict[str, object]) -> dict[str, object]:
        self.requests.append(req)
        return {"ok": True, "ports": self.ports, "pairs": 2}


def test_a_network_reaches_the_wire_as_pairs_of_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _exp("{kind: netns, prefix: ut}", "{shim: wire}") + (
        "network:\n  nodes: 2\n  levels:\n    - {name: node, latency: 7us}\n"
    )
    exp = parse_experiment(text, "w.yaml")
    ctl = _PairsControl([{"port": 0, "pair_pkts": [0, 9], "pair_latency_ns": [0, 63000]}])
    session = WireSession("ut")
    monkeypatch.setattr(session, "_control", lambda: ctl)
    session.apply(KnobSet.parse({}), exp.network)
    (pairs,) = [r for r in ctl.requests if r["cmd"] == "pairs"]
    lines = str(pairs["table"]).splitlines()
    assert lines[1:] == ["ranks 2", "0 1 7000 0 0", "1 0 7000 0 0"]
    before = [{"port": 0, "pair_pkts": [0, 4], "pair_latency_ns": [0, 28000]}]
    (got,) = session.record([{"port": 0}], before)
    assert got["pair_pkts"] == [0, 5] and got["pair_latency_ns"] == [0, 35000]
    ctl.requests.clear()
    session.apply(KnobSet.parse({}), None)  # a point without the network takes them away
    assert {"cmd": "pairs", "table": ""} in ctl.requests
    ctl.requests.clear()
    session.apply(KnobSet.parse({}), None)  # and then leaves the wire alone
    assert [r["cmd"] for r in ctl.requests] == ["set", "stats"]


def test_a_network_places_each_rank_on_its_nodes_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGGP_RUN_DIR", str(tmp_path / "run"))
    st = State(prefix="ut", hosts=3, ready=True)
    st.wire = Identity.of(os.getpid())
    st.save()
    net = "network:\n  nodes: 3\n  placement: [2, 0]\n  levels:\n    - {name: node}\n"
    exp = parse_experiment(_exp("{kind: netns, prefix: ut}", "{shim: wire}") + net, "w.yaml")
    point = tmp_path / "p"
    point.mkdir()
    argv = point_launch(exp, exp.workloads[0], KnobSet.parse({}), point, None).argv
    assert argv[argv.index("--rankfile") + 1] == str(point / "rankfile")
    assert "--map-by" not in argv
    ranks = [line.split()[1] for line in (point / "rankfile").read_text().splitlines()]
    assert ranks == ["0=10.231.0.3", "1=10.231.0.1"]
    big = parse_experiment(
        _exp("{kind: netns, prefix: ut}", "{shim: wire}") + net.replace("nodes: 3", "nodes: 4"),
        "w.yaml",
    )
    with pytest.raises(LaunchError, match=r"network: 4 nodes on a testbed of 3 hosts: .*"
                       r"expected at most 3 nodes \(loggp testbed up 4\)"):  # fmt: skip
        point_launch(big, big.workloads[0], KnobSet.parse({}), point, None)


def test_a_schedule_becomes_whole_settings_from_the_points_knobs() -> None:
    base = KnobSet.parse({"latency": "5us", "bulk_gap": "1ns/B"})
    lines = [("0s", "gap", "2us"), ("1s", "latency", "50us"), ("1s", "bandwidth", "1GB/s")]
    sched = WireSchedule(base, lines)
    assert sched.first().as_dict() == {"latency": "5us", "bulk_gap": "1ns/B", "gap": "2us"}
    assert [(at, k.as_dict()) for at, k in sched.steps[1:]] == [
        (10**9, {"latency": "50us", "gap": "2us", "bandwidth": "1GB/s"})
    ]
    assert WireSchedule(base, [("3s", "latency", "1us")]).first() == base
    with pytest.raises(WireControlError, match="knob 'overhead' has no meaning on the wire"):
        WireSchedule(base, [("1s", "overhead", "1us")])
