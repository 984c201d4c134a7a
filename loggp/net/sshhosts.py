"""The testbed's ssh hosts (`loggp testbed up N --ssh`): a management network and an sshd
in every host, so Ansible and mpirun reach the hosts as they reach a cluster's.

    management network: bridge <prefix>m in the root namespace, 10.232.0.254/24
    host i:      eth1 = 10.232.0.<i+1>/24 (management), eth0 = 10.231.0.<i+1>/24 (data)
    emulator:    namespace <prefix>-emu, eth1 = 10.232.0.200/24, the wire's ports
                 <prefix>w<i> (no address), where Ansible's loggp_wire runs loggp-wire
    every host:  its own sshd on both its addresses, port 22, in a mount namespace of
                 its own (a hugetlbfs mount made over ssh stays in that host) and a UTS
                 namespace whose hostname is the host's name (what its ranks report)

The keys (a host key and a client key whose public half is the only authorized one) and
each sshd's configuration and log live in <hosts dir>/ssh/ (<state dir>/testbed-<prefix>-
hosts/, which down removes, with what Ansible wrote there per host); the sshds end with
their namespaces' processes.
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from loggp.errors import LoggpError
from loggp.net import netns
from loggp.run.proc import failure_line

MGMT_SUBNET = "10.232.0"
MGMT_ROOT_ADDR = f"{MGMT_SUBNET}.254"
EMU_MGMT_ADDR = f"{MGMT_SUBNET}.200"
SSH_PORT = 22
READY_TIMEOUT_S = 20.0


class SshHostsError(LoggpError):
    """A host's sshd or keys could not be made; the message names it."""


def mgmt_addr(i: int) -> str:
    return f"{MGMT_SUBNET}.{i + 1}"


def ssh_dir(hosts_dir: Path) -> Path:
    return hosts_dir / "ssh"


def client_key(ssh_dir: Path) -> Path:
    return ssh_dir / "id_ed25519"


def make_keys(ssh_dir: Path) -> None:
    """The host key every sshd presents and the client key they all accept."""
    ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    keygen = netns.tool("ssh-keygen", "openssh-client")
    for key in (ssh_dir / "host_ed25519", client_key(ssh_dir)):
        if not key.exists():
            netns.run(
                [keygen, "-q", "-t", "ed25519", "-N", "", "-C", "loggp-testbed", "-f", str(key)],
                f"creating ssh key {key}",
            )
    pub = client_key(ssh_dir).with_suffix(".pub").read_text()
    (ssh_dir / "authorized_keys").write_text(pub)


def _config(ssh_dir: Path, name: str, addresses: list[str]) -> Path:
    cfg = ssh_dir / f"sshd_config.{name}"
    listen = "".join(f"ListenAddress {a}:{SSH_PORT}\n" for a in addresses)
    cfg.write_text(
        f"# sshd of testbed host {name} (loggp/net/sshhosts.py)\n{listen}"
        f"HostKey {ssh_dir / 'host_ed25519'}\n"
        f"AuthorizedKeysFile {ssh_dir / 'authorized_keys'}\n"
        f"PidFile {ssh_dir / f'sshd.{name}.pid'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nUseDNS no\nStrictModes no\n"
        "Subsystem sftp internal-sftp\nAcceptEnv LANG LC_*\n"
    )
    return cfg


def start_sshd(ssh_dir: Path, ns: str, name: str, addresses: list[str]) -> None:
    """sshd in namespace ns (and mount and UTS namespaces of its own, hostname name) on
    addresses, detached; it ends when the testbed ends the namespace's processes."""
    sshd = netns.tool("sshd", "openssh-server")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # its privilege separation dir
    cfg = _config(ssh_dir, name, addresses)
    log = ssh_dir / f"sshd.{name}.log"
    argv = [
        netns.tool("ip", "iproute2"), "netns", "exec", ns,
        "unshare", "--mount", "--uts", "--propagation", "private",
        "sh", "-c", 'hostname "$0" && exec "$@"', name, sshd, "-D", "-e", "-f", str(cfg),
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    _wait_listening(proc, addresses[0], log)


def _wait_listening(proc: subprocess.Popen[bytes], address: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SshHostsError(
                f"sshd for {address} exited with status {proc.returncode}: "
                f"{failure_line(log) or 'no output'} (log: {log})"
            )
        try:
            with socket.create_connection((address, SSH_PORT), timeout=1.0):
                return
        except OSError:
            time.sleep(0.05)
    raise SshHostsError(f"sshd for {address} did not listen within {READY_TIMEOUT_S:g} s")
