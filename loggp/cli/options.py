"""Options and argument types that several verbs of `loggp` share."""

from __future__ import annotations

import argparse
import re

from loggp.measure.demo import DEFAULT_PROVIDER
from loggp.plan.experiment import check_duration
from loggp.plan.knobs import Knob, KnobSet


def add_knob_options(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("LogGP knobs (values need units; unset knobs are zero)")
    for knob in Knob:
        group.add_argument(
            knob.option,
            dest=knob.value,
            metavar=knob.family.metavar,
            help=f"{knob.help}; sets {knob.env}; {knob.forms}",
        )


def add_provider_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-p",
        "--provider",
        default=DEFAULT_PROVIDER,
        help=f"libfabric provider (default: {DEFAULT_PROVIDER})",
    )


def add_sampling_options(p: argparse.ArgumentParser, timeout: float, per: str) -> None:
    """-n and --timeout of the verbs that run loggp-calibrate; per says what the timeout
    bounds."""
    p.add_argument("-n", "--iterations", type=count, help="samples per measured point")
    p.add_argument(
        "--timeout",
        type=positive,
        default=timeout,
        metavar="SEC",
        help=f"per {per} (default: {timeout:g})",
    )


def knobs(args: argparse.Namespace) -> KnobSet:
    return KnobSet.parse({k.value: getattr(args, k.value) for k in Knob})


def positive(text: str) -> float:
    """Seconds: a number above zero and at most MAX_DURATION_S (not nan, not inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than zero: '{text}'")
    try:
        return check_duration(value, f"'{text}' (seconds)")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def count(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"not a positive whole number: '{text}'")
    return int(text)


_SIZE = re.compile(r"([0-9]+)([KMG])")
_SIZE_SHIFT = {"K": 10, "M": 20, "G": 30}
MAX_POINT_PIDS = 1 << 22  # the kernel's pid_max at most


def pids(text: str) -> int:
    """A pids limit per point: 8 to MAX_POINT_PIDS."""
    n = count(text)
    if not 8 <= n <= MAX_POINT_PIDS:
        raise argparse.ArgumentTypeError(f"'{text}': expected 8 to {MAX_POINT_PIDS} processes")
    return n


def memory_size(text: str) -> int:
    """Bytes from '512M', '2G' (K, M, G: 1024-based): 4M to 1024G."""
    m = _SIZE.fullmatch(text.strip())
    if m is None or not 4 << 20 <= int(m[1]) << _SIZE_SHIFT[m[2]] <= 1 << 40:
        raise argparse.ArgumentTypeError(
            f"bad size '{text}': expected <whole number>{{K|M|G}} from 4M to 1024G, e.g. 512M"
        )
    return int(m[1]) << _SIZE_SHIFT[m[2]]


def rank_counts(text: str) -> tuple[int, ...]:
    """--ranks: a comma list of whole numbers of at least 1, none twice, in the order given."""
    counts = []
    for item in text.split(","):
        try:
            n = int(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: '{item}' in '{text}'") from None
        if n < 1:
            raise argparse.ArgumentTypeError(f"expected ranks of at least 1: '{item}'")
        if n in counts:
            raise argparse.ArgumentTypeError(f"{n} ranks given twice in '{text}'")
        counts.append(n)
    return tuple(counts)


def add_rank_counts(ap: argparse.ArgumentParser, default: str, what: str) -> None:
    """--ranks N[,N...] (rank_counts), default given as text, its help what they are for."""
    ap.add_argument(
        "--ranks",
        type=rank_counts,
        default=default,  # argparse parses a default given as text
        metavar="N[,N...]",
        help=f"rank counts, {what} (default {default})",
    )
