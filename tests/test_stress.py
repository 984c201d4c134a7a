"""fi_stress (tests/progs/stress) beneath the shim: every data path intact under
load, delays applied as the knobs say, and the shim's back-pressure.

fi_stress checks no loss, duplication, per-source reordering or corruption of
messages, of the chunks written into every peer's window, of what it reads
back and of the counter every peer adds to, and exits 0 only if all checks
pass.  MPI runs on its own transports (MPI_OWN_TRANSPORT), so every
libfabric operation is fi_stress's.  Each stack runs every operation its bare
provider carries (STRESS_OPS, named in the test ids; tcp;ofi_rxm without
atomics, see below): send, tsend, inject,
tinject round-robin over the messages, then writes, reads and atomics; shm
runs no tagged ones (its tagged messages that arrive before their receive
are never matched, bare too: tests/README.md), plain tcp neither tagged nor
atomics (its msg endpoints lack FI_TAGGED and FI_ATOMIC).

Every run checks the shim's counters of each rank's process against the
knobs, and its time against the least the knobs allow (elapsed_bound_ns):

- test_stress_beneath_shim: 25k messages of 1 B .. 1 MiB (log-uniform) on
  shm, tcp;ofi_rxm (2 and 4 ranks) and tcp msg endpoints, 10k on udp;ofi_rxd.
  ΔG is set so that the bytes between two ranks take about 4.7 s on their
  ports, several times what a run takes without the shim, so the time bound
  fails if the shim paces nothing; except on udp;ofi_rxd, whose own protocol
  (a window of 8 unacknowledged packets) takes longer than any affordable
  bound (minutes for 25k messages, hence fewer), so there only the counters
  and test_stress_paced_rxd show the delays.
- test_stress_queue_limit: 2048 sends outstanding (-w) paced Δg = 200 µs
  apart fill the shim's queue of an endpoint (1024 operations) and meet its
  -FI_EAGAIN, which fi_stress retries after progressing; on shm, tcp;ofi_rxm
  and tcp msg endpoints.
- test_stress_paced_rxd: the same pacing through udp;ofi_rxd, with 64 sends
  outstanding: bare rxd stalls with 1024 (its transmit queue's size), and its
  own window of 8 unacknowledged packets keeps the shim's queue short, so
  the queue limit cannot be reached through it.

tcp;ofi_rxm's bulk runs have no atomics yet; test_stress_rxm_atomics holds
the fix of the shim bug they met (completions read out of order).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from conftest import (
    MPI_OWN_TRANSPORT,
    STRESS_OPS,
    ShimEnv,
    core_provider,
    json_line,
    mpirun_cmd,
    prog_path,
    run,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MSGS = 25_000
RXD_MSGS = 10_000
PACED_MSGS = 20_000
CHUNKS = 256  # fi_stress's default -k
PACED_CHUNKS = 32
READ_EVERY = 4  # STRESS_READ_EVERY in tests/progs/stress/stress_rma.c
EP_QUEUE_MSGS = 1024  # LGP_EP_QUEUE_MSGS in emulator/fabric/lgp_fi.h
MSG_OPS = ("send", "tsend", "inject", "tinject")
ALL_OPS = (*MSG_OPS, "write", "read", "atomic")
# A message whose inject is too large for the provider goes as a send.
FALLBACK = {"inject": "send", "tinject": "tsend"}


@dataclass(frozen=True)
class Knobs:
    """Knob values in whole ns (ΔG in ps per byte), as the shim receives them."""

    overhead_ns: int
    gap_ns: int
    latency_ns: int
    bulk_gap_ps: int

    def env(self) -> dict[str, str]:
        return {
            "overhead": f"{self.overhead_ns}ns",
            "gap": f"{self.gap_ns}ns",
            "latency": f"{self.latency_ns}ns",
            "bulk_gap": f"{self.bulk_gap_ps}ps/B",
        }


@dataclass(frozen=True)
class Case:
    provider: str
    ep: str
    np: int

    @property
    def ops(self) -> list[str]:
        """STRESS_OPS, but no atomics over tcp;ofi_rxm: beneath the shim they
        lose completions (test_stress_rxm_atomics)."""
        ops = STRESS_OPS[self.provider].split(",")
        return [op for op in ops if self.provider != "tcp;ofi_rxm" or op != "atomic"]

    @property
    def id(self) -> str:
        name = self.provider.replace(";ofi_", "_") + ("_msg" if self.ep == "msg" else "")
        return f"{name}-{self.np}[{','.join(self.ops)}]"


# 25k messages move about 1.9 GB, 0.94 GB each way between 2 ranks and
# 0.16 GB each way between any 2 of 4: ΔG makes either take ~4.7 s.
BULK_2 = Knobs(overhead_ns=1000, gap_ns=1000, latency_ns=5000, bulk_gap_ps=5000)
BULK_4 = Knobs(overhead_ns=1000, gap_ns=1000, latency_ns=5000, bulk_gap_ps=30000)
BULK_CASES = [
    (Case("shm", "rdm", 2), BULK_2),
    (Case("tcp;ofi_rxm", "rdm", 2), BULK_2),
    (Case("udp;ofi_rxd", "rdm", 2), BULK_2),
    (Case("tcp", "msg", 2), BULK_2),
    (Case("tcp;ofi_rxm", "rdm", 4), BULK_4),
]
# Sends paced Δg apart, ΔL = 1 ms: 10k operations per rank take >= 2 s.
PACED = Knobs(overhead_ns=1000, gap_ns=200_000, latency_ns=1_000_000, bulk_gap_ps=0)
PACED_ARGS = ["-m", str(PACED_MSGS), "-M", "1024", "-k", str(PACED_CHUNKS)]
QUEUE_CASES = [Case("shm", "rdm", 2), Case("tcp;ofi_rxm", "rdm", 2), Case("tcp", "msg", 2)]


def run_stress(
    mpirun: str, env: ShimEnv, case: Case, args: list[str], timeout: float
) -> dict[str, Any]:
    """Runs fi_stress beneath the shim; its summary once it passed every check."""
    argv = [str(prog_path("fi_stress")), "-p", case.provider, "-e", case.ep]
    argv += ["-o", ",".join(case.ops), "-t", "120", *args]
    res = run(mpirun_cmd(mpirun, case.np, argv, MPI_OWN_TRANSPORT, env.env), env.env, timeout)
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json_line(res.stdout)
    assert summary["ok"] is True and not any(dict(summary["errors"]).values()), summary
    return summary


def check_ops(summary: Mapping[str, Any], case: Case, msgs: int, chunks: int) -> None:
    """Every operation asked for was used, and as often as fi_stress plans."""
    counts = summary["ops"]
    used = set(case.ops) | {FALLBACK[op] for op in case.ops if op in FALLBACK}
    assert summary["messages"] == msgs, summary
    assert sum(counts[op] for op in MSG_OPS) == msgs, counts
    assert sum(r["received"] for r in summary["per_rank"]) == msgs, summary
    assert all(counts[op] > 0 for op in case.ops), counts
    assert all(counts[op] == 0 for op in ALL_OPS if op not in used), counts
    pairs = case.np * (case.np - 1)
    planned = {"write": chunks, "atomic": chunks, "read": math.ceil(chunks / READ_EVERY)}
    for op, per_pair in planned.items():
        assert counts[op] == (pairs * per_pair if op in case.ops else 0), (op, counts)


def rank_stats(env: ShimEnv, summary: Mapping[str, Any], case: Case) -> list[dict[str, int]]:
    """Each rank's counters at its core provider (its process may have several fabrics)."""
    core = core_provider(case.provider)
    lines = [s for s in env.stats() if s.get("provider") == core]
    out = []
    for rank, r in enumerate(summary["per_rank"]):
        mine = [s for s in lines if s["pid"] == r["pid"]]
        assert mine, f"rank {rank} (pid {r['pid']}) did not run beneath the shim: {env.stats()}"
        keys = [k for k, v in mine[0].items() if isinstance(v, int) and k != "pid"]
        total = {k: sum(int(s[k]) for s in mine) for k in keys}
        total["max_queue_depth"] = max(int(s["max_queue_depth"]) for s in mine)
        out.append(total)
    return out


def check_counters(stats: list[dict[str, int]], summary: Mapping[str, Any], knobs: Knobs) -> None:
    """The delays each rank's shim counted are those the knobs ask of the
    operations it carried (emulator/fabric/README.md, Counters)."""
    for rank, (s, r) in enumerate(zip(stats, summary["per_rank"], strict=True)):
        msgs, what = s["msgs"], f"rank {rank}: {s}"
        # Every operation of the program is at least one at the core
        # provider (ofi_rxm and ofi_rxd add their own protocol's).
        assert msgs >= sum(r["ops_to"]) and s["recv_msgs"] >= r["received"], what
        # o_s is spun inside every send-type call of the program, those
        # refused with -FI_EAGAIN too (by the shim, or beneath ofi_rxm and
        # ofi_rxd by the utility itself: the program counts them), but not
        # in the sends ofi_rxm and ofi_rxd make in their progress
        # (emulator/fabric/lgp_util.h); o_r for every receive completion
        # handed over.
        o = knobs.overhead_ns
        most = (msgs + s["eagain"] + r["refused"]) * o
        assert sum(r["ops_to"]) * o <= s["send_overhead_ns"] <= most, what
        assert s["recv_overhead_ns"] == s["recv_msgs"] * o, what
        # ΔL once per message; n·ΔG per message, rounded to the ns.
        assert s["latency_ns"] == msgs * knobs.latency_ns, what
        assert abs(s["bulk_gap_ns"] - s["bytes"] * knobs.bulk_gap_ps / 1000) <= msgs / 2 + 1, what
        # With ΔL > 0 every message waited in the queue, none left early.
        assert s["releases"] == msgs and s["early_releases"] == 0, what
        assert s["post_errors"] == 0, what


def elapsed_bound_ns(summary: Mapping[str, Any], knobs: Knobs) -> float:
    """The least time the busiest rank can have taken if the shim delays as it
    should.  A rank's time runs from the start barrier until the end barrier,
    which it leaves only once every peer has received and settled what it
    sent and it has every completion of its own; so for rank r and peer p:

    - every operation r issues spins o_s inside the call and every message r
      receives o_r when handed over, all in r's one thread;
    - r's operations to p leave one port of r's (its one endpoint; ofi_rxm's
      connection to p) whose starts are at least Δg apart, and the last
      reaches p ΔL after it left;
    - every byte between r and p leaves r's port or p's, taking ΔG there
      (ofi_rxm's rendezvous reads a large message on the receiver's port), so
      one of the two ports is busy for half of all their bytes' time or more.
    """
    per = summary["per_rank"]
    g, lat, bulk = knobs.gap_ns, knobs.latency_ns, knobs.bulk_gap_ps / 1000
    bound = 0.0
    for r, mine in enumerate(per):
        bound = max(bound, (sum(mine["ops_to"]) + mine["received"]) * knobs.overhead_ns)
        for p, n in enumerate(mine["ops_to"]):
            if n:
                bound = max(bound, (n - 1) * g + lat)
            if p > r:
                pair = mine["bytes_to"][p] + per[p]["bytes_to"][r]
                bound = max(bound, pair * bulk / 2)
    return bound


def check_elapsed(summary: Mapping[str, Any], knobs: Knobs) -> float:
    elapsed_ns = max(r["seconds"] for r in summary["per_rank"]) * 1e9
    bound = elapsed_bound_ns(summary, knobs)
    assert elapsed_ns >= bound, f"{elapsed_ns / 1e9:.3f} s < bound {bound / 1e9:.3f} s: {summary}"
    return bound


@pytest.mark.parametrize(("case", "knobs"), BULK_CASES, ids=[c.id for c, _ in BULK_CASES])
def test_stress_beneath_shim(mpirun_bin, shim, case: Case, knobs: Knobs) -> None:
    env = shim(**knobs.env())
    msgs = RXD_MSGS if case.provider == "udp;ofi_rxd" else MSGS
    summary = run_stress(mpirun_bin, env, case, ["-m", str(msgs)], timeout=900)
    check_ops(summary, case, msgs, CHUNKS)
    check_counters(rank_stats(env, summary, case), summary, knobs)
    bound = check_elapsed(summary, knobs)
    # The delays must be there to be seen: the bound well above a bare run.
    assert case.provider == "udp;ofi_rxd" or bound >= 3.75e9


@pytest.mark.parametrize("case", QUEUE_CASES, ids=[c.id for c in QUEUE_CASES])
def test_stress_queue_limit(mpirun_bin, shim, case: Case) -> None:
    env = shim(**PACED.env())
    summary = run_stress(mpirun_bin, env, case, [*PACED_ARGS, "-w", "2048"], timeout=300)
    check_ops(summary, case, PACED_MSGS, PACED_CHUNKS)
    stats = rank_stats(env, summary, case)
    check_counters(stats, summary, PACED)
    for rank, s in enumerate(stats):
        assert s["max_queue_depth"] >= EP_QUEUE_MSGS and s["eagain"] > 0, f"rank {rank}: {s}"
        assert s["gap_ns"] > 0, f"rank {rank}: {s}"
    assert check_elapsed(summary, PACED) >= 2e9


def test_stress_paced_rxd(mpirun_bin, shim) -> None:
    case = Case("udp;ofi_rxd", "rdm", 2)
    env = shim(**PACED.env())
    summary = run_stress(mpirun_bin, env, case, [*PACED_ARGS, "-w", "64"], timeout=300)
    check_ops(summary, case, PACED_MSGS, PACED_CHUNKS)
    stats = rank_stats(env, summary, case)
    check_counters(stats, summary, PACED)
    assert all(s["gap_ns"] > 0 for s in stats), stats
    assert check_elapsed(summary, PACED) >= 2e9


def test_stress_rxm_atomics(mpirun_bin, shim) -> None:
    """Atomics interleaved with writes over tcp;ofi_rxm beneath active pacing,
    four runs.  When the progress thread's drain queued the real completions it
    read ahead of synthesised ones already due, some writes and atomics never
    completed at the initiator in 4 to 5 runs of 10 (tests/README.md, "Finding
    about ofi_rxm's atomics beneath the shim"); each run stalls within its -t
    and names the operations not completed."""
    argv = [str(prog_path("fi_stress")), "-p", "tcp;ofi_rxm", "-m", "100", "-k", "2048"]
    argv += ["-o", "send,write,atomic", "-t", "5"]
    for _ in range(4):
        env = shim(**BULK_4.env())
        res = run(mpirun_cmd(mpirun_bin, 4, argv, MPI_OWN_TRANSPORT, env.env), env.env, 120)
        assert res.returncode == 0, res.stdout + res.stderr
