"""The network's levels as knobs: `network.<level>.<delay>`, swept like any knob.

    network: {nodes: 4, levels: [{name: node}, {name: rack, size: 2, latency: 50us}]}
    sweep: {knobs: {network.rack.latency: [20us, 100us]}}

A name is `network.`, a level's name and one of the delays a level has (latency, gap,
bulk_gap); its values take that knob's forms and units.  A point's value replaces the
level's own, and the point runs on the network so changed (its pair table derived from it,
loggp/plan/topology.py); every other point, the baseline first, runs on the file's, so a
curve starts where the file put the level.  A point's settings name every delay its levels
were given (in the file or by the sweep), beside its knobs: that is where the report finds
a baseline's x (docs/experiments.md, "Network").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loggp.plan.knobs import Knob
from loggp.plan.topology import Network

PREFIX = "network."
DELAYS = ("latency", "gap", "bulk_gap")  # the fields of topology.Level a sweep may set


def is_network_knob(name: str) -> bool:
    return name.startswith(PREFIX)


def check_name(name: str, levels: Sequence[str] | None) -> None:
    """ValueError in one line unless name is network.<one of levels>.<delay>; levels None
    when the experiment has no network."""
    level, _, delay = name.removeprefix(PREFIX).partition(".")
    if levels is None:
        raise ValueError(
            f"unknown knob '{name}': the experiment has no network (a network: with levels "
            "names them)"
        )
    if not levels:
        raise ValueError(
            f"unknown knob '{name}': the network names no levels (a network of links has "
            "none to sweep)"
        )
    if level not in levels:
        raise ValueError(
            f"unknown level '{level}' in {name}: expected one of {', '.join(levels)} "
            "(network.levels)"
        )
    if delay not in DELAYS:
        *rest, last = (f"{PREFIX}{level}.{d}" for d in DELAYS)
        raise ValueError(f"unknown knob '{name}': expected {', '.join(rest)} or {last}")


def value_knob(name: str) -> Knob:
    """The registry knob whose forms and units name's values take: the knob itself, or a
    network knob's delay (network.rack.latency: latency).  KnobError for neither."""
    return Knob.lookup(name.rpartition(".")[2] if is_network_knob(name) else name)


def with_values(net: Network, values: Mapping[str, str]) -> Network:
    """net with each network knob of values (checked names) setting its level's delay."""
    levels = []
    for lv in net.levels or []:
        given = lv.model_dump(exclude_unset=True)
        for name, text in values.items():
            level, _, delay = name.removeprefix(PREFIX).partition(".")
            if level == lv.name:
                given[delay] = text
        levels.append(given)
    return Network.model_validate({**net.model_dump(exclude_unset=True), "levels": levels})


def settings(net: Network) -> dict[str, str]:
    """Every delay net's levels were given, as network knob name -> text, from the node up."""
    return {
        f"{PREFIX}{lv.name}.{d}": getattr(lv, d)
        for lv in net.levels or []
        for d in DELAYS
        if d in lv.model_fields_set
    }
