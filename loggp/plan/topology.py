"""The experiment file's network: a topology, and the per-pair delays derived from it.

    network:
      nodes: 4
      placement: block              # block, round-robin, or [node of rank 0, of rank 1, ...]
      levels:                       # from the node up
        - {name: node, latency: 0us}            # leaving a node
        - {name: rack, size: 2, latency: 50us}  # 2 nodes a rack; leaving a rack

A pair of processes on nodes a and b leaves every group that holds one and not the other:
the node itself if a != b, its rack if the racks differ, and so on up.  The path's added
latency is the sum of those levels' latencies, its gap the largest of their gaps, its bulk
gap the largest of theirs (the narrowest link).  Two processes on one node leave nothing.
This module is the one derivation (docs/experiments.md, "network"); the runner writes its
result for the fabric shim as a pair table (write_pair_table, LOGGP_TOPOLOGY,
docs/design.md "Topology").
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from loggp.errors import LoggpError
from loggp.plan.knobs import ENV_PREFIX, parse_knob
from loggp.plan.names import require_unique

TOPOLOGY_ENV = ENV_PREFIX + "TOPOLOGY"
MAX_NODES = 4096
MAX_TABLE_RANKS = 1024  # a table of all pairs: 1024^2 lines of a few bytes
TABLE_HEADER = "# loggp pair table: SRC DST LATENCY_NS GAP_NS BULK_GAP_FS"
NAMES_SUFFIX = ".names"  # the directory beside the table where shims publish addresses

_LEVEL_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,31}")


def _delay(knob: str, value: object) -> str:
    if not isinstance(value, str):
        value = repr(value)
    try:
        parse_knob(knob, value)
    except LoggpError as e:
        raise ValueError(str(e)) from None
    return value


class Level(BaseModel):
    """One level of the hierarchy: what leaving one of its groups adds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    size: Annotated[int, Field(ge=1, le=MAX_NODES)] | None = None
    latency: str = "0us"
    gap: str = "0us"
    bulk_gap: str = "0ns/B"

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _LEVEL_NAME_RE.fullmatch(v):
            raise ValueError(
                f"bad level name {v!r}: expected a lower-case letter, then up to 31 "
                "lower-case letters, digits or '_'"
            )
        return v

    @field_validator("latency", "gap", "bulk_gap", mode="before")
    @classmethod
    def _value(cls, v: object, info: Any) -> str:
        return _delay(info.field_name, v)


class Network(BaseModel):
    """nodes, placement and levels (docs/experiments.md, "network")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: Annotated[int, Field(ge=1, le=MAX_NODES)]
    placement: Literal["block", "round-robin"] | list[Annotated[int, Field(ge=0)]] = "block"
    levels: Annotated[list[Level], Field(min_length=1)]

    @field_validator("placement", mode="before")
    @classmethod
    def _placement(cls, v: object) -> object:
        ok = v in ("block", "round-robin") or (
            isinstance(v, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in v)
        )
        if not ok:
            raise ValueError(
                f"bad placement {v!r}: expected block, round-robin or a list giving the node "
                "of each rank, e.g. [0, 0, 1, 1]"
            )
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Network:
        require_unique([lv.name for lv in self.levels], "level")
        if self.levels[0].size not in (None, 1):
            raise ValueError(
                f"levels[0] ({self.levels[0].name}) is the node: it takes no size "
                "(the levels above group it: size: how many of the level below)"
            )
        for i, lv in enumerate(self.levels[1:], 1):
            if lv.size is None:
                raise ValueError(
                    f"levels[{i}] ({lv.name}) needs size: how many groups of "
                    f"{self.levels[i - 1].name} one {lv.name} holds"
                )
        if isinstance(self.placement, list):
            if not self.placement:
                raise ValueError(
                    "placement: an empty map: expected block, round-robin or a list "
                    "giving the node of each rank"
                )
            bad = [n for n in self.placement if n >= self.nodes]
            if bad:
                raise ValueError(
                    f"placement: node {bad[0]} does not exist: expected nodes 0 to "
                    f"{self.nodes - 1} (nodes: {self.nodes})"
                )
        return self

    def check_ranks(self, ranks: int) -> None:
        """ValueError if ranks processes cannot be placed or tabled."""
        if ranks > MAX_TABLE_RANKS:
            raise ValueError(
                f"{ranks} ranks on a network: expected at most {MAX_TABLE_RANKS} "
                "(the pair table the shim reads)"
            )
        if isinstance(self.placement, list) and ranks > len(self.placement):
            raise ValueError(
                f"{ranks} ranks but placement maps {len(self.placement)}: expected a node "
                "for every rank"
            )

    def node_of(self, rank: int, ranks: int) -> int:
        """The node rank runs on, of ranks processes."""
        if isinstance(self.placement, list):
            return self.placement[rank]
        if self.placement == "round-robin":
            return rank % self.nodes
        per_node = -(-ranks // self.nodes)
        return rank // per_node


@dataclass(frozen=True)
class Pair:
    """What a path adds: latency and gap in ns, bulk gap in fs per byte."""

    latency_ns: int = 0
    gap_ns: int = 0
    bulk_gap_fs: int = 0


def path(net: Network, a: int, b: int) -> Pair:
    """The delays between nodes a and b: every level whose groups part them."""
    latency = gap = bulk = 0
    width = 1  # nodes in one group of the current level
    for lv in net.levels:
        width *= lv.size or 1
        if a // width == b // width:
            break
        latency += parse_knob("latency", lv.latency)
        gap = max(gap, parse_knob("gap", lv.gap))
        bulk = max(bulk, parse_knob("bulk_gap", lv.bulk_gap))
    return Pair(latency, gap, bulk)


def pair_table(net: Network, ranks: int) -> list[list[Pair]]:
    """table[src][dst]: the delays from rank src to rank dst, ranks processes placed."""
    net.check_ranks(ranks)
    nodes = [net.node_of(r, ranks) for r in range(ranks)]
    paths: dict[tuple[int, int], Pair] = {}
    table = []
    for a in nodes:
        row = []
        for b in nodes:
            key = (min(a, b), max(a, b))
            if key not in paths:
                paths[key] = path(net, *key)
            row.append(paths[key])
        table.append(row)
    return table


def write_pair_table(file: Path, table: list[list[Pair]]) -> Path:
    """Writes the table for LOGGP_TOPOLOGY (only pairs that add something) and an empty
    directory beside it where the shims publish their addresses; returns the table's path.
    The format is the shim's (emulator/fabric/lgp_topo.h)."""
    lines = [TABLE_HEADER, f"ranks {len(table)}"]
    for s, row in enumerate(table):
        for d, p in enumerate(row):
            if s != d and (p.latency_ns or p.gap_ns or p.bulk_gap_fs):
                lines.append(f"{s} {d} {p.latency_ns} {p.gap_ns} {p.bulk_gap_fs}")
    file.write_text("\n".join(lines) + "\n")
    names = Path(str(file) + NAMES_SUFFIX)
    names.mkdir(exist_ok=True)
    for old in names.iterdir():
        os.unlink(old)
    return file
