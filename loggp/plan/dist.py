"""The delay distribution settings, checked as the shim checks them.

LOGGP_LATENCY_DIST, LOGGP_LATENCY_CORR and LOGGP_SEED (emulator/core/include/lgp/dist.h,
docs/design.md "Delay distributions") are free-text settings of the registry; the shim
refuses a bad value of one, so every point of a run would fail.  check_dist_env() refuses
it before anything starts, in the shim's words (emulator/core/src/dist.c), reading the
delays of an empirical file with the knob parser as the shim does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from loggp.errors import KnobError
from loggp.plan.knobs import ENV_PREFIX, UINT64_MAX, Knob, _echo, parse_knob

DIST_ENV = ENV_PREFIX + "LATENCY_DIST"
CORR_ENV = ENV_PREFIX + "LATENCY_CORR"
SEED_ENV = ENV_PREFIX + "SEED"
SHAPES = ("constant", "uniform", "normal", "pareto", "paretonormal", "empirical")
EMPIRICAL_MAX = 1 << 20  # LGP_DIST_EMPIRICAL_MAX
LINE_MAX = 256  # DIST_LINE_MAX, in bytes without the newline

_RHO_RE = re.compile(r"[0-9]+(\.[0-9]+)?")


def _bad_spec(text: str) -> KnobError:
    return KnobError(
        f"bad value '{_echo(text)}' for {DIST_ENV}: expected constant, uniform:TIME, "
        f"normal:TIME, pareto:TIME, paretonormal:TIME or empirical:FILE, TIME as "
        f"{Knob('latency').forms}"
    )


def _check_empirical(path: str) -> None:
    shown = _echo(path)
    forms = Knob("latency").forms
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise KnobError(
            f"cannot read the delays of {DIST_ENV} '{shown}': {os.strerror(e.errno or 0)}"
        ) from None
    count = 0
    for n, raw in enumerate(data.split(b"\n"), 1):
        if len(raw) > LINE_MAX:
            raise KnobError(
                f"line {shown}:{n} of {DIST_ENV} is too long: expected one delay per line, "
                f"at most {LINE_MAX} characters"
            )
        line = raw.decode("utf-8", errors="surrogateescape")
        if not line or line.startswith("#"):
            continue
        try:
            parse_knob("latency", line)
        except KnobError:
            raise KnobError(
                f"bad value '{_echo(line)}' at {shown}:{n} for {DIST_ENV}: expected one "
                f"delay per line as {forms}"
            ) from None
        count += 1
        if count > EMPIRICAL_MAX:
            raise KnobError(f"too many delays in {DIST_ENV} '{shown}': at most {EMPIRICAL_MAX}")
    if not count:
        raise KnobError(
            f"no delays in {DIST_ENV} '{shown}': expected one delay per line as {forms}"
        )


def check_dist_spec(text: str) -> str:
    """The shape of a LOGGP_LATENCY_DIST value; KnobError as the shim words it."""
    shape, colon, arg = text.partition(":")
    if shape not in SHAPES or (shape == "constant") == bool(colon):
        raise _bad_spec(text)
    if shape == "empirical":
        if not arg:
            raise _bad_spec(text)
        _check_empirical(arg)
    elif shape != "constant":
        try:
            parse_knob("latency", arg)
        except KnobError:
            raise _bad_spec(text) from None
    return shape


def check_dist_env(env: Mapping[str, str]) -> None:
    """KnobError for the first bad distribution setting in env, in the shim's order."""
    seed, corr, dist = env.get(SEED_ENV), env.get(CORR_ENV), env.get(DIST_ENV)
    if seed is not None and not (seed.isascii() and seed.isdigit() and int(seed) <= UINT64_MAX):
        raise KnobError(
            f"bad value '{_echo(seed)}' for {SEED_ENV}: expected a whole number from 0 to "
            f"{UINT64_MAX}"
        )
    if corr is not None and not (_RHO_RE.fullmatch(corr) and float(corr) <= 1.0):
        raise KnobError(
            f"bad value '{_echo(corr)}' for {CORR_ENV}: expected a number from 0 to 1, e.g. 0.25"
        )
    shape = check_dist_spec(dist) if dist is not None else "constant"
    if corr is not None and shape == "constant":
        raise KnobError(
            f"bad value '{_echo(corr)}' for {CORR_ENV}: expected it with a {DIST_ENV} other "
            "than constant (it correlates drawn delays)"
        )
