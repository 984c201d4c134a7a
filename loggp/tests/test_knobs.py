"""Knob parsing and the registry: every case of the file the C parser's test runs too
(emulator/core/tests/knob_cases.txt), so the CLI accepts exactly what the shim accepts and
rejects the rest with the same message; then what only Python has.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from loggp.errors import KnobError
from loggp.plan.knobs import (
    REGISTRY_FILE,
    UINT64_MAX,
    Knob,
    KnobSet,
    Params,
    RegistryError,
    check_env,
    closest_env,
    conflict,
    inherited_knob_env,
    load_registry,
    parse_knob,
    registry_path,
    without_knob_env,
)

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
CASES_FILE = REPO / "emulator" / "core" / "tests" / "knob_cases.txt"
_TOKEN_RE = re.compile(r' (?:(\w+)=)?"((?:[^"\\]|\\.)*)"| (\w+)')


def _unescape(text: str) -> str:
    """The case file's escapes (\\n \\t \\" \\\\ \\xHH, the last a byte) to a str."""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt == "x":
                out.append(int(text[i + 2 : i + 4], 16))
                i += 4
                continue
            out += {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}[nxt]
            i += 2
            continue
        out += c.encode()
        i += 1
    return out.decode("utf-8", errors="surrogateescape")


def _cases() -> list[tuple[int, str, list[tuple[str | None, str]], str]]:
    """(line, kind, [(name or None, text)], expected) of every case line."""
    cases = []
    for lineno, line in enumerate(CASES_FILE.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        left, expect = line.split(" => ", 1)
        kind, _, rest = left.partition(" ")
        args: list[tuple[str | None, str]] = []
        pos = 0
        rest = " " + rest if rest else ""
        while pos < len(rest):
            m = _TOKEN_RE.match(rest, pos)
            assert m, f"{CASES_FILE}:{lineno}: malformed case"
            if m.group(3) is not None:  # the knob of a parse case
                args.append((m.group(3), ""))
            elif kind == "parse":
                args[-1] = (args[-1][0], _unescape(m.group(2)))
            else:
                args.append((m.group(1), _unescape(m.group(2))))
            pos = m.end()
        cases.append((lineno, kind, args, expect))
    return cases


CASES = _cases()


def _run_case(kind: str, args: list[tuple[str | None, str]]) -> str:
    """What the case yields: the value, the params line, "ok", or the error line."""
    try:
        if kind == "parse":
            ((knob, text),) = args
            assert knob is not None
            return str(parse_knob(knob, text))
        if kind == "set":
            return KnobSet.parse({str(k): t for k, t in args}).params().format()
        if kind == "env":
            check_env(dict(t.split("=", 1) for _, t in args))
            return "ok"
    except KnobError as e:
        msg = str(e)
        assert "\n" not in msg
        return msg
    raise AssertionError(f"unknown case kind {kind}")


@pytest.mark.parametrize(
    ("lineno", "kind", "args", "expect"), CASES, ids=[f"line{c[0]}" for c in CASES]
)
def test_shared_case(lineno: int, kind: str, args: list, expect: str) -> None:
    assert _run_case(kind, args) == expect, f"{CASES_FILE}:{lineno}"


def test_shared_cases_cover_every_kind() -> None:
    kinds = [c[1] for c in CASES]
    assert kinds.count("parse") >= 100 and "set" in kinds and "env" in kinds
    assert {k.value for k in Knob} <= {a[0][0] for c in CASES if c[1] == "parse" for a in [c[2]]}


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


def test_conflict_is_the_registry_group() -> None:
    assert conflict(["bandwidth", "latency", "bulk_gap"]) == (Knob.BULK_GAP, Knob.BANDWIDTH)
    assert conflict(["overhead", "send_overhead", "bulk_gap"]) is None
    assert Knob.BANDWIDTH.excludes == (Knob.BULK_GAP,)
    assert Knob.LATENCY.excludes == ()


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


def test_env_names() -> None:
    assert closest_env("LOGGP_LATENCCY=10us") == "LOGGP_LATENCY"
    assert closest_env("LOGGP_GAPX") == "LOGGP_GAP"  # a tie: the first in registry order
    check_env({"PATH": "/bin", "LOGGP_BUILD": "/b", "LOGGP_RUN_DIR": "/r", "LOGGP_GAP": "x"})
    with pytest.raises(KnobError, match=r"^unknown variable LOGGP_X{55}\.\.\.: did you mean"):
        check_env({"LOGGP_" + "X" * 300: "1"})
    env = {"LOGGP_GAP": "1us", "PATH": "/bin", "LOGGP_OVERHEAD": "2us", "LOGGP_CLOCK": "tsc"}
    assert inherited_knob_env(env) == ["LOGGP_OVERHEAD", "LOGGP_GAP"]


def test_registry_is_found_and_complete() -> None:
    assert registry_path() == REPO / REGISTRY_FILE
    assert {s.reader for s in load_registry(registry_path()).settings} == {
        "shim",
        "program",
        "loggp",
    }


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ('LGP_KNOB(X, "x", TIME, "gap", "", "fabric", "s", "w", "h"', "not a registry row"),
        ('LGP_KNOB(X, "x", TIME, "gap", "", "fabric", "s", "w")', "expected 9 arguments"),
        ('LGP_KNOB(X, "x", TIME, "gap", "", "fabric", "s", "w", h)', "expected 9 arguments"),
        ('LGP_KNOB(X, "x",TIME, "gap", "", "fabric", "s", "w", "h")', "separated by ', '"),
        ('LGP_KNOB(Y, "x", TIME, "gap", "", "fabric", "s", "w", "h")', "not the upper-case"),
        ('LGP_KNOB(X, "x", HEAT, "gap", "", "fabric", "s", "w", "h")', "unknown family HEAT"),
        ('LGP_KNOB(X, "x", TIME, "gaps", "", "fabric", "s", "w", "h")', "sets 'gaps'"),
        ('LGP_KNOB(X, "x", TIME, "gap", "", "nic", "s", "w", "h")', "shims 'nic'"),
        ('LGP_KNOB(GAP, "gap", TIME, "gap", "", "fabric", "s", "w", "h")', "knob gap twice"),
        ('LGP_UNIT(TIME, "ns", 1)', "unit ns twice"),
        ('LGP_UNIT(TIME, "h", -3)', "bad argument"),
        ("knob x = 1us", "not a registry row"),
    ],
)
def test_malformed_registry_row(tmp_path: Path, row: str, error: str) -> None:
    path = tmp_path / "knobs.def"
    text = registry_path().read_text()
    path.write_text(text + row + "\n")
    lineno = len(text.splitlines()) + 1
    with pytest.raises(RegistryError, match=f"^{re.escape(str(path))}:{lineno}: .*{error}"):
        load_registry(path)


def test_missing_registry(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="cannot read the knob registry"):
        load_registry(tmp_path / "knobs.def")


EXTRA_ROWS = (
    'LGP_PARAM(recv_gap, ns, "ns")\n'
    'LGP_KNOB(RECV_GAP, "recv_gap", TIME, "recv_gap", "", "fabric", "Δg_r", "receive gap", '
    '"least time between two receive completions")\n'
)

EXTRA_CHECK = r"""
from loggp.analysis.knobs import knob_info
from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.plan.knobs import KnobSet

ks = KnobSet.parse({"recv_gap": "2us", "gap": "1us"})
print(ks.env())
print(ks.params().format())
print(knob_info("recv_gap").title, "|", knob_info("recv_gap").axis_label)
yaml = (
    "version: 1\nname: x\nworkloads:\n  - name: w\n    program: p\n"
    "sweep:\n  knobs:\n    recv_gap: [%s]\n"
)
print(parse_experiment(yaml % "1us", "x.yaml").sweep.knobs)
try:
    parse_experiment(yaml % "10uss", "x.yaml")
except ExperimentError as e:
    print(e)
"""


def test_a_new_registry_row_reaches_cli_yaml_env_and_report(tmp_path: Path) -> None:
    """Adding a knob is a registry row: with one more row (and no Python change) the knob
    has its CLI option with its help, YAML validation, its variable and its report axis."""
    shutil.copytree(REPO / "loggp", tmp_path / "loggp", ignore=shutil.ignore_patterns("tests"))
    registry = tmp_path / REGISTRY_FILE
    registry.parent.mkdir(parents=True)
    registry.write_text(registry_path().read_text() + EXTRA_ROWS)

    def py(*args: str) -> str:
        res = subprocess.run(
            [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert res.returncode == 0, res.stderr
        return res.stdout

    helptext = " ".join(py("-m", "loggp", "exec", "--help").split())
    assert "--recv-gap TIME least time between two receive completions; sets LOGGP_RECV_GAP" in (
        helptext
    )
    out = py("-c", textwrap.dedent(EXTRA_CHECK)).splitlines()
    assert out[0] == "{'LOGGP_GAP': '1us', 'LOGGP_RECV_GAP': '2us'}"
    assert out[1].endswith(" gap=1000ns latency=0ns bulk_gap=0fs/B recv_gap=2000ns")
    assert out[2] == "Sensitivity to receive gap | Δg_r: added recv gap (µs)"
    assert out[3] == "{'recv_gap': ['1us']}"
    assert out[4].startswith(
        "x.yaml:8: key 'sweep.knobs.recv_gap[0]': bad value '10uss' for "
        "LOGGP_RECV_GAP: expected <number>{ns|"
    )
