"""Helpers of the tests that run Ansible against namespace hosts (`loggp testbed up N
--ssh`): a playbook run, its recap, the tasks a run changed, a command over ssh, a
ping-pong run's half round trips."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from loggp.net import sshhosts, testbed
from loggp.net.inventory import SSH_ARGS

REPO = Path(__file__).resolve().parent.parent
ANSIBLE = REPO / "ansible"
PLAY_TIMEOUT_S = 900


def play(
    inventory: Path, playbook: str, extra: dict[str, Any] | None = None
) -> subprocess.CompletedProcess[str]:
    """ansible-playbook with the project's ansible.cfg and Mitogen's strategy, its output
    uncoloured.  Mitogen (Debian's ansible-mitogen) keeps one Python per host for the
    whole play instead of shipping every task's module over ssh: site.yml's two runs took
    115 s instead of 252 s on namespace hosts (ansible/README.md)."""
    return subprocess.run(
        ["ansible-playbook", "-i", str(inventory), playbook, "-e", json.dumps(extra or {})],
        cwd=ANSIBLE, capture_output=True, text=True, timeout=PLAY_TIMEOUT_S, check=False,
        env={**os.environ, "ANSIBLE_CONFIG": str(ANSIBLE / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
             "ANSIBLE_STRATEGY": "mitogen_linear"},
    )  # fmt: skip


def recap(out: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP's counts per host."""
    tail = out[out.rindex("PLAY RECAP") :]
    return {
        m.group(1): {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
        for m in re.finditer(r"^(\S+)\s+:\s+(.*)$", tail, re.MULTILINE)
    }


def changed_tasks(out: str) -> list[str]:
    """The tasks that changed something, each with the hosts it changed (a task's block
    runs from its TASK line to the next one)."""
    blocks = re.split(r"^(?=TASK \[|PLAY RECAP)", out, flags=re.M)
    return [
        b.splitlines()[0] + " " + " ".join(re.findall(r"^changed: \[\S+?\]", b, re.M))
        for b in blocks
        if re.search(r"^changed: ", b, re.M)
    ]


def ssh(
    state: testbed.State, address: str, command: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """command as root on the host at address, with the testbed's client key."""
    key = sshhosts.client_key(sshhosts.ssh_dir(Path(state.hosts_dir)))
    return subprocess.run(
        ["ssh", "-i", str(key), *SSH_ARGS.split(), "-o", "BatchMode=yes",
         f"root@{address}", command],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def point_half_rtts(run: Path) -> tuple[dict[str, float], dict[str, float], bool]:
    """A ping-pong run's half round trips in µs by sweep knob (baseline, latency): the
    least of its repeats' medians, the least of its repeats' minima, and whether every
    point was ok (none degraded: the shim kept its delays within its bound).  The median,
    not the point's time: a CI run's baseline took 0.32 s against the usual 0.08 s, about
    what one of TCP's 200 ms retransmission timeouts adds, and a stall like that moves the
    mean round trip, not the median.  The least repeat: a noisy neighbour inflates none of
    them.  The minimum: what no host effect lengthened."""
    with sqlite3.connect(run / "results.sqlite") as db:
        rows = db.execute("SELECT sweep_knob, status, result FROM points").fetchall()
    assert all(status in ("ok", "degraded") for _, status, _ in rows), rows
    median: dict[str, float] = {}
    least: dict[str, float] = {}
    for knob, _, result in rows:
        m = json.loads(result)["metrics"]
        for into, t in ((median, m["half_rtt_median_us"]), (least, m["half_rtt_min_us"])):
            into[knob] = min(t, into.get(knob, t))
    return median, least, all(status == "ok" for _, status, _ in rows)
