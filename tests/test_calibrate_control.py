"""loggp-calibrate's control (-S, -R), on the real tool over shm: the application spins
where the shim would delay, inside the timed calls of the round trip only."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CALIBRATE, base_env, calibrate_pair, run

SEND_NS, RECV_NS = 20000, 10000


@pytest.mark.serial
@pytest.mark.integration
def test_control_spins_are_in_the_round_trip_and_not_in_the_bursts(tmp_path: Path) -> None:
    args = ["-p", "shm", "-n", "200", "-s", "1,64", "-S", str(SEND_NS), "-R", str(RECV_NS)]
    doc = calibrate_pair(args, base_env(), tmp_path / "calib.json")
    assert doc["control"] == {"spin_send_ns": SEND_NS, "spin_recv_ns": RECV_NS}
    r = doc["results"]
    # A spin lasts at least as long as asked, and it sits inside the timed calls.
    assert r["o_s_us"]["p10"] >= SEND_NS / 1000
    assert r["o_r_us"]["p10"] >= RECV_NS / 1000
    assert r["half_rtt_us"]["p10"] >= (SEND_NS + RECV_NS) / 1000
    # The bursts run bare: a spin before each of their sends would put g above 20 us.
    assert r["g_us"]["median"] < SEND_NS / 1000 / 2
    assert doc["per_size"]["half_rtt_us"][0] < (SEND_NS + RECV_NS) / 1000


@pytest.mark.integration
@pytest.mark.parametrize("value", ["-5", "2000000000", "1us"])
def test_bad_control_values_are_refused(value: str) -> None:
    res = run([str(CALIBRATE), "-S", value], base_env(), timeout=30)
    assert res.returncode == 2
    assert res.stderr.strip() == (
        f"loggp-calibrate: bad value '{value}' for -S: expected an integer in 0..1000000000"
    )
