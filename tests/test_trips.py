"""The crossings a message makes in the stack, measured beneath the fabric shim
(loggp/run/trips.py): on tcp;ofi_rxm over loopback a small message crosses once, one above
rxm's 16 KiB eager limit three times.  Two sizes of the measurement's, about 8 s."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BUILD, base_env

from loggp.plan.experiment import parse_experiment
from loggp.run.trips import measure_trips

# Serial: a crossing is counted from the growth of a round trip, which a neighbour's load
# that comes and goes between the two runs of a size would add to.
pytestmark = [pytest.mark.integration, pytest.mark.serial]

EXP = (
    "version: 1\nname: trips\nemulator: {shim: smpi, provider: tcp;ofi_rxm}\n"
    "workloads:\n  - {name: pp, program: workloads/pingpong/pingpong, ranks: 2}\n"
)


def test_a_message_above_rxms_eager_limit_crosses_three_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in {**base_env(), "LOGGP_BUILD": str(BUILD), "FI_TCP_IFACE": "lo"}.items():
        monkeypatch.setenv(k, v)
    exp = parse_experiment(EXP, "trips.yaml")
    assert measure_trips(exp, tmp_path, sizes=(1, 64 * 1024 + 1)) == [(0, 1), (65537, 3)]
