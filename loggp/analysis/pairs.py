"""Heatmaps of the pairs of ranks: who sent how many messages to whom, and what latency the
network added to them, from the shims' own counters.

Beneath an experiment's `network` (docs/experiments.md, "Network") each rank's counter line
carries, per destination rank, the messages it sent there (`pair_msgs`) and the latency the
network added to them (`pair_latency_ns`; emulator/fabric/README.md, "Counters"), counted
where the rank's row of the pair table adds something.  For each workload this draws one
point: the measured point whose network added the most latency in all (the first of equals,
in plan order), since that is where the topology shows; its lines are summed per rank (a
process may count in several domains).  Left: messages from each rank (row) to each rank
(column); right: the latency added per message in µs, blank where no message went.  Counted
by the shim, so neither depends on the host's timing.

Written beside the slowdown figures as pairs_<workload>.png and .svg (loggp/analysis/report.py),
and shown in index.html's "Pairs of ranks" section (loggp/analysis/html.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from loggp.analysis.figures import save, workload_stems
from loggp.results.protocol import MAX_PAIR_RANKS
from loggp.results.reader import StoredPoint

FIGSIZE = (9.0, 4.0)  # inches: the two matrices side by side
STEM_PREFIX = "pairs_"
ANNOTATE_MAX_RANKS = 16  # cells large enough to carry their numbers


@dataclass(frozen=True)
class PairMatrix:
    """One point's counters per pair: [src][dst], summed over each rank's lines."""

    workload: str
    point_id: str
    msgs: np.ndarray
    latency_ns: np.ndarray

    @property
    def added_us(self) -> np.ndarray:
        """The latency added per message in µs; NaN where no message went."""
        out = np.full(self.msgs.shape, np.nan)
        sent = self.msgs > 0
        out[sent] = self.latency_ns[sent] / self.msgs[sent] / 1000
        return out


def _rank_lines(p: StoredPoint) -> list[tuple[int, list[int], list[int]]]:
    """(rank, pair_msgs, pair_latency_ns) of each of p's counter lines that has them."""
    out = []
    for s in p.shim_stats:
        rank, msgs, lat = s.get("rank"), s.get("pair_msgs"), s.get("pair_latency_ns")
        if rank is None or msgs is None or lat is None or len(msgs) != len(lat):
            continue
        if rank < MAX_PAIR_RANKS:
            out.append((rank, msgs, lat))
    return out


def pair_matrix(p: StoredPoint) -> PairMatrix | None:
    """p's counters per pair; None where no line carries any."""
    lines = _rank_lines(p)
    if not lines:
        return None
    n = max(max(r + 1, len(m)) for r, m, _ in lines)
    msgs = np.zeros((n, n), dtype=np.float64)  # sums of u64 counts: float keeps them exact to 2^53
    lat = np.zeros((n, n), dtype=np.float64)
    for rank, m, latency in lines:
        msgs[rank, : len(m)] += m
        lat[rank, : len(latency)] += latency
    return PairMatrix(p.workload, p.point_id, msgs, lat)


def matrices(points: Sequence[StoredPoint]) -> list[PairMatrix]:
    """Per workload, in order of first appearance, the measured point whose network added the
    most latency (module docstring); workloads whose points counted no pair are left out."""
    best: dict[str, PairMatrix] = {}
    for p in points:
        if not p.measured:
            continue
        m = pair_matrix(p)
        if m is None or not m.msgs.any():
            continue
        held = best.get(p.workload)
        if held is None or m.latency_ns.sum() > held.latency_ns.sum():
            best[p.workload] = m
    return list(best.values())


def _heatmap(fig: Figure, ax: Any, data: np.ndarray, title: str, label: str, fmt: str) -> None:
    n = data.shape[0]
    image = ax.imshow(data, cmap="viridis", origin="upper")
    ax.set_title(title)
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    ticks = range(n) if n <= ANNOTATE_MAX_RANKS else range(0, n, max(1, n // 8))
    ax.set_xticks(list(ticks))
    ax.set_yticks(list(ticks))
    fig.colorbar(image, ax=ax, label=label, shrink=0.8)
    if n > ANNOTATE_MAX_RANKS:
        return
    top = np.nanmax(data) if np.isfinite(data).any() else 0.0
    for (s, d), v in np.ndenumerate(data):
        if np.isfinite(v):
            colour = "black" if top and v > 0.6 * top else "white"
            ax.text(d, s, format(v, fmt), ha="center", va="center", fontsize=8, color=colour)


def draw(m: PairMatrix) -> Figure:
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    _heatmap(fig, left, m.msgs, "messages sent", "messages", ".0f")
    _heatmap(fig, right, m.added_us, "latency the network added", "µs per message", ".3g")
    fig.suptitle(f"{m.workload}: {m.point_id} (the shim's counters)")
    return fig


def stems(found: Sequence[PairMatrix]) -> list[str]:
    return workload_stems(STEM_PREFIX, [m.workload for m in found])


def write_pair_figures(found: Sequence[PairMatrix], out_dir: Path) -> list[Path]:
    """PNG and SVG of each matrix (matrices()); returns the PNGs."""
    return [
        save(draw(m), "", out_dir / name).png for m, name in zip(found, stems(found), strict=True)
    ]
