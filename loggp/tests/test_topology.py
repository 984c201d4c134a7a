"""The experiment's network: per-pair derivation, placement, the pair table, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from loggp.cli.show import settings_table
from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.plan.topology import (
    NAMES_SUFFIX,
    Network,
    Pair,
    node_table,
    pair_table,
    path,
    table_text,
    write_pair_table,
)

pytestmark = pytest.mark.unit

HEAD = "version: 1\nname: t\n"
ONE = "workloads:\n  - {name: a, program: prog, ranks: 4}\n"
TWO_RACKS = (
    "network:\n"
    "  nodes: 4\n"
    "  placement: PLACE\n"
    "  levels:\n"
    "    - {name: node, latency: 0us}\n"
    "    - {name: rack, size: 2, latency: 50us}\n"
)


def network(text: str, workloads: str = ONE):
    return parse_experiment(HEAD + text + workloads, "f.yaml").network


def lat(table: list[list[Pair]]) -> list[list[int]]:
    return [[p.latency_ns // 1000 for p in row] for row in table]


@pytest.mark.parametrize(
    "place, want",
    [
        ("block", [[0, 0, 50, 50], [0, 0, 50, 50], [50, 50, 0, 0], [50, 50, 0, 0]]),
        ("round-robin", [[0, 0, 50, 50], [0, 0, 50, 50], [50, 50, 0, 0], [50, 50, 0, 0]]),
        ("[0, 2, 1, 3]", [[0, 50, 0, 50], [50, 0, 50, 0], [0, 50, 0, 50], [50, 0, 50, 0]]),
    ],
)
def test_two_racks_one_rank_a_node(place: str, want: list[list[int]]) -> None:
    assert lat(pair_table(network(TWO_RACKS.replace("PLACE", place)), 4)) == want


def test_block_and_round_robin_differ_with_two_ranks_a_node() -> None:
    net = network(TWO_RACKS.replace("PLACE", "block").replace("nodes: 4", "nodes: 2"))
    # nodes 0 and 1 are one rack: leaving a node costs 0, so every pair adds nothing
    assert lat(pair_table(net, 4)) == [[0] * 4] * 4
    three = (
        "network:\n  nodes: 4\n  placement: PLACE\n  levels:\n"
        "    - {name: node, latency: 1us}\n    - {name: rack, size: 2, latency: 50us}\n"
    )
    block = pair_table(network(three.replace("PLACE", "block")), 8)
    rr = pair_table(network(three.replace("PLACE", "round-robin")), 8)
    assert [block[0][d].latency_ns for d in range(8)] == [0, 0, 1000, 1000] + [51000] * 4
    assert [rr[0][d].latency_ns for d in range(8)] == [0, 1000, 51000, 51000] * 2


def test_path_sums_latency_and_takes_largest_gap_and_bulk_gap() -> None:
    net = Network.model_validate(
        {
            "nodes": 8,
            "levels": [
                {"name": "node", "latency": "1us", "gap": "2us", "bulk_gap": "0.1ns/B"},
                {"name": "rack", "size": 2, "latency": "10us", "gap": "1us", "bulk_gap": "0.5ns/B"},
                {"name": "pod", "size": 2, "latency": "100us", "gap": "3us"},
            ],
        }
    )
    assert path(net, 0, 0) == Pair(0, 0, 0)
    assert path(net, 0, 1) == Pair(1000, 2000, 100_000)
    assert path(net, 0, 2) == Pair(11000, 2000, 500_000)
    assert path(net, 0, 4) == Pair(111000, 3000, 500_000)
    assert path(net, 5, 1) == path(net, 1, 5) == Pair(111000, 3000, 500_000)


RING = (
    "network:\n"
    "  nodes: 4\n"
    "  links:\n"
    "    - {between: [0, 1], latency: 10us}\n"
    "    - {between: [1, 2], latency: 10us, bulk_gap: 1ns/B}\n"
    "    - {between: [2, 3], latency: 10us, gap: 2us}\n"
    "    - {between: [3, 0], latency: 25us}\n"
)


def test_links_route_each_pair_by_least_latency() -> None:
    """A ring 0-1-2-3-0: 0 to 3 takes the direct 25 µs link over 0-1-2-3 (30 µs); 0 to 2
    takes 0-1-2 (20 µs) over 0-3-2 (35 µs), with the largest gap and bulk gap on that
    route; each pair's delays are the same both ways."""
    net = network(RING)
    assert path(net, 0, 3) == path(net, 3, 0) == Pair(25_000, 0, 0)
    assert path(net, 0, 2) == path(net, 2, 0) == Pair(20_000, 0, 1_000_000)
    assert path(net, 1, 3) == Pair(20_000, 2000, 1_000_000)  # 1-2-3 (20) over 1-0-3 (35)
    table = pair_table(net, 4)
    assert lat(table) == [[0, 10, 20, 25], [10, 0, 10, 20], [20, 10, 0, 10], [25, 20, 10, 0]]
    assert all(table[s][d] == table[d][s] for s in range(4) for d in range(4))


def test_links_on_one_node_add_nothing() -> None:
    net = network(RING.replace("nodes: 4", "nodes: 4\n  placement: [0, 0, 2, 2]"))
    two = [[0, 0, 20, 20]] * 2  # ranks 0 and 1 on node 0, 2 and 3 on node 2
    assert lat(pair_table(net, 4)) == two + [[20, 20, 0, 0]] * 2


def test_pair_table_file_lists_pairs_that_add(tmp_path: Path) -> None:
    table = pair_table(network(TWO_RACKS.replace("PLACE", "block")), 4)
    stale = tmp_path / ("pairs.txt" + NAMES_SUFFIX)
    stale.mkdir()
    (stale / "0").write_text("old\n")
    out = write_pair_table(tmp_path / "pairs.txt", table)
    lines = out.read_text().splitlines()
    assert lines[0].startswith("#") and lines[1] == "ranks 4"
    assert sorted(lines[2:]) == sorted(
        f"{s} {d} 50000 0 0" for s in range(4) for d in range(4) if (s < 2) != (d < 2)
    )
    assert list(stale.iterdir()) == [], "a run starts with no published address"


@pytest.mark.parametrize(
    "text, msg",
    [
        (
            TWO_RACKS.replace("PLACE", "star"),
            r"f.yaml:5: key 'network.placement': bad placement 'star': expected block, "
            "round-robin or a list",
        ),
        (
            TWO_RACKS.replace("PLACE", "[0, 1, 2, 4]"),
            r"node 4 does not exist: expected nodes 0 to 3 \(nodes: 4\)",
        ),
        (
            TWO_RACKS.replace("PLACE", "[0, 1]"),
            r"f.yaml:10: workloads\[0\].ranks: 4 ranks but placement maps 2: "
            "expected a node for every rank",
        ),
        (
            TWO_RACKS.replace("PLACE", "block").replace("size: 2, ", ""),
            r"levels\[1\] \(rack\) needs size: how many groups of node one rack holds",
        ),
        (
            TWO_RACKS.replace("PLACE", "block").replace("latency: 50us", "latency: 50"),
            r"f.yaml:8: key 'network.levels\[1\].latency': bad value '50' for "
            r"LOGGP_LATENCY: expected <number>\{ns\|us\|ms\|s\}",
        ),
        (
            TWO_RACKS.replace("PLACE", "block").replace("latency: 50us", "hops: 2"),
            r"unknown key 'network.levels\[1\].hops' \(accepted keys: name, size, latency, "
            "gap, bulk_gap\\)",
        ),
        (
            TWO_RACKS.replace("PLACE", "block").replace("name: rack", "name: node"),
            "level names must be unique: node repeated",
        ),
        (
            TWO_RACKS.replace("PLACE", "block").replace("latency: 50us", "bulk_gap: 5"),
            r"f.yaml:8: key 'network.levels\[1\].bulk_gap': bad value '5' for "
            r"LOGGP_BULK_GAP: expected <number>\{ps/B\|ns/B\|us/B\}",
        ),
        (
            TWO_RACKS.replace("PLACE", "block").replace("nodes: 4", "nodes: 0"),
            r"key 'network.nodes': Input should be greater than or equal to 1",
        ),
        (
            RING + TWO_RACKS.replace("network:\n  nodes: 4\n  placement: PLACE\n", ""),
            r"key 'network': expected levels \(a hierarchy, from the node up\) or links",
        ),
        (
            RING.replace("[3, 0], latency: 25us", "[3, 4], latency: 25us"),
            r"links\[3\]: node 4 does not exist: expected nodes 0 to 3 \(nodes: 4\)",
        ),
        (RING.replace("[3, 0]", "[1, 0]"), r"links\[3\]: nodes 1 and 0 are joined twice"),
        (RING.replace("[3, 0]", "[3, 3]"), r"links\[3\]: joins node 3 to itself"),
        (
            RING.replace("nodes: 4", "nodes: 5"),
            "links: node 4 has no path to node 0: every node needs a path to every other",
        ),
        (
            RING.replace("latency: 25us", "latency: 25us, hops: 1"),
            r"unknown key 'network.links\[3\].hops' \(accepted keys: between, latency, gap, "
            "bulk_gap\\)",
        ),
    ],
)
def test_refusals_are_one_line(text: str, msg: str) -> None:
    with pytest.raises(ExperimentError, match=msg) as e:
        network(text)
    assert "\n" not in str(e.value)


def test_network_needs_the_fabric_shim_the_wire_on_a_testbed_or_smpi() -> None:
    racks = TWO_RACKS.replace("PLACE", "block")
    with pytest.raises(
        ExperimentError, match="expected emulator.shim fabric, wire or smpi, not none"
    ):
        network("emulator: {shim: none}\n" + racks)
    with pytest.raises(ExperimentError, match="node i is the namespace testbed's host i, the "
                       "wire's port i: expected launcher kind netns, not mpirun"):  # fmt: skip
        network("emulator: {shim: wire}\n" + racks)
    assert network("launcher: {kind: netns}\nemulator: {shim: wire}\n" + racks) is not None
    smpi = "emulator: {shim: smpi}\n"
    assert network(smpi + TWO_RACKS.replace("PLACE", "block")) is not None
    with pytest.raises(ExperimentError, match="SMPI simulates a network given by levels"):
        network(smpi + RING)
    gapped = TWO_RACKS.replace("PLACE", "block").replace("latency: 50us", "gap: 1us")
    with pytest.raises(ExperimentError, match="level rack's gap cannot be simulated"):
        network(smpi + gapped)
    swept = "sweep: {knobs: {network.rack.gap: [1us]}}\n"
    with pytest.raises(ExperimentError, match="knob 'network.rack.gap' cannot be simulated"):
        network(smpi + swept + TWO_RACKS.replace("PLACE", "block"))


def test_show_names_the_network_beside_the_sweep() -> None:
    text = HEAD + TWO_RACKS.replace("PLACE", "round-robin") + ONE
    console = Console(record=True, width=400)
    console.print(settings_table(parse_experiment(text, "f.yaml"), "f.yaml"))
    (row,) = [line for line in console.export_text().splitlines() if "network" in line]
    assert '"nodes":4' in row and '"placement":"round-robin"' in row and '"name":"rack"' in row


def test_node_table_gives_the_wire_pairs_of_nodes_whatever_the_placement() -> None:
    net = network(TWO_RACKS.replace("PLACE", "[3, 3, 3, 3]"))
    assert lat(node_table(net)) == [[0, 0, 50, 50]] * 2 + [[50, 50, 0, 0]] * 2
    lines = table_text(node_table(net)).splitlines()
    assert lines[1] == "ranks 4" and len(lines) == 2 + 8
