"""LogGP knobs: names, units, parsing and the LOGGP_* environment.

This mirrors the C parser of the shim (emulator/core/include/lgp/knob.h, src/knob.c) digit
for digit, so a value the CLI accepts is exactly a value the shim accepts, and an error reads
the same from either side:

    bad value '<text>' for LOGGP_<KNOB>: expected <forms>[ (out of range)]

Time knobs are resolved to nanoseconds, bulk_gap and bandwidth to femtoseconds per byte;
numbers are exact decimals (no exponent, no sign), rounded to nearest like the C code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from loggp.errors import KnobError

UINT64_MAX = 2**64 - 1
FS_PER_NS = 1_000_000
_FS_PER_S = 10**15
_FRAC_DIGITS = 18  # fractional digits the C parser keeps; the rest are ignored
_ECHO_MAX = 64  # longest offending value echoed in an error line
_UINT128_MAX = 2**128 - 1

_TIME_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_BULK_UNITS = {"ps/B": 1_000, "ns/B": 1_000_000, "us/B": 1_000_000_000}
_RATE_UNITS = {  # bytes per second; a kbit is 125 bytes
    "B/s": 1,
    "kB/s": 1_000,
    "MB/s": 1_000_000,
    "GB/s": 1_000_000_000,
    "KiB/s": 1 << 10,
    "MiB/s": 1 << 20,
    "GiB/s": 1 << 30,
    "kbit/s": 125,
    "Mbit/s": 125_000,
    "Gbit/s": 125_000_000,
}

_TIME_FORMS = "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms"
_BULK_FORMS = "<number>{ps/B|ns/B|us/B}, e.g. 2ns/B or 0.08ns/B"
_RATE_FORMS = (
    "<number>{B/s|kB/s|MB/s|GB/s|KiB/s|MiB/s|GiB/s|kbit/s|Mbit/s|Gbit/s}"
    " greater than zero, e.g. 50MB/s or 1Gbit/s"
)

# <digits>[.<digits>], at most one space, then the unit up to the end.
_VALUE_RE = re.compile(r"([0-9]+)(?:\.([0-9]+))? ?(.*)", re.DOTALL)


class Knob(StrEnum):
    """A knob, in the order the shim applies them (overhead before its per-side forms)."""

    OVERHEAD = "overhead"
    SEND_OVERHEAD = "send_overhead"
    RECV_OVERHEAD = "recv_overhead"
    GAP = "gap"
    LATENCY = "latency"
    BULK_GAP = "bulk_gap"
    BANDWIDTH = "bandwidth"

    @property
    def env(self) -> str:
        """The environment variable the shim reads, e.g. LOGGP_LATENCY."""
        return "LOGGP_" + self.value.upper()

    @property
    def option(self) -> str:
        """The CLI option, e.g. --send-overhead."""
        return "--" + self.value.replace("_", "-")

    @property
    def forms(self) -> str:
        """Accepted forms of a value, as the C parser words them."""
        if self is Knob.BULK_GAP:
            return _BULK_FORMS
        if self is Knob.BANDWIDTH:
            return _RATE_FORMS
        return _TIME_FORMS

    @property
    def is_time(self) -> bool:
        return self not in (Knob.BULK_GAP, Knob.BANDWIDTH)

    @classmethod
    def lookup(cls, name: str | Knob) -> Knob:
        """The knob called name; KnobError naming the known knobs if there is none."""
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(k.value for k in cls)
            raise KnobError(f"unknown knob '{name}': expected one of {known}") from None


def _echo(text: str) -> str:
    """The offending value as the C parser echoes it: bounded, one line, printable."""
    raw = text.encode("utf-8", errors="surrogateescape")
    shown = "".join(chr(b) if 0x20 <= b < 0x7F else "?" for b in raw[:_ECHO_MAX])
    if len(raw) > _ECHO_MAX:
        shown = shown[: _ECHO_MAX - 3] + "..."
    return shown


def _fail(knob: Knob, text: str, out_of_range: bool = False) -> KnobError:
    suffix = " (out of range)" if out_of_range else ""
    return KnobError(f"bad value '{_echo(text)}' for {knob.env}: expected {knob.forms}{suffix}")


def _units(knob: Knob) -> dict[str, int]:
    if knob is Knob.BULK_GAP:
        return _BULK_UNITS
    if knob is Knob.BANDWIDTH:
        return _RATE_UNITS
    return _TIME_UNITS


def parse_knob(knob: Knob | str, text: str) -> int:
    """Parse one value: nanoseconds for time knobs, femtoseconds per byte for bulk_gap and
    bandwidth.  Raises KnobError with the shim's one-line message."""
    knob = Knob.lookup(knob)
    m = _VALUE_RE.fullmatch(text)
    if m is None:
        raise _fail(knob, text)
    ip_digits, frac_digits, unit = m.group(1), m.group(2) or "", m.group(3)
    scale = _units(knob).get(unit)
    if scale is None:
        raise _fail(knob, text)

    ip = int(ip_digits)
    kept = frac_digits[:_FRAC_DIGITS]
    frac = int(kept) if kept else 0
    frac_div = 10 ** len(kept)
    nonzero = any(c != "0" for c in ip_digits + frac_digits)

    if knob is Knob.BANDWIDTH:
        if not nonzero:
            raise _fail(knob, text)
        if ip > UINT64_MAX:
            raise _fail(knob, text, out_of_range=True)
        mant = ip * frac_div + frac
        if mant == 0 or mant > _UINT128_MAX // 2 // scale:
            raise _fail(knob, text, out_of_range=True)
        den = mant * scale
        gap = (_FS_PER_S * frac_div + den // 2) // den
        if gap == 0 or gap > UINT64_MAX:
            raise _fail(knob, text, out_of_range=True)
        return gap

    if ip > UINT64_MAX:
        raise _fail(knob, text, out_of_range=True)
    value = ip * scale + (frac * scale + frac_div // 2) // frac_div
    if value > UINT64_MAX:
        raise _fail(knob, text, out_of_range=True)
    return value


@dataclass(frozen=True)
class Params:
    """The resolved delays one shim applies (struct lgp_params); all zero passes through."""

    send_overhead_ns: int = 0
    recv_overhead_ns: int = 0
    gap_ns: int = 0
    latency_ns: int = 0
    bulk_gap_fs: int = 0

    @property
    def active(self) -> bool:
        return any(
            (
                self.send_overhead_ns,
                self.recv_overhead_ns,
                self.gap_ns,
                self.latency_ns,
                self.bulk_gap_fs,
            )
        )


@dataclass(frozen=True)
class KnobSet:
    """A validated set of knob values, kept as the text given (that is what the shim parses).

    Build it with KnobSet.parse(); items are in Knob order, each knob at most once.
    """

    items: tuple[tuple[Knob, str], ...] = ()

    @classmethod
    def parse(cls, values: Mapping[str, str | None]) -> KnobSet:
        """Validate knob name -> value text; None values are skipped.  Raises KnobError."""
        given: dict[Knob, str] = {}
        for name, text in values.items():
            if text is not None:
                given[Knob.lookup(name)] = text
        if Knob.BANDWIDTH in given and Knob.BULK_GAP in given:
            raise KnobError(
                f"bad value '{_echo(given[Knob.BANDWIDTH])}' for LOGGP_BANDWIDTH: "
                "expected LOGGP_BANDWIDTH or LOGGP_BULK_GAP, not both"
            )
        for knob, text in given.items():
            parse_knob(knob, text)
        return cls(tuple((k, given[k]) for k in Knob if k in given))

    def __bool__(self) -> bool:
        return bool(self.items)

    def as_dict(self) -> dict[str, str]:
        return {k.value: text for k, text in self.items}

    def env(self) -> dict[str, str]:
        """The LOGGP_* variables that configure the shim with these knobs."""
        return {k.env: text for k, text in self.items}

    def params(self) -> Params:
        """Resolve like lgp_params_from_env(): overhead first, the per-side knobs refine it."""
        fields: dict[str, int] = {}
        for knob, text in self.items:
            value = parse_knob(knob, text)
            if knob is Knob.OVERHEAD:
                fields["send_overhead_ns"] = fields["recv_overhead_ns"] = value
            elif knob in (Knob.BULK_GAP, Knob.BANDWIDTH):
                fields["bulk_gap_fs"] = value
            else:
                fields[f"{knob.value}_ns"] = value
        return Params(**fields)

    def label(self) -> str:
        """Short human label, e.g. 'latency=10us' or 'all knobs 0'."""
        return " ".join(f"{k.value}={text}" for k, text in self.items) or "all knobs 0"


KNOB_ENV_VARS: frozenset[str] = frozenset(k.env for k in Knob)


def without_knob_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of env without any LOGGP_<KNOB> or LOGGP_STATS_FILE variable, so that what
    runs is configured by the command line alone."""
    drop = KNOB_ENV_VARS | {"LOGGP_STATS_FILE"}
    return {k: v for k, v in env.items() if k not in drop}
