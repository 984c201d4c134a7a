"""Δo shows up in the time of the send call itself.

tests/progs/fi_sendtime times fi_send on one RDM endpoint sending to itself
(medians of 300 calls).  With LOGGP_OVERHEAD=200us the shim must spend Δo_s
inside every send-type call at the core provider, once: the median must rise
by at least 150 us and, for the layered tcp;ofi_rxm, by less than 2·Δo_s
(which would mean both layers charged it).
"""

from __future__ import annotations

import pytest
from conftest import base_env, core_provider, json_line, prog_path, run

pytestmark = pytest.mark.integration


def send_call_median(provider: str, env: dict[str, str]) -> float:
    res = run([str(prog_path("fi_sendtime")), "-p", provider, "-n", "300"], env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    out = json_line(res.stdout)
    assert out["ok"] is True
    return float(dict(out["send_call_us"])["median"])


@pytest.mark.parametrize("provider", ["shm", "tcp;ofi_rxm"])
def test_overhead_200us_in_send_call(shim, provider: str) -> None:
    base = send_call_median(provider, base_env())
    env = shim(overhead="200us")
    shimmed = send_call_median(provider, env.env)
    rise = shimmed - base
    assert 150 <= rise < 400, f"send call median {base:.1f} -> {shimmed:.1f} us"
    stats = [s for s in env.stats() if s.get("provider") == core_provider(provider)]
    assert stats and int(stats[0]["send_overhead_ns"]) > 0, env.stats()
