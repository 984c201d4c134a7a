"""Options and argument types that several verbs of `loggp` share."""

from __future__ import annotations

import argparse

from loggp.plan.knobs import Knob, KnobSet


def add_knob_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("LogGP knobs (values need units; unset knobs are zero)")
    for knob in Knob:
        metavar = {Knob.BULK_GAP: "TIME/B", Knob.BANDWIDTH: "RATE"}.get(knob, "TIME")
        group.add_argument(
            knob.option, dest=knob.value, metavar=metavar, help=f"sets {knob.env}; {knob.forms}"
        )


def knobs(args: argparse.Namespace) -> KnobSet:
    return KnobSet.parse({k.value: getattr(args, k.value) for k in Knob})


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than zero: '{text}'")
    return value


def count(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"not a positive whole number: '{text}'")
    return int(text)
