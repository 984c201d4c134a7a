"""The delay distribution settings refused before anything runs, in the shim's words: the
same values and messages as emulator/core/tests/test_dist.c (loggp/plan/dist.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.errors import KnobError
from loggp.plan.dist import check_dist_env
from loggp.plan.knobs import check_env

pytestmark = pytest.mark.unit

SPEC_FORMS = (
    "expected constant, uniform:TIME, normal:TIME, pareto:TIME, paretonormal:TIME or "
    "empirical:FILE, TIME as <number>{ns|us|ms|s}, e.g. 10us or 2.5ms"
)
LINE_FORMS = "expected one delay per line as <number>{ns|us|ms|s}, e.g. 10us or 2.5ms"

# the bad values test_dist.c refuses
BAD_DIST = [
    "gauss:20us", "normal", "normal:", "normal:20", "normal:-5us", "constant:5us",
    "empirical:", "", "Normal:20us", "normal:20us ",
]  # fmt: skip
BAD_CORR = ["1.5", "-0.1", "25%", "", ".5", "0.", "1e-1", "0.5 "]
BAD_SEED = ["", "-1", "x", "1.5", "18446744073709551616", "²"]


@pytest.mark.parametrize("value", BAD_DIST)
def test_a_bad_shape_is_refused(value: str) -> None:
    with pytest.raises(KnobError) as e:
        check_env({"LOGGP_LATENCY_DIST": value})
    assert str(e.value) == f"bad value '{value}' for LOGGP_LATENCY_DIST: {SPEC_FORMS}"


@pytest.mark.parametrize("value", BAD_CORR)
def test_a_bad_correlation_is_refused(value: str) -> None:
    with pytest.raises(KnobError) as e:
        check_dist_env({"LOGGP_LATENCY_DIST": "normal:20us", "LOGGP_LATENCY_CORR": value})
    assert str(e.value) == (
        f"bad value '{value}' for LOGGP_LATENCY_CORR: expected a number from 0 to 1, e.g. 0.25"
    )


@pytest.mark.parametrize("value", BAD_SEED)
def test_a_bad_seed_is_refused(value: str) -> None:
    with pytest.raises(KnobError, match="^bad value '.*' for LOGGP_SEED: expected a whole"):
        check_dist_env({"LOGGP_SEED": value})


def test_a_correlation_without_a_distribution_is_refused() -> None:
    with pytest.raises(KnobError) as e:
        check_dist_env({"LOGGP_LATENCY_CORR": "0.5"})
    assert str(e.value) == (
        "bad value '0.5' for LOGGP_LATENCY_CORR: expected it with a LOGGP_LATENCY_DIST other "
        "than constant (it correlates drawn delays)"
    )


def test_good_settings_pass() -> None:
    check_env({"LOGGP_SEED": "18446744073709551615", "LOGGP_LATENCY_DIST": "constant"})
    check_env({"LOGGP_LATENCY_DIST": "uniform:2.5 us", "LOGGP_LATENCY_CORR": "1"})
    check_env({"LOGGP_LATENCY_DIST": "pareto:0ns", "LOGGP_LATENCY_CORR": "0.25"})
    check_env({})


def test_an_empirical_file_is_read_as_the_shim_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a short path: messages echo at most 64 characters
    path = Path("delays.txt")
    spec = {"LOGGP_LATENCY_DIST": f"empirical:{path}"}
    path.write_text("# measured\n10us\n20000ns\n\n0.02ms\n35 us\n250us")
    check_env(spec)
    cases = [
        ("10us\n# ok\n5\n", f"bad value '5' at {path}:3 for LOGGP_LATENCY_DIST: {LINE_FORMS}"),
        ("10us\n-3us\n", f"bad value '-3us' at {path}:2 for LOGGP_LATENCY_DIST: {LINE_FORMS}"),
        ("# nothing\n\n", f"no delays in LOGGP_LATENCY_DIST '{path}': {LINE_FORMS}"),
        (
            "1us\n" + "1" * 257 + "us\n",
            f"line {path}:2 of LOGGP_LATENCY_DIST is too long: expected one delay per line, "
            "at most 256 characters",
        ),
    ]
    for text, message in cases:
        path.write_text(text)
        with pytest.raises(KnobError) as e:
            check_env(spec)
        assert str(e.value) == message
    path.unlink()
    with pytest.raises(KnobError) as e:
        check_env(spec)
    assert str(e.value) == (
        f"cannot read the delays of LOGGP_LATENCY_DIST '{path}': No such file or directory"
    )
