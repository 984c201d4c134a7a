"""Δo shows up in the time of the calls LogGP charges it to.

tests/progs/fi_sendtime times fi_send on one RDM endpoint sending to itself,
and the fi_cq_read call that hands over the receive (medians of 300 each).
With LOGGP_OVERHEAD=200us the shim must spend Δo_s inside every send-type
call and Δo_r inside the read that returns each receive, once: both medians
must rise by at least 150 us and, for the layered tcp;ofi_rxm, by less than
2·Δo (which would mean both layers charged it).  Beneath ofi_rxm the core's
receive completion is read in rxm's progress, so o_r is charged at rxm's CQ
(emulator/fabric/lgp_util.h) and counted once per message the application
received.
"""

from __future__ import annotations

import pytest
from conftest import base_env, core_provider, json_line, prog_path, run

pytestmark = pytest.mark.integration


ITERS = 300


def call_medians(provider: str, env: dict[str, str]) -> tuple[float, float]:
    """Median send-call and receive-read times in us."""
    cmd = [str(prog_path("fi_sendtime")), "-p", provider, "-n", str(ITERS)]
    res = run(cmd, env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    out = json_line(res.stdout)
    assert out["ok"] is True
    return float(dict(out["send_call_us"])["median"]), float(dict(out["recv_call_us"])["median"])


@pytest.mark.parametrize("provider", ["shm", "tcp;ofi_rxm"])
def test_overhead_200us_in_send_call_and_receive_read(shim, provider: str) -> None:
    base_send, base_recv = call_medians(provider, base_env())
    env = shim(overhead="200us")
    send, recv = call_medians(provider, env.env)
    assert 150 <= send - base_send < 400, f"send call median {base_send:.1f} -> {send:.1f} us"
    assert 150 <= recv - base_recv < 400, f"receive read median {base_recv:.1f} -> {recv:.1f} us"
    stats = [s for s in env.stats() if s.get("provider") == core_provider(provider)]
    assert len(stats) == 1 and int(stats[0]["send_overhead_ns"]) > 0, env.stats()
    assert stats[0]["recv_msgs"] == ITERS, stats
    assert stats[0]["recv_overhead_ns"] == ITERS * 200_000, stats
