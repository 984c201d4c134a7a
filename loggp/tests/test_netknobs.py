"""A network level's delays swept as knobs: names, refusals, the plan, each point's network."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.plan.experiment import Experiment, ExperimentError, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.plan.sweep import Point, expand
from loggp.plan.topology import pair_table
from loggp.run.launch import point_launch

pytestmark = pytest.mark.unit

HEAD = "version: 1\nname: t\n"
NETWORK = (
    "network:\n"
    "  nodes: 4\n"
    "  levels:\n"
    "    - {name: node}\n"
    "    - {name: rack, size: 2, latency: 50us}\n"
)
ONE = "workloads:\n  - {name: a, program: PROG, ranks: 4}\n"


def exp(sweep: str, network: str = NETWORK, program: str = "p") -> Experiment:
    text = HEAD + network + "sweep:\n" + sweep + ONE.replace("PROG", program)
    return parse_experiment(text, "f.yaml")


def setting(p: Point) -> str:
    """The point id's middle: what its sweep set (a bulk gap's unit has a '/' too)."""
    return p.point_id.removeprefix(f"{p.workload.name}/").removesuffix(f"/r{p.repeat}")


def rack_latency_us(p: Point) -> int:
    """What leaving a rack adds between ranks 0 and 2 (block: nodes 0 and 2) at point p."""
    return pair_table(p.network, 4)[0][2].latency_ns // 1000


def test_one_at_a_time_each_point_on_its_own_network() -> None:
    plan = expand(exp("  knobs:\n    network.rack.latency: [20us, 100us]\n    latency: [5us]\n"))
    assert [p.point_id for p in plan] == [
        "a/baseline/r0",
        "a/network.rack.latency=20us/r0",
        "a/network.rack.latency=100us/r0",
        "a/latency=5us/r0",
    ]
    assert [p.sweep_knob for p in plan] == [
        "baseline", "network.rack.latency", "network.rack.latency", "latency",
    ]  # fmt: skip
    assert [p.sweep_value for p in plan] == [None, 20.0, 100.0, 5.0]
    # the file's network everywhere but where the sweep sets the rack's latency
    assert [rack_latency_us(p) for p in plan] == [50, 20, 100, 50]
    assert [p.knobs.as_dict() for p in plan] == [{}, {}, {}, {"latency": "5us"}]
    # every point names the level's latency beside its knobs, as text and in report units
    assert plan[0].knob_texts() == {"network.rack.latency": "50us"}
    assert plan[3].knob_values() == {"latency": 5.0, "network.rack.latency": 50.0}
    assert plan[1].knob_values() == {"network.rack.latency": 20.0}
    assert [p.label() for p in plan] == [
        "all knobs 0", "network.rack.latency=20us", "network.rack.latency=100us", "latency=5us",
    ]  # fmt: skip


def test_gap_and_bulk_gap_and_ranges() -> None:
    plan = expand(
        exp(
            "  knobs:\n    network.rack.gap: {from: 1us, to: 4us, steps: 4}\n"
            "    network.node.bulk_gap: [2ns/B]\n"
        )
    )
    assert [setting(p) for p in plan] == [
        "baseline", "network.rack.gap=1us", "network.rack.gap=2us", "network.rack.gap=3us",
        "network.rack.gap=4us", "network.node.bulk_gap=2ns/B",
    ]  # fmt: skip
    table = [pair_table(p.network, 4) for p in plan]
    assert [t[0][2].gap_ns for t in table] == [0, 1000, 2000, 3000, 4000, 0]
    # leaving a node: ranks 0 and 1 (nodes 0 and 1), and the rack's path takes it too
    assert [(t[0][1].bulk_gap_fs, t[0][2].bulk_gap_fs) for t in table][-1] == (2_000_000,) * 2
    assert plan[-1].sweep_value == 2.0 and plan[-1].knob_values()["network.node.bulk_gap"] == 2.0


def test_grid_combines_knobs_and_network_knobs() -> None:
    plan = expand(
        exp(
            "  mode: grid\n  knobs:\n    latency: [1us, 2us]\n"
            "    network.rack.latency: [0us, 9us]\n"
        )
    )
    assert [setting(p) for p in plan] == [
        "latency=1us,network.rack.latency=0us", "latency=1us,network.rack.latency=9us",
        "latency=2us,network.rack.latency=0us", "latency=2us,network.rack.latency=9us",
    ]  # fmt: skip
    assert [rack_latency_us(p) for p in plan] == [0, 9, 0, 9]
    assert {p.sweep_knob for p in plan} == {"grid"}


def test_a_network_knob_is_not_a_bandwidth_knob() -> None:
    """The registry's bulk_gap-or-bandwidth rule is the endpoint's: a level's bulk gap is a
    link of its own, swept beside the port's bandwidth."""
    plan = expand(exp("  knobs:\n    network.rack.bulk_gap: [1ns/B]\n    bandwidth: [1MB/s]\n"))
    assert [p.sweep_knob for p in plan][1:] == ["network.rack.bulk_gap", "bandwidth"]


@pytest.mark.parametrize(
    ("sweep", "network", "message"),
    [
        ("network.rak.latency: [1us]", NETWORK,
         "f.yaml:10: key 'sweep.knobs.network.rak.latency': unknown level 'rak' in "
         "network.rak.latency: expected one of node, rack (network.levels)"),
        ("network.rack.size: [2]", NETWORK,
         "f.yaml:10: key 'sweep.knobs.network.rack.size': unknown knob 'network.rack.size': "
         "expected network.rack.latency, network.rack.gap or network.rack.bulk_gap"),
        ("network.rack.latency: [1us]", "",
         "f.yaml:5: key 'sweep.knobs.network.rack.latency': unknown knob "
         "'network.rack.latency': the experiment has no network"),
        ("network.rack.latency: [10]", NETWORK,
         "f.yaml:10: key 'sweep.knobs.network.rack.latency[0]': value 10 of "
         "network.rack.latency has no unit: expected <number>{ns|us|ms|s}"),
        ("network.rack.bulk_gap: [1us]", NETWORK,
         "f.yaml:10: key 'sweep.knobs.network.rack.bulk_gap[0]': bad value '1us' for "
         "LOGGP_BULK_GAP: expected <number>{ps/B|ns/B|us/B}"),
        ("network.rack.latency: {from: 0us, to: 1ms, steps: 3, scale: log}", NETWORK,
         "f.yaml:10: key 'sweep.knobs.network.rack.latency.from': a log range needs both ends "
         "above zero"),
        ("network.rack.gap: 1us", NETWORK,
         "f.yaml:10: key 'sweep.knobs.network.rack.gap': expected a list of network.rack.gap "
         "values with units"),
    ],
    ids=["level", "delay", "no-network", "no-unit", "unit", "log", "not-a-list"],
)  # fmt: skip
def test_refusals_are_one_line(sweep: str, network: str, message: str) -> None:
    with pytest.raises(ExperimentError) as e:
        exp(f"  knobs:\n    {sweep}\n", network=network)
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_each_point_launches_on_its_own_pair_table(tmp_path: Path, fake_build: Path) -> None:
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    e = exp("  knobs:\n    network.rack.latency: [20us]\n", program=str(prog))
    for p in expand(e):
        point = tmp_path / str(p.seq)
        point.mkdir()
        launch = point_launch(e, p.workload, KnobSet(), point, None, network=p.network)
        lines = Path(launch.env["LOGGP_TOPOLOGY"]).read_text().splitlines()
        want = 50_000 if p.sweep_knob == "baseline" else 20_000
        assert f"0 2 {want} 0 0" in lines and len(lines) == 2 + 8, lines
