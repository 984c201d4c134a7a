"""Unit tests of the suite's own helpers: parsing, and the idle services' probe (no
binaries needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import (
    IDLE_WAKEUPS_PER_S,
    core_provider,
    idle_activity,
    json_line,
    mpi_over_ofi,
    parse_pingpong,
)

pytestmark = pytest.mark.unit

PINGPONG_OUT = """\
bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec
1k      1k      =1k      1.9m        0.01s    165.32       6.19       0.16
"""


def test_parse_pingpong_row() -> None:
    rows = parse_pingpong(PINGPONG_OUT)
    assert len(rows) == 1
    assert rows[0].size == "1k"
    assert rows[0].usec_per_xfer == pytest.approx(6.19)
    assert rows[0].mb_per_sec == pytest.approx(165.32)


def test_parse_pingpong_all_sizes_stops_at_table_end() -> None:
    row = "64m     2       =2       256m        0.39s    686.88   97700.50       0.00\n"
    out = PINGPONG_OUT + row
    out += "some trailing log line\n"
    rows = parse_pingpong(out)
    assert [r.size for r in rows] == ["1k", "64m"]
    assert rows[1].usec_per_xfer == pytest.approx(97700.5)


def test_parse_pingpong_no_table() -> None:
    assert parse_pingpong("[error] util/pingpong.c:408 : failed\n") == []


def test_json_line_takes_last_object() -> None:
    assert json_line('noise\n{"a":1}\n{"b":2}\n') == {"b": 2}
    with pytest.raises(AssertionError):
        json_line("no json here")


def test_core_provider_and_mca() -> None:
    assert core_provider("tcp;ofi_rxm") == "tcp"
    assert core_provider("shm") == "shm"
    flags = mpi_over_ofi("tcp;ofi_rxm")
    assert flags[flags.index("mtl_ofi_provider_include") + 1] == "tcp;ofi_rxm"


@pytest.mark.parametrize(
    ("loop", "sleeps_on_a_timer"),
    [("time.sleep(0.001)", True), ("sys.stdin.read()", False)],
)
def test_idle_activity_tells_a_timed_sleep_from_a_blocked_wait(
    loop: str, sleeps_on_a_timer: bool
) -> None:
    """A loop sleeping 1 ms at a time wakes hundreds of times a second at next to no
    CPU; a thread blocked on a descriptor does not wake at all."""
    code = f"import sys, time\nprint(flush=True)\nwhile True: {loop}"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"\n"
        quiet = idle_activity([proc.pid], 0.3)
    finally:
        proc.kill()
        proc.wait()
    assert (quiet.wakeups_per_s > 4 * IDLE_WAKEUPS_PER_S) == sleeps_on_a_timer, quiet
    assert (quiet.wakeups_per_s < 10) != sleeps_on_a_timer, quiet
