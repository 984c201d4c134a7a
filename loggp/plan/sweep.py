"""Expanding an experiment into its plan: one Point per (workload, knob setting, repeat).

One knob at a time (the Berkeley study's design): a baseline point, then each swept knob
varied alone from the baseline.  Grid: every combination of the swept knobs' values.
Ranges {from, to, steps, scale} are interpolated in the knob's exact unit (ns, fs/B, B/s)
and written back as text the shim parses to the same value.  A swept knob is a knob of the
registry or a network level's delay (network.rack.latency, loggp/plan/netknobs.py): the
first sets the point's KnobSet, the second its network.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from decimal import Decimal

from loggp.errors import LoggpError
from loggp.plan import netknobs
from loggp.plan.experiment import Experiment, Range, Workload
from loggp.plan.knobs import FS_PER_S, Knob, KnobSet, in_report_unit, parse_knob
from loggp.plan.netknobs import is_network_knob, value_knob
from loggp.plan.topology import Network

# Points one experiment may plan (docs/experiments.md): a day of one-second points.
MAX_POINTS = 100_000


class PlanTooLargeError(LoggpError):
    """The plan would have more than MAX_POINTS points."""

    exit_code = 2


@dataclass(frozen=True)
class Point:
    """One launch of one workload at one knob setting."""

    seq: int
    workload: Workload
    sweep_knob: str  # a knob name (a network knob's too), "baseline" or "grid"
    sweep_value: float | None  # in the report's unit (report_value)
    knobs: KnobSet
    repeat: int
    network: Network | None = None  # the point's: the file's, or a level's delay swept
    swept_network: tuple[tuple[str, str], ...] = ()  # the network knobs its sweep set

    @property
    def point_id(self) -> str:
        setting = (
            self.label().replace(" ", ",")
            if self.sweep_knob == "grid"
            else (
                "baseline"
                if self.sweep_knob == "baseline"
                else f"{self.sweep_knob}={self.knob_texts()[self.sweep_knob]}"
            )
        )
        return f"{self.workload.name}/{setting}/r{self.repeat}"

    def label(self) -> str:
        """What the point's sweep set: its knobs (the baseline's too), then the network
        knobs it swept; 'all knobs 0' for none."""
        swept = " ".join(f"{k}={v}" for k, v in self.swept_network)
        if not swept:
            return self.knobs.label()
        return f"{self.knobs.label()} {swept}" if self.knobs else swept

    def knob_texts(self) -> dict[str, str]:
        """Every knob set at this point as text: its knobs, then every delay its network's
        levels were given (stored as column knobs, docs/results.md)."""
        net = netknobs.settings(self.network) if self.network is not None else {}
        return {**self.knobs.as_dict(), **net}

    def knob_values(self) -> dict[str, float]:
        return {k: report_value(k, v) for k, v in self.knob_texts().items()}


def report_value(knob: str, text: str) -> float:
    """A knob's value in the report's unit of its family: us for times, ns/B for bulk_gap,
    MB/s for bandwidth (docs/results.md); a network knob's in its delay's."""
    k = value_knob(knob)
    return in_report_unit(k, parse_knob(k, text))


def _exact(knob: Knob, text: str) -> int:
    """The value in an exact integer unit for interpolation: ns, fs/B, or B/s."""
    if knob.family.inverse:
        return round(FS_PER_S / parse_knob(knob, text))
    return parse_knob(knob, text)


def _decimal(d: Decimal) -> str:
    """A decimal without exponent or trailing fractional zeros: 1000, 0.5, 31.622777."""
    text = f"{d:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _text(knob: Knob, value: int) -> str:
    """Text with a unit that the shim parses back to value (bandwidth to within rounding)."""
    family = knob.family
    if not knob.is_time:  # in the report unit: ns/B, MB/s
        return _decimal(Decimal(value) / family.units[family.report_unit]) + family.report_unit
    if value % 1000 == 0:
        return f"{value // 1000}us"
    return f"{value}ns"


def range_values(knob: str, r: Range) -> list[str]:
    """The steps values of a range, as knob text; log scale needs both ends above zero."""
    k = value_knob(knob)
    lo, hi = _exact(k, r.from_), _exact(k, r.to)
    if r.scale == "log":
        if lo <= 0 or hi <= 0:
            raise ValueError(
                f"log range of {knob} needs both ends above zero (from: {r.from_}, to: {r.to})"
            )
        ratio = (hi / lo) ** (1 / (r.steps - 1))
        raw = [lo * ratio**i for i in range(r.steps)]
    else:
        raw = [lo + (hi - lo) * i / (r.steps - 1) for i in range(r.steps)]
    values = [int(math.floor(v + 0.5)) for v in raw]
    values[0], values[-1] = lo, hi
    out: list[str] = []
    for v in values:
        text = _text(k, v)
        if text not in out:
            out.append(text)
    return out


def knob_values(exp: Experiment) -> dict[str, list[str]]:
    """Each swept knob's values as text, ranges expanded, in the file's order."""
    out: dict[str, list[str]] = {}
    for knob, values in exp.sweep.knobs.items():
        out[knob] = range_values(knob, values) if isinstance(values, Range) else list(values)
    return out


@dataclass(frozen=True)
class _Setting:
    """One setting of the plan, for every workload and repeat: Point's fields."""

    knob: str
    value: float | None
    knobs: KnobSet
    network: Network | None
    swept_network: tuple[tuple[str, str], ...]


def _setting(exp: Experiment, knob: str, value: float | None, setting: dict[str, str]) -> _Setting:
    """The setting's registry knobs as a KnobSet; its network knobs set the file's network."""
    knobs = {k: v for k, v in setting.items() if not is_network_knob(k)}
    swept = {k: v for k, v in setting.items() if is_network_knob(k)}
    net = exp.network
    if net is not None and swept:
        net = netknobs.with_values(net, swept)
    return _Setting(knob, value, KnobSet.parse(knobs), net, tuple(swept.items()))


def _settings(exp: Experiment) -> list[_Setting]:
    base = dict(exp.emulator.baseline)
    swept = knob_values(exp)
    if exp.sweep.mode == "grid" and swept:
        names = list(swept)
        return [
            _setting(exp, "grid", None, {**base, **dict(zip(names, combo, strict=True))})
            for combo in itertools.product(*(swept[n] for n in names))
        ]
    out = [_setting(exp, "baseline", None, base)]
    for knob, values in swept.items():
        for text in values:
            setting = {**base, knob: text}
            if not is_network_knob(knob):
                for other in Knob(knob).excludes:
                    setting.pop(other.value, None)
            out.append(_setting(exp, knob, report_value(knob, text), setting))
    return out


def check_plan_size(exp: Experiment) -> None:
    """PlanTooLargeError if exp's plan has more than MAX_POINTS points, counted from the
    sizes of its lists, never by expanding them."""
    sizes = [len(v) for v in knob_values(exp).values()]
    grid = exp.sweep.mode == "grid" and sizes
    settings = math.prod(sizes) if grid else 1 + sum(sizes)
    count = settings * len(exp.workloads) * exp.repeats
    if count > MAX_POINTS:
        shape = " × ".join(map(str, sizes)) if grid else " + ".join(map(str, [1, *sizes]))
        raise PlanTooLargeError(
            f"experiment '{exp.name}' plans {count} points ({shape} settings × "
            f"{len(exp.workloads)} workloads × {exp.repeats} repeats), more than the cap of "
            f"{MAX_POINTS} points per experiment: sweep fewer values or split the experiment"
        )


def expand(exp: Experiment) -> list[Point]:
    """The whole plan in run order: repeats outermost, so an interrupted run has every
    setting at least once before any is repeated."""
    check_plan_size(exp)
    settings = _settings(exp)
    points: list[Point] = []
    for repeat in range(exp.repeats):
        for w in exp.workloads:
            for st in settings:
                points.append(
                    Point(
                        len(points),
                        w,
                        st.knob,
                        st.value,
                        st.knobs,
                        repeat,
                        st.network,
                        st.swept_network,
                    )  # fmt: skip
                )
    return points
