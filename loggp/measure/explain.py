"""Why a row of `loggp calibrate` says "no": one line per metric outside its tolerance.

The comparison (loggp/measure/calibrate.py) expects each LogGP metric to grow by what the
shim's semantics add (docs/design.md, "LogGP semantics").  Some metrics move for reasons
those semantics and the method explain (emulator/calibrate/README.md), and a bare "no"
reads as a broken shim:

- a deferred send (any of ΔL, Δg, ΔG set) is queued by the shim and posted to the
  provider at its release time, so `fi_send` returns at once: o_s loses the provider's own
  send cost (some 4–5 µs of socket writes on tcp;ofi_rxm), which is paid outside the timed
  call;
- L is derived, RTT/2 − o_s − o_r, so the send cost that left o_s reappears in L, which
  then overstates ΔL by the bare o_s while the half round trip carries ΔL exactly;
- on loopback tcp the receive read that returns a message is bimodal (it sometimes also
  waits for the kernel to deliver it), and its median moves between the modes by 1–2 µs
  from run to run, whatever the knobs;
- g and G are the shim's port in series with the provider's: a Δg or per-message ΔG below
  the stack's own gap hides in it, as behind a slower NIC.

Anything else is named against the other work on the host during the runs
(loggp/metrics/node.py): a busy neighbour moves medians by microseconds, while on a quiet
host a move the semantics do not explain is the shim's to answer for.
"""

from __future__ import annotations

from collections.abc import Sequence

from loggp.measure.calibrate import Comparison
from loggp.metrics.node import OtherWork
from loggp.plan.knobs import Params
from loggp.results.judge import OTHER_CPU_LIMIT

# How far o_r's median moves between its two modes on loopback tcp (µs).
O_R_MODES_US = 2.5


def _defers(p: Params) -> bool:
    """Whether the shim queues sends for a later release under these knobs."""
    return bool(p.latency_ns or p.gap_ns or p.bulk_gap_fs)


def _unexplained(other: OtherWork | None) -> str:
    if other is None:
        return "not explained by the shim's semantics; the host's other work was not measured"
    busy = f"the host was {100 * other.share:.0f} % busy with other work during the runs"
    if other.share > OTHER_CPU_LIMIT:
        return f"{busy}, which moves medians by microseconds: rerun while the host is idle"
    return (
        f"not explained by the shim's semantics, and {busy}: a shim error to report "
        "(loggp bench accuracy sets it against a control)"
    )


def why(
    c: Comparison,
    by_key: dict[str, Comparison],
    p: Params,
    provider: str,
    other: OtherWork | None = None,
) -> str:
    """The reason a comparison outside its tolerance is so, in one line."""
    o_s = by_key.get("o_s_us")
    key = c.metric.key
    if key == "o_s_us" and _defers(p) and c.error < 0:
        return (
            "the shim defers the send (ΔL, Δg or ΔG set): fi_send returns once the message "
            f"is queued, and the provider's own send cost ({c.baseline:.2f} us bare) is paid "
            "at its release, outside the timed call"
        )
    if key == "L_us" and _defers(p) and o_s is not None and o_s.error < 0:
        moved = -o_s.error
        if abs(c.error - moved) <= max(c.tolerance, 0.25 * moved):
            return (
                f"L = RTT/2 - o_s - o_r takes the {moved:.2f} us of send cost that left the "
                "timed send call (deferred send), so it overstates ΔL by that much; the half "
                "round trip carries ΔL"
            )
    if key == "o_r_us" and not p.recv_overhead_ns and "tcp" in provider:
        if abs(c.error) <= O_R_MODES_US:
            return (
                "on loopback tcp the read that returns a message sometimes also waits for the "
                "kernel to deliver it, and o_r's median moves between the two modes by 1-2 us "
                "from run to run, whatever the knobs (its lower decile does not)"
            )
    if key in ("g_us", "G_ns_per_B") and c.error < 0 and (p.gap_ns or p.bulk_gap_fs):
        return (
            "the shim's port is in series with the provider's: a gap below the stack's own "
            f"({c.baseline:.2f} {c.metric.unit} bare) hides in it, as behind a slower NIC"
        )
    return _unexplained(other)


def explanations(
    comparisons: Sequence[Comparison],
    p: Params,
    provider: str,
    other: OtherWork | None = None,
) -> dict[str, str]:
    """metric key -> one line for each comparison that is not ok: its move, and why; other
    is the host's other work during the runs (the busier run's), None when not measured."""
    by_key = {c.metric.key: c for c in comparisons}
    return {
        c.metric.key: (
            f"{c.metric.title}: {c.baseline:.2f} -> {c.measured:.2f} {c.metric.unit} "
            f"({c.increase:+.2f}, configured {c.configured:+.2f}): "
            f"{why(c, by_key, p, provider, other)}"
        )
        for c in comparisons
        if not c.ok
    }
