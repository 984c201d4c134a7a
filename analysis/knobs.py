"""What the report knows about each knob: its symbol, its unit and how its axis is drawn.

The units are those of the `sweep_value` and `knob_values` columns (docs/results.md): µs for
the per-message time knobs, ns/B for bulk_gap, MB/s (10^6 bytes per second) for bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnobInfo:
    """Presentation of one knob."""

    name: str
    symbol: str  # e.g. "ΔL"
    unit: str  # unit of sweep_value, e.g. "µs"
    title: str  # e.g. "Sensitivity to latency"
    log_x: bool = False  # logarithmic x axis
    decreasing_x: bool = False  # x decreases to the right (worse network to the right)
    baseline_at_zero: bool = True  # a knob absent from the baseline means Δ = 0

    @property
    def axis_label(self) -> str:
        if self.name == "bandwidth":
            return f"bandwidth ({self.unit})"
        return f"{self.symbol}: added {self.name.replace('_', ' ')} ({self.unit})"


KNOBS: dict[str, KnobInfo] = {
    k.name: k
    for k in (
        KnobInfo("overhead", "Δo", "µs", "Sensitivity to overhead (send and receive)"),
        KnobInfo("send_overhead", "Δo_s", "µs", "Sensitivity to send overhead"),
        KnobInfo("recv_overhead", "Δo_r", "µs", "Sensitivity to receive overhead"),
        KnobInfo("gap", "Δg", "µs", "Sensitivity to gap"),
        KnobInfo("latency", "ΔL", "µs", "Sensitivity to latency"),
        KnobInfo("bulk_gap", "ΔG", "ns/B", "Sensitivity to bulk gap"),
        KnobInfo(
            "bandwidth",
            "BW",
            "MB/s",
            "Sensitivity to bandwidth",
            log_x=True,
            decreasing_x=True,
            baseline_at_zero=False,  # the baseline has unlimited bandwidth: no x position
        ),
    )
}

# Order of the figures and tables: the study's order, unknown knobs after, by name.
KNOB_ORDER = tuple(KNOBS)


def knob_info(name: str) -> KnobInfo:
    """The knob's presentation; an unknown knob is drawn on a plain axis without a unit."""
    known = KNOBS.get(name)
    if known is not None:
        return known
    return KnobInfo(name, f"Δ{name}", "as recorded", f"Sensitivity to {name}")


def knob_sort_key(name: str) -> tuple[int, str]:
    return (KNOB_ORDER.index(name) if name in KNOB_ORDER else len(KNOB_ORDER), name)
