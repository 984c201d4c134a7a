"""The delay distribution settings, checked as the shim checks them.

LOGGP_LATENCY_DIST, LOGGP_LATENCY_CORR and LOGGP_SEED (emulator/core/include/lgp/dist.h,
docs/design.md "Delay distributions") are free-text settings of the registry; the shim
refuses a bad value of one, so every point of a run would fail.  check_dist_env() refuses
it before anything starts, in the shim's words (emulator/core/src/dist.c), reading the
delays of an empirical file with the knob parser as the shim does.

An experiment file may name the distribution instead (`emulator.latency_dist`,
`emulator.latency_corr` and its `seed`, docs/experiments.md): file_dist_env() turns those
keys into the same settings, and run_dist_env() decides which of the two every point
runs with, refusing the file's beside the same variables in the environment.
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


def check_dist_spec(text: str, *, read: bool = True) -> str:
    """The shape of a LOGGP_LATENCY_DIST value; KnobError as the shim words it.  With read
    False an empirical file is only named, not read (an experiment file's, whose path is
    taken from the file's directory when the run starts)."""
    shape, colon, arg = text.partition(":")
    if shape not in SHAPES or (shape == "constant") == bool(colon):
        raise _bad_spec(text)
    if shape == "empirical":
        if not arg:
            raise _bad_spec(text)
        if read:
            _check_empirical(arg)
    elif shape != "constant":
        try:
            parse_knob("latency", arg)
        except KnobError:
            raise _bad_spec(text) from None
    return shape


def check_corr(corr: str) -> None:
    """KnobError, as the shim words it, for a LOGGP_LATENCY_CORR that is no number 0..1."""
    if not (_RHO_RE.fullmatch(corr) and float(corr) <= 1.0):
        raise KnobError(
            f"bad value '{_echo(corr)}' for {CORR_ENV}: expected a number from 0 to 1, e.g. 0.25"
        )


def check_corr_with(corr: str | None, shape: str) -> None:
    """KnobError for a correlation beside no drawn distribution (it would be ignored)."""
    if corr is not None and shape == "constant":
        raise KnobError(
            f"bad value '{_echo(corr)}' for {CORR_ENV}: expected it with a {DIST_ENV} other "
            "than constant (it correlates drawn delays)"
        )


def check_dist_env(env: Mapping[str, str]) -> None:
    """KnobError for the first bad distribution setting in env, in the shim's order."""
    seed, corr, dist = env.get(SEED_ENV), env.get(CORR_ENV), env.get(DIST_ENV)
    if seed is not None and not (seed.isascii() and seed.isdigit() and int(seed) <= UINT64_MAX):
        raise KnobError(
            f"bad value '{_echo(seed)}' for {SEED_ENV}: expected a whole number from 0 to "
            f"{UINT64_MAX}"
        )
    if corr is not None:
        check_corr(corr)
    check_corr_with(corr, check_dist_spec(dist) if dist is not None else "constant")


DIST_VARS = (DIST_ENV, CORR_ENV, SEED_ENV)


def file_dist_env(dist: str | None, corr: str | None, seed: int, base: Path) -> dict[str, str]:
    """The settings an experiment file's emulator.latency_dist names ({} without one): the
    shape, with an empirical file's relative path taken from base (the experiment file's
    directory) and made absolute, since ranks start elsewhere; the correlation if given;
    the file's seed."""
    if dist is None:
        return {}
    shape, _, arg = dist.partition(":")
    if shape == "empirical" and not Path(arg).is_absolute():
        dist = f"empirical:{(base / arg).resolve()}"
    env = {DIST_ENV: dist, SEED_ENV: str(seed)}
    if corr is not None:
        env[CORR_ENV] = corr
    return env


def run_dist_env(from_file: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The distribution settings every point of a run gets: the file's (from_file, of
    file_dist_env), else those set in environ.  KnobError for the file's beside any of
    the variables in environ (which would win is not obvious, so neither does), and for a
    bad setting of the file's (its empirical file read)."""
    if not from_file:
        return {name: environ[name] for name in DIST_VARS if name in environ}
    for name in DIST_VARS:
        if name in environ:
            raise KnobError(
                f"{name} is set in the environment and the experiment file names a delay "
                "distribution (emulator.latency_dist, emulator.latency_corr, seed): unset "
                f"{name} or remove emulator.latency_dist from the file"
            )
    check_dist_env(from_file)
    return dict(from_file)


def dist_provenance(settings: Mapping[str, str], from_file: bool) -> dict[str, str]:
    """What run.json's provenance records of the delays a run drew (run_dist_env)."""
    if DIST_ENV not in settings:
        return {"latency_dist": "constant", "from": "default"}
    out = {"latency_dist": settings[DIST_ENV]}
    if CORR_ENV in settings:
        out["latency_corr"] = settings[CORR_ENV]
    out["seed"] = settings.get(SEED_ENV, "1")
    out["from"] = "experiment file" if from_file else "environment"
    return out
