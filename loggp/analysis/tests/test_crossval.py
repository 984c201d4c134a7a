"""Cross-validation's rule: a simulated slowdown agrees inside the emulated interval or
within 15 % of the emulated median; points measured one way only are not compared."""

from __future__ import annotations

from dataclasses import replace

import pytest

from loggp.analysis.crossval import compare
from loggp.analysis.slowdown import Analysis, Curve, CurvePoint, KnobSummary, Stat

pytestmark = pytest.mark.unit


def stat(median: float, low: float | None = None, high: float | None = None) -> Stat:
    return Stat(median, low, high, 6 if low is not None else 1, 0.97 if low else None)


def analysis(points: dict[float, Stat]) -> Analysis:
    curve = Curve(
        "latency",
        "app",
        "time_s",
        False,
        (
            CurvePoint(0.0, stat(1.0), (), baseline=True),
            *(CurvePoint(x, s, ()) for x, s in points.items()),
        ),
    )
    knob = KnobSummary("latency", (curve,), len(points) + 1, len(points) + 1, 0, ())
    return Analysis(("app",), {}, {}, {}, (knob,), (), ())


def test_inside_the_interval_or_within_15_percent_agrees() -> None:
    emulated = analysis({10: stat(2.0, 1.5, 3.0), 20: stat(4.0), 50: stat(10.0), 99: stat(5.0)})
    simulated = analysis({10: stat(2.9), 20: stat(4.5), 50: stat(5.0)})
    found = {a.x: a for a in compare(emulated, simulated)}
    assert sorted(found) == [10, 20, 50]  # the baseline and x = 99 (emulated only) are not
    assert found[10].inside_interval and found[10].agrees  # 45 % off, inside [1.5, 3]
    assert not found[20].inside_interval and found[20].agrees  # 12.5 % off
    assert not found[50].agrees and found[50].rel_diff == pytest.approx(-0.5)
    assert found[50].as_dict()["emulated_low"] is None


def test_a_disagreement_names_an_emulation_mostly_degraded() -> None:
    emulated = analysis({10: stat(2.0, 1.8, 2.2), 20: stat(4.0, 3.8, 4.2)})
    simulated = analysis({10: stat(1.0), 20: stat(1.0)})
    curve = emulated.knobs[0].curves[0]
    late = (curve.points[0], replace(curve.points[1], n_degraded=4), *curve.points[2:])
    knob = replace(emulated.knobs[0], curves=(replace(curve, points=late),))
    found = {a.x: a for a in compare(replace(emulated, knobs=(knob,)), simulated)}
    assert found[10].verdict == "no (emulated degraded 4 of 6)"
    assert found[10].as_dict()["emulated_degraded"] == 4
    assert found[20].verdict == "no"  # none of its repeats degraded
