"""Ansible inventories as the `ansible` launcher reads them: INI (`[group]` lines of
`name key=value ...`) or YAML (`all: {vars, hosts, children}` nested as Ansible nests it).

A host's variables are its groups' `vars` (YAML: outer groups first) under its own.  The
launcher takes from them:

    loggp_data_address (else ansible_host, else the name)   the hostfile's address
    loggp_slots (default 1)                                  its slots
    ansible_user, ansible_port, ansible_ssh_private_key_file, ansible_ssh_common_args
                                                             how mpirun's ssh reaches it
    loggp_data_interface                                     the interface MPI and
                                                             libfabric's tcp keep to
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from loggp.errors import LoggpError


class InventoryError(LoggpError):
    """The inventory cannot be read or has no host in the group; the message says which."""

    exit_code = 2


@dataclass(frozen=True)
class Host:
    name: str
    vars: dict[str, Any]

    @property
    def address(self) -> str:
        return str(
            self.vars.get("loggp_data_address") or self.vars.get("ansible_host") or self.name
        )

    @property
    def slots(self) -> str:
        return str(self.vars.get("loggp_slots", 1))

    def ssh_args(self) -> list[str]:
        """ssh options that reach this host as Ansible does (empty: ssh's defaults)."""
        args = shlex.split(str(self.vars.get("ansible_ssh_common_args", "")))
        if "ansible_ssh_private_key_file" in self.vars:
            args += ["-i", str(self.vars["ansible_ssh_private_key_file"])]
        if "ansible_port" in self.vars:
            args += ["-p", str(self.vars["ansible_port"])]
        if "ansible_user" in self.vars:
            args += ["-l", str(self.vars["ansible_user"])]
        return args


def read_inventory(path: Path, group: str | None) -> list[Host]:
    """The hosts of group (None: of every group), in the inventory's order, each once."""
    try:
        text = path.read_text()
    except OSError as e:
        raise InventoryError(f"{path}: cannot read the inventory: {e.strerror}") from None
    if path.suffix in (".yml", ".yaml"):
        hosts = _yaml_hosts(path, text, group)
    else:
        hosts = _ini_hosts(text, group)
    if not hosts:
        which = f"group [{group}]" if group else "any group"
        raise InventoryError(f"{path}: no hosts in {which} of the inventory")
    return hosts


def _ini_hosts(text: str, group: str | None) -> list[Host]:
    hosts: dict[str, Host] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            continue
        if current is not None and ":" in current:
            continue  # [group:vars] and [group:children] hold no hosts
        if group is not None and current != group:
            continue
        name, *vars_ = shlex.split(line)
        hosts.setdefault(name, Host(name, dict(v.split("=", 1) for v in vars_ if "=" in v)))
    return list(hosts.values())


def _yaml_hosts(path: Path, text: str, group: str | None) -> list[Host]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InventoryError(f"{path}: not a YAML inventory: {e}") from None
    if not isinstance(doc, dict):
        raise InventoryError(f"{path}: a YAML inventory is a mapping of groups (all: ...)")
    found: dict[str, dict[str, Any]] = {}
    order: list[str] = []

    def walk(name: str, node: Any, inherited: dict[str, Any], selected: bool) -> None:
        if node is None:
            return
        if not isinstance(node, dict):
            raise InventoryError(f"{path}: group '{name}': expected hosts, vars or children")
        here = {**inherited, **(node.get("vars") or {})}
        selected = selected or group is None or name == group
        for host, hvars in (node.get("hosts") or {}).items():
            merged = {**found.get(host, {}), **here, **(hvars or {})}
            found[host] = merged
            if selected and host not in order:
                order.append(host)
        for child, sub in (node.get("children") or {}).items():
            walk(child, sub, here, selected)

    for name, node in doc.items():
        walk(name, node, {}, False)
    return [Host(h, found[h]) for h in order]
