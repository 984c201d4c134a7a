"""The simulated platform of shim smpi: the mapping of the stack and the knobs onto SimGrid's
platform and SMPI's settings, the calibration files it reads, the experiment file's keys."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.plan.platform import UNLIMITED_BPS, Platform, PlatformError, Stack, hostfile
from loggp.plan.topology import Network
from loggp.run.smpi import SmpiError, read_calibration
from loggp.tests.cli import loggp

pytestmark = pytest.mark.unit

STACK = Stack(o_s_ns=2000, o_r_ns=3000, latency_ns=10_000, bulk_gap_ns_per_byte=0.5)


def cfg(platform: Platform) -> dict[str, str]:
    return dict(c.removeprefix("--cfg=").split(":", 1) for c in platform.config())


def test_the_stack_alone_maps_o_L_and_G() -> None:
    p = Platform.of(STACK, KnobSet())
    assert p.send_overhead_s == pytest.approx(2e-6)
    assert p.recv_overhead_s == pytest.approx(3e-6)
    assert p.link_latency_s == pytest.approx(5e-6)  # two links a route: L/2 each
    assert p.bandwidth_Bps == pytest.approx(2e9)
    c = cfg(p)
    assert c["smpi/os"] == c["smpi/ois"] == "0:2e-06:0"
    assert c["smpi/or"] == "0:3e-06:0"
    # SimGrid's own corrections off: the wire is exactly L and G, one crossing a message
    assert c["smpi/lat-factor"] == c["smpi/bw-factor"] == "0:1"
    assert c["network/TCP-gamma"] == "0" and c["network/crosstraffic"] == "0"
    # no rendezvous, which would charge no o from 64 KiB on
    assert int(c["smpi/send-is-detached-thresh"]) == 2**31 - 1


def test_knobs_add_to_the_stack() -> None:
    knobs = KnobSet.parse({"send_overhead": "10us", "recv_overhead": "1us", "latency": "100us"})
    p = Platform.of(STACK, knobs)
    assert p.send_overhead_s == pytest.approx(12e-6)
    assert p.recv_overhead_s == pytest.approx(4e-6)
    assert p.link_latency_s == pytest.approx(55e-6)
    both = Platform.of(STACK, KnobSet.parse({"overhead": "5us"}))
    assert (both.send_overhead_s, both.recv_overhead_s) == pytest.approx((7e-6, 8e-6))


@pytest.mark.parametrize("knob, value", [("bulk_gap", "1.5ns/B"), ("bandwidth", "500MB/s")])
def test_bulk_gap_and_bandwidth_add_their_time_per_byte(knob: str, value: str) -> None:
    p = Platform.of(STACK, KnobSet.parse({knob: value}))
    extra = 1.5 if knob == "bulk_gap" else 2.0  # ns/B
    assert p.bandwidth_Bps == pytest.approx(1e9 / (0.5 + extra))


def test_gap_is_refused() -> None:
    with pytest.raises(PlatformError, match="no per-message gap"):
        Platform.of(STACK, KnobSet.parse({"gap": "1us"}))


def test_the_stacks_trips_by_size_are_the_latency_factor() -> None:
    stack = Stack(2000, 3000, 10_000, 0.5, trips=((0, 1), (131073, 3)))
    assert cfg(Platform.of(stack, KnobSet()))["smpi/lat-factor"] == "0:1;131073:3"
    assert stack.as_dict()["trips"] == [[0, 1], [131073, 3]]


@pytest.mark.parametrize(
    "trips, words",
    [
        (((1, 1),), "sizes from 0 up"),
        (((0, 1), (10, 2), (10, 3)), "each once"),
        (((0, 1), (10, 0)), "whole trips >= 1"),
    ],
)
def test_bad_trips_are_refused(trips, words: str) -> None:
    with pytest.raises(PlatformError, match=words):
        Stack(2000, 3000, 10_000, 0.5, trips=trips)


def test_a_stack_without_bandwidth_is_refused() -> None:
    with pytest.raises(PlatformError, match="expected above 0"):
        Stack(o_s_ns=1, o_r_ns=1, latency_ns=1, bulk_gap_ns_per_byte=0)


def _links(zone: ET.Element) -> dict[str, ET.Element]:
    return {ln.get("id", ""): ln for ln in zone.iter("link")}


def _route(zone: ET.Element, src: str, dst: str) -> list[str]:
    """The links of the one-way route from src to dst (the zone's own, not Dijkstra's)."""
    (r,) = [r for r in zone.iter("route") if (r.get("src"), r.get("dst")) == (src, dst)]
    assert r.get("symmetrical") == "NO"
    return [c.get("id", "") for c in r.iter("link_ctn")]


def test_each_rank_has_a_host_and_a_link_up_paced_by_g_and_one_down_unpaced() -> None:
    p = Platform.of(STACK, KnobSet.parse({"latency": "1us"}))
    root = ET.fromstring(p.xml(64))
    assert root.tag == "platform" and root.get("version") == "4.1"
    (zone,) = list(root)
    assert zone.tag == "zone" and zone.get("routing") == "Dijkstra"
    hosts = [h.get("id") for h in zone.iter("host")]
    assert hosts == [f"rank-{r}" for r in range(64)]
    # computation is charged at the speed SMPI measures it at
    assert {h.get("speed") for h in zone.iter("host")} == {cfg(p)["smpi/host-speed"]}
    links = _links(zone)
    assert _route(zone, "rank-3", "sw") == ["up-rank3"] and _route(zone, "sw", "rank-3") == [
        "down-rank3"
    ]
    up, down = links["up-rank3"], links["down-rank3"]
    assert up.get("latency") == down.get("latency") == "5.5e-06s"
    assert up.get("bandwidth") == "2e+09Bps" and up.get("sharing_policy") == "SHARED"
    assert down.get("bandwidth") == f"{UNLIMITED_BPS:.9g}Bps"
    assert hostfile(3) == "rank-0\nrank-1\nrank-2\n"


def test_a_networks_levels_are_routers_and_links_between_them() -> None:
    """Ranks 0 and 1 on nodes 0 and 2, in two racks: node 0's router joins rack 0's by the
    node level's links (half its latency each way), rack 0's joins the top by the rack
    level's, with its bulk gap's bandwidth, every message the whole of it (FATPIPE)."""
    net = Network.model_validate({
        "nodes": 4, "placement": [0, 2],
        "levels": [{"name": "node", "latency": "2us"},
                   {"name": "rack", "size": 2, "latency": "50us", "bulk_gap": "1ns/B"}],
    })  # fmt: skip
    zone = list(ET.fromstring(Platform.of(STACK, KnobSet()).xml(2, net)))[0]
    assert _route(zone, "rank-1", "l0-node-2") == ["up-rank1"]
    assert _route(zone, "l0-node-2", "l1-rack-1") == ["up-l0-node-2"]
    assert _route(zone, "l1-rack-1", "top") == ["up-l1-rack-1"]
    assert _route(zone, "top", "l1-rack-0") == ["down-l1-rack-0"]
    links = _links(zone)
    node, rack = links["up-l0-node-0"], links["down-l1-rack-0"]
    assert node.get("latency") == "1e-06s" and node.get("bandwidth") == f"{UNLIMITED_BPS:.9g}Bps"
    assert rack.get("latency") == "2.5e-05s" and rack.get("bandwidth") == "1e+09Bps"
    assert rack.get("sharing_policy") == "FATPIPE"
    assert "l0-node-1" not in {r.get("id") for r in zone.iter("router")}  # no rank there


RAW = {
    "tool": "loggp-calibrate",
    "version": 1,
    "provider": "tcp;ofi_rxm",
    "results": {
        "half_rtt_us": {"median": 20.0},
        "o_s_us": {"median": 2.5},
        "o_r_us": {"median": 1.5},
        "g_us": {"median": 3.0},
        "L_us": {"median": 16.0},
        "G_ns_per_B": {"value": 0.25, "r2": 0.99},
    },
}


def test_reads_the_tools_json_and_loggp_calibrates(tmp_path: Path) -> None:
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps(RAW))
    comparison = tmp_path / "cmp.json"
    comparison.write_text(
        json.dumps({"kind": "loggp-calibrate-comparison", "unshimmed": RAW, "shimmed": {}})
    )
    for path in (raw, comparison):
        stack, doc = read_calibration(path)
        assert stack == Stack(2500, 1500, 16_000, 0.25, "tcp;ofi_rxm")
        assert doc == RAW
    # A run's stored calibration carries the trips it measured beside the tool's JSON.
    raw.write_text(json.dumps({**RAW, "trips": [[0, 1], [262145, 3]]}))
    stack, _ = read_calibration(raw)
    assert stack.trips == ((0, 1), (262145, 3))


def overlapped(o_s: float, o_r: float, latency: float) -> dict:
    """RAW with these medians (µs) and the half round trip they make."""
    results = {
        **RAW["results"],
        "o_s_us": {"median": o_s},
        "o_r_us": {"median": o_r},
        "L_us": {"median": latency},
        "half_rtt_us": {"median": o_s + o_r + latency},
    }
    return {**RAW, "results": results}


def test_overheads_that_overlap_the_wire_keep_the_half_round_trip(tmp_path: Path) -> None:
    # As measured on loopback tcp: o_s 13 + o_r 7 µs against a half round trip of 17 µs.
    path = tmp_path / "c.json"
    path.write_text(json.dumps(overlapped(13.0, 7.0, -3.0)))
    stack, _ = read_calibration(path)
    assert stack.latency_ns == 0
    assert stack.o_s_ns + stack.o_r_ns == pytest.approx(17_000)
    assert stack.o_s_ns / stack.o_r_ns == pytest.approx(13 / 7)  # one factor for both
    path.write_text(json.dumps(overlapped(2.0, 1.0, -4.0)))
    with pytest.raises(SmpiError, match="no half round trip: expected a sum above 0"):
        read_calibration(path)


@pytest.mark.parametrize(
    "text, words",
    [("{", "cannot read"), ('{"tool": "other"}', "not loggp-calibrate's JSON")],
)
def test_a_bad_calibration_file_is_one_line(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(SmpiError, match=words) as e:
        read_calibration(path)
    assert "\n" not in str(e.value)


HEAD = "version: 1\nname: t\n"
WL = "workloads:\n  - {name: a, program: workloads/pingpong/pingpong, ranks: 64}\n"


def parse(text: str):
    return parse_experiment(HEAD + text + WL, "s.yaml")


def test_shim_smpi_takes_a_calibration() -> None:
    exp = parse("emulator: {shim: smpi, calibration: c.json}\n")
    assert exp.emulator.shim == "smpi" and exp.emulator.calibration == "c.json"
    assert parse("emulator: {shim: smpi}\n").emulator.calibration is None


@pytest.mark.parametrize(
    "text, words",
    [
        (
            "emulator: {shim: smpi}\nsweep: {knobs: {gap: [1us]}}\n",
            "s.yaml:4: key 'sweep.knobs.gap': knob 'gap' cannot be simulated (SMPI has no "
            "per-message gap): shim smpi takes overhead, send_overhead, recv_overhead, "
            "latency, bulk_gap or bandwidth",
        ),
        ("emulator: {shim: fabric, calibration: measure}\n", "read by shim smpi only"),
        ("emulator: {shim: smpi, latency_dist: normal:1us}\n", "one latency per link"),
        (
            "emulator: {shim: smpi}\nservices:\n  - {name: s, program: p, ready: r}\n",
            "shim smpi simulates MPI programs only",
        ),
    ],
)
def test_what_shim_smpi_refuses(text: str, words: str) -> None:
    with pytest.raises(ExperimentError, match=words.replace("(", r"\(").replace(")", r"\)")):
        parse(text)


def test_validate_sim_refuses_what_the_simulator_cannot_apply(
    fake_build: Path, tmp_path: Path
) -> None:
    exp = tmp_path / "g.yaml"
    exp.write_text(HEAD + "sweep: {knobs: {gap: [1us]}}\n" + WL)
    res = loggp("validate-sim", str(exp), cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert f"{exp} (smpi, 2 ranks):" in line and "knob 'gap' cannot be simulated" in line
    assert not (tmp_path / "results").exists()  # refused before any run
