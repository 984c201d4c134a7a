"""The accuracy benchmark's judging: bare/control/shim triples for the delaying knobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loggp.bench import accuracy

BARE = {"half_rtt_us": 6.0, "o_s_us": 4.0, "o_r_us": 1.5, "g_us": 4.0, "L_us": 0.5}


def results(add: dict[str, float]) -> dict[str, Any]:
    """loggp-calibrate's results with every quantity's p10, median and p99 moved by add."""
    out: dict[str, Any] = {}
    for name, v in BARE.items():
        x = v + add.get(name, 0.0)
        out[name] = {"p10": x, "median": x, "p99": x + 3.0}
    out["G_ns_per_B"] = {"value": 0.1, "r2": 0.9}
    out["per_size"] = {"half_rtt_us": [6.0, 6.5], "gap_us": [4.0, 4.2]}
    return out


def settings() -> accuracy.Settings:
    return accuracy.Settings(
        build=Path("build"),
        providers=["tcp"],
        iterations=10,
        sizes=[1, 1024],
        burst=16,
        repeats=3,
        timeout_s=1,
        cases={},
        hog_cases={},
        baseline_only=False,
    )


def fake_runs(monkeypatch, control: dict[str, float], shim: dict[str, float]) -> list[Any]:
    """run_calibrate replaced: bare is BARE, a run with spins is the control, a shimmed one
    the shim; returns the list of (shim, spins) each call got."""
    calls: list[Any] = []

    def run(st, provider, on, knobs, spins_us=(0.0, 0.0)):
        calls.append((on, spins_us))
        if on:
            return results(shim), None
        return results(control if any(spins_us) else {}), None

    monkeypatch.setattr(accuracy, "run_calibrate", run)
    return calls


def test_the_hosts_cost_of_waiting_is_not_the_shims_error(monkeypatch) -> None:
    # The host charges 2.5 us for a 100 us pause with or without the shim.
    calls = fake_runs(monkeypatch, {"half_rtt_us": 102.5}, {"half_rtt_us": 102.7, "L_us": 106.0})
    case = accuracy.measure_case(settings(), "tcp", "latency", 100.0)
    half = case.metrics["half_rtt_us"]
    assert half["error"] == pytest.approx(2.7)
    assert half["control"] == pytest.approx(108.5)
    assert half["control_error"] == pytest.approx(0.2)
    assert half["pass"] is True and case.passed
    # L is information only, and the control does not stand in for it.
    assert case.metrics["L_us"]["control_error"] is None
    assert case.metrics["L_us"]["judged"] is False
    assert calls == [(False, (0.0, 0.0)), (False, (100.0, 0.0)), (True, (0.0, 0.0))] * 3


def test_a_shim_slower_than_its_control_fails(monkeypatch) -> None:
    fake_runs(monkeypatch, {"half_rtt_us": 100.0}, {"half_rtt_us": 101.5})
    case = accuracy.measure_case(settings(), "tcp", "latency", 10.0)
    assert case.metrics["half_rtt_us"]["control_error"] == pytest.approx(1.5)
    assert case.metrics["half_rtt_us"]["pass"] is False
    assert not case.passed


def test_overhead_controls_spin_on_both_calls(monkeypatch) -> None:
    d = 50.0
    ctrl = {"o_s_us": d + 2.0, "o_r_us": d, "half_rtt_us": 2 * d + 2.0}
    calls = fake_runs(monkeypatch, ctrl, ctrl)
    case = accuracy.measure_case(settings(), "tcp", "overhead", d)
    assert {spins for on, spins in calls if not on} == {(0.0, 0.0), (d, d)}
    assert case.metrics["o_s_us"]["error"] == pytest.approx(2.0)
    assert all(m["control_error"] == pytest.approx(0.0) for m in case.metrics.values())
    assert case.passed


def test_knobs_without_a_control_are_judged_on_the_pairs(monkeypatch) -> None:
    calls = fake_runs(monkeypatch, {}, {"g_us": 6.3})
    case = accuracy.measure_case(settings(), "tcp", "gap", 10.0)
    g = case.metrics["g_us"]
    assert g["expected"] == pytest.approx(6.0)
    assert g["error"] == pytest.approx(0.3)
    assert g["control"] is None and g["control_error"] is None
    assert case.passed
    assert all(spins == (0.0, 0.0) for _, spins in calls)


def test_o_leaks_into_l_is_judged_on_l_beneath_overhead(monkeypatch) -> None:
    d = 20.0
    # The control's spins and the shim's overheads both count in o_s and o_r: L stays.
    ctrl = {"o_s_us": d, "o_r_us": d, "half_rtt_us": 2 * d, "L_us": 0.1}
    calls = fake_runs(monkeypatch, ctrl, dict(ctrl, L_us=0.6))
    seen: list[dict[str, str]] = []
    real_env = accuracy.knob_env
    monkeypatch.setattr(accuracy, "knob_env", lambda k, v: seen.append(real_env(k, v)) or seen[-1])
    case = accuracy.measure_case(settings(), "tcp", "o_leak", d)
    assert seen[0] == {"LOGGP_OVERHEAD": "20us"}
    assert list(case.metrics) == ["L_us"]
    L = case.metrics["L_us"]
    assert L["expected"] == 0.0 and L["tolerance"] == pytest.approx(1.0)
    assert L["control_error"] == pytest.approx(0.5) and L["pass"] is True
    assert {spins for on, spins in calls if not on} == {(0.0, 0.0), (d, d)}
    # Half of Δo leaking into L fails it.
    fake_runs(monkeypatch, ctrl, dict(ctrl, L_us=10.1))
    assert not accuracy.measure_case(settings(), "tcp", "o_leak", d).passed


@pytest.mark.parametrize(
    ("spins", "args"),
    [
        ((0.0, 0.0), []),
        ((100.0, 0.0), ["-S", "100000", "-R", "0"]),
        ((1.5, 1.5), ["-S", "1500", "-R", "1500"]),
    ],
)
def test_control_args(spins: tuple[float, float], args: list[str]) -> None:
    assert accuracy.control_args(spins) == args


def test_the_table_shows_the_control() -> None:
    case = {
        "knob": "latency",
        "configured": 100.0,
        "unit": "us",
        "lateness": {},
        "metrics": {
            "half_rtt_us": {
                "base": 6.0, "control": 108.5, "shim": 108.7, "expected": 100.0, "error": 2.7,
                "error_p99": 3.0, "control_error": 0.2, "tolerance": 3.0, "judged": True,
                "pass": True,
            }
        },
    }  # fmt: skip
    row = accuracy.case_table([case])[2]
    assert row == (
        "| latency | 100 us | half_rtt_us | 6.000 | 108.500 | 108.700 | 100.000 | 2.700 "
        "| 3.000 | 0.200 | 3.000 | - / - | pass |"
    )


def test_the_o_leak_row_is_labelled() -> None:
    mm = {
        "base": 0.5, "control": 0.5, "shim": 0.6, "expected": 0.0, "error": 0.1,
        "error_p99": 0.2, "control_error": 0.1, "tolerance": 1.0, "judged": True, "pass": True,
    }  # fmt: skip
    case = {
        "knob": "o_leak",
        "configured": 20.0,
        "unit": "us",
        "lateness": {},
        "metrics": {"L_us": mm},
    }
    assert accuracy.case_table([case])[2].startswith("| o leaks into L (Δo) | 20 us | L_us |")
