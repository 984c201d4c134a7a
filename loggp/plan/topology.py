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

Instead of levels, a network may list its links (a ring, a torus, any graph):

    network:
      nodes: 4
      links:                        # both ways; a pair's path is its least latency
        - {between: [0, 1], latency: 5us}
        - {between: [1, 2], latency: 5us, bulk_gap: 1ns/B}

A pair's path is then the route of least added latency (ties: the fewest links, then the
lowest node numbers), and its delays the same sum and largest values over the route's
links.
This module is the one derivation (docs/experiments.md, "network"); the runner writes its
result for the fabric shim as a pair table of ranks (write_pair_table, LOGGP_TOPOLOGY,
docs/design.md "Topology") and hands the wire one of nodes, its ports (node_table).
"""

from __future__ import annotations

import heapq
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


class Link(BaseModel):
    """One link of a network given by its links: the two nodes it joins (both ways) and
    what crossing it adds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    between: tuple[Annotated[int, Field(ge=0)], Annotated[int, Field(ge=0)]]
    latency: str = "0us"
    gap: str = "0us"
    bulk_gap: str = "0ns/B"

    @field_validator("latency", "gap", "bulk_gap", mode="before")
    @classmethod
    def _value(cls, v: object, info: Any) -> str:
        return _delay(info.field_name, v)


class Network(BaseModel):
    """nodes, placement, and levels or links (docs/experiments.md, "network")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: Annotated[int, Field(ge=1, le=MAX_NODES)]
    placement: Literal["block", "round-robin"] | list[Annotated[int, Field(ge=0)]] = "block"
    levels: Annotated[list[Level], Field(min_length=1)] | None = None
    links: Annotated[list[Link], Field(min_length=1)] | None = None

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
        if (self.levels is None) == (self.links is None):
            raise ValueError(
                "expected levels (a hierarchy, from the node up) or links (a graph of "
                "nodes), one of the two"
            )
        if self.levels is not None:
            self._check_levels(self.levels)
        else:
            self._check_links(self.links or [])
        self._check_placement()
        return self

    def _check_levels(self, levels: list[Level]) -> None:
        require_unique([lv.name for lv in levels], "level")
        if levels[0].size not in (None, 1):
            raise ValueError(
                f"levels[0] ({levels[0].name}) is the node: it takes no size "
                "(the levels above group it: size: how many of the level below)"
            )
        for i, lv in enumerate(levels[1:], 1):
            if lv.size is None:
                raise ValueError(
                    f"levels[{i}] ({lv.name}) needs size: how many groups of "
                    f"{levels[i - 1].name} one {lv.name} holds"
                )

    def _check_links(self, links: list[Link]) -> None:
        seen: set[tuple[int, int]] = set()
        for i, link in enumerate(links):
            a, b = link.between
            if max(a, b) >= self.nodes:
                raise ValueError(
                    f"links[{i}]: node {max(a, b)} does not exist: expected nodes 0 to "
                    f"{self.nodes - 1} (nodes: {self.nodes})"
                )
            if a == b:
                raise ValueError(f"links[{i}]: joins node {a} to itself: expected two nodes")
            if (min(a, b), max(a, b)) in seen:
                raise ValueError(f"links[{i}]: nodes {a} and {b} are joined twice")
            seen.add((min(a, b), max(a, b)))
        reached = routes(graph(self), 0)
        missing = [n for n in range(self.nodes) if n not in reached]
        if missing:
            raise ValueError(
                f"links: node {missing[0]} has no path to node 0: every node needs a path "
                "to every other"
            )

    def _check_placement(self) -> None:
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


Graph = dict[int, list[tuple[int, Pair]]]  # node -> (neighbour, what the link adds)


def graph(net: Network) -> Graph:
    """net's links, both ways, with their delays parsed."""
    adjacent: Graph = {}
    for link in net.links or []:
        a, b = link.between
        cost = Pair(
            parse_knob("latency", link.latency),
            parse_knob("gap", link.gap),
            parse_knob("bulk_gap", link.bulk_gap),
        )
        adjacent.setdefault(a, []).append((b, cost))
        adjacent.setdefault(b, []).append((a, cost))
    return adjacent


def routes(adjacent: Graph, src: int) -> dict[int, Pair]:
    """Over a network's links (graph()): the delays of the least-latency route from node
    src to each node it reaches (ties: the fewest links, then the lowest node numbers;
    Dijkstra)."""
    done: dict[int, Pair] = {}
    heap: list[tuple[int, int, int, int, int]] = [(0, 0, src, 0, 0)]
    while heap:
        latency, hops, node, gap, bulk = heapq.heappop(heap)
        if node in done:
            continue
        done[node] = Pair(latency, gap, bulk)
        for nxt, cost in adjacent.get(node, []):
            if nxt not in done:
                heapq.heappush(
                    heap,
                    (
                        latency + cost.latency_ns, hops + 1, nxt,
                        max(gap, cost.gap_ns), max(bulk, cost.bulk_gap_fs),
                    ),
                )  # fmt: skip
    return done


def path(net: Network, a: int, b: int) -> Pair:
    """The delays between nodes a and b: every level whose groups part them, or the
    least-latency route over the links."""
    if net.links is not None:
        return Pair() if a == b else routes(graph(net), min(a, b))[max(a, b)]
    latency = gap = bulk = 0
    width = 1  # nodes in one group of the current level
    for lv in net.levels or []:
        width *= lv.size or 1
        if a // width == b // width:
            break
        latency += parse_knob("latency", lv.latency)
        gap = max(gap, parse_knob("gap", lv.gap))
        bulk = max(bulk, parse_knob("bulk_gap", lv.bulk_gap))
    return Pair(latency, gap, bulk)


def pair_table(net: Network, ranks: int) -> list[list[Pair]]:
    """table[src][dst]: the delays from rank src to rank dst, ranks processes placed.  A
    pair's delays are the same both ways (over links: the route from the lower node)."""
    net.check_ranks(ranks)
    return _table(net, [net.node_of(r, ranks) for r in range(ranks)])


def node_table(net: Network) -> list[list[Pair]]:
    """table[a][b]: the delays from node a to node b (the wire's pairs of ports)."""
    return _table(net, list(range(net.nodes)))


def _table(net: Network, nodes: list[int]) -> list[list[Pair]]:
    """The delays between each two of nodes (with repeats: the nodes of ranks)."""
    paths: dict[tuple[int, int], Pair] = {}
    searched: dict[int, dict[int, Pair]] = {}  # over links: the routes from a node
    adjacent = graph(net)

    def between(a: int, b: int) -> Pair:
        key = (min(a, b), max(a, b))
        if key not in paths:
            if net.links is None:
                paths[key] = path(net, *key)
            else:
                if key[0] not in searched:
                    searched[key[0]] = routes(adjacent, key[0])
                paths[key] = searched[key[0]][key[1]]
        return paths[key]

    return [[between(a, b) for b in nodes] for a in nodes]


def table_text(table: list[list[Pair]]) -> str:
    """The pair table's text: only pairs that add something (emulator/core/include/lgp/
    pairs.h, the shims' one parser)."""
    lines = [TABLE_HEADER, f"ranks {len(table)}"]
    for s, row in enumerate(table):
        for d, p in enumerate(row):
            if s != d and (p.latency_ns or p.gap_ns or p.bulk_gap_fs):
                lines.append(f"{s} {d} {p.latency_ns} {p.gap_ns} {p.bulk_gap_fs}")
    return "\n".join(lines) + "\n"


def write_pair_table(file: Path, table: list[list[Pair]]) -> Path:
    """Writes the table for LOGGP_TOPOLOGY and an empty directory beside it where the
    shims publish their addresses; returns the table's path."""
    file.write_text(table_text(table))
    names = Path(str(file) + NAMES_SUFFIX)
    names.mkdir(exist_ok=True)
    for old in names.iterdir():
        os.unlink(old)
    return file
