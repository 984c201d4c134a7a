"""A network through the fabric shim: per-pair latency from a two-rack topology.

Four MPI ranks over tcp;ofi_rxm (pml cm, mtl ofi) on four nodes, two racks of two nodes;
leaving a rack adds 50 µs, leaving a node nothing.  The workload's ping-pong runs between
ranks 0 and 1: placed on different racks it must gain 2×50 µs a round trip, on one rack
nothing.  The added latency is read from what the shim records per destination rank
(`pair_msgs`, `pair_latency_ns` of each rank's counter line), exactly; the wall-clock round
trips only get robust bounds on the fastest round (`half_rtt_min_us`), which a busy host
can raise but not lower: a median moved by 40 µs between two runs at a load of 12.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    base_env,
    fi_pingpong,
    mpi_over_ofi,
    mpirun_cmd,
    run,
    run_workload,
    workload_bin,
    workload_result,
)

from loggp.plan.topology import TOPOLOGY_ENV, Network, pair_table, write_pair_table

pytestmark = pytest.mark.integration

PROVIDER = "tcp;ofi_rxm"
RACK_US = 50
ROUNDS = 1000
INTER = [0, 2, 1, 3]  # rank 0 on node 0 (rack 0), rank 1 on node 2 (rack 1)
INTRA = [0, 1, 2, 3]  # ranks 0 and 1 on nodes 0 and 1: rack 0


def two_racks(placement: list[int], **rack: str) -> Network:
    return Network.model_validate(
        {
            "nodes": 4,
            "placement": placement,
            "levels": [
                {"name": "node", "latency": "0us"},
                {"name": "rack", "size": 2, **({"latency": f"{RACK_US}us"} | rack)},
            ],
        }
    )


def pingpong(
    mpirun_bin: str,
    shim,
    tmp_path: Path,
    placement: list[int] | None,
    ranks: int = 4,
    args: tuple[str, ...] = ("-n", str(ROUNDS)),
    provider: str = PROVIDER,
    **rack: str,
):
    raw = {}
    if placement is not None:
        table = pair_table(two_racks(placement, **rack), ranks)
        out = tmp_path / f"pairs-{'-'.join(map(str, placement))}.txt"
        raw[TOPOLOGY_ENV] = str(write_pair_table(out, table))
    env = shim(raw=raw)
    res = run_workload(
        mpirun_bin, "pingpong", ranks, list(args), mpi_over_ofi(provider), env.env, 120
    )
    assert res.returncode == 0, res.stdout + res.stderr
    result = workload_result(res.stdout)
    assert result["valid"] is True, result
    core = provider.split(";")[0]
    lines = [s for s in env.stats() if s.get("provider") == core]
    assert all(s["early_releases"] == 0 for s in lines), lines
    return result["metrics"]["half_rtt_min_us"], lines


def by_rank(lines: list[dict[str, Any]], n: int = 4) -> dict[int, dict[str, Any]]:
    ranks = {int(s["rank"]): s for s in lines if int(s["msgs"]) > 0}
    assert sorted(ranks) == list(range(n)), lines
    return ranks


def added(line: dict[str, Any], dst: int) -> tuple[int, int]:
    """(messages to dst, latency the network added to them in ns), as the shim counted."""
    return int(line["pair_msgs"][dst]), int(line["pair_latency_ns"][dst])


@pytest.fixture(scope="module")
def bare_min(mpirun_bin: str, shim_so: Path, tmp_path_factory) -> float:
    """The same job beneath the shim with no network: what a pair that adds nothing gets."""
    tmp = tmp_path_factory.mktemp("bare")
    env = base_env()
    env.update({"FI_PROVIDER_PATH": str(shim_so.parent), "FI_HOOK": "loggp"})
    env["LOGGP_STATS_FILE"] = str(tmp / "stats.jsonl")
    argv = mpirun_cmd(
        mpirun_bin, 4, [str(workload_bin("pingpong")), "-n", str(ROUNDS)],
        mpi_over_ofi(PROVIDER), env,
    )  # fmt: skip
    res = run(argv, env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return workload_result(res.stdout)["metrics"]["half_rtt_min_us"]


def assert_pingpong_added(ranks: dict[int, dict[str, Any]], per_msg_ns: int) -> None:
    """Every message of the ping-pong, either way, got per_msg_ns from the network."""
    for src, dst in ((0, 1), (1, 0)):
        msgs, latency = added(ranks[src], dst)
        assert msgs >= ROUNDS and latency == msgs * per_msg_ns, ranks[src]


@pytest.mark.slow
def test_ranks_on_two_racks_gain_the_rack_latency_each_way(
    mpirun_bin: str, shim, tmp_path: Path
) -> None:
    fastest, lines = pingpong(mpirun_bin, shim, tmp_path, INTER)
    assert_pingpong_added(by_rank(lines), RACK_US * 1000)
    # every message of the job found its destination's rank (none got the uniform knobs)
    assert all(int(s["pair_unmatched"]) == 0 for s in lines), lines
    # released never early: even the fastest round trip holds both 50 µs
    assert fastest >= RACK_US, fastest


@pytest.mark.slow
def test_ranks_in_one_rack_gain_nothing(
    mpirun_bin: str, shim, tmp_path: Path, bare_min: float
) -> None:
    fastest, lines = pingpong(mpirun_bin, shim, tmp_path, INTRA)
    ranks = by_rank(lines)
    assert_pingpong_added(ranks, 0)
    # the other rack is still 50 µs away: the job's final collectives reach it
    msgs, latency = added(ranks[0], 2)
    assert msgs >= 1 and latency == msgs * RACK_US * 1000, ranks[0]
    # nothing added: the fastest round is the bare job's, well below one rack's 50 µs
    assert fastest <= min(bare_min + 0.4 * RACK_US, 0.8 * RACK_US), (fastest, bare_min)


# A rack's uplink at 10 ns/B (100 MB/s): an 8 KiB message takes 81.92 µs to cross it.
BULK_NS_PER_B = 10
SIZE = 8192
BULK_ROUNDS = 200


def bulk_pingpong(mpirun_bin: str, shim, tmp_path: Path, placement: list[int]):
    """Ranks 0 and 1 ping-pong 8 KiB beneath a network whose racks add only a bulk gap."""
    args = ("-n", str(BULK_ROUNDS), "-s", str(SIZE))
    fastest, lines = pingpong(
        mpirun_bin, shim, tmp_path, placement, len(placement), args, latency="0us",
        bulk_gap=f"{BULK_NS_PER_B}ns/B",
    )  # fmt: skip
    return fastest, by_rank(lines, len(placement))


def paced(line: dict[str, Any], dst: int) -> tuple[int, int, int]:
    """(messages, bytes, ns their path's g and G added) to dst, as the shim counted."""
    return (
        int(line["pair_msgs"][dst]),
        int(line["pair_bytes"][dst]),
        int(line["pair_paced_ns"][dst]),
    )


def test_inter_rack_bulk_gap_slows_cross_rack_messages_only(
    mpirun_bin: str, shim, tmp_path: Path
) -> None:
    """Across racks every message leaves n·ΔG later than its port alone would let it, by the
    shim's counters, and even the fastest round pays it both ways; within a rack nothing is
    paced (the wall clock is not bounded there: a busy host raised such bounds in 3 of 10
    runs)."""
    fastest, ranks = bulk_pingpong(mpirun_bin, shim, tmp_path, [0, 2])
    for src, dst in ((0, 1), (1, 0)):
        msgs, nbytes, added = paced(ranks[src], dst)
        assert msgs >= BULK_ROUNDS and nbytes >= BULK_ROUNDS * SIZE, ranks[src]
        # each message at least its own n·ΔG (more only if one waited for the path)
        assert added >= nbytes * BULK_NS_PER_B, ranks[src]
        assert int(ranks[src]["pair_latency_ns"][dst]) == 0, ranks[src]
    assert fastest >= SIZE * BULK_NS_PER_B / 1000, fastest

    # rank 2 in the other rack, so that the ranks' rows pace something and count
    _, ranks = bulk_pingpong(mpirun_bin, shim, tmp_path, [0, 1, 2])
    for src, dst in ((0, 1), (1, 0)):
        msgs, nbytes, added = paced(ranks[src], dst)
        assert msgs >= BULK_ROUNDS and nbytes >= BULK_ROUNDS * SIZE and added == 0, ranks[src]
    # the final collectives still cross to rank 2, paced
    msgs, nbytes, added = paced(ranks[0], 2)
    assert msgs >= 1 and added >= nbytes * BULK_NS_PER_B, ranks[0]


def test_ranks_resolved_through_the_address_vector(mpirun_bin: str, shim, tmp_path: Path) -> None:
    """udp beneath ofi_rxd has no connections: a destination's rank comes from fi_av_lookup
    of its address in the endpoint's AV.  Every ping-pong message finds its peer's rank and
    gets the rack's latency, exactly."""
    _, lines = pingpong(
        mpirun_bin, shim, tmp_path, [0, 2], 2, ("-n", "100"), provider="udp;ofi_rxd"
    )
    ranks = by_rank(lines, 2)
    for src, dst in ((0, 1), (1, 0)):
        msgs, latency = added(ranks[src], dst)
        assert msgs >= 100 and latency == msgs * RACK_US * 1000, ranks[src]


@pytest.mark.parametrize(
    ("table", "rank", "pattern"),
    [
        (None, None, r"^loggp: cannot read LOGGP_TOPOLOGY '.*/missing.txt': No such file"),
        (
            "ranks 4\n0 1 50us 0 0\n",
            None,
            r"^loggp: bad line 2 of LOGGP_TOPOLOGY '.*': expected 'ranks N', then lines SRC DST "
            r"LATENCY_NS GAP_NS BULK_GAP_FS",
        ),
        ("ranks 4\n", "7", r"^loggp: rank 7 is not in LOGGP_TOPOLOGY '.*': expected ranks 0 to 3"),
    ],
    ids=["missing", "unit", "rank"],
)
def test_bad_pair_table_refused(fi_pingpong_bin, shim, tmp_path, table, rank, pattern) -> None:
    """The shim refuses a table it cannot apply, with or without a rank, in one line."""
    path = tmp_path / ("missing.txt" if table is None else "pairs.txt")
    if table is not None:
        path.write_text(table)
    raw = {TOPOLOGY_ENV: str(path)}
    if rank is not None:
        raw["PMI_RANK"] = rank
    env = shim(raw=raw)
    res = fi_pingpong(
        fi_pingpong_bin, PROVIDER, "rdm", ["-S", "64", "-I", "10"], env.env, timeout=60
    )
    assert res.client.returncode != 0 and res.server.returncode != 0, res.describe()
    lines = (res.client.stderr + res.server.stderr).splitlines()
    assert any(re.search(pattern, ln) for ln in lines), res.describe()
