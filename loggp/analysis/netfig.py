"""The experiment's network drawn: its nodes, how they are grouped or linked, what each
level or link adds, and which ranks run on which node.

From the resolved experiment in run.json (its `network`, docs/experiments.md "Network"):
levels are drawn as nested boxes over the row of nodes, each labelled with what leaving
one of its groups adds; links as edges between nodes on a circle, each labelled with its
latency.  Under each node, the ranks the largest workload places there (the placement
loggp/plan/topology.py computes).  At most MAX_NODES nodes are drawn (the first ones), the
title says so when there are more.  Written as network.png and .svg beside the heatmaps of
loggp/analysis/pairs.py, and shown first in index.html's "Pairs of ranks" section.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from pydantic import ValidationError

from loggp.analysis.figures import save
from loggp.analysis.pairs import FIGSIZE
from loggp.plan.knobs import parse_knob
from loggp.plan.topology import Network

STEM = "network"
MAX_NODES = 32
_MAX_RANK_LABEL = 6  # ranks listed under a node; more are counted


def network_of(experiment: Any) -> Network | None:
    """The run's network, None when it has none (or run.json's cannot be read back)."""
    if not isinstance(experiment, dict) or not isinstance(experiment.get("network"), dict):
        return None
    try:
        return Network.model_validate(experiment["network"])
    except ValidationError:
        return None


def _most_ranks(experiment: dict[str, Any]) -> int:
    ranks = [w.get("ranks", 1) for w in experiment.get("workloads", []) if isinstance(w, dict)]
    return max([r for r in ranks if isinstance(r, int)] or [1])


def _delays(item: Any) -> str:
    """What a level or link adds, in its own words: the delays it was given."""
    parts = []
    if parse_knob("latency", item.latency):
        parts.append(f"+{item.latency}")
    if parse_knob("gap", item.gap):
        parts.append(f"g {item.gap}")
    if parse_knob("bulk_gap", item.bulk_gap):
        parts.append(f"G {item.bulk_gap}")
    return ", ".join(parts) or "+0"


def _ranks_text(ranks: list[int]) -> str:
    if len(ranks) > _MAX_RANK_LABEL:
        return f"r{ranks[0]}…r{ranks[-1]}\n({len(ranks)})"
    return "\n".join(f"r{r}" for r in ranks)


def draw(net: Network, experiment: dict[str, Any]) -> Figure:
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set_axis_off()
    shown = min(net.nodes, MAX_NODES)
    ranks = _most_ranks(experiment)
    on: dict[int, list[int]] = {}
    for r in range(ranks):
        on.setdefault(net.node_of(r, ranks), []).append(r)
    if net.links is not None:
        pos = {
            n: (math.cos(2 * math.pi * n / shown), math.sin(2 * math.pi * n / shown))
            for n in range(shown)
        }
        for link in net.links:
            a, b = link.between
            if a in pos and b in pos:
                (xa, ya), (xb, yb) = pos[a], pos[b]
                ax.plot([xa, xb], [ya, yb], color="#888", zorder=1)
                ax.text((xa + xb) / 2, (ya + yb) / 2, _delays(link), fontsize=7, ha="center",
                        va="center", bbox={"fc": "white", "ec": "none", "pad": 0.5})  # fmt: skip
        for n, (x, y) in pos.items():
            ax.scatter([x], [y], s=300, color="#4c72b0", zorder=2)
            ax.text(x, y, str(n), color="white", ha="center", va="center", fontsize=8, zorder=3)
            if n in on:
                ax.text(1.18 * x, 1.18 * y, _ranks_text(on[n]), ha="center", va="center",
                        fontsize=7)  # fmt: skip
        ax.set_xlim(-1.5, 1.5)
        ax.set_ylim(-1.4, 1.4)
        ax.set_aspect("equal")
        kind = f"{len(net.links)} links, each pair by its least-latency route"
    else:
        levels = net.levels or []
        width = 1
        for depth, lv in enumerate(levels):
            width *= lv.size or 1
            if depth == 0:
                continue
            for start in range(0, shown, width):
                end = min(start + width, shown)
                pad = 0.1 + 0.08 * depth
                ax.add_patch(Rectangle((start - 0.5 + pad / 2, -0.4 - 0.35 * depth),
                                       end - start - pad, 0.8 + 0.7 * depth, fill=False,
                                       ec=f"C{depth}", lw=1.2))  # fmt: skip
            label = f"{lv.name} ({lv.size} of {levels[depth - 1].name}): leaving {_delays(lv)}"
            ax.text(-0.6, 0.45 + 0.35 * depth, label, color=f"C{depth}", fontsize=8, va="bottom")
        for n in range(shown):
            ax.scatter([n], [0], s=200, color="#4c72b0", zorder=2)
            ax.text(n, 0, str(n), color="white", ha="center", va="center", fontsize=7, zorder=3)
            if n in on:
                ax.text(n, -0.55 - 0.35 * max(len(levels) - 1, 0), _ranks_text(on[n]),
                        ha="center", va="top", fontsize=7)  # fmt: skip
        node = levels[0] if levels else None
        ax.set_xlim(-1, shown)
        ax.set_ylim(-2.0 - 0.35 * len(levels), 1.0 + 0.35 * len(levels))
        kind = f"{len(levels)} levels" + (f"; leaving a node {_delays(node)}" if node else "")
    more = f" (the first {shown} of {net.nodes} nodes)" if net.nodes > shown else ""
    fig.suptitle(f"network: {net.nodes} nodes, {kind}{more}; ranks of a {ranks}-rank workload")
    return fig


def write_network_figure(net: Network, experiment: dict[str, Any], out_dir: Path) -> Path:
    """network.png and .svg of the run's network (network_of(experiment)); the PNG."""
    return save(draw(net, experiment), "", out_dir / STEM).png
