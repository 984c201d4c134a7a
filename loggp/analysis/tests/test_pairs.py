"""Per-pair heatmaps from the stored shim counters: which point, the sums, the files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from matplotlib.image import imread

from loggp.analysis.pairs import matrices
from loggp.analysis.report import write_report
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, make_run
from loggp.results.rundir import RUN_FILE

pytestmark = pytest.mark.unit


def line(rank: int, msgs: list[int], latency_ns: list[int], **more: Any) -> dict[str, Any]:
    """A counter line as a rank's shim writes it beneath a network (the keys that matter)."""
    return {
        "pid": 100 + rank, "provider": "tcp", "msgs": sum(msgs), "rank": rank,
        "pair_unmatched": 0, "pair_msgs": msgs, "pair_latency_ns": latency_ns,
        "pair_bytes": [8 * m for m in msgs], "pair_paced_ns": [0] * len(msgs),
    } | more  # fmt: skip


def three_ranks(us: int) -> list[dict[str, Any]]:
    """Rank 2 alone in the other rack, us µs away; rank 0 counted in two domains."""
    ns = us * 1000
    return [
        line(0, [0, 10, 4], [0, 0, 4 * ns]),
        line(0, [0, 2, 0], [0, 0, 0], provider="shm"),
        line(1, [12, 0, 0], [0, 0, 0]),
        line(2, [4, 0, 0], [4 * ns, 0, 0]),
    ]


def rows() -> list[Row]:
    return [
        Row("w", "baseline", None, 0, 1.0, shim_stats=three_ranks(50)),
        Row("w", "network.rack.latency", 100, 0, 1.2, shim_stats=three_ranks(100)),
        Row("w", "network.rack.latency", 200, 0, None, status="failed",
            shim_stats=three_ranks(200)),
        Row("flat", "baseline", None, 0, 1.0),  # no network: no pair counters
    ]  # fmt: skip


def test_the_point_whose_network_added_most_per_workload(tmp_path: Path) -> None:
    (m,) = matrices(load_run(make_run(tmp_path, rows())).points)
    # the failed point measured nothing: the 100 µs point is the one drawn
    assert (m.workload, m.point_id) == ("w", "w/network.rack.latency=100/r0")
    assert m.msgs.tolist() == [[0, 12, 4], [12, 0, 0], [4, 0, 0]]
    added = m.added_us
    assert added[0, 2] == added[2, 0] == 100.0 and added[0, 1] == added[1, 0] == 0.0
    assert math.isnan(added[0, 0]) and math.isnan(added[1, 2])  # no message went


def test_report_writes_and_shows_one_figure_per_workload_on_a_network(tmp_path: Path) -> None:
    run = make_run(tmp_path, rows())
    out = run / "report"
    out.mkdir()
    (out / "pairs_gone.png").write_bytes(b"old")
    write_report(run)
    assert imread(out / "pairs_w.png").shape[2] in (3, 4)
    assert "<svg" in (out / "pairs_w.svg").read_text()
    assert not (out / "pairs_flat.png").exists()
    assert not (out / "pairs_gone.png").exists(), "a stale heatmap is removed"
    page = (out / "index.html").read_text()
    assert page.count('<h2 id="pairs">') == 1 and '<a href="pairs_w.svg">' in page
    assert "pairs_flat" not in page


@pytest.mark.parametrize(
    "network",
    [
        {"nodes": 4, "placement": "block", "levels": [
            {"name": "node"}, {"name": "rack", "size": 2, "latency": "50us"}]},
        {"nodes": 3, "links": [
            {"between": [0, 1], "latency": "10us"}, {"between": [1, 2], "gap": "2us"}]},
    ],
)  # fmt: skip
def test_the_network_is_drawn_first_and_gone_without_one(
    tmp_path: Path, network: dict[str, Any]
) -> None:
    run = make_run(tmp_path, rows())
    doc = json.loads((run / RUN_FILE).read_text())
    doc["experiment"] = {"name": "unit", "network": network, "workloads": [{"ranks": 3}]}
    (run / RUN_FILE).write_text(json.dumps(doc))
    out = run / "report"
    write_report(run)
    assert imread(out / "network.png").shape[2] in (3, 4)
    text = (out / "network.svg").read_text()
    assert "r2" in text and ("rack" in text or "10us" in text)  # labels and placement
    page = (out / "index.html").read_text()
    assert page.index('<a href="network.svg">') < page.index('<a href="pairs_w.svg">')
    doc["experiment"] = {"name": "unit", "workloads": [{"ranks": 3}]}
    (run / RUN_FILE).write_text(json.dumps(doc))
    write_report(run)
    assert not (out / "network.png").exists() and not (out / "network.svg").exists()
    assert 'href="network.svg"' not in (out / "index.html").read_text()
