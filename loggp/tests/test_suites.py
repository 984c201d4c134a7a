"""The suites of workloads/suites: each one loads and plans; topology.yaml compares what it
says it compares."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.plan.experiment import load_experiment
from loggp.plan.knobs import parse_knob
from loggp.plan.sweep import expand, knob_values
from loggp.plan.topology import pair_table

pytestmark = pytest.mark.unit

SUITES = Path(__file__).resolve().parents[2] / "workloads" / "suites"


@pytest.mark.parametrize("suite", sorted(SUITES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_suite_loads_and_plans(suite: Path) -> None:
    exp, _, _ = load_experiment(suite)
    assert len(expand(exp)) >= len(exp.workloads)


def test_topology_compares_rack_latency_with_the_same_latency_everywhere() -> None:
    exp, _, _ = load_experiment(SUITES / "topology.yaml")
    swept = knob_values(exp)
    assert swept["latency"] == swept["network.rack.latency"]
    assert exp.network is not None
    base = [p for p in expand(exp) if p.sweep_knob == "baseline"]
    for p in base:
        assert p.network is not None
        table = pair_table(p.network, p.workload.ranks)
        ranks = range(p.workload.ranks)
        # nothing between racks at the baseline: both sweeps start from the same point
        assert all(table[s][d].latency_ns == 0 for s in ranks for d in ranks)
    # some pairs cross the racks and some do not, the ping-pong's ranks 0 and 1 do
    rack = [p for p in expand(exp) if p.sweep_knob == "network.rack.latency"][0]
    assert rack.network is not None
    n = rack.workload.ranks
    table = pair_table(rack.network, n)
    pairs = {(s, d) for s in range(n) for d in range(s + 1, n)}
    crossing = {(s, d) for s, d in pairs if table[s][d].latency_ns}
    assert (0, 1) in crossing and crossing < pairs


def test_the_tail_suite_draws_around_topologys_latencies_without_clipping() -> None:
    tail, _, _ = load_experiment(SUITES / "topology-tail.yaml")
    topo, _, _ = load_experiment(SUITES / "topology.yaml")
    assert [w.model_dump() for w in tail.workloads] == [w.model_dump() for w in topo.workloads]
    assert knob_values(tail)["latency"] == knob_values(topo)["latency"]
    shape, spread = (tail.emulator.latency_dist or "").split(":")
    assert shape == "pareto"
    # The shape's shortest draw is 2/3 of the spread below the mean (lgp/dist.h): above 0,
    # so no draw is clipped and the mean stays ΔL.
    spread_ns = parse_knob("latency", spread)
    for latency in knob_values(tail)["latency"]:
        assert parse_knob("latency", latency) - 2 * spread_ns / 3 >= 0
