"""The simulated platform of `emulator: {shim: smpi}`: SimGrid's XML and SMPI's settings for
one point, from the stack's own LogGP parameters plus the point's knobs (docs/simulator.md).

Every rank gets a host of its own in one SimGrid zone routed by Dijkstra, each host joined
to a router by two one-way links, so a message from rank s to rank d crosses s's link up
and d's link down (checked by tests/test_smpi.py: a ping-pong's half round trip is o_s + L
+ o_r).  The mapping:

    smpi/os, smpi/ois = o_s + Δo_s      (a blocking and a non-blocking send's overhead)
    smpi/or           = o_r + Δo_r
    each link         latency (L + ΔL) / 2
    a link up         bandwidth 1 / (G + ΔG), shared by the host's messages out
    a link down       no bandwidth limit (UNLIMITED_BPS)

so, as in LogGP and the fabric shim, G paces a sender's messages and not a receiver's: n
ranks sending to one at once each get the whole bandwidth (a shared link down, as a
SimGrid cluster's private links are, made an all-to-all at 4 ranks 3-4.5 times slower
than the emulator's).

Beneath an experiment's `network` with levels (docs/experiments.md, "Network") the router
is the rank's node's, and each group of a level has a router of its own: leaving a group
crosses its link up to the group above and, on the other side, a link down, each with half
the level's latency and the bandwidth 1 / its bulk gap (FATPIPE: every message the whole
of it, as the shim's per-destination pacers give each pair its own), so a pair's route
adds what loggp/plan/topology.py derives for it.  A level's `gap` has no SMPI equivalent,
nor do networks given by links: both are refused when the file is loaded.

with SimGrid's own corrections switched off (bandwidth factor 1, no TCP window, no reverse
traffic), so the wire is exactly L and G, except the latency factor: a message crosses the
route as many times as the stack's protocol makes it (Stack.trips, measured beneath the
fabric shim: tcp;ofi_rxm's messages above 16 KiB, 3), and every message is sent eagerly: by
default SMPI sends from 64 KiB on by rendezvous and charges no smpi/os or smpi/or there,
where LogGP (and the fabric shim) charge o per message at every size.  SMPI has no
per-message gap: Δg is refused when the file is loaded (knobs.def lists which knobs each
backend applies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from loggp.plan.knobs import FS_PER_NS, KnobSet, parse_knob
from loggp.plan.topology import Network

HOST_PREFIX = "rank-"
UNLIMITED_BPS = 1e15  # a link without a bandwidth limit: a byte in a femtosecond
# A simulated host's speed and the speed SMPI charges this machine's measured compute at
# (smpi/host-speed) are one value, so a burst of compute that took t seconds here takes t
# simulated seconds: the hosts run at this machine's measured speed.
HOST_SPEED_FLOPS = 1e9
EAGER_UP_TO = 2**31 - 1  # smpi/send-is-detached-thresh: every message eager, o charged
_NS = 1e-9


class PlatformError(ValueError):
    """The stack's parameters cannot make a platform (e.g. no bandwidth measured)."""


@dataclass(frozen=True)
class Stack:
    """A stack's own LogGP parameters (loggp-calibrate's medians, without the shim)."""

    o_s_ns: float
    o_r_ns: float
    latency_ns: float
    bulk_gap_ns_per_byte: float
    provider: str = ""
    # (size, trips): from that many bytes on a message crosses the network trips times
    # before the receiver has it (a rendezvous: 3), until the next entry's size
    # (loggp/run/trips.py measures them); none: one trip at every size.
    trips: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        for name in ("o_s_ns", "o_r_ns", "latency_ns"):
            if not getattr(self, name) >= 0:
                raise PlatformError(f"{name} {getattr(self, name)} of the stack: expected >= 0")
        if not self.bulk_gap_ns_per_byte > 0:
            raise PlatformError(
                f"G {self.bulk_gap_ns_per_byte} ns/B of the stack: expected above 0 "
                "(the simulated links need a finite bandwidth)"
            )
        sizes = [size for size, _ in self.trips]
        if sizes and (sizes[0] != 0 or sizes != sorted(set(sizes))):
            raise PlatformError(
                f"trips by size {list(self.trips)}: expected sizes from 0 up, each once"
            )
        if any(not (isinstance(t, int) and t >= 1) for _, t in self.trips):
            raise PlatformError(f"trips by size {list(self.trips)}: expected whole trips >= 1")

    def lat_factor(self) -> str:
        """SMPI's smpi/lat-factor: the route's latency times the trips of a message's size."""
        return ";".join(f"{size}:{t}" for size, t in self.trips or ((0, 1),))

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "o_s_us": self.o_s_ns / 1000,
            "o_r_us": self.o_r_ns / 1000,
            "L_us": self.latency_ns / 1000,
            "G_ns_per_B": self.bulk_gap_ns_per_byte,
            "trips": [list(st) for st in self.trips],
        }


@dataclass(frozen=True)
class Platform:
    """One point's simulated network: seconds, and bytes per second."""

    send_overhead_s: float
    recv_overhead_s: float
    link_latency_s: float  # each of a route's two links
    bandwidth_Bps: float
    lat_factor: str = "0:1"  # smpi/lat-factor: the stack's trips by size (Stack.lat_factor)

    @classmethod
    def of(cls, stack: Stack, knobs: KnobSet) -> Platform:
        p = knobs.params()
        if p.gap_ns:
            raise PlatformError("SMPI has no per-message gap: gap cannot be simulated")
        bulk_gap_ns = stack.bulk_gap_ns_per_byte + p.bulk_gap_fs / FS_PER_NS
        return cls(
            send_overhead_s=(stack.o_s_ns + p.send_overhead_ns) * _NS,
            recv_overhead_s=(stack.o_r_ns + p.recv_overhead_ns) * _NS,
            link_latency_s=(stack.latency_ns + p.latency_ns) * _NS / 2,
            bandwidth_Bps=1 / (bulk_gap_ns * _NS),
            lat_factor=stack.lat_factor(),
        )

    def xml(self, hosts: int, network: Network | None = None) -> str:
        """The platform file: hosts rank-0 .. rank-(hosts-1), each with its links up and
        down to its router (its node's beneath a network, whose levels add theirs)."""
        z = _Zone()
        placed = _placement(network, hosts)
        for r in range(hosts):
            z.host(f"{HOST_PREFIX}{r}")
            z.pair(f"{HOST_PREFIX}{r}", placed[r], f"rank{r}", self.link_latency_s,
                   self.bandwidth_Bps, UNLIMITED_BPS, "SHARED")  # fmt: skip
        if network is not None:
            _levels(z, network, hosts)
        return z.text()

    def config(self) -> list[str]:
        """smpirun's --cfg options for this network."""
        send = f"0:{self.send_overhead_s:.9g}:0"
        return [
            f"--cfg=smpi/os:{send}",
            f"--cfg=smpi/ois:{send}",
            f"--cfg=smpi/or:0:{self.recv_overhead_s:.9g}:0",
            f"--cfg=smpi/lat-factor:{self.lat_factor}",
            "--cfg=smpi/bw-factor:0:1",
            "--cfg=network/TCP-gamma:0",
            "--cfg=network/crosstraffic:0",
            f"--cfg=smpi/send-is-detached-thresh:{EAGER_UP_TO}",
            f"--cfg=smpi/host-speed:{HOST_SPEED_FLOPS:.9g}f",
        ]

    def as_dict(self) -> dict[str, float | str]:
        return {
            "smpi_os_s": self.send_overhead_s,
            "smpi_or_s": self.recv_overhead_s,
            "link_latency_s": self.link_latency_s,
            "bandwidth_Bps": self.bandwidth_Bps,
            "lat_factor": self.lat_factor,
        }


def _router(net: Network, depth: int, group: int) -> str:
    """The router of a group of a level (depth 0: a node)."""
    levels = net.levels or []
    return f"l{depth}-{levels[depth].name}-{group}"


def _placement(network: Network | None, hosts: int) -> list[str]:
    """The router each rank's host hangs from: one for all, or its node's."""
    if network is None:
        return ["sw"] * hosts
    return [_router(network, 0, network.node_of(r, hosts)) for r in range(hosts)]


def _levels(z: _Zone, net: Network, hosts: int) -> None:
    """From each node a rank is on, up through its groups: each group's router joined to
    the one of the group above (the top level's to one router, "top") by the level's
    links up and down."""
    levels = net.levels or []
    groups = sorted({net.node_of(r, hosts) for r in range(hosts)})
    for depth, lv in enumerate(levels):
        upper = levels[depth + 1] if depth + 1 < len(levels) else None
        size = (upper.size or 1) if upper is not None else 1
        bulk_s = parse_knob("bulk_gap", lv.bulk_gap) / FS_PER_NS * _NS
        bps = 1 / bulk_s if bulk_s else UNLIMITED_BPS
        latency_s = parse_knob("latency", lv.latency) * _NS / 2
        for g in groups:
            below = _router(net, depth, g)
            above = _router(net, depth + 1, g // size) if upper is not None else "top"
            z.pair(below, above, below, latency_s, bps, bps, "FATPIPE")
        groups = sorted({g // size for g in groups})


class _Zone:
    """A Dijkstra zone's XML: hosts, routers, and pairs of one-way links between two."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.routers: set[str] = set()

    def host(self, name: str) -> None:
        self.lines.append(f'    <host id={quoteattr(name)} speed="{HOST_SPEED_FLOPS:.9g}f"/>')

    def router(self, name: str) -> None:
        if name not in self.routers:
            self.routers.add(name)
            self.lines.append(f"    <router id={quoteattr(name)}/>")

    def pair(self, below: str, above: str, tag: str, latency_s: float, up_bps: float,
             down_bps: float, sharing: str) -> None:  # fmt: skip
        """below's link up to above and above's link down to below."""
        self.router(above)
        for way, src, dst, bps in (("up", below, above, up_bps), ("down", above, below, down_bps)):
            link = f"{way}-{tag}"
            self.lines.append(
                f'    <link id={quoteattr(link)} bandwidth="{bps:.9g}Bps" '
                f'latency="{latency_s:.9g}s" sharing_policy="{sharing}"/>'
            )
            self.lines.append(
                f'    <route src={quoteattr(src)} dst={quoteattr(dst)} symmetrical="NO">'
                f"<link_ctn id={quoteattr(link)}/></route>"
            )

    def text(self) -> str:
        # SimGrid wants every host, router and link before the routes that name them.
        decl = [ln for ln in self.lines if "<route " not in ln]
        routes = [ln for ln in self.lines if "<route " in ln]
        return (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            '  <zone id="loggp" routing="Dijkstra">\n'
            + "".join(ln + "\n" for ln in decl + routes)
            + "  </zone>\n</platform>\n"
        )


def hostfile(hosts: int) -> str:
    """smpirun's hostfile: rank r on host rank-r."""
    return "".join(f"{HOST_PREFIX}{r}\n" for r in range(hosts))
