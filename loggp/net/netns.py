"""Network namespaces, veth pairs and the processes in them, through iproute2 and ethtool.

Each function does one system change and raises NetnsError naming the command and its
error on failure; the testbed (loggp/net/testbed.py) records every change in its state file
before or right after making it.  Root is needed for all changes.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from loggp.errors import LoggpError

_CMD_TIMEOUT_S = 20.0
OFFLOADS = ("tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off")


class NetnsError(LoggpError):
    """A namespace, interface or process operation failed; the message names it."""


def tool(name: str, package: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin")
    if not path:
        raise NetnsError(f"'{name}' not found: install Debian's {package} (make deps does)")
    return path


def run(argv: Sequence[str], what: str, timeout: float = _CMD_TIMEOUT_S) -> str:
    """Runs argv; its stdout, or NetnsError with what and the command's last stderr line."""
    try:
        res = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise NetnsError(f"{what}: '{' '.join(argv)}' did not finish in {timeout:g} s") from None
    except OSError as e:
        raise NetnsError(f"{what}: cannot run {argv[0]}: {e.strerror}") from None
    if res.returncode != 0:
        err = (res.stderr.strip().splitlines() or ["no error output"])[-1]
        raise NetnsError(f"{what}: '{' '.join(argv)}' failed: {err}")
    return res.stdout


def namespaces() -> set[str]:
    """Names of the network namespaces in /run/netns (ip netns list)."""
    out = run([tool("ip", "iproute2"), "netns", "list"], "listing network namespaces")
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def links() -> set[str]:
    """Names of the interfaces of the root namespace."""
    out = run([tool("ip", "iproute2"), "-o", "link", "show"], "listing interfaces")
    names = set()
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.add(parts[1].strip().split("@", 1)[0])
    return names


def ns_add(ns: str) -> None:
    ip = tool("ip", "iproute2")
    run([ip, "netns", "add", ns], f"creating namespace {ns}")
    run([ip, "-n", ns, "link", "set", "lo", "up"], f"bringing up lo in {ns}")


def ns_pids(ns: str) -> list[int]:
    """The processes whose network namespace is ns (ip netns pids; zombies are not among
    them)."""
    out = run([tool("ip", "iproute2"), "netns", "pids", ns], f"listing the processes in {ns}")
    return [int(p) for p in out.split()]


def ns_del(ns: str) -> None:
    run([tool("ip", "iproute2"), "netns", "del", ns], f"removing namespace {ns}")


def veth_add(root_if: str, ns: str, ns_if: str) -> None:
    """A veth pair: root_if in the root namespace, ns_if created directly inside ns."""
    run(
        [tool("ip", "iproute2"), "link", "add", root_if, "type", "veth",
         "peer", "name", ns_if, "netns", ns],
        f"creating veth {root_if} <-> {ns}:{ns_if}",
    )  # fmt: skip


def link_del(name: str) -> None:
    run([tool("ip", "iproute2"), "link", "del", name], f"removing interface {name}")


def root_if_setup(name: str, mtu: int) -> None:
    """The wire's end: no IPv6 (no router solicitations on the wire), no offloads, up."""
    ipv6 = Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6")
    if ipv6.exists():  # absent when the kernel has no IPv6 at all
        ipv6.write_text("1\n")
    ip = tool("ip", "iproute2")
    run([ip, "link", "set", name, "mtu", str(mtu)], f"setting the MTU of {name}")
    run([tool("ethtool", "ethtool"), "-K", name, *OFFLOADS], f"switching off offloads of {name}")
    run([ip, "link", "set", name, "up"], f"bringing up {name}")


def ns_if_setup(ns: str, name: str, address: str, mtu: int) -> None:
    """The host's end: IPv4 address, no IPv6, no offloads, up."""
    ip = tool("ip", "iproute2")
    exec_ = [ip, "netns", "exec", ns]
    run([*exec_, "sysctl", "-qew", "net.ipv6.conf.all.disable_ipv6=1"], f"disabling IPv6 in {ns}")
    run([ip, "-n", ns, "link", "set", name, "mtu", str(mtu)], f"setting the MTU in {ns}")
    run([*exec_, tool("ethtool", "ethtool"), "-K", name, *OFFLOADS], f"offloads in {ns}")
    run([ip, "-n", ns, "addr", "add", address, "dev", name], f"addressing {name} in {ns}")
    run([ip, "-n", ns, "link", "set", name, "up"], f"bringing up {name} in {ns}")


def bridge_add(name: str, address: str) -> None:
    """A bridge in the root namespace with address (the management network's root end)."""
    ip = tool("ip", "iproute2")
    run([ip, "link", "add", name, "type", "bridge"], f"creating bridge {name}")
    run([ip, "addr", "add", address, "dev", name], f"addressing bridge {name}")
    run([ip, "link", "set", name, "up"], f"bringing up bridge {name}")


def bridge_port_add(bridge: str, root_if: str) -> None:
    """root_if joins bridge and comes up."""
    ip = tool("ip", "iproute2")
    run([ip, "link", "set", root_if, "master", bridge], f"attaching {root_if} to {bridge}")
    run([ip, "link", "set", root_if, "up"], f"bringing up {root_if}")


def veth_add_between(a_if: str, a_ns: str, b_if: str, b_ns: str) -> None:
    """A veth pair created with a_if directly inside a_ns and b_if inside b_ns."""
    run(
        [tool("ip", "iproute2"), "link", "add", a_if, "netns", a_ns, "type", "veth",
         "peer", "name", b_if, "netns", b_ns],
        f"creating veth {a_ns}:{a_if} <-> {b_ns}:{b_if}",
    )  # fmt: skip


def ns_port_setup(ns: str, name: str, mtu: int) -> None:
    """A port of the wire inside ns (no address): no IPv6, no offloads, up."""
    ip = tool("ip", "iproute2")
    exec_ = [ip, "netns", "exec", ns]
    run(
        [*exec_, "sysctl", "-qew", f"net.ipv6.conf.{name}.disable_ipv6=1"],
        f"disabling IPv6 on {name} in {ns}",
    )
    run([ip, "-n", ns, "link", "set", name, "mtu", str(mtu)], f"setting the MTU in {ns}")
    run([*exec_, tool("ethtool", "ethtool"), "-K", name, *OFFLOADS], f"offloads in {ns}")
    run([ip, "-n", ns, "link", "set", name, "up"], f"bringing up {name} in {ns}")


def ns_addr_add(ns: str, name: str, address: str) -> None:
    """address on interface name in ns, and the interface up."""
    ip = tool("ip", "iproute2")
    run([ip, "-n", ns, "addr", "add", address, "dev", name], f"addressing {name} in {ns}")
    run([ip, "-n", ns, "link", "set", name, "up"], f"bringing up {name} in {ns}")
