"""100k messages of random sizes (1 B .. 1 MiB, log-uniform), checksummed and
sequence-numbered, under non-zero Δo, Δg, ΔL, ΔG on every provider.

fi_stress (tests/progs) checks no loss, duplication, per-source reordering or
corruption itself and exits 0 only if all checks pass; MPI runs on its own
transports (MPI_OWN_TRANSPORT), so every libfabric message is fi_stress's and
the shim's counters at the core provider must cover at least all 100k.
Knobs are small (STRESS_KNOBS) to keep the runs to about a minute each.
"""

from __future__ import annotations

import pytest
from conftest import (
    MPI_OWN_TRANSPORT,
    STRESS_KNOBS,
    core_provider,
    json_line,
    mpirun_cmd,
    prog_path,
    run,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MSGS = 100_000
CASES = [
    ("shm", "rdm", 2),
    ("tcp;ofi_rxm", "rdm", 2),
    ("udp;ofi_rxd", "rdm", 2),
    ("tcp", "msg", 2),
    ("tcp;ofi_rxm", "rdm", 4),
]


@pytest.mark.parametrize(
    ("provider", "ep", "np"),
    CASES,
    ids=["shm-2", "tcp_rxm-2", "udp_rxd-2", "tcp_msg-2", "tcp_rxm-4"],
)
def test_stress_beneath_shim(mpirun_bin, shim, provider, ep, np) -> None:
    env = shim(**STRESS_KNOBS)
    argv = [str(prog_path("fi_stress")), "-p", provider, "-e", ep, "-m", str(MSGS), "-t", "120"]
    res = run(mpirun_cmd(mpirun_bin, np, argv, MPI_OWN_TRANSPORT, env.env), env.env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json_line(res.stdout)
    assert summary["ok"] is True and summary["messages"] == MSGS, summary
    stats = [s for s in env.stats() if s.get("provider") == core_provider(provider)]
    assert len(stats) >= np, f"not every rank ran beneath the shim: {env.stats()}"
    assert sum(int(s["msgs"]) for s in stats) >= MSGS, env.stats()
