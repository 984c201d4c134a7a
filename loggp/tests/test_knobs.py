"""Knob parsing, mirrored from the C parser's unit test (emulator/core/tests/test_knob.c).

The table below is that test's table, case for case, so the CLI accepts exactly what the shim
accepts and rejects the rest with the same message.
"""

from __future__ import annotations

import pytest

from loggp.errors import KnobError
from loggp.plan.knobs import (
    UINT64_MAX,
    Knob,
    KnobSet,
    Params,
    parse_knob,
    without_knob_env,
)

pytestmark = pytest.mark.unit

INVALID = "invalid"
RANGE = "range"

# (knob, text, error or None, value in ns or fs/B)
CASES = [
    ("latency", "0ns", None, 0),
    ("latency", "0s", None, 0),
    ("latency", "10ns", None, 10),
    ("latency", "10us", None, 10000),
    ("latency", "2.5us", None, 2500),
    ("latency", "2.5ms", None, 2500000),
    ("latency", "1s", None, 1000000000),
    ("latency", "007us", None, 7000),
    ("latency", "0.5ns", None, 1),
    ("latency", "0.4ns", None, 0),
    ("latency", "0.0000000015s", None, 2),
    ("latency", "0.000000001s", None, 1),
    ("latency", "10 us", None, 10000),
    ("gap", "1.25us", None, 1250),
    ("overhead", "100us", None, 100000),
    ("send_overhead", "3ms", None, 3000000),
    ("recv_overhead", "4s", None, 4000000000),
    ("latency", "1.0000000000000000000001us", None, 1000),
    ("latency", "0.0000000000000000009s", None, 0),
    ("latency", "18446744073709551615ns", None, UINT64_MAX),
    ("latency", "18446744073709551615.4ns", None, UINT64_MAX),
    ("latency", "18446744073.709551615s", None, UINT64_MAX),
    ("latency", "18446744073709551615.5ns", RANGE, 0),
    ("latency", "18446744073709551616ns", RANGE, 0),
    ("latency", "18446744074s", RANGE, 0),
    ("latency", "99999999999999999999999999999999999999999s", RANGE, 0),
    ("latency", "", INVALID, 0),
    ("latency", "0", INVALID, 0),
    ("latency", "5", INVALID, 0),
    ("latency", "us", INVALID, 0),
    ("latency", "10u", INVALID, 0),
    ("latency", "10uss", INVALID, 0),
    ("latency", "10US", INVALID, 0),
    ("latency", "10 ms ", INVALID, 0),
    ("latency", "10  us", INVALID, 0),
    ("latency", " 10us", INVALID, 0),
    ("latency", "10us ", INVALID, 0),
    ("latency", "10us\n", INVALID, 0),
    ("latency", "-5us", INVALID, 0),
    ("latency", "+5us", INVALID, 0),
    ("latency", "1e3us", INVALID, 0),
    ("latency", "1E3us", INVALID, 0),
    ("latency", "0x10us", INVALID, 0),
    ("latency", ".5us", INVALID, 0),
    ("latency", "5.us", INVALID, 0),
    ("latency", "1.2.3us", INVALID, 0),
    ("latency", "1,5us", INVALID, 0),
    ("latency", "10ns/B", INVALID, 0),
    ("latency", "10MB/s", INVALID, 0),
    ("latency", "inf", INVALID, 0),
    ("latency", "nan", INVALID, 0),
    ("latency", "99999999999999999999999xs", INVALID, 0),
    ("bulk_gap", "0ns/B", None, 0),
    ("bulk_gap", "1ns/B", None, 1000000),
    ("bulk_gap", "0.08ns/B", None, 80000),
    ("bulk_gap", "1ps/B", None, 1000),
    ("bulk_gap", "0.001ps/B", None, 1),
    ("bulk_gap", "1us/B", None, 1000000000),
    ("bulk_gap", "2 ns/B", None, 2000000),
    ("bulk_gap", "18446744073.709551615us/B", None, UINT64_MAX),
    ("bulk_gap", "18446744074us/B", RANGE, 0),
    ("bulk_gap", "1ns", INVALID, 0),
    ("bulk_gap", "1ns/b", INVALID, 0),
    ("bulk_gap", "1fs/B", INVALID, 0),
    ("bulk_gap", "1", INVALID, 0),
    ("bulk_gap", "-1ns/B", INVALID, 0),
    ("bulk_gap", "1GB/s", INVALID, 0),
    ("bandwidth", "1GB/s", None, 1000000),
    ("bandwidth", "50MB/s", None, 20000000),
    ("bandwidth", "50 MB/s", None, 20000000),
    ("bandwidth", "2.5GB/s", None, 400000),
    ("bandwidth", "1B/s", None, 1000000000000000),
    ("bandwidth", "1kB/s", None, 1000000000000),
    ("bandwidth", "1KiB/s", None, 976562500000),
    ("bandwidth", "1MiB/s", None, 953674316),
    ("bandwidth", "1GiB/s", None, 931323),
    ("bandwidth", "1kbit/s", None, 8000000000000),
    ("bandwidth", "1Mbit/s", None, 8000000000),
    ("bandwidth", "1Gbit/s", None, 8000000),
    ("bandwidth", "10Gbit/s", None, 800000),
    ("bandwidth", "1000000GB/s", None, 1),
    ("bandwidth", "1999999GB/s", None, 1),
    ("bandwidth", "0.0001B/s", None, 10000000000000000000),
    ("bandwidth", "3000000GB/s", RANGE, 0),
    ("bandwidth", "0.00001B/s", RANGE, 0),
    ("bandwidth", "99999999999999999999999GB/s", RANGE, 0),
    ("bandwidth", "0.0000000000000000001B/s", RANGE, 0),
    ("bandwidth", "0B/s", INVALID, 0),
    ("bandwidth", "0GB/s", INVALID, 0),
    ("bandwidth", "0.000MB/s", INVALID, 0),
    ("bandwidth", "50", INVALID, 0),
    ("bandwidth", "50MB", INVALID, 0),
    ("bandwidth", "50MB/S", INVALID, 0),
    ("bandwidth", "50Mb/s", INVALID, 0),
    ("bandwidth", "50MBps", INVALID, 0),
    ("bandwidth", "50mbit/s", INVALID, 0),
    ("bandwidth", "-50MB/s", INVALID, 0),
    ("bandwidth", "1ns/B", INVALID, 0),
]

TIME_FORMS = "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms"
BULK_FORMS = "<number>{ps/B|ns/B|us/B}, e.g. 2ns/B or 0.08ns/B"
RATE_FORMS = (
    "<number>{B/s|kB/s|MB/s|GB/s|KiB/s|MiB/s|GiB/s|kbit/s|Mbit/s|Gbit/s}"
    " greater than zero, e.g. 50MB/s or 1Gbit/s"
)


@pytest.mark.parametrize(("knob", "text", "error", "value"), CASES)
def test_parse_table(knob: str, text: str, error: str | None, value: int) -> None:
    if error is None:
        assert parse_knob(knob, text) == value
        return
    with pytest.raises(KnobError) as exc:
        parse_knob(knob, text)
    msg = str(exc.value)
    assert msg.startswith("bad value '")
    assert f" for {Knob(knob).env}: expected " in msg
    assert msg.endswith(" (out of range)") == (error == RANGE)
    assert "\n" not in msg


@pytest.mark.parametrize(
    ("knob", "text", "value"),
    [
        ("latency", "10us", 10_000),
        ("latency", "2.5ms", 2_500_000),
        ("latency", "0ns", 0),
        ("bulk_gap", "1ns/B", 1_000_000),
        ("bandwidth", "50MB/s", 20_000_000),
        ("bandwidth", "1Gbit/s", 8_000_000),
    ],
)
def test_brief_good_values(knob: str, text: str, value: int) -> None:
    assert parse_knob(knob, text) == value


@pytest.mark.parametrize("text", ["10", "-5us", "10uss", "1e3us", ""])
def test_brief_bad_time_values(text: str) -> None:
    with pytest.raises(KnobError, match=r"^bad value '.*' for LOGGP_LATENCY: expected <number>"):
        parse_knob("latency", text)


@pytest.mark.parametrize("knob", ["bulk_gap", "bandwidth"])
@pytest.mark.parametrize("text", ["10", "-5ns/B", "", "0MB/s", "1e3MB/s"])
def test_bad_per_byte_values(knob: str, text: str) -> None:
    with pytest.raises(KnobError, match=f"^bad value '.*' for {Knob(knob).env}: expected "):
        parse_knob(knob, text)


def test_messages_match_c_parser() -> None:
    cases = [
        ("latency", "10uss", f"bad value '10uss' for LOGGP_LATENCY: expected {TIME_FORMS}"),
        ("bulk_gap", "5", f"bad value '5' for LOGGP_BULK_GAP: expected {BULK_FORMS}"),
        ("bandwidth", "0MB/s", f"bad value '0MB/s' for LOGGP_BANDWIDTH: expected {RATE_FORMS}"),
        (
            "gap",
            "99999999999s",
            f"bad value '99999999999s' for LOGGP_GAP: expected {TIME_FORMS} (out of range)",
        ),
    ]
    for knob, text, message in cases:
        with pytest.raises(KnobError) as exc:
            parse_knob(knob, text)
        assert str(exc.value) == message


def test_message_is_one_printable_line() -> None:
    with pytest.raises(KnobError) as exc:
        parse_knob("latency", "1\nus")
    assert str(exc.value).startswith("bad value '1?us' for LOGGP_LATENCY")
    with pytest.raises(KnobError) as exc:
        parse_knob("latency", "10\u00b5s")  # micro sign: two UTF-8 bytes, two '?'
    assert str(exc.value).startswith("bad value '10??s' for")


def test_long_value_is_shortened() -> None:
    with pytest.raises(KnobError) as exc:
        parse_knob("latency", "9" * 299)
    msg = str(exc.value)
    assert msg.startswith("bad value '" + "9" * 61 + "...' for LOGGP_LATENCY: expected <number>")


def test_unknown_knob() -> None:
    with pytest.raises(KnobError, match=r"^unknown knob 'jitter': expected one of overhead, "):
        parse_knob("jitter", "10us")
    with pytest.raises(KnobError, match="unknown knob 'jitter'"):
        KnobSet.parse({"jitter": "1us"})


def test_knob_names() -> None:
    assert [k.value for k in Knob] == [
        "overhead",
        "send_overhead",
        "recv_overhead",
        "gap",
        "latency",
        "bulk_gap",
        "bandwidth",
    ]
    assert Knob.SEND_OVERHEAD.env == "LOGGP_SEND_OVERHEAD"
    assert Knob.BULK_GAP.option == "--bulk-gap"


def test_env_keeps_text_in_knob_order() -> None:
    ks = KnobSet.parse({"latency": "10us", "overhead": "2.5 us", "gap": None})
    assert ks.env() == {"LOGGP_OVERHEAD": "2.5 us", "LOGGP_LATENCY": "10us"}
    assert list(ks.env()) == ["LOGGP_OVERHEAD", "LOGGP_LATENCY"]
    assert ks.label() == "overhead=2.5 us latency=10us"
    assert KnobSet.parse({}).env() == {}
    assert KnobSet().label() == "all knobs 0"


def test_bad_value_in_set_is_rejected() -> None:
    with pytest.raises(KnobError, match="^bad value '10' for LOGGP_GAP"):
        KnobSet.parse({"latency": "10us", "gap": "10"})


def test_bulk_gap_and_bandwidth_exclusive() -> None:
    with pytest.raises(KnobError) as exc:
        KnobSet.parse({"bulk_gap": "1ns/B", "bandwidth": "50MB/s"})
    assert str(exc.value) == (
        "bad value '50MB/s' for LOGGP_BANDWIDTH: expected LOGGP_BANDWIDTH or LOGGP_BULK_GAP, "
        "not both"
    )


def test_params_resolve_like_the_shim() -> None:
    ks = KnobSet.parse({"overhead": "10us", "recv_overhead": "3us", "bandwidth": "1Gbit/s"})
    assert ks.params() == Params(
        send_overhead_ns=10_000, recv_overhead_ns=3_000, bulk_gap_fs=8_000_000
    )
    assert ks.params().active
    assert not KnobSet.parse({"latency": "0ns"}).params().active
    assert KnobSet.parse({"bulk_gap": "2ns/B"}).params().bulk_gap_fs == 2_000_000


def test_without_knob_env_drops_only_knobs() -> None:
    env = {"LOGGP_LATENCY": "1us", "LOGGP_STATS_FILE": "/x", "LOGGP_BUILD": "/b", "PATH": "/bin"}
    assert without_knob_env(env) == {"LOGGP_BUILD": "/b", "PATH": "/bin"}


def test_uint64_max() -> None:
    assert UINT64_MAX == 18446744073709551615
