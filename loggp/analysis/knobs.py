"""What the report knows about each knob: its symbol, its unit and how its axis is drawn.

All of it comes from the knob registry (loggp.knobs, emulator/core/include/lgp/knobs.def):
the units are those of the `sweep_value` and `knob_values` columns (docs/results.md), the
report unit of the knob's family: µs for the per-message time knobs, ns/B for bulk_gap, MB/s
(10^6 bytes per second) for bandwidth.  A network level's delay swept as a knob
(network.rack.latency, loggp/plan/netknobs.py) is drawn in its delay's unit, against the
level's own value: L(rack), the latency leaving a rack adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from loggp.plan.knobs import Knob
from loggp.plan.netknobs import DELAYS, PREFIX, is_network_knob


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
    added: bool = True  # x is an added Δ (a rate is drawn as itself)

    @property
    def axis_label(self) -> str:
        if not self.added:
            return f"{self.name} ({self.unit})"
        return f"{self.symbol}: added {self.name.replace('_', ' ')} ({self.unit})"


def _info(knob: Knob) -> KnobInfo:
    rate = knob.family.inverse  # the baseline's rate is unlimited: it has no x position
    return KnobInfo(
        knob.value,
        knob.row.symbol,
        knob.family.report_label,
        f"Sensitivity to {knob.row.what}",
        log_x=rate,
        decreasing_x=rate,
        baseline_at_zero=not rate,
        added=not rate,
    )


KNOBS: dict[str, KnobInfo] = {k.value: _info(k) for k in Knob}

# Order of the figures and tables: the study's order, unknown knobs after, by name.
KNOB_ORDER = tuple(KNOBS)


def _network_info(name: str) -> KnobInfo | None:
    """network.<level>.<delay>: the delay's unit, the level's symbol (L(rack)); its axis is
    the level's value, not a Δ from 0, though a level given nothing adds 0 there."""
    level, _, delay = name.removeprefix(PREFIX).partition(".")
    if not level or delay not in DELAYS:
        return None
    knob = KNOBS[delay]
    return KnobInfo(
        name,
        f"{knob.symbol.removeprefix('Δ')}({level})",
        knob.unit,
        f"Sensitivity to {level} {Knob(delay).row.what}",
        added=False,
    )


def knob_info(name: str) -> KnobInfo:
    """The knob's presentation; an unknown knob is drawn on a plain axis without a unit."""
    known = KNOBS.get(name) or (_network_info(name) if is_network_knob(name) else None)
    if known is not None:
        return known
    return KnobInfo(name, f"Δ{name}", "as recorded", f"Sensitivity to {name}")


def knob_sort_key(name: str) -> tuple[int, str]:
    return (KNOB_ORDER.index(name) if name in KNOB_ORDER else len(KNOB_ORDER), name)
