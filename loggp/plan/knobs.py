"""LogGP knobs: the registry, parsing and the LOGGP_* environment.

Every knob, unit and LOGGP_* variable is a row of the registry that the C core is built
from, emulator/core/include/lgp/knobs.def; this module reads that file at import (a
malformed row is a RegistryError naming file and line).  Parsing mirrors the C parser
(emulator/core/src/knob.c) digit for digit, and both run the same cases
(emulator/core/tests/knob_cases.txt), so a value the CLI accepts is exactly a value the shim
accepts, and an error reads the same from either side:

    bad value '<text>' for LOGGP_<KNOB>: expected <forms>[ (out of range)]

Time knobs are resolved to nanoseconds, bulk_gap and bandwidth to femtoseconds per byte;
numbers are exact decimals (no exponent, no sign), rounded to nearest like the C code.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from loggp.errors import KnobError

UINT64_MAX = 2**64 - 1
FS_PER_NS = 1_000_000
FS_PER_S = 10**15
_FRAC_DIGITS = 18  # fractional digits the C parser keeps; the rest are ignored
_ECHO_MAX = 64  # longest offending value echoed in an error line
_UINT128_MAX = 2**128 - 1
ENV_PREFIX = "LOGGP_"
SHIMS = ("fabric", "wire", "smpi")

REGISTRY_FILE = Path("emulator", "core", "include", "lgp", "knobs.def")


class RegistryError(ValueError):
    """knobs.def is missing or has a row this module cannot read."""


@dataclass(frozen=True)
class Family:
    """How a value is written: TIME (ns), BULK (fs/B) or RATE (B/s, stored as fs/B)."""

    id: str
    metavar: str  # names a value in --help
    report_unit: str  # unit of report axes and sweep ranges, one of units
    report_label: str  # report_unit as shown
    forms: str  # the accepted forms, as every error and help words them
    units: dict[str, int]  # unit -> ns, fs/B or B/s per unit

    @property
    def inverse(self) -> bool:
        """A rate: stored as its inverse, time per byte."""
        return self.id == "RATE"


@dataclass(frozen=True)
class Param:
    """One delay a shim applies: field name_suffix of struct lgp_params and Params."""

    name: str
    suffix: str
    unit: str

    @property
    def field(self) -> str:
        return f"{self.name}_{self.suffix}"


@dataclass(frozen=True)
class KnobRow:
    id: str
    name: str
    family: Family
    sets: tuple[str, ...]  # names of the Params it is stored in
    group: str  # knobs of one non-empty group exclude each other
    shims: tuple[str, ...]  # emulators that apply it
    symbol: str
    what: str  # "Sensitivity to <what>"
    help: str


@dataclass(frozen=True)
class Setting:
    """A LOGGP_* variable that is not a knob."""

    id: str
    reader: str  # shim, program or loggp
    choices: tuple[str, ...]  # accepted values; empty for free text
    help: str

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.id


@dataclass(frozen=True)
class Registry:
    families: dict[str, Family]
    params: tuple[Param, ...]
    knobs: tuple[KnobRow, ...]
    settings: tuple[Setting, ...]


# One row: MACRO(arg, arg, ...), an arg a "string", an identifier or a decimal integer.
_ROW_RE = re.compile(r"(LGP_[A-Z]+)\((.*)\)")
_ARG_RE = re.compile(r'"([^"\\]*)"|([A-Za-z_][A-Za-z0-9_]*)|([0-9]+)')
# Argument kinds of each row macro: s string, i identifier, n integer.
_ROW_ARGS = {
    "LGP_FAMILY": "issss",
    "LGP_UNIT": "isn",
    "LGP_PARAM": "iis",
    "LGP_KNOB": "isissssss",
    "LGP_SETTING": "isss",
}


def _row_args(text: str, kinds: str) -> list[Any]:
    args: list[Any] = []
    pos = 0
    while pos < len(text):
        m = _ARG_RE.match(text, pos)
        if m is None:
            raise ValueError(f"bad argument at '{text[pos : pos + 20]}'")
        string, ident, number = m.groups()
        kind = "s" if string is not None else "i" if ident is not None else "n"
        if len(args) >= len(kinds) or kinds[len(args)] != kind:
            raise ValueError(f"expected {len(kinds)} arguments of kinds {kinds}")
        args.append(int(number) if kind == "n" else string if kind == "s" else ident)
        pos = m.end()
        if pos < len(text):
            if not text.startswith(", ", pos):
                raise ValueError("arguments are separated by ', '")
            pos += 2
    if len(args) != len(kinds):
        raise ValueError(f"expected {len(kinds)} arguments of kinds {kinds}")
    return args


def _rows(text: str) -> Iterable[tuple[int, str, list[Any]]]:
    """(line number, macro, arguments) of every row; ValueError with the line number."""
    in_comment = False
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if in_comment or stripped.startswith("/*"):
            in_comment = "*/" not in stripped
            continue
        if not stripped or stripped.startswith("#"):
            continue
        m = _ROW_RE.fullmatch(line)
        if m is None or m.group(1) not in _ROW_ARGS:
            raise ValueError(f"{lineno}: not a registry row: {line[:60]}")
        try:
            yield lineno, m.group(1), _row_args(m.group(2), _ROW_ARGS[m.group(1)])
        except ValueError as e:
            raise ValueError(f"{lineno}: {m.group(1)}: {e}") from None


def _build(text: str) -> Registry:
    families: dict[str, Family] = {}
    params: list[Param] = []
    knobs: list[KnobRow] = []
    settings: list[Setting] = []
    for lineno, macro, a in _rows(text):

        def need(ok: bool, msg: str, lineno: int = lineno, macro: str = macro) -> None:
            if not ok:
                raise ValueError(f"{lineno}: {macro}: {msg}")

        if macro == "LGP_FAMILY":
            need(a[0] not in families, f"family {a[0]} twice")
            families[a[0]] = Family(a[0], a[1], a[2], a[3], a[4], {})
        elif macro == "LGP_UNIT":
            need(a[0] in families, f"unknown family {a[0]}")
            need(a[1] not in families[a[0]].units, f"unit {a[1]} twice")
            families[a[0]].units[a[1]] = a[2]
        elif macro == "LGP_PARAM":
            need(all(p.name != a[0] for p in params), f"param {a[0]} twice")
            params.append(Param(*a))
        elif macro == "LGP_KNOB":
            sets, shims = tuple(a[3].split()), tuple(a[5].split())
            need(a[0] == a[1].upper(), f"ID {a[0]} is not the upper-case name {a[1]}")
            need(all(k.name != a[1] for k in knobs), f"knob {a[1]} twice")
            need(a[2] in families, f"unknown family {a[2]}")
            known = {p.name for p in params}
            need(bool(sets) and set(sets) <= known, f"sets {a[3]!r}: expected params of {known}")
            need(set(shims) <= set(SHIMS), f"shims {a[5]!r}: expected some of {SHIMS}")
            knobs.append(KnobRow(a[0], a[1], families[a[2]], sets, a[4], shims, *a[6:]))
        else:
            settings.append(Setting(a[0], a[1], tuple(a[2].split()), a[3]))
    for f in families.values():
        if f.report_unit not in f.units:
            raise ValueError(f"family {f.id}: report unit {f.report_unit} is not one of its units")
    if not knobs:
        raise ValueError("no LGP_KNOB row")
    return Registry(families, tuple(params), tuple(knobs), tuple(settings))


def load_registry(path: Path) -> Registry:
    """The registry in path; RegistryError naming path:line for a malformed row."""
    try:
        return _build(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RegistryError(f"cannot read the knob registry {path}: {e.strerror}") from None
    except ValueError as e:
        raise RegistryError(f"{path}:{e}") from None


def registry_path() -> Path:
    """knobs.def of the repository this package is part of, found upwards from here."""
    here = Path(__file__).resolve().parent
    for d in (here, *here.parents):
        if (d / REGISTRY_FILE).is_file():
            return d / REGISTRY_FILE
    raise RegistryError(f"knob registry {REGISTRY_FILE} not found above {here}")


REGISTRY = load_registry(registry_path())
_ROWS: dict[str, KnobRow] = {r.name: r for r in REGISTRY.knobs}

# <digits>[.<digits>], at most one space, then the unit up to the end.
_VALUE_RE = re.compile(r"([0-9]+)(?:\.([0-9]+))? ?(.*)", re.DOTALL)


class _KnobBase(StrEnum):
    """A knob of the registry, in the order the shim applies them."""

    @property
    def row(self) -> KnobRow:
        return _ROWS[self.value]

    @property
    def env(self) -> str:
        """The environment variable the shim reads, e.g. LOGGP_LATENCY."""
        return ENV_PREFIX + self.row.id

    @property
    def option(self) -> str:
        """The CLI option, e.g. --send-overhead."""
        return "--" + self.value.replace("_", "-")

    @property
    def family(self) -> Family:
        return self.row.family

    @property
    def forms(self) -> str:
        """Accepted forms of a value, as the C parser words them."""
        return self.row.family.forms

    @property
    def help(self) -> str:
        return self.row.help

    @property
    def is_time(self) -> bool:
        return self.row.family.id == "TIME"

    @property
    def excludes(self) -> tuple[Knob, ...]:
        """The other knobs of its group: they set the same thing."""
        group = self.row.group
        return tuple(k for k in Knob if group and k is not self and k.row.group == group)

    def applies_on(self, shim: str) -> bool:
        return shim in self.row.shims

    @classmethod
    def lookup(cls, name: str | Knob) -> Knob:
        """The knob called name; KnobError naming the known knobs if there is none."""
        try:
            return Knob(name)
        except ValueError:
            known = ", ".join(k.value for k in Knob)
            raise KnobError(f"unknown knob '{name}': expected one of {known}") from None


Knob = _KnobBase("Knob", [(r.id, r.name) for r in REGISTRY.knobs], module=__name__)


def conflict(knobs: Iterable[str | Knob]) -> tuple[Knob, Knob] | None:
    """The registry's mutual exclusion: the first two given knobs of one group, in knob
    order (bulk_gap, bandwidth), or None.  Callers word the error with their own names."""
    given = {Knob.lookup(k) for k in knobs}
    for a in Knob:
        for b in a.excludes:
            if a in given and b in given and list(Knob).index(a) < list(Knob).index(b):
                return a, b
    return None


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


def parse_knob(knob: Knob | str, text: str) -> int:
    """Parse one value: nanoseconds for time knobs, femtoseconds per byte for bulk_gap and
    bandwidth.  Raises KnobError with the shim's one-line message."""
    knob = Knob.lookup(knob)
    m = _VALUE_RE.fullmatch(text)
    if m is None:
        raise _fail(knob, text)
    ip_digits, frac_digits, unit = m.group(1), m.group(2) or "", m.group(3)
    scale = knob.family.units.get(unit)
    if scale is None:
        raise _fail(knob, text)

    ip = int(ip_digits)
    kept = frac_digits[:_FRAC_DIGITS]
    frac = int(kept) if kept else 0
    frac_div = 10 ** len(kept)
    nonzero = any(c != "0" for c in ip_digits + frac_digits)

    if knob.family.inverse:
        if not nonzero:
            raise _fail(knob, text)
        if ip > UINT64_MAX:
            raise _fail(knob, text, out_of_range=True)
        mant = ip * frac_div + frac
        if mant == 0 or mant > _UINT128_MAX // 2 // scale:
            raise _fail(knob, text, out_of_range=True)
        den = mant * scale
        gap = (FS_PER_S * frac_div + den // 2) // den
        if gap == 0 or gap > UINT64_MAX:
            raise _fail(knob, text, out_of_range=True)
        return gap

    if ip > UINT64_MAX:
        raise _fail(knob, text, out_of_range=True)
    value = ip * scale + (frac * scale + frac_div // 2) // frac_div
    if value > UINT64_MAX:
        raise _fail(knob, text, out_of_range=True)
    return value


def in_report_unit(knob: Knob | str, raw: int) -> float:
    """A parsed value in the report's unit of its family (µs, ns/B, MB/s).

    An inverse knob (bandwidth) is kept as whole fs/B, exact to one part in raw, so its
    value is given to the digits that carries, one fewer than raw has: 15 MB/s
    (66666667 fs/B) reads back as 15, not 14.999999925."""
    family = Knob.lookup(knob).family
    scale = family.units[family.report_unit]
    if not family.inverse:
        return raw / scale
    return float(f"{FS_PER_S / scale / raw:.{max(1, len(str(raw)) - 1)}g}")


def _params_active(self: Any) -> bool:
    return any(getattr(self, p.field) for p in REGISTRY.params)


def _params_format(self: Any) -> str:
    """As lgp_params_format() writes it: 'send_overhead=10000ns ... bulk_gap=0fs/B'."""
    return " ".join(f"{p.name}={getattr(self, p.field)}{p.unit}" for p in REGISTRY.params)


# The resolved delays one shim applies (struct lgp_params); all zero passes through.
Params = dataclasses.make_dataclass(
    "Params",
    [(p.field, int, 0) for p in REGISTRY.params],
    frozen=True,
    namespace={"active": property(_params_active), "format": _params_format},
)
Params.__module__ = __name__


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
        pair = conflict(given)
        if pair is not None:
            first, second = pair
            raise KnobError(
                f"bad value '{_echo(given[second])}' for {second.env}: "
                f"expected {second.env} or {first.env}, not both"
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

    def params(self) -> Any:
        """Resolve like lgp_params_read(): in knob order, each stored in the params its row
        sets, so overhead comes first and the per-side knobs refine it."""
        fields: dict[str, int] = {}
        by_name = {p.name: p for p in REGISTRY.params}
        for knob, text in self.items:
            value = parse_knob(knob, text)
            for name in knob.row.sets:
                fields[by_name[name].field] = value
        return Params(**fields)

    def label(self) -> str:
        """Short human label, e.g. 'latency=10us' or 'all knobs 0'."""
        return " ".join(f"{k.value}={text}" for k, text in self.items) or "all knobs 0"


KNOB_ENV_VARS: frozenset[str] = frozenset(k.env for k in Knob)
KNOWN_ENV_VARS: tuple[str, ...] = (*(k.env for k in Knob), *(s.env for s in REGISTRY.settings))


def _distance(a: str, b: str) -> int:
    """Levenshtein distance ignoring case, as the C core computes it (names cut at 64)."""
    a, b = a[:_ECHO_MAX].upper(), b[:_ECHO_MAX].upper()
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        diag, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            up = row[j]
            row[j] = min(diag + (ca != cb), up + 1, row[j - 1] + 1)
            diag = up
    return row[len(b)]


def closest_env(name: str) -> str:
    """The known LOGGP_* name closest to name; the first in registry order on a tie."""
    name = name.split("=", 1)[0]
    return min(KNOWN_ENV_VARS, key=lambda known: _distance(name, known))


def check_env(env: Mapping[str, str]) -> None:
    """KnobError, worded as the shim's, for the first LOGGP_* variable that is no knob or
    setting of the registry, a setting with a value outside its choices, or a bad delay
    distribution setting (loggp.plan.dist)."""
    from loggp.plan.dist import check_dist_env  # it parses with this module's parser

    settings = {s.env: s for s in REGISTRY.settings}
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        if name not in KNOWN_ENV_VARS:
            shown = _echo(f"{name}={value}").split("=", 1)[0]
            raise KnobError(f"unknown variable {shown}: did you mean {closest_env(name)}?")
        setting = settings.get(name)
        if setting is not None and setting.choices and value not in setting.choices:
            *rest, last = setting.choices
            expected = f"{', '.join(rest)} or {last}" if rest else last
            raise KnobError(f"bad value '{_echo(value)}' for {name}: expected {expected}")
    check_dist_env(env)


def inherited_knob_env(env: Mapping[str, str]) -> list[str]:
    """The LOGGP_<KNOB> variables set in env, in knob order."""
    return [k.env for k in Knob if k.env in env]


def without_knob_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of env without any LOGGP_<KNOB> or LOGGP_STATS_FILE variable, so that what
    runs is configured by the command line alone."""
    drop = KNOB_ENV_VARS | {"LOGGP_STATS_FILE"}
    return {k: v for k, v in env.items() if k not in drop}
