"""Rich tables of configured vs measured LogGP deltas."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from loggp.measure.calibrate import REL_TOLERANCE, Comparison

# Columns wide enough for any result, so output to a file or pipe is never wrapped.
TABLE_WIDTH = 132


def _fmt(value: float | None, unit: str, signed: bool = False) -> str:
    if value is None:
        return "-"
    digits = 3 if unit == "ns/B" else 2
    sign = "+" if signed else ""
    return f"{value:{sign}.{digits}f}"


def comparison_table(rows: Sequence[tuple[str, Comparison]], title: str) -> Table:
    """One row per (point label, comparison); the label is shown once per point.

    Medians unless marked p99; 'Δ measured' is the shimmed median minus the unshimmed one,
    'error' is Δ measured minus Δ configured, 'ok' is |error| <= max(floor, 3 % of Δ).
    """
    table = Table(
        title=title,
        title_justify="left",
        caption_justify="left",
        caption=f"ok: |error| <= max(1 us or 0.05 ns/B, {REL_TOLERANCE:.0%} of Δ)",
    )
    table.add_column("point", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    for name in ("Δ configured", "unshimmed", "shimmed", "shimmed p99", "Δ measured", "error"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("ok", justify="center", no_wrap=True)
    previous = None
    for label, c in rows:
        unit = c.metric.unit
        table.add_row(
            label if label != previous else "",
            c.metric.title,
            unit,
            _fmt(c.configured, unit),
            _fmt(c.baseline, unit),
            _fmt(c.measured, unit),
            _fmt(c.measured_p99, unit),
            _fmt(c.increase, unit, signed=True),
            _fmt(c.error, unit, signed=True),
            "[green]yes[/]" if c.ok else "[red]no[/]",
        )
        previous = label
    return table
