"""`loggp testbed up|down|status|set|inventory`: the command group of the namespace testbed.

Knob options are checked here with the same parser as the shim and loggp-wire, so a bad
value is refused before anything is created, naming the option and the accepted forms.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from loggp.errors import KnobError, UsageError
from loggp.net import testbed
from loggp.net.inventory import inventory_of
from loggp.plan.dist import CORR_ENV, DIST_ENV, SEED_ENV, check_dist_env, file_dist_env
from loggp.plan.knobs import Knob, conflict, in_report_unit, parse_knob

# option -> (wire key, knob whose forms it takes); jitter is a time like latency.
_TIME_OPTIONS = {
    "latency": Knob.LATENCY,
    "jitter": Knob.LATENCY,
    "gap": Knob.GAP,
    "bandwidth": Knob.BANDWIDTH,
    "bulk_gap": Knob.BULK_GAP,
}
_COUNT_OPTIONS = ("burst", "queue_pkts", "queue_bytes")
NEGATABLE_OPTIONS = frozenset(
    "--" + k.replace("_", "-") for k in (*_TIME_OPTIONS, *_COUNT_OPTIONS, "loss", "port")
)


def _option(key: str) -> str:
    return "--" + key.replace("_", "-")


def wire_knobs(args: argparse.Namespace) -> dict[str, Any]:
    """The knob options given, as control-protocol keys and values; KnobError naming the
    option and the accepted forms for a bad one."""
    out: dict[str, Any] = {}
    for key, knob in _TIME_OPTIONS.items():
        text = getattr(args, key)
        if text is None:
            continue
        try:
            parse_knob(knob, text)
        except KnobError:
            raise KnobError(
                f"bad value '{text}' for {_option(key)}: expected {knob.forms}"
            ) from None
        out[key] = text
    pair = conflict(k for k in out if k in set(Knob))  # jitter is no LogGP knob
    if pair is not None:
        raise KnobError(
            f"give {pair[1].option} or {pair[0].option}, not both (one is the other's inverse)"
        )
    for key in _COUNT_OPTIONS:
        text = getattr(args, key)
        if text is None:
            continue
        if not text.isdigit() or int(text) == 0:
            raise KnobError(
                f"bad value '{text}' for {_option(key)}: expected a whole number above 0"
            )
        out[key] = int(text)
    if args.loss is not None:
        try:
            loss = float(args.loss)
        except ValueError:
            loss = -1.0
        if not 0.0 <= loss <= 1.0:
            raise KnobError(
                f"bad value '{args.loss}' for --loss: expected a probability from 0 to 1"
            )
        out["loss"] = loss
    return out


def wire_argv(knobs: dict[str, Any]) -> list[str]:
    """The same knobs as loggp-wire command-line options (its default shaping)."""
    argv: list[str] = []
    for key, value in knobs.items():
        argv += [_option(key), str(value)]
    return argv


# the wire's delay distribution options and the shim settings they mirror
_DIST_OPTIONS = {DIST_ENV: "--latency-dist", CORR_ENV: "--latency-corr", SEED_ENV: "--seed"}


def dist_argv(args: argparse.Namespace) -> list[str]:
    """The wire's delay distribution options given to up, checked as the shim checks its
    settings (loggp/plan/dist.py) and worded with the options' names; an empirical file's
    path made absolute (the wire starts elsewhere)."""
    given = {DIST_ENV: args.latency_dist, CORR_ENV: args.latency_corr, SEED_ENV: args.seed}
    env = {name: value for name, value in given.items() if value is not None}
    try:
        check_dist_env(env)
    except KnobError as e:
        msg = str(e)
        for name, option in _DIST_OPTIONS.items():
            msg = msg.replace(name, option)
        raise KnobError(msg) from None
    if DIST_ENV in env:
        seed = int(env.get(SEED_ENV, "1"))
        env.update(file_dist_env(env[DIST_ENV], env.get(CORR_ENV), seed, Path.cwd()))
    return [arg for name, value in env.items() for arg in (_DIST_OPTIONS[name], value)]


def _add_dist_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "the wire's delay distribution, for all ports (the shim's LOGGP_LATENCY_DIST, "
        "LOGGP_LATENCY_CORR, LOGGP_SEED; emulator/wire/README.md); a run with shim: wire "
        "sets its experiment file's"
    )
    g.add_argument(
        "--latency-dist",
        dest="latency_dist",
        metavar="D",
        help="each packet's latency drawn around the port's: constant, uniform:TIME, "
        "normal:TIME, pareto:TIME, paretonormal:TIME or empirical:FILE",
    )
    g.add_argument(
        "--latency-corr",
        dest="latency_corr",
        metavar="R",
        help="correlation 0..1 of consecutive drawn delays",
    )
    g.add_argument("--seed", metavar="N", help="seed of the drawn delays, jitter and loss")


def _add_knob_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("wire knobs, per egress port (values need units)")
    g.add_argument("--latency", metavar="TIME", help=f"added one-way delay; {Knob.LATENCY.forms}")
    g.add_argument("--jitter", metavar="TIME", help="random extra delay up to TIME (no reorder)")
    g.add_argument("--gap", metavar="TIME", help="least time between two packets' starts")
    g.add_argument("--bandwidth", metavar="RATE", help=f"rate limit; {Knob.BANDWIDTH.forms}")
    g.add_argument("--bulk-gap", dest="bulk_gap", metavar="TIME/B", help=Knob.BULK_GAP.forms)
    g.add_argument("--burst", metavar="BYTES", help="bytes that may leave back to back")
    g.add_argument("--queue-pkts", dest="queue_pkts", metavar="N", help="delay line limit")
    g.add_argument("--queue-bytes", dest="queue_bytes", metavar="N", help="delay line limit")
    g.add_argument("--loss", metavar="P", help="drop probability 0..1")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "testbed",
        help="network-namespace hosts wired through loggp-wire",
        description="Hosts as network namespaces <prefix>-h<i> (10.231.0.<i+1>), each "
        "wired by a veth pair to one port of a loggp-wire switch that delays, paces and "
        "rate-limits packets (docs/testbed.md).  Needs root.",
    )
    tsub = p.add_subparsers(dest="testbed_command", required=True, metavar="ACTION")
    prefix_help = (
        f"names of the testbed's namespaces and interfaces (default {testbed.DEFAULT_PREFIX})"
    )

    up = tsub.add_parser("up", help="create N hosts and start the wire")
    up.add_argument("hosts", metavar="N", help="number of hosts (2 or more)")
    up.add_argument("--prefix", default=testbed.DEFAULT_PREFIX, help=prefix_help)
    up.add_argument("--metrics", metavar="HOST:PORT", help="loggp-wire's Prometheus endpoint")
    up.add_argument(
        "--ssh",
        action="store_true",
        help="hosts with sshds on a management network (10.232.0.0/24) and an emulator "
        "host holding the wire's ports, for Ansible (docs/cluster.md); no wire is started",
    )
    _add_knob_options(up)
    _add_dist_options(up)

    inv = tsub.add_parser("inventory", help="the Ansible inventory (YAML) of a --ssh testbed")
    inv.add_argument("--prefix", default=testbed.DEFAULT_PREFIX, help=prefix_help)
    inv.add_argument(
        "--slurm",
        action="store_true",
        help="also groups slurm_controller (host 0) and slurm_compute (every host) for "
        "ansible/slurm.yml, each host's Slurm and MUNGE files in its own directory",
    )

    down = tsub.add_parser("down", help="remove exactly what up created")
    down.add_argument("--prefix", default=testbed.DEFAULT_PREFIX, help=prefix_help)

    st = tsub.add_parser("status", help="hosts, the wire, its knobs and counters")
    st.add_argument("--prefix", default=testbed.DEFAULT_PREFIX, help=prefix_help)
    st.add_argument("--json", action="store_true", help="print JSON")

    s = tsub.add_parser("set", help="change the running wire's knobs live")
    s.add_argument("--prefix", default=testbed.DEFAULT_PREFIX, help=prefix_help)
    s.add_argument("--port", metavar="P", help="only port P (host P's side); default all")
    _add_knob_options(s)


def _us(ns: Any) -> str:
    return "-" if ns is None else f"{in_report_unit(Knob.LATENCY, int(ns)):g} us"


def _bandwidth(bulk_gap_fs: Any) -> str:
    """The wire keeps G as fs per byte; 0 is no limit."""
    if bulk_gap_fs is None:
        return "-"
    if int(bulk_gap_fs) == 0:
        return "unlimited"
    return f"{in_report_unit(Knob.BANDWIDTH, int(bulk_gap_fs)):g} MB/s"


def _ports_table(ports: list[dict[str, Any]], title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for c in ("port", "latency", "jitter", "gap", "bandwidth", "loss", "queue (pkts)"):
        t.add_column(c)
    for port in ports:
        t.add_row(
            str(port.get("port", "-")),
            _us(port.get("latency_ns")),
            _us(port.get("jitter_ns")),
            _us(port.get("gap_ns")),
            _bandwidth(port.get("bulk_gap_fs")),
            str(port.get("loss", "-")),
            str(port.get("queue_pkts", "-")),
        )
    return t


def _status_tables(doc: dict[str, Any], console: Console) -> None:
    wire = doc["wire"]
    alive = "running" if wire["alive"] else "NOT running"
    console.print(
        f"testbed {doc['prefix']}: loggp-wire pid {wire['pid']} {alive}, control "
        f"{wire['control']}, log {wire['log']}"
        + (f", metrics {wire['metrics']}" if wire["metrics"] else "")
    )
    if wire.get("latency_dist") not in (None, "constant"):
        corr = f", correlation {wire['latency_corr']}" if wire.get("latency_corr") else ""
        console.print(f"delays drawn from {wire['latency_dist']}{corr}, seed {wire['seed']}")
    if wire.get("pairs"):
        console.print(
            f"a network's delays between {wire['pairs']} pairs of ports (a run's "
            "network: docs/experiments.md)"
        )
    t = Table(title="hosts", title_justify="left")
    for c in ("host", "namespace", "address", "wire port", "present"):
        t.add_column(c)
    for h in doc["hosts"]:
        t.add_row(str(h["host"]), h["namespace"], h["address"], h["interface"], str(h["present"]))
    console.print(t)
    if "ports" in doc:
        console.print(_ports_table(doc["ports"], "knobs per egress port"))
    if "stats" in doc:
        s = Table(title="counters per port", title_justify="left")
        for c in ("port", "rx_pkts", "tx_pkts", "drops queue/loss/tx", "queue max"):
            s.add_column(c)
        for p in doc["stats"]:
            d = p.get("drops", {})
            s.add_row(
                str(p.get("port")), str(p.get("rx_pkts")), str(p.get("tx_pkts")),
                f"{d.get('queue')}/{d.get('loss')}/{d.get('tx')}", str(p.get("queue_depth_max")),
            )  # fmt: skip
        console.print(s)
    if "error" in wire:
        console.print(f"wire: {wire['error']}")


def cmd_testbed(args: argparse.Namespace, console: Console) -> int:
    action = args.testbed_command
    if action == "up":
        if not args.hosts.isdigit():
            raise UsageError(f"bad host count '{args.hosts}': expected a whole number, 2 or more")
        knobs = wire_knobs(args)
        dist = dist_argv(args)
        if args.ssh and (knobs or dist or args.metrics):
            raise UsageError(
                "testbed up --ssh starts no wire: give its knobs and metrics to Ansible's "
                "loggp_wire role (loggp_wire_knobs), not to up"
            )
        argv = wire_argv(knobs) + dist
        state = testbed.up(args.prefix, int(args.hosts), argv, args.metrics, args.ssh)
        hosts = (
            f"testbed {state.prefix} up: {state.hosts} hosts "
            f"{testbed.host_ns(state.prefix, 0)}..{testbed.host_ns(state.prefix, state.hosts - 1)} "
            f"({testbed.host_addr(0)}..{testbed.host_addr(state.hosts - 1)}), "
        )
        if state.ssh:
            console.print(
                f"{hosts}sshds on 10.232.0.0/24, emulator host {testbed.emu_ns(state.prefix)}; "
                f"inventory: loggp testbed inventory --prefix {state.prefix}"
            )
        else:
            console.print(
                f"{hosts}loggp-wire pid {state.wire.pid if state.wire else '?'}, "
                f"control {state.control}"
            )
        return 0
    if action == "inventory":
        state = testbed.State.load(testbed.check_prefix(args.prefix))
        if state is None or not state.ready:
            raise testbed.TestbedError(
                f"no testbed '{args.prefix}' is up: loggp testbed up N --ssh --prefix {args.prefix}"
            )
        print(
            yaml.safe_dump(inventory_of(state, slurm=args.slurm), sort_keys=False, width=1000),
            end="",
        )
        return 0
    if action == "down":
        removed = testbed.down(args.prefix)
        if not removed:
            console.print(f"testbed {args.prefix}: nothing to remove")
        for line in removed:
            console.print(f"removed {line}")
        return 0
    if action == "status":
        doc = testbed.status(args.prefix)
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            _status_tables(doc, console)
        return 0 if doc["wire"]["alive"] else 1
    req: dict[str, Any] = {"cmd": "set", **wire_knobs(args)}
    if args.port is not None:
        if not args.port.isdigit():
            raise UsageError(f"bad value '{args.port}' for --port: expected a port number 0..N-1")
        req["port"] = int(args.port)
    if len(req) == 1 or (len(req) == 2 and "port" in req):
        raise UsageError("testbed set: no knob given (e.g. --latency 1ms --bandwidth 100Mbit/s)")
    ports = testbed.set_knobs(args.prefix, req)
    console.print(_ports_table(ports, f"testbed {args.prefix}: knobs per egress port"))
    return 0
