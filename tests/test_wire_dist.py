"""Delays drawn from a distribution on the wire (loggp-wire --latency-dist,
emulator/wire/README.md "Delay distributions"): a testbed started with normal(100 µs,
20 µs) draws each ping's one-way delays from it, as each port's own histogram shows
(delay_hist, the drawn delays themselves, so a busy host cannot move them), and a run
sets its experiment file's distribution on the wire and puts the wire's back after.
Needs root; the testbed is removed in a finalizer."""

from __future__ import annotations

from pathlib import Path

import pytest
from netns_util import Testbed, running_testbed, skip_without_netns
from test_latency_dist import KS_BOUND, MEAN_US, SIGMA_US, ks_at_edges, normal_cdf

from loggp.net import netmeasure
from loggp.plan.dist import file_dist_env
from loggp.run.wirerun import WireSession

pytestmark = [pytest.mark.integration, pytest.mark.needs_root, pytest.mark.serial]

PINGS = 300
# For the ~300 delays a port draws, 0.113 is the KS distance a true sample exceeds with
# probability 0.001 (1.95/sqrt(300)); a constant 100 µs is about 0.5 away.
WIRE_KS_BOUND = 3 * KS_BOUND


@pytest.fixture(autouse=True)
def _netns() -> None:
    skip_without_netns()


def drawn(tb: Testbed) -> tuple[object, object, object]:
    """What the testbed's wire draws: (latency_dist, latency_corr, seed)."""
    wire = tb.status()["wire"]
    return wire["latency_dist"], wire["latency_corr"], wire["seed"]


def test_the_wire_draws_from_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = f"normal:{SIGMA_US:g}us"
    knobs = ("--latency", f"{MEAN_US:g}us", "--latency-dist", dist, "--seed", "3")
    with running_testbed(2, *knobs) as tb:
        assert drawn(tb) == (dist, None, 3)
        assert netmeasure.ping(tb.ns(0), tb.addr(1), PINGS, 0.002).lost == 0
        for port in tb.status()["stats"]:
            width_us = port["delay_bucket_ns"] / 1000
            counts = port["delay_hist"]
            assert port["delay_latency_ns"] == MEAN_US * 1000
            assert sum(counts) >= PINGS, port  # each ping's request or reply, and ARP
            d = ks_at_edges(width_us, counts, lambda x: normal_cdf(x, MEAN_US, SIGMA_US))
            assert d < WIRE_KS_BOUND, f"port {port['port']}: KS distance {d:.3f}"
            assert ks_at_edges(width_us, counts, lambda x: float(x >= MEAN_US)) > 0.3

        # a run sets the file's distribution on the wire (every port draws from it at
        # once), and puts the wire's back after
        monkeypatch.delenv("LOGGP_RUN_DIR", raising=False)  # the testbed's state, as up's
        session = WireSession(tb.prefix, dist=file_dist_env("uniform:5us", "0.5", 9, tmp_path))
        session.save()
        assert drawn(tb) == ("uniform:5us", "0.5", 9)
        assert netmeasure.ping(tb.ns(0), tb.addr(1), 50, 0.002).lost == 0
        for port in tb.status()["stats"]:
            width_us, counts = port["delay_bucket_ns"] / 1000, port["delay_hist"]
            low = min(k for k, c in enumerate(counts) if c) * width_us
            high = (max(k for k, c in enumerate(counts) if c) + 1) * width_us
            assert 95 - width_us <= low and high <= 105 + width_us, (low, high, port)
        session.restore()
        assert drawn(tb) == (dist, None, 3)
