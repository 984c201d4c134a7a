"""The simulated platform of `emulator: {shim: smpi}`: SimGrid's XML and SMPI's settings for
one point, from the stack's own LogGP parameters plus the point's knobs (docs/simulator.md).

Every rank gets a host of its own in one SimGrid cluster without a backbone, so a message
from rank s to rank d crosses two links, s's private link and d's (checked by
tests/test_smpi.py: a ping-pong's half round trip is o_s + L + o_r).  The mapping:

    smpi/os, smpi/ois = o_s + Δo_s      (a blocking and a non-blocking send's overhead)
    smpi/or           = o_r + Δo_r
    each link         latency (L + ΔL) / 2, bandwidth 1 / (G + ΔG)

with SimGrid's own corrections switched off (latency and bandwidth factors 1, no TCP window,
no reverse traffic), so the wire is exactly L and G, and every message sent eagerly: by
default SMPI sends from 64 KiB on by rendezvous and charges no smpi/os or smpi/or there,
where LogGP (and the fabric shim) charge o per message at every size.  SMPI has no
per-message gap: Δg is refused when the file is loaded (knobs.def lists which knobs each
backend applies).
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from loggp.plan.knobs import FS_PER_NS, KnobSet

HOST_PREFIX = "rank-"
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

    def __post_init__(self) -> None:
        for name in ("o_s_ns", "o_r_ns", "latency_ns"):
            if not getattr(self, name) >= 0:
                raise PlatformError(f"{name} {getattr(self, name)} of the stack: expected >= 0")
        if not self.bulk_gap_ns_per_byte > 0:
            raise PlatformError(
                f"G {self.bulk_gap_ns_per_byte} ns/B of the stack: expected above 0 "
                "(the simulated links need a finite bandwidth)"
            )

    def as_dict(self) -> dict[str, float | str]:
        return {
            "provider": self.provider,
            "o_s_us": self.o_s_ns / 1000,
            "o_r_us": self.o_r_ns / 1000,
            "L_us": self.latency_ns / 1000,
            "G_ns_per_B": self.bulk_gap_ns_per_byte,
        }


@dataclass(frozen=True)
class Platform:
    """One point's simulated network: seconds, and bytes per second."""

    send_overhead_s: float
    recv_overhead_s: float
    link_latency_s: float  # each of a route's two links
    bandwidth_Bps: float

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
        )

    def xml(self, hosts: int) -> str:
        """The platform file: one cluster of hosts rank-0 .. rank-(hosts-1)."""
        attrs = {
            "id": "loggp",
            "prefix": HOST_PREFIX,
            "suffix": "",
            "radical": f"0-{hosts - 1}",
            "speed": f"{HOST_SPEED_FLOPS:.9g}f",
            "bw": f"{self.bandwidth_Bps:.9g}Bps",
            "lat": f"{self.link_latency_s:.9g}s",
            "sharing_policy": "SPLITDUPLEX",
        }
        cluster = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
        return (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f"  <cluster {cluster}/>\n"
            "</platform>\n"
        )

    def config(self) -> list[str]:
        """smpirun's --cfg options for this network."""
        send = f"0:{self.send_overhead_s:.9g}:0"
        return [
            f"--cfg=smpi/os:{send}",
            f"--cfg=smpi/ois:{send}",
            f"--cfg=smpi/or:0:{self.recv_overhead_s:.9g}:0",
            "--cfg=smpi/lat-factor:0:1",
            "--cfg=smpi/bw-factor:0:1",
            "--cfg=network/TCP-gamma:0",
            "--cfg=network/crosstraffic:0",
            f"--cfg=smpi/send-is-detached-thresh:{EAGER_UP_TO}",
            f"--cfg=smpi/host-speed:{HOST_SPEED_FLOPS:.9g}f",
        ]

    def as_dict(self) -> dict[str, float]:
        return {
            "smpi_os_s": self.send_overhead_s,
            "smpi_or_s": self.recv_overhead_s,
            "link_latency_s": self.link_latency_s,
            "bandwidth_Bps": self.bandwidth_Bps,
        }


def hostfile(hosts: int) -> str:
    """smpirun's hostfile: rank r on host rank-r."""
    return "".join(f"{HOST_PREFIX}{r}\n" for r in range(hosts))
