"""Knobs over time: an experiment's emulator.schedule, checked as the shim checks it.

    emulator:
      schedule:                             # steps, in order of time
        - {t: 0s, latency: 10us}
        - {t: 2s, latency: 200us, bandwidth: 1Gbit/s}
    # or a trace file of 'TIME KNOB VALUE' lines, relative to the experiment file:
      schedule: degrade.txt

A step names its time t (a time knob's form, since the point's processes were launched)
and the knobs it changes; the others keep their values, which start as the point's knobs.
The runner writes each point's steps as the shim's file (write_schedule, LOGGP_SCHEDULE,
emulator/core/include/lgp/sched.h) with the launch's time as the common start, right
before it launches the point.  The errors are the shim's (emulator/core/src/sched.c),
with the file's location in front.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from loggp.errors import KnobError
from loggp.plan.knobs import ENV_PREFIX, Knob, _echo, conflict, parse_knob

SCHEDULE_ENV = ENV_PREFIX + "SCHEDULE"
MAX_STEPS = 4096  # LGP_SCHED_MAX_STEPS
LINE_MAX = 511  # SCHED_LINE_MAX less its newline
TIME_KEY = "t"
TRACE_FORMS = "'TIME KNOB VALUE' (e.g. '2s latency 200us') or 'start UNIX_NS' before them"

# One line of the shim's file: (time as written, knob, value as written).
Line = tuple[str, str, str]


def _knob_names() -> str:
    return ", ".join(k.value for k in Knob)


class _Steps:
    """Checks lines in order as the shim reads them: times never decrease, at most
    MAX_STEPS times, no two knobs of one group at one time."""

    def __init__(self) -> None:
        self.last_ns = 0
        self.steps = 1
        self.given: list[str] = []
        self.lines: list[Line] = []

    def add(self, at: str, knob: str, value: str) -> None:
        try:
            at_ns = parse_knob("latency", at)
        except KnobError:
            raise KnobError(f"bad time '{_echo(at)}': expected {Knob('latency').forms}") from None
        if at_ns < self.last_ns:
            raise KnobError(
                f"time '{_echo(at)}' comes before the previous step's: expected times in order"
            )
        try:
            k = Knob.lookup(knob)
        except (KnobError, ValueError):
            raise KnobError(
                f"unknown knob '{_echo(knob)}': expected one of {_knob_names()}"
            ) from None
        if at_ns > self.last_ns:
            if self.steps == MAX_STEPS:
                raise KnobError(f"too many steps: expected at most {MAX_STEPS} times")
            self.steps += 1
            self.last_ns = at_ns
            self.given = []
        try:
            parse_knob(k, value)
        except KnobError as e:
            forms = str(e).partition(": expected ")[2]
            raise KnobError(f"bad value '{_echo(value)}' for {k.value}: expected {forms}") from None
        self.given.append(k.value)
        both = conflict(self.given)
        if both:
            raise KnobError(
                f"{both[0].value} and {both[1].value} in one step: expected one of them"
            )
        self.lines.append((at, k.value, value))


def _text(value: object) -> str:
    """A YAML scalar as the shim would read it: numbers as written, which need a unit."""
    return value if isinstance(value, str) else repr(value)


def steps_lines(steps: Sequence[Mapping[str, object]]) -> list[Line]:
    """The shim's lines of a schedule given as steps; ValueError naming the step."""
    check = _Steps()
    for i, step in enumerate(steps):
        if not isinstance(step, Mapping) or TIME_KEY not in step or len(step) < 2:
            raise ValueError(
                f"schedule[{i}]: expected a mapping of {TIME_KEY} and the knobs it sets, "
                f"e.g. {{t: 2s, latency: 200us}} (knobs: {_knob_names()})"
            )
        at = _text(step[TIME_KEY])
        for knob, value in step.items():
            if knob == TIME_KEY:
                continue
            try:
                check.add(at, str(knob), _text(value))
            except KnobError as e:
                raise ValueError(f"schedule[{i}]: {e}") from None
    return check.lines


def trace_lines(path: Path) -> list[Line]:
    """The lines of a trace file; KnobError naming the file and line as the shim does."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise KnobError(
            f"cannot read the schedule '{path}': {e.strerror} "
            f"(expected a file of lines {TRACE_FORMS})"
        ) from None
    check = _Steps()
    for n, raw in enumerate(data.split(b"\n"), 1):
        where = f"line {n} of the schedule '{path}'"
        if len(raw) > LINE_MAX:
            raise KnobError(f"{where}: too long: expected {TRACE_FORMS}")
        words = raw.decode("utf-8", errors="surrogateescape").split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 3:
            raise KnobError(f"{where}: expected {TRACE_FORMS} (the runner writes the start)")
        try:
            check.add(*words)
        except KnobError as e:
            raise KnobError(f"{where}: {e}") from None
    return check.lines


def write_schedule(file: Path, lines: Sequence[Line], start_ns: int) -> Path:
    """Writes the shim's file of lines with start_ns (CLOCK_REALTIME, ns) as every
    process's time 0; returns its path."""
    text = [
        "# loggp schedule: TIME KNOB VALUE from start (ns since the epoch)",
        f"start {start_ns}",
    ]
    text += [" ".join(line) for line in lines]
    file.write_text("\n".join(text) + "\n")
    return file
