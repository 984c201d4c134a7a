"""ansible/: lint (yamllint, ansible-lint's production profile, offline), the playbooks'
syntax, the roles' argument specs refusing a wrong type by the option's name, and the
templates a real cluster uses but this machine cannot run (systemd units, Prometheus'
scrape configuration checked by promtool, the experiment's hostfile), rendered by the
roles' own tasks against localhost.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ANSIBLE = REPO / "ansible"
HERE = Path(__file__).resolve().parent / "ansible"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found: make deps installs it (DEB_PACKAGES)")
    return path


def _run(argv: list[str], cwd: Path = ANSIBLE, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "ANSIBLE_CONFIG": str(ANSIBLE / "ansible.cfg"),
             "ANSIBLE_NOCOLOR": "1", "NO_COLOR": "1", **env},
    )  # fmt: skip


def test_yamllint_is_clean() -> None:
    res = _run([_tool("yamllint"), "-s", "."])
    assert res.returncode == 0, res.stdout + res.stderr


def test_ansible_lint_production_profile_is_clean() -> None:
    res = _run([_tool("ansible-lint"), "--offline", "--profile", "production", "-q"])
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("playbook", ["site.yml", "teardown.yml"])
def test_playbook_syntax(playbook: str) -> None:
    res = _run([_tool("ansible-playbook"), "--syntax-check", playbook])
    assert res.returncode == 0, res.stdout + res.stderr


def _playbook(name: str, inventory: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """tests/ansible/NAME over a local connection, with the roles of ansible/."""
    return _run(
        [_tool("ansible-playbook"), "-i", inventory, "-c", "local", str(HERE / name),
         "-e", "ansible_python_interpreter=/usr/bin/python3", *extra],
        ANSIBLE_ROLES_PATH=str(ANSIBLE / "roles"),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("role", "option", "value"),
    [("loggp_dpdk", "loggp_dpdk_hugepages", "lots"),
     ("loggp_slurm", "loggp_slurm_install_packages", "maybe")],
)  # fmt: skip
def test_a_wrong_type_is_refused_naming_the_option(role: str, option: str, value: str) -> None:
    res = _playbook("spec.yml", "localhost,", "-e", json.dumps({"spec_role": role, option: value}))
    assert res.returncode == 2, res.stdout + res.stderr
    failed = [line for line in res.stdout.splitlines() if line.startswith("fatal:")]
    assert len(failed) == 1, res.stdout
    assert f"argument '{option}' is of type" in res.stdout, res.stdout


def test_units_scrape_config_and_hostfile_render(tmp_path: Path) -> None:
    res = _playbook(
        "render.yml", str(ANSIBLE / "inventories" / "cluster.yml"),
        "-e", f"out={tmp_path}", "-e", f"role_dir={ANSIBLE / 'roles'}",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    unit = (tmp_path / "loggp-wire.service").read_text()
    assert "ExecStart=/opt/loggp/build/emulator/wire/loggp-wire -l 2 " in unit
    assert " -a0000:3b:00.0 -a0000:3b:00.1 -- --mode pair " in unit
    assert "--metrics 192.168.10.2:9477" in unit
    direct = (tmp_path / "loggp-node-exporter.sh").read_text()
    assert direct.splitlines()[-1].startswith(
        "exec /usr/bin/prometheus-node-exporter --collector.disable-defaults "
        "--web.listen-address=192.168.10.3:9100 --collector.cpu"
    )
    prom = (tmp_path / "prometheus.yml").read_text()  # promtool passed it (validate)
    for host in ("node01", "node04", "wire01", "mon01"):
        assert f'host: "{host}"' in prom
    assert "192.168.10.2:9477" in prom
    hostfile = (tmp_path / "hostfile").read_text().splitlines()
    assert hostfile[2:] == [f"10.10.{h // 3}.1{h} slots=16" for h in (1, 2, 3, 4)]


def _vagrant(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_tool("vagrant"), *args], cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "VAGRANT_HOME": str(tmp_path), "VAGRANT_DEFAULT_PROVIDER": "libvirt",
             "VAGRANT_DOTFILE_PATH": str(tmp_path / "dot"),
             "LOGGP_VAGRANT_COMPUTE": "4", **env},
        check=False,
    )  # fmt: skip


def test_vagrantfile_validates_with_libvirt_and_virtualbox(tmp_path: Path) -> None:
    if "vagrant-libvirt" not in _vagrant(tmp_path, "plugin", "list").stdout:
        pytest.skip("the vagrant-libvirt plugin is not installed (Debian's vagrant-libvirt)")
    res = _vagrant(tmp_path, "validate")
    assert res.returncode == 0 and "validated successfully" in res.stdout, res.stdout + res.stderr
    # VirtualBox is not installed here: its block is checked without the provider.
    res = _vagrant(tmp_path, "validate", "--ignore-provider")
    assert res.returncode == 0 and "validated successfully" in res.stdout, res.stdout + res.stderr


def test_vagrantfile_refuses_a_bad_count(tmp_path: Path) -> None:
    res = _vagrant(tmp_path, "validate", LOGGP_VAGRANT_COMPUTE="one")
    assert res.returncode != 0
    assert "LOGGP_VAGRANT_COMPUTE=one: expected a whole number, 2 or more" in res.stderr
